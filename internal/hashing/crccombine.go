package hashing

import (
	"encoding/binary"
	"fmt"
)

// PartCRC is one part's raw CRC (big-endian, as NewChecksum's Sum returns
// it) and the number of bytes it covers.
type PartCRC struct {
	Sum  []byte
	Size int64
}

// CombineCRC returns the CRC of the concatenation of the parts, computed
// only from the part CRCs and lengths, never from the data. This is what
// S3 reports as a FULL_OBJECT checksum for multipart uploads (the only
// type it allows for CRC64NVME).
//
// Why it works: for a reflected CRC whose initial value equals its final
// XOR (all ones for CRC32, CRC32C and CRC64NVME), the CRC of A||B is the
// CRC of A multiplied by x^(8*len(B)) modulo the polynomial, XOR the CRC
// of B; the contributions of the initial value and the final XOR cancel.
func CombineCRC(algorithm string, parts []PartCRC) ([]byte, error) {
	a, err := CanonicalChecksum(algorithm)
	if err != nil {
		return nil, err
	}
	var g crcGF
	switch a {
	case CRC32:
		g = newCRCGF(polyCRC32, 32)
	case CRC32C:
		g = newCRCGF(polyCRC32C, 32)
	case CRC64NVME:
		g = newCRCGF(polyCRC64NVME, 64)
	default:
		return nil, fmt.Errorf("hashing: %s checksums cannot be combined into a full-object checksum", a)
	}
	if len(parts) == 0 {
		return nil, fmt.Errorf("hashing: combine %s of zero parts", a)
	}
	n := int(g.width / 8)
	var crc uint64
	for i, p := range parts {
		if len(p.Sum) != n {
			return nil, fmt.Errorf("hashing: combine %s: part %d has %d checksum bytes, want %d", a, i+1, len(p.Sum), n)
		}
		if p.Size < 0 {
			return nil, fmt.Errorf("hashing: combine %s: part %d has negative size %d", a, i+1, p.Size)
		}
		var c uint64
		if n == 4 {
			c = uint64(binary.BigEndian.Uint32(p.Sum))
		} else {
			c = binary.BigEndian.Uint64(p.Sum)
		}
		if i == 0 {
			crc = c
			continue
		}
		crc = g.mul(crc, g.xPow8n(uint64(p.Size))) ^ c
	}
	out := make([]byte, n)
	if n == 4 {
		binary.BigEndian.PutUint32(out, uint32(crc))
	} else {
		binary.BigEndian.PutUint64(out, crc)
	}
	return out, nil
}

// crcGF does arithmetic in GF(2)[x] modulo a CRC polynomial, in the
// reflected bit order CRC registers use: the top bit of a width-bit value
// is the coefficient of x^0 and bit 0 that of x^(width-1).
type crcGF struct {
	poly  uint64 // reflected polynomial without the x^width term
	width uint
	// pow2[k] = x^(2^k) mod poly; xPow8n needs k up to 3+63 for any
	// non-negative int64 byte count.
	pow2 [67]uint64
}

func newCRCGF(poly uint64, width uint) crcGF {
	g := crcGF{poly: poly, width: width}
	p := g.one() >> 1 // x^1
	for k := range g.pow2 {
		g.pow2[k] = p
		p = g.mul(p, p)
	}
	return g
}

// one is the polynomial 1 in reflected order.
func (g *crcGF) one() uint64 { return 1 << (g.width - 1) }

// mul returns a*b mod poly by shift-and-add over the bits of a, from x^0
// upwards, multiplying b by x at each step (a right shift in reflected
// order, folding in the polynomial when x^(width-1) overflows).
func (g *crcGF) mul(a, b uint64) uint64 {
	var p uint64
	for m := g.one(); m != 0 && a != 0; m >>= 1 {
		if a&m != 0 {
			p ^= b
			a ^= m
		}
		if b&1 != 0 {
			b = b>>1 ^ g.poly
		} else {
			b >>= 1
		}
	}
	return p
}

// xPow8n returns x^(8n) mod poly, the multiplier that appends n zero bytes.
func (g *crcGF) xPow8n(n uint64) uint64 {
	r := g.one()
	k := 3 // 8n = n * 2^3
	for n != 0 {
		if n&1 != 0 {
			r = g.mul(r, g.pow2[k])
		}
		n >>= 1
		k++
	}
	return r
}
