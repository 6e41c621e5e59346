package access

import (
	"fmt"
	"testing"
)

// The tables below are S3's documented answers, written out by hand
// (never computed by the code under test): the "Canned ACL" table and
// "Mapping of ACL permissions and access policy permissions" of the ACL
// overview, "How Amazon S3 authorizes a request", the bucket policy
// examples, "Blocking public access", "Controlling ownership of objects
// and disabling ACLs", Object Lock's and object tagging's permissions.

// aclMatrix is, for every pair of canned bucket ACL and canned object
// ACL, what the bucket's owner (alice, who also wrote the object),
// another user (bob) and an anonymous caller may do, one position per
// operation, "-" where S3 refuses: L lists the bucket (bucket READ), R
// reads the object (object READ), W writes or deletes a key (bucket
// WRITE). internal/s3api's TestACLMatrix checks the same table through
// HTTP.
var aclMatrix = []struct {
	bucketACL, objectACL string
	owner, other, anon   string
}{
	{"private", "private", "LRW", "---", "---"},
	{"private", "public-read", "LRW", "-R-", "-R-"},
	{"private", "public-read-write", "LRW", "-R-", "-R-"},
	{"private", "authenticated-read", "LRW", "-R-", "---"},

	{"public-read", "private", "LRW", "L--", "L--"},
	{"public-read", "public-read", "LRW", "LR-", "LR-"},
	{"public-read", "public-read-write", "LRW", "LR-", "LR-"},
	{"public-read", "authenticated-read", "LRW", "LR-", "L--"},

	{"public-read-write", "private", "LRW", "L-W", "L-W"},
	{"public-read-write", "public-read", "LRW", "LRW", "LRW"},
	{"public-read-write", "public-read-write", "LRW", "LRW", "LRW"},
	{"public-read-write", "authenticated-read", "LRW", "LRW", "L-W"},

	{"authenticated-read", "private", "LRW", "L--", "---"},
	{"authenticated-read", "public-read", "LRW", "LR-", "-R-"},
	{"authenticated-read", "public-read-write", "LRW", "LR-", "-R-"},
	{"authenticated-read", "authenticated-read", "LRW", "LR-", "---"},
}

func TestCannedACLMatrix(t *testing.T) {
	ops := []struct {
		letter byte
		op     Operation
		action string
	}{{'L', ListBucket, "s3:ListBucket"}, {'R', ReadObject, "s3:GetObject"}, {'W', WriteObject, "s3:PutObject"}}
	for _, m := range aclMatrix {
		for _, c := range []struct {
			who  Caller
			want string
		}{{aliceC, m.owner}, {bobC, m.other}, {anon, m.anon}} {
			for i, o := range ops {
				r := objectOf(m.bucketACL, alice, m.objectACL)
				want := c.want[i] == o.letter
				if got := Decide(ask(c.who, o.op, o.action, r)); got.Allowed != want || got.ExplicitDeny {
					t.Errorf("bucket %s, object %s, %s %c: %+v, want allowed %v",
						m.bucketACL, m.objectACL, c.who.Kind, o.letter, got, want)
				}
			}
		}
	}
}

// TestCannedGrants is S3's "Canned ACL" table: what each canned ACL
// grants besides the owner's FULL_CONTROL.
func TestCannedGrants(t *testing.T) {
	for _, c := range []struct {
		acl      string
		onObject bool
		want     []Grant
	}{
		{"private", false, nil},
		{"private", true, nil},
		{"public-read", false, []Grant{{To: AllUsers, Perm: PermRead}}},
		{"public-read-write", true, []Grant{{To: AllUsers, Perm: PermRead}, {To: AllUsers, Perm: PermWrite}}},
		{"authenticated-read", true, []Grant{{To: AuthenticatedUsers, Perm: PermRead}}},
		{"aws-exec-read", true, nil}, // its READ goes to EC2, no caller here
		{"bucket-owner-read", true, []Grant{{To: BucketOwnerGrantee, Perm: PermRead}}},
		{"bucket-owner-read", false, nil}, // S3 ignores it on a bucket
		{"bucket-owner-full-control", true, []Grant{{To: BucketOwnerGrantee, Perm: PermFullControl}}},
		{"bucket-owner-full-control", false, nil},
		{"log-delivery-write", false, []Grant{{To: LogDelivery, Perm: PermWrite}, {To: LogDelivery, Perm: PermReadACP}}},
		{"log-delivery-write", true, nil}, // a bucket's ACL only
		{"no-such-acl", true, nil},
	} {
		if got := CannedGrants(c.acl, c.onObject); fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("%s (object %v): %+v, want %+v", c.acl, c.onObject, got, c.want)
		}
	}
}

// TestBucketOwnerCannedACLs: an object bob writes into alice's bucket is
// bob's; bucket-owner-read and bucket-owner-full-control give alice READ
// and FULL_CONTROL of it. Without them owning the bucket does not open
// the object, though alice may still delete it (bucket WRITE is hers)
// and govern its object lock, but not its tags.
func TestBucketOwnerCannedACLs(t *testing.T) {
	full := objectOf("public-read-write", bob, "bucket-owner-full-control")
	read := objectOf("public-read-write", bob, "bucket-owner-read")
	private := objectOf("public-read-write", bob, "private")
	anonymous := objectOf("public-read-write", "", "private")
	run(t, []row{
		{"full control: alice reads", ask(aliceC, ReadObject, "s3:GetObject", full), allowedBy(ReasonACLGrant)},
		{"full control: alice reads the ACL", ask(aliceC, ObjectACL, "s3:GetObjectAcl", full), allowedBy(ReasonACLGrant)},
		{"full control: alice changes the ACL", ask(aliceC, PutObjectACL, "s3:PutObjectAcl", full), allowedBy(ReasonACLGrant)},
		{"full control: bob owns it", ask(bobC, PutObjectACL, "s3:PutObjectAcl", full), allowedBy(ReasonOwner)},
		{"full control: carol", ask(carolC, ReadObject, "s3:GetObject", full), deniedBy(ReasonNoGrant)},
		{"owner-read: alice reads", ask(aliceC, ReadObject, "s3:GetObject", read), allowedBy(ReasonACLGrant)},
		{"owner-read: not the ACL", ask(aliceC, ObjectACL, "s3:GetObjectAcl", read), deniedBy(ReasonNoGrant)},
		{"private: alice cannot read", ask(aliceC, ReadObject, "s3:GetObject", private), deniedBy(ReasonNoGrant)},
		{"private: alice deletes", ask(aliceC, WriteObject, "s3:DeleteObject", private), allowedBy(ReasonOwner)},
		{"private: alice's retention", ask(aliceC, PutObjectRetention, "s3:PutObjectRetention", private), allowedBy(ReasonOwner)},
		{"private: not alice's tags", ask(aliceC, ObjectTagging, "s3:GetObjectTagging", private), deniedBy(ReasonNoGrant)},
		{"no recorded owner: the bucket owner's", ask(aliceC, ReadObject, "s3:GetObject", anonymous), allowedBy(ReasonOwner)},
	})
}

// TestExplicitGrants: grants to users (by canonical id) and groups give
// exactly their permission; FULL_CONTROL gives all; WRITE on an object
// means nothing; AuthenticatedUsers is not anonymous; LogDelivery is no
// caller; no grant covers tags or object lock.
func TestExplicitGrants(t *testing.T) {
	r := objectOf("private", alice, "private")
	r.ObjectACL = []Grant{{To: CanonicalUser, ID: CanonicalID(bob), Perm: PermRead},
		{To: CanonicalUser, ID: CanonicalID(bob), Perm: PermWrite},
		{To: CanonicalUser, ID: CanonicalID(carol), Perm: PermFullControl},
		{To: AuthenticatedUsers, Perm: PermReadACP}, {To: LogDelivery, Perm: PermWriteACP}}
	r.BucketACL = []Grant{{To: CanonicalUser, ID: CanonicalID(bob), Perm: PermWrite}}
	run(t, []row{
		{"bob reads", ask(bobC, ReadObject, "s3:GetObject", r), allowedBy(ReasonACLGrant)},
		{"bob reads the ACL as an authenticated user", ask(bobC, ObjectACL, "s3:GetObjectAcl", r), allowedBy(ReasonACLGrant)},
		{"bob may not change the ACL", ask(bobC, PutObjectACL, "s3:PutObjectAcl", r), deniedBy(ReasonNoGrant)},
		{"bob writes by the bucket's grant", ask(bobC, WriteObject, "s3:PutObject", r), allowedBy(ReasonACLGrant)},
		{"bob's bucket WRITE does not list", ask(bobC, ListBucket, "s3:ListBucket", r), deniedBy(ReasonNoGrant)},
		{"carol's FULL_CONTROL changes the ACL", ask(carolC, PutObjectACL, "s3:PutObjectAcl", r), allowedBy(ReasonACLGrant)},
		{"carol's object grant does not write", ask(carolC, WriteObject, "s3:PutObject", r), deniedBy(ReasonNoGrant)},
		{"FULL_CONTROL gives no tags", ask(carolC, PutObjectTagging, "s3:PutObjectTagging", r), deniedBy(ReasonNoGrant)},
		{"FULL_CONTROL gives no retention", ask(carolC, ObjectRetention, "s3:GetObjectRetention", r), deniedBy(ReasonNoGrant)},
		{"anonymous is not authenticated", ask(anon, ObjectACL, "s3:GetObjectAcl", r), deniedBy(ReasonNoGrant)},
		{"a user grant never names anonymous", ask(Caller{Kind: Anonymous, AccessKey: bob}, ReadObject, "s3:GetObject", r), deniedBy(ReasonNoGrant)},
	})
}

// TestBucketOwnerEnforced: with ACLs disabled the bucket owner owns every
// object, no grant counts (public ones included), and policies still
// decide.
func TestBucketOwnerEnforced(t *testing.T) {
	r := objectOf("public-read-write", bob, "public-read")
	r.Ownership = BucketOwnerEnforced
	upload := r
	upload.ObjectOwner = bob
	withPolicy := r
	withPolicy.Policy = bucketPolicy(t, `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"AWS":"carol"},"Action":"s3:GetObject","Resource":"arn:aws:s3:::bkt/*"}]}`)
	run(t, []row{
		{"anonymous: grants off", ask(anon, ReadObject, "s3:GetObject", r), deniedBy(ReasonACLsDisabled)},
		{"bob: bucket grant off", ask(bobC, WriteObject, "s3:PutObject", r), deniedBy(ReasonACLsDisabled)},
		{"bob's own object is not his", ask(bobC, ReadObject, "s3:GetObject", r), deniedBy(ReasonACLsDisabled)},
		{"alice owns bob's object", ask(aliceC, ReadObject, "s3:GetObject", r), allowedBy(ReasonOwner)},
		{"alice tags it", ask(aliceC, PutObjectTagging, "s3:PutObjectTagging", r), allowedBy(ReasonOwner)},
		{"bob manages his upload", ask(bobC, ManageUpload, "s3:AbortMultipartUpload", upload), allowedBy(ReasonOwner)},
		{"a policy still grants", ask(carolC, ReadObject, "s3:GetObject", withPolicy), allowedBy(ReasonBucketPolicy)},
	})
}

// TestPublicAccessBlock: IgnorePublicAcls drops public grants (not
// others); RestrictPublicBuckets confines a public policy's grants to
// the bucket owner (a policy naming users is not public, and ACLs are
// IgnorePublicAcls' business); BlockPublicAcls and BlockPublicPolicy
// refuse storing public ones.
func TestPublicAccessBlock(t *testing.T) {
	ignore := objectOf("public-read", alice, "public-read")
	ignore.PublicAccessBlock.IgnorePublicAcls = true
	authRead := objectOf("authenticated-read", alice, "authenticated-read")
	authRead.PublicAccessBlock.IgnorePublicAcls = true
	named := ignore
	named.ObjectACL = []Grant{{To: AllUsers, Perm: PermRead}, {To: CanonicalUser, ID: CanonicalID(bob), Perm: PermRead}}

	public := bucketPolicy(t, `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::bkt/*"}]}`)
	toBob := bucketPolicy(t, `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"AWS":"bob"},"Action":"s3:GetObject","Resource":"arn:aws:s3:::bkt/*"}]}`)
	open := objectOf("private", alice, "private")
	open.Policy = public
	restricted := open
	restricted.PublicAccessBlock.RestrictPublicBuckets = true
	restrictedToBob := restricted
	restrictedToBob.Policy = toBob
	restrictedACL := restricted
	restrictedACL.ObjectACL = CannedGrants("public-read", true)

	run(t, []row{
		{"ignored: anonymous read", ask(anon, ReadObject, "s3:GetObject", ignore), deniedBy(ReasonNoGrant)},
		{"ignored: bob lists", ask(bobC, ListBucket, "s3:ListBucket", ignore), deniedBy(ReasonNoGrant)},
		{"ignored: authenticated-read", ask(bobC, ReadObject, "s3:GetObject", authRead), deniedBy(ReasonNoGrant)},
		{"ignored: the owner", ask(aliceC, ReadObject, "s3:GetObject", ignore), allowedBy(ReasonOwner)},
		{"ignored: a grant to bob stays", ask(bobC, ReadObject, "s3:GetObject", named), allowedBy(ReasonACLGrant)},

		{"public policy: anonymous", ask(anon, ReadObject, "s3:GetObject", open), allowedBy(ReasonBucketPolicy)},
		{"restricted: anonymous", ask(anon, ReadObject, "s3:GetObject", restricted), deniedBy(ReasonPublicPolicy)},
		{"restricted: bob", ask(bobC, ReadObject, "s3:GetObject", restricted), deniedBy(ReasonPublicPolicy)},
		{"restricted: the owner", ask(aliceC, ReadObject, "s3:GetObject", restricted), allowedBy(ReasonBucketPolicy)},
		{"restricted: a policy naming bob is not public", ask(bobC, ReadObject, "s3:GetObject", restrictedToBob), allowedBy(ReasonBucketPolicy)},
		{"restricted: a public ACL still grants", ask(anon, ReadObject, "s3:GetObject", restrictedACL), allowedBy(ReasonACLGrant)},
	})

	block := PublicAccessBlock{BlockPublicAcls: true, BlockPublicPolicy: true}
	for _, c := range []struct {
		name  string
		b     PublicAccessBlock
		grant []Grant
		want  bool
	}{
		{"public-read", block, CannedGrants("public-read", false), true},
		{"authenticated-read", block, CannedGrants("authenticated-read", true), true},
		{"private", block, CannedGrants("private", false), false},
		{"bucket-owner-full-control", block, CannedGrants("bucket-owner-full-control", true), false},
		{"a grant to a user", block, []Grant{{To: CanonicalUser, ID: CanonicalID(bob), Perm: PermFullControl}}, false},
		{"a group grant among others", block, []Grant{{To: CanonicalUser, ID: "x", Perm: PermRead}, {To: AllUsers, Perm: PermWrite}}, true},
		{"not blocked", PublicAccessBlock{IgnorePublicAcls: true}, CannedGrants("public-read", false), false},
	} {
		if got := c.b.RefusesACL(c.grant); got != c.want {
			t.Errorf("RefusesACL %s: %v, want %v", c.name, got, c.want)
		}
	}
	if !block.RefusesPolicy(public) || block.RefusesPolicy(toBob) || (PublicAccessBlock{}).RefusesPolicy(public) {
		t.Error("RefusesPolicy: BlockPublicPolicy refuses exactly the public policy")
	}
}

// TestBucketPolicyOverACLs: a bucket policy's explicit Deny refuses
// whatever the ACLs grant (the owner included, except the policy itself);
// its Allow grants what the ACLs do not; where it says nothing the ACLs
// decide.
func TestBucketPolicyOverACLs(t *testing.T) {
	p := bucketPolicy(t, `{"Version":"2012-10-17","Statement":[
		{"Sid":"Shared","Effect":"Allow","Principal":{"AWS":"arn:aws:iam::111122223333:user/bob"},"Action":"s3:GetObject","Resource":"arn:aws:s3:::bkt/shared/*"},
		{"Sid":"Secrets","Effect":"Deny","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::bkt/secret/*"},
		{"Sid":"Both","Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::bkt/secret/open"},
		{"Sid":"NoDelete","Effect":"Deny","Principal":{"AWS":"bob"},"Action":"s3:DeleteObject","Resource":"arn:aws:s3:::bkt/*"}]}`)
	obj := func(key, acl string) Resource {
		r := objectOf("public-read-write", alice, acl)
		r.Key, r.Policy = key, p
		return r
	}
	lockout := bucketOf("private")
	lockout.Policy = bucketPolicy(t, `{"Version":"2012-10-17","Statement":[{"Effect":"Deny","Principal":"*","Action":"s3:*","Resource":["arn:aws:s3:::bkt","arn:aws:s3:::bkt/*"]}]}`)
	run(t, []row{
		{"allow beats a private ACL", ask(bobC, ReadObject, "s3:GetObject", obj("shared/a", "private")), allowedBy(ReasonBucketPolicy)},
		{"the allow names bob only", ask(carolC, ReadObject, "s3:GetObject", obj("shared/a", "private")), deniedBy(ReasonNoGrant)},
		{"deny beats a public ACL", ask(anon, ReadObject, "s3:GetObject", obj("secret/x", "public-read")), explicitlyDeniedBy(ReasonBucketPolicy)},
		{"deny beats an allow", ask(anon, ReadObject, "s3:GetObject", obj("secret/open", "public-read")), explicitlyDeniedBy(ReasonBucketPolicy)},
		{"deny binds the owner", ask(aliceC, ReadObject, "s3:GetObject", obj("secret/x", "private")), explicitlyDeniedBy(ReasonBucketPolicy)},
		{"deny beats a WRITE grant", ask(bobC, WriteObject, "s3:DeleteObject", obj("x", "private")), explicitlyDeniedBy(ReasonBucketPolicy)},
		{"silence: the ACL decides", ask(bobC, WriteObject, "s3:PutObject", obj("x", "private")), allowedBy(ReasonACLGrant)},
		{"silence: a public ACL", ask(anon, ReadObject, "s3:GetObject", obj("other", "public-read")), allowedBy(ReasonACLGrant)},

		{"lockout: the owner reads the policy", ask(aliceC, BucketAdmin, "s3:GetBucketPolicy", lockout), allowedBy(ReasonOwner)},
		{"lockout: the owner replaces it", ask(aliceC, BucketAdmin, "s3:PutBucketPolicy", lockout), allowedBy(ReasonOwner)},
		{"lockout: the owner deletes it", ask(aliceC, BucketAdmin, "s3:DeleteBucketPolicy", lockout), allowedBy(ReasonOwner)},
		{"lockout: the status too", ask(aliceC, BucketAdmin, "s3:GetBucketPolicyStatus", lockout), allowedBy(ReasonOwner)},
		{"lockout: nothing else", ask(aliceC, BucketAdmin, "s3:DeleteBucket", lockout), explicitlyDeniedBy(ReasonBucketPolicy)},
		{"lockout: others stay out of the policy", ask(bobC, BucketAdmin, "s3:GetBucketPolicy", lockout), explicitlyDeniedBy(ReasonBucketPolicy)},
		{"lockout: root", ask(rootC, BucketAdmin, "s3:DeleteBucket", lockout), allowedBy(ReasonRoot)},
	})
}

// TestNotElements: NotPrincipal, NotAction and NotResource as package
// policy supports them, each deciding against the ACLs.
func TestNotElements(t *testing.T) {
	p := bucketPolicy(t, `{"Version":"2012-10-17","Statement":[
		{"Effect":"Deny","NotPrincipal":{"AWS":"alice"},"Action":"s3:*","Resource":"arn:aws:s3:::bkt/private/*"},
		{"Effect":"Allow","Principal":"*","NotAction":["s3:PutObject","s3:DeleteObject"],"Resource":"arn:aws:s3:::bkt/pub/*"},
		{"Effect":"Deny","Principal":{"AWS":"carol"},"Action":"s3:GetObject","NotResource":"arn:aws:s3:::bkt/pub/*"}]}`)
	obj := func(key, acl string) Resource {
		r := objectOf("private", alice, acl)
		r.Key, r.Policy = key, p
		return r
	}
	run(t, []row{
		{"NotPrincipal: bob is denied", ask(bobC, ReadObject, "s3:GetObject", obj("private/x", "public-read")), explicitlyDeniedBy(ReasonBucketPolicy)},
		{"NotPrincipal: anonymous is denied", ask(anon, ReadObject, "s3:GetObject", obj("private/x", "public-read")), explicitlyDeniedBy(ReasonBucketPolicy)},
		{"NotPrincipal: alice is not", ask(aliceC, ReadObject, "s3:GetObject", obj("private/x", "private")), allowedBy(ReasonOwner)},
		{"NotAction: reads are allowed", ask(anon, ReadObject, "s3:GetObject", obj("pub/x", "private")), allowedBy(ReasonBucketPolicy)},
		{"NotAction: writes are not", ask(anon, WriteObject, "s3:PutObject", obj("pub/x", "private")), deniedBy(ReasonNoGrant)},
		{"NotResource: carol outside pub/", ask(carolC, ReadObject, "s3:GetObject", obj("other", "public-read")), explicitlyDeniedBy(ReasonBucketPolicy)},
		{"NotResource: carol inside pub/", ask(carolC, ReadObject, "s3:GetObject", obj("pub/x", "private")), allowedBy(ReasonBucketPolicy)},
	})
}

// TestConditions: a policy's conditions read Request.Conditions; Decide
// asks for them only where a policy is evaluated.
func TestConditions(t *testing.T) {
	r := objectOf("private", alice, "private")
	r.Policy = bucketPolicy(t, `{"Version":"2012-10-17","Statement":[
		{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::bkt/*","Condition":{"IpAddress":{"aws:SourceIp":"192.0.2.0/24"}}},
		{"Effect":"Deny","Principal":"*","Action":"s3:*","Resource":"arn:aws:s3:::bkt/*","Condition":{"Bool":{"aws:SecureTransport":"false"}}}]}`)
	from := func(ip, secure string) Request {
		q := ask(anon, ReadObject, "s3:GetObject", r)
		q.Conditions["aws:sourceip"], q.Conditions["aws:securetransport"] = []string{ip}, []string{secure}
		return q
	}
	run(t, []row{
		{"inside the range over TLS", from("192.0.2.7", "true"), allowedBy(ReasonBucketPolicy)},
		{"outside the range", from("203.0.113.1", "true"), deniedBy(ReasonNoGrant)},
		{"plain HTTP", from("192.0.2.7", "false"), explicitlyDeniedBy(ReasonBucketPolicy)},
	})

	noPolicy := objectOf("private", alice, "private")
	for _, c := range []struct {
		name string
		req  Request
		want bool
	}{
		{"root", ask(rootC, ReadObject, "s3:GetObject", r), false},
		{"a user, no policy", ask(bobC, ReadObject, "s3:GetObject", noPolicy), false},
		{"a user, a policy", ask(bobC, ReadObject, "s3:GetObject", r), true},
		{"an identity, no policy", ask(identity("i", policies()), ReadObject, "s3:GetObject", noPolicy), true},
		{"a user's account action", ask(bobC, AccountAction, "s3:CreateBucket", Resource{}), false},
		{"an identity's admin action", ask(identity("i", policies()), AdminAction, "admin:Heal", Resource{}), true},
		{"a user's admin action", ask(bobC, AdminAction, "admin:Heal", Resource{}), false},
	} {
		if got := c.req.NeedsConditions(); got != c.want {
			t.Errorf("NeedsConditions %s: %v, want %v", c.name, got, c.want)
		}
	}
}

// TestObjectLockAndTagging: S3 maps no ACL permission to the object lock
// and tagging actions. Without a policy: tags are the object owner's;
// retention and legal holds the object owner's and the bucket owner's;
// bypassing GOVERNANCE the bucket owner's. A policy grants or denies
// them as any action; as the second half of a write only a policy can
// refuse them.
func TestObjectLockAndTagging(t *testing.T) {
	r := objectOf("public-read-write", bob, "bucket-owner-full-control")
	withPolicy := r
	withPolicy.Policy = bucketPolicy(t, `{"Version":"2012-10-17","Statement":[
		{"Effect":"Allow","Principal":{"AWS":["bob","carol"]},"Action":["s3:BypassGovernanceRetention","s3:GetObjectTagging","s3:PutObjectTagging"],"Resource":"arn:aws:s3:::bkt/*"},
		{"Effect":"Deny","Principal":"*","Action":["s3:PutObjectRetention","s3:PutObjectLegalHold"],"Resource":"arn:aws:s3:::bkt/locked/*"},
		{"Effect":"Deny","Principal":{"AWS":"alice"},"Action":"s3:BypassGovernanceRetention","Resource":"arn:aws:s3:::bkt/*"}]}`)
	locked := withPolicy
	locked.Key = "locked/x"
	partOfWrite := func(q Request) Request { q.PartOfWrite = true; return q }
	tagger := identity("tagger", policies(identityPolicy(t, `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:PutObject","Resource":"*"}]}`)))
	rootBucket := r
	rootBucket.BucketOwner = "root"
	run(t, []row{
		{"retention: the object's owner", ask(bobC, ObjectRetention, "s3:GetObjectRetention", r), allowedBy(ReasonOwner)},
		{"retention: the bucket's owner", ask(aliceC, PutObjectRetention, "s3:PutObjectRetention", r), allowedBy(ReasonOwner)},
		{"legal hold: the bucket's owner", ask(aliceC, PutObjectLegalHold, "s3:PutObjectLegalHold", r), allowedBy(ReasonOwner)},
		{"legal hold: nobody else", ask(carolC, ObjectLegalHold, "s3:GetObjectLegalHold", r), deniedBy(ReasonNoGrant)},
		{"bypass: the bucket's owner", ask(aliceC, BypassGovernance, "s3:BypassGovernanceRetention", r), allowedBy(ReasonOwner)},
		{"bypass: not the object's owner", ask(bobC, BypassGovernance, "s3:BypassGovernanceRetention", r), deniedBy(ReasonNoGrant)},
		{"bypass: granted by a policy", ask(bobC, BypassGovernance, "s3:BypassGovernanceRetention", withPolicy), allowedBy(ReasonBucketPolicy)},
		{"bypass: denied by a policy", ask(aliceC, BypassGovernance, "s3:BypassGovernanceRetention", withPolicy), explicitlyDeniedBy(ReasonBucketPolicy)},

		{"tags: the object's owner", ask(bobC, PutObjectTagging, "s3:PutObjectTagging", r), allowedBy(ReasonOwner)},
		{"tags: not the bucket's owner with FULL_CONTROL", ask(aliceC, ObjectTagging, "s3:GetObjectTagging", r), deniedBy(ReasonNoGrant)},
		{"tags: granted by a policy", ask(carolC, ObjectTagging, "s3:GetObjectTagging", withPolicy), allowedBy(ReasonBucketPolicy)},

		{"part of a write: no policy", partOfWrite(ask(carolC, PutObjectTagging, "s3:PutObjectTagging", r)), allowedBy(ReasonWriteAllowed)},
		{"part of a write: a policy allows", partOfWrite(ask(carolC, PutObjectTagging, "s3:PutObjectTagging", withPolicy)), allowedBy(ReasonBucketPolicy)},
		{"part of a write: a policy denies", partOfWrite(ask(aliceC, PutObjectRetention, "s3:PutObjectRetention", locked)), explicitlyDeniedBy(ReasonBucketPolicy)},
		{"part of a write: an identity needs the action", partOfWrite(ask(tagger, PutObjectTagging, "s3:PutObjectTagging", rootBucket)), deniedBy(ReasonNoGrant)},
	})
}

// TestRoot: root is allowed everything, whatever the policy, ACLs,
// ownership and public access block say.
func TestRoot(t *testing.T) {
	r := objectOf("private", alice, "private")
	r.Policy = bucketPolicy(t, `{"Version":"2012-10-17","Statement":[{"Effect":"Deny","Principal":"*","Action":"s3:*","Resource":["arn:aws:s3:::bkt","arn:aws:s3:::bkt/*"]}]}`)
	r.Ownership = BucketOwnerEnforced
	r.PublicAccessBlock = PublicAccessBlock{true, true, true, true}
	for op := ListBucket; op <= AdminAction; op++ {
		if got := Decide(ask(rootC, op, "s3:Anything", r)); got != allowedBy(ReasonRoot) {
			t.Errorf("root %s: %+v", op, got)
		}
	}
}

// TestAnonymous: an anonymous caller has what AllUsers grants and public
// policies allow, nothing of AuthenticatedUsers', no account and no admin
// permissions.
func TestAnonymous(t *testing.T) {
	run(t, []row{
		{"public-read", ask(anon, ReadObject, "s3:GetObject", objectOf("private", alice, "public-read")), allowedBy(ReasonACLGrant)},
		{"authenticated-read", ask(anon, ReadObject, "s3:GetObject", objectOf("private", alice, "authenticated-read")), deniedBy(ReasonNoGrant)},
		{"no bucket admin", ask(anon, BucketAdmin, "s3:GetBucketPolicy", bucketOf("public-read-write")), deniedBy(ReasonNoGrant)},
		{"no account", ask(anon, AccountAction, "s3:CreateBucket", Resource{Bucket: "new"}), deniedBy(ReasonAnonymous)},
		{"no admin", ask(anon, AdminAction, "admin:ServerInfo", Resource{}), deniedBy(ReasonNotIdentity)},
	})
}
