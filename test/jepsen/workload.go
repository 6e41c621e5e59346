package jepsen

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"
)

// Buckets of the workloads: a plain one (the register keys) and a
// versioned one.
const (
	regBucket = "jepsen-register"
	verBucket = "jepsen-versions"
)

// keySpace names the register keys: KeysPerEpoch keys under a prefix
// that changes every Epoch, so each key's history (what porcupine
// searches) stays short however long the run.
type keySpace struct {
	epoch time.Duration
	keys  int
}

func (k keySpace) prefix(at time.Duration) string { return fmt.Sprintf("e%03d/", int(at/k.epoch)) }

func (k keySpace) keysOf(prefix string) []string {
	out := make([]string, k.keys)
	for i := range out {
		out[i] = fmt.Sprintf("%sk%d", prefix, i)
	}
	return out
}

// client is one worker of a workload, bound to one node.
type client struct {
	id    int
	node  int
	s3    *s3.Client
	h     *History
	rng   *rand.Rand
	ks    keySpace
	opTTL time.Duration
	seq   int
	// last value this client saw per key: what its If-Match writes ask for.
	last map[string]string
	// step runs one operation of the client's workload.
	step func() Outcome
}

func (c *client) value() string {
	c.seq++
	return fmt.Sprintf("c%d.%d", c.id, c.seq)
}

// classify turns a client error into an outcome: a refused precondition
// is a definite failure that observed the state; a request that never
// reached a node (connection refused) had no effect; anything else on a
// write is unknown.
func classify(err error, write bool) (Outcome, bool) {
	if err == nil {
		return Ok, false
	}
	var re *awshttp.ResponseError
	if errors.As(err, &re) {
		switch re.HTTPStatusCode() {
		case http.StatusPreconditionFailed:
			return Fail, true
		}
	}
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Op == "dial" {
		return Fail, false
	}
	var ae smithy.APIError
	if errors.As(err, &ae) && strings.HasPrefix(ae.ErrorMessage(), "This node is starting") {
		// A node still starting answers every S3 request so before it
		// reaches the engine (cmd/shardstore/cluster.go): no effect.
		return Fail, false
	}
	if write {
		return Unknown, false
	}
	return Fail, false
}

func status(err error) int {
	var re *awshttp.ResponseError
	if errors.As(err, &re) {
		return re.HTTPStatusCode()
	}
	return 0
}

func short(err error) string {
	if err == nil {
		return ""
	}
	s := err.Error()
	if i := strings.Index(s, "api error "); i >= 0 {
		s = s[i+len("api error "):]
	} else if i := strings.LastIndex(s, ": "); i >= 0 && len(s) > 120 {
		s = s[i+2:]
	}
	if len(s) > 120 {
		s = s[:120]
	}
	return s
}

// registerStep runs one random operation on a register key.
func (c *client) registerStep() Outcome {
	at := c.h.Now()
	keys := c.ks.keysOf(c.ks.prefix(at))
	key := keys[c.rng.IntN(len(keys))]
	r := c.rng.IntN(100)
	switch {
	case r < 40:
		return c.get(key)
	case r < 62:
		return c.put(key, OpPut, "")
	case r < 72:
		return c.put(key, OpPutIfAbsent, "")
	case r < 84:
		m := c.last[key]
		if m == "" {
			m = "c0.0" // a value nobody wrote: the PUT must be refused
		}
		return c.put(key, OpPutIfMatch, m)
	case r < 94:
		return c.del(key)
	default:
		return c.list(c.ks.prefix(at))
	}
}

func (c *client) ctx() (context.Context, context.CancelFunc) { return ctxTimeout(c.opTTL) }

func (c *client) get(key string) Outcome {
	ctx, cancel := c.ctx()
	defer cancel()
	o := Op{Client: c.id, Node: c.node, Kind: OpGet, Key: key, Call: c.h.Now()}
	resp, err := c.s3.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(regBucket), Key: aws.String(key)})
	var body []byte
	if err == nil {
		body, err = io.ReadAll(resp.Body)
		resp.Body.Close()
		if err == nil && resp.ETag != nil && strings.Trim(*resp.ETag, `"`) != etagOf(string(body)) {
			err = fmt.Errorf("body %q does not match ETag %s", body, *resp.ETag)
			o.Outcome, o.Value = Ok, "?body:"+string(body) // a wrong answer, kept for the checker
		}
	}
	o.Return = c.h.Now()
	switch {
	case err == nil:
		o.Outcome, o.Value = Ok, string(body)
		c.last[key] = o.Value
	case status(err) == http.StatusNotFound:
		o.Outcome, o.Value = Ok, ""
		c.last[key] = ""
	case o.Outcome == Ok:
		o.Err = short(err)
	default:
		o.Outcome, o.Err = Fail, short(err)
	}
	c.h.Add(o)
	return o.Outcome
}

func (c *client) put(key string, kind Kind, match string) Outcome {
	ctx, cancel := c.ctx()
	defer cancel()
	v := c.value()
	c.h.Written(v)
	in := &s3.PutObjectInput{Bucket: aws.String(regBucket), Key: aws.String(key), Body: bytes.NewReader([]byte(v))}
	switch kind {
	case OpPutIfAbsent:
		in.IfNoneMatch = aws.String("*")
	case OpPutIfMatch:
		in.IfMatch = aws.String(`"` + etagOf(match) + `"`)
	}
	o := Op{Client: c.id, Node: c.node, Kind: kind, Key: key, Value: v, Match: match, Call: c.h.Now()}
	_, err := c.s3.PutObject(ctx, in)
	o.Return = c.h.Now()
	o.Outcome, o.Refused = classify(err, true)
	if kind == OpPutIfMatch && status(err) == http.StatusNotFound {
		// If-Match on a missing key: S3 answers 404 NoSuchKey.
		o.Outcome, o.Refused = Fail, true
	}
	o.Err = short(err)
	if o.Outcome == Ok {
		c.last[key] = v
	}
	c.h.Add(o)
	return o.Outcome
}

func (c *client) del(key string) Outcome {
	ctx, cancel := c.ctx()
	defer cancel()
	o := Op{Client: c.id, Node: c.node, Kind: OpDelete, Key: key, Call: c.h.Now()}
	_, err := c.s3.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(regBucket), Key: aws.String(key)})
	o.Return = c.h.Now()
	o.Outcome, o.Refused = classify(err, true)
	o.Err = short(err)
	if o.Outcome == Ok {
		c.last[key] = ""
	}
	c.h.Add(o)
	return o.Outcome
}

func (c *client) list(prefix string) Outcome {
	ctx, cancel := c.ctx()
	defer cancel()
	o := Op{Client: c.id, Node: c.node, Kind: OpList, Key: prefix, Call: c.h.Now()}
	listed := map[string]string{}
	var err error
	p := s3.NewListObjectsV2Paginator(c.s3, &s3.ListObjectsV2Input{Bucket: aws.String(regBucket), Prefix: aws.String(prefix)})
	for p.HasMorePages() && err == nil {
		var page *s3.ListObjectsV2Output
		page, err = p.NextPage(ctx)
		if err == nil {
			for _, obj := range page.Contents {
				listed[aws.ToString(obj.Key)] = c.h.ValueOfETag(aws.ToString(obj.ETag))
			}
		}
	}
	o.Return = c.h.Now()
	if err != nil {
		o.Outcome, o.Err = Fail, short(err)
	} else {
		o.Outcome, o.Listed = Ok, listed
	}
	c.h.Add(o)
	return o.Outcome
}

// versionStep runs one operation on the versioned bucket: mostly PUTs
// of new versions to a few keys, sometimes a listing of all versions.
func (c *client) versionStep() Outcome {
	prefix := "v" + c.ks.prefix(c.h.Now())
	if c.rng.IntN(100) < 20 {
		return c.vlist(prefix)
	}
	key := fmt.Sprintf("%sk%d", prefix, c.rng.IntN(3))
	ctx, cancel := c.ctx()
	defer cancel()
	v := c.value()
	c.h.Written(v)
	o := Op{Client: c.id, Node: c.node, Kind: OpVPut, Key: key, Value: v, Call: c.h.Now()}
	resp, err := c.s3.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(verBucket), Key: aws.String(key), Body: bytes.NewReader([]byte(v))})
	o.Return = c.h.Now()
	o.Outcome, _ = classify(err, true)
	o.Err = short(err)
	if err == nil {
		o.VersionID = aws.ToString(resp.VersionId)
	}
	c.h.Add(o)
	return o.Outcome
}

func (c *client) vlist(prefix string) Outcome {
	ctx, cancel := c.ctx()
	defer cancel()
	o := Op{Client: c.id, Node: c.node, Kind: OpVList, Key: prefix, Call: c.h.Now()}
	vs, err := listVersions(ctx, c.s3, c.h, prefix)
	o.Return = c.h.Now()
	if err != nil {
		o.Outcome, o.Err = Fail, short(err)
	} else {
		o.Outcome, o.Versions = Ok, vs
	}
	c.h.Add(o)
	return o.Outcome
}

func listVersions(ctx context.Context, cl *s3.Client, h *History, prefix string) (map[string][]ListedVersion, error) {
	out := map[string][]ListedVersion{}
	in := &s3.ListObjectVersionsInput{Bucket: aws.String(verBucket), Prefix: aws.String(prefix)}
	for n := 0; ; n++ {
		page, err := cl.ListObjectVersions(ctx, in)
		if err != nil {
			return nil, err
		}
		for _, v := range page.Versions {
			k := aws.ToString(v.Key)
			out[k] = append(out[k], ListedVersion{VersionID: aws.ToString(v.VersionId), Value: h.ValueOfETag(aws.ToString(v.ETag)), Latest: aws.ToBool(v.IsLatest), Page: n})
		}
		if !aws.ToBool(page.IsTruncated) {
			return out, nil
		}
		in.KeyMarker, in.VersionIdMarker = page.NextKeyMarker, page.NextVersionIdMarker
	}
}

// runClients runs the workers until stop is closed.
// A client whose node is down waits a little between tries.
func runClients(clients []*client, stop <-chan struct{}, up func(int) bool) *sync.WaitGroup {
	var wg sync.WaitGroup
	for _, c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if !up(c.node) {
					time.Sleep(200 * time.Millisecond)
				}
				o := c.step()
				// Back off after an error, as a real client would: a
				// node refusing everything at once would otherwise fill
				// the history with failures, and every unknown write
				// stays open to the end of the history, which the
				// checker's search pays for.
				switch o {
				case Fail:
					time.Sleep(100 * time.Millisecond)
				case Unknown:
					time.Sleep(time.Second)
				}
			}
		}()
	}
	return &wg
}
