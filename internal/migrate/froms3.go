package migrate

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/shardstore/shardstore/internal/engine"
)

// Endpoint is an S3 endpoint and the credentials to use there.
type Endpoint struct {
	URL       string
	AccessKey string
	SecretKey string
	Region    string
}

// S3Options configures FromS3.
type S3Options struct {
	Source Endpoint
	// Target is a running shardstore; its credentials must be allowed
	// the admin action admin:ImportObject (root is).
	Target Endpoint
	// Buckets limits the import to these buckets (empty: every bucket).
	Buckets []string
	// Workers is how many keys are copied at once (at least 1).
	Workers int
	// Out gets the progress lines and the summary.
	Out io.Writer
	// Progress is how often a progress line is printed (0: every 2s).
	Progress time.Duration
	// Delete removes from the target the versions and delete markers
	// (and so the keys) that are gone from the source (s3delete.go).
	Delete bool
	// IDMap is the file where the ids of versions imported under new
	// ids are recorded (JSON lines, IDMapEntry; "": DefaultIDMap). It is
	// rewritten whole after each bucket, and only written when some
	// version needed a new id or the file exists.
	IDMap string
}

// DefaultIDMap is the id map file's name when S3Options.IDMap is empty.
const DefaultIDMap = "shardstore-from-s3-ids.jsonl"

// S3Stats counts what FromS3 did.
type S3Stats struct {
	Buckets int
	Copied  int64 // versions and delete markers written to the target
	Skipped int64 // already on the target
	Bytes   int64 // object bytes copied
	Failed  int64
	// Unverified counts multipart versions whose ETag could not be
	// recomputed (the source does not answer by part).
	Unverified int64
	Failures   []string
	// Remapped counts the source's versions whose ids the target could
	// not keep (imported, or to import, under new ids; see IDMap).
	Remapped int64
	// RemappedBuckets lists the buckets where that happened.
	RemappedBuckets []string
	// Deleted counts the target's versions deleted as gone from the
	// source (S3Options.Delete).
	Deleted int64
	// SkippedBytes are the bytes of the versions already there.
	SkippedBytes int64
	// Total and TotalBytes are what the source lists in all (the first
	// pass, for the progress line's ETA).
	Total, TotalBytes int64
}

// FromS3 copies every bucket of the source (or opts.Buckets) to the
// target shardstore with its configuration and every version and delete
// marker, oldest first, through the target's import path (the
// X-Shardstore-Import-* headers, engine.ImportVersion), so version ids, modification times and
// ETags stay as they were. What the target already holds (same version
// id and ETag) is skipped, so a re-run copies only what changed and an
// interrupted run is resumed by running it again.
func FromS3(ctx context.Context, opts S3Options) (*S3Stats, error) {
	if opts.Workers < 1 {
		opts.Workers = 1
	}
	if opts.Progress <= 0 {
		opts.Progress = 2 * time.Second
	}
	if opts.Out == nil {
		opts.Out = io.Discard
	}
	// The progress line, the buckets' lines and the deletions are
	// printed from several goroutines.
	opts.Out = &lockedWriter{w: opts.Out}
	src, err := newS3Client(opts.Source)
	if err != nil {
		return nil, fmt.Errorf("source: %w", err)
	}
	dst, err := newS3Client(opts.Target)
	if err != nil {
		return nil, fmt.Errorf("target: %w", err)
	}
	if opts.IDMap == "" {
		opts.IDMap = DefaultIDMap
	}
	m := &s3Mover{src: src, dst: dst, opts: opts, stats: &S3Stats{}}
	buckets, err := m.buckets(ctx)
	if err != nil {
		return nil, err
	}
	if err := m.count(ctx, buckets); err != nil {
		return nil, err
	}
	stopProgress := m.progress()
	defer stopProgress()
	for _, b := range buckets {
		if err := m.bucket(ctx, b); err != nil {
			return m.stats, err
		}
		m.stats.Buckets++
	}
	stopProgress()
	st := m.stats
	fmt.Fprintf(opts.Out, "done: buckets %d, versions copied %d, already there %d, bytes %d, failed %d, multipart ETags not recomputed %d",
		st.Buckets, st.Copied, st.Skipped, st.Bytes, st.Failed, st.Unverified)
	if opts.Delete {
		fmt.Fprintf(opts.Out, ", deleted as gone from the source %d", st.Deleted)
	}
	fmt.Fprintln(opts.Out)
	if len(st.RemappedBuckets) > 0 {
		fmt.Fprintf(opts.Out, "version ids: %d versions of buckets %s have new ids (their source ids are not ids shardstore keeps); the map is %s\n",
			st.Remapped, strings.Join(st.RemappedBuckets, ", "), opts.IDMap)
	}
	for _, f := range st.Failures {
		fmt.Fprintf(opts.Out, "failed: %s\n", f)
	}
	if st.Failed > 0 {
		return st, fmt.Errorf("migrate from-s3: %d versions failed (run again to retry them)", st.Failed)
	}
	return st, nil
}

func newS3Client(e Endpoint) (*s3.Client, error) {
	u, err := url.Parse(e.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("endpoint %q is not an http(s) URL", e.URL)
	}
	region := e.Region
	if region == "" {
		region = "us-east-1"
	}
	return s3.New(s3.Options{
		Region:                     region,
		BaseEndpoint:               aws.String(e.URL),
		Credentials:                credentials.NewStaticCredentialsProvider(e.AccessKey, e.SecretKey, ""),
		UsePathStyle:               true,
		RequestChecksumCalculation: aws.RequestChecksumCalculationWhenRequired,
		ResponseChecksumValidation: aws.ResponseChecksumValidationWhenRequired,
	}), nil
}

type s3Mover struct {
	src, dst *s3.Client
	opts     S3Options
	stats    *S3Stats
	mu       sync.Mutex // guards stats.Failures and idMap
	// idMap holds the current bucket's versions imported under new ids.
	idMap []IDMapEntry
}

// mapped records v, now on the target, in the id map when its id is new.
func (m *s3Mover) mapped(b string, v srcVersion) {
	if v.suffix == "" {
		return
	}
	m.mu.Lock()
	m.idMap = append(m.idMap, IDMapEntry{Bucket: b, Key: v.key, SourceID: v.id, TargetID: v.target,
		ModTime: v.at.Format(time.RFC3339Nano), Marker: v.marker})
	m.mu.Unlock()
}

func (m *s3Mover) buckets(ctx context.Context) ([]string, error) {
	out, err := m.src.ListBuckets(ctx, &s3.ListBucketsInput{})
	if err != nil {
		return nil, fmt.Errorf("list the source's buckets: %w", err)
	}
	var all []string
	for _, b := range out.Buckets {
		all = append(all, aws.ToString(b.Name))
	}
	if len(m.opts.Buckets) == 0 {
		return all, nil
	}
	for _, b := range m.opts.Buckets {
		if !slices.Contains(all, b) {
			return nil, fmt.Errorf("bucket %q is not on the source", b)
		}
	}
	return m.opts.Buckets, nil
}

// progress prints a line every opts.Progress until the returned func is
// called (more than once is fine): versions and bytes copied with their
// rates, and how far the run is against the first pass's totals with an
// ETA (progressLine).
func (m *s3Mover) progress() func() {
	done := make(chan struct{})
	var once sync.Once
	start := time.Now()
	go func() {
		t := time.NewTicker(m.opts.Progress)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				fmt.Fprintln(m.opts.Out, progressLine(m.snapshot(), time.Since(start)))
			}
		}
	}()
	return func() { once.Do(func() { close(done) }) }
}

// snapshot reads the counters the progress line shows.
func (m *s3Mover) snapshot() S3Stats {
	return S3Stats{Copied: atomic.LoadInt64(&m.stats.Copied), Bytes: atomic.LoadInt64(&m.stats.Bytes),
		Skipped: atomic.LoadInt64(&m.stats.Skipped), SkippedBytes: atomic.LoadInt64(&m.stats.SkippedBytes),
		Failed: atomic.LoadInt64(&m.stats.Failed), Total: m.stats.Total, TotalBytes: m.stats.TotalBytes}
}

// progressLine is one progress line for st after elapsed. The ETA is the
// longer of the two the copy rates give, versions/s over the versions
// left and bytes/s over the bytes left (small objects are bound by the
// first, large ones by the second); versions already there count as
// done. Before anything is copied, or past the totals (the source grew
// since it was counted), it is "unknown".
func progressLine(st S3Stats, elapsed time.Duration) string {
	sec := max(elapsed.Seconds(), 1e-9)
	line := fmt.Sprintf("copied %d versions (%.1f/s), %d bytes (%.1f MiB/s), already there %d, failed %d",
		st.Copied, float64(st.Copied)/sec, st.Bytes, float64(st.Bytes)/sec/(1<<20), st.Skipped, st.Failed)
	if st.Total <= 0 {
		return line
	}
	done := st.Copied + st.Skipped + st.Failed
	doneBytes := st.Bytes + st.SkippedBytes
	line += fmt.Sprintf("; %d of %d versions (%.1f%%), %.1f of %.1f MiB", done, st.Total,
		100*float64(min(done, st.Total))/float64(st.Total), float64(doneBytes)/(1<<20), float64(st.TotalBytes)/(1<<20))
	leftN, leftB := st.Total-done, st.TotalBytes-doneBytes
	if st.Copied == 0 || leftN < 0 || leftB < 0 {
		return line + ", ETA unknown"
	}
	eta := float64(leftN) / (float64(st.Copied) / sec)
	if st.Bytes > 0 {
		eta = max(eta, float64(leftB)/(float64(st.Bytes)/sec))
	}
	return line + ", ETA " + time.Duration(eta*float64(time.Second)).Round(time.Second).String()
}

// count lists the buckets' versions once for the totals the progress
// line's ETA needs, and prints them.
func (m *s3Mover) count(ctx context.Context, buckets []string) error {
	start := time.Now()
	for _, b := range buckets {
		p := s3.NewListObjectVersionsPaginator(m.src, &s3.ListObjectVersionsInput{Bucket: &b})
		for p.HasMorePages() {
			page, err := p.NextPage(ctx)
			if err != nil {
				return fmt.Errorf("count the versions of %s: %w", b, err)
			}
			m.stats.Total += int64(len(page.Versions) + len(page.DeleteMarkers))
			for _, v := range page.Versions {
				m.stats.TotalBytes += max(aws.ToInt64(v.Size), 0)
			}
		}
	}
	fmt.Fprintf(m.opts.Out, "source: %d versions and delete markers, %d bytes in %d buckets (listed in %s)\n",
		m.stats.Total, m.stats.TotalBytes, len(buckets), time.Since(start).Round(time.Millisecond))
	return nil
}

// srcVersion is one version or delete marker of the source.
type srcVersion struct {
	key, id string // id "null" for the null version
	etag    string
	marker  bool
	latest  bool
	mod     time.Time
	size    int64
	seq     int // its place in the key's listing, newest first
	// order is its place in the listing's answer, versions and markers
	// together (-1: not known; listorder.go).
	order int
	// target is the id the version gets on the target: id, or a new one
	// (newTargetID) when the target could not keep id; suffix is that
	// new id's derived half ("" when id is kept). at is its time there.
	target, suffix string
	at             time.Time
}

// notFound reports an S3 error meaning the configuration is not there
// or not supported by the server.
func notThere(err error) bool {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		switch ae.ErrorCode() {
		case "NoSuchBucketPolicy", "NoSuchLifecycleConfiguration", "NoSuchTagSet", "NoSuchCORSConfiguration",
			"ObjectLockConfigurationNotFoundError", "NotImplemented", "NoSuchTagSetError", "NoSuchKey":
			return true
		}
	}
	return false
}

// bucket copies one bucket: makes it on the target (with object lock
// when the source has it), enables versioning there while versions are
// imported, copies the versions, then the configuration.
func (m *s3Mover) bucket(ctx context.Context, b string) error {
	lock, err := m.src.GetObjectLockConfiguration(ctx, &s3.GetObjectLockConfigurationInput{Bucket: &b})
	if err != nil && !notThere(err) {
		return fmt.Errorf("bucket %s: object lock configuration: %w", b, err)
	}
	locked := err == nil && lock.ObjectLockConfiguration != nil && lock.ObjectLockConfiguration.ObjectLockEnabled == types.ObjectLockEnabledEnabled
	if _, err := m.dst.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: &b}); err != nil {
		if _, err := m.dst.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: &b, ObjectLockEnabledForBucket: aws.Bool(locked)}); err != nil {
			return fmt.Errorf("bucket %s: create on the target: %w", b, err)
		}
	}
	ver, err := m.src.GetBucketVersioning(ctx, &s3.GetBucketVersioningInput{Bucket: &b})
	if err != nil {
		return fmt.Errorf("bucket %s: versioning: %w", b, err)
	}
	if ver.Status != "" {
		if _, err := m.dst.PutBucketVersioning(ctx, &s3.PutBucketVersioningInput{Bucket: &b,
			VersioningConfiguration: &types.VersioningConfiguration{Status: types.BucketVersioningStatusEnabled}}); err != nil {
			return fmt.Errorf("bucket %s: enable versioning on the target: %w", b, err)
		}
	}
	if err := m.objects(ctx, b); err != nil {
		return err
	}
	if ver.Status == types.BucketVersioningStatusSuspended {
		if _, err := m.dst.PutBucketVersioning(ctx, &s3.PutBucketVersioningInput{Bucket: &b,
			VersioningConfiguration: &types.VersioningConfiguration{Status: ver.Status}}); err != nil {
			return fmt.Errorf("bucket %s: versioning on the target: %w", b, err)
		}
	}
	return m.bucketConfig(ctx, b, locked, lock)
}

// bucketConfig copies what of the bucket's configuration the source
// answers: object lock rule, policy, lifecycle, tags, CORS.
func (m *s3Mover) bucketConfig(ctx context.Context, b string, locked bool, lock *s3.GetObjectLockConfigurationOutput) error {
	wrap := func(what string, err error) error {
		if err == nil || notThere(err) {
			return nil
		}
		return fmt.Errorf("bucket %s: %s: %w", b, what, err)
	}
	if locked && lock.ObjectLockConfiguration.Rule != nil {
		_, err := m.dst.PutObjectLockConfiguration(ctx, &s3.PutObjectLockConfigurationInput{Bucket: &b, ObjectLockConfiguration: lock.ObjectLockConfiguration})
		if err := wrap("object lock configuration", err); err != nil {
			return err
		}
	}
	// An empty answer (some servers give one for "none") is none, and
	// one that is not a JSON object is not a policy (a server that does
	// not know ?policy may answer it as a listing): it is reported and
	// not copied.
	p, err := m.src.GetBucketPolicy(ctx, &s3.GetBucketPolicyInput{Bucket: &b})
	if err == nil {
		if doc := strings.TrimSpace(aws.ToString(p.Policy)); doc != "" && (!strings.HasPrefix(doc, "{") || !json.Valid([]byte(doc))) {
			fmt.Fprintf(m.opts.Out, "bucket %s: the source's answer to GetBucketPolicy is not a policy document: not copied\n", b)
			p.Policy = nil
		}
	}
	if err == nil && strings.TrimSpace(aws.ToString(p.Policy)) != "" {
		_, err = m.dst.PutBucketPolicy(ctx, &s3.PutBucketPolicyInput{Bucket: &b, Policy: p.Policy})
		if err := wrap("policy", err); err != nil {
			return err
		}
	} else if err := wrap("policy", err); err != nil {
		return err
	}
	if l, err := m.src.GetBucketLifecycleConfiguration(ctx, &s3.GetBucketLifecycleConfigurationInput{Bucket: &b}); err == nil && len(l.Rules) > 0 {
		_, err = m.dst.PutBucketLifecycleConfiguration(ctx, &s3.PutBucketLifecycleConfigurationInput{Bucket: &b,
			LifecycleConfiguration: &types.BucketLifecycleConfiguration{Rules: l.Rules}})
		if err := wrap("lifecycle", err); err != nil {
			return err
		}
	} else if err := wrap("lifecycle", err); err != nil {
		return err
	}
	if tg, err := m.src.GetBucketTagging(ctx, &s3.GetBucketTaggingInput{Bucket: &b}); err == nil && len(tg.TagSet) > 0 {
		_, err = m.dst.PutBucketTagging(ctx, &s3.PutBucketTaggingInput{Bucket: &b, Tagging: &types.Tagging{TagSet: tg.TagSet}})
		if err := wrap("tags", err); err != nil {
			return err
		}
	} else if err := wrap("tags", err); err != nil {
		return err
	}
	if c, err := m.src.GetBucketCors(ctx, &s3.GetBucketCorsInput{Bucket: &b}); err == nil && len(c.CORSRules) > 0 {
		_, err = m.dst.PutBucketCors(ctx, &s3.PutBucketCorsInput{Bucket: &b, CORSConfiguration: &types.CORSConfiguration{CORSRules: c.CORSRules}})
		if err := wrap("CORS", err); err != nil {
			return err
		}
	} else if err := wrap("CORS", err); err != nil {
		return err
	}
	return nil
}

// listVersions lists every version and delete marker of bucket b on c,
// grouped by key, each key's oldest first.
func listVersions(ctx context.Context, c *s3.Client, b string) (map[string][]srcVersion, []string, error) {
	byKey := map[string][]srcVersion{}
	var keys []string
	p := s3.NewListObjectVersionsPaginator(c, &s3.ListObjectVersionsInput{Bucket: &b})
	var body []byte
	listedBefore := 0
	for p.HasMorePages() {
		page, err := p.NextPage(ctx, func(o *s3.Options) { o.APIOptions = append(o.APIOptions, captureBody(&body)) })
		if err != nil {
			return nil, nil, fmt.Errorf("list the versions of %s: %w", b, err)
		}
		// A page lists each key's versions and markers newest first, in
		// two lists: merge them back into one order by time, and where
		// times are equal by the order of the answer (listorder.go).
		place := map[listed]int{}
		if order, err := listingOrder(body); err == nil && len(order) == len(page.Versions)+len(page.DeleteMarkers) {
			for i, e := range order {
				place[e] = listedBefore + i
			}
			if len(place) != len(order) {
				place = map[listed]int{} // an entry twice: not an order to go by
			}
		}
		listedBefore += len(page.Versions) + len(page.DeleteMarkers)
		var vs []srcVersion
		for _, v := range page.Versions {
			vs = append(vs, srcVersion{key: aws.ToString(v.Key), id: aws.ToString(v.VersionId), etag: strings.Trim(aws.ToString(v.ETag), `"`),
				mod: aws.ToTime(v.LastModified), size: aws.ToInt64(v.Size), latest: aws.ToBool(v.IsLatest)})
		}
		for _, d := range page.DeleteMarkers {
			vs = append(vs, srcVersion{key: aws.ToString(d.Key), id: aws.ToString(d.VersionId), marker: true, mod: aws.ToTime(d.LastModified),
				latest: aws.ToBool(d.IsLatest)})
		}
		for _, v := range vs {
			if v.id == "" {
				v.id = "null"
			}
			v.order = -1
			if i, ok := place[listed{key: v.key, id: v.id, marker: v.marker}]; ok {
				v.order = i
			}
			if _, ok := byKey[v.key]; !ok {
				keys = append(keys, v.key)
			}
			v.seq = len(byKey[v.key])
			byKey[v.key] = append(byKey[v.key], v)
		}
	}
	for k, vs := range byKey {
		sortOldestFirst(vs)
		byKey[k] = vs
	}
	return byKey, keys, nil
}

// sortOldestFirst orders a key's versions oldest first: by time; of
// versions listed with the same time (a source that keeps seconds or
// milliseconds), as the answer listed them (newest first, so the later
// place goes first). Where that order is not known (the answer's body
// was not read back), the latest goes last and otherwise each kind is in
// its list's order, a version before a delete marker of the same time.
func sortOldestFirst(vs []srcVersion) {
	byAnswer := answerOrderFits(vs)
	sort.SliceStable(vs, func(i, j int) bool {
		a, b := vs[i], vs[j]
		if ta, tb := modTime(a), modTime(b); !ta.Equal(tb) {
			return ta.Before(tb)
		}
		if byAnswer {
			return a.order > b.order // listed later: older
		}
		if a.latest != b.latest {
			return b.latest
		}
		if a.marker == b.marker {
			return a.seq > b.seq
		}
		return false
	})
}

// answerOrderFits reports whether the answer's order of a key's
// versions is one to go by: every one has its place, and in that order
// times never rise and the latest, if any, comes first, as S3 lists
// them. Some stores list otherwise (moto lists a key's delete markers
// after all its versions, gofakes3 oldest first); their order says
// nothing about ties.
func answerOrderFits(vs []srcVersion) bool {
	byOrder := slices.Clone(vs)
	sort.Slice(byOrder, func(i, j int) bool { return byOrder[i].order < byOrder[j].order })
	for i, v := range byOrder {
		if v.order < 0 || (v.latest && i != 0) || (i > 0 && modTime(v).After(modTime(byOrder[i-1]))) {
			return false
		}
	}
	return true
}

// planIDs decides, for a key's versions oldest first, the id and time
// each gets on the target: its own id when the target keeps it
// (keptID), else a new one of shardstore's form (newTargetID). A time
// the id does not fix (all but shardstore's ids) is moved on by the
// nanoseconds needed to come after the version before it, so that
// versions listed with the same time keep their order on the target.
func planIDs(bucket string, vs []srcVersion) {
	var prev time.Time
	for i := range vs {
		v := &vs[i]
		v.at, v.target, v.suffix = modTime(*v), v.id, ""
		_, fixed := shardstoreIDTime(v.id, v.mod)
		if !fixed && !prev.IsZero() && !v.at.After(prev) {
			v.at = prev.Add(time.Nanosecond)
		}
		if !keptID(v.id, v.mod) {
			v.suffix = idSuffix(bucket, v.key, v.id)
			v.target = newTargetID(v.at, v.suffix)
		}
		prev = v.at
	}
}

// imported reports whether the target's versions have (the target's
// listing of the key) hold v already: the same id, kind and ETag, and
// the same time to the millisecond (listings give milliseconds); for a
// version given a new id, one whose id ends in v's derived half.
func imported(v srcVersion, have []srcVersion) bool {
	_, ok := importedAs(v, have)
	return ok
}

// importedAs is the target's version that imported(v, have) found.
func importedAs(v srcVersion, have []srcVersion) (srcVersion, bool) {
	i := slices.IndexFunc(have, func(h srcVersion) bool {
		if h.marker != v.marker || h.etag != v.etag {
			return false
		}
		if v.suffix != "" {
			return remappedSuffix(h.id) == v.suffix
		}
		return h.id == v.id && h.mod.Truncate(time.Millisecond).Equal(v.at.Truncate(time.Millisecond))
	})
	if i < 0 {
		return srcVersion{}, false
	}
	return have[i], true
}

// modTime is a version's exact modification time: a shardstore version
// id carries it to the nanosecond (listings give milliseconds).
func modTime(v srcVersion) time.Time {
	if len(v.id) == 32 {
		if ns, err := strconv.ParseUint(v.id[:16], 16, 64); err == nil && ns > 0 && strings.ToLower(v.id) == v.id {
			if t := time.Unix(0, int64(ns)); t.Truncate(time.Millisecond).Equal(v.mod.Truncate(time.Millisecond)) {
				return t.UTC()
			}
		}
	}
	return v.mod.UTC()
}

// objects copies bucket b's versions the target lacks, keys in parallel,
// each key's versions in order, oldest first.
func (m *s3Mover) objects(ctx context.Context, b string) (err error) {
	src, keys, err := listVersions(ctx, m.src, b)
	if err != nil {
		return fmt.Errorf("source: %w", err)
	}
	have, _, err := listVersions(ctx, m.dst, b)
	if err != nil {
		return fmt.Errorf("target: %w", err)
	}
	var kept, remapped int64
	for _, k := range keys {
		planIDs(b, src[k])
		for _, v := range src[k] {
			if v.suffix != "" {
				remapped++
			} else {
				kept++
			}
		}
	}
	if remapped > 0 {
		m.stats.Remapped += remapped
		m.stats.RemappedBuckets = append(m.stats.RemappedBuckets, b)
		fmt.Fprintf(m.opts.Out, "bucket %s: %d version ids kept, %d new (the target cannot keep the source's ids)\n", b, kept, remapped)
	} else {
		fmt.Fprintf(m.opts.Out, "bucket %s: all %d version ids kept\n", b, kept)
	}
	m.idMap = nil
	var deleted map[string]bool
	defer func() {
		// What is on the target now, whatever happened to the rest.
		still := func(e IDMapEntry) bool {
			return !deleted[e.TargetID] && slices.ContainsFunc(have[e.Key], func(h srcVersion) bool { return h.id == e.TargetID })
		}
		if werr := writeIDMap(m.opts.IDMap, b, m.idMap, still); werr != nil && err == nil {
			err = werr
		}
	}()
	jobs := make(chan string)
	var wg sync.WaitGroup
	for range m.opts.Workers {
		wg.Go(func() {
			for k := range jobs {
				m.key(ctx, b, src[k], have[k])
			}
		})
	}
	for _, k := range keys {
		select {
		case jobs <- k:
		case <-ctx.Done():
		}
	}
	close(jobs)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return err
	}
	if m.opts.Delete {
		deleted = m.deleteGone(ctx, b, src, have)
	}
	return ctx.Err()
}

// key copies a key's versions that the target does not hold yet.
func (m *s3Mover) key(ctx context.Context, b string, vs, have []srcVersion) {
	for _, v := range vs {
		if ctx.Err() != nil {
			return
		}
		if h, ok := importedAs(v, have); ok {
			atomic.AddInt64(&m.stats.Skipped, 1)
			atomic.AddInt64(&m.stats.SkippedBytes, v.size)
			// Recorded as it is on the target: a plan may differ from the
			// one that imported it by the nanoseconds of a tie.
			v.target, v.at = h.id, modTime(h)
			m.mapped(b, v)
			continue
		}
		n, err := m.version(ctx, b, v)
		if err != nil {
			atomic.AddInt64(&m.stats.Failed, 1)
			m.mu.Lock()
			m.stats.Failures = append(m.stats.Failures, fmt.Sprintf("%s/%s version %s: %v", b, v.key, v.id, err))
			m.mu.Unlock()
			return // the later versions would land out of order; a re-run retries
		}
		atomic.AddInt64(&m.stats.Copied, 1)
		atomic.AddInt64(&m.stats.Bytes, n)
		m.mapped(b, v)
	}
}

// importHeaders adds the import headers to a target request: parts and
// checksum only for an object imported in parts (partsHeader).
func importHeaders(v srcVersion, etag, parts, checksum string) func(*s3.Options) {
	return func(o *s3.Options) {
		if parts != "" {
			o.APIOptions = append(o.APIOptions, smithyhttp.AddHeaderValue(engine.ImportPartsHeader, parts))
		}
		if checksum != "" {
			o.APIOptions = append(o.APIOptions, smithyhttp.AddHeaderValue(engine.ImportChecksumHeader, checksum))
		}
		o.APIOptions = append(o.APIOptions,
			smithyhttp.AddHeaderValue(engine.ImportVersionIDHeader, v.target),
			smithyhttp.AddHeaderValue(engine.ImportModTimeHeader, v.at.Format(time.RFC3339Nano)),
			v4.SwapComputePayloadSHA256ForUnsignedPayloadMiddleware)
		if v.marker {
			o.APIOptions = append(o.APIOptions, smithyhttp.AddHeaderValue(engine.ImportDeleteMarkerHeader, "true"))
		}
		if etag != "" {
			o.APIOptions = append(o.APIOptions, smithyhttp.AddHeaderValue(engine.ImportETagHeader, etag))
		}
	}
}

// version copies one version or delete marker and checks the target's
// answer: its version id and ETag (and checksum) must be the source's.
func (m *s3Mover) version(ctx context.Context, b string, v srcVersion) (int64, error) {
	if v.marker {
		_, err := m.dst.PutObject(ctx, &s3.PutObjectInput{Bucket: &b, Key: &v.key, ContentLength: aws.Int64(0)}, importHeaders(v, "", "", ""))
		if err != nil {
			return 0, fmt.Errorf("import delete marker: %w", err)
		}
		return 0, nil
	}
	vid := &v.id // "null" names the null version, in a versioned bucket too
	get, err := m.src.GetObject(ctx, &s3.GetObjectInput{Bucket: &b, Key: &v.key, VersionId: vid, ChecksumMode: types.ChecksumModeEnabled})
	if err != nil {
		return 0, fmt.Errorf("read from the source: %w", err)
	}
	defer get.Body.Close()
	etag := strings.Trim(aws.ToString(get.ETag), `"`)
	if etag != v.etag {
		return 0, fmt.Errorf("the source changed while read (ETag %s, listed %s): run again", etag, v.etag)
	}
	var body io.Reader = get.Body
	var sizes []int64
	if parts := multipartParts(etag); parts > 0 {
		// A multipart ETag is checked here, part by part, when the source
		// still answers by part (an object imported whole does not), and
		// the object is imported as the same parts.
		if sizes, err = m.partSizes(ctx, b, v.key, vid, parts, aws.ToInt64(get.ContentLength)); err != nil {
			return 0, err
		}
		if sizes != nil {
			pr := newPartsReader(ctx, m.src, s3.GetObjectInput{Bucket: &b, Key: &v.key, VersionId: vid, IfMatch: get.ETag}, etag, parts)
			defer pr.Close()
			body = pr
		} else {
			atomic.AddInt64(&m.stats.Unverified, 1)
		}
	}
	in := &s3.PutObjectInput{Bucket: &b, Key: &v.key, Body: body, ContentLength: get.ContentLength,
		ContentType: get.ContentType, ContentEncoding: get.ContentEncoding, ContentDisposition: get.ContentDisposition,
		ContentLanguage: get.ContentLanguage, CacheControl: get.CacheControl, Metadata: get.Metadata,
		ObjectLockMode: types.ObjectLockMode(get.ObjectLockMode), ObjectLockRetainUntilDate: get.ObjectLockRetainUntilDate,
		ObjectLockLegalHoldStatus: types.ObjectLockLegalHoldStatus(get.ObjectLockLegalHoldStatus)}
	if get.ExpiresString != nil {
		if t, err := time.Parse(time.RFC1123, *get.ExpiresString); err == nil {
			in.Expires = &t
		}
	}
	if sc := get.StorageClass; sc == types.StorageClassReducedRedundancy {
		in.StorageClass = sc
	}
	var partsHdr, checksumHdr string
	switch {
	case sizes != nil:
		// The target computes the parts' checksums and must make the
		// source's from them.
		partsHdr = formatParts(sizes)
		if alg, val := checksumOf(get); alg != "" && (get.ChecksumType == types.ChecksumTypeComposite || get.ChecksumType == types.ChecksumTypeFullObject) {
			checksumHdr = alg + " " + string(get.ChecksumType) + " " + val
		}
	case get.ChecksumType == types.ChecksumTypeFullObject:
		in.ChecksumCRC32, in.ChecksumCRC32C, in.ChecksumCRC64NVME = get.ChecksumCRC32, get.ChecksumCRC32C, get.ChecksumCRC64NVME
		in.ChecksumSHA1, in.ChecksumSHA256 = get.ChecksumSHA1, get.ChecksumSHA256
	}
	if aws.ToInt32(get.TagCount) > 0 {
		tg, err := m.src.GetObjectTagging(ctx, &s3.GetObjectTaggingInput{Bucket: &b, Key: &v.key, VersionId: vid})
		if err != nil {
			return 0, fmt.Errorf("read the source's tags: %w", err)
		}
		q := url.Values{}
		for _, t := range tg.TagSet {
			q.Set(aws.ToString(t.Key), aws.ToString(t.Value))
		}
		in.Tagging = aws.String(q.Encode())
	}
	put, err := m.dst.PutObject(ctx, in, importHeaders(v, etag, partsHdr, checksumHdr))
	if err != nil {
		return 0, fmt.Errorf("import: %w", err)
	}
	if got := strings.Trim(aws.ToString(put.ETag), `"`); got != etag {
		return 0, fmt.Errorf("the target stored ETag %s, the source has %s", got, etag)
	}
	if got := aws.ToString(put.VersionId); v.target != "null" && got != v.target {
		return 0, fmt.Errorf("the target stored version id %q", got)
	}
	return aws.ToInt64(get.ContentLength), nil
}

// partsReader reads a multipart object part by part (GET partNumber)
// and checks, before it gives out the last byte, that the parts' MD5s
// make the object's ETag ("<md5 of the parts' md5s>-<parts>"), so a
// mismatch fails the import's PUT before the target has the whole body.
type partsReader struct {
	ctx   context.Context
	src   *s3.Client
	in    s3.GetObjectInput
	etag  string
	parts int32
	next  int32 // the part to open next (1-based)
	cur   io.ReadCloser
	h     hash.Hash // this part's MD5
	sums  []byte    // the MD5s of the parts read
	held  []byte    // the byte held back until the end is verified
	err   error
}

func newPartsReader(ctx context.Context, src *s3.Client, in s3.GetObjectInput, etag string, parts int32) *partsReader {
	return &partsReader{ctx: ctx, src: src, in: in, etag: etag, parts: parts, next: 1}
}

// fill returns the next bytes of the whole object, io.EOF at its end.
func (r *partsReader) fill(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	for {
		if r.cur == nil {
			if r.next > r.parts {
				return 0, io.EOF
			}
			in := r.in
			in.PartNumber = aws.Int32(r.next)
			out, err := r.src.GetObject(r.ctx, &in)
			if err != nil {
				return 0, fmt.Errorf("read part %d from the source: %w", r.next, err)
			}
			r.cur, r.h = out.Body, md5.New()
			r.next++
		}
		n, err := r.cur.Read(p)
		r.h.Write(p[:n])
		if err == io.EOF {
			r.cur.Close()
			r.cur = nil
			r.sums = r.h.Sum(r.sums)
			err = nil
		}
		if n > 0 || err != nil {
			return n, err
		}
	}
}

func (r *partsReader) Read(p []byte) (int, error) {
	if r.err != nil {
		return 0, r.err
	}
	if len(p) == 0 {
		return 0, nil
	}
	// Keep one byte back: it goes out only once the next read has
	// shown more data, or the end has been verified.
	if r.held == nil {
		buf := make([]byte, 1)
		n, err := r.fill(buf)
		if err != nil {
			r.err = err
			if err == io.EOF {
				r.err = r.verify()
				if r.err == nil {
					r.err = io.EOF
				}
			}
			return 0, r.err
		}
		r.held = buf[:n]
	}
	next := p[1:]
	var one [1]byte
	if len(next) == 0 {
		next = one[:]
	}
	n, err := r.fill(next)
	if n > 0 {
		// Out go the held byte and all but the last byte read, which is
		// held for the next call.
		last := next[n-1]
		p[0] = r.held[0]
		if len(p) == 1 {
			n = 1
		}
		r.held[0] = last
		return n, nil
	}
	p[0] = r.held[0]
	if err == io.EOF {
		if verr := r.verify(); verr != nil {
			r.err = verr
			return 0, verr
		}
		r.held, r.err = nil, io.EOF
		return 1, nil
	}
	if err != nil {
		r.err = err
		return 0, err
	}
	return 0, nil
}

func (r *partsReader) verify() error {
	sum := md5.Sum(r.sums)
	if got := fmt.Sprintf("%s-%d", hex.EncodeToString(sum[:]), r.parts); got != r.etag {
		return fmt.Errorf("the parts read make ETag %s, the source says %s", got, r.etag)
	}
	return nil
}

func (r *partsReader) Close() error {
	if r.cur != nil {
		return r.cur.Close()
	}
	return nil
}

// multipartParts is the part count of a multipart ETag, 0 for another.
func multipartParts(etag string) int32 {
	sum, n, ok := strings.Cut(etag, "-")
	if !ok || len(sum) != 32 {
		return 0
	}
	if _, err := hex.DecodeString(sum); err != nil {
		return 0
	}
	parts, err := strconv.ParseInt(n, 10, 32)
	if err != nil || parts < 1 || parts > 10000 {
		return 0
	}
	return int32(parts)
}

// partSizes is the sizes of a multipart version's parts as the source
// answers them (HEAD partNumber=N), nil when it does not answer by
// part (the part count differs from the ETag's, as for an object once
// imported whole) or its parts do not add up to the object's size.
func (m *s3Mover) partSizes(ctx context.Context, b, key string, vid *string, parts int32, size int64) ([]int64, error) {
	sizes := make([]int64, 0, parts)
	var total int64
	for n := int32(1); n <= parts; n++ {
		head, err := m.src.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &b, Key: &key, VersionId: vid, PartNumber: aws.Int32(n)})
		if err != nil {
			return nil, fmt.Errorf("read the source's part layout (part %d): %w", n, err)
		}
		if aws.ToInt32(head.PartsCount) != parts {
			return nil, nil
		}
		ps := aws.ToInt64(head.ContentLength)
		if ps < 1 || ps > engine.MaxPutSize {
			return nil, nil
		}
		sizes = append(sizes, ps)
		total += ps
	}
	if total != size {
		return nil, nil
	}
	return sizes, nil
}

// formatParts writes part sizes as engine.ImportPartsHeader reads them,
// runs of one size as "SIZE*COUNT".
func formatParts(sizes []int64) string {
	var b strings.Builder
	for i := 0; i < len(sizes); {
		j := i
		for j < len(sizes) && sizes[j] == sizes[i] {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.FormatInt(sizes[i], 10))
		if j-i > 1 {
			b.WriteString("*" + strconv.Itoa(j-i))
		}
		i = j
	}
	return b.String()
}

// checksumOf is the algorithm and value of the checksum a GET answered.
func checksumOf(g *s3.GetObjectOutput) (string, string) {
	for _, c := range []struct{ alg, val string }{{"CRC32", aws.ToString(g.ChecksumCRC32)}, {"CRC32C", aws.ToString(g.ChecksumCRC32C)},
		{"CRC64NVME", aws.ToString(g.ChecksumCRC64NVME)}, {"SHA1", aws.ToString(g.ChecksumSHA1)}, {"SHA256", aws.ToString(g.ChecksumSHA256)}} {
		if c.val != "" {
			return c.alg, c.val
		}
	}
	return "", ""
}

// lockedWriter serialises writes to w.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
