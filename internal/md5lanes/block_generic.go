//go:build !amd64 || purego

package md5lanes

// haveSIMD is false: every lane is hashed by the scalar block function.
const haveSIMD = false

func blockX8(state *[32]uint32, ptrs *[8]*byte, n int)   { panic("md5lanes: no SIMD kernel") }
func blockX16(state *[64]uint32, ptrs *[16]*byte, n int) { panic("md5lanes: no SIMD kernel") }
