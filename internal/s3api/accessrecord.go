package s3api

// Server access logging, the request half: a request on a bucket whose
// logging is enabled gets a record in S3's server access log format
// (accesslog.Record). It is spooled durably just before the answer's
// first byte is written (the response writer's onHeader hook), so a
// request whose answer a client saw is never lost by a crash, and
// amended with the bytes sent and the total time once the answer is
// complete. A request on a bucket without logging costs one lookup of
// the cached bucket record, nothing more.
//
// Which requests are logged: those that pass authentication (anonymous
// ones included) on an existing bucket with logging enabled, as the
// bucket's configuration was when the request arrived; requests refused
// before authentication completed (a bad signature, an unknown key) are
// not, so that unauthenticated traffic cannot make the server look up
// buckets or write records (docs/conformance.md). A copy (CopyObject,
// UploadPartCopy) also gets a record in its source bucket's log, as
// S3's REST.COPY.OBJECT_GET.

import (
	"crypto/tls"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/shardstore/shardstore/internal/accesslog"
)

// accessLogState is a logged request's part of the access log: where
// its records go and, once spooled, what Amend needs.
type accessLogState struct {
	dest  accesslog.Destination
	owner string // canonical id of the bucket's owner
	// copySource is a copy's source bucket's destination, nil when the
	// request is no copy or its source is not logged.
	copySource      *accesslog.Destination
	copySourceOwner string
	entries         []spooled
}

// spooled is an entry Append kept, and its generation.
type spooled struct {
	entry accesslog.Entry
	gen   uint64
}

// startAccessLog looks up whether the request's bucket logs requests;
// if so the record is spooled when the answer starts.
func (q *request) startAccessLog() {
	// CreateBucket is for a bucket that (nearly always) does not exist
	// yet: on a cluster a lookup of a missing bucket is a round trip to
	// the consensus group, which it must not pay twice.
	if q.s.cfg.AccessLog == nil || q.bucket == "" || q.api == "CreateBucket" {
		return
	}
	bi, err := q.s.cfg.Store.BucketInfo(q.ctx, q.bucket)
	if err != nil {
		return
	}
	st := &accessLogState{}
	if d := q.s.loggingDestination(bi); d != nil {
		st.dest, st.owner = *d, d.SourceAccount
	}
	if q.api == "CopyObject" || q.api == "UploadPartCopy" {
		if src, _, _ := copySourceOf(q.r.Header.Get("X-Amz-Copy-Source")); src != "" {
			if sbi, err := q.s.cfg.Store.BucketInfo(q.ctx, src); err == nil {
				if d := q.s.loggingDestination(sbi); d != nil {
					st.copySource, st.copySourceOwner = d, d.SourceAccount
				}
			}
		}
	}
	if st.dest.TargetBucket == "" && st.copySource == nil {
		return
	}
	q.alog = st
	q.w.onHeader = q.spoolAccessLog
}

// copySourceOf reads an x-amz-copy-source header: bucket, key, version.
func copySourceOf(v string) (bucket, key, version string) {
	v, query, _ := strings.Cut(v, "?")
	if u, err := url.PathUnescape(v); err == nil {
		v = u
	}
	bucket, key, _ = strings.Cut(strings.TrimPrefix(v, "/"), "/")
	if q, err := url.ParseQuery(query); err == nil {
		version = q.Get("versionId")
	}
	return bucket, key, version
}

// spoolAccessLog spools the request's records durably; the response
// writer calls it before the first byte of the answer. A record that
// cannot be spooled is logged (at most once a minute) and the answer
// goes on: the request has been done, and an error now would tell the
// client otherwise.
func (q *request) spoolAccessLog(status int) {
	st := q.alog
	now := time.Now()
	for _, e := range q.accessEntries(status, now) {
		gen, err := q.s.cfg.AccessLog.Append(e)
		if err != nil {
			q.s.warnAccessLog(q, err)
			continue
		}
		st.entries = append(st.entries, spooled{entry: e, gen: gen})
	}
}

// warnAccessLog reports a record that was not spooled, once a minute.
func (s *Server) warnAccessLog(q *request, err error) {
	now := time.Now().Unix()
	last := s.accessLogWarned.Load()
	if now-last >= 60 && s.accessLogWarned.CompareAndSwap(last, now) {
		s.log.Warn("server access log record not kept", "request_id", q.id, "bucket", q.bucket, "err", err)
	}
}

// finishAccessLog amends the spooled records with the bytes sent and the
// total time. A request cut before its answer started (a panic, a
// client gone) is spooled now, as far as it got.
func (q *request) finishAccessLog(status int, total time.Duration) {
	st := q.alog
	if st == nil {
		return
	}
	if q.w.status == 0 {
		q.spoolAccessLog(status)
	}
	for _, sp := range st.entries {
		e := sp.entry
		e.Record.TotalTime = total
		if e.Record.Operation == operationName(q.api, q.r.Method, q.key) {
			e.Record.BytesSent = q.w.written
		}
		q.s.cfg.AccessLog.Amend(e, sp.gen)
	}
	st.entries = nil
}

// accessEntries are the request's records as of its answer's start.
func (q *request) accessEntries(status int, now time.Time) []accesslog.Entry {
	st := q.alog
	rec := q.accessRecord(status, now)
	var out []accesslog.Entry
	if st.dest.TargetBucket != "" {
		r := rec
		r.BucketOwner = st.owner
		out = append(out, accesslog.Entry{Dest: st.dest, Record: r})
	}
	if st.copySource != nil {
		// The copy's GET half, in the source bucket's log.
		r := rec
		src, key, version := copySourceOf(q.r.Header.Get("X-Amz-Copy-Source"))
		r.BucketOwner, r.Bucket, r.Key, r.VersionID = st.copySourceOwner, src, key, version
		r.Operation, r.BytesSent, r.ObjectSize = "REST.COPY.OBJECT_GET", 0, -1
		if q.api == "UploadPartCopy" {
			r.Operation = "REST.COPY.PART_GET"
		}
		out = append(out, accesslog.Entry{Dest: *st.copySource, Record: r})
	}
	return out
}

// accessRecord is the request's record as of its answer's start: the
// bytes it plans to send (its Content-Length) and the time so far stand
// in for what finishAccessLog amends.
func (q *request) accessRecord(status int, now time.Time) accesslog.Record {
	r := q.r
	h := q.w.Header()
	rec := accesslog.Record{
		Bucket: q.bucket, Time: q.start, RequestID: q.id, Key: q.key,
		Operation:   operationName(q.api, r.Method, q.key),
		RequestURI:  r.Method + " " + r.RequestURI + " " + r.Proto,
		HTTPStatus:  status,
		ErrorCode:   q.errCode,
		ObjectSize:  -1,
		TotalTime:   now.Sub(q.start),
		TurnAround:  now.Sub(q.start),
		Referer:     r.Header.Get("Referer"),
		UserAgent:   r.Header.Get("User-Agent"),
		VersionID:   q.param("versionId"),
		HostID:      q.s.hostID,
		HostHeader:  r.Host,
		ACLRequired: q.aclRequired,
	}
	if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		rec.RemoteIP = host
	} else {
		rec.RemoteIP = r.RemoteAddr
	}
	if q.counted != nil && !q.counted.eofAt.IsZero() {
		rec.TurnAround = now.Sub(q.counted.eofAt)
	}
	if n, err := strconv.ParseInt(h.Get("Content-Length"), 10, 64); err == nil && r.Method != http.MethodHead {
		rec.BytesSent = n
	}
	rec.ObjectSize = q.loggedObjectSize(status)
	if !q.caller.Anonymous && q.caller.AccessKey != "" {
		if q.caller.User != "" {
			rec.Requester = "arn:aws:iam:::user/" + q.caller.User
		} else {
			rec.Requester = canonicalID(q.caller.AccessKey)
		}
		rec.SigVersion, rec.AuthType = signatureOf(r)
	}
	if r.TLS != nil {
		rec.TLSVersion, rec.CipherSuite = tlsVersionName(r.TLS.Version), opensslCipherName(r.TLS.CipherSuite)
	}
	return rec
}

// loggedObjectSize is the Object Size field: the size of the object a
// read answers or a write sends, -1 where none applies.
func (q *request) loggedObjectSize(status int) int64 {
	h := q.w.Header()
	switch q.api {
	case "GetObject", "HeadObject":
		if status != http.StatusOK && status != http.StatusPartialContent {
			return -1
		}
		if cr := h.Get("Content-Range"); cr != "" {
			if _, total, ok := strings.Cut(cr, "/"); ok {
				if n, err := strconv.ParseInt(total, 10, 64); err == nil {
					return n
				}
			}
			return -1
		}
		if n, err := strconv.ParseInt(h.Get("Content-Length"), 10, 64); err == nil {
			return n
		}
	case "PutObject", "UploadPart", "PostObject":
		if q.length >= 0 && q.api != "PostObject" {
			return q.length
		}
		if q.counted != nil {
			return q.counted.n
		}
	}
	return -1
}

// signatureOf names how a signed request was signed, as S3's log does.
func signatureOf(r *http.Request) (version, authType string) {
	if a := r.Header.Get("Authorization"); a != "" {
		if strings.HasPrefix(a, "AWS4-") {
			return "SigV4", "AuthHeader"
		}
		return "SigV2", "AuthHeader"
	}
	q := r.URL.Query()
	switch {
	case q.Get("X-Amz-Algorithm") != "":
		return "SigV4", "QueryString"
	case q.Get("Signature") != "":
		return "SigV2", "QueryString"
	}
	return "", "" // a form upload (POST) signs its policy, not the request
}

func tlsVersionName(v uint16) string {
	switch v {
	case tls.VersionTLS12:
		return "TLSv1.2"
	case tls.VersionTLS13:
		return "TLSv1.3"
	case tls.VersionTLS11:
		return "TLSv1.1"
	case tls.VersionTLS10:
		return "TLSv1"
	}
	return ""
}

// opensslCiphers are the OpenSSL names S3's logs use for the suites the
// server offers (internal/certs): ECDHE with AEAD on TLS 1.2, and TLS
// 1.3's, which OpenSSL names as the RFC does.
var opensslCiphers = map[uint16]string{
	tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256:         "ECDHE-RSA-AES128-GCM-SHA256",
	tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384:         "ECDHE-RSA-AES256-GCM-SHA384",
	tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256:       "ECDHE-ECDSA-AES128-GCM-SHA256",
	tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384:       "ECDHE-ECDSA-AES256-GCM-SHA384",
	tls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256:   "ECDHE-RSA-CHACHA20-POLY1305",
	tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256: "ECDHE-ECDSA-CHACHA20-POLY1305",
	tls.TLS_AES_128_GCM_SHA256:                        "TLS_AES_128_GCM_SHA256",
	tls.TLS_AES_256_GCM_SHA384:                        "TLS_AES_256_GCM_SHA384",
	tls.TLS_CHACHA20_POLY1305_SHA256:                  "TLS_CHACHA20_POLY1305_SHA256",
}

func opensslCipherName(id uint16) string {
	if n, ok := opensslCiphers[id]; ok {
		return n
	}
	return tls.CipherSuiteName(id)
}

// logOperations are S3's names of operations in access logs
// (REST.METHOD.RESOURCE), by API.
var logOperations = map[string]string{
	"GetObject": "REST.GET.OBJECT", "HeadObject": "REST.HEAD.OBJECT", "PutObject": "REST.PUT.OBJECT",
	"DeleteObject": "REST.DELETE.OBJECT", "CopyObject": "REST.COPY.OBJECT", "PostObject": "REST.POST.OBJECT",
	"DeleteObjects":         "REST.POST.MULTI_OBJECT_DELETE",
	"CreateMultipartUpload": "REST.POST.UPLOADS", "UploadPart": "REST.PUT.PART", "UploadPartCopy": "REST.COPY.PART",
	"CompleteMultipartUpload": "REST.POST.UPLOAD", "AbortMultipartUpload": "REST.DELETE.UPLOAD",
	"ListParts": "REST.GET.UPLOAD", "ListMultipartUploads": "REST.GET.UPLOADS",
	"ListObjects": "REST.GET.BUCKET", "ListObjectsV2": "REST.GET.BUCKET", "ListObjectVersions": "REST.GET.BUCKETVERSIONS",
	"HeadBucket": "REST.HEAD.BUCKET", "CreateBucket": "REST.PUT.BUCKET", "DeleteBucket": "REST.DELETE.BUCKET",
	"GetBucketLocation": "REST.GET.LOCATION",
	"GetBucketAcl":      "REST.GET.ACL", "PutBucketAcl": "REST.PUT.ACL", "GetObjectAcl": "REST.GET.ACL", "PutObjectAcl": "REST.PUT.ACL",
	"GetBucketCors": "REST.GET.CORS", "PutBucketCors": "REST.PUT.CORS", "DeleteBucketCors": "REST.DELETE.CORS",
	"GetBucketVersioning": "REST.GET.VERSIONING", "PutBucketVersioning": "REST.PUT.VERSIONING",
	"GetBucketLogging": "REST.GET.LOGGING_STATUS", "PutBucketLogging": "REST.PUT.LOGGING_STATUS",
	"GetBucketPolicy": "REST.GET.BUCKETPOLICY", "PutBucketPolicy": "REST.PUT.BUCKETPOLICY",
	"DeleteBucketPolicy": "REST.DELETE.BUCKETPOLICY", "GetBucketPolicyStatus": "REST.GET.POLICY_STATUS",
	"GetBucketLifecycleConfiguration": "REST.GET.LIFECYCLE", "PutBucketLifecycleConfiguration": "REST.PUT.LIFECYCLE",
	"DeleteBucketLifecycle": "REST.DELETE.LIFECYCLE",
	"GetBucketTagging":      "REST.GET.TAGGING", "PutBucketTagging": "REST.PUT.TAGGING", "DeleteBucketTagging": "REST.DELETE.TAGGING",
	"GetObjectTagging": "REST.GET.OBJECT_TAGGING", "PutObjectTagging": "REST.PUT.OBJECT_TAGGING",
	"DeleteObjectTagging": "REST.DELETE.OBJECT_TAGGING",
	"GetBucketWebsite":    "REST.GET.WEBSITE", "PutBucketWebsite": "REST.PUT.WEBSITE", "DeleteBucketWebsite": "REST.DELETE.WEBSITE",
	"GetBucketEncryption": "REST.GET.ENCRYPTION", "PutBucketEncryption": "REST.PUT.ENCRYPTION",
	"DeleteBucketEncryption":     "REST.DELETE.ENCRYPTION",
	"GetBucketOwnershipControls": "REST.GET.OWNERSHIP_CONTROLS", "PutBucketOwnershipControls": "REST.PUT.OWNERSHIP_CONTROLS",
	"DeleteBucketOwnershipControls": "REST.DELETE.OWNERSHIP_CONTROLS",
	"GetPublicAccessBlock":          "REST.GET.PUBLIC_ACCESS_BLOCK", "PutPublicAccessBlock": "REST.PUT.PUBLIC_ACCESS_BLOCK",
	"DeletePublicAccessBlock":    "REST.DELETE.PUBLIC_ACCESS_BLOCK",
	"GetObjectLockConfiguration": "REST.GET.OBJECT_LOCK_CONFIGURATION", "PutObjectLockConfiguration": "REST.PUT.OBJECT_LOCK_CONFIGURATION",
	"GetObjectRetention": "REST.GET.RETENTION", "PutObjectRetention": "REST.PUT.RETENTION",
	"GetObjectLegalHold": "REST.GET.LEGAL_HOLD", "PutObjectLegalHold": "REST.PUT.LEGAL_HOLD",
	"GetObjectAttributes": "REST.GET.OBJECT_ATTRIBUTES",
	apiPreflight:          "REST.OPTIONS.PREFLIGHT",
}

// operationName is the Operation field of a request of api.
func operationName(api, method, key string) string {
	if op, ok := logOperations[api]; ok {
		return op
	}
	if key != "" {
		return "REST." + method + ".OBJECT"
	}
	return "REST." + method + ".BUCKET"
}
