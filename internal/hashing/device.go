package hashing

import (
	"crypto/md5"
	"encoding"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// Device is an MD5 accelerator (QAT, GPU, or SimDevice in tests) with a
// bounded number of lanes, each carrying one stream's MD5 state, and a
// bounded submission queue per lane.
//
// MD5 is sequential within a stream, so a stream cannot hop between the
// device and the CPU block by block. The contract is therefore: a stream
// takes a whole lane at its start (Open, which never blocks; no lane means
// the stream stays on the CPU), submits blocks without blocking, and when
// a Submit finds the queue full (or the stream already has
// Config.DeviceInflight blocks on the device) it Detaches: the device finishes the
// blocks already queued (at most the queue depth), hands back the MD5
// state, and the stream continues on the CPU from there. The only wait is
// for the stream's own few queued blocks, never for a free slot.
type Device interface {
	// Name identifies the device in logs and metrics.
	Name() string
	// Open claims a lane for one stream without blocking; ok is false
	// when every lane is taken.
	Open() (s DeviceStream, ok bool)
}

// DeviceStream is one stream's MD5 on a device lane.
type DeviceStream interface {
	// Submit queues p without blocking and reports whether it was
	// accepted. If it was, done is called exactly once, possibly from
	// another goroutine, once the device no longer reads p (also when the
	// stream is aborted). If not, the caller keeps ownership of p.
	Submit(p []byte, done func()) bool
	// Sum waits for every submitted block (every done has been called
	// when it returns), returns the MD5 and frees the lane.
	Sum() ([]byte, error)
	// Detach waits for every submitted block (and its done), frees the
	// lane and returns
	// the MD5 state in crypto/md5's MarshalBinary format, so the CPU can
	// carry on with the stream.
	Detach() ([]byte, error)
	// Abort drops queued blocks (calling their done) and frees the lane.
	// It is a no-op after Sum or Detach and safe to call twice.
	Abort()
}

// errDeviceTimeout fails a stream whose device did not answer in time.
var errDeviceTimeout = errors.New("hashing: device did not finish in time")

// deviceStream sends MD5 to a device lane and the other hashes, which
// are cheap or not offloadable, through the CPU on the caller's goroutine.
type deviceStream struct {
	e   *Engine
	h   hashes
	dev DeviceStream // nil once detached or ended
	act *activity

	mu    sync.Mutex    // guards devNS, written by done callbacks
	devNS time.Duration // submission-to-completion time of device blocks
	// inflight counts blocks submitted and not yet done; capped at
	// Config.DeviceInflight.
	inflight atomic.Int32
	fell     bool
	err      error
	summed   bool
	closed   bool
	// result and resErr are the first Sum's answer, returned again by
	// later calls (the device lane is gone by then).
	result Digests
	resErr error
}

func newDeviceStream(e *Engine, h hashes, ds DeviceStream, act *activity) *deviceStream {
	return &deviceStream{e: e, h: h, dev: ds, act: act}
}

func (s *deviceStream) Write(p []byte, release func()) {
	if s.summed || s.closed || s.err != nil {
		release()
		return
	}
	if s.dev != nil {
		t := time.Now()
		s.h.writeCPU(p)
		t1 := time.Now()
		s.h.busy += t1.Sub(t)
		if int(s.inflight.Load()) < s.e.cfg.DeviceInflight {
			s.inflight.Add(1)
			if s.dev.Submit(p, func() {
				d := time.Since(t1)
				s.mu.Lock()
				s.devNS += d
				s.mu.Unlock()
				s.inflight.Add(-1)
				release()
			}) {
				s.h.n += int64(len(p))
				return
			}
			s.inflight.Add(-1)
		}
		// Queue full, or this stream's blocks pile up on the device: move
		// the stream to the CPU for good (see Device).
		if err := s.detach(); err != nil {
			s.err = err
			release()
			return
		}
		t = time.Now()
		s.h.md5.Write(p)
		s.h.busy += time.Since(t)
		s.h.n += int64(len(p))
		release()
		return
	}
	s.h.write(p)
	release()
}

// detach fetches the MD5 state from the device and continues on the CPU.
func (s *deviceStream) detach() error {
	ds := s.dev
	s.dev = nil
	s.fell = true
	s.e.noteDeviceFull()
	state, err := deviceWait(ds.Detach, s.e.cfg.DeviceTimeout)
	if err != nil {
		return fmt.Errorf("hashing: detach from device: %w", err)
	}
	m := md5.New()
	if err := m.(encoding.BinaryUnmarshaler).UnmarshalBinary(state); err != nil {
		return fmt.Errorf("hashing: device MD5 state: %w", err)
	}
	s.h.md5 = m
	return nil
}

// deviceWait runs a waiting device call with a deadline, so a stuck device
// fails the stream instead of hanging the upload. On timeout the call is
// left running (Sum and Detach cannot be cancelled; Abort is a no-op once
// they started): its goroutine and the blocks the device still holds are
// freed if the device ever answers.
func deviceWait(f func() ([]byte, error), timeout time.Duration) ([]byte, error) {
	type result struct {
		b   []byte
		err error
	}
	ch := make(chan result, 1)
	go func() {
		b, err := f()
		ch <- result{b, err}
	}()
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case r := <-ch:
		return r.b, r.err
	case <-t.C:
		return nil, errDeviceTimeout
	}
}

// Sum implements Stream.
func (s *deviceStream) Sum() (Digests, error) {
	if s.closed {
		return Digests{}, errClosed
	}
	if s.summed {
		return s.result, s.resErr
	}
	s.summed = true
	s.result, s.resErr = s.sum()
	return s.result, s.resErr
}

func (s *deviceStream) sum() (Digests, error) {
	t := time.Now()
	var m []byte
	err := s.err
	if err == nil && s.dev != nil {
		ds := s.dev
		s.dev = nil
		m, err = deviceWait(ds.Sum, s.e.cfg.DeviceTimeout)
		if err != nil {
			err = fmt.Errorf("hashing: device sum: %w", err)
		}
	} else if err == nil {
		m = s.h.md5.Sum(nil)
	}
	wait := time.Since(t)
	s.mu.Lock()
	s.h.busy += s.devNS
	s.mu.Unlock()
	if err != nil {
		s.act.end(BackendDevice, nil)
		return Digests{}, err
	}
	d := s.h.digests(m)
	d.Backend, d.FellBack, d.SumWait = BackendDevice, s.fell, wait
	s.act.end(BackendDevice, &d)
	return d, nil
}

func (s *deviceStream) Close() {
	if s.closed {
		return
	}
	s.closed = true
	if s.dev != nil {
		s.dev.Abort()
		s.dev = nil
	}
	s.act.end(BackendDevice, nil)
}
