package cluster

import (
	"context"
	"strings"
	"testing"
)

func TestParseInterleavesNodes(t *testing.T) {
	top, err := Parse([]string{"http://127.0.0.1:{9000...9003}/data/d{1...4}"})
	if err != nil {
		t.Fatal(err)
	}
	if len(top.Nodes) != 4 || len(top.Drives) != 16 {
		t.Fatalf("nodes %v drives %d", top.Nodes, len(top.Drives))
	}
	// Slot order cycles through the nodes.
	for i, d := range top.Drives {
		if d.Node != i%4 || d.Path != "/data/d"+string(rune('1'+i/4)) {
			t.Fatalf("slot %d = %+v", i, d)
		}
	}
	if got := top.Endpoint(5); got != "http://127.0.0.1:9001/data/d2" {
		t.Fatalf("endpoint 5 = %s", got)
	}
	// Sets of 8 take 2 drives from each node; sets of 16, 4.
	for _, tc := range []struct{ size, most int }{{8, 2}, {16, 4}, {4, 1}} {
		for s, most := range top.SetSpread(tc.size) {
			if most != tc.most {
				t.Fatalf("set size %d: set %d has %d drives on one node, want %d", tc.size, s, most, tc.most)
			}
		}
	}
}

func TestParseRefuses(t *testing.T) {
	for arg, want := range map[string]string{
		"http://127.0.0.1:9000/d{1...4}":        "all drives are on one node",
		"ftp://n{1...2}:9000/d1":                "scheme must be http:// or https://",
		"https://n{1...2}:9000/d1":              "",
		"http://n{1...2}/d1":                    "host and port",
		"http://n{1...2}:9000/":                 "absolute",
		"http://n{1...2}:9000/d?x=1":            "only http://HOST:PORT/PATH",
		"https://n1:9000/d?x=1":                 "only https://HOST:PORT/PATH",
		"http://user@n{1...2}:9000/d":           "only http://HOST:PORT/PATH",
		"http://n{1...2}:70000/d":               "bad port",
		"http://n{1...2}:9000/d{1...2}{1...1}x": "",
	} {
		_, err := Parse([]string{arg})
		if want == "" {
			if err != nil {
				t.Errorf("%s: %v", arg, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err %v, want %q", arg, err, want)
		}
	}
}

// TestParseTLS: https endpoints, one scheme for all nodes, ids that do
// not depend on the scheme.
func TestParseTLS(t *testing.T) {
	top, err := Parse([]string{"https://Node{1...2}:9000/d{1...2}"})
	if err != nil {
		t.Fatal(err)
	}
	if top.Scheme != "https" || top.Nodes[1] != "https://node2:9000" || top.Host(1) != "node2:9000" || top.ID(1) != "http://node2:9000" {
		t.Fatalf("scheme %q nodes %v host %q id %q", top.Scheme, top.Nodes, top.Host(1), top.ID(1))
	}
	plain, _ := Parse([]string{"http://node{1...2}:9000/d{1...2}"})
	if plain.ID(1) != top.ID(1) {
		t.Fatalf("ids differ by scheme: %q %q", plain.ID(1), top.ID(1))
	}
	_, err = Parse([]string{"https://node1:9000/d{1...2}", "http://node2:9000/d{1...2}"})
	if err == nil || !strings.Contains(err.Error(), "same scheme") {
		t.Fatalf("mixed schemes: %v", err)
	}
}

func TestFindSelf(t *testing.T) {
	top, err := Parse([]string{"http://127.0.0.1:{9000...9002}/d{1...2}", "http://192.0.2.1:9000/d{1...2}"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if n, err := top.FindSelf(ctx, "127.0.0.1:9001", true); err != nil || n != 1 {
		t.Fatalf("FindSelf 9001 = %d, %v", n, err)
	}
	if n, err := top.FindSelf(ctx, ":9002", true); err != nil || n != 2 {
		t.Fatalf("FindSelf :9002 = %d, %v", n, err)
	}
	// Three loopback nodes: without --address it cannot tell which.
	if _, err := top.FindSelf(ctx, "127.0.0.1:9000", false); err == nil || !strings.Contains(err.Error(), "several nodes") {
		t.Fatalf("ambiguous: %v", err)
	}
	// 192.0.2.1 (TEST-NET) is not this machine.
	if _, err := top.FindSelf(ctx, "127.0.0.1:9009", true); err == nil || !strings.Contains(err.Error(), "none of the 4 nodes") {
		t.Fatalf("no match: %v", err)
	}
}

func TestHelloDifferences(t *testing.T) {
	top, _ := Parse([]string{"http://127.0.0.1:{9000...9001}/d{1...2}"})
	a := HelloFor(top, 0, 0, 0, "v1")
	b := HelloFor(top, 1, 0, 0, "v1")
	if d := a.Differences(b); len(d) != 0 {
		t.Fatalf("same layout differs: %v", d)
	}
	other, _ := Parse([]string{"http://127.0.0.1:{9000...9001}/e{1...2}"})
	c := HelloFor(other, 1, 4, 2, "v2")
	c.Protocol += 2 // a release two protocols away (an adjacent one serves together: version_test.go)
	d := strings.Join(a.Differences(c), "\n")
	for _, want := range []string{"drive 1 is http://127.0.0.1:9000/e1 there but http://127.0.0.1:9000/d1 here", "--set-size is 4 there and 0 here", "--parity is 2 there", "release v2"} {
		if !strings.Contains(d, want) {
			t.Errorf("differences %q lack %q", d, want)
		}
	}
}

func TestParseRoutes(t *testing.T) {
	r, err := ParseRoutes(" 127.0.0.1:9001=127.0.0.1:19001, node2:9000=10.0.0.2:9000 ,")
	if err != nil {
		t.Fatal(err)
	}
	if len(r) != 2 || r["127.0.0.1:9001"] != "127.0.0.1:19001" || r["node2:9000"] != "10.0.0.2:9000" {
		t.Fatalf("routes %v", r)
	}
	if r, err := ParseRoutes(""); err != nil || len(r) != 0 {
		t.Fatalf("empty: %v %v", r, err)
	}
	for _, bad := range []string{"127.0.0.1:1", "a:1=b", "a=b:1", "a:1=b:2,a:1=c:3"} {
		if _, err := ParseRoutes(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
