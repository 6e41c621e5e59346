package main

import (
	"runtime"
	"testing"
)

func TestSetServerProcs(t *testing.T) {
	orig := runtime.GOMAXPROCS(0)
	defer runtime.GOMAXPROCS(orig)

	runtime.GOMAXPROCS(3)
	if got := setServerProcs(func(string) string { return "" }); got != 3*ioProcsFactor || runtime.GOMAXPROCS(0) != got {
		t.Fatalf("no GOMAXPROCS in the environment: got %d (runtime %d), want %d", got, runtime.GOMAXPROCS(0), 3*ioProcsFactor)
	}
	runtime.GOMAXPROCS(3)
	env := func(k string) string {
		if k == "GOMAXPROCS" {
			return "3"
		}
		return ""
	}
	if got := setServerProcs(env); got != 3 || runtime.GOMAXPROCS(0) != 3 {
		t.Fatalf("GOMAXPROCS=3 set by the operator: got %d (runtime %d), want 3 left alone", got, runtime.GOMAXPROCS(0))
	}
}
