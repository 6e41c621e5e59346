package s3api

// Bucket lifecycle configuration (?lifecycle on a bucket).
//
//   - PutBucketLifecycleConfiguration validates the document as S3 does
//     (internal/lifecycle.Parse), gives rules without an ID a random one
//     as S3 does, and stores the canonical form in the bucket record
//     (engine.BucketConfigLifecycle); it needs Content-MD5 or an
//     x-amz-checksum-* header, like S3.
//   - GetBucketLifecycleConfiguration answers it with S3's namespace, or
//     NoSuchLifecycleConfiguration; DeleteBucketLifecycle removes it.
//   - GET, HEAD, PUT, CopyObject and CompleteMultipartUpload answer
//     x-amz-expiration for an object an enabled rule will expire, and
//     CreateMultipartUpload answers x-amz-abort-date / x-amz-abort-rule-id
//     for an upload a rule will abort. Documents are parsed once per
//     bucket and text (Server.lifecycles, a docCache), so these add no engine reads.
//
// The rules themselves run after every scanner cycle, over the engine's
// public calls (internal/lifecycle/runner.go).
// Access: s3:GetLifecycleConfiguration and s3:PutLifecycleConfiguration
// (DeleteBucketLifecycle too), the bucket owner's by default.

import (
	"crypto/rand"
	"encoding/base32"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/shardstore/shardstore/internal/access"
	"github.com/shardstore/shardstore/internal/engine"
	"github.com/shardstore/shardstore/internal/lifecycle"
)

// bucketLifecycle is bi's parsed lifecycle configuration, nil when it
// has none or it does not parse (a stored document always did when it
// was put); parsed documents are cached by bucket and text.
func (s *Server) bucketLifecycle(bi engine.BucketInfo) *lifecycle.Configuration {
	if bi.Lifecycle == "" {
		return nil
	}
	return s.lifecycles.get(bi.Name+"\x00"+bi.Lifecycle, func() *lifecycle.Configuration {
		cfg, err := lifecycle.Parse([]byte(bi.Lifecycle))
		if err != nil {
			return nil
		}
		return cfg
	})
}

// setExpiration answers x-amz-expiration for an object a rule of bi's
// lifecycle configuration will expire.
func (q *request) setExpiration(bi engine.BucketInfo, oi engine.ObjectInfo) {
	cfg := q.s.bucketLifecycle(bi)
	if cfg == nil {
		return
	}
	// Expiration rules act on current versions only; a noncurrent one
	// read by versionId is not what they would expire.
	if q.param("versionId") != "" && !oi.IsLatest {
		return
	}
	a, ok := cfg.Expiry(lifecycle.Object{Key: oi.Key, Size: oi.Size, ModTime: oi.ModTime, Tags: oi.Tags})
	if !ok {
		return
	}
	q.w.Header().Set("X-Amz-Expiration", expirationHeader(a))
}

// expirationHeader is the x-amz-expiration value S3 sends.
func expirationHeader(a lifecycle.Action) string {
	return fmt.Sprintf(`expiry-date="%s", rule-id="%s"`, a.Due.UTC().Format(http.TimeFormat), a.RuleID)
}

// setAbortDate answers x-amz-abort-date and x-amz-abort-rule-id for an
// upload of key initiated now that a rule will abort.
func (q *request) setAbortDate(bi engine.BucketInfo, key string, initiated time.Time) {
	cfg := q.s.bucketLifecycle(bi)
	if cfg == nil {
		return
	}
	a, ok := cfg.AbortDue(key, initiated)
	if !ok {
		return
	}
	h := q.w.Header()
	h.Set("X-Amz-Abort-Date", a.Due.UTC().Format(http.TimeFormat))
	h.Set("X-Amz-Abort-Rule-Id", a.RuleID)
}

// errNoSuchLifecycle answers GetBucketLifecycleConfiguration on a bucket
// without one.
func errNoSuchLifecycle() *Error {
	return errorf("NoSuchLifecycleConfiguration", http.StatusNotFound, "The lifecycle configuration does not exist")
}

// lifecycleError turns a validation failure into S3's error.
func lifecycleError(err error) error {
	var le *lifecycle.Error
	if !errors.As(err, &le) {
		return errMalformedXML()
	}
	status := http.StatusBadRequest
	if le.Code == "NotImplemented" {
		status = http.StatusNotImplemented
	}
	return errorf(le.Code, status, "%s", le.Message)
}

// ruleID is a random rule ID for a rule sent without one, as S3 makes.
func ruleID() string {
	var b [20]byte
	rand.Read(b[:])
	return base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b[:])
}

func handlePutBucketLifecycleConfiguration(q *request) error {
	if _, err := q.bucketAccess(q.bucket, access.BucketAdmin); err != nil {
		return err
	}
	body, err := q.readConfigBody(true)
	if err != nil {
		return err
	}
	cfg, err := lifecycle.Parse(body)
	if err != nil {
		return lifecycleError(err)
	}
	for i := range cfg.Rules {
		if cfg.Rules[i].ID == "" {
			cfg.Rules[i].ID = ruleID()
		}
	}
	cfg.NS = ""
	if err := q.storeConfig(engine.BucketConfigLifecycle, cfg); err != nil {
		return err
	}
	q.writeEmpty(http.StatusOK)
	return nil
}

func handleGetBucketLifecycleConfiguration(q *request) error {
	bi, err := q.bucketAccess(q.bucket, access.BucketAdmin)
	if err != nil {
		return err
	}
	cfg := q.s.bucketLifecycle(bi)
	if cfg == nil {
		return errNoSuchLifecycle()
	}
	out := *cfg
	out.NS = s3NS
	q.writeXML(&out)
	return nil
}

func handleDeleteBucketLifecycle(q *request) error {
	if _, err := q.bucketAccess(q.bucket, access.BucketAdmin); err != nil {
		return err
	}
	if err := q.storeConfig(engine.BucketConfigLifecycle, nil); err != nil {
		return err
	}
	q.writeEmpty(http.StatusNoContent)
	return nil
}
