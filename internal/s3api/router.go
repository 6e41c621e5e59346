package s3api

import (
	"net/http"
	"sort"
	"strings"
)

// routeResult is the operation chosen for a request.
type routeResult struct {
	api     string
	handler func(*request) error
	err     *Error
}

// unimplementedSubresources are S3 sub-resources shardstore does not
// serve yet; naming one in a query answers NotImplemented.
var unimplementedSubresources = map[string]bool{
	"accelerate": true, "analytics": true,
	"intelligent-tiering": true, "inventory": true,
	"metadataTable": true, "metrics": true,
	"replication": true, "requestPayment": true,
	"restore": true, "select": true, "session": true,
	"torrent": true, "renameObject": true,
}

// knownParams are query parameters shardstore understands (or knows to
// ignore, like the SDKs' x-id) in addition to the implemented
// sub-resources handled by route itself.
var knownParams = map[string]bool{
	"acl": true, "attributes": true, "delete": true, "location": true, "uploads": true, "versions": true,
	"uploadId": true, "partNumber": true, "versionId": true,
	"prefix": true, "delimiter": true, "marker": true, "max-keys": true,
	"encoding-type": true, "list-type": true, "continuation-token": true,
	"start-after": true, "fetch-owner": true, "key-marker": true,
	"upload-id-marker": true, "max-uploads": true, "version-id-marker": true,
	"max-parts": true, "part-number-marker": true, "x-id": true,
	"response-content-type": true, "response-content-language": true,
	"response-expires": true, "response-cache-control": true,
	"response-content-disposition": true, "response-content-encoding": true,
	"X-Amz-Algorithm": true, "X-Amz-Credential": true, "X-Amz-Date": true,
	"X-Amz-Expires": true, "X-Amz-SignedHeaders": true, "X-Amz-Signature": true,
	"X-Amz-Security-Token": true, "x-amz-checksum-crc32": true,
	"x-amz-sdk-checksum-algorithm": true, "x-amz-checksum-mode": true,
	"max-buckets": true, "bucket-region": true,
	"cors": true, "ownershipControls": true, "website": true, "encryption": true,
	"policy": true, "policyStatus": true, "publicAccessBlock": true,
	"tagging": true, "lifecycle": true, "versioning": true,
	"object-lock": true, "retention": true, "legal-hold": true, "logging": true,
	"notification": true,
}

// unsupportedQuery returns the first sub-resource in query that is not
// implemented: a listed one, or any unknown parameter without a value
// (which is how S3 sub-resources are written).
func unsupportedQuery(query map[string][]string) string {
	names := make([]string, 0, len(query))
	for k := range query {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if unimplementedSubresources[k] {
			return k
		}
		if knownParams[k] || strings.HasPrefix(strings.ToLower(k), "x-amz-") {
			continue
		}
		if v := query[k]; len(v) == 1 && v[0] == "" {
			return k
		}
	}
	return ""
}

func has(query map[string][]string, k string) bool {
	_, ok := query[k]
	return ok
}

// route picks the S3 operation for method, bucket, key and query.
func route(method, bucket, key string, query map[string][]string, h http.Header) routeResult {
	ok := func(api string, fn func(*request) error) routeResult { return routeResult{api: api, handler: fn} }
	if method == http.MethodOptions && bucket != "" {
		return ok(apiPreflight, handlePreflight) // CORS preflight, whatever the query
	}
	if method == http.MethodGet && bucket != "" && key != "" && has(query, "torrent") {
		// Answered after the object is resolved (torrent.go), so a
		// missing key is NoSuchKey as in S3.
		return ok("GetObjectTorrent", handleGetObjectTorrent)
	}
	if sub := unsupportedQuery(query); sub != "" {
		return routeResult{api: "NotImplemented", err: errNotImplemented("?" + sub)}
	}
	notAllowed := routeResult{api: "MethodNotAllowed", err: errorf("MethodNotAllowed", http.StatusMethodNotAllowed,
		"The specified method is not allowed against this resource.")}
	switch {
	case bucket == "":
		if method == http.MethodGet {
			return ok("ListBuckets", handleListBuckets)
		}
		return notAllowed
	case key == "":
		// ?retention and ?legal-hold are sub-resources of objects only,
		// ?object-lock of buckets only (below): on the other kind none
		// is an API, and none may fall through to one (PUT to
		// CreateBucket or PutObject, DELETE to a delete).
		if has(query, "retention") || has(query, "legal-hold") {
			return routeResult{api: "NotImplemented", err: errNotImplemented("?retention or ?legal-hold on a bucket")}
		}
		switch method {
		case http.MethodGet:
			switch {
			case has(query, "location"):
				return ok("GetBucketLocation", handleGetBucketLocation)
			case has(query, "acl"):
				return ok("GetBucketAcl", handleGetBucketACL)
			case has(query, "cors"):
				return ok("GetBucketCors", handleGetBucketCors)
			case has(query, "ownershipControls"):
				return ok("GetBucketOwnershipControls", handleGetBucketOwnershipControls)
			case has(query, "encryption"):
				return ok("GetBucketEncryption", handleGetBucketEncryption)
			case has(query, "website"):
				return ok("GetBucketWebsite", handleGetBucketWebsite)
			case has(query, "policyStatus"):
				return ok("GetBucketPolicyStatus", handleGetBucketPolicyStatus)
			case has(query, "publicAccessBlock"):
				return ok("GetPublicAccessBlock", handleGetPublicAccessBlock)
			case has(query, "policy"):
				return ok("GetBucketPolicy", handleGetBucketPolicy)
			case has(query, "tagging"):
				return ok("GetBucketTagging", handleGetBucketTagging)
			case has(query, "lifecycle"):
				return ok("GetBucketLifecycleConfiguration", handleGetBucketLifecycleConfiguration)
			case has(query, "versioning"):
				return ok("GetBucketVersioning", handleGetBucketVersioning)
			case has(query, "object-lock"):
				return ok("GetObjectLockConfiguration", handleGetObjectLockConfiguration)
			case has(query, "logging"):
				return ok("GetBucketLogging", handleGetBucketLogging)
			case has(query, "notification"):
				return ok("GetBucketNotificationConfiguration", handleGetBucketNotificationConfiguration)
			case has(query, "uploads"):
				return ok("ListMultipartUploads", handleListMultipartUploads)
			case has(query, "versions"):
				return ok("ListObjectVersions", handleListObjectVersions)
			case len(query["list-type"]) > 0 && query["list-type"][0] == "2":
				return ok("ListObjectsV2", handleListObjectsV2)
			}
			return ok("ListObjects", handleListObjectsV1)
		case http.MethodHead:
			return ok("HeadBucket", handleHeadBucket)
		case http.MethodPut:
			switch {
			case has(query, "acl"):
				return ok("PutBucketAcl", handlePutBucketACL)
			case has(query, "cors"):
				return ok("PutBucketCors", handlePutBucketCors)
			case has(query, "ownershipControls"):
				return ok("PutBucketOwnershipControls", handlePutBucketOwnershipControls)
			case has(query, "encryption"):
				return ok("PutBucketEncryption", handlePutBucketEncryption)
			case has(query, "website"):
				return ok("PutBucketWebsite", handlePutBucketWebsite)
			case has(query, "policy"):
				return ok("PutBucketPolicy", handlePutBucketPolicy)
			case has(query, "publicAccessBlock"):
				return ok("PutPublicAccessBlock", handlePutPublicAccessBlock)
			case has(query, "tagging"):
				return ok("PutBucketTagging", handlePutBucketTagging)
			case has(query, "lifecycle"):
				return ok("PutBucketLifecycleConfiguration", handlePutBucketLifecycleConfiguration)
			case has(query, "versioning"):
				return ok("PutBucketVersioning", handlePutBucketVersioning)
			case has(query, "object-lock"):
				return ok("PutObjectLockConfiguration", handlePutObjectLockConfiguration)
			case has(query, "logging"):
				return ok("PutBucketLogging", handlePutBucketLogging)
			case has(query, "notification"):
				return ok("PutBucketNotificationConfiguration", handlePutBucketNotificationConfiguration)
			}
			return ok("CreateBucket", handleCreateBucket)
		case http.MethodDelete:
			switch {
			case has(query, "versioning"), has(query, "object-lock"), has(query, "logging"), has(query, "notification"):
				// S3 has no DeleteBucketVersioning or DeleteBucketLogging
				// (an empty BucketLoggingStatus turns logging off), and an
				// object lock configuration cannot be removed; none may
				// fall through to DeleteBucket.
				return notAllowed
			case has(query, "cors"):
				return ok("DeleteBucketCors", handleDeleteBucketCors)
			case has(query, "ownershipControls"):
				return ok("DeleteBucketOwnershipControls", handleDeleteBucketOwnershipControls)
			case has(query, "encryption"):
				return ok("DeleteBucketEncryption", handleDeleteBucketEncryption)
			case has(query, "website"):
				return ok("DeleteBucketWebsite", handleDeleteBucketWebsite)
			case has(query, "policy"):
				return ok("DeleteBucketPolicy", handleDeleteBucketPolicy)
			case has(query, "publicAccessBlock"):
				return ok("DeletePublicAccessBlock", handleDeletePublicAccessBlock)
			case has(query, "tagging"):
				return ok("DeleteBucketTagging", handleDeleteBucketTagging)
			case has(query, "lifecycle"):
				return ok("DeleteBucketLifecycle", handleDeleteBucketLifecycle)
			}
			return ok("DeleteBucket", handleDeleteBucket)
		case http.MethodPost:
			if has(query, "delete") {
				return ok("DeleteObjects", handleDeleteObjects)
			}
			if has(query, "versioning") || has(query, "object-lock") || has(query, "logging") || has(query, "notification") {
				return notAllowed
			}
			return ok("PostObject", handlePostObject)
		}
		return notAllowed
	}
	if has(query, "object-lock") || has(query, "logging") || has(query, "notification") {
		// Bucket sub-resources: on an object neither is an API, and
		// neither may fall through to GetObject, PutObject or
		// DeleteObject.
		return routeResult{api: "NotImplemented", err: errNotImplemented("?object-lock or ?logging on an object")}
	}
	switch method {
	case http.MethodGet:
		switch {
		case has(query, "uploadId"):
			return ok("ListParts", handleListParts)
		case has(query, "acl"):
			return ok("GetObjectAcl", handleGetObjectACL)
		case has(query, "attributes"):
			return ok("GetObjectAttributes", handleGetObjectAttributes)
		case has(query, "tagging"):
			return ok("GetObjectTagging", handleGetObjectTagging)
		case has(query, "retention"):
			return ok("GetObjectRetention", handleGetObjectRetention)
		case has(query, "legal-hold"):
			return ok("GetObjectLegalHold", handleGetObjectLegalHold)
		}
		return ok("GetObject", handleGetObject)
	case http.MethodHead:
		return ok("HeadObject", handleHeadObject)
	case http.MethodPut:
		switch {
		case has(query, "uploadId") || has(query, "partNumber"):
			if h.Get("X-Amz-Copy-Source") != "" {
				return ok("UploadPartCopy", handleUploadPartCopy)
			}
			return ok("UploadPart", handleUploadPart)
		case has(query, "acl"):
			return ok("PutObjectAcl", handlePutObjectACL)
		case has(query, "tagging"):
			return ok("PutObjectTagging", handlePutObjectTagging)
		case has(query, "retention"):
			return ok("PutObjectRetention", handlePutObjectRetention)
		case has(query, "legal-hold"):
			return ok("PutObjectLegalHold", handlePutObjectLegalHold)
		case h.Get("X-Amz-Copy-Source") != "":
			return ok("CopyObject", handleCopyObject)
		}
		return ok("PutObject", handlePutObject)
	case http.MethodPost:
		switch {
		case has(query, "uploads"):
			return ok("CreateMultipartUpload", handleCreateMultipartUpload)
		case has(query, "uploadId"):
			return ok("CompleteMultipartUpload", handleCompleteMultipartUpload)
		}
		return notAllowed
	case http.MethodDelete:
		switch {
		case has(query, "uploadId"):
			return ok("AbortMultipartUpload", handleAbortMultipartUpload)
		case has(query, "tagging"):
			return ok("DeleteObjectTagging", handleDeleteObjectTagging)
		case has(query, "retention"), has(query, "legal-hold"):
			// S3 has no delete for either (an empty Retention or a hold
			// OFF is how they are removed); never DeleteObject.
			return notAllowed
		}
		return ok("DeleteObject", handleDeleteObject)
	}
	return notAllowed
}
