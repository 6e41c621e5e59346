package s3api

import (
	"bytes"
	"net/http/httptest"
	"testing"
	"time"
)

// TestObserveLatency: small object GETs, HEADs and PUTs are reported to
// Config.ObserveLatency (the engine's adaptive move throttle); a large
// body, a bucket request and a missing key's 404 count as the S3 server
// answered them (only 5xx and large ones are left out).
func TestObserveLatency(t *testing.T) {
	var seen []time.Duration
	srv, err := New(Config{Store: newFakeStore(), Auth: testAuth, Users: testUsers,
		ObserveLatency: func(d time.Duration) { seen = append(seen, d) }})
	if err != nil {
		t.Fatal(err)
	}
	do := func(method, target string, body []byte) int {
		req := httptest.NewRequest(method, target, bytes.NewReader(body))
		req.Header.Set("X-Test-User", "alice")
		w := httptest.NewRecorder()
		srv.ServeHTTP(w, req)
		return w.Code
	}
	for _, c := range []struct {
		method, target string
		body           []byte
		code           int
		counted        bool
	}{
		{"PUT", "/bkt", nil, 200, false},
		{"PUT", "/bkt/small", make([]byte, 1024), 200, true},
		{"GET", "/bkt/small", nil, 200, true},
		{"HEAD", "/bkt/small", nil, 200, true},
		{"PUT", "/bkt/large", make([]byte, latencyMaxBytes+1), 200, false},
		{"GET", "/bkt/large", nil, 200, false},
		{"GET", "/bkt/missing", nil, 404, true},
		{"GET", "/bkt", nil, 200, false},
	} {
		before := len(seen)
		if code := do(c.method, c.target, c.body); code != c.code {
			t.Fatalf("%s %s: %d, want %d", c.method, c.target, code, c.code)
		}
		if got := len(seen) > before; got != c.counted {
			t.Errorf("%s %s: reported %v, want %v", c.method, c.target, got, c.counted)
		}
		for _, d := range seen[before:] {
			if d <= 0 {
				t.Errorf("%s %s: reported %v", c.method, c.target, d)
			}
		}
	}
}
