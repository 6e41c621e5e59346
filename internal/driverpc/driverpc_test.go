package driverpc

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shardstore/shardstore/internal/drive"
	"github.com/shardstore/shardstore/internal/peerauth"
)

var (
	testKey    = peerauth.Derive("root", "secret")
	testFormat = drive.Format{DeploymentID: "dep", SetCount: 1, SetSize: 4, SetIndex: 0, DriveIndex: 2, DriveID: "drive-2", Parity: 2}
)

// node is one peer: a Server in an httptest.Server, mounted under
// PathPrefix of a mux the way a node mounts it, over local drives.
type node struct {
	srv    *httptest.Server
	drives map[int]drive.Drive
	dirs   map[int]string
	hc     *http.Client
}

// openLocal opens a drive in a fresh temp directory, formatted or not.
func openLocal(t testing.TB, formatted bool) (*drive.Local, string) {
	t.Helper()
	dir := t.TempDir()
	d, err := drive.OpenLocal(dir, drive.LocalOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	if formatted {
		if err := d.WriteFormat(context.Background(), testFormat); err != nil {
			t.Fatal(err)
		}
	}
	return d, dir
}

// newNode serves drives (slot → drive) and returns the node.
func newNode(t testing.TB, drives map[int]drive.Drive) *node {
	t.Helper()
	mux := http.NewServeMux()
	mux.Handle(PathPrefix, NewServer(drives, testKey, nil))
	n := &node{srv: httptest.NewServer(mux), drives: drives, dirs: map[int]string{}, hc: NewHTTPClient(nil, nil)}
	t.Cleanup(func() {
		n.hc.CloseIdleConnections()
		n.srv.Close()
	})
	return n
}

// newLocalNode serves one formatted local drive at slot 3.
func newLocalNode(t testing.TB) (*node, *drive.Local) {
	t.Helper()
	d, dir := openLocal(t, true)
	n := newNode(t, map[int]drive.Drive{3: d})
	n.dirs[3] = dir
	return n, d
}

func (n *node) client(slot int) *Client {
	return NewClient(n.srv.URL, slot, n.srv.URL+n.dirs[slot], testKey, n.hc)
}

func randBytes(t testing.TB, n int) []byte {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return b
}

var ctx = context.Background()

func TestFormatAndDiskInfo(t *testing.T) {
	d, _ := openLocal(t, false)
	n := newNode(t, map[int]drive.Drive{0: d})
	c := n.client(0)
	if _, err := c.ReadFormat(ctx); !errors.Is(err, drive.ErrUnformatted) {
		t.Fatalf("ReadFormat of a blank drive: %v, want ErrUnformatted", err)
	}
	if err := c.WriteFormat(ctx, testFormat); err != nil {
		t.Fatal(err)
	}
	want := testFormat
	want.Version = drive.LayoutVersion
	got, err := c.ReadFormat(ctx)
	if err != nil || got != want {
		t.Fatalf("ReadFormat = %+v, %v; want %+v", got, err, want)
	}
	if lf, _ := d.ReadFormat(ctx); lf != want {
		t.Fatalf("local format %+v", lf)
	}
	di, err := c.DiskInfo(ctx)
	if err != nil || di.Total == 0 || di.Free > di.Total {
		t.Fatalf("DiskInfo = %+v, %v", di, err)
	}
	if c.String() != n.srv.URL+n.dirs[0] {
		t.Fatalf("String = %q", c.String())
	}
}

// nilDrive returns a nil value for the key "nil", which Local never
// does, to check that nil and empty stay apart.
type nilDrive struct{ drive.Drive }

func (d nilDrive) Get(ctx context.Context, t drive.Table, key string) ([]byte, error) {
	if key == "nil" {
		return nil, nil
	}
	return d.Drive.Get(ctx, t, key)
}

func TestGetNilValue(t *testing.T) {
	local, _ := openLocal(t, true)
	n := newNode(t, map[int]drive.Drive{1: nilDrive{local}})
	c := n.client(1)
	if v, err := c.Get(ctx, drive.TableObjects, "nil"); err != nil || v != nil {
		t.Fatalf("nil value: %#v, %v", v, err)
	}
}

// writeShard writes data to a new shard through w in pieces, half of
// them as WriteBuffers records (a checksum and a chunk, as a PUT does).
func writeShard(t testing.TB, c drive.Drive, ref drive.ShardRef, data []byte) {
	t.Helper()
	w, err := c.CreateShard(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	const piece = 100 << 10 // not a power of two: records straddle buffers
	for i := 0; len(data) > 0; i++ {
		m := min(piece, len(data))
		if i%2 == 0 {
			if _, err := w.Write(data[:m]); err != nil {
				t.Fatal(err)
			}
		} else if err := drive.WriteBuffers(w, [][]byte{data[:32], data[32:m]}); err != nil {
			t.Fatal(err)
		}
		data = data[m:]
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

func readShard(t testing.TB, c drive.Drive, ref drive.ShardRef, off int64) []byte {
	t.Helper()
	r, err := c.OpenShard(ctx, ref, off)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func walk(t testing.TB, d drive.Drive) []drive.ShardFile {
	t.Helper()
	var out []drive.ShardFile
	if err := d.WalkShards(ctx, func(sf drive.ShardFile) error { out = append(out, sf); return nil }); err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(out, func(a, b drive.ShardFile) int { return strings.Compare(a.ID, b.ID) })
	return out
}

func TestShardRoundTrip(t *testing.T) {
	n, local := newLocalNode(t)
	c := n.client(3)
	data := randBytes(t, 5<<20+12345)
	ref := drive.ShardRef{ID: "0123abcd-0001", Part: 1}
	writeShard(t, c, ref, data)

	if got := readShard(t, c, ref, 0); !bytes.Equal(got, data) {
		t.Fatalf("read back %d bytes, differ from the %d written", len(got), len(data))
	}
	mid := int64(len(data)/2 + 7)
	if got := readShard(t, c, ref, mid); !bytes.Equal(got, data[mid:]) {
		t.Fatalf("read from %d: %d bytes, want %d", mid, len(got), len(data)-int(mid))
	}
	if got := readShard(t, c, ref, int64(len(data))+10); len(got) != 0 {
		t.Fatalf("read past the end: %d bytes", len(got))
	}
	if got := readShard(t, local, ref, 0); !bytes.Equal(got, data) {
		t.Fatal("local drive holds other data")
	}

	// An empty shard, and a second part.
	empty := drive.ShardRef{ID: "0123abcd-0002", Part: 0}
	writeShard(t, c, empty, nil)
	ref2 := drive.ShardRef{ID: "0123abcd-0001", Part: 2}
	writeShard(t, c, ref2, data[:1000])

	remote, want := walk(t, c), walk(t, local)
	if len(remote) != 3 || len(want) != 3 {
		t.Fatalf("walk: %d remote, %d local files", len(remote), len(want))
	}
	for i := range remote {
		if remote[i].ShardRef != want[i].ShardRef || remote[i].Size != want[i].Size || !remote[i].ModTime.Equal(want[i].ModTime) {
			t.Fatalf("walk entry %d: %+v, local %+v", i, remote[i], want[i])
		}
	}

	if err := c.DeleteShards(ctx, []drive.ShardRef{ref, empty, {ID: "0123abcd-0404", Part: 1}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.OpenShard(ctx, ref, 0); !errors.Is(err, drive.ErrNotFound) {
		t.Fatalf("deleted shard: %v, want ErrNotFound", err)
	}
	if got := walk(t, c); len(got) != 1 || got[0].ShardRef != ref2 {
		t.Fatalf("walk after delete: %+v", got)
	}
	// An existing file is refused by CreateShard itself.
	if _, err := c.CreateShard(ctx, ref2); !errors.Is(err, drive.ErrInvalidArgument) || !strings.Contains(err.Error(), "file exists") {
		t.Fatalf("existing shard: %v, want ErrInvalidArgument (file exists)", err)
	}
}

func TestErrorMapping(t *testing.T) {
	blank, _ := openLocal(t, false)
	formatted, _ := openLocal(t, true)
	missing, err := drive.OpenLocal(filepath.Join(t.TempDir(), "gone"), drive.LocalOptions{NoCreate: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { missing.Close() })
	foreign, foreignDir := openLocal(t, false)
	if err := os.WriteFile(filepath.Join(foreignDir, "photo.jpg"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	n := newNode(t, map[int]drive.Drive{0: blank, 1: formatted, 2: missing, 3: foreign})
	ref := drive.ShardRef{ID: "0123abcd-0001", Part: 1}

	type check struct {
		name string
		err  error
		want []error
		not  []error
		text string
	}
	c0, c1, c2, c3 := n.client(0), n.client(1), n.client(2), n.client(3)
	_, errGet := c1.Get(ctx, drive.TableObjects, "nope")
	_, errOpen := c1.OpenShard(ctx, ref, 0)
	_, errUnfGet := c0.Get(ctx, drive.TableObjects, "k")
	_, errUnfCreate := c0.CreateShard(ctx, ref)
	errUnfWalk := c0.WalkShards(ctx, func(drive.ShardFile) error { return nil })
	_, errBadID := c1.CreateShard(ctx, drive.ShardRef{ID: "../../etc", Part: 1})
	_, errMissing := c2.ReadFormat(ctx)
	errNotBlank := c3.WriteFormat(ctx, testFormat)
	_, errSlot := n.client(9).Get(ctx, drive.TableObjects, "k")
	_, errSlotCreate := n.client(9).CreateShard(ctx, ref)
	for _, ch := range []check{
		{"get missing key", errGet, []error{drive.ErrNotFound, drive.ErrFileNotFound}, []error{drive.ErrDriveFaulty}, "not found"},
		{"open missing shard", errOpen, []error{drive.ErrNotFound}, []error{drive.ErrDriveFaulty}, "0123abcd-0001"},
		{"get on blank drive", errUnfGet, []error{drive.ErrUnformatted}, []error{drive.ErrDriveFaulty}, "not formatted"},
		{"create on blank drive", errUnfCreate, []error{drive.ErrUnformatted}, nil, "not formatted"},
		{"walk on blank drive", errUnfWalk, []error{drive.ErrUnformatted}, nil, "not formatted"},
		{"bad shard id", errBadID, []error{drive.ErrInvalidArgument}, []error{drive.ErrDriveFaulty}, "invalid argument"},
		{"missing drive directory", errMissing, []error{drive.ErrDriveMissing, drive.ErrDriveFaulty}, nil, "does not exist"},
		{"not blank", errNotBlank, []error{drive.ErrNotBlank}, []error{drive.ErrDriveFaulty}, "photo.jpg"},
		{"unknown slot", errSlot, []error{drive.ErrDriveFaulty}, []error{drive.ErrNotFound}, "slot 9"},
		{"unknown slot, create", errSlotCreate, []error{drive.ErrDriveFaulty}, nil, "slot 9"},
	} {
		if ch.err == nil {
			t.Errorf("%s: no error", ch.name)
			continue
		}
		for _, w := range ch.want {
			if !errors.Is(ch.err, w) {
				t.Errorf("%s: %v does not match %v", ch.name, ch.err, w)
			}
		}
		for _, w := range ch.not {
			if errors.Is(ch.err, w) {
				t.Errorf("%s: %v matches %v", ch.name, ch.err, w)
			}
		}
		if !strings.Contains(ch.err.Error(), ch.text) || !strings.Contains(ch.err.Error(), n.srv.URL) {
			t.Errorf("%s: message %q lacks %q or the node", ch.name, ch.err, ch.text)
		}
	}
}

func TestWireErrorKinds(t *testing.T) {
	for _, k := range errorKinds {
		src := fmt.Errorf("drive /d: op: %w: detail", k.err)
		we, status := toWire(src)
		if status != k.status && !(k.err == drive.ErrDriveMissing) {
			t.Errorf("%s: status %d", k.code, status)
		}
		got := fromWire("http://n1", "op", we)
		if !errors.Is(got, k.err) || !strings.Contains(got.Error(), "detail") {
			t.Errorf("%s: %v does not match %v", k.code, got, k.err)
		}
	}
	// An error matching several kinds matches them all on the client;
	// unknown codes (a newer peer) are ignored.
	src := fmt.Errorf("index: %w (%w)", drive.ErrFileCorrupt, drive.ErrDriveFaulty)
	we, _ := toWire(src)
	we.Codes = append(we.Codes, "from_the_future")
	got := fromWire("http://n1", "op", we)
	if !errors.Is(got, drive.ErrFileCorrupt) || !errors.Is(got, drive.ErrDriveFaulty) || errors.Is(got, drive.ErrNotFound) {
		t.Fatalf("multi-kind error: %v", got)
	}
	// An error of no kind stays of no kind.
	if got := fromWire("n", "op", func() wireError { we, _ := toWire(errors.New("odd")); return we }()); errors.Is(got, drive.ErrDriveFaulty) {
		t.Fatalf("plain error became faulty: %v", got)
	}
}

func TestCodecRoundTrip(t *testing.T) {
	b := &drive.Batch{Lazy: true, Changes: []drive.Change{
		{Table: drive.TableObjects, Key: "a\x00\xff", Value: []byte("v")},
		{Table: drive.TableInline, Key: "", Value: []byte{}},
		{Table: drive.TableRefs, Key: "nil", Value: nil},
		{Table: drive.TableObjects, Key: "gone", Delete: true},
		{Table: 0xff, Key: "t", Value: bytes.Repeat([]byte{7}, 1000)},
	}}
	b.Expect(drive.TableObjects, "a\x00\xff", []byte("old"))
	b.Expect(drive.TableObjects, "new", nil)
	got, err := decodeBatch(bytes.NewReader(encodeBatch(b)))
	if err != nil || !reflect.DeepEqual(got, b) {
		t.Fatalf("batch: %+v, %v", got, err)
	}
	plain := &drive.Batch{Changes: b.Changes[:1]}
	if got, err := decodeBatch(bytes.NewReader(encodeBatch(plain))); err != nil || !reflect.DeepEqual(got, plain) {
		t.Fatalf("batch without conditions: %+v, %v", got, err)
	}
	es := []drive.Entry{{Key: "a/", CommonPrefix: true}, {Key: "b", Value: []byte{}}, {Key: "c\xff", Value: []byte("x")}, {Key: "d"}}
	gotEs, err := decodeEntries(bytes.NewReader(encodeEntries(es)))
	if err != nil || !reflect.DeepEqual(gotEs, es) {
		t.Fatalf("entries: %+v, %v", gotEs, err)
	}
	if gotEs, err := decodeEntries(bytes.NewReader(encodeEntries(nil))); err != nil || gotEs != nil {
		t.Fatalf("no entries: %#v, %v", gotEs, err)
	}
	// Truncations and garbage fail, never panic or allocate wildly.
	enc := encodeBatch(b)
	for i := range len(enc) {
		if _, err := decodeBatch(bytes.NewReader(enc[:i])); err == nil {
			t.Fatalf("batch cut at %d decoded", i)
		}
	}
	if _, err := decodeEntries(bytes.NewReader([]byte{codecVersion, 1, 0, 0xff, 0xff, 0xff, 0xff, 0x7f})); err == nil {
		t.Fatal("huge key length decoded")
	}
	if _, err := decodeBatch(bytes.NewReader([]byte{9})); err == nil {
		t.Fatal("unknown version decoded")
	}
}

func TestAuth(t *testing.T) {
	n, local := newLocalNode(t)
	ref := drive.ShardRef{ID: "0123abcd-0001", Part: 1}
	writeShard(t, n.client(3), ref, []byte("shard"))

	bad := NewClient(n.srv.URL, 3, "bad", peerauth.Derive("root", "other"), n.hc)
	var b drive.Batch
	b.Put(drive.TableObjects, "k", []byte("v"))
	f := testFormat
	f.DriveIndex = 9
	var errs []error
	errs = append(errs, bad.Apply(ctx, &b), bad.WriteFormat(ctx, f), bad.DeleteShards(ctx, []drive.ShardRef{ref}))
	_, err := bad.Get(ctx, drive.TableObjects, "k")
	errs = append(errs, err)
	_, err = bad.CreateShard(ctx, drive.ShardRef{ID: "0123abcd-0009", Part: 1})
	errs = append(errs, err)
	_, err = bad.OpenShard(ctx, ref, 0)
	errs = append(errs, err)
	errs = append(errs, bad.WalkShards(ctx, func(drive.ShardFile) error { return nil }))
	for i, err := range errs {
		if !errors.Is(err, drive.ErrDriveFaulty) || !strings.Contains(err.Error(), n.srv.URL) || !strings.Contains(err.Error(), "403") {
			t.Errorf("call %d with the wrong key: %v, want ErrDriveFaulty naming the node", i, err)
		}
	}
	// Nothing changed.
	if _, err := local.Get(ctx, drive.TableObjects, "k"); !errors.Is(err, drive.ErrNotFound) {
		t.Errorf("Apply went through: %v", err)
	}
	if got, _ := local.ReadFormat(ctx); got.DriveIndex != testFormat.DriveIndex {
		t.Errorf("WriteFormat went through: %+v", got)
	}
	if got := walk(t, local); len(got) != 1 || got[0].ShardRef != ref {
		t.Errorf("shards changed: %+v", got)
	}

	url := n.srv.URL + PathPrefix + opApply + "?drive=3"
	post := func(body []byte, hash string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
		testKey.Sign(req, hash)
		resp, err := n.hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	// A body swapped under a valid signature, and an unsigned body on a
	// call that needs a signed one: refused.
	if resp := post(encodeBatch(&b), peerauth.BodyHash([]byte("other"))); resp.StatusCode != http.StatusForbidden {
		t.Errorf("swapped body: %s", resp.Status)
	}
	if resp := post(encodeBatch(&b), peerauth.Unsigned); resp.StatusCode != http.StatusForbidden {
		t.Errorf("unsigned apply: %s", resp.Status)
	}
	if _, err := local.Get(ctx, drive.TableObjects, "k"); !errors.Is(err, drive.ErrNotFound) {
		t.Errorf("tampered Apply went through: %v", err)
	}
	// No signature at all.
	resp, err := n.hc.Get(n.srv.URL + PathPrefix + opFormat + "?drive=3")
	if err != nil || resp.StatusCode != http.StatusForbidden {
		t.Fatalf("unsigned GET: %v %v", resp, err)
	}
	resp.Body.Close()
}

func TestBodyTooLarge(t *testing.T) {
	n, _ := newLocalNode(t)
	var b drive.Batch
	b.Put(drive.TableInline, "ab12cd34/1", make([]byte, maxBody+1))
	err := n.client(3).Apply(ctx, &b)
	if !errors.Is(err, drive.ErrInvalidArgument) || errors.Is(err, drive.ErrDriveFaulty) || !strings.Contains(err.Error(), "over") {
		t.Fatalf("oversized batch: %v, want ErrInvalidArgument", err)
	}
}

// waitNoShards waits until the local drive holds no shard file: a cut
// stream is aborted by the server when it notices, a moment later.
func waitNoShards(t *testing.T, c, local drive.Drive, ref drive.ShardRef) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for len(walk(t, local)) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("shard files left: %+v", walk(t, local))
		}
		time.Sleep(10 * time.Millisecond)
	}
	if got := walk(t, c); len(got) != 0 {
		t.Fatalf("remote walk: %+v", got)
	}
	if _, err := c.OpenShard(ctx, ref, 0); !errors.Is(err, drive.ErrNotFound) {
		t.Fatalf("OpenShard of the aborted shard: %v, want ErrNotFound", err)
	}
}

func TestAbortMidStream(t *testing.T) {
	n, local := newLocalNode(t)
	c := n.client(3)
	ref := drive.ShardRef{ID: "0123abcd-0001", Part: 1}
	w, err := c.CreateShard(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(randBytes(t, 3<<20)); err != nil {
		t.Fatal(err)
	}
	if got := walk(t, local); len(got) != 1 {
		t.Fatalf("file not created while streaming: %+v", got)
	}
	w.Abort()
	// Abort waits for the server: the file is gone at once.
	if got := walk(t, local); len(got) != 0 {
		t.Fatalf("shard left after Abort: %+v", got)
	}
	waitNoShards(t, c, local, ref)
	if _, err := w.Write([]byte("x")); err == nil {
		t.Fatal("Write after Abort succeeded")
	}
	if err := w.Close(); err == nil {
		t.Fatal("Close after Abort succeeded")
	}
	w.Abort() // twice is fine

	// Abort after a successful Close keeps the file.
	w2, err := c.CreateShard(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	w2.Write([]byte("kept"))
	if err := w2.Close(); err != nil {
		t.Fatal(err)
	}
	w2.Abort()
	if got := readShard(t, c, ref, 0); string(got) != "kept" {
		t.Fatalf("committed shard after Abort: %q", got)
	}
}

func TestCancelMidStream(t *testing.T) {
	n, local := newLocalNode(t)
	c := n.client(3)
	ref := drive.ShardRef{ID: "0123abcd-0001", Part: 1}
	cctx, cancel := context.WithCancel(ctx)
	w, err := c.CreateShard(cctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(randBytes(t, 2<<20)); err != nil {
		t.Fatal(err)
	}
	cancel()
	err = w.Close()
	if !errors.Is(err, context.Canceled) || errors.Is(err, drive.ErrDriveFaulty) {
		t.Fatalf("Close after cancel: %v, want context.Canceled and not faulty", err)
	}
	waitNoShards(t, c, local, ref)
}

func TestConnectionCutMidStream(t *testing.T) {
	n, local := newLocalNode(t)
	c := n.client(3)
	ref := drive.ShardRef{ID: "0123abcd-0001", Part: 1}
	w, err := c.CreateShard(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(randBytes(t, 2<<20)); err != nil {
		t.Fatal(err)
	}
	n.srv.CloseClientConnections()
	chunk := make([]byte, 256<<10)
	for i := 0; err == nil && i < 400; i++ {
		_, err = w.Write(chunk)
	}
	if err == nil {
		err = w.Close()
	}
	if !errors.Is(err, drive.ErrDriveFaulty) || !strings.Contains(err.Error(), n.srv.URL) {
		t.Fatalf("stream over a cut connection: %v, want ErrDriveFaulty naming the node", err)
	}
	w.Abort()
	waitNoShards(t, c, local, ref)
}

func TestServerFailsMidStream(t *testing.T) {
	local, _ := openLocal(t, true)
	faulty := drive.NewFaulty(local)
	n := newNode(t, map[int]drive.Drive{3: faulty})
	c := n.client(3)
	ref := drive.ShardRef{ID: "0123abcd-0001", Part: 1}

	// The drive fails its third Write (the server writes 1 MiB at a
	// time): the client, still sending, gets the error from a Write.
	remove := faulty.Inject(drive.Fault{Ops: []drive.Op{drive.OpWrite}, After: 2, Err: drive.ErrInjectedEIO})
	w, err := c.CreateShard(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		chunk := make([]byte, 64<<10)
		for written := 0; written < 1<<30; written += len(chunk) {
			if _, err := w.Write(chunk); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	select {
	case err = <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("Write still blocked after the server failed")
	}
	if !errors.Is(err, drive.ErrDriveFaulty) || !strings.Contains(err.Error(), "injected") {
		t.Fatalf("Write after the server failed: %v, want the injected EIO", err)
	}
	if cerr := w.Close(); cerr == nil {
		t.Fatal("Close after a failed Write succeeded")
	}
	w.Abort()
	remove()
	waitNoShards(t, c, local, ref)

	// A failing sync comes back from Close, and leaves no file.
	remove = faulty.Inject(drive.Fault{Ops: []drive.Op{drive.OpSync}, Err: drive.ErrInjectedENOSPC})
	w, err = c.CreateShard(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte("data"))
	if err := w.Close(); !errors.Is(err, drive.ErrDriveFull) || errors.Is(err, drive.ErrDriveFaulty) {
		t.Fatalf("Close with a failing sync: %v, want ErrDriveFull", err)
	}
	remove()
	waitNoShards(t, c, local, ref)

	// A read error after the stream started comes in the trailer.
	writeShard(t, c, ref, randBytes(t, 4<<20))
	remove = faulty.Inject(drive.Fault{Ops: []drive.Op{drive.OpRead}, After: 1, Err: drive.ErrInjectedEIO})
	defer remove()
	r, err := c.OpenShard(ctx, ref, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	got, err := io.ReadAll(r)
	if !errors.Is(err, drive.ErrDriveFaulty) || !strings.Contains(err.Error(), "injected") || len(got) != copyBufSize {
		t.Fatalf("read with a failing drive: %d bytes, %v", len(got), err)
	}
}

func TestServerDown(t *testing.T) {
	local, _ := openLocal(t, true)
	handler := http.NewServeMux()
	handler.Handle(PathPrefix, NewServer(map[int]drive.Drive{3: local}, testKey, nil))
	srv := httptest.NewServer(handler)
	addr := srv.Listener.Addr().String()
	hc := NewHTTPClient(nil, nil)
	defer hc.CloseIdleConnections()
	c := NewClient(srv.URL, 3, srv.URL+"/d3", testKey, hc)
	h := drive.NewHealth(c, drive.HealthConfig{OpTimeout: 3 * time.Second, ProbeInterval: 20 * time.Millisecond})
	defer h.Close()
	if _, err := h.ReadFormat(ctx); err != nil {
		t.Fatal(err)
	}
	srv.Close()

	start := time.Now()
	_, err := c.Get(ctx, drive.TableObjects, "k")
	if !errors.Is(err, drive.ErrDriveFaulty) || !strings.Contains(err.Error(), srv.URL) {
		t.Fatalf("Get from a stopped node: %v, want ErrDriveFaulty naming the node", err)
	}
	if _, err := c.CreateShard(ctx, drive.ShardRef{ID: "0123abcd-0001", Part: 1}); !errors.Is(err, drive.ErrDriveFaulty) {
		t.Fatalf("CreateShard on a stopped node: %v", err)
	}
	if el := time.Since(start); el > 2*time.Second {
		t.Fatalf("failing took %v", el)
	}

	if _, err := h.Get(ctx, drive.TableObjects, "k"); !errors.Is(err, drive.ErrDriveFaulty) {
		t.Fatalf("Get through Health: %v", err)
	}
	if h.Online() {
		t.Fatal("Health still online with its node down")
	}
	if _, err := h.Scan(ctx, drive.TableObjects, drive.ScanQuery{}); !errors.Is(err, drive.ErrDriveFaulty) || !strings.Contains(err.Error(), "offline") {
		t.Fatalf("Scan while offline: %v", err)
	}

	// The node comes back on the same address: the prober brings the
	// drive online.
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("cannot listen on %s again: %v", addr, err)
	}
	srv2 := httptest.NewUnstartedServer(handler)
	srv2.Listener.Close()
	srv2.Listener = l
	srv2.Start()
	defer srv2.Close()
	deadline := time.Now().Add(5 * time.Second)
	for !h.Online() {
		if time.Now().After(deadline) {
			t.Fatalf("drive not back online: %+v", h.State())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := h.Get(ctx, drive.TableObjects, "k"); !errors.Is(err, drive.ErrNotFound) {
		t.Fatalf("Get after the node came back: %v", err)
	}
}

// countingDrive counts the shard readers open on the server side.
type countingDrive struct {
	drive.Drive
	open atomic.Int64
}

type countedReader struct {
	io.ReadCloser
	d    *countingDrive
	once sync.Once
}

func (r *countedReader) Close() error {
	r.once.Do(func() { r.d.open.Add(-1) })
	return r.ReadCloser.Close()
}

func (d *countingDrive) OpenShard(ctx context.Context, ref drive.ShardRef, off int64) (io.ReadCloser, error) {
	r, err := d.Drive.OpenShard(ctx, ref, off)
	if err != nil {
		return nil, err
	}
	d.open.Add(1)
	return &countedReader{ReadCloser: r, d: d}, nil
}

func TestReaderStopsMidStream(t *testing.T) {
	local, _ := openLocal(t, true)
	cd := &countingDrive{Drive: local}
	n := newNode(t, map[int]drive.Drive{3: cd})
	c := n.client(3)
	ref := drive.ShardRef{ID: "0123abcd-0001", Part: 1}
	data := randBytes(t, 32<<20)
	writeShard(t, c, ref, data)

	r, err := c.OpenShard(ctx, ref, 0)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4096)
	if _, err := io.ReadFull(r, buf); err != nil || !bytes.Equal(buf, data[:4096]) {
		t.Fatalf("first bytes: %v", err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Read(buf); !errors.Is(err, fs.ErrClosed) {
		t.Fatalf("Read after Close: %v", err)
	}
	// The server notices the client left and closes its file.
	deadline := time.Now().Add(5 * time.Second)
	for cd.open.Load() != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d server-side readers still open", cd.open.Load())
		}
		time.Sleep(10 * time.Millisecond)
	}

	// A connection cut mid-stream is ErrDriveFaulty from Read, not EOF.
	r, err = c.OpenShard(ctx, ref, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := io.ReadFull(r, buf); err != nil {
		t.Fatal(err)
	}
	n.srv.CloseClientConnections()
	got, err := io.ReadAll(r)
	if !errors.Is(err, drive.ErrDriveFaulty) || len(got)+len(buf) >= len(data) {
		t.Fatalf("read over a cut connection: %d bytes, %v", len(got), err)
	}
}

func TestWalkStops(t *testing.T) {
	n, _ := newLocalNode(t)
	c := n.client(3)
	for i := range 5 {
		writeShard(t, c, drive.ShardRef{ID: fmt.Sprintf("%02xabcdef-01", i*40), Part: 1}, []byte("x"))
	}
	errStop := errors.New("stop")
	calls := 0
	err := c.WalkShards(ctx, func(drive.ShardFile) error { calls++; return errStop })
	if err != errStop || calls != 1 {
		t.Fatalf("walk stopped by fn: %v after %d calls", err, calls)
	}
	cctx, cancel := context.WithCancel(ctx)
	err = c.WalkShards(cctx, func(drive.ShardFile) error { cancel(); return nil })
	if err != nil && (!errors.Is(err, context.Canceled) || errors.Is(err, drive.ErrDriveFaulty)) {
		t.Fatalf("walk with its context cancelled: %v", err)
	}
	if got := walk(t, c); len(got) != 5 {
		t.Fatalf("walk: %d files", len(got))
	}
}

func TestClientClose(t *testing.T) {
	n, _ := newLocalNode(t)
	c := n.client(3)
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	_, err := c.Get(ctx, drive.TableObjects, "k")
	if !errors.Is(err, drive.ErrDriveFaulty) || !strings.Contains(err.Error(), "closed") {
		t.Fatalf("Get after Close: %v", err)
	}
	if _, err := c.CreateShard(ctx, drive.ShardRef{ID: "0123abcd-0001", Part: 1}); !errors.Is(err, drive.ErrDriveFaulty) {
		t.Fatalf("CreateShard after Close: %v", err)
	}
	// The remote drive itself stays open.
	if _, err := n.client(3).ReadFormat(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestConcurrentStreams(t *testing.T) {
	n, _ := newLocalNode(t)
	c := n.client(3)
	const streams = 16
	data := randBytes(t, 4<<20)
	var wg sync.WaitGroup
	errs := make(chan error, streams)
	for i := range streams {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ref := drive.ShardRef{ID: fmt.Sprintf("%02xabcdef-%02d", i*16, i), Part: 1}
			w, err := c.CreateShard(ctx, ref)
			if err != nil {
				errs <- err
				return
			}
			// Every stream writes a little at a time, so all sixteen
			// are open together.
			for off := 0; off < len(data); off += 64 << 10 {
				if _, err := w.Write(data[off : off+64<<10]); err != nil {
					errs <- err
					return
				}
			}
			if err := w.Close(); err != nil {
				errs <- err
				return
			}
			r, err := c.OpenShard(ctx, ref, int64(i))
			if err != nil {
				errs <- err
				return
			}
			defer r.Close()
			got, err := io.ReadAll(r)
			if err != nil {
				errs <- err
				return
			}
			if !bytes.Equal(got, data[i:]) {
				errs <- fmt.Errorf("stream %d read back other data", i)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if got := walk(t, c); len(got) != streams {
		t.Fatalf("%d shard files, want %d", len(got), streams)
	}
}

// TestShardStreamChecks sends shard streams by hand: a body is committed
// only when it ends with a marker matching its length, and a signed
// stream only when it matches its hash.
func TestShardStreamChecks(t *testing.T) {
	n, local := newLocalNode(t)
	data := []byte("shard data")
	post := func(id, hash string, trailer http.Header) int {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, n.srv.URL+PathPrefix+opShard+"?drive=3&id="+id+"&part=1", bytes.NewReader(data))
		req.ContentLength = -1 // chunked, so trailers go out
		req.Trailer = trailer
		testKey.Sign(req, hash)
		resp, err := n.hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	size := fmt.Sprint(len(data))
	for _, tc := range []struct {
		name, hash string
		trailer    http.Header
		status     int
	}{
		{"no end marker", peerauth.Unsigned, nil, http.StatusBadRequest},
		{"short count", peerauth.Unsigned, http.Header{trailerShardEnd: {"99"}}, http.StatusBadRequest},
		{"wrong hash", peerauth.BodyHash([]byte("other")), http.Header{trailerShardEnd: {size}}, http.StatusForbidden},
		{"abort", peerauth.Unsigned, http.Header{trailerShardEnd: {shardEndAbort}}, http.StatusOK},
	} {
		if got := post("0123abcd-0001", tc.hash, tc.trailer); got != tc.status {
			t.Errorf("%s: status %d, want %d", tc.name, got, tc.status)
		}
		if got := walk(t, local); len(got) != 0 {
			t.Fatalf("%s: shard committed: %+v", tc.name, got)
		}
	}
	if got := post("0123abcd-0002", peerauth.BodyHash(data), http.Header{trailerShardEnd: {size}}); got != http.StatusOK {
		t.Fatalf("signed stream: status %d", got)
	}
	if got := readShard(t, local, drive.ShardRef{ID: "0123abcd-0002", Part: 1}, 0); !bytes.Equal(got, data) {
		t.Fatalf("signed stream stored %q", got)
	}
}

// TestCreateShardPlainTransport uses a transport that does not wait for
// "100 Continue" itself (ExpectContinueTimeout 0): CreateShard still
// waits for it and still reports a refusal.
func TestCreateShardPlainTransport(t *testing.T) {
	n, _ := newLocalNode(t)
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	c := NewClient(n.srv.URL, 3, "plain", testKey, &http.Client{Transport: tr})
	ref := drive.ShardRef{ID: "0123abcd-0001", Part: 1}
	data := randBytes(t, 1<<20)
	writeShard(t, c, ref, data)
	if got := readShard(t, c, ref, 0); !bytes.Equal(got, data) {
		t.Fatal("read back other data")
	}
	if _, err := c.CreateShard(ctx, ref); !errors.Is(err, drive.ErrInvalidArgument) {
		t.Fatalf("existing shard: %v", err)
	}
}

// slowWalkDrive finds one file, then takes its time over the next.
type slowWalkDrive struct{ drive.Drive }

func (d slowWalkDrive) WalkShards(ctx context.Context, fn func(drive.ShardFile) error) error {
	for i := range 2 {
		if i > 0 {
			time.Sleep(time.Second)
		}
		if err := fn(drive.ShardFile{ShardRef: drive.ShardRef{ID: fmt.Sprintf("0123abcd-%04d", i), Part: 1}}); err != nil {
			return err
		}
	}
	return nil
}

// TestWalkStreamsAsFound: a file found is delivered while the drive is
// still looking for the next (drive.Health bounds the time between two).
func TestWalkStreamsAsFound(t *testing.T) {
	local, _ := openLocal(t, true)
	n := newNode(t, map[int]drive.Drive{0: slowWalkDrive{local}})
	start := time.Now()
	var at []time.Duration
	err := n.client(0).WalkShards(ctx, func(drive.ShardFile) error { at = append(at, time.Since(start)); return nil })
	if err != nil || len(at) != 2 {
		t.Fatalf("walk: %v, %d files", err, len(at))
	}
	if at[0] > 700*time.Millisecond {
		t.Fatalf("first file arrived after %v, with the walk's second second", at[0])
	}
}

// TestShardSentFromFile: a shard on a local drive (also behind
// drive.Health, as a node serves it) is answered with a Content-Length
// (sent from the file by the kernel), not a chunked stream, from any
// offset; a drive with no local file behind its reader (drive.Faulty
// here) still streams chunked, with its error trailer.
func TestShardSentFromFile(t *testing.T) {
	local, _ := openLocal(t, true)
	health := drive.NewHealth(local, drive.HealthConfig{OpTimeout: 5 * time.Second})
	faulty := drive.NewFaulty(local)
	n := newNode(t, map[int]drive.Drive{3: health, 4: faulty})
	data := randBytes(t, 3<<20+333)
	ref := drive.ShardRef{ID: "0123abcd-0001", Part: 1}
	writeShard(t, n.client(3), ref, data)
	for _, off := range []int64{0, 1, 4096, int64(len(data)) - 1, int64(len(data)), int64(len(data)) + 5} {
		r, err := n.client(3).OpenShard(ctx, ref, off)
		if err != nil {
			t.Fatal(err)
		}
		want := data[min(off, int64(len(data))):]
		if cl := r.(*shardReader).resp.ContentLength; cl != int64(len(want)) {
			t.Errorf("offset %d: Content-Length %d, want %d (sent from the file)", off, cl, len(want))
		}
		got, err := io.ReadAll(r)
		r.Close()
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("offset %d: %d bytes, %v; want %d", off, len(got), err, len(want))
		}
	}
	r, err := n.client(4).OpenShard(ctx, ref, 0)
	if err != nil {
		t.Fatal(err)
	}
	if cl := r.(*shardReader).resp.ContentLength; cl != -1 {
		t.Errorf("faulty-wrapped drive: Content-Length %d, want a chunked stream", cl)
	}
	got, err := io.ReadAll(r)
	r.Close()
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("chunked read: %d bytes, %v", len(got), err)
	}
}
