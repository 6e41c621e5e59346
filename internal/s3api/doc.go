// Package s3api is shardstore's S3 front door: it routes HTTP requests
// (path-style and virtual-host-style), authenticates them through an
// Authenticator, decides access (identity and bucket policies, ownership,
// ACLs and public access blocks), translates
// them into calls on an ObjectStore and answers in S3's XML dialect with
// S3's error codes. It knows nothing of drives or erasure coding.
//
// # A request's way through
//
// Server.ServeHTTP (server.go) counts the request and hands it to serve:
// route (router.go) maps method, bucket, key and query to an API name and
// a handler; the Authenticator (SigV4, sigv4.go, over auth.Verifier)
// checks the signature and wraps the body so that a bad payload fails
// the read; then the handler, a func(*request) error, asks for access,
// calls the ObjectStore and writes the answer. Errors are returned, never written by the handler:
// toAPIError (errors.go) turns engine errors into S3 codes. The handler
// files follow the resource: bucket.go, object.go, multipart.go, list.go,
// and one file per bucket configuration (bucketpolicy.go, lifecycle.go,
// objectlock.go, versioning.go, tagging.go, ...).
//
// # Access
//
// Handlers do not decide access themselves: q.bucketAccess and
// q.objectAccess (acl.go) load the records and ask q.allows
// (bucketpolicy.go), which builds an access.Request (q.accessRequest: the
// action q.action names, the resource from q.bucketResource /
// q.objectResource, the condition keys from q.conditionKeys, computed only
// when a policy will read them) and calls access.Decide once. Parsing
// stays here: ACLs (aclgrants.go: a canned name or a JSON grant list in
// the record's one string, x-amz-grant-* headers, AccessControlPolicy
// bodies), bucket policies (compiled once per document and cached by
// docCache, cache.go), ownership controls (objectOwnership,
// bucketconfig.go) and public access blocks (publicaccess.go, which also
// asks RefusesACL / RefusesPolicy as ACLs and policies are stored). Each
// is read from its canonical stored form by map lookup, so decisions
// parse no XML. x-amz-expiration comes from the bucket's lifecycle
// document, parsed once per bucket and text and cached the same way
// (lifecycle.go).
//
// # Encryption at rest
//
// sse.go reads the SSE-S3, SSE-KMS and SSE-C headers (and the bucket's
// default encryption, ?encryption), makes each new object's key through
// package sealing (which seals it under a KMS data key or the customer's
// key) and hands it to the engine in PutOptions.Encryption. Reads give the
// engine an unseal function (q.unsealer) that decides read access first;
// parts and copy sources get their own. setSSEHeaders answers what a
// version's sealed map says, as S3 does on writes and reads.
//
// # Server access logs
//
// ?logging is a bucket configuration like the others (logging.go). A
// request on a bucket with logging enabled is recorded (accessrecord.go):
// serve looks the configuration up once authentication is done, and the
// response writer's onHeader hook hands the record to Config.AccessLog
// (package accesslog's spool), which syncs it before the answer's first
// byte; finish amends it with the bytes sent. The spool delivers log
// objects back through DeliverAccessLog.
//
// # The seam to the engine
//
// ObjectStore (store.go) is everything the handlers ask of storage;
// *engine.Engine implements it, and a compile-time check there says so.
// Handler tests run against fakeStore (fake_test.go), an in-memory
// ObjectStore held to the engine's contract by the conformance suite in
// package storetest, which runs against both. docs/ARCHITECTURE.md has
// the checklist for adding an S3 API.
package s3api
