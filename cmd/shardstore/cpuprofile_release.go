//go:build !testhooks

package main

import "log/slog"

// cpuProfileHook does nothing in a release build (see
// cpuprofile_testhooks.go).
func cpuProfileHook(*slog.Logger) {}
