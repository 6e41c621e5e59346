package migrate

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strconv"

	"github.com/shardstore/shardstore/internal/engine"
	"github.com/shardstore/shardstore/internal/lifecycle"
	"github.com/shardstore/shardstore/internal/minioformat"
	"github.com/shardstore/shardstore/internal/objectlock"
)

// bucketInfo builds the bucket's record from its .metadata.bin.
func (a *adopter) bucketInfo(bucket string) (engine.BucketInfo, error) {
	info := engine.BucketInfo{Name: bucket, Owner: a.opts.Owner, ACL: "private"}
	data, found, err := a.readSysObject(filepath.Join("buckets", bucket, ".metadata.bin"))
	if err != nil {
		return info, fmt.Errorf("bucket metadata: %w", err)
	}
	if !found {
		// A bucket MinIO never configured: created, nothing else.
		if fi, err := a.stat(filepath.Join(a.paths[0], bucket)); err == nil {
			info.Created = fi.ModTime().UTC()
		}
		return info, nil
	}
	bm, err := minioformat.DecodeBucketMetadata(data)
	if err != nil {
		return info, fmt.Errorf("bucket metadata: %w", err)
	}
	info.Created = bm.Created.UTC()
	if len(bm.Versioning) > 0 {
		var v struct {
			Status string `xml:"Status"`
		}
		if err := xml.Unmarshal(bm.Versioning, &v); err != nil {
			return info, fmt.Errorf("versioning configuration: %w", err)
		}
		switch v.Status {
		case engine.VersioningEnabled, engine.VersioningSuspended:
			info.Versioning = v.Status
		case "":
		default:
			return info, fmt.Errorf("versioning status %q not understood", v.Status)
		}
	}
	if len(bm.ObjectLock) > 0 {
		c, err := objectlock.Parse(bm.ObjectLock)
		if err != nil {
			return info, fmt.Errorf("object lock configuration: %w", err)
		}
		info.ObjectLock = c.Marshal("")
		info.Versioning = engine.VersioningEnabled
	}
	if len(bm.Policy) > 0 {
		info.Policy = string(bm.Policy)
	}
	if len(bm.Lifecycle) > 0 {
		c, err := lifecycle.Parse(bm.Lifecycle)
		if err != nil {
			return info, fmt.Errorf("lifecycle configuration: %w", err)
		}
		c.NS = ""
		out, err := xml.Marshal(c)
		if err != nil {
			return info, fmt.Errorf("lifecycle configuration: %w", err)
		}
		info.Lifecycle = string(out)
	}
	if len(bm.Tagging) > 0 {
		doc, err := canonicalTagging(bm.Tagging)
		if err != nil {
			return info, fmt.Errorf("tagging configuration: %w", err)
		}
		info.Tagging = doc
	}
	// Documents shardstore has no equivalent for are reported, not kept.
	for name, doc := range map[string][]byte{"notification": bm.Notification, "replication": bm.Replication,
		"quota": bm.Quota, "encryption": bm.Encryption, "remote targets": bm.Targets} {
		if len(doc) > 0 {
			a.refuse(bucket, "", "bucket "+name+" configuration not adopted (no equivalent yet); the bucket is adopted without it")
		}
	}
	return info, nil
}

type xmlTagging struct {
	XMLName xml.Name `xml:"Tagging"`
	TagSet  []xmlTag `xml:"TagSet>Tag"`
}

type xmlTag struct {
	Key   string `xml:"Key"`
	Value string `xml:"Value"`
}

// canonicalTagging re-encodes a Tagging document the way shardstore's S3
// layer stores one (no namespace, tags sorted by key).
func canonicalTagging(doc []byte) (string, error) {
	var t xmlTagging
	if err := xml.Unmarshal(doc, &t); err != nil {
		return "", err
	}
	if len(t.TagSet) == 0 {
		return "", nil
	}
	sort.Slice(t.TagSet, func(i, j int) bool { return t.TagSet[i].Key < t.TagSet[j].Key })
	t.XMLName = xml.Name{}
	out, err := xml.Marshal(t)
	return string(out), err
}

// readSysObject reads an object of MinIO's .minio.sys volume (path
// relative to it) from its drives' xl.meta, decoding the erasure code.
// It lives in the set MinIO's placement picks for its name, like any
// object.
func (a *adopter) readPoolSysObject(rel string) ([]byte, bool, error) {
	data, _, found, err := a.readPoolSysObjectAt(rel)
	return data, found, err
}

// readPoolSysObjectAt is readPoolSysObject with the version's
// modification time (MinIO's xl.meta time), for choosing between pools.
func (a *adopter) readPoolSysObjectAt(rel string) ([]byte, int64, bool, error) {
	paths := a.setPaths(a.setOf(minioSys, rel))
	metas := make([]*minioformat.Meta, len(paths))
	found := 0
	for i, p := range paths {
		raw, err := a.readFile(filepath.Join(p, minioSys, rel, "xl.meta"))
		if err != nil {
			continue
		}
		if m, err := minioformat.Decode(raw); err == nil && len(m.Versions) > 0 && m.Versions[0].Object != nil {
			metas[i] = m
			found++
		}
	}
	if found == 0 {
		return nil, 0, false, nil
	}
	var obj *minioformat.Object
	var shards []io.Reader
	for i, m := range metas {
		if m == nil {
			continue
		}
		o := m.Versions[0].Object
		if obj == nil {
			obj = o
			shards = make([]io.Reader, o.DataBlocks+o.ParityBlocks)
		}
		if o.Index < 1 || o.Index > len(shards) || o.ModTime != obj.ModTime {
			continue
		}
		if o.Inline() {
			shards[o.Index-1] = bytes.NewReader(m.InlineData(m.Versions[0].ID()))
		} else if len(o.Parts) == 1 {
			f, err := a.open(filepath.Join(paths[i], minioSys, rel, o.DataDirString(), "part."+strconv.Itoa(o.Parts[0].Number)))
			if err == nil {
				defer f.Close()
				shards[o.Index-1] = f
			}
		}
	}
	if obj.Encrypted() || obj.Compressed() {
		return nil, 0, true, fmt.Errorf("%s is encrypted or compressed", rel)
	}
	var buf bytes.Buffer
	if err := minioformat.DecodePart(&buf, obj, 0, shards); err != nil {
		return nil, 0, true, fmt.Errorf("%s: %w", rel, err)
	}
	return buf.Bytes(), obj.ModTime, true, nil
}
