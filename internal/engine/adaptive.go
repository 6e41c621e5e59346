package engine

import (
	"sync"
	"sync/atomic"
	"time"
)

// The adaptive throttle: decommission and rebalance back off by
// themselves when client requests slow down. The S3 server reports the
// time each small object request took (ObserveClientLatency); once a
// second the mover's pacer compares the mean of the last second's
// requests with a baseline and sets the share of time the mover may
// work (its speed, from minMoveSpeed to 1): halved when the clients are
// slower than latencyFactor times the baseline (and latencySlack more),
// raised by speedStep when not (AIMD, as TCP does with its window). A
// mover at speed s rests (1-s)/s times as long as each move took, on top
// of the fixed limits of MoveThrottle, which still bound it.

const (
	// latencyFactor is how much slower than the baseline the clients
	// may get before the mover halves its speed.
	latencyFactor = 1.5
	// latencySlack is the least the clients must slow down by (so that
	// noise on sub-millisecond requests is not taken for congestion).
	latencySlack = time.Millisecond
	// minLatencySamples is the fewest client requests in a window that
	// say anything; fewer (or none) and the mover speeds up.
	minLatencySamples = 5
	// minMoveSpeed is the slowest the mover goes: it always makes some
	// progress.
	minMoveSpeed = 1.0 / 64
	// speedStep is the additive increase per window without congestion.
	speedStep = 1.0 / 16
	// baselineWeight is how much one window moves the baseline when it
	// is taken (the mover idle, or at its slowest).
	baselineWeight = 0.2
	// adaptWindow is how often the pacer decides.
	adaptWindow = time.Second
	// idleGap is how long the mover must not have moved anything for
	// the clients' latency to count as the baseline.
	idleGap = 3 * time.Second
)

// latencyWindow is what the pacer sees of the client requests of one
// window: how many, and the mean time they took.
type latencyWindow struct {
	Count int64
	Mean  time.Duration
}

// adaptState is the decision logic's state: the baseline client latency
// (zero: none yet) and the mover's speed (the share of time it works).
type adaptState struct {
	Baseline time.Duration
	Speed    float64
}

// adaptDecide is the decision, with no clock and no I/O: given the state,
// the window's client latency and whether the mover was idle during it,
// the new state. A window with the mover idle (or at its slowest, where
// the clients' latency is not its doing) takes the baseline; a busy
// window only lowers it (a faster client is never congestion), so that
// the mover cannot raise its own yardstick by slowing the clients down.
func adaptDecide(s adaptState, w latencyWindow, idle bool) adaptState {
	if s.Speed <= 0 || s.Speed > 1 {
		s.Speed = 1
	}
	if w.Count < minLatencySamples || w.Mean <= 0 {
		if !idle {
			s.Speed = min(1, s.Speed+speedStep)
		}
		return s
	}
	switch {
	case s.Baseline <= 0:
		s.Baseline = w.Mean
	case idle || s.Speed <= minMoveSpeed:
		s.Baseline += time.Duration(baselineWeight * float64(w.Mean-s.Baseline))
	case w.Mean < s.Baseline:
		s.Baseline = w.Mean
	}
	if idle {
		return s
	}
	limit := max(time.Duration(latencyFactor*float64(s.Baseline)), s.Baseline+latencySlack)
	if w.Mean > limit {
		s.Speed = max(minMoveSpeed, s.Speed/2)
	} else {
		s.Speed = min(1, s.Speed+speedStep)
	}
	return s
}

// adaptRest is how long a mover at speed s rests after a move that took
// took: (1-s)/s times as long, so that it works s of the time.
func adaptRest(speed float64, took time.Duration) time.Duration {
	if speed <= 0 || speed >= 1 || took <= 0 {
		return 0
	}
	return time.Duration(float64(took) * (1 - speed) / speed)
}

// clientLatency sums the client requests' times, lock-free: the S3
// server adds to it on every small object request.
type clientLatency struct {
	count atomic.Int64
	sum   atomic.Int64 // nanoseconds
}

// take returns the window since the last take and starts a new one.
func (c *clientLatency) take() latencyWindow {
	n, s := c.count.Swap(0), c.sum.Swap(0)
	if n <= 0 {
		return latencyWindow{}
	}
	return latencyWindow{Count: n, Mean: time.Duration(s / n)}
}

// adaptive is the mover's adaptive pacer: the decision's state, when it
// was last taken and when the mover last moved.
type adaptive struct {
	mu       sync.Mutex
	state    adaptState
	decided  time.Time
	lastMove time.Time
}

// rest records a move that ended at now and took took, decides when a
// window has passed, and says how long the mover rests.
func (a *adaptive) rest(now time.Time, took time.Duration, lat *clientLatency) time.Duration {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.decided.IsZero() {
		a.decided = now
	}
	if now.Sub(a.decided) >= adaptWindow {
		idle := !a.lastMove.IsZero() && now.Sub(a.lastMove) > idleGap
		if idle {
			// The window the mover was idle in sets the baseline; the
			// one starting now is judged from the next decision on.
			a.state = adaptDecide(a.state, lat.take(), true)
		} else {
			a.state = adaptDecide(a.state, lat.take(), false)
		}
		a.decided = now
	}
	a.lastMove = now
	return adaptRest(a.state.Speed, took)
}

// speed is the mover's current share of time (1 when it has not decided).
func (a *adaptive) speed() float64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.state.Speed <= 0 {
		return 1
	}
	return a.state.Speed
}
