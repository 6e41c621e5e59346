package drive

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

var testFormat = Format{DeploymentID: "dep", SetCount: 1, SetSize: 4, SetIndex: 0, DriveIndex: 2, DriveID: "drive-2", Parity: 2}

// openLocal opens dir and closes it when the test ends.
func openLocal(t testing.TB, dir string, opts LocalOptions) *Local {
	t.Helper()
	d, err := OpenLocal(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// newLocal returns a formatted drive on a fresh directory.
func newLocal(t testing.TB) *Local {
	t.Helper()
	return formattedLocal(t, t.TempDir())
}

// formattedLocal opens and formats the drive at dir (closed when the test
// ends; closing it earlier is fine).
func formattedLocal(t testing.TB, dir string) *Local {
	t.Helper()
	d := openLocal(t, dir, LocalOptions{})
	if err := d.WriteFormat(context.Background(), testFormat); err != nil {
		t.Fatal(err)
	}
	return d
}

func writeJSON(t *testing.T, path, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestFormatRoundTrip(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "missing", "d1") // created by OpenLocal
	d, err := OpenLocal(dir, LocalOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.ReadFormat(ctx); !errors.Is(err, ErrUnformatted) {
		t.Fatalf("blank drive: %v, want ErrUnformatted", err)
	}
	// (What a blank drive's index and shard calls answer is checked by
	// the conformance suite: TestLocalConformance.)

	// lost+found does not make a drive non-blank.
	if err := os.Mkdir(filepath.Join(dir, "lost+found"), 0o755); err != nil {
		t.Fatal(err)
	}
	f := testFormat
	f.Version = 7 // WriteFormat sets it
	if err := d.WriteFormat(ctx, f); err != nil {
		t.Fatal(err)
	}
	want := testFormat
	want.Version = LayoutVersion
	got, err := d.ReadFormat(ctx)
	if err != nil || got != want {
		t.Fatalf("ReadFormat: %+v %v, want %+v", got, err, want)
	}
	ents, err := os.ReadDir(filepath.Join(dir, sysDirName, dataDirName))
	if err != nil || len(ents) != 256 || ents[0].Name() != "00" || ents[255].Name() != "ff" {
		t.Fatalf("fan-out directories: %d entries, %v", len(ents), err)
	}
	// The index works at once.
	var b Batch
	b.Put(TableBuckets, "bkt", []byte("rec"))
	if err := d.Apply(ctx, &b); err != nil {
		t.Fatal(err)
	}
	// Rewriting the format of a formatted drive keeps its index.
	f2 := want
	f2.DriveIndex = 3
	if err := d.WriteFormat(ctx, f2); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	d = openLocal(t, dir, LocalOptions{})
	if got, err := d.ReadFormat(ctx); err != nil || got != f2 {
		t.Fatalf("after reopen: %+v %v, want %+v", got, err, f2)
	}
	if v, err := d.Get(ctx, TableBuckets, "bkt"); err != nil || string(v) != "rec" {
		t.Fatalf("index after reopen: %q %v", v, err)
	}
	raw, _ := os.ReadFile(filepath.Join(dir, sysDirName, formatFile))
	if !strings.Contains(string(raw), `"version": 2`) {
		t.Errorf("format.json does not record version 2:\n%s", raw)
	}
	if _, err := os.Stat(filepath.Join(dir, sysDirName, formatFile+".tmp")); !os.IsNotExist(err) {
		t.Errorf("tmp format file left behind: %v", err)
	}
}

func TestOldLayoutRefused(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name, format string
	}{
		{"version1", `{"version":1,"deploymentID":"old","setCount":1,"setSize":4}`},
		{"noVersion", `{"deploymentID":"old","setCount":1,"setSize":4}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			writeJSON(t, filepath.Join(dir, sysDirName, formatFile), tc.format)
			if err := os.MkdirAll(filepath.Join(dir, "photos", "2024", "a.jpg"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(filepath.Join(dir, sysDirName, "buckets"), 0o755); err != nil {
				t.Fatal(err)
			}
			d := openLocal(t, dir, LocalOptions{})
			_, err := d.ReadFormat(ctx)
			if !errors.Is(err, ErrOldLayout) {
				t.Fatalf("ReadFormat: %v, want ErrOldLayout", err)
			}
			for _, want := range []string{"layout v1", "one directory per object key", "aws s3 sync", "new deployment on empty drives", dir} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("message %q lacks %q", err, want)
				}
			}
			if err := d.WriteFormat(ctx, testFormat); !errors.Is(err, ErrOldLayout) {
				t.Errorf("WriteFormat over layout v1: %v", err)
			}
			if _, err := d.Get(ctx, TableObjects, "photos/x"); !errors.Is(err, ErrOldLayout) {
				t.Errorf("Get on layout v1: %v", err)
			}
			// Nothing of the old drive was touched.
			if _, err := os.Stat(filepath.Join(dir, "photos", "2024", "a.jpg")); err != nil {
				t.Error(err)
			}
			if _, err := os.Stat(filepath.Join(dir, sysDirName, indexDirName)); !os.IsNotExist(err) {
				t.Errorf("an index was created on a layout v1 drive: %v", err)
			}
		})
	}
}

func TestFormatErrors(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, sysDirName, formatFile)
	writeJSON(t, path, `{"version":3,"deploymentID":"future"}`)
	d := openLocal(t, dir, LocalOptions{})
	if _, err := d.ReadFormat(ctx); !errors.Is(err, ErrNewerLayout) || !strings.Contains(err.Error(), "v3") {
		t.Errorf("newer layout: %v", err)
	}
	writeJSON(t, path, `{"version":2,"deploymentID":`)
	if _, err := d.ReadFormat(ctx); !errors.Is(err, ErrFileCorrupt) {
		t.Errorf("truncated format: %v", err)
	}
	// A damaged record is repaired by writing the format again.
	if err := d.WriteFormat(ctx, testFormat); err != nil {
		t.Fatalf("rewriting a corrupt format: %v", err)
	}
	if _, err := d.ReadFormat(ctx); err != nil {
		t.Fatal(err)
	}
}

// A drive whose format record vanished but whose index still holds
// records is not formatted over silently.
func TestFormatRefusesLeftoverIndex(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	d := formattedLocal(t, dir)
	var b Batch
	b.Put(TableObjects, "bkt/key", []byte("v"))
	if err := d.Apply(ctx, &b); err != nil {
		t.Fatal(err)
	}
	d.Close()
	if err := os.Remove(filepath.Join(dir, sysDirName, formatFile)); err != nil {
		t.Fatal(err)
	}
	d = openLocal(t, dir, LocalOptions{})
	if err := d.WriteFormat(ctx, testFormat); !errors.Is(err, ErrNotBlank) || !strings.Contains(err.Error(), "bkt/key") {
		t.Fatalf("format over a leftover index: %v", err)
	}
}

func TestLockSameProcess(t *testing.T) {
	dir := t.TempDir()
	d, err := OpenLocal(dir, LocalOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = OpenLocal(dir, LocalOptions{})
	if !errors.Is(err, ErrLocked) {
		t.Fatalf("second open: %v, want ErrLocked", err)
	}
	for _, want := range []string{dir, "pid " + strconv.Itoa(os.Getpid()), "stop it first"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message %q lacks %q", err, want)
		}
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	d2, err := OpenLocal(dir, LocalOptions{})
	if err != nil {
		t.Fatalf("open after Close: %v", err)
	}
	d2.Close()
}

// TestLockHelperProcess holds a drive for TestLockOtherProcess.
func TestLockHelperProcess(t *testing.T) {
	dir := os.Getenv("SHARDSTORE_LOCK_HELPER_DIR")
	if dir == "" {
		t.Skip("helper process only")
	}
	d, err := OpenLocal(dir, LocalOptions{})
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	fmt.Println("locked")
	bufio.NewReader(os.Stdin).ReadString('\n') // until the parent lets go
	d.Close()
	os.Exit(0)
}

func TestLockOtherProcess(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestLockHelperProcess$")
	cmd.Env = append(os.Environ(), "SHARDSTORE_LOCK_HELPER_DIR="+dir)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer stdin.Close()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || strings.TrimSpace(line) != "locked" {
		t.Fatalf("helper: %q %v", line, err)
	}
	_, err = OpenLocal(dir, LocalOptions{})
	if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), fmt.Sprintf("(pid %d)", cmd.Process.Pid)) {
		t.Fatalf("open of a drive held by pid %d: %v", cmd.Process.Pid, err)
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("helper: %v", err)
	}
	d, err := OpenLocal(dir, LocalOptions{})
	if err != nil {
		t.Fatalf("open after the holder exited: %v", err)
	}
	d.Close()
}

// A drive swapped under the running process: the old directory's index
// and lock are let go, nothing is written to them, and the new
// directory is bound to and formatted.
func TestDriveReplaced(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "d1")
	d := openLocal(t, dir, LocalOptions{})
	if err := d.WriteFormat(ctx, testFormat); err != nil {
		t.Fatal(err)
	}
	put(t, d, "old", "1")
	if err := os.Rename(dir, dir+".pulled"); err != nil {
		t.Fatal(err)
	}
	var b Batch
	b.Put(TableObjects, "lost", []byte("x"))
	if err := d.Apply(ctx, &b); !errors.Is(err, ErrDriveFaulty) {
		t.Fatalf("Apply on a pulled drive: %v", err)
	}
	if _, err := d.CreateShard(ctx, testRef); !errors.Is(err, ErrDriveFaulty) {
		t.Fatalf("CreateShard on a pulled drive: %v", err)
	}
	if _, err := d.ReadFormat(ctx); !errors.Is(err, ErrDriveFaulty) {
		t.Fatalf("ReadFormat on a pulled drive: %v", err)
	}
	// A blank drive goes in.
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := d.Apply(ctx, &b); !errors.Is(err, ErrDriveFaulty) {
		t.Fatalf("Apply on a swapped drive before ReadFormat: %v", err)
	}
	if _, err := d.ReadFormat(ctx); !errors.Is(err, ErrUnformatted) {
		t.Fatalf("ReadFormat on the new blank drive: %v", err)
	}
	if _, err := d.Get(ctx, TableObjects, "old"); !errors.Is(err, ErrUnformatted) {
		t.Fatalf("Get on the new blank drive: %v", err)
	}
	if err := d.WriteFormat(ctx, testFormat); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Get(ctx, TableObjects, "old"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("the new drive sees the old one's records: %v", err)
	}
	put(t, d, "new", "2")
	// The old directory is free: its lock was released, and it holds
	// what it held.
	old, err := OpenLocal(dir+".pulled", LocalOptions{})
	if err != nil {
		t.Fatalf("old directory still locked: %v", err)
	}
	defer old.Close()
	// (The old index closes on the side; its pebble lock may lag.)
	waitFor(t, "old index to open", func() bool { _, err := old.ReadFormat(ctx); return err == nil })
	if v, err := old.Get(ctx, TableObjects, "old"); err != nil || string(v) != "1" {
		t.Fatalf("old drive: %q %v", v, err)
	}
	if _, err := old.Get(ctx, TableObjects, "lost"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("a write to the pulled drive landed: %v", err)
	}
	// And the new one is locked by d.
	if _, err := OpenLocal(dir, LocalOptions{}); !errors.Is(err, ErrLocked) {
		t.Fatalf("new directory not locked: %v", err)
	}
}

// A drive briefly replaced by a file and put back is the same drive.
func TestDriveBackInPlace(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "d1")
	d := openLocal(t, dir, LocalOptions{})
	if err := d.WriteFormat(ctx, testFormat); err != nil {
		t.Fatal(err)
	}
	put(t, d, "k", "v")
	if err := os.Rename(dir, dir+".away"); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(dir, []byte("not a drive"), 0o644)
	if _, err := d.ReadFormat(ctx); !errors.Is(err, ErrDriveFaulty) {
		t.Fatalf("ReadFormat with a file in place: %v", err)
	}
	os.Remove(dir)
	if err := os.Rename(dir+".away", dir); err != nil {
		t.Fatal(err)
	}
	if _, err := d.ReadFormat(ctx); err != nil {
		t.Fatal(err)
	}
	if v, err := d.Get(ctx, TableObjects, "k"); err != nil || string(v) != "v" {
		t.Fatalf("after the drive came back: %q %v", v, err)
	}
}

func TestPlace(t *testing.T) {
	root := t.TempDir()
	// A path that does not exist yet is placed where it would be created.
	p, err := Place(filepath.Join(root, "a", "b"), root)
	if err != nil {
		t.Fatal(err)
	}
	if !p.OnRoot || p.Path != filepath.Join(root, "a", "b") {
		t.Fatalf("placement %+v: want on the given root", p)
	}
	// /proc is another filesystem than the temp dir.
	q, err := Place("/proc/self", root)
	if err != nil {
		t.Fatal(err)
	}
	if q.OnRoot || q.Dev == p.Dev || q.FSType != "proc" {
		t.Fatalf("/proc placement %+v: want a separate proc filesystem", q)
	}
	groups := SharedFilesystems([]Placement{p, q, p})
	if len(groups) != 1 || len(groups[0]) != 2 || groups[0][0].Dev != p.Dev {
		t.Fatalf("shared groups %+v", groups)
	}
	if d := p.Describe(); d == "" {
		t.Fatal("empty description")
	}
	if got := unescapeMount(`/mnt/my\040disk`); got != "/mnt/my disk" {
		t.Fatalf("unescape: %q", got)
	}
}

func TestPeekFormatAndMissingDrive(t *testing.T) {
	root := t.TempDir()
	missing := filepath.Join(root, "gone")
	if _, err := PeekFormat(missing); !errors.Is(err, ErrDriveMissing) {
		t.Fatalf("peek of a missing directory: %v", err)
	}
	d, err := OpenLocal(missing, LocalOptions{NoCreate: true})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if _, err := os.Stat(missing); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("NoCreate created the directory: %v", err)
	}
	ctx := context.Background()
	if _, err := d.ReadFormat(ctx); !errors.Is(err, ErrDriveMissing) || !errors.Is(err, ErrDriveFaulty) {
		t.Fatalf("ReadFormat of a missing drive: %v", err)
	}
	if _, err := d.Get(ctx, TableBuckets, "x"); !errors.Is(err, ErrDriveFaulty) {
		t.Fatalf("Get on a missing drive: %v", err)
	}
	// The disk appears (mounted, empty): the drive binds to it and is blank.
	if err := os.Mkdir(missing, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := d.ReadFormat(ctx); !errors.Is(err, ErrUnformatted) {
		t.Fatalf("ReadFormat after the directory appeared: %v", err)
	}
	if err := d.WriteFormat(ctx, Format{DeploymentID: "dep", SetCount: 1, SetSize: 1, DriveID: "x"}); err != nil {
		t.Fatal(err)
	}
	if f, err := PeekFormat(missing); err != nil || f.DeploymentID != "dep" {
		t.Fatalf("peek after format: %+v %v", f, err)
	}

	// A blank directory opened and closed without a format is left as found.
	blank := filepath.Join(root, "blank")
	os.Mkdir(blank, 0o755)
	b, err := OpenLocal(blank, LocalOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(blank, sysDirName)); err != nil {
		t.Fatalf("open did not create the system directory: %v", err)
	}
	b.Close()
	if ents, _ := os.ReadDir(blank); len(ents) != 0 {
		t.Fatalf("unformatted drive not left as found: %v", ents)
	}
	// A directory with foreign files is not blank to PeekFormat.
	os.WriteFile(filepath.Join(blank, "photo.jpg"), []byte("x"), 0o644)
	if _, err := PeekFormat(blank); !errors.Is(err, ErrNotBlank) {
		t.Fatalf("peek of a non-blank directory: %v", err)
	}
}

// TestClassifyKeepsCause: an OS error mapped onto the drive vocabulary
// keeps the OS error in the chain, so both can be asked for.
func TestClassifyKeepsCause(t *testing.T) {
	for _, c := range []struct {
		os, drive error
	}{
		{&fs.PathError{Op: "open", Path: "x", Err: syscall.ENOSPC}, ErrDriveFull},
		{&fs.PathError{Op: "open", Path: "x", Err: syscall.EDQUOT}, ErrDriveFull},
		{&fs.PathError{Op: "open", Path: "x", Err: syscall.ENOENT}, ErrNotFound},
		{&fs.PathError{Op: "write", Path: "x", Err: syscall.EIO}, ErrDriveFaulty},
	} {
		err := classify(c.os)
		if !errors.Is(err, c.drive) || !errors.Is(err, c.os.(*fs.PathError).Err) {
			t.Errorf("classify(%v) = %v: want both %v and the OS error", c.os, err, c.drive)
		}
	}
	if !errors.Is(ErrInjectedENOSPC, syscall.ENOSPC) || !errors.Is(ErrInjectedENOSPC, ErrDriveFull) {
		t.Error("ErrInjectedENOSPC lost its cause")
	}
}

// TestFormatBeside: a drive holding another store's files (MinIO's, for
// `migrate from-minio`) is refused a format unless Beside is set, and
// with it still formats only without an index or shard files of its own.
func TestFormatBeside(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, ".minio.sys"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "bucket", "key"), 0o755); err != nil {
		t.Fatal(err)
	}
	d := openLocal(t, dir, LocalOptions{})
	if err := d.WriteFormat(ctx, testFormat); !errors.Is(err, ErrNotBlank) {
		t.Fatalf("format beside MinIO's files without Beside: %v", err)
	}
	d.Close()
	d = openLocal(t, dir, LocalOptions{Beside: true})
	if err := d.WriteFormat(ctx, testFormat); err != nil {
		t.Fatalf("format with Beside: %v", err)
	}
	if f, err := d.ReadFormat(ctx); err != nil || f.DriveID != testFormat.DriveID {
		t.Fatalf("read back: %+v, %v", f, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "bucket", "key")); err != nil {
		t.Fatalf("the other store's files: %v", err)
	}
	// A formatted drive with foreign entries opens as formatted.
	if f, err := PeekFormat(dir); err != nil || f.DriveID != testFormat.DriveID {
		t.Fatalf("PeekFormat: %+v, %v", f, err)
	}
}
