package main

import (
	"errors"
	"strings"
	"testing"

	"github.com/shardstore/shardstore/internal/cli"
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
