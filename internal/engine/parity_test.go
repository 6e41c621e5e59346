package engine

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math/rand"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// Issue #12 (S3 parity): the engine's part of each item.

func TestParityRangeOnEmptyObject(t *testing.T) {
	e, _ := testEngine(t, 4, Config{BlockSize: 4096})
	ctx := context.Background()
	if _, err := e.PutObject(ctx, "bucket", "empty", strings.NewReader(""), 0, PutOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, r := range []Range{{0, -1}, {0, 0}, {-1, -1}, {3, 7}} {
		if _, err := getAll(t, e, "empty", GetOptions{Range: &r}); !errors.Is(err, ErrInvalidRange) {
			t.Fatalf("GET range %+v: %v, want ErrInvalidRange", r, err)
		}
		if _, err := e.HeadObject(ctx, "bucket", "empty", GetOptions{Range: &r}); !errors.Is(err, ErrInvalidRange) {
			t.Fatalf("HEAD range %+v: %v, want ErrInvalidRange", r, err)
		}
	}
	if got, err := getAll(t, e, "empty", GetOptions{}); err != nil || len(got) != 0 {
		t.Fatalf("GET: %q %v", got, err)
	}
	// Part 1 of an empty single-PUT object is the (empty) object.
	rd, err := e.GetObject(ctx, "bucket", "empty", GetOptions{PartNumber: 1})
	if err != nil || rd.Length != 0 {
		t.Fatalf("part 1: %+v %v", rd, err)
	}
	rd.Close()
}

func TestParityPartNumber(t *testing.T) {
	e, _ := testEngine(t, 4, Config{BlockSize: 64 << 10})
	ctx := context.Background()
	body := []byte("a single PUT")
	if _, err := e.PutObject(ctx, "bucket", "single", bytes.NewReader(body), int64(len(body)), PutOptions{}); err != nil {
		t.Fatal(err)
	}
	rd, err := e.GetObject(ctx, "bucket", "single", GetOptions{PartNumber: 1})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(rd)
	rd.Close()
	if !bytes.Equal(got, body) || !rd.Partial || rd.Start != 0 {
		t.Fatalf("part 1 of a single PUT: %q %+v", got, rd)
	}
	for _, n := range []int{2, 10000} {
		if _, err := getAll(t, e, "single", GetOptions{PartNumber: n}); !errors.Is(err, ErrInvalidPartNumber) {
			t.Fatalf("part %d: %v, want ErrInvalidPartNumber", n, err)
		}
		if _, err := e.HeadObject(ctx, "bucket", "single", GetOptions{PartNumber: n}); !errors.Is(err, ErrInvalidPartNumber) {
			t.Fatalf("HEAD part %d: %v", n, err)
		}
	}
	_, parts := parityUpload(t, e, "mp", 2)
	if _, err := e.CompleteMultipartUpload(ctx, "bucket", "mp", parts.id, parts.list, PutOptions{}); err != nil {
		t.Fatal(err)
	}
	if got, err := getAll(t, e, "mp", GetOptions{PartNumber: 2}); err != nil || !bytes.Equal(got, parts.bodies[1]) {
		t.Fatalf("part 2: %d bytes, %v", len(got), err)
	}
	if _, err := getAll(t, e, "mp", GetOptions{PartNumber: 3}); !errors.Is(err, ErrInvalidPartNumber) {
		t.Fatalf("part 3 of 2: %v", err)
	}
}

type testUpload struct {
	id     string
	list   []CompletePart
	bodies [][]byte
}

// parityUpload starts an upload of key with n parts (all but the last of
// the minimum size) and uploads them.
func parityUpload(t *testing.T, e *Engine, key string, n int) (*Engine, testUpload) {
	t.Helper()
	ctx := context.Background()
	id, err := e.NewMultipartUpload(ctx, "bucket", key, PutOptions{})
	if err != nil {
		t.Fatal(err)
	}
	u := testUpload{id: id}
	r := rand.New(rand.NewSource(int64(len(key))))
	for i := 1; i <= n; i++ {
		size := MinPartSize
		if i == n {
			size = 1000
		}
		b := randBytes(r, size)
		pi, err := e.PutObjectPart(ctx, "bucket", key, id, i, bytes.NewReader(b), int64(size), PartOptions{})
		if err != nil {
			t.Fatal(err)
		}
		u.list = append(u.list, CompletePart{Number: i, ETag: pi.ETag})
		u.bodies = append(u.bodies, b)
	}
	return e, u
}

func TestParityCompleteTwice(t *testing.T) {
	e, _ := testEngine(t, 4, Config{BlockSize: 64 << 10})
	ctx := context.Background()
	_, u := parityUpload(t, e, "obj", 2)
	first, err := e.CompleteMultipartUpload(ctx, "bucket", "obj", u.id, u.list, PutOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The same completion again (a retry whose first answer was lost):
	// the same ETag, and the object is untouched.
	again, err := e.CompleteMultipartUpload(ctx, "bucket", "obj", u.id, u.list, PutOptions{})
	if err != nil || again.ETag != first.ETag || again.Size != first.Size || !again.ModTime.Equal(first.ModTime) {
		t.Fatalf("second complete: %+v %v, first %+v", again, err, first)
	}
	// Not another part list, and not another upload id.
	if _, err := e.CompleteMultipartUpload(ctx, "bucket", "obj", u.id, u.list[:1], PutOptions{}); !errors.Is(err, ErrNoSuchUpload) {
		t.Fatalf("other part list: %v", err)
	}
	if _, err := e.CompleteMultipartUpload(ctx, "bucket", "obj", "00000000-0000-4000-8000-000000000000", u.list, PutOptions{}); !errors.Is(err, ErrNoSuchUpload) {
		t.Fatalf("other upload id: %v", err)
	}
	// The completed upload takes no more parts.
	if _, err := e.PutObjectPart(ctx, "bucket", "obj", u.id, 3, strings.NewReader("x"), 1, PartOptions{}); !errors.Is(err, ErrNoSuchUpload) {
		t.Fatalf("part after complete: %v", err)
	}
	// An ACL change keeps the version (and the answer).
	if err := e.SetObjectACL(ctx, "bucket", "obj", "", "public-read"); err != nil {
		t.Fatal(err)
	}
	if again, err := e.CompleteMultipartUpload(ctx, "bucket", "obj", u.id, u.list, PutOptions{}); err != nil || again.ETag != first.ETag {
		t.Fatalf("after ACL change: %+v %v", again, err)
	}
	// Once the key is overwritten the upload id is gone.
	if _, err := e.PutObject(ctx, "bucket", "obj", strings.NewReader("new"), 3, PutOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.CompleteMultipartUpload(ctx, "bucket", "obj", u.id, u.list, PutOptions{}); !errors.Is(err, ErrNoSuchUpload) {
		t.Fatalf("after overwrite: %v", err)
	}
	// And a deleted key too.
	_, u = parityUpload(t, e, "obj", 1)
	if _, err := e.CompleteMultipartUpload(ctx, "bucket", "obj", u.id, u.list, PutOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := e.DeleteObject(ctx, "bucket", "obj"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.CompleteMultipartUpload(ctx, "bucket", "obj", u.id, u.list, PutOptions{}); !errors.Is(err, ErrNoSuchUpload) {
		t.Fatalf("after delete: %v", err)
	}
}

// gatedReader delivers its data, then waits for gate before EOF.
type gatedReader struct {
	r    io.Reader
	gate chan struct{}
	read chan struct{} // closed once the data has been read
	once sync.Once
}

func (g *gatedReader) Read(p []byte) (int, error) {
	n, err := g.r.Read(p)
	if err == io.EOF {
		g.once.Do(func() { close(g.read) })
		<-g.gate
	}
	return n, err
}

// Two uploads of one part number in flight at once: the one that
// finishes last is the part, whichever started first.
func TestParityConcurrentPartUpload(t *testing.T) {
	e, _ := testEngine(t, 4, Config{BlockSize: 64 << 10})
	ctx := context.Background()
	id, err := e.NewMultipartUpload(ctx, "bucket", "race", PutOptions{})
	if err != nil {
		t.Fatal(err)
	}
	early := &gatedReader{r: strings.NewReader("started first, finished last"), gate: make(chan struct{}), read: make(chan struct{})}
	done := make(chan PartInfo, 1)
	go func() {
		pi, err := e.PutObjectPart(ctx, "bucket", "race", id, 1, early, -1, PartOptions{})
		if err != nil {
			t.Error(err)
		}
		done <- pi
	}()
	<-early.read
	if _, err := e.PutObjectPart(ctx, "bucket", "race", id, 1, strings.NewReader("started last"), 12, PartOptions{}); err != nil {
		t.Fatal(err)
	}
	close(early.gate)
	last := <-done
	lp, err := e.ListObjectParts(ctx, "bucket", "race", id, 0, 0)
	if err != nil || len(lp.Parts) != 1 || lp.Parts[0].ETag != last.ETag {
		t.Fatalf("parts %+v %v, want the ETag %s of the upload that finished last", lp.Parts, err, last.ETag)
	}
	if _, err := e.CompleteMultipartUpload(ctx, "bucket", "race", id, []CompletePart{{Number: 1, ETag: last.ETag}}, PutOptions{}); err != nil {
		t.Fatal(err)
	}
	if got, err := getAll(t, e, "race", GetOptions{}); err != nil || string(got) != "started first, finished last" {
		t.Fatalf("object %q %v", got, err)
	}
}

func TestParityConditionalWrites(t *testing.T) {
	e, _ := testEngine(t, 4, Config{BlockSize: 64 << 10})
	ctx := context.Background()
	put := func(key, body string, opts PutOptions) (ObjectInfo, error) {
		return e.PutObject(ctx, "bucket", key, strings.NewReader(body), int64(len(body)), opts)
	}
	if _, err := put("k", "v1", PutOptions{IfMatch: `"abc"`}); !errors.Is(err, ErrObjectNotFound) {
		t.Fatalf("If-Match on a missing key: %v, want ErrObjectNotFound", err)
	}
	v1, err := put("k", "v1", PutOptions{IfNoneMatchAny: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := put("k", "v2", PutOptions{IfNoneMatch: `"` + v1.ETag + `"`}); !errors.Is(err, ErrPreconditionFailed) {
		t.Fatalf("If-None-Match current ETag: %v", err)
	}
	if _, err := put("k", "v2", PutOptions{IfMatch: `"abc"`}); !errors.Is(err, ErrPreconditionFailed) {
		t.Fatalf("If-Match other ETag: %v", err)
	}
	v2, err := put("k", "v2", PutOptions{IfMatch: `"` + v1.ETag + `"`, IfNoneMatch: `"abc"`})
	if err != nil {
		t.Fatal(err)
	}

	// CompleteMultipartUpload: a failed condition leaves the upload to
	// complete later.
	_, u := parityUpload(t, e, "k", 1)
	if _, err := e.CompleteMultipartUpload(ctx, "bucket", "k", u.id, u.list, PutOptions{IfNoneMatchAny: true}); !errors.Is(err, ErrPreconditionFailed) {
		t.Fatalf("complete If-None-Match *: %v", err)
	}
	if _, err := e.CompleteMultipartUpload(ctx, "bucket", "k", u.id, u.list, PutOptions{IfMatch: v1.ETag}); !errors.Is(err, ErrPreconditionFailed) {
		t.Fatalf("complete If-Match stale: %v", err)
	}
	if _, err := e.CompleteMultipartUpload(ctx, "bucket", "k", u.id, u.list, PutOptions{IfMatch: v2.ETag}); err != nil {
		t.Fatalf("complete If-Match current: %v", err)
	}
	_, u = parityUpload(t, e, "fresh", 1)
	if _, err := e.CompleteMultipartUpload(ctx, "bucket", "fresh", u.id, u.list, PutOptions{IfMatch: v2.ETag}); !errors.Is(err, ErrObjectNotFound) {
		t.Fatalf("complete If-Match missing key: %v", err)
	}
	if _, err := e.CompleteMultipartUpload(ctx, "bucket", "fresh", u.id, u.list, PutOptions{IfNoneMatchAny: true}); err != nil {
		t.Fatal(err)
	}

	// CopyObject: conditions on the destination, also when copying an
	// object onto itself.
	if _, err := e.CopyObject(ctx, "bucket", "k", "bucket", "fresh", CopyOptions{Put: PutOptions{IfNoneMatchAny: true}}); !errors.Is(err, ErrPreconditionFailed) {
		t.Fatalf("copy If-None-Match * onto existing: %v", err)
	}
	if _, err := e.CopyObject(ctx, "bucket", "k", "bucket", "nothere", CopyOptions{Put: PutOptions{IfMatch: v2.ETag}}); !errors.Is(err, ErrObjectNotFound) {
		t.Fatalf("copy If-Match onto missing: %v", err)
	}
	if _, err := e.CopyObject(ctx, "bucket", "k", "bucket", "k", CopyOptions{ReplaceMetadata: true, Put: PutOptions{IfMatch: `"abc"`}}); !errors.Is(err, ErrPreconditionFailed) {
		t.Fatalf("self-copy If-Match other: %v", err)
	}
	cur, err := e.HeadObject(ctx, "bucket", "k", GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.CopyObject(ctx, "bucket", "k", "bucket", "k", CopyOptions{ReplaceMetadata: true, Put: PutOptions{IfMatch: cur.ETag, ContentType: "x/y"}}); err != nil {
		t.Fatalf("self-copy If-Match current: %v", err)
	}
}

// If-None-Match: * is decided under the key's lock with the commit: of
// concurrent creates exactly one wins.
func TestParityConditionalCreateIsAtomic(t *testing.T) {
	e, _ := testEngine(t, 4, Config{BlockSize: 4096})
	ctx := context.Background()
	var wins, fails atomic.Int32
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			body := strings.Repeat(string(rune('a'+i)), 5000)
			_, err := e.PutObject(ctx, "bucket", "once", strings.NewReader(body), int64(len(body)), PutOptions{IfNoneMatchAny: true})
			switch {
			case err == nil:
				wins.Add(1)
			case errors.Is(err, ErrPreconditionFailed):
				fails.Add(1)
			default:
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if wins.Load() != 1 || fails.Load() != 7 {
		t.Fatalf("%d creates won, %d failed; want 1 and 7", wins.Load(), fails.Load())
	}
}

// A body of unknown size (chunked transfer) streams into a part.
func TestParityUnknownSizePart(t *testing.T) {
	e, _ := testEngine(t, 4, Config{BlockSize: 4096})
	ctx := context.Background()
	id, err := e.NewMultipartUpload(ctx, "bucket", "chunked", PutOptions{})
	if err != nil {
		t.Fatal(err)
	}
	body := randBytes(rand.New(rand.NewSource(9)), 3*4096+17)
	pi, err := e.PutObjectPart(ctx, "bucket", "chunked", id, 1, io.MultiReader(bytes.NewReader(body)), -1, PartOptions{})
	if err != nil || pi.Size != int64(len(body)) {
		t.Fatalf("part: %+v %v", pi, err)
	}
	if _, err := e.CompleteMultipartUpload(ctx, "bucket", "chunked", id, []CompletePart{{Number: 1, ETag: pi.ETag}}, PutOptions{}); err != nil {
		t.Fatal(err)
	}
	if got, err := getAll(t, e, "chunked", GetOptions{}); err != nil || !bytes.Equal(got, body) {
		t.Fatalf("object: %d bytes, %v", len(got), err)
	}
}
