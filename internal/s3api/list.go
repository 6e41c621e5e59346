package s3api

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"

	"github.com/shardstore/shardstore/internal/access"
	"github.com/shardstore/shardstore/internal/engine"
)

// s3URLEncode escapes everything outside RFC 3986's unreserved set (and
// "/"), as S3 does for encoding-type=url; a space becomes %20 so both
// percent-decoding and form-decoding clients read it back correctly.
func s3URLEncode(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') || ('0' <= c && c <= '9') ||
			c == '-' || c == '_' || c == '.' || c == '~' || c == '/' {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "%%%02X", c)
	}
	return b.String()
}

// listParams are the common parameters of the listing calls.
type listParams struct {
	prefix, delimiter string
	maxKeys           int
	encode            func(string) xmlText
	encodingType      string
}

func (q *request) listParams(maxName string) (listParams, error) {
	p := listParams{prefix: q.param("prefix"), delimiter: q.param("delimiter"), encode: func(s string) xmlText { return xmlText(s) }}
	n, err := q.intParam(maxName, 1000)
	if err != nil {
		return p, err
	}
	p.maxKeys = min(n, 1000)
	switch et := q.param("encoding-type"); et {
	case "":
	case "url":
		p.encode = func(s string) xmlText { return xmlText(s3URLEncode(s)) }
		p.encodingType = "url"
	default:
		return p, errInvalidArgument("Invalid Encoding Method specified in Request")
	}
	return p, nil
}

// list runs one engine listing page; max-keys=0 answers an empty page
// without asking the engine, whose 0 means the default.
func (q *request) list(p listParams, after string) (engine.ListResult, error) {
	if p.maxKeys == 0 {
		return engine.ListResult{}, nil
	}
	res, err := q.s.cfg.Store.ListObjects(q.ctx, q.bucket, engine.ListOptions{
		Prefix: p.prefix, Delimiter: p.delimiter, After: after, MaxKeys: p.maxKeys, ReadAhead: true,
	})
	if err != nil {
		return res, fmt.Errorf("list objects in %q: %w", q.bucket, err)
	}
	return res, nil
}

func (p listParams) objects(res engine.ListResult, withOwner bool) []xmlObject {
	out := make([]xmlObject, 0, len(res.Objects))
	for _, o := range res.Objects {
		x := xmlObject{Key: p.encode(o.Key), LastModified: isoTime(o.ModTime), ETag: quoteETag(o.ETag),
			Size: o.Size, StorageClass: storageClass(o.StorageClass)}
		if o.Checksum.Algorithm != "" {
			x.ChecksumAlgorithm, x.ChecksumType = o.Checksum.Algorithm, o.Checksum.Type
		}
		if withOwner {
			x.Owner = ownerOf(o.Owner)
		}
		out = append(out, x)
	}
	return out
}

func (p listParams) prefixes(res engine.ListResult) []xmlPrefix {
	out := make([]xmlPrefix, 0, len(res.CommonPrefixes))
	for _, cp := range res.CommonPrefixes {
		out = append(out, xmlPrefix{Prefix: p.encode(cp)})
	}
	return out
}

func storageClass(sc string) string {
	if sc == "" {
		return "STANDARD"
	}
	return sc
}

func handleListObjectsV1(q *request) error {
	if _, err := q.bucketAccess(q.bucket, access.ListBucket); err != nil {
		return err
	}
	p, err := q.listParams("max-keys")
	if err != nil {
		return err
	}
	marker := q.param("marker")
	res, err := q.list(p, marker)
	if err != nil {
		return err
	}
	out := xmlListBucketV1{NS: s3NS, Name: q.bucket, Prefix: p.encode(p.prefix), Marker: p.encode(marker),
		MaxKeys: p.maxKeys, Delimiter: p.encode(p.delimiter), EncodingType: p.encodingType,
		IsTruncated: res.IsTruncated, Contents: p.objects(res, true), CommonPrefixes: p.prefixes(res)}
	if res.IsTruncated && p.delimiter != "" {
		// S3 sends NextMarker only with a delimiter; without one clients
		// use the last key, which is the same value.
		out.NextMarker = p.encode(res.NextAfter)
	}
	q.writeXML(out)
	return nil
}

func handleListObjectsV2(q *request) error {
	if _, err := q.bucketAccess(q.bucket, access.ListBucket); err != nil {
		return err
	}
	p, err := q.listParams("max-keys")
	if err != nil {
		return err
	}
	after := q.param("start-after")
	// An empty continuation-token is read as absent, the first page, and
	// echoed as sent: ContinuationToken is in the answer whenever the
	// request had one (docs/conformance.md has the evidence).
	token := q.param("continuation-token")
	_, sentToken := q.query["continuation-token"]
	if token != "" {
		raw, err := base64.RawURLEncoding.DecodeString(token)
		if err != nil {
			return errInvalidArgument("The continuation token provided is incorrect")
		}
		// The token resumes after its key even if start-after is earlier.
		if string(raw) > after {
			after = string(raw)
		}
	}
	res, err := q.list(p, after)
	if err != nil {
		return err
	}
	out := xmlListBucketV2{NS: s3NS, Name: q.bucket, Prefix: p.encode(p.prefix),
		StartAfter: p.encode(q.param("start-after")), MaxKeys: p.maxKeys, Delimiter: p.encode(p.delimiter),
		EncodingType: p.encodingType, IsTruncated: res.IsTruncated,
		Contents:       p.objects(res, q.param("fetch-owner") == "true"),
		CommonPrefixes: p.prefixes(res)}
	if sentToken {
		out.ContinuationToken = &token
	}
	out.KeyCount = len(out.Contents) + len(out.CommonPrefixes)
	if res.IsTruncated {
		out.NextContinuationToken = base64.RawURLEncoding.EncodeToString([]byte(res.NextAfter))
	}
	q.writeXMLBytes(http.StatusOK, appendListV2(make([]byte, 0, 64+300*len(out.Contents)), &out))
	return nil
}

// handleListObjectVersions lists the versions and delete markers of the
// bucket's keys (engine.ListObjectVersions) in the engine's order: keys
// in byte order, each key's versions newest first. A never-versioned
// bucket lists each object as its only version, "null".
func handleListObjectVersions(q *request) error {
	bi, err := q.bucketAccess(q.bucket, access.ListBucket)
	if err != nil {
		return err
	}
	p, err := q.listParams("max-keys")
	if err != nil {
		return err
	}
	keyMarker, versionMarker := q.param("key-marker"), q.param("version-id-marker")
	if versionMarker != "" && keyMarker == "" {
		return errInvalidArgument("A version-id marker cannot be specified without a key marker.")
	}
	var res engine.ListVersionsResult
	if p.maxKeys > 0 { // max-keys=0 is an empty page; the engine's 0 means the default
		res, err = q.s.cfg.Store.ListObjectVersions(q.ctx, q.bucket, engine.ListVersionsOptions{
			Prefix: p.prefix, Delimiter: p.delimiter, KeyMarker: keyMarker, VersionIDMarker: versionMarker,
			MaxKeys: p.maxKeys,
		})
		if err != nil {
			return fmt.Errorf("list versions in %q: %w", q.bucket, versionError(err, versionMarker))
		}
	}
	out := xmlListVersions{NS: s3NS, Name: q.bucket, Prefix: p.encode(p.prefix), KeyMarker: p.encode(keyMarker),
		VersionIDMarker: versionMarker, MaxKeys: p.maxKeys, Delimiter: p.encode(p.delimiter),
		EncodingType: p.encodingType, IsTruncated: res.IsTruncated,
		CommonPrefixes: p.prefixes(engine.ListResult{CommonPrefixes: res.CommonPrefixes})}
	out.Entries = make([]xmlVersion, 0, len(res.Versions))
	for _, v := range res.Versions {
		out.Entries = append(out.Entries, p.versionEntry(v, bi.Owner))
	}
	if res.IsTruncated {
		out.NextKeyMarker = p.encode(res.NextKeyMarker)
		out.NextVersionIDMarker = nextVersionMarker(res)
	}
	q.writeXML(out)
	return nil
}

// versionEntry is one Version or DeleteMarker element; a version with no
// recorded owner is the bucket owner's (see package access).
func (p listParams) versionEntry(o engine.ObjectInfo, bucketOwner string) xmlVersion {
	owner := o.Owner
	if owner == "" {
		owner = bucketOwner
	}
	x := xmlVersion{XMLName: xmlNameVersion, Key: p.encode(o.Key), VersionID: versionOut(o.VersionID),
		IsLatest: o.IsLatest, LastModified: isoTime(o.ModTime), Owner: ownerOf(owner)}
	if o.DeleteMarker {
		x.XMLName = xmlNameDeleteMarker
		return x
	}
	size := o.Size
	x.ETag, x.Size, x.StorageClass = quoteETag(o.ETag), &size, storageClass(o.StorageClass)
	if o.Checksum.Algorithm != "" {
		x.ChecksumAlgorithm, x.ChecksumType = o.Checksum.Algorithm, o.Checksum.Type
	}
	return x
}

// nextVersionMarker is a truncated page's NextVersionIdMarker. The
// engine spells the null version "", which is also its answer when the
// page ended on a common prefix (no version to resume after): the page's
// last entry tells which.
func nextVersionMarker(res engine.ListVersionsResult) string {
	if res.NextVersionIDMarker != "" {
		return res.NextVersionIDMarker
	}
	if n := len(res.Versions); n > 0 {
		if last := res.Versions[n-1]; last.Key == res.NextKeyMarker && last.VersionID == "" {
			return engine.NullVersionID
		}
	}
	return ""
}
