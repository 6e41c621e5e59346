package e2e

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"mime"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/shardstore/shardstore/internal/auth"
)

// TestParityObjects covers the object items of issue #12 (S3 parity)
// through aws-sdk-go-v2 (and raw HTTP where the SDK hides the detail)
// against the real binary.
func TestParityObjects(t *testing.T) {
	s := startServer(t)
	c := s.root()
	cx := ctx(t)
	const bkt = "parity-objects"
	createBucket(t, c, bkt)
	put := func(key string, body []byte) *s3.PutObjectOutput {
		t.Helper()
		out, err := c.PutObject(cx, &s3.PutObjectInput{Bucket: aws.String(bkt), Key: aws.String(key), Body: bytes.NewReader(body)})
		if err != nil {
			t.Fatalf("put %s: %v", key, err)
		}
		return out
	}
	upload := func(key string, last []byte) (string, []types.CompletedPart) {
		t.Helper()
		cr, err := c.CreateMultipartUpload(cx, &s3.CreateMultipartUploadInput{Bucket: aws.String(bkt), Key: aws.String(key)})
		if err != nil {
			t.Fatal(err)
		}
		var parts []types.CompletedPart
		for i, body := range [][]byte{pattern(5<<20, 1), last} {
			n := int32(i + 1)
			up, err := c.UploadPart(cx, &s3.UploadPartInput{Bucket: aws.String(bkt), Key: aws.String(key), UploadId: cr.UploadId,
				PartNumber: aws.Int32(n), Body: bytes.NewReader(body)})
			if err != nil {
				t.Fatal(err)
			}
			parts = append(parts, types.CompletedPart{PartNumber: aws.Int32(n), ETag: up.ETag})
		}
		return *cr.UploadId, parts
	}
	complete := func(key, id string, parts []types.CompletedPart, mod func(*s3.CompleteMultipartUploadInput)) (*s3.CompleteMultipartUploadOutput, error) {
		in := &s3.CompleteMultipartUploadInput{Bucket: aws.String(bkt), Key: aws.String(key), UploadId: aws.String(id),
			MultipartUpload: &types.CompletedMultipartUpload{Parts: parts}}
		if mod != nil {
			mod(in)
		}
		return c.CompleteMultipartUpload(cx, in)
	}

	t.Run("RangeOnEmptyObject", func(t *testing.T) {
		put("empty", nil)
		_, err := c.GetObject(cx, &s3.GetObjectInput{Bucket: aws.String(bkt), Key: aws.String("empty"), Range: aws.String("bytes=0-0")})
		wantCode(t, err, "InvalidRange", 416)
		_, err = c.HeadObject(cx, &s3.HeadObjectInput{Bucket: aws.String(bkt), Key: aws.String("empty"), Range: aws.String("bytes=-10")})
		wantCode(t, err, "", 416)
		if got := getBody(t, c, bkt, "empty"); len(got) != 0 {
			t.Fatalf("empty object read %d bytes", len(got))
		}
	})

	t.Run("PartNumber", func(t *testing.T) {
		body := []byte("single put body")
		put("single", body)
		g, err := c.GetObject(cx, &s3.GetObjectInput{Bucket: aws.String(bkt), Key: aws.String("single"), PartNumber: aws.Int32(1)})
		if err != nil {
			t.Fatal(err)
		}
		if got := mustRead(t, g.Body); !bytes.Equal(got, body) {
			t.Fatalf("part 1: %q", got)
		}
		_, err = c.GetObject(cx, &s3.GetObjectInput{Bucket: aws.String(bkt), Key: aws.String("single"), PartNumber: aws.Int32(2)})
		wantCode(t, err, "InvalidPartNumber", 416)
		_, err = c.HeadObject(cx, &s3.HeadObjectInput{Bucket: aws.String(bkt), Key: aws.String("single"), PartNumber: aws.Int32(2)})
		wantCode(t, err, "", 416)
		id, parts := upload("mp", []byte("tail"))
		if _, err := complete("mp", id, parts, nil); err != nil {
			t.Fatal(err)
		}
		h, err := c.HeadObject(cx, &s3.HeadObjectInput{Bucket: aws.String(bkt), Key: aws.String("mp"), PartNumber: aws.Int32(2)})
		if err != nil || aws.ToInt64(h.ContentLength) != 4 || aws.ToInt32(h.PartsCount) != 2 {
			t.Fatalf("HEAD part 2: %+v %v", h, err)
		}
		_, err = c.GetObject(cx, &s3.GetObjectInput{Bucket: aws.String(bkt), Key: aws.String("mp"), PartNumber: aws.Int32(3)})
		wantCode(t, err, "InvalidPartNumber", 416)
	})

	t.Run("CompleteLocationAndRetry", func(t *testing.T) {
		key := "dir/a b+c.bin"
		id, parts := upload(key, []byte("tail"))
		first, err := complete(key, id, parts, nil)
		if err != nil {
			t.Fatal(err)
		}
		if want := s.endpoint + "/" + bkt + "/dir/a%20b%2Bc.bin"; aws.ToString(first.Location) != want {
			t.Fatalf("Location %q, want %q", aws.ToString(first.Location), want)
		}
		// A repeated completion answers as the first did.
		again, err := complete(key, id, parts, nil)
		if err != nil || aws.ToString(again.ETag) != aws.ToString(first.ETag) {
			t.Fatalf("second complete: %v %v", again, err)
		}
		// Not once the key is overwritten.
		put(key, []byte("overwritten"))
		_, err = complete(key, id, parts, nil)
		wantCode(t, err, "NoSuchUpload", 404)
	})

	t.Run("ConcurrentPartUploads", func(t *testing.T) {
		cr, err := c.CreateMultipartUpload(cx, &s3.CreateMultipartUploadInput{Bucket: aws.String(bkt), Key: aws.String("race")})
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		for i := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := c.UploadPart(cx, &s3.UploadPartInput{Bucket: aws.String(bkt), Key: aws.String("race"), UploadId: cr.UploadId,
					PartNumber: aws.Int32(1), Body: bytes.NewReader(pattern(64<<10, byte(i)))})
				if err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		lp, err := c.ListParts(cx, &s3.ListPartsInput{Bucket: aws.String(bkt), Key: aws.String("race"), UploadId: cr.UploadId})
		if err != nil || len(lp.Parts) != 1 {
			t.Fatalf("list parts: %+v %v", lp, err)
		}
		if _, err := complete("race", *cr.UploadId, []types.CompletedPart{{PartNumber: aws.Int32(1), ETag: lp.Parts[0].ETag}}, nil); err != nil {
			t.Fatal(err)
		}
		got := getBody(t, c, bkt, "race")
		found := false
		for i := range 4 {
			found = found || bytes.Equal(got, pattern(64<<10, byte(i)))
		}
		if !found {
			t.Fatal("the part is none of the uploads")
		}
	})

	t.Run("UploadPartCopyRange", func(t *testing.T) {
		put("src", []byte("0123456789"))
		cr, err := c.CreateMultipartUpload(cx, &s3.CreateMultipartUploadInput{Bucket: aws.String(bkt), Key: aws.String("pc")})
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.UploadPartCopy(cx, &s3.UploadPartCopyInput{Bucket: aws.String(bkt), Key: aws.String("pc"), UploadId: cr.UploadId,
			PartNumber: aws.Int32(1), CopySource: aws.String(bkt + "/src"), CopySourceRange: aws.String("bytes=5-10")})
		wantCode(t, err, "InvalidRange", 416)
		if _, err := c.UploadPartCopy(cx, &s3.UploadPartCopyInput{Bucket: aws.String(bkt), Key: aws.String("pc"), UploadId: cr.UploadId,
			PartNumber: aws.Int32(1), CopySource: aws.String(bkt + "/src"), CopySourceRange: aws.String("bytes=5-9")}); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("ConditionalWrites", func(t *testing.T) {
		_, err := c.PutObject(cx, &s3.PutObjectInput{Bucket: aws.String(bkt), Key: aws.String("cond"), Body: strings.NewReader("v0"),
			IfMatch: aws.String(`"0123456789abcdef0123456789abcdef"`)})
		wantCode(t, err, "NoSuchKey", 404)
		v1 := put("cond", []byte("v1"))
		_, err = c.PutObject(cx, &s3.PutObjectInput{Bucket: aws.String(bkt), Key: aws.String("cond"), Body: strings.NewReader("v2"),
			IfMatch: aws.String(`"0123456789abcdef0123456789abcdef"`)})
		wantCode(t, err, "PreconditionFailed", 412)
		id, parts := upload("cond", []byte("tail"))
		_, err = complete("cond", id, parts, func(in *s3.CompleteMultipartUploadInput) { in.IfNoneMatch = aws.String("*") })
		wantCode(t, err, "PreconditionFailed", 412)
		if _, err := complete("cond", id, parts, func(in *s3.CompleteMultipartUploadInput) { in.IfMatch = v1.ETag }); err != nil {
			t.Fatalf("complete If-Match current: %v", err)
		}
		id, parts = upload("cond-new", []byte("tail"))
		_, err = complete("cond-new", id, parts, func(in *s3.CompleteMultipartUploadInput) { in.IfMatch = v1.ETag })
		wantCode(t, err, "NoSuchKey", 404)
		if _, err := complete("cond-new", id, parts, func(in *s3.CompleteMultipartUploadInput) { in.IfNoneMatch = aws.String("*") }); err != nil {
			t.Fatal(err)
		}
		// CopyObject's destination.
		_, err = c.CopyObject(cx, &s3.CopyObjectInput{Bucket: aws.String(bkt), Key: aws.String("cond-new"), CopySource: aws.String(bkt + "/src"),
			IfNoneMatch: aws.String("*")})
		wantCode(t, err, "PreconditionFailed", 412)
		if _, err := c.CopyObject(cx, &s3.CopyObjectInput{Bucket: aws.String(bkt), Key: aws.String("cond-copy"), CopySource: aws.String(bkt + "/src"),
			IfNoneMatch: aws.String("*")}); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("ChunkedPut", func(t *testing.T) {
		body := pattern(3<<20+123, 7) // several blocks
		for _, payload := range []string{"", "sha256"} {
			req, err := http.NewRequest("PUT", s.endpoint+"/"+bkt+"/chunked-"+payload, io.NopCloser(bytes.NewReader(body)))
			if err != nil {
				t.Fatal(err)
			}
			req.ContentLength = -1 // Transfer-Encoding: chunked
			hash := ""
			if payload != "" {
				hash = sha256Hex(body)
			}
			auth.SignRequest(req, auth.Identity{AccessKey: rootUser, SecretKey: rootPass}, region, time.Now(), hash)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			msg, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Fatalf("chunked PUT (%q): %d %s", payload, resp.StatusCode, msg)
			}
			if got := getBody(t, c, bkt, "chunked-"+payload); !bytes.Equal(got, body) {
				t.Fatalf("stored %d bytes, want %d", len(got), len(body))
			}
		}
		// A payload hash that does not match stores nothing.
		req, _ := http.NewRequest("PUT", s.endpoint+"/"+bkt+"/chunked-bad", io.NopCloser(bytes.NewReader(body)))
		req.ContentLength = -1
		auth.SignRequest(req, auth.Identity{AccessKey: rootUser, SecretKey: rootPass}, region, time.Now(), sha256Hex([]byte("other")))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 400 {
			t.Fatalf("bad payload hash: %d", resp.StatusCode)
		}
		_, err = c.HeadObject(cx, &s3.HeadObjectInput{Bucket: aws.String(bkt), Key: aws.String("chunked-bad")})
		wantCode(t, err, "", 404)
	})
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// TestParityNonASCIIMetadata: aws-sdk-go-v2 sends non-ASCII metadata
// raw; it is stored and returned RFC 2047-encoded, as S3 does, on GET,
// HEAD and through a copy; an encoded value sent in is stored decoded.
func TestParityNonASCIIMetadata(t *testing.T) {
	s := startServer(t)
	c := s.root()
	createBucket(t, c, "meta")
	meta := map[string]string{"name": "Zoë Ångström", "city": "東京", "plain": "ascii"}
	if _, err := c.PutObject(ctx(t), &s3.PutObjectInput{Bucket: aws.String("meta"), Key: aws.String("k"),
		Body: strings.NewReader("x"), Metadata: meta}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CopyObject(ctx(t), &s3.CopyObjectInput{Bucket: aws.String("meta"), Key: aws.String("copy"),
		CopySource: aws.String("meta/k")}); err != nil {
		t.Fatal(err)
	}
	var dec mime.WordDecoder
	for _, key := range []string{"k", "copy"} {
		head, err := c.HeadObject(ctx(t), &s3.HeadObjectInput{Bucket: aws.String("meta"), Key: aws.String(key)})
		if err != nil {
			t.Fatal(err)
		}
		for k, want := range meta {
			got := head.Metadata[k]
			if k != "plain" && !strings.HasPrefix(got, "=?UTF-8?") {
				t.Fatalf("%s: %s = %q, want an RFC 2047 encoded word", key, k, got)
			}
			if d, err := dec.DecodeHeader(got); err != nil || d != want {
				t.Fatalf("%s: %s = %q decodes to %q (%v), want %q", key, k, got, d, err, want)
			}
		}
	}
	// An encoded word sent in is decoded before it is stored.
	if _, err := c.PutObject(ctx(t), &s3.PutObjectInput{Bucket: aws.String("meta"), Key: aws.String("enc"),
		Body: strings.NewReader("x"), Metadata: map[string]string{"who": "=?UTF-8?Q?Zo=C3=AB?=", "ascii": "=?UTF-8?B?YWJj?="}}); err != nil {
		t.Fatal(err)
	}
	got, err := c.GetObject(ctx(t), &s3.GetObjectInput{Bucket: aws.String("meta"), Key: aws.String("enc")})
	if err != nil {
		t.Fatal(err)
	}
	mustRead(t, got.Body)
	if d, _ := dec.DecodeHeader(got.Metadata["who"]); d != "Zoë" || got.Metadata["ascii"] != "abc" {
		t.Fatalf("encoded metadata: %v", got.Metadata)
	}
}
