package engine

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"io"
	"sync/atomic"
	"testing"

	"github.com/shardstore/shardstore/internal/drive"
	"github.com/shardstore/shardstore/internal/meta"
)

// heldApply is a drive whose commit batches (not the lazy settling
// ones) wait, while hold is set, until release is closed; held is
// closed when the first one waits.
type heldApply struct {
	drive.Drive
	hold          *atomic.Bool
	held, release chan struct{}
	once          *atomic.Bool
}

func (d heldApply) Apply(ctx context.Context, b *drive.Batch) error {
	if d.hold.Load() && !b.Lazy {
		if d.once.CompareAndSwap(false, true) {
			close(d.held)
		}
		<-d.release
	}
	return d.Drive.Apply(ctx, b)
}

// TestBridgeListingDuringUnversionedOverwrite is finding L2
// (docs/consistency.md): under a bridge partition (ten drives, parity
// 4, write quorum 6; side A reaches drives 0-3 and the bridge's 8-9,
// side B drives 4-7 and 8-9, the bridge all ten), side A's PUT of a1 is
// acknowledged on its six drives. Side B's PUT of b1 reads its four
// drives (the key is new to them) and the bridge's two (a1): no version
// has read quorum, and in an unversioned bucket the commit goes ahead.
// While it is in flight (applied on five of its six drives, the sixth
// still applying), a listing through the bridge node must show the key,
// with a1 (acknowledged) or b1 (in flight), or fail: it left the key out
// (no version had read quorum and every drive answered, so the key was
// taken for a damaged one), a list-after-write violation. A GET through
// the bridge must not answer "no such key" either.
func TestBridgeListingDuringUnversionedOverwrite(t *testing.T) {
	ctx := context.Background()
	drives := localDrives(t, 10)
	var cutA, cutB, hold atomic.Bool
	held, release := make(chan struct{}), make(chan struct{})
	side := func(cut *atomic.Bool, reach func(p int) bool, gated int) []drive.Drive {
		ds := make([]drive.Drive, len(drives))
		for p, d := range drives {
			c := cutDrive{Drive: d, cut: &atomic.Bool{}}
			if !reach(p) {
				c.cut = cut
			}
			ds[p] = c
			if p == gated {
				ds[p] = heldApply{Drive: c, hold: &hold, held: held, release: release, once: &atomic.Bool{}}
			}
		}
		return ds
	}
	bridge := engineOn(t, drives)
	if err := bridge.MakeBucket(ctx, "reg", BucketOptions{Owner: "o"}); err != nil {
		t.Fatal(err)
	}
	a := engineOn(t, side(&cutA, func(p int) bool { return p < 4 || p >= 8 }, -1))
	b := engineOn(t, side(&cutB, func(p int) bool { return p >= 4 }, 7))
	cutA.Store(true)
	cutB.Store(true)
	etag := func(v string) string { s := md5.Sum([]byte(v)); return hex.EncodeToString(s[:]) }
	if _, err := a.PutObject(ctx, "reg", "k", bytes.NewReader([]byte("a1")), 2, PutOptions{}); err != nil {
		t.Fatalf("side A's put: %v", err)
	}
	hold.Store(true)
	done := make(chan error, 1)
	go func() {
		_, err := b.PutObject(ctx, "reg", "k", bytes.NewReader([]byte("b1")), 2, PutOptions{})
		done <- err
	}()
	// B's commit waits on drive 7; wait until its other five drives hold b1.
	<-held
	for {
		n := 0
		for _, p := range []int{4, 5, 6, 8, 9} {
			raw, err := drives[p].Get(ctx, drive.TableObjects, drive.ObjectKey("reg", "k"))
			if err != nil {
				continue
			}
			if r, err := meta.UnmarshalRecord(raw); err == nil && r.Current() != nil && r.Current().ETag == etag("b1") {
				n++
			}
		}
		if n == 5 {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("side B's put ended before its sixth drive applied: %v", err)
		default:
		}
	}
	res, err := bridge.ListObjects(ctx, "reg", ListOptions{})
	switch {
	case err != nil:
		t.Logf("listing through the bridge refused: %v", err)
	default:
		got := ""
		for _, o := range res.Objects {
			if o.Key == "k" {
				got = o.ETag
			}
		}
		t.Logf("listing through the bridge: k with ETag %s (a1 %s, b1 %s)", got, etag("a1"), etag("b1"))
		if got != etag("a1") && got != etag("b1") {
			t.Errorf("listing through the bridge shows k with ETag %q: want a1's %s (acknowledged) or b1's %s (in flight)", got, etag("a1"), etag("b1"))
		}
	}
	if rd, err := bridge.GetObject(ctx, "reg", "k", GetOptions{}); err == nil {
		body, _ := io.ReadAll(rd)
		rd.Close()
		if string(body) != "a1" && string(body) != "b1" {
			t.Errorf("GET through the bridge: %q", body)
		}
	} else if errors.Is(err, ErrObjectNotFound) {
		t.Errorf("GET through the bridge: %v (a1 was acknowledged)", err)
	} else {
		t.Logf("GET through the bridge refused: %v", err)
	}
	close(release)
	if err := <-done; err != nil {
		t.Logf("side B's put: %v", err)
	}
}
