package oidcidp

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

func TestEnvProviders(t *testing.T) {
	env := []string{
		"MINIO_IDENTITY_OPENID_CONFIG_URL=https://a.example/.well-known/openid-configuration",
		"MINIO_IDENTITY_OPENID_CLIENT_ID=minio-a",
		"SHARDSTORE_IDENTITY_OPENID_CLIENT_ID=ours-a", // ours wins
		"MINIO_IDENTITY_OPENID_CONFIG_URL_OKTA=https://okta.example/.well-known/openid-configuration",
		"MINIO_IDENTITY_OPENID_CLIENT_ID_OKTA=okta-client",
		"MINIO_IDENTITY_OPENID_CLIENT_SECRET_OKTA=s3cret",
		"MINIO_IDENTITY_OPENID_ROLE_POLICY_OKTA=readonly",
		"SHARDSTORE_IDENTITY_OPENID_DISPLAY_NAME_OKTA=Okta",
		"MINIO_IDENTITY_OPENID_CLAIM_PREFIX_OKTA=ignored", // a MinIO setting not read
		"MINIO_IDENTITY_OPENID_CONFIG_URL_OFF=https://off.example/",
		"MINIO_IDENTITY_OPENID_ENABLE_OFF=off",
		"MINIO_IDENTITY_OPENID_CLIENT_ID_EMPTY=",
		"UNRELATED=1",
		"MINIO_IDENTITY_OPENID_SCOPES_K_2=openid,email",
	}
	got, err := EnvProviders(env)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[""]["CLIENT_ID"] != "ours-a" || got["OKTA"]["CLIENT_ID"] != "okta-client" ||
		got["OKTA"]["DISPLAY_NAME"] != "Okta" || got["OKTA"]["CLIENT_SECRET"] != "s3cret" || got["K_2"]["SCOPES"] != "openid,email" {
		t.Fatalf("%v", got)
	}
	if _, ok := got["OFF"]; ok {
		t.Fatal("ENABLE_OFF=off still configured")
	}
	for _, bad := range []string{
		"MINIO_IDENTITY_OPENID_CLIENT_ID_=x",
		"MINIO_IDENTITY_OPENID_CLIENT_ID_a.b=x",
		"MINIO_IDENTITY_OPENID_CLIENT_ID_" + strings.Repeat("n", 65) + "=x",
		"MINIO_IDENTITY_OPENID_CLIENT_ID_-x=x",
		"SHARDSTORE_IDENTITY_OPENID_CONFIG_URL_ä=x",
		"SHARDSTORE_IDENTITY_OPENID_CONFIG_URL_a b=x",
	} {
		if _, err := EnvProviders([]string{bad}); !errors.Is(err, ErrConfig) {
			t.Errorf("%q: %v", bad, err)
		}
	}
	many := []string{}
	for i := range maxProviders + 1 {
		many = append(many, "MINIO_IDENTITY_OPENID_CLIENT_ID_P"+strings.Repeat("x", i)+"=c")
	}
	if _, err := EnvProviders(many); !errors.Is(err, ErrConfig) {
		t.Errorf("%d providers: %v", len(many), err)
	}

	if _, err := ParseAll(got, nil); !errors.Is(err, ErrConfig) {
		t.Errorf("a provider with SCOPES only: %v", err)
	}
	delete(got, "K_2")
	cfgs, err := ParseAll(got, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(cfgs) != 2 || cfgs[0].Name != "" || cfgs[1].Name != "OKTA" || cfgs[1].RoleARN != RoleARN("okta-client") || cfgs[0].RoleARN != "" {
		t.Fatalf("%+v", cfgs)
	}
	// MinIO's ARN: arn:minio:iam:::role/ + base64url(sha1(client id)).
	// The second is what MinIO (RELEASE in /tmp/peers) printed ("IAM
	// Roles: ...") for MINIO_IDENTITY_OPENID_CLIENT_ID_SVC=shardstore-svc
	// with a ROLE_POLICY, and accepted as RoleArn.
	for client, want := range map[string]string{
		"minio-client":   "arn:minio:iam:::role/1mAsqpUGox8eewepDQ1dmtwpdY8",
		"shardstore-svc": "arn:minio:iam:::role/tg2fiV0cFDVvJ3RqflTxvkauRu4",
	} {
		if got := RoleARN(client); got != want {
			t.Errorf("RoleARN(%q) = %s, want %s", client, got, want)
		}
	}
	for why, bad := range map[string]map[string]map[string]string{
		"same role":   {"A": {"CONFIG_URL": "https://a/", "CLIENT_ID": "c", "ROLE_POLICY": "x"}, "B": {"CONFIG_URL": "https://b/", "CLIENT_ID": "c", "ROLE_POLICY": "y"}},
		"same client": {"A": {"CONFIG_URL": "https://a/", "CLIENT_ID": "c"}, "B": {"CONFIG_URL": "https://a/", "CLIENT_ID": "c"}},
		"no url":      {"A": {"CLIENT_ID": "c"}},
		"both":        {"A": {"CONFIG_URL": "https://a/", "CLIENT_ID": "c", "ROLE_POLICY": "x", "CLAIM_NAME": "groups"}},
	} {
		if _, err := ParseAll(bad, nil); !errors.Is(err, ErrConfig) {
			t.Errorf("%s: %v", why, err)
		}
	}
}

// TestSetRouting: two providers with their own keys and clients, a third
// with a role policy; each token goes to its own provider by issuer and
// audience, the role provider by RoleArn only.
func TestSetRouting(t *testing.T) {
	a, b := newIssuer(t), newIssuer(t)
	ka, kb := a.add(t, "a1", false), b.add(t, "b1", true)
	now := time.Now()
	tok := func(ti *testIssuer, kid string, key any, aud string, extra jwt.MapClaims) string {
		c := jwt.MapClaims{"iss": ti.srv.URL, "sub": "alice", "aud": aud, "exp": now.Add(time.Hour).Unix(), "iat": now.Unix(), "policy": "readonly"}
		for k, v := range extra {
			c[k] = v
		}
		m := jwt.SigningMethod(jwt.SigningMethodRS256)
		if kid == "b1" {
			m = jwt.SigningMethodES256
		}
		return sign(t, m, kid, key, c)
	}
	set, err := ParseAll(map[string]map[string]string{
		"":     {"CONFIG_URL": a.srv.URL + "/.well-known/openid-configuration", "CLIENT_ID": "app-a"},
		"B":    {"CONFIG_URL": b.srv.URL + "/.well-known/openid-configuration", "CLIENT_ID": "app-b", "CLAIM_NAME": "groups"},
		"ROLE": {"CONFIG_URL": b.srv.URL + "/.well-known/openid-configuration", "CLIENT_ID": "svc", "ROLE_POLICY": "diagnostics"},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := NewSet(set)
	ctx := context.Background()
	c, err := s.Validate(ctx, tok(a, "a1", ka, "app-a", nil), "arn:aws:iam::123456789012:role/anything")
	if err != nil || c.Provider != "" || !slices.Equal(c.Policies, []string{"readonly"}) || c.RoleARN != "" {
		t.Fatalf("provider A: %+v %v", c, err)
	}
	c, err = s.Validate(ctx, tok(b, "b1", kb, "app-b", jwt.MapClaims{"groups": []any{"writers"}}), "")
	if err != nil || c.Provider != "B" || !slices.Equal(c.Policies, []string{"writers"}) {
		t.Fatalf("provider B: %+v %v", c, err)
	}
	role := RoleARN("svc")
	c, err = s.Validate(ctx, tok(b, "b1", kb, "svc", nil), role)
	if err != nil || c.Provider != "ROLE" || !slices.Equal(c.Policies, []string{"diagnostics"}) || c.RoleARN != role {
		t.Fatalf("role provider: %+v %v", c, err)
	}
	// The same ARN with a region (MinIO puts the server's region there).
	if _, err := s.Validate(ctx, tok(b, "b1", kb, "svc", nil), strings.Replace(role, "iam:::", "iam:us-east-1::", 1)); err != nil {
		t.Fatalf("role ARN with a region: %v", err)
	}
	refused := map[string]struct {
		token, arn string
		want       error
	}{
		"A's token with B's audience": {tok(a, "a1", ka, "app-b", nil), "", ErrInvalidToken},
		"B's issuer, A's client":      {tok(b, "b1", kb, "app-a", nil), "", ErrInvalidToken},
		"A's token signed by B's key": {sign(t, jwt.SigningMethodES256, "b1", kb, jwt.MapClaims{"iss": a.srv.URL, "sub": "x", "aud": "app-a", "exp": now.Add(time.Hour).Unix()}), "", ErrInvalidToken},
		"svc token without its role":  {tok(b, "b1", kb, "svc", nil), "", ErrInvalidToken},
		"B's token with the role ARN": {tok(b, "b1", kb, "app-b", nil), role, ErrInvalidToken},
		"unknown minio role":          {tok(a, "a1", ka, "app-a", nil), RoleARN("nobody"), ErrUnknownRole},
		"unknown issuer":              {tok(a, "a1", ka, "app-a", jwt.MapClaims{"iss": "https://evil.example"}), "", ErrInvalidToken},
		"not a JWT":                   {"x.y.z", "", ErrInvalidToken},
		"role ARN with a huge name":   {tok(a, "a1", ka, "app-a", nil), "arn:minio:iam:::role/" + strings.Repeat("x", 5000), ErrUnknownRole},
	}
	for why, r := range refused {
		if _, err := s.Validate(ctx, r.token, r.arn); !errors.Is(err, r.want) {
			t.Errorf("%s: %v, want %v", why, err, r.want)
		}
	}

	// Only role providers: any other RoleArn is refused (MinIO's rule),
	// and so is none.
	only := NewSet(set[2:])
	for _, arn := range []string{"", "arn:aws:iam::123456789012:role/web"} {
		if _, err := only.Validate(ctx, tok(b, "b1", kb, "svc", nil), arn); !errors.Is(err, ErrUnknownRole) {
			t.Errorf("role-only set, RoleArn %q: %v", arn, err)
		}
	}
	// A provider down: a token for it says so; the other still works.
	b.mu.Lock()
	b.down = true
	b.mu.Unlock()
	fresh := NewSet(set)
	if _, err := fresh.Validate(ctx, tok(b, "b1", kb, "app-b", nil), ""); !errors.Is(err, ErrUnavailable) {
		t.Errorf("B down: %v", err)
	}
	if _, err := fresh.Validate(ctx, tok(a, "a1", ka, "app-a", nil), ""); err != nil {
		t.Errorf("A with B down: %v", err)
	}
}

// TestClaimVars: string claims become ${jwt:*} variables; hostile names
// and values are left out or kept as text, sub and iss cannot be
// overridden.
func TestClaimVars(t *testing.T) {
	v := ClaimVars(map[string]any{
		"sub": "forged", "SUB": "forged", "iss": "forged", "email": "a@example.org", "preferred_username": "alice",
		"aud": []any{"app"}, "groups": []any{"a", "b"}, "nonce": "n", "exp": 123.0, "Name": "Alice", "name": "A2",
		"given_name": "*", "family_name": "${jwt:sub}", "bad name": "x", "x}": "y", "ctl": "a\x00b", "long": strings.Repeat("x", maxVarValue+1),
		"path": "/../bob", "q": "?", "empty": "", "n": 1.0, "bad-utf8": "\xff",
	}, "alice", "https://idp.example")
	want := map[string]string{"sub": "alice", "iss": "https://idp.example", "email": "a@example.org", "preferred_username": "alice",
		"aud": "app", "given_name": "*", "family_name": "${jwt:sub}", "path": "/../bob", "q": "?"}
	if len(v) != len(want) {
		t.Errorf("got %v", v)
	}
	for k, w := range want {
		if v[k] != w {
			t.Errorf("%s = %q, want %q", k, v[k], w)
		}
	}
	big := map[string]any{}
	for i := range 100 {
		big["c"+strings.Repeat("x", i%60)+string(rune('a'+i/60))] = "v"
	}
	if v := ClaimVars(big, "s", "i"); len(v) > maxVars || v["sub"] != "s" {
		t.Errorf("%d vars from 100 claims: %v", len(v), v)
	}
}

func FuzzEnvProviders(f *testing.F) {
	f.Add("MINIO_IDENTITY_OPENID_CONFIG_URL_X", "https://x/")
	f.Add("SHARDSTORE_IDENTITY_OPENID_CLIENT_ID_", "c")
	f.Fuzz(func(t *testing.T, k, v string) {
		got, err := EnvProviders([]string{k + "=" + v})
		if err != nil {
			return
		}
		for name := range got {
			if name != "" && !providerName.MatchString(name) {
				t.Fatalf("name %q accepted", name)
			}
		}
		_, _ = ParseAll(got, nil)
	})
}

// TestSetDownProviderNotAskedAgain: once the provider of a token is
// known, a provider that is down (never discovered) is not asked again
// for the other's tokens.
func TestSetDownProviderNotAskedAgain(t *testing.T) {
	down, up := newIssuer(t), newIssuer(t)
	down.mu.Lock()
	down.down = true
	down.mu.Unlock()
	key := up.add(t, "u1", false)
	cfgs, err := ParseAll(map[string]map[string]string{
		"A": {"CONFIG_URL": down.srv.URL + "/.well-known/openid-configuration", "CLIENT_ID": "app"},
		"B": {"CONFIG_URL": up.srv.URL + "/.well-known/openid-configuration", "CLIENT_ID": "app"},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := NewSet(cfgs)
	now := time.Now()
	tok := sign(t, jwt.SigningMethodRS256, "u1", key, jwt.MapClaims{"iss": up.srv.URL, "sub": "x", "aud": "app", "exp": now.Add(time.Hour).Unix()})
	for i := range 3 {
		if c, err := s.Validate(context.Background(), tok, ""); err != nil || c.Provider != "B" {
			t.Fatalf("call %d: %+v %v", i, c, err)
		}
	}
	down.mu.Lock()
	hits := down.hits
	down.mu.Unlock()
	if hits > 1 {
		t.Fatalf("the provider that is down was asked %d times for another provider's tokens", hits)
	}
	// A token of the down provider's issuer: unavailable.
	tokA := sign(t, jwt.SigningMethodRS256, "u1", key, jwt.MapClaims{"iss": down.srv.URL, "sub": "x", "aud": "app", "exp": now.Add(time.Hour).Unix()})
	if _, err := s.Validate(context.Background(), tokA, ""); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("token for the down provider: %v", err)
	}
}

// FuzzSetValidate: no token and role ARN validate against a set whose
// providers have no keys, and none panics.
func FuzzSetValidate(f *testing.F) {
	f.Add("a.b.c", "arn:minio:iam:::role/x")
	f.Add("eyJhbGciOiJub25lIn0.eyJpc3MiOiJ4IiwiYXVkIjoiYyJ9.", "")
	f.Add("x", "arn:minio:iam:us-east-1::role/"+strings.Repeat("/", 10))
	ti := newIssuer(f)
	cfgs, err := ParseAll(map[string]map[string]string{
		"A": {"CONFIG_URL": ti.srv.URL + "/.well-known/openid-configuration", "CLIENT_ID": "c"},
		"B": {"CONFIG_URL": ti.srv.URL + "/.well-known/openid-configuration", "CLIENT_ID": "d"},
		"R": {"CONFIG_URL": ti.srv.URL + "/.well-known/openid-configuration", "CLIENT_ID": "r", "ROLE_POLICY": "p"},
	}, nil)
	if err != nil {
		f.Fatal(err)
	}
	s := NewSet(cfgs)
	f.Fuzz(func(t *testing.T, token, arn string) {
		if _, err := s.Validate(context.Background(), token, arn); err == nil {
			t.Fatalf("validated %q with RoleArn %q", token, arn)
		}
	})
}
