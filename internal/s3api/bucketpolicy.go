package s3api

import (
	"encoding/xml"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/shardstore/shardstore/internal/engine"
	"github.com/shardstore/shardstore/internal/policy"
)

// Bucket policies: Put/Get/DeleteBucketPolicy and GetBucketPolicyStatus
// store and show the document; q.allows evaluates it on every request
// (see acl.go), from a cache of compiled policies so the GET/PUT path
// never parses JSON.

// compileBucketPolicy compiles a stored bucket policy. Stored documents
// were validated by PutBucketPolicy; one that no longer parses (a newer
// server's syntax) must not open the bucket, so it compiles to a policy
// that denies everything but root.
func compileBucketPolicy(bucket, doc string) *policy.Policy {
	p, err := policy.Parse([]byte(doc), policy.ParseOptions{Bucket: bucket})
	if err != nil {
		return denyAll
	}
	return p
}

// denyAll stands in for a stored policy that cannot be read.
var denyAll = func() *policy.Policy {
	p, err := policy.Parse([]byte(`{"Version":"2012-10-17","Statement":[{"Effect":"Deny","Principal":"*","Action":"s3:*","Resource":"*"}]}`), policy.ParseOptions{})
	if err != nil {
		panic(err)
	}
	return p
}()

// bucketPolicy is bi's compiled policy, nil when it has none; compiled
// policies are cached by bucket and document text.
func (s *Server) bucketPolicy(bi engine.BucketInfo) *policy.Policy {
	if bi.Policy == "" {
		return nil
	}
	return s.policies.get(bi.Name+"\x00"+bi.Policy, func() *policy.Policy { return compileBucketPolicy(bi.Name, bi.Policy) })
}

// allows is the one access decision: may the caller do op on r? Every
// handler asks it; nothing else grants or denies access. Root may do
// anything; a bucket policy's Deny refuses and its Allow grants; else
// the ACLs decide.
func (q *request) allows(op operation, r resource) bool {
	c := q.caller
	if c.Root {
		return true
	}
	if c.Permissions != nil {
		pr := q.policyRequest(op, r)
		if !q.identityAllows(pr, r) {
			return false
		}
		// Setting an ACL while writing is PutObjectAcl too, in AWS.
		if op == opWriteObject && writesACL(q.r.Header) && q.api != "DeleteObject" && q.api != "DeleteObjects" {
			acl := *pr
			acl.Action = "s3:PutObjectAcl"
			return q.identityAllows(&acl, r)
		}
		return true
	}
	if r.Policy != nil {
		switch r.Policy.Evaluate(q.policyRequest(op, r)) {
		case policy.Denied:
			// The owner keeps control of the policy itself.
			if !(isUser(c, r.BucketOwner) && policyAPIs[q.api]) {
				return false
			}
		case policy.Allowed:
			// RestrictPublicBuckets: a public policy grants only the
			// bucket's owner (publicaccess.go).
			if policyGrantCounts(c, r) {
				return true
			}
		}
	}
	return q.s.aclAllows(c, op, r)
}

// identityAllows decides for an identity of the identity store as AWS
// does for an IAM principal: a Deny in its policies or in the bucket's
// refuses; in its own account (a bucket root owns) an Allow in its
// policies grants, and so does one in the bucket policy within the
// bounds of its access key's or session's own policy; in a bucket of
// another owner (a users-file user, an account of its own) both its
// policies and the bucket policy must allow. ACLs and ownership play no
// part.
func (q *request) identityAllows(pr *policy.Request, r resource) bool {
	perms := q.caller.Permissions
	mine, bucket := perms.Evaluate(pr), r.Policy.Evaluate(pr)
	switch {
	case mine == policy.Denied || bucket == policy.Denied:
		return false
	case r.BucketOwner != "" && r.BucketOwner != q.caller.Owner:
		return mine == policy.Allowed && bucket == policy.Allowed
	case mine == policy.Allowed:
		return true
	case bucket == policy.Allowed:
		return perms.Bounded(pr)
	}
	return false
}

// writesACL reports whether a request sets an ACL (canned or grants).
func writesACL(h http.Header) bool {
	if h.Get("X-Amz-Acl") != "" {
		return true
	}
	for name := range h {
		if strings.HasPrefix(strings.ToLower(name), "x-amz-grant-") {
			return true
		}
	}
	return false
}

// serviceAllows decides an identity's account-level action (CreateBucket,
// ListAllMyBuckets) on resource, by its policies alone.
func (q *request) serviceAllows(action, resource string) policy.Decision {
	if q.caller.Root {
		return policy.Allowed
	}
	pr := &policy.Request{Action: action, Resource: resource, AccessKey: q.caller.principal(),
		CanonicalID: canonicalID(q.caller.principal()), Conditions: q.conditionKeys(opBucketAdmin)}
	return q.caller.Permissions.Evaluate(pr)
}

// policyAPIs are the APIs a bucket owner may always call.
var policyAPIs = map[string]bool{"GetBucketPolicy": true, "PutBucketPolicy": true, "DeleteBucketPolicy": true, "GetBucketPolicyStatus": true}

// bucketAdminActions maps the bucket-admin APIs to their S3 actions.
var bucketAdminActions = map[string]string{
	"DeleteBucket": "s3:DeleteBucket", "GetBucketAcl": "s3:GetBucketAcl", "PutBucketAcl": "s3:PutBucketAcl",
	"GetBucketCors": "s3:GetBucketCORS", "PutBucketCors": "s3:PutBucketCORS", "DeleteBucketCors": "s3:PutBucketCORS",
	"GetBucketWebsite": "s3:GetBucketWebsite", "PutBucketWebsite": "s3:PutBucketWebsite",
	"DeleteBucketWebsite":        "s3:DeleteBucketWebsite",
	"GetBucketOwnershipControls": "s3:GetBucketOwnershipControls", "PutBucketOwnershipControls": "s3:PutBucketOwnershipControls",
	"DeleteBucketOwnershipControls": "s3:PutBucketOwnershipControls",
	"GetBucketPolicy":               "s3:GetBucketPolicy", "PutBucketPolicy": "s3:PutBucketPolicy",
	"DeleteBucketPolicy": "s3:DeleteBucketPolicy", "GetBucketPolicyStatus": "s3:GetBucketPolicyStatus",
	"GetPublicAccessBlock": "s3:GetBucketPublicAccessBlock", "PutPublicAccessBlock": "s3:PutBucketPublicAccessBlock",
	"DeletePublicAccessBlock": "s3:PutBucketPublicAccessBlock",
	"GetBucketTagging":        "s3:GetBucketTagging", "PutBucketTagging": "s3:PutBucketTagging",
	"DeleteBucketTagging":             "s3:PutBucketTagging",
	"GetBucketLifecycleConfiguration": "s3:GetLifecycleConfiguration",
	"PutBucketLifecycleConfiguration": "s3:PutLifecycleConfiguration",
	"DeleteBucketLifecycle":           "s3:PutLifecycleConfiguration",
	"GetBucketVersioning":             "s3:GetBucketVersioning",
	"PutBucketVersioning":             "s3:PutBucketVersioning",
	"GetObjectLockConfiguration":      "s3:GetBucketObjectLockConfiguration",
	"PutObjectLockConfiguration":      "s3:PutBucketObjectLockConfiguration",
}

// versionActions are the actions AWS checks instead of an object
// action when the request names a version (versionId, or the copy
// source's): reading, deleting, tagging or changing the ACL of one
// version is a permission of its own.
var versionActions = map[string]string{
	"s3:GetObject":           "s3:GetObjectVersion",
	"s3:GetObjectAttributes": "s3:GetObjectVersionAttributes",
	"s3:DeleteObject":        "s3:DeleteObjectVersion",
	"s3:GetObjectTagging":    "s3:GetObjectVersionTagging",
	"s3:PutObjectTagging":    "s3:PutObjectVersionTagging",
	"s3:DeleteObjectTagging": "s3:DeleteObjectVersionTagging",
	"s3:GetObjectAcl":        "s3:GetObjectVersionAcl",
	"s3:PutObjectAcl":        "s3:PutObjectVersionAcl",
}

// versionOf is the version a decision about r names: the resource's own
// (a copy source's, a DeleteObjects entry's), else the request's
// versionId for its own object.
func (q *request) versionOf(op operation, r resource) string {
	if r.Version != "" || !op.onObject() || q.api == "DeleteObjects" {
		return r.Version
	}
	if r.Key != "" && r.Key != q.key {
		return ""
	}
	return q.param("versionId")
}

// action is the S3 action a request performs under op, as AWS's
// service authorization reference names it.
func (q *request) action(op operation) string {
	switch op {
	case opReadObject:
		if q.api == "GetObjectAttributes" {
			return "s3:GetObjectAttributes"
		}
		return "s3:GetObject"
	case opWriteObject:
		if q.api == "DeleteObject" || q.api == "DeleteObjects" {
			return "s3:DeleteObject"
		}
		return "s3:PutObject"
	case opManageUpload:
		if q.api == "AbortMultipartUpload" {
			return "s3:AbortMultipartUpload"
		}
		return "s3:ListMultipartUploadParts"
	case opObjectACL:
		if q.api == "PutObjectAcl" {
			return "s3:PutObjectAcl"
		}
		return "s3:GetObjectAcl"
	case opPutObjectACL:
		return "s3:PutObjectAcl"
	case opBucketACL:
		return "s3:GetBucketAcl"
	case opPutBucketACL:
		return "s3:PutBucketAcl"
	case opObjectTagging:
		return "s3:GetObjectTagging"
	case opPutObjectTagging:
		if q.api == "DeleteObjectTagging" {
			return "s3:DeleteObjectTagging"
		}
		return "s3:PutObjectTagging"
	case opObjectRetention:
		return "s3:GetObjectRetention"
	case opPutObjectRetention:
		return "s3:PutObjectRetention"
	case opObjectLegalHold:
		return "s3:GetObjectLegalHold"
	case opPutObjectLegalHold:
		return "s3:PutObjectLegalHold"
	case opBypassGovernance:
		return "s3:BypassGovernanceRetention"
	case opListBucket:
		switch q.api {
		case "ListObjectVersions":
			return "s3:ListBucketVersions"
		case "ListMultipartUploads":
			return "s3:ListBucketMultipartUploads"
		case "GetBucketLocation":
			return "s3:GetBucketLocation"
		}
		return "s3:ListBucket"
	case opBucketAdmin:
		if a, ok := bucketAdminActions[q.api]; ok {
			return a
		}
	}
	return "s3:" + q.api
}

// objectOps are the operations on an object, whose resource is the
// object's ARN rather than the bucket's.
func (o operation) onObject() bool {
	return o == opReadObject || o == opWriteObject || o == opManageUpload || o == opObjectACL ||
		o == opPutObjectACL || o == opObjectTagging || o == opPutObjectTagging ||
		o == opObjectRetention || o == opPutObjectRetention || o == opObjectLegalHold ||
		o == opPutObjectLegalHold || o == opBypassGovernance
}

// policyRequest describes the request to the policy engine.
func (q *request) policyRequest(op operation, r resource) *policy.Request {
	arn := "arn:aws:s3:::" + r.Bucket
	if op.onObject() {
		key := r.Key
		if key == "" {
			key = q.key
		}
		arn += "/" + key
	}
	c := q.caller
	pr := &policy.Request{Action: q.action(op), Resource: arn, Anonymous: c.Anonymous,
		AccessKey: c.principal(), Root: c.Root, Conditions: q.conditionKeys(op)}
	if v := q.versionOf(op, r); v != "" {
		if a, ok := versionActions[pr.Action]; ok {
			pr.Action = a
		}
		pr.Conditions["s3:versionid"] = []string{v}
	}
	var written map[string]string
	if op == opWriteObject || op == opPutObjectTagging {
		written = q.requestTags()
	}
	tagConditionKeys(pr.Conditions, written, r.ObjectTags)
	if !c.Anonymous {
		pr.CanonicalID = canonicalID(c.principal())
	}
	return pr
}

// ConditionKeys are the global condition keys (aws:*) of a request by
// caller, lower-cased: the time, the source address and transport, the
// user agent and referer, and who the caller is. The admin API evaluates
// identity policies with them too.
func ConditionKeys(r *http.Request, c Caller) map[string][]string {
	now := time.Now().UTC()
	m := map[string][]string{
		"aws:currenttime":     {now.Format(time.RFC3339)},
		"aws:epochtime":       {strconv.FormatInt(now.Unix(), 10)},
		"aws:securetransport": {strconv.FormatBool(r.TLS != nil)},
	}
	if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		m["aws:sourceip"] = []string{host}
	}
	for key, header := range map[string]string{"aws:useragent": "User-Agent", "aws:referer": "Referer"} {
		if v := r.Header.Get(header); v != "" {
			m[key] = []string{v}
		}
	}
	switch {
	case c.Anonymous:
		m["aws:principaltype"] = []string{"Anonymous"}
	default:
		m["aws:principaltype"] = []string{"User"}
		m["aws:username"] = []string{c.principal()}
		m["aws:userid"] = []string{c.principal()}
	}
	return m
}

// conditionKeys are the request's values of the condition keys policies
// test (lower-cased names; a key the request lacks is absent).
func (q *request) conditionKeys(op operation) map[string][]string {
	r := q.r
	m := ConditionKeys(r, q.caller)
	if op == opListBucket {
		for _, name := range []string{"prefix", "delimiter", "max-keys"} {
			if v, ok := q.query[name]; ok && len(v) > 0 {
				m["s3:"+name] = []string{v[0]}
			}
		}
	}
	for _, h := range []string{"x-amz-acl", "x-amz-content-sha256", "x-amz-storage-class", "x-amz-metadata-directive",
		"x-amz-copy-source", "x-amz-server-side-encryption", "x-amz-website-redirect-location",
		"x-amz-grant-read", "x-amz-grant-write", "x-amz-grant-read-acp", "x-amz-grant-write-acp", "x-amz-grant-full-control"} {
		if v := r.Header.Get(h); v != "" {
			m["s3:"+h] = []string{v}
		}
	}
	q.lockConditionKeys(m)
	authz := r.Header.Get("Authorization")
	switch {
	case strings.HasPrefix(authz, "AWS4-HMAC-SHA256"):
		m["s3:signatureversion"], m["s3:authtype"] = []string{"AWS4-HMAC-SHA256"}, []string{"REST-HEADER"}
	case strings.HasPrefix(authz, "AWS "):
		m["s3:signatureversion"], m["s3:authtype"] = []string{"AWS"}, []string{"REST-HEADER"}
	case has(q.query, "X-Amz-Signature"):
		m["s3:signatureversion"], m["s3:authtype"] = []string{"AWS4-HMAC-SHA256"}, []string{"REST-QUERY-STRING"}
	case has(q.query, "Signature"):
		m["s3:signatureversion"], m["s3:authtype"] = []string{"AWS"}, []string{"REST-QUERY-STRING"}
	case q.api == "PostObject" && !q.caller.Anonymous:
		m["s3:authtype"] = []string{"POST"}
	}
	return m
}

// errNoSuchBucketPolicy answers a bucket without a policy.
func errNoSuchBucketPolicy() *Error {
	return errorf("NoSuchBucketPolicy", http.StatusNotFound, "The bucket policy does not exist")
}

func handlePutBucketPolicy(q *request) error {
	bi, err := q.bucketAccess(q.bucket, opBucketAdmin)
	if err != nil {
		return err
	}
	body, err := q.readConfigBody(false)
	if err != nil {
		return err
	}
	p, err := policy.Parse(body, policy.ParseOptions{Bucket: q.bucket})
	if err != nil {
		var pe *policy.Error
		if errors.As(err, &pe) {
			return errorf("MalformedPolicy", http.StatusBadRequest, "%s", pe.Message)
		}
		return err
	}
	if err := checkPublicPolicy(bi, p); err != nil {
		return err
	}
	if err := q.s.cfg.Store.SetBucketConfig(q.ctx, q.bucket, engine.BucketConfigPolicy, string(body)); err != nil {
		return fmt.Errorf("set bucket policy: %w", err)
	}
	q.writeEmpty(http.StatusNoContent)
	return nil
}

func handleGetBucketPolicy(q *request) error {
	bi, err := q.bucketAccess(q.bucket, opBucketAdmin)
	if err != nil {
		return err
	}
	if bi.Policy == "" {
		return errNoSuchBucketPolicy()
	}
	h := q.w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(bi.Policy)))
	q.w.WriteHeader(http.StatusOK)
	_, _ = q.w.Write([]byte(bi.Policy))
	return nil
}

func handleDeleteBucketPolicy(q *request) error {
	if _, err := q.bucketAccess(q.bucket, opBucketAdmin); err != nil {
		return err
	}
	if err := q.s.cfg.Store.SetBucketConfig(q.ctx, q.bucket, engine.BucketConfigPolicy, ""); err != nil {
		return fmt.Errorf("delete bucket policy: %w", err)
	}
	q.writeEmpty(http.StatusNoContent)
	return nil
}

type xmlPolicyStatus struct {
	XMLName  xml.Name `xml:"PolicyStatus"`
	NS       string   `xml:"xmlns,attr"`
	IsPublic bool     `xml:"IsPublic"`
}

func handleGetBucketPolicyStatus(q *request) error {
	bi, err := q.bucketAccess(q.bucket, opBucketAdmin)
	if err != nil {
		return err
	}
	if bi.Policy == "" {
		return errNoSuchBucketPolicy()
	}
	q.writeXML(xmlPolicyStatus{NS: s3NS, IsPublic: q.s.bucketPolicy(bi).IsPublic()})
	return nil
}
