package e2e

import (
	"bytes"
	"io"
	"net/http"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// TestACLGrantsSDK grants through aws-sdk-go-v2's GrantRead and
// AccessControlPolicy, turns ACLs off with BucketOwnerEnforced, and sets
// a public access block that survives a restart and blocks public ACLs.
func TestACLGrantsSDK(t *testing.T) {
	dir := t.TempDir()
	s := startIn(t, dir)
	c, bob := s.root(), s.client(bobUser, bobPass)
	const b = "grants-bucket"
	createBucket(t, c, b)
	lb, err := bob.ListBuckets(ctx(t), &s3.ListBucketsInput{})
	if err != nil || lb.Owner == nil || aws.ToString(lb.Owner.ID) == "" {
		t.Fatalf("bob's canonical id: %+v %v", lb, err)
	}
	bobID := aws.ToString(lb.Owner.ID)
	read := func(cl *s3.Client, key string) error {
		out, err := cl.GetObject(ctx(t), &s3.GetObjectInput{Bucket: aws.String(b), Key: aws.String(key)})
		if err == nil {
			_, _ = io.Copy(io.Discard, out.Body)
			out.Body.Close()
		}
		return err
	}

	if _, err := c.PutObject(ctx(t), &s3.PutObjectInput{Bucket: aws.String(b), Key: aws.String("by-header"),
		Body: bytes.NewReader([]byte("h")), GrantRead: aws.String(`id="` + bobID + `"`)}); err != nil {
		t.Fatal("PutObject with GrantRead:", err)
	}
	if err := read(bob, "by-header"); err != nil {
		t.Fatal("bob reads a granted object:", err)
	}
	if _, err := c.PutObject(ctx(t), &s3.PutObjectInput{Bucket: aws.String(b), Key: aws.String("by-body"), Body: bytes.NewReader([]byte("b"))}); err != nil {
		t.Fatal(err)
	}
	wantCode(t, read(bob, "by-body"), "AccessDenied", 403)
	acl, err := c.GetObjectAcl(ctx(t), &s3.GetObjectAclInput{Bucket: aws.String(b), Key: aws.String("by-body")})
	if err != nil {
		t.Fatal(err)
	}
	grants := append(acl.Grants, types.Grant{Permission: types.PermissionRead,
		Grantee: &types.Grantee{Type: types.TypeCanonicalUser, ID: aws.String(bobID)}})
	if _, err := c.PutObjectAcl(ctx(t), &s3.PutObjectAclInput{Bucket: aws.String(b), Key: aws.String("by-body"),
		AccessControlPolicy: &types.AccessControlPolicy{Owner: acl.Owner, Grants: grants}}); err != nil {
		t.Fatal("PutObjectAcl with a body:", err)
	}
	if err := read(bob, "by-body"); err != nil {
		t.Fatal("bob reads after PutObjectAcl:", err)
	}
	acl, err = c.GetObjectAcl(ctx(t), &s3.GetObjectAclInput{Bucket: aws.String(b), Key: aws.String("by-body")})
	if err != nil || len(acl.Grants) != 2 || aws.ToString(acl.Grants[1].Grantee.ID) != bobID || acl.Grants[1].Permission != types.PermissionRead {
		t.Fatalf("GetObjectAcl: %+v %v", acl, err)
	}
	_, err = c.PutObject(ctx(t), &s3.PutObjectInput{Bucket: aws.String(b), Key: aws.String("x"), Body: bytes.NewReader(nil),
		GrantRead: aws.String(`emailAddress="bob@example.com"`)})
	wantCode(t, err, "UnresolvableGrantByEmailAddress", 400)

	// Public access block: stored, kept over a restart, enforced.
	_, err = c.GetPublicAccessBlock(ctx(t), &s3.GetPublicAccessBlockInput{Bucket: aws.String(b)})
	wantCode(t, err, "NoSuchPublicAccessBlockConfiguration", 404)
	if _, err := c.PutPublicAccessBlock(ctx(t), &s3.PutPublicAccessBlockInput{Bucket: aws.String(b),
		PublicAccessBlockConfiguration: &types.PublicAccessBlockConfiguration{BlockPublicAcls: aws.Bool(true), IgnorePublicAcls: aws.Bool(true)}}); err != nil {
		t.Fatal("PutPublicAccessBlock:", err)
	}
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}
	s = startIn(t, dir)
	c = s.root()
	pab, err := c.GetPublicAccessBlock(ctx(t), &s3.GetPublicAccessBlockInput{Bucket: aws.String(b)})
	if err != nil || !aws.ToBool(pab.PublicAccessBlockConfiguration.BlockPublicAcls) || !aws.ToBool(pab.PublicAccessBlockConfiguration.IgnorePublicAcls) ||
		aws.ToBool(pab.PublicAccessBlockConfiguration.BlockPublicPolicy) || aws.ToBool(pab.PublicAccessBlockConfiguration.RestrictPublicBuckets) {
		t.Fatalf("GetPublicAccessBlock after restart: %+v %v", pab, err)
	}
	_, err = c.PutObject(ctx(t), &s3.PutObjectInput{Bucket: aws.String(b), Key: aws.String("pub"), Body: bytes.NewReader(nil), ACL: types.ObjectCannedACLPublicRead})
	wantCode(t, err, "AccessDenied", 403)
	if _, err := c.DeletePublicAccessBlock(ctx(t), &s3.DeletePublicAccessBlockInput{Bucket: aws.String(b)}); err != nil {
		t.Fatal("DeletePublicAccessBlock:", err)
	}
	if _, err := c.PutObject(ctx(t), &s3.PutObjectInput{Bucket: aws.String(b), Key: aws.String("pub"), Body: bytes.NewReader([]byte("p")),
		ACL: types.ObjectCannedACLPublicRead}); err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(s.endpoint + "/" + b + "/pub")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("anonymous GET of a public-read object: %d", resp.StatusCode)
	}

	// BucketOwnerEnforced: ACLs off.
	const enf = "enforced-bucket"
	if _, err := c.CreateBucket(ctx(t), &s3.CreateBucketInput{Bucket: aws.String(enf), ObjectOwnership: types.ObjectOwnershipBucketOwnerEnforced}); err != nil {
		t.Fatal("CreateBucket with ObjectOwnership:", err)
	}
	_, err = c.PutObject(ctx(t), &s3.PutObjectInput{Bucket: aws.String(enf), Key: aws.String("k"), Body: bytes.NewReader(nil), ACL: types.ObjectCannedACLPublicRead})
	wantCode(t, err, "AccessControlListNotSupported", 400)
	if _, err := c.PutObject(ctx(t), &s3.PutObjectInput{Bucket: aws.String(enf), Key: aws.String("k"), Body: bytes.NewReader(nil),
		ACL: types.ObjectCannedACLBucketOwnerFullControl}); err != nil {
		t.Fatal("PutObject with bucket-owner-full-control:", err)
	}
	_, err = c.CreateBucket(ctx(t), &s3.CreateBucketInput{Bucket: aws.String("enforced-public"), ACL: types.BucketCannedACLPublicRead,
		ObjectOwnership: types.ObjectOwnershipBucketOwnerEnforced})
	wantCode(t, err, "InvalidBucketAclWithObjectOwnership", 400)
}
