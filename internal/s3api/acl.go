package s3api

import (
	"net/http"
	"strings"

	"github.com/shardstore/shardstore/internal/engine"
)

// Canned ACLs S3 accepts. private, public-read, public-read-write and
// authenticated-read change who may read or write; the bucket-owner-*
// and aws-exec-read ones are accepted and behave like private because a
// bucket owner already has full control here.
var cannedACLs = map[string]bool{
	"private": true, "public-read": true, "public-read-write": true,
	"authenticated-read": true, "aws-exec-read": true,
	"bucket-owner-read": true, "bucket-owner-full-control": true,
}

// parseCannedACL reads x-amz-acl; "" when absent. Explicit grant headers
// are not supported.
func parseCannedACL(h http.Header) (string, error) {
	for name := range h {
		if strings.HasPrefix(strings.ToLower(name), "x-amz-grant-") {
			return "", errNotImplemented("x-amz-grant-* headers (use a canned x-amz-acl)")
		}
	}
	acl := strings.TrimSpace(h.Get("X-Amz-Acl"))
	if acl == "" {
		return "", nil
	}
	if !cannedACLs[acl] {
		return "", errInvalidArgument("Invalid canned ACL %q", acl)
	}
	return acl, nil
}

// access is what an operation needs from a bucket.
type access int

const (
	accessRead  access = iota // list, head, read objects
	accessWrite               // put/delete objects, multipart
	accessOwner               // bucket settings and deletion
)

// aclAllowsRead reports whether a canned ACL lets c read.
func aclAllowsRead(acl string, c Caller) bool {
	switch acl {
	case "public-read", "public-read-write":
		return true
	case "authenticated-read":
		return !c.Anonymous
	}
	return false
}

// ownsBucket reports whether the caller has full control of the bucket.
func (q *request) ownsBucket(bi engine.BucketInfo) bool {
	return q.caller.Root || (!q.caller.Anonymous && q.caller.AccessKey != "" && bi.Owner == q.caller.AccessKey)
}

// allowed reports whether the caller may do a on the bucket.
func (q *request) allowed(bi engine.BucketInfo, a access) bool {
	if q.ownsBucket(bi) {
		return true
	}
	switch a {
	case accessRead:
		return aclAllowsRead(bi.ACL, q.caller)
	case accessWrite:
		return bi.ACL == "public-read-write"
	}
	return false
}

// bucketAccess loads the bucket and checks the caller may do a on it.
// A missing bucket answers NoSuchBucket, as S3 does, before any denial.
func (q *request) bucketAccess(bucket string, a access) (engine.BucketInfo, error) {
	bi, err := q.s.cfg.Store.BucketInfo(q.ctx, bucket)
	if err != nil {
		return bi, err
	}
	if !q.allowed(bi, a) {
		return bi, errAccessDenied()
	}
	return bi, nil
}

// canReadObject reports whether the caller may read an object given its
// bucket (already loaded) and its own ACL and owner.
func (q *request) canReadObject(bi engine.BucketInfo, oi engine.ObjectInfo) bool {
	if q.allowed(bi, accessRead) || aclAllowsRead(oi.ACL, q.caller) {
		return true
	}
	return !q.caller.Anonymous && oi.Owner != "" && oi.Owner == q.caller.AccessKey
}

// aclPolicy renders the minimal ACL document for an owner and canned ACL.
func aclPolicy(owner, acl string) xmlACL {
	o := ownerOf(owner)
	const xsi = "http://www.w3.org/2001/XMLSchema-instance"
	p := xmlACL{NS: s3NS, Owner: o, Grants: []xmlGrant{{
		Grantee:    xmlGrantee{XMLNSXSI: xsi, Type: "CanonicalUser", ID: o.ID, DisplayName: o.DisplayName},
		Permission: "FULL_CONTROL",
	}}}
	group := func(uri, perm string) xmlGrant {
		return xmlGrant{Grantee: xmlGrantee{XMLNSXSI: xsi, Type: "Group", URI: uri}, Permission: perm}
	}
	const allUsers = "http://acs.amazonaws.com/groups/global/AllUsers"
	switch acl {
	case "public-read":
		p.Grants = append(p.Grants, group(allUsers, "READ"))
	case "public-read-write":
		p.Grants = append(p.Grants, group(allUsers, "READ"), group(allUsers, "WRITE"))
	case "authenticated-read":
		p.Grants = append(p.Grants, group("http://acs.amazonaws.com/groups/global/AuthenticatedUsers", "READ"))
	}
	return p
}
