package s3api

import (
	"crypto/md5"
	"encoding/base64"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/shardstore/shardstore/internal/access"
	"github.com/shardstore/shardstore/internal/engine"
	"github.com/shardstore/shardstore/internal/hashing"
	"github.com/shardstore/shardstore/internal/notify"
)

// bodySize is the declared size of a PUT body, enforcing S3's rules. It
// also wraps the body so it is read to EOF (and so verified) before the
// engine sees its last byte; see exactBody. A body sent with HTTP chunked
// transfer coding and no Content-Length (which S3 itself refuses with 411
// MissingContentLength) is accepted with size -1: the engine streams it
// and learns the size at EOF, refusing it past the 5 GiB PUT limit.
//
// inParts allows up to MaxObjectSize, for an import whose parts are
// kept (each part at most MaxPutSize, checked by the engine).
func (q *request) bodySize(inParts bool) (int64, error) {
	limit := int64(engine.MaxPutSize)
	if inParts {
		limit = engine.MaxObjectSize
	}
	if q.length < 0 {
		if !chunked(q.r) {
			return 0, errorf("MissingContentLength", http.StatusLengthRequired,
				"You must provide the Content-Length HTTP header.")
		}
		q.exact = newExactBody(q.body, -1)
		return -1, nil
	}
	if q.length > limit {
		return 0, errorf("EntityTooLarge", http.StatusBadRequest,
			"Your proposed upload exceeds the maximum allowed size")
	}
	q.exact = newExactBody(q.body, q.length)
	return q.length, nil
}

// chunked reports whether the request body came with HTTP chunked
// transfer coding.
func chunked(r *http.Request) bool {
	for _, te := range r.TransferEncoding {
		if strings.EqualFold(te, "chunked") {
			return true
		}
	}
	return false
}

// bodyDigests reads what the client says about the body: Content-MD5
// and an x-amz-checksum-* header or announced trailer.
func (q *request) bodyDigests() ([]byte, checksumSpec, error) {
	md5sum, err := parseContentMD5(q.r.Header)
	if err != nil {
		return nil, checksumSpec{}, err
	}
	cs, err := parseChecksum(q.r.Header)
	if err != nil {
		return nil, checksumSpec{}, err
	}
	return md5sum, cs, nil
}

// newObjectOptions reads what a PUT or a form upload into bucket bi
// stores with the new object (metadata, owner, ACL, private by default,
// tags, object lock) and what it says about the body (Content-MD5, a
// checksum) for the engine to verify. A PutObject with object lock must
// carry one of them (checkLockChecksum); a browser form upload, which
// cannot always compute one, is not held to that.
func (q *request) newObjectOptions(bi engine.BucketInfo) (engine.PutOptions, checksumSpec, error) {
	opts, err := q.putOptions(bi)
	if err != nil {
		return opts, checksumSpec{}, err
	}
	if err := q.checkTagWrite(bi, opts.Tags); err != nil {
		return opts, checksumSpec{}, err
	}
	if err := q.checkLockWrite(bi, opts.Lock); err != nil {
		return opts, checksumSpec{}, err
	}
	md5sum, cs, err := q.bodyDigests()
	if err != nil {
		return opts, cs, err
	}
	if q.api == "PutObject" && !q.importing {
		if err := checkLockChecksum(bi, opts.Lock, md5sum != nil || cs.alg != "" || q.payloadSigned); err != nil {
			return opts, cs, err
		}
	}
	opts.ContentMD5, opts.ChecksumAlgorithm, opts.ExpectedChecksum = md5sum, cs.alg, cs.expected(q)
	return opts, cs, nil
}

func handlePutObject(q *request) error {
	bi, err := q.bucketAccess(q.bucket, access.WriteObject)
	if err != nil {
		return err
	}
	// The import headers first: an import in parts may be larger than
	// one PUT (a multipart object of up to 5 TiB, its parts kept).
	imp, err := q.importVersion()
	if err != nil {
		return err
	}
	q.importing = imp != nil
	size, err := q.bodySize(imp != nil && len(imp.Parts) > 0)
	if err != nil {
		return err
	}
	opts, _, err := q.newObjectOptions(bi)
	if err != nil {
		return err
	}
	opts.Import = imp
	writeConditions(q.r.Header, &opts)
	opts.Committed = q.commitHook(bi, notify.ObjectCreatedPut)
	oi, err := q.s.cfg.Store.PutObject(q.ctx, q.bucket, q.key, q.exact, size, opts)
	if err != nil {
		return fmt.Errorf("put %s/%s: %w", q.bucket, q.key, err)
	}
	h := q.w.Header()
	h.Set("ETag", quoteETag(oi.ETag))
	setChecksumResponse(h, oi.Checksum)
	setSSEHeaders(h, oi.Sealed, q.sse)
	q.setWrittenVersionID(bi, oi.VersionID)
	q.setExpiration(bi, oi)
	q.notifyWrite(bi, notify.ObjectCreatedPut, oi)
	q.writeEmpty(http.StatusOK)
	return nil
}

// getOptions reads versionId, Range, partNumber and the If-* conditions.
func (q *request) getOptions() (engine.GetOptions, error) {
	var opts engine.GetOptions
	v, err := q.requestVersion()
	if err != nil {
		return opts, err
	}
	opts.VersionID = v
	if v := q.r.Header.Get("Range"); v != "" {
		rng, ok := parseRange(v)
		if ok && rng == nil {
			return opts, errorf("InvalidRange", http.StatusRequestedRangeNotSatisfiable, "The requested range is not satisfiable")
		}
		opts.Range = rng
	}
	if _, ok := q.query["partNumber"]; ok {
		n, err := strconv.Atoi(q.param("partNumber"))
		if err != nil || n < 1 || n > engine.MaxPartNumber {
			return opts, errInvalidArgument("Part number must be an integer between 1 and 10000, inclusive")
		}
		if opts.Range != nil {
			return opts, errInvalidRequest("Cannot specify both Range header and partNumber query parameter")
		}
		opts.PartNumber = n
	}
	opts.Conditions = conditions(q.r.Header, "")
	return opts, nil
}

// readObject opens (GET) or stats (HEAD) an object. Reading needs READ
// on the object itself (its owner, or a grant in its ACL); the bucket's
// ACL plays no part, except that a caller who may list the bucket is told
// NoSuchKey rather than AccessDenied for a missing key. Access is decided
// before anything about the object is sent: a denied caller learns
// neither its existence nor its ETag, size or conditions' outcome.
func handleGetObject(q *request) error  { return q.readObject(false) }
func handleHeadObject(q *request) error { return q.readObject(true) }

// readDenied is checked when a GET or HEAD's engine call failed (missing
// object or version, a delete marker, unmet condition, bad range): it
// answers AccessDenied if the caller may not read the version or may not
// learn that it is missing, and nil when the engine's error may be
// reported as usual.
func (q *request) readDenied(bi engine.BucketInfo, version string) error {
	_, err := q.objectAccess(bi, q.key, version, access.ReadObject)
	// A refused version id is reported as the engine's error is.
	if err == nil || versionMissing(err) || errors.Is(err, engine.ErrInvalidArgument) {
		return nil
	}
	return err
}

// statForRead stats the request's object for a caller who wants to read
// it (HEAD, GetObjectAttributes): a failure is reported only to a caller
// who may learn it (readDenied), and an object the caller may not read
// is AccessDenied.
func (q *request) statForRead(bi engine.BucketInfo, opts engine.GetOptions) (engine.ObjectInfo, error) {
	oi, err := q.s.cfg.Store.HeadObject(q.ctx, q.bucket, q.key, opts)
	if err != nil {
		if derr := q.readDenied(bi, opts.VersionID); derr != nil {
			return oi, derr
		}
		return oi, q.readError(err, oi, opts.VersionID)
	}
	if !q.allows(access.ReadObject, q.objectResource(bi, oi)) {
		return oi, errAccessDenied()
	}
	return oi, nil
}

func (q *request) readObject(head bool) error {
	bi, err := q.s.cfg.Store.BucketInfo(q.ctx, q.bucket)
	if err != nil {
		return fmt.Errorf("bucket %q: %w", q.bucket, err)
	}
	opts, err := q.getOptions()
	if err != nil {
		return err
	}
	sreq, err := q.sseForRead(q.r.Header, hdrSSECPrefix)
	if err != nil {
		return err
	}
	if head {
		oi, err := q.statForRead(bi, opts)
		if err != nil {
			return err
		}
		if err := checkCustomerKey(oi.Sealed, sreq); err != nil {
			return err
		}
		setSSEHeaders(q.w.Header(), oi.Sealed, sreq)
		q.setObjectHeaders(oi, opts.Range != nil || opts.PartNumber > 0)
		q.setVersionID(bi, oi.VersionID)
		q.setTaggingCount(bi, oi)
		q.setLockHeaders(bi, oi)
		q.setExpiration(bi, oi)
		q.setPartChecksum(oi, opts.PartNumber)
		length, status := oi.Size, http.StatusOK
		if opts.Range != nil || opts.PartNumber > 0 {
			start, n, ok := resolvePart(oi, opts)
			if !ok {
				if opts.PartNumber > 0 {
					return errInvalidPartNumber()
				}
				return toAPIError(engine.ErrInvalidRange)
			}
			q.w.Header().Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", start, start+n-1, oi.Size))
			length, status = n, http.StatusPartialContent
		}
		if err := q.responseOverrides(); err != nil {
			return err
		}
		q.w.Header().Set("Content-Length", strconv.FormatInt(length, 10))
		q.notify(bi, notify.ObjectAccessedHead, q.key, oi.Size, oi.ETag, oi.VersionID)
		q.w.WriteHeader(status)
		return nil
	}
	opts.Unseal = q.unsealer(bi, sreq, nil, true)
	rd, err := q.s.cfg.Store.GetObject(q.ctx, q.bucket, q.key, opts)
	if err != nil {
		if derr := q.readDenied(bi, opts.VersionID); derr != nil {
			return derr
		}
		var oi engine.ObjectInfo
		if errors.Is(err, engine.ErrInvalidRange) {
			oi, _ = q.s.cfg.Store.HeadObject(q.ctx, q.bucket, q.key, engine.GetOptions{VersionID: opts.VersionID})
		}
		return q.readError(err, oi, opts.VersionID)
	}
	defer rd.Close()
	if !q.allows(access.ReadObject, q.objectResource(bi, rd.Info)) {
		return errAccessDenied()
	}
	if err := checkCustomerKey(rd.Info.Sealed, sreq); err != nil {
		return err
	}
	setSSEHeaders(q.w.Header(), rd.Info.Sealed, sreq)
	q.setObjectHeaders(rd.Info, rd.Partial)
	q.setVersionID(bi, rd.Info.VersionID)
	q.setTaggingCount(bi, rd.Info)
	q.setLockHeaders(bi, rd.Info)
	q.setExpiration(bi, rd.Info)
	q.setPartChecksum(rd.Info, opts.PartNumber)
	if err := q.responseOverrides(); err != nil {
		return err
	}
	h := q.w.Header()
	h.Set("Content-Length", strconv.FormatInt(rd.Length, 10))
	status := http.StatusOK
	if rd.Partial {
		status = http.StatusPartialContent
		if rd.Length > 0 {
			h.Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", rd.Start, rd.Start+rd.Length-1, rd.Info.Size))
		}
	}
	q.notify(bi, notify.ObjectAccessedGet, q.key, rd.Info.Size, rd.Info.ETag, rd.Info.VersionID)
	q.w.WriteHeader(status)
	buf := q.s.copyBufs.Get().(*[]byte)
	defer q.s.copyBufs.Put(buf)
	// An object's body writes its decoded blocks itself (WriteTo); the
	// pooled buffer serves any other body.
	n, err := io.CopyBuffer(q.w, rd, *buf)
	if err != nil || n != rd.Length {
		// The status is sent; abort the connection so the client sees a
		// truncated response instead of silently short data.
		q.s.log.Error("get object stream failed", "request_id", q.id, "bucket", q.bucket, "key", q.key,
			"sent", n, "want", rd.Length, "err", err)
		panic(http.ErrAbortHandler)
	}
	return nil
}

// readError maps a GET/HEAD engine error on version (the current one
// when ""), adding what S3 adds: the size on 416, and ETag and
// Last-Modified on 304 so caches can revalidate.
func (q *request) readError(err error, oi engine.ObjectInfo, version string) error {
	if errors.Is(err, engine.ErrInvalidPartNumber) {
		return errInvalidPartNumber()
	}
	ae := toAPIError(versionError(err, version))
	switch {
	case ae.Code == "InvalidRange" && oi.Size > 0:
		q.w.Header().Set("Content-Range", fmt.Sprintf("bytes */%d", oi.Size))
	case ae.Status == http.StatusNotModified:
		if cur, herr := q.s.cfg.Store.HeadObject(q.ctx, q.bucket, q.key, engine.GetOptions{VersionID: version}); herr == nil {
			q.w.Header().Set("ETag", quoteETag(cur.ETag))
			q.w.Header().Set("Last-Modified", cur.ModTime.UTC().Format(http.TimeFormat))
		}
	}
	return ae
}

// errInvalidPartNumber is S3's answer to a GET or HEAD whose partNumber
// is beyond the object's parts (a single-PUT object has one part).
func errInvalidPartNumber() *Error {
	return errorf("InvalidPartNumber", http.StatusRequestedRangeNotSatisfiable, "The requested partnumber is not satisfiable")
}

// resolvePart computes the byte span HEAD reports for a range or part.
func resolvePart(oi engine.ObjectInfo, opts engine.GetOptions) (start, length int64, ok bool) {
	if opts.PartNumber > 0 {
		if len(oi.Parts) == 0 {
			if opts.PartNumber == 1 {
				return 0, oi.Size, true
			}
			return 0, 0, false
		}
		var off int64
		for _, p := range oi.Parts {
			if p.Number == opts.PartNumber {
				return off, p.Size, true
			}
			off += p.Size
		}
		return 0, 0, false
	}
	r := opts.Range
	switch {
	case r.Start < 0:
		n := min(-r.Start, oi.Size)
		return oi.Size - n, n, oi.Size > 0
	case r.Start >= oi.Size:
		return 0, 0, false
	case r.End < 0 || r.End >= oi.Size:
		return r.Start, oi.Size - r.Start, true
	}
	return r.Start, r.End - r.Start + 1, true
}

// handleDeleteObject deletes as S3 does in the bucket's versioning state
// (engine.DeleteObjectVersion): without versionId an unversioned bucket
// loses the object and a versioned one gets a delete marker; with one,
// that version goes for good. A key or version that is not there is
// not an error (204), as in S3. A version object lock protects is
// refused with AccessDenied (engine.ErrObjectLocked); with
// x-amz-bypass-governance-retention a caller allowed to bypass
// GOVERNANCE retention removes one that only GOVERNANCE protects.
func handleDeleteObject(q *request) error {
	bi, err := q.bucketAccess(q.bucket, access.WriteObject)
	if err != nil {
		return err
	}
	version, err := q.requestVersion()
	if err != nil {
		return err
	}
	cond, err := deleteConditions(q.r.Header)
	if err != nil {
		return err
	}
	target := q.bucketResource(bi)
	target.Key, target.Version = q.key, version
	hook, enqueued := q.deleteCommitHook(bi, q.key, version)
	res, err := q.s.cfg.Store.DeleteObjectVersion(q.ctx, q.bucket, q.key,
		engine.DeleteOptions{VersionID: version, BypassGovernance: q.bypassGovernance(target), Cond: cond, Committed: hook})
	switch {
	case err == nil:
		q.setDeleteResult(bi, res)
		if !*enqueued {
			q.notifyDelete(bi, q.key, version, res)
		}
	case errors.Is(err, engine.ErrObjectNotFound) && cond != nil:
		// A conditional delete of a key without a current object:
		// 404 NoSuchKey, as a conditional write answers.
		return fmt.Errorf("delete %s/%s: %w", q.bucket, q.key, err)
	case errors.Is(err, engine.ErrObjectNotFound), errors.Is(err, engine.ErrNoSuchVersion):
	default:
		return fmt.Errorf("delete %s/%s: %w", q.bucket, q.key, versionError(err, version))
	}
	q.writeEmpty(http.StatusNoContent)
	return nil
}

// setDeleteResult answers x-amz-version-id (the version removed, or the
// delete marker made) and x-amz-delete-marker when a marker was made or
// removed.
func (q *request) setDeleteResult(bi engine.BucketInfo, res engine.DeleteResult) {
	if res.DeleteMarker {
		q.w.Header().Set("X-Amz-Delete-Marker", "true")
		q.w.Header().Set("X-Amz-Version-Id", versionOut(res.VersionID))
		return
	}
	q.setVersionID(bi, res.VersionID)
}

// maxDeleteBody bounds a DeleteObjects body: 1000 keys of up to 1 KiB,
// XML-escaped, plus the envelope.
const maxDeleteBody = 8 << 20

// handleDeleteObjects deletes up to 1000 keys. As in S3, access is
// decided for each key (DeleteObject on it): a denied key is reported in
// the result as AccessDenied and the others go ahead, and so is a
// version object lock protects (x-amz-bypass-governance-retention
// applies to every key, as on DeleteObject).
func handleDeleteObjects(q *request) error {
	bi, err := q.s.cfg.Store.BucketInfo(q.ctx, q.bucket)
	if err != nil {
		return fmt.Errorf("bucket %q: %w", q.bucket, err)
	}
	md5sum, cs, err := q.bodyDigests()
	if err != nil {
		return err
	}
	if md5sum == nil && cs.alg == "" {
		return errInvalidRequest("Missing required header for this request: Content-MD5 OR x-amz-checksum-*")
	}
	body, err := q.readBody(maxDeleteBody)
	if err != nil {
		return err
	}
	if md5sum != nil {
		if sum := md5.Sum(body); string(sum[:]) != string(md5sum) {
			return toAPIError(engine.ErrBadDigest)
		}
	}
	if cs.alg != "" {
		if err := verifyChecksum(q, cs, body); err != nil {
			return err
		}
	}
	var req xmlDeleteRequest
	if err := xml.Unmarshal(body, &req); err != nil {
		return errMalformedXML()
	}
	if len(req.Objects) == 0 || len(req.Objects) > 1000 {
		return errMalformedXML()
	}
	out := xmlDeleteResult{NS: s3NS}
	for _, o := range req.Objects {
		fail := func(ae *Error) {
			out.Errors = append(out.Errors, xmlDeleteError{Key: o.Key, VersionID: o.VersionID, Code: ae.Code, Message: ae.Message})
		}
		target := q.bucketResource(bi)
		target.Key, target.Version = o.Key, o.VersionID
		if !q.allows(access.WriteObject, target) {
			fail(errAccessDenied())
			continue
		}
		cond, cerr := o.conditions()
		if cerr != nil {
			fail(cerr)
			continue
		}
		hook, enqueued := q.deleteCommitHook(bi, o.Key, o.VersionID)
		res, err := q.s.cfg.Store.DeleteObjectVersion(q.ctx, q.bucket, o.Key,
			engine.DeleteOptions{VersionID: o.VersionID, BypassGovernance: q.bypassGovernance(target), Cond: cond, Committed: hook})
		if err != nil && (cond != nil || !errors.Is(err, engine.ErrObjectNotFound)) && !errors.Is(err, engine.ErrNoSuchVersion) {
			ae := toAPIError(versionError(err, o.VersionID))
			if ae.Status >= 500 {
				q.s.log.Error("delete in batch failed", "request_id", q.id, "key", o.Key, "err", err)
			}
			fail(ae)
			continue
		}
		if err == nil && !*enqueued {
			q.notifyDelete(bi, o.Key, o.VersionID, res)
		}
		if !req.Quiet {
			out.Deleted = append(out.Deleted, deletedEntry(o.Key, o.VersionID, res, err == nil))
		}
	}
	q.writeXML(out)
	return nil
}

// conditions reads the conditional elements of one DeleteObjects key
// (ETag, LastModifiedTime as an HTTP date or ISO 8601, Size) as DeleteObject's headers
// are read; nil when it has none.
func (o xmlDeleteObject) conditions() (*engine.DeleteConditions, *Error) {
	var c engine.DeleteConditions
	set := false
	if v := strings.TrimSpace(o.ETag); v != "" {
		c.IfMatch, set = v, true
	}
	if v := strings.TrimSpace(o.LastModifiedTime); v != "" {
		// The SDKs send the HTTP date form (the model's rfc822);
		// ISO 8601 is what S3's XML uses elsewhere.
		t, err := http.ParseTime(v)
		if err != nil {
			if t, err = time.Parse(time.RFC3339Nano, v); err != nil {
				return nil, errInvalidArgument("Invalid LastModifiedTime: %q", v)
			}
		}
		c.ModTime, set = t, true
	}
	if v := strings.TrimSpace(o.Size); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return nil, errInvalidArgument("Invalid Size: %q", v)
		}
		c.Size, c.HasSize, set = n, true, true
	}
	if !set {
		return nil, nil
	}
	return &c, nil
}

// deletedEntry is DeleteObjects' report of one key as S3 writes it: the
// VersionId asked for, and DeleteMarker with DeleteMarkerVersionId when
// a delete marker was made (no VersionId asked) or was the version
// removed. done is false when there was nothing to delete.
func deletedEntry(key, version string, res engine.DeleteResult, done bool) xmlDeleted {
	d := xmlDeleted{Key: key, VersionID: version}
	if done && res.DeleteMarker {
		d.DeleteMarker = true
		d.DeleteMarkerVersionID = versionOut(res.VersionID)
	}
	return d
}

// verifyChecksum checks a small, fully read body against its flexible checksum.
func verifyChecksum(q *request, cs checksumSpec, body []byte) error {
	h, err := hashing.NewChecksum(cs.alg)
	if err != nil {
		return errNotImplemented("checksum algorithm " + cs.alg + " on this request")
	}
	h.Write(body)
	expected := cs.expected(q)
	if expected == nil {
		// x-amz-sdk-checksum-algorithm alone names an algorithm
		// without a value: there is nothing to compare.
		return nil
	}
	want, err := expected()
	if err != nil {
		return err
	}
	if base64.StdEncoding.EncodeToString(h.Sum(nil)) != want {
		return toAPIError(engine.ErrChecksumMismatch)
	}
	return nil
}

// copySrc is the object x-amz-copy-source names; version is "" for the
// current version.
type copySrc struct {
	bucket, key, version string
}

// copySource parses x-amz-copy-source:
// "[/]bucket/key[?versionId=ID]", URL-encoded.
func (q *request) copySource() (copySrc, error) {
	raw := q.r.Header.Get("X-Amz-Copy-Source")
	src, query, _ := strings.Cut(raw, "?")
	var out copySrc
	if query != "" {
		vals, perr := url.ParseQuery(query)
		if perr != nil {
			return out, errInvalidArgument("Invalid copy source")
		}
		if v, ok := vals["versionId"]; ok {
			if len(v) != 1 || v[0] == "" {
				return out, errInvalidArgument("Invalid version id specified")
			}
			out.version = v[0]
		}
	}
	dec, uerr := url.PathUnescape(src)
	if uerr != nil {
		return out, errInvalidArgument("Copy Source must mention the source bucket and key: sourcebucket/sourcekey")
	}
	dec = strings.TrimPrefix(dec, "/")
	bucket, key, ok := strings.Cut(dec, "/")
	if !ok || bucket == "" || key == "" {
		return out, errInvalidArgument("Copy Source must mention the source bucket and key: sourcebucket/sourcekey")
	}
	out.bucket, out.key = bucket, key
	return out, nil
}

// copySourceError reports a failure to read a copy source as S3 does: a
// missing source is NoSuchKey or NoSuchVersion (without the source's
// delete marker headers, which would describe another object), and a
// versionId naming a delete marker is refused as a bad request.
func copySourceError(err error, version string) error {
	var dm *engine.DeleteMarkerError
	switch {
	case errors.As(err, &dm) && errors.Is(err, engine.ErrMethodNotAllowed):
		return errInvalidRequest("The source of a copy request may not specifically refer to a delete marker by version id.")
	case errors.Is(err, engine.ErrObjectNotFound):
		return toAPIError(engine.ErrObjectNotFound)
	case errors.Is(err, engine.ErrNoSuchVersion):
		return toAPIError(err)
	}
	return versionError(err, version)
}

// checkCopySourceAccess makes sure the caller may read the source object
// (READ on the version, as for GetObject) and that its bucket has the
// owner x-amz-source-expected-bucket-owner names, if any. It returns the
// source bucket and the version whose access was decided.
func (q *request) checkCopySourceAccess(src copySrc) (engine.BucketInfo, engine.ObjectInfo, error) {
	bi, err := q.s.cfg.Store.BucketInfo(q.ctx, src.bucket)
	if err != nil {
		return bi, engine.ObjectInfo{}, fmt.Errorf("copy source bucket %q: %w", src.bucket, err)
	}
	if err := q.checkExpectedOwner(hdrSourceExpectedBucketOwner, bi); err != nil {
		return bi, engine.ObjectInfo{}, err
	}
	oi, err := q.objectAccess(bi, src.key, src.version, access.ReadObject)
	if err != nil {
		return bi, oi, copySourceError(err, src.version)
	}
	return bi, oi, nil
}

// setCopySourceVersion answers x-amz-copy-source-version-id: the version
// copied, named by the request or the current one the access check read,
// when the source bucket has versions to name.
func (q *request) setCopySourceVersion(src copySrc, srcBucket engine.BucketInfo, srcInfo engine.ObjectInfo) {
	switch {
	case src.version != "":
		q.w.Header().Set("X-Amz-Copy-Source-Version-Id", src.version)
	case srcBucket.Versioning != "":
		q.w.Header().Set("X-Amz-Copy-Source-Version-Id", versionOut(srcInfo.VersionID))
	}
}

func handleCopyObject(q *request) error {
	bi, err := q.bucketAccess(q.bucket, access.WriteObject)
	if err != nil {
		return err
	}
	src, err := q.copySource()
	if err != nil {
		return err
	}
	if q.r.Header.Get("X-Amz-Copy-Source-Range") != "" {
		return errInvalidArgument("Range specified is not valid for source object")
	}
	srcBucket, srcInfo, err := q.checkCopySourceAccess(src)
	if err != nil {
		return err
	}
	srcSSE, err := q.sseForRead(q.r.Header, hdrCopySSEC)
	if err != nil {
		return err
	}
	if src.version == "" || srcInfo.VersionID == src.version {
		// The version whose access was decided is the one copied (a
		// race with an overwrite is caught when it is unsealed).
		if err := checkCustomerKey(srcInfo.Sealed, srcSSE); err != nil {
			return err
		}
	}
	put, err := q.putOptions(bi)
	if err != nil {
		return err
	}
	// The copy's object lock is the request's own, never the source's.
	if err := q.checkLockWrite(bi, put.Lock); err != nil {
		return err
	}
	cs, err := parseChecksum(q.r.Header)
	if err != nil {
		return err
	}
	if alg := q.r.Header.Get("X-Amz-Checksum-Algorithm"); alg != "" {
		cs.alg = strings.ToUpper(alg)
		if _, ok := checksumAlgorithms[cs.alg]; !ok {
			return errUnsupportedChecksum()
		}
	}
	put.ChecksumAlgorithm = cs.alg
	writeConditions(q.r.Header, &put)
	opts := engine.CopyOptions{Put: put, SourceVersionID: src.version,
		SourceConditions: conditions(q.r.Header, "X-Amz-Copy-Source-"),
		SourceUnseal:     q.unsealer(srcBucket, srcSSE, nil, false)}
	switch d := q.r.Header.Get("X-Amz-Metadata-Directive"); d {
	case "", "COPY":
	case "REPLACE":
		opts.ReplaceMetadata = true
	default:
		return errInvalidArgument("Unknown metadata directive.")
	}
	// Tags: the source's (COPY, the default) or x-amz-tagging's.
	switch d := q.r.Header.Get("X-Amz-Tagging-Directive"); d {
	case "", "COPY":
	case "REPLACE":
		opts.ReplaceTags = true
		if err := q.checkTagWrite(bi, put.Tags); err != nil {
			return err
		}
	default:
		return errInvalidArgument("Unknown tagging directive.")
	}
	// A copy onto itself that only replaces metadata keeps the data as
	// it is encrypted when the request asks for that same encryption;
	// one that names an encryption and keeps the metadata is S3's way
	// to re-encrypt an object, so its data is rewritten under a new key.
	if src.bucket == q.bucket && src.key == q.key && srcInfo.Cipher != "" && opts.ReplaceMetadata &&
		sameEncryption(srcInfo.Sealed, put.Encryption, q.sse) {
		opts.KeepEncryption, opts.Put.Encryption = true, nil
	}
	// Copying a named version onto its own key is how S3 restores an
	// older version, so only a copy of the current version is refused.
	if src.bucket == q.bucket && src.key == q.key && src.version == "" && !opts.ReplaceMetadata &&
		put.StorageClass == "" && cs.alg == "" && q.sse.scheme == "" {
		return errInvalidRequest("This copy request is illegal because it is trying to copy an object to itself without changing the object's metadata, storage class, website redirect location or encryption attributes.")
	}
	opts.Put.Committed = q.commitHook(bi, notify.ObjectCreatedCopy)
	oi, err := q.s.cfg.Store.CopyObject(q.ctx, src.bucket, src.key, q.bucket, q.key, opts)
	if err != nil {
		if versionMissing(err) || (src.version != "" && errors.Is(err, engine.ErrInvalidArgument)) {
			return copySourceError(err, src.version)
		}
		return fmt.Errorf("copy %s/%s to %s/%s: %w", src.bucket, src.key, q.bucket, q.key, err)
	}
	res := xmlCopyObjectResult{NS: s3NS, LastModified: isoTime(oi.ModTime), ETag: quoteETag(oi.ETag),
		xmlChecksums: checksumsOf(oi.Checksum.Algorithm, oi.Checksum.Value), ChecksumType: oi.Checksum.Type}
	q.setCopySourceVersion(src, srcBucket, srcInfo)
	q.setWrittenVersionID(bi, oi.VersionID)
	q.setExpiration(bi, oi)
	setSSEHeaders(q.w.Header(), oi.Sealed, q.sse)
	q.notifyWrite(bi, notify.ObjectCreatedCopy, oi)
	q.writeXML(res)
	return nil
}

// objectACLTarget loads the bucket and object of an object-ACL request
// and checks the caller may read (op access.ObjectACL) or change
// (access.PutObjectACL) the ACL: the object's owner, root, or a grantee of
// READ_ACP / WRITE_ACP (FULL_CONTROL gives both; so the bucket owner
// may when the object's ACL is bucket-owner-full-control). It also
// returns the object's owner as its ACL names it: the writer, or the
// bucket's owner for an object written anonymously or while ACLs are
// off (BucketOwnerEnforced).
func (q *request) objectACLTarget(op access.Operation, version string) (engine.BucketInfo, engine.ObjectInfo, string, error) {
	bi, err := q.s.cfg.Store.BucketInfo(q.ctx, q.bucket)
	if err != nil {
		return bi, engine.ObjectInfo{}, "", fmt.Errorf("bucket %q: %w", q.bucket, err)
	}
	oi, err := q.objectAccess(bi, q.key, version, op)
	if errors.Is(err, engine.ErrObjectNotFound) {
		return bi, oi, "", fmt.Errorf("object acl %s/%s: %w", q.bucket, q.key, err)
	}
	owner := oi.Owner
	if owner == "" || objectOwnership(bi) == ownershipEnforced {
		owner = bi.Owner
	}
	return bi, oi, owner, err
}

func handleGetObjectACL(q *request) error {
	version, err := q.requestVersion()
	if err != nil {
		return err
	}
	bi, oi, owner, err := q.objectACLTarget(access.ObjectACL, version)
	if err != nil {
		return err
	}
	if objectOwnership(bi) == ownershipEnforced {
		q.writeXML(ownerOnlyDocument(owner))
		return nil
	}
	q.writeXML(q.s.aclDocument(owner, oi.ACL, true, bi.Owner))
	return nil
}

func handlePutObjectACL(q *request) error {
	version, err := q.requestVersion()
	if err != nil {
		return err
	}
	bi, _, owner, err := q.objectACLTarget(access.PutObjectACL, version)
	if err != nil {
		return err
	}
	a, err := q.aclForPut(bi, owner, true)
	if err != nil {
		return err
	}
	if err := q.s.cfg.Store.SetObjectACL(q.ctx, q.bucket, q.key, version, a.stored()); err != nil {
		return fmt.Errorf("set object acl %s/%s: %w", q.bucket, q.key, versionError(err, version))
	}
	q.writeEmpty(http.StatusOK)
	return nil
}

// objectAttributeNames are the values x-amz-object-attributes may list.
var objectAttributeNames = map[string]string{
	"etag": "ETag", "checksum": "Checksum", "objectparts": "ObjectParts",
	"storageclass": "StorageClass", "objectsize": "ObjectSize",
}

// objectAttributes parses x-amz-object-attributes (a comma-separated
// list, possibly over several header lines) into canonical names.
func objectAttributes(h http.Header) (map[string]bool, error) {
	want := map[string]bool{}
	for _, line := range h.Values("X-Amz-Object-Attributes") {
		for _, v := range strings.Split(line, ",") {
			v = strings.TrimSpace(v)
			if v == "" {
				continue
			}
			name, ok := objectAttributeNames[strings.ToLower(v)]
			if !ok {
				return nil, errInvalidArgument("Invalid attribute name specified.")
			}
			want[name] = true
		}
	}
	if len(want) == 0 {
		return nil, errInvalidArgument("The x-amz-object-attributes header specifying the attributes to be retrieved is either missing or empty")
	}
	return want, nil
}

// headerInt reads a non-negative integer header, def when absent.
func headerInt(h http.Header, name string, def int) (int, error) {
	v := strings.TrimSpace(h.Get(name))
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, errInvalidArgument("Provided %s not an integer or within integer range", strings.ToLower(name))
	}
	return n, nil
}

// objectParts is GetObjectAttributes' ObjectParts of a multipart object,
// as S3 answers it: a COMPOSITE object's page of parts after marker,
// each with its size and checksum; for any other multipart object
// (FULL_OBJECT, or no checksum) only the part count, since S3 lists
// parts only for objects whose part checksums make up the object's.
func objectParts(oi engine.ObjectInfo, marker, maxParts int) *xmlAttributesParts {
	op := &xmlAttributesParts{PartsCount: len(oi.Parts)}
	if oi.Checksum.Algorithm == "" || oi.Checksum.Type != hashing.Composite {
		return op
	}
	next, truncated := 0, false
	op.PartNumberMarker, op.NextPartNumberMarker, op.MaxParts, op.IsTruncated = &marker, &next, &maxParts, &truncated
	for _, p := range oi.Parts {
		if p.Number <= marker {
			continue
		}
		if len(op.Parts) == maxParts {
			truncated = true
			break
		}
		next = p.Number
		op.Parts = append(op.Parts, xmlAttributesPart{PartNumber: p.Number, Size: p.Size,
			xmlChecksums: checksumsOf(oi.Checksum.Algorithm, p.Checksum)})
	}
	return op
}

// handleGetObjectAttributes answers GET ?attributes: the attributes the
// caller lists in x-amz-object-attributes, under HeadObject's access
// rules (READ on the object).
func handleGetObjectAttributes(q *request) error {
	bi, err := q.s.cfg.Store.BucketInfo(q.ctx, q.bucket)
	if err != nil {
		return fmt.Errorf("bucket %q: %w", q.bucket, err)
	}
	version, err := q.requestVersion()
	if err != nil {
		return err
	}
	want, err := objectAttributes(q.r.Header)
	if err != nil {
		return err
	}
	maxParts, err := headerInt(q.r.Header, "X-Amz-Max-Parts", 1000)
	if err != nil {
		return err
	}
	marker, err := headerInt(q.r.Header, "X-Amz-Part-Number-Marker", 0)
	if err != nil {
		return err
	}
	maxParts = min(maxParts, 1000)
	sreq, err := q.sseForRead(q.r.Header, hdrSSECPrefix)
	if err != nil {
		return err
	}
	oi, err := q.statForRead(bi, engine.GetOptions{VersionID: version})
	if err != nil {
		return err
	}
	// An SSE-C object's attributes need its key, as its HEAD does.
	if err := checkCustomerKey(oi.Sealed, sreq); err != nil {
		return err
	}
	q.setVersionID(bi, oi.VersionID)
	out := xmlObjectAttributes{NS: s3NS}
	if want["ETag"] {
		out.ETag = trimETag(oi.ETag)
	}
	if want["StorageClass"] {
		out.StorageClass = oi.StorageClass
		if out.StorageClass == "" {
			out.StorageClass = "STANDARD"
		}
	}
	if want["ObjectSize"] {
		size := oi.Size
		out.ObjectSize = &size
	}
	cs := oi.Checksum
	if want["Checksum"] && cs.Algorithm != "" {
		val, _, composite := strings.Cut(cs.Value, "-")
		typ := cs.Type
		if typ == "" {
			typ = "FULL_OBJECT"
			if composite {
				typ = "COMPOSITE"
			}
		}
		out.Checksum = &xmlAttributesChecksum{xmlChecksums: checksumsOf(cs.Algorithm, val), ChecksumType: typ}
	}
	if want["ObjectParts"] && len(oi.Parts) > 0 {
		out.ObjectParts = objectParts(oi, marker, maxParts)
	}
	q.w.Header().Set("Last-Modified", oi.ModTime.UTC().Format(http.TimeFormat))
	q.notify(bi, notify.ObjectAccessedAttributes, q.key, oi.Size, oi.ETag, oi.VersionID)
	q.writeXML(out)
	return nil
}
