// Package metrics turns engine observations into Prometheus metrics:
// per-phase PUT timing histograms (the first study's per-phase table, live),
// hashing backend counts, storage health and the index cache. It registers on a registry it is given;
// nothing here is global.
package metrics

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/shardstore/shardstore/internal/accesslog"
	"github.com/shardstore/shardstore/internal/drive"
	"github.com/shardstore/shardstore/internal/engine"
	"github.com/shardstore/shardstore/internal/hashing"
)

// PutPhases records engine.PutPhases as histograms.
type PutPhases struct {
	seconds *prometheus.HistogramVec
	bytes   prometheus.Counter
	puts    *prometheus.CounterVec
}

// phaseBuckets span 10µs..~40s: a 4 KiB inline PUT's commit to a 5 GiB
// part's receive.
var phaseBuckets = prometheus.ExponentialBuckets(10e-6, 4, 12)

// NewPutPhases registers the PUT phase metrics on reg.
func NewPutPhases(reg prometheus.Registerer) (*PutPhases, error) {
	m := &PutPhases{
		seconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "shardstore_put_phase_seconds",
			Help:    "Time one PUT or part upload spent per phase. receive, encode, sync, hash_wait and commit are wall time on the request path; hash, bitrot and write are work summed over the goroutines that did it.",
			Buckets: phaseBuckets,
		}, []string{"phase"}),
		bytes: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "shardstore_put_bytes_total",
			Help: "Bytes stored by PUTs and part uploads.",
		}),
		puts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "shardstore_put_hash_backend_total",
			Help: "PUTs and part uploads by the hashing backend that computed their MD5/ETag.",
		}, []string{"backend"}),
	}
	for _, c := range []prometheus.Collector{m.seconds, m.bytes, m.puts} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("metrics: register PUT phases: %w", err)
		}
	}
	return m, nil
}

// Observe records one PUT; it is an engine.Config.PhaseObserver.
func (m *PutPhases) Observe(p engine.PutPhases) {
	for _, ph := range []struct {
		name string
		v    float64
	}{
		{"receive", p.Receive.Seconds()}, {"hash", p.Hash.Seconds()}, {"hash_wait", p.HashWait.Seconds()},
		{"encode", p.Encode.Seconds()}, {"encrypt", p.Encrypt.Seconds()}, {"bitrot", p.Bitrot.Seconds()}, {"write", p.Write.Seconds()},
		{"sync", p.Sync.Seconds()}, {"commit", p.Commit.Seconds()},
	} {
		m.seconds.WithLabelValues(ph.name).Observe(ph.v)
	}
	m.bytes.Add(float64(p.Bytes))
	backend := p.Backend
	if backend == "" {
		backend = "none"
	}
	m.puts.WithLabelValues(backend).Inc()
}

// statMetric is one metric read from a stats snapshot.
type statMetric[S any] struct {
	desc  *prometheus.Desc
	kind  prometheus.ValueType
	value func(S) float64
}

func counterOf[S any](name, help string, v func(S) uint64) statMetric[S] {
	return statMetric[S]{prometheus.NewDesc(name, help, nil, nil), prometheus.CounterValue,
		func(s S) float64 { return float64(v(s)) }}
}

func gaugeOf[S any](name, help string, v func(S) int64) statMetric[S] {
	return statMetric[S]{prometheus.NewDesc(name, help, nil, nil), prometheus.GaugeValue,
		func(s S) float64 { return float64(v(s)) }}
}

// statsCollector exports metrics read from stats once per scrape, so a
// scrape's values are one snapshot and stats runs once, not per metric.
type statsCollector[S any] struct {
	stats   func() S
	metrics []statMetric[S]
}

func (c *statsCollector[S]) Describe(ch chan<- *prometheus.Desc) {
	for _, m := range c.metrics {
		ch <- m.desc
	}
}

func (c *statsCollector[S]) Collect(ch chan<- prometheus.Metric) {
	s := c.stats()
	for _, m := range c.metrics {
		ch <- prometheus.MustNewConstMetric(m.desc, m.kind, m.value(s))
	}
}

// RegisterHashing exports the hashing engine's counters, read from stats
// at every scrape: how full the multi-lane MD5 service keeps its lanes
// (the number that decides whether it saves CPU), device fallbacks and
// the streams now open.
func RegisterHashing(reg prometheus.Registerer, stats func() hashing.Stats) error {
	type S = hashing.Stats
	c := &statsCollector[S]{stats: stats, metrics: []statMetric[S]{
		counterOf("shardstore_hash_multibuffer_kernel_calls_total",
			"Calls of the multi-lane MD5 kernel (each hashes up to 16 uploads at once).",
			func(s S) uint64 { return s.Multibuffer.Calls }),
		counterOf("shardstore_hash_multibuffer_bytes_total",
			"Bytes the multi-lane MD5 kernel hashed for uploads; over shardstore_hash_multibuffer_kernel_bytes_total, the lane fill.",
			func(s S) uint64 { return 64 * s.Multibuffer.LaneBlocks }),
		counterOf("shardstore_hash_multibuffer_kernel_bytes_total",
			"Bytes the multi-lane MD5 kernel computed, idle lanes included.",
			func(s S) uint64 { return 64 * s.Multibuffer.KernelBlocks }),
		counterOf("shardstore_hash_multibuffer_expired_waits_total",
			"Multi-lane MD5 batches that waited their whole deadline for uploads that did not write in time.",
			func(s S) uint64 { return s.Multibuffer.ExpiredWaits }),
		counterOf("shardstore_hash_device_fallbacks_total",
			"Uploads that left the hashing device mid-stream because its queue was full.",
			func(s S) uint64 { return s.DeviceFallbacks }),
		gaugeOf("shardstore_hash_active_streams",
			"Hashing streams (uploads) open now.",
			func(s S) int64 { return s.Active }),
	}}
	if err := reg.Register(c); err != nil {
		return fmt.Errorf("metrics: register hashing: %w", err)
	}
	return nil
}

// RegisterIndexCache exports the drive indexes' shared cache, read from
// stats at every scrape: hits and misses of pebble's block cache and of
// the row cache of point reads, and the bytes each holds against its
// capacity (a hit ratio that falls as the hot set grows says to raise
// --index-cache).
func RegisterIndexCache(reg prometheus.Registerer, stats func() drive.IndexCacheStats) error {
	type S = drive.IndexCacheStats
	c := &statsCollector[S]{stats: stats, metrics: []statMetric[S]{
		counterOf("shardstore_index_block_cache_hits_total", "Index block reads the shared block cache answered.",
			func(s S) uint64 { return s.BlockHits }),
		counterOf("shardstore_index_block_cache_misses_total", "Index block reads that went to the drive.",
			func(s S) uint64 { return s.BlockMisses }),
		gaugeOf("shardstore_index_block_cache_bytes", "Bytes the shared index block cache holds.",
			func(s S) int64 { return s.BlockBytes }),
		gaugeOf("shardstore_index_block_cache_capacity_bytes", "Capacity of the shared index block cache.",
			func(s S) int64 { return s.BlockCapacity }),
		counterOf("shardstore_index_row_cache_hits_total", "Record and inline-shard point reads the row cache answered.",
			func(s S) uint64 { return s.RowHits }),
		counterOf("shardstore_index_row_cache_misses_total", "Record and inline-shard point reads the row cache did not hold.",
			func(s S) uint64 { return s.RowMisses }),
		gaugeOf("shardstore_index_row_cache_bytes", "Bytes the row cache holds.",
			func(s S) int64 { return s.RowBytes }),
		gaugeOf("shardstore_index_row_cache_capacity_bytes", "Capacity of the row cache.",
			func(s S) int64 { return s.RowCapacity }),
	}}
	if err := reg.Register(c); err != nil {
		return fmt.Errorf("metrics: register index cache: %w", err)
	}
	return nil
}

// RegisterListAhead exports what became of the listing pages the engine
// made ahead of their requests (engine.ListAheadStats), read at every
// scrape: many stale pages say the listed buckets are being written
// while they are listed; many unused ones, that clients stop listings
// early.
func RegisterListAhead(reg prometheus.Registerer, stats func() engine.ListAheadStats) error {
	type S = engine.ListAheadStats
	c := &statsCollector[S]{stats: stats, metrics: []statMetric[S]{
		counterOf("shardstore_list_readahead_started_total", "Listing pages begun ahead of the request for them.",
			func(s S) uint64 { return s.Started }),
		counterOf("shardstore_list_readahead_used_total", "Listing pages made ahead that answered their request.",
			func(s S) uint64 { return s.Used }),
		counterOf("shardstore_list_readahead_stale_total", "Listing pages made ahead and dropped because the bucket changed meanwhile.",
			func(s S) uint64 { return s.Stale }),
		counterOf("shardstore_list_readahead_unused_total", "Listing pages made ahead that no request used (asked for too late, or failed).",
			func(s S) uint64 { return s.Unused }),
	}}
	if err := reg.Register(c); err != nil {
		return fmt.Errorf("metrics: register list read-ahead: %w", err)
	}
	return nil
}

// RegisterAccessLog exports the server access log spool's counters
// (accesslog.Stats), read at every scrape: records refused (a full
// backlog, a failed spool) and dropped (a target gone) are records a
// bucket's log lacks; a backlog that grows says deliveries fail.
func RegisterAccessLog(reg prometheus.Registerer, stats func() accesslog.Stats) error {
	type S = accesslog.Stats
	c := &statsCollector[S]{stats: stats, metrics: []statMetric[S]{
		counterOf("shardstore_access_log_records_spooled_total", "Server access log records made durable in the spool.",
			func(s S) uint64 { return s.Appended }),
		counterOf("shardstore_access_log_records_refused_total", "Server access log records not kept (backlog full, spool write failed, stopping).",
			func(s S) uint64 { return s.Refused }),
		counterOf("shardstore_access_log_records_delivered_total", "Server access log records delivered into target buckets.",
			func(s S) uint64 { return s.Delivered }),
		counterOf("shardstore_access_log_records_dropped_total", "Server access log records dropped because their target bucket cannot take them.",
			func(s S) uint64 { return s.Dropped }),
		counterOf("shardstore_access_log_objects_total", "Log objects written into target buckets.",
			func(s S) uint64 { return s.Objects }),
		counterOf("shardstore_access_log_delivery_errors_total", "Failed log deliveries (retried with backoff).",
			func(s S) uint64 { return s.DeliveryErrors }),
		gaugeOf("shardstore_access_log_backlog_bytes", "Spooled server access log bytes not yet delivered.",
			func(s S) int64 { return s.BacklogBytes }),
		gaugeOf("shardstore_access_log_pending_batches", "Closed batches of server access log records waiting for delivery.",
			func(s S) int64 { return int64(s.PendingSegments) }),
	}}
	if err := reg.Register(c); err != nil {
		return fmt.Errorf("metrics: register access log: %w", err)
	}
	return nil
}
