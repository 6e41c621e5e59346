package iam

import (
	"context"
	"testing"
	"time"

	"github.com/shardstore/shardstore/internal/policy"
)

// The request path's cost of identities: finding a credential, decoding
// a session token (cached after the first request) and evaluating the
// user's and groups' compiled policies. None of it parses JSON.

func benchStore(b *testing.B) (*Store, Credentials) {
	ctx := context.Background()
	s, err := Open(ctx, Options{Backend: &memBackend{}, Root: rootID})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := s.AddUser(ctx, "root", "alice", "alice-secret"); err != nil {
		b.Fatal(err)
	}
	if err := s.PutPolicy(ctx, "root", "home", `{"Version":"2012-10-17","Statement":[
		{"Effect":"Allow","Action":["s3:GetObject","s3:PutObject"],"Resource":"arn:aws:s3:::data/home/${aws:username}/*"},
		{"Effect":"Deny","Action":"s3:DeleteObject","Resource":"*"}]}`); err != nil {
		b.Fatal(err)
	}
	if err := s.UpdateGroupMembers(ctx, "root", "staff", []string{"alice"}, nil); err != nil {
		b.Fatal(err)
	}
	for _, att := range []struct{ p, u, g string }{{"home", "alice", ""}, {"readonly", "", "staff"}} {
		if err := s.AttachPolicies(ctx, "root", []string{att.p}, att.u, att.g, true); err != nil {
			b.Fatal(err)
		}
	}
	alice, _ := s.Lookup("alice")
	creds, err := s.AssumeRole(ctx, alice, AssumeRoleRequest{Duration: time.Hour,
		Policy: `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:*","Resource":"arn:aws:s3:::data/*"}]}`})
	if err != nil {
		b.Fatal(err)
	}
	return s, creds
}

func BenchmarkLookup(b *testing.B) {
	s, _ := benchStore(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Lookup("alice"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkLookupSession(b *testing.B) {
	s, creds := benchStore(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.LookupSession(creds.AccessKey, creds.SessionToken); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEvaluateSession(b *testing.B) {
	s, creds := benchStore(b)
	id, err := s.LookupSession(creds.AccessKey, creds.SessionToken)
	if err != nil {
		b.Fatal(err)
	}
	r := &policy.Request{Action: "s3:PutObject", Resource: "arn:aws:s3:::data/home/alice/report.csv",
		AccessKey: "alice", Conditions: map[string][]string{"aws:username": {"alice"}}}
	if id.Permissions.Evaluate(r) != policy.Allowed {
		b.Fatal("not allowed")
	}
	b.ReportAllocs()
	for b.Loop() {
		id.Permissions.Evaluate(r)
	}
}
