package cpustat

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
)

// Collector exports a Sampler's view to Prometheus. Register it with
// prometheus.Registry.MustRegister(cpustat.NewCollector(sampler)).
//
// Names are prefixed shardstore_ so they do not collide with the standard
// process collector's process_cpu_seconds_total.
type Collector struct {
	s *Sampler

	coreBusy    *prometheus.Desc
	machineBusy *prometheus.Desc
	imbalance   *prometheus.Desc
	procSeconds *prometheus.Desc
}

// NewCollector returns a collector reading s at scrape time; it does not
// start s.
func NewCollector(s *Sampler) *Collector {
	return &Collector{
		s: s,
		coreBusy: prometheus.NewDesc("shardstore_cpu_core_busy_ratio",
			"Busy fraction of one core over the sampler window (0..1).", []string{"core"}, nil),
		machineBusy: prometheus.NewDesc("shardstore_cpu_busy_ratio",
			"Busy fraction of the whole machine over the sampler window (0..1).", nil, nil),
		imbalance: prometheus.NewDesc("shardstore_cpu_core_imbalance_ratio",
			"Busiest core load divided by mean core load over the sampler window (1 = even).", nil, nil),
		procSeconds: prometheus.NewDesc("shardstore_process_cpu_seconds_total",
			"CPU time used by this process, from getrusage.", []string{"mode"}, nil),
	}
}

// Describe implements prometheus.Collector.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.coreBusy
	ch <- c.machineBusy
	ch <- c.imbalance
	ch <- c.procSeconds
}

// Collect implements prometheus.Collector.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	snap := c.s.Snapshot()
	for _, core := range snap.Cores {
		ch <- prometheus.MustNewConstMetric(c.coreBusy, prometheus.GaugeValue, core.Busy, strconv.Itoa(core.ID))
	}
	ch <- prometheus.MustNewConstMetric(c.machineBusy, prometheus.GaugeValue, snap.Average)
	if len(snap.Cores) > 0 {
		ch <- prometheus.MustNewConstMetric(c.imbalance, prometheus.GaugeValue, snap.Imbalance())
	}
	// Process time is read fresh rather than from the snapshot so the
	// counter is exact at scrape time even between samples.
	p, err := SelfCPU()
	if err != nil {
		p = snap.ProcessTotal
	}
	ch <- prometheus.MustNewConstMetric(c.procSeconds, prometheus.CounterValue, p.User.Seconds(), "user")
	ch <- prometheus.MustNewConstMetric(c.procSeconds, prometheus.CounterValue, p.System.Seconds(), "system")
}
