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

// TestJWTPolicyVariables: ${jwt:<claim>} of a session's token claims
// (oidcidp.ClaimVars) and ${ldap:username}/${ldap:user} are substituted
// as literal text: hostile values (*, ?, ${...}, /../) match only keys
// holding those very characters, never widening the policy.
func TestJWTPolicyVariables(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, &memBackend{}, &clock{t: time.Unix(1_800_000_000, 0)}, Options{})
	if err := s.PutPolicy(ctx, "root", "home", `{"Version":"2012-10-17","Statement":[
		{"Effect":"Allow","Action":"s3:GetObject","Resource":"arn:aws:s3:::home/${jwt:preferred_username}/*"},
		{"Effect":"Allow","Action":"s3:PutObject","Resource":"arn:aws:s3:::mail/${jwt:email}"},
		{"Effect":"Allow","Action":"s3:ListBucket","Resource":"arn:aws:s3:::home","Condition":{"StringLike":{"s3:prefix":"${jwt:given_name}/*"}}},
		{"Effect":"Allow","Action":"s3:DeleteObject","Resource":"arn:aws:s3:::ldap/${ldap:username}/*"}]}`); err != nil {
		t.Fatal(err)
	}
	type check struct {
		action, resource, prefix string
		want                     bool
	}
	for _, tc := range []struct {
		name   string
		vars   map[string]string
		checks []check
	}{
		{"plain", map[string]string{"preferred_username": "alice", "email": "alice@example.org", "given_name": "Alice"}, []check{
			{"s3:GetObject", "home/alice/a", "", true},
			{"s3:GetObject", "home/bob/a", "", false},
			{"s3:PutObject", "mail/alice@example.org", "", true},
			{"s3:PutObject", "mail/bob@example.org", "", false},
			{"s3:ListBucket", "home", "Alice/x", true},
			{"s3:ListBucket", "home", "Bob/x", false},
			{"s3:DeleteObject", "ldap/alice/x", "", false}, // no ${ldap:*} in an OpenID session
		}},
		{"star", map[string]string{"preferred_username": "*", "email": "*", "given_name": "*"}, []check{
			{"s3:GetObject", "home/bob/a", "", false},
			{"s3:GetObject", "home/*/a", "", true},
			{"s3:PutObject", "mail/bob@example.org", "", false},
			{"s3:PutObject", "mail/*", "", true},
			{"s3:ListBucket", "home", "Bob/x", false},
		}},
		{"question", map[string]string{"preferred_username": "???", "email": "?"}, []check{
			{"s3:GetObject", "home/bob/a", "", false},
			{"s3:PutObject", "mail/x", "", false},
			{"s3:GetObject", "home/???/a", "", true},
		}},
		{"variable", map[string]string{"preferred_username": "${jwt:sub}", "email": "${*}", "given_name": "${aws:username}"}, []check{
			{"s3:GetObject", "home/alice/a", "", false},
			{"s3:GetObject", "home/${jwt:sub}/a", "", true},
			{"s3:PutObject", "mail/*", "", false},
			{"s3:ListBucket", "home", "alice/x", false},
		}},
		{"dot-dot", map[string]string{"preferred_username": "alice/../bob", "email": "../../*"}, []check{
			{"s3:GetObject", "home/bob/a", "", false},
			{"s3:GetObject", "home/alice/../bob/a", "", true},
			{"s3:PutObject", "mail/x", "", false},
		}},
		{"missing", map[string]string{}, []check{
			{"s3:GetObject", "home//a", "", false},
			{"s3:GetObject", "home/alice/a", "", false},
			{"s3:ListBucket", "home", "/x", false},
		}},
	} {
		vars := map[string]string{"sub": "alice", "iss": "https://idp"}
		for k, v := range tc.vars {
			vars[k] = v
		}
		creds, err := s.AssumeRoleWithWebIdentity(ctx, WebIdentityRequest{Issuer: "https://idp", Subject: "alice", Policies: []string{"home"}, Vars: vars})
		if err != nil {
			t.Fatal(err)
		}
		id, err := s.LookupSession(creds.AccessKey, creds.SessionToken)
		if err != nil || id.Refusal != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		for _, ck := range tc.checks {
			cond := map[string][]string{}
			for k, v := range id.Claims {
				cond[k] = []string{v}
			}
			if ck.prefix != "" {
				cond["s3:prefix"] = []string{ck.prefix}
			}
			got := id.Permissions.Evaluate(&policy.Request{Action: ck.action, Resource: "arn:aws:s3:::" + ck.resource, Conditions: cond}) == policy.Allowed
			if got != ck.want {
				t.Errorf("%s: %s %s (prefix %q): allowed %v, want %v", tc.name, ck.action, ck.resource, ck.prefix, got, ck.want)
			}
		}
	}
}

// TestLDAPPolicyVariables: ${ldap:username} and ${ldap:user} of a
// directory session's claims (ldapClaims) stay literal for hostile names.
func TestLDAPPolicyVariables(t *testing.T) {
	p, err := policy.Parse([]byte(`{"Version":"2012-10-17","Statement":[
		{"Effect":"Allow","Action":"s3:GetObject","Resource":"arn:aws:s3:::home/${ldap:username}/*"},
		{"Effect":"Allow","Action":"s3:PutObject","Resource":"arn:aws:s3:::dn/${ldap:user}"}]}`), policy.ParseOptions{Identity: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		user, dn, action, resource string
		want                       bool
	}{
		{"alice", "uid=alice,dc=x", "s3:GetObject", "home/alice/a", true},
		{"alice", "uid=alice,dc=x", "s3:GetObject", "home/bob/a", false},
		{"*", "uid=*,dc=x", "s3:GetObject", "home/bob/a", false},
		{"*", "uid=*,dc=x", "s3:GetObject", "home/*/a", true},
		{"?????", "uid=x", "s3:GetObject", "home/alice/a", false},
		{"${jwt:sub}", "uid=x", "s3:GetObject", "home/alice/a", false},
		{"a/../b", "uid=x", "s3:GetObject", "home/b/a", false},
		{"alice", "*", "s3:PutObject", "dn/uid=alice,dc=x", false},
		{"alice", "uid=alice,dc=x", "s3:PutObject", "dn/uid=alice,dc=x", true},
	} {
		cond := map[string][]string{}
		for k, v := range ldapClaims(tc.user, tc.dn) {
			cond[k] = []string{v}
		}
		got := p.Evaluate(&policy.Request{Action: tc.action, Resource: "arn:aws:s3:::" + tc.resource, Conditions: cond}) == policy.Allowed
		if got != tc.want {
			t.Errorf("user %q dn %q: %s %s allowed %v, want %v", tc.user, tc.dn, tc.action, tc.resource, got, tc.want)
		}
	}
}
