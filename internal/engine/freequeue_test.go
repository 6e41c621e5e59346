package engine

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shardstore/shardstore/internal/drive"
)

func TestDecodeFree(t *testing.T) {
	due := time.Unix(1800000000, 123456789)
	good := freeKey(due, "0123abcd-ef")
	for _, tc := range []struct {
		name, key string
		v         []byte
		want      *freeEntry
	}{
		{"one part", good, encodeFree([]int{1}), &freeEntry{Due: due, ID: "0123abcd-ef", Parts: []int{1}}},
		{"parts", good, encodeFree([]int{1, 2, 10000}), &freeEntry{Due: due, ID: "0123abcd-ef", Parts: []int{1, 2, 10000}}},
		{"part zero", good, encodeFree([]int{0}), &freeEntry{Due: due, ID: "0123abcd-ef", Parts: []int{0}}},
		{"no prefix", strings.TrimPrefix(good, freeQueuePrefix), encodeFree([]int{1}), nil},
		{"other prefix", "freex/" + good[len(freeQueuePrefix):], encodeFree([]int{1}), nil},
		{"short due", freeQueuePrefix + "0123/abc", encodeFree([]int{1}), nil},
		{"no slash", freeQueuePrefix + "0000000000000001xabc", encodeFree([]int{1}), nil},
		{"bad hex", freeQueuePrefix + "000000000000000g/abc", encodeFree([]int{1}), nil},
		{"upper hex", freeQueuePrefix + "000000000000000A/abc", encodeFree([]int{1}), nil},
		{"signed hex", freeQueuePrefix + "+000000000000001/abc", encodeFree([]int{1}), nil},
		{"due past int64", freeQueuePrefix + "8000000000000000/abc", encodeFree([]int{1}), nil},
		{"empty id", freeQueuePrefix + "0000000000000001/", encodeFree([]int{1}), nil},
		{"id with slash", freeQueuePrefix + "0000000000000001/a/b", encodeFree([]int{1}), nil},
		{"id dotdot", freeQueuePrefix + "0000000000000001/..", encodeFree([]int{1}), nil},
		{"id with nul", freeQueuePrefix + "0000000000000001/a\x00", encodeFree([]int{1}), nil},
		{"id too long", freeQueuePrefix + "0000000000000001/" + strings.Repeat("a", 129), encodeFree([]int{1}), nil},
		{"empty value", good, nil, nil},
		{"unknown format", good, []byte{2, 1, 1}, nil},
		{"no count", good, []byte{freeFormat}, nil},
		{"zero parts", good, []byte{freeFormat, 0}, nil},
		{"too many parts", good, append([]byte{freeFormat}, 0x91, 0x4e), nil}, // 10001
		{"huge count", good, []byte{freeFormat, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, nil},
		{"count over varint", good, []byte{freeFormat, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, nil},
		{"truncated parts", good, []byte{freeFormat, 3, 1, 2}, nil},
		{"truncated varint", good, []byte{freeFormat, 1, 0x80}, nil},
		{"part too big", good, encodeFree([]int{maxFreePart + 1}), nil},
		{"trailing bytes", good, append(encodeFree([]int{1}), 0), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := decodeFree(tc.key, tc.v)
			if tc.want == nil {
				if err == nil {
					t.Fatalf("decodeFree(%q, %x) = %+v, want an error", tc.key, tc.v, got)
				}
				return
			}
			if err != nil {
				t.Fatalf("decodeFree(%q, %x): %v", tc.key, tc.v, err)
			}
			if !got.Due.Equal(tc.want.Due) || got.ID != tc.want.ID || fmt.Sprint(got.Parts) != fmt.Sprint(tc.want.Parts) {
				t.Fatalf("decodeFree = %+v, want %+v", got, *tc.want)
			}
		})
	}
}

// FuzzDecodeFree: decodeFree never panics, and what it accepts encodes
// back to the same key and value.
func FuzzDecodeFree(f *testing.F) {
	f.Add(freeKey(time.Unix(1800000000, 5), "abc"), encodeFree([]int{1, 2}))
	f.Add(freeQueuePrefix+"ffffffffffffffff/x", []byte{freeFormat, 1, 0x80})
	f.Add("", []byte{})
	f.Fuzz(func(t *testing.T, key string, v []byte) {
		got, err := decodeFree(key, v)
		if err != nil {
			return
		}
		if k := freeKey(got.Due, got.ID); k != key {
			t.Fatalf("decodeFree(%q) = %+v, whose key is %q", key, got, k)
		}
		if !bytes.Equal(encodeFree(got.Parts), v) {
			// Non-minimal varints decode too; their value must still
			// be the one re-encoded.
			again, err := decodeFree(freeKey(got.Due, got.ID), encodeFree(got.Parts))
			if err != nil || fmt.Sprint(again.Parts) != fmt.Sprint(got.Parts) {
				t.Fatalf("re-encoded %+v does not decode the same: %+v, %v", got, again, err)
			}
		}
	})
}

// TestDelayedFreesSurviveRestart: in a cluster a replaced object's
// shard files wait FreeDelay (timers in the process). A node killed
// while frees are pending used to drop them, leaving the files for the
// scanner's orphan sweep an hour later (H1 in docs/consistency.md).
// Now the batch that drops the replaced version also queues its free on
// the drive, and after the restart the drive's node frees it: the drives
// hold only the live object's files again, with no orphan sweep (the
// grace is an hour; the scanner is off).
func TestDelayedFreesSurviveRestart(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	paths := make([]string, 4)
	for i := range paths {
		paths[i] = filepath.Join(root, fmt.Sprintf("d%d", i+1))
	}
	const delay = 300 * time.Millisecond
	open := func() *Engine {
		t.Helper()
		e, err := New(Config{Paths: paths, InlineLimit: -1, Heal: HealConfig{Disabled: true},
			Cluster: &ClusterConfig{FormatNew: true, NodeID: "n1", FreeDelay: delay}})
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	e := open()
	if err := e.MakeBucket(ctx, "bucket", BucketOptions{Owner: "o"}); err != nil {
		t.Fatal(err)
	}
	data := bytes.Repeat([]byte("x"), 200<<10)
	put := func(e *Engine, key string) {
		t.Helper()
		if _, err := e.PutObject(ctx, "bucket", key, bytes.NewReader(data), int64(len(data)), PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// Three versions of k (two replaced) and a deleted object: three
	// frees pending per drive. A reader holds each replaced version
	// (pinned, its free waits for the reader even after FreeDelay), so
	// the frees are certainly pending when the process dies.
	var readers []*ObjectReader
	hold := func(key string) {
		t.Helper()
		rd, err := e.GetObject(ctx, "bucket", key, GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		readers = append(readers, rd)
	}
	put(e, "k")
	hold("k")
	put(e, "k")
	hold("k")
	put(e, "k")
	put(e, "gone")
	hold("gone")
	if err := e.DeleteObject(ctx, "bucket", "gone"); err != nil {
		t.Fatal(err)
	}
	// kill -9: the process's timers, pins and readers are gone, nothing
	// else runs, no clean stop is recorded. (The readers are left open:
	// closing them would run the pinned frees, which a dead process
	// never does.)
	e.pins.stop()
	e.stopDecom()
	e.ahead.stop()
	e.jobs.Stop()
	if got := shardFiles(t, e); got != 4*4 {
		t.Fatalf("%d shard files after the kill, want 16 (4 versions' on 4 drives: the frees were pending)", got)
	}
	e.closeHealths()
	e.lag.runners.close()
	_ = readers
	start := time.Now()
	e2 := open()
	defer e2.Close()
	opened := time.Since(start)
	deadline := time.Now().Add(time.Minute)
	for {
		n := shardFiles(t, e2)
		if n == 4 {
			t.Logf("restarted in %v, pending frees done %v after the restart", opened, time.Since(start))
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d shard files a minute after the restart, want 4 (the live version's on each drive): the pending frees were dropped", n)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// The queue is empty once swept, and the live object reads back.
	for _, d := range e2.allDrives() {
		ents, err := d.Scan(ctx, drive.TableSystem, drive.ScanQuery{Prefix: freeQueuePrefix})
		if err != nil {
			t.Fatal(err)
		}
		if len(ents) != 0 {
			// The sweep deletes entries in the batch after the unlinks.
			time.Sleep(time.Second)
			if ents, _ = d.Scan(ctx, drive.TableSystem, drive.ScanQuery{Prefix: freeQueuePrefix}); len(ents) != 0 {
				t.Fatalf("%s: %d free queue entries left after the sweep", d, len(ents))
			}
		}
	}
	got, err := getAll(t, e2, "k", GetOptions{})
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("GET k after the restart: %d bytes, %v", len(got), err)
	}
}

// TestFreeQueueKeepsLiveData: an entry whose data id has a ref again on
// its drive (a heal wrote it back, or a commit that queued it was rolled
// back) frees nothing; the entry goes. An entry not yet due stays.
func TestFreeQueueKeepsLiveData(t *testing.T) {
	ctx := context.Background()
	e, _ := testEngine(t, 4, Config{InlineLimit: -1, Heal: HealConfig{Disabled: true}})
	data := bytes.Repeat([]byte("y"), 100<<10)
	info, err := e.PutObject(ctx, "bucket", "k", bytes.NewReader(data), int64(len(data)), PutOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_ = info
	d := e.allDrives()[0]
	var live drive.ShardRef
	if err := d.WalkShards(ctx, func(f drive.ShardFile) error { live = f.ShardRef; return nil }); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	b := &drive.Batch{}
	b.Put(drive.TableSystem, freeKey(now.Add(-time.Minute), live.ID), encodeFree([]int{live.Part}))
	b.Put(drive.TableSystem, freeKey(now.Add(time.Hour), "later"), encodeFree([]int{1}))
	b.Put(drive.TableSystem, freeQueuePrefix+"!junk", []byte("junk"))
	if err := d.Apply(ctx, b); err != nil {
		t.Fatal(err)
	}
	n, err := e.sweepFreeQueue(ctx, d, now)
	if err != nil {
		t.Fatal(err)
	}
	if n != 2 {
		t.Fatalf("swept %d entries, want 2 (the live id's and the junk)", n)
	}
	ents, err := d.Scan(ctx, drive.TableSystem, drive.ScanQuery{Prefix: freeQueuePrefix})
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != 1 || !strings.HasSuffix(ents[0].Key, "/later") {
		t.Fatalf("queue after the sweep: %v, want only the entry not yet due", ents)
	}
	got, err := getAll(t, e, "k", GetOptions{})
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("GET k after the sweep: %d bytes, %v", len(got), err)
	}
	if got := shardFiles(t, e); got != 4 {
		t.Fatalf("%d shard files, want 4: the sweep removed live data", got)
	}
}
