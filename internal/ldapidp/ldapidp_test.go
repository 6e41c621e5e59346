package ldapidp_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/go-ldap/ldap/v3"

	"github.com/shardstore/shardstore/internal/ldapidp"
	"github.com/shardstore/shardstore/internal/ldapidp/slapdtest"
)

// hostileNames are user names that would change a filter's meaning if
// they were pasted into it unescaped.
var hostileNames = []string{
	"*", ")(uid=*", "alice)(|(uid=*", "*)(objectClass=*", `\`, `alice\2a`, "(", ")",
	"alice*", "a\x00", "uid=alice,ou=people,dc=example,dc=org", "é*", strings.Repeat("a", 300),
}

func TestUserFilterEscapes(t *testing.T) {
	tests := []struct{ name, want string }{
		{"alice", "(uid=alice)"},
		{"*", `(uid=\2a)`},
		{")(uid=*", `(uid=\29\28uid=\2a)`},
		{`a\b`, `(uid=a\5cb)`},
		{"a\x00b", `(uid=a\00b)`},
		{"é", `(uid=\c3\a9)`},
		{"%s", "(uid=%s)"}, // a name is substituted once, never again
	}
	for _, tc := range tests {
		if got := ldapidp.UserFilter("(uid=%s)", tc.name); got != tc.want {
			t.Errorf("UserFilter(%q) = %q, want %q", tc.name, got, tc.want)
		}
	}
	if got := ldapidp.GroupFilter("(&(member=%d)(memberUid=%s))", "a*", "uid=a*,dc=x"); got != `(&(member=uid=a\2a,dc=x)(memberUid=a\2a))` {
		t.Errorf("GroupFilter = %q", got)
	}
}

// TestUserFilterStaysOneEquality: whatever the name, the compiled filter
// is the configured one with a single literal value in place of %s.
func TestUserFilterStaysOneEquality(t *testing.T) {
	for _, n := range hostileNames {
		checkOneEquality(t, n)
	}
}

func checkOneEquality(t *testing.T, name string) {
	t.Helper()
	f := ldapidp.UserFilter("(&(objectClass=person)(uid=%s))", name)
	p, err := ldap.CompileFilter(f)
	if err != nil {
		t.Fatalf("name %q: filter %q does not compile: %v", name, f, err)
	}
	if len(p.Children) != 2 {
		t.Fatalf("name %q: filter %q has %d terms, want 2", name, f, len(p.Children))
	}
	back, err := ldap.DecompileFilter(p)
	if err != nil {
		t.Fatal(err)
	}
	if back != f {
		t.Fatalf("name %q: filter %q compiles to %q", name, f, back)
	}
	uid := p.Children[1]
	if uid.Tag != ldap.FilterEqualityMatch || len(uid.Children) != 2 || string(uid.Children[1].Data.Bytes()) != name {
		t.Fatalf("name %q: filter %q is not (uid=<the name>)", name, f)
	}
}

func FuzzUserFilter(f *testing.F) {
	for _, n := range hostileNames {
		f.Add(n)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if ldapidp.CheckUsername(name) != nil {
			return
		}
		checkOneEquality(t, name)
	})
}

func TestCheckUsername(t *testing.T) {
	for _, n := range []string{"", "a\x00", "a\nb", "\x7f", strings.Repeat("a", ldapidp.MaxUsername+1), "\xff"} {
		if err := ldapidp.CheckUsername(n); !errors.Is(err, ldapidp.ErrInvalidCredentials) {
			t.Errorf("CheckUsername(%q) = %v, want ErrInvalidCredentials", n, err)
		}
	}
	for _, n := range []string{"alice", "*", ")(uid=*", "Jörg Müller", strings.Repeat("a", ldapidp.MaxUsername)} {
		if err := ldapidp.CheckUsername(n); err != nil {
			t.Errorf("CheckUsername(%q) = %v", n, err)
		}
	}
}

func TestNormalizeDN(t *testing.T) {
	same := []string{"uid=alice,ou=people,dc=example,dc=org", "UID=Alice, OU=People, DC=Example, DC=org", " uid=alice ,ou=people,dc=example,dc=org"}
	want, err := ldapidp.NormalizeDN(same[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, dn := range same {
		if got, err := ldapidp.NormalizeDN(dn); err != nil || got != want {
			t.Errorf("NormalizeDN(%q) = %q, %v; want %q", dn, got, err, want)
		}
	}
	for _, bad := range []string{"", " ", "alice", "uid", "=x", "uid=a,,dc=x", "uid=a\\", strings.Repeat("(", 10)} {
		if got, err := ldapidp.NormalizeDN(bad); err == nil {
			t.Errorf("NormalizeDN(%q) = %q, want an error", bad, got)
		}
	}
	// An escaped comma stays part of the value.
	got, err := ldapidp.NormalizeDN(`cn=Smith\, John,dc=x`)
	if err != nil || got != `cn=smith\, john,dc=x` {
		t.Errorf("escaped comma: %q, %v", got, err)
	}
}

func FuzzNormalizeDN(f *testing.F) {
	for _, s := range []string{"uid=a,dc=x", `cn=a\,b,dc=x`, "cn=#04024869", "=", "a=b+c=d,e=f"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, dn string) {
		n, err := ldapidp.NormalizeDN(dn)
		if err != nil {
			return
		}
		// Normal forms are fixed points.
		n2, err := ldapidp.NormalizeDN(n)
		if err != nil || n2 != n {
			t.Fatalf("NormalizeDN(%q) = %q, whose normal form is %q, %v", dn, n, n2, err)
		}
	})
}

func validSettings() map[string]string {
	return map[string]string{
		"SERVER_ADDR": "ldap.example.org:636", "LOOKUP_BIND_DN": "cn=lookup,dc=example,dc=org", "LOOKUP_BIND_PASSWORD": "pw",
		"USER_DN_SEARCH_BASE_DN": "ou=people,dc=example,dc=org", "USER_DN_SEARCH_FILTER": "(uid=%s)",
	}
}

func TestParse(t *testing.T) {
	if _, ok, err := ldapidp.Parse(map[string]string{}, nil); ok || err != nil {
		t.Fatalf("no settings: ok %v err %v", ok, err)
	}
	cfg, ok, err := ldapidp.Parse(validSettings(), nil)
	if !ok || err != nil || cfg.Addr != "ldap.example.org:636" || cfg.Recheck != ldapidp.DefaultRecheck {
		t.Fatalf("valid: %+v %v %v", cfg, ok, err)
	}
	bare := validSettings()
	bare["SERVER_ADDR"], bare["SERVER_STARTTLS"] = "ldap.example.org", "on"
	if cfg, _, err := ldapidp.Parse(bare, nil); err != nil || cfg.Addr != "ldap.example.org:389" || !cfg.StartTLS {
		t.Fatalf("bare host with StartTLS: %+v %v", cfg, err)
	}
	multi := validSettings()
	multi["USER_DN_SEARCH_BASE_DN"] = "ou=a,dc=x; ou=b,dc=x"
	if cfg, _, err := ldapidp.Parse(multi, nil); err != nil || !slices.Equal(cfg.UserBases, []string{"ou=a,dc=x", "ou=b,dc=x"}) {
		t.Fatalf("two bases: %+v %v", cfg.UserBases, err)
	}
	bad := []map[string]string{
		{"LOOKUP_BIND_DN": "cn=x"}, // something set but no server
		{"SERVER_ADDR": "h:0"},
		{"SERVER_ADDR": "h:99999"},
		{"SERVER_ADDR": ":636"},
		{"SERVER_ADDR": "ldap://h:636"},
		{"LOOKUP_BIND_PASSWORD": ""},
		{"LOOKUP_BIND_DN": ""},
		{"USER_DN_SEARCH_BASE_DN": ""},
		{"USER_DN_SEARCH_BASE_DN": "not a dn"},
		{"USER_DN_SEARCH_FILTER": "(uid=alice)"},
		{"USER_DN_SEARCH_FILTER": "uid=%s"},
		{"USER_DN_SEARCH_FILTER": "(uid=%s))("},
		{"USER_DN_SEARCH_FILTER": "(&(uid=%s)"},
		{"GROUP_SEARCH_FILTER": "(member=%d)"}, // without a base
		{"GROUP_SEARCH_BASE_DN": "ou=g,dc=x"},  // without a filter
		{"GROUP_SEARCH_BASE_DN": "ou=g,dc=x", "GROUP_SEARCH_FILTER": "member=%d"},
		{"SERVER_INSECURE": "maybe"},
		{"SERVER_INSECURE": "on", "SERVER_STARTTLS": "on"},
		{"SERVER_CA": "/nonexistent/ca.pem"},
		{"RECHECK_INTERVAL": "-1s"},
		{"RECHECK_INTERVAL": "2h"},
		{"RECHECK_INTERVAL": "soon"},
	}
	for _, change := range bad {
		s := validSettings()
		if _, isAddrOnly := change["LOOKUP_BIND_DN"]; isAddrOnly && len(change) == 1 && change["LOOKUP_BIND_DN"] != "" {
			s = map[string]string{}
		}
		for k, v := range change {
			s[k] = v
		}
		if _, _, err := ldapidp.Parse(s, nil); !errors.Is(err, ldapidp.ErrConfig) {
			t.Errorf("Parse with %v: %v, want ErrConfig", change, err)
		} else if strings.Contains(err.Error(), "pw") && s["LOOKUP_BIND_PASSWORD"] == "pw" && !strings.Contains(err.Error(), "PASSWORD") {
			t.Errorf("Parse with %v: the error %q shows the password", change, err)
		}
	}
}

func TestEnvPrefersOurs(t *testing.T) {
	env := map[string]string{
		"MINIO_IDENTITY_LDAP_SERVER_ADDR":      "minio:636",
		"SHARDSTORE_IDENTITY_LDAP_SERVER_ADDR": "ours:636",
		"MINIO_IDENTITY_LDAP_LOOKUP_BIND_DN":   "cn=m",
	}
	got := ldapidp.Env(func(k string) string { return env[k] })
	if got["SERVER_ADDR"] != "ours:636" || got["LOOKUP_BIND_DN"] != "cn=m" || len(got) != 2 {
		t.Fatalf("Env = %v", got)
	}
	if ldapidp.FlagName("USER_DN_SEARCH_FILTER") != "identity-ldap-user-dn-search-filter" {
		t.Fatal(ldapidp.FlagName("USER_DN_SEARCH_FILTER"))
	}
}

// directory returns a Directory over a real slapd.
func directory(t *testing.T, srv *slapdtest.Server, startTLS bool) *ldapidp.Directory {
	t.Helper()
	cfg, ok, err := ldapidp.Parse(srv.Settings(startTLS), nil)
	if !ok || err != nil {
		t.Fatalf("settings: %v", err)
	}
	return ldapidp.New(cfg)
}

func TestSlapd(t *testing.T) {
	srv := slapdtest.Start(t)
	ctx := context.Background()
	for _, startTLS := range []bool{false, true} {
		name := "LDAPS"
		if startTLS {
			name = "StartTLS"
		}
		t.Run(name, func(t *testing.T) {
			d := directory(t, srv, startTLS)
			id, err := d.Authenticate(ctx, "alice", slapdtest.Password("alice"))
			if err != nil {
				t.Fatalf("alice: %v", err)
			}
			if id.DN != "uid=alice,ou=people,dc=example,dc=org" || !slices.Equal(id.Groups, []string{"cn=readers,ou=groups,dc=example,dc=org"}) {
				t.Fatalf("alice: %+v", id)
			}
			// Any case of the name finds the entry (uid matches ignoring
			// case); the DN is the directory's.
			if id, err := d.Authenticate(ctx, "ALICE", slapdtest.Password("alice")); err != nil || id.DN != "uid=alice,ou=people,dc=example,dc=org" {
				t.Fatalf("ALICE: %+v %v", id, err)
			}
			refused := map[string]string{
				"wrong password": "bob",
				"disabled":       "carol",
				"no such user":   "nobody",
			}
			for why, user := range refused {
				pw := slapdtest.Password(user)
				if why == "wrong password" {
					pw = "not-" + pw
				}
				if _, err := d.Authenticate(ctx, user, pw); !errors.Is(err, ldapidp.ErrInvalidCredentials) {
					t.Errorf("%s (%s): %v, want ErrInvalidCredentials", why, user, err)
				} else if strings.Contains(err.Error(), pw) {
					t.Errorf("%s: the error %q shows the password", why, err)
				}
			}
			if _, err := d.Authenticate(ctx, "alice", ""); !errors.Is(err, ldapidp.ErrInvalidCredentials) {
				t.Errorf("empty password: %v", err)
			}
			for _, n := range hostileNames {
				// Every hostile name with a real user's password: a filter
				// that matched more than the literal name would find
				// alice's entry and the bind would succeed.
				if id, err := d.Authenticate(ctx, n, slapdtest.Password("alice")); !errors.Is(err, ldapidp.ErrInvalidCredentials) {
					t.Errorf("hostile name %q: %+v %v, want ErrInvalidCredentials", n, id, err)
				}
				if id, err := d.Lookup(ctx, n); !errors.Is(err, ldapidp.ErrInvalidCredentials) {
					t.Errorf("lookup of hostile name %q: %+v %v", n, id, err)
				}
			}
			if id, err := d.Lookup(ctx, "bob"); err != nil || !slices.Equal(id.Groups, []string{"cn=writers,ou=groups,dc=example,dc=org"}) {
				t.Fatalf("lookup bob: %+v %v", id, err)
			}
			if id, err := d.Lookup(ctx, "dave"); err != nil || len(id.Groups) != 0 {
				t.Fatalf("lookup dave: %+v %v", id, err)
			}
		})
	}

	t.Run("untrusted certificate", func(t *testing.T) {
		s := srv.Settings(false)
		delete(s, "SERVER_CA")
		cfg, _, err := ldapidp.Parse(s, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ldapidp.New(cfg).Authenticate(ctx, "alice", slapdtest.Password("alice")); !errors.Is(err, ldapidp.ErrUnavailable) {
			t.Fatalf("without the test CA: %v, want ErrUnavailable", err)
		}
		s["TLS_SKIP_VERIFY"] = "on"
		cfg, _, _ = ldapidp.Parse(s, nil)
		if _, err := ldapidp.New(cfg).Authenticate(ctx, "alice", slapdtest.Password("alice")); err != nil {
			t.Fatalf("TLS_SKIP_VERIFY: %v", err)
		}
	})

	t.Run("wrong lookup password", func(t *testing.T) {
		s := srv.Settings(false)
		s["LOOKUP_BIND_PASSWORD"] = "wrong-lookup-pw"
		cfg, _, _ := ldapidp.Parse(s, nil)
		_, err := ldapidp.New(cfg).Authenticate(ctx, "alice", slapdtest.Password("alice"))
		if !errors.Is(err, ldapidp.ErrUnavailable) || strings.Contains(err.Error(), "wrong-lookup-pw") {
			t.Fatalf("bad lookup password: %v", err)
		}
	})

	t.Run("changes and outage", func(t *testing.T) {
		d := directory(t, srv, false)
		srv.SetMember("writers", "alice", true)
		if id, err := d.Lookup(ctx, "alice"); err != nil || len(id.Groups) != 2 {
			t.Fatalf("alice after joining writers: %+v %v", id, err)
		}
		srv.SetMember("writers", "alice", false)
		srv.SetDisabled("dave", true)
		if _, err := d.Lookup(ctx, "dave"); !errors.Is(err, ldapidp.ErrInvalidCredentials) {
			t.Fatalf("dave disabled: %v", err)
		}
		srv.SetDisabled("dave", false)
		srv.Stop()
		if _, err := d.Authenticate(ctx, "alice", slapdtest.Password("alice")); !errors.Is(err, ldapidp.ErrUnavailable) {
			t.Fatalf("slapd stopped: %v, want ErrUnavailable", err)
		}
		srv.Restart()
		if _, err := d.Lookup(ctx, "dave"); err != nil {
			t.Fatalf("after restart: %v", err)
		}
		srv.DeleteUser("dave")
		if _, err := d.Lookup(ctx, "dave"); !errors.Is(err, ldapidp.ErrInvalidCredentials) {
			t.Fatalf("dave deleted: %v", err)
		}
	})
}

// FuzzParse: any settings parse or fail with ErrConfig, never panic,
// and an error never shows the lookup password.
func FuzzParse(f *testing.F) {
	f.Add("ldap.example.org:636", "(uid=%s)", "ou=p,dc=x", "", "", "on", "1m")
	f.Add("h", "(&(uid=%s)(!(x=y)))", "ou=a,dc=x;ou=b,dc=x", "ou=g,dc=x", "(member=%d)", "off", "0s")
	f.Fuzz(func(t *testing.T, addr, userFilter, userBase, groupBase, groupFilter, startTLS, recheck string) {
		const pw = "fuzz-lookup-secret"
		s := map[string]string{"SERVER_ADDR": addr, "USER_DN_SEARCH_FILTER": userFilter, "USER_DN_SEARCH_BASE_DN": userBase,
			"GROUP_SEARCH_BASE_DN": groupBase, "GROUP_SEARCH_FILTER": groupFilter, "SERVER_STARTTLS": startTLS,
			"RECHECK_INTERVAL": recheck, "LOOKUP_BIND_DN": "cn=lookup,dc=x", "LOOKUP_BIND_PASSWORD": pw}
		cfg, ok, err := ldapidp.Parse(s, nil)
		switch {
		case err != nil:
			if !errors.Is(err, ldapidp.ErrConfig) {
				t.Fatalf("error %v is not ErrConfig", err)
			}
			if strings.Contains(err.Error(), pw) {
				t.Fatalf("error shows the password: %v", err)
			}
		case ok:
			if cfg.Addr == "" || len(cfg.UserBases) == 0 || !strings.Contains(cfg.UserFilter, "%s") || cfg.Recheck < 0 {
				t.Fatalf("accepted an incomplete configuration: %+v", cfg)
			}
		}
	})
}

// TestSlapdPool: lookup connections are reused across sign-ins and
// lookups (a wrong password leaves the connection rebound as the lookup
// account, so it is reused too), concurrent calls open at most one each,
// and a restarted slapd (the pooled connections dropped) costs nothing
// but new connections.
func TestSlapdPool(t *testing.T) {
	srv := slapdtest.Start(t)
	ctx := context.Background()
	d := directory(t, srv, false)
	t.Cleanup(d.Close)
	for i := range 5 {
		if _, err := d.Authenticate(ctx, "alice", slapdtest.Password("alice")); err != nil {
			t.Fatalf("sign-in %d: %v", i, err)
		}
	}
	if _, err := d.Authenticate(ctx, "bob", "wrong"); !errors.Is(err, ldapidp.ErrInvalidCredentials) {
		t.Fatalf("wrong password: %v", err)
	}
	if id, err := d.Lookup(ctx, "bob"); err != nil || !slices.Equal(id.Groups, []string{"cn=writers,ou=groups,dc=example,dc=org"}) {
		t.Fatalf("lookup after a wrong password: %+v %v", id, err)
	}
	if st := d.Stats(); st.Opened != 1 || st.Reused != 6 || st.Idle != 1 {
		t.Fatalf("after 7 sequential calls: %+v, want 1 opened, 6 reused", st)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := d.Lookup(ctx, "alice"); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("concurrent lookup: %v", err)
	}
	if st := d.Stats(); st.Opened > 9 || st.Idle > 4 || st.Opened+st.Reused != 15 {
		t.Fatalf("after 8 concurrent lookups: %+v", st)
	}
	srv.Stop()
	srv.Restart()
	if _, err := d.Lookup(ctx, "alice"); err != nil {
		t.Fatalf("after slapd restarted: %v", err)
	}
	if _, err := d.Authenticate(ctx, "alice", slapdtest.Password("alice")); err != nil {
		t.Fatalf("sign-in after slapd restarted: %v", err)
	}
}
