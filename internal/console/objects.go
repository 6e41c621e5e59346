package console

import (
	"crypto/md5"
	"encoding/base64"
	"encoding/xml"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/shardstore/shardstore/internal/auth"
	"github.com/shardstore/shardstore/internal/engine"
)

// bucketRow is one bucket of the buckets page.
type bucketRow struct {
	Name    string    `json:"name"`
	Created time.Time `json:"created"`
	// Objects and Bytes come from the scanner's last cycle; nil before
	// it has counted the bucket.
	Objects *int64 `json:"objects"`
	Bytes   *int64 `json:"bytes"`
}

type bucketsReply struct {
	Buckets []bucketRow `json:"buckets"`
	// UsageAt is when the scanner last counted (zero: not yet).
	UsageAt time.Time `json:"usageAt"`
}

func (c *Console) buckets(w http.ResponseWriter, r *http.Request, s *session) {
	switch r.Method {
	case http.MethodPost:
		var req struct {
			Name       string `json:"name"`
			ObjectLock bool   `json:"objectLock"`
			Versioning bool   `json:"versioning"`
		}
		if !readJSON(w, r, &req) {
			return
		}
		hdr := http.Header{}
		if req.ObjectLock {
			hdr.Set("X-Amz-Bucket-Object-Lock-Enabled", "true")
		}
		if _, err := c.call(r, s, s3Request{method: http.MethodPut, bucket: req.Name, header: hdr}); err != nil {
			writeS3Error(w, err)
			return
		}
		if req.Versioning && !req.ObjectLock {
			body := `<VersioningConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Status>Enabled</Status></VersioningConfiguration>`
			if _, err := c.call(r, s, s3Request{method: http.MethodPut, bucket: req.Name, query: url.Values{"versioning": {""}},
				body: strings.NewReader(body), size: int64(len(body))}); err != nil {
				writeS3Error(w, fmt.Errorf("bucket created, but versioning was not enabled: %w", err))
				return
			}
		}
		writeJSON(w, http.StatusOK, map[string]string{"name": req.Name})
	case http.MethodDelete:
		b := r.URL.Query().Get("bucket")
		if _, err := c.call(r, s, s3Request{method: http.MethodDelete, bucket: b}); err != nil {
			writeS3Error(w, err)
			return
		}
		writeJSON(w, http.StatusOK, map[string]string{"deleted": b})
	default:
		var x struct {
			Buckets []struct {
				Name         string    `xml:"Name"`
				CreationDate time.Time `xml:"CreationDate"`
			} `xml:"Buckets>Bucket"`
		}
		if _, err := c.callXML(r, s, s3Request{method: http.MethodGet}, &x); err != nil {
			writeS3Error(w, err)
			return
		}
		var usage map[string]engine.BucketUsage
		rep := bucketsReply{Buckets: []bucketRow{}}
		if c.cfg.Usage != nil {
			usage, rep.UsageAt = c.cfg.Usage()
		}
		for _, b := range x.Buckets {
			row := bucketRow{Name: b.Name, Created: b.CreationDate}
			if u, ok := usage[b.Name]; ok {
				row.Objects, row.Bytes = &u.Objects, &u.Bytes
			}
			rep.Buckets = append(rep.Buckets, row)
		}
		writeJSON(w, http.StatusOK, rep)
	}
}

// objectRow is one object of a listing.
type objectRow struct {
	Key          string    `json:"key"`
	Size         int64     `json:"size"`
	ETag         string    `json:"etag"`
	LastModified time.Time `json:"lastModified"`
	StorageClass string    `json:"storageClass,omitempty"`
}

type listReply struct {
	Prefixes  []string    `json:"prefixes"`
	Objects   []objectRow `json:"objects"`
	Next      string      `json:"next,omitempty"`
	Truncated bool        `json:"truncated"`
}

// listObjects answers one page of a folder view: ListObjectsV2 with
// delimiter "/" (or none with flat=1) under prefix.
func (c *Console) listObjects(w http.ResponseWriter, r *http.Request, s *session) {
	q := r.URL.Query()
	max := 200
	if v, err := strconv.Atoi(q.Get("max")); err == nil && v > 0 && v <= 1000 {
		max = v
	}
	rep, err := c.listPage(r, s, q.Get("bucket"), q.Get("prefix"), q.Get("token"), max, q.Get("flat") != "1")
	if err != nil {
		writeS3Error(w, err)
		return
	}
	writeJSON(w, http.StatusOK, rep)
}

// listPage lists one ListObjectsV2 page of bucket under prefix, from the
// continuation token on; with folders, "/" collapses common prefixes.
func (c *Console) listPage(r *http.Request, s *session, bucket, prefix, token string, max int, folders bool) (listReply, error) {
	sq := url.Values{"list-type": {"2"}, "max-keys": {strconv.Itoa(max)}, "prefix": {prefix}, "encoding-type": {"url"}}
	if folders {
		sq.Set("delimiter", "/")
	}
	if token != "" {
		sq.Set("continuation-token", token)
	}
	var x struct {
		IsTruncated bool   `xml:"IsTruncated"`
		Next        string `xml:"NextContinuationToken"`
		Contents    []struct {
			Key          string    `xml:"Key"`
			Size         int64     `xml:"Size"`
			ETag         string    `xml:"ETag"`
			LastModified time.Time `xml:"LastModified"`
			StorageClass string    `xml:"StorageClass"`
		} `xml:"Contents"`
		Prefixes []string `xml:"CommonPrefixes>Prefix"`
	}
	if _, err := c.callXML(r, s, s3Request{method: http.MethodGet, bucket: bucket, query: sq}, &x); err != nil {
		return listReply{}, err
	}
	rep := listReply{Prefixes: []string{}, Objects: []objectRow{}, Truncated: x.IsTruncated, Next: x.Next}
	for _, p := range x.Prefixes {
		rep.Prefixes = append(rep.Prefixes, unescapeKey(p))
	}
	for _, o := range x.Contents {
		rep.Objects = append(rep.Objects, objectRow{Key: unescapeKey(o.Key), Size: o.Size, ETag: o.ETag,
			LastModified: o.LastModified, StorageClass: o.StorageClass})
	}
	return rep, nil
}

// unescapeKey undoes encoding-type=url (asked for so that keys with
// characters XML 1.0 cannot carry survive the listing).
func unescapeKey(k string) string {
	if u, err := url.QueryUnescape(k); err == nil {
		return u
	}
	return k
}

// objectDetail is the object panel: HEAD, tags and versions.
type objectDetail struct {
	Key          string `json:"key"`
	Size         int64  `json:"size"`
	ETag         string `json:"etag"`
	ContentType  string `json:"contentType"`
	LastModified string `json:"lastModified"`
	VersionID    string `json:"versionId,omitempty"`
	StorageClass string `json:"storageClass,omitempty"`
	// Encryption says how the object is encrypted at rest ("" none).
	Encryption string            `json:"encryption,omitempty"`
	Metadata   map[string]string `json:"metadata"`
	Checksums  map[string]string `json:"checksums"`
	Headers    map[string]string `json:"headers"`
	Tags       []tag             `json:"tags"`
	Versions   []versionRow      `json:"versions"`
	// Notes say what could not be read (for instance tags the identity
	// may not read) without failing the whole panel.
	Notes []string `json:"notes,omitempty"`
}

type tag struct {
	Key   string `json:"key" xml:"Key"`
	Value string `json:"value" xml:"Value"`
}

type versionRow struct {
	VersionID    string    `json:"versionId"`
	IsLatest     bool      `json:"isLatest"`
	DeleteMarker bool      `json:"deleteMarker"`
	Size         int64     `json:"size"`
	ETag         string    `json:"etag,omitempty"`
	LastModified time.Time `json:"lastModified"`
}

func (c *Console) objectDetails(w http.ResponseWriter, r *http.Request, s *session) {
	q := r.URL.Query()
	bucket, key := q.Get("bucket"), q.Get("key")
	if key == "" {
		writeError(w, http.StatusBadRequest, "BadRequest", "name an object")
		return
	}
	hq := url.Values{}
	if v := q.Get("versionId"); v != "" {
		hq.Set("versionId", v)
	}
	rec, err := c.call(r, s, s3Request{method: http.MethodHead, bucket: bucket, key: key, query: hq,
		header: http.Header{"X-Amz-Checksum-Mode": {"ENABLED"}}})
	customerKey := false
	if err != nil {
		// An object encrypted with a customer's key (SSE-C) answers a
		// HEAD only with that key, which the console never has: show
		// what its listing says instead of failing the panel.
		// A HEAD answer has no body to say why, so a 400 is asked again
		// as a one-byte GET, whose error document does.
		var se *s3Error
		if errors.As(err, &se) && se.Status == http.StatusBadRequest {
			_, gerr := c.call(r, s, s3Request{method: http.MethodGet, bucket: bucket, key: key, query: hq,
				header: http.Header{"Range": {"bytes=0-0"}}})
			if !errors.As(gerr, &se) {
				se = nil
			}
		}
		if se == nil || se.Code != "InvalidRequest" || !strings.Contains(se.Message, "Server Side Encryption") {
			writeS3Error(w, err)
			return
		}
		customerKey = true
		rec = &recorder{header: http.Header{}}
	}
	h := rec.header
	size, _ := strconv.ParseInt(h.Get("Content-Length"), 10, 64)
	d := objectDetail{Key: key, Size: size, ETag: h.Get("ETag"), ContentType: h.Get("Content-Type"),
		LastModified: h.Get("Last-Modified"), VersionID: h.Get("X-Amz-Version-Id"), StorageClass: h.Get("X-Amz-Storage-Class"),
		Metadata: map[string]string{}, Checksums: map[string]string{}, Headers: map[string]string{}, Tags: []tag{}, Versions: []versionRow{},
		Encryption: encryptionOf(h)}
	if customerKey {
		d.Encryption = "SSE-C (a customer-provided key)"
		d.Notes = append(d.Notes, "This object is encrypted with a customer-provided key (SSE-C): its metadata and contents can be read only by a client that sends that key.")
	}
	for k, vs := range h {
		// The S3 layer writes metadata names as sent (lower case), not
		// in Go's canonical form, so read the map, not h.Get.
		v := strings.Join(vs, ",")
		lk := strings.ToLower(k)
		switch {
		case strings.HasPrefix(lk, "x-amz-meta-"):
			d.Metadata[strings.TrimPrefix(lk, "x-amz-meta-")] = v
		case strings.HasPrefix(lk, "x-amz-checksum-") && lk != "x-amz-checksum-type":
			d.Checksums[strings.ToUpper(strings.TrimPrefix(lk, "x-amz-checksum-"))] = v
		case lk == "cache-control" || lk == "content-disposition" || lk == "content-encoding" || lk == "content-language" ||
			lk == "expires" || lk == "x-amz-object-lock-mode" || lk == "x-amz-object-lock-retain-until-date" ||
			lk == "x-amz-object-lock-legal-hold" || lk == "x-amz-tagging-count" || lk == "x-amz-website-redirect-location":
			d.Headers[k] = v
		}
	}
	var tx struct {
		Tags []tag `xml:"TagSet>Tag"`
	}
	if _, err := c.callXML(r, s, s3Request{method: http.MethodGet, bucket: bucket, key: key, query: withVersion(url.Values{"tagging": {""}}, hq)}, &tx); err != nil {
		d.Notes = append(d.Notes, "tags: "+err.Error())
	} else if tx.Tags != nil {
		d.Tags = tx.Tags
	}
	var vx struct {
		Versions []struct {
			Key          string    `xml:"Key"`
			VersionID    string    `xml:"VersionId"`
			IsLatest     bool      `xml:"IsLatest"`
			Size         int64     `xml:"Size"`
			ETag         string    `xml:"ETag"`
			LastModified time.Time `xml:"LastModified"`
			XMLName      xml.Name
		} `xml:",any"`
	}
	vq := url.Values{"versions": {""}, "prefix": {key}, "max-keys": {"100"}}
	if _, err := c.callXML(r, s, s3Request{method: http.MethodGet, bucket: bucket, query: vq}, &vx); err != nil {
		d.Notes = append(d.Notes, "versions: "+err.Error())
	} else {
		for _, v := range vx.Versions {
			if v.Key != key || (v.XMLName.Local != "Version" && v.XMLName.Local != "DeleteMarker") {
				continue
			}
			d.Versions = append(d.Versions, versionRow{VersionID: v.VersionID, IsLatest: v.IsLatest,
				DeleteMarker: v.XMLName.Local == "DeleteMarker", Size: v.Size, ETag: v.ETag, LastModified: v.LastModified})
		}
		sort.SliceStable(d.Versions, func(i, j int) bool { return d.Versions[i].LastModified.After(d.Versions[j].LastModified) })
	}
	if customerKey {
		for _, v := range d.Versions {
			if (hq.Get("versionId") == "" && v.IsLatest) || v.VersionID == hq.Get("versionId") {
				d.Size, d.ETag, d.LastModified, d.VersionID = v.Size, v.ETag, v.LastModified.UTC().Format(http.TimeFormat), hq.Get("versionId")
			}
		}
	}
	writeJSON(w, http.StatusOK, d)
}

// encryptionOf describes the encryption a HEAD answer reports.
func encryptionOf(h http.Header) string {
	switch h.Get("X-Amz-Server-Side-Encryption") {
	case "AES256":
		return "SSE-S3 (AES-256, keys sealed by the server's KMS)"
	case "aws:kms":
		return "SSE-KMS (key " + h.Get("X-Amz-Server-Side-Encryption-Aws-Kms-Key-Id") + ")"
	}
	if h.Get("X-Amz-Server-Side-Encryption-Customer-Algorithm") != "" {
		return "SSE-C (a customer-provided key)"
	}
	return ""
}

func withVersion(q, from url.Values) url.Values {
	if v := from.Get("versionId"); v != "" {
		q.Set("versionId", v)
	}
	return q
}

// download streams an object to the browser as an attachment. The
// object's own type is never used: an HTML object served from the
// console's origin would run as the console, so the answer is an opaque
// download with a sandboxing policy whatever the object is.
func (c *Console) download(w http.ResponseWriter, r *http.Request, s *session) {
	q := r.URL.Query()
	bucket, key := q.Get("bucket"), q.Get("key")
	sq := url.Values{}
	if v := q.Get("versionId"); v != "" {
		sq.Set("versionId", v)
	}
	dw := &downloadWriter{w: w, key: key}
	hdr := http.Header{}
	if rg := r.Header.Get("Range"); rg != "" {
		hdr.Set("Range", rg)
	}
	c.cfg.S3.ServeHTTP(dw, c.newS3Request(r.Context(), r, s, s3Request{method: http.MethodGet, bucket: bucket, key: key, query: sq, header: hdr}))
	if dw.status >= 300 && !dw.wrote {
		writeS3Error(w, decodeS3Error(dw.status, dw.errBody))
	}
}

// downloadWriter passes a successful S3 GET through with safe headers
// and keeps an error answer for writeS3Error.
type downloadWriter struct {
	w       http.ResponseWriter
	key     string
	hdr     http.Header
	status  int
	wrote   bool
	errBody []byte
}

func (d *downloadWriter) Header() http.Header {
	if d.hdr == nil {
		d.hdr = http.Header{}
	}
	return d.hdr
}

func (d *downloadWriter) WriteHeader(code int) {
	if d.status != 0 {
		return
	}
	d.status = code
	if code >= 300 {
		return
	}
	h := d.w.Header()
	for _, k := range []string{"Content-Length", "Content-Range", "ETag", "Last-Modified", "Accept-Ranges"} {
		if v := d.hdr.Get(k); v != "" {
			h.Set(k, v)
		}
	}
	h.Set("Content-Type", "application/octet-stream")
	h.Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": baseName(d.key)}))
	h.Set("Content-Security-Policy", "sandbox; default-src 'none'")
	h.Set("Cache-Control", "no-store")
	d.wrote = true
	d.w.WriteHeader(code)
}

func (d *downloadWriter) Write(p []byte) (int, error) {
	if d.status == 0 {
		d.WriteHeader(http.StatusOK)
	}
	if d.status >= 300 {
		if len(d.errBody) < 64<<10 {
			d.errBody = append(d.errBody, p...)
		}
		return len(p), nil
	}
	return d.w.Write(p)
}

func (d *downloadWriter) Flush() {
	if f, ok := d.w.(http.Flusher); ok && d.wrote {
		f.Flush()
	}
}

// baseName is the last segment of a key, for a download's file name.
func baseName(key string) string {
	k := strings.TrimRight(key, "/")
	if i := strings.LastIndexByte(k, '/'); i >= 0 {
		k = k[i+1:]
	}
	if k == "" || k == "." || k == ".." {
		return "download"
	}
	return k
}

// uploadHeaders are the headers of the browser's upload passed on to S3.
func uploadHeaders(r *http.Request) http.Header {
	h := http.Header{}
	if ct := r.Header.Get("Content-Type"); ct != "" {
		h.Set("Content-Type", ct)
	}
	return h
}

// upload is a single PUT of the request body (the page uses it for
// files up to its multipart threshold).
func (c *Console) upload(w http.ResponseWriter, r *http.Request, s *session) {
	q := r.URL.Query()
	if r.ContentLength < 0 {
		writeError(w, http.StatusLengthRequired, "MissingContentLength", "send the file with a Content-Length")
		return
	}
	rec, err := c.call(r, s, s3Request{method: http.MethodPut, bucket: q.Get("bucket"), key: q.Get("key"),
		header: uploadHeaders(r), body: r.Body, size: r.ContentLength})
	if err != nil {
		writeS3Error(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"etag": rec.header.Get("ETag"), "versionId": rec.header.Get("X-Amz-Version-Id")})
}

// multipart starts (POST) or aborts (DELETE) a multipart upload.
func (c *Console) multipart(w http.ResponseWriter, r *http.Request, s *session) {
	q := r.URL.Query()
	bucket, key := q.Get("bucket"), q.Get("key")
	if r.Method == http.MethodDelete {
		if _, err := c.call(r, s, s3Request{method: http.MethodDelete, bucket: bucket, key: key, query: url.Values{"uploadId": {q.Get("uploadId")}}}); err != nil {
			writeS3Error(w, err)
			return
		}
		writeJSON(w, http.StatusOK, map[string]bool{"aborted": true})
		return
	}
	var x struct {
		UploadID string `xml:"UploadId"`
	}
	if _, err := c.callXML(r, s, s3Request{method: http.MethodPost, bucket: bucket, key: key, query: url.Values{"uploads": {""}},
		header: uploadHeaders(r)}, &x); err != nil {
		writeS3Error(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"uploadId": x.UploadID})
}

func (c *Console) uploadPart(w http.ResponseWriter, r *http.Request, s *session) {
	q := r.URL.Query()
	if r.ContentLength < 0 {
		writeError(w, http.StatusLengthRequired, "MissingContentLength", "send the part with a Content-Length")
		return
	}
	rec, err := c.call(r, s, s3Request{method: http.MethodPut, bucket: q.Get("bucket"), key: q.Get("key"),
		query: url.Values{"uploadId": {q.Get("uploadId")}, "partNumber": {q.Get("partNumber")}}, body: r.Body, size: r.ContentLength})
	if err != nil {
		writeS3Error(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"etag": rec.header.Get("ETag")})
}

type partRow struct {
	PartNumber int    `json:"partNumber" xml:"PartNumber"`
	ETag       string `json:"etag" xml:"ETag"`
	Size       int64  `json:"size" xml:"Size"`
}

// listParts lists the parts an upload already holds, so the page can
// resume it by sending only the missing ones.
func (c *Console) listParts(w http.ResponseWriter, r *http.Request, s *session) {
	q := r.URL.Query()
	parts := []partRow{}
	marker := ""
	for {
		sq := url.Values{"uploadId": {q.Get("uploadId")}, "max-parts": {"1000"}}
		if marker != "" {
			sq.Set("part-number-marker", marker)
		}
		var x struct {
			Parts       []partRow `xml:"Part"`
			IsTruncated bool      `xml:"IsTruncated"`
			Next        string    `xml:"NextPartNumberMarker"`
		}
		if _, err := c.callXML(r, s, s3Request{method: http.MethodGet, bucket: q.Get("bucket"), key: q.Get("key"), query: sq}, &x); err != nil {
			writeS3Error(w, err)
			return
		}
		parts = append(parts, x.Parts...)
		if !x.IsTruncated || x.Next == "" || x.Next == marker {
			break
		}
		marker = x.Next
	}
	writeJSON(w, http.StatusOK, map[string][]partRow{"parts": parts})
}

func (c *Console) completeMultipart(w http.ResponseWriter, r *http.Request, s *session) {
	q := r.URL.Query()
	var req struct {
		Parts []partRow `json:"parts"`
	}
	if !readJSON(w, r, &req) {
		return
	}
	type xmlPart struct {
		PartNumber int    `xml:"PartNumber"`
		ETag       string `xml:"ETag"`
	}
	body := struct {
		XMLName xml.Name  `xml:"CompleteMultipartUpload"`
		Parts   []xmlPart `xml:"Part"`
	}{}
	for _, p := range req.Parts {
		body.Parts = append(body.Parts, xmlPart{p.PartNumber, p.ETag})
	}
	out, _ := xml.Marshal(body)
	var x struct {
		ETag string `xml:"ETag"`
	}
	rec, err := c.callXML(r, s, s3Request{method: http.MethodPost, bucket: q.Get("bucket"), key: q.Get("key"),
		query: url.Values{"uploadId": {q.Get("uploadId")}}, body: strings.NewReader(string(out)), size: int64(len(out))}, &x)
	if err != nil {
		writeS3Error(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"etag": x.ETag, "versionId": rec.header.Get("X-Amz-Version-Id")})
}

// deleteResult reports a many-object delete key by key.
type deleteResult struct {
	Deleted []string      `json:"deleted"`
	Errors  []deleteError `json:"errors"`
}

type deleteError struct {
	Key     string `json:"key"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

// deleteObjects deletes the listed keys, and with a prefix everything
// under it (a folder), in DeleteObjects batches of 1000.
func (c *Console) deleteObjects(w http.ResponseWriter, r *http.Request, s *session) {
	var req struct {
		Bucket string   `json:"bucket"`
		Keys   []string `json:"keys"`
		Prefix string   `json:"prefix"`
	}
	if !readJSON(w, r, &req) {
		return
	}
	res := deleteResult{Deleted: []string{}, Errors: []deleteError{}}
	keys := req.Keys
	for token, more := "", req.Prefix != ""; more; {
		page, err := c.listPage(r, s, req.Bucket, req.Prefix, token, 1000, false)
		if err != nil {
			writeS3Error(w, err)
			return
		}
		for _, o := range page.Objects {
			keys = append(keys, o.Key)
		}
		token, more = page.Next, page.Truncated && page.Next != ""
	}
	for len(keys) > 0 {
		n := min(len(keys), 1000)
		batch := keys[:n]
		keys = keys[n:]
		type obj struct {
			Key string `xml:"Key"`
		}
		body := struct {
			XMLName xml.Name `xml:"Delete"`
			Objects []obj    `xml:"Object"`
		}{}
		for _, k := range batch {
			body.Objects = append(body.Objects, obj{k})
		}
		out, _ := xml.Marshal(body)
		var x struct {
			Deleted []struct {
				Key string `xml:"Key"`
			} `xml:"Deleted"`
			Errors []struct {
				Key     string `xml:"Key"`
				Code    string `xml:"Code"`
				Message string `xml:"Message"`
			} `xml:"Error"`
		}
		if _, err := c.callXML(r, s, s3Request{method: http.MethodPost, bucket: req.Bucket, query: url.Values{"delete": {""}},
			header: http.Header{"Content-Md5": {contentMD5(out)}}, body: strings.NewReader(string(out)), size: int64(len(out))}, &x); err != nil {
			writeS3Error(w, err)
			return
		}
		for _, d := range x.Deleted {
			res.Deleted = append(res.Deleted, d.Key)
		}
		for _, e := range x.Errors {
			res.Errors = append(res.Errors, deleteError{e.Key, e.Code, e.Message})
		}
	}
	writeJSON(w, http.StatusOK, res)
}

// Share link limits: S3 refuses presigned URLs valid for more than 7 days.
const (
	maxShare     = 7 * 24 * time.Hour
	defaultShare = 24 * time.Hour
)

// share presigns a GET of the object on the S3 endpoint with the
// session's credentials, valid for the chosen time (at most 7 days):
// the link works for anyone who has it, as long as the identity may
// still read the object.
func (c *Console) share(w http.ResponseWriter, r *http.Request, s *session) {
	var req struct {
		Bucket    string `json:"bucket"`
		Key       string `json:"key"`
		VersionID string `json:"versionId"`
		Seconds   int64  `json:"expiresSeconds"`
	}
	if !readJSON(w, r, &req) {
		return
	}
	if c.cfg.ShareEndpoint == "" {
		writeError(w, http.StatusNotImplemented, "NoShareEndpoint", "the server has no S3 endpoint to share links on")
		return
	}
	ttl := time.Duration(req.Seconds) * time.Second
	if req.Seconds == 0 {
		ttl = defaultShare
	}
	if ttl < time.Second || ttl > maxShare {
		writeError(w, http.StatusBadRequest, "BadExpiry", "a share link lasts from one second to 7 days")
		return
	}
	// The object must exist and be readable now; otherwise the link would
	// only ever answer an error.
	hq := url.Values{}
	if req.VersionID != "" {
		hq.Set("versionId", req.VersionID)
	}
	if _, err := c.call(r, s, s3Request{method: http.MethodHead, bucket: req.Bucket, key: req.Key, query: hq}); err != nil {
		writeS3Error(w, err)
		return
	}
	base, err := url.Parse(c.cfg.ShareEndpoint)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "BadShareEndpoint", err.Error())
		return
	}
	if s.token != "" {
		hq.Set("X-Amz-Security-Token", s.token) // temporary credentials: the link carries the token
	}
	u := &url.URL{Scheme: base.Scheme, Host: base.Host, Path: strings.TrimRight(base.Path, "/") + "/" + req.Bucket + "/" + req.Key,
		RawQuery: encodeQuery(hq)}
	pr := &http.Request{Method: http.MethodGet, URL: u, Host: base.Host, Header: http.Header{}}
	now := c.now()
	link := auth.PresignURL(pr, s.identity(), c.region(), now, ttl)
	writeJSON(w, http.StatusOK, map[string]any{"url": link, "expires": now.Add(ttl).UTC()})
}

// contentMD5 is the Content-MD5 header value of body (DeleteObjects
// requires one).
func contentMD5(body []byte) string {
	sum := md5.Sum(body)
	return base64.StdEncoding.EncodeToString(sum[:])
}
