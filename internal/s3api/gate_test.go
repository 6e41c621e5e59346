package s3api

import (
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/shardstore/shardstore/internal/release"
)

// TestEncryptionWaitsForTheGate: while the cluster's encrypted-records
// gate is not active (a node of an older release is in the cluster),
// every write that would encrypt is refused with 503 and says why, and
// nothing is stored; plain writes go on; once the gate opens, the same
// write is stored.
func TestEncryptionWaitsForTheGate(t *testing.T) {
	var open atomic.Bool
	var asked atomic.Value
	h := newHarness(t, func(c *Config) {
		c.AllowSSECOverHTTP = true
		c.Gate = func(f string) error {
			asked.Store(f)
			if open.Load() {
				return nil
			}
			return errors.New("node n2 runs an older release")
		}
	})
	h.expect(h.do("alice", "PUT", "/bk1", nil), 200, "")
	good := ssecHeaders([]byte(strings.Repeat("k", 32)))
	rec := h.do("alice", "PUT", "/bk1/obj", []byte("data"), good...)
	if rec.Code != 503 || !strings.Contains(rec.Body.String(), "<Code>ServiceUnavailable</Code>") ||
		!strings.Contains(rec.Body.String(), "node n2 runs an older release") {
		t.Fatalf("SSE-C PUT with the gate closed: %d %s", rec.Code, rec.Body.String())
	}
	if asked.Load() != release.EncryptedRecords {
		t.Errorf("asked the gate of %v", asked.Load())
	}
	h.expect(h.do("alice", "GET", "/bk1/obj", nil, good...), 404, "NoSuchKey")
	h.expect(h.do("alice", "PUT", "/bk1/plain", []byte("data")), 200, "")
	h.expect(h.do("alice", "GET", "/bk1/plain", nil), 200, "")
	open.Store(true)
	h.expect(h.do("alice", "PUT", "/bk1/obj", []byte("data"), good...), 200, "")
	h.expect(h.do("alice", "GET", "/bk1/obj", nil, good...), 200, "")
}
