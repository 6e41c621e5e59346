package iam

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/shardstore/shardstore/internal/auth"
	"github.com/shardstore/shardstore/internal/ldapidp"
)

// LDAP identities. A directory user has no record here: what it may do
// is the policies mapped to its DN and to its groups' DNs
// (state.LDAPPolicies, managed by AttachLDAPPolicies and kept with the
// rest of the document, so every node sees the same mappings). Its
// sessions (AssumeRoleWithLDAP) and access keys name the user and its
// DN; every use asks the directory again (Options.Directory, through the
// cache below) whether the user still exists and passes the filter, and
// which groups it is in now, at most Options.DirectoryRecheck old. A
// user removed or disabled in the directory therefore loses its sessions
// and access keys within that interval, and a mapping changed here
// applies at once.

// Directory is the LDAP directory as the store asks it
// (ldapidp.Directory).
type Directory interface {
	Lookup(ctx context.Context, username string) (ldapidp.Identity, error)
}

// LDAPMapping is the policies mapped to one DN (a user's or a group's).
type LDAPMapping struct {
	DN       string   `json:"dn"`
	Policies []string `json:"policies"`
}

// unavailableRecheck is how long a failed directory check is reused
// (shorter than a success, so an outage ends as soon as it is over).
const unavailableRecheck = 5 * time.Second

// maxDirCache bounds the cached directory answers.
const maxDirCache = 10000

// dirCache holds the directory's recent answers by user name, and one
// lookup at a time per name.
type dirCache struct {
	mu       sync.Mutex
	m        map[string]dirAnswer
	byDN     map[string]string // normalized DN -> user name last seen for it
	inflight map[string]chan struct{}
}

type dirAnswer struct {
	id  ldapidp.Identity
	err error
	at  time.Time
}

func (c *dirCache) putLocked(name string, a dirAnswer) {
	if c.m == nil || len(c.m) >= maxDirCache {
		c.m, c.byDN = map[string]dirAnswer{}, map[string]string{}
	}
	c.m[name] = a
	if a.err == nil {
		c.byDN[a.id.DN] = name
	}
}

// directoryTimeout bounds a check made for a request.
const directoryTimeout = 10 * time.Second

// checkDirectory returns the directory's answer about name, at most
// the recheck interval old (unavailableRecheck for a failure).
func (s *Store) checkDirectory(name string) (ldapidp.Identity, error) {
	if s.opts.Directory == nil {
		return ldapidp.Identity{}, fmt.Errorf("%w: LDAP sign-in is not configured on this server", ldapidp.ErrUnavailable)
	}
	c := &s.dir
	for {
		c.mu.Lock()
		now := s.now()
		if a, ok := c.m[name]; ok {
			ttl := s.opts.DirectoryRecheck
			if errors.Is(a.err, ldapidp.ErrUnavailable) {
				ttl = min(ttl, unavailableRecheck)
			}
			if now.Sub(a.at) < ttl {
				c.mu.Unlock()
				return a.id, a.err
			}
		}
		wait, busy := c.inflight[name]
		if !busy {
			if c.inflight == nil {
				c.inflight = map[string]chan struct{}{}
			}
			done := make(chan struct{})
			c.inflight[name] = done
			c.mu.Unlock()
			ctx, cancel := context.WithTimeout(context.Background(), directoryTimeout)
			id, err := s.opts.Directory.Lookup(ctx, name)
			cancel()
			c.mu.Lock()
			c.putLocked(name, dirAnswer{id: id, err: err, at: s.now()})
			delete(c.inflight, name)
			close(done)
			c.mu.Unlock()
			return id, err
		}
		c.mu.Unlock()
		if s.opts.DirectoryRecheck == 0 {
			// Every use asks: wait for the lookup under way, then ask
			// again rather than take its answer as fresh.
			<-wait
			c.mu.Lock()
			a, ok := c.m[name]
			c.mu.Unlock()
			if ok {
				return a.id, a.err
			}
			continue
		}
		<-wait
	}
}

// noteDirectory records a fresh answer (a sign-in just made).
func (s *Store) noteDirectory(id ldapidp.Identity) {
	s.dir.mu.Lock()
	s.dir.putLocked(id.Username, dirAnswer{id: id, at: s.now()})
	s.dir.mu.Unlock()
}

// ldapPermissions are the policies mapped to dn and groups in snap;
// mapped says whether any mapping applied.
func ldapPermissions(snap *snapshot, dn string, groups []string) (p *permissions, mapped bool) {
	p = &permissions{}
	for _, who := range append([]string{dn}, groups...) {
		for _, pn := range snap.st.LDAPPolicies[who] {
			p.Add(snap.policies[pn])
			mapped = true
		}
	}
	return p, mapped
}

// ldapRefusal checks a directory user for a credential's use: its
// permissions now, or why it may not be used.
func (s *Store) ldapRefusal(snap *snapshot, username, dn string) (*permissions, error) {
	id, err := s.checkDirectory(username)
	switch {
	case errors.Is(err, ldapidp.ErrInvalidCredentials):
		return nil, auth.InvalidAccessKey("The directory (LDAP) no longer has this credential's user, or the user is disabled.")
	case err != nil:
		return nil, auth.InvalidAccessKey("The directory (LDAP) could not be asked about this credential's user; try again later.")
	case id.DN != dn:
		return nil, auth.InvalidAccessKey("The directory (LDAP) user of this credential is another entry now.")
	}
	p, _ := ldapPermissions(snap, dn, id.Groups)
	return p, nil
}

// ldapIdentity is the identity of a directory user's credential.
func (s *Store) ldapIdentity(username, dn, secret string, p *permissions) auth.Identity {
	id := s.identity(dn, secret, p)
	id.DisplayName, id.Claims = username, ldapClaims(username, dn)
	return id
}

// ldapClaims are a directory user's policy variables, as MinIO names
// them: ${ldap:username} and ${ldap:user} (the DN).
func ldapClaims(username, dn string) map[string]string {
	return map[string]string{"ldap:username": username, "ldap:user": dn}
}

// LDAPRequest asks for a directory user's session: the identity
// ldapidp.Directory.Authenticate returned.
type LDAPRequest struct {
	Identity ldapidp.Identity
	Duration time.Duration // 0: DefaultSessionDuration
	Policy   string        // a session policy, optional
}

// AssumeRoleWithLDAP issues temporary credentials for a directory user
// who has just signed in: the policies mapped to its DN and groups,
// narrowed by the session policy. A user with no mapped policy gets
// none (AccessDenied), as MinIO answers.
func (s *Store) AssumeRoleWithLDAP(_ context.Context, req LDAPRequest) (Credentials, error) {
	d := req.Duration
	if d == 0 {
		d = DefaultSessionDuration
	}
	if d < MinSessionDuration || d > MaxSessionDuration {
		return Credentials{}, &STSError{Code: "ValidationError", Message: fmt.Sprintf(
			"1 validation error detected: Value '%d' at 'durationSeconds' failed to satisfy constraint: Member must have value between %d and %d",
			int64(d/time.Second), int64(MinSessionDuration/time.Second), int64(MaxSessionDuration/time.Second))}
	}
	id := req.Identity
	if id.DN == "" || id.Username == "" {
		return Credentials{}, &STSError{Code: "AccessDenied", Message: "No directory user."}
	}
	if _, mapped := ldapPermissions(s.snap.Load(), id.DN, id.Groups); !mapped {
		s.logOnly(AuditRecord{Actor: "ldap:" + id.Username, Action: "sts.assumerolewithldapidentity", Target: id.DN,
			Error: "no policy is mapped to the user or its groups"})
		return Credentials{}, &STSError{Code: "AccessDenied", Message: "No policy is mapped to this LDAP user or its groups (shardstore admin idp ldap policy attach)."}
	}
	c := sessionClaims{AccessKey: newAccessKey("SSTS"), SecretKey: newSecret(), LDAPUser: id.Username, LDAPDN: id.DN}
	c.Expiry = s.now().Add(d).UTC().Truncate(time.Second)
	if err := c.boundBy(req.Policy); err != nil {
		return Credentials{}, err
	}
	token, err := s.sessionToken(c)
	if err != nil {
		return Credentials{}, err
	}
	s.noteDirectory(id)
	s.logOnly(AuditRecord{Actor: "ldap:" + id.Username, Action: "sts.assumerolewithldapidentity", Target: c.AccessKey,
		Detail: "dn " + id.DN + ", expires " + c.Expiry.Format(time.RFC3339)})
	return c.credentials(token), nil
}

// ldapSession is LookupSession for a directory user's session.
func (s *Store) ldapSession(c sessionClaims) (base *permissions, refusal error) {
	p, err := s.ldapRefusal(s.snap.Load(), c.LDAPUser, c.LDAPDN)
	if err != nil {
		return &permissions{}, err
	}
	return p, nil
}

// AttachLDAPPolicies maps policies to a DN (a directory user's or
// group's), or removes the mapping (attach false), as `mc idp ldap
// policy attach|detach` does.
func (s *Store) AttachLDAPPolicies(ctx context.Context, actor, dn string, policies []string, attach bool) error {
	norm, err := ldapidp.NormalizeDN(dn)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if len(policies) == 0 {
		return fmt.Errorf("%w: name at least one policy", ErrInvalid)
	}
	action := "ldap.policy.attach"
	if !attach {
		action = "ldap.policy.detach"
	}
	rec := AuditRecord{Actor: actor, Action: action, Target: norm, Detail: strings.Join(policies, ",")}
	return s.update(ctx, rec, func(st *state) error {
		if st.LDAPPolicies == nil {
			st.LDAPPolicies = map[string][]string{}
		}
		list := st.LDAPPolicies[norm]
		for _, p := range policies {
			_, builtin := builtinPolicies[p]
			_, managed := st.Policies[p]
			switch {
			case attach && !managed && !builtin:
				return fmt.Errorf("policy %q: %w", p, ErrNotFound)
			case attach && !slices.Contains(list, p):
				list = append(list, p)
			case !attach && !slices.Contains(list, p):
				return fmt.Errorf("%w: policy %q is not mapped to %s", ErrNotFound, p, norm)
			case !attach:
				list = remove(list, p)
			}
		}
		if len(list) == 0 {
			delete(st.LDAPPolicies, norm)
			return nil
		}
		sort.Strings(list)
		st.LDAPPolicies[norm] = list
		return nil
	})
}

// LDAPPolicies lists the DN-to-policy mappings: all of them, those of
// one DN, or those that name one policy.
func (s *Store) LDAPPolicies(dn, policyName string) ([]LDAPMapping, error) {
	if dn != "" {
		norm, err := ldapidp.NormalizeDN(dn)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
		}
		dn = norm
	}
	st := s.snap.Load().st
	out := []LDAPMapping{}
	for _, d := range sortedKeys(st.LDAPPolicies) {
		ps := st.LDAPPolicies[d]
		if (dn == "" || d == dn) && (policyName == "" || slices.Contains(ps, policyName)) {
			out = append(out, LDAPMapping{DN: d, Policies: append([]string(nil), ps...)})
		}
	}
	return out, nil
}

// ldapMappedTo lists the DNs a policy is mapped to.
func ldapMappedTo(st *state, name string) []string {
	var out []string
	for _, d := range sortedKeys(st.LDAPPolicies) {
		if slices.Contains(st.LDAPPolicies[d], name) {
			out = append(out, d)
		}
	}
	return out
}

// ldapKeyOwner resolves the parent of a new access key that is not a
// user of the store: a directory user's DN, whose name is username or,
// when that is empty, the name last seen signing in with that DN. The
// directory must confirm that the name is that DN now.
func (s *Store) ldapKeyOwner(parent, username string) (dn, name string, err error) {
	if s.opts.Directory == nil {
		return "", "", nil
	}
	dn, err = ldapidp.NormalizeDN(parent)
	if err != nil || !strings.Contains(parent, "=") {
		return "", "", nil // not a DN: the user is unknown
	}
	name = username
	if name == "" {
		s.dir.mu.Lock()
		name = s.dir.byDN[dn]
		s.dir.mu.Unlock()
	}
	if name == "" {
		return "", "", fmt.Errorf("%w: name the directory user (ldapUsername) whose DN is %s", ErrInvalid, dn)
	}
	id, err := s.checkDirectory(name)
	switch {
	case errors.Is(err, ldapidp.ErrInvalidCredentials):
		return "", "", fmt.Errorf("directory user %q: %w", name, ErrNotFound)
	case err != nil:
		return "", "", fmt.Errorf("directory user %q: %w", name, err)
	case id.DN != dn:
		return "", "", fmt.Errorf("%w: the directory user %q is %s, not %s", ErrInvalid, name, id.DN, dn)
	}
	return dn, name, nil
}
