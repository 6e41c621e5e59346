package bench

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/shardstore/shardstore/internal/certs"
	"github.com/shardstore/shardstore/internal/cpustat"
)

// S3Mode is the kind of load `bench s3` generates.
type S3Mode string

// The load modes.
const (
	// S3Put writes new objects for the whole phase.
	S3Put S3Mode = "put"
	// S3Get reads back objects written (unmeasured) before the phase.
	S3Get S3Mode = "get"
	// S3Mixed does GETs of pre-written objects and PUTs of new ones,
	// GetFraction of the operations being GETs.
	S3Mixed S3Mode = "mixed"
	// S3Small is two phases over many small objects: PUT new objects,
	// then GET the objects that phase wrote.
	S3Small S3Mode = "small"
	// S3List writes Objects small keys (a measured PUT phase), then lists
	// them flat, one listing after another, in pages of PageSize keys.
	// With Prefix it lists what an earlier run kept instead of writing.
	S3List S3Mode = "list"
)

// ParseS3Mode reads a mode name.
func ParseS3Mode(s string) (S3Mode, error) {
	switch m := S3Mode(strings.ToLower(strings.TrimSpace(s))); m {
	case S3Put, S3Get, S3Mixed, S3Small, S3List:
		return m, nil
	}
	return "", fmt.Errorf("mode %q: want put, get, mixed, small or list", s)
}

// S3SSE is the server-side encryption `bench s3` asks for on every PUT
// (GETs of SSE-S3 and SSE-KMS objects need no header). The zero value
// asks for none.
type S3SSE struct {
	// Algorithm is the x-amz-server-side-encryption value: "" (none),
	// "AES256" (SSE-S3) or "aws:kms" (SSE-KMS).
	Algorithm types.ServerSideEncryption `json:"algorithm,omitempty"`
	// KMSKeyID is the x-amz-server-side-encryption-aws-kms-key-id of
	// SSE-KMS; empty leaves the key to the server's default.
	KMSKeyID string `json:"kms_key_id,omitempty"`
}

// ParseS3SSE reads -sse: none (or empty), s3 (SSE-S3, AES256), kms
// (SSE-KMS with the server's default key) or kms:KEYID.
func ParseS3SSE(s string) (S3SSE, error) {
	// A key id may hold colons itself (an ARN): only the first one splits.
	name, keyID, hasKey := strings.Cut(strings.TrimSpace(s), ":")
	switch {
	case !hasKey && (name == "" || strings.EqualFold(name, "none")):
		return S3SSE{}, nil
	case !hasKey && strings.EqualFold(name, "s3"):
		return S3SSE{Algorithm: types.ServerSideEncryptionAes256}, nil
	case strings.EqualFold(name, "kms") && (!hasKey || keyID != ""):
		return S3SSE{Algorithm: types.ServerSideEncryptionAwsKms, KMSKeyID: keyID}, nil
	}
	return S3SSE{}, fmt.Errorf("sse %q: want none, s3, kms or kms:KEYID", s)
}

// Defaults of S3Options; the command line shows the same values.
const (
	DefaultS3Endpoint  = "http://127.0.0.1:9000"
	DefaultS3Region    = "us-east-1"
	DefaultS3Bucket    = "shardstore-bench"
	DefaultS3Size      = 1 << 20
	DefaultS3SmallSize = 4 << 10
	// List mode: 1-byte objects (a listing reads keys, not data), 10 000
	// of them, listed 3 times in pages of 1000 (S3's largest page).
	DefaultS3ListSize     = 1
	DefaultS3ListObjects  = 10000
	DefaultS3Listings     = 3
	DefaultS3ListPageSize = 1000
	DefaultS3Concurrency  = 4
	DefaultS3Duration     = 10 * time.Second
	// DefaultS3OpsLimit is the time limit of a phase that runs an exact
	// op count (Ops) when no Duration is given: the load stays bounded
	// in time even against a server that stalls.
	DefaultS3OpsLimit    = 5 * time.Minute
	DefaultS3MaxErrors   = 10
	DefaultS3GetFraction = 0.5
	// maxPreparedBytes caps what get and mixed write before their phase
	// when Objects is not given.
	maxPreparedBytes = 1 << 30
	// contentSpread is how far object contents are shifted within the
	// random buffer, so no two objects need be identical (a server that
	// deduplicates or caches by content would otherwise look fast).
	contentSpread = 64 << 10
	// cleanupLimit bounds deleting what a run wrote, also after Ctrl-C.
	cleanupLimit = 5 * time.Minute
)

// S3Options configures RunS3. Zero values take the defaults above.
type S3Options struct {
	// Endpoint is the only host the bench talks to, e.g.
	// http://127.0.0.1:9000 or https://s3.example:9000.
	Endpoint string
	// CACert is a PEM file of authorities trusted beside the system's,
	// for an https endpoint with a private CA.
	CACert               string
	AccessKey, SecretKey string
	Region               string
	Bucket               string
	// VirtualHost addresses buckets as BUCKET.host (needs DNS); the
	// default is path style, http://host/BUCKET/KEY.
	VirtualHost bool
	Mode        S3Mode
	// Size is the object size in bytes (default 1 MiB; 4 KiB for small).
	Size        int
	Concurrency int
	// Duration is how long each phase issues new operations; operations
	// in flight at the end complete and are counted. With Ops set it is
	// only a time limit (default DefaultS3OpsLimit).
	Duration time.Duration
	// Ops, when positive, is the exact operation count of each phase.
	Ops int
	// GetFraction is the share of mixed-mode operations that are GETs,
	// in (0, 1]; 0 takes the default 0.5 (a mix without GETs is mode put).
	GetFraction float64
	// Objects is how many objects get and mixed write before measuring
	// and then read at random (default max(Concurrency, 16), at most
	// 1 GiB in all).
	Objects int
	// Keep leaves the objects (and a bucket the bench created) in place.
	Keep bool
	// Prefix (list mode only) lists the objects an earlier run kept under
	// this prefix instead of writing new ones; they are never deleted.
	Prefix string
	// Listings is how many full listings list mode does (default 3), and
	// PageSize the keys asked for per ListObjectsV2 page (default 1000).
	Listings, PageSize int
	// Verify compares every GET body with what was written, not only
	// its length.
	Verify bool
	// PIDs are the server's process ids on this machine (every node of
	// a cluster on it); when set, the report carries their CPU seconds
	// per GiB, summed, from /proc/PID/stat.
	PIDs []int
	// ProcRoot is where /proc is mounted (tests); default /proc.
	ProcRoot string
	// Seed seeds the object contents; 0 picks one from the clock, so
	// every run writes fresh data.
	Seed uint64
	// MaxErrors failed operations end a phase early with an error
	// (default DefaultS3MaxErrors; negative: never).
	MaxErrors int
	// SSE is the server-side encryption every PUT asks for (default
	// none); GETs send no encryption header.
	SSE S3SSE
}

// S3Progress is what RunS3 reports while a phase runs (about four times
// a second) and once when it ends.
type S3Progress struct {
	Phase string
	// Elapsed of Limit (the phase's duration or time limit).
	Elapsed, Limit time.Duration
	// Ops done (successful and failed) of OpsTarget (0: timed phase).
	Ops, OpsTarget int64
	Bytes          int64
	Done           bool
}

// S3OpResult is one operation type within a phase.
type S3OpResult struct {
	Op string `json:"op"` // PUT or GET
	// Count is successful operations; Errors failed ones (not in the
	// latency figures).
	Count     int64   `json:"count"`
	Errors    int64   `json:"errors"`
	Bytes     int64   `json:"bytes"`
	MiBps     float64 `json:"mib_per_s"`
	OpsPerSec float64 `json:"ops_per_s"`
	// Latency is request start to the response fully read.
	Latency LatencyStats `json:"latency"`
	// TTFB (GET only) is request start to the first body byte.
	TTFB *LatencyStats `json:"ttfb,omitempty"`
}

// S3Listing is one full listing of list mode's prefix.
type S3Listing struct {
	Keys       int     `json:"keys"`
	Pages      int     `json:"pages"`
	Seconds    float64 `json:"seconds"`
	KeysPerSec float64 `json:"keys_per_s"`
}

// S3Phase is one measured phase.
type S3Phase struct {
	Name    string  `json:"name"` // put, get or mixed
	Seconds float64 `json:"seconds"`
	// Complete is false when an Ops run stopped at its time limit or on
	// errors before doing every operation.
	Complete  bool         `json:"complete"`
	Ops       []S3OpResult `json:"ops"`
	Count     int64        `json:"count"`
	Errors    int64        `json:"errors"`
	Bytes     int64        `json:"bytes"`
	MiBps     float64      `json:"mib_per_s"`
	OpsPerSec float64      `json:"ops_per_s"`
	// FirstError is the first failed operation's error, if any.
	FirstError string `json:"first_error,omitempty"`
	// Listings (list phase only) are the full listings, one by one;
	// KeysPerSec is all their keys over the phase's time.
	Listings   []S3Listing `json:"listings,omitempty"`
	KeysPerSec float64     `json:"keys_per_s,omitempty"`

	// Server CPU from /proc/PID/stat (only with a PID): seconds per GiB
	// moved, milliseconds per operation, and cores busy on average.
	ServerCPUSeconds float64 `json:"server_cpu_s,omitempty"`
	ServerCPUPerGiB  float64 `json:"server_cpu_s_per_gib,omitempty"`
	ServerCPUPerOpMS float64 `json:"server_cpu_ms_per_op,omitempty"`
	ServerCores      float64 `json:"server_cores,omitempty"`
	// The bench's own CPU (the SDK signs, checksums and copies too):
	// on a small machine it competes with the server for the cores.
	ClientCPUPerGiB float64 `json:"client_cpu_s_per_gib,omitempty"`
	ClientCores     float64 `json:"client_cores,omitempty"`
	// The whole machine during the phase: average busy fraction and the
	// hottest core groups ("2x100%"), to judge how much other load there
	// was.
	MachineCPUAvg float64 `json:"machine_cpu_avg"`
	MostConsumed  string  `json:"most_consumed_cores,omitempty"`
}

// S3Report is the outcome of RunS3.
type S3Report struct {
	Started     time.Time `json:"started"`
	Endpoint    string    `json:"endpoint"`
	Region      string    `json:"region"`
	Bucket      string    `json:"bucket"`
	Prefix      string    `json:"prefix"`
	Mode        S3Mode    `json:"mode"`
	Size        int       `json:"size"`
	Concurrency int       `json:"concurrency"`
	// DurationSeconds is each phase's duration (or time limit with Ops).
	DurationSeconds float64 `json:"duration_s"`
	Ops             int     `json:"ops,omitempty"`
	GetFraction     float64 `json:"get_fraction,omitempty"`
	Objects         int     `json:"objects,omitempty"`
	Listings        int     `json:"listings,omitempty"`
	PageSize        int     `json:"page_size,omitempty"`
	Verify          bool    `json:"verify"`
	// Seed made the object contents; --seed with it writes the same data.
	Seed uint64 `json:"seed"`
	// SSE is the server-side encryption the PUTs asked for, if any.
	SSE    *S3SSE    `json:"sse,omitempty"`
	PIDs   []int     `json:"pids,omitempty"`
	CPU    string    `json:"cpu"`
	Cores  int       `json:"cores"`
	Phases []S3Phase `json:"phases"`
	// Cleanup says what happened to the objects afterwards.
	Cleanup string `json:"cleanup"`
}

// s3Run is the state of one RunS3 call.
type s3Run struct {
	opts          S3Options
	client        *s3.Client
	prefix        string
	data          []byte
	bucketCreated bool
	progress      func(S3Progress)
	// written[w] is how many objects worker w has written under its own
	// key range; small mode's GET phase reads those back.
	written []int
}

// RunS3 drives load against an S3 endpoint with aws-sdk-go-v2 at its
// default settings and measures throughput, latency and CPU cost. It
// writes only under a fresh prefix in the bucket and deletes what it
// wrote at the end unless opts.Keep. progress may be nil.
func RunS3(ctx context.Context, opts S3Options, progress func(S3Progress)) (S3Report, error) {
	if err := opts.fill(); err != nil {
		return S3Report{}, fmt.Errorf("bench s3: %w", err)
	}
	started := time.Now().UTC()
	rng := rand.New(rand.NewChaCha8(seed32(opts.Seed)))
	prefix := fmt.Sprintf("shardstore-bench/%s-%04x/", started.Format("20060102T150405"), rng.Uint32()&0xffff)
	if opts.Prefix != "" {
		prefix = opts.Prefix
	}
	tlsCfg, err := clientTLS(opts.CACert)
	if err != nil {
		return S3Report{}, fmt.Errorf("bench s3: %w", err)
	}
	r := &s3Run{
		opts:     opts,
		prefix:   prefix,
		data:     make([]byte, opts.Size+contentSpread),
		progress: progress,
		written:  make([]int, opts.Concurrency),
		client: s3.New(s3.Options{
			Region:       opts.Region,
			BaseEndpoint: aws.String(opts.Endpoint),
			Credentials:  credentials.NewStaticCredentialsProvider(opts.AccessKey, opts.SecretKey, ""),
			UsePathStyle: !opts.VirtualHost,
			HTTPClient: awshttp.NewBuildableClient().WithTransportOptions(func(t *http.Transport) {
				if tlsCfg != nil {
					t.TLSClientConfig = tlsCfg
				}
			}),
		}),
	}
	// Random, so compression or deduplication cannot flatter a server.
	fillRandom(rng, r.data)
	rep := S3Report{
		Started: started, Endpoint: opts.Endpoint, Region: opts.Region, Bucket: opts.Bucket, Prefix: r.prefix,
		Mode: opts.Mode, Size: opts.Size, Concurrency: opts.Concurrency, DurationSeconds: opts.Duration.Seconds(),
		Ops: opts.Ops, Verify: opts.Verify, Seed: opts.Seed, PIDs: opts.PIDs, CPU: CPUName(), Cores: runtime.NumCPU(),
		Cleanup: "nothing written",
	}
	if opts.Mode == S3Mixed {
		rep.GetFraction = opts.GetFraction
	}
	if opts.SSE.Algorithm != "" {
		sse := opts.SSE
		rep.SSE = &sse
	}
	if opts.Mode == S3Get || opts.Mode == S3Mixed || (opts.Mode == S3List && opts.Prefix == "") {
		rep.Objects = opts.Objects
	}
	if opts.Mode == S3List {
		rep.Listings, rep.PageSize = opts.Listings, opts.PageSize
	}
	for _, pid := range opts.PIDs {
		if _, err := cpustat.PidCPU(opts.ProcRoot, pid); err != nil {
			return rep, fmt.Errorf("bench s3: server pid %d must run on this machine: %w", pid, err)
		}
	}
	if err := r.ensureBucket(ctx); err != nil {
		return rep, fmt.Errorf("bench s3: %w", err)
	}
	rep.Cleanup = ""
	err = r.runPhases(ctx, &rep)
	rep.Cleanup = r.cleanup(ctx)
	if err != nil {
		return rep, fmt.Errorf("bench s3: %w", err)
	}
	return rep, nil
}

// clientTLS is the client's TLS configuration when caFile is given (nil:
// the SDK's default, the system's roots).
func clientTLS(caFile string) (*tls.Config, error) {
	if caFile == "" {
		return nil, nil
	}
	pool, err := certs.PoolWith(caFile)
	if err != nil {
		return nil, err
	}
	return &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}, nil
}

func (o *S3Options) fill() error {
	if o.Endpoint == "" {
		o.Endpoint = DefaultS3Endpoint
	}
	u, err := url.Parse(o.Endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") {
		return fmt.Errorf("endpoint %q: want http(s)://HOST[:PORT]", o.Endpoint)
	}
	o.Endpoint = strings.TrimSuffix(o.Endpoint, "/")
	if o.AccessKey == "" || o.SecretKey == "" {
		return errors.New("access key and secret key are required")
	}
	if o.Region == "" {
		o.Region = DefaultS3Region
	}
	if o.Bucket == "" {
		o.Bucket = DefaultS3Bucket
	}
	if o.Mode == "" {
		o.Mode = S3Put
	}
	if _, err := ParseS3Mode(string(o.Mode)); err != nil {
		return err
	}
	if o.Size < 0 {
		return fmt.Errorf("size %d: must be positive", o.Size)
	}
	if o.Size == 0 {
		switch o.Mode {
		case S3Small:
			o.Size = DefaultS3SmallSize
		case S3List:
			o.Size = DefaultS3ListSize
		default:
			o.Size = DefaultS3Size
		}
	}
	if o.Prefix != "" {
		if o.Mode != S3List {
			return errors.New("prefix: only list mode reads an earlier run's objects")
		}
		if strings.HasPrefix(o.Prefix, "/") || !strings.HasSuffix(o.Prefix, "/") {
			return fmt.Errorf("prefix %q: want the prefix an earlier run printed, ending in /", o.Prefix)
		}
	}
	if o.Listings < 0 || o.PageSize < 0 || o.PageSize > 1000 {
		return errors.New("listings must not be negative; page size within 1..1000")
	}
	if o.Listings == 0 {
		o.Listings = DefaultS3Listings
	}
	if o.PageSize == 0 {
		o.PageSize = DefaultS3ListPageSize
	}
	if o.Concurrency < 0 {
		return fmt.Errorf("concurrency %d: must be positive", o.Concurrency)
	}
	if o.Concurrency == 0 {
		o.Concurrency = DefaultS3Concurrency
	}
	if o.Ops < 0 || o.Duration < 0 {
		return errors.New("ops and duration must not be negative")
	}
	if o.Duration == 0 {
		o.Duration = DefaultS3Duration
		if o.Ops > 0 || o.Mode == S3List {
			o.Duration = DefaultS3OpsLimit
		}
	}
	if o.Mode == S3List && o.Ops > 0 {
		return errors.New("ops: list mode writes -objects keys and does -listings listings")
	}
	if o.GetFraction < 0 || o.GetFraction > 1 {
		return fmt.Errorf("get fraction %v: want 0..1", o.GetFraction)
	}
	if o.GetFraction == 0 {
		o.GetFraction = DefaultS3GetFraction
	}
	if o.Objects < 0 {
		return fmt.Errorf("objects %d: must be positive", o.Objects)
	}
	if o.Objects == 0 {
		o.Objects = min(max(o.Concurrency, 16), max(1, maxPreparedBytes/o.Size))
		if o.Mode == S3List {
			o.Objects = DefaultS3ListObjects
		}
	}
	if o.MaxErrors == 0 {
		o.MaxErrors = DefaultS3MaxErrors
	}
	switch o.SSE.Algorithm {
	case "", types.ServerSideEncryptionAes256:
		if o.SSE.KMSKeyID != "" {
			return errors.New("sse: a KMS key id goes with aws:kms only")
		}
	case types.ServerSideEncryptionAwsKms:
	default:
		return fmt.Errorf("sse %q: want AES256 or aws:kms", o.SSE.Algorithm)
	}
	if o.Seed == 0 {
		o.Seed = uint64(time.Now().UnixNano())
	}
	return nil
}

// fillRandom fills b from rng eight bytes at a time.
func fillRandom(rng *rand.Rand, b []byte) {
	for i := 0; i < len(b); i += 8 {
		v := rng.Uint64()
		for j := 0; j < 8 && i+j < len(b); j++ {
			b[i+j] = byte(v >> (8 * j))
		}
	}
}

// ensureBucket creates the bucket unless it exists.
func (r *s3Run) ensureBucket(ctx context.Context) error {
	_, err := r.client.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String(r.opts.Bucket)})
	if err == nil {
		return nil
	}
	if httpStatus(err) != http.StatusNotFound {
		return fmt.Errorf("bucket %s: %w", r.opts.Bucket, err)
	}
	in := &s3.CreateBucketInput{Bucket: aws.String(r.opts.Bucket)}
	if r.opts.Region != "us-east-1" {
		// Outside us-east-1, S3 wants the region named in the body.
		in.CreateBucketConfiguration = &types.CreateBucketConfiguration{
			LocationConstraint: types.BucketLocationConstraint(r.opts.Region)}
	}
	if _, err := r.client.CreateBucket(ctx, in); err != nil {
		var owned *types.BucketAlreadyOwnedByYou
		if errors.As(err, &owned) {
			return nil // created concurrently by another run of ours
		}
		return fmt.Errorf("creating bucket %s: %w", r.opts.Bucket, err)
	}
	r.bucketCreated = true
	return nil
}

func httpStatus(err error) int {
	var re *awshttp.ResponseError
	if errors.As(err, &re) {
		return re.HTTPStatusCode()
	}
	return 0
}

// runPhases runs the mode's phases and appends them to rep.
func (r *s3Run) runPhases(ctx context.Context, rep *S3Report) error {
	o := r.opts
	switch o.Mode {
	case S3Put:
		return r.phase(ctx, rep, "put", o.Ops, func(w *s3Worker) s3Op { return w.put })
	case S3Get, S3Mixed:
		if err := r.prepare(ctx); err != nil {
			return err
		}
		if o.Mode == S3Get {
			return r.phase(ctx, rep, "get", o.Ops, func(w *s3Worker) s3Op { return w.getPrepared })
		}
		return r.phase(ctx, rep, "mixed", o.Ops, func(w *s3Worker) s3Op {
			if w.rng.Float64() < o.GetFraction {
				return w.getPrepared
			}
			return w.put
		})
	case S3Small:
		if err := r.phase(ctx, rep, "put", o.Ops, func(w *s3Worker) s3Op { return w.put }); err != nil {
			return err
		}
		total := 0
		for _, n := range r.written {
			total += n
		}
		if total == 0 {
			return errors.New("small: the put phase wrote no objects to read back")
		}
		return r.phase(ctx, rep, "get", o.Ops, func(w *s3Worker) s3Op { return w.getWritten })
	case S3List:
		want := -1 // keys an earlier run kept: the first listing counts them
		if o.Prefix == "" {
			if err := r.phase(ctx, rep, "put", o.Objects, func(w *s3Worker) s3Op { return w.put }); err != nil {
				return err
			}
			if ph := rep.Phases[len(rep.Phases)-1]; !ph.Complete {
				return fmt.Errorf("list: the put phase wrote %d of %d keys", ph.Count, o.Objects)
			}
			want = o.Objects
		}
		return r.listPhase(ctx, rep, want)
	}
	return fmt.Errorf("mode %q not handled", o.Mode)
}

func (r *s3Run) preparedKey(i int) string { return fmt.Sprintf("%sobj/%06d", r.prefix, i) }

func (r *s3Run) workerKey(w, seq int) string { return fmt.Sprintf("%sw%03d/%09d", r.prefix, w, seq) }

// content is the body of key: a window of the random buffer at an offset
// derived from the key, so a GET can be verified without remembering
// anything per object.
func (r *s3Run) content(key string) []byte {
	h := fnv.New64a()
	_, _ = io.WriteString(h, key)
	off := int(h.Sum64() % (contentSpread + 1))
	return r.data[off : off+r.opts.Size]
}

// prepare writes the objects get and mixed read, unmeasured, stopping at
// the first error (usually wrong credentials or endpoint).
func (r *s3Run) prepare(ctx context.Context) error {
	var next atomic.Int64
	var done atomic.Int64
	errc := make(chan error, r.opts.Concurrency)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stopTicker := r.tick("prepare", time.Now(), r.opts.Duration, int64(r.opts.Objects), &done, nil)
	var wg sync.WaitGroup
	for range r.opts.Concurrency {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= r.opts.Objects || ctx.Err() != nil {
					return
				}
				key := r.preparedKey(i)
				if err := r.putObject(ctx, key); err != nil {
					errc <- fmt.Errorf("writing the %d objects to read: %w", r.opts.Objects, err)
					cancel()
					return
				}
				done.Add(1)
			}
		})
	}
	wg.Wait()
	stopTicker()
	select {
	case err := <-errc:
		return err
	default:
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("writing the objects to read: %w", err)
	}
	return nil
}

func (r *s3Run) putObject(ctx context.Context, key string) error {
	body := r.content(key)
	_, err := r.client.PutObject(ctx, &s3.PutObjectInput{
		Bucket: aws.String(r.opts.Bucket), Key: aws.String(key),
		Body: bytes.NewReader(body), ContentLength: aws.Int64(int64(len(body))),
		ServerSideEncryption: r.opts.SSE.Algorithm, SSEKMSKeyId: optional(r.opts.SSE.KMSKeyID),
	})
	if err != nil {
		return fmt.Errorf("PUT %s: %w", key, err)
	}
	return nil
}

// optional is nil for an empty string, so the SDK sends no header.
func optional(s string) *string {
	if s == "" {
		return nil
	}
	return aws.String(s)
}

// tick reports progress about four times a second until the returned
// function is called, which reports once more with Done set.
func (r *s3Run) tick(phase string, start time.Time, limit time.Duration, target int64, ops, bytes *atomic.Int64) func() {
	if r.progress == nil {
		return func() {}
	}
	snap := func(done bool) S3Progress {
		p := S3Progress{Phase: phase, Elapsed: time.Since(start), Limit: limit, Ops: ops.Load(), OpsTarget: target, Done: done}
		if bytes != nil {
			p.Bytes = bytes.Load()
		}
		return p
	}
	stop := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(250 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				r.progress(snap(false))
			}
		}
	}()
	return func() {
		close(stop)
		<-finished
		r.progress(snap(true))
	}
}

// s3Op is one operation a worker runs; it returns the bytes moved, the
// time to first byte (GET) and any error.
type s3Op func(ctx context.Context) (kind opKind, n int64, ttfb time.Duration, err error)

type opKind int

const (
	opPut opKind = iota
	opGet
	numOpKinds
)

func (k opKind) String() string { return [...]string{"PUT", "GET"}[k] }

// opAcc accumulates one worker's results for one operation type.
type opAcc struct {
	lat, ttfb     *latencyHist
	count, errors int64
	bytes         int64
}

// s3Worker is one load goroutine with its own random stream, read buffer
// and accumulators, so workers share nothing but atomic counters.
type s3Worker struct {
	r   *s3Run
	id  int
	rng *rand.Rand
	buf []byte
	acc [numOpKinds]opAcc
}

func (w *s3Worker) put(ctx context.Context) (opKind, int64, time.Duration, error) {
	key := w.r.workerKey(w.id, w.r.written[w.id])
	if err := w.r.putObject(ctx, key); err != nil {
		return opPut, 0, 0, err
	}
	// Only successful writes advance the sequence, so every key below
	// written[id] exists for small mode's GET phase.
	w.r.written[w.id]++
	return opPut, int64(w.r.opts.Size), 0, nil
}

func (w *s3Worker) getPrepared(ctx context.Context) (opKind, int64, time.Duration, error) {
	return w.get(ctx, w.r.preparedKey(w.rng.IntN(w.r.opts.Objects)))
}

// getWritten reads a random object of those the put phase wrote, each
// equally likely whichever worker wrote it.
func (w *s3Worker) getWritten(ctx context.Context) (opKind, int64, time.Duration, error) {
	total := 0
	for _, n := range w.r.written {
		total += n
	}
	i := w.rng.IntN(total)
	for wid, n := range w.r.written {
		if i < n {
			return w.get(ctx, w.r.workerKey(wid, i))
		}
		i -= n
	}
	panic("unreachable: index within total")
}

// get fetches key and reads the whole body, timing the first byte. The
// length is always checked; with Verify the content too.
func (w *s3Worker) get(ctx context.Context, key string) (opKind, int64, time.Duration, error) {
	start := time.Now()
	out, err := w.r.client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(w.r.opts.Bucket), Key: aws.String(key)})
	if err != nil {
		return opGet, 0, 0, fmt.Errorf("GET %s: %w", key, err)
	}
	defer out.Body.Close()
	var want []byte
	if w.r.opts.Verify {
		want = w.r.content(key)
	}
	var n int64
	var ttfb time.Duration
	for {
		k, err := out.Body.Read(w.buf)
		if k > 0 {
			if n == 0 {
				ttfb = time.Since(start)
			}
			if want != nil {
				if n+int64(k) > int64(len(want)) || !bytes.Equal(w.buf[:k], want[n:n+int64(k)]) {
					return opGet, n, ttfb, fmt.Errorf("GET %s: body differs from what was written at byte %d", key, n)
				}
			}
			n += int64(k)
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return opGet, n, ttfb, fmt.Errorf("GET %s: reading body after %d bytes: %w", key, n, err)
		}
	}
	if n != int64(w.r.opts.Size) {
		return opGet, n, ttfb, fmt.Errorf("GET %s: %d bytes, want %d", key, n, w.r.opts.Size)
	}
	return opGet, n, ttfb, nil
}

// phaseMeter holds the CPU counters taken when a phase starts.
type phaseMeter struct {
	procBefore time.Duration
	serverErr  error
	markBefore cpustat.Mark
	markErr    error
}

// startMeter collects the garbage left from preparing (so it is not
// inside the timing) and reads the CPU counters a phase starts from.
func (r *s3Run) startMeter() *phaseMeter {
	m := &phaseMeter{}
	if len(r.opts.PIDs) > 0 {
		m.procBefore, m.serverErr = serverCPU(r.opts.ProcRoot, r.opts.PIDs)
	}
	runtime.GC()
	m.markBefore, m.markErr = cpustat.TakeMark(r.opts.ProcRoot)
	return m
}

// finishMeter fills ph's CPU figures from what was used since m started,
// per GiB of ph.Bytes and per op of ph.Count. They are best effort: the
// load numbers stand without them, and the error returned (server CPU
// unreadable) is only reported.
func (r *s3Run) finishMeter(m *phaseMeter, ph *S3Phase) error {
	o := r.opts
	gib := float64(ph.Bytes) / (1 << 30)
	if m.markErr == nil {
		if after, err := cpustat.TakeMark(o.ProcRoot); err == nil {
			iv := after.Since(m.markBefore)
			ph.MachineCPUAvg = iv.Average
			ph.MostConsumed = iv.MostConsumed()
			ph.ClientCores = iv.ProcessCores
			if gib > 0 {
				ph.ClientCPUPerGiB = iv.Process.Total().Seconds() / gib
			}
		}
	}
	if len(o.PIDs) == 0 || m.serverErr != nil {
		return m.serverErr
	}
	after, err := serverCPU(o.ProcRoot, o.PIDs)
	if err != nil {
		return err
	}
	cpu := max(0, after-m.procBefore).Seconds()
	ph.ServerCPUSeconds = cpu
	if gib > 0 {
		ph.ServerCPUPerGiB = cpu / gib
	}
	if ph.Count > 0 {
		ph.ServerCPUPerOpMS = cpu * 1000 / float64(ph.Count)
	}
	if ph.Seconds > 0 {
		ph.ServerCores = cpu / ph.Seconds
	}
	return nil
}

// phase runs one measured phase: Concurrency workers issue operations
// chosen by pick until the duration is over (or ops, when positive, are
// done, or too many failed), then the results are merged and appended to
// rep.
func (r *s3Run) phase(ctx context.Context, rep *S3Report, name string, ops int, pick func(*s3Worker) s3Op) error {
	o := r.opts
	// In-flight operations run on a context that outlives the deadline
	// by a grace period, so the last operations finish and count, but a
	// stalled server still cannot hold the bench forever.
	opCtx, cancel := context.WithTimeout(ctx, o.Duration+max(30*time.Second, o.Duration))
	defer cancel()

	workers := make([]*s3Worker, o.Concurrency)
	for i := range workers {
		w := &s3Worker{r: r, id: i, rng: rand.New(rand.NewPCG(o.Seed, uint64(i)+1)), buf: make([]byte, 256<<10)}
		for k := range w.acc {
			w.acc[k] = opAcc{lat: newLatencyHist(), ttfb: newLatencyHist()}
		}
		workers[i] = w
	}
	var claimed, opsDone, bytesDone, errCount atomic.Int64
	var stop atomic.Bool
	var firstErr error
	var errOnce sync.Once

	meter := r.startMeter()
	start := time.Now()
	deadline := start.Add(o.Duration)
	stopTicker := r.tick(name, start, o.Duration, int64(ops), &opsDone, &bytesDone)

	var wg sync.WaitGroup
	for _, w := range workers {
		wg.Go(func() {
			for !stop.Load() && opCtx.Err() == nil && time.Now().Before(deadline) {
				if ops > 0 && claimed.Add(1) > int64(ops) {
					return
				}
				op := pick(w)
				t0 := time.Now()
				kind, n, ttfb, err := op(opCtx)
				lat := time.Since(t0)
				a := &w.acc[kind]
				opsDone.Add(1)
				if err != nil {
					a.errors++
					errOnce.Do(func() { firstErr = err })
					if e := errCount.Add(1); o.MaxErrors > 0 && e >= int64(o.MaxErrors) {
						stop.Store(true)
					}
					continue
				}
				a.count++
				a.bytes += n
				bytesDone.Add(n)
				a.lat.Record(lat)
				if kind == opGet {
					a.ttfb.Record(ttfb)
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	stopTicker()

	ph := S3Phase{Name: name, Seconds: elapsed.Seconds(), Complete: true}
	for k := range numOpKinds {
		total := opAcc{lat: newLatencyHist(), ttfb: newLatencyHist()}
		for _, w := range workers {
			a := w.acc[k]
			total.count += a.count
			total.errors += a.errors
			total.bytes += a.bytes
			total.lat.Merge(a.lat)
			total.ttfb.Merge(a.ttfb)
		}
		if total.count+total.errors == 0 {
			continue
		}
		res := S3OpResult{Op: k.String(), Count: total.count, Errors: total.errors, Bytes: total.bytes,
			Latency: total.lat.Stats()}
		if k == opGet {
			st := total.ttfb.Stats()
			res.TTFB = &st
		}
		if ph.Seconds > 0 {
			res.MiBps = float64(res.Bytes) / (1 << 20) / ph.Seconds
			res.OpsPerSec = float64(res.Count) / ph.Seconds
		}
		ph.Ops = append(ph.Ops, res)
		ph.Count += res.Count
		ph.Errors += res.Errors
		ph.Bytes += res.Bytes
	}
	if ph.Seconds > 0 {
		ph.MiBps = float64(ph.Bytes) / (1 << 20) / ph.Seconds
		ph.OpsPerSec = float64(ph.Count) / ph.Seconds
	}
	if ops > 0 && ph.Count != int64(ops) {
		ph.Complete = false
	}
	if firstErr != nil {
		ph.FirstError = firstErr.Error()
	}
	serverErr := r.finishMeter(meter, &ph)
	rep.Phases = append(rep.Phases, ph)

	if serverErr != nil {
		return fmt.Errorf("%s phase: server CPU: %w", name, serverErr)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%s phase: %w", name, err)
	}
	if stop.Load() {
		return fmt.Errorf("%s phase stopped after %d failed operations; first: %w", name, errCount.Load(), firstErr)
	}
	if ph.Count == 0 && firstErr != nil {
		return fmt.Errorf("%s phase: no operation succeeded: %w", name, firstErr)
	}
	return nil
}

// listPhase lists the run's prefix flat, Listings times one after
// another, each page a ListObjectsV2 call of PageSize keys (its latency
// recorded like an operation's). Every listing must return want keys
// (want < 0: as many as the first one) in strictly ascending order, or
// the phase fails: a fast listing that skips or repeats keys is no result.
func (r *s3Run) listPhase(ctx context.Context, rep *S3Report, want int) error {
	o := r.opts
	ctx, cancel := context.WithTimeout(ctx, o.Duration)
	defer cancel()
	lat := newLatencyHist()
	var pagesDone atomic.Int64
	meter := r.startMeter()
	start := time.Now()
	stopTicker := r.tick("list", start, o.Duration, 0, &pagesDone, nil)
	ph := S3Phase{Name: "list", Complete: true}
	var listErr error
	for range o.Listings {
		ls, err := r.listOnce(ctx, lat, &pagesDone)
		if err == nil && want >= 0 && ls.Keys != want {
			err = fmt.Errorf("listing returned %d keys, want %d", ls.Keys, want)
		}
		if err != nil {
			listErr = err
			break
		}
		want = ls.Keys
		ph.Listings = append(ph.Listings, ls)
	}
	elapsed := time.Since(start)
	stopTicker()
	ph.Seconds = elapsed.Seconds()
	keys := 0
	for _, ls := range ph.Listings {
		keys += ls.Keys
	}
	res := S3OpResult{Op: "LIST", Count: int64(lat.Count()), Latency: lat.Stats()}
	if listErr != nil {
		res.Errors = 1
		ph.FirstError = listErr.Error()
		ph.Complete = false
	}
	if ph.Seconds > 0 {
		res.OpsPerSec = float64(res.Count) / ph.Seconds
		ph.OpsPerSec = res.OpsPerSec
		ph.KeysPerSec = float64(keys) / ph.Seconds
	}
	ph.Ops = []S3OpResult{res}
	ph.Count, ph.Errors = res.Count, res.Errors
	serverErr := r.finishMeter(meter, &ph)
	rep.Phases = append(rep.Phases, ph)
	if listErr != nil {
		return fmt.Errorf("list phase: %w", listErr)
	}
	if serverErr != nil {
		return fmt.Errorf("list phase: server CPU: %w", serverErr)
	}
	return nil
}

// listOnce lists the prefix once, checking the key order.
func (r *s3Run) listOnce(ctx context.Context, lat *latencyHist, pagesDone *atomic.Int64) (S3Listing, error) {
	var ls S3Listing
	start := time.Now()
	pages := s3.NewListObjectsV2Paginator(r.client, &s3.ListObjectsV2Input{
		Bucket: aws.String(r.opts.Bucket), Prefix: aws.String(r.prefix), MaxKeys: aws.Int32(int32(r.opts.PageSize))})
	last := ""
	for pages.HasMorePages() {
		t0 := time.Now()
		page, err := pages.NextPage(ctx)
		if err != nil {
			return ls, fmt.Errorf("listing %s after %d keys: %w", r.prefix, ls.Keys, err)
		}
		lat.Record(time.Since(t0))
		pagesDone.Add(1)
		ls.Pages++
		if len(page.Contents) > r.opts.PageSize {
			return ls, fmt.Errorf("a page of %d keys, asked for at most %d", len(page.Contents), r.opts.PageSize)
		}
		for _, obj := range page.Contents {
			k := aws.ToString(obj.Key)
			if k <= last {
				return ls, fmt.Errorf("key %q listed after %q: not in ascending order", k, last)
			}
			last = k
			ls.Keys++
		}
	}
	ls.Seconds = time.Since(start).Seconds()
	if ls.Seconds > 0 {
		ls.KeysPerSec = float64(ls.Keys) / ls.Seconds
	}
	return ls, nil
}

// cleanup deletes every object under the run's prefix, and the bucket if
// the run created it, unless Keep. It runs even after the caller's
// context is cancelled (Ctrl-C), under its own time limit, and says what
// it did.
func (r *s3Run) cleanup(parent context.Context) string {
	if r.opts.Prefix != "" {
		return fmt.Sprintf("nothing written: listed the objects kept under s3://%s/%s", r.opts.Bucket, r.prefix)
	}
	if r.opts.Keep {
		return fmt.Sprintf("kept: objects under s3://%s/%s", r.opts.Bucket, r.prefix)
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(parent), cleanupLimit)
	defer cancel()
	deleted, err := r.deletePrefix(ctx)
	if err != nil {
		return fmt.Sprintf("failed after deleting %d objects: %v", deleted, err)
	}
	msg := fmt.Sprintf("deleted %d objects", deleted)
	if r.bucketCreated {
		if _, err := r.client.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: aws.String(r.opts.Bucket)}); err != nil {
			return msg + fmt.Sprintf("; bucket %s (created by this run) not removed: %v", r.opts.Bucket, err)
		}
		msg += " and bucket " + r.opts.Bucket
	}
	return msg
}

func (r *s3Run) deletePrefix(ctx context.Context) (int, error) {
	deleted := 0
	pages := s3.NewListObjectsV2Paginator(r.client, &s3.ListObjectsV2Input{
		Bucket: aws.String(r.opts.Bucket), Prefix: aws.String(r.prefix)})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return deleted, fmt.Errorf("listing %s: %w", r.prefix, err)
		}
		if len(page.Contents) == 0 {
			continue
		}
		ids := make([]types.ObjectIdentifier, len(page.Contents))
		for i, obj := range page.Contents {
			ids[i] = types.ObjectIdentifier{Key: obj.Key}
		}
		// A listing page holds at most 1000 keys, the DeleteObjects limit.
		out, err := r.client.DeleteObjects(ctx, &s3.DeleteObjectsInput{Bucket: aws.String(r.opts.Bucket),
			Delete: &types.Delete{Objects: ids, Quiet: aws.Bool(true)}})
		if err != nil {
			return deleted, fmt.Errorf("deleting objects: %w", err)
		}
		if len(out.Errors) > 0 {
			e := out.Errors[0]
			return deleted, fmt.Errorf("deleting %s: %s %s (%d keys failed)", aws.ToString(e.Key),
				aws.ToString(e.Code), aws.ToString(e.Message), len(out.Errors))
		}
		deleted += len(ids)
	}
	return deleted, nil
}

// serverCPU is the CPU time (user + system) of the server processes,
// summed.
func serverCPU(procRoot string, pids []int) (time.Duration, error) {
	var total time.Duration
	for _, pid := range pids {
		c, err := cpustat.PidCPU(procRoot, pid)
		if err != nil {
			return 0, fmt.Errorf("server pid %d: %w", pid, err)
		}
		total += c.Total()
	}
	return total, nil
}
