//go:build ignore

// Command gen writes md5lanes' AVX2 kernels (block_amd64.s): MD5 over 8
// or 16 independent streams at once, one stream per 32-bit lane of a YMM
// register, with two 8-lane groups interleaved in the 16-lane kernel so
// each group's serial dependency chain hides the other's latency.
//
// Run with `go generate ./internal/md5lanes`.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"math"
	"os"
)

var shifts = [4][4]int{{7, 12, 17, 22}, {5, 9, 14, 20}, {4, 11, 16, 23}, {6, 10, 15, 21}}

func msgIndex(i int) int {
	switch i / 16 {
	case 0:
		return i
	case 1:
		return (5*i + 1) % 16
	case 2:
		return (3*i + 5) % 16
	}
	return (7 * i) % 16
}

type gen struct{ b bytes.Buffer }

func (g *gen) f(format string, a ...any) { fmt.Fprintf(&g.b, format+"\n", a...) }

func y(n int) string { return fmt.Sprintf("Y%d", n) }

// kernel emits one kernel for groups (1 or 2) groups of 8 lanes.
//
// Frame: the transposed message, 16 words x groups at 32 bytes each, then
// the state saved at block start (4 x groups x 32 bytes).
func (g *gen) kernel(name string, groups int) {
	lanes := 8 * groups
	msgBase := 0
	savedBase := groups * 16 * 32
	frame := savedBase + groups*4*32
	msg := func(grp, w int) int { return msgBase + (grp*16+w)*32 }
	saved := func(grp, r int) int { return savedBase + (grp*4+r)*32 }
	stateOff := func(grp, r int) int { return (r*groups + grp) * 32 }
	reg := func(grp, r int) int { return 4*grp + r } // a,b,c,d of a group
	temp := func(grp, t int) int { return 8 + 2*grp + t }
	const ones = 12

	g.f("// func %s(state *[%d]uint32, ptrs *[%d]*byte, n int)", name, 4*lanes, lanes)
	g.f("TEXT ·%s(SB), $%d-24", name, frame)
	g.f("\tMOVQ state+0(FP), DI")
	g.f("\tMOVQ ptrs+8(FP), SI")
	g.f("\tMOVQ n+16(FP), CX")
	g.f("\tXORQ R9, R9")
	for grp := 0; grp < groups; grp++ {
		for r := 0; r < 4; r++ {
			g.f("\tVMOVDQU %d(DI), %s", stateOff(grp, r), y(reg(grp, r)))
		}
	}
	g.f("loop:")
	for grp := 0; grp < groups; grp++ {
		for r := 0; r < 4; r++ {
			g.f("\tVMOVDQU %s, %d(SP)", y(reg(grp, r)), saved(grp, r))
		}
	}
	// Transpose: for each group and half block, rows are lanes (8 words
	// each) and columns become message words across lanes.
	for grp := 0; grp < groups; grp++ {
		for h := 0; h < 2; h++ {
			for l := 0; l < 8; l++ {
				g.f("\tMOVQ %d(SI), R10", 8*(8*grp+l))
				g.f("\tVMOVDQU %d(R10)(R9*1), %s", 32*h, y(8+l))
			}
			for p := 0; p < 4; p++ {
				lo, hi := y(8+2*p), y(9+2*p)
				g.f("\tVPUNPCKLDQ %s, %s, %s", hi, lo, y(2*p))
				g.f("\tVPUNPCKHDQ %s, %s, %s", hi, lo, y(2*p+1))
			}
			// u0..u3 from t0..t3, u4..u7 from t4..t7 into Y8..Y15.
			for q := 0; q < 2; q++ {
				t := 4 * q
				g.f("\tVPUNPCKLQDQ %s, %s, %s", y(t+2), y(t), y(8+4*q))
				g.f("\tVPUNPCKHQDQ %s, %s, %s", y(t+2), y(t), y(9+4*q))
				g.f("\tVPUNPCKLQDQ %s, %s, %s", y(t+3), y(t+1), y(10+4*q))
				g.f("\tVPUNPCKHQDQ %s, %s, %s", y(t+3), y(t+1), y(11+4*q))
			}
			for j := 0; j < 4; j++ {
				g.f("\tVPERM2I128 $0x20, %s, %s, Y0", y(12+j), y(8+j))
				g.f("\tVMOVDQU Y0, %d(SP)", msg(grp, 8*h+j))
				g.f("\tVPERM2I128 $0x31, %s, %s, Y1", y(12+j), y(8+j))
				g.f("\tVMOVDQU Y1, %d(SP)", msg(grp, 8*h+j+4))
			}
		}
	}
	for grp := 0; grp < groups; grp++ {
		for r := 0; r < 4; r++ {
			g.f("\tVMOVDQU %d(SP), %s", saved(grp, r), y(reg(grp, r)))
		}
	}
	g.f("\tVPCMPEQD %s, %s, %s", y(ones), y(ones), y(ones))
	// names[grp] rotates (a,b,c,d) -> (d,a,b,c) after every step.
	names := make([][4]int, groups)
	for grp := range names {
		for r := 0; r < 4; r++ {
			names[grp][r] = reg(grp, r)
		}
	}
	for i := 0; i < 64; i++ {
		round := i / 16
		s := shifts[round][i%4]
		for grp := 0; grp < groups; grp++ {
			a, b, c, d := y(names[grp][0]), y(names[grp][1]), y(names[grp][2]), y(names[grp][3])
			t1, t2 := y(temp(grp, 0)), y(temp(grp, 1))
			g.f("\t// step %d group %d", i, grp)
			g.f("\tVPADDD md5K<>+%d(SB), %s, %s", 32*i, a, a)
			g.f("\tVPADDD %d(SP), %s, %s", msg(grp, msgIndex(i)), a, a)
			switch round {
			case 0: // F = d ^ (b & (c ^ d))
				g.f("\tVPXOR %s, %s, %s", d, c, t1)
				g.f("\tVPAND %s, %s, %s", b, t1, t1)
				g.f("\tVPXOR %s, %s, %s", d, t1, t1)
			case 1: // G = (b & d) | (c &^ d)
				g.f("\tVPANDN %s, %s, %s", c, d, t1)
				g.f("\tVPAND %s, %s, %s", d, b, t2)
				g.f("\tVPOR %s, %s, %s", t2, t1, t1)
			case 2: // H = b ^ c ^ d
				g.f("\tVPXOR %s, %s, %s", d, c, t1)
				g.f("\tVPXOR %s, %s, %s", b, t1, t1)
			case 3: // I = c ^ (b | ^d)
				g.f("\tVPXOR %s, %s, %s", y(ones), d, t1)
				g.f("\tVPOR %s, %s, %s", b, t1, t1)
				g.f("\tVPXOR %s, %s, %s", c, t1, t1)
			}
			g.f("\tVPADDD %s, %s, %s", t1, a, a)
			g.f("\tVPSLLD $%d, %s, %s", s, a, t1)
			g.f("\tVPSRLD $%d, %s, %s", 32-s, a, a)
			g.f("\tVPOR %s, %s, %s", t1, a, a)
			g.f("\tVPADDD %s, %s, %s", b, a, a)
			n := names[grp]
			names[grp] = [4]int{n[3], n[0], n[1], n[2]}
		}
	}
	for grp := 0; grp < groups; grp++ {
		for r := 0; r < 4; r++ {
			g.f("\tVPADDD %d(SP), %s, %s", saved(grp, r), y(reg(grp, r)), y(reg(grp, r)))
		}
	}
	g.f("\tADDQ $64, R9")
	g.f("\tCMPQ R9, CX")
	g.f("\tJB loop")
	for grp := 0; grp < groups; grp++ {
		for r := 0; r < 4; r++ {
			g.f("\tVMOVDQU %s, %d(DI)", y(reg(grp, r)), stateOff(grp, r))
		}
	}
	g.f("\tVZEROUPPER")
	g.f("\tRET")
	g.f("")
}

func main() {
	out := flag.String("out", "block_amd64.s", "file to write")
	flag.Parse()
	g := &gen{}
	g.f("// Code generated by gen/main.go; DO NOT EDIT.")
	g.f("")
	g.f("//go:build amd64 && !purego")
	g.f("")
	g.f("#include \"textflag.h\"")
	g.f("")
	// K[i] = floor(|sin(i+1)| * 2^32), broadcast to 8 lanes.
	for i := 0; i < 64; i++ {
		k := uint32(math.Floor(math.Abs(math.Sin(float64(i+1))) * (1 << 32)))
		for l := 0; l < 8; l++ {
			g.f("DATA md5K<>+%d(SB)/4, $0x%08x", 32*i+4*l, k)
		}
	}
	g.f("GLOBL md5K<>(SB), RODATA|NOPTR, $2048")
	g.f("")
	g.kernel("blockX8", 1)
	g.kernel("blockX16", 2)
	if err := os.WriteFile(*out, g.b.Bytes(), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
