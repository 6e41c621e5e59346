package e2e

import (
	"bufio"
	"bytes"
	"crypto/md5"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	mrand "math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/s3/manager"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/minio/minio-go/v7"
	mcreds "github.com/minio/minio-go/v7/pkg/credentials"
	"github.com/minio/minio-go/v7/pkg/encrypt"
)

// Server-side encryption at rest (issue 41) through real clients:
// SSE-S3, SSE-KMS and SSE-C with aws-sdk-go-v2 and minio-go over HTTPS,
// a real OpenBao transit engine as the KMS (rotation, rewrap, the key
// server going down and coming back), built-in key rotation through the
// key file, and --encrypt-all under kill -9.

// secretKey is a built-in KMS key, NAME:BASE64 of 32 random bytes.
func secretKey(t *testing.T, name string) string {
	t.Helper()
	k := make([]byte, 32)
	if _, err := rand.Read(k); err != nil {
		t.Fatal(err)
	}
	return name + ":" + base64.StdEncoding.EncodeToString(k)
}

// customerKey is an SSE-C key as the SDK sends it: the key and the MD5
// of the key, both base64.
type customerKey struct {
	raw         []byte
	key, keyMD5 string
}

func newCustomerKey(seed byte) customerKey {
	raw := pattern(32, seed)
	sum := md5.Sum(raw)
	return customerKey{raw: raw, key: base64.StdEncoding.EncodeToString(raw), keyMD5: base64.StdEncoding.EncodeToString(sum[:])}
}

func md5ETag(b []byte) string {
	sum := md5.Sum(b)
	return `"` + hex.EncodeToString(sum[:]) + `"`
}

// oneTry is c making a single attempt per call, so a 503 is seen as such
// (and fast) instead of after the SDK's retries.
func oneTry(c *s3.Client) *s3.Client {
	return s3.New(c.Options(), func(o *s3.Options) { o.RetryMaxAttempts = 1 })
}

// killServer crashes a single server with SIGKILL and waits until it is
// gone; the test's cleanup then finds nothing to stop.
func killServer(t *testing.T, s *server) {
	t.Helper()
	if len(s.peers) > 0 {
		t.Fatal("killServer is for one server process")
	}
	_ = s.cmd.Process.Signal(syscall.SIGKILL)
	<-s.exited
	s.exitErr = nil // killed on purpose
}

// restartIn stops s cleanly and starts a server again on dir.
func restartIn(t *testing.T, s *server, dir string, extra ...string) *server {
	t.Helper()
	if err := s.stop(); err != nil {
		t.Fatalf("stop: %v\n%s", err, s.stderr)
	}
	return startIn(t, dir, extra...)
}

// metricsText is the server's /shardstore/metrics page (the server runs
// with --metrics-public).
func metricsText(t *testing.T, s *server) string {
	t.Helper()
	resp, err := s.direct.Get(s.endpoint + "/shardstore/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body := string(mustRead(t, resp.Body))
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /shardstore/metrics: %s\n%s", resp.Status, body)
	}
	return body
}

// metricValue is the value of the sample name{labels} (labels as
// printed, e.g. `op="generate"`), -1 when there is none.
func metricValue(page, name, labels string) float64 {
	re := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + `\{([^}]*)\} (\S+)$`)
	for _, m := range re.FindAllStringSubmatch(page, -1) {
		if strings.Contains(m[1], labels) {
			v, err := strconv.ParseFloat(m[2], 64)
			if err == nil {
				return v
			}
		}
	}
	return -1
}

// rewrapReport runs `admin kms rewrap --json` and returns its last line
// (the report).
func rewrapReport(t *testing.T, s *server, dir string, args ...string) (scanned, rewrapped, failed int) {
	t.Helper()
	out, code := runBinary(t, dir, clientEnv(), append([]string{"admin", "kms", "rewrap", "--json", "--endpoint", s.endpoint}, args...)...)
	if code != 0 {
		t.Fatalf("admin kms rewrap: exit %d\n%s", code, out)
	}
	var last struct {
		Type                       string
		Scanned, Rewrapped, Failed int
	}
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "{") {
			last.Type = ""
			if err := json.Unmarshal(sc.Bytes(), &last); err != nil {
				t.Fatalf("admin kms rewrap --json: %v in %q", err, sc.Text())
			}
		}
	}
	if last.Type != "report" {
		t.Fatalf("admin kms rewrap --json ends without a report:\n%s", out)
	}
	return last.Scanned, last.Rewrapped, last.Failed
}

// sseObject is an object a test wrote and how to read it back.
type sseObject struct {
	key    string
	body   []byte
	mode   types.ServerSideEncryption // "" for SSE-C or none
	kmsKey string
	ssec   *customerKey
}

func (o sseObject) get(in *s3.GetObjectInput) *s3.GetObjectInput {
	if o.ssec != nil {
		in.SSECustomerAlgorithm, in.SSECustomerKey, in.SSECustomerKeyMD5 = aws.String("AES256"), aws.String(o.ssec.key), aws.String(o.ssec.keyMD5)
	}
	return in
}

// put writes o with the SDK and checks what the answer says of its
// encryption.
func (o sseObject) put(t *testing.T, c *s3.Client, bucket string) {
	t.Helper()
	in := &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(o.key), Body: bytes.NewReader(o.body), ServerSideEncryption: o.mode}
	if o.kmsKey != "" {
		in.SSEKMSKeyId = aws.String(o.kmsKey)
	}
	if o.ssec != nil {
		in.SSECustomerAlgorithm, in.SSECustomerKey, in.SSECustomerKeyMD5 = aws.String("AES256"), aws.String(o.ssec.key), aws.String(o.ssec.keyMD5)
	}
	out, err := c.PutObject(ctx(t), in)
	if err != nil {
		t.Fatalf("PUT %s (%q %s): %v", o.key, o.mode, o.kmsKey, err)
	}
	o.checkHeaders(t, "PUT", out.ServerSideEncryption, out.SSEKMSKeyId, out.SSECustomerAlgorithm, out.SSECustomerKeyMD5)
}

func (o sseObject) checkHeaders(t *testing.T, what string, mode types.ServerSideEncryption, kmsKey, alg, keyMD5 *string) {
	t.Helper()
	if mode != o.mode {
		t.Fatalf("%s %s: x-amz-server-side-encryption %q, want %q", what, o.key, mode, o.mode)
	}
	if o.kmsKey != "" && !strings.HasSuffix(aws.ToString(kmsKey), o.kmsKey) {
		t.Fatalf("%s %s: x-amz-server-side-encryption-aws-kms-key-id %q, want %q", what, o.key, aws.ToString(kmsKey), o.kmsKey)
	}
	if o.ssec != nil && (aws.ToString(alg) != "AES256" || aws.ToString(keyMD5) != o.ssec.keyMD5) {
		t.Fatalf("%s %s: SSE-C algorithm %q key MD5 %q, want AES256 and %q", what, o.key, aws.ToString(alg), aws.ToString(keyMD5), o.ssec.keyMD5)
	}
}

// check reads o back (GET, and a range) and checks content and headers.
func (o sseObject) check(t *testing.T, c *s3.Client, bucket, when string) {
	t.Helper()
	g, err := c.GetObject(ctx(t), o.get(&s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(o.key)}))
	if err != nil {
		t.Fatalf("GET %s %s: %v", o.key, when, err)
	}
	if got := mustRead(t, g.Body); !bytes.Equal(got, o.body) {
		t.Fatalf("GET %s %s: %d bytes differ from the %d written", o.key, when, len(got), len(o.body))
	}
	o.checkHeaders(t, "GET "+when, g.ServerSideEncryption, g.SSEKMSKeyId, g.SSECustomerAlgorithm, g.SSECustomerKeyMD5)
	if len(o.body) > 10 {
		from, to := len(o.body)/3, len(o.body)/3+len(o.body)/4
		g, err := c.GetObject(ctx(t), o.get(&s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(o.key),
			Range: aws.String(fmt.Sprintf("bytes=%d-%d", from, to))}))
		if err != nil {
			t.Fatalf("ranged GET %s %s: %v", o.key, when, err)
		}
		if got := mustRead(t, g.Body); !bytes.Equal(got, o.body[from:to+1]) {
			t.Fatalf("ranged GET %s %s: %d bytes differ from the %d written", o.key, when, len(got), to+1-from)
		}
	}
}

// TestSSEClients: a server with a built-in KMS over HTTPS, driven by
// aws-sdk-go-v2 (default settings) and minio-go: SSE-S3, SSE-KMS and
// SSE-C on PUT, GET (ranges), HEAD, multipart and copy, the answer
// headers, ETags, and the errors of a wrong or missing customer key.
func TestSSEClients(t *testing.T) {
	t.Setenv("SHARDSTORE_KMS_SECRET_KEY", secretKey(t, "e2e-key"))
	ca := newTestCA(t)
	dir := t.TempDir()
	s := startIn(t, dir, "--certs-dir", writeTLSCerts(t, ca, dir))
	if !strings.HasPrefix(s.endpoint, "https://") {
		t.Fatalf("endpoint %s, want https", s.endpoint)
	}
	c := s.root()

	t.Run("SDK", func(t *testing.T) { testSSESDK(t, c) })
	t.Run("MinioGo", func(t *testing.T) { testSSEMinio(t, s) })
}

func testSSESDK(t *testing.T, c *s3.Client) {
	cx := ctx(t)
	const b = "sse-sdk"
	createBucket(t, c, b)
	k1, k2 := newCustomerKey(21), newCustomerKey(22)
	// Sizes over several of the engine's encryption packages, not a
	// multiple of any.
	objs := []sseObject{
		{key: "s3.bin", body: pattern(300<<10+7, 1), mode: types.ServerSideEncryptionAes256},
		{key: "kms.bin", body: pattern(200<<10+3, 2), mode: types.ServerSideEncryptionAwsKms, kmsKey: "e2e-key"},
		{key: "ssec.bin", body: pattern(1<<20+333, 3), ssec: &k1},
		{key: "ssec-empty", body: nil, ssec: &k1},
		{key: "s3-tiny", body: []byte("tiny"), mode: types.ServerSideEncryptionAes256},
	}
	for _, o := range objs {
		o.put(t, c, b)
		o.check(t, c, b, "after PUT")
		with := o.get(&s3.GetObjectInput{})
		h, err := c.HeadObject(cx, &s3.HeadObjectInput{Bucket: aws.String(b), Key: aws.String(o.key),
			SSECustomerAlgorithm: with.SSECustomerAlgorithm, SSECustomerKey: with.SSECustomerKey, SSECustomerKeyMD5: with.SSECustomerKeyMD5})
		if err != nil {
			t.Fatalf("HEAD %s: %v", o.key, err)
		}
		o.checkHeaders(t, "HEAD", h.ServerSideEncryption, h.SSEKMSKeyId, h.SSECustomerAlgorithm, h.SSECustomerKeyMD5)
		if aws.ToInt64(h.ContentLength) != int64(len(o.body)) {
			t.Fatalf("HEAD %s: Content-Length %d, want %d", o.key, aws.ToInt64(h.ContentLength), len(o.body))
		}
		// S3's ETag is the MD5 of the data for SSE-S3 and plain objects,
		// not for SSE-KMS and SSE-C.
		if md5Like := aws.ToString(h.ETag) == md5ETag(o.body); md5Like != (o.mode == types.ServerSideEncryptionAes256) {
			t.Fatalf("HEAD %s (%q, SSE-C %t): ETag %s, MD5 of the data %s", o.key, o.mode, o.ssec != nil, aws.ToString(h.ETag), md5ETag(o.body))
		}
	}

	// SSE-KMS: without a key id the default key; by ARN; with a context;
	// a key the KMS does not have.
	kmsDefault := sseObject{key: "kms-default", body: pattern(5000, 4), mode: types.ServerSideEncryptionAwsKms}
	kmsDefault.put(t, c, b)
	if h, err := c.HeadObject(cx, &s3.HeadObjectInput{Bucket: aws.String(b), Key: aws.String("kms-default")}); err != nil || aws.ToString(h.SSEKMSKeyId) == "" {
		t.Fatalf("HEAD of an SSE-KMS object without a key id: %v, key id %q, want the default key named", err, aws.ToString(h.SSEKMSKeyId))
	}
	ctxJSON := base64.StdEncoding.EncodeToString([]byte(`{"department":"e2e"}`))
	arn := sseObject{key: "kms-arn", body: pattern(70_000, 5), mode: types.ServerSideEncryptionAwsKms, kmsKey: "e2e-key"}
	if _, err := c.PutObject(cx, &s3.PutObjectInput{Bucket: aws.String(b), Key: aws.String(arn.key), Body: bytes.NewReader(arn.body),
		ServerSideEncryption: arn.mode, SSEKMSKeyId: aws.String("arn:aws:kms:us-east-1:111122223333:key/e2e-key"),
		SSEKMSEncryptionContext: aws.String(ctxJSON), BucketKeyEnabled: aws.Bool(true)}); err != nil {
		t.Fatalf("PUT SSE-KMS by key ARN with a context and a bucket key: %v", err)
	}
	arn.check(t, c, b, "by ARN")
	// (minio-go below checks the context comes back.)
	if h, err := c.HeadObject(cx, &s3.HeadObjectInput{Bucket: aws.String(b), Key: aws.String(arn.key)}); err != nil || !aws.ToBool(h.BucketKeyEnabled) {
		t.Fatalf("HEAD of an SSE-KMS object with a bucket key: %v, bucket key %v", err, h != nil && aws.ToBool(h.BucketKeyEnabled))
	}
	_, err := c.PutObject(cx, &s3.PutObjectInput{Bucket: aws.String(b), Key: aws.String("kms-missing"), Body: strings.NewReader("x"),
		ServerSideEncryption: types.ServerSideEncryptionAwsKms, SSEKMSKeyId: aws.String("no-such-key")})
	wantCode(t, err, "KMS.NotFoundException", http.StatusBadRequest)

	// SSE-C: the wrong key is 403, none 400 (GET and HEAD), a key on an
	// object that has none 400, a key whose MD5 does not match 400.
	ssec := objs[2]
	in := func(k *customerKey) *s3.GetObjectInput {
		return sseObject{ssec: k}.get(&s3.GetObjectInput{Bucket: aws.String(b), Key: aws.String(ssec.key)})
	}
	_, err = c.GetObject(cx, in(&k2))
	wantCode(t, err, "AccessDenied", http.StatusForbidden)
	_, err = c.GetObject(cx, in(nil))
	wantCode(t, err, "InvalidRequest", http.StatusBadRequest)
	_, err = c.HeadObject(cx, &s3.HeadObjectInput{Bucket: aws.String(b), Key: aws.String(ssec.key),
		SSECustomerAlgorithm: aws.String("AES256"), SSECustomerKey: aws.String(k2.key), SSECustomerKeyMD5: aws.String(k2.keyMD5)})
	wantCode(t, err, "", http.StatusForbidden)
	_, err = c.HeadObject(cx, &s3.HeadObjectInput{Bucket: aws.String(b), Key: aws.String(ssec.key)})
	wantCode(t, err, "", http.StatusBadRequest)
	notC := in(&k1)
	notC.Key = aws.String("s3.bin")
	_, err = c.GetObject(cx, notC)
	wantCode(t, err, "", http.StatusBadRequest)
	badMD5 := in(&k1)
	badMD5.SSECustomerKeyMD5 = aws.String(k2.keyMD5)
	_, err = c.GetObject(cx, badMD5)
	wantCode(t, err, "InvalidArgument", http.StatusBadRequest)

	// Ranges: across the encryption packages, at the ends, a suffix.
	for _, o := range []sseObject{objs[0], objs[2]} {
		n := len(o.body)
		for _, r := range [][2]int{{0, 0}, {0, 65535}, {65530, 65545}, {65536, 131071}, {100_000, 250_000}, {n - 1, n - 1}, {n - 17, n - 1}} {
			g, err := c.GetObject(cx, o.get(&s3.GetObjectInput{Bucket: aws.String(b), Key: aws.String(o.key), Range: aws.String(fmt.Sprintf("bytes=%d-%d", r[0], r[1]))}))
			if err != nil {
				t.Fatalf("GET %s bytes=%d-%d: %v", o.key, r[0], r[1], err)
			}
			if want := fmt.Sprintf("bytes %d-%d/%d", r[0], r[1], n); aws.ToString(g.ContentRange) != want {
				t.Fatalf("GET %s bytes=%d-%d: Content-Range %q, want %q", o.key, r[0], r[1], aws.ToString(g.ContentRange), want)
			}
			if got := mustRead(t, g.Body); !bytes.Equal(got, o.body[r[0]:r[1]+1]) {
				t.Fatalf("GET %s bytes=%d-%d: %d bytes differ from the data", o.key, r[0], r[1], len(got))
			}
		}
		g, err := c.GetObject(cx, o.get(&s3.GetObjectInput{Bucket: aws.String(b), Key: aws.String(o.key), Range: aws.String("bytes=-1000")}))
		if err != nil {
			t.Fatalf("GET %s bytes=-1000: %v", o.key, err)
		}
		if got := mustRead(t, g.Body); !bytes.Equal(got, o.body[n-1000:]) {
			t.Fatalf("GET %s bytes=-1000: %d bytes differ", o.key, len(got))
		}
	}

	// Multipart with the transfer manager: SSE-C (the key on every
	// part) and SSE-S3 (on the upload), 12 MiB in 5 MiB parts; the
	// downloader's ranged GETs carry the key too.
	big := pattern(12<<20, 6)
	up := manager.NewUploader(c, func(u *manager.Uploader) { u.PartSize = 5 << 20; u.Concurrency = 2 })
	res, err := up.Upload(cx, &s3.PutObjectInput{Bucket: aws.String(b), Key: aws.String("mp-ssec"), Body: bytes.NewReader(big),
		SSECustomerAlgorithm: aws.String("AES256"), SSECustomerKey: aws.String(k1.key), SSECustomerKeyMD5: aws.String(k1.keyMD5)})
	if err != nil {
		t.Fatalf("multipart upload with SSE-C: %v", err)
	}
	if !strings.HasSuffix(aws.ToString(res.ETag), `-3"`) {
		t.Fatalf("multipart SSE-C ETag %s, want 3 parts", aws.ToString(res.ETag))
	}
	mp := sseObject{key: "mp-ssec", body: big, ssec: &k1}
	mp.check(t, c, b, "after a multipart upload")
	g, err := c.GetObject(cx, mp.get(&s3.GetObjectInput{Bucket: aws.String(b), Key: aws.String(mp.key), Range: aws.String("bytes=5242870-5242890")}))
	if err != nil {
		t.Fatalf("GET across the part boundary: %v", err)
	}
	if got := mustRead(t, g.Body); !bytes.Equal(got, big[5242870:5242891]) {
		t.Fatal("GET across the part boundary: bytes differ")
	}
	buf := manager.NewWriteAtBuffer(nil)
	if _, err := manager.NewDownloader(c, func(d *manager.Downloader) { d.PartSize = 4 << 20 }).Download(cx, buf,
		mp.get(&s3.GetObjectInput{Bucket: aws.String(b), Key: aws.String(mp.key)})); err != nil || !bytes.Equal(buf.Bytes(), big) {
		t.Fatalf("ranged download of the SSE-C multipart object: %d bytes, %v", len(buf.Bytes()), err)
	}
	_, err = c.GetObject(cx, sseObject{ssec: &k2}.get(&s3.GetObjectInput{Bucket: aws.String(b), Key: aws.String(mp.key), PartNumber: aws.Int32(2)}))
	wantCode(t, err, "AccessDenied", http.StatusForbidden)
	if _, err := up.Upload(cx, &s3.PutObjectInput{Bucket: aws.String(b), Key: aws.String("mp-s3"), Body: bytes.NewReader(big),
		ServerSideEncryption: types.ServerSideEncryptionAes256}); err != nil {
		t.Fatalf("multipart upload with SSE-S3: %v", err)
	}
	sseObject{key: "mp-s3", body: big, mode: types.ServerSideEncryptionAes256}.check(t, c, b, "after a multipart upload")
}

func testSSEMinio(t *testing.T, s *server) {
	cx := ctx(t)
	host := strings.TrimPrefix(s.endpoint, "https://")
	mc, err := minio.New(host, &minio.Options{Creds: mcreds.NewStaticV4(rootUser, rootPass, ""), Secure: true, Region: region,
		Transport: s.http.Transport})
	if err != nil {
		t.Fatal(err)
	}
	const b = "sse-minio"
	if err := mc.MakeBucket(cx, b, minio.MakeBucketOptions{Region: region}); err != nil {
		t.Fatal(err)
	}
	sseS3 := encrypt.NewSSE()
	sseKMS, err := encrypt.NewSSEKMS("e2e-key", map[string]string{"team": "storage"})
	if err != nil {
		t.Fatal(err)
	}
	k1, k2 := newCustomerKey(31), newCustomerKey(32)
	ssec, _ := encrypt.NewSSEC(k1.raw)
	ssec2, _ := encrypt.NewSSEC(k2.raw)

	put := func(key string, body []byte, sse encrypt.ServerSide, opts minio.PutObjectOptions) {
		t.Helper()
		opts.ServerSideEncryption = sse
		if _, err := mc.PutObject(cx, b, key, bytes.NewReader(body), int64(len(body)), opts); err != nil {
			t.Fatalf("minio-go PutObject %s (%s): %v", key, sse.Type(), err)
		}
	}
	get := func(key string, sse encrypt.ServerSide, want []byte) {
		t.Helper()
		obj, err := mc.GetObject(cx, b, key, minio.GetObjectOptions{ServerSideEncryption: sse})
		if err != nil {
			t.Fatalf("minio-go GetObject %s: %v", key, err)
		}
		if got := mustRead(t, obj); !bytes.Equal(got, want) {
			t.Fatalf("minio-go GetObject %s: %d bytes differ from the %d written", key, len(got), len(want))
		}
	}
	stat := func(key string, sse encrypt.ServerSide) minio.ObjectInfo {
		t.Helper()
		info, err := mc.StatObject(cx, b, key, minio.StatObjectOptions{ServerSideEncryption: sse})
		if err != nil {
			t.Fatalf("minio-go StatObject %s: %v", key, err)
		}
		return info
	}
	wantStatus := func(what string, err error, status int) {
		t.Helper()
		if r := minio.ToErrorResponse(err); err == nil || r.StatusCode != status {
			t.Fatalf("%s: %v (HTTP %d), want HTTP %d", what, err, r.StatusCode, status)
		}
	}

	small := pattern(150<<10+11, 7)
	put("m-s3", small, sseS3, minio.PutObjectOptions{})
	if h := stat("m-s3", nil).Metadata; h.Get("X-Amz-Server-Side-Encryption") != "AES256" {
		t.Fatalf("StatObject of an SSE-S3 object: x-amz-server-side-encryption %q", h.Get("X-Amz-Server-Side-Encryption"))
	}
	get("m-s3", nil, small)

	put("m-kms", small, sseKMS, minio.PutObjectOptions{})
	h := stat("m-kms", nil).Metadata
	gotCtx, _ := base64.StdEncoding.DecodeString(h.Get("X-Amz-Server-Side-Encryption-Context"))
	if h.Get("X-Amz-Server-Side-Encryption") != "aws:kms" || !strings.HasSuffix(h.Get("X-Amz-Server-Side-Encryption-Aws-Kms-Key-Id"), "e2e-key") ||
		!strings.Contains(string(gotCtx), `"team":"storage"`) {
		t.Fatalf("StatObject of an SSE-KMS object: %q, key %q, context %q", h.Get("X-Amz-Server-Side-Encryption"),
			h.Get("X-Amz-Server-Side-Encryption-Aws-Kms-Key-Id"), gotCtx)
	}
	get("m-kms", nil, small)

	// SSE-C, a single PUT and a multipart one (12 MiB in 5 MiB parts).
	put("m-ssec", small, ssec, minio.PutObjectOptions{})
	big := pattern(12<<20, 8)
	put("m-ssec-big", big, ssec, minio.PutObjectOptions{PartSize: 5 << 20})
	for _, key := range []string{"m-ssec", "m-ssec-big"} {
		info := stat(key, ssec)
		if info.Metadata.Get("X-Amz-Server-Side-Encryption-Customer-Algorithm") != "AES256" ||
			info.Metadata.Get("X-Amz-Server-Side-Encryption-Customer-Key-Md5") != k1.keyMD5 {
			t.Fatalf("StatObject %s with its key: SSE-C headers %v", key, info.Metadata)
		}
		_, err := mc.StatObject(cx, b, key, minio.StatObjectOptions{ServerSideEncryption: ssec2})
		wantStatus("StatObject "+key+" with the wrong key", err, http.StatusForbidden)
		_, err = mc.StatObject(cx, b, key, minio.StatObjectOptions{})
		wantStatus("StatObject "+key+" without a key", err, http.StatusBadRequest)
	}
	if info := stat("m-ssec-big", ssec); info.Size != int64(len(big)) || !strings.HasSuffix(info.ETag, "-3") {
		t.Fatalf("StatObject of the multipart SSE-C object: size %d ETag %s, want %d and 3 parts", info.Size, info.ETag, len(big))
	}
	get("m-ssec", ssec, small)
	get("m-ssec-big", ssec, big)
	obj, err := mc.GetObject(cx, b, "m-ssec-big", minio.GetObjectOptions{ServerSideEncryption: ssec2})
	if err == nil {
		_, err = io.ReadAll(obj)
	}
	wantStatus("GetObject with the wrong key", err, http.StatusForbidden)

	// Seek and ReadAt: ranged GETs with the key.
	obj, err = mc.GetObject(cx, b, "m-ssec-big", minio.GetObjectOptions{ServerSideEncryption: ssec})
	if err != nil {
		t.Fatal(err)
	}
	defer obj.Close()
	for _, off := range []int64{5<<20 - 10, 0, 65535, 10<<20 + 12345, int64(len(big)) - 100} {
		if _, err := obj.Seek(off, io.SeekStart); err != nil {
			t.Fatalf("Seek %d: %v", off, err)
		}
		got := make([]byte, 100)
		if _, err := io.ReadFull(obj, got); err != nil || !bytes.Equal(got, big[off:off+100]) {
			t.Fatalf("Seek %d and read 100 bytes: %v, equal %t", off, err, bytes.Equal(got, big[off:off+100]))
		}
	}
	got := make([]byte, 70_000)
	if n, err := obj.ReadAt(got, 3<<20); (err != nil && err != io.EOF) || n != len(got) || !bytes.Equal(got, big[3<<20:3<<20+70_000]) {
		t.Fatalf("ReadAt: %d bytes, %v", n, err)
	}

	// Copies: SSE-C to SSE-S3 (the source's key as the copy-source
	// key), SSE-C to SSE-C under another key, SSE-S3 to SSE-KMS.
	copyTo := func(dst string, dstSSE encrypt.ServerSide, src string, srcSSE encrypt.ServerSide) {
		t.Helper()
		if _, err := mc.CopyObject(cx, minio.CopyDestOptions{Bucket: b, Object: dst, Encryption: dstSSE},
			minio.CopySrcOptions{Bucket: b, Object: src, Encryption: srcSSE}); err != nil {
			t.Fatalf("minio-go CopyObject %s → %s: %v", src, dst, err)
		}
	}
	copyTo("c-s3", sseS3, "m-ssec-big", encrypt.SSECopy(ssec))
	if h := stat("c-s3", nil).Metadata; h.Get("X-Amz-Server-Side-Encryption") != "AES256" || h.Get("X-Amz-Server-Side-Encryption-Customer-Algorithm") != "" {
		t.Fatalf("StatObject of the SSE-C → SSE-S3 copy: %v", h)
	}
	get("c-s3", nil, big)
	copyTo("c-ssec2", ssec2, "m-ssec", encrypt.SSECopy(ssec))
	get("c-ssec2", ssec2, small)
	_, err = mc.StatObject(cx, b, "c-ssec2", minio.StatObjectOptions{ServerSideEncryption: ssec})
	wantStatus("StatObject of the re-keyed copy with the source's key", err, http.StatusForbidden)
	copyTo("c-kms", sseKMS, "m-s3", nil)
	if h := stat("c-kms", nil).Metadata; h.Get("X-Amz-Server-Side-Encryption") != "aws:kms" {
		t.Fatalf("StatObject of the SSE-S3 → SSE-KMS copy: %v", h)
	}
	get("c-kms", nil, small)
	// A copy of an SSE-C source without its key is refused.
	_, err = mc.CopyObject(cx, minio.CopyDestOptions{Bucket: b, Object: "c-nokey"}, minio.CopySrcOptions{Bucket: b, Object: "m-ssec"})
	wantStatus("CopyObject of an SSE-C source without its key", err, http.StatusBadRequest)
}

// TestSSEWithOpenBao: the KMS is a real OpenBao transit engine (a
// server on raft storage that can be killed and started again).
// SSE-S3 and SSE-KMS objects, `admin kms status`, the KMS metrics,
// `admin kms key create`, rotation at the key server, a restart, `admin
// kms rewrap`; then the key server goes down: encrypted reads and writes
// answer 503 (never wrong bytes) while unencrypted and SSE-C objects go
// on; once it is back, everything reads again.
func TestSSEWithOpenBao(t *testing.T) {
	singleNodeOnly(t, "it restarts the server and counts KMS calls in one process's metrics")
	bao := startBao(t)
	bao.call(t, "POST", "/v1/sys/mounts/transit", map[string]any{"type": "transit"}, nil)
	bao.call(t, "POST", "/v1/transit/keys/shardstore-key", map[string]any{"type": "aes256-gcm96"}, nil)
	t.Setenv("SHARDSTORE_KMS_VAULT_ENDPOINT", bao.endpoint())
	t.Setenv("SHARDSTORE_KMS_VAULT_KEY_NAME", "shardstore-key")
	t.Setenv("SHARDSTORE_KMS_VAULT_TOKEN", bao.root)
	dir := t.TempDir()
	flags := []string{"--metrics-public", "--allow-ssec-over-http"}
	s := startIn(t, dir, flags...)
	c := s.root()
	cx := ctx(t)
	const b = "bao"
	createBucket(t, c, b)

	ck := newCustomerKey(41)
	var old []sseObject // sealed under version 1 of shardstore-key
	for i := range 3 {
		old = append(old, sseObject{key: fmt.Sprintf("old/s3-%d", i), body: pattern(1000+i*90_000, byte(50+i)), mode: types.ServerSideEncryptionAes256})
	}
	for i := range 2 {
		old = append(old, sseObject{key: fmt.Sprintf("old/kms-%d", i), body: pattern(70_000+i, byte(60+i)), mode: types.ServerSideEncryptionAwsKms, kmsKey: "shardstore-key"})
	}
	others := []sseObject{
		{key: "plain", body: pattern(80_000, 70)},
		{key: "ssec", body: pattern(130_000, 71), ssec: &ck},
	}
	for _, o := range append(append([]sseObject{}, old...), others...) {
		o.put(t, c, b)
		o.check(t, c, b, "after PUT")
	}

	// The KMS answers, by `admin kms status` and `admin status`; the
	// metrics count its calls.
	out, code := runBinary(t, dir, clientEnv(), "admin", "kms", "status", "--endpoint", s.endpoint)
	if code != 0 || !strings.Contains(out, "vault, "+bao.endpoint()) || !strings.Contains(out, "default key shardstore-key; answers") {
		t.Fatalf("admin kms status: exit %d\n%s", code, out)
	}
	out, code = runBinary(t, dir, clientEnv(), "admin", "kms", "status", "--json", "--endpoint", s.endpoint)
	var st struct {
		Kind, DefaultKey string
		OK               bool
	}
	if code != 0 || json.Unmarshal([]byte(out), &st) != nil || st.Kind != "vault" || !st.OK || st.DefaultKey != "shardstore-key" {
		t.Fatalf("admin kms status --json: exit %d\n%s", code, out)
	}
	if out, code := runBinary(t, dir, clientEnv(), "admin", "status", "--endpoint", s.endpoint); code != 0 || !regexp.MustCompile(`(?m)^KMS +vault, .*answers`).MatchString(out) {
		t.Fatalf("admin status does not show the KMS answering: exit %d\n%s", code, out)
	}
	page := metricsText(t, s)
	if v := metricValue(page, "shardstore_kms_calls_total", `op="generate"`); v < float64(len(old)) {
		t.Fatalf("shardstore_kms_calls_total{op=\"generate\"} = %v after %d SSE-S3/SSE-KMS PUTs", v, len(old))
	}
	if v := metricValue(page, "shardstore_kms_calls_total", `op="decrypt"`); v < float64(len(old)) {
		t.Fatalf("shardstore_kms_calls_total{op=\"decrypt\"} = %v after reading %d SSE-S3/SSE-KMS objects", v, len(old))
	}
	if v := metricValue(page, "shardstore_kms_failures_total", `op="generate"`); v != 0 {
		t.Fatalf("shardstore_kms_failures_total{op=\"generate\"} = %v with the KMS up", v)
	}
	if v := metricValue(page, "shardstore_kms_up", `kind="vault"`); v != 1 {
		t.Fatalf("shardstore_kms_up{kind=\"vault\"} = %v with the KMS up", v)
	}

	// Keys: one created through the admin command serves SSE-KMS; one
	// that does not exist is refused.
	if out, code := runBinary(t, dir, clientEnv(), "admin", "kms", "key", "create", "another-key", "--endpoint", s.endpoint); code != 0 || !strings.Contains(out, "created key another-key") {
		t.Fatalf("admin kms key create another-key: exit %d\n%s", code, out)
	}
	if bao.keyVersion(t, "another-key") != 1 {
		t.Fatal("admin kms key create did not create the key at the key server")
	}
	if out, code := runBinary(t, dir, clientEnv(), "admin", "kms", "key", "create", "another-key", "--endpoint", s.endpoint); code == 0 || !strings.Contains(out, "exists") {
		t.Fatalf("admin kms key create of an existing key: exit %d, want a failure saying it exists\n%s", code, out)
	}
	another := sseObject{key: "another", body: pattern(90_000, 72), mode: types.ServerSideEncryptionAwsKms, kmsKey: "another-key"}
	another.put(t, c, b)
	another.check(t, c, b, "after PUT")
	_, err := c.PutObject(cx, &s3.PutObjectInput{Bucket: aws.String(b), Key: aws.String("nokey"), Body: strings.NewReader("x"),
		ServerSideEncryption: types.ServerSideEncryptionAwsKms, SSEKMSKeyId: aws.String("no-such-key")})
	wantCode(t, err, "KMS.NotFoundException", http.StatusBadRequest)

	// Rotation at the key server: new objects under version 2, old ones
	// still read, through a restart of shardstore too.
	bao.call(t, "POST", "/v1/transit/keys/shardstore-key/rotate", nil, nil)
	if v := bao.keyVersion(t, "shardstore-key"); v != 2 {
		t.Fatalf("shardstore-key at version %d after the rotation", v)
	}
	var fresh []sseObject
	for i := range 2 {
		fresh = append(fresh, sseObject{key: fmt.Sprintf("new/s3-%d", i), body: pattern(40_000+i*300_000, byte(80+i)), mode: types.ServerSideEncryptionAes256})
	}
	fresh = append(fresh, sseObject{key: "new/kms", body: pattern(123_456, 83), mode: types.ServerSideEncryptionAwsKms, kmsKey: "shardstore-key"})
	for _, o := range fresh {
		o.put(t, c, b)
	}
	s = restartIn(t, s, dir, flags...)
	c = s.root()
	all := append(append(append(append([]sseObject{}, old...), fresh...), others...), another)
	for _, o := range all {
		o.check(t, c, b, "after the rotation and a restart")
	}

	// Rewrap: the old objects' data keys move to version 2; a second
	// rewrap has nothing left to do. Then version 1 is retired at the
	// key server (min_decryption_version 2): everything still reads,
	// which it could not if a data key were still sealed under it.
	encrypted := len(old) + len(fresh) + 1 // + another
	scanned, rewrapped, failed := rewrapReport(t, s, dir)
	t.Logf("first rewrap: %d scanned, %d rewrapped, %d failed", scanned, rewrapped, failed)
	if scanned != len(all) || failed != 0 || rewrapped < len(old) || rewrapped > encrypted {
		t.Fatalf("first rewrap: %d scanned, %d rewrapped, %d failed; want %d scanned, at least the %d old versions rewrapped, none failed",
			scanned, rewrapped, failed, len(all), len(old))
	}
	t.Run("RewrapOnlyOlderVersions", func(t *testing.T) {
		if rewrapped != len(old) {
			t.Errorf("first rewrap rewrapped %d versions; only the %d sealed under an older key version need it", rewrapped, len(old))
		}
		_, again, _ := rewrapReport(t, s, dir)
		if again != 0 {
			t.Errorf("a second rewrap rewrapped %d versions; every data key was already under the newest key version, want 0", again)
		}
	})
	bao.call(t, "POST", "/v1/transit/keys/shardstore-key/config", map[string]any{"min_decryption_version": 2}, nil)
	for _, o := range all {
		o.check(t, c, b, "after the rewrap with key version 1 retired")
	}

	// The key server goes down (SIGKILL). Encrypted reads and writes
	// answer 503 ServiceUnavailable, fast, and never any bytes of the
	// object; unencrypted and SSE-C objects are unaffected.
	bao.kill()
	one := oneTry(c)
	for _, o := range []sseObject{old[1], fresh[0], old[3], another} {
		start := time.Now()
		_, err := one.GetObject(cx, &s3.GetObjectInput{Bucket: aws.String(b), Key: aws.String(o.key)})
		wantCode(t, err, "ServiceUnavailable", http.StatusServiceUnavailable)
		if d := time.Since(start); d > 5*time.Second {
			t.Fatalf("GET %s with the KMS down took %v", o.key, d)
		}
		_, err = one.GetObject(cx, &s3.GetObjectInput{Bucket: aws.String(b), Key: aws.String(o.key), Range: aws.String("bytes=10-20")})
		wantCode(t, err, "ServiceUnavailable", http.StatusServiceUnavailable)
		_, err = one.HeadObject(cx, &s3.HeadObjectInput{Bucket: aws.String(b), Key: aws.String(o.key)})
		if err != nil {
			t.Logf("HEAD %s with the KMS down: %v (HEAD needs no data key)", o.key, err)
		}
		// The raw answer: an S3 error document, none of the object.
		r := s.signed(t, "GET", "/"+b+"/"+o.key, nil)
		if r.status != http.StatusServiceUnavailable || r.code() != "ServiceUnavailable" || strings.Contains(r.body, string(o.body[:16])) {
			t.Fatalf("raw GET %s with the KMS down: %d %q\n%.300s", o.key, r.status, r.code(), r.body)
		}
	}
	for _, mode := range []types.ServerSideEncryption{types.ServerSideEncryptionAes256, types.ServerSideEncryptionAwsKms} {
		_, err := one.PutObject(cx, &s3.PutObjectInput{Bucket: aws.String(b), Key: aws.String("down/" + string(mode)), Body: strings.NewReader("while the KMS is down"),
			ServerSideEncryption: mode})
		wantCode(t, err, "ServiceUnavailable", http.StatusServiceUnavailable)
		_, err = one.HeadObject(cx, &s3.HeadObjectInput{Bucket: aws.String(b), Key: aws.String("down/" + string(mode))})
		wantCode(t, err, "", http.StatusNotFound)
	}
	others[0].check(t, c, b, "with the KMS down")
	others[1].check(t, c, b, "with the KMS down")
	downPlain := sseObject{key: "down/plain", body: pattern(50_000, 90)}
	downC := sseObject{key: "down/ssec", body: pattern(50_000, 91), ssec: &ck}
	for _, o := range []sseObject{downPlain, downC} {
		o.put(t, c, b)
		o.check(t, c, b, "written with the KMS down")
	}
	out, code = runBinary(t, dir, clientEnv(), "admin", "kms", "status", "--endpoint", s.endpoint)
	if code == 0 || !strings.Contains(out, "DOES NOT ANSWER") {
		t.Fatalf("admin kms status with the KMS down: exit %d, want a failure saying it does not answer\n%s", code, out)
	}
	page = metricsText(t, s)
	if v := metricValue(page, "shardstore_kms_failures_total", `op="decrypt"`); v < 4 {
		t.Fatalf("shardstore_kms_failures_total{op=\"decrypt\"} = %v after 4+ reads with the KMS down", v)
	}
	if v := metricValue(page, "shardstore_kms_failures_total", `op="generate"`); v < 2 {
		t.Fatalf("shardstore_kms_failures_total{op=\"generate\"} = %v after 2 writes with the KMS down", v)
	}

	// The key server returns with its keys: every object reads again,
	// encrypted writes work again; nothing written while it was down is
	// lost.
	bao.restart(t)
	for _, o := range append(all, downPlain, downC) {
		o.check(t, c, b, "once the KMS is back")
	}
	back := sseObject{key: "back/s3", body: pattern(33_333, 92), mode: types.ServerSideEncryptionAes256}
	back.put(t, c, b)
	back.check(t, c, b, "written once the KMS is back")
	if out, code := runBinary(t, dir, clientEnv(), "admin", "kms", "status", "--endpoint", s.endpoint); code != 0 || !strings.Contains(out, "answers") {
		t.Fatalf("admin kms status once the KMS is back: exit %d\n%s", code, out)
	}
}

// TestSSEBuiltinKeyRotation: the built-in KMS from a key file. A second
// secret under the same name is a new version of the key: after a
// restart the old objects read and new ones are sealed under it; `admin
// kms rewrap` moves the old data keys over, and a restart still reads
// everything. Built-in keys are not created at run time; SSE-C over
// plain HTTP is refused without --allow-ssec-over-http.
func TestSSEBuiltinKeyRotation(t *testing.T) {
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "kms-keys")
	if err := os.WriteFile(keyFile, []byte("# the e2e test's keys\n"+secretKey(t, "k1")+"\n"+secretKey(t, "k2")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SHARDSTORE_KMS_SECRET_KEY_FILE", keyFile)
	s := startIn(t, dir)
	c := s.root()
	const b = "rotate"
	createBucket(t, c, b)

	var old []sseObject // sealed under version 1 of k1
	for i := range 4 {
		old = append(old, sseObject{key: fmt.Sprintf("old/s3-%d", i), body: pattern(500+i*100_000, byte(100+i)), mode: types.ServerSideEncryptionAes256})
	}
	for i := range 2 {
		old = append(old, sseObject{key: fmt.Sprintf("old/kms-%d", i), body: pattern(60_000+i, byte(110+i)), mode: types.ServerSideEncryptionAwsKms, kmsKey: "k1"})
	}
	others := []sseObject{
		{key: "k2", body: pattern(77_000, 120), mode: types.ServerSideEncryptionAwsKms, kmsKey: "k2"},
		{key: "plain", body: pattern(1234, 121)},
	}
	for _, o := range append(append([]sseObject{}, old...), others...) {
		o.put(t, c, b)
	}
	ck := newCustomerKey(122)
	_, err := c.PutObject(ctx(t), &s3.PutObjectInput{Bucket: aws.String(b), Key: aws.String("ssec"), Body: strings.NewReader("x"),
		SSECustomerAlgorithm: aws.String("AES256"), SSECustomerKey: aws.String(ck.key), SSECustomerKeyMD5: aws.String(ck.keyMD5)})
	wantCode(t, err, "InvalidRequest", http.StatusBadRequest)
	if out, code := runBinary(t, dir, clientEnv(), "admin", "kms", "status", "--endpoint", s.endpoint); code != 0 || !strings.Contains(out, "builtin, in the server; default key k1; answers") {
		t.Fatalf("admin kms status: exit %d\n%s", code, out)
	}
	if out, code := runBinary(t, dir, clientEnv(), "admin", "kms", "key", "create", "k3", "--endpoint", s.endpoint); code == 0 || !strings.Contains(out, "SHARDSTORE_KMS_SECRET_KEY_FILE") {
		t.Fatalf("admin kms key create on a built-in KMS: exit %d, want a failure naming the key file\n%s", code, out)
	}

	// Rotate: a second secret for k1, appended.
	f, err := os.OpenFile(keyFile, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(secretKey(t, "k1") + "\n"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	s = restartIn(t, s, dir)
	c = s.root()
	for _, o := range append(append([]sseObject{}, old...), others...) {
		o.check(t, c, b, "after the rotation")
	}
	fresh := []sseObject{
		{key: "new/s3-0", body: pattern(9_000, 130), mode: types.ServerSideEncryptionAes256},
		{key: "new/s3-1", body: pattern(400_000, 131), mode: types.ServerSideEncryptionAes256},
		{key: "new/kms", body: pattern(66_000, 132), mode: types.ServerSideEncryptionAwsKms, kmsKey: "k1"},
	}
	for _, o := range fresh {
		o.put(t, c, b)
		o.check(t, c, b, "written after the rotation")
	}
	all := append(append(append([]sseObject{}, old...), fresh...), others...)

	encrypted := len(old) + len(fresh) + 1 // + k2
	scanned, rewrapped, failed := rewrapReport(t, s, dir, "--bucket", b)
	t.Logf("first rewrap: %d scanned, %d rewrapped, %d failed", scanned, rewrapped, failed)
	if scanned != len(all) || failed != 0 || rewrapped < len(old) || rewrapped > encrypted {
		t.Fatalf("first rewrap: %d scanned, %d rewrapped, %d failed; want %d scanned, at least the %d old versions rewrapped, none failed",
			scanned, rewrapped, failed, len(all), len(old))
	}
	t.Run("RewrapOnlyOlderVersions", func(t *testing.T) {
		if rewrapped != len(old) {
			t.Errorf("first rewrap rewrapped %d versions; only the %d sealed under version 1 of k1 need it", rewrapped, len(old))
		}
		_, again, _ := rewrapReport(t, s, dir, "--bucket", b)
		if again != 0 {
			t.Errorf("a second rewrap rewrapped %d versions; every data key was already under the newest key version, want 0", again)
		}
	})
	s = restartIn(t, s, dir)
	c = s.root()
	for _, o := range all {
		o.check(t, c, b, "after the rewrap and a restart")
	}
}

// TestEncryptAllLosesNothingOnKill: a server with --encrypt-all and a
// built-in KMS; writers PUT objects of 1 KiB to 2 MiB while the server is
// killed with SIGKILL at random moments (3 rounds). After every restart
// each acknowledged object reads back byte-identical and is SSE-S3
// encrypted; at the end no drive file holds a recognisable plaintext.
func TestEncryptAllLosesNothingOnKill(t *testing.T) {
	singleNodeOnly(t, "it kills one server process")
	t.Setenv("SHARDSTORE_KMS_SECRET_KEY", secretKey(t, "kill-key"))
	dir := t.TempDir()
	s := startIn(t, dir, "--encrypt-all")
	createBucket(t, s.root(), "kill")
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rnd := mrand.New(mrand.NewPCG(uint64(seed), 1))

	// A plaintext anyone would recognise, in an inline-sized object and
	// in a large one, acknowledged before the first kill.
	marker := []byte("SHARDSTORE-PLAINTEXT-MARKER-0123456789-")
	markerSmall := bytes.Repeat(marker, 1024/len(marker)+1)[:1024]
	markerBig := bytes.Repeat(marker, (1<<20)/len(marker)+1)[:1<<20]
	for key, body := range map[string][]byte{"marker-small": markerSmall, "marker-big": markerBig} {
		if _, err := s.root().PutObject(ctx(t), &s3.PutObjectInput{Bucket: aws.String("kill"), Key: aws.String(key), Body: bytes.NewReader(body)}); err != nil {
			t.Fatal(err)
		}
	}

	type ackedObject struct {
		size int
		sum  [32]byte
	}
	acked := map[string]ackedObject{"marker-small": {len(markerSmall), sha256.Sum256(markerSmall)}, "marker-big": {len(markerBig), sha256.Sum256(markerBig)}}
	var mu sync.Mutex
	cut := 0
	verify := func(c *s3.Client, when string) {
		t.Helper()
		mu.Lock()
		defer mu.Unlock()
		for key, want := range acked {
			g, err := c.GetObject(ctx(t), &s3.GetObjectInput{Bucket: aws.String("kill"), Key: aws.String(key)})
			if err != nil {
				t.Fatalf("GET %s %s: %v", key, when, err)
			}
			body := mustRead(t, g.Body)
			if len(body) != want.size || sha256.Sum256(body) != want.sum {
				t.Fatalf("GET %s %s: %d bytes that differ from the %d acknowledged", key, when, len(body), want.size)
			}
			if g.ServerSideEncryption != types.ServerSideEncryptionAes256 {
				t.Fatalf("GET %s %s: x-amz-server-side-encryption %q, want AES256 (--encrypt-all)", key, when, g.ServerSideEncryption)
			}
			h, err := c.HeadObject(ctx(t), &s3.HeadObjectInput{Bucket: aws.String("kill"), Key: aws.String(key)})
			if err != nil || h.ServerSideEncryption != types.ServerSideEncryptionAes256 {
				t.Fatalf("HEAD %s %s: %v, x-amz-server-side-encryption %q, want AES256", key, when, err, h.ServerSideEncryption)
			}
		}
	}

	const rounds, writers = 3, 4
	for round := range rounds {
		c := oneTry(s.root())
		cx := ctx(t)
		var stop atomic.Bool
		var wg sync.WaitGroup
		for w := range writers {
			wr := mrand.New(mrand.NewPCG(uint64(seed), uint64(round*writers+w+2)))
			wg.Add(1)
			go func() {
				defer wg.Done()
				for k := 0; !stop.Load(); k++ {
					// 1 KiB to 2 MiB, spread evenly over the powers of two.
					size := int(float64(int(1024)<<wr.IntN(11)) * (1 + wr.Float64()))
					size = min(size, 2<<20)
					body := make([]byte, size)
					for i := 0; i < len(body); i += 8 {
						v := wr.Uint64()
						for j := 0; j < 8 && i+j < len(body); j++ {
							body[i+j] = byte(v >> (8 * j))
						}
					}
					key := fmt.Sprintf("r%d/w%d/%d", round, w, k)
					_, err := c.PutObject(cx, &s3.PutObjectInput{Bucket: aws.String("kill"), Key: aws.String(key), Body: bytes.NewReader(body)})
					mu.Lock()
					if err == nil {
						acked[key] = ackedObject{size, sha256.Sum256(body)}
					} else {
						cut++
					}
					mu.Unlock()
					if err != nil && !stop.Load() {
						t.Errorf("PUT %s before the kill: %v", key, err)
						return
					}
				}
			}()
		}
		time.Sleep(time.Duration(700+rnd.IntN(1800)) * time.Millisecond)
		stop.Store(true)
		killServer(t, s)
		wg.Wait()
		if t.Failed() {
			t.FailNow()
		}
		s = startIn(t, dir, "--encrypt-all")
		verify(s.root(), fmt.Sprintf("after kill %d", round+1))
	}
	mu.Lock()
	t.Logf("%d objects acknowledged over %d kills, %d PUTs cut by a kill; every acknowledged one verified after every restart", len(acked), rounds, cut)
	mu.Unlock()

	// Drives hold ciphertext only: no file anywhere under the drives
	// holds the marker (a stretch of it shorter than an AES block
	// sequence would be found in any plaintext copy).
	if err := s.stop(); err != nil {
		t.Fatalf("stop: %v\n%s", err, s.stderr)
	}
	files, bytesRead := 0, int64(0)
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.Contains(p, string(filepath.Separator)+"drive") {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		files++
		bytesRead += int64(len(data))
		if bytes.Contains(data, marker) {
			t.Errorf("%s holds the plaintext marker", p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("no plaintext marker in %d drive files (%d MiB)", files, bytesRead>>20)
}
