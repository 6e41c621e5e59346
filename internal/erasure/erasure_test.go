package erasure

import (
	"bytes"
	"math/rand"
	"testing"

	"github.com/klauspost/reedsolomon"
)

func TestEncodeReconstruct(t *testing.T) {
	r := rand.New(rand.NewSource(2))
	for _, g := range [][2]int{{12, 4}, {8, 8}, {4, 4}, {2, 1}, {1, 1}, {3, 0}} {
		c, err := New(g[0], g[1], 4096)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range []int{0, 1, g[0] - 1, g[0], g[0] + 1, 4095, 4096} {
			b := c.GetBlock()
			want := make([]byte, n)
			r.Read(want)
			copy(b.Buf, want)
			if err := c.Encode(b, n); err != nil {
				t.Fatal(err)
			}
			if got := joinData(b.Shards[:g[0]], n); !bytes.Equal(got, want) {
				t.Fatalf("%v n=%d: data shards do not hold the block", g, n)
			}
			if n == 0 {
				continue
			}
			// Drop up to K shards at random and rebuild the data.
			shards := make([][]byte, len(b.Shards))
			copy(shards, b.Shards)
			orig := make([][]byte, len(shards))
			for i := range shards {
				orig[i] = append([]byte(nil), shards[i]...)
			}
			for _, i := range r.Perm(len(shards))[:g[1]] {
				shards[i] = nil
			}
			if err := c.ReconstructData(shards); err != nil {
				t.Fatalf("%v n=%d: %v", g, n, err)
			}
			if got := joinData(shards[:g[0]], n); !bytes.Equal(got, want) {
				t.Fatalf("%v n=%d: rebuilt data differs", g, n)
			}
			if g[1] > 0 {
				for _, i := range r.Perm(len(shards))[:g[1]+1] {
					shards[i] = nil
				}
				if err := c.ReconstructData(shards); err == nil {
					t.Fatalf("%v n=%d: K+1 losses must fail", g, n)
				}
			}
			c.PutBlock(b)
		}
	}
}

func joinData(shards [][]byte, n int) []byte {
	var out []byte
	for _, s := range shards {
		out = append(out, s...)
	}
	return out[:n]
}

func TestGeometry(t *testing.T) {
	c, _ := New(12, 4, 1<<20)
	if got := c.ShardSize(1 << 20); got != 87382 {
		t.Fatalf("shard size of a full block = %d", got)
	}
	if got := c.ShardFileSize(3<<20 + 13); got != 3*87382+2 {
		t.Fatalf("shard file size = %d", got)
	}
	if c.Blocks(0) != 0 || c.Blocks(1) != 1 || c.Blocks(1<<20) != 1 || c.Blocks(1<<20+1) != 2 {
		t.Fatal("block count wrong")
	}
	if _, err := New(0, 1, 10); err == nil {
		t.Fatal("0 data shards must be refused")
	}
}

// BenchmarkEncode compares this package's in-place encode path with the
// raw library on the same 12+4 geometry and 1 MiB blocks; the issue asks
// for the integrated path to reach >= 90% of raw.
func BenchmarkEncode(b *testing.B) {
	data := make([]byte, DefaultBlockSize)
	rand.New(rand.NewSource(1)).Read(data)
	b.Run("shardstore-12+4", func(b *testing.B) {
		c, _ := New(12, 4, DefaultBlockSize)
		blk := c.GetBlock()
		b.SetBytes(DefaultBlockSize)
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			copy(blk.Buf, data) // the engine reads the body into Buf; model that copy
			if err := c.Encode(blk, len(data)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("raw-reedsolomon-12+4", func(b *testing.B) {
		enc, _ := reedsolomon.New(12, 4)
		// Capacity for the parity too, so Split does not allocate: the
		// fairest raw baseline.
		buf := make([]byte, DefaultBlockSize, 16*((DefaultBlockSize+11)/12))
		b.SetBytes(DefaultBlockSize)
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			copy(buf, data)
			shards, err := enc.Split(buf)
			if err != nil {
				b.Fatal(err)
			}
			if err := enc.Encode(shards); err != nil {
				b.Fatal(err)
			}
		}
	})
}
