package md5lanes

import (
	"encoding/binary"
	"math/bits"
)

// md5K is the table of additive constants, K[i] = floor(|sin(i+1)| * 2^32).
var md5K = [64]uint32{
	0xd76aa478, 0xe8c7b756, 0x242070db, 0xc1bdceee, 0xf57c0faf, 0x4787c62a, 0xa8304613, 0xfd469501,
	0x698098d8, 0x8b44f7af, 0xffff5bb1, 0x895cd7be, 0x6b901122, 0xfd987193, 0xa679438e, 0x49b40821,
	0xf61e2562, 0xc040b340, 0x265e5a51, 0xe9b6c7aa, 0xd62f105d, 0x02441453, 0xd8a1e681, 0xe7d3fbc8,
	0x21e1cde6, 0xc33707d6, 0xf4d50d87, 0x455a14ed, 0xa9e3e905, 0xfcefa3f8, 0x676f02d9, 0x8d2a4c8a,
	0xfffa3942, 0x8771f681, 0x6d9d6122, 0xfde5380c, 0xa4beea44, 0x4bdecfa9, 0xf6bb4b60, 0xbebfbc70,
	0x289b7ec6, 0xeaa127fa, 0xd4ef3085, 0x04881d05, 0xd9d4d039, 0xe6db99e5, 0x1fa27cf8, 0xc4ac5665,
	0xf4292244, 0x432aff97, 0xab9423a7, 0xfc93a039, 0x655b59c3, 0x8f0ccc92, 0xffeff47d, 0x85845dd1,
	0x6fa87e4f, 0xfe2ce6e0, 0xa3014314, 0x4e0811a1, 0xf7537e82, 0xbd3af235, 0x2ad7d2bb, 0xeb86d391,
}

var md5Shift = [4][4]int{{7, 12, 17, 22}, {5, 9, 14, 20}, {4, 11, 16, 23}, {6, 10, 15, 21}}

// blockScalar runs MD5 over p (a multiple of 64 bytes) for one stream.
// It handles the odd blocks of a stream (a carried partial block, the
// padding) and whole streams where no SIMD kernel exists.
func blockScalar(s *[4]uint32, p []byte) {
	var m [16]uint32
	a0, b0, c0, d0 := s[0], s[1], s[2], s[3]
	for ; len(p) >= 64; p = p[64:] {
		for i := range m {
			m[i] = binary.LittleEndian.Uint32(p[4*i:])
		}
		a, b, c, d := a0, b0, c0, d0
		for i := 0; i < 64; i++ {
			var f uint32
			var g int
			switch i / 16 {
			case 0:
				f, g = d^(b&(c^d)), i
			case 1:
				f, g = c^(d&(b^c)), (5*i+1)%16
			case 2:
				f, g = b^c^d, (3*i+5)%16
			default:
				f, g = c^(b|^d), (7*i)%16
			}
			f += a + md5K[i] + m[g]
			a, d, c = d, c, b
			b += bits.RotateLeft32(f, md5Shift[i/16][i%4])
		}
		a0 += a
		b0 += b
		c0 += c
		d0 += d
	}
	s[0], s[1], s[2], s[3] = a0, b0, c0, d0
}
