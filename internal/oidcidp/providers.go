package oidcidp

import (
	"context"
	"crypto/sha1" //nolint:gosec // MinIO's role ARN id is SHA-1 of the client id: a name, not a secret
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/golang-jwt/jwt/v5"
)

// Several providers, as MinIO names them: every setting may carry a
// suffix _<NAME> (MINIO_IDENTITY_OPENID_CONFIG_URL_OKTA, ..._CLIENT_ID_OKTA)
// naming one more provider beside the unnamed one. A provider either
// maps the policy claim of its tokens to policies or gives every token
// its ROLE_POLICY (never both, as in MinIO); a role-policy provider has
// a role ARN, arn:minio:iam:::role/<base64url(sha1(CLIENT_ID))> (MinIO's,
// so an ARN configured in MinIO's clients keeps working), that
// AssumeRoleWithWebIdentity's RoleArn names. Tokens without such a
// RoleArn go to the claim-based provider whose issuer and client (aud,
// azp or client_id) the token names (MinIO allows only one claim-based
// provider; here several are routed by issuer and audience).

// ErrUnknownRole is a RoleArn no provider has (STS InvalidParameterValue).
var ErrUnknownRole = errors.New("unknown role ARN")

// maxProviders bounds the providers configured.
const maxProviders = 32

// providerName is a provider's _<NAME> suffix.
var providerName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$`)

// EnvProviders reads every provider's settings from environ ("K=V"
// entries, os.Environ()), keyed by provider name ("" for the unnamed
// one). SHARDSTORE_IDENTITY_OPENID_* wins over MINIO_IDENTITY_OPENID_*
// setting by setting. Variables of settings not read here (MinIO's
// CLAIM_PREFIX, VENDOR, ...) are ignored; a malformed name is an error.
func EnvProviders(environ []string) (map[string]map[string]string, error) {
	out := map[string]map[string]string{}
	for _, prefix := range []string{"MINIO_IDENTITY_OPENID_", "SHARDSTORE_IDENTITY_OPENID_"} { // ours last: it wins
		for _, kv := range environ {
			k, v, ok := strings.Cut(kv, "=")
			if !ok || !strings.HasPrefix(k, prefix) || v == "" {
				continue
			}
			setting, name, known := splitSetting(strings.TrimPrefix(k, prefix))
			if !known {
				continue
			}
			if name != "" && (name == "_" || !providerName.MatchString(name[1:])) {
				return nil, fmt.Errorf("%w: %s: a provider's name is 1 to 64 letters, digits, _ or -", ErrConfig, k)
			}
			if out[strings.TrimPrefix(name, "_")] == nil {
				if len(out) >= maxProviders {
					return nil, fmt.Errorf("%w: more than %d OpenID providers", ErrConfig, maxProviders)
				}
				out[strings.TrimPrefix(name, "_")] = map[string]string{}
			}
			out[strings.TrimPrefix(name, "_")][setting] = v
		}
	}
	for name, s := range out {
		if e := strings.ToLower(strings.TrimSpace(s["ENABLE"])); e == "off" || e == "false" {
			delete(out, name)
			continue
		}
		delete(s, "ENABLE")
		if len(s) == 0 {
			delete(out, name)
		}
	}
	return out, nil
}

// splitSetting splits CONFIG_URL_OKTA into CONFIG_URL and _OKTA (the
// name with its separator, so that a bare CONFIG_URL_ is told apart).
func splitSetting(rest string) (setting, name string, ok bool) {
	for _, n := range settingNames {
		if rest == n {
			return n, "", true
		}
		if strings.HasPrefix(rest, n+"_") {
			return n, rest[len(n):], true
		}
	}
	return "", "", false
}

// ParseAll checks every provider's settings (EnvProviders); the result
// is sorted by name, the unnamed provider first. Two role-policy
// providers with the same client id (the same role ARN), two claim-based
// providers of the same discovery URL and client id, or ROLE_POLICY with
// a CLAIM_NAME other than the default are errors.
func ParseAll(settings map[string]map[string]string, roots *x509.CertPool) ([]Config, error) {
	names := make([]string, 0, len(settings))
	for n := range settings {
		names = append(names, n)
	}
	sort.Strings(names)
	var out []Config
	roles, clients := map[string]string{}, map[string]string{}
	for _, name := range names {
		label := "the unnamed provider"
		if name != "" {
			label = "provider " + name
		}
		s := settings[name]
		cfg, ok, err := Parse(s, roots)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", label, err)
		}
		if !ok {
			continue
		}
		cfg.Name = name
		if cfg.DisplayName == "" {
			cfg.DisplayName = name
		}
		if cfg.RoleARN != "" {
			if other, dup := roles[cfg.RoleARN]; dup {
				return nil, fmt.Errorf("%w: %s and %s have the same CLIENT_ID, so the same role ARN", ErrConfig, other, label)
			}
			roles[cfg.RoleARN] = label
		} else {
			key := cfg.ConfigURL + "\x00" + cfg.ClientID
			if other, dup := clients[key]; dup {
				return nil, fmt.Errorf("%w: %s and %s are the same provider and client", ErrConfig, other, label)
			}
			clients[key] = label
		}
		out = append(out, cfg)
	}
	return out, nil
}

// RoleARN is the role ARN of a role-policy provider with client id
// clientID, as MinIO makes it.
func RoleARN(clientID string) string {
	sum := sha1.Sum([]byte(clientID)) //nolint:gosec // a name (MinIO's), not a secret
	return "arn:minio:iam:::role/" + base64.RawURLEncoding.EncodeToString(sum[:])
}

// roleID is the resource of a MinIO role ARN (arn:minio:iam:REGION::role/ID),
// ok false when arn is not one.
func roleID(arn string) (string, bool) {
	p := strings.Split(arn, ":")
	if len(p) != 6 || p[0] != "arn" || p[1] != "minio" || p[2] != "iam" || p[4] != "" || !strings.HasPrefix(p[5], "role/") {
		return "", false
	}
	return strings.TrimPrefix(p[5], "role/"), true
}

// Set is the configured providers. It is safe for concurrent use.
type Set struct {
	list []*Provider
}

// NewSet makes the providers of cfgs (ParseAll); nothing is fetched yet.
func NewSet(cfgs []Config) *Set {
	s := &Set{}
	for _, c := range cfgs {
		s.list = append(s.list, New(c))
	}
	return s
}

// Providers are the providers, in configuration order.
func (s *Set) Providers() []*Provider { return s.list }

// Provider is the provider named name, nil when there is none.
func (s *Set) Provider(name string) *Provider {
	for _, p := range s.list {
		if p.cfg.Name == name {
			return p
		}
	}
	return nil
}

// Validate picks the provider of a token and validates it there: the
// role-policy provider roleARN names, or else the claim-based provider
// whose issuer and client the token names. An arn:minio:iam role ARN no
// provider has is ErrUnknownRole; so is any RoleArn when no provider is
// claim-based (MinIO's rule; with a claim-based provider another
// RoleArn, as AWS SDKs insist on sending, is ignored).
func (s *Set) Validate(ctx context.Context, token, roleARN string) (Claims, error) {
	if id, ok := roleID(roleARN); ok {
		for _, p := range s.list {
			if p.cfg.RoleARN != "" && strings.TrimPrefix(p.cfg.RoleARN, "arn:minio:iam:::role/") == id {
				return p.Validate(ctx, token)
			}
		}
		return Claims{}, fmt.Errorf("%w: %s is not the role of any OpenID provider of this server", ErrUnknownRole, quoteARN(roleARN))
	}
	var claimBased []*Provider
	for _, p := range s.list {
		if len(p.cfg.RolePolicy) == 0 {
			claimBased = append(claimBased, p)
		}
	}
	switch {
	case len(claimBased) == 0 && roleARN != "":
		return Claims{}, fmt.Errorf("%w: %s is not the role of any OpenID provider of this server", ErrUnknownRole, quoteARN(roleARN))
	case len(claimBased) == 0:
		return Claims{}, fmt.Errorf("%w: every OpenID provider of this server has a role policy: name its role ARN in RoleArn", ErrUnknownRole)
	case len(claimBased) == 1:
		return claimBased[0].Validate(ctx, token)
	}
	iss, aud := peek(token)
	if iss == "" {
		return Claims{}, fmt.Errorf("%w: not a JWT naming an issuer", ErrInvalidToken)
	}
	// Providers already discovered first (no network), so that one that
	// is down and never answered does not delay the others' tokens.
	var unavailable error
	for _, p := range claimBased {
		if issuer := p.knownIssuer(); issuer != "" && issuer == iss && contains(aud, p.cfg.ClientID) {
			return p.Validate(ctx, token)
		}
	}
	for _, p := range claimBased {
		if p.knownIssuer() != "" || !contains(aud, p.cfg.ClientID) {
			continue
		}
		issuer, err := p.Issuer(ctx)
		if err != nil {
			unavailable = err
			continue
		}
		if issuer == iss {
			return p.Validate(ctx, token)
		}
	}
	if unavailable != nil {
		return Claims{}, unavailable
	}
	return Claims{}, fmt.Errorf("%w: no OpenID provider of this server has the token's issuer and client", ErrInvalidToken)
}

// quoteARN quotes a caller's RoleArn for an error, shortened.
func quoteARN(arn string) string {
	if len(arn) > 200 {
		arn = arn[:200] + "..."
	}
	return fmt.Sprintf("%q", arn)
}

// peek reads a token's issuer and the clients it names (aud, azp,
// client_id) without checking anything: only to choose the provider that
// then validates it.
func peek(token string) (iss string, clients []string) {
	if len(token) > maxToken {
		return "", nil
	}
	mc := jwt.MapClaims{}
	if _, _, err := jwt.NewParser().ParseUnverified(token, mc); err != nil {
		return "", nil
	}
	iss, _ = mc["iss"].(string)
	clients, _ = mc.GetAudience()
	for _, k := range []string{"azp", "client_id"} {
		if v, ok := mc[k].(string); ok {
			clients = append(clients, v)
		}
	}
	return iss, clients
}

// knownIssuer is the issuer when discovery has been read, else "".
func (p *Provider) knownIssuer() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.issuer
}

// Issuer is the provider's issuer from its discovery document (fetched
// once).
func (p *Provider) Issuer(ctx context.Context) (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.discover(ctx); err != nil {
		return "", err
	}
	return p.issuer, nil
}

// Policy variables: a session of a token may use ${jwt:<claim>} for the
// token's string claims. Names are 1 to 64 of [A-Za-z0-9_.-] (compared
// lower-cased, as policy variables are; two claims differing only in case
// are both left out), values at most maxVarValue bytes of UTF-8 without
// control characters; claims of the token's own mechanics (nonce,
// at_hash, ...) are left out, sub and iss are always the validated ones.
// A value is substituted as literal text (internal/policy): a claim
// holding *, ? or ${...} cannot widen a policy.

const (
	maxVars     = 24
	maxVarValue = 256
)

var varName = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)

var mechanicsClaims = map[string]bool{"nonce": true, "at_hash": true, "c_hash": true, "s_hash": true, "sid": true, "jti": true, "exp": true, "iat": true, "nbf": true, "auth_time": true}

// ClaimVars are the policy variables of a token's claims (without the
// "jwt:" prefix), sub and iss included.
func ClaimVars(mc map[string]any, sub, iss string) map[string]string {
	count := map[string]int{}
	for k := range mc {
		count[strings.ToLower(k)]++
	}
	names := make([]string, 0, len(mc))
	for k := range mc {
		names = append(names, k)
	}
	sort.Strings(names)
	out := map[string]string{}
	for _, k := range names {
		lk := strings.ToLower(k)
		if len(out) >= maxVars-2 {
			break
		}
		if count[lk] != 1 || !varName.MatchString(k) || mechanicsClaims[lk] || lk == "sub" || lk == "iss" {
			continue
		}
		var v string
		switch x := mc[k].(type) {
		case string:
			v = x
		case []any: // a single-valued array (aud, groups) reads as its value
			if len(x) != 1 {
				continue
			}
			s, ok := x[0].(string)
			if !ok {
				continue
			}
			v = s
		default:
			continue
		}
		if v == "" || len(v) > maxVarValue || !utf8.ValidString(v) || strings.ContainsFunc(v, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
			continue
		}
		out[lk] = v
	}
	out["sub"], out["iss"] = sub, iss
	return out
}
