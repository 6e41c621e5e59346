package main

import (
	"encoding/base64"
	"strings"
	"testing"
)

// loadKMS builds the key server the environment names: none, the
// built-in one, or Vault; both at once is refused, and a bad key is
// reported without echoing it.
func TestLoadKMS(t *testing.T) {
	key := "k1:" + base64.StdEncoding.EncodeToString([]byte(strings.Repeat("s", 32)))
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	cases := []struct {
		name    string
		vars    map[string]string
		kind    string // "" = no KMS
		wantErr string
	}{
		{"none", map[string]string{}, "", ""},
		{"builtin", map[string]string{"SHARDSTORE_KMS_SECRET_KEY": key}, "builtin", ""},
		{"minio spelling", map[string]string{"MINIO_KMS_SECRET_KEY": key}, "builtin", ""},
		{"vault", map[string]string{"SHARDSTORE_KMS_VAULT_ENDPOINT": "http://127.0.0.1:1", "SHARDSTORE_KMS_VAULT_KEY_NAME": "k",
			"SHARDSTORE_KMS_VAULT_TOKEN": "t0ken-value"}, "vault", ""},
		{"both", map[string]string{"SHARDSTORE_KMS_SECRET_KEY": key, "SHARDSTORE_KMS_VAULT_ENDPOINT": "http://127.0.0.1:1",
			"SHARDSTORE_KMS_VAULT_KEY_NAME": "k", "SHARDSTORE_KMS_VAULT_TOKEN": "t0ken-value"}, "", "set one"},
		{"short key", map[string]string{"SHARDSTORE_KMS_SECRET_KEY": "k1:c2hvcnQtc2VjcmV0"}, "", "built-in KMS"},
	}
	for _, c := range cases {
		k, err := loadKMS(env(c.vars), nil)
		switch {
		case c.wantErr != "":
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("%s: err %v, want one saying %q", c.name, err, c.wantErr)
			}
			if err != nil && (strings.Contains(err.Error(), "c2hvcnQtc2VjcmV0") || strings.Contains(err.Error(), "t0ken-value")) {
				t.Errorf("%s: the error echoes a secret: %v", c.name, err)
			}
		case err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.kind == "" && k != nil:
			t.Errorf("%s: a KMS from an empty environment", c.name)
		case c.kind != "" && (k == nil || k.Kind() != c.kind):
			t.Errorf("%s: got %v, want a %s KMS", c.name, k, c.kind)
		}
	}
}
