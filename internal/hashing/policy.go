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

// concurrency turns the number of heavy streams now active (this one
// included) into the number the policy uses: the recent peak when other
// streams are active, see Config.ConcurrencyWindow.
func (e *Engine) concurrency(now int64) int {
	t := time.Now().UnixNano()
	peak, at := e.c.peak.Load(), e.c.peakAt.Load()
	if now >= peak || t-at > int64(e.cfg.ConcurrencyWindow) {
		// Racing updates may lose one; the peak is a hint, not a count.
		e.c.peak.Store(now)
		e.c.peakAt.Store(t)
		peak = now
	}
	if now <= 1 {
		return int(now)
	}
	return int(max(now, peak))
}

// decide applies the policy. counted: a heavy stream of at least
// MultibufferMinSize; large: at least MinOffloadSize; n: concurrent
// counted streams. The auto rules, in order, and why:
//
//  1. Streams with only cheap hashes (CRCs, XXH3) stay inline.
//  2. The CPU is the bottleneck when Load.Busy() >= BusyThreshold or
//     there are at least as many counted streams as CPUs (every core
//     already has an upload to run). Only then is MD5
//     offloaded to a device or the multi-lane service: with spare cores
//     offloading gains nothing or loses (the study's lesson).
//  3. CPU bottleneck, large stream, device with a free lane: the MD5 goes
//     to the device. Open never blocks: no lane, or a recent queue-full
//     fallback (DeviceBackoff), means CPU. Small objects stay off it: the
//     study gained nothing at 4 MB, the round trips eat the overlap.
//  4. CPU bottleneck, counted stream, at least MultibufferMinStreams
//     counted streams: the MD5 goes to the shared multi-lane SIMD
//     service, which costs 0.78x crypto/md5's CPU per byte with two
//     streams and about 0.15x with sixteen; one stream alone would pay
//     for eight lanes, which is why the count gates it (MinIO's attempt
//     lost exactly there). Without a CPU bottleneck it stays off: one
//     service computes on one core, so a few streams on an idle many-core
//     machine hash faster pipelined, a core each.
//  5. Large stream, fewer counted streams than CPUs: pipelined, so the
//     hash runs beside erasure coding and drive writes and a lone upload
//     finishes sooner. This rule deliberately ignores Load: the hand-off
//     costs microseconds per MiB, so when other work takes the spare core
//     a pipelined stream is no slower than inline, while a load signal
//     that still shows the previous upload's hashing would otherwise keep
//     back-to-back lone uploads from ever overlapping.
//  6. Everything else inline: small objects have too little to overlap,
//     and with as many hashing streams as CPUs a hand-off cannot find a
//     free core.
func (e *Engine) decide(needMD5, heavy, counted, large bool, n int) decision {
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
	bottleneck := n >= e.cfg.Procs || e.cfg.Load.Busy() >= e.cfg.BusyThreshold
	if needMD5 && bottleneck && large && e.cfg.Device != nil {
		if time.Now().UnixNano() >= e.c.deviceBackoffUntil.Load() {
			if ds, ok := e.cfg.Device.Open(); ok {
				return decision{backend: BackendDevice, dev: ds}
			}
		}
		e.c.refused.Add(1)
	}
	if needMD5 && bottleneck && counted && n >= e.cfg.MultibufferMinStreams {
		if h := e.simd.newHash(); h != nil {
			return decision{backend: BackendMultibuffer, simd: h}
		}
	}
	if large && n < e.cfg.Procs {
		return decision{backend: BackendPipelined}
	}
	return inline
}

// noteDeviceFull records that a stream found the device queue full, so
// auto keeps new streams off the device for a while.
func (e *Engine) noteDeviceFull() {
	e.c.fallbacks.Add(1)
	e.c.deviceBackoffUntil.Store(time.Now().Add(e.cfg.DeviceBackoff).UnixNano())
}
