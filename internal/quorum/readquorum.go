//go:build !jepsen_broken_readquorum

package quorum

import "github.com/shardstore/shardstore/internal/meta"

// readQuorum is how many drives must hold best as current for Current to
// answer it: its data shard count. (Built with -tags
// jepsen_broken_readquorum it is 1 instead: the deliberately broken
// build test/jepsen's TestBrokenBuildCaught shows its checker catching.
// Never in a release.)
func readQuorum(best *meta.Object) int { return best.Erasure.DataShards }
