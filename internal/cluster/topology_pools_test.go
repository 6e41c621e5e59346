package cluster

import (
	"fmt"
	"strings"
	"testing"
)

func TestParsePools(t *testing.T) {
	top, err := Parse([]string{"http://n{1...4}:9000/d{1...4}", "http://n{5...8}:9000/d{1...8}"})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(top.Pools) != "[16 32]" || len(top.Nodes) != 8 || len(top.Drives) != 48 {
		t.Fatalf("pools %v, %d nodes, %d drives; want [16 32], 8, 48", top.Pools, len(top.Nodes), len(top.Drives))
	}
	// Each pool's drives come after the previous pool's, interleaved
	// over that pool's nodes.
	for i := 0; i < 16; i++ {
		if top.Drives[i].Node != i%4 {
			t.Fatalf("pool 1 slot %d is on node %d, want %d", i, top.Drives[i].Node+1, i%4+1)
		}
	}
	for i := 16; i < 48; i++ {
		if want := 4 + (i-16)%4; top.Drives[i].Node != want {
			t.Fatalf("pool 2 slot %d is on node %d, want %d", i, top.Drives[i].Node+1, want+1)
		}
	}
	// A pool may add drives on nodes of an earlier pool.
	top, err = Parse([]string{"http://n{1...2}:9000/a{1...2}", "http://n{1...4}:9000/b{1...2}"})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(top.Pools) != "[4 8]" || len(top.Nodes) != 4 {
		t.Fatalf("pools %v, %d nodes", top.Pools, len(top.Nodes))
	}
	// Arguments naming one node each are one pool, with or without
	// ellipses in their paths (a cluster written node by node).
	for _, args := range [][]string{
		{"http://a:9000/d1", "http://b:9000/d1"},
		{"http://a:9000/d{1...4}", "http://b:9000/d{1...4}"},
	} {
		top, err = Parse(args)
		if err != nil || len(top.Pools) != 1 {
			t.Fatalf("Parse(%q): pools %v, %v; want one pool", args, top.Pools, err)
		}
	}
	// Per-node arguments naming a node again start the next pool; plain
	// drives (no ellipses) of one node stay in their pool.
	top, err = Parse([]string{"http://a:9000/x/d{1...2}", "http://b:9000/x/d{1...2}", "http://a:9000/y/d{1...4}", "http://b:9000/y/d{1...4}"})
	if err != nil || fmt.Sprint(top.Pools) != "[4 8]" {
		t.Fatalf("two pools written node by node: %v, %v", top.Pools, err)
	}
	top, err = Parse([]string{"http://a:9000/d1", "http://a:9000/d2", "http://b:9000/d1", "http://b:9000/d2"})
	if err != nil || fmt.Sprint(top.Pools) != "[4]" {
		t.Fatalf("plain drives, two per node: %v, %v", top.Pools, err)
	}
	// A pool spanning nodes after per-node arguments is a pool of its own.
	top, err = Parse([]string{"http://a:9000/d{1...2}", "http://b:9000/d{1...2}", "http://n{1...2}:9000/e{1...2}"})
	if err != nil || fmt.Sprint(top.Pools) != "[4 4]" {
		t.Fatalf("per-node arguments, then a pool: %v, %v", top.Pools, err)
	}
	for _, bad := range [][]string{
		{"http://n{1...2}:9000/d{1...2}", "http://n{1...2}:9000/d{1...2}"}, // a pool given twice
		{"http://n{1...2}:9000/d{1...2}", "https://m{1...2}:9000/d{1...2}"},
		{"http://n{1...2}:9000/d{1...2}", "http://m{1...2}:9000/d{1..2}"},
	} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q) accepted", bad)
		} else if !strings.HasPrefix(err.Error(), "cluster:") {
			t.Errorf("Parse(%q): %v, want a cluster: error", bad, err)
		}
	}
}
