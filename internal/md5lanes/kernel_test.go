package md5lanes

import (
	"crypto/md5"
	"encoding/binary"
	"math/rand/v2"
	"testing"
)

// sumScalar is a one-shot MD5 built on blockScalar, to check it against
// crypto/md5 before it is used as the reference for the kernels.
func sumScalar(p []byte) [16]byte {
	s := initState
	n := len(p) &^ 63
	blockScalar(&s, p[:n])
	var tail [128]byte
	k := copy(tail[:], p[n:])
	tail[k] = 0x80
	end := 64
	if k >= 56 {
		end = 128
	}
	binary.LittleEndian.PutUint64(tail[end-8:], uint64(len(p))<<3)
	blockScalar(&s, tail[:end])
	var out [16]byte
	for i, v := range s {
		binary.LittleEndian.PutUint32(out[4*i:], v)
	}
	return out
}

func TestBlockScalarMatchesCryptoMD5(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 55, 56, 63, 64, 65, 119, 120, 127, 128, 1000, 4096, 100003} {
		p := make([]byte, n)
		for i := range p {
			p[i] = byte(rng.Uint32())
		}
		if got, want := sumScalar(p), md5.Sum(p); got != want {
			t.Fatalf("len %d: got %x, want %x", n, got, want)
		}
	}
}

func TestKernelsMatchScalar(t *testing.T) {
	if !haveSIMD {
		t.Skip("no AVX2 on this CPU: the kernels cannot run (the scalar path is tested above)")
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for iter := 0; iter < 50; iter++ {
		n := 64 * (1 + rng.IntN(64))
		var bufs [16][]byte
		var want [16][4]uint32
		for l := range bufs {
			bufs[l] = make([]byte, n)
			for i := range bufs[l] {
				bufs[l][i] = byte(rng.Uint32())
			}
			want[l] = [4]uint32{rng.Uint32(), rng.Uint32(), rng.Uint32(), rng.Uint32()}
		}
		var st16 [64]uint32
		var p16 [16]*byte
		var st8 [32]uint32
		var p8 [8]*byte
		for l := 0; l < 16; l++ {
			for r := 0; r < 4; r++ {
				st16[r*16+l] = want[l][r]
				if l < 8 {
					st8[r*8+l] = want[l][r]
				}
			}
			p16[l] = &bufs[l][0]
			if l < 8 {
				p8[l] = &bufs[l][0]
			}
		}
		blockX16(&st16, &p16, n)
		blockX8(&st8, &p8, n)
		for l := 0; l < 16; l++ {
			blockScalar(&want[l], bufs[l])
			for r := 0; r < 4; r++ {
				if st16[r*16+l] != want[l][r] {
					t.Fatalf("x16 n=%d lane %d word %d: got %08x want %08x", n, l, r, st16[r*16+l], want[l][r])
				}
				if l < 8 && st8[r*8+l] != want[l][r] {
					t.Fatalf("x8 n=%d lane %d word %d: got %08x want %08x", n, l, r, st8[r*8+l], want[l][r])
				}
			}
		}
	}
}

func benchKernel(b *testing.B, lanes int) {
	if !haveSIMD {
		b.Skip("no AVX2")
	}
	const n = 64 << 10
	buf := make([]byte, 16*n)
	var st16 [64]uint32
	var p16 [16]*byte
	var st8 [32]uint32
	var p8 [8]*byte
	for l := 0; l < 16; l++ {
		p16[l] = &buf[l*n]
		if l < 8 {
			p8[l] = &buf[l*n]
		}
	}
	b.SetBytes(int64(lanes * n))
	for b.Loop() {
		if lanes == 16 {
			blockX16(&st16, &p16, n)
		} else {
			blockX8(&st8, &p8, n)
		}
	}
}

func BenchmarkKernelX8(b *testing.B)  { benchKernel(b, 8) }
func BenchmarkKernelX16(b *testing.B) { benchKernel(b, 16) }

func BenchmarkScalar(b *testing.B) {
	buf := make([]byte, 64<<10)
	s := initState
	b.SetBytes(int64(len(buf)))
	for b.Loop() {
		blockScalar(&s, buf)
	}
}

func BenchmarkCryptoMD5(b *testing.B) {
	buf := make([]byte, 64<<10)
	h := md5.New()
	b.SetBytes(int64(len(buf)))
	for b.Loop() {
		h.Write(buf)
	}
}
