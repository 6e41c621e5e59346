package s3api

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/shardstore/shardstore/internal/engine"
	"github.com/shardstore/shardstore/internal/policy"
)

// nullStore answers GETs with zeros and swallows PUTs, so the benchmarks
// measure only the HTTP layer (routing, headers, body plumbing, loopback).
type nullStore struct{ *fakeStore }

type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) { clear(p); return len(p), nil }

func (nullStore) BucketInfo(context.Context, string) (engine.BucketInfo, error) {
	return engine.BucketInfo{Name: "bench", Owner: "alice", ACL: "private"}, nil
}

func (nullStore) GetObject(_ context.Context, b, k string, _ engine.GetOptions) (*engine.ObjectReader, error) {
	const size = 8 << 20
	info := engine.ObjectInfo{Bucket: b, Key: k, Size: size, ETag: "0123456789abcdef0123456789abcdef"}
	return &engine.ObjectReader{Info: info, Length: size,
		ReadCloser: io.NopCloser(io.LimitReader(zeroReader{}, size))}, nil
}

func (nullStore) PutObject(_ context.Context, b, k string, body io.Reader, _ int64, _ engine.PutOptions) (engine.ObjectInfo, error) {
	n, err := io.Copy(io.Discard, body)
	if err != nil {
		return engine.ObjectInfo{}, fmt.Errorf("null store: %w", err)
	}
	return engine.ObjectInfo{Bucket: b, Key: k, Size: n, ETag: "0123456789abcdef0123456789abcdef"}, nil
}

func benchServer(b *testing.B) *httptest.Server {
	return benchServerAuth(b, testAuth)
}

func benchServerAuth(b *testing.B, auth Authenticator) *httptest.Server {
	srv, err := New(Config{Store: nullStore{newFakeStore()}, Auth: auth})
	if err != nil {
		b.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	b.Cleanup(ts.Close)
	return ts
}

// BenchmarkGetObject8MiB streams 8 MiB objects over loopback.
func BenchmarkGetObject8MiB(b *testing.B) {
	ts := benchServer(b)
	req, _ := http.NewRequest("GET", ts.URL+"/bench/obj", nil)
	req.Header.Set("X-Test-User", "alice")
	b.SetBytes(8 << 20)
	for b.Loop() {
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := io.Copy(io.Discard, resp.Body); err != nil {
			b.Fatal(err)
		}
		resp.Body.Close()
	}
}

// BenchmarkPutObject8MiB uploads 8 MiB bodies over loopback.
func BenchmarkPutObject8MiB(b *testing.B) {
	ts := benchServer(b)
	body := make([]byte, 8<<20)
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		req, _ := http.NewRequest("PUT", ts.URL+"/bench/obj", bytes.NewReader(body))
		req.Header.Set("X-Test-User", "alice")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			b.Fatalf("status %d", resp.StatusCode)
		}
	}
}

// BenchmarkHeadBucket measures per-request overhead.
func BenchmarkHeadBucket(b *testing.B) {
	ts := benchServer(b)
	req, _ := http.NewRequest("HEAD", ts.URL+"/bench", nil)
	req.Header.Set("X-Test-User", "alice")
	for b.Loop() {
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		resp.Body.Close()
	}
}

// BenchmarkHeadBucketIdentity is BenchmarkHeadBucket for a caller of the
// identity store, whose access is decided by its compiled policies (two
// of them, one a narrowing session policy): the difference between the
// two is what policy evaluation costs a request.
func BenchmarkHeadBucketIdentity(b *testing.B) {
	own, err := policy.Parse([]byte(`{"Version":"2012-10-17","Statement":[
		{"Effect":"Allow","Action":["s3:ListBucket","s3:GetObject","s3:PutObject"],"Resource":["arn:aws:s3:::bench","arn:aws:s3:::bench/*"]},
		{"Effect":"Deny","Action":"s3:DeleteBucket","Resource":"*"}]}`), policy.ParseOptions{Identity: true})
	if err != nil {
		b.Fatal(err)
	}
	bound, err := policy.Parse([]byte(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:*","Resource":"arn:aws:s3:::bench*"}]}`),
		policy.ParseOptions{Identity: true})
	if err != nil {
		b.Fatal(err)
	}
	perms := testPermissions{own: own, bound: bound}
	ts := benchServerAuth(b, AuthenticatorFunc(func(r *http.Request) (*AuthResult, error) {
		return &AuthResult{Caller: Caller{AccessKey: "SSTSBENCH", User: "alice", Owner: "alice", Permissions: perms, Session: true},
			ContentLength: r.ContentLength}, nil
	}))
	req, _ := http.NewRequest("HEAD", ts.URL+"/bench", nil)
	for b.Loop() {
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			b.Fatalf("status %d", resp.StatusCode)
		}
	}
}
