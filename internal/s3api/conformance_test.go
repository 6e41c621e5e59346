package s3api

import (
	"testing"

	"github.com/shardstore/shardstore/internal/s3api/storetest"
)

// The suite's ObjectStore is this package's: each must satisfy the
// other, so neither can gain a method the other lacks.
var (
	_ ObjectStore           = storetest.ObjectStore(nil)
	_ storetest.ObjectStore = ObjectStore(nil)
)

// TestFakeStoreConformance holds the handler tests' fakeStore to the
// engine's contract: the same suite runs against the engine
// (internal/engine's TestObjectStoreConformance).
func TestFakeStoreConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.ObjectStore { return newFakeStore() })
}
