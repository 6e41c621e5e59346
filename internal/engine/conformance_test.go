package engine_test

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/shardstore/shardstore/internal/engine"
	"github.com/shardstore/shardstore/internal/s3api/storetest"
)

// TestObjectStoreConformance runs the object store conformance suite
// (s3api/storetest) against the engine, the implementation that defines
// the contract; s3api runs the same suite against its handler tests'
// fake. An external test package: storetest imports engine.
func TestObjectStoreConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.ObjectStore {
		root := t.TempDir()
		paths := make([]string, 4)
		for i := range paths {
			paths[i] = filepath.Join(root, fmt.Sprintf("d%d", i+1))
		}
		// Small blocks, so that objects of a few hundred KiB cross block
		// edges; no background healing, which no case here needs.
		e, err := engine.New(engine.Config{Paths: paths, BlockSize: 64 << 10, Heal: engine.HealConfig{Disabled: true}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { e.Close() })
		return e
	})
}
