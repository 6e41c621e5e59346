package admin

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/shardstore/shardstore/internal/notify"
)

type fakeNotify struct {
	put    []notify.Spec
	delete []string
}

func (f *fakeNotify) Targets() []notify.TargetInfo {
	return []notify.TargetInfo{{Key: "a:webhook", ARN: "arn:minio:sqs::a:webhook", Settings: map[string]string{"auth_token": "*****"}}}
}

func (f *fakeNotify) Put(_ context.Context, s notify.Spec) error {
	if s.Kind == "nope" {
		return notify.ErrInvalid
	}
	f.put = append(f.put, s)
	return nil
}

func (f *fakeNotify) Delete(_ context.Context, key string) error {
	if key == "env:webhook" {
		return notify.ErrExists
	}
	f.delete = append(f.delete, key)
	return nil
}

func (f *fakeNotify) Test(_ context.Context, key string) error {
	if key == "down:webhook" {
		return errors.New("connection refused")
	}
	return nil
}

// TestNotifyCalls: each notify call asks its action of the one access
// decision, and maps the store's errors to statuses.
func TestNotifyCalls(t *testing.T) {
	fn := &fakeNotify{}
	var asked []string
	h := NewHandler(&fakeEngine{}, func(r *http.Request, action string, _ func(Actor) bool) (Actor, error) {
		asked = append(asked, action)
		if r.Header.Get("X-Test-Root") != "yes" {
			return Actor{}, errors.New("not allowed")
		}
		return Actor{Name: "root"}, nil
	}, nil)
	h.Notify = fn
	srv := httptest.NewServer(h)
	defer srv.Close()
	do := func(method, path, body string, root bool) (int, string) {
		req, _ := http.NewRequest(method, srv.URL+Prefix+path, strings.NewReader(body))
		if root {
			req.Header.Set("X-Test-Root", "yes")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	cases := []struct {
		method, path, body string
		root               bool
		status             int
		action             string
	}{
		{"GET", "notify/targets", "", true, 200, "admin:GetBucketTarget"},
		{"GET", "notify/targets", "", false, 403, "admin:GetBucketTarget"},
		{"PUT", "notify/targets", `{"kind":"webhook","id":"x","settings":{"endpoint":"http://h/"}}`, true, 200, "admin:SetBucketTarget"},
		{"PUT", "notify/targets", `{"kind":"webhook","id":"y","settings":{"endpoint":"http://h/"}}`, false, 403, "admin:SetBucketTarget"},
		{"PUT", "notify/targets", `{"kind":"nope","id":"x"}`, true, 400, "admin:SetBucketTarget"},
		{"PUT", "notify/targets", `not json`, true, 400, "admin:SetBucketTarget"},
		{"PUT", "notify/targets", `{"kind":"webhook","id":"x","settings":{"endpoint":"` + strings.Repeat("a", 70000) + `"}}`, true, 400, "admin:SetBucketTarget"},
		{"DELETE", "notify/targets?arn=arn:minio:sqs::x:webhook", "", true, 200, "admin:SetBucketTarget"},
		{"DELETE", "notify/targets?arn=arn:minio:sqs::env:webhook", "", true, 409, "admin:SetBucketTarget"},
		{"DELETE", "notify/targets?arn=garbage", "", true, 400, "admin:SetBucketTarget"},
		{"POST", "notify/test?arn=arn:minio:sqs::a:webhook", "", true, 200, "admin:SetBucketTarget"},
		{"POST", "notify/test?arn=arn:minio:sqs::down:webhook", "", true, 200, "admin:SetBucketTarget"},
		{"POST", "notify/targets", "", true, 405, ""},
	}
	for _, c := range cases {
		asked = nil
		status, body := do(c.method, c.path, c.body, c.root)
		if status != c.status {
			t.Errorf("%s %s: %d %s, want %d", c.method, c.path, status, body, c.status)
		}
		if c.action != "" && (len(asked) != 1 || asked[0] != c.action) {
			t.Errorf("%s %s asked %v, want %s", c.method, c.path, asked, c.action)
		}
	}
	if len(fn.put) != 1 || fn.put[0].ID != "x" || fn.put[0].Settings["endpoint"] != "http://h/" {
		t.Fatalf("put %+v", fn.put)
	}
	if len(fn.delete) != 1 || fn.delete[0] != "x:webhook" {
		t.Fatalf("delete %v", fn.delete)
	}
	_, body := do("POST", "notify/test?arn=arn:minio:sqs::down:webhook", "", true)
	var res NotifyTest
	if err := json.Unmarshal([]byte(body), &res); err != nil || res.OK || !strings.Contains(res.Error, "refused") {
		t.Fatalf("test of a down target: %s", body)
	}
	// Status lists the targets.
	_, body = do("GET", "status", "", true)
	if !strings.Contains(body, "arn:minio:sqs::a:webhook") {
		t.Fatalf("status: %s", body)
	}
	// Without a notifier: 501.
	h.Notify = nil
	if status, _ := do("GET", "notify/targets", "", true); status != 501 {
		t.Fatalf("no notifier: %d", status)
	}
}
