package minioformat

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"time"
)

// BucketMetadata is the content of .minio.sys/buckets/<bucket>/.metadata.bin
// (itself an object of the .minio.sys volume, stored with an xl.meta like
// any other and usually inline): a 4-byte header, then a msgpack map of the
// bucket's configuration documents, each kept as the XML or JSON that S3
// (or MinIO's admin API) received.
type BucketMetadata struct {
	Name        string
	Created     time.Time
	LockEnabled bool // legacy flag; the object lock XML is what counts
	// Configuration documents, nil where absent.
	Policy        []byte // bucket policy, JSON
	Notification  []byte // XML
	Lifecycle     []byte // XML
	ObjectLock    []byte // XML
	Versioning    []byte // XML
	Encryption    []byte // default encryption, XML
	Tagging       []byte // XML
	Quota         []byte // JSON (MinIO admin API)
	Replication   []byte // XML
	Targets       []byte // remote targets, JSON, encrypted when TargetsMeta is set
	TargetsMeta   []byte // JSON: how Targets was sealed with the KMS
	UpdatedAt     map[string]time.Time
	Unknown       []string
	FormatVersion uint16
}

// bucketDocs maps the msgpack field names to the documents.
func (b *BucketMetadata) doc(name string) *[]byte {
	switch name {
	case "PolicyConfigJSON":
		return &b.Policy
	case "NotificationConfigXML":
		return &b.Notification
	case "LifecycleConfigXML":
		return &b.Lifecycle
	case "ObjectLockConfigXML":
		return &b.ObjectLock
	case "VersioningConfigXML":
		return &b.Versioning
	case "EncryptionConfigXML":
		return &b.Encryption
	case "TaggingConfigXML":
		return &b.Tagging
	case "QuotaConfigJSON":
		return &b.Quota
	case "ReplicationConfigXML":
		return &b.Replication
	case "BucketTargetsConfigJSON":
		return &b.Targets
	case "BucketTargetsConfigMetaJSON":
		return &b.TargetsMeta
	}
	return nil
}

// DecodeBucketMetadata decodes the bytes of a .metadata.bin object (after
// reading it through its xl.meta, e.g. with DecodePart).
func DecodeBucketMetadata(data []byte) (*BucketMetadata, error) {
	if len(data) <= 4 {
		return nil, corruptf("bucket metadata of %d bytes", len(data))
	}
	if f := binary.LittleEndian.Uint16(data[0:2]); f != 1 {
		return nil, unsupportedf("bucket metadata format %d", f)
	}
	b := &BucketMetadata{FormatVersion: binary.LittleEndian.Uint16(data[2:4]), UpdatedAt: map[string]time.Time{}}
	if b.FormatVersion != 1 {
		return nil, unsupportedf("bucket metadata version %d", b.FormatVersion)
	}
	r := &mpReader{b: data[4:]}
	n, err := r.mapLen()
	if err != nil {
		return nil, err
	}
	for range n {
		k, err := r.key()
		if err != nil {
			return nil, err
		}
		switch {
		case k == "Name":
			b.Name, err = r.str()
		case k == "Created":
			b.Created, err = r.time()
		case k == "LockEnabled":
			b.LockEnabled, err = r.bool()
		case b.doc(k) != nil:
			var v []byte
			v, err = r.bin()
			if len(v) > 0 {
				*b.doc(k) = bytes.Clone(v)
			}
		case len(k) > len("UpdatedAt") && k[len(k)-len("UpdatedAt"):] == "UpdatedAt":
			var t time.Time
			t, err = r.time()
			b.UpdatedAt[k[:len(k)-len("UpdatedAt")]] = t
		default:
			b.Unknown = append(b.Unknown, k)
			err = r.skip()
		}
		if err != nil {
			return nil, fmt.Errorf("bucket metadata %s: %w", k, err)
		}
	}
	if r.left() != 0 {
		return nil, corruptf("%d bytes after the bucket metadata", r.left())
	}
	return b, nil
}
