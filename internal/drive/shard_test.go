package drive

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

const tmpfsMagic = 0x01021994

func isTmpfs(t testing.TB, dir string) bool {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	return st.Type == tmpfsMagic
}

var shardSizes = []int{0, 1, 100, 4095, 4096, 4097, 8192, directBufSize - 1, directBufSize, directBufSize + 1, 1 << 20, 1<<20 + 123}

// exerciseShards writes, reads, walks and deletes shard files of every
// size in shardSizes on d, and reports whether they went O_DIRECT.
func exerciseShards(t *testing.T, d *Local) (direct bool) {
	t.Helper()
	ctx := context.Background()
	r := rand.New(rand.NewSource(1))
	want := map[ShardRef][]byte{}
	for i, size := range shardSizes {
		ref := ShardRef{ID: fmt.Sprintf("%02x%06x-test", r.Intn(256), i), Part: i % 3}
		data := make([]byte, size)
		r.Read(data)
		w, err := d.CreateShard(ctx, ref)
		if err != nil {
			t.Fatal(err)
		}
		direct = w.(*shardWriter).direct
		// Writes of mixed sizes, some as WriteBuffers (a checksum and a
		// chunk), some plain.
		for rest := data; len(rest) > 0; {
			n := min(len(rest), 1+r.Intn(100<<10))
			if r.Intn(2) == 0 && n > 32 {
				if err := WriteBuffers(w, [][]byte{rest[:32], nil, rest[32:n]}); err != nil {
					t.Fatal(err)
				}
			} else if _, err := w.Write(rest[:n]); err != nil {
				t.Fatal(err)
			}
			rest = rest[n:]
		}
		if err := w.Close(); err != nil {
			t.Fatalf("size %d: %v", size, err)
		}
		want[ref] = data
		p := filepath.Join(d.dataDir, ref.ID[:2], ref.ID+"."+itoa(ref.Part))
		if fi, err := os.Stat(p); err != nil || fi.Size() != int64(size) {
			t.Fatalf("size %d: file %v %v", size, fi, err)
		}
		if _, err := d.CreateShard(ctx, ref); err == nil || !errors.Is(err, ErrInvalidArgument) {
			t.Fatalf("second create of %v: %v", ref, err)
		}
	}
	for ref, data := range want {
		for _, off := range []int{0, 1, 4095, 4096, len(data) / 2, len(data) - 1, len(data), len(data) + 10} {
			if off < 0 {
				continue
			}
			rc, err := d.OpenShard(ctx, ref, int64(off))
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(rc)
			rc.Close()
			exp := []byte{}
			if off < len(data) {
				exp = data[off:]
			}
			if err != nil || !bytes.Equal(got, exp) {
				t.Fatalf("%v at %d: read %d bytes (%v), want %d", ref, off, len(got), err, len(exp))
			}
		}
	}
	walk := func() map[ShardRef]int64 {
		t.Helper()
		found := map[ShardRef]int64{}
		err := d.WalkShards(ctx, func(sf ShardFile) error {
			if sf.ModTime.IsZero() {
				t.Errorf("%v: no mtime", sf.ShardRef)
			}
			found[sf.ShardRef] = sf.Size
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return found
	}
	found := walk()
	if len(found) != len(want) {
		t.Fatalf("walk found %d files, want %d", len(found), len(want))
	}
	for ref, data := range want {
		if found[ref] != int64(len(data)) {
			t.Fatalf("walk: %v size %d, want %d", ref, found[ref], len(data))
		}
	}
	var del []ShardRef
	for ref := range want {
		if len(del) < len(want)/2 {
			del = append(del, ref)
		}
	}
	del = append(del, ShardRef{ID: "ffff0000-missing", Part: 9})
	if err := d.DeleteShards(ctx, del); err != nil {
		t.Fatal(err)
	}
	found = walk()
	if len(found) != len(want)-(len(del)-1) {
		t.Fatalf("after delete: %d files, want %d", len(found), len(want)-len(del)+1)
	}
	for _, ref := range del[:len(del)-1] {
		if _, ok := found[ref]; ok {
			t.Fatalf("%v still walked after delete", ref)
		}
		if _, err := d.OpenShard(ctx, ref, 0); !errors.Is(err, ErrNotFound) {
			t.Fatalf("deleted %v: %v", ref, err)
		}
	}
	return direct
}

// Shard files on a disk go O_DIRECT.
func TestShardFilesDirect(t *testing.T) {
	d := newLocal(t)
	direct := exerciseShards(t, d)
	if isTmpfs(t, d.String()) {
		t.Logf("%s is tmpfs: direct=%v", d.String(), direct)
	} else if !direct {
		t.Errorf("shard files on %s were not written O_DIRECT", d.String())
	}
}

// Shard files on tmpfs: O_DIRECT where the kernel takes it (tmpfs does
// since Linux 6.6), else buffered.
func TestShardFilesTmpfs(t *testing.T) {
	if fi, err := os.Stat("/dev/shm"); err != nil || !fi.IsDir() {
		t.Skip("no /dev/shm on this machine")
	}
	dir, err := os.MkdirTemp("/dev/shm", "shardstore-test-")
	if err != nil {
		t.Skipf("/dev/shm not writable: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	d := openLocal(t, dir, LocalOptions{})
	if err := d.WriteFormat(context.Background(), testFormat); err != nil {
		t.Fatal(err)
	}
	t.Logf("tmpfs direct=%v", exerciseShards(t, d))
}

// A filesystem that refuses O_DIRECT: Linux creates the file, then
// fails the open with EINVAL. The writer falls back to buffered and the
// drive stops trying.
func TestShardFilesDirectRefused(t *testing.T) {
	defer func(o func(string, int, uint32) (int, error)) { sysOpen = o }(sysOpen)
	refused := 0
	sysOpen = func(path string, mode int, perm uint32) (int, error) {
		if mode&unix.O_DIRECT != 0 {
			refused++
			fd, err := unix.Open(path, mode&^unix.O_DIRECT, perm)
			if err == nil {
				unix.Close(fd)
				return -1, unix.EINVAL
			}
			return -1, err
		}
		return unix.Open(path, mode, perm)
	}
	d := newLocal(t)
	if direct := exerciseShards(t, d); direct {
		t.Fatal("writer claims O_DIRECT after EINVAL")
	}
	if refused != 1 {
		t.Fatalf("O_DIRECT tried %d times, want once per drive", refused)
	}
	// DisableDirectIO never tries.
	refused = 0
	d2 := openLocal(t, t.TempDir(), LocalOptions{DisableDirectIO: true, NoSync: true})
	if err := d2.WriteFormat(context.Background(), testFormat); err != nil {
		t.Fatal(err)
	}
	exerciseShards(t, d2)
	if refused != 0 {
		t.Fatal("DisableDirectIO tried O_DIRECT")
	}
}

// A direct write the filesystem refuses mid-file turns the descriptor
// buffered; the data still comes out right.
func TestShardWriteDirectRefused(t *testing.T) {
	defer func(o func(int, []byte) (int, error)) { sysWrite = o }(sysWrite)
	d := newLocal(t)
	if isTmpfs(t, d.String()) {
		t.Skip("needs O_DIRECT")
	}
	sysWrite = func(fd int, p []byte) (int, error) {
		fl, _ := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
		if fl&unix.O_DIRECT != 0 {
			return 0, unix.EINVAL
		}
		return unix.Write(fd, p)
	}
	exerciseShards(t, d)
	if !d.noDirect.Load() {
		t.Fatal("drive still uses O_DIRECT")
	}
}

// An aligned buffer written while nothing is staged goes to the file
// from where it is (no copy into the staging buffer); anything else is
// staged; the file holds exactly the bytes written either way.
func TestShardWriteAlignedWithoutCopy(t *testing.T) {
	defer func(o func(int, []byte) (int, error)) { sysWrite = o }(sysWrite)
	d := newLocal(t)
	var writes [][]byte // what each write(2) was given
	sysWrite = func(fd int, p []byte) (int, error) {
		writes = append(writes, p)
		return unix.Write(fd, p)
	}
	ref := ShardRef{ID: "ab000001-aligned", Part: 0}
	w, err := d.CreateShard(context.Background(), ref)
	if err != nil {
		t.Fatal(err)
	}
	if !w.(*shardWriter).direct {
		t.Skipf("%s does not take O_DIRECT: every write is buffered and nothing is staged", d.String())
	}
	r := rand.New(rand.NewSource(7))
	a, b := *AlignedBuffer(3*directAlign + 100), *AlignedBuffer(2 * directAlign)
	unaligned := make([]byte, 3*directAlign+1)[1:]
	for _, p := range [][]byte{a, b, unaligned} {
		r.Read(p)
	}
	var want []byte
	for _, p := range [][]byte{
		a,         // 3 pages from a, its 100-byte tail staged
		b,         // something staged: copied behind it
		unaligned, // copied
	} {
		if _, err := w.Write(p); err != nil {
			t.Fatal(err)
		}
		want = append(want, p...)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if len(writes) == 0 || &writes[0][0] != &a[0] || len(writes[0]) != 3*directAlign {
		t.Fatalf("first write(2) was not a's 3 pages in place: %d writes, first of %d bytes", len(writes), len(writes[0]))
	}
	for _, p := range writes[1:] {
		if &p[0] == &b[0] || &p[0] == &unaligned[0] {
			t.Fatal("a buffer written while bytes were staged went to the file in place, before them")
		}
	}
	rc, err := d.OpenShard(context.Background(), ref, 0)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(rc)
	rc.Close()
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("read back %d bytes (%v), want the %d written", len(got), err, len(want))
	}
}

// Local's own limits on shard refs; the ids and offsets every drive
// refuses are the conformance suite's (TestLocalConformance).
func TestShardInvalidIDs(t *testing.T) {
	ctx := context.Background()
	d := newLocal(t)
	tooHigh := ShardRef{ID: "abcdef12", Part: maxPart + 1}
	if _, err := d.CreateShard(ctx, tooHigh); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("CreateShard of part %d: %v", tooHigh.Part, err)
	}
	if _, err := d.OpenShard(ctx, tooHigh, 0); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("OpenShard of part %d: %v", tooHigh.Part, err)
	}
	if err := d.DeleteShards(ctx, []ShardRef{testRef, tooHigh}); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("DeleteShards of part %d: %v", tooHigh.Part, err)
	}
	for _, id := range []string{"abcdef12", "0a1b2c3d-4e5f-6789-abcd-ef0123456789", strings.Repeat("f", 64), "00000000000000000000000000000000"} {
		if !validID(id) {
			t.Errorf("valid id %q refused", id)
		}
	}
}

// The walk skips names that are not shard files.
func TestWalkSkipsStrays(t *testing.T) {
	ctx := context.Background()
	d := newLocal(t)
	w, err := d.CreateShard(ctx, ShardRef{ID: "abcdef12", Part: 7})
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte("ok"))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	ab := filepath.Join(d.dataDir, "ab")
	for _, name := range []string{"garbage", "abcdef12", "abcdef12.x", "abcdef12.01", "abcdef12.1.tmp", "abcdef12.-1", ".abcdef12.1", "ABCDEF12.1"} {
		if err := os.WriteFile(filepath.Join(ab, name), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(d.dataDir, "cd", "abcdef99.1"), []byte("wrong dir"), 0o644)
	os.Mkdir(filepath.Join(ab, "abcdef13.1"), 0o755)
	os.Symlink("/etc/passwd", filepath.Join(ab, "abcdef14.1"))
	var got []string
	if err := d.WalkShards(ctx, func(sf ShardFile) error {
		got = append(got, fmt.Sprintf("%s.%d:%d", sf.ID, sf.Part, sf.Size))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	sort.Strings(got)
	if strings.Join(got, ",") != "abcdef12.7:2" {
		t.Fatalf("walk found %v", got)
	}
	stop := errors.New("stop")
	if err := d.WalkShards(ctx, func(ShardFile) error { return stop }); err != stop {
		t.Fatalf("callback error: %v", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := d.WalkShards(cctx, func(ShardFile) error { return nil }); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled walk: %v", err)
	}
}

// A pulled drive (its directory gone) is faulty, not empty.
func TestShardsOnVanishedDrive(t *testing.T) {
	ctx := context.Background()
	d := newLocal(t)
	if err := os.RemoveAll(d.String()); err != nil {
		t.Fatal(err)
	}
	if _, err := d.OpenShard(ctx, testRef, 0); !errors.Is(err, ErrDriveFaulty) {
		t.Errorf("open on a vanished drive: %v", err)
	}
	if _, err := d.CreateShard(ctx, testRef); !errors.Is(err, ErrDriveFaulty) {
		t.Errorf("create on a vanished drive: %v", err)
	}
	if err := d.DeleteShards(ctx, []ShardRef{testRef}); !errors.Is(err, ErrDriveFaulty) {
		t.Errorf("delete on a vanished drive: %v", err)
	}
	if err := d.WalkShards(ctx, func(ShardFile) error { return nil }); !errors.Is(err, ErrDriveFaulty) {
		t.Errorf("walk on a vanished drive: %v", err)
	}
	if _, err := d.ReadFormat(ctx); !errors.Is(err, ErrDriveFaulty) {
		t.Errorf("format on a vanished drive: %v", err)
	}
}

// A fan-out directory removed by hand is made again on the next create.
func TestShardFanoutRecreated(t *testing.T) {
	ctx := context.Background()
	d := newLocal(t)
	if err := os.Remove(filepath.Join(d.dataDir, "0a")); err != nil {
		t.Fatal(err)
	}
	if err := d.WalkShards(ctx, func(ShardFile) error { return nil }); err != nil {
		t.Fatalf("walk with a fan-out directory missing: %v", err)
	}
	w, err := d.CreateShard(ctx, testRef)
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte("x"))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := d.OpenShard(ctx, testRef, 0); err != nil {
		t.Fatal(err)
	}
}

// TestLateAbortSparesANewFile: a writer that gives up late (a drive left
// behind) after its file was removed and another made under the same
// name (the heal rewrote the shard) removes nothing of the new one.
func TestLateAbortSparesANewFile(t *testing.T) {
	ctx := context.Background()
	d := newLocal(t)
	late, err := d.CreateShard(ctx, testRef)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := late.Write([]byte("the late writer's bytes")); err != nil {
		t.Fatal(err)
	}
	if err := d.DeleteShards(ctx, []ShardRef{testRef}); err != nil {
		t.Fatal(err)
	}
	healed, err := d.CreateShard(ctx, testRef)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := healed.Write([]byte("healed")); err != nil {
		t.Fatal(err)
	}
	if err := healed.Close(); err != nil {
		t.Fatal(err)
	}
	late.Abort()
	rd, err := d.OpenShard(ctx, testRef, 0)
	if err != nil {
		t.Fatalf("the late Abort removed the healed shard: %v", err)
	}
	got, _ := io.ReadAll(rd)
	rd.Close()
	if string(got) != "healed" {
		t.Fatalf("shard holds %q", got)
	}
}
