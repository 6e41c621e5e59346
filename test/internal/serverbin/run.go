package serverbin

import (
	"bytes"
	"fmt"
	"os"
	"sync"
	"testing"
)

// Main is the body of a test package's TestMain: it builds the binary
// into *binary (a temporary directory named after prefix), runs the
// tests, removes the build, and returns the exit code for os.Exit.
func Main(m *testing.M, prefix string, binary *string) int {
	b, cleanup, err := Build(prefix)
	if err != nil {
		fmt.Fprintln(os.Stderr, prefix+":", err)
		return 1
	}
	defer cleanup()
	*binary = b
	return m.Run()
}

// SyncBuffer collects a running process's output; it may be read while
// the process still writes to it.
type SyncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *SyncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *SyncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
