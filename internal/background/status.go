package background

import (
	"sort"
	"time"
)

// DriveRefill reports a replaced drive's refill progress.
type DriveRefill struct {
	Drive   string `json:"drive"`
	Bucket  string `json:"bucket"`
	After   string `json:"after"`
	Objects int    `json:"objects"`
	Healed  int    `json:"healed"`
	Failed  int    `json:"failed"`
}

// Status reports what the background jobs are doing.
type Status struct {
	Queued       int `json:"queued"`        // objects waiting in the heal queue
	QueueDropped int `json:"queue_dropped"` // entries dropped because the queue was full
	QueueHealed  int `json:"queue_healed"`
	QueueRetries int `json:"queue_retries"`
	ScanCycles   int `json:"scan_cycles"`
	// ScanRunning is true while a scanner cycle runs; ScanStarted,
	// ScanDone and ScanTotal are its start and objects visited of those
	// found so far (the total grows as buckets are walked).
	ScanRunning bool `json:"scan_running"`
	// ScanElsewhere: on a cluster, another node (the consensus leader)
	// runs the scanner and lifecycle now; this one has not since.
	ScanElsewhere bool          `json:"scan_elsewhere"`
	ScanStarted   time.Time     `json:"scan_started"`
	ScanDone      int           `json:"scan_done"`
	ScanTotal     int           `json:"scan_total"`
	LastScanEnd   time.Time     `json:"last_scan_end"`
	LastScan      HealReport    `json:"last_scan"`
	Refills       []DriveRefill `json:"refills"` // drives being refilled now
	// DrivesOffline names the drives that are offline now; the engine
	// fills it (drive health is its business, not the jobs').
	DrivesOffline []string `json:"drives_offline"`
}

// Status reports the jobs' state (DrivesOffline left empty).
func (j *Jobs) Status() Status {
	st := Status{Queued: j.queue.len(), QueueDropped: j.queue.droppedCount()}
	j.mu.Lock()
	st.QueueHealed, st.QueueRetries = j.queueHealed, j.queueRetries
	st.ScanCycles, st.LastScanEnd, st.LastScan = j.scan.cycles, j.scan.lastEnd, j.scan.last
	st.ScanRunning, st.ScanStarted, st.ScanDone, st.ScanTotal = j.scan.running, j.scan.started, j.scan.done, j.scan.total
	st.ScanElsewhere = j.scan.elsewhere
	for d, r := range j.refilling {
		st.Refills = append(st.Refills, DriveRefill{Drive: d.String(), Bucket: r.Bucket, After: r.After,
			Objects: r.Objects, Healed: r.Healed, Failed: r.Failed})
	}
	j.mu.Unlock()
	sort.Slice(st.Refills, func(a, b int) bool { return st.Refills[a].Drive < st.Refills[b].Drive })
	return st
}

// RefillsDone reports whether no replaced drive is being refilled.
func (j *Jobs) RefillsDone() bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	return len(j.refilling) == 0
}
