package minioformat

import (
	"os"
	"sync"
	"testing"

	"github.com/shardstore/shardstore/internal/minioformat/miniofixture"
)

const fixtureName = "testdata/minio-16drives"

// The fixture's recorded answers (miniofixture reads them).
type (
	expected   = miniofixture.Expected
	expVersion = miniofixture.Version
)

var (
	fixtureOnce sync.Once
	fixtureDir  string
	fixtureErr  error
)

// fixture extracts the drive tarball once per test binary and returns the
// directory holding drive1 ... drive16, and MinIO's recorded answers.
func fixture(t testing.TB) (string, *expected) {
	t.Helper()
	fixtureOnce.Do(func() {
		fixtureDir, fixtureErr = os.MkdirTemp("", "minioformat-fixture-")
		if fixtureErr == nil {
			fixtureErr = miniofixture.Unpack(fixtureName, fixtureDir)
		}
	})
	if fixtureErr != nil {
		t.Fatalf("fixture: %v", fixtureErr)
	}
	exp, err := miniofixture.Load(fixtureName)
	if err != nil {
		t.Fatal(err)
	}
	if exp.Drives != 16 || len(exp.Buckets) == 0 {
		t.Fatalf("fixture JSON: %d drives, %d buckets", exp.Drives, len(exp.Buckets))
	}
	return fixtureDir, exp
}

func TestMain(m *testing.M) {
	code := m.Run()
	if fixtureDir != "" {
		os.RemoveAll(fixtureDir)
	}
	os.Exit(code)
}
