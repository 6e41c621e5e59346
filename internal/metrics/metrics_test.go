package metrics

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/shardstore/shardstore/internal/engine"
	"github.com/shardstore/shardstore/internal/hashing"
)

func TestObserve(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := NewPutPhases(reg)
	if err != nil {
		t.Fatal(err)
	}
	m.Observe(engine.PutPhases{Bytes: 1000, Backend: "pipelined", Receive: time.Millisecond, Commit: 2 * time.Millisecond})
	m.Observe(engine.PutPhases{Bytes: 24})
	if got := testutil.ToFloat64(m.bytes); got != 1024 {
		t.Fatalf("bytes = %v", got)
	}
	if got := testutil.ToFloat64(m.puts.WithLabelValues("pipelined")); got != 1 {
		t.Fatalf("pipelined count = %v", got)
	}
	if n := testutil.CollectAndCount(m.seconds); n != 8 {
		t.Fatalf("%d phase series, want 8", n)
	}
	want := `
# HELP shardstore_put_bytes_total Bytes stored by PUTs and part uploads.
# TYPE shardstore_put_bytes_total counter
shardstore_put_bytes_total 1024
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "shardstore_put_bytes_total"); err != nil {
		t.Fatal(err)
	}
	if _, err := NewPutPhases(reg); err == nil {
		t.Fatal("registering twice on one registry must fail")
	}
}

func TestRegisterHashing(t *testing.T) {
	reg := prometheus.NewRegistry()
	st := hashing.Stats{Active: 3, DeviceFallbacks: 2}
	st.Multibuffer.Calls, st.Multibuffer.LaneBlocks, st.Multibuffer.ExpiredWaits = 10, 100, 1
	st.Multibuffer.KernelBlocks = 200
	if err := RegisterHashing(reg, func() hashing.Stats { return st }); err != nil {
		t.Fatal(err)
	}
	want := `
# HELP shardstore_hash_multibuffer_bytes_total Bytes the multi-lane MD5 kernel hashed for uploads; over shardstore_hash_multibuffer_kernel_bytes_total, the lane fill.
# TYPE shardstore_hash_multibuffer_bytes_total counter
shardstore_hash_multibuffer_bytes_total 6400
# HELP shardstore_hash_multibuffer_kernel_bytes_total Bytes the multi-lane MD5 kernel computed, idle lanes included.
# TYPE shardstore_hash_multibuffer_kernel_bytes_total counter
shardstore_hash_multibuffer_kernel_bytes_total 12800
# HELP shardstore_hash_active_streams Hashing streams (uploads) open now.
# TYPE shardstore_hash_active_streams gauge
shardstore_hash_active_streams 3
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want),
		"shardstore_hash_multibuffer_bytes_total", "shardstore_hash_multibuffer_kernel_bytes_total",
		"shardstore_hash_active_streams"); err != nil {
		t.Fatal(err)
	}
	st.Multibuffer.Calls = 11 // read at scrape time, not registration time
	want = `
# HELP shardstore_hash_multibuffer_kernel_calls_total Calls of the multi-lane MD5 kernel (each hashes up to 16 uploads at once).
# TYPE shardstore_hash_multibuffer_kernel_calls_total counter
shardstore_hash_multibuffer_kernel_calls_total 11
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "shardstore_hash_multibuffer_kernel_calls_total"); err != nil {
		t.Fatal(err)
	}
	if err := RegisterHashing(reg, func() hashing.Stats { return st }); err == nil {
		t.Fatal("registering twice on one registry must fail")
	}
}
