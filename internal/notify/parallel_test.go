package notify

import (
	"strings"
	"sync"
	"testing"
	"time"
)

// TestHubParallelSetting: the parallel setting of every kind, its
// hostile values refused before anything is replaced, a kind's
// DefaultParallel when it is not given, and a kind's MaxParallel
// capping it.
func TestHubParallelSetting(t *testing.T) {
	recs := map[string]*recorder{}
	var mu sync.Mutex
	kind := memKind(recs, &mu)
	h, err := NewHub(HubConfig{Dirs: []string{t.TempDir()}, Queue: QueueConfig{RetryMin: time.Millisecond}})
	must(t, err)
	defer h.Close()
	parallel := func(key string) int {
		h.mu.RLock()
		defer h.mu.RUnlock()
		return h.targets[key].queue.cfg.Parallel
	}
	must(t, h.Add("a", kind, map[string]string{"endpoint": "x"}, false, "env"))
	if got := parallel("a:mem"); got != DefaultParallel {
		t.Fatalf("default parallel %d", got)
	}
	must(t, h.Add("a", kind, map[string]string{"endpoint": "x", "parallel": " 3 "}, false, "env"))
	if got := parallel("a:mem"); got != 3 {
		t.Fatalf("parallel %d, want 3", got)
	}
	for _, bad := range []string{"0", "-1", "257", "abc", "16x", "1e3", "0x10", "99999999999999999999", "\x00", strings.Repeat("9", 4096)} {
		if err := h.Add("a", kind, map[string]string{"endpoint": "x", "parallel": bad}, false, "env"); err == nil {
			t.Fatalf("parallel %q accepted", bad)
		}
		if got := parallel("a:mem"); got != 3 {
			t.Fatalf("a refused setting replaced the target (parallel %d)", got)
		}
	}
	// A kind's DefaultParallel applies when the setting is not given;
	// the setting still wins, and MaxParallel still caps.
	batching := kind
	batching.DefaultParallel = 128
	must(t, h.Add("b", batching, map[string]string{"endpoint": "x"}, false, "env"))
	if got := parallel("b:mem"); got != 128 {
		t.Fatalf("a kind with DefaultParallel 128 got %d", got)
	}
	must(t, h.Add("b", batching, map[string]string{"endpoint": "x", "parallel": "5"}, false, "env"))
	if got := parallel("b:mem"); got != 5 {
		t.Fatalf("parallel 5 on a kind with DefaultParallel 128 got %d", got)
	}
	batching.MaxParallel = 32
	must(t, h.Add("b", batching, map[string]string{"endpoint": "x"}, false, "env"))
	if got := parallel("b:mem"); got != 32 {
		t.Fatalf("DefaultParallel 128 under MaxParallel 32 got %d", got)
	}
	serial := kind
	serial.MaxParallel = 1
	must(t, h.Add("s", serial, map[string]string{"endpoint": "x", "parallel": "64"}, false, "env"))
	if got := parallel("s:mem"); got != 1 {
		t.Fatalf("a kind with MaxParallel 1 got %d", got)
	}
	specs, unknown, err := FromEnv([]string{"MINIO_NOTIFY_MEM_ENABLE_P=on", "MINIO_NOTIFY_MEM_ENDPOINT_P=x", "MINIO_NOTIFY_MEM_PARALLEL_P=8"}, []Kind{kind})
	must(t, err)
	if len(unknown) != 0 || len(specs) != 1 || specs[0].Settings["parallel"] != "8" {
		t.Fatalf("FromEnv: %+v %v", specs, unknown)
	}
}

func FuzzParallelSetting(f *testing.F) {
	for _, s := range []string{"", "1", "16", "256", "257", "0", "-3", " 4 ", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := parallelSetting(s)
		if err == nil && (n < 0 || n > MaxParallel || (n == 0 && strings.TrimSpace(s) != "")) {
			t.Fatalf("%q -> %d", s, n)
		}
	})
}
