package oidcidp_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/shardstore/shardstore/internal/oidcidp"
	"github.com/shardstore/shardstore/internal/oidcidp/oidctest"
)

// TestRealProvider validates ID tokens of a real OpenID provider
// (oidc-provider under Node, oidctest): the policy claim as a string and
// as an array, the groups claim when CLAIM_NAME says so, a token issued
// to another client refused, a tampered one refused.
func TestRealProvider(t *testing.T) {
	op := oidctest.Start(t)
	ctx := context.Background()
	newP := func(claim string) *oidcidp.Provider {
		cfg, ok, err := oidcidp.Parse(map[string]string{"CONFIG_URL": op.ConfigURL(), "CLIENT_ID": oidctest.ClientID, "CLAIM_NAME": claim}, nil)
		if !ok || err != nil {
			t.Fatal(err)
		}
		return oidcidp.New(cfg)
	}
	p := newP("")
	alice, err := op.Login("alice", oidctest.ClientID, oidctest.ClientSecret)
	if err != nil {
		t.Fatalf("alice's login at the provider: %v", err)
	}
	c, err := p.Validate(ctx, alice)
	if err != nil || c.Subject != "alice" || c.Issuer != op.Issuer || !slices.Equal(c.Policies, []string{"readonly"}) {
		t.Fatalf("alice: %+v %v", c, err)
	}
	bob, err := op.Login("bob", oidctest.ClientID, oidctest.ClientSecret)
	if err != nil {
		t.Fatal(err)
	}
	if c, err := p.Validate(ctx, bob); err != nil || !slices.Equal(c.Policies, []string{"readwrite", "diagnostics"}) {
		t.Fatalf("bob: %+v %v", c, err)
	}
	if c, err := newP("groups").Validate(ctx, alice); err != nil || !slices.Equal(c.Policies, []string{"readers"}) {
		t.Fatalf("alice by groups: %+v %v", c, err)
	}
	other, err := op.Login("alice", oidctest.OtherClient, oidctest.OtherSecret)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Validate(ctx, other); !errors.Is(err, oidcidp.ErrInvalidToken) {
		t.Fatalf("token of another client: %v", err)
	}
	b := []byte(alice)
	b[len(b)-5] ^= 1
	if _, err := p.Validate(ctx, string(b)); !errors.Is(err, oidcidp.ErrInvalidToken) {
		t.Fatalf("tampered: %v", err)
	}
}

// TestRealProviders: two oidc-provider processes behind one Set: tokens
// go to their own provider by issuer and client; a role-policy provider
// answers for its role ARN only; client-credentials tokens (JWT access
// tokens naming the client in client_id) validate too.
func TestRealProviders(t *testing.T) {
	op1, op2 := oidctest.Start(t), oidctest.Start(t)
	cfgs, err := oidcidp.ParseAll(map[string]map[string]string{
		"":       {"CONFIG_URL": op1.ConfigURL(), "CLIENT_ID": oidctest.ClientID},
		"SECOND": {"CONFIG_URL": op2.ConfigURL(), "CLIENT_ID": oidctest.OtherClient, "CLAIM_NAME": "groups"},
		"SVC":    {"CONFIG_URL": op1.ConfigURL(), "CLIENT_ID": oidctest.ServiceClient, "ROLE_POLICY": "diagnostics"},
		"SVC2":   {"CONFIG_URL": op2.ConfigURL(), "CLIENT_ID": oidctest.ServiceClient},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	set := oidcidp.NewSet(cfgs)
	ctx := context.Background()
	login := func(op *oidctest.Provider, user, client, secret string) string {
		t.Helper()
		tok, err := op.Login(user, client, secret)
		if err != nil {
			t.Fatalf("%s at %s: %v", user, op.Issuer, err)
		}
		return tok
	}
	grant := func(op *oidctest.Provider) string {
		t.Helper()
		tok, err := op.ClientCredentials(oidctest.ServiceClient, oidctest.ServiceSecret)
		if err != nil {
			t.Fatalf("client credentials at %s: %v", op.Issuer, err)
		}
		return tok
	}
	role := oidcidp.RoleARN(oidctest.ServiceClient)
	for _, tc := range []struct {
		why, token, arn, provider string
		policies                  []string
	}{
		{"alice at the first", login(op1, "alice", oidctest.ClientID, oidctest.ClientSecret), "arn:aws:iam::1:role/x", "", []string{"readonly"}},
		{"bob at the second", login(op2, "bob", oidctest.OtherClient, oidctest.OtherSecret), "", "SECOND", []string{"writers"}},
		{"service at the first, by role", grant(op1), role, "SVC", []string{"diagnostics"}},
		{"service at the second, by claim", grant(op2), "", "SVC2", []string{"readonly"}},
	} {
		c, err := set.Validate(ctx, tc.token, tc.arn)
		if err != nil || c.Provider != tc.provider || !slices.Equal(c.Policies, tc.policies) {
			t.Errorf("%s: %+v %v", tc.why, c, err)
		}
	}
	for why, tok := range map[string]string{
		"alice of the first client at the second": login(op2, "alice", oidctest.ClientID, oidctest.ClientSecret),
		"bob of the other client at the first":    login(op1, "bob", oidctest.OtherClient, oidctest.OtherSecret),
		"service at the first without its role":   grant(op1),
	} {
		if _, err := set.Validate(ctx, tok, ""); !errors.Is(err, oidcidp.ErrInvalidToken) {
			t.Errorf("%s: %v", why, err)
		}
	}
	if _, err := set.Validate(ctx, grant(op2), role); !errors.Is(err, oidcidp.ErrInvalidToken) {
		t.Errorf("the second's service token with the first's role: %v", err)
	}
}
