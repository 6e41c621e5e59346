package main

import (
	"io"
	"testing"
)

// TestLDAPFlags: the --identity-ldap-* flags default to
// SHARDSTORE_IDENTITY_LDAP_* then MINIO_IDENTITY_LDAP_*, a flag wins over
// both, and the lookup password is no flag (it would show in ps).
func TestLDAPFlags(t *testing.T) {
	t.Setenv("MINIO_IDENTITY_LDAP_SERVER_ADDR", "minio-ldap:636")
	t.Setenv("MINIO_IDENTITY_LDAP_USER_DN_SEARCH_FILTER", "(uid=%s)")
	t.Setenv("SHARDSTORE_IDENTITY_LDAP_USER_DN_SEARCH_FILTER", "(cn=%s)")
	t.Setenv("MINIO_IDENTITY_LDAP_LOOKUP_BIND_PASSWORD", "env-secret")
	t.Setenv("MINIO_IDENTITY_LDAP_SERVER_CA", "/not/ours") // ours only: no MinIO alias
	o, err := parseServerArgs([]string{"--identity-ldap-user-dn-search-base-dn", "ou=people,dc=x"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	got := o.ldap.settings()
	want := map[string]string{"SERVER_ADDR": "minio-ldap:636", "USER_DN_SEARCH_FILTER": "(cn=%s)",
		"LOOKUP_BIND_PASSWORD": "env-secret", "USER_DN_SEARCH_BASE_DN": "ou=people,dc=x"}
	if len(got) != len(want) {
		t.Fatalf("settings %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	o, err = parseServerArgs([]string{"--identity-ldap-server-addr", "flag-ldap:636"}, io.Discard)
	if err != nil || o.ldap.settings()["SERVER_ADDR"] != "flag-ldap:636" {
		t.Fatalf("flag over environment: %v %v", o.ldap.settings(), err)
	}
	if _, err := parseServerArgs([]string{"--identity-ldap-lookup-bind-password", "x"}, io.Discard); err == nil {
		t.Fatal("the lookup password is accepted as a flag")
	}
}
