package iam

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shardstore/shardstore/internal/ldapidp"
	"github.com/shardstore/shardstore/internal/policy"
)

// fakeDirectory answers Lookup from a table, counting calls. The LDAP
// server itself is exercised by internal/ldapidp's tests and the e2e
// tests against a real slapd; this one pins the store's own logic
// (mappings, re-checks, caching).
type fakeDirectory struct {
	mu    sync.Mutex
	users map[string]ldapidp.Identity
	down  bool
	calls int
}

func (d *fakeDirectory) Lookup(_ context.Context, name string) (ldapidp.Identity, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.calls++
	if d.down {
		return ldapidp.Identity{}, ldapidp.ErrUnavailable
	}
	id, ok := d.users[name]
	if !ok {
		return ldapidp.Identity{}, ldapidp.ErrInvalidCredentials
	}
	return id, nil
}

func (d *fakeDirectory) set(f func(d *fakeDirectory)) {
	d.mu.Lock()
	defer d.mu.Unlock()
	f(d)
}

const (
	aliceDN   = "uid=alice,ou=people,dc=example,dc=org"
	readersDN = "cn=readers,ou=groups,dc=example,dc=org"
	writersDN = "cn=writers,ou=groups,dc=example,dc=org"
)

func TestLDAPMappings(t *testing.T) {
	ctx := context.Background()
	b, c := &memBackend{}, &clock{t: time.Unix(1_800_000_000, 0)}
	s := openStore(t, b, c, Options{})
	bad := []struct {
		dn       string
		policies []string
		attach   bool
	}{
		{"", []string{"readonly"}, true},
		{"not a dn", []string{"readonly"}, true},
		{"uid=a,,dc=x", []string{"readonly"}, true},
		{aliceDN, nil, true},
		{aliceDN, []string{"nosuchpolicy"}, true},
		{aliceDN, []string{"readonly"}, false}, // not mapped
	}
	for _, tc := range bad {
		if err := s.AttachLDAPPolicies(ctx, "root", tc.dn, tc.policies, tc.attach); err == nil {
			t.Errorf("AttachLDAPPolicies(%q, %v, %v) succeeded", tc.dn, tc.policies, tc.attach)
		}
	}
	// Any spelling of a DN maps the normalized one.
	if err := s.AttachLDAPPolicies(ctx, "root", "UID=Alice, OU=People,DC=example,DC=org", []string{"readonly", "writeonly"}, true); err != nil {
		t.Fatal(err)
	}
	if err := s.PutPolicy(ctx, "root", "mine", `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:GetObject","Resource":"arn:aws:s3:::b/*"}]}`); err != nil {
		t.Fatal(err)
	}
	if err := s.AttachLDAPPolicies(ctx, "root", readersDN, []string{"mine"}, true); err != nil {
		t.Fatal(err)
	}
	if err := s.RemovePolicy(ctx, "root", "mine"); !errors.Is(err, ErrConflict) {
		t.Fatalf("removing a mapped policy: %v", err)
	}
	// The mappings are in the document: another store on the same
	// drives (another node, a restart) sees them.
	s2 := openStore(t, b, c, Options{})
	got, err := s2.LDAPPolicies("", "")
	if err != nil || len(got) != 2 || got[0].DN != readersDN || got[1].DN != aliceDN || strings.Join(got[1].Policies, ",") != "readonly,writeonly" {
		t.Fatalf("mappings after reopening: %+v %v", got, err)
	}
	if got, _ := s2.LDAPPolicies("", "mine"); len(got) != 1 || got[0].DN != readersDN {
		t.Fatalf("mappings naming mine: %+v", got)
	}
	if err := s2.AttachLDAPPolicies(ctx, "root", aliceDN, []string{"readonly", "writeonly"}, false); err != nil {
		t.Fatal(err)
	}
	if got, _ := s2.LDAPPolicies(aliceDN, ""); len(got) != 0 {
		t.Fatalf("alice after detaching all: %+v", got)
	}
}

func TestLDAPSessionsAndKeys(t *testing.T) {
	ctx := context.Background()
	b, c := &memBackend{}, &clock{t: time.Unix(1_800_000_000, 0)}
	dir := &fakeDirectory{users: map[string]ldapidp.Identity{
		"alice": {Username: "alice", DN: aliceDN, Groups: []string{readersDN}},
		"dave":  {Username: "dave", DN: "uid=dave,ou=people,dc=example,dc=org"},
	}}
	s := openStore(t, b, c, Options{Directory: dir, DirectoryRecheck: time.Minute})
	if err := s.AttachLDAPPolicies(ctx, "root", readersDN, []string{"readonly"}, true); err != nil {
		t.Fatal(err)
	}
	if err := s.AttachLDAPPolicies(ctx, "root", writersDN, []string{"writeonly"}, true); err != nil {
		t.Fatal(err)
	}
	// dave has nothing mapped: no session.
	_, err := s.AssumeRoleWithLDAP(ctx, LDAPRequest{Identity: dir.users["dave"]})
	var se *STSError
	if !errors.As(err, &se) || se.Code != "AccessDenied" {
		t.Fatalf("unmapped user: %v", err)
	}
	for _, d := range []time.Duration{time.Minute, 13 * time.Hour} {
		if _, err := s.AssumeRoleWithLDAP(ctx, LDAPRequest{Identity: dir.users["alice"], Duration: d}); !errors.As(err, &se) || se.Code != "ValidationError" {
			t.Fatalf("duration %v: %v", d, err)
		}
	}
	if _, err := s.AssumeRoleWithLDAP(ctx, LDAPRequest{Identity: dir.users["alice"], Policy: "{"}); !errors.As(err, &se) || se.Code != "MalformedPolicyDocument" {
		t.Fatalf("bad session policy: %v", err)
	}
	creds, err := s.AssumeRoleWithLDAP(ctx, LDAPRequest{Identity: dir.users["alice"]})
	if err != nil {
		t.Fatal(err)
	}
	session := func() (allowedGet, allowedPut bool, refusal error) {
		t.Helper()
		id, err := s.LookupSession(creds.AccessKey, creds.SessionToken)
		if err != nil {
			t.Fatalf("lookup session: %v", err)
		}
		if id.Refusal != nil {
			return false, false, id.Refusal
		}
		if id.User != aliceDN || id.DisplayName != "alice" || id.Claims["ldap:username"] != "alice" || id.Claims["ldap:user"] != aliceDN {
			t.Fatalf("session identity: %+v", id)
		}
		get := id.Permissions.Evaluate(&policy.Request{Action: "s3:GetObject", Resource: "arn:aws:s3:::b/k"}) == policy.Allowed
		put := id.Permissions.Evaluate(&policy.Request{Action: "s3:PutObject", Resource: "arn:aws:s3:::b/k"}) == policy.Allowed
		return get, put, nil
	}
	calls := dir.calls
	if get, put, r := session(); !get || put || r != nil {
		t.Fatalf("alice as a reader: get %v put %v refusal %v", get, put, r)
	}
	if dir.calls != calls {
		t.Fatalf("a session used right after sign-in asked the directory again (%d calls)", dir.calls-calls)
	}
	// alice joins writers: within the recheck interval the old answer
	// stands; after it the new groups apply.
	dir.set(func(d *fakeDirectory) {
		d.users["alice"] = ldapidp.Identity{Username: "alice", DN: aliceDN, Groups: []string{readersDN, writersDN}}
	})
	if _, put, _ := session(); put {
		t.Fatal("the directory was asked within the recheck interval")
	}
	c.t = c.t.Add(time.Minute)
	if get, put, r := session(); !get || !put || r != nil {
		t.Fatalf("alice as a reader and writer: get %v put %v refusal %v", get, put, r)
	}
	// A mapping changed here applies at once.
	if err := s.AttachLDAPPolicies(ctx, "root", writersDN, []string{"writeonly"}, false); err != nil {
		t.Fatal(err)
	}
	if _, put, _ := session(); put {
		t.Fatal("detached policy still applies")
	}

	// An access key of alice's, created with the DN as the parent (the
	// name is the one last seen signing in with it).
	key, err := s.CreateAccessKey(ctx, "root", NewAccessKey{Parent: "UID=alice,ou=people,dc=example,dc=org"})
	if err != nil {
		t.Fatal(err)
	}
	if keys := s.AccessKeys(aliceDN); len(keys) != 1 || keys[0].AccessKey != key.AccessKey {
		t.Fatalf("alice's keys: %+v", keys)
	}
	id, err := s.Lookup(key.AccessKey)
	if err != nil || id.Refusal != nil || id.User != aliceDN || id.SecretKey != key.SecretKey ||
		id.Permissions.Evaluate(&policy.Request{Action: "s3:GetObject", Resource: "arn:aws:s3:::b/k"}) != policy.Allowed {
		t.Fatalf("alice's key: %+v %v", id, err)
	}
	if _, err := s.CreateAccessKey(ctx, "root", NewAccessKey{Parent: "uid=nobody,ou=people,dc=example,dc=org"}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("key for a DN never seen: %v", err)
	}
	if _, err := s.CreateAccessKey(ctx, "root", NewAccessKey{Parent: aliceDN, LDAPUsername: "dave"}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("key for alice's DN named as dave: %v", err)
	}

	// The directory is down: sessions and keys are refused (after the
	// recheck interval), and work again once it is back.
	dir.set(func(d *fakeDirectory) { d.down = true })
	c.t = c.t.Add(time.Minute)
	if _, _, r := session(); r == nil || !strings.Contains(authCode(r), "could not be asked") {
		t.Fatalf("directory down: %v", r)
	}
	if r := refusal(s.Lookup(key.AccessKey)); r == nil {
		t.Fatal("access key works while the directory is down")
	}
	dir.set(func(d *fakeDirectory) { d.down = false })
	c.t = c.t.Add(unavailableRecheck)
	if _, _, r := session(); r != nil {
		t.Fatalf("directory back: %v", r)
	}
	// alice is removed from the directory: the session and the key stop
	// working at the next check.
	dir.set(func(d *fakeDirectory) { delete(d.users, "alice") })
	c.t = c.t.Add(time.Minute)
	if _, _, r := session(); r == nil || !strings.Contains(authCode(r), "no longer has") {
		t.Fatalf("alice removed: %v", r)
	}
	if r := refusal(s.Lookup(key.AccessKey)); r == nil {
		t.Fatal("alice's access key works after she was removed")
	}
	// Without a directory (LDAP unconfigured since) nothing of alice's
	// works.
	s3 := openStore(t, b, c, Options{})
	if r := refusal(s3.LookupSession(creds.AccessKey, creds.SessionToken)); r == nil {
		t.Fatal("LDAP session works without a directory")
	}
	if r := refusal(s3.Lookup(key.AccessKey)); r == nil {
		t.Fatal("LDAP access key works without a directory")
	}
}

// TestLDAPRecheckZero: with a zero interval every use asks.
func TestLDAPRecheckZero(t *testing.T) {
	ctx := context.Background()
	b, c := &memBackend{}, &clock{t: time.Unix(1_800_000_000, 0)}
	dir := &fakeDirectory{users: map[string]ldapidp.Identity{"alice": {Username: "alice", DN: aliceDN}}}
	s := openStore(t, b, c, Options{Directory: dir})
	if err := s.AttachLDAPPolicies(ctx, "root", aliceDN, []string{"readonly"}, true); err != nil {
		t.Fatal(err)
	}
	creds, err := s.AssumeRoleWithLDAP(ctx, LDAPRequest{Identity: dir.users["alice"]})
	if err != nil {
		t.Fatal(err)
	}
	before := dir.calls
	for range 3 {
		if r := refusal(s.LookupSession(creds.AccessKey, creds.SessionToken)); r != nil {
			t.Fatal(r)
		}
	}
	if dir.calls-before != 3 {
		t.Fatalf("3 uses asked the directory %d times", dir.calls-before)
	}
	dir.set(func(d *fakeDirectory) { delete(d.users, "alice") })
	if r := refusal(s.LookupSession(creds.AccessKey, creds.SessionToken)); r == nil {
		t.Fatal("session of a removed user works")
	}
}
