package engine

import (
	"bytes"
	"context"
	"errors"
	"math/rand"
	"testing"

	"github.com/shardstore/shardstore/internal/bitrot"
	"github.com/shardstore/shardstore/internal/drive"
	"github.com/shardstore/shardstore/internal/minioformat"
)

// TestImportedMinIOUpload: an upload written by ImportUploadBatch with
// MinIO's id and bitrot algorithm (as `migrate from-minio` adopts one)
// takes parts, which are written with the upload's algorithm, lists them
// and completes into an object that reads back; ids that are neither
// ours nor MinIO's are refused.
func TestImportedMinIOUpload(t *testing.T) {
	e, _ := testEngine(t, 6, Config{BlockSize: 64 << 10})
	ctx := context.Background()
	r := rand.New(rand.NewSource(5))
	own, err := e.NewMultipartUpload(ctx, "bucket", "adopted", PutOptions{ContentType: "x/y"})
	if err != nil {
		t.Fatal(err)
	}
	set := e.setFor("bucket", "adopted")
	up, _, err := e.readUpload(ctx, set, "bucket", "adopted", own)
	if err != nil {
		t.Fatal(err)
	}
	id := minioformat.UploadIDString("61ed822e-a96e-4d62-b58c-2b5cb0b15a11", "8e65c5b7-ac22-42c2-9c29-ee6caf71c155x1795832466542489215")
	if !IsMinIOUploadID(id) || checkUploadID(id) != nil || IsMinIOUploadID(own) {
		t.Fatalf("id checks: %v %v %v", IsMinIOUploadID(id), checkUploadID(id), IsMinIOUploadID(own))
	}
	for p, d := range set.drives {
		m := *up
		m.UploadID = id
		m.Erasure.Bitrot = uint8(bitrot.HighwayHash256MinIO)
		m.Erasure.Index = m.Erasure.Distribution[p]
		b := &drive.Batch{}
		ImportUploadBatch(b, &m, nil)
		if err := d.Apply(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	bodies := [][]byte{randBytes(r, MinPartSize), randBytes(r, 70000)}
	var parts []CompletePart
	for i, body := range bodies {
		pi, err := e.PutObjectPart(ctx, "bucket", "adopted", id, i+1, bytes.NewReader(body), int64(len(body)), PartOptions{})
		if err != nil {
			t.Fatalf("part %d: %v", i+1, err)
		}
		parts = append(parts, CompletePart{Number: i + 1, ETag: pi.ETag})
	}
	lp, err := e.ListObjectParts(ctx, "bucket", "adopted", id, 0, 0)
	if err != nil || len(lp.Parts) != 2 || lp.Upload.UploadID != id {
		t.Fatalf("list parts: %+v %v", lp, err)
	}
	if _, err := e.CompleteMultipartUpload(ctx, "bucket", "adopted", id, parts, PutOptions{}); err != nil {
		t.Fatal(err)
	}
	got, err := getAll(t, e, "adopted", GetOptions{})
	if err != nil || !bytes.Equal(got, append(append([]byte{}, bodies[0]...), bodies[1]...)) {
		t.Fatalf("read back: %d bytes, %v", len(got), err)
	}
	st, err := e.readObject(ctx, set, "bucket", "adopted")
	if err != nil || bitrot.Algorithm(st.fi.Erasure.Bitrot) != bitrot.HighwayHash256MinIO {
		t.Fatalf("object bitrot %v %v", st, err)
	}
	for _, bad := range []string{"", "../../x", minioformat.UploadIDString("61ed822e-a96e-4d62-b58c-2b5cb0b15a11", "../../etc"), id + "A"} {
		if _, err := e.PutObjectPart(ctx, "bucket", "adopted", bad, 1, bytes.NewReader(nil), 0, PartOptions{}); !errors.Is(err, ErrNoSuchUpload) {
			t.Errorf("upload id %q: %v", bad, err)
		}
	}
}
