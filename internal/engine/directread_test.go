package engine

import (
	"bytes"
	"context"
	"io"
	"math/rand"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shardstore/shardstore/internal/drive"
)

// stallOnce makes the first shard read (of any drive sharing it) after
// arm hang until release, then scribble 0xEE over the caller's buffer:
// a drive that answers long after its deadline.
type stallOnce struct {
	armed   atomic.Bool
	stalled chan struct{} // closed when the read hangs
	release chan struct{}
	done    chan struct{} // closed once the late read has written
}

type stallDrive struct {
	drive.Drive
	s *stallOnce
}

func (d stallDrive) OpenShard(ctx context.Context, ref drive.ShardRef, off int64) (io.ReadCloser, error) {
	rc, err := d.Drive.OpenShard(ctx, ref, off)
	if err != nil {
		return nil, err
	}
	return stallReader{ReadCloser: rc, s: d.s}, nil
}

type stallReader struct {
	io.ReadCloser
	s *stallOnce
}

func (r stallReader) Read(p []byte) (int, error) {
	if r.s.armed.CompareAndSwap(true, false) {
		close(r.s.stalled)
		<-r.s.release
		for i := range p {
			p[i] = 0xEE
		}
		close(r.s.done)
		return len(p), nil
	}
	return r.ReadCloser.Read(p)
}

// TestGetAbandonsTheBufferOfALateRead: a GET reads shards straight into
// its pooled block buffer (no staging copy), so a drive that answers a
// read after its deadline writes into that buffer late. The GET must
// rebuild the block in a fresh buffer from parity and never hand out (or
// pool) the one the late read still holds: the bytes returned, and those
// of the GETs after it, are the object's, even though the late read
// overwrote its buffer with 0xEE while the first GET was still open.
func TestGetAbandonsTheBufferOfALateRead(t *testing.T) {
	ctx := context.Background()
	s := &stallOnce{stalled: make(chan struct{}), release: make(chan struct{}), done: make(chan struct{})}
	local := localDrives(t, 16)
	// Written through an engine of its own, so that the short deadline
	// below bounds only the reads.
	w := engineOn(t, local)
	if err := w.MakeBucket(ctx, "bkt", BucketOptions{Owner: "o"}); err != nil {
		t.Fatal(err)
	}
	body := randBytes(rand.New(rand.NewSource(11)), 3<<20+12345) // four blocks, shard files
	if _, err := w.PutObject(ctx, "bkt", "k", bytes.NewReader(body), int64(len(body)), PutOptions{}); err != nil {
		t.Fatal(err)
	}
	drives := make([]drive.Drive, len(local))
	for i, d := range local {
		h := drive.NewHealth(stallDrive{Drive: d, s: s}, drive.HealthConfig{OpTimeout: time.Second, ProbeInterval: time.Hour})
		t.Cleanup(func() { h.Close() })
		drives[i] = h
	}
	e := engineOn(t, drives)
	s.armed.Store(true)
	rd, err := e.GetObject(ctx, "bkt", "k", GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	head := make([]byte, 100)
	if _, err := io.ReadFull(rd, head); err != nil {
		t.Fatalf("first bytes with a late drive: %v", err)
	}
	select {
	case <-s.stalled:
	default:
		t.Fatal("no shard read stalled: the test tested nothing")
	}
	close(s.release)
	<-s.done // the late read has overwritten the buffer it was given
	rest, err := io.ReadAll(rd)
	rd.Close()
	if err != nil {
		t.Fatal(err)
	}
	if got := append(head, rest...); !bytes.Equal(got, body) {
		t.Fatalf("GET around a late read returned wrong bytes (%d of %d)", len(got), len(body))
	}
	for i := range 3 { // pooled blocks reused: none may be the abandoned one
		rd, err := e.GetObject(ctx, "bkt", "k", GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		if _, err := io.Copy(&got, rd); err != nil { // WriteTo
			t.Fatal(err)
		}
		rd.Close()
		if !bytes.Equal(got.Bytes(), body) {
			t.Fatalf("GET %d after the late read returned wrong bytes", i+2)
		}
	}
}
