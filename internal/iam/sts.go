package iam

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/shardstore/shardstore/internal/auth"
	"github.com/shardstore/shardstore/internal/policy"
)

// Temporary credentials (STS AssumeRole). A session token is the sealed
// claims below: the server keeps no session state, sessions survive a
// restart (the key is derived from the same material as the secrets'),
// and a session stops working when it expires, when its user is disabled
// or removed, or when the key material changes.

// sessionClaims are what a session token holds.
type sessionClaims struct {
	AccessKey string    `json:"ak"`
	SecretKey string    `json:"sk"`
	User      string    `json:"u,omitempty"` // "" for a root session
	Root      bool      `json:"r,omitempty"`
	Expiry    time.Time `json:"exp"`
	// Gen is the user's generation (its creation time): a user removed
	// and created again under the same name does not inherit sessions.
	Gen int64 `json:"g,omitempty"`
	// Key is the access key the session was asked with, when not the
	// user's own: removing or disabling it ends the session.
	Key string `json:"k,omitempty"`
	// RootFP fingerprints the root credentials of a root session, which
	// ends when they change.
	RootFP string `json:"rf,omitempty"`
	// Bounds are the narrowing policies: the calling access key's own
	// policy and the session policy, each of which must allow.
	Bounds []string `json:"b,omitempty"`
	// LDAPUser and LDAPDN name a directory user's session (ldap.go):
	// its permissions are its DN's and groups' mapped policies, decided
	// at each use.
	LDAPUser string `json:"lu,omitempty"`
	LDAPDN   string `json:"ld,omitempty"`
	// OIDCSub, OIDCIss and OIDCPolicies name an OpenID session
	// (oidc.go): the token's subject and issuer, and the policies its
	// claim named.
	OIDCSub      string   `json:"os,omitempty"`
	OIDCIss      string   `json:"oi,omitempty"`
	OIDCPolicies []string `json:"op,omitempty"`
	// OIDCVars are the token's other string claims, for ${jwt:*}.
	OIDCVars map[string]string `json:"ov,omitempty"`
}

const (
	tokenPrefix = "SS1."
	tokenAAD    = "shardstore session token"
	// maxToken bounds what is decoded from a request.
	maxToken = 16 << 10
)

// Session durations AssumeRole accepts, as STS's.
const (
	MinSessionDuration     = 15 * time.Minute
	MaxSessionDuration     = 12 * time.Hour
	DefaultSessionDuration = time.Hour
)

// sessionCache holds decoded tokens (with compiled bounds) so a request
// neither decrypts nor parses JSON; it is emptied on every store change,
// which is also when a session's user may have changed.
type sessionCache struct {
	mu sync.Mutex
	m  map[string]*session
}

type session struct {
	claims sessionClaims
	bounds []*policy.Policy
}

const maxCachedSessions = 4096

func (c *sessionCache) get(token string) (*session, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s, ok := c.m[token]
	return s, ok
}

func (c *sessionCache) put(token string, s *session) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= maxCachedSessions {
		c.m = map[string]*session{}
	}
	c.m[token] = s
}

func (c *sessionCache) reset() {
	c.mu.Lock()
	c.m = nil
	c.mu.Unlock()
}

func (s *Store) decodeToken(token string) (*session, error) {
	if ses, ok := s.sessions.get(token); ok {
		return ses, nil
	}
	body, ok := strings.CutPrefix(token, tokenPrefix)
	if !ok || len(token) > maxToken {
		return nil, auth.InvalidToken()
	}
	plain, err := unseal(s.keys.tokens, body, tokenAAD)
	if err != nil {
		return nil, auth.InvalidToken()
	}
	ses := &session{}
	if json.Unmarshal(plain, &ses.claims) != nil {
		return nil, auth.InvalidToken()
	}
	for _, b := range ses.claims.Bounds {
		p, err := policy.Parse([]byte(b), policy.ParseOptions{Identity: true})
		if err != nil {
			p = denyAll
		}
		ses.bounds = append(ses.bounds, p)
	}
	s.sessions.put(token, ses)
	return ses, nil
}

// LookupSession implements auth.IdentityStore.
func (s *Store) LookupSession(accessKey, token string) (auth.Identity, error) {
	ses, err := s.decodeToken(token)
	if err != nil {
		return auth.Identity{}, err
	}
	c := ses.claims
	if c.AccessKey != accessKey {
		return auth.Identity{}, auth.InvalidToken()
	}
	if !s.now().Before(c.Expiry) {
		return auth.Identity{}, auth.ExpiredToken()
	}
	var base *permissions
	var refusal error // answered once the signature has matched
	user := c.User
	if c.Root {
		if c.RootFP != s.rootFingerprint() {
			return auth.Identity{}, auth.InvalidToken()
		}
		base, user = &permissions{All: true}, s.opts.Root.AccessKey
	} else if c.LDAPDN != "" {
		base, refusal = s.ldapSession(c)
		user = c.LDAPDN
	} else if c.OIDCSub != "" {
		base, user = s.oidcPermissions(c), c.OIDCSub
	} else {
		snap := s.snap.Load()
		u, ok := snap.st.Users[c.User]
		cred := snap.creds[c.User]
		if !ok || cred == nil || u.Created.UnixNano() != c.Gen {
			return auth.Identity{}, auth.InvalidToken()
		}
		if u.Status == StatusDisabled {
			refusal = auth.InvalidAccessKey("The user of this session is disabled.")
		}
		if c.Key != "" {
			k := snap.creds[c.Key]
			switch {
			case k == nil || k.parent != c.User:
				return auth.Identity{}, auth.InvalidToken()
			case k.disabled != "" && refusal == nil:
				refusal = auth.InvalidAccessKey("The access key this session was issued for is disabled.")
			}
		}
		base = cred.id.Permissions.(*permissions)
	}
	p := base
	for _, b := range ses.bounds {
		p = p.Narrowed(b)
	}
	id := s.identity(user, c.SecretKey, p)
	switch {
	case c.LDAPDN != "":
		id.DisplayName, id.Claims = c.LDAPUser, ldapClaims(c.LDAPUser, c.LDAPDN)
	case c.OIDCSub != "":
		id.Claims = oidcClaims(c)
	}
	id.AccessKey, id.Session, id.Refusal = accessKey, true, refusal
	return id, nil
}

// rootFingerprint identifies the root credentials in root sessions.
func (s *Store) rootFingerprint() string {
	sum := sha256.Sum256([]byte(s.opts.Root.AccessKey + "\x00" + s.opts.Root.SecretKey))
	return hex.EncodeToString(sum[:8])
}

// STSError is an AssumeRole failure with STS's error code.
type STSError struct {
	Code    string // AccessDenied, ValidationError, MalformedPolicyDocument, PackedPolicyTooLarge
	Message string
}

func (e *STSError) Error() string { return e.Code + ": " + e.Message }

// AssumeRoleRequest is what AssumeRole is asked.
type AssumeRoleRequest struct {
	Duration time.Duration // 0: DefaultSessionDuration
	Policy   string        // a session policy, optional
}

// AssumeRole issues temporary credentials for caller: root, a user, or
// an access key of a user. The session has the caller's permissions,
// narrowed by the access key's own policy and the session policy, until
// it expires (never later than the calling access key does).
func (s *Store) AssumeRole(_ context.Context, caller auth.Identity, req AssumeRoleRequest) (Credentials, error) {
	c := sessionClaims{AccessKey: newAccessKey("SSTS"), SecretKey: newSecret()}
	d := req.Duration
	if d == 0 {
		d = DefaultSessionDuration
	}
	if d < MinSessionDuration || d > MaxSessionDuration {
		return Credentials{}, &STSError{Code: "ValidationError", Message: fmt.Sprintf(
			"1 validation error detected: Value '%d' at 'durationSeconds' failed to satisfy constraint: Member must have value between %d and %d",
			int64(d/time.Second), int64(MinSessionDuration/time.Second), int64(MaxSessionDuration/time.Second))}
	}
	c.Expiry = s.now().Add(d).UTC().Truncate(time.Second)
	switch {
	case caller.Session:
		return Credentials{}, &STSError{Code: "AccessDenied", Message: "Temporary credentials cannot assume a role; use long-term credentials."}
	case caller.Root:
		c.Root, c.RootFP = true, s.rootFingerprint()
	case caller.Permissions == nil:
		return Credentials{}, &STSError{Code: "AccessDenied", Message: "Only the root user and users of the identity store may assume a role."}
	default:
		// The narrowing policy and expiry come from the same snapshot the
		// caller's key is checked against: a key removed since the request
		// was verified issues nothing.
		snap := s.snap.Load()
		u, ok := snap.st.Users[caller.User]
		if !ok || u.Status == StatusDisabled {
			return Credentials{}, &STSError{Code: "AccessDenied", Message: "The user is unknown or disabled."}
		}
		c.User, c.Gen = caller.User, u.Created.UnixNano()
		if caller.AccessKey != caller.User {
			k, ok := snap.st.AccessKeys[caller.AccessKey]
			if !ok || k.Parent != caller.User || k.Status == StatusDisabled {
				return Credentials{}, &STSError{Code: "AccessDenied", Message: "The access key is unknown or disabled."}
			}
			c.Key = caller.AccessKey
			if k.Policy != "" {
				c.Bounds = append(c.Bounds, k.Policy)
			}
			if k.Expiry != nil && k.Expiry.Before(c.Expiry) {
				c.Expiry = k.Expiry.UTC().Truncate(time.Second)
			}
		}
	}
	if err := c.boundBy(req.Policy); err != nil {
		return Credentials{}, err
	}
	token, err := s.sessionToken(c)
	if err != nil {
		return Credentials{}, err
	}
	who := caller.User
	if caller.Root {
		who = "root"
	}
	// Sessions are logged, not kept in the admin API's audit ring: any
	// user may ask for many, which must not push administrative changes
	// out of it.
	s.logOnly(AuditRecord{Actor: who, Action: "sts.assumerole", Target: c.AccessKey,
		Detail: "via " + caller.AccessKey + ", expires " + c.Expiry.Format(time.RFC3339)})
	return c.credentials(token), nil
}

// boundBy adds a session policy (none when empty) to the session's
// bounds, refusing one the policy language does not accept with the STS
// error AWS gives (MalformedPolicyDocument, PackedPolicyTooLarge).
func (c *sessionClaims) boundBy(policy string) error {
	if policy == "" {
		return nil
	}
	if err := checkPolicy(policy, maxInlinePolicy); err != nil {
		if pe, ok := err.(*PolicyError); ok { //nolint:errorlint // checkPolicy returns it unwrapped
			code := "MalformedPolicyDocument"
			if strings.HasPrefix(pe.Message, "Policy document is") {
				code = "PackedPolicyTooLarge"
			}
			return &STSError{Code: code, Message: pe.Message}
		}
		return err
	}
	c.Bounds = append(c.Bounds, policy)
	return nil
}

// sessionToken seals the session's claims into its token.
func (s *Store) sessionToken(c sessionClaims) (string, error) {
	plain, err := json.Marshal(c)
	if err != nil {
		return "", err
	}
	return tokenPrefix + seal(s.keys.tokens, plain, tokenAAD), nil
}

// credentials are the session's access key, secret and token.
func (c sessionClaims) credentials(token string) Credentials {
	exp := c.Expiry
	return Credentials{AccessKey: c.AccessKey, SecretKey: c.SecretKey, SessionToken: token, Expiration: &exp}
}
