package iam

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestSealState: a value sealed by one store opens in another store of
// the same key (another node), for its own context only; a session token
// does not open as a state, nor a state under another key.
func TestSealState(t *testing.T) {
	c := &clock{t: time.Unix(1_800_000_000, 0)}
	b := &memBackend{}
	a := openStore(t, b, c, Options{Key: "cluster-key-0123456789"})
	other := openStore(t, b, c, Options{Key: "cluster-key-0123456789"})
	sealed := a.SealState([]byte("pending login"), "console oidc login")
	if got, err := other.OpenState(sealed, "console oidc login"); err != nil || string(got) != "pending login" {
		t.Fatalf("another node: %q %v", got, err)
	}
	if _, err := other.OpenState(sealed, "something else"); err == nil {
		t.Fatal("opened for another context")
	}
	elsewhere := openStore(t, &memBackend{}, c, Options{Key: "another-deployment-key-0123"})
	if _, err := elsewhere.OpenState(sealed, "console oidc login"); err == nil {
		t.Fatal("opened under another key")
	}
	if err := a.PutPolicy(context.Background(), "root", "p", `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:GetObject","Resource":"*"}]}`); err != nil {
		t.Fatal(err)
	}
	creds, err := a.AssumeRoleWithWebIdentity(context.Background(), WebIdentityRequest{Issuer: "i", Subject: "s", Policies: []string{"p"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{strings.TrimPrefix(creds.SessionToken, tokenPrefix), "", "!!", strings.Repeat("A", maxToken+1)} {
		if _, err := a.OpenState(v, "console oidc login"); err == nil {
			t.Errorf("%.20q opened as a state", v)
		}
	}
}
