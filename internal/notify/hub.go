package notify

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"time"
)

// HubConfig configures a Hub.
type HubConfig struct {
	// Dirs are the directories under which each target's queue lives
	// (<dir>/<id>_<kind>, or audit_<id>_<kind>), one per copy on the
	// node's own drives; at least one.
	Dirs []string
	// Queue holds the limits and retry settings every queue gets (its
	// Dirs and Send are the hub's to fill).
	Queue QueueConfig
	// Logger receives warnings; nil discards them.
	Logger *slog.Logger
}

// Hub is the node's targets and their queues: event notifications go
// to the targets a bucket's rules name, audit records to every audit
// target.
type Hub struct {
	cfg HubConfig
	log *slog.Logger

	mu      sync.RWMutex
	targets map[string]*hubTarget // by key: "<ID>:<kind>", audit ones "audit:<ID>:<kind>"
	// warned is when a record was last refused with a log line (unix
	// seconds), so a full queue logs once a minute, not per request.
	warned   map[string]int64
	warnedMu sync.Mutex
}

type hubTarget struct {
	info   TargetInfo
	target Target
	queue  *Queue
}

// TargetInfo describes a configured target, secrets masked.
type TargetInfo struct {
	Key    string // "<ID>:<kind>"
	ID     string
	Kind   string
	ARN    string
	Audit  bool
	Source string // "env" or "admin"
	// Settings are the target's settings with every secret field
	// replaced by "*****".
	Settings map[string]string
	Stats    QueueStats
}

// NewHub makes an empty hub.
func NewHub(cfg HubConfig) (*Hub, error) {
	if len(cfg.Dirs) == 0 {
		return nil, errors.New("notify: no queue directory")
	}
	h := &Hub{cfg: cfg, log: cfg.Logger, targets: map[string]*hubTarget{}, warned: map[string]int64{}}
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	return h, nil
}

// TargetKey is a target's key in the hub and in ARNs.
func TargetKey(id, kind string, audit bool) string {
	if audit {
		return "audit:" + id + ":" + kind
	}
	return id + ":" + kind
}

// Add makes a target of kind from settings and opens its queue
// (records an earlier run left in it are sent). A target with the same
// key is replaced (its queue kept on the drives and reopened).
func (h *Hub) Add(id string, kind Kind, settings map[string]string, audit bool, source string) error {
	if !validName(id) {
		return fmt.Errorf("notify: target ID %q: 1-64 letters, digits, '-' or '_'", clip(id))
	}
	par, err := parallelSetting(settings["parallel"])
	if err != nil {
		return fmt.Errorf("notify: target %s of kind %s: %w", id, kind.Name, err)
	}
	t, err := kind.New(id, settings)
	if err != nil {
		return fmt.Errorf("notify: target %s of kind %s: %w", id, kind.Name, err)
	}
	key := TargetKey(id, kind.Name, audit)
	sub := id + "_" + kind.Name
	if audit {
		sub = "audit_" + sub
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if old := h.targets[key]; old != nil {
		_ = old.queue.Close()
		_ = old.target.Close()
		delete(h.targets, key)
	}
	qc := h.cfg.Queue
	qc.Dirs = nil
	for _, d := range h.cfg.Dirs {
		qc.Dirs = append(qc.Dirs, filepath.Join(d, sub))
	}
	qc.Send = t.Send
	if n, err := strconv.Atoi(settings["queue_limit"]); err == nil && n > 0 {
		qc.MaxRecords = n
	}
	if par > 0 {
		qc.Parallel = par
	} else if kind.DefaultParallel > 0 {
		qc.Parallel = kind.DefaultParallel
	}
	if kind.MaxParallel > 0 {
		if qc.Parallel <= 0 {
			qc.Parallel = DefaultParallel
		}
		qc.Parallel = min(qc.Parallel, kind.MaxParallel)
	}
	qc.Logger = h.log.With("target", key)
	q, err := OpenQueue(qc)
	if err != nil {
		_ = t.Close()
		return err
	}
	masked := map[string]string{}
	for _, f := range append(QueueFields(), kind.Fields...) {
		if v, ok := settings[f.Name]; ok {
			if f.Secret && v != "" {
				v = "*****"
			}
			masked[f.Name] = v
		}
	}
	h.targets[key] = &hubTarget{target: t, queue: q, info: TargetInfo{Key: key, ID: id, Kind: kind.Name,
		ARN: ARN(id, kind.Name), Audit: audit, Source: source, Settings: masked}}
	return nil
}

// Remove closes a target and deletes its queue, records not yet sent
// included; ok is false when there is no such target.
func (h *Hub) Remove(key string) (bool, error) {
	h.mu.Lock()
	ht := h.targets[key]
	delete(h.targets, key)
	h.mu.Unlock()
	if ht == nil {
		return false, nil
	}
	_ = ht.queue.Close()
	_ = ht.target.Close()
	var errs []error
	for _, d := range ht.queue.cfg.Dirs {
		if err := os.RemoveAll(d); err != nil {
			errs = append(errs, err)
		}
	}
	return true, errors.Join(errs...)
}

// Has reports whether an event target with key exists (for validating
// a bucket's configuration).
func (h *Hub) Has(key string) bool {
	h.mu.RLock()
	defer h.mu.RUnlock()
	ht := h.targets[key]
	return ht != nil && !ht.info.Audit
}

// Publish queues ev for every target c's rules send it to, durably,
// in parallel; it returns when every queue has it or refused it. The
// error joins the refusals (ErrFull, ErrNoCopy, ...); each is logged at
// most once a minute per target.
func (h *Hub) Publish(ev Event, c *Config) error {
	matched := c.Match(ev.Name, ev.Key)
	if len(matched) == 0 {
		return nil
	}
	return h.append(matched, func(m Matched) Delivery { return ev.Delivery(m) })
}

// Enqueue places ev in the queue of every target c's rules send it to,
// after the records enqueued before it, without waiting; the returned
// wait returns what Publish would once every queue synced it (nil when
// no rule matched). The S3 layer calls it under the key's lock as the
// write commits, so a key's events are queued in commit order, and
// waits before answering.
func (h *Hub) Enqueue(ev Event, c *Config) (wait func() error) {
	matched := c.Match(ev.Name, ev.Key)
	if len(matched) == 0 {
		return func() error { return nil }
	}
	waits, queues := h.enqueue(matched, func(m Matched) Delivery { return ev.Delivery(m) })
	return func() error { return h.settle(matched, waits, queues) }
}

// Audit queues an audit record (its JSON; key is "bucket/object" or
// "" for a request on no bucket) for every audit target.
func (h *Hub) Audit(payload []byte, key string, t time.Time) error {
	h.mu.RLock()
	var ms []Matched
	for k, ht := range h.targets {
		if ht.info.Audit {
			ms = append(ms, Matched{Target: k})
		}
	}
	h.mu.RUnlock()
	if len(ms) == 0 {
		return nil
	}
	d := Delivery{Key: key, Time: t, Payload: payload}
	return h.append(ms, func(Matched) Delivery { return d })
}

// HasAudit reports whether any audit target is configured, so callers
// make audit records only then.
func (h *Hub) HasAudit() bool {
	h.mu.RLock()
	defer h.mu.RUnlock()
	for _, ht := range h.targets {
		if ht.info.Audit {
			return true
		}
	}
	return false
}

func (h *Hub) append(ms []Matched, build func(Matched) Delivery) error {
	waits, queues := h.enqueue(ms, build)
	return h.settle(ms, waits, queues)
}

// enqueue places each matched target's record in its queue; waits[i]
// is nil where the target is not configured.
func (h *Hub) enqueue(ms []Matched, build func(Matched) Delivery) (waits []func() error, queues []*Queue) {
	h.mu.RLock()
	queues = make([]*Queue, len(ms))
	for i, m := range ms {
		if ht := h.targets[m.Target]; ht != nil {
			queues[i] = ht.queue
		}
	}
	h.mu.RUnlock()
	waits = make([]func() error, len(ms))
	for i, m := range ms {
		if queues[i] != nil {
			waits[i] = queues[i].Enqueue(build(m))
		}
	}
	return waits, queues
}

// settle waits for every record enqueue placed (their syncs run in
// parallel, one writer per queue) and joins the refusals, each logged
// at most once a minute per target.
func (h *Hub) settle(ms []Matched, waits []func() error, queues []*Queue) error {
	errs := make([]error, len(ms))
	for i, m := range ms {
		if queues[i] == nil {
			errs[i] = fmt.Errorf("notify: target %s is not configured on this node", m.Target)
			continue
		}
		errs[i] = waits[i]()
	}
	for i, err := range errs {
		if err != nil {
			h.warn(ms[i].Target, err)
			errs[i] = fmt.Errorf("notify: target %s: %w", ms[i].Target, err)
		}
	}
	return errors.Join(errs...)
}

// warn logs a refused record at most once a minute per target.
func (h *Hub) warn(target string, err error) {
	now := time.Now().Unix()
	h.warnedMu.Lock()
	last := h.warned[target]
	if now-last >= 60 {
		h.warned[target] = now
	}
	h.warnedMu.Unlock()
	if now-last >= 60 {
		h.log.Warn("notification record not queued (the request was still answered)", "target", target, "err", err)
	}
}

// Targets lists the targets with their counters, by key.
func (h *Hub) Targets() []TargetInfo {
	h.mu.RLock()
	out := make([]TargetInfo, 0, len(h.targets))
	for _, ht := range h.targets {
		info := ht.info
		info.Stats = ht.queue.Stats()
		out = append(out, info)
	}
	h.mu.RUnlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

// Test asks a target whether its system answers.
func (h *Hub) Test(ctx context.Context, key string) error {
	h.mu.RLock()
	ht := h.targets[key]
	h.mu.RUnlock()
	if ht == nil {
		return fmt.Errorf("notify: no target %s", key)
	}
	return ht.target.Healthy(ctx)
}

// Close closes every queue and target; queued records stay on the
// drives for the next start.
func (h *Hub) Close() error {
	h.mu.Lock()
	ts := h.targets
	h.targets = map[string]*hubTarget{}
	h.mu.Unlock()
	var wg sync.WaitGroup
	for _, ht := range ts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = ht.queue.Close()
			_ = ht.target.Close()
		}()
	}
	wg.Wait()
	return nil
}

// Orphan is a queue on the drives whose target is not configured (its
// variables were removed, say): its records are kept, not sent.
type Orphan struct {
	Name    string // the queue's directory name: <ID>_<kind> or audit_<ID>_<kind>
	Records int64  // records not yet sent
}

// Orphans lists the queues left on the drives by targets this hub does
// not have, with records still to send, so the server can warn about
// them. (Configuring the target again sends them.)
func (h *Hub) Orphans() []Orphan {
	h.mu.RLock()
	have := map[string]bool{}
	for _, ht := range h.targets {
		have[filepath.Base(ht.queue.cfg.Dirs[0])] = true
	}
	h.mu.RUnlock()
	names := map[string]bool{}
	for _, d := range h.cfg.Dirs {
		ents, err := os.ReadDir(d)
		if err != nil {
			continue
		}
		for _, e := range ents {
			if e.IsDir() && !have[e.Name()] {
				names[e.Name()] = true
			}
		}
	}
	var out []Orphan
	for name := range names {
		var dirs []string
		for _, d := range h.cfg.Dirs {
			dirs = append(dirs, filepath.Join(d, name))
		}
		// Read as a queue opening would, without starting one.
		q := &Queue{cfg: QueueConfig{Dirs: dirs}, log: slog.New(slog.DiscardHandler), ends: map[uint64]int64{}, from: map[uint64]string{}}
		if _, _, err := q.recover(); err != nil {
			continue
		}
		if n := q.queued.Load(); n > 0 {
			out = append(out, Orphan{Name: name, Records: n})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
