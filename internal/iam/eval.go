package iam

import (
	"github.com/shardstore/shardstore/internal/policy"
)

// permissions implement auth.Permissions: a union of policies (a user's
// and its groups'), narrowed by bounds (an access key's own policy, a
// session policy), every one of which must allow.
type permissions struct {
	all      bool // a root session: everything the bounds allow
	policies []*policy.Policy
	bounds   []*policy.Policy
}

func (p *permissions) add(pol *policy.Policy) {
	if pol != nil {
		p.policies = append(p.policies, pol)
	}
}

// narrowed returns p with one more bound.
func (p *permissions) narrowed(bound *policy.Policy) *permissions {
	out := &permissions{all: p.all, policies: p.policies}
	out.bounds = append(append([]*policy.Policy(nil), p.bounds...), bound)
	return out
}

// Evaluate implements auth.Permissions.
func (p *permissions) Evaluate(r *policy.Request) policy.Decision {
	d := policy.NotApplicable
	if p.all {
		d = policy.Allowed
	}
	for _, pol := range p.policies {
		switch pol.Evaluate(r) {
		case policy.Denied:
			return policy.Denied
		case policy.Allowed:
			d = policy.Allowed
		}
	}
	for _, b := range p.bounds {
		switch b.Evaluate(r) {
		case policy.Denied:
			return policy.Denied
		case policy.NotApplicable:
			if d == policy.Allowed {
				d = policy.NotApplicable
			}
		}
	}
	return d
}

// Bounded implements auth.Permissions.
func (p *permissions) Bounded(r *policy.Request) bool {
	for _, b := range p.bounds {
		if b.Evaluate(r) != policy.Allowed {
			return false
		}
	}
	return true
}

// builtinPolicies come with the server, under the names MinIO users know.
var builtinPolicies = map[string]string{
	"readwrite": `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["s3:*"],"Resource":["arn:aws:s3:::*"]}]}`,
	"readonly": `{"Version":"2012-10-17","Statement":[{"Effect":"Allow",
		"Action":["s3:GetBucketLocation","s3:GetObject","s3:ListBucket","s3:ListAllMyBuckets"],"Resource":["arn:aws:s3:::*"]}]}`,
	"writeonly": `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["s3:PutObject"],"Resource":["arn:aws:s3:::*"]}]}`,
	"consoleAdmin": `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["admin:*"]},
		{"Effect":"Allow","Action":["s3:*"],"Resource":["arn:aws:s3:::*"]}]}`,
}
