package iam

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shardstore/shardstore/internal/auth"
	"github.com/shardstore/shardstore/internal/engine"
	"github.com/shardstore/shardstore/internal/policy"
)

// memBackend keeps the document in memory with the engine's contract.
type memBackend struct {
	mu   sync.Mutex
	data []byte
	seq  uint64
	fail error // WriteConfig fails with it when set
}

func (b *memBackend) ReadConfig(context.Context, string) ([]byte, uint64, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.seq == 0 {
		return nil, 0, engine.ErrNoConfig
	}
	return append([]byte(nil), b.data...), b.seq, nil
}

func (b *memBackend) WriteConfig(_ context.Context, _ string, prev uint64, data []byte) (uint64, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.fail != nil {
		return 0, b.fail
	}
	if prev != b.seq {
		return 0, engine.ErrConfigConflict
	}
	b.data, b.seq = append([]byte(nil), data...), b.seq+1
	return b.seq, nil
}

var rootID = auth.Identity{AccessKey: "rootuser", SecretKey: "rootsecret123", Root: true}

type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func openStore(t *testing.T, b *memBackend, c *clock, opts Options) *Store {
	t.Helper()
	opts.Backend = b
	if opts.Root.AccessKey == "" {
		opts.Root = rootID
	}
	opts.Now = c.now
	s, err := Open(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func req(action, resource string) *policy.Request {
	return &policy.Request{Action: action, Resource: resource, AccessKey: "alice"}
}

func decide(t *testing.T, s *Store, ak, action, resource string) policy.Decision {
	t.Helper()
	id, err := s.Lookup(ak)
	if err != nil {
		t.Fatalf("lookup %s: %v", ak, err)
	}
	return id.Permissions.Evaluate(req(action, resource))
}

// refusal is the error a lookup answers, or the refusal the verifier
// answers once the signature matched.
func refusal(id auth.Identity, err error) error {
	if err != nil {
		return err
	}
	return id.Refusal
}

func authCode(err error) string {
	var ae *auth.Error
	if errors.As(err, &ae) {
		return ae.Code + ": " + ae.Message
	}
	return ""
}

func TestUsersPoliciesGroups(t *testing.T) {
	ctx := context.Background()
	b, c := &memBackend{}, &clock{time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)}
	s := openStore(t, b, c, Options{Taken: func(ak string) bool { return ak == "rootuser" }})

	secret, err := s.AddUser(ctx, "root", "alice", "")
	if err != nil || len(secret) != 40 {
		t.Fatalf("add alice: %q %v", secret, err)
	}
	if _, err := s.AddUser(ctx, "root", "alice", "another-secret"); !errors.Is(err, ErrExists) {
		t.Fatalf("duplicate user: %v", err)
	}
	if _, err := s.AddUser(ctx, "root", "rootuser", "another-secret"); !errors.Is(err, ErrExists) {
		t.Fatalf("user named like the root key: %v", err)
	}
	if _, err := s.AddUser(ctx, "root", "bad/name", "another-secret"); !errors.Is(err, ErrInvalid) {
		t.Fatalf("bad name: %v", err)
	}
	if strings.Contains(string(b.data), secret) {
		t.Fatal("the stored document holds the secret in clear")
	}
	id, err := s.Lookup("alice")
	if err != nil || id.SecretKey != secret || id.User != "alice" || id.Owner != "rootuser" {
		t.Fatalf("lookup alice: %+v %v", id, err)
	}
	// No policy: nothing allowed.
	if d := decide(t, s, "alice", "s3:GetObject", "arn:aws:s3:::b/k"); d != policy.NotApplicable {
		t.Fatalf("no policies: %v", d)
	}
	if err := s.AttachPolicies(ctx, "root", []string{"readonly"}, "alice", "", true); err != nil {
		t.Fatal(err)
	}
	if d := decide(t, s, "alice", "s3:GetObject", "arn:aws:s3:::b/k"); d != policy.Allowed {
		t.Fatalf("readonly get: %v", d)
	}
	if d := decide(t, s, "alice", "s3:PutObject", "arn:aws:s3:::b/k"); d != policy.NotApplicable {
		t.Fatalf("readonly put: %v", d)
	}

	// A managed policy through a group; a disabled group's policies stop
	// applying.
	deny := `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:PutObject","Resource":"arn:aws:s3:::b/*"},
		{"Effect":"Deny","Action":"s3:GetObject","Resource":"arn:aws:s3:::b/secret/*"}]}`
	if err := s.PutPolicy(ctx, "root", "writers", deny); err != nil {
		t.Fatal(err)
	}
	if err := s.UpdateGroupMembers(ctx, "root", "team", []string{"alice"}, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.AttachPolicies(ctx, "root", []string{"writers"}, "", "team", true); err != nil {
		t.Fatal(err)
	}
	if d := decide(t, s, "alice", "s3:PutObject", "arn:aws:s3:::b/k"); d != policy.Allowed {
		t.Fatalf("group put: %v", d)
	}
	if d := decide(t, s, "alice", "s3:GetObject", "arn:aws:s3:::b/secret/x"); d != policy.Denied {
		t.Fatalf("group deny beats readonly allow: %v", d)
	}
	if err := s.SetGroupStatus(ctx, "root", "team", false); err != nil {
		t.Fatal(err)
	}
	if d := decide(t, s, "alice", "s3:PutObject", "arn:aws:s3:::b/k"); d != policy.NotApplicable {
		t.Fatalf("disabled group still grants: %v", d)
	}
	if err := s.RemovePolicy(ctx, "root", "writers"); !errors.Is(err, ErrConflict) {
		t.Fatalf("remove an attached policy: %v", err)
	}
	if err := s.RemovePolicy(ctx, "root", "readonly"); !errors.Is(err, ErrConflict) {
		t.Fatalf("remove a builtin: %v", err)
	}
	if err := s.RemoveGroup(ctx, "root", "team"); !errors.Is(err, ErrConflict) {
		t.Fatalf("remove a group with members: %v", err)
	}

	// Disabling the user refuses it at once.
	if err := s.SetUserStatus(ctx, "root", "alice", false); err != nil {
		t.Fatal(err)
	}
	if err := refusal(s.Lookup("alice")); !strings.Contains(authCode(err), "InvalidAccessKeyId: The user is disabled") {
		t.Fatalf("disabled user: %v", err)
	}

	// Everything survives a restart; listings hold no secrets.
	s2 := openStore(t, b, c, Options{})
	if u, err := s2.User("alice"); err != nil || u.Status != StatusDisabled || len(u.Groups) != 1 || u.Policies[0] != "readonly" {
		t.Fatalf("after reopen: %+v %v", u, err)
	}
	if err := s2.SetUserStatus(ctx, "root", "alice", true); err != nil {
		t.Fatal(err)
	}
	if id, err := s2.Lookup("alice"); err != nil || id.SecretKey != secret {
		t.Fatalf("after reopen and enable: %v", err)
	}
	if err := s2.RemoveUser(ctx, "root", "alice"); err != nil {
		t.Fatal(err)
	}
	if g, _ := s2.Group("team"); len(g.Members) != 0 {
		t.Fatalf("removed user still in group: %+v", g)
	}
	if err := refusal(s2.Lookup("alice")); authCode(err) == "" {
		t.Fatalf("removed user still found: %v", err)
	}
	// The audit trail names actors and actions, never secrets.
	for _, rec := range s.Audit() {
		if rec.Actor == "" || rec.Action == "" || strings.Contains(rec.Detail, secret) {
			t.Fatalf("audit record %+v", rec)
		}
	}
}

func TestPolicyValidation(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, &memBackend{}, &clock{time.Now()}, Options{})
	for name, doc := range map[string]string{
		"not json":       `{"Version":`,
		"unknown action": `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:Fly","Resource":"*"}]}`,
		"unknown op":     `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:GetObject","Resource":"*","Condition":{"StringSortOf":{"s3:prefix":"a"}}}]}`,
		"principal":      `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"*"}]}`,
		"no resource":    `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:GetObject"}]}`,
		"too large": `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:GetObject","Resource":["arn:aws:s3:::` +
			strings.Repeat("x", 7000) + `"]}]}`,
	} {
		var pe *PolicyError
		if err := s.PutPolicy(ctx, "root", "p", doc); !errors.As(err, &pe) {
			t.Errorf("%s: %v, want a PolicyError", name, err)
		}
	}
	if len(s.Policies()) != len(builtinPolicies) {
		t.Fatal("a refused policy was stored")
	}
	admin := `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["admin:CreateUser","admin:ListUsers"]}]}`
	if err := s.PutPolicy(ctx, "root", "useradmin", admin); err != nil {
		t.Fatalf("admin actions without a resource: %v", err)
	}
}

func TestAccessKeys(t *testing.T) {
	ctx := context.Background()
	b, c := &memBackend{}, &clock{time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)}
	s := openStore(t, b, c, Options{})
	if _, err := s.AddUser(ctx, "root", "alice", "alice-secret"); err != nil {
		t.Fatal(err)
	}
	if err := s.AttachPolicies(ctx, "root", []string{"readwrite"}, "alice", "", true); err != nil {
		t.Fatal(err)
	}
	onlyLogs := `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:*","Resource":"arn:aws:s3:::logs/*"}]}`
	exp := c.t.Add(time.Hour)
	creds, err := s.CreateAccessKey(ctx, "root", NewAccessKey{Parent: "alice", Policy: onlyLogs, Expiry: &exp})
	if err != nil || !strings.HasPrefix(creds.AccessKey, "SSAK") || len(creds.SecretKey) != 40 {
		t.Fatalf("create: %+v %v", creds, err)
	}
	if strings.Contains(string(b.data), creds.SecretKey) {
		t.Fatal("the stored document holds the access key's secret in clear")
	}
	id, err := s.Lookup(creds.AccessKey)
	if err != nil || id.User != "alice" || id.SecretKey != creds.SecretKey {
		t.Fatalf("lookup key: %+v %v", id, err)
	}
	if d := decide(t, s, creds.AccessKey, "s3:PutObject", "arn:aws:s3:::logs/x"); d != policy.Allowed {
		t.Fatalf("inside the key's policy: %v", d)
	}
	if d := decide(t, s, creds.AccessKey, "s3:PutObject", "arn:aws:s3:::data/x"); d == policy.Allowed {
		t.Fatalf("outside the key's policy: %v", d)
	}
	if id.Permissions.Bounded(req("s3:GetObject", "arn:aws:s3:::data/x")) {
		t.Fatal("a bucket policy grant outside the key's policy would count")
	}
	if _, err := s.CreateAccessKey(ctx, "root", NewAccessKey{Parent: "nobody"}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("key for a missing user: %v", err)
	}
	past := c.t.Add(-time.Minute)
	if _, err := s.CreateAccessKey(ctx, "root", NewAccessKey{Parent: "alice", Expiry: &past}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("key expiring in the past: %v", err)
	}
	// A key created disabled never signs a request; a status other than
	// the two is refused.
	off, err := s.CreateAccessKey(ctx, "root", NewAccessKey{Parent: "alice", Status: StatusDisabled})
	if err != nil {
		t.Fatal(err)
	}
	if err := refusal(s.Lookup(off.AccessKey)); !strings.Contains(authCode(err), "disabled") {
		t.Fatalf("key created disabled: %v", err)
	}
	if err := s.RemoveAccessKey(ctx, "root", off.AccessKey); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"Disabled", "off", "enabled ", "\x00"} {
		if _, err := s.CreateAccessKey(ctx, "root", NewAccessKey{Parent: "alice", Status: bad}); !errors.Is(err, ErrInvalid) {
			t.Fatalf("status %q: %v", bad, err)
		}
	}

	// Disabling the parent disables the key; the key expires.
	if err := s.SetUserStatus(ctx, "root", "alice", false); err != nil {
		t.Fatal(err)
	}
	if err := refusal(s.Lookup(creds.AccessKey)); !strings.Contains(authCode(err), "disabled") {
		t.Fatalf("key of a disabled user: %v", err)
	}
	if err := s.SetUserStatus(ctx, "root", "alice", true); err != nil {
		t.Fatal(err)
	}
	c.t = exp
	if err := refusal(s.Lookup(creds.AccessKey)); !strings.Contains(authCode(err), "expired") {
		t.Fatalf("expired key: %v", err)
	}
	if ks := s.AccessKeys("alice"); len(ks) != 1 || !ks[0].Expired {
		t.Fatalf("listing: %+v", ks)
	}
	if err := s.RemoveAccessKey(ctx, "root", creds.AccessKey); err != nil {
		t.Fatal(err)
	}
	if len(s.AccessKeys("")) != 0 {
		t.Fatal("removed key still listed")
	}
}

func TestKeyMaterial(t *testing.T) {
	ctx := context.Background()
	b, c := &memBackend{}, &clock{time.Now()}
	s := openStore(t, b, c, Options{})
	if _, err := s.AddUser(ctx, "root", "alice", "alice-secret"); err != nil {
		t.Fatal(err)
	}
	newRoot := auth.Identity{AccessKey: "rootuser", SecretKey: "a-new-root-secret", Root: true}
	if _, err := Open(ctx, Options{Backend: b, Root: newRoot}); err == nil || !strings.Contains(err.Error(), "SHARDSTORE_IAM_PREVIOUS_KEY") {
		t.Fatalf("changed root credentials: %v, want an error that says what to do", err)
	}
	if _, err := Open(ctx, Options{Backend: b, Root: newRoot, PreviousKey: "rootuser:wrong"}); err == nil {
		t.Fatal("opened with a wrong previous key")
	}
	s2, err := Open(ctx, Options{Backend: b, Root: newRoot, PreviousKey: "rootuser:rootsecret123"})
	if err != nil {
		t.Fatal(err)
	}
	if id, err := s2.Lookup("alice"); err != nil || id.SecretKey != "alice-secret" {
		t.Fatalf("after resealing: %v", err)
	}
	// Resealed: the new root alone opens it now; a configured key works too.
	if _, err := Open(ctx, Options{Backend: b, Root: newRoot}); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(ctx, Options{Backend: b, Root: newRoot, Key: "configured-key", PreviousKey: "rootuser:a-new-root-secret"}); err != nil {
		t.Fatal(err)
	}
	s4, err := Open(ctx, Options{Backend: b, Root: rootID, Key: "configured-key"})
	if err != nil {
		t.Fatalf("a configured key does not depend on the root credentials: %v", err)
	}
	if id, err := s4.Lookup("alice"); err != nil || id.SecretKey != "alice-secret" {
		t.Fatalf("with the configured key: %v", err)
	}
}

func TestSessions(t *testing.T) {
	ctx := context.Background()
	b, c := &memBackend{}, &clock{time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)}
	s := openStore(t, b, c, Options{})
	if _, err := s.AddUser(ctx, "root", "alice", "alice-secret"); err != nil {
		t.Fatal(err)
	}
	if err := s.AttachPolicies(ctx, "root", []string{"readwrite"}, "alice", "", true); err != nil {
		t.Fatal(err)
	}
	alice, _ := s.Lookup("alice")
	sessionPolicy := `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:GetObject","Resource":"arn:aws:s3:::b/*"}]}`
	creds, err := s.AssumeRole(ctx, alice, AssumeRoleRequest{Duration: 20 * time.Minute, Policy: sessionPolicy})
	if err != nil {
		t.Fatal(err)
	}
	if !creds.Expiration.Equal(c.t.Add(20 * time.Minute)) {
		t.Fatalf("expiration %v", creds.Expiration)
	}
	id, err := s.LookupSession(creds.AccessKey, creds.SessionToken)
	if err != nil || !id.Session || id.User != "alice" || id.SecretKey != creds.SecretKey {
		t.Fatalf("session lookup: %+v %v", id, err)
	}
	if d := id.Permissions.Evaluate(req("s3:GetObject", "arn:aws:s3:::b/k")); d != policy.Allowed {
		t.Fatalf("session get: %v", d)
	}
	if d := id.Permissions.Evaluate(req("s3:PutObject", "arn:aws:s3:::b/k")); d == policy.Allowed {
		t.Fatalf("session policy does not narrow: %v", d)
	}
	// The token goes with its own access key only, and is not forgeable.
	if err := refusal(s.LookupSession("alice", creds.SessionToken)); !strings.HasPrefix(authCode(err), "InvalidToken") {
		t.Fatalf("token with another key: %v", err)
	}
	tampered := creds.SessionToken[:len(creds.SessionToken)-2] + "AA"
	if err := refusal(s.LookupSession(creds.AccessKey, tampered)); !strings.HasPrefix(authCode(err), "InvalidToken") {
		t.Fatalf("tampered token: %v", err)
	}
	// Sessions survive a restart (no state), and end with their user.
	s2 := openStore(t, b, c, Options{})
	if err := refusal(s2.LookupSession(creds.AccessKey, creds.SessionToken)); err != nil {
		t.Fatalf("after restart: %v", err)
	}
	if err := s2.SetUserStatus(ctx, "root", "alice", false); err != nil {
		t.Fatal(err)
	}
	if err := refusal(s2.LookupSession(creds.AccessKey, creds.SessionToken)); authCode(err) == "" {
		t.Fatal("session of a disabled user still works")
	}
	if err := s2.SetUserStatus(ctx, "root", "alice", true); err != nil {
		t.Fatal(err)
	}
	c.t = c.t.Add(20 * time.Minute)
	if err := refusal(s2.LookupSession(creds.AccessKey, creds.SessionToken)); !strings.HasPrefix(authCode(err), "ExpiredToken") {
		t.Fatalf("expired session: %v", err)
	}

	// A session asked for with an access key ends with the key; a user
	// removed and created again does not inherit its sessions.
	key, err := s2.CreateAccessKey(ctx, "root", NewAccessKey{Parent: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	keyID, _ := s2.Lookup(key.AccessKey)
	viaKey, err := s2.AssumeRole(ctx, keyID, AssumeRoleRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if err := refusal(s2.LookupSession(viaKey.AccessKey, viaKey.SessionToken)); err != nil {
		t.Fatalf("session via a key: %v", err)
	}
	if err := s2.SetAccessKeyStatus(ctx, "root", key.AccessKey, false); err != nil {
		t.Fatal(err)
	}
	if err := refusal(s2.LookupSession(viaKey.AccessKey, viaKey.SessionToken)); authCode(err) == "" {
		t.Fatal("session of a disabled key still works")
	}
	if err := s2.RemoveAccessKey(ctx, "root", key.AccessKey); err != nil {
		t.Fatal(err)
	}
	if _, err := s2.AssumeRole(ctx, keyID, AssumeRoleRequest{}); err == nil {
		t.Fatal("a removed key (verified just before) was issued a session")
	}
	fresh, err := s2.AssumeRole(ctx, alice, AssumeRoleRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s2.RemoveUser(ctx, "root", "alice"); err != nil {
		t.Fatal(err)
	}
	c.t = c.t.Add(time.Nanosecond) // a new creation time
	if _, err := s2.AddUser(ctx, "root", "alice", "alice-secret"); err != nil {
		t.Fatal(err)
	}
	if err := refusal(s2.LookupSession(fresh.AccessKey, fresh.SessionToken)); !strings.HasPrefix(authCode(err), "InvalidToken") {
		t.Fatalf("a recreated user inherits an old session: %v", err)
	}
	alice, _ = s2.Lookup("alice")

	// Refusals.
	for name, tc := range map[string]struct {
		caller auth.Identity
		req    AssumeRoleRequest
		code   string
	}{
		"too short":       {alice, AssumeRoleRequest{Duration: time.Minute}, "ValidationError"},
		"too long":        {alice, AssumeRoleRequest{Duration: 13 * time.Hour}, "ValidationError"},
		"bad policy":      {alice, AssumeRoleRequest{Policy: `{"Version":"2012-10-17"}`}, "MalformedPolicyDocument"},
		"big policy":      {alice, AssumeRoleRequest{Policy: `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:GetObject","Resource":"arn:aws:s3:::` + strings.Repeat("y", 3000) + `"}]}`}, "PackedPolicyTooLarge"},
		"from a session":  {id, AssumeRoleRequest{}, "AccessDenied"},
		"users-file user": {auth.Identity{AccessKey: "filed", SecretKey: "x"}, AssumeRoleRequest{}, "AccessDenied"},
	} {
		_, err := s2.AssumeRole(ctx, tc.caller, tc.req)
		var se *STSError
		if !errors.As(err, &se) || se.Code != tc.code {
			t.Errorf("%s: %v, want %s", name, err, tc.code)
		}
	}
	// Root may assume a role: everything, within the session policy.
	rs, err := s2.AssumeRole(ctx, rootID, AssumeRoleRequest{Policy: sessionPolicy})
	if err != nil {
		t.Fatal(err)
	}
	rid, err := s2.LookupSession(rs.AccessKey, rs.SessionToken)
	if err != nil || rid.Root {
		t.Fatalf("root session: %+v %v", rid, err)
	}

	// With a configured key, sessions survive a restart but a root
	// session ends when the root credentials change.
	kb := &memBackend{}
	ks := openStore(t, kb, c, Options{Key: "configured"})
	krs, err := ks.AssumeRole(ctx, rootID, AssumeRoleRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := openStore(t, kb, c, Options{Key: "configured"}).LookupSession(krs.AccessKey, krs.SessionToken); err != nil {
		t.Fatalf("root session after a restart: %v", err)
	}
	rotated := openStore(t, kb, c, Options{Key: "configured", Root: auth.Identity{AccessKey: "rootuser", SecretKey: "rotated-secret", Root: true}})
	if err := refusal(rotated.LookupSession(krs.AccessKey, krs.SessionToken)); !strings.HasPrefix(authCode(err), "InvalidToken") {
		t.Fatalf("a root session outlives the root credentials: %v", err)
	}
	if rid.Permissions.Evaluate(req("s3:GetObject", "arn:aws:s3:::b/k")) != policy.Allowed ||
		rid.Permissions.Evaluate(req("s3:DeleteBucket", "arn:aws:s3:::b")) == policy.Allowed {
		t.Fatal("root session not narrowed by its policy")
	}
}

func TestStoreWriteFailure(t *testing.T) {
	ctx := context.Background()
	b, c := &memBackend{}, &clock{time.Now()}
	s := openStore(t, b, c, Options{})
	b.fail = engine.ErrWriteQuorum
	if _, err := s.AddUser(ctx, "root", "alice", "alice-secret"); !errors.Is(err, engine.ErrWriteQuorum) {
		t.Fatalf("add without quorum: %v", err)
	}
	if err := refusal(s.Lookup("alice")); err == nil {
		t.Fatal("a user whose write failed is visible")
	}
	b.fail = nil
	// Another writer changed the document: the store reloads and applies
	// its change on top.
	other := openStore(t, b, c, Options{})
	if _, err := other.AddUser(ctx, "root", "bob", "bob-secret"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AddUser(ctx, "root", "alice", "alice-secret"); err != nil {
		t.Fatalf("add after a concurrent change: %v", err)
	}
	for _, u := range []string{"alice", "bob"} {
		if err := refusal(s.Lookup(u)); err != nil {
			t.Fatalf("%s after merge: %v", u, err)
		}
	}
}
