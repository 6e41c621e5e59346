package iam

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shardstore/shardstore/internal/auth"
	"github.com/shardstore/shardstore/internal/engine"
	"github.com/shardstore/shardstore/internal/policy"
)

// Backend keeps the store's document durably (engine.Engine does).
type Backend interface {
	ReadConfig(ctx context.Context, name string) ([]byte, uint64, error)
	WriteConfig(ctx context.Context, name string, prev uint64, data []byte) (uint64, error)
}

// documentName is the config document the store lives in.
const documentName = "iam"

// Errors of store operations; the admin API maps them to statuses.
var (
	ErrNotFound = errors.New("not found")
	ErrExists   = errors.New("already exists")
	ErrInvalid  = errors.New("invalid request")
	ErrConflict = errors.New("conflict")
	ErrDenied   = errors.New("access denied")
)

// Options configure a Store.
type Options struct {
	Backend Backend
	// Root is the root user: its access key owns what identities create,
	// and it may not be reused as a user name.
	Root auth.Identity
	// Key is the key material secrets are sealed with; empty derives it
	// from the root credentials (changing them then needs PreviousKey).
	Key string
	// PreviousKey opens a store sealed with other material: the previous
	// Key, or "USER:PASSWORD" of the previous root credentials. The store
	// is resealed with the current material at start.
	PreviousKey string
	// Taken reports access keys used elsewhere (root, the users file),
	// which users and access keys may not take.
	Taken func(accessKey string) bool
	// Logger receives the audit records; nil discards them.
	Logger *slog.Logger
	// Now is the clock (tests move it); nil is time.Now.
	Now func() time.Time
	// Directory is the LDAP directory whose users' sessions and access
	// keys are checked against it (ldap.go); nil when LDAP is not
	// configured. DirectoryRecheck is how long an answer is reused.
	Directory        Directory
	DirectoryRecheck time.Duration
}

// Store is the identity store. It is safe for concurrent use.
type Store struct {
	opts Options
	keys *keyring
	// mu serialises changes; readers use the snapshot.
	mu   sync.Mutex
	snap atomic.Pointer[snapshot]
	// sessions caches decoded session tokens.
	sessions sessionCache
	auditMu  sync.Mutex
	audit    []AuditRecord
	// dir caches the LDAP directory's answers (ldap.go).
	dir dirCache
}

// snapshot is one version of the store, with what requests need
// precomputed: every credential's secret and permissions.
type snapshot struct {
	st       *state
	seq      uint64
	policies map[string]*policy.Policy // compiled, by name (builtins included)
	creds    map[string]*credential
}

// credential is a long-term access key (a user's or an application's).
type credential struct {
	id       auth.Identity
	parent   string // the user
	disabled string // why it may not be used, "" when it may
	expiry   *time.Time
	bound    *policy.Policy // an access key's own policy
	// ldapUser is the directory user name of an LDAP user's access key,
	// whose permissions are decided at each use (ldap.go).
	ldapUser string
}

func keyMaterial(key string, root auth.Identity) []byte {
	if key != "" {
		return []byte("key:" + key)
	}
	return []byte("root:" + root.AccessKey + ":" + root.SecretKey)
}

// Open loads the store (an empty one when none was ever written).
func Open(ctx context.Context, opts Options) (*Store, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Taken == nil {
		opts.Taken = func(string) bool { return false }
	}
	keys, err := newKeyring(keyMaterial(opts.Key, opts.Root))
	if err != nil {
		return nil, err
	}
	s := &Store{opts: opts, keys: keys}
	data, seq, err := opts.Backend.ReadConfig(ctx, documentName)
	st := newState()
	switch {
	case errors.Is(err, engine.ErrNoConfig):
		st.Check = keys.check
	case err != nil:
		return nil, fmt.Errorf("identity store: %w", err)
	default:
		if err := json.Unmarshal(data, st); err != nil {
			return nil, fmt.Errorf("identity store: damaged document: %w", err)
		}
		st.normalize()
	}
	if st.Check != keys.check {
		if st, err = s.reseal(st); err != nil {
			return nil, err
		}
		data, _ := json.Marshal(st)
		if seq, err = opts.Backend.WriteConfig(ctx, documentName, seq, data); err != nil {
			return nil, fmt.Errorf("identity store: reseal with the current key: %w", err)
		}
		s.log(AuditRecord{Actor: "system", Action: "reseal", Target: "identity store"})
	}
	snap, err := s.build(st, seq)
	if err != nil {
		return nil, err
	}
	s.snap.Store(snap)
	return s, nil
}

// reseal reopens secrets sealed with PreviousKey under the current key.
func (s *Store) reseal(st *state) (*state, error) {
	if len(st.Users) == 0 && len(st.AccessKeys) == 0 {
		st.Check = s.keys.check // nothing sealed: adopt the new material
		return st, nil
	}
	const how = "start with the key material the store was written with: set SHARDSTORE_IAM_PREVIOUS_KEY to the previous SHARDSTORE_IAM_KEY, or to OLDUSER:OLDPASSWORD when the store was keyed by the previous root credentials"
	if s.opts.PreviousKey == "" {
		return nil, fmt.Errorf("identity store: its secrets were sealed with other key material (SHARDSTORE_IAM_KEY or the root credentials changed); %s", how)
	}
	var old *keyring
	for _, m := range [][]byte{[]byte("key:" + s.opts.PreviousKey), []byte("root:" + s.opts.PreviousKey)} {
		kr, err := newKeyring(m)
		if err != nil {
			return nil, err
		}
		if kr.check == st.Check {
			old = kr
			break
		}
	}
	if old == nil {
		return nil, fmt.Errorf("identity store: SHARDSTORE_IAM_PREVIOUS_KEY does not open it either; %s", how)
	}
	for _, u := range st.Users {
		sec, err := unseal(old.secrets, u.SealedSecret, u.Name)
		if err != nil {
			return nil, fmt.Errorf("identity store: user %s: %w", u.Name, err)
		}
		u.SealedSecret = seal(s.keys.secrets, sec, u.Name)
	}
	for _, k := range st.AccessKeys {
		sec, err := unseal(old.secrets, k.SealedSecret, k.AccessKey)
		if err != nil {
			return nil, fmt.Errorf("identity store: access key %s: %w", k.AccessKey, err)
		}
		k.SealedSecret = seal(s.keys.secrets, sec, k.AccessKey)
	}
	st.Check = s.keys.check
	return st, nil
}

// build computes a snapshot of st.
func (s *Store) build(st *state, seq uint64) (*snapshot, error) {
	snap := &snapshot{st: st, seq: seq, policies: map[string]*policy.Policy{}, creds: map[string]*credential{}}
	for name, doc := range builtinPolicies {
		p, err := policy.Parse([]byte(doc), policy.ParseOptions{Identity: true})
		if err != nil {
			return nil, fmt.Errorf("builtin policy %s: %w", name, err)
		}
		snap.policies[name] = p
	}
	for name, p := range st.Policies {
		cp, err := policy.Parse([]byte(p.Document), policy.ParseOptions{Identity: true})
		if err != nil {
			// Stored documents were validated; one this server cannot
			// read grants nothing rather than failing the start.
			cp = nil
		}
		snap.policies[name] = cp
	}
	perms := map[string]*permissions{}
	for name, u := range st.Users {
		sec, err := unseal(s.keys.secrets, u.SealedSecret, name)
		if err != nil {
			return nil, fmt.Errorf("identity store: user %s: %w", name, err)
		}
		p := &permissions{}
		for _, pn := range u.Policies {
			p.Add(snap.policies[pn])
		}
		for _, gn := range st.groupsOf(name) {
			if g := st.Groups[gn]; g.Status != StatusDisabled {
				for _, pn := range g.Policies {
					p.Add(snap.policies[pn])
				}
			}
		}
		perms[name] = p
		c := &credential{parent: name, id: s.identity(name, string(sec), p)}
		if u.Status == StatusDisabled {
			c.disabled = "The user is disabled."
		}
		snap.creds[name] = c
	}
	for ak, k := range st.AccessKeys {
		sec, err := unseal(s.keys.secrets, k.SealedSecret, ak)
		if err != nil {
			return nil, fmt.Errorf("identity store: access key %s: %w", ak, err)
		}
		if k.LDAPUser != "" {
			c := &credential{parent: k.Parent, expiry: k.Expiry, ldapUser: k.LDAPUser}
			if k.Policy != "" {
				if c.bound, err = policy.Parse([]byte(k.Policy), policy.ParseOptions{Identity: true}); err != nil {
					c.bound = denyAll
				}
			}
			c.id = s.ldapIdentity(k.LDAPUser, k.Parent, string(sec), &permissions{})
			c.id.AccessKey = ak
			if k.Status == StatusDisabled {
				c.disabled = "The access key is disabled."
			}
			snap.creds[ak] = c
			continue
		}
		parent := perms[k.Parent]
		if parent == nil {
			continue // its user is gone (removal drops its keys; be safe)
		}
		c := &credential{parent: k.Parent, expiry: k.Expiry}
		p := parent
		if k.Policy != "" {
			bound, err := policy.Parse([]byte(k.Policy), policy.ParseOptions{Identity: true})
			if err != nil {
				bound = denyAll
			}
			c.bound = bound
			p = parent.Narrowed(bound)
		}
		c.id = s.identity(k.Parent, string(sec), p)
		c.id.AccessKey = ak
		switch {
		case k.Status == StatusDisabled:
			c.disabled = "The access key is disabled."
		case st.Users[k.Parent].Status == StatusDisabled:
			c.disabled = "The user of this access key is disabled."
		}
		snap.creds[ak] = c
	}
	return snap, nil
}

// denyAll stands in for a stored narrowing policy that no longer parses.
var denyAll = &policy.Policy{}

func (s *Store) identity(user, secret string, p *permissions) auth.Identity {
	return auth.Identity{AccessKey: user, SecretKey: secret, DisplayName: user, User: user,
		Owner: s.opts.Root.AccessKey, Permissions: p}
}

func (s *Store) now() time.Time { return s.opts.Now() }

// Lookup implements auth.IdentityStore.
func (s *Store) Lookup(accessKey string) (auth.Identity, error) {
	snap := s.snap.Load()
	c, ok := snap.creds[accessKey]
	if !ok {
		return auth.Identity{}, auth.InvalidAccessKey("")
	}
	// A refused key still gives its secret to the verifier, which says
	// why only to a caller whose signature matched.
	id := c.id
	if c.ldapUser != "" && c.disabled == "" {
		// A directory user's key: what it may do is decided now.
		p, err := s.ldapRefusal(snap, c.ldapUser, c.parent)
		if err != nil {
			id.Refusal = err
			return id, nil
		}
		if c.bound != nil {
			p = p.Narrowed(c.bound)
		}
		id.Permissions = p
	}
	switch {
	case c.disabled != "":
		id.Refusal = auth.InvalidAccessKey(c.disabled)
	case c.expiry != nil && !s.now().Before(*c.expiry):
		id.Refusal = auth.InvalidAccessKey("The access key has expired.")
	}
	return id, nil
}

// update applies change to a copy of the current state, stores it and
// makes it current; the audit record is logged whatever the outcome.
func (s *Store) update(ctx context.Context, rec AuditRecord, change func(st *state) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	err := s.updateLocked(ctx, change)
	if err != nil {
		rec.Error = err.Error()
	}
	s.log(rec)
	return err
}

func (s *Store) updateLocked(ctx context.Context, change func(st *state) error) error {
	err := s.tryUpdate(ctx, change)
	var werr *writeError
	if err == nil || !errors.As(err, &werr) {
		return err
	}
	// A failed write may have been read back after all (the drives hold
	// another version than this snapshot), and a conflict means another
	// writer got there first: load what the drives hold; after a
	// conflict, apply the change to it.
	if rerr := s.reload(ctx); rerr != nil {
		return errors.Join(err, rerr)
	}
	if errors.Is(err, engine.ErrConfigConflict) {
		return s.tryUpdate(ctx, change)
	}
	return err
}

// writeError is a failed write of the document.
type writeError struct{ err error }

func (e *writeError) Error() string { return "store identities: " + e.err.Error() }
func (e *writeError) Unwrap() error { return e.err }

// Reload re-reads the identity document from the drives: in a cluster,
// another node changed it (or may have, while this one was cut off).
func (s *Store) Reload(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	err := s.reload(ctx)
	if errors.Is(err, engine.ErrNoConfig) {
		return nil // no node has stored an identity yet
	}
	return err
}

// reload replaces the snapshot with the document the drives hold.
func (s *Store) reload(ctx context.Context) error {
	data, seq, err := s.opts.Backend.ReadConfig(ctx, documentName)
	if err != nil {
		return fmt.Errorf("reload identities: %w", err)
	}
	if seq == s.snap.Load().seq {
		return nil
	}
	st := newState()
	if err := json.Unmarshal(data, st); err != nil {
		return fmt.Errorf("reload identities: damaged document: %w", err)
	}
	st.normalize()
	snap, err := s.build(st, seq)
	if err != nil {
		return err
	}
	s.snap.Store(snap)
	s.sessions.reset()
	return nil
}

func (s *Store) tryUpdate(ctx context.Context, change func(st *state) error) error {
	cur := s.snap.Load()
	// A deep copy through JSON: changes are rare and the document small.
	raw, err := json.Marshal(cur.st)
	if err != nil {
		return err
	}
	st := newState()
	if err := json.Unmarshal(raw, st); err != nil {
		return err
	}
	st.normalize()
	if err := change(st); err != nil {
		return err
	}
	data, err := json.Marshal(st)
	if err != nil {
		return err
	}
	snap, err := s.build(st, cur.seq)
	if err != nil {
		return err
	}
	seq, err := s.opts.Backend.WriteConfig(ctx, documentName, cur.seq, data)
	if err != nil {
		return &writeError{err}
	}
	snap.seq = seq
	s.snap.Store(snap)
	s.sessions.reset()
	return nil
}

// AuditRecord is one administrative change: who did what to what, when,
// and the error when it failed. It never holds a secret.
type AuditRecord struct {
	Time   time.Time `json:"time"`
	Actor  string    `json:"actor"`
	Action string    `json:"action"`
	Target string    `json:"target"`
	Detail string    `json:"detail,omitempty"`
	Error  string    `json:"error,omitempty"`
}

// auditKeep is how many audit records Audit can return.
const auditKeep = 1000

func (s *Store) log(rec AuditRecord) {
	rec = s.logOnly(rec)
	s.auditMu.Lock()
	s.audit = append(s.audit, rec)
	if len(s.audit) > auditKeep {
		s.audit = append([]AuditRecord(nil), s.audit[len(s.audit)-auditKeep:]...)
	}
	s.auditMu.Unlock()
}

// Record logs an audit record of something the store did not do itself
// (a refused administrative call).
func (s *Store) Record(rec AuditRecord) { s.log(rec) }

// logOnly writes an audit record to the log, not to the ring.
func (s *Store) logOnly(rec AuditRecord) AuditRecord {
	rec.Time = s.now().UTC()
	if l := s.opts.Logger; l != nil {
		attrs := []any{"actor", rec.Actor, "action", rec.Action, "target", rec.Target}
		if rec.Detail != "" {
			attrs = append(attrs, "detail", rec.Detail)
		}
		if rec.Error != "" {
			attrs = append(attrs, "error", rec.Error)
		}
		l.Info("audit", attrs...)
	}
	return rec
}

// Audit returns the latest audit records since this process started,
// oldest first (the full trail is in the server log).
func (s *Store) Audit() []AuditRecord {
	s.auditMu.Lock()
	defer s.auditMu.Unlock()
	return append([]AuditRecord(nil), s.audit...)
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
