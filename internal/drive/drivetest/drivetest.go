// Package drivetest is the conformance suite of drive.Drive: one set of
// tests that every implementation (Local, the Health and Faulty
// wrappers, driverpc.Client) runs from its own package's tests, so they
// are held to one contract instead of each to its own. A new
// implementation calls Run with a constructor; a difference between
// implementations shows up as the same subtest failing for one of them.
//
// The suite checks what the interface documents (drive.go), through the
// interface only, plus the optional interfaces (MemoryReader,
// ChangeCounter, RecordReader, FileReader, DirectReader) when the drive
// or its readers implement them.
package drivetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shardstore/shardstore/internal/drive"
	"github.com/shardstore/shardstore/internal/meta"
)

// Opener returns an open drive on a fresh, empty directory that was
// never formatted, and that directory ("" when the drive has none the
// test can reach). The suite formats the drive where a test needs it and
// closes it when the test ends; Opener may register cleanups of its own
// (closing what serves the drive, for example).
type Opener func(t *testing.T) (d drive.Drive, dir string)

// TestFormat is the format the suite writes.
var TestFormat = drive.Format{DeploymentID: "conformance", SetCount: 1, SetSize: 4, SetIndex: 0,
	DriveIndex: 1, DriveID: "drive-1", Parity: 2}

// Run runs the whole suite, each case on a drive of its own.
func Run(t *testing.T, open Opener) {
	s := suite{open: open}
	for _, c := range []struct {
		name string
		fn   func(*testing.T)
	}{
		{"BlankDrive", s.testBlankDrive},
		{"FormatRoundTrip", s.testFormatRoundTrip},
		{"NotBlankRefused", s.testNotBlankRefused},
		{"DiskInfo", s.testDiskInfo},
		{"GetMissing", s.testGetMissing},
		{"ApplyAndGet", s.testApplyAndGet},
		{"BatchAppliesInOrder", s.testBatchAppliesInOrder},
		{"ConditionalBatch", s.testConditionalBatch},
		{"ConditionalBatchConcurrent", s.testConditionalBatchConcurrent},
		{"ScanEdges", s.testScanEdges},
		{"ScanMatchesModel", s.testScanMatchesModel},
		{"ScanDigest", s.testScanDigest},
		{"ShardRoundTrip", s.testShardRoundTrip},
		{"ShardCreateExisting", s.testShardCreateExisting},
		{"ShardAbort", s.testShardAbort},
		{"ShardMissing", s.testShardMissing},
		{"ShardInvalidArguments", s.testShardInvalidArguments},
		{"DeleteShards", s.testDeleteShards},
		{"WalkShards", s.testWalkShards},
		{"WalkShardsStops", s.testWalkShardsStops},
		{"ShardReaderInterfaces", s.testShardReaderInterfaces},
		{"MemoryReader", s.testMemoryReader},
		{"ChangeCounter", s.testChangeCounter},
		{"RecordReader", s.testRecordReader},
		{"CallsFailAfterClose", s.testCallsFailAfterClose},
		{"DiskInfoFailsAfterClose", s.testDiskInfoFailsAfterClose},
	} {
		t.Run(c.name, c.fn)
	}
}

type suite struct{ open Opener }

var ctx = context.Background()

// blank opens a drive that was never formatted; it is closed when the
// test ends.
func (s suite) blank(t *testing.T) (drive.Drive, string) {
	t.Helper()
	d, dir := s.open(t)
	t.Cleanup(func() { d.Close() })
	return d, dir
}

// formatted opens a drive and formats it with TestFormat.
func (s suite) formatted(t *testing.T) drive.Drive {
	t.Helper()
	d, _ := s.blank(t)
	if err := d.WriteFormat(ctx, TestFormat); err != nil {
		t.Fatalf("WriteFormat of a blank drive: %v", err)
	}
	return d
}

// wantErr fails the test unless err matches want and none of not.
func wantErr(t *testing.T, what string, err, want error, not ...error) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Errorf("%s: %v, want %v", what, err, want)
	}
	for _, n := range not {
		if errors.Is(err, n) {
			t.Errorf("%s: %v also matches %v", what, err, n)
		}
	}
}

func apply(t *testing.T, d drive.Drive, b *drive.Batch) {
	t.Helper()
	if err := d.Apply(ctx, b); err != nil {
		t.Fatalf("Apply: %v", err)
	}
}

func put(t *testing.T, d drive.Drive, tb drive.Table, key string, value []byte) {
	t.Helper()
	var b drive.Batch
	b.Put(tb, key, value)
	apply(t, d, &b)
}

// mustGet reads key and fails the test unless it holds want (nil and
// empty told apart: a stored empty value reads as empty, not nil).
func mustGet(t *testing.T, d drive.Drive, tb drive.Table, key string, want []byte) {
	t.Helper()
	got, err := d.Get(ctx, tb, key)
	if err != nil {
		t.Fatalf("Get(%c, %q): %v", tb, key, err)
	}
	if !bytes.Equal(got, want) || (got == nil) != (want == nil) {
		t.Fatalf("Get(%c, %q) = %s, want %s", tb, key, short(got), short(want))
	}
}

func mustBeGone(t *testing.T, d drive.Drive, tb drive.Table, key string) {
	t.Helper()
	v, err := d.Get(ctx, tb, key)
	if !errors.Is(err, drive.ErrNotFound) {
		t.Fatalf("Get(%c, %q) = %s, %v; want ErrNotFound", tb, key, short(v), err)
	}
}

// short prints a value for a message: small ones quoted, large ones by size.
func short(b []byte) string {
	switch {
	case b == nil:
		return "nil"
	case len(b) > 64:
		return fmt.Sprintf("%d bytes", len(b))
	}
	return fmt.Sprintf("%q", b)
}

func randBytes(r *rand.Rand, n int) []byte {
	b := make([]byte, n)
	r.Read(b)
	return b
}

// --- format ---

// testBlankDrive: a drive never formatted says so, and every index and
// shard call refuses with ErrUnformatted (not a fault: a blank drive is
// healthy, it waits to be formatted).
func (s suite) testBlankDrive(t *testing.T) {
	d, _ := s.blank(t)
	if f, err := d.ReadFormat(ctx); !errors.Is(err, drive.ErrUnformatted) {
		t.Fatalf("ReadFormat of a blank drive: %+v, %v; want ErrUnformatted", f, err)
	}
	ref := drive.ShardRef{ID: "0123abcd-blank", Part: 1}
	var b drive.Batch
	b.Put(drive.TableObjects, "bkt/k", []byte("v"))
	calls := map[string]error{
		"Get":   func() error { _, err := d.Get(ctx, drive.TableObjects, "bkt/k"); return err }(),
		"Apply": d.Apply(ctx, &b),
		"Scan":  func() error { _, err := d.Scan(ctx, drive.TableObjects, drive.ScanQuery{}); return err }(),
		"CreateShard": func() error {
			w, err := d.CreateShard(ctx, ref)
			if err == nil {
				w.Abort()
			}
			return err
		}(),
		"OpenShard": func() error {
			r, err := d.OpenShard(ctx, ref, 0)
			if err == nil {
				r.Close()
			}
			return err
		}(),
		"DeleteShards": d.DeleteShards(ctx, []drive.ShardRef{ref}),
		"WalkShards":   d.WalkShards(ctx, func(drive.ShardFile) error { return nil }),
	}
	for name, err := range calls {
		wantErr(t, name+" on a blank drive", err, drive.ErrUnformatted, drive.ErrDriveFaulty)
	}
	// Still blank, and still able to be formatted: the refusals changed
	// nothing.
	if _, err := d.ReadFormat(ctx); !errors.Is(err, drive.ErrUnformatted) {
		t.Fatalf("ReadFormat after the refused calls: %v", err)
	}
	if err := d.WriteFormat(ctx, TestFormat); err != nil {
		t.Fatalf("WriteFormat after the refused calls: %v", err)
	}
}

// testFormatRoundTrip: WriteFormat records the format with the layout
// version set, ReadFormat returns it, the index works at once, and
// rewriting the format of a formatted drive keeps its index.
func (s suite) testFormatRoundTrip(t *testing.T) {
	d, _ := s.blank(t)
	f := TestFormat
	f.Version = 7 // WriteFormat sets it
	if err := d.WriteFormat(ctx, f); err != nil {
		t.Fatal(err)
	}
	want := TestFormat
	want.Version = drive.LayoutVersion
	if got, err := d.ReadFormat(ctx); err != nil || got != want {
		t.Fatalf("ReadFormat = %+v, %v; want %+v", got, err, want)
	}
	put(t, d, drive.TableBuckets, "bkt", []byte("rec"))
	re := want
	re.DriveIndex, re.DriveID = 3, "drive-3"
	if err := d.WriteFormat(ctx, re); err != nil {
		t.Fatalf("rewriting the format of a formatted drive: %v", err)
	}
	if got, err := d.ReadFormat(ctx); err != nil || got != re {
		t.Fatalf("ReadFormat after the rewrite = %+v, %v; want %+v", got, err, re)
	}
	mustGet(t, d, drive.TableBuckets, "bkt", []byte("rec"))
}

// testNotBlankRefused: a directory holding someone else's data is not
// formatted, and the refusal names what is there.
func (s suite) testNotBlankRefused(t *testing.T) {
	d, dir := s.blank(t)
	if dir == "" {
		t.Skip("the drive has no directory this test can reach, so nothing foreign can be put beside it")
	}
	const foreign = "holiday.mkv"
	if err := os.WriteFile(filepath.Join(dir, foreign), []byte("not shardstore's"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := d.WriteFormat(ctx, TestFormat)
	wantErr(t, "WriteFormat beside a foreign file", err, drive.ErrNotBlank, drive.ErrDriveFaulty)
	if err != nil && !strings.Contains(err.Error(), foreign) {
		t.Errorf("the refusal %q does not name %s", err, foreign)
	}
	if _, err := d.ReadFormat(ctx); !errors.Is(err, drive.ErrUnformatted) {
		t.Fatalf("ReadFormat after the refused format: %v, want ErrUnformatted (nothing written)", err)
	}
}

func (s suite) testDiskInfo(t *testing.T) {
	blank, _ := s.blank(t)
	for _, c := range []struct {
		what string
		d    drive.Drive
	}{{"a blank drive", blank}, {"a formatted drive", s.formatted(t)}} {
		di, err := c.d.DiskInfo(ctx)
		if err != nil {
			t.Fatalf("DiskInfo of %s: %v", c.what, err)
		}
		if di.Total == 0 || di.Free > di.Total || di.Used > di.Total {
			t.Fatalf("DiskInfo of %s = %+v: want Total > 0, Free and Used within it", c.what, di)
		}
	}
}

// --- index ---

func (s suite) testGetMissing(t *testing.T) {
	d := s.formatted(t)
	_, err := d.Get(ctx, drive.TableObjects, "bkt/none")
	wantErr(t, "Get of a missing key", err, drive.ErrNotFound, drive.ErrDriveFaulty)
	wantErr(t, "Get of a missing key (the older name)", err, drive.ErrFileNotFound)
	// Tables are separate keyspaces.
	put(t, d, drive.TableObjects, "k", []byte("o"))
	for _, tb := range []drive.Table{drive.TableBuckets, drive.TableInline, drive.TableRefs, drive.TableUploads,
		drive.TableParts, drive.TableSystem, drive.TableVersions} {
		mustBeGone(t, d, tb, "k")
	}
}

// testApplyAndGet: values of every shape come back as written, keys are
// opaque bytes, a Get's value is the caller's own copy, deletes and lazy
// batches take effect, and an empty batch does nothing.
func (s suite) testApplyAndGet(t *testing.T) {
	d := s.formatted(t)
	r := rand.New(rand.NewSource(1))
	big := randBytes(r, 300<<10)
	values := map[string][]byte{
		"bkt/a":               []byte("a"),
		"bkt/bin\x00\xff\xfe": []byte("not UTF-8, with NUL"),
		"bkt/é/日本":            []byte("utf-8"),
		"bkt/empty":           {},
		"bkt/big":             big,
		"":                    []byte("the empty key"),
		"bkt/gone":            []byte("deleted below"),
	}
	var b drive.Batch
	for k, v := range values {
		b.Put(drive.TableObjects, k, v)
	}
	b.Put(drive.TableInline, "bkt/a", []byte("same key, other table"))
	apply(t, d, &b)
	for k, v := range values {
		mustGet(t, d, drive.TableObjects, k, v)
	}
	mustGet(t, d, drive.TableInline, "bkt/a", []byte("same key, other table"))

	// The value returned is a copy: changing it changes nothing stored.
	v, err := d.Get(ctx, drive.TableObjects, "bkt/a")
	if err != nil {
		t.Fatal(err)
	}
	copy(v, "X")
	mustGet(t, d, drive.TableObjects, "bkt/a", []byte("a"))
	// So is the batch's: the drive keeps no reference to it.
	val := []byte("kept")
	put(t, d, drive.TableObjects, "bkt/copied", val)
	copy(val, "XXXX")
	mustGet(t, d, drive.TableObjects, "bkt/copied", []byte("kept"))

	// Overwrite, delete (of a present and of a missing key), and a lazy
	// batch, which is visible at once like any other.
	lazy := drive.Batch{Lazy: true}
	lazy.Put(drive.TableObjects, "bkt/a", []byte("a2"))
	lazy.Delete(drive.TableObjects, "bkt/gone")
	lazy.Delete(drive.TableObjects, "bkt/never")
	lazy.Put(drive.TableBuckets, "bkt", []byte("rec"))
	apply(t, d, &lazy)
	mustGet(t, d, drive.TableObjects, "bkt/a", []byte("a2"))
	mustBeGone(t, d, drive.TableObjects, "bkt/gone")
	mustBeGone(t, d, drive.TableObjects, "bkt/never")
	mustGet(t, d, drive.TableBuckets, "bkt", []byte("rec"))
	mustGet(t, d, drive.TableInline, "bkt/a", []byte("same key, other table"))

	if err := d.Apply(ctx, &drive.Batch{}); err != nil {
		t.Fatalf("an empty batch: %v", err)
	}
}

// testBatchAppliesInOrder: a batch's changes apply in order, so the last
// change of a key wins.
func (s suite) testBatchAppliesInOrder(t *testing.T) {
	d := s.formatted(t)
	var b drive.Batch
	b.Put(drive.TableObjects, "k1", []byte("first"))
	b.Put(drive.TableObjects, "k1", []byte("second"))
	b.Put(drive.TableObjects, "k2", []byte("put"))
	b.Delete(drive.TableObjects, "k2")
	b.Delete(drive.TableObjects, "k3")
	b.Put(drive.TableObjects, "k3", []byte("after delete"))
	apply(t, d, &b)
	mustGet(t, d, drive.TableObjects, "k1", []byte("second"))
	mustBeGone(t, d, drive.TableObjects, "k2")
	mustGet(t, d, drive.TableObjects, "k3", []byte("after delete"))
}

// testConditionalBatch: a batch with conditions (Batch.Expect) applies
// only while they hold, and otherwise fails with ErrConflict, which says
// nothing about the drive's health, and applies none of its changes.
func (s suite) testConditionalBatch(t *testing.T) {
	d := s.formatted(t)
	cas := func(expect []byte, value string) error {
		var b drive.Batch
		b.Expect(drive.TableObjects, "k", expect)
		b.Put(drive.TableObjects, "k", []byte(value))
		b.Put(drive.TableRefs, "side-"+value, []byte("x"))
		return d.Apply(ctx, &b)
	}
	wantErr(t, "expecting a value of a missing key", cas([]byte("v0"), "v1"), drive.ErrConflict, drive.ErrDriveFaulty)
	if err := cas(nil, "v1"); err != nil {
		t.Fatalf("expecting a missing key to be missing: %v", err)
	}
	wantErr(t, "expecting a present key to be missing", cas(nil, "v2"), drive.ErrConflict, drive.ErrDriveFaulty)
	wantErr(t, "expecting another value", cas([]byte("v0"), "v2"), drive.ErrConflict, drive.ErrDriveFaulty)
	// A refused batch applied nothing, its other changes included.
	mustBeGone(t, d, drive.TableRefs, "side-v2")
	mustGet(t, d, drive.TableObjects, "k", []byte("v1"))
	if err := cas([]byte("v1"), "v2"); err != nil {
		t.Fatalf("expecting the value held: %v", err)
	}
	mustGet(t, d, drive.TableObjects, "k", []byte("v2"))
	mustGet(t, d, drive.TableRefs, "side-v2", []byte("x"))

	// Several conditions: all must hold.
	var both drive.Batch
	both.Expect(drive.TableObjects, "k", []byte("v2"))
	both.Expect(drive.TableBuckets, "absent", nil)
	both.Expect(drive.TableRefs, "side-v1", []byte("not what it holds"))
	both.Put(drive.TableObjects, "k", []byte("v3"))
	wantErr(t, "one of three conditions failing", d.Apply(ctx, &both), drive.ErrConflict, drive.ErrDriveFaulty)
	mustGet(t, d, drive.TableObjects, "k", []byte("v2"))

	// A conditional delete, then the same again, whose condition is gone.
	var del drive.Batch
	del.Expect(drive.TableObjects, "k", []byte("v2"))
	del.Delete(drive.TableObjects, "k")
	if err := d.Apply(ctx, &del); err != nil {
		t.Fatalf("conditional delete: %v", err)
	}
	mustBeGone(t, d, drive.TableObjects, "k")
	wantErr(t, "a second conditional delete", d.Apply(ctx, &del), drive.ErrConflict, drive.ErrDriveFaulty)
}

// testConditionalBatchConcurrent: read-modify-write batches on one key
// behave as compare-and-swap: every increment that succeeded is counted
// once in the final value.
func (s suite) testConditionalBatchConcurrent(t *testing.T) {
	d := s.formatted(t)
	const workers, rounds = 4, 25
	var wg sync.WaitGroup
	var wins atomic.Int64
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range rounds {
				old, err := d.Get(ctx, drive.TableObjects, "n")
				if errors.Is(err, drive.ErrNotFound) {
					old = nil
				} else if err != nil {
					t.Error(err)
					return
				}
				n, _ := strconv.Atoi(string(old))
				var b drive.Batch
				b.Expect(drive.TableObjects, "n", old)
				b.Put(drive.TableObjects, "n", []byte(strconv.Itoa(n+1)))
				switch err := d.Apply(ctx, &b); {
				case err == nil:
					wins.Add(1)
				case !errors.Is(err, drive.ErrConflict):
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	v, err := d.Get(ctx, drive.TableObjects, "n")
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := strconv.Atoi(string(v)); int64(got) != wins.Load() || got == 0 {
		t.Fatalf("counter %d after %d successful compare-and-swaps", got, wins.Load())
	}
}

// entryString prints entries compactly: common prefixes in brackets.
func entryString(es []drive.Entry) string {
	var s []string
	for _, e := range es {
		if e.CommonPrefix {
			s = append(s, "["+e.Key+"]")
		} else {
			s = append(s, e.Key)
		}
	}
	return fmt.Sprintf("%q", s)
}

func queryString(q drive.ScanQuery) string {
	return fmt.Sprintf("prefix=%q after=%q delim=%q limit=%d keysOnly=%v", q.Prefix, q.After, q.Delimiter, q.Limit, q.KeysOnly)
}

// testScanEdges: S3 listing semantics at the edges (empty keys, repeated
// and non-ASCII delimiters, After inside a common prefix), values as
// written, tables kept apart, a negative limit refused.
func (s suite) testScanEdges(t *testing.T) {
	d := s.formatted(t)
	var b drive.Batch
	for _, k := range []string{"", "/", "//", "a", "a/", "a/x", "a/y/z", "a//b", "b", "b/\xff", "b/\xff\xff/c", "c\xff/d", "é/1", "é/2"} {
		b.Put(drive.TableObjects, k, []byte("v:"+k))
	}
	b.Put(drive.TableVersions, "a/x", []byte("another table"))
	apply(t, d, &b)
	for _, tc := range []struct {
		q    drive.ScanQuery
		want string
	}{
		{drive.ScanQuery{}, `["" "/" "//" "a" "a/" "a//b" "a/x" "a/y/z" "b" "b/\xff" "b/\xff\xff/c" "c\xff/d" "é/1" "é/2"]`},
		{drive.ScanQuery{Delimiter: "/"}, `["" "[/]" "a" "[a/]" "b" "[b/]" "[c\xff/]" "[é/]"]`},
		{drive.ScanQuery{Delimiter: "/", After: "a/x"}, `["b" "[b/]" "[c\xff/]" "[é/]"]`},
		{drive.ScanQuery{Delimiter: "/", After: "a/"}, `["b" "[b/]" "[c\xff/]" "[é/]"]`},
		{drive.ScanQuery{Delimiter: "/", After: "a"}, `["[a/]" "b" "[b/]" "[c\xff/]" "[é/]"]`},
		{drive.ScanQuery{Prefix: "a/", Delimiter: "/"}, `["a/" "[a//]" "a/x" "[a/y/]"]`},
		{drive.ScanQuery{Prefix: "b/", Delimiter: "\xff"}, `["[b/\xff]"]`},
		{drive.ScanQuery{Prefix: "b/\xff", Delimiter: "\xff"}, `["b/\xff" "[b/\xff\xff]"]`},
		{drive.ScanQuery{Delimiter: "/", Limit: 3}, `["" "[/]" "a"]`},
		{drive.ScanQuery{Delimiter: "/", After: "\xff"}, `[]`},
		{drive.ScanQuery{Prefix: "zz"}, `[]`},
		{drive.ScanQuery{Prefix: "a", After: "a/y/z"}, `[]`},
		{drive.ScanQuery{Prefix: "a/", After: "a"}, `["a/" "a//b" "a/x" "a/y/z"]`},
		{drive.ScanQuery{Prefix: "a/", Limit: 2, KeysOnly: true}, `["a/" "a//b"]`},
		{drive.ScanQuery{Prefix: "a", Delimiter: "//"}, `["a" "a/" "[a//]" "a/x" "a/y/z"]`},
	} {
		got, err := d.Scan(ctx, drive.TableObjects, tc.q)
		if err != nil {
			t.Fatalf("Scan(%s): %v", queryString(tc.q), err)
		}
		if entryString(got) != tc.want {
			t.Errorf("Scan(%s) = %s, want %s", queryString(tc.q), entryString(got), tc.want)
		}
		for _, e := range got {
			switch {
			case e.CommonPrefix && e.Value != nil:
				t.Errorf("Scan(%s): common prefix %q has a value", queryString(tc.q), e.Key)
			case !e.CommonPrefix && tc.q.KeysOnly && e.Value != nil:
				t.Errorf("Scan(%s): keys-only entry %q has a value", queryString(tc.q), e.Key)
			case !e.CommonPrefix && !tc.q.KeysOnly && string(e.Value) != "v:"+e.Key:
				t.Errorf("Scan(%s): value of %q is %q", queryString(tc.q), e.Key, e.Value)
			}
		}
	}
	if es, err := d.Scan(ctx, drive.TableVersions, drive.ScanQuery{}); err != nil || entryString(es) != `["a/x"]` {
		t.Errorf("Scan of another table: %s, %v", entryString(es), err)
	}
	if es, err := d.Scan(ctx, drive.TableBuckets, drive.ScanQuery{}); err != nil || len(es) != 0 {
		t.Errorf("Scan of an empty table: %s, %v", entryString(es), err)
	}
	_, err := d.Scan(ctx, drive.TableObjects, drive.ScanQuery{Limit: -1})
	wantErr(t, "Scan with a negative limit", err, drive.ErrInvalidArgument, drive.ErrDriveFaulty)
	// An empty value scans as empty, not as a missing value.
	put(t, d, drive.TableRefs, "empty", []byte{})
	if es, err := d.Scan(ctx, drive.TableRefs, drive.ScanQuery{}); err != nil || len(es) != 1 || es[0].Value == nil || len(es[0].Value) != 0 {
		t.Errorf("Scan of an empty value: %+v, %v; want one entry with a non-nil empty value", es, err)
	}
}

// scanModel is what a Scan must answer, computed the obvious way over a
// map of the table's keys.
func scanModel(table map[string][]byte, q drive.ScanQuery) []drive.Entry {
	keys := make([]string, 0, len(table))
	for k := range table {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []drive.Entry
	lastPrefix := ""
	for _, k := range keys {
		if q.Limit > 0 && len(out) >= q.Limit {
			break
		}
		if !strings.HasPrefix(k, q.Prefix) || (q.After != "" && k <= q.After) {
			continue
		}
		if q.Delimiter != "" {
			if i := strings.Index(k[len(q.Prefix):], q.Delimiter); i >= 0 {
				cp := k[:len(q.Prefix)+i+len(q.Delimiter)]
				if (q.After != "" && cp <= q.After) || cp == lastPrefix {
					continue
				}
				lastPrefix = cp
				out = append(out, drive.Entry{Key: cp, CommonPrefix: true})
				continue
			}
		}
		e := drive.Entry{Key: k}
		if !q.KeysOnly {
			e.Value = table[k]
		}
		out = append(out, e)
	}
	return out
}

func entriesEqual(a, b []drive.Entry) bool {
	return slices.EqualFunc(a, b, func(x, y drive.Entry) bool {
		return x.Key == y.Key && x.CommonPrefix == y.CommonPrefix && bytes.Equal(x.Value, y.Value) &&
			(x.Value == nil) == (y.Value == nil)
	})
}

// testScanMatchesModel: random keys, batches (puts and deletes) and
// queries; every Scan answers what the model says.
func (s suite) testScanMatchesModel(t *testing.T) {
	d := s.formatted(t)
	r := rand.New(rand.NewSource(2))
	tokens := []string{"a", "b", "ab", "/", "//", ".", "é", "\x00", "\xff", "x/y", "-", "z"}
	randKey := func() string {
		var sb strings.Builder
		for range 1 + r.Intn(5) {
			sb.WriteString(tokens[r.Intn(len(tokens))])
		}
		return sb.String()
	}
	model := map[string][]byte{}
	var known []string
	queries := 0
	for round := range 8 {
		var b drive.Batch
		for range 30 {
			if len(known) > 0 && r.Intn(4) == 0 {
				k := known[r.Intn(len(known))]
				b.Delete(drive.TableObjects, k)
				delete(model, k)
				continue
			}
			k := randKey()
			v := []byte(fmt.Sprintf("%d:%s", round, k))
			b.Put(drive.TableObjects, k, v)
			model[k] = v
			known = append(known, k)
		}
		apply(t, d, &b)
		for range 25 {
			q := drive.ScanQuery{KeysOnly: r.Intn(3) == 0, Limit: r.Intn(6)}
			if r.Intn(3) > 0 {
				p := randKey()
				q.Prefix = p[:r.Intn(len(p)+1)]
			}
			if r.Intn(2) == 0 {
				q.After = randKey()
			}
			if r.Intn(2) == 0 {
				q.Delimiter = []string{"/", "//", "\xff", "a"}[r.Intn(4)]
			}
			got, err := d.Scan(ctx, drive.TableObjects, q)
			if err != nil {
				t.Fatalf("Scan(%s): %v", queryString(q), err)
			}
			if want := scanModel(model, q); !entriesEqual(got, want) {
				t.Fatalf("round %d: Scan(%s)\n got  %s\n want %s", round, queryString(q), entryString(got), entryString(want))
			}
			queries++
		}
	}
	t.Logf("%d keys, %d queries", len(model), queries)
}

// digestRecord is an object record as the engine writes it: the digest
// covers the current version's stamp.
func digestRecord(modTime int64, etag string) []byte {
	o := &meta.Object{Size: 10, ModTime: modTime, ETag: etag, DataID: "0123abcd-data", Inline: true,
		Erasure: meta.Erasure{DataShards: 2, ParityShards: 1, Index: 1, Distribution: []int{1, 2, 3}}}
	return (&meta.Record{Versions: []*meta.Object{o}}).Marshal()
}

// testScanDigest: a scan with Digest answers, as one entry, the digest
// of exactly the entries the same scan returns (drive.DigestEntries),
// and a changed version changes it.
func (s suite) testScanDigest(t *testing.T) {
	d := s.formatted(t)
	var b drive.Batch
	for i, k := range []string{"a", "b/1", "b/2", "c", "d/x/y", "e"} {
		b.Put(drive.TableObjects, drive.ObjectKey("bkt", k), digestRecord(int64(1000+i), "etag"))
	}
	b.Put(drive.TableObjects, drive.ObjectKey("other", "a"), digestRecord(1, "etag"))
	apply(t, d, &b)
	digestOf := func(q drive.ScanQuery) drive.ScanDigest {
		t.Helper()
		q.Digest = true
		es, err := d.Scan(ctx, drive.TableObjects, q)
		if err != nil {
			t.Fatalf("digest Scan(%s): %v", queryString(q), err)
		}
		dg, err := drive.ParseScanDigest(es)
		if err != nil {
			t.Fatalf("digest Scan(%s) answered %+v: %v", queryString(q), es, err)
		}
		return dg
	}
	queries := []drive.ScanQuery{
		{Prefix: "bkt/"},
		{Prefix: "bkt/", Delimiter: "/"},
		{Prefix: "bkt/", After: "bkt/b/1", Limit: 3},
		{Prefix: "bkt/", Delimiter: "/", KeysOnly: true},
		{Prefix: "nothing/"},
	}
	for _, q := range queries {
		plain := q
		plain.KeysOnly = false
		es, err := d.Scan(ctx, drive.TableObjects, plain)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := digestOf(q), drive.DigestEntries(es); got != want {
			t.Errorf("digest Scan(%s) = %+v, want the digest of its %d entries %+v", queryString(q), got, len(es), want)
		}
	}
	if dg := digestOf(drive.ScanQuery{Prefix: "bkt/"}); dg.Count != 6 || dg.Last != "bkt/e" {
		t.Errorf("digest of bkt/: count %d, last %q; want 6, bkt/e", dg.Count, dg.Last)
	}
	before := digestOf(drive.ScanQuery{Prefix: "bkt/"})
	put(t, d, drive.TableObjects, drive.ObjectKey("bkt", "c"), digestRecord(1002, "another etag"))
	if after := digestOf(drive.ScanQuery{Prefix: "bkt/"}); after.Sum == before.Sum {
		t.Errorf("a changed version left the digest as it was: %+v", after)
	}
}

// --- shards ---

// shardSizes cross the edges implementations care about: empty, one
// byte, 4 KiB pages, 256 KiB staging buffers, more than one MiB.
var shardSizes = []int{0, 1, 4095, 4096, 4097, 256<<10 - 1, 256<<10 + 1, 1<<20 + 123}

// writeShard writes data as a PUT does: pieces of uneven sizes, some as
// WriteBuffers records (a checksum and a chunk in different buffers).
func writeShard(t *testing.T, d drive.Drive, ref drive.ShardRef, data []byte) {
	t.Helper()
	w, err := d.CreateShard(ctx, ref)
	if err != nil {
		t.Fatalf("CreateShard(%v): %v", ref, err)
	}
	for i := 0; len(data) > 0; i++ {
		n := min(len(data), 100<<10+i*777)
		if i%2 == 1 && n > 32 {
			if err := drive.WriteBuffers(w, [][]byte{data[:32], nil, data[32:n]}); err != nil {
				t.Fatalf("WriteBuffers: %v", err)
			}
		} else if m, err := w.Write(data[:n]); err != nil || m != n {
			t.Fatalf("Write of %d bytes: %d, %v", n, m, err)
		}
		data = data[n:]
	}
	if err := w.Close(); err != nil {
		t.Fatalf("Close of shard %v: %v", ref, err)
	}
}

func readShard(t *testing.T, d drive.Drive, ref drive.ShardRef, off int64) []byte {
	t.Helper()
	r, err := d.OpenShard(ctx, ref, off)
	if err != nil {
		t.Fatalf("OpenShard(%v, %d): %v", ref, off, err)
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("reading shard %v from %d: %v", ref, off, err)
	}
	return b
}

// walkAll is every shard file WalkShards reports, by ref.
func walkAll(t *testing.T, d drive.Drive) map[drive.ShardRef]drive.ShardFile {
	t.Helper()
	found := map[drive.ShardRef]drive.ShardFile{}
	err := d.WalkShards(ctx, func(sf drive.ShardFile) error {
		if _, dup := found[sf.ShardRef]; dup {
			t.Errorf("WalkShards reported %v twice", sf.ShardRef)
		}
		found[sf.ShardRef] = sf
		return nil
	})
	if err != nil {
		t.Fatalf("WalkShards: %v", err)
	}
	return found
}

func shardRef(i, part int) drive.ShardRef {
	return drive.ShardRef{ID: fmt.Sprintf("%02x%06x-conformance", i*37%256, i), Part: part}
}

// testShardRoundTrip: what Close made durable reads back whole, from any
// offset, and past the end as nothing.
func (s suite) testShardRoundTrip(t *testing.T) {
	d := s.formatted(t)
	r := rand.New(rand.NewSource(3))
	for i, size := range shardSizes {
		ref := shardRef(i, i%3)
		data := randBytes(r, size)
		writeShard(t, d, ref, data)
		for _, off := range []int{0, 1, 4095, 4096, size / 2, size - 1, size, size + 10} {
			if off < 0 {
				continue
			}
			want := []byte{}
			if off < size {
				want = data[off:]
			}
			if got := readShard(t, d, ref, int64(off)); !bytes.Equal(got, want) {
				t.Fatalf("shard of %d bytes read from %d: %d bytes, want %d", size, off, len(got), len(want))
			}
		}
	}
	// A reader closed reads no more.
	rd, err := d.OpenShard(ctx, shardRef(0, 0), 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := rd.Close(); err != nil {
		t.Fatalf("Close of a shard reader: %v", err)
	}
	if n, err := rd.Read(make([]byte, 10)); err == nil {
		t.Fatalf("Read after Close: %d bytes, no error", n)
	}
	// Parts of one id are separate files.
	a, b := drive.ShardRef{ID: "ab12cd34-parts", Part: 1}, drive.ShardRef{ID: "ab12cd34-parts", Part: 2}
	writeShard(t, d, a, []byte("part one"))
	writeShard(t, d, b, []byte("part two"))
	if got := readShard(t, d, a, 0); string(got) != "part one" {
		t.Fatalf("part 1 reads %q", got)
	}
	if got := readShard(t, d, b, 5); string(got) != "two" {
		t.Fatalf("part 2 from 5 reads %q", got)
	}
}

// testShardCreateExisting: a shard file is written once; creating it
// again is refused and leaves it as it was.
func (s suite) testShardCreateExisting(t *testing.T) {
	d := s.formatted(t)
	ref := shardRef(1, 1)
	writeShard(t, d, ref, []byte("first"))
	w, err := d.CreateShard(ctx, ref)
	if err == nil {
		w.Abort()
	}
	wantErr(t, "CreateShard of an existing shard", err, drive.ErrInvalidArgument, drive.ErrDriveFaulty)
	if got := readShard(t, d, ref, 0); string(got) != "first" {
		t.Fatalf("after the refused create the shard reads %q", got)
	}
}

// testShardAbort: Abort discards the file, writes after it fail, Abort
// twice is harmless, and Abort after a successful Close keeps the file.
func (s suite) testShardAbort(t *testing.T) {
	d := s.formatted(t)
	ref := shardRef(2, 3)
	w, err := d.CreateShard(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(bytes.Repeat([]byte("x"), 300<<10)); err != nil {
		t.Fatal(err)
	}
	w.Abort()
	w.Abort()
	if _, err := w.Write([]byte("y")); err == nil {
		t.Fatal("Write after Abort succeeded")
	}
	_, err = d.OpenShard(ctx, ref, 0)
	wantErr(t, "OpenShard of an aborted shard", err, drive.ErrNotFound, drive.ErrDriveFaulty)
	if found := walkAll(t, d); len(found) != 0 {
		t.Fatalf("WalkShards after Abort found %v", found)
	}
	// The id is free again, and a shard closed is kept by a late Abort.
	w, err = d.CreateShard(ctx, ref)
	if err != nil {
		t.Fatalf("CreateShard after an Abort: %v", err)
	}
	if _, err := w.Write([]byte("kept")); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	w.Abort()
	if got := readShard(t, d, ref, 0); string(got) != "kept" {
		t.Fatalf("Abort after Close: the shard reads %q", got)
	}
}

func (s suite) testShardMissing(t *testing.T) {
	d := s.formatted(t)
	r, err := d.OpenShard(ctx, shardRef(9, 1), 0)
	if err == nil {
		r.Close()
	}
	wantErr(t, "OpenShard of a missing shard", err, drive.ErrNotFound, drive.ErrDriveFaulty)
	// Another part of an id that exists is missing too.
	writeShard(t, d, shardRef(9, 1), []byte("x"))
	r, err = d.OpenShard(ctx, shardRef(9, 2), 0)
	if err == nil {
		r.Close()
	}
	wantErr(t, "OpenShard of a missing part", err, drive.ErrNotFound, drive.ErrDriveFaulty)
}

// testShardInvalidArguments: refs that cannot name a shard file (and so
// can never reach outside the drive's data) and negative offsets are
// refused with ErrInvalidArgument, never read as a missing shard.
func (s suite) testShardInvalidArguments(t *testing.T) {
	d := s.formatted(t)
	good := shardRef(4, 1)
	writeShard(t, d, good, []byte("x"))
	for _, ref := range []drive.ShardRef{
		{ID: ""}, {ID: "abc"}, {ID: "../../../../etc/passwd"}, {ID: "ab/../../x"}, {ID: "ABCDEF12"},
		{ID: "abcdef12/"}, {ID: "zz345678"}, {ID: "ab\x00cdefgh"}, {ID: "ab cdefgh"}, {ID: "abcdef12.1"},
		{ID: strings.Repeat("a", 65)}, {ID: "abcdef12", Part: -1},
	} {
		what := fmt.Sprintf("(%q, %d)", ref.ID, ref.Part)
		w, err := d.CreateShard(ctx, ref)
		if err == nil {
			w.Abort()
		}
		wantErr(t, "CreateShard"+what, err, drive.ErrInvalidArgument, drive.ErrDriveFaulty)
		r, err := d.OpenShard(ctx, ref, 0)
		if err == nil {
			r.Close()
		}
		wantErr(t, "OpenShard"+what, err, drive.ErrInvalidArgument, drive.ErrDriveFaulty)
		wantErr(t, "DeleteShards"+what, d.DeleteShards(ctx, []drive.ShardRef{good, ref}), drive.ErrInvalidArgument, drive.ErrDriveFaulty)
	}
	// A refused DeleteShards removed nothing, not even its valid refs.
	if got := readShard(t, d, good, 0); string(got) != "x" {
		t.Fatalf("a refused DeleteShards touched a valid shard: %q", got)
	}
	r, err := d.OpenShard(ctx, good, -1)
	if err == nil {
		r.Close()
	}
	wantErr(t, "OpenShard at a negative offset", err, drive.ErrInvalidArgument, drive.ErrDriveFaulty)
}

// testDeleteShards: deleted shards are gone; missing ones, a repeated
// delete and an empty list are not errors.
func (s suite) testDeleteShards(t *testing.T) {
	d := s.formatted(t)
	var refs []drive.ShardRef
	for i := range 4 {
		refs = append(refs, shardRef(10+i, 1))
		writeShard(t, d, refs[i], []byte(strconv.Itoa(i)))
	}
	gone := []drive.ShardRef{refs[0], refs[2], shardRef(99, 1)}
	for range 2 {
		if err := d.DeleteShards(ctx, gone); err != nil {
			t.Fatalf("DeleteShards(%v): %v", gone, err)
		}
	}
	if err := d.DeleteShards(ctx, nil); err != nil {
		t.Fatalf("DeleteShards of nothing: %v", err)
	}
	for i, ref := range refs {
		r, err := d.OpenShard(ctx, ref, 0)
		if i%2 == 0 {
			if err == nil {
				r.Close()
			}
			wantErr(t, fmt.Sprintf("OpenShard of deleted %v", ref), err, drive.ErrNotFound)
			continue
		}
		if err != nil {
			t.Fatalf("OpenShard of kept %v: %v", ref, err)
		}
		r.Close()
	}
	found := walkAll(t, d)
	if len(found) != 2 {
		t.Fatalf("WalkShards after the delete: %v, want %v and %v", found, refs[1], refs[3])
	}
}

// testWalkShards: every closed shard file is walked once with its size
// and a plausible modification time; aborted and deleted ones are not.
func (s suite) testWalkShards(t *testing.T) {
	d := s.formatted(t)
	if found := walkAll(t, d); len(found) != 0 {
		t.Fatalf("a new drive walks %v", found)
	}
	start := time.Now().Add(-2 * time.Second) // filesystem clocks are coarse
	want := map[drive.ShardRef]int64{}
	for i, size := range []int{0, 1, 5000, 70000} {
		ref := shardRef(20+i, i)
		writeShard(t, d, ref, make([]byte, size))
		want[ref] = int64(size)
	}
	w, err := d.CreateShard(ctx, shardRef(30, 1))
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte("aborted"))
	w.Abort()
	end := time.Now().Add(2 * time.Second)
	found := walkAll(t, d)
	if len(found) != len(want) {
		t.Fatalf("WalkShards found %d files, want %d: %v", len(found), len(want), found)
	}
	for ref, size := range want {
		sf, ok := found[ref]
		switch {
		case !ok:
			t.Errorf("WalkShards missed %v", ref)
		case sf.Size != size:
			t.Errorf("WalkShards: %v has size %d, want %d", ref, sf.Size, size)
		case sf.ModTime.Before(start) || sf.ModTime.After(end):
			t.Errorf("WalkShards: %v modified at %v, not between %v and %v", ref, sf.ModTime, start, end)
		}
	}
}

// testWalkShardsStops: an error from fn ends the walk and is returned.
func (s suite) testWalkShardsStops(t *testing.T) {
	d := s.formatted(t)
	for i := range 5 {
		writeShard(t, d, shardRef(40+i, 1), []byte("x"))
	}
	stop := errors.New("enough")
	calls := 0
	err := d.WalkShards(ctx, func(drive.ShardFile) error { calls++; return stop })
	if !errors.Is(err, stop) {
		t.Fatalf("WalkShards whose fn failed: %v, want fn's error", err)
	}
	if calls != 1 {
		t.Fatalf("fn called %d times after it failed the first time", calls)
	}
}

// testShardReaderInterfaces checks the optional interfaces of the
// readers OpenShard returns, where they are implemented: FileReader
// gives a file positioned where the reader is, DirectReader fills
// buffers as io.ReadFull would fill their concatenation.
func (s suite) testShardReaderInterfaces(t *testing.T) {
	d := s.formatted(t)
	data := randBytes(rand.New(rand.NewSource(4)), 10000)
	ref := shardRef(50, 1)
	writeShard(t, d, ref, data)
	open := func(off int64) io.ReadCloser {
		t.Helper()
		r, err := d.OpenShard(ctx, ref, off)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Close() })
		return r
	}
	tested := 0

	if _, ok := open(0).(drive.FileReader); ok {
		r := open(100)
		fr := r.(drive.FileReader)
		head := make([]byte, 50)
		if _, err := io.ReadFull(r, head); err != nil {
			t.Fatal(err)
		}
		f, n, err := fr.File()
		// A reader may decline (no local file behind it); if it gives a
		// file, the file must be right.
		if err == nil {
			tested++
			rest, rerr := io.ReadAll(f)
			f.Close()
			if rerr != nil || n != int64(len(data)-150) || !bytes.Equal(rest, data[150:]) {
				t.Errorf("FileReader.File after reading to 150: %d bytes left said, %d read (%v), want %d", n, len(rest), rerr, len(data)-150)
			}
			// The reader itself stays where it was.
			more := make([]byte, 10)
			if _, err := io.ReadFull(r, more); err != nil || !bytes.Equal(more, data[150:160]) {
				t.Errorf("reader after File: %q, %v", more, err)
			}
		} else {
			t.Logf("FileReader.File declined: %v", err)
		}
	}

	if _, ok := open(0).(drive.DirectReader); ok {
		tested++
		dr := open(1000).(drive.DirectReader)
		a, b := make([]byte, 3000), make([]byte, 5000)
		if err := dr.ReadFull(a, nil, b); err != nil || !bytes.Equal(a, data[1000:4000]) || !bytes.Equal(b, data[4000:9000]) {
			t.Errorf("DirectReader.ReadFull of two buffers: %v, or other bytes", err)
		}
		if err := dr.ReadFull(make([]byte, 2000)); !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("DirectReader.ReadFull past the end after some bytes: %v, want io.ErrUnexpectedEOF", err)
		}
		if err := open(int64(len(data))).(drive.DirectReader).ReadFull(make([]byte, 10)); !errors.Is(err, io.EOF) {
			t.Errorf("DirectReader.ReadFull at the end: %v, want io.EOF", err)
		}
	}
	if tested == 0 {
		t.Skip("the shard readers implement neither drive.FileReader nor drive.DirectReader")
	}
}

// --- optional interfaces of the drive ---

// testMemoryReader: an answer from memory is never stale: once Apply
// returned, GetCached answers the new value or nothing.
func (s suite) testMemoryReader(t *testing.T) {
	d := s.formatted(t)
	mr, ok := d.(drive.MemoryReader)
	if !ok {
		t.Skip("the drive does not implement drive.MemoryReader")
	}
	key := drive.ObjectKey("bkt", "hot")
	check := func(want []byte) {
		t.Helper()
		if _, err := d.Get(ctx, drive.TableObjects, key); err != nil && want != nil {
			t.Fatal(err)
		}
		if v, ok := mr.GetCached(drive.TableObjects, key); ok && (want == nil || !bytes.Equal(v, want)) {
			t.Fatalf("GetCached = %s, want %s or nothing", short(v), short(want))
		}
	}
	for i := range 3 {
		v := []byte(fmt.Sprintf("version %d", i))
		put(t, d, drive.TableObjects, key, v)
		check(v)
		check(v)
	}
	var del drive.Batch
	del.Delete(drive.TableObjects, key)
	apply(t, d, &del)
	check(nil)
}

// testChangeCounter: a batch that touches a bucket's objects, versions
// or bucket entry moves that bucket's mark before Apply returns.
func (s suite) testChangeCounter(t *testing.T) {
	d := s.formatted(t)
	cc, ok := d.(drive.ChangeCounter)
	if !ok {
		t.Skip("the drive does not implement drive.ChangeCounter")
	}
	for _, c := range []struct {
		what string
		tb   drive.Table
		key  string
	}{
		{"an object", drive.TableObjects, drive.ObjectKey("bkt", "k")},
		{"a version", drive.TableVersions, drive.VersionKey("bkt", "k", 1, "v1")},
		{"the bucket entry", drive.TableBuckets, "bkt"},
	} {
		before, ok := cc.Changes("bkt")
		if !ok {
			t.Fatalf("Changes of a formatted, open drive answered nothing")
		}
		put(t, d, c.tb, c.key, []byte("x"))
		after, ok := cc.Changes("bkt")
		if !ok || after == before {
			t.Errorf("writing %s left the bucket's mark as it was (ok %v)", c.what, ok)
		}
	}
}

// testRecordReader: GetRecord answers what Get does for the record, and
// the inline shard of a record that holds one.
func (s suite) testRecordReader(t *testing.T) {
	d := s.formatted(t)
	rr, ok := d.(drive.RecordReader)
	if !ok {
		t.Skip("the drive does not implement drive.RecordReader")
	}
	inlineRec := digestRecord(1, "etag") // Inline, DataID 0123abcd-data
	plain := &meta.Object{Size: 1 << 20, ModTime: 2, ETag: "big", DataID: "4567abcd-data",
		Erasure: meta.Erasure{DataShards: 2, ParityShards: 1, Index: 1, Distribution: []int{1, 2, 3}}}
	plainRec := (&meta.Record{Versions: []*meta.Object{plain}}).Marshal()
	var b drive.Batch
	b.Put(drive.TableObjects, drive.ObjectKey("bkt", "small"), inlineRec)
	b.Put(drive.TableInline, drive.DataKey("0123abcd-data", 1), []byte("inline shard"))
	b.Put(drive.TableObjects, drive.ObjectKey("bkt", "large"), plainRec)
	apply(t, d, &b)
	rec, inline, err := rr.GetRecord(ctx, "bkt", "small")
	if err != nil || !bytes.Equal(rec, inlineRec) || string(inline) != "inline shard" {
		t.Errorf("GetRecord of an inline object: %d record bytes, inline %s, %v", len(rec), short(inline), err)
	}
	rec, inline, err = rr.GetRecord(ctx, "bkt", "large")
	if err != nil || !bytes.Equal(rec, plainRec) || inline != nil {
		t.Errorf("GetRecord of an object in shard files: %d record bytes, inline %s, %v", len(rec), short(inline), err)
	}
	_, _, err = rr.GetRecord(ctx, "bkt", "missing")
	wantErr(t, "GetRecord of a missing key", err, drive.ErrNotFound, drive.ErrDriveFaulty)
}

// --- close ---

// testCallsFailAfterClose: Close releases the drive; every later call
// fails as a faulty drive's would (a drive that is gone). Streams opened
// before are not covered: implementations differ by design there (a
// remote drive's streams go on).
func (s suite) testCallsFailAfterClose(t *testing.T) {
	d := s.formatted(t)
	ref := shardRef(60, 1)
	writeShard(t, d, ref, []byte("x"))
	put(t, d, drive.TableObjects, "k", []byte("v"))
	if err := d.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	var b drive.Batch
	b.Put(drive.TableObjects, "k2", []byte("v"))
	for name, call := range map[string]func() error{
		"ReadFormat":  func() error { _, err := d.ReadFormat(ctx); return err },
		"WriteFormat": func() error { return d.WriteFormat(ctx, TestFormat) },
		"Get":         func() error { _, err := d.Get(ctx, drive.TableObjects, "k"); return err },
		"Apply":       func() error { return d.Apply(ctx, &b) },
		"Scan":        func() error { _, err := d.Scan(ctx, drive.TableObjects, drive.ScanQuery{}); return err },
		"CreateShard": func() error {
			w, err := d.CreateShard(ctx, shardRef(61, 1))
			if err == nil {
				w.Abort()
			}
			return err
		},
		"OpenShard": func() error {
			r, err := d.OpenShard(ctx, ref, 0)
			if err == nil {
				r.Close()
			}
			return err
		},
		"DeleteShards": func() error { return d.DeleteShards(ctx, []drive.ShardRef{ref}) },
		"WalkShards":   func() error { return d.WalkShards(ctx, func(drive.ShardFile) error { return nil }) },
	} {
		wantErr(t, name+" after Close", call(), drive.ErrDriveFaulty)
	}
}

// testDiskInfoFailsAfterClose: DiskInfo too fails after Close (the suite
// found Local answering it from the directory; fixed).
func (s suite) testDiskInfoFailsAfterClose(t *testing.T) {
	d := s.formatted(t)
	if err := d.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	di, err := d.DiskInfo(ctx)
	if err == nil {
		t.Fatalf("DiskInfo answered %+v after Close", di)
	}
	wantErr(t, "DiskInfo after Close", err, drive.ErrDriveFaulty)
}
