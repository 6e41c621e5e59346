package s3api

// Object versioning at the HTTP layer; the engine keeps the versions.
//
//   - Put/GetBucketVersioning (?versioning on a bucket) set and show the
//     bucket's state (engine.BucketInfo.Versioning): never configured,
//     Enabled or Suspended. As in S3 a bucket never returns to "never
//     configured", and a document without Status changes nothing. MFA
//     delete is not supported. A bucket with object lock cannot be
//     suspended (409 InvalidBucketState).
//   - Object calls name a version with ?versionId= (a copy source with
//     x-amz-copy-source's ?versionId=); "null" names the null version,
//     which writes create while the bucket is unversioned or suspended.
//     Version ids are the engine's: this layer passes them through and
//     reports the engine's refusal of a malformed one as S3 does.
//   - Answers carry x-amz-version-id only for buckets whose versioning
//     was ever configured (S3 shows none for a never-versioned bucket),
//     with the engine's "" spelled "null". A read that meets a delete
//     marker answers with x-amz-delete-marker (deleteMarkerError).
//   - A request naming a version is decided with AWS's version actions
//     (s3:GetObjectVersion, ...; versionActions in bucketpolicy.go).

import (
	"encoding/xml"
	"errors"
	"net/http"

	"github.com/shardstore/shardstore/internal/access"
	"github.com/shardstore/shardstore/internal/engine"
)

// xmlVersioningConfiguration is the ?versioning document.
type xmlVersioningConfiguration struct {
	XMLName   xml.Name `xml:"VersioningConfiguration"`
	NS        string   `xml:"xmlns,attr,omitempty"`
	Status    string   `xml:"Status,omitempty"`
	MfaDelete string   `xml:"MfaDelete,omitempty"`
}

// parseVersioning reads and validates a PutBucketVersioning body; the
// status is "" when the document leaves the state as it is.
func parseVersioning(body []byte) (string, error) {
	var cfg xmlVersioningConfiguration
	if err := xml.Unmarshal(body, &cfg); err != nil {
		return "", errMalformedXML()
	}
	switch cfg.MfaDelete {
	case "", "Disabled":
	case "Enabled":
		return "", errorf("NotImplemented", http.StatusNotImplemented, "MFA delete is not supported.")
	default:
		return "", errMalformedXML()
	}
	switch cfg.Status {
	case "", engine.VersioningEnabled, engine.VersioningSuspended:
		return cfg.Status, nil
	}
	// S3 answers MalformedXML, not InvalidArgument, for any other Status.
	return "", errMalformedXML()
}

func handlePutBucketVersioning(q *request) error {
	if _, err := q.bucketAccess(q.bucket, access.BucketAdmin); err != nil {
		return err
	}
	body, err := q.readConfigBody(false)
	if err != nil {
		return err
	}
	status, err := parseVersioning(body)
	if err != nil {
		return err
	}
	if status != "" {
		err := q.s.cfg.Store.SetBucketConfig(q.ctx, q.bucket, engine.BucketConfigVersioning, status)
		if errors.Is(err, engine.ErrInvalidBucketState) {
			// Object lock keeps versioning Enabled.
			return invalidBucketState("An Object Lock configuration is present on this bucket, so the versioning state cannot be changed.", err)
		}
		if err != nil {
			return err
		}
	}
	q.writeEmpty(http.StatusOK)
	return nil
}

func handleGetBucketVersioning(q *request) error {
	bi, err := q.bucketAccess(q.bucket, access.BucketAdmin)
	if err != nil {
		return err
	}
	// A never-configured bucket answers an empty document, no Status.
	q.writeXML(xmlVersioningConfiguration{NS: s3NS, Status: bi.Versioning})
	return nil
}

// versionOut spells an engine version id as S3 does: "" is "null".
func versionOut(id string) string {
	if id == "" {
		return engine.NullVersionID
	}
	return id
}

// setVersionID answers x-amz-version-id for version id of an object in
// bi, where bi's versioning was ever configured.
func (q *request) setVersionID(bi engine.BucketInfo, id string) {
	if bi.Versioning == "" {
		return
	}
	q.w.Header().Set("X-Amz-Version-Id", versionOut(id))
}

// setWrittenVersionID is setVersionID for a write that made a new
// current version (PutObject, POST, CopyObject, CompleteMultipartUpload):
// S3 omits x-amz-version-id when a versioning-suspended bucket stores
// the write as its null version (the PutObject reference's "versioning
// suspended" sample response has none; docs/conformance.md has the
// evidence), while GET and HEAD of that version still answer "null".
func (q *request) setWrittenVersionID(bi engine.BucketInfo, id string) {
	if bi.Versioning == engine.VersioningSuspended && versionOut(id) == engine.NullVersionID {
		return
	}
	q.setVersionID(bi, id)
}

// requestVersion is the request's versionId, "" when it names none. S3
// refuses an empty value rather than reading it as the current version.
func (q *request) requestVersion() (string, error) {
	v, ok := q.query["versionId"]
	if !ok || len(v) == 0 {
		return "", nil
	}
	if v[0] == "" {
		return "", errInvalidArgument("Version id cannot be the empty string")
	}
	return v[0], nil
}

// errInvalidVersion is S3's answer to a version id that cannot be one.
func errInvalidVersion(err error) *Error {
	e := errInvalidArgument("Invalid version id specified")
	e.Err = err
	return e
}

// versionError reports the engine's ErrInvalidArgument on a call that
// named a version as S3 does: the version id is what was invalid.
func versionError(err error, version string) error {
	var ae *Error
	if version != "" && errors.Is(err, engine.ErrInvalidArgument) && !errors.As(err, &ae) {
		return errInvalidVersion(err)
	}
	return err
}

// versionMissing reports whether err says the object or the version
// asked for is not there to read (a delete marker included).
func versionMissing(err error) bool {
	return errors.Is(err, engine.ErrObjectNotFound) || errors.Is(err, engine.ErrNoSuchVersion) ||
		errors.Is(err, engine.ErrMethodNotAllowed)
}
