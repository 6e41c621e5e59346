package lifecycle

// The runner: one pass visits every bucket with a lifecycle
// configuration (BucketInfo.Lifecycle, validated and stored by the S3
// layer) and applies its enabled rules at the store's clock (Store.Now,
// the engine's Config.Now):
//
//   - Expiration (Days or Date) deletes the current objects a rule
//     selects (prefix, tags, size) once their date has come, through the
//     normal delete path, so their shard files and inline data are freed
//     like a DeleteObject's. The rule is judged again under the object's
//     lock against the quorum version (Store.DeleteObjectIf), so an
//     object overwritten or re-tagged since the listing is judged as it
//     is now.
//   - AbortIncompleteMultipartUpload aborts uploads initiated more than
//     DaysAfterInitiation days before (rounded to midnight UTC as S3
//     does), freeing their parts' data (AbortMultipartUpload).
//   - In a versioned bucket Expiration makes a delete marker current
//     instead (the data stays, as a noncurrent version);
//     NoncurrentVersionExpiration removes noncurrent versions
//     NoncurrentDays after they became noncurrent (keeping the
//     NewerNoncurrentVersions newest), and ExpiredObjectDeleteMarker
//     removes a delete marker left as its key's only version. A bucket
//     without versioning has neither, as in S3.
//
// Object lock: the runner never removes a version under retention or
// legal hold (S3 leaves them in place): NoncurrentVersionExpiration skips
// them (counted as Locked) and DeleteObjectVersion would refuse them
// anyway. Expiration of a current version in a lock-enabled bucket (always
// versioned) only adds a delete marker, which S3 allows.
//
// shardstore runs a pass after each scanner cycle (AfterScanCycle, set as
// engine.Config.AfterScanCycle), resting between objects like the scanner
// does; Runner.Run runs one on demand (tests, tools).

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/shardstore/shardstore/internal/engine"
)

// Store is what a pass needs of the object store: public calls of
// *engine.Engine, so a pass works over the engine's API as any client's
// requests do, and a test can stand in for it.
type Store interface {
	ListBuckets(ctx context.Context) ([]engine.BucketInfo, error)
	ListObjects(ctx context.Context, bucket string, opts engine.ListOptions) (engine.ListResult, error)
	ListObjectVersions(ctx context.Context, bucket string, opts engine.ListVersionsOptions) (engine.ListVersionsResult, error)
	ListMultipartUploads(ctx context.Context, bucket string, opts engine.ListUploadsOptions) (engine.ListUploadsResult, error)
	// DeleteObjectIf deletes the current version (in a versioned bucket:
	// makes a delete marker current) only if still, given that version
	// as it is under the key's lock, returns true.
	DeleteObjectIf(ctx context.Context, bucket, key string, still func(current engine.ObjectInfo) bool) (bool, error)
	DeleteObjectVersion(ctx context.Context, bucket, key string, opts engine.DeleteOptions) (engine.DeleteResult, error)
	AbortMultipartUpload(ctx context.Context, bucket, key, uploadID string) error
	// Now is the clock rules are judged against.
	Now() time.Time
}

// *engine.Engine is the Store shardstore runs passes over.
var _ Store = (*engine.Engine)(nil)

// Report sums up a lifecycle pass.
type Report struct {
	Buckets int `json:"buckets"` // buckets with a lifecycle configuration
	Objects int `json:"objects"` // objects considered
	Expired int `json:"expired"` // objects deleted by an Expiration rule
	Aborted int `json:"aborted"` // multipart uploads aborted
	// NoncurrentExpired counts noncurrent versions a
	// NoncurrentVersionExpiration rule removed; MarkersRemoved expired
	// object delete markers an ExpiredObjectDeleteMarker rule removed.
	NoncurrentExpired int `json:"noncurrent_expired"`
	MarkersRemoved    int `json:"markers_removed"`
	// Locked counts due noncurrent versions left in place because a
	// retention or legal hold protects them.
	Locked int      `json:"locked"`
	Failed int      `json:"failed"`
	Errors []string `json:"errors"`
}

func (r *Report) fail(err error) {
	r.Failed++
	if len(r.Errors) < 20 {
		r.Errors = append(r.Errors, err.Error())
	}
}

// Runner applies the buckets' lifecycle rules to a Store.
type Runner struct {
	store Store
	log   *slog.Logger
	// OnRemoved, when set, is told of each object version or delete
	// marker a pass removed, and each delete marker an expiration made
	// (the bucket's s3:LifecycleExpiration:* events).
	OnRemoved func(Removal)
}

// Removal is one change a lifecycle pass made: Marker is set when an
// expiration made a delete marker (a versioned bucket), else a version
// (VersionID, "" for an unversioned object) or a marker was removed.
type Removal struct {
	Bucket    engine.BucketInfo
	Key       string
	VersionID string
	Size      int64
	ETag      string
	Marker    bool
}

func (p *pass) removed(r Removal) {
	if p.OnRemoved != nil {
		r.Bucket = p.bucket
		p.OnRemoved(r)
	}
}

// NewRunner returns a runner over store, logging what it removes to log
// (nil: discarded).
func NewRunner(store Store, log *slog.Logger) *Runner {
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return &Runner{store: store, log: log}
}

// AfterScanCycle is the hook shardstore sets as
// engine.Config.AfterScanCycle: a lifecycle pass after every scanner
// cycle, resting as the scanner does, logged when it did anything.
func AfterScanCycle(log *slog.Logger) func(context.Context, *engine.Engine, func(time.Duration) error) {
	return AfterScanCycleNotifying(log, nil)
}

// AfterScanCycleNotifying is AfterScanCycle telling onRemoved (nil: no
// one) of every removal, for bucket event notifications.
func AfterScanCycleNotifying(log *slog.Logger, onRemoved func(Removal)) func(context.Context, *engine.Engine, func(time.Duration) error) {
	return func(ctx context.Context, e *engine.Engine, rest func(time.Duration) error) {
		r := NewRunner(e, log)
		r.OnRemoved = onRemoved
		rep, err := r.Run(ctx, rest)
		if err != nil && ctx.Err() != nil {
			return // the jobs stopped
		}
		if rep.Expired > 0 || rep.Aborted > 0 || rep.Failed > 0 {
			r.log.Info("lifecycle pass", "buckets", rep.Buckets, "expired", rep.Expired, "aborted", rep.Aborted,
				"failed", rep.Failed, "errors", rep.Errors)
		}
	}
}

// pass is one run's state: its context, its rest and its report.
type pass struct {
	*Runner
	ctx  context.Context
	rest func(time.Duration) error
	rep  Report
	// bucket is the bucket the pass is in.
	bucket engine.BucketInfo
}

// Run runs one pass over every bucket. With rest set it calls rest after
// each object or upload it acts on or checks, with how long that took
// (the scanner's throttle); a rest error ends the pass.
func (r *Runner) Run(ctx context.Context, rest func(took time.Duration) error) (Report, error) {
	p := &pass{Runner: r, ctx: ctx, rest: rest}
	buckets, err := r.store.ListBuckets(ctx)
	if err != nil {
		return p.rep, err
	}
	for _, bi := range buckets {
		if bi.Lifecycle == "" {
			continue
		}
		cfg, err := Parse([]byte(bi.Lifecycle))
		if err != nil {
			// Stored documents were validated when they were put; one
			// that no longer parses is left alone rather than guessed at.
			p.rep.fail(fmt.Errorf("lifecycle %s: %w", bi.Name, err))
			continue
		}
		p.rep.Buckets++
		p.bucket = bi
		now := r.store.Now()
		expire, abort := cfg.HasObjectActions()
		if expire {
			for _, prefix := range cfg.Prefixes() {
				if err := p.expireObjects(bi.Name, prefix, cfg, now); err != nil {
					return p.rep, err
				}
			}
		}
		if bi.Versioning != "" {
			for _, prefix := range cfg.VersionPrefixes() {
				if err := p.expireVersions(bi.Name, prefix, cfg, now); err != nil {
					return p.rep, err
				}
			}
		}
		if abort {
			if err := p.abortUploads(bi.Name, cfg, now); err != nil {
				return p.rep, err
			}
		}
	}
	return p.rep, nil
}

// rested rests after a step begun at t0 and reports whether the pass
// must end (the context's error, or the rest's).
func (p *pass) rested(t0 time.Time) error {
	if p.rest != nil {
		if err := p.rest(time.Since(t0)); err != nil {
			return err
		}
	}
	return p.ctx.Err()
}

func lifecycleObject(oi engine.ObjectInfo) Object {
	return Object{Key: oi.Key, Size: oi.Size, ModTime: oi.ModTime, Tags: oi.Tags}
}

// versionName is how S3 names a version id ("" is the null version).
func versionName(id string) string {
	if id == "" {
		return engine.NullVersionID
	}
	return id
}

// expireObjects deletes the objects under prefix whose expiration has
// come. Only a context error ends it early; other failures are counted.
func (p *pass) expireObjects(bucket, prefix string, cfg *Configuration, now time.Time) error {
	ctx := p.ctx
	after := ""
	for {
		page, err := p.store.ListObjects(ctx, bucket, engine.ListOptions{Prefix: prefix, After: after})
		if errors.Is(err, engine.ErrBucketNotFound) {
			return nil
		}
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			p.rep.fail(fmt.Errorf("lifecycle %s: list: %w", bucket, err))
			return nil
		}
		for _, oi := range page.Objects {
			p.rep.Objects++
			if _, due := cfg.ExpiredAt(lifecycleObject(oi), now); !due {
				continue
			}
			t0 := time.Now()
			// Judge the version the delete would remove, as it is now. In
			// a versioned bucket the delete makes a delete marker current;
			// the data stays as a noncurrent version
			// (NoncurrentVersionExpiration's).
			deleted, err := p.store.DeleteObjectIf(ctx, bucket, oi.Key, func(cur engine.ObjectInfo) bool {
				_, due := cfg.ExpiredAt(lifecycleObject(cur), now)
				return due
			})
			switch {
			case err == nil && deleted:
				p.rep.Expired++
				if p.bucket.Versioning != "" {
					p.removed(Removal{Key: oi.Key, Marker: true})
				} else {
					p.removed(Removal{Key: oi.Key, Size: oi.Size, ETag: oi.ETag})
				}
				p.log.Debug("lifecycle expired object", "bucket", bucket, "key", oi.Key)
			case err == nil, errors.Is(err, engine.ErrObjectNotFound):
			default:
				if ctx.Err() != nil {
					return ctx.Err()
				}
				p.rep.fail(fmt.Errorf("lifecycle %s/%s: %w", bucket, oi.Key, err))
			}
			if err := p.rested(t0); err != nil {
				return err
			}
		}
		if !page.IsTruncated || page.NextAfter == "" {
			return nil
		}
		after = page.NextAfter
	}
}

// expireVersions applies the noncurrent-version and delete-marker rules
// to the keys under prefix, one key's versions at a time (newest first,
// as ListObjectVersions gives them).
func (p *pass) expireVersions(bucket, prefix string, cfg *Configuration, now time.Time) error {
	ctx := p.ctx
	var key string
	var versions []engine.ObjectInfo
	flush := func() error {
		if len(versions) == 0 {
			return nil
		}
		defer func() { versions = versions[:0] }()
		left := len(versions)
		for i := 1; i < len(versions); i++ {
			v := versions[i]
			o := lifecycleObject(v)
			if v.DeleteMarker {
				o.Tags, o.Size = nil, 0
			}
			// It became noncurrent when its successor was made.
			if _, due := cfg.NoncurrentExpiredAt(o, versions[i-1].ModTime, i-1, now); !due {
				continue
			}
			if v.Lock.Protected(now) {
				p.rep.Locked++
				continue
			}
			t0 := time.Now()
			_, err := p.store.DeleteObjectVersion(ctx, bucket, key, engine.DeleteOptions{VersionID: versionName(v.VersionID)})
			switch {
			case err == nil:
				p.rep.NoncurrentExpired++
				left--
				p.removed(Removal{Key: key, VersionID: v.VersionID, Size: v.Size, ETag: v.ETag})
			case errors.Is(err, engine.ErrNoSuchVersion):
				left--
			case errors.Is(err, engine.ErrObjectLocked):
				p.rep.Locked++ // locked since the listing
			default:
				if ctx.Err() != nil {
					return ctx.Err()
				}
				p.rep.fail(fmt.Errorf("lifecycle %s/%s version %s: %w", bucket, key, versionName(v.VersionID), err))
			}
			if err := p.rested(t0); err != nil {
				return err
			}
		}
		cur := versions[0]
		if cur.DeleteMarker && left == 1 {
			if _, ok := cfg.RemovesDeleteMarker(key); ok {
				_, err := p.store.DeleteObjectVersion(ctx, bucket, key, engine.DeleteOptions{VersionID: versionName(cur.VersionID)})
				switch {
				case err == nil:
					p.rep.MarkersRemoved++
					p.removed(Removal{Key: key, VersionID: cur.VersionID})
				case errors.Is(err, engine.ErrNoSuchVersion):
				default:
					p.rep.fail(fmt.Errorf("lifecycle %s/%s delete marker: %w", bucket, key, err))
				}
			}
		}
		return nil
	}
	opts := engine.ListVersionsOptions{Prefix: prefix}
	for {
		page, err := p.store.ListObjectVersions(ctx, bucket, opts)
		if errors.Is(err, engine.ErrBucketNotFound) {
			return nil
		}
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			p.rep.fail(fmt.Errorf("lifecycle %s: list versions: %w", bucket, err))
			return nil
		}
		for _, v := range page.Versions {
			if v.Key != key {
				if err := flush(); err != nil {
					return err
				}
				key = v.Key
				p.rep.Objects++
			}
			versions = append(versions, v)
		}
		if !page.IsTruncated {
			return flush()
		}
		opts.KeyMarker, opts.VersionIDMarker = page.NextKeyMarker, page.NextVersionIDMarker
	}
}

// abortUploads aborts the bucket's uploads whose abort date has come.
func (p *pass) abortUploads(bucket string, cfg *Configuration, now time.Time) error {
	ctx := p.ctx
	opts := engine.ListUploadsOptions{}
	for {
		page, err := p.store.ListMultipartUploads(ctx, bucket, opts)
		if errors.Is(err, engine.ErrBucketNotFound) {
			return nil
		}
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			p.rep.fail(fmt.Errorf("lifecycle %s: list uploads: %w", bucket, err))
			return nil
		}
		for _, u := range page.Uploads {
			a, ok := cfg.AbortDue(u.Key, u.Initiated)
			if !ok || now.Before(a.Due) {
				continue
			}
			t0 := time.Now()
			err := p.store.AbortMultipartUpload(ctx, bucket, u.Key, u.UploadID)
			switch {
			case err == nil:
				p.rep.Aborted++
				p.log.Debug("lifecycle aborted upload", "bucket", bucket, "key", u.Key, "upload", u.UploadID, "rule", a.RuleID)
			case errors.Is(err, engine.ErrNoSuchUpload):
			default:
				if ctx.Err() != nil {
					return ctx.Err()
				}
				p.rep.fail(fmt.Errorf("lifecycle %s/%s upload %s: %w", bucket, u.Key, u.UploadID, err))
			}
			if err := p.rested(t0); err != nil {
				return err
			}
		}
		if !page.IsTruncated {
			return nil
		}
		opts.KeyMarker, opts.UploadIDMarker = page.NextKeyMarker, page.NextUploadIDMarker
	}
}
