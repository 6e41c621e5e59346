package engine

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/shardstore/shardstore/internal/drive"
)

// TestBucketLocation: a bucket's region is recorded, survives a restart, and
// records written before regions were recorded still load (Location "").
func TestBucketLocation(t *testing.T) {
	ctx := context.Background()
	e, paths := testEngine(t, 4, Config{Heal: HealConfig{Disabled: true}})
	if err := e.MakeBucket(ctx, "eu-bucket", BucketOptions{Owner: "o", Location: "eu-west-1"}); err != nil {
		t.Fatal(err)
	}
	// A record as older versions wrote it: no "location" field.
	legacy, _ := json.Marshal(map[string]any{"name": "old-bucket", "created": time.Now().UTC(), "owner": "o", "acl": "private"})
	for _, d := range e.allDrives() {
		b := &drive.Batch{}
		b.Put(drive.TableBuckets, "old-bucket", legacy)
		if err := d.Apply(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.SetBucketACL(ctx, "eu-bucket", "public-read"); err != nil {
		t.Fatal(err)
	}
	e.Close()

	e2, err := New(Config{Paths: paths, Heal: HealConfig{Disabled: true}})
	if err != nil {
		t.Fatal(err)
	}
	defer e2.Close()
	bi, err := e2.BucketInfo(ctx, "eu-bucket")
	if err != nil || bi.Location != "eu-west-1" || bi.ACL != "public-read" {
		t.Fatalf("eu-bucket after restart: %+v %v", bi, err)
	}
	old, err := e2.BucketInfo(ctx, "old-bucket")
	if err != nil || old.Location != "" || old.Owner != "o" {
		t.Fatalf("legacy bucket: %+v %v", old, err)
	}
	plain, err := e2.BucketInfo(ctx, "bucket")
	if err != nil || plain.Location != "" {
		t.Fatalf("bucket made without a location: %+v %v", plain, err)
	}
	// The record on disk carries the field only when set.
	ents, err := e2.allDrives()[0].Scan(ctx, drive.TableBuckets, drive.ScanQuery{})
	if err != nil {
		t.Fatal(err)
	}
	for _, ent := range ents {
		var m map[string]any
		if err := json.Unmarshal(ent.Value, &m); err != nil {
			t.Fatal(err)
		}
		_, has := m["location"]
		if has != (ent.Key == "eu-bucket") {
			t.Errorf("record %s: %s", ent.Key, ent.Value)
		}
	}
}
