package metrics

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/shardstore/shardstore/internal/engine"
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
