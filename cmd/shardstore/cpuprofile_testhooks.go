//go:build testhooks

package main

import (
	"log/slog"
	"os"
	"os/signal"
	"runtime/pprof"
	"syscall"
)

// envCPUProfile names the file a testhooks build writes a CPU profile
// of the server to: SIGUSR1 starts it, SIGUSR2 stops and writes it
// (go tool pprof), so a benchmark profiles exactly its own run.
const envCPUProfile = "SHARDSTORE_TEST_CPUPROFILE"

// cpuProfileHook honours envCPUProfile (testhooks builds only).
func cpuProfileHook(log *slog.Logger) {
	path := os.Getenv(envCPUProfile)
	if path == "" {
		return
	}
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGUSR1, syscall.SIGUSR2)
	log.Warn("testhooks build: SIGUSR1 starts and SIGUSR2 stops a CPU profile", "file", path)
	go func() {
		var f *os.File
		for s := range sigs {
			switch {
			case s == syscall.SIGUSR1 && f == nil:
				var err error
				if f, err = os.Create(path); err != nil {
					log.Warn("cpu profile not started", "err", err)
					f = nil
					continue
				}
				if err := pprof.StartCPUProfile(f); err != nil {
					log.Warn("cpu profile not started", "err", err)
					_ = f.Close()
					f = nil
				}
			case s == syscall.SIGUSR2 && f != nil:
				pprof.StopCPUProfile()
				_ = f.Close()
				f = nil
				log.Info("cpu profile written", "file", path)
			}
		}
	}()
}
