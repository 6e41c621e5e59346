package iam

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// OpenID Connect sessions (STS AssumeRoleWithWebIdentity). The token's
// policy claim (or the provider's role policy) names managed or built-in
// policies; the session records the names, the subject and the issuer,
// and is decided at each use with the policies of that moment, narrowed
// by the session policy. A session lives at most as long as asked
// (DurationSeconds), like AWS's; the identity token is checked once,
// when the session is issued.

// WebIdentityRequest asks for a session of a validated OpenID token.
type WebIdentityRequest struct {
	Issuer, Subject string
	Policies        []string      // from the token's claim
	Duration        time.Duration // 0: DefaultSessionDuration
	Policy          string        // a session policy, optional
	// Vars are the token's ${jwt:*} policy variables (oidcidp.ClaimVars);
	// RoleARN the provider's role when Policies is its role policy.
	Vars    map[string]string
	RoleARN string
}

// maxClaimPolicies bounds the policy names a token may carry.
const maxClaimPolicies = 64

// AssumeRoleWithWebIdentity issues temporary credentials for a token
// package sts has validated. Names of policies that do not exist are
// ignored; a token naming none that does gets AccessDenied.
func (s *Store) AssumeRoleWithWebIdentity(_ context.Context, req WebIdentityRequest) (Credentials, error) {
	d := req.Duration
	if d == 0 {
		d = DefaultSessionDuration
	}
	if d < MinSessionDuration || d > MaxSessionDuration {
		return Credentials{}, &STSError{Code: "ValidationError", Message: fmt.Sprintf(
			"1 validation error detected: Value '%d' at 'durationSeconds' failed to satisfy constraint: Member must have value between %d and %d",
			int64(d/time.Second), int64(MinSessionDuration/time.Second), int64(MaxSessionDuration/time.Second))}
	}
	if req.Subject == "" || req.Issuer == "" {
		return Credentials{}, &STSError{Code: "InvalidIdentityToken", Message: "The token names no subject or issuer."}
	}
	snap := s.snap.Load()
	var known []string
	for _, p := range req.Policies {
		if _, ok := snap.policies[p]; ok && len(known) < maxClaimPolicies {
			known = append(known, p)
		}
	}
	if len(known) == 0 {
		s.logOnly(AuditRecord{Actor: "oidc:" + req.Subject, Action: "sts.assumerolewithwebidentity", Target: req.Issuer,
			Error: "the token names no existing policy"})
		return Credentials{}, &STSError{Code: "AccessDenied", Message: "The token's policy claim names no policy of this server."}
	}
	c := sessionClaims{AccessKey: newAccessKey("SSTS"), SecretKey: newSecret(), OIDCSub: req.Subject, OIDCIss: req.Issuer, OIDCPolicies: known, OIDCVars: jwtVars(req)}
	c.Expiry = s.now().Add(d).UTC().Truncate(time.Second)
	if err := c.boundBy(req.Policy); err != nil {
		return Credentials{}, err
	}
	token, err := s.sessionToken(c)
	if err != nil {
		return Credentials{}, err
	}
	s.logOnly(AuditRecord{Actor: "oidc:" + req.Subject, Action: "sts.assumerolewithwebidentity", Target: c.AccessKey,
		Detail: "issuer " + req.Issuer + roleDetail(req.RoleARN) + ", policies " + strings.Join(known, ",") + ", expires " + c.Expiry.Format(time.RFC3339)})
	return c.credentials(token), nil
}

// oidcPermissions are an OpenID session's policies now.
func (s *Store) oidcPermissions(c sessionClaims) *permissions {
	snap := s.snap.Load()
	p := &permissions{}
	for _, name := range c.OIDCPolicies {
		p.Add(snap.policies[name]) // a policy removed since grants nothing
	}
	return p
}

func roleDetail(arn string) string {
	if arn == "" {
		return ""
	}
	return ", role " + arn
}

// jwtVars are the variables a session keeps besides sub and iss (which
// it holds already), bounded as oidcidp.ClaimVars bounds them.
func jwtVars(req WebIdentityRequest) map[string]string {
	var out map[string]string
	for k, v := range req.Vars {
		if k == "sub" || k == "iss" || len(out) >= maxJWTVars || len(k) > 64 || len(v) > 256 {
			continue
		}
		if out == nil {
			out = map[string]string{}
		}
		out[k] = v
	}
	return out
}

// maxJWTVars bounds the claims a session token carries.
const maxJWTVars = 24

// oidcClaims are an OpenID session's policy variables: ${jwt:sub},
// ${jwt:iss} and the token's other string claims.
func oidcClaims(c sessionClaims) map[string]string {
	m := make(map[string]string, len(c.OIDCVars)+2)
	for k, v := range c.OIDCVars {
		m["jwt:"+k] = v
	}
	m["jwt:sub"], m["jwt:iss"] = c.OIDCSub, c.OIDCIss
	return m
}
