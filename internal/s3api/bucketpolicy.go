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

	"github.com/shardstore/shardstore/internal/access"
	"github.com/shardstore/shardstore/internal/engine"
	"github.com/shardstore/shardstore/internal/policy"
)

// Bucket policies: Put/Get/DeleteBucketPolicy and GetBucketPolicyStatus
// store and show the document; access.Decide evaluates it on every
// request (q.allows), from a cache of compiled policies so the GET/PUT
// path never parses JSON. This file also builds the questions q.allows
// asks: the action a request performs and its condition keys.

// compileBucketPolicy compiles a stored bucket policy. Stored documents
// were validated by PutBucketPolicy; one that no longer parses (a newer
// server's syntax) must not open the bucket, so it compiles to a policy
// that denies everything but root.
func compileBucketPolicy(bucket, doc string) *policy.Policy {
	p, err := policy.Parse([]byte(doc), policy.ParseOptions{Bucket: bucket, Stored: true})
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

// allows asks package access whether the caller may do op on r: every
// access check of a handler comes here (or to accountDecision), and
// nothing in this package grants or denies on its own.
func (q *request) allows(op access.Operation, r resource) bool {
	d := access.Decide(q.accessRequest(op, r))
	if d.Allowed && d.Reason == access.ReasonACLGrant {
		q.aclRequired = true // the access log's "ACL required"
	}
	return d.Allowed
}

// accessRequest is the question op on r asks of access.Decide: the
// caller, the S3 action the request performs under op, the resource, and
// (when a policy will read them) the request's condition keys.
func (q *request) accessRequest(op access.Operation, r resource) access.Request {
	ar := access.Request{Caller: q.caller.AccessCaller(), Op: op, Action: q.action(op), Resource: r.Resource,
		// Setting an ACL while writing (but not deleting) needs
		// s3:PutObjectAcl too.
		SetsACL: op == access.WriteObject && writesACL(q.r.Header) && q.api != "DeleteObject" && q.api != "DeleteObjects"}
	if ar.Resource.Key == "" {
		ar.Resource.Key = q.key
	}
	version := q.versionOf(op, r)
	if a, ok := versionActions[ar.Action]; ok && version != "" {
		ar.Action = a
	}
	if ar.NeedsConditions() {
		ar.Conditions = q.policyConditions(op, r, version)
	}
	return ar
}

// secondaryAllows decides the second action of a write that also sets
// something with an action of its own (tags, a retention, a legal hold):
// see access.Request.PartOfWrite.
func (q *request) secondaryAllows(bi engine.BucketInfo, op access.Operation) bool {
	ar := q.accessRequest(op, q.bucketResource(bi))
	ar.PartOfWrite = true
	return access.Decide(ar).Allowed
}

// accountDecision decides an account-level action (CreateBucket,
// ListAllMyBuckets) on bucket ("" for none).
func (q *request) accountDecision(action, bucket string) access.Decision {
	ar := access.Request{Caller: q.caller.AccessCaller(), Op: access.AccountAction, Action: action,
		Resource: access.Resource{Bucket: bucket}}
	if ar.NeedsConditions() {
		ar.Conditions = q.conditionKeys(access.AccountAction)
	}
	return access.Decide(ar)
}

// writesACL reports whether a request sets an ACL (canned or grants).
func writesACL(h http.Header) bool {
	if h.Get("X-Amz-Acl") != "" {
		return true
	}
	const grantPrefix = "x-amz-grant-"
	for name := range h {
		if len(name) >= len(grantPrefix) && strings.EqualFold(name[:len(grantPrefix)], grantPrefix) {
			return true
		}
	}
	return false
}

// bucketAdminActions maps the bucket-admin APIs to their S3 actions.
var bucketAdminActions = map[string]string{
	"DeleteBucket": "s3:DeleteBucket", "GetBucketAcl": "s3:GetBucketAcl", "PutBucketAcl": "s3:PutBucketAcl",
	"GetBucketCors": "s3:GetBucketCORS", "PutBucketCors": "s3:PutBucketCORS", "DeleteBucketCors": "s3:PutBucketCORS",
	"GetBucketWebsite": "s3:GetBucketWebsite", "PutBucketWebsite": "s3:PutBucketWebsite",
	"DeleteBucketWebsite":        "s3:DeleteBucketWebsite",
	"GetBucketOwnershipControls": "s3:GetBucketOwnershipControls", "PutBucketOwnershipControls": "s3:PutBucketOwnershipControls",
	"DeleteBucketOwnershipControls": "s3:PutBucketOwnershipControls",
	"GetBucketEncryption":           "s3:GetEncryptionConfiguration", "PutBucketEncryption": "s3:PutEncryptionConfiguration",
	"DeleteBucketEncryption": "s3:PutEncryptionConfiguration",
	"GetBucketPolicy":        "s3:GetBucketPolicy", "PutBucketPolicy": "s3:PutBucketPolicy",
	"DeleteBucketPolicy": "s3:DeleteBucketPolicy", "GetBucketPolicyStatus": "s3:GetBucketPolicyStatus",
	"GetPublicAccessBlock": "s3:GetBucketPublicAccessBlock", "PutPublicAccessBlock": "s3:PutBucketPublicAccessBlock",
	"DeletePublicAccessBlock": "s3:PutBucketPublicAccessBlock",
	"GetBucketTagging":        "s3:GetBucketTagging", "PutBucketTagging": "s3:PutBucketTagging",
	"DeleteBucketTagging":                "s3:PutBucketTagging",
	"GetBucketLifecycleConfiguration":    "s3:GetLifecycleConfiguration",
	"PutBucketLifecycleConfiguration":    "s3:PutLifecycleConfiguration",
	"DeleteBucketLifecycle":              "s3:PutLifecycleConfiguration",
	"GetBucketVersioning":                "s3:GetBucketVersioning",
	"PutBucketVersioning":                "s3:PutBucketVersioning",
	"GetObjectLockConfiguration":         "s3:GetBucketObjectLockConfiguration",
	"PutObjectLockConfiguration":         "s3:PutBucketObjectLockConfiguration",
	"GetBucketNotificationConfiguration": "s3:GetBucketNotification",
	"PutBucketNotificationConfiguration": "s3:PutBucketNotification",
}

// versionActions are the actions AWS checks instead of an object
// action when the request names a version (versionId, or the copy
// source's): reading, deleting, tagging or changing the ACL of one
// version is a permission of its own.
var versionActions = map[string]string{
	"s3:GetObject":           "s3:GetObjectVersion",
	"s3:GetObjectAttributes": "s3:GetObjectVersionAttributes",
	"s3:GetObjectTorrent":    "s3:GetObjectVersionTorrent",
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
func (q *request) versionOf(op access.Operation, r resource) string {
	if r.Version != "" || !op.OnObject() || q.api == "DeleteObjects" {
		return r.Version
	}
	if r.Key != "" && r.Key != q.key {
		return ""
	}
	return q.param("versionId")
}

// action is the S3 action a request performs under op, as AWS's
// service authorization reference names it.
func (q *request) action(op access.Operation) string {
	switch op {
	case access.ReadObject:
		switch q.api {
		case "GetObjectAttributes":
			return "s3:GetObjectAttributes"
		case "GetObjectTorrent":
			return "s3:GetObjectTorrent"
		}
		return "s3:GetObject"
	case access.WriteObject:
		if q.api == "DeleteObject" || q.api == "DeleteObjects" {
			return "s3:DeleteObject"
		}
		return "s3:PutObject"
	case access.ManageUpload:
		if q.api == "AbortMultipartUpload" {
			return "s3:AbortMultipartUpload"
		}
		return "s3:ListMultipartUploadParts"
	case access.ObjectACL:
		if q.api == "PutObjectAcl" {
			return "s3:PutObjectAcl"
		}
		return "s3:GetObjectAcl"
	case access.PutObjectACL:
		return "s3:PutObjectAcl"
	case access.BucketACL:
		return "s3:GetBucketAcl"
	case access.PutBucketACL:
		return "s3:PutBucketAcl"
	case access.ObjectTagging:
		return "s3:GetObjectTagging"
	case access.PutObjectTagging:
		if q.api == "DeleteObjectTagging" {
			return "s3:DeleteObjectTagging"
		}
		return "s3:PutObjectTagging"
	case access.ObjectRetention:
		return "s3:GetObjectRetention"
	case access.PutObjectRetention:
		return "s3:PutObjectRetention"
	case access.ObjectLegalHold:
		return "s3:GetObjectLegalHold"
	case access.PutObjectLegalHold:
		return "s3:PutObjectLegalHold"
	case access.BypassGovernance:
		return "s3:BypassGovernanceRetention"
	case access.ListBucket:
		switch q.api {
		case "ListObjectVersions":
			return "s3:ListBucketVersions"
		case "ListMultipartUploads":
			return "s3:ListBucketMultipartUploads"
		case "GetBucketLocation":
			return "s3:GetBucketLocation"
		}
		return "s3:ListBucket"
	case access.BucketAdmin:
		if a, ok := bucketAdminActions[q.api]; ok {
			return a
		}
	}
	return "s3:" + q.api
}

// policyConditions are the condition keys of op on r: the request's
// (conditionKeys), the version it names and the tags it writes, and the
// tags the object has.
func (q *request) policyConditions(op access.Operation, r resource, version string) map[string][]string {
	m := q.conditionKeys(op)
	if op == access.ListBucket && r.ProbedKey != "" {
		// Would listing the key show whether it exists?
		m["s3:prefix"] = []string{r.ProbedKey}
	}
	if version != "" {
		m["s3:versionid"] = []string{version}
	}
	var written map[string]string
	if op == access.WriteObject || op == access.PutObjectTagging {
		written = q.requestTags()
	}
	tagConditionKeys(m, written, r.ObjectTags)
	return m
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
		// A federated identity's own variables (${ldap:username},
		// ${jwt:sub}, ...).
		for k, v := range c.Claims {
			m[k] = []string{v}
		}
	}
	return m
}

// conditionKeys are the request's values of the condition keys policies
// test (lower-cased names; a key the request lacks is absent).
func (q *request) conditionKeys(op access.Operation) map[string][]string {
	r := q.r
	m := ConditionKeys(r, q.caller)
	if op == access.ListBucket && listAPIs[q.api] {
		// Only a listing's own parameters: on any other request they
		// are not S3's (a HEAD's ?prefix= must not stand for the key).
		for _, name := range []string{"prefix", "delimiter", "max-keys"} {
			if v, ok := q.query[name]; ok && len(v) > 0 {
				m["s3:"+name] = []string{v[0]}
			}
		}
	}
	for _, h := range []string{"x-amz-acl", "x-amz-content-sha256", "x-amz-storage-class", "x-amz-metadata-directive",
		"x-amz-copy-source", "x-amz-server-side-encryption", "x-amz-website-redirect-location",
		"x-amz-server-side-encryption-aws-kms-key-id", "x-amz-server-side-encryption-customer-algorithm",
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

// listAPIs are the APIs whose prefix, delimiter and max-keys parameters
// are the s3:prefix, s3:delimiter and s3:max-keys condition keys.
var listAPIs = map[string]bool{"ListObjects": true, "ListObjectsV2": true, "ListObjectVersions": true,
	"ListMultipartUploads": true}

// errNoSuchBucketPolicy answers a bucket without a policy.
func errNoSuchBucketPolicy() *Error {
	return errorf("NoSuchBucketPolicy", http.StatusNotFound, "The bucket policy does not exist")
}

func handlePutBucketPolicy(q *request) error {
	bi, err := q.bucketAccess(q.bucket, access.BucketAdmin)
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
	bi, err := q.bucketAccess(q.bucket, access.BucketAdmin)
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
	if _, err := q.bucketAccess(q.bucket, access.BucketAdmin); err != nil {
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
	bi, err := q.bucketAccess(q.bucket, access.BucketAdmin)
	if err != nil {
		return err
	}
	if bi.Policy == "" {
		return errNoSuchBucketPolicy()
	}
	q.writeXML(xmlPolicyStatus{NS: s3NS, IsPublic: q.s.bucketPolicy(bi).IsPublic()})
	return nil
}
