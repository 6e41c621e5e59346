// Package bench holds the benchmarks that reproduce the studies shardstore
// is designed around. This file set is the erasure-coding study: Reed-Solomon
// encode and reconstruct throughput per shard configuration, thread count and
// instruction set, with per-core CPU use next to every number (RunEC).
//
// Everything is a library call returning a report value, so the CLI, tests
// and other subcommands share one implementation; the report knows how to
// print itself as a table, JSON, CSV and a chart.
package bench

import (
	"fmt"
	"runtime"
	"strings"

	"github.com/klauspost/cpuid/v2"
	"github.com/klauspost/reedsolomon"
)

// ISA names one code path of the Reed-Solomon library.
type ISA string

// The instruction sets klauspost/reedsolomon can be told to use on amd64,
// fastest first. Generic is the pure-Go table code every CPU can run.
const (
	ISAGFNIAVX512 ISA = "gfni-avx512"
	ISAAVX512     ISA = "avx512"
	ISAGFNIAVX2   ISA = "gfni-avx2"
	ISAAVX2       ISA = "avx2"
	ISASSSE3      ISA = "ssse3"
	ISAGeneric    ISA = "go"
)

// AllISAs lists every ISA name RunEC understands, fastest first. It is a
// function, not a variable, so no caller can change the list for others.
func AllISAs() []ISA {
	return []ISA{ISAGFNIAVX512, ISAAVX512, ISAGFNIAVX2, ISAAVX2, ISASSSE3, ISAGeneric}
}

// Supported reports whether this CPU can run isa. The feature tests are
// the same ones the library uses to enable each path (cpuid), so a path we
// call supported is a path the library will really take.
func (isa ISA) Supported() bool {
	amd64 := runtime.GOARCH == "amd64"
	switch isa {
	case ISAGFNIAVX512:
		return amd64 && cpuid.CPU.Supports(cpuid.AVX512F, cpuid.AVX512DQ, cpuid.GFNI)
	case ISAAVX512:
		return amd64 && cpuid.CPU.Supports(cpuid.AVX512F, cpuid.AVX512BW, cpuid.AVX512VL)
	case ISAGFNIAVX2:
		return amd64 && cpuid.CPU.Supports(cpuid.AVX, cpuid.GFNI)
	case ISAAVX2:
		return amd64 && cpuid.CPU.Supports(cpuid.AVX2)
	case ISASSSE3:
		return amd64 && cpuid.CPU.Supports(cpuid.SSSE3)
	case ISAGeneric:
		return true
	}
	return false
}

// AvailableISAs lists the ISAs this CPU supports, fastest first.
func AvailableISAs() []ISA {
	var out []ISA
	for _, isa := range AllISAs() {
		if isa.Supported() {
			out = append(out, isa)
		}
	}
	return out
}

// ParseISA accepts an ISA name, case-insensitively.
func ParseISA(s string) (ISA, error) {
	for _, isa := range AllISAs() {
		if strings.EqualFold(s, string(isa)) {
			return isa, nil
		}
	}
	names := make([]string, len(AllISAs()))
	for i, isa := range AllISAs() {
		names[i] = string(isa)
	}
	return "", fmt.Errorf("unknown instruction set %q (known: %s)", s, strings.Join(names, ", "))
}

// options returns the library options that force exactly this code path.
// Every faster path is switched off explicitly, because the library
// otherwise picks the fastest one the CPU has; the path itself is left at
// its default (on when supported).
func (isa ISA) options() []reedsolomon.Option {
	switch isa {
	case ISAGFNIAVX512:
		return nil
	case ISAAVX512:
		return []reedsolomon.Option{reedsolomon.WithGFNI(false), reedsolomon.WithAVXGFNI(false)}
	case ISAGFNIAVX2:
		return []reedsolomon.Option{reedsolomon.WithAVX512(false)}
	case ISAAVX2:
		return []reedsolomon.Option{reedsolomon.WithAVX512(false), reedsolomon.WithAVXGFNI(false)}
	case ISASSSE3:
		return []reedsolomon.Option{reedsolomon.WithAVX512(false), reedsolomon.WithAVXGFNI(false),
			reedsolomon.WithAVX2(false)}
	default: // ISAGeneric
		return []reedsolomon.Option{reedsolomon.WithAVX512(false), reedsolomon.WithAVXGFNI(false),
			reedsolomon.WithAVX2(false), reedsolomon.WithSSSE3(false), reedsolomon.WithSSE2(false)}
	}
}

// CPUName is the processor's brand string, for report headers.
func CPUName() string {
	if cpuid.CPU.BrandName != "" {
		return cpuid.CPU.BrandName
	}
	return runtime.GOARCH
}
