package metrics

import (
	"context"
	"fmt"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/shardstore/shardstore/internal/engine"
)

// Storage is what the storage gauges read at scrape time.
type Storage interface {
	Status() engine.Status
	DriveStatus(ctx context.Context) []engine.DriveStatus
	HealStatus() engine.HealStatus
}

// storageCollector exposes the gauges an operator alerts on: drives
// online and offline per set, quorum available per set, free and total
// bytes per drive, the heal queue and the scanner's progress. It reads
// them at scrape time, so they are never stale.
type storageCollector struct {
	src Storage

	drivesOnline, drivesOffline, writeQuorum, readQuorum *prometheus.Desc
	driveOnline, driveFree, driveTotal                   *prometheus.Desc
	driveFull                                            *prometheus.Desc
	healQueue, healDropped, scanRunning, scanDone        *prometheus.Desc
	scanTotal, scanCycles, scanLastEnd                   *prometheus.Desc
}

// RegisterStorage registers the storage gauges of src on reg.
func RegisterStorage(reg prometheus.Registerer, src Storage) error {
	set := []string{"set"}
	drive := []string{"set", "slot", "drive"}
	c := &storageCollector{src: src,
		drivesOnline:  prometheus.NewDesc("shardstore_set_drives_online", "Drives of the erasure set serving requests.", set, nil),
		drivesOffline: prometheus.NewDesc("shardstore_set_drives_offline", "Drives of the erasure set that are offline (failed, hung, missing).", set, nil),
		writeQuorum:   prometheus.NewDesc("shardstore_set_write_quorum_available", "1 when the set has enough drives online to accept writes, else 0.", set, nil),
		readQuorum:    prometheus.NewDesc("shardstore_set_read_quorum_available", "1 when the set has enough drives online to serve reads, else 0.", set, nil),
		driveOnline:   prometheus.NewDesc("shardstore_drive_online", "1 when the drive serves requests, else 0.", drive, nil),
		driveFull:     prometheus.NewDesc("shardstore_drive_index_full", "1 while the drive's disk is full and its index takes reads and deletions only (read-only or deletes-only; admin status says which), else 0.", drive, nil),
		driveFree:     prometheus.NewDesc("shardstore_drive_free_bytes", "Free bytes on the drive's filesystem (online drives only).", drive, nil),
		driveTotal:    prometheus.NewDesc("shardstore_drive_total_bytes", "Size of the drive's filesystem (online drives only).", drive, nil),
		healQueue:     prometheus.NewDesc("shardstore_heal_queue_length", "Objects waiting in the heal queue.", nil, nil),
		healDropped:   prometheus.NewDesc("shardstore_heal_queue_dropped_total", "Heal queue entries dropped because the queue was full (the scanner finds them later).", nil, nil),
		scanRunning:   prometheus.NewDesc("shardstore_scanner_running", "1 while a scanner cycle runs.", nil, nil),
		scanDone:      prometheus.NewDesc("shardstore_scanner_cycle_objects_done", "Objects the running scanner cycle has checked.", nil, nil),
		scanTotal:     prometheus.NewDesc("shardstore_scanner_cycle_objects_total", "Objects the running scanner cycle has found so far.", nil, nil),
		scanCycles:    prometheus.NewDesc("shardstore_scanner_cycles_total", "Scanner cycles completed since start.", nil, nil),
		scanLastEnd:   prometheus.NewDesc("shardstore_scanner_last_cycle_end_timestamp_seconds", "Unix time the last scanner cycle ended (0: none yet).", nil, nil),
	}
	if err := reg.Register(c); err != nil {
		return fmt.Errorf("register storage metrics: %w", err)
	}
	return nil
}

func (c *storageCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.drivesOnline, c.drivesOffline, c.writeQuorum, c.readQuorum,
		c.driveOnline, c.driveFull, c.driveFree, c.driveTotal, c.healQueue, c.healDropped, c.scanRunning,
		c.scanDone, c.scanTotal, c.scanCycles, c.scanLastEnd} {
		ch <- d
	}
}

func gauge(d *prometheus.Desc, v float64, labels ...string) prometheus.Metric {
	return prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
}

func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func (c *storageCollector) Collect(ch chan<- prometheus.Metric) {
	st := c.src.Status()
	for _, s := range st.PerSet {
		set := strconv.Itoa(s.Set)
		ch <- gauge(c.drivesOnline, float64(s.DrivesOnline), set)
		ch <- gauge(c.drivesOffline, float64(s.Drives-s.DrivesOnline), set)
		ch <- gauge(c.writeQuorum, boolValue(s.WriteQuorumOK), set)
		ch <- gauge(c.readQuorum, boolValue(s.ReadQuorumOK), set)
	}
	for _, d := range c.src.DriveStatus(context.Background()) {
		labels := []string{strconv.Itoa(d.Set), strconv.Itoa(d.Slot), d.Path}
		on := d.State == "online"
		ch <- gauge(c.driveOnline, boolValue(on), labels...)
		ch <- gauge(c.driveFull, boolValue(on && d.Index != ""), labels...)
		if on && d.Total > 0 {
			ch <- gauge(c.driveFree, float64(d.Free), labels...)
			ch <- gauge(c.driveTotal, float64(d.Total), labels...)
		}
	}
	h := c.src.HealStatus()
	ch <- gauge(c.healQueue, float64(h.Queued))
	ch <- prometheus.MustNewConstMetric(c.healDropped, prometheus.CounterValue, float64(h.QueueDropped))
	ch <- gauge(c.scanRunning, boolValue(h.ScanRunning))
	ch <- gauge(c.scanDone, float64(h.ScanDone))
	ch <- gauge(c.scanTotal, float64(h.ScanTotal))
	ch <- prometheus.MustNewConstMetric(c.scanCycles, prometheus.CounterValue, float64(h.ScanCycles))
	end := 0.0
	if !h.LastScanEnd.IsZero() {
		end = float64(h.LastScanEnd.UnixNano()) / 1e9
	}
	ch <- gauge(c.scanLastEnd, end)
}
