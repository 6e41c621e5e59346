package jepsen

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/shardstore/shardstore/test/internal/serverbin"
)

var binary string

func TestMain(m *testing.M) {
	if b := os.Getenv("SHARDSTORE_BIN"); b != "" {
		binary = b
		os.Exit(m.Run())
	}
	// The test build: it honours the clock offset and drive faults the
	// clock-skew, slow-disk and failing-disk nemeses set (internal/
	// wallclock, internal/drivefault); without them set it runs the
	// release build's code.
	b, cleanup, err := serverbin.BuildTags("shardstore-jepsen-", "testhooks")
	if err != nil {
		fmt.Fprintln(os.Stderr, "shardstore-jepsen:", err)
		os.Exit(1)
	}
	binary = b
	code := m.Run()
	cleanup()
	os.Exit(code)
}

// seed is SHARDSTORE_JEPSEN_SEED, or the time.
func seed(t *testing.T) uint64 {
	if s := os.Getenv("SHARDSTORE_JEPSEN_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("SHARDSTORE_JEPSEN_SEED: %v", err)
		}
		return v
	}
	return uint64(time.Now().UnixNano())
}

func runAndReport(t *testing.T, cfg Config) *Result {
	t.Helper()
	cfg.Binary, cfg.Dir = binary, t.TempDir()
	cfg.Network = os.Getenv("SHARDSTORE_JEPSEN_NET")
	cfg.OutDir = os.Getenv("SHARDSTORE_JEPSEN_OUT")
	if s := os.Getenv("SHARDSTORE_JEPSEN_NEMESES"); s != "" {
		n, err := ParseNemeses(s)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Nemeses = n
	}
	cfg.Log = func(f string, a ...any) { t.Logf(f, a...) }
	t.Logf("seed %d (rerun with SHARDSTORE_JEPSEN_SEED=%d)", cfg.Seed, cfg.Seed)
	res, err := Run(cfg)
	if err != nil {
		t.Fatalf("harness: %v", err)
	}
	var b bytes.Buffer
	Report(&b, []*Result{res})
	t.Log("\n" + b.String())
	switch {
	case os.Getenv("SHARDSTORE_JEPSEN_STRICT") == "1" && len(res.Anomalies) > 0:
		t.Errorf("%d anomalies (seed %d; SHARDSTORE_JEPSEN_STRICT=1 counts the known ones too)", len(res.Anomalies), cfg.Seed)
	case len(res.Unexpected()) > 0:
		t.Errorf("%d anomalies of types not known before (seed %d)", len(res.Unexpected()), cfg.Seed)
	case len(res.Anomalies) > 0:
		t.Logf("%d anomalies, all of known types (KnownAnomalies; SHARDSTORE_JEPSEN_STRICT=1 fails on them)", len(res.Anomalies))
	}
	return res
}

// TestSlice is CI's slice: 5 nodes, the workloads for 75 s under a
// partition (one node isolated), a kill -9 and a partition into halves
// (a 2/3 split), then every check.
func TestSlice(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the fault slice runs a 5-node cluster for ~2.5 minutes")
	}
	runAndReport(t, Config{Seed: seed(t), Duration: 75 * time.Second, Nemeses: []string{NemIsolate, NemKill, NemHalves}})
}

// TestNightly is scripts/nightly's long run: runs of 5 minutes (a fresh
// cluster each, a new seed each) under every nemesis, composed, until
// SHARDSTORE_JEPSEN_MINUTES have passed, then one report of them all.
func TestNightly(t *testing.T) {
	m := os.Getenv("SHARDSTORE_JEPSEN_MINUTES")
	if m == "" {
		t.Skip("SHARDSTORE_JEPSEN_MINUTES is not set: the long run is scripts/nightly's")
	}
	minutes, err := strconv.Atoi(m)
	if err != nil || minutes <= 0 {
		t.Fatalf("SHARDSTORE_JEPSEN_MINUTES=%q: want a positive number of minutes", m)
	}
	runLen := 5 * time.Minute
	if minutes < 5 {
		runLen = time.Duration(minutes) * time.Minute
	}
	deadline := time.Now().Add(time.Duration(minutes) * time.Minute)
	base := seed(t)
	var results []*Result
	for i := 0; time.Now().Before(deadline); i++ {
		cfg := Config{Seed: base + uint64(i), Duration: runLen}
		t.Run(fmt.Sprintf("seed%d", cfg.Seed), func(t *testing.T) {
			results = append(results, runAndReport(t, cfg))
		})
	}
	var b bytes.Buffer
	Report(&b, results)
	fmt.Print(b.String())
}
