package bench

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

func TestQuantileSortedNearestRank(t *testing.T) {
	// 1..10 ms: nearest rank p50 = 5th value, p90 = 9th, p99 = 10th.
	var s []time.Duration
	for i := 1; i <= 10; i++ {
		s = append(s, time.Duration(i)*time.Millisecond)
	}
	for _, c := range []struct {
		q    float64
		want time.Duration
	}{{0.5, 5 * time.Millisecond}, {0.9, 9 * time.Millisecond}, {0.99, 10 * time.Millisecond},
		{1, 10 * time.Millisecond}, {0.01, time.Millisecond}, {0.51, 6 * time.Millisecond}} {
		if got := quantileSorted(s, c.q); got != c.want {
			t.Errorf("q=%v: got %v, want %v", c.q, got, c.want)
		}
	}
	if got := quantileSorted(nil, 0.5); got != 0 {
		t.Errorf("empty: got %v, want 0", got)
	}
}

func TestLatBucketRoundTrip(t *testing.T) {
	// Every bucket's range maps back to it, ranges tile the line without
	// gaps, and each is at most 1/128 of its lower bound wide.
	var next uint64
	for i := 0; i < latBuckets; i++ {
		lo, hi := latBucketRange(i)
		if lo != next {
			t.Fatalf("bucket %d starts at %d, want %d (gap or overlap)", i, lo, next)
		}
		if latBucket(lo) != i || latBucket(hi) != i {
			t.Fatalf("bucket %d [%d,%d] maps to %d and %d", i, lo, hi, latBucket(lo), latBucket(hi))
		}
		if lo >= 2*latSub && float64(hi-lo+1) > float64(lo)/latSub {
			t.Fatalf("bucket %d [%d,%d] wider than 1/%d of its value", i, lo, hi, latSub)
		}
		next = hi + 1
	}
	if next != 1<<latMaxBits {
		t.Fatalf("buckets end at %d, want 2^%d", next, latMaxBits)
	}
	// Values past the top clamp into the last bucket instead of panicking.
	if got := latBucket(1 << 62); got != latBuckets-1 {
		t.Errorf("huge value in bucket %d, want %d", got, latBuckets-1)
	}
}

func TestHistogramMatchesExactQuantiles(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, dist := range []struct {
		name string
		gen  func() time.Duration
	}{
		{"uniform 1-100ms", func() time.Duration { return time.Millisecond + time.Duration(rng.Int64N(int64(99*time.Millisecond))) }},
		{"lognormal-ish", func() time.Duration {
			// Mostly ~200µs with a long tail, like real request latency.
			d := 200 * time.Microsecond
			for rng.IntN(4) == 0 {
				d *= 3
			}
			return d + time.Duration(rng.IntN(50_000))
		}},
		{"tiny ns", func() time.Duration { return time.Duration(rng.IntN(300)) }},
	} {
		t.Run(dist.name, func(t *testing.T) {
			h := newLatencyHist()
			var all []time.Duration
			for range 20000 {
				d := dist.gen()
				h.Record(d)
				all = append(all, d)
			}
			slices.Sort(all)
			for _, q := range []float64{0.01, 0.5, 0.9, 0.99, 0.999, 1} {
				want := quantileSorted(all, q)
				got := h.Quantile(q)
				// Midpoint of a bucket at most 1/128 wide: within 1/256,
				// plus one for integer rounding of tiny values.
				tol := float64(want)/(2*latSub) + 1
				if diff := float64(got - want); diff > tol || -diff > tol {
					t.Errorf("q=%v: histogram %v, exact %v (tolerance %.0fns)", q, got, want, tol)
				}
			}
			st := h.Stats()
			if st.MinMS != float64(all[0])/1e6 || st.MaxMS != float64(all[len(all)-1])/1e6 {
				t.Errorf("min/max %v/%v, want exact %v/%v", st.MinMS, st.MaxMS, all[0], all[len(all)-1])
			}
			if !(st.MinMS <= st.P50MS && st.P50MS <= st.P90MS && st.P90MS <= st.P99MS && st.P99MS <= st.MaxMS) {
				t.Errorf("stats not ordered: %+v", st)
			}
		})
	}
}

func TestHistogramMerge(t *testing.T) {
	a, b, both := newLatencyHist(), newLatencyHist(), newLatencyHist()
	for i := 1; i <= 1000; i++ {
		d := time.Duration(i) * time.Microsecond
		if i%3 == 0 {
			a.Record(d)
		} else {
			b.Record(d)
		}
		both.Record(d)
	}
	merged := newLatencyHist()
	merged.Merge(a)
	merged.Merge(b)
	merged.Merge(newLatencyHist()) // empty merge changes nothing
	if merged.Count() != 1000 || merged.Stats() != both.Stats() {
		t.Errorf("merged %d %+v, want %d %+v", merged.Count(), merged.Stats(), both.Count(), both.Stats())
	}
	if got := merged.Quantile(0.5); got < 495*time.Microsecond || got > 505*time.Microsecond {
		t.Errorf("p50 of 1..1000µs = %v, want ~500µs", got)
	}
}

func TestHistogramEmptyAndSingle(t *testing.T) {
	h := newLatencyHist()
	if h.Quantile(0.5) != 0 || h.Stats() != (LatencyStats{}) {
		t.Errorf("empty histogram: %v %+v", h.Quantile(0.5), h.Stats())
	}
	h.Record(7 * time.Millisecond)
	st := h.Stats()
	for _, v := range []float64{st.MeanMS, st.MinMS, st.P50MS, st.P90MS, st.P99MS, st.MaxMS} {
		if v != 7 {
			t.Errorf("single 7ms observation: %+v", st)
			break
		}
	}
	h.Record(-time.Second)
	if h.Stats().MinMS != 0 {
		t.Errorf("negative duration should count as 0, min %v", h.Stats().MinMS)
	}
}
