package s3api

// S3 Object Lock (write once, read many) at the HTTP layer. Package
// objectlock holds the rules and the configuration document; the engine
// records each version's retention and legal hold and refuses what they
// forbid (engine.ErrObjectLocked). This layer reads and answers S3's
// headers and documents, and decides the permissions S3 asks for.
//
//   - CreateBucket with x-amz-bucket-object-lock-enabled: true makes a
//     bucket with object lock (and so versioning Enabled).
//     Put/GetObjectLockConfiguration (?object-lock on a bucket) set and
//     show its ObjectLockConfiguration, the default retention new
//     versions get; putting one on an existing bucket needs versioning
//     Enabled (409 InvalidBucketState), and versioning can then never be
//     suspended. A configuration cannot be removed.
//   - PutObject, CopyObject (the copy never takes its source's lock) and
//     CreateMultipartUpload take x-amz-object-lock-mode with
//     x-amz-object-lock-retain-until-date (both or neither, a date in the
//     future) and x-amz-object-lock-legal-hold (ON or OFF); GET and HEAD
//     answer them for a version that has them, to callers who may read
//     them (s3:GetObjectRetention, s3:GetObjectLegalHold).
//   - Put/GetObjectRetention (?retention) and Put/GetObjectLegalHold
//     (?legal-hold) on an object change and show one version's (the
//     current one, or versionId's). An empty Retention document removes
//     a retention, which GOVERNANCE allows only with a bypass.
//   - x-amz-bypass-governance-retention: true on DeleteObject,
//     DeleteObjects and PutObjectRetention lets the request weaken
//     GOVERNANCE retention, or turn it into COMPLIANCE, when its caller holds
//     s3:BypassGovernanceRetention; for anyone else it is no bypass, and
//     the request is refused as S3 refuses it, AccessDenied.
//   - As S3 requires, PutObjectRetention, PutObjectLegalHold,
//     PutObjectLockConfiguration and a PutObject that sets a lock or goes
//     to a bucket with a default retention must carry Content-MD5 or a
//     flexible checksum; shardstore also accepts a body SHA-256 the
//     signature covers (AuthResult.PayloadSigned), which S3 does not.
//
// Permissions: the object lock actions are decided by policies; ACLs
// grant none of them, so without a policy the object's owner and the
// bucket's owner may read and set retention and legal holds, and only
// the bucket's owner may bypass GOVERNANCE. A write that sets a lock
// needs s3:PutObjectRetention or s3:PutObjectLegalHold besides
// s3:PutObject where a policy decides, as in AWS (checkLockWrite). The
// s3:object-lock-* condition keys carry what the request sets. These
// rules are access.Decide's (access.ObjectRetention and the other lock
// operations, access.Request.PartOfWrite); this file asks them.

import (
	"encoding/xml"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/shardstore/shardstore/internal/access"
	"github.com/shardstore/shardstore/internal/engine"
	"github.com/shardstore/shardstore/internal/notify"
	"github.com/shardstore/shardstore/internal/objectlock"
)

// The object lock request headers.
const (
	hdrLockMode          = "X-Amz-Object-Lock-Mode"
	hdrLockRetainUntil   = "X-Amz-Object-Lock-Retain-Until-Date"
	hdrLockLegalHold     = "X-Amz-Object-Lock-Legal-Hold"
	hdrBypassGovernance  = "X-Amz-Bypass-Governance-Retention"
	hdrBucketLockEnabled = "X-Amz-Bucket-Object-Lock-Enabled"
)

// Errors S3 answers for object lock, with its messages.
func errObjectLockNotEnabled() *Error {
	return errInvalidRequest("Bucket is missing Object Lock Configuration")
}

func errNoSuchObjectLockConfiguration() *Error {
	return errorf("NoSuchObjectLockConfiguration", http.StatusNotFound,
		"The specified object does not have a ObjectLock configuration")
}

func errObjectLockConfigurationNotFound() *Error {
	return errorf("ObjectLockConfigurationNotFoundError", http.StatusNotFound,
		"Object Lock configuration does not exist for this bucket")
}

func errPastRetainUntil() *Error {
	return errInvalidArgument("The retain until date must be in the future!")
}

// invalidBucketState is 409 InvalidBucketState with msg, keeping the
// engine's error as the cause.
func invalidBucketState(msg string, err error) *Error {
	return &Error{Code: "InvalidBucketState", Status: http.StatusConflict, Message: msg, Err: err}
}

// lockError turns a validation error of package objectlock into the S3
// error it names (MalformedXML, InvalidArgument).
func lockError(err error) error {
	var le *objectlock.Error
	if errors.As(err, &le) {
		return &Error{Code: le.Code, Status: http.StatusBadRequest, Message: le.Message, Err: err}
	}
	return err
}

// lockHeaders reads the x-amz-object-lock-* headers of a write into the
// lock they ask for, validated as S3 validates them at now.
func lockHeaders(h http.Header, now time.Time) (objectlock.Lock, error) {
	var l objectlock.Lock
	mode, until := strings.TrimSpace(h.Get(hdrLockMode)), strings.TrimSpace(h.Get(hdrLockRetainUntil))
	if (mode == "") != (until == "") {
		return l, errInvalidArgument("x-amz-object-lock-retain-until-date and x-amz-object-lock-mode must both be supplied")
	}
	if mode != "" {
		if !objectlock.ValidMode(mode) {
			return l, errInvalidArgument("Unknown wormMode directive.")
		}
		t, err := objectlock.ParseRetainUntil(until)
		if err != nil {
			return l, lockError(err)
		}
		if !t.After(now) {
			return l, errPastRetainUntil()
		}
		l.Mode, l.RetainUntil = mode, t
	}
	switch hold := strings.TrimSpace(h.Get(hdrLockLegalHold)); hold {
	case "":
	case objectlock.HoldOn, objectlock.HoldOff:
		l.LegalHold = hold
	default:
		return l, errInvalidArgument("Legal Hold must be either of 'ON' or 'OFF'")
	}
	return l, nil
}

// writeLock reads the object lock a PutObject, CopyObject,
// CreateMultipartUpload or form upload into bi asks for. Asking for any
// in a bucket without object lock is refused here, before the body is
// read, as the engine would refuse it.
func (q *request) writeLock(bi engine.BucketInfo) (objectlock.Lock, error) {
	now := time.Now()
	if q.importing {
		now = importEarliest // an imported retention may have expired since
	}
	l, err := lockHeaders(q.r.Header, now)
	if err != nil {
		return l, err
	}
	if !l.IsZero() && bi.ObjectLock == "" {
		return l, errObjectLockNotEnabled()
	}
	return l, nil
}

// checkLockWrite applies, to a write that sets a retention or a legal
// hold, AWS's rule that it needs s3:PutObjectRetention or
// s3:PutObjectLegalHold besides s3:PutObject.
func (q *request) checkLockWrite(bi engine.BucketInfo, l objectlock.Lock) error {
	if l.Mode != "" && !q.secondaryAllows(bi, access.PutObjectRetention) {
		return errAccessDenied()
	}
	if l.LegalHold != "" && !q.secondaryAllows(bi, access.PutObjectLegalHold) {
		return errAccessDenied()
	}
	return nil
}

// checkLockChecksum applies S3's rule that a PutObject with object lock
// parameters, or into a bucket with a default retention, must carry
// Content-MD5 or a flexible checksum (has: the request has one). A body
// whose SHA-256 the signature covers counts too, which S3 does not:
// aws-sdk-go-v2 over plain HTTP sends exactly that and nothing else by
// default, and the verified digest is a stronger check than Content-MD5.
func checkLockChecksum(bi engine.BucketInfo, l objectlock.Lock, has bool) error {
	if has {
		return nil
	}
	need := !l.IsZero()
	if !need {
		cfg, _, err := bi.ObjectLockConfig()
		if err != nil {
			return fmt.Errorf("bucket %s: %w", bi.Name, err)
		}
		need = cfg.HasDefault()
	}
	if need {
		return errInvalidRequest("Content-MD5 OR x-amz-checksum- HTTP header is required for Put Object requests with Object Lock parameters")
	}
	return nil
}

// readLockBody reads the body of PutObjectRetention, PutObjectLegalHold
// or PutObjectLockConfiguration, which S3 accepts only with Content-MD5
// or a flexible checksum (verified here).
func (q *request) readLockBody() ([]byte, error) {
	md5sum, cs, err := q.bodyDigests()
	if err != nil {
		return nil, err
	}
	if md5sum == nil && cs.alg == "" && !q.payloadSigned {
		return nil, errInvalidRequest("Missing required header for this request: Content-MD5")
	}
	return q.readConfigBody(false)
}

// bypassGovernance reports whether the request asks to bypass GOVERNANCE
// retention (x-amz-bypass-governance-retention: true) and its caller may
// do so on r (s3:BypassGovernanceRetention). A caller who may not gets
// no bypass, so the request fails where the retention forbids it.
func (q *request) bypassGovernance(r resource) bool {
	if !strings.EqualFold(strings.TrimSpace(q.r.Header.Get(hdrBypassGovernance)), "true") {
		return false
	}
	return q.allows(access.BypassGovernance, r)
}

// lockConditionKeys adds the s3:object-lock-* condition keys for what the
// request sets: a PutObjectRetention or PutObjectLegalHold body's
// (q.lock), else the x-amz-object-lock-* headers.
func (q *request) lockConditionKeys(m map[string][]string) {
	var mode, until, hold string
	var untilT time.Time
	if l := q.lock; l != nil {
		mode, hold, untilT = l.Mode, l.LegalHold, l.RetainUntil
		if l.Mode != "" {
			until = objectlock.FormatRetainUntil(l.RetainUntil)
		}
	} else {
		h := q.r.Header
		mode, until, hold = h.Get(hdrLockMode), h.Get(hdrLockRetainUntil), h.Get(hdrLockLegalHold)
		if until != "" {
			untilT, _ = objectlock.ParseRetainUntil(until)
		}
	}
	for k, v := range map[string]string{"s3:object-lock-mode": mode, "s3:object-lock-retain-until-date": until,
		"s3:object-lock-legal-hold": hold} {
		if v != "" {
			m[k] = []string{v}
		}
	}
	if !untilT.IsZero() {
		days := max(0, int(math.Ceil(time.Until(untilT).Hours()/24)))
		m["s3:object-lock-remaining-retention-days"] = []string{strconv.Itoa(days)}
	}
}

// setLockHeaders adds a version's retention and legal hold to a GET or
// HEAD answer, each to a caller who may read it (as S3 does).
func (q *request) setLockHeaders(bi engine.BucketInfo, oi engine.ObjectInfo) {
	l := oi.Lock
	if l.Mode == "" && l.LegalHold == "" {
		return
	}
	r := q.objectResource(bi, oi)
	h := q.w.Header()
	if l.Mode != "" && q.allows(access.ObjectRetention, r) {
		h.Set(hdrLockMode, l.Mode)
		h.Set(hdrLockRetainUntil, objectlock.FormatRetainUntil(l.RetainUntil))
	}
	if l.LegalHold != "" && q.allows(access.ObjectLegalHold, r) {
		h.Set(hdrLockLegalHold, l.LegalHold)
	}
}

// createLockEnabled reads CreateBucket's x-amz-bucket-object-lock-enabled.
func createLockEnabled(h http.Header) (bool, error) {
	switch v := strings.TrimSpace(h.Get(hdrBucketLockEnabled)); {
	case v == "" || strings.EqualFold(v, "false"):
		return false, nil
	case strings.EqualFold(v, "true"):
		return true, nil
	}
	return false, errInvalidArgument("Invalid x-amz-bucket-object-lock-enabled header value; must be true or false")
}

// xmlUnknown catches elements a document should not have.
type xmlUnknown struct {
	XMLName xml.Name
}

// xmlRetention is the ?retention document.
type xmlRetention struct {
	XMLName         xml.Name     `xml:"Retention"`
	NS              string       `xml:"xmlns,attr,omitempty"`
	Mode            string       `xml:"Mode,omitempty"`
	RetainUntilDate string       `xml:"RetainUntilDate,omitempty"`
	Unknown         []xmlUnknown `xml:",any"`
}

// xmlLegalHold is the ?legal-hold document.
type xmlLegalHold struct {
	XMLName xml.Name     `xml:"LegalHold"`
	NS      string       `xml:"xmlns,attr,omitempty"`
	Status  string       `xml:"Status"`
	Unknown []xmlUnknown `xml:",any"`
}

// parseRetention reads a PutObjectRetention body at now: a mode with a
// future retain-until date, or neither (which removes the retention).
func parseRetention(body []byte, now time.Time) (objectlock.Lock, error) {
	var doc xmlRetention
	if err := xml.Unmarshal(body, &doc); err != nil || len(doc.Unknown) > 0 {
		return objectlock.Lock{}, errMalformedXML()
	}
	mode, until := strings.TrimSpace(doc.Mode), strings.TrimSpace(doc.RetainUntilDate)
	if mode == "" && until == "" {
		return objectlock.Lock{}, nil
	}
	if mode == "" || until == "" || !objectlock.ValidMode(mode) {
		return objectlock.Lock{}, errMalformedXML()
	}
	t, err := objectlock.ParseRetainUntil(until)
	if err != nil {
		return objectlock.Lock{}, errMalformedXML()
	}
	if !t.After(now) {
		return objectlock.Lock{}, errPastRetainUntil()
	}
	return objectlock.Lock{Mode: mode, RetainUntil: t}, nil
}

// parseLegalHold reads a PutObjectLegalHold body: ON or OFF.
func parseLegalHold(body []byte) (string, error) {
	var doc xmlLegalHold
	if err := xml.Unmarshal(body, &doc); err != nil || len(doc.Unknown) > 0 {
		return "", errMalformedXML()
	}
	switch s := strings.TrimSpace(doc.Status); s {
	case objectlock.HoldOn, objectlock.HoldOff:
		return s, nil
	}
	return "", errMalformedXML()
}

func handlePutObjectLockConfiguration(q *request) error {
	if _, err := q.bucketAccess(q.bucket, access.BucketAdmin); err != nil {
		return err
	}
	body, err := q.readLockBody()
	if err != nil {
		return err
	}
	cfg, err := objectlock.Parse(body)
	if err != nil {
		return lockError(err)
	}
	err = q.s.cfg.Store.SetBucketConfig(q.ctx, q.bucket, engine.BucketConfigObjectLock, cfg.Marshal(""))
	switch {
	case errors.Is(err, engine.ErrInvalidBucketState):
		return invalidBucketState("Versioning must be 'Enabled' on the bucket to apply a Object Lock configuration", err)
	case err != nil:
		return fmt.Errorf("set object lock configuration: %w", err)
	}
	q.writeEmpty(http.StatusOK)
	return nil
}

func handleGetObjectLockConfiguration(q *request) error {
	bi, err := q.bucketAccess(q.bucket, access.BucketAdmin)
	if err != nil {
		return err
	}
	cfg, enabled, err := bi.ObjectLockConfig()
	if err != nil {
		return errInternal(fmt.Errorf("bucket %s: %w", bi.Name, err))
	}
	if !enabled {
		return errObjectLockConfigurationNotFound()
	}
	q.writeXMLBytes(http.StatusOK, []byte(cfg.Marshal(s3NS)))
	return nil
}

// lockTarget loads the bucket and version of an object lock subresource
// request and checks the caller may do op on it. A body (PUT) is read
// first, so that policies can test what it sets; what is wrong with it is
// told only to a caller who may make the call (as PutObjectTagging does).
func (q *request) lockTarget(op access.Operation, parse func([]byte) (objectlock.Lock, error)) (engine.BucketInfo, engine.ObjectInfo, string, objectlock.Lock, error) {
	var next objectlock.Lock
	bi, err := q.s.cfg.Store.BucketInfo(q.ctx, q.bucket)
	if err != nil {
		return bi, engine.ObjectInfo{}, "", next, fmt.Errorf("bucket %q: %w", q.bucket, err)
	}
	version, err := q.requestVersion()
	if err != nil {
		return bi, engine.ObjectInfo{}, "", next, err
	}
	var bodyErr error
	if parse != nil {
		var body []byte
		if body, bodyErr = q.readLockBody(); bodyErr == nil {
			if next, bodyErr = parse(body); bodyErr == nil {
				q.lock = &next
			}
		}
	}
	oi, err := q.objectAccess(bi, q.key, version, op)
	if err != nil {
		return bi, oi, version, next, err
	}
	return bi, oi, version, next, bodyErr
}

func handlePutObjectRetention(q *request) error {
	bi, oi, version, next, err := q.lockTarget(access.PutObjectRetention, func(body []byte) (objectlock.Lock, error) {
		return parseRetention(body, time.Now())
	})
	if err != nil {
		return err
	}
	r := q.objectResource(bi, oi)
	r.Version = version
	ctx, enqueued := q.updateCommitHook(bi, notify.ObjectCreatedPutRetention)
	oi, err = q.s.cfg.Store.SetObjectRetention(ctx, q.bucket, q.key, version, next, q.bypassGovernance(r))
	if err != nil {
		return fmt.Errorf("set retention of %s/%s: %w", q.bucket, q.key, versionError(err, version))
	}
	q.setVersionID(bi, oi.VersionID)
	if !*enqueued {
		q.notify(bi, notify.ObjectCreatedPutRetention, q.key, oi.Size, oi.ETag, oi.VersionID)
	}
	q.writeEmpty(http.StatusOK)
	return nil
}

func handleGetObjectRetention(q *request) error {
	bi, oi, _, _, err := q.lockTarget(access.ObjectRetention, nil)
	if err != nil {
		return err
	}
	if bi.ObjectLock == "" {
		return errObjectLockNotEnabled()
	}
	if oi.Lock.Mode == "" {
		return errNoSuchObjectLockConfiguration()
	}
	q.setVersionID(bi, oi.VersionID)
	q.notify(bi, notify.ObjectAccessedGetRetention, q.key, oi.Size, oi.ETag, oi.VersionID)
	q.writeXML(xmlRetention{NS: s3NS, Mode: oi.Lock.Mode, RetainUntilDate: objectlock.FormatRetainUntil(oi.Lock.RetainUntil)})
	return nil
}

func handlePutObjectLegalHold(q *request) error {
	bi, _, version, next, err := q.lockTarget(access.PutObjectLegalHold, func(body []byte) (objectlock.Lock, error) {
		status, err := parseLegalHold(body)
		return objectlock.Lock{LegalHold: status}, err
	})
	if err != nil {
		return err
	}
	ctx, enqueued := q.updateCommitHook(bi, notify.ObjectCreatedPutLegalHold)
	oi, err := q.s.cfg.Store.SetObjectLegalHold(ctx, q.bucket, q.key, version, next.LegalHold)
	if err != nil {
		return fmt.Errorf("set legal hold of %s/%s: %w", q.bucket, q.key, versionError(err, version))
	}
	q.setVersionID(bi, oi.VersionID)
	if !*enqueued {
		q.notify(bi, notify.ObjectCreatedPutLegalHold, q.key, oi.Size, oi.ETag, oi.VersionID)
	}
	q.writeEmpty(http.StatusOK)
	return nil
}

func handleGetObjectLegalHold(q *request) error {
	bi, oi, _, _, err := q.lockTarget(access.ObjectLegalHold, nil)
	if err != nil {
		return err
	}
	if bi.ObjectLock == "" {
		return errObjectLockNotEnabled()
	}
	if oi.Lock.LegalHold == "" {
		return errNoSuchObjectLockConfiguration()
	}
	q.setVersionID(bi, oi.VersionID)
	q.notify(bi, notify.ObjectAccessedGetLegalHold, q.key, oi.Size, oi.ETag, oi.VersionID)
	q.writeXML(xmlLegalHold{NS: s3NS, Status: oi.Lock.LegalHold})
	return nil
}
