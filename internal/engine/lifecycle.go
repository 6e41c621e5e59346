package engine

// The lifecycle runner: one pass visits every bucket with a lifecycle
// configuration (BucketInfo.Lifecycle, validated and stored by the S3
// layer) and applies its enabled rules at the engine's clock
// (Config.Now):
//
//   - Expiration (Days or Date) deletes the current objects a rule
//     selects (prefix, tags, size) once their date has come, through the
//     normal delete path (deleteObject), so their shard files and inline
//     data are freed like a DeleteObject's. The rule is evaluated again
//     under the object's lock against the quorum version, so an object
//     overwritten or re-tagged since the listing is judged as it is now.
//   - AbortIncompleteMultipartUpload aborts uploads initiated more than
//     DaysAfterInitiation days before (rounded to midnight UTC as S3
//     does), freeing their parts' data (AbortMultipartUpload).
//   - ExpiredObjectDeleteMarker and NoncurrentVersionExpiration act on
//     delete markers and noncurrent versions; a bucket without versioning
//     has neither (every object is its single current version), so they
//     have nothing to do here, as in S3 on an unversioned bucket.
//
// Object lock: when retention and legal holds exist, the runner must not
// delete a version that is under retention or legal hold; expiring such
// an object is skipped (S3 leaves locked versions in place), and that
// check belongs in the keep function passed to deleteObject below.
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
	Buckets int      `json:"buckets"` // buckets with a lifecycle configuration
	Objects int      `json:"objects"` // objects considered
	Expired int      `json:"expired"` // objects deleted by an Expiration rule
	Aborted int      `json:"aborted"` // multipart uploads aborted
	Failed  int      `json:"failed"`
	Errors  []string `json:"errors"`
}

func (r *LifecycleReport) fail(err error) {
	r.Failed++
	if len(r.Errors) < 20 {
		r.Errors = append(r.Errors, err.Error())
	}
}

// now is the engine's clock (Config.Now, time.Now by default).
func (e *Engine) now() time.Time {
	if e.cfg.Now != nil {
		return e.cfg.Now()
	}
	return time.Now()
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
		now := e.now()
		expire, abort := cfg.HasObjectActions()
		if expire {
			for _, prefix := range cfg.Prefixes() {
				if err := e.expireObjects(ctx, bi.Name, prefix, cfg, now, &rep, rest); err != nil {
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
			deleted, err := e.deleteObject(ctx, bucket, oi.Key, func(cur ObjectInfo) bool {
				// Judge the version the delete would remove, as it is now.
				_, due := cfg.ExpiredAt(lifecycleObject(cur), now)
				return !due
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
