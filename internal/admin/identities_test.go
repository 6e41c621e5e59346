package admin

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/shardstore/shardstore/internal/auth"
	"github.com/shardstore/shardstore/internal/engine"
	"github.com/shardstore/shardstore/internal/iam"
)

// memConfig is an in-memory engine config document store.
type memConfig struct {
	mu   sync.Mutex
	data []byte
	seq  uint64
}

func (m *memConfig) ReadConfig(context.Context, string) ([]byte, uint64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.seq == 0 {
		return nil, 0, engine.ErrNoConfig
	}
	return m.data, m.seq, nil
}

func (m *memConfig) WriteConfig(_ context.Context, _ string, prev uint64, data []byte) (uint64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if prev != m.seq {
		return 0, engine.ErrConfigConflict
	}
	m.data, m.seq = data, m.seq+1
	return m.seq, nil
}

func TestIdentityCalls(t *testing.T) {
	ids, err := iam.Open(context.Background(), iam.Options{Backend: &memConfig{},
		Root: auth.Identity{AccessKey: "rootkey", SecretKey: "rootsecret", Root: true}})
	if err != nil {
		t.Fatal(err)
	}
	// The test's authorizer: X-Actor names the caller; "root" may do
	// anything, a user ("user:NAME") nothing beyond self-service, a
	// session ("session:NAME") likewise but never as its own key.
	h := NewHandler(&fakeEngine{}, func(r *http.Request, action string, ownKeys func(Actor) bool) (Actor, error) {
		kind, name, _ := strings.Cut(r.Header.Get("X-Actor"), ":")
		switch kind {
		case "root":
			return Actor{Name: "root", Key: "rootkey", Can: func(string) bool { return true }}, nil
		case "keyadmin", "policyadmin":
			// allowed admin:CreateServiceAccount (or admin:CreatePolicy)
			// and nothing else
			only := map[string]string{"keyadmin": "admin:CreateServiceAccount", "policyadmin": "admin:CreatePolicy"}[kind]
			a := Actor{Name: name, User: name, Key: name, Can: func(act string) bool { return act == only }}
			if a.Can(action) {
				return a, nil
			}
			return a, fmt.Errorf("%w: %s", ErrDenied, action)
		case "denied":
			// a user whose policies explicitly deny admin:*
			return Actor{Name: name, User: name, Key: name}, fmt.Errorf("explicitly denied %s", action)
		case "user":
			// self-service, as the access decision allows it: a call on
			// the user's own access keys made with its own key
			a := Actor{Name: name, User: name, Key: name}
			if ownKeys != nil && ownKeys(a) {
				return a, nil
			}
			return a, fmt.Errorf("%w: %s", ErrDenied, action)
		case "session":
			return Actor{Name: name, User: name}, fmt.Errorf("%w: %s", ErrDenied, action)
		}
		return Actor{}, fmt.Errorf("unauthenticated")
	}, ids)
	srv := httptest.NewServer(h)
	defer srv.Close()
	do := func(actor, method, path, body string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(method, srv.URL+Prefix+path, strings.NewReader(body))
		req.Header.Set("X-Actor", actor)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	expect := func(actor, method, path, body string, status int, contains string) string {
		t.Helper()
		got, out := do(actor, method, path, body)
		if got != status || !strings.Contains(out, contains) {
			t.Fatalf("%s %s %s as %s: %d %s, want %d containing %q", method, path, body, actor, got, out, status, contains)
		}
		return out
	}

	out := expect("root", "POST", "users", `{"name":"alice"}`, 201, `"secretKey"`)
	var created NewUserReply
	if err := json.Unmarshal([]byte(out), &created); err != nil || created.Name != "alice" {
		t.Fatalf("create reply %s", out)
	}
	expect("root", "POST", "users", `{"name":"bob","secretKey":"bob-secret-1"}`, 201, `"bob"`)
	if _, list := do("root", "GET", "users", ""); strings.Contains(list, created.SecretKey) || strings.Contains(list, "bob-secret-1") {
		t.Fatalf("user listing shows a secret: %s", list)
	}
	expect("root", "POST", "users", `{"name":"alice"}`, 409, "already in use")
	expect("root", "POST", "users", `{"name":"x"}`, 400, "3 to 128")
	expect("root", "POST", "users", `{"name":"carol","extra":1}`, 400, "unknown field")
	expect("root", "GET", "users/nobody", "", 404, "not found")
	expect("root", "PUT", "policies/bad", `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:Fly","Resource":"*"}]}`, 400, "MalformedPolicy")
	expect("root", "PUT", "policies/logs", `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:GetObject","Resource":"arn:aws:s3:::logs/*"}]}`, 204, "")
	expect("root", "POST", "policies/attach", `{"policies":["nope"],"user":"alice"}`, 404, "not found")
	expect("root", "POST", "policies/attach", `{"policies":["logs"],"user":"alice","group":"g"}`, 400, "not both")
	expect("root", "POST", "groups/devs/members", `{"add":["alice"]}`, 204, "")
	expect("root", "POST", "groups/devs/members", `{"remove":["alice"]}`, 400, "?remove")
	expect("root", "POST", "groups/devs/members?remove", `{"add":["bob"]}`, 400, "?remove")
	expect("root", "POST", "policies/attach", `{"policies":["logs"],"group":"devs"}`, 204, "")
	expect("root", "DELETE", "groups/devs", "", 409, "still has members")
	expect("root", "DELETE", "policies/logs", "", 409, "detach it first")
	expect("root", "GET", "groups/devs", "", 200, `"alice"`)
	expect("root", "POST", "users/alice/disable", "", 204, "")
	expect("root", "GET", "users/alice", "", 200, `"disabled"`)
	expect("root", "GET", "audit", "", 200, `"user.disable"`)
	expect("root", "GET", "frobnicate", "", 404, "unknown admin call")
	expect("root", "PATCH", "users", "", 404, "unknown admin call")

	// Self-service: a user manages its own access keys and nothing else.
	expect("user:bob", "GET", "users", "", 403, "access denied")
	out = expect("user:bob", "POST", "accesskeys", `{"name":"ci"}`, 201, `"secretKey"`)
	var key iam.Credentials
	if err := json.Unmarshal([]byte(out), &key); err != nil {
		t.Fatal(err)
	}
	expect("user:bob", "POST", "accesskeys", `{"parent":"alice"}`, 403, "access denied")
	expect("user:bob", "GET", "accesskeys?user=bob", "", 200, key.AccessKey)
	expect("user:bob", "GET", "accesskeys", "", 403, "access denied")
	expect("user:alice", "DELETE", "accesskeys/"+key.AccessKey, "", 403, "access denied")
	expect("session:bob", "POST", "accesskeys", `{}`, 403, "access denied")
	expect("user:bob", "POST", "accesskeys/"+key.AccessKey+"/disable", "", 403, "access denied")
	expect("root", "POST", "accesskeys/"+key.AccessKey+"/disable", "", 204, "")
	expect("user:bob", "DELETE", "accesskeys/"+key.AccessKey, "", 204, "")
	// An explicit Deny is not overridden by self-service.
	expect("denied:bob", "POST", "accesskeys", `{}`, 403, "explicitly denied")
	// Keys for another user need more than admin:CreateServiceAccount.
	expect("keyadmin:carol", "POST", "accesskeys", `{"parent":"alice"}`, 403, "admin:AttachUserOrGroupPolicy")
	expect("root", "POST", "users", `{"name":"carol"}`, 201, "carol")
	expect("keyadmin:carol", "POST", "accesskeys", `{"parent":"carol"}`, 201, "secretKey")
	// Replacing an attached policy needs the right to attach policies.
	expect("root", "POST", "users", `{"name":"dave"}`, 201, "dave")
	expect("root", "POST", "policies/attach", `{"policies":["logs"],"user":"dave"}`, 204, "")
	expect("policyadmin:dave", "PUT", "policies/logs", `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:*","Resource":"*"}]}`, 403, "attached")
	expect("policyadmin:dave", "PUT", "policies/fresh", `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:*","Resource":"*"}]}`, 204, "")
	// Refused calls are audited.
	expect("root", "GET", "audit", "", 200, `"denied"`)
	expect("nobody", "GET", "status", "", 403, "unauthenticated")
}
