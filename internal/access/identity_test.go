package access

import (
	"testing"

	"github.com/shardstore/shardstore/internal/policy"
)

// TestIdentities: an identity of the identity store is decided as AWS
// decides an IAM principal of the bucket owner's account: its policies,
// the bucket policy and ACL grants to everyone grant (the latter two
// within its access key's or session's own policy), a Deny in either
// refuses; its account's own ownership gives it nothing its policies do
// not. In another account's bucket its policies must allow and so must
// the resource: the bucket policy, or the ACLs as they answer its
// account.
func TestIdentities(t *testing.T) {
	allowAll := identityPolicy(t, `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:*","Resource":"*"}]}`)
	reader := identity("reader", policies(identityPolicy(t, `{"Version":"2012-10-17","Statement":[
		{"Effect":"Allow","Action":"s3:GetObject","Resource":"arn:aws:s3:::bkt/pub/*"},
		{"Effect":"Allow","Action":"s3:ListBucket","Resource":"arn:aws:s3:::bkt"}]}`)))
	writer := identity("writer", policies(identityPolicy(t, `{"Version":"2012-10-17","Statement":[
		{"Effect":"Allow","Action":["s3:PutObject","s3:GetObject"],"Resource":"*"}]}`)))
	careful := identity("careful", policies(allowAll, identityPolicy(t, `{"Version":"2012-10-17","Statement":[
		{"Effect":"Deny","Action":"s3:DeleteObject","Resource":"*"}]}`)))
	narrowed := identity("narrowed", policies(allowAll).Narrowed(identityPolicy(t, `{"Version":"2012-10-17","Statement":[
		{"Effect":"Allow","Action":"s3:GetObject","Resource":"arn:aws:s3:::bkt/pub/*"}]}`)))
	nobody := identity("nobody", policies())
	full := identity("full", policies(allowAll))

	// bkt is root's (the identities' account); its policy names
	// identities by user name.
	mineWith := func(bucketACL, objectACL, key string) Resource {
		r := objectOf(bucketACL, "root", objectACL)
		r.BucketOwner, r.Key = "root", key
		return r
	}
	mine := func(key string) Resource { return mineWith("private", "private", key) }
	withPolicy := func(r Resource) Resource {
		r.Policy = bucketPolicy(t, `{"Version":"2012-10-17","Statement":[
			{"Effect":"Allow","Principal":{"AWS":["nobody","narrowed"]},"Action":"s3:GetObject","Resource":"arn:aws:s3:::bkt/priv/*"},
			{"Effect":"Deny","Principal":{"AWS":"reader"},"Action":"s3:GetObject","Resource":"arn:aws:s3:::bkt/pub/denied"}]}`)
		return r
	}
	// A grant to the identities' account itself (root's canonical id).
	toAccount := func(r Resource, p Permission) Resource {
		r.ObjectACL = []Grant{{To: CanonicalUser, ID: CanonicalID("root"), Perm: p}}
		return r
	}
	// alices is another account's bucket (a users-file user's).
	alices := objectOf("private", alice, "private")
	alicesPublic := objectOf("public-read", alice, "public-read")
	alicesShared := alices
	alicesShared.Policy = bucketPolicy(t, `{"Version":"2012-10-17","Statement":[
		{"Effect":"Allow","Principal":{"AWS":["writer","nobody"]},"Action":"s3:GetObject","Resource":"arn:aws:s3:::bkt/*"}]}`)
	alicesGranting := func(p Permission) Resource { return toAccount(alices, p) }
	alicesWritable := alices
	alicesWritable.BucketACL = []Grant{{To: CanonicalUser, ID: CanonicalID("root"), Perm: PermWrite}}
	alicesOff := alicesGranting(PermFullControl)
	alicesOff.Ownership = BucketOwnerEnforced
	accountsObject := objectOf("private", alice, "private")
	accountsObject.ObjectOwner = "root"
	setsACL := func(q Request) Request { q.SetsACL = true; return q }
	aclWriter := identity("aclwriter", policies(identityPolicy(t, `{"Version":"2012-10-17","Statement":[
		{"Effect":"Allow","Action":["s3:PutObject","s3:PutObjectAcl"],"Resource":"*"}]}`)))
	rootSession := identity("root", (&IdentityPolicies{All: true}).Narrowed(identityPolicy(t, `{"Version":"2012-10-17","Statement":[
		{"Effect":"Allow","Action":"s3:GetObject","Resource":"*"}]}`)))

	run(t, []row{
		{"its policy grants", ask(reader, ReadObject, "s3:GetObject", mine("pub/x")), allowedBy(ReasonIdentityPolicy)},
		{"nothing else does", ask(reader, ReadObject, "s3:GetObject", mine("priv/y")), deniedBy(ReasonNoGrant)},
		{"its account's ownership gives it nothing", ask(nobody, ReadObject, "s3:GetObject", mine("x")), deniedBy(ReasonNoGrant)},
		{"nor a grant to its account", ask(nobody, PutObjectACL, "s3:PutObjectAcl", toAccount(mine("x"), PermFullControl)), deniedBy(ReasonNoGrant)},
		{"a public-read object is everyone's to read", ask(nobody, ReadObject, "s3:GetObject", mineWith("private", "public-read", "x")), allowedBy(ReasonACLGrant)},
		{"an authenticated-read one too", ask(nobody, ReadObject, "s3:GetObject", mineWith("private", "authenticated-read", "x")), allowedBy(ReasonACLGrant)},
		{"a public-read-write bucket is everyone's to write", ask(reader, WriteObject, "s3:PutObject", mineWith("public-read-write", "private", "pub/z")), allowedBy(ReasonACLGrant)},
		{"a public grant, outside its bounds", ask(narrowed, ReadObject, "s3:GetObject", mineWith("private", "public-read", "priv/y")), deniedBy(ReasonOutsideBounds)},
		{"owning nothing, it may write what its policy says", ask(writer, WriteObject, "s3:PutObject", mine("pub/z")), allowedBy(ReasonIdentityPolicy)},
		{"a Deny in its policies", ask(careful, WriteObject, "s3:DeleteObject", mine("pub/x")), explicitlyDeniedBy(ReasonIdentityPolicy)},
		{"... beats a public grant", ask(careful, WriteObject, "s3:DeleteObject", mineWith("public-read-write", "private", "pub/x")), explicitlyDeniedBy(ReasonIdentityPolicy)},
		{"the bucket policy's Deny beats its Allow", ask(reader, ReadObject, "s3:GetObject", withPolicy(mine("pub/denied"))), explicitlyDeniedBy(ReasonBucketPolicy)},
		{"the bucket policy's Deny beats a public grant", ask(reader, ReadObject, "s3:GetObject", withPolicy(mineWith("private", "public-read", "pub/denied"))), explicitlyDeniedBy(ReasonBucketPolicy)},
		{"the bucket policy grants alone", ask(nobody, ReadObject, "s3:GetObject", withPolicy(mine("priv/y"))), allowedBy(ReasonBucketPolicy)},
		{"... within the session's bounds", ask(narrowed, ReadObject, "s3:GetObject", withPolicy(mine("priv/y"))), deniedBy(ReasonOutsideBounds)},
		{"its bounds narrow its own policy", ask(narrowed, ReadObject, "s3:GetObject", mine("pub/x")), allowedBy(ReasonIdentityPolicy)},
		{"... to what they allow", ask(narrowed, WriteObject, "s3:DeleteObject", mine("pub/x")), deniedBy(ReasonNoGrant)},
		{"a root session: what its bounds allow", ask(rootSession, ReadObject, "s3:GetObject", mine("x")), allowedBy(ReasonIdentityPolicy)},
		{"a root session: no more", ask(rootSession, WriteObject, "s3:PutObject", mine("x")), deniedBy(ReasonNoGrant)},

		{"setting an ACL needs s3:PutObjectAcl", setsACL(ask(writer, WriteObject, "s3:PutObject", mine("x"))), deniedBy(ReasonNoGrant)},
		{"... which it may have", setsACL(ask(aclWriter, WriteObject, "s3:PutObject", mine("x"))), allowedBy(ReasonIdentityPolicy)},

		{"another account: its policy is not enough", ask(writer, ReadObject, "s3:GetObject", alices), deniedBy(ReasonOtherAccount)},
		{"another account: public ACLs and its policy", ask(writer, ReadObject, "s3:GetObject", alicesPublic), allowedBy(ReasonPolicyAndACL)},
		{"another account: public ACLs alone", ask(nobody, ReadObject, "s3:GetObject", alicesPublic), deniedBy(ReasonOtherAccount)},
		{"another account: both policies allow", ask(writer, ReadObject, "s3:GetObject", alicesShared), allowedBy(ReasonBothPolicies)},
		{"another account: the bucket policy alone", ask(nobody, ReadObject, "s3:GetObject", alicesShared), deniedBy(ReasonOtherAccount)},
		{"another account: FULL_CONTROL to its account reads", ask(writer, ReadObject, "s3:GetObject", alicesGranting(PermFullControl)), allowedBy(ReasonPolicyAndACL)},
		{"... and changes the ACL", ask(full, PutObjectACL, "s3:PutObjectAcl", alicesGranting(PermFullControl)), allowedBy(ReasonPolicyAndACL)},
		{"... if its policy allows that", ask(writer, PutObjectACL, "s3:PutObjectAcl", alicesGranting(PermFullControl)), deniedBy(ReasonOtherAccount)},
		{"... the grant alone is not enough", ask(nobody, PutObjectACL, "s3:PutObjectAcl", alicesGranting(PermFullControl)), deniedBy(ReasonOtherAccount)},
		{"another account: WRITE_ACP changes the ACL", ask(full, PutObjectACL, "s3:PutObjectAcl", alicesGranting(PermWriteACP)), allowedBy(ReasonPolicyAndACL)},
		{"... but does not read it", ask(full, ObjectACL, "s3:GetObjectAcl", alicesGranting(PermWriteACP)), deniedBy(ReasonOtherAccount)},
		{"another account: READ_ACP reads the ACL", ask(full, ObjectACL, "s3:GetObjectAcl", alicesGranting(PermReadACP)), allowedBy(ReasonPolicyAndACL)},
		{"... but neither the object", ask(full, ReadObject, "s3:GetObject", alicesGranting(PermReadACP)), deniedBy(ReasonOtherAccount)},
		{"... nor changes the ACL", ask(full, PutObjectACL, "s3:PutObjectAcl", alicesGranting(PermReadACP)), deniedBy(ReasonOtherAccount)},
		{"another account: bucket WRITE to its account", ask(writer, WriteObject, "s3:PutObject", alicesWritable), allowedBy(ReasonPolicyAndACL)},
		{"another account: an object its account owns", ask(writer, ReadObject, "s3:GetObject", accountsObject), allowedBy(ReasonPolicyAndACL)},
		{"another account: no grant counts with ACLs off", ask(full, ReadObject, "s3:GetObject", alicesOff), deniedBy(ReasonOtherAccount)},
	})
}

// TestIdentityPolicies: the union of an identity's policies, a Deny in
// any refusing, narrowed by bounds that must all allow.
func TestIdentityPolicies(t *testing.T) {
	get := identityPolicy(t, `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:GetObject","Resource":"*"}]}`)
	put := identityPolicy(t, `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:PutObject","Resource":"*"}]}`)
	noSecrets := identityPolicy(t, `{"Version":"2012-10-17","Statement":[{"Effect":"Deny","Action":"s3:*","Resource":"arn:aws:s3:::b/secret/*"}]}`)
	onlyB := identityPolicy(t, `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:*","Resource":"arn:aws:s3:::b/*"}]}`)
	req := func(action, key string) *policy.Request {
		return &policy.Request{Action: action, Resource: "arn:aws:s3:::" + key, AccessKey: "u", Conditions: noConds}
	}
	user := policies(get, put, noSecrets, nil) // a group's missing policy adds nothing
	bounded := user.Narrowed(onlyB)
	for _, c := range []struct {
		name string
		p    *IdentityPolicies
		r    *policy.Request
		want policy.Decision
	}{
		{"the union: get", user, req("s3:GetObject", "c/x"), policy.Allowed},
		{"the union: put", user, req("s3:PutObject", "c/x"), policy.Allowed},
		{"nothing allows delete", user, req("s3:DeleteObject", "c/x"), policy.NotApplicable},
		{"a Deny in one beats the others' Allow", user, req("s3:GetObject", "b/secret/x"), policy.Denied},
		{"a bound allows", bounded, req("s3:GetObject", "b/x"), policy.Allowed},
		{"a bound's silence cuts an Allow", bounded, req("s3:GetObject", "c/x"), policy.NotApplicable},
		{"a bound grants nothing itself", bounded, req("s3:DeleteObject", "b/x"), policy.NotApplicable},
		{"root session: everything", &IdentityPolicies{All: true}, req("s3:DeleteObject", "c/x"), policy.Allowed},
		{"root session: bounded", (&IdentityPolicies{All: true}).Narrowed(onlyB), req("s3:DeleteObject", "c/x"), policy.NotApplicable},
	} {
		if got := c.p.Evaluate(c.r); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
	if !user.Bounded(req("s3:DeleteObject", "c/x")) || !bounded.Bounded(req("s3:GetObject", "b/x")) || bounded.Bounded(req("s3:GetObject", "c/x")) {
		t.Error("Bounded: true without bounds, else whether every bound allows")
	}
	if len(user.Bounds) != 0 {
		t.Error("Narrowed changed the policies it narrowed")
	}
}

// TestAccountAndAdminActions: account actions (CreateBucket,
// ListAllMyBuckets) and admin actions are an identity's policies' alone;
// a users-file user has an account of its own and no admin permissions;
// admin actions are evaluated on AdminResource, which S3 resources do not
// cover.
func TestAccountAndAdminActions(t *testing.T) {
	maker := identity("maker", policies(identityPolicy(t, `{"Version":"2012-10-17","Statement":[
		{"Effect":"Allow","Action":"s3:CreateBucket","Resource":"arn:aws:s3:::made*"},
		{"Effect":"Deny","Action":"s3:ListAllMyBuckets","Resource":"*"}]}`)))
	lister := identity("lister", policies(identityPolicy(t, `{"Version":"2012-10-17","Statement":[
		{"Effect":"Allow","Action":"s3:ListAllMyBuckets","Resource":"arn:aws:s3:::*"}]}`)))
	admin := identity("admin", policies(identityPolicy(t, `{"Version":"2012-10-17","Statement":[
		{"Effect":"Allow","Action":"admin:*"},{"Effect":"Deny","Action":"admin:CreateUser"}]}`)))
	s3only := identity("s3only", policies(identityPolicy(t, `{"Version":"2012-10-17","Statement":[
		{"Effect":"Allow","Action":["s3:*","admin:*"],"Resource":"arn:aws:s3:::*"}]}`)))
	importer := identity("importer", policies(identityPolicy(t, `{"Version":"2012-10-17","Statement":[
		{"Effect":"Allow","Action":"admin:ImportObject"}]}`)))
	s3all := identity("s3all", policies(identityPolicy(t, `{"Version":"2012-10-17","Statement":[
		{"Effect":"Allow","Action":"s3:*","Resource":"*"}]}`)))
	noImport := identity("noimport", policies(identityPolicy(t, `{"Version":"2012-10-17","Statement":[
		{"Effect":"Allow","Action":"admin:*"},{"Effect":"Deny","Action":"admin:ImportObject"}]}`)))
	bucket := func(name string) Resource { return Resource{Bucket: name} }
	run(t, []row{
		{"create: its policy", ask(maker, AccountAction, "s3:CreateBucket", bucket("made1")), allowedBy(ReasonIdentityPolicy)},
		{"create: outside it", ask(maker, AccountAction, "s3:CreateBucket", bucket("other")), deniedBy(ReasonNoGrant)},
		{"create: a bucket policy has no say", ask(lister, AccountAction, "s3:CreateBucket", bucket("made1")), deniedBy(ReasonNoGrant)},
		{"list all: allowed", ask(lister, AccountAction, "s3:ListAllMyBuckets", Resource{}), allowedBy(ReasonIdentityPolicy)},
		{"list all: denied", ask(maker, AccountAction, "s3:ListAllMyBuckets", Resource{}), explicitlyDeniedBy(ReasonIdentityPolicy)},
		{"a user's own account", ask(bobC, AccountAction, "s3:CreateBucket", bucket("new")), allowedBy(ReasonOwnAccount)},
		{"root's", ask(rootC, AccountAction, "s3:CreateBucket", bucket("new")), allowedBy(ReasonRoot)},

		{"admin: allowed", ask(admin, AdminAction, "admin:Heal", Resource{}), allowedBy(ReasonIdentityPolicy)},
		{"admin: denied", ask(admin, AdminAction, "admin:CreateUser", Resource{}), explicitlyDeniedBy(ReasonIdentityPolicy)},
		{"admin: S3 resources do not reach it", ask(s3only, AdminAction, "admin:Heal", Resource{}), deniedBy(ReasonNoGrant)},
		{"admin: not for S3 actions", ask(admin, AdminAction, "s3:GetObject", Resource{}), deniedBy(ReasonNoGrant)},
		{"admin: a users-file user", ask(bobC, AdminAction, "admin:Heal", Resource{}), deniedBy(ReasonNotIdentity)},
		{"admin: root", ask(rootC, AdminAction, "admin:Heal", Resource{}), allowedBy(ReasonRoot)},

		// PutObject's import path (migrate from-s3) asks admin:ImportObject:
		// root and identities granted it; never a users-file user, an
		// identity with every S3 permission, or one denied it.
		{"import: root", ask(rootC, AdminAction, "admin:ImportObject", Resource{}), allowedBy(ReasonRoot)},
		{"import: an admin identity", ask(admin, AdminAction, "admin:ImportObject", Resource{}), allowedBy(ReasonIdentityPolicy)},
		{"import: granted alone", ask(importer, AdminAction, "admin:ImportObject", Resource{}), allowedBy(ReasonIdentityPolicy)},
		{"import: a users-file user", ask(bobC, AdminAction, "admin:ImportObject", Resource{}), deniedBy(ReasonNotIdentity)},
		{"import: every S3 permission", ask(s3all, AdminAction, "admin:ImportObject", Resource{}), deniedBy(ReasonNoGrant)},
		{"import: S3 resources do not reach it", ask(s3only, AdminAction, "admin:ImportObject", Resource{}), deniedBy(ReasonNoGrant)},
		{"import: denied", ask(noImport, AdminAction, "admin:ImportObject", Resource{}), explicitlyDeniedBy(ReasonIdentityPolicy)},
		{"import: no policy", ask(identity("plain", policies()), AdminAction, "admin:ImportObject", Resource{}), deniedBy(ReasonNoGrant)},

		// Self-service: a user's own access keys with its own key, where
		// no policy speaks; a Deny still refuses; only for admin actions
		// and identities.
		{"own keys: no policy", own(ask(identity("plain", policies()), AdminAction, "admin:CreateServiceAccount", Resource{})), allowedBy(ReasonSelfService)},
		{"own keys: no permissions at all", own(ask(identity("bare", nil), AdminAction, "admin:ListServiceAccounts", Resource{})), allowedBy(ReasonSelfService)},
		{"own keys: denied", own(ask(admin, AdminAction, "admin:CreateUser", Resource{})), explicitlyDeniedBy(ReasonIdentityPolicy)},
		{"own keys: not flagged", ask(identity("plain", policies()), AdminAction, "admin:CreateServiceAccount", Resource{}), deniedBy(ReasonNoGrant)},
		{"own keys: a users-file user", own(ask(bobC, AdminAction, "admin:CreateServiceAccount", Resource{})), deniedBy(ReasonNotIdentity)},
		{"own keys: not an account action", own(ask(identity("plain", policies()), AccountAction, "s3:CreateBucket", bucket("x"))), deniedBy(ReasonNoGrant)},
	})
}

// own marks r as a call on the caller's own access keys.
func own(r Request) Request {
	r.OwnAccessKeys = true
	return r
}
