package main

import (
	"errors"
	"strings"
	"testing"

	"github.com/shardstore/shardstore/internal/admin"
	"github.com/shardstore/shardstore/internal/cli"
	"github.com/shardstore/shardstore/internal/engine"
)

// TestAdminRebalanceArgs: bad rebalance and throttle command lines are
// refused as usage errors before any server is called (the endpoint is
// one nothing listens on).
func TestAdminRebalanceArgs(t *testing.T) {
	for _, args := range [][]string{
		{"rebalance"},
		{"rebalance", "go"},
		{"rebalance", "start", "--threshold", "150%"},
		{"rebalance", "start", "--threshold", "0"},
		{"rebalance", "start", "--threshold", "NaN"},
		{"rebalance", "start", "extra"},
		{"rebalance", "status", "--threshold", "5%"},
		{"throttle", "--bandwidth", "-5MiB"},
		{"throttle", "--bandwidth", "1.5G"},
		{"throttle", "--objects", "-1"},
		{"throttle", "--objects", "Inf"},
		{"throttle", "now"},
		{"throttle", "--adaptive", "maybe"},
		{"throttle", "--adaptive", " "},
		{"throttle", "--adaptive", "yes"},
		{"throttle", "--adaptive", "on\x00"},
		{"bogus"},
	} {
		err := runAdminPool(append(args, "--endpoint", "http://127.0.0.1:1"))
		var ue *cli.UsageError
		if !errors.As(err, &ue) {
			t.Errorf("admin pool %s: %v, want a usage error", strings.Join(args, " "), err)
		}
	}
}

// TestPrintPoolStatusExpansion: admin pool status says whether an
// expansion is under way (the pools that take new keys and those that
// join) or complete, and nothing of one for a single pool or an engine
// that cannot say.
func TestPrintPoolStatusExpansion(t *testing.T) {
	for _, c := range []struct {
		x    *engine.Expansion
		want string
	}{
		{nil, ""},
		{&engine.Expansion{Pools: 1, NewKeyPools: 1, State: engine.ExpansionComplete}, ""},
		{&engine.Expansion{Pools: 2, NewKeyPools: 2, State: engine.ExpansionComplete}, "expansion complete: all 2 pools take new keys\n"},
		{&engine.Expansion{Pools: 2, NewKeyPools: 1, State: engine.ExpansionUnderWay}, "expansion under way: pool 1 takes new keys; pool 2 joins once every node runs with the new pool list\n"},
		{&engine.Expansion{Pools: 5, NewKeyPools: 2, State: engine.ExpansionUnderWay}, "expansion under way: pools 1-2 take new keys; pools 3-5 join once every node runs with the new pool list\n"},
	} {
		var b strings.Builder
		printPoolStatus(&b, admin.PoolStatusReply{Expansion: c.x})
		if b.String() != c.want {
			t.Errorf("expansion %+v printed %q, want %q", c.x, b.String(), c.want)
		}
	}
}
