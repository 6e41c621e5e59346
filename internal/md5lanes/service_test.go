package md5lanes

import (
	"bytes"
	"crypto/md5"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"
)

// writeSplit feeds p to h in pieces cut at random points, including
// pieces shorter than a block and pieces that end mid-block.
func writeSplit(h *Hasher, p []byte, rng *rand.Rand) {
	for len(p) > 0 {
		var n int
		switch rng.IntN(4) {
		case 0:
			n = 1 + rng.IntN(100)
		case 1:
			n = 64 * (1 + rng.IntN(64))
		default:
			n = 1 + rng.IntN(300<<10)
		}
		n = min(n, len(p))
		h.Write(p[:n])
		p = p[n:]
	}
}

func TestConcurrentStreamsMatchCryptoMD5(t *testing.T) {
	svc := NewService()
	defer svc.Close()
	// More streams than lanes, so lanes are shared in turns, and sizes
	// around block and chunk edges.
	sizes := []int{0, 1, 55, 56, 63, 64, 65, 127, 128, 4095, maxChunk - 1, maxChunk, maxChunk + 1, 1 << 20, 3<<20 + 17}
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := 0; g < 40; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(g), 99))
			for _, size := range sizes {
				p := make([]byte, size)
				for i := range p {
					p[i] = byte(rng.Uint32())
				}
				h := svc.New()
				writeSplit(h, p, rng)
				h.Close()
				want := md5.Sum(p)
				if got := h.Sum(nil); !bytes.Equal(got, want[:]) {
					errs <- fmt.Errorf("stream %d size %d: got %x want %x", g, size, got, want)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if st := svc.Stats(); haveSIMD && (st.Calls == 0 || st.LaneBlocks == 0) {
		t.Fatalf("the service ran no kernel calls (%+v)", st)
	}
}

func TestSumLeavesStreamAndResetRestarts(t *testing.T) {
	svc := NewService()
	defer svc.Close()
	h := svc.New()
	defer h.Close()
	a := bytes.Repeat([]byte("shardstore"), 1000)
	h.Write(a[:5000])
	mid := md5.Sum(a[:5000])
	if got := h.Sum([]byte("x")); !bytes.Equal(got, append([]byte("x"), mid[:]...)) {
		t.Fatalf("Sum must append to its argument: %x", got)
	}
	h.Write(a[5000:])
	if want := md5.Sum(a); !bytes.Equal(h.Sum(nil), want[:]) {
		t.Fatal("Sum changed the stream's state")
	}
	h.Reset()
	h.Write(a[:77])
	if want := md5.Sum(a[:77]); !bytes.Equal(h.Sum(nil), want[:]) {
		t.Fatal("Reset did not restart the stream")
	}
	if h.Size() != md5.Size || h.BlockSize() != md5.BlockSize {
		t.Fatal("Size/BlockSize differ from crypto/md5")
	}
}

func TestHashersKeepWorkingAfterClose(t *testing.T) {
	svc := NewService()
	h := svc.New()
	p := make([]byte, 1<<20+3)
	for i := range p {
		p[i] = byte(i * 7)
	}
	h.Write(p[:1000])
	svc.Close()
	svc.Close() // idempotent
	h.Write(p[1000:])
	if want := md5.Sum(p); !bytes.Equal(h.Sum(nil), want[:]) {
		t.Fatal("a hasher whose service closed mid-stream computed a wrong digest")
	}
}

func TestCloseWaitsForSubmittedWrites(t *testing.T) {
	// Writers racing with Close must all finish with correct digests:
	// no write is lost between submission and the service exiting.
	for round := 0; round < 20; round++ {
		svc := NewService()
		var wg sync.WaitGroup
		bad := make(chan int, 32)
		for g := 0; g < 24; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				p := bytes.Repeat([]byte{byte(g)}, 256<<10)
				h := svc.New()
				defer h.Close()
				h.Write(p)
				if want := md5.Sum(p); !bytes.Equal(h.Sum(nil), want[:]) {
					bad <- g
				}
			}()
		}
		svc.Close()
		wg.Wait()
		close(bad)
		for g := range bad {
			t.Fatalf("round %d: stream %d wrong after racing Close", round, g)
		}
	}
}

// Open streams that write nothing must not hold up one that does: the
// service waits at most maxWait for them, then runs the lanes it has.
func TestIdleOpenStreamsDoNotBlockWriters(t *testing.T) {
	svc := NewServiceWait(30 * time.Millisecond)
	defer svc.Close()
	for range 5 {
		idle := svc.New()
		defer idle.Close()
	}
	h := svc.New()
	defer h.Close()
	p := bytes.Repeat([]byte("lane"), 1<<18)
	for range 3 {
		h.Write(p) // returns once hashed, after at most the wait per write
	}
	want := md5.Sum(bytes.Repeat(p, 3))
	if !bytes.Equal(h.Sum(nil), want[:]) {
		t.Fatal("wrong digest")
	}
}

// A stream that writes rarely (a slow client) is not waited for: its next
// write is predicted from its think time and falls after the deadline, so
// a busy stream's writes run at once instead of waiting maxWait each.
func TestSlowStreamIsNotWaitedFor(t *testing.T) {
	if !haveSIMD {
		t.Skip("no AVX2: writes are hashed by the scalar function, nothing is batched")
	}
	svc := NewServiceWait(50 * time.Millisecond)
	defer svc.Close()
	slow := svc.New()
	defer slow.Close()
	p := make([]byte, 64<<10)
	for range 3 {
		time.Sleep(300 * time.Millisecond)
		slow.Write(p)
	}
	before := svc.Stats()
	fast := svc.New()
	defer fast.Close()
	for range 40 {
		fast.Write(p)
	}
	st := svc.Stats()
	// The first write of the fast stream may still find the slow one
	// "due" (its think time is smoothed); after that, none may wait.
	if n := st.ExpiredWaits - before.ExpiredWaits; n > 1 {
		t.Fatalf("%d of 40 writes waited the full maxWait for a stream that writes every 300 ms", n)
	}
}

// With as many writing streams as lanes, the service waits for all of
// them and runs full calls: the batching that makes it cheaper than
// crypto/md5 per byte.
func TestLanesFillWhenStreamsWrite(t *testing.T) {
	if !haveSIMD {
		t.Skip("no AVX2: writes are hashed by the scalar function, no lanes to fill")
	}
	svc := NewServiceWait(2 * time.Second)
	defer svc.Close()
	hs := make([]*Hasher, Lanes)
	for i := range hs {
		hs[i] = svc.New()
	}
	var wg sync.WaitGroup
	for _, h := range hs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer h.Close()
			p := make([]byte, 1<<20)
			for range 4 {
				h.Write(p)
			}
		}()
	}
	wg.Wait()
	st := svc.Stats()
	if fill := float64(st.LaneBlocks) / float64(st.Calls) / (maxChunk / 64); fill < Lanes/2 {
		t.Fatalf("average %.1f lanes per call (%+v), want most of %d", fill, st, Lanes)
	}
}

// BenchmarkService hashes 1 MiB writes from several streams at once; MB/s
// counts all streams' bytes, per the wall clock of a 2-core machine.
func BenchmarkService(b *testing.B) {
	for _, streams := range []int{1, 4, 8, 16, 32} {
		b.Run(fmt.Sprintf("streams=%d", streams), func(b *testing.B) {
			svc := NewService()
			defer svc.Close()
			const block = 1 << 20
			bufs := make([][]byte, streams)
			for i := range bufs {
				bufs[i] = make([]byte, block)
			}
			b.SetBytes(int64(streams * block))
			b.ResetTimer()
			var wg sync.WaitGroup
			for i := 0; i < streams; i++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					h := svc.New()
					defer h.Close()
					for j := 0; j < b.N; j++ {
						h.Write(bufs[i])
					}
					h.Sum(nil)
				}()
			}
			wg.Wait()
		})
	}
}
