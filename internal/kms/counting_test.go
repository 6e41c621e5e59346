package kms

import (
	"context"
	"errors"
	"sync"
	"testing"
)

// flaky is a KMS whose every call fails while fail is set.
type flaky struct{ fail bool }

func (f *flaky) err() error {
	if f.fail {
		return ErrUnavailable
	}
	return nil
}
func (f *flaky) Kind() string       { return "flaky" }
func (f *flaky) DefaultKey() string { return "k" }
func (f *flaky) GenerateKey(context.Context, string, Context) (DataKey, error) {
	return DataKey{KeyID: "k"}, f.err()
}
func (f *flaky) Decrypt(context.Context, string, []byte, Context) ([]byte, error) {
	return []byte("p"), f.err()
}
func (f *flaky) Rewrap(context.Context, string, []byte, Context) ([]byte, error) {
	return []byte("c"), f.err()
}
func (f *flaky) CreateKey(context.Context, string) error { return f.err() }
func (f *flaky) Status(context.Context) Status           { return Status{Kind: "flaky", OK: !f.fail} }

func TestCounting(t *testing.T) {
	ok, bad := NewCounting(&flaky{}), NewCounting(&flaky{fail: true})
	if s := ok.Stats(); len(s) != 5 || s["generate"] != (OpStats{}) || s["status"] != (OpStats{}) {
		t.Fatalf("fresh Stats = %v; want five zero operations", s)
	}
	ctx := context.Background()
	var wg sync.WaitGroup
	for range 10 {
		for _, c := range []*Counting{ok, bad} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 10 {
					dk, err := c.GenerateKey(ctx, "k", nil)
					if dk.KeyID != "k" || (err != nil) != (c == bad) {
						t.Error("GenerateKey result not passed through")
					}
					if _, err := c.Decrypt(ctx, "k", nil, nil); (err != nil) != (c == bad) {
						t.Error("Decrypt error not passed through")
					}
					if _, err := c.Rewrap(ctx, "k", nil, nil); !errors.Is(err, ErrUnavailable) && c == bad {
						t.Error("Rewrap error not passed through")
					}
					_ = c.CreateKey(ctx, "k")
					_ = c.Status(ctx)
					_ = c.Stats() // read while others write (-race)
				}
			}()
		}
	}
	wg.Wait()
	for name, s := range ok.Stats() {
		if s != (OpStats{Calls: 100}) {
			t.Errorf("ok %s = %+v; want 100 calls, no failures", name, s)
		}
	}
	for name, s := range bad.Stats() {
		if s != (OpStats{Calls: 100, Failures: 100}) {
			t.Errorf("bad %s = %+v; want 100 calls, 100 failures", name, s)
		}
	}
	if ok.Kind() != "flaky" || ok.DefaultKey() != "k" {
		t.Error("Kind or DefaultKey not passed through")
	}
}
