package migrate

import (
	"bytes"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// TestPartsReader: a multipart object read part by part comes out whole
// when its parts make its ETag; when they do not, the read fails before
// the last byte is given out, so the import's PUT never completes.
func TestPartsReader(t *testing.T) {
	parts := [][]byte{bytes.Repeat([]byte("a"), 70000), []byte("bc"), []byte("d")}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, err := strconv.Atoi(r.URL.Query().Get("partNumber"))
		if err != nil || n < 1 || n > len(parts) {
			http.Error(w, "bad part", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Length", strconv.Itoa(len(parts[n-1])))
		w.Write(parts[n-1])
	}))
	defer srv.Close()
	c, err := newS3Client(Endpoint{URL: srv.URL, AccessKey: "k", SecretKey: "s"})
	if err != nil {
		t.Fatal(err)
	}
	var sums []byte
	for _, p := range parts {
		s := md5.Sum(p)
		sums = append(sums, s[:]...)
	}
	all := md5.Sum(sums)
	good := fmt.Sprintf("%s-%d", hex.EncodeToString(all[:]), len(parts))
	in := s3.GetObjectInput{Bucket: aws.String("b"), Key: aws.String("k")}
	for _, bufSize := range []int{1, 2, 7, 1 << 16} {
		r := newPartsReader(t.Context(), c, in, good, int32(len(parts)))
		got, err := readWith(r, bufSize)
		if err != nil || !bytes.Equal(got, bytes.Join(parts, nil)) {
			t.Fatalf("buffer %d: %d bytes, %v", bufSize, len(got), err)
		}
	}
	bad := strings.Repeat("0", 32) + "-3"
	r := newPartsReader(t.Context(), c, in, bad, 3)
	got, err := readWith(r, 4096)
	if err == nil || len(got) >= 70003 {
		t.Fatalf("a wrong ETag: %d bytes given out, %v", len(got), err)
	}
	for etag, want := range map[string]int32{good: 3, strings.Repeat("a", 32): 0, strings.Repeat("a", 32) + "-0": 0,
		strings.Repeat("a", 32) + "-10001": 0, "x-2": 0, strings.Repeat("a", 32) + "-10000": 10000} {
		if got := multipartParts(etag); got != want {
			t.Errorf("multipartParts(%q) = %d, want %d", etag, got, want)
		}
	}
}

func readWith(r io.Reader, size int) ([]byte, error) {
	var out []byte
	buf := make([]byte, size)
	for {
		n, err := r.Read(buf)
		out = append(out, buf[:n]...)
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
	}
}

// TestProgressLine: the ETA is the longer of what the version rate and
// the byte rate give for what is left, and unknown before anything is
// copied or past the totals.
func TestProgressLine(t *testing.T) {
	for _, c := range []struct {
		st   S3Stats
		want string
	}{
		// 10 of 100 versions in 10s, bytes far behind: the bytes decide.
		{S3Stats{Copied: 10, Bytes: 10 << 20, Total: 100, TotalBytes: 1000 << 20}, "10 of 100 versions (10.0%), 10.0 of 1000.0 MiB, ETA 16m30s"},
		// Small objects: the versions decide.
		{S3Stats{Copied: 10, Bytes: 10, Skipped: 40, SkippedBytes: 40, Total: 100, TotalBytes: 100}, "50 of 100 versions (50.0%), 0.0 of 0.0 MiB, ETA 50s"},
		{S3Stats{Skipped: 5, Total: 100, TotalBytes: 100}, "ETA unknown"},
		{S3Stats{Copied: 200, Bytes: 10, Total: 100, TotalBytes: 100}, "ETA unknown"},
		{S3Stats{Copied: 100, Bytes: 100, Total: 100, TotalBytes: 100}, "ETA 0s"},
	} {
		got := progressLine(c.st, 10*time.Second)
		if !strings.HasSuffix(got, c.want) || !strings.HasPrefix(got, "copied ") {
			t.Errorf("%+v: %q, want it to end in %q", c.st, got, c.want)
		}
	}
	if got := progressLine(S3Stats{Copied: 1}, 0); strings.Contains(got, "ETA") || strings.Contains(got, "Inf") || strings.Contains(got, "NaN") {
		t.Errorf("no totals, no time: %q", got)
	}
}
