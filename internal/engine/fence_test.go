package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/shardstore/shardstore/internal/drive"
)

// gate holds every index batch that touches one object's record until
// released: a writer stalled between reading a key and committing to it
// (a long GC pause, a stopped VM) after its cluster lock expired.
type gate struct {
	table   drive.Table // TableObjects unless set
	okey    string
	armed   atomic.Bool
	once    sync.Once
	reached chan struct{}
	release chan struct{}
}

type gatedDrive struct {
	drive.Drive
	g *gate
}

func (d gatedDrive) Apply(ctx context.Context, b *drive.Batch) error {
	table := d.g.table
	if table == 0 {
		table = drive.TableObjects
	}
	if d.g.armed.Load() && slices.ContainsFunc(b.Changes, func(c drive.Change) bool {
		return c.Table == table && c.Key == d.g.okey
	}) {
		d.g.once.Do(func() { close(d.g.reached) })
		<-d.g.release
	}
	return d.Drive.Apply(ctx, b)
}

// localDrives opens n local drives (no syncs) in a temporary directory,
// to share between engines as nodes of one cluster share their drives.
func localDrives(t testing.TB, n int) []drive.Drive {
	t.Helper()
	root := t.TempDir()
	drives := make([]drive.Drive, n)
	for i := range drives {
		l, err := drive.OpenLocal(filepath.Join(root, fmt.Sprintf("d%d", i+1)), drive.LocalOptions{NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
		drives[i] = l
	}
	return drives
}

// engineOn opens an engine without background work on drives.
func engineOn(t testing.TB, drives []drive.Drive) *Engine {
	t.Helper()
	e, err := New(Config{Drives: drives, Heal: HealConfig{Disabled: true}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

// gateDrives wraps each drive so that g can stall its batches.
func gateDrives(drives []drive.Drive, g *gate) []drive.Drive {
	gated := make([]drive.Drive, len(drives))
	for i, d := range drives {
		gated[i] = gatedDrive{Drive: d, g: g}
	}
	return gated
}

// TestStaleWriterIsFenced runs two engines on the same drives, as two
// nodes whose lock of a key no longer excludes each other: the first
// reads the key and stalls right before its commit, the second changes
// the key, then the first resumes. Every drive refuses the stale commit
// (its record is no longer the one read), the stale request fails with
// ErrBusy (503 SlowDown, a retry reads afresh), and what the second
// writer acknowledged is intact: without the check, the stale commit
// would overwrite the record on every drive, dropping the second
// writer's version.
func TestStaleWriterIsFenced(t *testing.T) {
	ctx := context.Background()
	drives := localDrives(t, 16)
	fresh := engineOn(t, drives)
	for _, b := range []string{"plain", "versioned"} {
		if err := fresh.MakeBucket(ctx, b, BucketOptions{Owner: "o"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := fresh.SetBucketConfig(ctx, "versioned", BucketConfigVersioning, VersioningEnabled); err != nil {
		t.Fatal(err)
	}
	g := &gate{}
	stale := engineOn(t, gateDrives(drives, g))

	r := rand.New(rand.NewSource(7))
	body := func() []byte { return randBytes(r, 1<<20+r.Intn(4096)) }
	read := func(e *Engine, bucket, key string) []byte {
		t.Helper()
		rd, err := e.GetObject(ctx, bucket, key, GetOptions{})
		if err != nil {
			t.Fatalf("get %s/%s: %v", bucket, key, err)
		}
		defer rd.Close()
		var buf bytes.Buffer
		if _, err := buf.ReadFrom(rd); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	for _, tc := range []struct {
		name, bucket string
		staleOp      func(key string) error
	}{
		{"put over put", "plain", func(key string) error {
			_, err := stale.PutObject(ctx, "plain", key, bytes.NewReader(body()), -1, PutOptions{})
			return err
		}},
		{"put over put, versioned", "versioned", func(key string) error {
			_, err := stale.PutObject(ctx, "versioned", key, bytes.NewReader(body()), -1, PutOptions{})
			return err
		}},
		{"delete over put", "plain", func(key string) error {
			return stale.DeleteObject(ctx, "plain", key)
		}},
		{"delete marker over put, versioned", "versioned", func(key string) error {
			_, err := stale.DeleteObjectVersion(ctx, "versioned", key, DeleteOptions{})
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			key := "k-" + tc.name
			first := body()
			if _, err := fresh.PutObject(ctx, tc.bucket, key, bytes.NewReader(first), int64(len(first)), PutOptions{}); err != nil {
				t.Fatal(err)
			}
			g.okey = drive.ObjectKey(tc.bucket, key)
			g.once, g.reached, g.release = sync.Once{}, make(chan struct{}), make(chan struct{})
			g.armed.Store(true)
			staleErr := make(chan error, 1)
			go func() { staleErr <- tc.staleOp(key) }()
			<-g.reached // the stale writer read the key and is about to commit

			second := body()
			if _, err := fresh.PutObject(ctx, tc.bucket, key, bytes.NewReader(second), int64(len(second)), PutOptions{}); err != nil {
				t.Fatalf("the writer holding the lock: %v", err)
			}
			g.armed.Store(false)
			close(g.release)
			if err := <-staleErr; !errors.Is(err, ErrBusy) {
				t.Fatalf("stale writer: %v, want ErrBusy", err)
			}
			for _, e := range []*Engine{fresh, stale} {
				if got := read(e, tc.bucket, key); !bytes.Equal(got, second) {
					t.Fatalf("after the stale commit: %d bytes, not the acknowledged %d", len(got), len(second))
				}
			}
			// Every drive still holds the acknowledged version as its
			// only current one.
			for p, d := range drives {
				rec, _, err := readRecord(ctx, d, tc.bucket, key)
				if err != nil || rec.Current() == nil || rec.Current().Size != int64(len(second)) {
					t.Fatalf("drive %d: %v %v", p, rec, err)
				}
			}
			if tc.bucket == "versioned" {
				res, err := fresh.ListObjectVersions(ctx, "versioned", ListVersionsOptions{Prefix: key})
				if err != nil {
					t.Fatal(err)
				}
				var sizes []int64
				for _, v := range res.Versions {
					if v.DeleteMarker {
						t.Fatalf("the stale delete marker landed: %+v", v)
					}
					sizes = append(sizes, v.Size)
				}
				if want := []int64{int64(len(second)), int64(len(first))}; !slices.Equal(sizes, want) {
					t.Fatalf("versions %v, want %v", sizes, want)
				}
			}
		})
	}
}

// TestStalePartWriterIsFenced: the same for an upload part. A writer of
// part 1 stalls before committing its part record; another attempt of
// part 1 commits; the stale one must neither replace that record nor,
// failing, roll it back (delete it): the upload completes with the part
// the client was last told about.
func TestStalePartWriterIsFenced(t *testing.T) {
	ctx := context.Background()
	drives := localDrives(t, 16)
	fresh := engineOn(t, drives)
	if err := fresh.MakeBucket(ctx, "parts", BucketOptions{Owner: "o"}); err != nil {
		t.Fatal(err)
	}
	g := &gate{table: drive.TableParts}
	stale := engineOn(t, gateDrives(drives, g))

	r := rand.New(rand.NewSource(8))
	for _, retried := range []bool{false, true} {
		t.Run(fmt.Sprintf("part retried before %v", retried), func(t *testing.T) {
			key := fmt.Sprintf("mp-%v", retried)
			id, err := fresh.NewMultipartUpload(ctx, "parts", key, PutOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if retried {
				// An earlier attempt exists: the stale writer reads it.
				early := randBytes(r, 6<<20)
				if _, err := fresh.PutObjectPart(ctx, "parts", key, id, 1, bytes.NewReader(early), int64(len(early)), PartOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			g.okey = drive.PartKey("parts", key, id, 1)
			g.once, g.reached, g.release = sync.Once{}, make(chan struct{}), make(chan struct{})
			g.armed.Store(true)
			staleErr := make(chan error, 1)
			go func() {
				body := randBytes(r, 5<<20+100)
				_, err := stale.PutObjectPart(ctx, "parts", key, id, 1, bytes.NewReader(body), int64(len(body)), PartOptions{})
				staleErr <- err
			}()
			<-g.reached

			second := randBytes(rand.New(rand.NewSource(9)), 5<<20+7)
			pi, err := fresh.PutObjectPart(ctx, "parts", key, id, 1, bytes.NewReader(second), int64(len(second)), PartOptions{})
			if err != nil {
				t.Fatalf("the writer holding the lock: %v", err)
			}
			g.armed.Store(false)
			close(g.release)
			if err := <-staleErr; !errors.Is(err, ErrBusy) {
				t.Fatalf("stale part writer: %v, want ErrBusy", err)
			}
			if _, err := fresh.CompleteMultipartUpload(ctx, "parts", key, id, []CompletePart{{Number: 1, ETag: pi.ETag}}, PutOptions{}); err != nil {
				t.Fatalf("complete with the acknowledged part: %v", err)
			}
			rd, err := fresh.GetObject(ctx, "parts", key, GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			_, err = buf.ReadFrom(rd)
			rd.Close()
			if err != nil || !bytes.Equal(buf.Bytes(), second) {
				t.Fatalf("object after the stale part commit: %d bytes (%v), not the acknowledged part", buf.Len(), err)
			}
		})
	}
}
