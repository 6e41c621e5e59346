package auth

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"hash"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/minio/minio-go/v7/pkg/signer"
)

var testID = Identity{AccessKey: "AKTESTUSER", SecretKey: "secret/key+with=chars", DisplayName: "tester"}

// outcome is what the test server saw for one request.
type outcome struct {
	req     *Request
	verr    error
	body    []byte
	readErr error
	trailer http.Header
}

// verifyServer runs a real HTTP server (127.0.0.1) whose handler verifies
// every request with v and reads the body the way the S3 layer will.
type verifyServer struct {
	*httptest.Server
	mu   sync.Mutex
	seen []outcome
}

func newVerifyServer(t *testing.T, v *Verifier, useTLS bool) *verifyServer {
	t.Helper()
	s := &verifyServer{}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var o outcome
		o.req, o.verr = v.Verify(r)
		if o.verr == nil {
			o.body, o.readErr = io.ReadAll(o.req.Body)
			o.trailer = o.req.Trailer()
		}
		s.mu.Lock()
		s.seen = append(s.seen, o)
		s.mu.Unlock()
		if o.verr != nil || o.readErr != nil {
			w.WriteHeader(http.StatusForbidden)
			return
		}
		w.Header().Set("ETag", `"d41d8cd98f00b204e9800998ecf8427e"`)
		if r.Method == http.MethodGet {
			w.Write([]byte("hello"))
		}
	})
	if useTLS {
		s.Server = httptest.NewTLSServer(h)
	} else {
		s.Server = httptest.NewServer(h)
	}
	t.Cleanup(s.Close)
	return s
}

func (s *verifyServer) last(t *testing.T) outcome {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.seen) == 0 {
		t.Fatal("server saw no request")
	}
	return s.seen[len(s.seen)-1]
}

func testVerifier() *Verifier {
	return &Verifier{Region: "us-east-1", Users: NewUsers(testID)}
}

func sdkCreds() aws.Credentials {
	return aws.Credentials{AccessKeyID: testID.AccessKey, SecretAccessKey: testID.SecretKey}
}

// s3Path escapes an object key the way S3 clients put it on the wire.
func s3Path(bucket, key string) string {
	return "/" + bucket + "/" + uriEncode(key, true)
}

var awkwardKeys = []string{
	"plain.txt",
	"dir/sub dir/file name.txt",
	"unicode/ключ-日本語-😀",
	"chars/a+b!c'd(e)f*g$h&i=j;k:l@m,n",
	"percent/100%25 sure%",
	"tilde~and_under-dash.dot",
	"double//slash/./and/../dots",
}

func TestSDKSignerHeaderRoundTrip(t *testing.T) {
	srv := newVerifyServer(t, testVerifier(), false)
	sgn := v4.NewSigner(func(o *v4.SignerOptions) { o.DisableURIPathEscaping = true }) // S3 mode
	for _, key := range awkwardKeys {
		for _, unsigned := range []bool{false, true} {
			body := []byte("payload for " + key)
			u, _ := url.Parse(srv.URL + s3Path("bucket", key) + "?tagging&x-id=Put%20Object&list-type=2&prefix=a%2Fb&empty=")
			r, _ := http.NewRequest(http.MethodPut, u.String(), bytes.NewReader(body))
			r.Header.Set("X-Amz-Meta-Note", "  spaced    value  ")
			r.Header.Add("X-Amz-Meta-Multi", "one")
			r.Header.Add("X-Amz-Meta-Multi", "two")
			r.Header.Set("Content-Type", "text/plain")
			hash := UnsignedPayload
			if !unsigned {
				sum := sha256.Sum256(body)
				hash = hex.EncodeToString(sum[:])
			}
			r.Header.Set("X-Amz-Content-Sha256", hash)
			if err := sgn.SignHTTP(context.Background(), sdkCreds(), r, hash, "s3", "us-east-1", time.Now()); err != nil {
				t.Fatal(err)
			}
			resp, err := http.DefaultClient.Do(r)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			o := srv.last(t)
			if o.verr != nil || o.readErr != nil {
				t.Fatalf("key %q unsigned=%v: verify=%v read=%v", key, unsigned, o.verr, o.readErr)
			}
			if !bytes.Equal(o.body, body) || o.req.Identity.AccessKey != testID.AccessKey || o.req.PayloadHash != hash {
				t.Fatalf("key %q: got body %q identity %+v", key, o.body, o.req.Identity)
			}
		}
	}
}

func TestSDKPresignerRoundTrip(t *testing.T) {
	srv := newVerifyServer(t, testVerifier(), false)
	sgn := v4.NewSigner(func(o *v4.SignerOptions) { o.DisableURIPathEscaping = true })
	for _, key := range awkwardKeys {
		for _, method := range []string{http.MethodGet, http.MethodPut} {
			r, _ := http.NewRequest(method, srv.URL+s3Path("bucket", key)+"?X-Amz-Expires=900&versionId=v%2B1", nil)
			// An x-amz-* header is hoisted into the query by the SDK presigner.
			r.Header.Set("X-Amz-Meta-Owner", "me")
			signedURL, hdr, err := sgn.PresignHTTP(context.Background(), sdkCreds(), r, UnsignedPayload, "s3", "us-east-1", time.Now())
			if err != nil {
				t.Fatal(err)
			}
			body := "presigned body"
			var rdr io.Reader
			if method == http.MethodPut {
				rdr = strings.NewReader(body)
			}
			req, _ := http.NewRequest(method, signedURL, rdr)
			for k, vs := range hdr {
				if !strings.EqualFold(k, "host") {
					req.Header[k] = vs
				}
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			o := srv.last(t)
			if o.verr != nil || o.readErr != nil {
				t.Fatalf("%s %q: verify=%v read=%v (url %s)", method, key, o.verr, o.readErr, signedURL)
			}
			if !o.req.Presigned {
				t.Fatalf("not reported as presigned")
			}
			if method == http.MethodPut && string(o.body) != body {
				t.Fatalf("body = %q", o.body)
			}
		}
	}
}

// newS3Client returns a real aws-sdk-go-v2 S3 client aimed at srv.
func newS3Client(srv *verifyServer, opts ...func(*s3.Options)) *s3.Client {
	return s3.New(s3.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(srv.URL),
		UsePathStyle: true,
		Credentials:  aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) { return sdkCreds(), nil }),
		HTTPClient:   srv.Client(),
	}, opts...)
}

func TestS3ClientPutObject(t *testing.T) {
	data := bytes.Repeat([]byte("0123456789abcdef"), 20000) // 320000 bytes: several aws-chunked chunks
	for _, useTLS := range []bool{false, true} {
		for _, algo := range []types.ChecksumAlgorithm{"", types.ChecksumAlgorithmCrc32, types.ChecksumAlgorithmSha256} {
			srv := newVerifyServer(t, testVerifier(), useTLS)
			c := newS3Client(srv)
			in := &s3.PutObjectInput{Bucket: aws.String("bucket"), Key: aws.String("dir/obj name+1"), Body: bytes.NewReader(data), ChecksumAlgorithm: algo}
			if _, err := c.PutObject(context.Background(), in); err != nil {
				t.Fatalf("tls=%v algo=%q: PutObject: %v", useTLS, algo, err)
			}
			o := srv.last(t)
			if o.verr != nil || o.readErr != nil {
				t.Fatalf("tls=%v algo=%q: verify=%v read=%v", useTLS, algo, o.verr, o.readErr)
			}
			if !bytes.Equal(o.body, data) {
				t.Fatalf("tls=%v algo=%q: stored %d bytes, want %d", useTLS, algo, len(o.body), len(data))
			}
			if o.req.ContentLength != int64(len(data)) {
				t.Fatalf("ContentLength = %d", o.req.ContentLength)
			}
			t.Logf("tls=%v algo=%q: payload mode %s, trailer %v", useTLS, algo, o.req.PayloadHash, o.trailer)
			if o.req.PayloadHash == StreamingUnsignedPayloadTrailer && len(o.trailer) == 0 {
				t.Fatalf("unsigned trailer upload without trailers")
			}
		}
	}
}

func TestS3PresignClient(t *testing.T) {
	srv := newVerifyServer(t, testVerifier(), false)
	pc := s3.NewPresignClient(newS3Client(srv))
	put, err := pc.PresignPutObject(context.Background(), &s3.PutObjectInput{Bucket: aws.String("bucket"), Key: aws.String("a key/with spaces")}, s3.WithPresignExpires(10*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(put.Method, put.URL, strings.NewReader("via presigned put"))
	for k, vs := range put.SignedHeader {
		if !strings.EqualFold(k, "host") {
			req.Header[k] = vs
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if o := srv.last(t); o.verr != nil || o.readErr != nil || string(o.body) != "via presigned put" {
		t.Fatalf("presigned PUT: verify=%v read=%v body=%q", o.verr, o.readErr, o.body)
	}
	get, err := pc.PresignGetObject(context.Background(), &s3.GetObjectInput{Bucket: aws.String("bucket"), Key: aws.String("ünïcode/k")})
	if err != nil {
		t.Fatal(err)
	}
	resp, err = http.Get(get.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if o := srv.last(t); o.verr != nil {
		t.Fatalf("presigned GET: %v", o.verr)
	}
}

func TestS3ClientWrongSecretRejected(t *testing.T) {
	srv := newVerifyServer(t, testVerifier(), false)
	c := newS3Client(srv, func(o *s3.Options) {
		o.Credentials = aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: testID.AccessKey, SecretAccessKey: "not-the-secret"}, nil
		})
		o.RetryMaxAttempts = 1
	})
	_, err := c.GetObject(context.Background(), &s3.GetObjectInput{Bucket: aws.String("b"), Key: aws.String("k")})
	if err == nil {
		t.Fatal("GetObject with a wrong secret succeeded")
	}
	if e := asAuthErr(srv.last(t).verr); e == nil || e.Code != CodeSignatureDoesNotMatch {
		t.Fatalf("verify error = %v, want SignatureDoesNotMatch", srv.last(t).verr)
	}
}

// minio-go implements the signed aws-chunked modes (with and without
// trailer), which the AWS SDK for Go no longer sends; its framing differs in
// details (trailer lines end in "\n", extra CRLFs), which the decoder must
// accept.
func TestMinioGoStreamingSigners(t *testing.T) {
	srv := newVerifyServer(t, testVerifier(), false)
	data := bytes.Repeat([]byte("minio streaming "), 13000) // 208000 bytes, several 64 KiB chunks
	cases := []struct {
		name    string
		trailer http.Header
		sign    func(r *http.Request) *http.Request
		mode    string
	}{
		{"signed", nil, func(r *http.Request) *http.Request {
			return signer.StreamingSignV4(r, testID.AccessKey, testID.SecretKey, "", "us-east-1", int64(len(data)), time.Now().UTC(), sha256Hasher{sha256.New()})
		}, StreamingPayload},
		{"signed-trailer", http.Header{"X-Amz-Checksum-Crc32c": {"sOO8/Q=="}}, func(r *http.Request) *http.Request {
			return signer.StreamingSignV4(r, testID.AccessKey, testID.SecretKey, "", "us-east-1", int64(len(data)), time.Now().UTC(), sha256Hasher{sha256.New()})
		}, StreamingPayloadTrailer},
		{"unsigned-trailer", http.Header{"X-Amz-Checksum-Crc32": {"AAAAAA=="}}, func(r *http.Request) *http.Request {
			// minio-go's own client sets the payload mode first, then signs with the trailer.
			trailer := r.Trailer
			r.Trailer = nil
			r.Header.Set("X-Amz-Content-Sha256", StreamingUnsignedPayloadTrailer)
			return signer.SignV4Trailer(*r, testID.AccessKey, testID.SecretKey, "", "us-east-1", trailer)
		}, StreamingUnsignedPayloadTrailer},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, _ := http.NewRequest(http.MethodPut, srv.URL+"/bucket/obj", bytes.NewReader(data))
			r.Trailer = tc.trailer
			r = tc.sign(r)
			resp, err := http.DefaultClient.Do(r)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			o := srv.last(t)
			if o.verr != nil || o.readErr != nil {
				t.Fatalf("verify=%v read=%v", o.verr, o.readErr)
			}
			if o.req.PayloadHash != tc.mode || !bytes.Equal(o.body, data) {
				t.Fatalf("mode %s, %d bytes", o.req.PayloadHash, len(o.body))
			}
			for k, v := range tc.trailer {
				if got := o.trailer.Get(k); got != v[0] {
					t.Fatalf("trailer %s = %q, want %q (all: %v)", k, got, v[0], o.trailer)
				}
			}
		})
	}
}

func TestMinioGoPresignAndHeader(t *testing.T) {
	srv := newVerifyServer(t, testVerifier(), false)
	r, _ := http.NewRequest(http.MethodGet, srv.URL+s3Path("bucket", "some key+x"), nil)
	p := signer.PreSignV4(*r, testID.AccessKey, testID.SecretKey, "", "us-east-1", 600)
	resp, err := http.DefaultClient.Do(p)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if o := srv.last(t); o.verr != nil {
		t.Fatalf("minio-go presigned: %v", o.verr)
	}
	body := []byte("header signed by minio-go")
	r, _ = http.NewRequest(http.MethodPut, srv.URL+s3Path("bucket", "k"), bytes.NewReader(body))
	sum := sha256.Sum256(body)
	r.Header.Set("X-Amz-Content-Sha256", hex.EncodeToString(sum[:]))
	s := signer.SignV4(*r, testID.AccessKey, testID.SecretKey, "", "us-east-1")
	resp, err = http.DefaultClient.Do(s)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if o := srv.last(t); o.verr != nil || o.readErr != nil || !bytes.Equal(o.body, body) {
		t.Fatalf("minio-go header: verify=%v read=%v", o.verr, o.readErr)
	}
}

// sha256Hasher adapts crypto/sha256 to the md5simd.Hasher minio-go's
// streaming signer hashes chunks with.
type sha256Hasher struct{ hash.Hash }

func (sha256Hasher) Close() {}

func asAuthErr(err error) *Error {
	e, _ := err.(*Error)
	return e
}
