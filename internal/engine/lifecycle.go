package engine

// The lifecycle runner: one pass visits every bucket with a lifecycle
// configuration (BucketInfo.Lifecycle, validated and stored by the S3
// layer) and applies its enabled rules at the engine's clock
// (Config.Now):
//
//   - Expiration (Days or Date) deletes the current objects a rule
//     selects (prefix, tags, size) once their date has come, through the
//     normal delete path (DeleteObjectIf), so their shard files and
//     inline data are freed like a DeleteObject's. The rule is evaluated
//     again under the object's lock against the quorum version, so an
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
// The scanner runs a pass after each of its cycles (scanLoop), resting
// between objects like the scanner does (ScanThrottle); RunLifecycle runs
// one on demand (tests, tools).

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/shardstore/shardstore/internal/lifecycle"
)

// LifecycleReport sums up a lifecycle pass.
type LifecycleReport struct {
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

func (r *LifecycleReport) fail(err error) {
	r.Failed++
	if len(r.Errors) < 20 {
		r.Errors = append(r.Errors, err.Error())
	}
}

// RunLifecycle runs one lifecycle pass over every bucket now, without
// resting between objects.
func (e *Engine) RunLifecycle(ctx context.Context) (LifecycleReport, error) {
	return e.runLifecycle(ctx, 0)
}

// runLifecycle is one pass; with throttle > 0 it rests after each object
// or upload it acts on or checks, as long as that took times throttle.
func (e *Engine) runLifecycle(ctx context.Context, throttle float64) (LifecycleReport, error) {
	var rep LifecycleReport
	buckets, err := e.ListBuckets(ctx)
	if err != nil {
		return rep, err
	}
	rest := func(t0 time.Time) error {
		if throttle > 0 && e.bg != nil {
			if !e.bg.sleep(time.Duration(float64(time.Since(t0)) * throttle)) {
				return context.Canceled
			}
		}
		return ctx.Err()
	}
	for _, bi := range buckets {
		if bi.Lifecycle == "" {
			continue
		}
		cfg, err := lifecycle.Parse([]byte(bi.Lifecycle))
		if err != nil {
			// Stored documents were validated when they were put; one
			// that no longer parses is left alone rather than guessed at.
			rep.fail(fmt.Errorf("lifecycle %s: %w", bi.Name, err))
			continue
		}
		rep.Buckets++
		now := e.Now()
		expire, abort := cfg.HasObjectActions()
		if expire {
			for _, prefix := range cfg.Prefixes() {
				if err := e.expireObjects(ctx, bi.Name, prefix, cfg, now, &rep, rest); err != nil {
					return rep, err
				}
			}
		}
		if bi.Versioning != "" {
			for _, prefix := range cfg.VersionPrefixes() {
				if err := e.expireVersions(ctx, bi.Name, prefix, cfg, now, &rep, rest); err != nil {
					return rep, err
				}
			}
		}
		if abort {
			if err := e.abortUploads(ctx, bi.Name, cfg, now, &rep, rest); err != nil {
				return rep, err
			}
		}
	}
	return rep, nil
}

func lifecycleObject(oi ObjectInfo) lifecycle.Object {
	return lifecycle.Object{Key: oi.Key, Size: oi.Size, ModTime: oi.ModTime, Tags: oi.Tags}
}

// expireObjects deletes the objects under prefix whose expiration has
// come. Only a context error ends it early; other failures are counted.
func (e *Engine) expireObjects(ctx context.Context, bucket, prefix string, cfg *lifecycle.Configuration, now time.Time,
	rep *LifecycleReport, rest func(time.Time) error) error {
	after := ""
	for {
		page, err := e.ListObjects(ctx, bucket, ListOptions{Prefix: prefix, After: after})
		if errors.Is(err, ErrBucketNotFound) {
			return nil
		}
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			rep.fail(fmt.Errorf("lifecycle %s: list: %w", bucket, err))
			return nil
		}
		for _, oi := range page.Objects {
			rep.Objects++
			if _, due := cfg.ExpiredAt(lifecycleObject(oi), now); !due {
				continue
			}
			t0 := time.Now()
			// Judge the version the delete would remove, as it is now. In
			// a versioned bucket the delete makes a delete marker current;
			// the data stays as a noncurrent version
			// (NoncurrentVersionExpiration's).
			deleted, err := e.DeleteObjectIf(ctx, bucket, oi.Key, func(cur ObjectInfo) bool {
				_, due := cfg.ExpiredAt(lifecycleObject(cur), now)
				return due
			})
			switch {
			case err == nil && deleted:
				rep.Expired++
				e.log.Debug("lifecycle expired object", "bucket", bucket, "key", oi.Key)
			case err == nil, errors.Is(err, ErrObjectNotFound):
			default:
				if ctx.Err() != nil {
					return ctx.Err()
				}
				rep.fail(fmt.Errorf("lifecycle %s/%s: %w", bucket, oi.Key, err))
			}
			if err := rest(t0); err != nil {
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
func (e *Engine) expireVersions(ctx context.Context, bucket, prefix string, cfg *lifecycle.Configuration, now time.Time,
	rep *LifecycleReport, rest func(time.Time) error) error {
	var key string
	var versions []ObjectInfo
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
				rep.Locked++
				continue
			}
			t0 := time.Now()
			_, err := e.DeleteObjectVersion(ctx, bucket, key, DeleteOptions{VersionID: versionName(v.VersionID)})
			switch {
			case err == nil:
				rep.NoncurrentExpired++
				left--
			case errors.Is(err, ErrNoSuchVersion):
				left--
			case errors.Is(err, ErrObjectLocked):
				rep.Locked++ // locked since the listing
			default:
				if ctx.Err() != nil {
					return ctx.Err()
				}
				rep.fail(fmt.Errorf("lifecycle %s/%s version %s: %w", bucket, key, versionName(v.VersionID), err))
			}
			if err := rest(t0); err != nil {
				return err
			}
		}
		cur := versions[0]
		if cur.DeleteMarker && left == 1 {
			if _, ok := cfg.RemovesDeleteMarker(key); ok {
				_, err := e.DeleteObjectVersion(ctx, bucket, key, DeleteOptions{VersionID: versionName(cur.VersionID)})
				switch {
				case err == nil:
					rep.MarkersRemoved++
				case errors.Is(err, ErrNoSuchVersion):
				default:
					rep.fail(fmt.Errorf("lifecycle %s/%s delete marker: %w", bucket, key, err))
				}
			}
		}
		return nil
	}
	opts := ListVersionsOptions{Prefix: prefix}
	for {
		page, err := e.ListObjectVersions(ctx, bucket, opts)
		if errors.Is(err, ErrBucketNotFound) {
			return nil
		}
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			rep.fail(fmt.Errorf("lifecycle %s: list versions: %w", bucket, err))
			return nil
		}
		for _, v := range page.Versions {
			if v.Key != key {
				if err := flush(); err != nil {
					return err
				}
				key = v.Key
				rep.Objects++
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
func (e *Engine) abortUploads(ctx context.Context, bucket string, cfg *lifecycle.Configuration, now time.Time,
	rep *LifecycleReport, rest func(time.Time) error) error {
	opts := ListUploadsOptions{}
	for {
		page, err := e.ListMultipartUploads(ctx, bucket, opts)
		if errors.Is(err, ErrBucketNotFound) {
			return nil
		}
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			rep.fail(fmt.Errorf("lifecycle %s: list uploads: %w", bucket, err))
			return nil
		}
		for _, u := range page.Uploads {
			a, ok := cfg.AbortDue(u.Key, u.Initiated)
			if !ok || now.Before(a.Due) {
				continue
			}
			t0 := time.Now()
			err := e.AbortMultipartUpload(ctx, bucket, u.Key, u.UploadID)
			switch {
			case err == nil:
				rep.Aborted++
				e.log.Debug("lifecycle aborted upload", "bucket", bucket, "key", u.Key, "upload", u.UploadID, "rule", a.RuleID)
			case errors.Is(err, ErrNoSuchUpload):
			default:
				if ctx.Err() != nil {
					return ctx.Err()
				}
				rep.fail(fmt.Errorf("lifecycle %s/%s upload %s: %w", bucket, u.Key, u.UploadID, err))
			}
			if err := rest(t0); err != nil {
				return err
			}
		}
		if !page.IsTruncated {
			return nil
		}
		opts.KeyMarker, opts.UploadIDMarker = page.NextKeyMarker, page.NextUploadIDMarker
	}
}
