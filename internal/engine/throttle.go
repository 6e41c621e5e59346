package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// throttleDoc is the config document holding the limits decommission
// and rebalance move data at (in the consensus group on a cluster, on
// the drives of a single node), so that every node's mover (the one
// that scans) follows what the operator set, across restarts.
const throttleDoc = "pools/throttle"

// MoveThrottle bounds how fast decommission and rebalance move data, so
// that client traffic keeps its latency: at most Bandwidth bytes (as
// stored) and Objects keys a second, averaged over the moves since the
// limit was set or the mover last rested. Zero is no limit. Adaptive
// ("on", the default, or "off") says whether the mover also backs off by
// itself when client requests slow down (adaptive.go), within the limits.
type MoveThrottle struct {
	Bandwidth int64   `json:"bandwidth"` // bytes per second
	Objects   float64 `json:"objects"`   // keys per second
	Adaptive  string  `json:"adaptive"`  // "on" or "off"; "" is "on"
}

// ParseAdaptive reads the adaptive switch: "on" or "off" (any case,
// spaces around allowed); "" is "" (leave it as it is).
func ParseAdaptive(s string) (string, error) {
	switch t := strings.ToLower(strings.TrimSpace(s)); t {
	case "", "on", "off":
		return t, nil
	}
	return "", fmt.Errorf("%w: adaptive %q: want on or off", ErrInvalidArgument, s)
}

// adaptiveOn says whether the mover adapts to the clients' latency.
func (th MoveThrottle) adaptiveOn() bool { return th.Adaptive != "off" }

// ParseRate reads a bandwidth: a whole number of bytes with an optional
// unit (B, KiB, MiB, GiB, TiB, KB, MB, GB, TB, or K, M, G, T as the
// binary ones) and an optional "/s"; "0" or "" is no limit.
func ParseRate(s string) (int64, error) {
	t := strings.TrimSpace(s)
	t = strings.TrimSuffix(strings.TrimSuffix(t, "/s"), "ps")
	if t == "" || t == "0" {
		return 0, nil
	}
	i := 0
	for i < len(t) && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	if i == 0 || i > 18 {
		return 0, fmt.Errorf("%w: rate %q: want a whole number with an optional unit (64MiB, 1G)", ErrInvalidArgument, s)
	}
	n, err := strconv.ParseInt(t[:i], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%w: rate %q: %v", ErrInvalidArgument, s, err)
	}
	units := map[string]int64{"": 1, "b": 1, "k": 1 << 10, "kib": 1 << 10, "kb": 1000, "m": 1 << 20, "mib": 1 << 20, "mb": 1000 * 1000,
		"g": 1 << 30, "gib": 1 << 30, "gb": 1000 * 1000 * 1000, "t": 1 << 40, "tib": 1 << 40, "tb": 1000 * 1000 * 1000 * 1000}
	mul, ok := units[strings.ToLower(strings.TrimSpace(t[i:]))]
	if !ok {
		return 0, fmt.Errorf("%w: rate %q: unknown unit %q (B, KiB, MiB, GiB, TiB, KB, MB, GB, TB)", ErrInvalidArgument, s, t[i:])
	}
	if n > math.MaxInt64/mul {
		return 0, fmt.Errorf("%w: rate %q is too large", ErrInvalidArgument, s)
	}
	return n * mul, nil
}

// ParseObjectRate reads a keys-per-second limit: a non-negative decimal
// number, at most a million; "0" or "" is no limit.
func ParseObjectRate(s string) (float64, error) {
	t := strings.TrimSuffix(strings.TrimSpace(s), "/s")
	if t == "" {
		return 0, nil
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f < 0 || f > 1e6 {
		return 0, fmt.Errorf("%w: objects per second %q: want a number from 0 (no limit) to 1000000", ErrInvalidArgument, s)
	}
	return f, nil
}

// MoveThrottle reads the limits decommission and rebalance move at.
func (e *Engine) MoveThrottle(ctx context.Context) (MoveThrottle, error) {
	var th MoveThrottle
	data, _, err := e.ReadConfig(ctx, throttleDoc)
	if errors.Is(err, ErrNoConfig) {
		return th, nil
	}
	if err != nil {
		return th, err
	}
	if err := json.Unmarshal(data, &th); err != nil {
		return th, fmt.Errorf("engine: config %s: %w", throttleDoc, err)
	}
	if th.Adaptive != "off" {
		th.Adaptive = "on"
	}
	return th, nil
}

// SetMoveThrottle sets the limits decommission and rebalance move at;
// the mover follows them within decomInterval.
func (e *Engine) SetMoveThrottle(ctx context.Context, th MoveThrottle) (MoveThrottle, error) {
	if th.Bandwidth < 0 || th.Objects < 0 || math.IsNaN(th.Objects) || math.IsInf(th.Objects, 0) {
		return th, fmt.Errorf("%w: negative or invalid limit", ErrInvalidArgument)
	}
	a, err := ParseAdaptive(th.Adaptive)
	if err != nil {
		return th, err
	}
	th.Adaptive = "on"
	if a == "off" {
		th.Adaptive = "off"
	}
	data, _ := json.Marshal(th)
	for {
		_, seq, err := e.ReadConfig(ctx, throttleDoc)
		if err != nil && !errors.Is(err, ErrNoConfig) {
			return th, err
		}
		_, err = e.WriteConfig(ctx, throttleDoc, seq, data)
		if errors.Is(err, ErrConfigConflict) {
			continue
		}
		if err != nil {
			return th, err
		}
		e.poolState.move.set(th)
		e.kickDecom()
		return th, nil
	}
}

// followThrottle rereads the limits (the mover's loop, each tick).
func (e *Engine) followThrottle(ctx context.Context) {
	th, err := e.MoveThrottle(ctx)
	if err != nil {
		e.log.Warn("cannot read the move throttle; keeping the last one", "err", err)
		return
	}
	e.poolState.move.set(th)
}

// movePacer paces the moves of one mover to its MoveThrottle: after
// each key moved, it waits until the bytes and keys moved since the
// window began took at least as long as the limits allow. A window
// starts when the limits change or after the mover was idle a second.
type movePacer struct {
	// lat is the client requests' latency (ObserveClientLatency) and
	// adapt the mover's speed decided from it (adaptive.go).
	lat     clientLatency
	adapt   adaptive
	lastEnd atomic.Int64 // unix nanoseconds the mover's last rest ended
	mu      sync.Mutex
	th      MoveThrottle
	start   time.Time
	last    time.Time
	bytes   int64
	objects int64
}

func (m *movePacer) set(th MoveThrottle) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if th != m.th {
		m.th, m.start = th, time.Time{}
	}
}

// delay records one key of n bytes moved at now and says how long to
// wait before the next.
func (m *movePacer) delay(now time.Time, n int64) time.Duration {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.th.Bandwidth <= 0 && m.th.Objects <= 0 {
		return 0
	}
	if m.start.IsZero() || now.Sub(m.last) > time.Second {
		m.start, m.bytes, m.objects = now, 0, 0
	}
	m.bytes += n
	m.objects++
	m.last = now
	var want time.Duration
	if m.th.Bandwidth > 0 {
		want = max(want, time.Duration(float64(m.bytes)/float64(m.th.Bandwidth)*float64(time.Second)))
	}
	if m.th.Objects > 0 {
		want = max(want, time.Duration(float64(m.objects)/m.th.Objects*float64(time.Second)))
	}
	d := want - now.Sub(m.start)
	if d <= 0 {
		return 0
	}
	m.last = now.Add(d)
	return d
}

// pace waits after a key of n bytes was moved, as the throttle says.
// With the adaptive switch on it rests at least as long as the clients'
// latency says (adaptive.go).
func (e *Engine) pace(ctx context.Context, n int64) error {
	m := &e.poolState.move
	now := time.Now()
	d := m.delay(now, n)
	if a := m.adaptiveRest(now); a > d {
		d = a
	}
	defer func() { m.lastEnd.Store(time.Now().UnixNano()) }()
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// adaptiveRest is the rest the clients' latency asks of the mover after
// a move that ended at now: the move took the time since the last rest
// ended (none counted after a pause of more than idleGap).
func (m *movePacer) adaptiveRest(now time.Time) time.Duration {
	m.mu.Lock()
	on := m.th.adaptiveOn()
	m.mu.Unlock()
	if !on {
		return 0
	}
	var took time.Duration
	if last := m.lastEnd.Load(); last != 0 {
		if t := now.Sub(time.Unix(0, last)); t > 0 && t <= idleGap {
			took = t
		}
	}
	return m.adapt.rest(now, took, &m.lat)
}

// ObserveClientLatency records how long a client's object request took
// (the S3 server calls it for small GET, HEAD and PUT requests), for the
// mover's adaptive throttle. Cheap: two atomic adds.
func (e *Engine) ObserveClientLatency(d time.Duration) {
	if d <= 0 {
		return
	}
	e.poolState.move.lat.count.Add(1)
	e.poolState.move.lat.sum.Add(int64(d))
}

// MoveSpeed is the share of time the adaptive throttle lets the movers
// work now (1: full speed, or the switch is off).
func (e *Engine) MoveSpeed() float64 {
	m := &e.poolState.move
	m.mu.Lock()
	on := m.th.adaptiveOn()
	m.mu.Unlock()
	if !on {
		return 1
	}
	return m.adapt.speed()
}
