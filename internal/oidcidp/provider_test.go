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
