package hashing

import (
	"hash"
	"strings"
	"time"
)

// decision is the policy's choice for one stream, with whatever resource
// it already acquired for it (a device lane, a multi-lane MD5 hasher).
type decision struct {
	backend Backend
	dev     DeviceStream
	simd    hash.Hash
}

func isHeavyChecksum(algorithm string) bool {
	a := strings.ToUpper(algorithm)
	return a == SHA1 || a == SHA256
}

// decide applies the policy. The auto rules, in order, and why:
//
//  1. Small streams (known size below MinOffloadSize) and streams with only
//     cheap hashes stay inline: handing 1..8 blocks to another goroutine or
//     a device overlaps almost nothing and adds hand-off latency (the study
//     gained nothing at 4 MB).
//  2. When the CPU is the bottleneck (Load.Busy() >= BusyThreshold, or more
//     large hashing streams than CPUs) and a device has a free lane, the
//     stream's MD5 goes to the device. Open never blocks: no lane, or a
//     recent queue-full fallback (DeviceBackoff), means CPU.
//  3. When the CPU is the bottleneck and at least MultibufferMinStreams
//     large MD5 streams are active, MD5 goes to the shared multi-lane SIMD
//     service: with enough streams to fill its lanes it costs a third to a
//     half of the CPU per byte; with few streams it costs more, which is
//     why MinStreams gates it (MinIO's attempt lost exactly there).
//  4. Otherwise, if the CPU is busy, inline: a hand-off cannot use a core
//     that is not free, it only adds a context switch per block.
//  5. Otherwise (spare cores, fewer large streams than CPUs) pipelined: the
//     hash runs on its own goroutine beside erasure coding and drive
//     writes, so a lone upload finishes sooner instead of paying MD5 in
//     series.
func (e *Engine) decide(needMD5, heavy, large bool) decision {
	inline := decision{backend: BackendInline}
	if !heavy {
		return inline
	}
	switch e.cfg.Policy {
	case PolicyInline:
		return inline
	case PolicyPipelined:
		return decision{backend: BackendPipelined}
	case PolicyMultibuffer:
		if needMD5 {
			if h := e.simd.newHash(); h != nil {
				return decision{backend: BackendMultibuffer, simd: h}
			}
		}
		return decision{backend: BackendPipelined}
	case PolicyDevice:
		if needMD5 {
			if ds, ok := e.cfg.Device.Open(); ok {
				return decision{backend: BackendDevice, dev: ds}
			}
			e.c.refused.Add(1)
		}
		return inline
	}

	// PolicyAuto.
	if !large {
		return inline
	}
	n := int(e.c.activeLarge.Load())
	busy := e.cfg.Load.Busy() >= e.cfg.BusyThreshold || n > e.cfg.Procs
	if needMD5 && busy && e.cfg.Device != nil {
		if time.Now().UnixNano() >= e.c.deviceBackoffUntil.Load() {
			if ds, ok := e.cfg.Device.Open(); ok {
				return decision{backend: BackendDevice, dev: ds}
			}
		}
		e.c.refused.Add(1)
	}
	if needMD5 && busy && n >= e.cfg.MultibufferMinStreams {
		if h := e.simd.newHash(); h != nil {
			return decision{backend: BackendMultibuffer, simd: h}
		}
	}
	if busy || n >= e.cfg.Procs {
		return inline
	}
	return decision{backend: BackendPipelined}
}

// noteDeviceFull records that a stream found the device queue full, so
// auto keeps new streams off the device for a while.
func (e *Engine) noteDeviceFull() {
	e.c.fallbacks.Add(1)
	e.c.deviceBackoffUntil.Store(time.Now().Add(e.cfg.DeviceBackoff).UnixNano())
}
