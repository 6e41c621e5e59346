package s3api

import (
	"encoding/base64"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/shardstore/shardstore/internal/access"
	"github.com/shardstore/shardstore/internal/engine"
)

// readBody reads a small XML request body, refusing more than limit bytes.
func (q *request) readBody(limit int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(q.body, limit+1))
	if err != nil {
		return nil, fmt.Errorf("read request body: %w", err)
	}
	if int64(len(data)) > limit {
		return nil, errorf("MaxMessageLengthExceeded", http.StatusBadRequest, "Your request was too big.")
	}
	return data, nil
}

// defaultRegion is the region the server names when it must name one and
// was not tied to one with Config.Region.
const defaultRegion = "us-east-1"

// maxListBuckets bounds max-buckets, and is the page size S3 applies when
// a ListBuckets request pages without giving one.
const maxListBuckets = 10000

// homeRegion is the region the server answers as: Config.Region, or
// us-east-1 when it accepts any.
func (s *Server) homeRegion() string {
	if s.cfg.Region != "" {
		return s.cfg.Region
	}
	return defaultRegion
}

// bucketRegion is the region a bucket lives in, as HeadBucket's
// x-amz-bucket-region and ListBuckets' BucketRegion name it. Buckets
// recorded before regions were belong to the server's region.
func (s *Server) bucketRegion(bi engine.BucketInfo) string {
	switch bi.Location {
	case "":
		return s.homeRegion()
	case "EU":
		return "eu-west-1" // the legacy constraint's region
	}
	return bi.Location
}

// validRegionName reports whether name looks like an AWS region code
// ("eu-west-1", "us-gov-west-1", "cn-north-1"): lowercase letters, digits
// and hyphens, at most 32 characters, starting with a letter and ending
// with a digit. Any such name is accepted when the server is not tied to
// a region, so that clients configured for any real region work.
func validRegionName(name string) bool {
	if len(name) < 3 || len(name) > 32 || name[0] < 'a' || name[0] > 'z' {
		return false
	}
	if c := name[len(name)-1]; c < '0' || c > '9' || !strings.Contains(name, "-") {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' {
			return false
		}
		if c == '-' && name[i-1] == '-' {
			return false
		}
	}
	return true
}

// encodeBucketToken and decodeBucketToken make ListBuckets' opaque
// continuation token: the last bucket name of the previous page.
func encodeBucketToken(name string) string {
	return base64.RawURLEncoding.EncodeToString([]byte("b:" + name))
}

func decodeBucketToken(tok string) (string, bool) {
	raw, err := base64.RawURLEncoding.DecodeString(tok)
	if err != nil || !strings.HasPrefix(string(raw), "b:") {
		return "", false
	}
	return string(raw[2:]), true
}

func handleListBuckets(q *request) error {
	if q.caller.Anonymous {
		return errAccessDenied()
	}
	get := func(k string) (string, bool) {
		v, ok := q.query[k]
		if !ok || len(v) == 0 {
			return "", false
		}
		return v[0], true
	}
	limit := -1 // all: a plain ListBuckets is not paged
	maxArg, hasMax := get("max-buckets")
	if hasMax {
		n, err := strconv.Atoi(maxArg)
		if err != nil || n < 1 || n > maxListBuckets {
			return errInvalidArgument("Argument max-buckets must be an integer between 1 and %d", maxListBuckets)
		}
		limit = n
	}
	prefix, hasPrefix := get("prefix")
	token, hasToken := get("continuation-token")
	region, hasRegion := get("bucket-region")
	if limit < 0 && (hasPrefix || hasToken || hasRegion) {
		limit = maxListBuckets
	}
	after := ""
	if token != "" { // an empty token is the same as none
		var ok bool
		if after, ok = decodeBucketToken(token); !ok || len(token) > 1024 {
			return errInvalidArgument("The continuation token provided is incorrect")
		}
	}
	all, err := q.s.cfg.Store.ListBuckets(q.ctx)
	if err != nil {
		return fmt.Errorf("list buckets: %w", err)
	}
	visible := q.ownsBucket
	if q.caller.Permissions != nil {
		// An identity of the identity store sees every bucket with
		// s3:ListAllMyBuckets, else those it may list.
		switch d := q.accountDecision("s3:ListAllMyBuckets", ""); {
		case d.ExplicitDeny:
			return errAccessDenied()
		case d.Allowed:
			visible = func(engine.BucketInfo) bool { return true }
		default:
			visible = func(b engine.BucketInfo) bool { return q.allows(access.ListBucket, q.bucketResource(b)) }
		}
	}
	out := xmlListAllMyBuckets{NS: s3NS, Owner: ownerOf(q.caller.owner()), Buckets: []xmlBucket{}, Prefix: prefix}
	for _, b := range all { // sorted by name
		if !visible(b) || !strings.HasPrefix(b.Name, prefix) || (after != "" && b.Name <= after) {
			continue
		}
		br := q.s.bucketRegion(b)
		if region != "" && br != region {
			continue
		}
		if limit >= 0 && len(out.Buckets) == limit {
			out.ContinuationToken = encodeBucketToken(out.Buckets[len(out.Buckets)-1].Name)
			break
		}
		out.Buckets = append(out.Buckets, xmlBucket{Name: b.Name, CreationDate: isoTime(b.Created), BucketRegion: br})
	}
	q.writeXML(out)
	return nil
}

func handleCreateBucket(q *request) error {
	if q.caller.Anonymous {
		return errAccessDenied()
	}
	lockEnabled, err := createLockEnabled(q.r.Header)
	if err != nil {
		return err
	}
	// With an ACL, an ownership setting or object lock, CreateBucket is
	// also PutBucketAcl, PutBucketOwnershipControls or
	// PutBucketObjectLockConfiguration and PutBucketVersioning, as in AWS
	// (an identity's policies decide them; root and users of the users
	// file create buckets in accounts of their own).
	need := []string{"s3:CreateBucket"}
	if writesACL(q.r.Header) {
		need = append(need, "s3:PutBucketAcl")
	}
	if q.r.Header.Get("X-Amz-Object-Ownership") != "" {
		need = append(need, "s3:PutBucketOwnershipControls")
	}
	if lockEnabled {
		need = append(need, "s3:PutBucketObjectLockConfiguration", "s3:PutBucketVersioning")
	}
	for _, action := range need {
		if !q.accountDecision(action, q.bucket).Allowed {
			return errAccessDenied()
		}
	}
	if q.bucket == ReservedBucket {
		return errorf("InvalidBucketName", http.StatusBadRequest, "The bucket name %q is reserved.", ReservedBucket)
	}
	body, err := q.readBody(64 << 10)
	if err != nil {
		return err
	}
	var lc string
	if len(strings.TrimSpace(string(body))) > 0 {
		var cfg xmlCreateBucketConfiguration
		if err := xml.Unmarshal(body, &cfg); err != nil {
			return errMalformedXML()
		}
		lc = strings.TrimSpace(cfg.LocationConstraint)
	}
	location, err := q.s.createLocation(lc)
	if err != nil {
		return err
	}
	acl, ownership, err := q.s.newBucketACL(q.r.Header, q.caller.owner())
	if err != nil {
		return err
	}
	err = q.s.cfg.Store.MakeBucket(q.ctx, q.bucket, engine.BucketOptions{Owner: q.caller.owner(), ACL: acl, Location: location,
		OwnershipControls: ownership, ObjectLock: lockEnabled})
	if errors.Is(err, engine.ErrBucketExists) {
		// Only the bucket's own owner is told it owns it; anyone else,
		// root included, learns only that the name is taken. S3 answers
		// a repeated create of your own bucket in us-east-1 with 200 (for
		// legacy compatibility) and BucketAlreadyOwnedByYou elsewhere. A
		// repeat that asks for another bucket than the one there (another
		// ACL, ownership setting or object lock) is refused with
		// BucketAlreadyExists rather than answered 200 for a bucket it
		// did not get (see recreateDiffers). The existing bucket is left
		// as it is either way.
		bi, ierr := q.s.cfg.Store.BucketInfo(q.ctx, q.bucket)
		if ierr == nil && !q.caller.Anonymous && bi.Owner == q.caller.owner() {
			if location != defaultRegion || q.s.bucketRegion(bi) != defaultRegion {
				return errorf("BucketAlreadyOwnedByYou", http.StatusConflict,
					"Your previous request to create the named bucket succeeded and you already own it.")
			}
			if !recreateDiffers(bi, acl, ownership, lockEnabled) {
				err = nil
			}
		}
	}
	if err != nil {
		return fmt.Errorf("create bucket %q: %w", q.bucket, err)
	}
	q.w.Header().Set("Location", "/"+q.bucket)
	q.writeEmpty(http.StatusOK)
	return nil
}

// recreateDiffers reports whether a CreateBucket of existing bucket bi
// by its owner asks for a bucket other than bi: another ACL (acl as
// newBucketACL stored it; canned ACLs that grant nothing on a bucket
// beyond the owner's FULL_CONTROL are all "private"), another ownership
// setting (when the request names one) or object lock where bi has
// none. S3 documents a repeat in us-east-1 as 200 and the ceph s3-tests
// (test_bucket_recreate_overwrite_acl, test_bucket_recreate_new_acl)
// expect 409 BucketAlreadyExists when the ACL differs: an identical
// repeat succeeds, a different one is refused rather than silently
// ignored or applied (docs/conformance.md, "ACL answers and object
// ownership").
func recreateDiffers(bi engine.BucketInfo, acl, ownership string, lockEnabled bool) bool {
	if bucketACLForm(bi.ACL) != bucketACLForm(acl) {
		return true
	}
	if ownership != "" && storedOwnerships[ownership] != objectOwnership(bi) {
		return true
	}
	return lockEnabled && bi.ObjectLock == ""
}

// bucketACLForm is a stored bucket ACL with the canned names that grant
// nothing on a bucket (access.CannedGrants) read as "private".
func bucketACLForm(acl string) string {
	if cannedACLs[acl] && len(access.CannedGrants(acl, false)) == 0 {
		return "private"
	}
	return acl
}

// createLocation checks a CreateBucket LocationConstraint and returns the
// region to record for the bucket. No constraint means the server's
// region (us-east-1 unless tied to another), as does "US", the legacy
// name of us-east-1. A server tied to a region (Config.Region) refuses
// any other, as a regional S3 endpoint does; otherwise any well-formed
// region code, or the legacy "EU", is accepted.
func (s *Server) createLocation(lc string) (string, error) {
	if lc == "" || lc == "US" {
		if lc == "US" && s.cfg.Region != "" && s.cfg.Region != defaultRegion {
			return "", errorf("IllegalLocationConstraintException", http.StatusBadRequest,
				"The %s location constraint is incompatible for the region specific endpoint this request was sent to.", lc)
		}
		return s.homeRegion(), nil
	}
	if lc != "EU" && !validRegionName(lc) {
		return "", errorf("InvalidLocationConstraint", http.StatusBadRequest,
			"The specified location-constraint is not valid")
	}
	if s.cfg.Region != "" && lc != s.cfg.Region && !(lc == "EU" && s.cfg.Region == "eu-west-1") {
		return "", errorf("IllegalLocationConstraintException", http.StatusBadRequest,
			"The %s location constraint is incompatible for the region specific endpoint this request was sent to.", lc)
	}
	return lc, nil
}

func handleHeadBucket(q *request) error {
	bi, err := q.bucketAccess(q.bucket, access.ListBucket)
	if err != nil {
		return err
	}
	q.w.Header().Set("X-Amz-Bucket-Region", q.s.bucketRegion(bi))
	q.writeEmpty(http.StatusOK)
	return nil
}

func handleDeleteBucket(q *request) error {
	if _, err := q.bucketAccess(q.bucket, access.BucketAdmin); err != nil {
		return err
	}
	if err := q.s.cfg.Store.DeleteBucket(q.ctx, q.bucket); err != nil {
		return fmt.Errorf("delete bucket %q: %w", q.bucket, err)
	}
	q.writeEmpty(http.StatusNoContent)
	return nil
}

func handleGetBucketLocation(q *request) error {
	// Read access suffices (S3 wants the owner) so that clients that ask
	// for the region before reading a public bucket keep working.
	bi, err := q.bucketAccess(q.bucket, access.ListBucket)
	if err != nil {
		return err
	}
	region := bi.Location
	if region == "" {
		region = q.s.homeRegion()
	}
	if region == defaultRegion {
		region = "" // S3 answers the classic region with an empty constraint
	}
	q.writeXML(xmlLocationConstraint{NS: s3NS, Region: region})
	return nil
}

func handleGetBucketACL(q *request) error {
	bi, err := q.bucketAccess(q.bucket, access.BucketACL)
	if err != nil {
		return err
	}
	if objectOwnership(bi) == ownershipEnforced {
		q.writeXML(ownerOnlyDocument(bi.Owner))
		return nil
	}
	q.writeXML(q.s.aclDocument(bi.Owner, bi.ACL, false, ""))
	return nil
}

func handlePutBucketACL(q *request) error {
	bi, err := q.bucketAccess(q.bucket, access.PutBucketACL)
	if err != nil {
		return err
	}
	a, err := q.aclForPut(bi, bi.Owner, false)
	if err != nil {
		return err
	}
	if err := q.s.cfg.Store.SetBucketACL(q.ctx, q.bucket, a.stored()); err != nil {
		return fmt.Errorf("set bucket acl: %w", err)
	}
	q.writeEmpty(http.StatusOK)
	return nil
}
