package main

import (
	"io"
	"net"
	"reflect"
	"testing"
)

func TestParseServerArgsFlagsAnywhere(t *testing.T) {
	o, err := parseServerArgs([]string{"/d{1...4}", "--address", "127.0.0.1:0", "/e", "--parity", "2", "--log-requests"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(o.drives, []string{"/d{1...4}", "/e"}) || o.address != "127.0.0.1:0" || o.parity != 2 || !o.logRequests {
		t.Fatalf("parsed %+v", o)
	}
	o, err = parseServerArgs(nil, io.Discard)
	if err != nil || o.address != defaultAddress || o.region != "us-east-1" || len(o.drives) != 0 {
		t.Fatalf("defaults %+v %v", o, err)
	}
	if _, err := parseServerArgs([]string{"--no-such-flag"}, io.Discard); err == nil {
		t.Fatal("unknown flag accepted")
	}
}

func TestRootIdentity(t *testing.T) {
	t.Setenv("SHARDSTORE_ROOT_USER", "")
	t.Setenv("SHARDSTORE_ROOT_PASSWORD", "")
	id, dev, err := rootIdentity()
	if err != nil || !dev || id.AccessKey != defaultRootUser || !id.Root {
		t.Fatalf("defaults: %+v %v %v", id, dev, err)
	}
	t.Setenv("SHARDSTORE_ROOT_USER", "admin")
	if _, _, err := rootIdentity(); err == nil {
		t.Fatal("user without password accepted")
	}
	t.Setenv("SHARDSTORE_ROOT_PASSWORD", "secret-secret")
	id, dev, err = rootIdentity()
	if err != nil || dev || id.AccessKey != "admin" || id.SecretKey != "secret-secret" {
		t.Fatalf("env: %+v %v %v", id, dev, err)
	}
}

func TestEndpointHost(t *testing.T) {
	cases := map[string]string{
		"127.0.0.1:9000": "127.0.0.1:9000",
		"0.0.0.0:9000":   "127.0.0.1:9000",
		"[::]:9000":      "127.0.0.1:9000",
		"[::1]:9000":     "[::1]:9000",
	}
	for in, want := range cases {
		a, err := net.ResolveTCPAddr("tcp", in)
		if err != nil {
			t.Fatal(err)
		}
		if got := endpointHost(a); got != want {
			t.Errorf("endpointHost(%s) = %s, want %s", in, got, want)
		}
	}
}
