package main

import (
	"io"
	"strings"
	"testing"
)

// TestDevCredentialsRefused: the development credentials serve on
// loopback only, unless the operator says otherwise.
func TestDevCredentialsRefused(t *testing.T) {
	for _, c := range []struct {
		args      []string
		clustered bool
		env       string
		refused   string // what the refusal names; "" = allowed
	}{
		{args: []string{"--address", "127.0.0.1:9000"}},
		{args: []string{"--address", "localhost:9000"}},
		{args: []string{"--address", "[::1]:9000", "--console-address", "127.0.0.1:9001"}},
		{args: []string{"--address", ":9000"}, refused: ":9000"},
		{args: []string{"--address", "0.0.0.0:9000"}, refused: "0.0.0.0:9000"},
		{args: []string{"--address", "192.0.2.7:9000"}, refused: "192.0.2.7:9000"},
		{args: []string{"--console-address", "0.0.0.0:9001"}, refused: "0.0.0.0:9001 (the console)"},
		{args: []string{"--console-address", ""}},
		{args: nil, clustered: true, refused: "every interface"},
		{args: []string{"--address", "127.0.0.1:9100"}, clustered: true},
		{args: []string{"--address", ":9000", "--allow-default-credentials"}},
		{args: []string{"--address", ":9000"}, env: "1"},
	} {
		t.Setenv("SHARDSTORE_ALLOW_DEFAULT_CREDENTIALS", c.env)
		o, err := parseServerArgs(c.args, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		err = checkDevCredentials(o, c.clustered)
		switch {
		case c.refused == "" && err != nil:
			t.Errorf("%v (cluster %v): %v", c.args, c.clustered, err)
		case c.refused != "" && (err == nil || !strings.Contains(err.Error(), c.refused) || !strings.Contains(err.Error(), "--allow-default-credentials")):
			t.Errorf("%v (cluster %v): err %v, want a refusal naming %q", c.args, c.clustered, err, c.refused)
		}
	}
}

// TestTLSEnvironment: where the certificates directory and the metrics
// access come from.
func TestTLSEnvironment(t *testing.T) {
	env := func(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }
	if d, chosen := defaultCertsDir(env(map[string]string{"MINIO_CERTS_DIR": "/m", "SHARDSTORE_CERTS_DIR": "/s"})); d != "/s" || !chosen {
		t.Fatalf("SHARDSTORE_CERTS_DIR first: %q %v", d, chosen)
	}
	if d, chosen := defaultCertsDir(env(map[string]string{"MINIO_CERTS_DIR": "/m"})); d != "/m" || !chosen {
		t.Fatalf("MINIO_CERTS_DIR: %q %v", d, chosen)
	}
	if d, chosen := defaultCertsDir(env(nil)); !strings.HasSuffix(d, "/.shardstore/certs") || chosen {
		t.Fatalf("default: %q %v", d, chosen)
	}
	if certPassword(env(map[string]string{"MINIO_CERT_PASSWD": "m", "SHARDSTORE_CERT_PASSWD": "s"})) != "s" || certPassword(env(map[string]string{"MINIO_CERT_PASSWD": "m"})) != "m" {
		t.Fatal("certificate password")
	}
	for kv, want := range map[[2]string]bool{
		{"", ""}: false, {"SHARDSTORE_PROMETHEUS_AUTH_TYPE", "public"}: true, {"MINIO_PROMETHEUS_AUTH_TYPE", "Public"}: true,
		{"MINIO_PROMETHEUS_AUTH_TYPE", "jwt"}: false, {"SHARDSTORE_PROMETHEUS_AUTH_TYPE", "anything"}: false,
	} {
		if got := metricsPublicDefault(env(map[string]string{kv[0]: kv[1]})); got != want {
			t.Errorf("%s=%s: public %v", kv[0], kv[1], got)
		}
	}
	o, err := parseServerArgs([]string{"-S", "/certs", "/d{1...4}"}, io.Discard)
	if err != nil || o.certsDir != "/certs" || !o.certsChosen {
		t.Fatalf("-S: %+v %v", o, err)
	}
}
