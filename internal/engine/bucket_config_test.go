package engine

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/shardstore/shardstore/internal/drive"
)

// TestBucketConfig: configuration documents are stored in the bucket
// record, survive a restart, are removed with "", leave other settings
// alone, and legacy records without them still load.
func TestBucketConfig(t *testing.T) {
	ctx := context.Background()
	e, paths := testEngine(t, 4, Config{Heal: HealConfig{Disabled: true}})
	if err := e.MakeBucket(ctx, "cfg", BucketOptions{Owner: "o", Location: "eu-west-1"}); err != nil {
		t.Fatal(err)
	}
	// MakeBucket stores the first ownership controls document and the
	// ACL string (whatever the S3 layer encoded) in the bucket's record.
	if err := e.MakeBucket(ctx, "owned", BucketOptions{Owner: "o", ACL: "grants:[]",
		OwnershipControls: "<OwnershipControls>x</OwnershipControls>"}); err != nil {
		t.Fatal(err)
	}
	legacy, _ := json.Marshal(map[string]any{"name": "old-bucket", "created": time.Now().UTC(), "owner": "o", "acl": "private"})
	for _, d := range e.allDrives() {
		b := &drive.Batch{}
		b.Put(drive.TableBuckets, "old-bucket", legacy)
		if err := d.Apply(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	for which, doc := range map[BucketConfig]string{
		BucketConfigCORS: "<CORSConfiguration/>", BucketConfigOwnershipControls: "<OwnershipControls/>",
		BucketConfigWebsite: "<WebsiteConfiguration/>", BucketConfigPolicy: `{"Statement":[]}`,
		BucketConfigPublicAccessBlock: "<PublicAccessBlockConfiguration/>",
	} {
		if err := e.SetBucketConfig(ctx, "cfg", which, doc); err != nil {
			t.Fatal(which, err)
		}
	}
	if err := e.SetBucketConfig(ctx, "cfg", BucketConfigWebsite, ""); err != nil {
		t.Fatal(err)
	}
	if err := e.SetBucketConfig(ctx, "cfg", "bogus", "x"); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("unknown config: %v", err)
	}
	if err := e.SetBucketConfig(ctx, "missing", BucketConfigCORS, "x"); !errors.Is(err, ErrBucketNotFound) {
		t.Fatalf("missing bucket: %v", err)
	}
	if err := e.SetBucketACL(ctx, "cfg", "public-read"); err != nil {
		t.Fatal(err)
	}
	e.Close()

	e2, err := New(Config{Paths: paths, Heal: HealConfig{Disabled: true}})
	if err != nil {
		t.Fatal(err)
	}
	defer e2.Close()
	bi, err := e2.BucketInfo(ctx, "cfg")
	if err != nil || bi.CORS != "<CORSConfiguration/>" || bi.OwnershipControls != "<OwnershipControls/>" || bi.Policy != `{"Statement":[]}` ||
		bi.PublicAccessBlock != "<PublicAccessBlockConfiguration/>" ||
		bi.Website != "" || bi.ACL != "public-read" || bi.Location != "eu-west-1" {
		t.Fatalf("after restart: %+v %v", bi, err)
	}
	owned, err := e2.BucketInfo(ctx, "owned")
	if err != nil || owned.OwnershipControls != "<OwnershipControls>x</OwnershipControls>" || owned.ACL != "grants:[]" {
		t.Fatalf("bucket created with ownership controls, after restart: %+v %v", owned, err)
	}
	old, err := e2.BucketInfo(ctx, "old-bucket")
	if err != nil || old.CORS != "" || old.PublicAccessBlock != "" || old.Owner != "o" {
		t.Fatalf("legacy bucket: %+v %v", old, err)
	}
	ents, err := e2.allDrives()[0].Scan(ctx, drive.TableBuckets, drive.ScanQuery{Prefix: "cfg"})
	if err != nil || len(ents) != 1 {
		t.Fatal(ents, err)
	}
	var m map[string]any
	if err := json.Unmarshal(ents[0].Value, &m); err != nil {
		t.Fatal(err)
	}
	if _, ok := m["website"]; ok {
		t.Fatalf("removed document still recorded: %v", m)
	}
}
