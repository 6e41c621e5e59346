//go:build jepsen_broken_readquorum

package quorum

import "github.com/shardstore/shardstore/internal/meta"

// readQuorum, in the deliberately broken build (-tags
// jepsen_broken_readquorum): one drive's record is taken for the
// current version, no read quorum. test/jepsen's TestBrokenBuildCaught
// builds it to show the checker catches the stale reads that follow.
func readQuorum(*meta.Object) int { return 1 }
