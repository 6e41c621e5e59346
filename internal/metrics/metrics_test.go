package metrics

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/shardstore/shardstore/internal/drive"
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
	if n := testutil.CollectAndCount(m.seconds); n != 9 {
		t.Fatalf("%d phase series, want 9", n)
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

func TestRegisterIndexCache(t *testing.T) {
	reg := prometheus.NewRegistry()
	st := drive.IndexCacheStats{BlockHits: 5, BlockMisses: 2, BlockBytes: 100, BlockCapacity: 300,
		RowHits: 9, RowMisses: 4, RowBytes: 50, RowCapacity: 100}
	if err := RegisterIndexCache(reg, func() drive.IndexCacheStats { return st }); err != nil {
		t.Fatal(err)
	}
	st.RowHits = 10 // read at scrape time
	want := `
# HELP shardstore_index_block_cache_misses_total Index block reads that went to the drive.
# TYPE shardstore_index_block_cache_misses_total counter
shardstore_index_block_cache_misses_total 2
# HELP shardstore_index_block_cache_capacity_bytes Capacity of the shared index block cache.
# TYPE shardstore_index_block_cache_capacity_bytes gauge
shardstore_index_block_cache_capacity_bytes 300
# HELP shardstore_index_row_cache_hits_total Record and inline-shard point reads the row cache answered.
# TYPE shardstore_index_row_cache_hits_total counter
shardstore_index_row_cache_hits_total 10
# HELP shardstore_index_row_cache_bytes Bytes the row cache holds.
# TYPE shardstore_index_row_cache_bytes gauge
shardstore_index_row_cache_bytes 50
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want),
		"shardstore_index_block_cache_misses_total", "shardstore_index_block_cache_capacity_bytes",
		"shardstore_index_row_cache_hits_total", "shardstore_index_row_cache_bytes"); err != nil {
		t.Fatal(err)
	}
}

// fakeStorage is a fixed storage state for the gauge tests.
type fakeStorage struct{}

func (fakeStorage) Status() engine.Status {
	return engine.Status{PerSet: []engine.SetStatus{
		{Set: 1, Drives: 4, DrivesOnline: 4, WriteQuorum: 3, ReadQuorum: 2, WriteQuorumOK: true, ReadQuorumOK: true},
		{Set: 2, Drives: 4, DrivesOnline: 2, WriteQuorum: 3, ReadQuorum: 2, ReadQuorumOK: true},
	}}
}

func (fakeStorage) DriveStatus(context.Context) []engine.DriveStatus {
	return []engine.DriveStatus{
		{Path: "/d1", Set: 1, Slot: 1, State: "online", Total: 1000, Free: 600},
		{Path: "/d5", Set: 2, Slot: 1, State: "offline", Error: "gone"},
	}
}

func (fakeStorage) HealStatus() engine.HealStatus {
	return engine.HealStatus{Queued: 7, ScanRunning: true, ScanDone: 3, ScanTotal: 10, ScanCycles: 2}
}

func TestStorageGauges(t *testing.T) {
	reg := prometheus.NewRegistry()
	if err := RegisterStorage(reg, fakeStorage{}); err != nil {
		t.Fatal(err)
	}
	want := `
# HELP shardstore_set_drives_offline Drives of the erasure set that are offline (failed, hung, missing).
# TYPE shardstore_set_drives_offline gauge
shardstore_set_drives_offline{set="1"} 0
shardstore_set_drives_offline{set="2"} 2
# HELP shardstore_set_write_quorum_available 1 when the set has enough drives online to accept writes, else 0.
# TYPE shardstore_set_write_quorum_available gauge
shardstore_set_write_quorum_available{set="1"} 1
shardstore_set_write_quorum_available{set="2"} 0
# HELP shardstore_drive_free_bytes Free bytes on the drive's filesystem (online drives only).
# TYPE shardstore_drive_free_bytes gauge
shardstore_drive_free_bytes{drive="/d1",set="1",slot="1"} 600
# HELP shardstore_drive_online 1 when the drive serves requests, else 0.
# TYPE shardstore_drive_online gauge
shardstore_drive_online{drive="/d1",set="1",slot="1"} 1
shardstore_drive_online{drive="/d5",set="2",slot="1"} 0
# HELP shardstore_heal_queue_length Objects waiting in the heal queue.
# TYPE shardstore_heal_queue_length gauge
shardstore_heal_queue_length 7
# HELP shardstore_scanner_cycle_objects_done Objects the running scanner cycle has checked.
# TYPE shardstore_scanner_cycle_objects_done gauge
shardstore_scanner_cycle_objects_done 3
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want),
		"shardstore_set_drives_offline", "shardstore_set_write_quorum_available", "shardstore_drive_free_bytes",
		"shardstore_drive_online", "shardstore_heal_queue_length", "shardstore_scanner_cycle_objects_done"); err != nil {
		t.Fatal(err)
	}
}
