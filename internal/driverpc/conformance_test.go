package driverpc

import (
	"testing"

	"github.com/shardstore/shardstore/internal/drive"
	"github.com/shardstore/shardstore/internal/drive/drivetest"
)

// TestClientConformance runs the Drive conformance suite against a
// Client of a Server that serves a Local drive, so a remote drive is held
// to the same contract as the local one it stands for: every answer and
// error crosses the wire.
func TestClientConformance(t *testing.T) {
	drivetest.Run(t, func(t *testing.T) (drive.Drive, string) {
		local, dir := openLocal(t, false)
		n := newNode(t, map[int]drive.Drive{5: local})
		n.dirs[5] = dir
		return n.client(5), dir
	})
}
