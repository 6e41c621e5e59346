package s3api

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/shardstore/shardstore/internal/engine"
)

// Error is an S3 error answer: Code goes into the XML <Code>, Status is
// the HTTP status.
type Error struct {
	Code    string
	Status  int
	Message string
	// Err is the underlying cause, kept for logs; never shown to clients.
	Err error
	// Header holds headers the answer carries besides the usual ones:
	// a delete marker's x-amz-delete-marker and x-amz-version-id.
	Header http.Header
}

func (e *Error) Error() string {
	msg := e.Code + ": " + e.Message
	// The cause is shown unless it only repeats the code and message
	// (an auth error carried as is).
	if e.Err != nil && !strings.Contains(msg, e.Err.Error()) && !strings.Contains(e.Err.Error(), msg) {
		return msg + ": " + e.Err.Error()
	}
	return msg
}

// Unwrap exposes the cause to errors.Is/As.
func (e *Error) Unwrap() error { return e.Err }

// errorf builds an *Error.
func errorf(code string, status int, format string, args ...any) *Error {
	return &Error{Code: code, Status: status, Message: fmt.Sprintf(format, args...)}
}

// Error codes shardstore answers that are not S3's own. They are
// documented in README.md.
const (
	// CodeStorageFull answers ErrStorageFull with 507: S3 has no code for a
	// full backend, and 507 is not retried by SDKs, which is right since a
	// retry cannot succeed until space is freed.
	CodeStorageFull = "InsufficientStorage"
)

// Frequently used errors.
func errAccessDenied() *Error {
	return errorf("AccessDenied", http.StatusForbidden, "Access Denied")
}

func errNotImplemented(what string) *Error {
	return errorf("NotImplemented", http.StatusNotImplemented,
		"A header or query you provided implies functionality that is not implemented: %s", what)
}

func errMalformedXML() *Error {
	return errorf("MalformedXML", http.StatusBadRequest,
		"The XML you provided was not well-formed or did not validate against our published schema")
}

func errInvalidArgument(format string, args ...any) *Error {
	return errorf("InvalidArgument", http.StatusBadRequest, format, args...)
}

func errInvalidRequest(format string, args ...any) *Error {
	return errorf("InvalidRequest", http.StatusBadRequest, format, args...)
}

func errInternal(err error) *Error {
	return &Error{Code: "InternalError", Status: http.StatusInternalServerError,
		Message: "We encountered an internal error. Please try again.", Err: err}
}

// toAPIError maps any error a handler met to the S3 error the client sees.
// Engine errors are matched with errors.Is so wrapped errors map too.
func toAPIError(err error) *Error {
	var ae *Error
	if errors.As(err, &ae) {
		return ae
	}
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return &Error{Code: "MaxMessageLengthExceeded", Status: http.StatusBadRequest,
			Message: "Your request was too big.", Err: err}
	}
	var dm *engine.DeleteMarkerError
	if errors.As(err, &dm) {
		return deleteMarkerError(dm, err)
	}
	if ae := checksumAPIError(err); ae != nil {
		return ae
	}
	m := func(code string, status int, msg string) *Error {
		return &Error{Code: code, Status: status, Message: msg, Err: err}
	}
	switch {
	case errors.Is(err, engine.ErrEncrypted):
		return m("InvalidRequest", 400, "The object was stored using a form of Server Side Encryption. The correct parameters must be provided to retrieve the object.")
	case errors.Is(err, engine.ErrDataAuth):
		return m("InternalError", 500, "The object's encrypted data failed authentication; no byte of it was returned.")
	case errors.Is(err, engine.ErrInvalidBucketName):
		return m("InvalidBucketName", 400, "The specified bucket is not valid.")
	case errors.Is(err, engine.ErrBucketNotFound):
		return m("NoSuchBucket", 404, "The specified bucket does not exist")
	case errors.Is(err, engine.ErrBucketExists):
		return m("BucketAlreadyExists", 409, "The requested bucket name is not available. The bucket namespace is shared by all users of the system. Please select a different name and try again.")
	case errors.Is(err, engine.ErrBucketNotEmpty):
		return m("BucketNotEmpty", 409, "The bucket you tried to delete is not empty")
	case errors.Is(err, engine.ErrInvalidObjectName):
		return m("InvalidArgument", 400, "Object name contains unsupported characters or path elements.")
	case errors.Is(err, engine.ErrObjectNotFound):
		return m("NoSuchKey", 404, "The specified key does not exist.")
	case errors.Is(err, engine.ErrNoSuchVersion):
		return m("NoSuchVersion", 404, "The specified version does not exist.")
	case errors.Is(err, engine.ErrMethodNotAllowed):
		return m("MethodNotAllowed", 405, msgMethodNotAllowed)
	case errors.Is(err, engine.ErrInvalidRange):
		return m("InvalidRange", 416, "The requested range is not satisfiable")
	case errors.Is(err, engine.ErrPreconditionFailed):
		return m("PreconditionFailed", 412, "At least one of the pre-conditions you specified did not hold")
	case errors.Is(err, engine.ErrNotModified):
		return m("NotModified", 304, "Not Modified")
	case errors.Is(err, engine.ErrWriteQuorum):
		// 503 ServiceUnavailable is retried by every SDK with backoff,
		// which is what a client should do while drives come back.
		return m("ServiceUnavailable", 503, "Not enough drives are online to meet write quorum; please retry.")
	case errors.Is(err, engine.ErrClusterUnavailable):
		return m("ServiceUnavailable", 503, "This node cannot reach a majority of the cluster's nodes; please retry.")
	case errors.Is(err, engine.ErrReadQuorum):
		return m("ServiceUnavailable", 503, "Not enough drives are online to meet read quorum; please retry.")
	case errors.Is(err, engine.ErrBusy):
		return m("SlowDown", 503, "The object is busy with another operation; please retry.")
	case errors.Is(err, engine.ErrBadDigest):
		return m("BadDigest", 400, "The Content-MD5 you specified did not match what we received.")
	case errors.Is(err, engine.ErrChecksumMismatch):
		return m("BadDigest", 400, "The checksum you specified did not match the calculated checksum.")
	case errors.Is(err, engine.ErrIncompleteBody), errors.Is(err, io.ErrUnexpectedEOF):
		return m("IncompleteBody", 400, "You did not provide the number of bytes specified by the Content-Length HTTP header.")
	case errors.Is(err, engine.ErrEntityTooLarge):
		return m("EntityTooLarge", 400, "Your proposed upload exceeds the maximum allowed size")
	case errors.Is(err, engine.ErrEntityTooSmall):
		return m("EntityTooSmall", 400, "Your proposed upload is smaller than the minimum allowed object size.")
	case errors.Is(err, engine.ErrNoSuchUpload):
		return m("NoSuchUpload", 404, "The specified upload does not exist. The upload ID may be invalid, or the upload may have been aborted or completed.")
	case errors.Is(err, engine.ErrInvalidPart):
		return m("InvalidPart", 400, "One or more of the specified parts could not be found.  The part may not have been uploaded, or the specified entity tag may not match the part's entity tag.")
	case errors.Is(err, engine.ErrInvalidPartOrder):
		return m("InvalidPartOrder", 400, "The list of parts was not in ascending order. Parts must be ordered by part number.")
	case errors.Is(err, engine.ErrInvalidPartNumber):
		return m("InvalidArgument", 400, "Part number must be an integer between 1 and 10000, inclusive")
	case errors.Is(err, engine.ErrObjectLocked):
		return m("AccessDenied", 403, "Access Denied because object protected by object lock.")
	case errors.Is(err, engine.ErrObjectLockNotEnabled):
		return m("InvalidRequest", 400, "Bucket is missing Object Lock Configuration")
	case errors.Is(err, engine.ErrInvalidBucketState):
		// Handlers that know which state was wrong answer S3's own
		// message for it (versioning.go, objectlock.go).
		return m("InvalidBucketState", 409, "The request is not valid with the current state of the bucket.")
	case errors.Is(err, engine.ErrInvalidArgument):
		return m("InvalidArgument", 400, "Invalid argument: "+err.Error())
	case errors.Is(err, engine.ErrStorageFull):
		return m(CodeStorageFull, http.StatusInsufficientStorage, "Not enough free space on the drives to store the object.")
	case errors.Is(err, engine.ErrMalformedCompletion):
		return m("MalformedXML", 400, "The XML you provided was not well-formed or did not validate against our published schema")
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return m("RequestTimeout", 400, "Your socket connection to the server was not read from or written to within the timeout period.")
	}
	return errInternal(err)
}

// checksumAPIError answers the engine's checksum errors with S3's
// messages, which name the algorithm (upper-case for a body's checksum,
// lower-case for a multipart completion's, as S3 writes them); nil for
// any other error.
func checksumAPIError(err error) *Error {
	var ce *engine.ChecksumError
	if errors.As(err, &ce) {
		e := &Error{Code: "BadDigest", Status: http.StatusBadRequest, Err: err}
		switch alg := ce.Algorithm; {
		case ce.Part > 0:
			e.Message = fmt.Sprintf("The %s you specified for part %d did not match what we received.", strings.ToLower(alg), ce.Part)
		case ce.Complete:
			e.Message = fmt.Sprintf("The %s you specified did not match the calculated checksum.", strings.ToLower(alg))
		default:
			e.Message = fmt.Sprintf("The %s you specified did not match the calculated checksum.", alg)
		}
		return e
	}
	var ue *engine.UploadChecksumError
	if !errors.As(err, &ue) {
		return nil
	}
	e := &Error{Code: "InvalidRequest", Status: http.StatusBadRequest, Err: err}
	switch ue.Reason {
	case engine.ChecksumPartAlgorithm:
		e.Message = fmt.Sprintf("Checksum Type mismatch occurred, expected checksum Type: %s, actual checksum Type: %s",
			strings.ToLower(ue.Algorithm), strings.ToLower(ue.Sent))
	case engine.ChecksumCompleteType:
		mode := ue.Type
		if mode == "" {
			mode = "null"
		}
		e.Message = fmt.Sprintf("The upload was created using the %s checksum mode. The complete request must use the same checksum mode.", mode)
	default:
		e.Message = fmt.Sprintf("The upload was created using a %s checksum. The complete request must include the checksum for each part. It was missing for part %d in the request.",
			strings.ToLower(ue.Algorithm), ue.Part)
	}
	return e
}

// msgMethodNotAllowed is S3's message for 405 MethodNotAllowed.
const msgMethodNotAllowed = "The specified method is not allowed against this resource."

// deleteMarkerError answers a read that resolved to a delete marker as
// S3 does: 404 NoSuchKey when the key's current version is one, 405
// MethodNotAllowed when the versionId asked for names one; both with
// x-amz-delete-marker and the marker's x-amz-version-id, so a client can
// tell a deleted key from one that never existed. The 405 also carries
// Allow (HTTP requires it on a 405; DELETE is what a marker's version
// id may be used for) and the marker's Last-Modified, as S3 documents.
func deleteMarkerError(dm *engine.DeleteMarkerError, err error) *Error {
	cause := dm.Err
	if cause == nil {
		cause = engine.ErrObjectNotFound
	}
	out := *toAPIError(cause)
	out.Err = err
	out.Header = http.Header{}
	out.Header.Set("X-Amz-Delete-Marker", "true")
	out.Header.Set("X-Amz-Version-Id", versionOut(dm.Marker.VersionID))
	if out.Status == http.StatusMethodNotAllowed {
		out.Header.Set("Allow", http.MethodDelete)
		if !dm.Marker.ModTime.IsZero() {
			out.Header.Set("Last-Modified", dm.Marker.ModTime.UTC().Format(http.TimeFormat))
		}
	}
	return &out
}
