package admin

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"

	"github.com/shardstore/shardstore/internal/notify"
)

// TestNotifyKinds: notify/kinds asks admin:GetBucketTarget of the one
// access decision (refused without it), lists every kind with its
// fields' name, required, secret and help plus the queue's parallel,
// and carries no target's values (the configured targets' settings,
// secrets included, stay out of it).
func TestNotifyKinds(t *testing.T) {
	var asked []string
	h := NewHandler(&fakeEngine{}, func(r *http.Request, action string, _ func(Actor) bool) (Actor, error) {
		asked = append(asked, action)
		if r.Header.Get("X-Test-Root") != "yes" {
			return Actor{}, errors.New("not allowed")
		}
		return Actor{Name: "root"}, nil
	}, nil)
	h.Notify = &fakeNotify{}
	h.NotifyKinds = []notify.Kind{
		{Name: "webhook", Fields: []notify.Field{{Name: "endpoint", Required: true, Help: "URL"}, {Name: "auth_token", Secret: true, Help: "token"}}},
		{Name: "redis", Fields: []notify.Field{{Name: "address", Required: true}, {Name: "password", Secret: true}}, MaxParallel: 1},
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	get := func(root bool) (int, []byte) {
		req, _ := http.NewRequest("GET", srv.URL+Prefix+"notify/kinds", nil)
		if root {
			req.Header.Set("X-Test-Root", "yes")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, b
	}
	status, body := get(false)
	if status != 403 || len(asked) != 1 || asked[0] != "admin:GetBucketTarget" || strings.Contains(string(body), "endpoint") {
		t.Fatalf("without the action: %d %s, asked %v", status, body, asked)
	}
	asked = nil
	status, body = get(true)
	if status != 200 || len(asked) != 1 || asked[0] != "admin:GetBucketTarget" {
		t.Fatalf("root: %d %s, asked %v", status, body, asked)
	}
	// Exactly these keys, nothing else (no values, no constructor).
	var raw []map[string]any
	if err := json.Unmarshal(body, &raw); err != nil || len(raw) != 2 {
		t.Fatalf("answer %s: %v", body, err)
	}
	for _, k := range raw {
		if keys := sortedKeys(k); strings.Join(keys, ",") != "fields,name" {
			t.Errorf("kind keys %v", keys)
		}
		for _, f := range k["fields"].([]any) {
			if keys := sortedKeys(f.(map[string]any)); strings.Join(keys, ",") != "help,name,required,secret" {
				t.Errorf("field keys %v", keys)
			}
		}
	}
	if strings.Contains(string(body), "*****") || strings.Contains(string(body), "arn:") {
		t.Errorf("a target's values in the kinds: %s", body)
	}
	var kinds []NotifyKind
	if err := json.Unmarshal(body, &kinds); err != nil {
		t.Fatal(err)
	}
	want := []NotifyField{{Name: "address", Required: true}, {Name: "password", Secret: true}}
	r := kinds[1]
	if r.Name != "redis" || len(r.Fields) != 3 || r.Fields[0] != want[0] || r.Fields[1] != want[1] || r.Fields[2].Name != "parallel" || r.Fields[2].Required || r.Fields[2].Secret {
		t.Fatalf("redis: %+v", r)
	}
	if w := kinds[0]; w.Name != "webhook" || !w.Fields[0].Required || w.Fields[0].Help != "URL" || !w.Fields[1].Secret {
		t.Fatalf("webhook: %+v", w)
	}
	// Describing does not touch the kinds it was given.
	if len(h.NotifyKinds[0].Fields) != 2 {
		t.Fatalf("kinds changed: %+v", h.NotifyKinds[0].Fields)
	}
	// Only GET.
	req, _ := http.NewRequest("PUT", srv.URL+Prefix+"notify/kinds", nil)
	req.Header.Set("X-Test-Root", "yes")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 405 {
		t.Fatalf("PUT notify/kinds: %d", resp.StatusCode)
	}
	// No kinds configured: an empty list, not null.
	h.NotifyKinds = nil
	if status, body := get(true); status != 200 || strings.TrimSpace(string(body)) != "[]" {
		t.Fatalf("no kinds: %d %s", status, body)
	}
}

func sortedKeys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
