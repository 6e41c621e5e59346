// Package metrics turns engine observations into Prometheus metrics:
// per-phase PUT timing histograms (the first study's per-phase table, live)
// and hashing backend counts. It registers on a registry it is given;
// nothing here is global.
package metrics

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/shardstore/shardstore/internal/engine"
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
		{"encode", p.Encode.Seconds()}, {"bitrot", p.Bitrot.Seconds()}, {"write", p.Write.Seconds()},
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
