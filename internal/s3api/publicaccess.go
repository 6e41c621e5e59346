package s3api

// Public access blocks: Put/Get/DeletePublicAccessBlock store a bucket's
// PublicAccessBlockConfiguration in its record (like the other
// configuration documents), and access decisions honour it as S3 does:
//
//   - BlockPublicAcls: a request that sets a public ACL (one granting
//     anything to AllUsers or AuthenticatedUsers: public-read,
//     public-read-write, authenticated-read, or such x-amz-grant-* headers
//     or AccessControlPolicy grants) on the bucket or an object in it
//     answers 403 AccessDenied: PutBucketAcl, PutObjectAcl, PutObject,
//     CopyObject, CreateMultipartUpload and form uploads.
//   - IgnorePublicAcls: such grants on the bucket and its objects count
//     for nothing (holds in acl.go); they are still stored and shown.
//   - BlockPublicPolicy: PutBucketPolicy with a public policy (as
//     GetBucketPolicyStatus judges it) answers 403 AccessDenied.
//   - RestrictPublicBuckets: while the bucket's policy is public, its Allow
//     statements grant only the bucket's owner (and root, who needs none):
//     not anonymous callers, not other users (policyGrantCounts, asked by
//     allows).
//
// Nothing already stored is changed: deleting the configuration restores
// what the ACLs and the policy grant. shardstore has no accounts, so there
// is no account-level block; the bucket's is the only one.

import (
	"encoding/xml"
	"net/http"

	"github.com/shardstore/shardstore/internal/engine"
	"github.com/shardstore/shardstore/internal/policy"
)

// publicAccessBlock is a bucket's public access block as decisions read
// it; the zero value blocks nothing.
type publicAccessBlock struct {
	BlockPublicAcls       bool `xml:"BlockPublicAcls"`
	IgnorePublicAcls      bool `xml:"IgnorePublicAcls"`
	BlockPublicPolicy     bool `xml:"BlockPublicPolicy"`
	RestrictPublicBuckets bool `xml:"RestrictPublicBuckets"`
}

// xmlPublicAccessBlock is the PublicAccessBlockConfiguration document.
type xmlPublicAccessBlock struct {
	XMLName xml.Name `xml:"PublicAccessBlockConfiguration"`
	NS      string   `xml:"xmlns,attr,omitempty"`
	publicAccessBlock
}

// storedPublicAccessBlocks maps each stored (canonical) document, one
// per combination of the four settings, to its settings, so that access
// decisions never parse XML.
var storedPublicAccessBlocks = func() map[string]publicAccessBlock {
	m := map[string]publicAccessBlock{}
	for i := range 16 {
		p := publicAccessBlock{i&1 != 0, i&2 != 0, i&4 != 0, i&8 != 0}
		out, err := xml.Marshal(&xmlPublicAccessBlock{publicAccessBlock: p})
		if err != nil {
			panic(err)
		}
		m[string(out)] = p
	}
	return m
}()

// blockEverything stands in for a stored document that cannot be read.
var blockEverything = publicAccessBlock{true, true, true, true}

// publicAccessBlockOf is bi's public access block.
func publicAccessBlockOf(bi engine.BucketInfo) publicAccessBlock {
	if bi.PublicAccessBlock == "" {
		return publicAccessBlock{}
	}
	if p, ok := storedPublicAccessBlocks[bi.PublicAccessBlock]; ok {
		return p
	}
	var cfg xmlPublicAccessBlock
	if xml.Unmarshal([]byte(bi.PublicAccessBlock), &cfg) != nil {
		return blockEverything
	}
	return cfg.publicAccessBlock
}

// checkPublicACL refuses a public ACL on bi (or an object in it) when
// the bucket blocks public ACLs.
func checkPublicACL(bi engine.BucketInfo, a requestedACL, onObject bool) error {
	if publicAccessBlockOf(bi).BlockPublicAcls && a.public(onObject) {
		return errAccessDenied()
	}
	return nil
}

// checkPublicPolicy refuses a public policy for bi when the bucket
// blocks public policies.
func checkPublicPolicy(bi engine.BucketInfo, p *policy.Policy) error {
	if publicAccessBlockOf(bi).BlockPublicPolicy && p.IsPublic() {
		return errAccessDenied()
	}
	return nil
}

// policyGrantCounts reports whether an Allow of r's bucket policy grants
// c anything: always, except that RestrictPublicBuckets confines a public
// policy's grants to the bucket's owner.
func policyGrantCounts(c Caller, r resource) bool {
	return !r.Access.RestrictPublicBuckets || !r.Policy.IsPublic() || isUser(c, r.BucketOwner)
}

func handlePutPublicAccessBlock(q *request) error {
	if _, err := q.bucketAccess(q.bucket, opBucketAdmin); err != nil {
		return err
	}
	body, err := q.readConfigBody(true)
	if err != nil {
		return err
	}
	var cfg xmlPublicAccessBlock
	if err := xml.Unmarshal(body, &cfg); err != nil {
		return errMalformedXML()
	}
	cfg.NS = ""
	if err := q.storeConfig(engine.BucketConfigPublicAccessBlock, &cfg); err != nil {
		return err
	}
	q.writeEmpty(http.StatusOK)
	return nil
}

func handleGetPublicAccessBlock(q *request) error {
	bi, err := q.bucketAccess(q.bucket, opBucketAdmin)
	if err != nil {
		return err
	}
	if bi.PublicAccessBlock == "" {
		return errorf("NoSuchPublicAccessBlockConfiguration", http.StatusNotFound,
			"The public access block configuration was not found")
	}
	q.writeXML(xmlPublicAccessBlock{NS: s3NS, publicAccessBlock: publicAccessBlockOf(bi)})
	return nil
}

func handleDeletePublicAccessBlock(q *request) error {
	if _, err := q.bucketAccess(q.bucket, opBucketAdmin); err != nil {
		return err
	}
	if err := q.storeConfig(engine.BucketConfigPublicAccessBlock, nil); err != nil {
		return err
	}
	q.writeEmpty(http.StatusNoContent)
	return nil
}
