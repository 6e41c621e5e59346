package access

import (
	"testing"

	"github.com/shardstore/shardstore/internal/policy"
)

// The cast of the tables: alice owns bucket "bkt"; bob and carol are
// other users of the users file; "root" owns what identities create.
const (
	alice = "alice"
	bob   = "bob"
	carol = "carol"
)

var (
	anon    = Caller{Kind: Anonymous}
	rootC   = Caller{Kind: Root, AccessKey: "root", Name: "root"}
	aliceC  = user(alice)
	bobC    = user(bob)
	carolC  = user(carol)
	noConds = map[string][]string{}
)

func user(ak string) Caller { return Caller{Kind: User, AccessKey: ak, Name: ak} }

// identity is an identity of the identity store named name, in root's
// account, with perms.
func identity(name string, perms Permissions) Caller {
	return Caller{Kind: Identity, AccessKey: name, Name: name, Account: "root", Permissions: perms}
}

func bucketPolicy(t *testing.T, doc string) *policy.Policy {
	t.Helper()
	p, err := policy.Parse([]byte(doc), policy.ParseOptions{Bucket: "bkt"})
	if err != nil {
		t.Fatalf("bucket policy: %v\n%s", err, doc)
	}
	return p
}

func identityPolicy(t *testing.T, doc string) *policy.Policy {
	t.Helper()
	p, err := policy.Parse([]byte(doc), policy.ParseOptions{Identity: true})
	if err != nil {
		t.Fatalf("identity policy: %v\n%s", err, doc)
	}
	return p
}

// policies is IdentityPolicies of the given policies.
func policies(ps ...*policy.Policy) *IdentityPolicies {
	p := &IdentityPolicies{}
	for _, pol := range ps {
		p.Add(pol)
	}
	return p
}

// bucketOf is alice's bucket "bkt" with a canned ACL.
func bucketOf(acl string) Resource {
	return Resource{Bucket: "bkt", BucketOwner: alice, BucketACL: CannedGrants(acl, false)}
}

// objectOf is object "obj", written by owner with a canned ACL, in
// alice's bucket "bkt" with a canned ACL.
func objectOf(bucketACL, owner, objectACL string) Resource {
	r := bucketOf(bucketACL)
	r.Key, r.ObjectOwner, r.ObjectACL = "obj", owner, CannedGrants(objectACL, true)
	return r
}

// ask is the question c doing op (named action for policies) on r asks,
// with the condition keys every signed request has.
func ask(c Caller, op Operation, action string, r Resource) Request {
	conds := map[string][]string{"aws:principaltype": {"Anonymous"}}
	if c.Kind != Anonymous {
		conds = map[string][]string{"aws:principaltype": {"User"}, "aws:username": {c.Name}, "aws:userid": {c.Name}}
	}
	return Request{Caller: c, Op: op, Action: action, Resource: r, Conditions: conds}
}

// row is one table row: a question and the decision it must get.
type row struct {
	name string
	req  Request
	want Decision
}

func run(t *testing.T, rows []row) {
	t.Helper()
	for _, r := range rows {
		if got := Decide(r.req); got != r.want {
			t.Errorf("%s: %+v, want %+v", r.name, got, r.want)
		}
	}
}

// The decisions rows expect.
func allowedBy(why Reason) Decision          { return allow(why) }
func deniedBy(why Reason) Decision           { return deny(why) }
func explicitlyDeniedBy(why Reason) Decision { return explicitDeny(why) }
