package hashing

import (
	"crypto/md5"
	"encoding"
	"errors"
	"fmt"
	"hash"
	"sync"
	"sync/atomic"
	"time"
)

// SimDeviceConfig shapes a simulated accelerator.
type SimDeviceConfig struct {
	// Lanes is how many streams the device serves at once; default 4.
	Lanes int
	// QueueDepth is how many blocks each lane accepts before Submit
	// refuses; default 4.
	QueueDepth int
	// Latency is added to every block, as a device round trip would be.
	Latency time.Duration
	// BytesPerSecond caps each lane's throughput (0: as fast as the CPU
	// goroutine computing it), to simulate a slow device.
	BytesPerSecond float64
}

// SimDevice is a Device for tests and benchmarks: it really computes MD5,
// on one goroutine per open lane, adding latency and throughput limits, so
// digests stay correct while the policy meets a full or slow device.
// Pause and Resume stop and restart the lanes to make "queue full" happen
// deterministically.
type SimDevice struct {
	cfg   SimDeviceConfig
	lanes chan struct{} // one token per free lane

	mu     sync.Mutex
	cond   *sync.Cond
	paused bool
}

// NewSimDevice returns a simulated device.
func NewSimDevice(cfg SimDeviceConfig) *SimDevice {
	if cfg.Lanes <= 0 {
		cfg.Lanes = 4
	}
	if cfg.QueueDepth <= 0 {
		cfg.QueueDepth = 4
	}
	d := &SimDevice{cfg: cfg, lanes: make(chan struct{}, cfg.Lanes)}
	d.cond = sync.NewCond(&d.mu)
	for range cfg.Lanes {
		d.lanes <- struct{}{}
	}
	return d
}

// Name implements Device.
func (d *SimDevice) Name() string {
	return fmt.Sprintf("sim(lanes=%d,queue=%d,latency=%s)", d.cfg.Lanes, d.cfg.QueueDepth, d.cfg.Latency)
}

// FreeLanes reports how many lanes are free now.
func (d *SimDevice) FreeLanes() int { return len(d.lanes) }

// Pause stops every lane before its next block, so queues fill up.
func (d *SimDevice) Pause() {
	d.mu.Lock()
	d.paused = true
	d.mu.Unlock()
}

// Resume lets paused lanes carry on.
func (d *SimDevice) Resume() {
	d.mu.Lock()
	d.paused = false
	d.cond.Broadcast()
	d.mu.Unlock()
}

// waitRunning blocks while the device is paused, unless the lane is
// aborted (an aborted lane drops its blocks, which needs no device work).
func (d *SimDevice) waitRunning(s *simLane) {
	d.mu.Lock()
	for d.paused && !s.abort.Load() {
		d.cond.Wait()
	}
	d.mu.Unlock()
}

// Open implements Device; it never blocks.
func (d *SimDevice) Open() (DeviceStream, bool) {
	select {
	case <-d.lanes:
	default:
		return nil, false
	}
	s := &simLane{
		d:    d,
		md5:  md5.New(),
		jobs: make(chan block, d.cfg.QueueDepth),
		out:  make(chan struct{}),
	}
	go s.run()
	return s, true
}

// simLane is one open lane: a goroutine that hashes its queue in order.
type simLane struct {
	d     *SimDevice
	md5   hash.Hash
	jobs  chan block
	out   chan struct{} // closed when run has drained jobs
	abort atomic.Bool
	ended bool // jobs closed; used by the owning stream only
}

func (s *simLane) run() {
	defer close(s.out)
	for b := range s.jobs {
		if !s.abort.Load() {
			s.d.waitRunning(s)
		}
		if !s.abort.Load() {
			delay := s.d.cfg.Latency
			if s.d.cfg.BytesPerSecond > 0 {
				delay += time.Duration(float64(len(b.p)) / s.d.cfg.BytesPerSecond * float64(time.Second))
			}
			if delay > 0 {
				time.Sleep(delay)
			}
			s.md5.Write(b.p)
		}
		b.release()
	}
}

func (s *simLane) Submit(p []byte, done func()) bool {
	if s.ended {
		return false
	}
	select {
	case s.jobs <- block{p, done}:
		return true
	default:
		return false
	}
}

// finish closes the queue, waits for the lane goroutine and frees the
// lane; it reports false when the lane had already been finished.
func (s *simLane) finish(abort bool) bool {
	if s.ended {
		return false
	}
	s.ended = true
	if abort {
		s.abort.Store(true)
		s.d.mu.Lock()
		s.d.cond.Broadcast()
		s.d.mu.Unlock()
	}
	close(s.jobs)
	<-s.out
	s.d.lanes <- struct{}{}
	return true
}

var errLaneEnded = errors.New("hashing: simulated device lane already ended")

func (s *simLane) Sum() ([]byte, error) {
	if !s.finish(false) {
		return nil, errLaneEnded
	}
	return s.md5.Sum(nil), nil
}

func (s *simLane) Detach() ([]byte, error) {
	if !s.finish(false) {
		return nil, errLaneEnded
	}
	state, err := s.md5.(encoding.BinaryMarshaler).MarshalBinary()
	if err != nil {
		return nil, fmt.Errorf("hashing: simulated device state: %w", err)
	}
	return state, nil
}

func (s *simLane) Abort() { s.finish(true) }
