package s3api

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"

	"github.com/shardstore/shardstore/internal/access"
	"github.com/shardstore/shardstore/internal/auth"
	"github.com/shardstore/shardstore/internal/engine"
	"github.com/shardstore/shardstore/internal/notify"
)

// Browser form uploads (S3's POST object): a multipart/form-data body
// whose fields come first (key, policy, signature, metadata ...) and
// whose "file" field carries the object. Fields after the file are
// ignored, as S3 does, so the upload is authenticated and checked
// against its policy before a byte of the file is read, and the file
// is streamed to the engine like a PUT of unknown length.

// maxPostFieldsBytes bounds the fields that precede the file.
const maxPostFieldsBytes = 1 << 20

// PostAuthenticator is implemented by an Authenticator that can verify
// browser form uploads; without it POST object answers NotImplemented.
type PostAuthenticator interface {
	AuthenticatePost(form auth.PostForm) (*PostAuthResult, error)
}

// PostAuthResult is a verified form: who signed it, and the size range
// its policy allows for the file (MaxLength -1: no limit but S3's).
type PostAuthResult struct {
	Caller               Caller
	MinLength, MaxLength int64
}

// AuthenticatePost verifies a form's signature and policy.
func (a SigV4) AuthenticatePost(form auth.PostForm) (*PostAuthResult, error) {
	up, err := a.Verifier.VerifyPost(form)
	if err != nil {
		return nil, authError(err)
	}
	return &PostAuthResult{
		Caller:    callerOf(up.Identity, up.Anonymous),
		MinLength: up.MinLength, MaxLength: up.MaxLength,
	}, nil
}

func errMalformedPOST() *Error {
	return errorf("MalformedPOSTRequest", http.StatusBadRequest,
		"The body of your POST request is not well-formed multipart/form-data.")
}

// postAuthFields are form fields that authenticate the form and are
// never stored as object headers.
var postAuthFields = map[string]bool{
	"x-amz-algorithm": true, "x-amz-credential": true, "x-amz-date": true,
	"x-amz-signature": true, "x-amz-security-token": true,
}

// postHeaderFields are the standard headers a form may set on the object.
var postHeaderFields = map[string]bool{
	"content-type": true, "cache-control": true, "content-disposition": true,
	"content-encoding": true, "content-language": true, "expires": true,
	"content-md5": true,
}

// postForm is a form read up to its file.
type postForm struct {
	fields   auth.PostForm
	file     *multipart.Part
	filename string
}

// readPostForm reads the fields that precede the file part.
func readPostForm(q *request) (*postForm, error) {
	mediaType, params, err := mime.ParseMediaType(q.r.Header.Get("Content-Type"))
	if err != nil || !strings.EqualFold(mediaType, "multipart/form-data") || params["boundary"] == "" {
		return nil, errorf("PreconditionFailed", http.StatusPreconditionFailed,
			"At least one of the pre-conditions you specified did not hold: Bucket POST must be of the enclosure-type multipart/form-data")
	}
	mr := multipart.NewReader(q.body, params["boundary"])
	f := &postForm{fields: auth.PostForm{}}
	budget := int64(maxPostFieldsBytes)
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			return nil, errInvalidArgument("POST requires exactly one file upload per request.")
		}
		if err != nil {
			return nil, postBodyError(err)
		}
		name := strings.ToLower(part.FormName())
		if name == "" {
			return nil, errMalformedPOST()
		}
		if name == "file" {
			f.file, f.filename = part, part.FileName()
			return f, nil
		}
		value, err := io.ReadAll(io.LimitReader(part, budget+1))
		if err != nil {
			return nil, postBodyError(err)
		}
		budget -= int64(len(value))
		if budget < 0 {
			return nil, errorf("MaxPostPreDataLengthExceeded", http.StatusBadRequest,
				"Your POST request fields preceding the upload file were too large.")
		}
		if _, dup := f.fields[name]; dup {
			return nil, errInvalidArgument("The form field %q appears more than once.", name)
		}
		f.fields[name] = string(value)
	}
}

// postBodyError maps a failure to read the form: a body cut short is
// IncompleteBody, anything else a malformed form. Errors the verifier
// produced (a bad chunk signature) pass through.
func postBodyError(err error) error {
	var ae *Error
	switch {
	case errors.As(err, &ae):
		return err
	case errors.Is(err, io.ErrUnexpectedEOF):
		return toAPIError(err)
	}
	e := errMalformedPOST()
	e.Err = err
	return e
}

// postFile streams the file part, holding it to the policy's
// content-length-range and to S3's largest single upload.
type postFile struct {
	r        io.Reader
	n        int64
	min, max int64
}

func (p *postFile) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	p.n += int64(n)
	if p.n > p.max {
		return 0, errorf("EntityTooLarge", http.StatusBadRequest, "Your proposed upload exceeds the maximum allowed size")
	}
	switch {
	case errors.Is(err, io.EOF):
		if p.n < p.min {
			return n, errorf("EntityTooSmall", http.StatusBadRequest, "Your proposed upload is smaller than the minimum allowed size")
		}
		return n, io.EOF
	case err != nil:
		return n, postBodyError(err)
	}
	return n, nil
}

// postHeaders turns the form's object fields into the request headers
// the PUT path reads (metadata, ACL, storage class, checksums).
func postHeaders(f *postForm) http.Header {
	h := http.Header{}
	for name, v := range f.fields {
		switch {
		case name == "acl":
			h.Set("X-Amz-Acl", v)
		case name == "x-amz-tagging":
			// Tags come in the tagging field, a Tagging document
			// (handlePostObject); S3 knows no such form field.
		case name == "x-amz-checksum-algorithm":
			// Names the algorithm; a value, if any, comes in its own field.
			h.Set("X-Amz-Sdk-Checksum-Algorithm", v)
		case postHeaderFields[name]:
			h.Set(name, v)
		case strings.HasPrefix(name, "x-amz-") && !postAuthFields[name]:
			h.Set(name, v)
		}
	}
	if h.Get("Content-Type") == "" {
		// A browser labels the file with its type; use it when the form
		// sets none.
		if ct := f.file.Header.Get("Content-Type"); ct != "" {
			h.Set("Content-Type", ct)
		}
	}
	return h
}

// xmlPostResponse answers success_action_status=201.
type xmlPostResponse struct {
	XMLName  xml.Name `xml:"PostResponse"`
	Location string   `xml:"Location"`
	Bucket   string   `xml:"Bucket"`
	Key      string   `xml:"Key"`
	ETag     string   `xml:"ETag"`
}

// handlePostObject serves a browser form upload to q.bucket.
func handlePostObject(q *request) error {
	f, err := readPostForm(q)
	if err != nil {
		return err
	}
	key, ok := f.fields["key"]
	if !ok {
		return errInvalidArgument("Bucket POST must contain a field named 'key'.  If it is specified, please check the order of the fields.")
	}
	// The policy speaks of the bucket the object goes to, and of the key
	// it gets: ${filename} is the file's name before the conditions are
	// checked (S3 does; a form keyed "${filename}" meets "starts-with
	// $key foo" with a file named foo.txt).
	f.fields["bucket"] = q.bucket
	key = strings.ReplaceAll(key, "${filename}", f.filename)
	f.fields["key"] = key
	pa, ok := q.s.cfg.Auth.(PostAuthenticator)
	if !ok {
		return errNotImplemented("POST object uploads")
	}
	res, err := pa.AuthenticatePost(f.fields)
	if err != nil {
		return err
	}
	if !res.Caller.Anonymous {
		q.caller = res.Caller
	}
	switch {
	case key == "":
		return errInvalidArgument("User key must have a length greater than 0.")
	case len(key) > engine.MaxKeyLength:
		return errorf("KeyTooLongError", http.StatusBadRequest, "Your key is too long")
	}
	q.key = key
	// The tagging field is a Tagging document; its tags are known before
	// access is decided, for the policy condition keys on them.
	var tagErr error
	if doc, ok := f.fields["tagging"]; ok {
		var tags map[string]string
		tags, tagErr = parseTagging([]byte(doc), objectTags)
		q.tags = map[string]string{}
		if tags != nil {
			q.tags = tags
		}
	}
	bi, err := q.bucketAccess(q.bucket, access.WriteObject)
	if err != nil {
		return err
	}
	if tagErr != nil {
		return tagErr
	}

	// From here the form is a PUT of unknown length with these headers.
	q.r = q.r.Clone(q.ctx)
	q.r.Header = postHeaders(f)
	limit := int64(engine.MaxPutSize)
	if res.MaxLength >= 0 && res.MaxLength < limit {
		limit = res.MaxLength
	}
	q.body = io.NopCloser(&postFile{r: f.file, min: res.MinLength, max: limit})
	q.length, q.trailer = -1, nil
	q.exact = newExactBody(q.body, -1)
	opts, cs, err := q.newObjectOptions(bi)
	if err != nil {
		return err
	}
	if cs.trailer {
		return errInvalidRequest("A form upload cannot send trailing checksums.")
	}
	opts.Committed = q.commitHook(bi, notify.ObjectCreatedPost)
	oi, err := q.s.cfg.Store.PutObject(q.ctx, q.bucket, q.key, q.exact, -1, opts)
	if err != nil {
		return fmt.Errorf("post %s/%s: %w", q.bucket, q.key, err)
	}
	q.setWrittenVersionID(bi, oi.VersionID)
	setSSEHeaders(q.w.Header(), oi.Sealed, q.sse)
	q.notifyWrite(bi, notify.ObjectCreatedPost, oi)
	return q.postAnswer(f, oi)
}

// postAnswer answers as the form asked: a 303 to success_action_redirect
// (or the older "redirect"), else success_action_status 200, 201 (with a
// PostResponse document) or 204, the default.
func (q *request) postAnswer(f *postForm, oi engine.ObjectInfo) error {
	h := q.w.Header()
	etag := quoteETag(oi.ETag)
	location := q.objectURL()
	h.Set("ETag", etag)
	setChecksumResponse(h, oi.Checksum)
	redirect := f.fields["success_action_redirect"]
	if redirect == "" {
		redirect = f.fields["redirect"]
	}
	if u, err := url.Parse(redirect); redirect != "" && err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" {
		h.Set("Location", redirectURL(u, q.bucket, q.key, etag))
		q.writeEmpty(http.StatusSeeOther)
		return nil
	}
	h.Set("Location", location)
	switch f.fields["success_action_status"] {
	case "200":
		q.writeEmpty(http.StatusOK)
	case "201":
		q.writeXMLStatus(http.StatusCreated, xmlPostResponse{Location: location, Bucket: q.bucket, Key: q.key, ETag: etag})
	default:
		q.writeEmpty(http.StatusNoContent)
	}
	return nil
}

// redirectURL is success_action_redirect u with S3's query appended:
// bucket, key and etag (quotes included), in that order and
// URL-encoded, after whatever query u already has.
func redirectURL(u *url.URL, bucket, key, etag string) string {
	add := "bucket=" + url.QueryEscape(bucket) + "&key=" + url.QueryEscape(key) + "&etag=" + url.QueryEscape(etag)
	out := *u
	if out.RawQuery != "" {
		out.RawQuery += "&" + add
	} else {
		out.RawQuery = add
	}
	return out.String()
}
