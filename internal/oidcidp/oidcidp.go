// Package oidcidp validates OpenID Connect tokens for STS
// AssumeRoleWithWebIdentity: a provider configured by its discovery URL
// (issuer, jwks_uri), ID tokens (or JWT access tokens) checked for
// signature against the provider's JWKS (an unknown key id fetches the
// JWKS again, so a rotation is picked up), issuer, audience (the client
// id in aud, or azp), expiry and not-before (with a minute's leeway for
// clock skew, as the JWT rules allow), and the policies a token carries
// read from a claim (MinIO's "policy" by default: a string of names
// separated by commas, or an array) or given to every token of the
// provider (ROLE_POLICY).
//
// Settings come from SHARDSTORE_IDENTITY_OPENID_* or MinIO's
// MINIO_IDENTITY_OPENID_* environment variables: CONFIG_URL, CLIENT_ID,
// CLIENT_SECRET, CLAIM_NAME, SCOPES, REDIRECT_URI, ROLE_POLICY,
// DISPLAY_NAME, ENABLE, each also with a _<NAME> suffix for one more
// provider (EnvProviders, ParseAll; providers.go). A Set holds them and
// picks a token's provider: the role-policy provider whose MinIO role ARN
// the call names, else the claim-based one of the token's issuer and
// client. Client-credentials tokens (RFC 9068 JWT access tokens, the
// client in client_id) validate like ID tokens. ClaimVars turns a
// token's string claims into ${jwt:*} policy variables. AuthCodeURL and
// Exchange (authcode.go) are the console's authorization-code login with
// PKCE and a nonce.
//
// Errors: ErrInvalidToken (malformed, bad signature, wrong issuer or
// audience, not yet valid, no provider of its issuer and client),
// ErrExpiredToken, ErrUnavailable (discovery or JWKS could not be
// fetched), ErrUnknownRole (a RoleArn no provider has). A token is never logged or put in an
// error.
package oidcidp

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// Errors of Validate.
var (
	ErrInvalidToken = errors.New("invalid identity token")
	ErrExpiredToken = errors.New("expired identity token")
	ErrUnavailable  = errors.New("the OpenID provider is unavailable")
	ErrConfig       = errors.New("OpenID configuration")
)

// Setting names (after SHARDSTORE_IDENTITY_OPENID_ or
// MINIO_IDENTITY_OPENID_, before a provider's _<NAME>; EnvProviders).
var settingNames = []string{"CONFIG_URL", "CLIENT_ID", "CLIENT_SECRET", "CLAIM_NAME", "SCOPES", "REDIRECT_URI", "ROLE_POLICY", "DISPLAY_NAME", "ENABLE"}

// Config is a parsed provider configuration.
type Config struct {
	// Name is the provider's _<NAME> suffix ("" for the unnamed one).
	Name         string
	ConfigURL    string
	ClientID     string
	ClientSecret string
	ClaimName    string   // default "policy"
	Scopes       []string // for the console's login (not built yet)
	RedirectURI  string
	RolePolicy   []string // policies of every token, instead of the claim's
	DisplayName  string   // the console's "Sign in with ..." (default: the name, or "OpenID")
	// RoleARN is a role-policy provider's role (ParseAll sets it).
	RoleARN string
	RootCAs *x509.CertPool
	// Leeway is the clock skew allowed on exp, nbf and iat.
	Leeway time.Duration
	// Now is the clock; nil is time.Now.
	Now func() time.Time
}

// Parse checks settings; ok is false when OpenID is not configured.
func Parse(s map[string]string, roots *x509.CertPool) (cfg Config, ok bool, err error) {
	cfg.ConfigURL = strings.TrimSpace(s["CONFIG_URL"])
	if cfg.ConfigURL == "" {
		if len(s) > 0 {
			return Config{}, false, fmt.Errorf("%w: OpenID settings are given but CONFIG_URL is not", ErrConfig)
		}
		return Config{}, false, nil
	}
	u, err := url.Parse(cfg.ConfigURL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return Config{}, false, fmt.Errorf("%w: CONFIG_URL %q: want http(s)://HOST/.well-known/openid-configuration", ErrConfig, cfg.ConfigURL)
	}
	cfg.ClientID, cfg.ClientSecret = strings.TrimSpace(s["CLIENT_ID"]), s["CLIENT_SECRET"]
	if cfg.ClientID == "" {
		return Config{}, false, fmt.Errorf("%w: CLIENT_ID is needed (the audience tokens must name)", ErrConfig)
	}
	cfg.ClaimName = strings.TrimSpace(s["CLAIM_NAME"])
	if cfg.ClaimName == "" {
		cfg.ClaimName = "policy"
	}
	for _, sc := range strings.Split(s["SCOPES"], ",") {
		if sc = strings.TrimSpace(sc); sc != "" {
			cfg.Scopes = append(cfg.Scopes, sc)
		}
	}
	cfg.RedirectURI = strings.TrimSpace(s["REDIRECT_URI"])
	cfg.RolePolicy = splitPolicies(s["ROLE_POLICY"])
	if claim := strings.TrimSpace(s["CLAIM_NAME"]); len(cfg.RolePolicy) > 0 && claim != "" && claim != "policy" {
		return Config{}, false, fmt.Errorf("%w: ROLE_POLICY and CLAIM_NAME cannot both be set (a provider maps either its claim or its role)", ErrConfig)
	}
	if len(cfg.RolePolicy) > 0 {
		cfg.RoleARN = RoleARN(cfg.ClientID)
	}
	cfg.DisplayName = strings.TrimSpace(s["DISPLAY_NAME"])
	cfg.RootCAs, cfg.Leeway = roots, time.Minute
	return cfg, true, nil
}

func splitPolicies(v string) []string {
	var out []string
	for _, p := range strings.Split(v, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// Claims are what a valid token says.
type Claims struct {
	Issuer, Subject string
	Audience        []string
	Expiry          time.Time
	// Policies are the names the policy claim (or ROLE_POLICY) gives.
	Policies []string
	// Nonce is the token's nonce claim (the console's login checks it).
	Nonce string
	// Provider is the name of the provider that validated the token;
	// RoleARN its role ARN when it gave the role policy.
	Provider, RoleARN string
	// Vars are the token's ${jwt:*} policy variables (ClaimVars).
	Vars map[string]string
}

// Provider validates the tokens of one OpenID provider. It is safe for
// concurrent use.
type Provider struct {
	cfg Config
	hc  *http.Client

	mu       sync.Mutex
	issuer   string
	jwksURI  string
	authURL  string // authorization_endpoint
	tokenURL string // token_endpoint
	keys     map[string]crypto.PublicKey
	fetched  time.Time // of the keys
	failedAt time.Time // of the last failed fetch
}

// New returns a Provider; nothing is fetched until the first token.
func New(cfg Config) *Provider {
	if cfg.Leeway == 0 {
		cfg.Leeway = time.Minute
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = &tls.Config{RootCAs: cfg.RootCAs, MinVersion: tls.VersionTLS12}
	return &Provider{cfg: cfg, hc: &http.Client{Transport: tr, Timeout: 10 * time.Second}}
}

// Config is the provider's configuration.
func (p *Provider) Config() Config { return p.cfg }

func (p *Provider) now() time.Time {
	if p.cfg.Now != nil {
		return p.cfg.Now()
	}
	return time.Now()
}

// refetchEvery bounds how often an unknown key id fetches the JWKS.
const refetchEvery = 10 * time.Second

// maxDoc bounds discovery and JWKS documents.
const maxDoc = 1 << 20

func (p *Provider) getJSON(ctx context.Context, u string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := p.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", u, resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxDoc))
	if err != nil {
		return err
	}
	return json.Unmarshal(body, v)
}

// refresh fetches discovery (once) and the JWKS; p.mu is held.
func (p *Provider) refresh(ctx context.Context) error {
	if err := p.discover(ctx); err != nil {
		return err
	}
	var set struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := p.getJSON(ctx, p.jwksURI, &set); err != nil {
		return fmt.Errorf("%w: JWKS: %w", ErrUnavailable, err)
	}
	keys := map[string]crypto.PublicKey{}
	for _, raw := range set.Keys {
		kid, key, err := ParseJWK(raw)
		if err != nil {
			continue // a key of a kind we do not verify with
		}
		keys[kid] = key
	}
	p.keys, p.fetched = keys, p.now()
	return nil
}

// discover reads the discovery document once; p.mu is held.
func (p *Provider) discover(ctx context.Context) error {
	if p.jwksURI != "" {
		return nil
	}
	var d struct {
		Issuer   string `json:"issuer"`
		JWKSURI  string `json:"jwks_uri"`
		AuthURL  string `json:"authorization_endpoint"`
		TokenURL string `json:"token_endpoint"`
	}
	if err := p.getJSON(ctx, p.cfg.ConfigURL, &d); err != nil {
		return fmt.Errorf("%w: discovery: %w", ErrUnavailable, err)
	}
	if d.Issuer == "" || d.JWKSURI == "" {
		return fmt.Errorf("%w: the discovery document names no issuer or jwks_uri", ErrUnavailable)
	}
	p.issuer, p.jwksURI, p.authURL, p.tokenURL = d.Issuer, d.JWKSURI, d.AuthURL, d.TokenURL
	return nil
}

// key returns the verification key kid, fetching the JWKS when it is
// unknown (a rotation), at most every refetchEvery.
func (p *Provider) key(ctx context.Context, kid string) (crypto.PublicKey, string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if k, ok := p.keys[kid]; ok {
		return k, p.issuer, nil
	}
	if p.keys != nil && p.now().Sub(p.fetched) < refetchEvery {
		return nil, p.issuer, fmt.Errorf("%w: unknown signing key", ErrInvalidToken)
	}
	if !p.failedAt.IsZero() && p.now().Sub(p.failedAt) < time.Second {
		return nil, "", fmt.Errorf("%w: (retrying shortly)", ErrUnavailable)
	}
	if err := p.refresh(ctx); err != nil {
		p.failedAt = p.now()
		return nil, "", err
	}
	p.failedAt = time.Time{}
	if k, ok := p.keys[kid]; ok {
		return k, p.issuer, nil
	}
	return nil, p.issuer, fmt.Errorf("%w: unknown signing key", ErrInvalidToken)
}

// maxToken bounds the tokens read.
const maxToken = 16 << 10

// signingMethods are the asymmetric algorithms accepted: never "none",
// never HMAC (a provider's public key must not become a shared secret).
var signingMethods = []string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512"}

// Validate checks a token and returns its claims.
func (p *Provider) Validate(ctx context.Context, token string) (Claims, error) {
	if token == "" || len(token) > maxToken || strings.Count(token, ".") != 2 {
		return Claims{}, fmt.Errorf("%w: not a JWT", ErrInvalidToken)
	}
	var issuer string
	var keyErr error
	mc := jwt.MapClaims{}
	parsed, err := jwt.ParseWithClaims(token, mc, func(t *jwt.Token) (any, error) {
		kid, _ := t.Header["kid"].(string)
		k, iss, err := p.key(ctx, kid)
		issuer, keyErr = iss, err
		return k, err
	}, jwt.WithValidMethods(signingMethods), jwt.WithLeeway(p.cfg.Leeway), jwt.WithExpirationRequired(),
		jwt.WithIssuedAt(), jwt.WithTimeFunc(p.now))
	switch {
	case keyErr != nil && errors.Is(keyErr, ErrUnavailable):
		return Claims{}, keyErr
	case errors.Is(err, jwt.ErrTokenExpired):
		return Claims{}, fmt.Errorf("%w: the token has expired", ErrExpiredToken)
	case err != nil || parsed == nil || !parsed.Valid:
		return Claims{}, fmt.Errorf("%w: %s", ErrInvalidToken, jwtReason(err))
	}
	c := Claims{}
	c.Issuer, _ = mc["iss"].(string)
	c.Subject, _ = mc["sub"].(string)
	if c.Issuer != issuer || issuer == "" {
		return Claims{}, fmt.Errorf("%w: the issuer is not the provider's", ErrInvalidToken)
	}
	if c.Subject == "" || len(c.Subject) > 255 {
		return Claims{}, fmt.Errorf("%w: no subject", ErrInvalidToken)
	}
	aud, _ := mc.GetAudience()
	c.Audience = aud
	azp, _ := mc["azp"].(string)
	clientID, _ := mc["client_id"].(string) // RFC 9068's JWT access tokens (client credentials)
	if !contains(aud, p.cfg.ClientID) && azp != p.cfg.ClientID && clientID != p.cfg.ClientID {
		return Claims{}, fmt.Errorf("%w: the token is for another audience", ErrInvalidToken)
	}
	c.Nonce, _ = mc["nonce"].(string)
	if exp, err := mc.GetExpirationTime(); err == nil && exp != nil {
		c.Expiry = exp.Time
	}
	c.Provider, c.Vars = p.cfg.Name, ClaimVars(mc, c.Subject, c.Issuer)
	if len(p.cfg.RolePolicy) > 0 {
		c.Policies, c.RoleARN = append([]string(nil), p.cfg.RolePolicy...), p.cfg.RoleARN
	} else {
		c.Policies = claimPolicies(mc[p.cfg.ClaimName])
	}
	return c, nil
}

// claimPolicies reads a policy claim: "a,b", or ["a","b"].
func claimPolicies(v any) []string {
	switch x := v.(type) {
	case string:
		return splitPolicies(x)
	case []any:
		var out []string
		for _, e := range x {
			if s, ok := e.(string); ok {
				out = append(out, splitPolicies(s)...)
			}
		}
		return out
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// jwtReason names why golang-jwt refused a token, without the token.
func jwtReason(err error) string {
	for _, e := range []error{jwt.ErrTokenMalformed, jwt.ErrTokenSignatureInvalid, jwt.ErrTokenNotValidYet,
		jwt.ErrTokenUsedBeforeIssued, jwt.ErrTokenUnverifiable, jwt.ErrTokenInvalidClaims, jwt.ErrTokenRequiredClaimMissing} {
		if errors.Is(err, e) {
			return e.Error()
		}
	}
	if err != nil && errors.Is(err, ErrInvalidToken) {
		return "unknown signing key"
	}
	return "refused"
}

// ParseJWK reads one RSA or EC public key of a JWKS.
func ParseJWK(raw []byte) (kid string, key crypto.PublicKey, err error) {
	var k struct {
		Kty, Kid, Use, N, E, Crv, X, Y string
	}
	if err := json.Unmarshal(raw, &k); err != nil {
		return "", nil, err
	}
	if k.Use != "" && k.Use != "sig" {
		return "", nil, errors.New("not a signing key")
	}
	b64 := func(s string) (*big.Int, error) {
		b, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(s, "="))
		if err != nil || len(b) == 0 {
			return nil, errors.New("bad base64url")
		}
		return new(big.Int).SetBytes(b), nil
	}
	switch k.Kty {
	case "RSA":
		n, err := b64(k.N)
		if err != nil {
			return "", nil, err
		}
		e, err := b64(k.E)
		if err != nil || !e.IsInt64() || e.Int64() < 3 || e.Int64() > 1<<31 || n.BitLen() < 2048 || n.BitLen() > 8192 {
			return "", nil, errors.New("unusable RSA key")
		}
		return k.Kid, &rsa.PublicKey{N: n, E: int(e.Int64())}, nil
	case "EC":
		var curve elliptic.Curve
		switch k.Crv {
		case "P-256":
			curve = elliptic.P256()
		case "P-384":
			curve = elliptic.P384()
		case "P-521":
			curve = elliptic.P521()
		default:
			return "", nil, errors.New("unknown curve")
		}
		x, err := b64(k.X)
		if err != nil {
			return "", nil, err
		}
		y, err := b64(k.Y)
		if err != nil {
			return "", nil, err
		}
		if !curve.IsOnCurve(x, y) { //nolint:staticcheck // the point check is what is wanted here
			return "", nil, errors.New("point not on curve")
		}
		return k.Kid, &ecdsa.PublicKey{Curve: curve, X: x, Y: y}, nil
	}
	return "", nil, errors.New("unsupported key type")
}
