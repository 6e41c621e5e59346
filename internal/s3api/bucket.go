package s3api

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

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

func handleListBuckets(q *request) error {
	if q.caller.Anonymous {
		return errAccessDenied()
	}
	all, err := q.s.cfg.Store.ListBuckets(q.ctx)
	if err != nil {
		return fmt.Errorf("list buckets: %w", err)
	}
	out := xmlListAllMyBuckets{NS: s3NS, Owner: ownerOf(q.caller.AccessKey), Buckets: []xmlBucket{}}
	for _, b := range all {
		if q.ownsBucket(b) {
			out.Buckets = append(out.Buckets, xmlBucket{Name: b.Name, CreationDate: isoTime(b.Created)})
		}
	}
	q.writeXML(out)
	return nil
}

func handleCreateBucket(q *request) error {
	if q.caller.Anonymous {
		return errAccessDenied()
	}
	if q.bucket == ReservedBucket {
		return errorf("InvalidBucketName", http.StatusBadRequest, "The bucket name %q is reserved.", ReservedBucket)
	}
	body, err := q.readBody(64 << 10)
	if err != nil {
		return err
	}
	if len(strings.TrimSpace(string(body))) > 0 {
		var cfg xmlCreateBucketConfiguration
		if err := xml.Unmarshal(body, &cfg); err != nil {
			return errMalformedXML()
		}
		if lc := cfg.LocationConstraint; lc != "" && lc != q.s.cfg.Region &&
			!(q.s.cfg.Region == "us-east-1" && lc == "US") {
			return errorf("IllegalLocationConstraintException", http.StatusBadRequest,
				"The %s location constraint is incompatible for the region specific endpoint this request was sent to.", lc)
		}
	}
	acl, err := parseCannedACL(q.r.Header)
	if err != nil {
		return err
	}
	if strings.EqualFold(q.r.Header.Get("X-Amz-Bucket-Object-Lock-Enabled"), "true") {
		return errNotImplemented("object lock")
	}
	if acl == "" {
		acl = "private"
	}
	err = q.s.cfg.Store.MakeBucket(q.ctx, q.bucket, engine.BucketOptions{Owner: q.caller.AccessKey, ACL: acl})
	if errors.Is(err, engine.ErrBucketExists) {
		if bi, ierr := q.s.cfg.Store.BucketInfo(q.ctx, q.bucket); ierr == nil && q.ownsBucket(bi) {
			return errorf("BucketAlreadyOwnedByYou", http.StatusConflict,
				"Your previous request to create the named bucket succeeded and you already own it.")
		}
	}
	if err != nil {
		return fmt.Errorf("create bucket %q: %w", q.bucket, err)
	}
	q.w.Header().Set("Location", "/"+q.bucket)
	q.writeEmpty(http.StatusOK)
	return nil
}

func handleHeadBucket(q *request) error {
	if _, err := q.bucketAccess(q.bucket, opListBucket); err != nil {
		return err
	}
	q.w.Header().Set("X-Amz-Bucket-Region", q.s.cfg.Region)
	q.writeEmpty(http.StatusOK)
	return nil
}

func handleDeleteBucket(q *request) error {
	if _, err := q.bucketAccess(q.bucket, opBucketAdmin); err != nil {
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
	if _, err := q.bucketAccess(q.bucket, opListBucket); err != nil {
		return err
	}
	region := q.s.cfg.Region
	if region == "us-east-1" {
		region = "" // S3 answers the classic region with an empty constraint
	}
	q.writeXML(xmlLocationConstraint{NS: s3NS, Region: region})
	return nil
}

func handleGetBucketACL(q *request) error {
	bi, err := q.bucketAccess(q.bucket, opBucketAdmin)
	if err != nil {
		return err
	}
	q.writeXML(aclPolicy(bi.Owner, bi.ACL, false, ""))
	return nil
}

func handlePutBucketACL(q *request) error {
	if _, err := q.bucketAccess(q.bucket, opBucketAdmin); err != nil {
		return err
	}
	acl, err := q.cannedACLForPut()
	if err != nil {
		return err
	}
	if err := q.s.cfg.Store.SetBucketACL(q.ctx, q.bucket, acl); err != nil {
		return fmt.Errorf("set bucket acl: %w", err)
	}
	q.writeEmpty(http.StatusOK)
	return nil
}

// cannedACLForPut reads the ACL of a Put*Acl request: only the canned
// x-amz-acl header form is supported, not an XML grant list.
func (q *request) cannedACLForPut() (string, error) {
	acl, err := parseCannedACL(q.r.Header)
	if err != nil {
		return "", err
	}
	if acl == "" {
		body, err := q.readBody(64 << 10)
		if err != nil {
			return "", err
		}
		if len(strings.TrimSpace(string(body))) > 0 {
			return "", errNotImplemented("ACL documents (use a canned x-amz-acl header)")
		}
		return "", errorf("MissingSecurityHeader", http.StatusBadRequest,
			"Your request was missing a required header: x-amz-acl")
	}
	return acl, nil
}
