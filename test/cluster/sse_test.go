package cluster

import (
	"bytes"
	"crypto/md5"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// TestSSEAcrossNodes: 4 nodes with the same built-in KMS key. SSE-S3,
// SSE-KMS and SSE-C objects written through one node read back (whole
// and ranged, with the right answer headers) through every other; a
// multipart SSE-C upload whose create, parts and complete go to
// different nodes; bucket default encryption set through one node
// applies to a PUT through another; the wrong customer key is refused
// by every node.
func TestSSEAcrossNodes(t *testing.T) {
	var extra []string
	if !useTLS {
		extra = append(extra, "--allow-ssec-over-http") // SSE-C needs TLS otherwise
	}
	c := startKMSCluster(t, 4, 1, extra...)
	cx := ctx(t)
	if _, err := c.client(0).CreateBucket(cx, &s3.CreateBucketInput{Bucket: aws.String("sse")}); err != nil {
		t.Fatal(err)
	}
	key := randBytes(32)
	sum := md5.Sum(key)
	k64, md5b64 := base64.StdEncoding.EncodeToString(key), base64.StdEncoding.EncodeToString(sum[:])
	wrong := randBytes(32)
	wsum := md5.Sum(wrong)

	type object struct {
		name   string
		body   []byte
		mode   types.ServerSideEncryption
		kmsKey string
		ssec   bool
	}
	objs := []object{
		{name: "s3", body: randBytes(700_000), mode: types.ServerSideEncryptionAes256},
		{name: "kms", body: randBytes(90_000), mode: types.ServerSideEncryptionAwsKms, kmsKey: kmsKeyName},
		{name: "ssec", body: randBytes(300_000), ssec: true},
		{name: "tiny", body: []byte("inline"), mode: types.ServerSideEncryptionAes256},
	}
	getIn := func(o object, rng string) *s3.GetObjectInput {
		in := &s3.GetObjectInput{Bucket: aws.String("sse"), Key: aws.String(o.name)}
		if rng != "" {
			in.Range = aws.String(rng)
		}
		if o.ssec {
			in.SSECustomerAlgorithm, in.SSECustomerKey, in.SSECustomerKeyMD5 = aws.String("AES256"), aws.String(k64), aws.String(md5b64)
		}
		return in
	}
	read := func(i int, o object, via string) {
		t.Helper()
		g, err := c.client(i).GetObject(cx, getIn(o, ""))
		if err != nil {
			t.Fatalf("GET %s via node %d (%s): %v", o.name, i+1, via, err)
		}
		got := readAll(t, g.Body)
		if !bytes.Equal(got, o.body) {
			t.Fatalf("GET %s via node %d (%s): %d bytes differ from the %d written", o.name, i+1, via, len(got), len(o.body))
		}
		if g.ServerSideEncryption != o.mode || (o.ssec && aws.ToString(g.SSECustomerKeyMD5) != md5b64) ||
			(o.kmsKey != "" && aws.ToString(g.SSEKMSKeyId) != o.kmsKey) {
			t.Fatalf("GET %s via node %d: encryption %q, KMS key %q, SSE-C key MD5 %q", o.name, i+1, g.ServerSideEncryption,
				aws.ToString(g.SSEKMSKeyId), aws.ToString(g.SSECustomerKeyMD5))
		}
		if len(o.body) > 100_000 {
			g, err := c.client(i).GetObject(cx, getIn(o, "bytes=65000-99999"))
			if err != nil {
				t.Fatalf("ranged GET %s via node %d: %v", o.name, i+1, err)
			}
			if got := readAll(t, g.Body); !bytes.Equal(got, o.body[65000:100000]) {
				t.Fatalf("ranged GET %s via node %d: bytes differ", o.name, i+1)
			}
		}
	}
	for n, o := range objs {
		in := &s3.PutObjectInput{Bucket: aws.String("sse"), Key: aws.String(o.name), Body: bytes.NewReader(o.body), ServerSideEncryption: o.mode}
		if o.kmsKey != "" {
			in.SSEKMSKeyId = aws.String(o.kmsKey)
		}
		if o.ssec {
			in.SSECustomerAlgorithm, in.SSECustomerKey, in.SSECustomerKeyMD5 = aws.String("AES256"), aws.String(k64), aws.String(md5b64)
		}
		if _, err := c.client(n%4).PutObject(cx, in); err != nil {
			t.Fatalf("PUT %s via node %d: %v", o.name, n%4+1, err)
		}
	}
	for i := range c.nodes {
		for _, o := range objs {
			read(i, o, "written through another")
		}
		in := getIn(objs[2], "")
		in.SSECustomerKey, in.SSECustomerKeyMD5 = aws.String(base64.StdEncoding.EncodeToString(wrong)), aws.String(base64.StdEncoding.EncodeToString(wsum[:]))
		_, err := c.client(i).GetObject(cx, in)
		var re *awshttp.ResponseError
		if err == nil || !errors.As(err, &re) || re.HTTPStatusCode() != http.StatusForbidden {
			t.Fatalf("GET of the SSE-C object with the wrong key via node %d: %v, want 403", i+1, err)
		}
	}

	// Multipart SSE-C: create through node 1, parts through nodes 2 and
	// 3, complete through node 4.
	mp := object{name: "mp-ssec", body: randBytes(5<<20 + 777_777), ssec: true}
	create, err := c.client(0).CreateMultipartUpload(cx, &s3.CreateMultipartUploadInput{Bucket: aws.String("sse"), Key: aws.String(mp.name),
		SSECustomerAlgorithm: aws.String("AES256"), SSECustomerKey: aws.String(k64), SSECustomerKeyMD5: aws.String(md5b64)})
	if err != nil {
		t.Fatal(err)
	}
	var parts []types.CompletedPart
	for p, chunk := range [][]byte{mp.body[:5<<20], mp.body[5<<20:]} {
		up, err := c.client(1+p).UploadPart(cx, &s3.UploadPartInput{Bucket: aws.String("sse"), Key: aws.String(mp.name), UploadId: create.UploadId,
			PartNumber: aws.Int32(int32(p + 1)), Body: bytes.NewReader(chunk),
			SSECustomerAlgorithm: aws.String("AES256"), SSECustomerKey: aws.String(k64), SSECustomerKeyMD5: aws.String(md5b64)})
		if err != nil {
			t.Fatalf("UploadPart %d via node %d: %v", p+1, p+2, err)
		}
		parts = append(parts, types.CompletedPart{ETag: up.ETag, PartNumber: aws.Int32(int32(p + 1))})
	}
	if _, err := c.client(3).CompleteMultipartUpload(cx, &s3.CompleteMultipartUploadInput{Bucket: aws.String("sse"), Key: aws.String(mp.name),
		UploadId: create.UploadId, MultipartUpload: &types.CompletedMultipartUpload{Parts: parts}}); err != nil {
		t.Fatalf("CompleteMultipartUpload via node 4: %v", err)
	}
	for i := range c.nodes {
		read(i, mp, "multipart over every node")
		g, err := c.client(i).GetObject(cx, getIn(mp, fmt.Sprintf("bytes=%d-%d", 5<<20-50, 5<<20+49)))
		if err != nil {
			t.Fatalf("GET across the part boundary via node %d: %v", i+1, err)
		}
		if got := readAll(t, g.Body); !bytes.Equal(got, mp.body[5<<20-50:5<<20+50]) {
			t.Fatalf("GET across the part boundary via node %d: bytes differ", i+1)
		}
	}

	// Bucket default encryption (SSE-KMS) set through node 1 applies to
	// a plain PUT through node 3.
	if _, err := c.client(0).PutBucketEncryption(cx, &s3.PutBucketEncryptionInput{Bucket: aws.String("sse"),
		ServerSideEncryptionConfiguration: &types.ServerSideEncryptionConfiguration{Rules: []types.ServerSideEncryptionRule{{
			ApplyServerSideEncryptionByDefault: &types.ServerSideEncryptionByDefault{SSEAlgorithm: types.ServerSideEncryptionAwsKms, KMSMasterKeyID: aws.String(kmsKeyName)},
		}}}}); err != nil {
		t.Fatalf("PutBucketEncryption via node 1: %v", err)
	}
	def := object{name: "by-default", body: randBytes(123_456), mode: types.ServerSideEncryptionAwsKms, kmsKey: kmsKeyName}
	if _, err := c.client(2).PutObject(cx, &s3.PutObjectInput{Bucket: aws.String("sse"), Key: aws.String(def.name), Body: bytes.NewReader(def.body)}); err != nil {
		t.Fatalf("PUT via node 3: %v", err)
	}
	for i := range c.nodes {
		read(i, def, "bucket default encryption")
	}
}

func readAll(t *testing.T, r io.ReadCloser) []byte {
	t.Helper()
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
