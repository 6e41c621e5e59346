// Package auth authenticates S3 requests signed with AWS Signature Version 4
// or Version 2 and holds the user (credential) store.
//
// # What is verified
//
// Verifier.Verify accepts every SigV4 form S3 clients use today:
//
//   - Authorization header "AWS4-HMAC-SHA256 Credential=AK/YYYYMMDD/region/s3/aws4_request,
//     SignedHeaders=..., Signature=..." with x-amz-content-sha256 set to the hex SHA-256
//     of the body (checked while the body is read) or UNSIGNED-PAYLOAD.
//   - Presigned URLs (X-Amz-Algorithm, -Credential, -Date, -Expires, -SignedHeaders,
//     -Signature query parameters), payload UNSIGNED-PAYLOAD unless the URL carries
//     X-Amz-Content-Sha256.
//   - aws-chunked streaming uploads: STREAMING-AWS4-HMAC-SHA256-PAYLOAD (each chunk
//     signed, signatures chained from the header's "seed" signature),
//     STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER (the same plus signed trailing
//     headers such as x-amz-checksum-crc32) and STREAMING-UNSIGNED-PAYLOAD-TRAILER
//     (unsigned chunks plus trailing headers, used by the AWS SDKs over TLS).
//
// Signature Version 2 is accepted too, because botocore's
// generate_presigned_url and `aws s3 presign` (AWS CLI v1) still produce it
// at default settings:
//
//   - Authorization header "AWS AccessKeyId:Signature", the signature being
//     Base64(HMAC-SHA1(secret, StringToSign)) over VERB, Content-MD5,
//     Content-Type, Date (empty when x-amz-date is sent), the x-amz-*
//     headers and the CanonicalizedResource; the request time (x-amz-date,
//     else Date) must be within MaxSkew.
//   - Presigned URLs with AWSAccessKeyId, Expires (absolute epoch seconds)
//     and Signature; Expires replaces Date in the string to sign, and an
//     expired URL is AccessDenied "Request has expired".
//
// The CanonicalizedResource is "/bucket" for virtual-host-style requests
// (Verifier.Domain says which hosts are), the path exactly as sent, and the
// S3 sub-resources of the query (acl, uploadId, partNumber, versionId,
// response-* ...), sorted. A SigV2 signature covers neither the body
// (Content-MD5 is checked by the engine) nor query parameters other than
// sub-resources, which is inherent to the protocol.
//
// Requests without any authentication come back as Anonymous and the caller
// decides what they may do. Their body is still framed as their
// x-amz-content-sha256 says: aws-chunked STREAMING-UNSIGNED-PAYLOAD-TRAILER
// (how current SDKs send unsigned uploads) is decoded with its trailer, a
// hex digest is checked, and chunk-signed modes are refused.
//
// # Canonical request
//
// The canonical request is rebuilt the way S3 does it: the decoded path is
// encoded segment by segment (RFC 3986 unreserved characters kept, '/' kept, never
// encoded twice, never normalised); query parameters are decoded, re-encoded and
// sorted by encoded name then value; signed headers are lower-cased, their values
// trimmed with inner runs of spaces squeezed and repeated headers joined with ",".
// host must be signed, and every x-amz-* header present must be signed too.
// Signatures (V4 and V2) are compared in constant time. A presigned URL whose
// signature is wrong, malformed or not, answers 403 SignatureDoesNotMatch as
// S3 does; missing or malformed other parameters are
// AuthorizationQueryParametersError.
//
// # Streaming bodies never buffer
//
// Verify reads nothing from the body. The returned Request.Body hands bytes out
// as they arrive and performs the payload checks as it goes: the hex digest at
// the end, each chunk's signature before the next chunk header is accepted, the
// trailer signature and the declared decoded length before io.EOF. Any failure
// replaces io.EOF with an *Error, so a consumer that treats only io.EOF as
// success can never commit unverified bytes. The aws-chunked decoder works in a
// fixed 64 KiB buffer, bounds line length, chunk size and trailer count, and
// turns truncated input into IncompleteBody and garbage into InvalidRequest or
// MalformedTrailerError, never a panic.
//
// # Browser form uploads
//
// POST object authenticates by form fields instead: VerifyPost
// (postpolicy.go) checks the SigV4 or SigV2 signature over the base64
// policy document, then the policy itself (expiration, each eq and
// starts-with condition, every sent field named by one) and returns the
// content-length-range. internal/s3api/postobject.go reads the form's
// fields up to the file part (fields after it are ignored, as in S3),
// verifies them before reading a byte of the file, and streams the file
// to PutObject bounded by the policy's range.
//
// VerifySTS (sts.go) authenticates STS calls: a form POST signed for
// service "sts", the signature over the hashed body.
//
// # Users
//
// Users holds the root identity and users loaded from a file of
// "ACCESS_KEY SECRET_KEY [DISPLAY NAME...]" lines. An access key not
// found there is looked up in the Verifier's IdentityStore (the identity
// store, package iam), and a request carrying x-amz-security-token (in a
// header, a presigned query or a POST form field) is a session, looked up
// by its token (identities.go).
//
// SignRequest, PresignURL and SignStreamingRequest produce requests for tests
// and tools.
package auth
