package s3api

import (
	"encoding/xml"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/shardstore/shardstore/internal/access"
	"github.com/shardstore/shardstore/internal/engine"
	"github.com/shardstore/shardstore/internal/notify"
)

// maxCompleteBody bounds a CompleteMultipartUpload body: 10000 parts of
// about 150 bytes each with checksums, with room to spare.
const maxCompleteBody = 4 << 20

func handleCreateMultipartUpload(q *request) error {
	bi, err := q.bucketAccess(q.bucket, access.WriteObject)
	if err != nil {
		return err
	}
	opts, err := q.putOptions(bi)
	if err != nil {
		return err
	}
	if err := q.checkTagWrite(bi, opts.Tags); err != nil {
		return err
	}
	if err := q.checkLockWrite(bi, opts.Lock); err != nil {
		return err
	}
	alg, typ, err := parseCreateChecksum(q.r.Header)
	if err != nil {
		return err
	}
	opts.ChecksumAlgorithm, opts.ChecksumType = alg, typ
	id, err := q.s.cfg.Store.NewMultipartUpload(q.ctx, q.bucket, q.key, opts)
	if err != nil {
		return fmt.Errorf("create upload %s/%s: %w", q.bucket, q.key, err)
	}
	if alg != "" {
		q.w.Header().Set("X-Amz-Checksum-Algorithm", alg)
		q.w.Header().Set("X-Amz-Checksum-Type", typ)
	}
	if opts.Encryption != nil {
		setSSEHeaders(q.w.Header(), opts.Encryption.Sealed, q.sse)
	}
	q.setAbortDate(bi, q.key, time.Now())
	q.writeXML(xmlInitiateMultipart{NS: s3NS, Bucket: q.bucket, Key: q.key, UploadID: id})
	return nil
}

// partTarget reads the partNumber and uploadId parameters of UploadPart
// and UploadPartCopy.
func (q *request) partTarget() (part int, uploadID string, err error) {
	if part, err = q.partNumber(); err != nil {
		return 0, "", err
	}
	if uploadID, err = q.uploadID(); err != nil {
		return 0, "", err
	}
	return part, uploadID, nil
}

// partNumber reads and validates the partNumber parameter.
func (q *request) partNumber() (int, error) {
	n, err := strconv.Atoi(q.param("partNumber"))
	if err != nil || n < 1 || n > engine.MaxPartNumber {
		return 0, errInvalidArgument("Part number must be an integer between 1 and 10000, inclusive")
	}
	return n, nil
}

func (q *request) uploadID() (string, error) {
	id := q.param("uploadId")
	if id == "" {
		return "", toAPIError(engine.ErrNoSuchUpload)
	}
	return id, nil
}

func handleUploadPart(q *request) error {
	if _, err := q.bucketAccess(q.bucket, access.WriteObject); err != nil {
		return err
	}
	part, id, err := q.partTarget()
	if err != nil {
		return err
	}
	size, err := q.bodySize(false)
	if err != nil {
		return err
	}
	var opts engine.PartOptions
	md5sum, cs, err := q.bodyDigests()
	if err != nil {
		return err
	}
	opts.ContentMD5, opts.ChecksumAlgorithm, opts.ExpectedChecksum = md5sum, cs.alg, cs.expected(q)
	sreq, err := q.sseForRead(q.r.Header, hdrSSECPrefix)
	if err != nil {
		return err
	}
	var sealed map[string]string
	opts.Unseal = q.partUnsealer(sreq, &sealed)
	pi, err := q.s.cfg.Store.PutObjectPart(q.ctx, q.bucket, q.key, id, part, q.exact, size, opts)
	if err != nil {
		return fmt.Errorf("upload part %d of %s/%s: %w", part, q.bucket, q.key, err)
	}
	h := q.w.Header()
	h.Set("ETag", quoteETag(pi.ETag))
	setSSEHeaders(h, sealed, sreq)
	// The part's checksum: the one sent, or the upload's computed here.
	if pi.Checksum != "" && pi.ChecksumAlgorithm != "" {
		h.Set(checksumHeader(pi.ChecksumAlgorithm), pi.Checksum)
	}
	q.writeEmpty(http.StatusOK)
	return nil
}

// handleUploadPartCopy streams a (range of a) source object into a part.
func handleUploadPartCopy(q *request) error {
	if _, err := q.bucketAccess(q.bucket, access.WriteObject); err != nil {
		return err
	}
	part, id, err := q.partTarget()
	if err != nil {
		return err
	}
	src, err := q.copySource()
	if err != nil {
		return err
	}
	srcBucket, _, err := q.checkCopySourceAccess(src)
	if err != nil {
		return err
	}
	srcSSE, err := q.sseForRead(q.r.Header, hdrCopySSEC)
	if err != nil {
		return err
	}
	dstSSE, err := q.sseForRead(q.r.Header, hdrSSECPrefix)
	if err != nil {
		return err
	}
	gopts := engine.GetOptions{VersionID: src.version, Conditions: conditions(q.r.Header, "X-Amz-Copy-Source-"),
		Unseal: q.unsealer(srcBucket, srcSSE, nil, false)}
	if v := q.r.Header.Get("X-Amz-Copy-Source-Range"); v != "" {
		rng, ok := parseRange(v)
		// S3 accepts only the explicit "bytes=first-last" form here.
		if !ok || rng == nil || rng.Start < 0 || rng.End < 0 {
			return errInvalidArgument("The x-amz-copy-source-range value must be of the form bytes=first-last where first and last are the zero-based offsets of the first and last bytes to copy")
		}
		gopts.Range = rng
	}
	rd, err := q.s.cfg.Store.GetObject(q.ctx, src.bucket, src.key, gopts)
	if err != nil {
		if errors.Is(err, engine.ErrInvalidRange) {
			return errCopyRange()
		}
		if errors.Is(err, engine.ErrNotModified) {
			return toAPIError(engine.ErrPreconditionFailed)
		}
		return fmt.Errorf("open copy source %s/%s: %w", src.bucket, src.key, copySourceError(err, src.version))
	}
	defer rd.Close()
	// A GET clamps a range's end to the object; a part copy must lie
	// entirely within the source.
	if gopts.Range != nil && gopts.Range.End >= rd.Info.Size {
		return errCopyRange()
	}
	if rd.Length > engine.MaxPutSize {
		return errInvalidRequest("The specified copy source is larger than the maximum allowable size for a copy source: 5368709120")
	}
	if err := checkCustomerKey(rd.Info.Sealed, srcSSE); err != nil {
		return err
	}
	var sealed map[string]string
	pi, err := q.s.cfg.Store.PutObjectPart(q.ctx, q.bucket, q.key, id, part, rd, rd.Length,
		engine.PartOptions{Unseal: q.partUnsealer(dstSSE, &sealed)})
	if err != nil {
		return fmt.Errorf("upload part copy %d of %s/%s: %w", part, q.bucket, q.key, err)
	}
	setSSEHeaders(q.w.Header(), sealed, dstSSE)
	q.setCopySourceVersion(src, srcBucket, rd.Info)
	q.writeXML(xmlCopyPartResult{NS: s3NS, LastModified: isoTime(pi.ModTime), ETag: quoteETag(pi.ETag),
		xmlChecksums: checksumsOf(pi.ChecksumAlgorithm, pi.Checksum)})
	return nil
}

// errCopyRange answers an x-amz-copy-source-range that is not within the
// source object: S3's InvalidRange.
func errCopyRange() *Error {
	return errorf("InvalidRange", http.StatusRequestedRangeNotSatisfiable, "The requested range is not satisfiable")
}

// objectURL is the object's full URL as the request addressed the
// server (scheme, host, virtual-host or path style), with the key
// URI-encoded: the Location of CompleteMultipartUpload.
func (q *request) objectURL() string {
	scheme := "http"
	if q.r.TLS != nil {
		scheme = "https"
	}
	path := "/" + uriEncodePath(q.key)
	if _, _, vhost := q.s.parseTarget(q.r); !vhost {
		path = "/" + q.bucket + path
	}
	return scheme + "://" + q.r.Host + path
}

// uriEncodePath percent-encodes every byte of s but the unreserved
// characters (RFC 3986) and '/'.
func uriEncodePath(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'A' <= c && c <= 'Z', 'a' <= c && c <= 'z', '0' <= c && c <= '9',
			c == '-', c == '_', c == '.', c == '~', c == '/':
			b.WriteByte(c)
		default:
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// uploadAccess checks the caller may list the parts of or abort upload
// id: the bucket owner or the upload's initiator. An unknown upload
// answers NoSuchUpload only to a caller who may write to the bucket.
func (q *request) uploadAccess(id string) error {
	bi, err := q.s.cfg.Store.BucketInfo(q.ctx, q.bucket)
	if err != nil {
		return err
	}
	res, err := q.s.cfg.Store.ListObjectParts(q.ctx, q.bucket, q.key, id, 0, 1)
	if err != nil {
		if !q.allows(access.WriteObject, q.bucketResource(bi)) {
			return errAccessDenied()
		}
		return fmt.Errorf("upload %s of %s/%s: %w", id, q.bucket, q.key, err)
	}
	r := q.bucketResource(bi)
	r.ObjectOwner = res.Upload.Owner
	if !q.allows(access.ManageUpload, r) {
		return errAccessDenied()
	}
	return nil
}

func handleListParts(q *request) error {
	id, err := q.uploadID()
	if err != nil {
		if _, berr := q.bucketAccess(q.bucket, access.WriteObject); berr != nil {
			return berr
		}
		return err
	}
	if err := q.uploadAccess(id); err != nil {
		return err
	}
	marker, err := q.intParam("part-number-marker", 0)
	if err != nil {
		return err
	}
	maxParts, err := q.intParam("max-parts", 1000)
	if err != nil {
		return err
	}
	maxParts = min(maxParts, 1000)
	res, err := q.s.cfg.Store.ListObjectParts(q.ctx, q.bucket, q.key, id, marker, max(maxParts, 1))
	if err != nil {
		return fmt.Errorf("list parts of %s/%s: %w", q.bucket, q.key, err)
	}
	out := xmlListParts{NS: s3NS, Bucket: q.bucket, Key: q.key, UploadID: id,
		Initiator: ownerOf(res.Upload.Owner), Owner: ownerOf(res.Upload.Owner),
		StorageClass: storageClass(res.Upload.StorageClass), PartNumberMarker: marker,
		NextPartNumberMarker: res.NextPartNumberMarker, MaxParts: maxParts, IsTruncated: res.IsTruncated,
		ChecksumAlgorithm: res.Upload.ChecksumAlgorithm, ChecksumType: res.Upload.ChecksumType}
	if maxParts > 0 {
		for _, p := range res.Parts {
			out.Parts = append(out.Parts, xmlPart{PartNumber: p.Number, LastModified: isoTime(p.ModTime),
				ETag: quoteETag(p.ETag), Size: p.Size,
				xmlChecksums: checksumsOf(res.Upload.ChecksumAlgorithm, p.Checksum)})
		}
	}
	q.writeXML(out)
	return nil
}

func handleCompleteMultipartUpload(q *request) error {
	bi, err := q.bucketAccess(q.bucket, access.WriteObject)
	if err != nil {
		return err
	}
	id, err := q.uploadID()
	if err != nil {
		return err
	}
	body, err := q.readBody(maxCompleteBody)
	if err != nil {
		return err
	}
	var req xmlCompleteRequest
	if err := xml.Unmarshal(body, &req); err != nil || len(req.Parts) == 0 {
		return errMalformedXML()
	}
	if len(req.Parts) > engine.MaxPartNumber {
		return errMalformedXML()
	}
	parts := make([]engine.CompletePart, 0, len(req.Parts))
	for _, p := range req.Parts {
		if p.PartNumber < 1 || p.PartNumber > engine.MaxPartNumber {
			return toAPIError(engine.ErrInvalidPart)
		}
		parts = append(parts, engine.CompletePart{Number: p.PartNumber, ETag: trimETag(p.ETag), Checksums: p.all()})
	}
	if !sort.SliceIsSorted(parts, func(i, j int) bool { return parts[i].Number < parts[j].Number }) {
		return toAPIError(engine.ErrInvalidPartOrder)
	}
	for i := 1; i < len(parts); i++ {
		if parts[i].Number == parts[i-1].Number {
			return toAPIError(engine.ErrInvalidPartOrder)
		}
	}
	opts := engine.PutOptions{Owner: q.caller.owner()}
	// The object's checksum, when the client sends it (a FULL_OBJECT
	// value, or a COMPOSITE one with or without its "-N"), and the type
	// it names: the engine checks both against the upload's.
	alg, value, err := checksumHeaderValue(q.r.Header, validObjectChecksum)
	if err != nil {
		return err
	}
	if alg != "" {
		opts.ChecksumAlgorithm = alg
		opts.ExpectedChecksum = func() (string, error) { return value, nil }
	}
	if opts.ChecksumType, err = parseChecksumType(q.r.Header); err != nil {
		return err
	}
	writeConditions(q.r.Header, &opts)
	opts.Committed = q.commitHook(bi, notify.ObjectCreatedCompleteMPU)
	oi, err := q.s.cfg.Store.CompleteMultipartUpload(q.ctx, q.bucket, q.key, id, parts, opts)
	if err != nil {
		return fmt.Errorf("complete upload of %s/%s: %w", q.bucket, q.key, err)
	}
	out := xmlCompleteResult{NS: s3NS, Location: q.objectURL(), Bucket: q.bucket, Key: q.key,
		ETag: quoteETag(oi.ETag), xmlChecksums: checksumsOf(oi.Checksum.Algorithm, oi.Checksum.Value),
		ChecksumType: oi.Checksum.Type}
	q.setWrittenVersionID(bi, oi.VersionID)
	q.setExpiration(bi, oi)
	// The key headers are optional on a completion; a malformed set is
	// ignored here, as nothing is unsealed.
	sreq, _ := q.sseForRead(q.r.Header, hdrSSECPrefix)
	setSSEHeaders(q.w.Header(), oi.Sealed, sreq)
	q.notifyWrite(bi, notify.ObjectCreatedCompleteMPU, oi)
	q.writeXML(out)
	return nil
}

func handleAbortMultipartUpload(q *request) error {
	id, err := q.uploadID()
	if err != nil {
		if _, berr := q.bucketAccess(q.bucket, access.WriteObject); berr != nil {
			return berr
		}
		return err
	}
	if err := q.uploadAccess(id); err != nil {
		return err
	}
	if err := q.s.cfg.Store.AbortMultipartUpload(q.ctx, q.bucket, q.key, id); err != nil {
		return fmt.Errorf("abort upload of %s/%s: %w", q.bucket, q.key, err)
	}
	q.writeEmpty(http.StatusNoContent)
	return nil
}

func handleListMultipartUploads(q *request) error {
	if _, err := q.bucketAccess(q.bucket, access.ListBucket); err != nil {
		return err
	}
	p, err := q.listParams("max-uploads")
	if err != nil {
		return err
	}
	opts := engine.ListUploadsOptions{Prefix: p.prefix, Delimiter: p.delimiter, KeyMarker: q.param("key-marker"),
		UploadIDMarker: q.param("upload-id-marker"), MaxUploads: p.maxKeys}
	var res engine.ListUploadsResult
	if p.maxKeys > 0 {
		if res, err = q.s.cfg.Store.ListMultipartUploads(q.ctx, q.bucket, opts); err != nil {
			return fmt.Errorf("list uploads in %q: %w", q.bucket, err)
		}
	}
	out := xmlListUploads{NS: s3NS, Bucket: q.bucket, KeyMarker: p.encode(opts.KeyMarker),
		UploadIDMarker: opts.UploadIDMarker, NextKeyMarker: p.encode(res.NextKeyMarker),
		NextUploadIDMarker: res.NextUploadIDMarker, Prefix: p.encode(p.prefix), Delimiter: p.encode(p.delimiter),
		EncodingType: p.encodingType, MaxUploads: p.maxKeys, IsTruncated: res.IsTruncated}
	for _, u := range res.Uploads {
		out.Uploads = append(out.Uploads, xmlUpload{Key: p.encode(u.Key), UploadID: u.UploadID,
			Initiator: ownerOf(u.Owner), Owner: ownerOf(u.Owner), StorageClass: storageClass(u.StorageClass),
			Initiated: isoTime(u.Initiated), ChecksumAlgorithm: u.ChecksumAlgorithm, ChecksumType: u.ChecksumType})
	}
	for _, cp := range res.CommonPrefixes {
		out.CommonPrefixes = append(out.CommonPrefixes, xmlPrefix{Prefix: p.encode(cp)})
	}
	q.writeXML(out)
	return nil
}
