//go:build amd64 && !purego

package md5lanes

import "golang.org/x/sys/cpu"

// blockX8 runs MD5 over n bytes (a multiple of 64, at least 64) of each
// of 8 streams. state holds A[0..7], B[0..7], C[0..7], D[0..7].
//
//go:noescape
func blockX8(state *[32]uint32, ptrs *[8]*byte, n int)

// blockX16 is blockX8 for 16 streams (two interleaved groups of 8);
// state holds A[0..15], B[0..15], C[0..15], D[0..15].
//
//go:noescape
func blockX16(state *[64]uint32, ptrs *[16]*byte, n int)

// haveSIMD reports whether the multi-lane kernels can run here.
var haveSIMD = cpu.X86.HasAVX2
