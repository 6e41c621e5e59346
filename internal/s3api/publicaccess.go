package s3api

// Public access blocks: Put/Get/DeletePublicAccessBlock store a bucket's
// PublicAccessBlockConfiguration in its record (like the other
// configuration documents); access.PublicAccessBlock says what each
// setting does, and decisions honour it: BlockPublicAcls and
// BlockPublicPolicy are asked here as an ACL or policy is stored
// (checkPublicACL, checkPublicPolicy), IgnorePublicAcls and
// RestrictPublicBuckets by access.Decide. Nothing already stored is
// changed: deleting the configuration restores what the ACLs and the
// policy grant.

import (
	"encoding/xml"
	"net/http"

	"github.com/shardstore/shardstore/internal/access"
	"github.com/shardstore/shardstore/internal/engine"
	"github.com/shardstore/shardstore/internal/policy"
)

// xmlPublicAccessBlock is the PublicAccessBlockConfiguration document;
// its elements are the embedded access.PublicAccessBlock's field names.
type xmlPublicAccessBlock struct {
	XMLName xml.Name `xml:"PublicAccessBlockConfiguration"`
	NS      string   `xml:"xmlns,attr,omitempty"`
	access.PublicAccessBlock
}

// storedPublicAccessBlocks maps each stored (canonical) document, one
// per combination of the four settings, to its settings, so that access
// decisions never parse XML.
var storedPublicAccessBlocks = func() map[string]access.PublicAccessBlock {
	m := map[string]access.PublicAccessBlock{}
	for i := range 16 {
		p := access.PublicAccessBlock{BlockPublicAcls: i&1 != 0, IgnorePublicAcls: i&2 != 0,
			BlockPublicPolicy: i&4 != 0, RestrictPublicBuckets: i&8 != 0}
		out, err := xml.Marshal(&xmlPublicAccessBlock{PublicAccessBlock: p})
		if err != nil {
			panic(err)
		}
		m[string(out)] = p
	}
	return m
}()

// blockEverything stands in for a stored document that cannot be read.
var blockEverything = access.PublicAccessBlock{BlockPublicAcls: true, IgnorePublicAcls: true,
	BlockPublicPolicy: true, RestrictPublicBuckets: true}

// publicAccessBlockOf is bi's public access block.
func publicAccessBlockOf(bi engine.BucketInfo) access.PublicAccessBlock {
	if bi.PublicAccessBlock == "" {
		return access.PublicAccessBlock{}
	}
	if p, ok := storedPublicAccessBlocks[bi.PublicAccessBlock]; ok {
		return p
	}
	var cfg xmlPublicAccessBlock
	if xml.Unmarshal([]byte(bi.PublicAccessBlock), &cfg) != nil {
		return blockEverything
	}
	return cfg.PublicAccessBlock
}

// checkPublicACL refuses a public ACL on bi (or an object in it) when
// the bucket blocks public ACLs.
func checkPublicACL(bi engine.BucketInfo, a requestedACL, onObject bool) error {
	if publicAccessBlockOf(bi).RefusesACL(a.grantList(onObject)) {
		return errAccessDenied()
	}
	return nil
}

// checkPublicPolicy refuses a public policy for bi when the bucket
// blocks public policies.
func checkPublicPolicy(bi engine.BucketInfo, p *policy.Policy) error {
	if publicAccessBlockOf(bi).RefusesPolicy(p) {
		return errAccessDenied()
	}
	return nil
}

func handlePutPublicAccessBlock(q *request) error {
	if _, err := q.bucketAccess(q.bucket, access.BucketAdmin); err != nil {
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
	bi, err := q.bucketAccess(q.bucket, access.BucketAdmin)
	if err != nil {
		return err
	}
	if bi.PublicAccessBlock == "" {
		return errorf("NoSuchPublicAccessBlockConfiguration", http.StatusNotFound,
			"The public access block configuration was not found")
	}
	q.writeXML(xmlPublicAccessBlock{NS: s3NS, PublicAccessBlock: publicAccessBlockOf(bi)})
	return nil
}

func handleDeletePublicAccessBlock(q *request) error {
	if _, err := q.bucketAccess(q.bucket, access.BucketAdmin); err != nil {
		return err
	}
	if err := q.storeConfig(engine.BucketConfigPublicAccessBlock, nil); err != nil {
		return err
	}
	q.writeEmpty(http.StatusNoContent)
	return nil
}
