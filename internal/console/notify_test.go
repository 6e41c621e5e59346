package console

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/shardstore/shardstore/internal/admin"
	"github.com/shardstore/shardstore/internal/engine"
	"github.com/shardstore/shardstore/internal/notify"
	"github.com/shardstore/shardstore/internal/notifytarget"
	"github.com/shardstore/shardstore/internal/s3api"
)

// consoleNotify is the server's notify calls over a real hub and target
// store (as cmd/shardstore wires them).
type consoleNotify struct {
	hub   *notify.Hub
	store *notify.TargetStore
}

func (n consoleNotify) Targets() []notify.TargetInfo                 { return n.hub.Targets() }
func (n consoleNotify) Put(ctx context.Context, s notify.Spec) error { return n.store.Put(ctx, s) }
func (n consoleNotify) Delete(ctx context.Context, key string) error { return n.store.Delete(ctx, key) }
func (n consoleNotify) Test(ctx context.Context, key string) error   { return n.hub.Test(ctx, key) }

// TestNotifyTargets: the operations page adds a webhook target (root
// only), lists it in the status with its secret masked, tests and
// removes it; a bucket page reads its rules.
func TestNotifyTargets(t *testing.T) {
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer recv.Close()
	var hub *notify.Hub
	r := newRigWith(t, func(c *s3api.Config) {
		var err error
		hub, err = notify.NewHub(notify.HubConfig{Dirs: []string{t.TempDir()}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { hub.Close() })
		store, err := notify.NewTargetStore(c.Store.(*engine.Engine), hub, notifytarget.All(), []byte("k"),
			engine.ErrNoConfig, engine.ErrConfigConflict, nil)
		if err != nil {
			t.Fatal(err)
		}
		c.Admin.(*admin.Handler).Notify = consoleNotify{hub: hub, store: store}
		c.Admin.(*admin.Handler).NotifyKinds = notifytarget.All()
		c.Notify = hub
	})
	root, bob := r.browser(), r.browser()
	root.login(rootKey, rootSecret)
	bob.login(bobKey, bobSecret)
	target := map[string]any{"kind": "webhook", "id": "ui", "settings": map[string]string{"endpoint": recv.URL, "auth_token": "ui-secret"}}
	if code, _ := bob.json("PUT", "/api/ops/notify", target); code != 403 {
		t.Errorf("bob adding a target: %d", code)
	}
	if code, m := root.json("PUT", "/api/ops/notify", target); code != 200 || m["arn"] != "arn:minio:sqs::ui:webhook" {
		t.Fatalf("root adding a target: %d %v", code, m)
	}
	if code, m := root.json("PUT", "/api/ops/notify", map[string]any{"kind": "webhook", "id": "bad", "settings": map[string]string{"endpoint": "ftp://x/"}}); code != 400 {
		t.Errorf("a refused endpoint: %d %v", code, m)
	}
	code, m := root.json("GET", "/api/ops/status", nil)
	ts, _ := m["notify"].([]any)
	if code != 200 || len(ts) != 1 || strings.Contains(jsonString(m), "ui-secret") {
		t.Fatalf("status: %d %v", code, m["notify"])
	}
	if code, m := root.json("POST", "/api/ops/notify/test?arn=arn:minio:sqs::ui:webhook", nil); code != 200 || m["ok"] != true {
		t.Errorf("test: %d %v", code, m)
	}
	if code, _ := bob.json("POST", "/api/ops/notify/test?arn=arn:minio:sqs::ui:webhook", nil); code != 403 {
		t.Errorf("bob testing: %d", code)
	}
	// A bucket rule naming it, shown on the bucket's page.
	if code, _ := root.json("POST", "/api/buckets", map[string]any{"name": "evts"}); code != 200 {
		t.Fatal("create bucket")
	}
	doc := `<NotificationConfiguration><QueueConfiguration><Id>r1</Id><Filter><S3Key><FilterRule><Name>prefix</Name><Value>in/</Value></FilterRule></S3Key></Filter><Queue>arn:minio:sqs::ui:webhook</Queue><Event>s3:ObjectCreated:*</Event></QueueConfiguration></NotificationConfiguration>`
	if err := r.eng.SetBucketConfig(context.Background(), "evts", engine.BucketConfigNotification, doc); err != nil {
		t.Fatal(err)
	}
	code, m = root.json("GET", "/api/bucket/notification?bucket=evts", nil)
	rules, _ := m["rules"].([]any)
	if code != 200 || len(rules) != 1 || rules[0].(map[string]any)["arn"] != "arn:minio:sqs::ui:webhook" || rules[0].(map[string]any)["prefix"] != "in/" {
		t.Fatalf("rules: %d %v", code, m)
	}
	if code, _ := bob.json("DELETE", "/api/ops/notify?arn=arn:minio:sqs::ui:webhook", nil); code != 403 {
		t.Errorf("bob removing: %d", code)
	}
	if code, m := root.json("DELETE", "/api/ops/notify?arn=arn:minio:sqs::ui:webhook", nil); code != 200 {
		t.Fatalf("remove: %d %v", code, m)
	}
	if hub.Has("ui:webhook") {
		t.Fatal("still configured")
	}
}

// TestNotifyTargetKinds: the add form's calls for a kind other than
// webhook. The form reads the kinds (admin:GetBucketTarget: bob is
// refused) with their fields, and adds a redis target pointing at an
// address nothing listens on: kinds connect lazily, so adding succeeds;
// its password is masked in the status; then it is removed.
func TestNotifyTargetKinds(t *testing.T) {
	var hub *notify.Hub
	r := newRigWith(t, func(c *s3api.Config) {
		var err error
		hub, err = notify.NewHub(notify.HubConfig{Dirs: []string{t.TempDir()}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { hub.Close() })
		store, err := notify.NewTargetStore(c.Store.(*engine.Engine), hub, notifytarget.All(), []byte("k"),
			engine.ErrNoConfig, engine.ErrConfigConflict, nil)
		if err != nil {
			t.Fatal(err)
		}
		c.Admin.(*admin.Handler).Notify = consoleNotify{hub: hub, store: store}
		c.Admin.(*admin.Handler).NotifyKinds = notifytarget.All()
		c.Notify = hub
	})
	root, bob := r.browser(), r.browser()
	root.login(rootKey, rootSecret)
	bob.login(bobKey, bobSecret)
	if code, _ := bob.json("GET", "/api/ops/notify/kinds", nil); code != 403 {
		t.Errorf("bob reading the kinds: %d", code)
	}
	status, body, _ := root.do("GET", "/api/ops/notify/kinds", nil, nil)
	var kinds []admin.NotifyKind
	if err := json.Unmarshal(body, &kinds); status != 200 || err != nil {
		t.Fatalf("kinds: %d %s %v", status, body, err)
	}
	names := map[string]admin.NotifyKind{}
	for _, k := range kinds {
		names[k.Name] = k
	}
	for _, want := range []string{"webhook", "nats", "kafka", "amqp", "redis", "postgresql", "mysql", "mqtt"} {
		if _, ok := names[want]; !ok {
			t.Errorf("kind %s missing from %s", want, body)
		}
	}
	var address, password bool
	for _, f := range names["redis"].Fields {
		address = address || (f.Name == "address" && f.Required && !f.Secret)
		password = password || (f.Name == "password" && f.Secret && !f.Required)
	}
	if !address || !password {
		t.Fatalf("redis fields: %+v", names["redis"].Fields)
	}
	// Port 1 on loopback: nothing listens there.
	target := map[string]any{"kind": "redis", "id": "rd", "settings": map[string]string{"address": "127.0.0.1:1", "key": "events", "password": "redis-secret"}}
	if code, _ := bob.json("PUT", "/api/ops/notify", target); code != 403 {
		t.Errorf("bob adding a redis target: %d", code)
	}
	if code, m := root.json("PUT", "/api/ops/notify", target); code != 200 || m["arn"] != "arn:minio:sqs::rd:redis" {
		t.Fatalf("root adding a redis target: %d %v", code, m)
	}
	if code, m := root.json("PUT", "/api/ops/notify", map[string]any{"kind": "redis", "id": "nokey", "settings": map[string]string{"address": "127.0.0.1:1"}}); code != 400 {
		t.Errorf("a redis target without its required key: %d %v", code, m)
	}
	code, m := root.json("GET", "/api/ops/status", nil)
	ts, _ := m["notify"].([]any)
	if code != 200 || len(ts) != 1 || strings.Contains(jsonString(m), "redis-secret") || !strings.Contains(jsonString(m), "arn:minio:sqs::rd:redis") {
		t.Fatalf("status: %d %v", code, m["notify"])
	}
	if code, m := root.json("POST", "/api/ops/notify/test?arn=arn:minio:sqs::rd:redis", nil); code != 200 || m["ok"] != false {
		t.Errorf("test of a redis nothing listens for: %d %v", code, m)
	}
	if code, m := root.json("DELETE", "/api/ops/notify?arn=arn:minio:sqs::rd:redis", nil); code != 200 {
		t.Fatalf("remove: %d %v", code, m)
	}
	if hub.Has("rd:redis") {
		t.Fatal("still configured")
	}
}

func jsonString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
