package e2e

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/xml"
	"fmt"
	"hash/crc32"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/minio/minio-go/v7"
	mcreds "github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/shardstore/shardstore/internal/auth"
)

type rawResponse struct {
	status int
	header http.Header
	body   string
}

// s3Error is the code of an S3 XML error body, "" if none.
func (r rawResponse) code() string {
	var e struct {
		Code string `xml:"Code"`
	}
	_ = xml.Unmarshal([]byte(r.body), &e)
	return e.Code
}

func httpGet(u string) (rawResponse, error) {
	resp, err := http.Get(u)
	if err != nil {
		return rawResponse{}, fmt.Errorf("GET %s: %w", u, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return rawResponse{status: resp.StatusCode, header: resp.Header, body: string(b)}, err
}

// signed sends a SigV4-signed request as root with an unsigned payload.
// rawPath is sent exactly as given (already escaped).
func (s *server) signed(t *testing.T, method, rawPath string, body []byte, hdr ...string) rawResponse {
	t.Helper()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, s.endpoint+rawPath, rd)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	auth.SignRequest(req, auth.Identity{AccessKey: rootUser, SecretKey: rootPass}, region, time.Now(), "")
	resp, err := s.http.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, rawPath, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.Header.Get("X-Amz-Request-Id") == "" && resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Fatalf("%s %s: no x-amz-request-id", method, rawPath)
	}
	return rawResponse{status: resp.StatusCode, header: resp.Header, body: string(b)}
}

func getBody(t *testing.T, c *s3.Client, bucket, key string) []byte {
	t.Helper()
	g, err := c.GetObject(ctx(t), &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	if err != nil {
		t.Fatalf("get %s/%s: %v", bucket, key, err)
	}
	return mustRead(t, g.Body)
}

func TestHealthAndHeaders(t *testing.T) {
	s := startServer(t)
	for _, p := range []string{"/shardstore/health/live", "/shardstore/health/ready", "/shardstore/health/read",
		"/minio/health/live", "/minio/health/ready", "/minio/health/cluster", "/minio/health/cluster/read"} {
		r, err := httpGet(s.endpoint + p)
		if err != nil || r.status != 200 {
			t.Fatalf("%s: %+v %v", p, r, err)
		}
	}
	// Metrics need a bearer token of an identity allowed
	// admin:Prometheus (as MinIO's do).
	if r, err := httpGet(s.endpoint + "/shardstore/metrics"); err != nil || r.status != http.StatusUnauthorized ||
		!strings.HasPrefix(r.header.Get("WWW-Authenticate"), "Bearer") || strings.Contains(r.body, "shardstore_s3_requests_total") {
		t.Fatalf("metrics without a token: %d %v %q", r.status, err, r.body)
	}
	if r := s.metrics(t); !strings.Contains(r.body, "shardstore_s3_requests_total") {
		t.Fatalf("metrics: %q", r.body)
	}
	createBucket(t, s.root(), "hdrs")
	put := s.signed(t, "PUT", "/hdrs/k", []byte("hello"))
	if put.status != 200 || put.header.Get("ETag") != `"5d41402abc4b2a76b9719d911017c592"` {
		t.Fatalf("put: %+v", put)
	}
	g := s.signed(t, "GET", "/hdrs/k", nil)
	for _, h := range []string{"Date", "Last-Modified", "Content-Length", "Accept-Ranges", "X-Amz-Id-2", "X-Amz-Request-Id"} {
		if g.header.Get(h) == "" {
			t.Errorf("GET lacks %s", h)
		}
	}
	if _, err := http.ParseTime(g.header.Get("Last-Modified")); err != nil {
		t.Errorf("Last-Modified %q not an HTTP date", g.header.Get("Last-Modified"))
	}
	h := s.signed(t, "HEAD", "/hdrs/missing", nil)
	if h.status != 404 || h.body != "" {
		t.Fatalf("HEAD 404 must have no body: %+v", h)
	}
	e := s.signed(t, "GET", "/hdrs/missing", nil)
	if e.code() != "NoSuchKey" || !strings.Contains(e.body, "<RequestId>"+e.header.Get("X-Amz-Request-Id")+"</RequestId>") ||
		!strings.Contains(e.body, "<Resource>/hdrs/missing</Resource>") {
		t.Fatalf("error body: %s", e.body)
	}
	for _, sub := range []string{"analytics", "retention", "replication", "frobnicate"} {
		if r := s.signed(t, "GET", "/hdrs?"+sub, nil); r.status != 501 || r.code() != "NotImplemented" {
			t.Fatalf("?%s: %d %s", sub, r.status, r.body)
		}
	}
}

func TestHostileInput(t *testing.T) {
	s := startServer(t)
	c := s.root()
	cx := ctx(t)
	createBucket(t, c, "hostile")
	orig := pattern(64<<10, 9)
	if _, err := c.PutObject(cx, &s3.PutObjectInput{Bucket: aws.String("hostile"), Key: aws.String("keep"), Body: bytes.NewReader(orig)}); err != nil {
		t.Fatal(err)
	}
	intact := func() {
		t.Helper()
		if !bytes.Equal(getBody(t, c, "hostile", "keep"), orig) {
			t.Fatal("stored object changed")
		}
	}

	// Path tricks in keys are plain S3 keys: stored under the literal
	// name (layout v2 never turns a key into a path), nothing escapes the
	// drives, and each drive's top level holds only the system directory.
	for p, key := range map[string]string{"/hostile/../escape": "../escape", "/hostile/a/../../escape": "a/../../escape",
		"/hostile/./x": "./x", "/hostile/a/./b": "a/./b", "/hostile/%2E%2E/escape2": "../escape2"} {
		r := s.signed(t, "PUT", p, []byte("path:"+key))
		if r.status != 200 {
			t.Errorf("PUT %s: %d %s", p, r.status, r.body)
			continue
		}
		if got := getBody(t, c, "hostile", key); string(got) != "path:"+key {
			t.Errorf("key %q (PUT as %s) read back %q", key, p, got)
		}
	}
	for _, name := range []string{"escape", "escape2"} {
		if _, err := os.Stat(filepath.Join(filepath.Dir(s.drives), name)); err == nil {
			t.Fatal("a path trick wrote outside the drives")
		}
	}
	for i := 1; i <= 4; i++ {
		ents, err := os.ReadDir(fmt.Sprintf("%s%d", s.drives, i))
		if err != nil {
			t.Fatal(err)
		}
		if len(ents) != 1 || ents[0].Name() != ".shardstore.sys" {
			t.Fatalf("drive %d top level holds %v, want only .shardstore.sys", i, ents)
		}
	}
	// Key length limits.
	if r := s.signed(t, "PUT", "/hostile/"+strings.Repeat("k", 1025), []byte("x")); r.status != 400 || r.code() != "KeyTooLongError" {
		t.Errorf("1025-byte key: %d %s", r.status, r.body)
	}
	// Bad XML and oversized completes.
	cr, err := c.CreateMultipartUpload(cx, &s3.CreateMultipartUploadInput{Bucket: aws.String("hostile"), Key: aws.String("mp")})
	if err != nil {
		t.Fatal(err)
	}
	id := url.QueryEscape(aws.ToString(cr.UploadId))
	for _, body := range []string{"<CompleteMultipartUpload><Part>", "not xml at all", "", "<CompleteMultipartUpload></CompleteMultipartUpload>"} {
		if r := s.signed(t, "POST", "/hostile/mp?uploadId="+id, []byte(body)); r.status != 400 || r.code() != "MalformedXML" {
			t.Errorf("complete with %q: %d %s", body, r.status, r.body)
		}
	}
	var many bytes.Buffer
	many.WriteString("<CompleteMultipartUpload>")
	for i := 1; i <= 10001; i++ {
		fmt.Fprintf(&many, "<Part><PartNumber>%d</PartNumber><ETag>\"0123456789abcdef0123456789abcdef\"</ETag></Part>", i)
	}
	many.WriteString("</CompleteMultipartUpload>")
	if r := s.signed(t, "POST", "/hostile/mp?uploadId="+id, many.Bytes()); r.status != 400 || r.code() != "MalformedXML" {
		t.Errorf("10001-part complete: %d %s", r.status, r.code())
	}
	var tenK bytes.Buffer
	tenK.WriteString("<CompleteMultipartUpload>")
	for i := 1; i <= 10000; i++ {
		fmt.Fprintf(&tenK, "<Part><PartNumber>%d</PartNumber><ETag>\"0123456789abcdef0123456789abcdef\"</ETag></Part>", i)
	}
	tenK.WriteString("</CompleteMultipartUpload>")
	if r := s.signed(t, "POST", "/hostile/mp?uploadId="+id, tenK.Bytes()); r.status != 400 || r.code() != "InvalidPart" {
		t.Errorf("10000 unknown parts: %d %s", r.status, r.code())
	}
	if r := s.signed(t, "POST", "/hostile/mp?uploadId="+id, bytes.Repeat([]byte("<a>"), 2<<20)); r.status != 400 {
		t.Errorf("huge complete body: %d %s", r.status, r.code())
	}
	// Bad digests.
	if r := s.signed(t, "PUT", "/hostile/keep", []byte("evil"), "Content-MD5", "bm90IGFuIG1kNQ=="); r.code() != "InvalidDigest" {
		t.Errorf("malformed Content-MD5: %d %s", r.status, r.body)
	}
	if r := s.signed(t, "PUT", "/hostile/keep", []byte("evil"), "Content-MD5", "AAAAAAAAAAAAAAAAAAAAAA=="); r.code() != "BadDigest" {
		t.Errorf("wrong Content-MD5: %d %s", r.status, r.body)
	}
	if r := s.signed(t, "PUT", "/hostile/keep", []byte("evil"), "X-Amz-Checksum-Crc32", "AAAAAA=="); r.code() != "BadDigest" {
		t.Errorf("wrong crc32: %d %s", r.status, r.body)
	}
	if r := s.signed(t, "POST", "/hostile?delete", []byte("<Delete><Object><Key>keep</Key></Object></Delete>")); r.code() != "InvalidRequest" {
		t.Errorf("DeleteObjects without digest: %d %s", r.status, r.body)
	}
	if r := s.signed(t, "PUT", "/hostile/keep", []byte("evil"), "X-Amz-Acl", "everyone-gets-it"); r.code() != "InvalidArgument" {
		t.Errorf("bad canned ACL: %d %s", r.status, r.body)
	}
	intact()

	// A payload that does not match its signed SHA-256 is refused.
	evil := []byte("evil payload")
	other := sha256.Sum256([]byte("something else"))
	preq, _ := http.NewRequest("PUT", s.endpoint+"/hostile/keep", bytes.NewReader(evil))
	auth.SignRequest(preq, auth.Identity{AccessKey: rootUser, SecretKey: rootPass}, region, time.Now(), hex.EncodeToString(other[:]))
	if resp, err := http.DefaultClient.Do(preq); err != nil {
		t.Fatal(err)
	} else {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 400 || !strings.Contains(string(b), "XAmzContentSHA256Mismatch") {
			t.Errorf("payload hash mismatch: %d %s", resp.StatusCode, b)
		}
	}
	intact()

	// Truncated body: declare 1000 bytes, send 10, half-close.
	req, _ := http.NewRequest("PUT", s.endpoint+"/hostile/keep", nil)
	auth.SignRequest(req, auth.Identity{AccessKey: rootUser, SecretKey: rootPass}, region, time.Now(), "")
	conn, err := net.Dial("tcp", strings.TrimPrefix(s.endpoint, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(conn, "PUT /hostile/keep HTTP/1.1\r\nHost: %s\r\nContent-Length: 1000\r\n", req.Host)
	for k, v := range req.Header {
		fmt.Fprintf(conn, "%s: %s\r\n", k, v[0])
	}
	fmt.Fprintf(conn, "\r\n0123456789")
	_ = conn.(*net.TCPConn).CloseWrite()
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	if resp, err := http.ReadResponse(bufio.NewReader(conn), req); err == nil {
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 400 || !strings.Contains(string(b), "IncompleteBody") {
			t.Errorf("truncated body: %d %s", resp.StatusCode, b)
		}
	}
	conn.Close()
	intact()

	// Oversized headers are refused by the HTTP server.
	big, _ := http.NewRequest("GET", s.endpoint+"/hostile/keep", nil)
	big.Header.Set("X-Amz-Meta-Huge", strings.Repeat("h", 200<<10))
	if resp, err := http.DefaultClient.Do(big); err == nil {
		resp.Body.Close()
		if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
			t.Errorf("oversized header: %d", resp.StatusCode)
		}
	}
	// Too much user metadata.
	_, err = c.PutObject(cx, &s3.PutObjectInput{Bucket: aws.String("hostile"), Key: aws.String("keep"), Body: strings.NewReader("x"),
		Metadata: map[string]string{"big": strings.Repeat("m", 3000)}})
	wantCode(t, err, "MetadataTooLarge", 400)
	intact()

	// Keys with UTF-8 edges round-trip exactly and list in byte order.
	keys := []string{"ключ/日本語/🙂", "a b", "a+b=c&d", "100%", "q?x#y", "~!@$^*()[]{}';,", "é", "e\u0301",
		"\u200b", "tab\tkey", strings.Repeat("ü", 512), "trailing/", "new\nline"}
	for _, k := range keys {
		if _, err := c.PutObject(cx, &s3.PutObjectInput{Bucket: aws.String("hostile"), Key: aws.String(k), Body: strings.NewReader("v:" + k)}); err != nil {
			code, st := errCode(err)
			if st == 400 {
				t.Logf("key %q refused with %s (allowed)", k, code)
				continue
			}
			t.Fatalf("put %q: %v", k, err)
		}
		if got := getBody(t, c, "hostile", k); string(got) != "v:"+k {
			t.Fatalf("key %q read back %q", k, got)
		}
	}
	if r := s.signed(t, "PUT", "/hostile/bad%FFutf8", []byte("x")); r.status != 400 {
		t.Errorf("invalid UTF-8 key: %d %s", r.status, r.body)
	}
	intact()
}

func TestMinioClient(t *testing.T) {
	s := startServer(t)
	cx := ctx(t)
	mc, err := minio.New(strings.TrimPrefix(s.endpoint, "http://"), &minio.Options{
		Creds: mcreds.NewStaticV4(rootUser, rootPass, ""), Secure: false, Region: region})
	if err != nil {
		t.Fatal(err)
	}
	if err := mc.MakeBucket(cx, "minio", minio.MakeBucketOptions{Region: region}); err != nil {
		t.Fatal(err)
	}
	data := pattern(11<<20, 5)
	// A known size above PartSize makes minio-go upload in parts.
	info, err := mc.PutObject(cx, "minio", "dir/large.bin", bytes.NewReader(data), int64(len(data)),
		minio.PutObjectOptions{PartSize: 5 << 20, ContentType: "application/octet-stream", UserMetadata: map[string]string{"origin": "minio"}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(info.ETag, "-3") {
		t.Fatalf("expected a 3-part multipart ETag, got %q", info.ETag)
	}
	small := []byte("small object")
	if _, err := mc.PutObject(cx, "minio", "dir/small.txt", bytes.NewReader(small), int64(len(small)), minio.PutObjectOptions{}); err != nil {
		t.Fatal(err)
	}
	// Unknown size: minio-go streams it in parts.
	if _, err := mc.PutObject(cx, "minio", "streamed", io.LimitReader(bytes.NewReader(data), 6<<20), -1, minio.PutObjectOptions{PartSize: 5 << 20}); err != nil {
		t.Fatal(err)
	}
	obj, err := mc.GetObject(cx, "minio", "dir/large.bin", minio.GetObjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(obj)
	obj.Close()
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("minio GET: %d bytes %v", len(got), err)
	}
	var listed []string
	for o := range mc.ListObjects(cx, "minio", minio.ListObjectsOptions{Recursive: true}) {
		if o.Err != nil {
			t.Fatal(o.Err)
		}
		listed = append(listed, o.Key)
	}
	if strings.Join(listed, ",") != "dir/large.bin,dir/small.txt,streamed" {
		t.Fatalf("listed %v", listed)
	}
	var top []string
	for o := range mc.ListObjects(cx, "minio", minio.ListObjectsOptions{}) {
		if o.Err != nil {
			t.Fatal(o.Err)
		}
		top = append(top, o.Key)
	}
	sort.Strings(top)
	if strings.Join(top, ",") != "dir/,streamed" {
		t.Fatalf("top-level %v", top)
	}
	u, err := mc.PresignedGetObject(cx, "minio", "dir/small.txt", 5*time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	r, err := httpGet(u.String())
	if err != nil || r.status != 200 || r.body != string(small) {
		t.Fatalf("presigned GET: %+v %v", r, err)
	}
	// Tampering with the presigned URL is caught.
	bad := strings.Replace(u.String(), "small.txt", "large.bin", 1)
	if r, err := httpGet(bad); err != nil || r.status != 403 {
		t.Fatalf("tampered presigned GET: %d %v", r.status, err)
	}
	st, err := mc.StatObject(cx, "minio", "dir/large.bin", minio.StatObjectOptions{})
	if err != nil || st.Size != int64(len(data)) || st.UserMetadata["Origin"] != "minio" {
		t.Fatalf("stat: %+v %v", st, err)
	}
	objs := make(chan minio.ObjectInfo, 3)
	for _, k := range listed {
		objs <- minio.ObjectInfo{Key: k}
	}
	close(objs)
	for e := range mc.RemoveObjects(cx, "minio", objs, minio.RemoveObjectsOptions{}) {
		t.Fatalf("remove %s: %v", e.ObjectName, e.Err)
	}
	if err := mc.RemoveBucket(cx, "minio"); err != nil {
		t.Fatal(err)
	}
}

// TestGracefulShutdown checks SIGTERM lets an in-flight upload finish and
// the process exits 0.
func TestGracefulShutdown(t *testing.T) {
	singleNodeOnly(t, "the SIGTERM of one server process with a request in flight to it")
	s := startServer(t)
	createBucket(t, s.root(), "shut")
	data := pattern(1<<20, 6)
	pr, pw := io.Pipe()
	req, err := http.NewRequest("PUT", s.endpoint+"/shut/inflight", pr)
	if err != nil {
		t.Fatal(err)
	}
	req.ContentLength = int64(len(data))
	auth.SignRequest(req, auth.Identity{AccessKey: rootUser, SecretKey: rootPass}, region, time.Now(), "")
	type result struct {
		status int
		err    error
	}
	done := make(chan result, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			done <- result{err: err}
			return
		}
		resp.Body.Close()
		done <- result{status: resp.StatusCode}
	}()
	if _, err := pw.Write(data[:len(data)/2]); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond) // the request is now being served
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	if _, err := pw.Write(data[len(data)/2:]); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	r := <-done
	if r.err != nil || r.status != 200 {
		t.Fatalf("in-flight PUT during shutdown: %+v", r)
	}
	select {
	case <-s.exited:
	case <-time.After(20 * time.Second):
		t.Fatal("server did not exit after SIGTERM")
	}
	if s.exitErr != nil {
		t.Fatalf("exit: %v\n%s", s.exitErr, s.stderr)
	}
	// New connections are refused once it is gone.
	dctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if c, err := (&net.Dialer{}).DialContext(dctx, "tcp", strings.TrimPrefix(s.endpoint, "http://")); err == nil {
		c.Close()
		t.Fatal("still accepting after shutdown")
	}
}

// TestDefaultCredentialsAndEmbeddedDrives runs the server with no drive
// arguments and no credentials in the environment.
func TestDefaultCredentialsAndEmbeddedDrives(t *testing.T) {
	singleNodeOnly(t, "the embedded default is one server process")
	dir := t.TempDir()
	cmd := startEmbedded(t, dir)
	if !strings.Contains(cmd.stderr.String(), "WARNING") || !strings.Contains(cmd.stderr.String(), "shardstoreadmin") {
		t.Fatalf("no credentials warning:\n%s", cmd.stderr)
	}
	entries, err := os.ReadDir(filepath.Join(dir, "data"))
	if err != nil || len(entries) != 16 {
		t.Fatalf("embedded drives: %d entries, %v", len(entries), err)
	}
	c := cmd.client("shardstoreadmin", "shardstoreadmin")
	if _, err := c.ListBuckets(ctx(t), &s3.ListBucketsInput{}); err != nil {
		t.Fatal(err)
	}
}

// TestTrailingChecksum sends aws-chunked uploads with a signed trailing
// x-amz-checksum-crc32, as SDKs do over TLS.
func TestTrailingChecksum(t *testing.T) {
	s := startServer(t)
	c := s.root()
	createBucket(t, c, "trail")
	data := pattern(200<<10, 7)
	sum := crc32.ChecksumIEEE(data)
	good := base64.StdEncoding.EncodeToString([]byte{byte(sum >> 24), byte(sum >> 16), byte(sum >> 8), byte(sum)})
	send := func(key, value string) rawResponse {
		req, err := http.NewRequest("PUT", s.endpoint+"/trail/"+key, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("X-Amz-Trailer", "x-amz-checksum-crc32")
		req.Header.Set("X-Amz-Sdk-Checksum-Algorithm", "CRC32")
		tr := http.Header{}
		tr.Set("X-Amz-Checksum-Crc32", value)
		if _, err := auth.SignStreamingRequest(req, auth.Identity{AccessKey: rootUser, SecretKey: rootPass}, region, time.Now(),
			auth.StreamingPayloadTrailer, data, []int{64 << 10}, tr); err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return rawResponse{status: resp.StatusCode, header: resp.Header, body: string(b)}
	}
	if r := send("ok", good); r.status != 200 || r.header.Get("X-Amz-Checksum-Crc32") != good {
		t.Fatalf("trailer upload: %d %v %s", r.status, r.header, r.body)
	}
	h, err := c.HeadObject(ctx(t), &s3.HeadObjectInput{Bucket: aws.String("trail"), Key: aws.String("ok"), ChecksumMode: types.ChecksumModeEnabled})
	if err != nil || aws.ToString(h.ChecksumCRC32) != good {
		t.Fatalf("stored trailer checksum: %v %v", h, err)
	}
	if !bytes.Equal(getBody(t, c, "trail", "ok"), data) {
		t.Fatal("chunked body decoded wrong")
	}
	if r := send("ok", "AAAAAA=="); r.status != 400 || r.code() != "BadDigest" {
		t.Fatalf("wrong trailer checksum: %d %s", r.status, r.body)
	}
	if !bytes.Equal(getBody(t, c, "trail", "ok"), data) {
		t.Fatal("object changed by a refused upload")
	}
	// A chunk altered in flight fails its chunk signature.
	req, _ := http.NewRequest("PUT", s.endpoint+"/trail/ok", nil)
	enc, err := auth.SignStreamingRequest(req, auth.Identity{AccessKey: rootUser, SecretKey: rootPass}, region, time.Now(),
		auth.StreamingPayload, pattern(100<<10, 8), []int{64 << 10}, nil)
	if err != nil {
		t.Fatal(err)
	}
	tampered := append([]byte(nil), enc...)
	tampered[len(tampered)/2] ^= 0xff
	req.Body = io.NopCloser(bytes.NewReader(tampered))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 403 && resp.StatusCode != 400 {
		t.Fatalf("tampered chunk: %d %s", resp.StatusCode, b)
	}
	if !bytes.Equal(getBody(t, c, "trail", "ok"), data) {
		t.Fatal("object changed by a tampered chunked upload")
	}
}

// TestVirtualHostAndRequestLog drives the server with virtual-host-style
// addressing (bucket in the Host header) through a dialer that sends every
// host name to the server, and checks --log-requests logs each request.
func TestVirtualHostAndRequestLog(t *testing.T) {
	s := startServer(t, "--domain", "s3.shardstore.test", "--log-requests", "--log-level", "info")
	addr := strings.TrimPrefix(s.endpoint, "http://")
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	dialer := &net.Dialer{Timeout: 5 * time.Second}
	hc := &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return dialer.DialContext(ctx, network, addr)
		},
	}}
	c := s3.New(s3.Options{
		Region:       region,
		BaseEndpoint: aws.String("http://s3.shardstore.test:" + port),
		Credentials:  s.root().Options().Credentials,
		HTTPClient:   hc,
	})
	cx := ctx(t)
	if _, err := c.CreateBucket(cx, &s3.CreateBucketInput{Bucket: aws.String("vhost")}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.PutObject(cx, &s3.PutObjectInput{Bucket: aws.String("vhost"), Key: aws.String("a/b.txt"), Body: strings.NewReader("virtual")}); err != nil {
		t.Fatal(err)
	}
	// The same object is visible path-style.
	if got := getBody(t, s.root(), "vhost", "a/b.txt"); string(got) != "virtual" {
		t.Fatalf("path-style read: %q", got)
	}
	out, err := c.ListObjectsV2(cx, &s3.ListObjectsV2Input{Bucket: aws.String("vhost")})
	if err != nil || len(out.Contents) != 1 {
		t.Fatalf("vhost list: %+v %v", out, err)
	}
	if _, err := c.DeleteObject(cx, &s3.DeleteObjectInput{Bucket: aws.String("vhost"), Key: aws.String("a/b.txt")}); err != nil {
		t.Fatal(err)
	}
	log := s.stderr.String()
	for _, want := range []string{"api=CreateBucket", "api=PutObject", "api=ListObjectsV2", "bucket=vhost"} {
		if !strings.Contains(log, want) {
			t.Errorf("request log lacks %q:\n%s", want, log)
		}
	}
}

// TestReadinessFollowsQuorum removes drives under a running server: the
// readiness probe must turn 503 while liveness stays 200.
func TestReadinessFollowsQuorum(t *testing.T) {
	s := startServer(t)
	createBucket(t, s.root(), "quorum")
	for i := 1; i <= 3; i++ {
		if err := os.RemoveAll(fmt.Sprintf("%s%d", s.drives, i)); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		r, err := httpGet(s.endpoint + "/shardstore/health/ready")
		if err != nil {
			t.Fatal(err)
		}
		if r.status == http.StatusServiceUnavailable {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("ready still %d 30s after losing 3 of 4 drives", r.status)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if r, err := httpGet(s.endpoint + "/shardstore/health/live"); err != nil || r.status != 200 {
		t.Fatalf("live: %+v %v", r, err)
	}
	// Writes fail with a retryable 503, not a crash or a 500.
	_, err := s.root().PutObject(ctx(t), &s3.PutObjectInput{Bucket: aws.String("quorum"), Key: aws.String("k"), Body: strings.NewReader("x")})
	if _, st := errCode(err); err == nil || st != 503 {
		t.Fatalf("object write without quorum: %v", err)
	}
	if clusterNodes == 0 {
		// A cluster keeps bucket records in its consensus group, which
		// the node processes (all alive here) still form: a bucket can
		// be made. One server keeps them on its drives.
		_, err = s.root().CreateBucket(ctx(t), &s3.CreateBucketInput{Bucket: aws.String("noquorum")})
		if _, st := errCode(err); err == nil || st != 503 {
			t.Fatalf("bucket write without quorum: %v", err)
		}
	}
}

// metrics reads /shardstore/metrics as Prometheus would: with the bearer
// token of the scrape configuration `shardstore admin prometheus
// generate` prints for root (given the test's CA with --ca-cert when the
// server speaks TLS).
func (s *server) metrics(t testing.TB) rawResponse {
	t.Helper()
	args := []string{"admin", "prometheus", "generate"}
	if s.caFile != "" {
		args = append(args, "--ca-cert", s.caFile)
	}
	cmd := exec.Command(binary, args...)
	cmd.Env = append(os.Environ(), "SHARDSTORE_ENDPOINT="+s.endpoint,
		"SHARDSTORE_ROOT_USER="+rootUser, "SHARDSTORE_ROOT_PASSWORD="+rootPass)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	m := regexp.MustCompile(`(?m)^  bearer_token: (\S+)$`).FindSubmatch(out)
	if err != nil || m == nil || stderr.Len() > 0 {
		t.Fatalf("admin prometheus generate: %v\n%s%s", err, out, stderr.String())
	}
	req, err := http.NewRequest(http.MethodGet, s.endpoint+"/shardstore/metrics", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+string(m[1]))
	resp, err := s.direct.Do(req)
	if err != nil {
		t.Fatalf("GET metrics: %v", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET metrics with the generated token: %s %v\n%s", resp.Status, err, b)
	}
	return rawResponse{status: resp.StatusCode, header: resp.Header, body: string(b)}
}
