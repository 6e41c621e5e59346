package bench

import (
	"math"
	"math/bits"
	"time"
)

// A latency histogram in the spirit of HdrHistogram: log-linear buckets
// with 128 sub-buckets per power of two, so any recorded value is known to
// within 1/128 (0.8 %) of itself and the memory is fixed however long a
// run lasts. A long load run at tens of thousands of ops/s would otherwise
// keep hundreds of millions of samples just to sort them once.
const (
	latSubBits = 7
	latSub     = 1 << latSubBits // sub-buckets per power of two
	// latMaxBits bounds recorded values to 2^43 ns (about 2.4 hours);
	// anything longer lands in the top bucket (and still sets Max).
	latMaxBits = 43
	// latBuckets is the index of the top bucket plus one: values below
	// 2*latSub get one bucket each, each further power of two latSub more.
	latBuckets = (latMaxBits-latSubBits)*latSub + latSub
)

// latencyHist records durations. The zero value is not usable; use
// newLatencyHist. It is not safe for concurrent use: each load worker
// keeps its own and they are merged at the end.
type latencyHist struct {
	counts   []uint64
	n        uint64
	sum      time.Duration
	min, max time.Duration
}

func newLatencyHist() *latencyHist {
	return &latencyHist{counts: make([]uint64, latBuckets)}
}

// latBucket maps a value in nanoseconds to its bucket index.
func latBucket(v uint64) int {
	if v >= 1<<latMaxBits {
		v = 1<<latMaxBits - 1
	}
	shift := max(0, bits.Len64(v)-(latSubBits+1))
	return shift*latSub + int(v>>shift)
}

// latBucketRange is the inclusive lowest and highest value bucket i holds.
func latBucketRange(i int) (lo, hi uint64) {
	if i < 2*latSub {
		return uint64(i), uint64(i)
	}
	shift := i/latSub - 1
	mant := uint64(i - shift*latSub)
	lo = mant << shift
	return lo, lo + 1<<shift - 1
}

// Record adds one observation; negative durations count as zero.
func (h *latencyHist) Record(d time.Duration) {
	d = max(d, 0)
	h.counts[latBucket(uint64(d))]++
	if h.n == 0 || d < h.min {
		h.min = d
	}
	if d > h.max {
		h.max = d
	}
	h.n++
	h.sum += d
}

// Merge adds all of o's observations to h.
func (h *latencyHist) Merge(o *latencyHist) {
	if o.n == 0 {
		return
	}
	for i, c := range o.counts {
		h.counts[i] += c
	}
	if h.n == 0 || o.min < h.min {
		h.min = o.min
	}
	h.max = max(h.max, o.max)
	h.n += o.n
	h.sum += o.sum
}

// Count is the number of observations.
func (h *latencyHist) Count() uint64 { return h.n }

// Quantile returns the nearest-rank q-quantile (0 < q <= 1): the smallest
// recorded value with at least q of all observations at or below it, as
// the midpoint of its bucket and clamped to the exact min and max. It is
// 0 when nothing was recorded.
func (h *latencyHist) Quantile(q float64) time.Duration {
	if h.n == 0 {
		return 0
	}
	rank := nearestRank(h.n, q)
	var seen uint64
	for i, c := range h.counts {
		seen += c
		if seen >= rank {
			lo, hi := latBucketRange(i)
			mid := time.Duration(lo + (hi-lo)/2)
			return min(max(mid, h.min), h.max)
		}
	}
	return h.max
}

// nearestRank is the 1-based rank of the q-quantile among n sorted
// observations: ceil(q*n), at least 1 and at most n.
func nearestRank(n uint64, q float64) uint64 {
	r := uint64(math.Ceil(q * float64(n)))
	return min(max(r, 1), n)
}

// quantileSorted is the exact nearest-rank q-quantile of an ascending
// slice; the tests hold the histogram against it.
func quantileSorted(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[nearestRank(uint64(len(sorted)), q)-1]
}

// LatencyStats summarises one set of latencies in milliseconds, the unit
// people read S3 latencies in.
type LatencyStats struct {
	MeanMS float64 `json:"mean_ms"`
	MinMS  float64 `json:"min_ms"`
	P50MS  float64 `json:"p50_ms"`
	P90MS  float64 `json:"p90_ms"`
	P99MS  float64 `json:"p99_ms"`
	MaxMS  float64 `json:"max_ms"`
}

// Stats summarises the histogram.
func (h *latencyHist) Stats() LatencyStats {
	if h.n == 0 {
		return LatencyStats{}
	}
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	return LatencyStats{
		MeanMS: ms(h.sum / time.Duration(h.n)),
		MinMS:  ms(h.min),
		P50MS:  ms(h.Quantile(0.50)),
		P90MS:  ms(h.Quantile(0.90)),
		P99MS:  ms(h.Quantile(0.99)),
		MaxMS:  ms(h.max),
	}
}
