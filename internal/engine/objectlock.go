package engine

// Object lock. A version's retention and legal hold live in its metadata
// (meta.Object.LockMode, RetainUntil, LegalHold); the rules that decide
// what they forbid are package objectlock's. Every path that removes a
// version or drops it on a replacement checks it here: DeleteObjectVersion
// (which DeleteObjects and the lifecycle runner go through), the
// unversioned delete and the replacement of a null version in commitMeta
// (which a lock-enabled bucket, always versioned, never takes, checked
// anyway), and the healer's removal of versions it cannot rebuild. The
// clock is e.Now(), so tests can move it past a retain-until date.

import (
	"context"
	"fmt"
	"time"

	"github.com/shardstore/shardstore/internal/meta"
	"github.com/shardstore/shardstore/internal/objectlock"
)

// lockOf is the object lock state m records.
func lockOf(m *meta.Object) objectlock.Lock {
	l := objectlock.Lock{Mode: m.LockMode, LegalHold: m.LegalHold}
	if m.LockMode != "" {
		l.RetainUntil = time.Unix(0, m.RetainUntil).UTC()
	}
	return l
}

// setLock records l in m.
func setLock(m *meta.Object, l objectlock.Lock) {
	m.LockMode, m.RetainUntil, m.LegalHold = l.Mode, 0, l.LegalHold
	if l.Mode != "" {
		m.RetainUntil = l.RetainUntil.UnixNano()
	}
}

// checkRemovable is nil when nothing protects m from removal at e.Now()
// (bypass: a governance bypass was asked for and allowed).
func (e *Engine) checkRemovable(bucket, key string, m *meta.Object, bypass bool) error {
	if m == nil || m.IsDeleteMarker() {
		return nil
	}
	if err := lockOf(m).CheckRemove(e.Now(), bypass); err != nil {
		return fmt.Errorf("%s/%s version %s: %w", bucket, key, versionName(m.VersionID), err)
	}
	return nil
}

// checkPutLock validates the explicit object lock of a new version in
// bucket: both or neither of mode and date, a known mode, a date in the
// future, a known legal hold state, and only in a bucket with object lock.
func (e *Engine) checkPutLock(info BucketInfo, l objectlock.Lock) error {
	if l.IsZero() {
		return nil
	}
	if info.ObjectLock == "" {
		return fmt.Errorf("bucket %s: %w", info.Name, ErrObjectLockNotEnabled)
	}
	if (l.Mode == "") != l.RetainUntil.IsZero() {
		return fmt.Errorf("%w: a retention needs both a mode and a retain-until date", ErrInvalidArgument)
	}
	if l.Mode != "" && !objectlock.ValidMode(l.Mode) {
		return fmt.Errorf("%w: unknown retention mode %q", ErrInvalidArgument, l.Mode)
	}
	if l.Mode != "" && !l.RetainUntil.After(e.Now()) {
		return fmt.Errorf("%w: the retain until date must be in the future", ErrInvalidArgument)
	}
	switch l.LegalHold {
	case "", objectlock.HoldOn, objectlock.HoldOff:
	default:
		return fmt.Errorf("%w: legal hold status %q", ErrInvalidArgument, l.LegalHold)
	}
	return nil
}

// applyDefaultRetention gives m, a new version about to be committed in
// a bucket described by info, the bucket's default retention when its
// request named none.
func applyDefaultRetention(info BucketInfo, m *meta.Object, now time.Time) error {
	if m.LockMode != "" || m.IsDeleteMarker() || info.ObjectLock == "" {
		return nil
	}
	cfg, _, err := info.ObjectLockConfig()
	if err != nil {
		return err
	}
	if cfg.HasDefault() {
		l := cfg.Default(now)
		l.LegalHold = m.LegalHold
		setLock(m, l)
	}
	return nil
}

// lockEnabledBucket is bucket's info, or ErrObjectLockNotEnabled when
// the bucket has no object lock.
func (e *Engine) lockEnabledBucket(ctx context.Context, bucket string) (BucketInfo, error) {
	info, err := e.BucketInfo(ctx, bucket)
	if err == nil && info.ObjectLock == "" {
		err = fmt.Errorf("bucket %s: %w", bucket, ErrObjectLockNotEnabled)
	}
	return info, err
}

// SetObjectRetention replaces the retention of a version (versionID "":
// the current one) with r.Mode and r.RetainUntil (Mode "" removes it),
// as objectlock.CheckChange allows: extending always, shortening,
// removing or turning GOVERNANCE into COMPLIANCE only with bypass,
// weakening COMPLIANCE or changing its mode never.
func (e *Engine) SetObjectRetention(ctx context.Context, bucket, key, versionID string, r objectlock.Lock, bypass bool) (ObjectInfo, error) {
	info, err := e.lockEnabledBucket(ctx, bucket)
	if err != nil {
		return ObjectInfo{}, err
	}
	next := objectlock.Lock{Mode: r.Mode, RetainUntil: r.RetainUntil}
	if err := e.checkPutLock(info, next); err != nil {
		return ObjectInfo{}, err
	}
	return e.updateVersionMeta(ctx, bucket, key, versionID, func(m *meta.Object) error {
		old := lockOf(m)
		if err := objectlock.CheckChange(old, next, e.Now(), bypass); err != nil {
			return fmt.Errorf("%s/%s: %w", bucket, key, err)
		}
		next.LegalHold = old.LegalHold
		setLock(m, next)
		return nil
	})
}

// SetObjectLegalHold puts a version's legal hold (versionID "": the
// current one) ON or OFF. Anyone allowed to call it may release a hold:
// the S3 layer checks s3:PutObjectLegalHold.
func (e *Engine) SetObjectLegalHold(ctx context.Context, bucket, key, versionID, status string) (ObjectInfo, error) {
	if _, err := e.lockEnabledBucket(ctx, bucket); err != nil {
		return ObjectInfo{}, err
	}
	if status != objectlock.HoldOn && status != objectlock.HoldOff {
		return ObjectInfo{}, fmt.Errorf("%w: legal hold status %q", ErrInvalidArgument, status)
	}
	return e.updateVersionMeta(ctx, bucket, key, versionID, func(m *meta.Object) error {
		m.LegalHold = status
		return nil
	})
}
