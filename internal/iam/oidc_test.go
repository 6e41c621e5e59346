package iam

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/shardstore/shardstore/internal/policy"
)

func TestWebIdentitySessions(t *testing.T) {
	ctx := context.Background()
	b, c := &memBackend{}, &clock{t: time.Unix(1_800_000_000, 0)}
	s := openStore(t, b, c, Options{})
	var se *STSError
	if _, err := s.AssumeRoleWithWebIdentity(ctx, WebIdentityRequest{Issuer: "https://idp", Subject: "alice", Policies: []string{"nosuch"}}); !errors.As(err, &se) || se.Code != "AccessDenied" {
		t.Fatalf("no existing policy: %v", err)
	}
	if _, err := s.AssumeRoleWithWebIdentity(ctx, WebIdentityRequest{Issuer: "https://idp", Policies: []string{"readonly"}}); !errors.As(err, &se) || se.Code != "InvalidIdentityToken" {
		t.Fatalf("no subject: %v", err)
	}
	if _, err := s.AssumeRoleWithWebIdentity(ctx, WebIdentityRequest{Issuer: "https://idp", Subject: "alice", Policies: []string{"readonly"}, Duration: time.Minute}); !errors.As(err, &se) || se.Code != "ValidationError" {
		t.Fatalf("short duration: %v", err)
	}
	if err := s.PutPolicy(ctx, "root", "puts", `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:PutObject","Resource":"arn:aws:s3:::b/*"}]}`); err != nil {
		t.Fatal(err)
	}
	creds, err := s.AssumeRoleWithWebIdentity(ctx, WebIdentityRequest{Issuer: "https://idp", Subject: "alice", Policies: []string{"readonly", "nosuch", "puts"}})
	if err != nil {
		t.Fatal(err)
	}
	allowed := func(action string) bool {
		t.Helper()
		id, err := s.LookupSession(creds.AccessKey, creds.SessionToken)
		if err != nil || id.Refusal != nil || id.User != "alice" || id.Claims["jwt:sub"] != "alice" || id.Claims["jwt:iss"] != "https://idp" {
			t.Fatalf("session: %+v %v", id, err)
		}
		return id.Permissions.Evaluate(&policy.Request{Action: action, Resource: "arn:aws:s3:::b/k"}) == policy.Allowed
	}
	if !allowed("s3:GetObject") || !allowed("s3:PutObject") || allowed("s3:DeleteObject") {
		t.Fatal("session permissions are not the claim's policies")
	}
	if err := s.RemovePolicy(ctx, "root", "puts"); err != nil {
		t.Fatal(err)
	}
	if allowed("s3:PutObject") {
		t.Fatal("a removed policy still grants")
	}
	c.t = c.t.Add(DefaultSessionDuration)
	if _, err := s.LookupSession(creds.AccessKey, creds.SessionToken); err == nil {
		t.Fatal("an expired session works")
	}
}
