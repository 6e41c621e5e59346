package background

import (
	"context"
	"time"
)

// Clock is the time the jobs read and wait on: the queue's due times,
// the pauses between cycles, the throttle's rests and the times reported
// in Status. Injected (Config.Clock) so a test can run a cycle on a fake
// clock instead of sleeping; the engine's own clock (engine.Config.Now,
// which lifecycle rules and retention are judged by) is a separate one.
type Clock interface {
	Now() time.Time
	// NewTimer returns a timer that fires once, d from now.
	NewTimer(d time.Duration) Timer
	// NewTicker returns a timer that fires every d, dropping ticks a slow
	// receiver misses (as time.Ticker does).
	NewTicker(d time.Duration) Timer
}

// Timer is a timer or ticker of a Clock.
type Timer interface {
	C() <-chan time.Time
	Stop()
}

// systemClock is the real time.
type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

func (systemClock) NewTimer(d time.Duration) Timer { return sysTimer{time.NewTimer(d)} }

func (systemClock) NewTicker(d time.Duration) Timer { return sysTicker{time.NewTicker(d)} }

type sysTimer struct{ t *time.Timer }

func (t sysTimer) C() <-chan time.Time { return t.t.C }
func (t sysTimer) Stop()               { t.t.Stop() }

type sysTicker struct{ t *time.Ticker }

func (t sysTicker) C() <-chan time.Time { return t.t.C }
func (t sysTicker) Stop()               { t.t.Stop() }

// since is the time passed since t on the jobs' clock.
func (j *Jobs) since(t time.Time) time.Duration { return j.clock.Now().Sub(t) }

// sleep waits d or until the jobs stop; false means stop.
func (j *Jobs) sleep(d time.Duration) bool {
	if d <= 0 {
		select {
		case <-j.stop:
			return false
		default:
			return true
		}
	}
	t := j.clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-j.stop:
		return false
	case <-t.C():
		return true
	}
}

// throttle paces a job that works in steps (one object healed, one
// object a lifecycle rule judged): after each step it rests factor times
// as long as the step took. At factor 1 the job rests as long as the
// work took, so it keeps a drive busy at most half the time however fast
// or slow the drives are, with no rate to tune per deployment. A factor
// of 0 never rests (an operator's heal, which wants its answer now).
//
// The returned rest fails with context.Canceled when the jobs stop
// during a rest, else with ctx's error.
func (j *Jobs) throttle(ctx context.Context, factor float64) func(took time.Duration) error {
	return func(took time.Duration) error {
		if factor > 0 && !j.sleep(time.Duration(float64(took)*factor)) {
			return context.Canceled
		}
		return ctx.Err()
	}
}
