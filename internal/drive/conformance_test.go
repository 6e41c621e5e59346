package drive_test

import (
	"testing"

	"github.com/shardstore/shardstore/internal/drive"
	"github.com/shardstore/shardstore/internal/drive/drivetest"
)

// openLocal opens a Local drive on a fresh directory.
func openLocal(t *testing.T) (*drive.Local, string) {
	t.Helper()
	dir := t.TempDir()
	d, err := drive.OpenLocal(dir, drive.LocalOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return d, dir
}

// The Drive conformance suite (package drivetest) against the drive
// implementations of this package; driverpc runs it against its Client.

func TestLocalConformance(t *testing.T) {
	drivetest.Run(t, func(t *testing.T) (drive.Drive, string) { return openLocal(t) })
}

func TestHealthConformance(t *testing.T) {
	drivetest.Run(t, func(t *testing.T) (drive.Drive, string) {
		d, dir := openLocal(t)
		return drive.NewHealth(d, drive.HealthConfig{}), dir
	})
}

// Faulty with no fault injected must behave exactly like the drive it
// wraps.
func TestFaultyConformance(t *testing.T) {
	drivetest.Run(t, func(t *testing.T) (drive.Drive, string) {
		d, dir := openLocal(t)
		return drive.NewFaulty(d), dir
	})
}
