package access

import (
	"testing"

	"github.com/shardstore/shardstore/internal/policy"
)

// TestIdentities: an identity of the identity store is decided as AWS
// decides an IAM principal of the bucket owner's account: its policies
// and the bucket policy grant (the latter within its access key's or
// session's own policy), a Deny in either refuses, and ACLs and
// ownership play no part. In another account's bucket both must allow.
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

	// bkt is root's (the identities' account) with public ACLs; its
	// policy names identities by user name.
	mine := func(key string) Resource {
		r := objectOf("public-read-write", "root", "public-read")
		r.BucketOwner, r.Key = "root", key
		return r
	}
	withPolicy := func(r Resource) Resource {
		r.Policy = bucketPolicy(t, `{"Version":"2012-10-17","Statement":[
			{"Effect":"Allow","Principal":{"AWS":["nobody","narrowed"]},"Action":"s3:GetObject","Resource":"arn:aws:s3:::bkt/priv/*"},
			{"Effect":"Deny","Principal":{"AWS":"reader"},"Action":"s3:GetObject","Resource":"arn:aws:s3:::bkt/pub/denied"}]}`)
		return r
	}
	// alices is another account's bucket (a users-file user's).
	alices := objectOf("public-read", alice, "public-read")
	alicesShared := alices
	alicesShared.Policy = bucketPolicy(t, `{"Version":"2012-10-17","Statement":[
		{"Effect":"Allow","Principal":{"AWS":["writer","nobody"]},"Action":"s3:GetObject","Resource":"arn:aws:s3:::bkt/*"}]}`)
	setsACL := func(q Request) Request { q.SetsACL = true; return q }
	aclWriter := identity("aclwriter", policies(identityPolicy(t, `{"Version":"2012-10-17","Statement":[
		{"Effect":"Allow","Action":["s3:PutObject","s3:PutObjectAcl"],"Resource":"*"}]}`)))
	rootSession := identity("root", (&IdentityPolicies{All: true}).Narrowed(identityPolicy(t, `{"Version":"2012-10-17","Statement":[
		{"Effect":"Allow","Action":"s3:GetObject","Resource":"*"}]}`)))

	run(t, []row{
		{"its policy grants", ask(reader, ReadObject, "s3:GetObject", mine("pub/x")), allowedBy(ReasonIdentityPolicy)},
		{"a public ACL grants it nothing", ask(reader, ReadObject, "s3:GetObject", mine("priv/y")), deniedBy(ReasonNoGrant)},
		{"a public-read-write bucket neither", ask(reader, WriteObject, "s3:PutObject", mine("pub/z")), deniedBy(ReasonNoGrant)},
		{"owning nothing, it may write what its policy says", ask(writer, WriteObject, "s3:PutObject", mine("pub/z")), allowedBy(ReasonIdentityPolicy)},
		{"a Deny in its policies", ask(careful, WriteObject, "s3:DeleteObject", mine("pub/x")), explicitlyDeniedBy(ReasonIdentityPolicy)},
		{"the bucket policy's Deny beats its Allow", ask(reader, ReadObject, "s3:GetObject", withPolicy(mine("pub/denied"))), explicitlyDeniedBy(ReasonBucketPolicy)},
		{"the bucket policy grants alone", ask(nobody, ReadObject, "s3:GetObject", withPolicy(mine("priv/y"))), allowedBy(ReasonBucketPolicy)},
		{"... within the session's bounds", ask(narrowed, ReadObject, "s3:GetObject", withPolicy(mine("priv/y"))), deniedBy(ReasonOutsideBounds)},
		{"its bounds narrow its own policy", ask(narrowed, ReadObject, "s3:GetObject", mine("pub/x")), allowedBy(ReasonIdentityPolicy)},
		{"... to what they allow", ask(narrowed, WriteObject, "s3:DeleteObject", mine("pub/x")), deniedBy(ReasonNoGrant)},
		{"a root session: what its bounds allow", ask(rootSession, ReadObject, "s3:GetObject", mine("x")), allowedBy(ReasonIdentityPolicy)},
		{"a root session: no more", ask(rootSession, WriteObject, "s3:PutObject", mine("x")), deniedBy(ReasonNoGrant)},

		{"setting an ACL needs s3:PutObjectAcl", setsACL(ask(writer, WriteObject, "s3:PutObject", mine("x"))), deniedBy(ReasonNoGrant)},
		{"... which it may have", setsACL(ask(aclWriter, WriteObject, "s3:PutObject", mine("x"))), allowedBy(ReasonIdentityPolicy)},

		{"another account: its policy is not enough", ask(writer, ReadObject, "s3:GetObject", alices), deniedBy(ReasonOtherAccount)},
		{"another account: nor public ACLs", ask(nobody, ReadObject, "s3:GetObject", alices), deniedBy(ReasonOtherAccount)},
		{"another account: both allow", ask(writer, ReadObject, "s3:GetObject", alicesShared), allowedBy(ReasonBothPolicies)},
		{"another account: the bucket policy alone", ask(nobody, ReadObject, "s3:GetObject", alicesShared), deniedBy(ReasonOtherAccount)},
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
