package metrics

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/shardstore/shardstore/internal/notify"
)

// notifyCollector reports every notification and audit target's queue,
// read at each scrape, labelled by the target's ARN and whether it
// takes audit records.
type notifyCollector struct {
	targets                                    func() []notify.TargetInfo
	sent, failed, refused, queued, bytes, secs *prometheus.Desc
	up                                         *prometheus.Desc
}

// RegisterNotify exports the targets' counters: records sent, failed
// sends (retried), records refused (queue full), records and bytes
// queued, total send time (latency: divide by sent), and whether the
// last send succeeded.
func RegisterNotify(reg prometheus.Registerer, targets func() []notify.TargetInfo) error {
	l := []string{"target", "audit"}
	c := &notifyCollector{targets: targets,
		sent:    prometheus.NewDesc("shardstore_notify_sent_total", "Records a notification or audit target accepted.", l, nil),
		failed:  prometheus.NewDesc("shardstore_notify_failed_total", "Failed sends to a target (each retried with backoff).", l, nil),
		refused: prometheus.NewDesc("shardstore_notify_refused_total", "Records not queued for a target (queue full, drives failing, stopping); their requests were answered.", l, nil),
		queued:  prometheus.NewDesc("shardstore_notify_queued_records", "Records waiting in a target's queue.", l, nil),
		bytes:   prometheus.NewDesc("shardstore_notify_queued_bytes", "Bytes waiting in a target's queue.", l, nil),
		secs:    prometheus.NewDesc("shardstore_notify_send_seconds_total", "Total time of successful sends to a target.", l, nil),
		up:      prometheus.NewDesc("shardstore_notify_target_online", "1 when the last send to a target succeeded (or none failed yet), else 0.", l, nil),
	}
	if err := reg.Register(c); err != nil {
		return fmt.Errorf("metrics: register notify: %w", err)
	}
	return nil
}

func (c *notifyCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.sent, c.failed, c.refused, c.queued, c.bytes, c.secs, c.up} {
		ch <- d
	}
}

func (c *notifyCollector) Collect(ch chan<- prometheus.Metric) {
	for _, t := range c.targets() {
		audit := "false"
		if t.Audit {
			audit = "true"
		}
		s := t.Stats
		up := 1.0
		if s.LastError != "" {
			up = 0
		}
		ch <- prometheus.MustNewConstMetric(c.sent, prometheus.CounterValue, float64(s.Sent), t.ARN, audit)
		ch <- prometheus.MustNewConstMetric(c.failed, prometheus.CounterValue, float64(s.Failed), t.ARN, audit)
		ch <- prometheus.MustNewConstMetric(c.refused, prometheus.CounterValue, float64(s.Refused), t.ARN, audit)
		ch <- prometheus.MustNewConstMetric(c.queued, prometheus.GaugeValue, float64(s.Queued), t.ARN, audit)
		ch <- prometheus.MustNewConstMetric(c.bytes, prometheus.GaugeValue, float64(s.QueuedBytes), t.ARN, audit)
		ch <- prometheus.MustNewConstMetric(c.secs, prometheus.CounterValue, s.SendSeconds, t.ARN, audit)
		ch <- prometheus.MustNewConstMetric(c.up, prometheus.GaugeValue, up, t.ARN, audit)
	}
}
