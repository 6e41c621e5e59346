package jepsen

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io"
	"net/http"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// The multipart workload: clients upload objects in two parts (5 MiB,
// the minimum for every part but the last, then the value itself) and
// complete them, and GET them back, on a few keys per epoch
// ("m009/k0"). A complete is a write of its value and a GET a read: the
// register checker judges them (an acknowledged complete lost, or a
// read of an older object, is not linearizable), and every GET's body
// must be the two parts in order, byte for byte (multipart/corrupt).

// Kinds of the multipart workload.
const (
	OpMPComplete Kind = "mpu-complete" // create, upload 2 parts, complete: a write of Value
	OpMPGet      Kind = "mpu-get"      // GET of a multipart key: Value read, "" absent
)

// mpKeys is how many multipart keys an epoch has.
const mpKeys = 3

// mpPartSize is the first part's size: S3's (and shardstore's) minimum.
const mpPartSize = 5 << 20

func (k keySpace) mpPrefix(e int) string { return fmt.Sprintf("m%03d/", e) }

func (k keySpace) mpKeysOf(e int) []string {
	out := make([]string, mpKeys)
	for i := range out {
		out[i] = fmt.Sprintf("%sk%d", k.mpPrefix(e), i)
	}
	return out
}

// mpFirstPart is the first part of the object whose value is v: a
// pattern only v gives.
func mpFirstPart(v string) []byte {
	seed := sha256.Sum256([]byte(v))
	return bytes.Repeat(seed[:], mpPartSize/len(seed))
}

// mpStep runs one multipart operation: mostly uploads, some reads.
func (c *client) mpStep() Outcome {
	e := int(c.h.Now() / c.ks.epoch)
	keys := c.ks.mpKeysOf(e)
	key := keys[c.rng.IntN(len(keys))]
	if c.rng.IntN(100) < 40 {
		return c.mpGet(key)
	}
	return c.mpUpload(key)
}

// mpUpload creates an upload, sends both parts and completes it. Only
// the complete can write the key: a failure before it is a failed
// operation with no effect (the upload is aborted, best effort), one of
// the complete itself is unknown unless the node was never reached.
func (c *client) mpUpload(key string) Outcome {
	ctx, cancel := c.ctx()
	defer cancel()
	v := c.value()
	o := Op{Client: c.id, Node: c.node, Kind: OpMPComplete, Key: key, Value: v, Call: c.h.Now()}
	done := func(out Outcome, err error) Outcome {
		o.Return, o.Outcome, o.Err = c.h.Now(), out, short(err)
		c.h.Add(o)
		return out
	}
	cr, err := c.s3.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String(regBucket), Key: aws.String(key)})
	if err != nil {
		return done(Fail, err)
	}
	id := cr.UploadId
	abort := func() {
		actx, acancel := ctxTimeout(c.opTTL)
		defer acancel()
		_, _ = c.s3.AbortMultipartUpload(actx, &s3.AbortMultipartUploadInput{Bucket: aws.String(regBucket), Key: aws.String(key), UploadId: id})
	}
	var parts []types.CompletedPart
	for n, body := range [][]byte{mpFirstPart(v), []byte(v)} {
		num := int32(n + 1)
		up, err := c.s3.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String(regBucket), Key: aws.String(key), UploadId: id,
			PartNumber: aws.Int32(num), Body: bytes.NewReader(body)})
		if err != nil {
			abort()
			return done(Fail, fmt.Errorf("part %d: %w", num, err))
		}
		parts = append(parts, types.CompletedPart{PartNumber: aws.Int32(num), ETag: up.ETag})
	}
	_, err = c.s3.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: aws.String(regBucket), Key: aws.String(key), UploadId: id,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: parts}})
	out, _ := classify(err, true)
	if out != Ok {
		abort() // a complete that failed leaves the upload; one that took effect makes this a no-op
	}
	return done(out, err)
}

// mpGet reads a multipart key and checks its body is the two parts of
// one upload.
func (c *client) mpGet(key string) Outcome {
	ctx, cancel := c.ctx()
	defer cancel()
	o := Op{Client: c.id, Node: c.node, Kind: OpMPGet, Key: key, Call: c.h.Now()}
	resp, err := c.s3.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(regBucket), Key: aws.String(key)})
	var body []byte
	if err == nil {
		body, err = io.ReadAll(resp.Body)
		resp.Body.Close()
	}
	o.Return = c.h.Now()
	switch {
	case err == nil:
		o.Outcome, o.Value = Ok, mpValue(body)
	case status(err) == http.StatusNotFound:
		o.Outcome, o.Value = Ok, ""
	default:
		o.Outcome, o.Err = Fail, short(err)
	}
	c.h.Add(o)
	return o.Outcome
}

// mpValue is the value an object's body was uploaded with, or
// "?corrupt:..." when the body is not the two parts of one upload.
func mpValue(body []byte) string {
	if len(body) <= mpPartSize {
		return fmt.Sprintf("?corrupt:%d bytes", len(body))
	}
	v := string(body[mpPartSize:])
	if !bytes.Equal(body[:mpPartSize], mpFirstPart(v)) {
		return fmt.Sprintf("?corrupt:first part is not the one of %q", v)
	}
	return v
}

// CheckMultipart reports every multipart GET whose body was not the two
// parts of one upload, as written (the register checker reports the
// rest: a complete lost or read stale).
func CheckMultipart(ops []Op) []Anomaly {
	var out []Anomaly
	for _, o := range ops {
		if o.Kind == OpMPGet && o.Outcome == Ok && len(o.Value) > 0 && o.Value[0] == '?' {
			out = append(out, Anomaly{Checker: "multipart", Type: "corrupt", Key: o.Key, Detail: o.Value, Excerpt: []string{o.String()}, At: o.Call})
		}
	}
	return out
}
