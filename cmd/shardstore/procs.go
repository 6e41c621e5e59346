package main

import (
	"runtime"
	"strings"
)

// ioProcsFactor multiplies the runtime's GOMAXPROCS default for the
// server.
//
// A disk system call (an O_DIRECT shard write, an fdatasync or syncfs, a
// pebble read that misses the page cache) blocks its thread, and the
// thread keeps its P (the runtime's right to run Go code) until the
// scheduler takes it back. With one P per core, the server's cores then
// sit idle while the goroutines that could use them (reading the next
// request body, erasure coding, hashing) wait for a P. Twice as many Ps
// as cores keeps them busy. Measured on the development machine
// (2 cores, ext4, 16 drives; docs/performance.md): PUT 64 MiB x4 +37 %,
// PUT 4 KiB x16 +33 %, GET 4 KiB x16 unchanged (CPU-bound); four times
// as many made the CPU-bound GET 15 % slower.
const ioProcsFactor = 2

// setServerProcs raises GOMAXPROCS for the server unless the operator
// set it: an explicit GOMAXPROCS in the environment always wins. It
// returns the value in effect.
func setServerProcs(getenv func(string) string) int {
	if strings.TrimSpace(getenv("GOMAXPROCS")) != "" {
		return runtime.GOMAXPROCS(0)
	}
	// GOMAXPROCS(0) is the runtime's default: the usable cores, within a
	// container's CPU limit.
	n := runtime.GOMAXPROCS(0) * ioProcsFactor
	runtime.GOMAXPROCS(n)
	return n
}
