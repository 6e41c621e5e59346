package notifytarget_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/shardstore/shardstore/internal/notify"
	"github.com/shardstore/shardstore/internal/notifytarget"
	"github.com/shardstore/shardstore/internal/notifytarget/targettest"
)

// natsReader subscribes to a subject with its own connection and keeps
// every message in order.
type natsReader struct {
	mu   sync.Mutex
	msgs [][]byte
	nc   *nats.Conn
}

func (r *natsReader) read(*testing.T) []targettest.Received {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]targettest.Received, len(r.msgs))
	for i, m := range r.msgs {
		out[i] = targettest.Received{Body: m}
	}
	return out
}

func TestNATS(t *testing.T) {
	srv := targettest.StartNATS(t)
	url := "nats://" + srv.Addr
	nc, err := nats.Connect(url, nats.UserInfo(srv.User, srv.Password), nats.MaxReconnects(-1), nats.ReconnectWait(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	reader := &natsReader{nc: nc}
	if _, err := nc.Subscribe("shardstore.events", func(m *nats.Msg) {
		reader.mu.Lock()
		reader.msgs = append(reader.msgs, m.Data)
		reader.mu.Unlock()
	}); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	settings := map[string]string{"address": srv.Addr, "subject": "shardstore.events", "username": srv.User, "password": srv.Password}
	targettest.Run(t, targettest.Config{
		New:  newTarget(notifytarget.NATS(), "1", settings),
		Read: reader.read,
		Stop: func(t *testing.T) { srv.Stop(t) },
		Start: func(t *testing.T) {
			srv.Start(t)
			// Core NATS keeps nothing for an absent subscriber: wait
			// until the reader is back before the suite sends.
			waitFor(t, "the NATS reader to reconnect", func() error {
				if !nc.IsConnected() {
					return nats.ErrConnectionReconnecting
				}
				return nc.Flush()
			})
		},
	})
}

func TestNATSJetStream(t *testing.T) {
	srv := targettest.StartNATS(t)
	nc, err := nats.Connect("nats://"+srv.Addr, nats.UserInfo(srv.User, srv.Password))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	stream, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "EVENTS", Subjects: []string{"shardstore.js"}, Storage: jetstream.FileStorage})
	if err != nil {
		t.Fatal(err)
	}
	_ = stream
	read := func(t *testing.T) []targettest.Received {
		var out []targettest.Received
		for try := 0; ; try++ {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			s, err := js.Stream(ctx, "EVENTS")
			if err == nil {
				var info *jetstream.StreamInfo
				if info, err = s.Info(ctx); err == nil {
					out = out[:0]
					for seq := info.State.FirstSeq; seq <= info.State.LastSeq && err == nil; seq++ {
						var m *jetstream.RawStreamMsg
						if m, err = s.GetMsg(ctx, seq); err == nil {
							out = append(out, targettest.Received{Body: m.Data})
						}
					}
				}
			}
			cancel()
			if err == nil {
				return out
			}
			if try == 20 {
				t.Fatalf("reading the JetStream stream: %v", err)
			}
			time.Sleep(500 * time.Millisecond)
		}
	}
	settings := map[string]string{"address": srv.Addr, "subject": "shardstore.js", "username": srv.User, "password": srv.Password, "jetstream": "on"}
	targettest.Run(t, targettest.Config{
		New:   newTarget(notifytarget.NATS(), "js", settings),
		Read:  read,
		Stop:  func(t *testing.T) { srv.Stop(t) },
		Start: func(t *testing.T) { srv.Start(t) },
	})
	t.Run("NoStreamIsAnError", func(t *testing.T) {
		s := clone(settings)
		s["subject"] = "no.stream.captures.this"
		tg := newTarget(notifytarget.NATS(), "nostream", s)(t)
		defer tg.Close()
		if err := tg.Send(ctxFor(t, 10*time.Second), targettest.Delivery("s3:ObjectCreated:Put", "b", "k", 1, 1)); err == nil {
			t.Fatal("a JetStream publish that no stream stored was acknowledged")
		} else {
			t.Logf("refused as expected: %v", err)
		}
	})
}

// TestNATSWrongPassword: a refused login is an error of Send, and the
// error does not carry the password.
func TestNATSWrongPassword(t *testing.T) {
	srv := targettest.StartNATS(t)
	tg, err := notifytarget.NATS().New("bad", map[string]string{"address": srv.Addr, "subject": "x", "username": srv.User, "password": "Wrong-Secret-123"})
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err = tg.Send(ctx, targettest.Delivery("s3:ObjectCreated:Put", "b", "k", 1, 1))
	checkRefused(t, err, "Wrong-Secret-123")
}

// newTarget makes the suite's New for a kind and its settings.
func newTarget(k notify.Kind, id string, settings map[string]string) func(t *testing.T) notify.Target {
	return func(t *testing.T) notify.Target {
		t.Helper()
		tg, err := k.New(id, settings)
		if err != nil {
			t.Fatalf("%s New: %v", k.Name, err)
		}
		return tg
	}
}

// waitFor polls f until it returns nil, for at most a minute.
func waitFor(t *testing.T, what string, f func() error) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s: %v", what, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestNATSTLS: a nats-server that speaks only TLS, with a token; the
// target trusts the test CA through cert_authority, and one that does not
// trust it is refused.
func TestNATSTLS(t *testing.T) {
	bin := targettest.Find(t, targettest.Program{
		Name: "nats-server", Paths: []string{"nats-server", "/usr/sbin/nats-server"},
		Apt: []string{"nats-server"}, Require: "SHARDSTORE_REQUIRE_NATS",
	})
	dir := t.TempDir()
	files := targettest.NewTLSFiles(t, dir)
	port := targettest.FreePort(t)
	srv := &targettest.Process{
		Name: "nats-server", Addr: fmt.Sprintf("127.0.0.1:%d", port),
		Args: []string{bin, "-a", "127.0.0.1", "-p", fmt.Sprint(port), "--auth", "nats-Token-secret",
			"--tls", "--tlscert", files.Cert, "--tlskey", files.Key},
	}
	srv.Start(t)
	t.Cleanup(func() { srv.Stop(t) })
	nc, err := nats.Connect("tls://"+srv.Addr, nats.Token("nats-Token-secret"), nats.RootCAs(files.CA), nats.MaxReconnects(-1), nats.ReconnectWait(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	reader := &natsReader{nc: nc}
	if _, err := nc.Subscribe("tls.events", func(m *nats.Msg) {
		reader.mu.Lock()
		reader.msgs = append(reader.msgs, m.Data)
		reader.mu.Unlock()
	}); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	settings := map[string]string{"address": srv.Addr, "subject": "tls.events", "token": "nats-Token-secret", "tls": "on", "cert_authority": files.CA}
	targettest.Run(t, targettest.Config{
		New:  newTarget(notifytarget.NATS(), "tls", settings),
		Read: reader.read,
		Stop: func(t *testing.T) { srv.Stop(t) },
		Start: func(t *testing.T) {
			srv.Start(t)
			waitFor(t, "the NATS reader to reconnect", func() error {
				if !nc.IsConnected() {
					return nats.ErrConnectionReconnecting
				}
				return nc.Flush()
			})
		},
	})
	t.Run("UntrustedCertificate", func(t *testing.T) {
		s := clone(settings)
		delete(s, "cert_authority")
		tg := newTarget(notifytarget.NATS(), "untrusted", s)(t)
		defer tg.Close()
		checkRefused(t, tg.Send(ctxFor(t, 10*time.Second), targettest.Delivery("s3:ObjectCreated:Put", "b", "k", 1, 1)), "nats-Token-secret")
	})
}
