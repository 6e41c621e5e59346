package s3api

// Object and bucket tagging.
//
//   - Put/Get/DeleteObjectTagging (?tagging on an object) replace, show and
//     remove the tag set of one version in place (engine.SetObjectTags:
//     the version, its ETag and Last-Modified do not change): the
//     current one, or the one versionId names. Each version has tags of
//     its own, so tagging an older version leaves the current one's as
//     they are. Answers carry x-amz-version-id where the bucket's
//     versioning was ever configured.
//   - PutObject, CopyObject (x-amz-tagging-directive REPLACE) and
//     CreateMultipartUpload take a tag set in x-amz-tagging (URL query
//     encoded, k1=v1&k2=v2), a form upload in its tagging field (a Tagging
//     document); copies keep the source's tags by default (COPY). GET and
//     HEAD answer x-amz-tagging-count to callers who may read the tags.
//   - Put/Get/DeleteBucketTagging keep the bucket's tag set as a
//     configuration document of its record, like the bucket's policy.
//
// S3's limits apply: 10 tags per object, 50 per bucket, keys of 1 to 128
// and values of up to 256 characters (counted as S3 counts them, in
// UTF-16 units) of S3's tag character set (letters, numbers and spaces
// of any script, and + - = . _ : / @), unique keys, none starting with
// "aws:". Access: the tagging actions (s3:GetObjectTagging,
// s3:PutObjectTagging, s3:DeleteObjectTagging, their ...VersionTagging
// forms when a versionId is named, s3:Get/PutBucketTagging) are decided
// by policies; ACL grants give none of them (S3 maps no ACL permission
// to tagging), so without a policy only the object's owner (the
// bucket's owner for bucket tags) may use them. A write that sets
// tags needs s3:PutObjectTagging besides s3:PutObject where a policy
// decides, as in AWS. These rules are access.Decide's
// (access.ObjectTagging, access.PutObjectTagging).

import (
	"encoding/xml"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/shardstore/shardstore/internal/access"
	"github.com/shardstore/shardstore/internal/engine"
	"github.com/shardstore/shardstore/internal/notify"
)

// S3's tag limits.
const (
	maxObjectTags  = engine.MaxObjectTags
	maxBucketTags  = 50
	maxTagKeyLen   = 128 // UTF-16 units
	maxTagValueLen = 256
)

// xmlTaggingIn is a Tagging document as a request sends it; pointers tell
// a missing element from an empty one.
type xmlTaggingIn struct {
	XMLName xml.Name `xml:"Tagging"`
	TagSet  *struct {
		Tags []struct {
			Key   *string `xml:"Key"`
			Value *string `xml:"Value"`
		} `xml:"Tag"`
	} `xml:"TagSet"`
}

// xmlTagging is a Tagging document as shardstore writes it: answers (with
// the namespace) and the stored bucket tag set (without).
type xmlTagging struct {
	XMLName xml.Name `xml:"Tagging"`
	NS      string   `xml:"xmlns,attr,omitempty"`
	TagSet  []xmlTag `xml:"TagSet>Tag"`
}

type xmlTag struct {
	Key   string `xml:"Key"`
	Value string `xml:"Value"`
}

// tagKind selects the limits and messages of object or bucket tags.
type tagKind int

const (
	objectTags tagKind = iota
	bucketTags
)

func errInvalidTag(format string, args ...any) *Error {
	return errorf("InvalidTag", http.StatusBadRequest, format, args...)
}

func errTooManyTags(kind tagKind) *Error {
	if kind == bucketTags {
		return errorf("BadRequest", http.StatusBadRequest, "Bucket tag count cannot be greater than %d", maxBucketTags)
	}
	return errorf("BadRequest", http.StatusBadRequest, "Object tags cannot be greater than %d", maxObjectTags)
}

func errBadTaggingHeader() *Error {
	return errInvalidArgument("The header 'x-amz-tagging' shall be encoded as UTF-8 then URLEncoded URL query parameters without tag name duplicates.")
}

// utf16Len is the length of s in UTF-16 units, which S3's tag limits count.
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n++
		if r > 0xFFFF {
			n++
		}
	}
	return n
}

// tagText reports whether s uses only S3's tag characters:
// [\p{L}\p{Z}\p{N}_.:/=+\-@].
func tagText(s string) bool {
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.Is(unicode.Z, r) {
			continue
		}
		if !strings.ContainsRune("_.:/=+-@", r) {
			return false
		}
	}
	return true
}

// tagPair is one tag as a request lists it.
type tagPair struct{ key, value string }

// checkTagSet validates a request's tags as S3 does and returns them as
// a map (nil when there are none).
func checkTagSet(pairs []tagPair, kind tagKind) (map[string]string, error) {
	limit := maxObjectTags
	if kind == bucketTags {
		limit = maxBucketTags
	}
	if len(pairs) > limit {
		return nil, errTooManyTags(kind)
	}
	if len(pairs) == 0 {
		return nil, nil
	}
	tags := make(map[string]string, len(pairs))
	for _, p := range pairs {
		if _, dup := tags[p.key]; dup {
			return nil, errInvalidTag("Cannot provide multiple Tags with the same key")
		}
		if n := utf16Len(p.key); n < 1 || n > maxTagKeyLen || !utf8.ValidString(p.key) || !tagText(p.key) {
			return nil, errInvalidTag("The TagKey you have provided is invalid")
		}
		if strings.HasPrefix(p.key, "aws:") {
			if kind == bucketTags {
				return nil, errInvalidTag("System tags cannot be added/updated by requester")
			}
			return nil, errInvalidTag("Your TagKey cannot be prefixed with aws:")
		}
		if utf16Len(p.value) > maxTagValueLen || !utf8.ValidString(p.value) || !tagText(p.value) {
			return nil, errInvalidTag("The TagValue you have provided is invalid")
		}
		tags[p.key] = p.value
	}
	return tags, nil
}

// parseTagging reads and validates a Tagging document (a PutObjectTagging
// or PutBucketTagging body, a form's tagging field).
func parseTagging(body []byte, kind tagKind) (map[string]string, error) {
	var doc xmlTaggingIn
	if err := xml.Unmarshal(body, &doc); err != nil || doc.TagSet == nil {
		return nil, errMalformedXML()
	}
	pairs := make([]tagPair, 0, len(doc.TagSet.Tags))
	for _, t := range doc.TagSet.Tags {
		if t.Key == nil || t.Value == nil {
			return nil, errMalformedXML()
		}
		pairs = append(pairs, tagPair{*t.Key, *t.Value})
	}
	return checkTagSet(pairs, kind)
}

// parseTaggingHeader reads x-amz-tagging: URL query parameters, each a
// key with an optional value ("k1=v1&k2"). An empty header is no tags.
func parseTaggingHeader(v string) (map[string]string, error) {
	if v == "" {
		return nil, nil
	}
	vals, err := url.ParseQuery(v)
	if err != nil {
		return nil, errBadTaggingHeader()
	}
	pairs := make([]tagPair, 0, len(vals))
	for k, vs := range vals {
		if len(vs) != 1 || !utf8.ValidString(k) || !utf8.ValidString(vs[0]) {
			return nil, errBadTaggingHeader()
		}
		pairs = append(pairs, tagPair{k, vs[0]})
	}
	// Map order is random: validate in key order so the same header
	// always meets the same error first.
	sort.Slice(pairs, func(i, j int) bool { return pairs[i].key < pairs[j].key })
	return checkTagSet(pairs, objectTags)
}

// taggingDocument is tags as a Tagging document, keys in order.
func taggingDocument(tags map[string]string, ns string) xmlTagging {
	doc := xmlTagging{NS: ns, TagSet: make([]xmlTag, 0, len(tags))}
	for k, v := range tags {
		doc.TagSet = append(doc.TagSet, xmlTag{Key: k, Value: v})
	}
	sort.Slice(doc.TagSet, func(i, j int) bool { return doc.TagSet[i].Key < doc.TagSet[j].Key })
	return doc
}

// requestTags are the tags the request writes, for the policy condition
// keys s3:RequestObjectTag/<key> and s3:RequestObjectTagKeys: a body's or
// form's (q.tags, set by their handlers before deciding access), else
// x-amz-tagging on the writes that take it. A header that does not parse
// gives none here; its handler refuses it.
func (q *request) requestTags() map[string]string {
	if q.tags != nil {
		return q.tags
	}
	v := q.r.Header.Get("X-Amz-Tagging")
	switch {
	case v == "":
		return nil
	case q.api == "PutObject", q.api == "CreateMultipartUpload",
		q.api == "CopyObject" && strings.EqualFold(q.r.Header.Get("X-Amz-Tagging-Directive"), "REPLACE"):
		tags, _ := parseTaggingHeader(v)
		return tags
	}
	return nil
}

// tagConditionKeys adds the tag condition keys to m: the request's tags
// (RequestObjectTag/<key>, RequestObjectTagKeys) and an existing object's
// (ExistingObjectTag/<key>). Condition key names are not case-sensitive,
// so the tag key in the name is lower-cased as the policy's is.
func tagConditionKeys(m map[string][]string, request, existing map[string]string) {
	if len(request) > 0 {
		keys := make([]string, 0, len(request))
		for k, v := range request {
			keys = append(keys, k)
			name := "s3:requestobjecttag/" + strings.ToLower(k)
			m[name] = append(m[name], v)
		}
		sort.Strings(keys)
		m["s3:requestobjecttagkeys"] = keys
	}
	for k, v := range existing {
		name := "s3:existingobjecttag/" + strings.ToLower(k)
		m[name] = append(m[name], v)
	}
}

// checkTagWrite applies, to a write that sets tags, AWS's rule that it
// needs s3:PutObjectTagging on the object besides s3:PutObject: an
// identity must be allowed it, and a bucket policy's Deny of it refuses
// anyone. ACLs know nothing of tags, so where no policy speaks the write's
// own permission is enough.
func (q *request) checkTagWrite(bi engine.BucketInfo, tags map[string]string) error {
	if len(tags) == 0 || q.secondaryAllows(bi, access.PutObjectTagging) {
		return nil
	}
	return errAccessDenied()
}

// setTaggingCount adds x-amz-tagging-count to a GET or HEAD answer for an
// object with tags, when the caller may read them (as S3 does).
func (q *request) setTaggingCount(bi engine.BucketInfo, oi engine.ObjectInfo) {
	if len(oi.Tags) == 0 || !q.allows(access.ObjectTagging, q.objectResource(bi, oi)) {
		return
	}
	q.w.Header().Set("X-Amz-Tagging-Count", strconv.Itoa(len(oi.Tags)))
}

func handlePutObjectTagging(q *request) error {
	bi, err := q.s.cfg.Store.BucketInfo(q.ctx, q.bucket)
	if err != nil {
		return err
	}
	version, err := q.requestVersion()
	if err != nil {
		return err
	}
	// The body is read first so that policies can test the tags it
	// sets; what is wrong with it is told only to a caller who may tag.
	body, bodyErr := q.readConfigBody(true)
	var tags map[string]string
	if bodyErr == nil {
		tags, bodyErr = parseTagging(body, objectTags)
		q.tags = tags
		if q.tags == nil {
			q.tags = map[string]string{}
		}
	}
	if _, err := q.objectAccess(bi, q.key, version, access.PutObjectTagging); err != nil {
		return err
	}
	if bodyErr != nil {
		return bodyErr
	}
	ctx, enqueued := q.updateCommitHook(bi, notify.ObjectCreatedPutTagging)
	oi, err := q.s.cfg.Store.SetObjectTags(ctx, q.bucket, q.key, version, tags)
	if err != nil {
		return versionError(err, version)
	}
	q.setVersionID(bi, oi.VersionID)
	if !*enqueued {
		q.notify(bi, notify.ObjectCreatedPutTagging, q.key, oi.Size, oi.ETag, oi.VersionID)
	}
	q.writeEmpty(http.StatusOK)
	return nil
}

func handleGetObjectTagging(q *request) error {
	bi, err := q.s.cfg.Store.BucketInfo(q.ctx, q.bucket)
	if err != nil {
		return err
	}
	version, err := q.requestVersion()
	if err != nil {
		return err
	}
	oi, err := q.objectAccess(bi, q.key, version, access.ObjectTagging)
	if err != nil {
		return err
	}
	q.setVersionID(bi, oi.VersionID)
	q.writeXML(taggingDocument(oi.Tags, s3NS))
	return nil
}

func handleDeleteObjectTagging(q *request) error {
	bi, err := q.s.cfg.Store.BucketInfo(q.ctx, q.bucket)
	if err != nil {
		return err
	}
	version, err := q.requestVersion()
	if err != nil {
		return err
	}
	oi, err := q.objectAccess(bi, q.key, version, access.PutObjectTagging)
	if err != nil {
		return err
	}
	ctx, enqueued := q.updateCommitHook(bi, notify.ObjectCreatedDeleteTagging)
	if len(oi.Tags) > 0 { // an untagged version is left unwritten
		if _, err := q.s.cfg.Store.SetObjectTags(ctx, q.bucket, q.key, version, nil); err != nil {
			return versionError(err, version)
		}
	}
	q.setVersionID(bi, oi.VersionID)
	if !*enqueued {
		q.notify(bi, notify.ObjectCreatedDeleteTagging, q.key, oi.Size, oi.ETag, oi.VersionID)
	}
	q.writeEmpty(http.StatusNoContent)
	return nil
}

// errNoSuchTagSet answers GetBucketTagging on a bucket without tags.
func errNoSuchTagSet() *Error {
	return errorf("NoSuchTagSet", http.StatusNotFound, "The TagSet does not exist")
}

func handlePutBucketTagging(q *request) error {
	if _, err := q.bucketAccess(q.bucket, access.BucketAdmin); err != nil {
		return err
	}
	body, err := q.readConfigBody(true)
	if err != nil {
		return err
	}
	tags, err := parseTagging(body, bucketTags)
	if err != nil {
		return err
	}
	var doc any // an empty tag set leaves the bucket without one
	if len(tags) > 0 {
		d := taggingDocument(tags, "")
		doc = &d
	}
	if err := q.storeConfig(engine.BucketConfigTagging, doc); err != nil {
		return err
	}
	q.writeEmpty(http.StatusNoContent)
	return nil
}

// storedBucketTags is bi's tag set, nil when it has none.
func storedBucketTags(bi engine.BucketInfo) map[string]string {
	if bi.Tagging == "" {
		return nil
	}
	var doc xmlTagging
	if xml.Unmarshal([]byte(bi.Tagging), &doc) != nil {
		return nil
	}
	tags := make(map[string]string, len(doc.TagSet))
	for _, t := range doc.TagSet {
		tags[t.Key] = t.Value
	}
	return tags
}

func handleGetBucketTagging(q *request) error {
	bi, err := q.bucketAccess(q.bucket, access.BucketAdmin)
	if err != nil {
		return err
	}
	tags := storedBucketTags(bi)
	if len(tags) == 0 {
		return errNoSuchTagSet()
	}
	q.writeXML(taggingDocument(tags, s3NS))
	return nil
}

func handleDeleteBucketTagging(q *request) error {
	if _, err := q.bucketAccess(q.bucket, access.BucketAdmin); err != nil {
		return err
	}
	if err := q.storeConfig(engine.BucketConfigTagging, nil); err != nil {
		return err
	}
	q.writeEmpty(http.StatusNoContent)
	return nil
}
