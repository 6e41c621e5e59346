package s3api

import (
	"encoding/xml"
	"time"

	"github.com/shardstore/shardstore/internal/access"
)

// s3NS is the namespace S3 puts on its response documents.
const s3NS = "http://s3.amazonaws.com/doc/2006-03-01/"

// isoTime formats a time the way S3 does in XML bodies.
func isoTime(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05.000Z")
}

// canonicalID is the canonical user id of an access key: a stable
// 64-hex-digit id, so owner ids look like S3's without revealing the
// key. ACL grants name users by it, so package access defines it.
func canonicalID(accessKey string) string { return access.CanonicalID(accessKey) }

type xmlOwner struct {
	ID          string `xml:"ID"`
	DisplayName string `xml:"DisplayName"`
}

func ownerOf(accessKey string) *xmlOwner {
	return &xmlOwner{ID: canonicalID(accessKey), DisplayName: accessKey}
}

type xmlError struct {
	XMLName    xml.Name `xml:"Error"`
	Code       string   `xml:"Code"`
	Message    string   `xml:"Message"`
	BucketName string   `xml:"BucketName,omitempty"`
	Key        string   `xml:"Key,omitempty"`
	Resource   string   `xml:"Resource"`
	RequestID  string   `xml:"RequestId"`
	HostID     string   `xml:"HostId"`
}

type xmlBucket struct {
	Name         string `xml:"Name"`
	CreationDate string `xml:"CreationDate"`
	BucketRegion string `xml:"BucketRegion,omitempty"`
}

type xmlListAllMyBuckets struct {
	XMLName           xml.Name    `xml:"ListAllMyBucketsResult"`
	NS                string      `xml:"xmlns,attr"`
	Owner             *xmlOwner   `xml:"Owner"`
	Buckets           []xmlBucket `xml:"Buckets>Bucket"`
	ContinuationToken string      `xml:"ContinuationToken,omitempty"`
	Prefix            string      `xml:"Prefix,omitempty"`
}

type xmlCreateBucketConfiguration struct {
	XMLName            xml.Name `xml:"CreateBucketConfiguration"`
	LocationConstraint string   `xml:"LocationConstraint"`
}

type xmlLocationConstraint struct {
	XMLName xml.Name `xml:"LocationConstraint"`
	NS      string   `xml:"xmlns,attr"`
	Region  string   `xml:",chardata"`
}

type xmlObject struct {
	Key               xmlText   `xml:"Key"`
	LastModified      string    `xml:"LastModified"`
	ETag              string    `xml:"ETag"`
	ChecksumAlgorithm string    `xml:"ChecksumAlgorithm,omitempty"`
	ChecksumType      string    `xml:"ChecksumType,omitempty"`
	Size              int64     `xml:"Size"`
	StorageClass      string    `xml:"StorageClass"`
	Owner             *xmlOwner `xml:"Owner,omitempty"`
}

type xmlPrefix struct {
	Prefix xmlText `xml:"Prefix"`
}

type xmlListBucketV1 struct {
	XMLName        xml.Name    `xml:"ListBucketResult"`
	NS             string      `xml:"xmlns,attr"`
	Name           string      `xml:"Name"`
	Prefix         xmlText     `xml:"Prefix"`
	Marker         xmlText     `xml:"Marker"`
	NextMarker     xmlText     `xml:"NextMarker,omitempty"`
	MaxKeys        int         `xml:"MaxKeys"`
	Delimiter      xmlText     `xml:"Delimiter,omitempty"`
	EncodingType   string      `xml:"EncodingType,omitempty"`
	IsTruncated    bool        `xml:"IsTruncated"`
	Contents       []xmlObject `xml:"Contents"`
	CommonPrefixes []xmlPrefix `xml:"CommonPrefixes"`
}

type xmlListBucketV2 struct {
	XMLName               xml.Name    `xml:"ListBucketResult"`
	NS                    string      `xml:"xmlns,attr"`
	Name                  string      `xml:"Name"`
	Prefix                xmlText     `xml:"Prefix"`
	StartAfter            xmlText     `xml:"StartAfter,omitempty"`
	ContinuationToken     *string     `xml:"ContinuationToken"` // echoed when sent, even empty
	NextContinuationToken string      `xml:"NextContinuationToken,omitempty"`
	KeyCount              int         `xml:"KeyCount"`
	MaxKeys               int         `xml:"MaxKeys"`
	Delimiter             xmlText     `xml:"Delimiter,omitempty"`
	EncodingType          string      `xml:"EncodingType,omitempty"`
	IsTruncated           bool        `xml:"IsTruncated"`
	Contents              []xmlObject `xml:"Contents"`
	CommonPrefixes        []xmlPrefix `xml:"CommonPrefixes"`
}

// xmlVersion is one entry of ListObjectVersions: XMLName is Version or
// DeleteMarker (which has no ETag, Size or StorageClass). Both kinds
// share one slice so that they keep the engine's order (each key's
// versions newest first, markers among them) instead of being grouped
// by kind, as two slices would marshal them.
type xmlVersion struct {
	XMLName           xml.Name
	Key               xmlText   `xml:"Key"`
	VersionID         string    `xml:"VersionId"`
	IsLatest          bool      `xml:"IsLatest"`
	LastModified      string    `xml:"LastModified"`
	ETag              string    `xml:"ETag,omitempty"`
	ChecksumAlgorithm string    `xml:"ChecksumAlgorithm,omitempty"`
	ChecksumType      string    `xml:"ChecksumType,omitempty"`
	Size              *int64    `xml:"Size,omitempty"`
	StorageClass      string    `xml:"StorageClass,omitempty"`
	Owner             *xmlOwner `xml:"Owner,omitempty"`
}

// The element names of ListObjectVersions entries.
var (
	xmlNameVersion      = xml.Name{Local: "Version"}
	xmlNameDeleteMarker = xml.Name{Local: "DeleteMarker"}
)

type xmlListVersions struct {
	XMLName             xml.Name `xml:"ListVersionsResult"`
	NS                  string   `xml:"xmlns,attr"`
	Name                string   `xml:"Name"`
	Prefix              xmlText  `xml:"Prefix"`
	KeyMarker           xmlText  `xml:"KeyMarker"`
	VersionIDMarker     string   `xml:"VersionIdMarker"`
	NextKeyMarker       xmlText  `xml:"NextKeyMarker,omitempty"`
	NextVersionIDMarker string   `xml:"NextVersionIdMarker,omitempty"`
	MaxKeys             int      `xml:"MaxKeys"`
	Delimiter           xmlText  `xml:"Delimiter,omitempty"`
	EncodingType        string   `xml:"EncodingType,omitempty"`
	IsTruncated         bool     `xml:"IsTruncated"`
	// Entries are Version and DeleteMarker elements, by their XMLName.
	Entries        []xmlVersion `xml:",any"`
	CommonPrefixes []xmlPrefix  `xml:"CommonPrefixes"`
}

type xmlDeleteRequest struct {
	XMLName xml.Name          `xml:"Delete"`
	Quiet   bool              `xml:"Quiet"`
	Objects []xmlDeleteObject `xml:"Object"`
}

// xmlDeleteObject is one key of a DeleteObjects request; ETag,
// LastModifiedTime and Size make its delete conditional.
type xmlDeleteObject struct {
	Key              string `xml:"Key"`
	VersionID        string `xml:"VersionId"`
	ETag             string `xml:"ETag"`
	LastModifiedTime string `xml:"LastModifiedTime"`
	Size             string `xml:"Size"`
}

type xmlDeleted struct {
	Key                   string `xml:"Key"`
	VersionID             string `xml:"VersionId,omitempty"`
	DeleteMarker          bool   `xml:"DeleteMarker,omitempty"`
	DeleteMarkerVersionID string `xml:"DeleteMarkerVersionId,omitempty"`
}

type xmlDeleteError struct {
	Key       string `xml:"Key"`
	VersionID string `xml:"VersionId,omitempty"`
	Code      string `xml:"Code"`
	Message   string `xml:"Message"`
}

type xmlDeleteResult struct {
	XMLName xml.Name         `xml:"DeleteResult"`
	NS      string           `xml:"xmlns,attr"`
	Deleted []xmlDeleted     `xml:"Deleted"`
	Errors  []xmlDeleteError `xml:"Error"`
}

type xmlCopyObjectResult struct {
	XMLName      xml.Name `xml:"CopyObjectResult"`
	NS           string   `xml:"xmlns,attr"`
	LastModified string   `xml:"LastModified"`
	ETag         string   `xml:"ETag"`
	xmlChecksums
	ChecksumType string `xml:"ChecksumType,omitempty"`
}

type xmlCopyPartResult struct {
	XMLName      xml.Name `xml:"CopyPartResult"`
	NS           string   `xml:"xmlns,attr"`
	LastModified string   `xml:"LastModified"`
	ETag         string   `xml:"ETag"`
	xmlChecksums
}

type xmlInitiateMultipart struct {
	XMLName  xml.Name `xml:"InitiateMultipartUploadResult"`
	NS       string   `xml:"xmlns,attr"`
	Bucket   string   `xml:"Bucket"`
	Key      string   `xml:"Key"`
	UploadID string   `xml:"UploadId"`
}

// xmlChecksums is the set of checksum elements S3 uses in part lists.
type xmlChecksums struct {
	ChecksumCRC32     string `xml:"ChecksumCRC32,omitempty"`
	ChecksumCRC32C    string `xml:"ChecksumCRC32C,omitempty"`
	ChecksumCRC64NVME string `xml:"ChecksumCRC64NVME,omitempty"`
	ChecksumSHA1      string `xml:"ChecksumSHA1,omitempty"`
	ChecksumSHA256    string `xml:"ChecksumSHA256,omitempty"`
	ChecksumMD5       string `xml:"ChecksumMD5,omitempty"`
	ChecksumSHA512    string `xml:"ChecksumSHA512,omitempty"`
	ChecksumXXHASH64  string `xml:"ChecksumXXHASH64,omitempty"`
	ChecksumXXHASH3   string `xml:"ChecksumXXHASH3,omitempty"`
	ChecksumXXHASH128 string `xml:"ChecksumXXHASH128,omitempty"`
}

// fields pairs each algorithm with its element.
func (c *xmlChecksums) fields() []struct {
	alg string
	v   *string
} {
	return []struct {
		alg string
		v   *string
	}{
		{"CRC32", &c.ChecksumCRC32}, {"CRC32C", &c.ChecksumCRC32C}, {"CRC64NVME", &c.ChecksumCRC64NVME},
		{"SHA1", &c.ChecksumSHA1}, {"SHA256", &c.ChecksumSHA256}, {"MD5", &c.ChecksumMD5},
		{"SHA512", &c.ChecksumSHA512}, {"XXHASH64", &c.ChecksumXXHASH64}, {"XXHASH3", &c.ChecksumXXHASH3},
		{"XXHASH128", &c.ChecksumXXHASH128},
	}
}

// all returns every checksum value present by algorithm; nil for none.
func (c xmlChecksums) all() map[string]string {
	var m map[string]string
	for _, f := range c.fields() {
		if *f.v != "" {
			if m == nil {
				m = map[string]string{}
			}
			m[f.alg] = *f.v
		}
	}
	return m
}

func checksumsOf(alg, value string) xmlChecksums {
	var c xmlChecksums
	for _, f := range c.fields() {
		if f.alg == alg {
			*f.v = value
		}
	}
	return c
}

type xmlCompletePart struct {
	PartNumber int    `xml:"PartNumber"`
	ETag       string `xml:"ETag"`
	xmlChecksums
}

type xmlCompleteRequest struct {
	XMLName xml.Name          `xml:"CompleteMultipartUpload"`
	Parts   []xmlCompletePart `xml:"Part"`
}

type xmlCompleteResult struct {
	XMLName  xml.Name `xml:"CompleteMultipartUploadResult"`
	NS       string   `xml:"xmlns,attr"`
	Location string   `xml:"Location"`
	Bucket   string   `xml:"Bucket"`
	Key      string   `xml:"Key"`
	ETag     string   `xml:"ETag"`
	xmlChecksums
	ChecksumType string `xml:"ChecksumType,omitempty"`
}

type xmlPart struct {
	PartNumber   int    `xml:"PartNumber"`
	LastModified string `xml:"LastModified"`
	ETag         string `xml:"ETag"`
	Size         int64  `xml:"Size"`
	xmlChecksums
}

type xmlListParts struct {
	XMLName              xml.Name  `xml:"ListPartsResult"`
	NS                   string    `xml:"xmlns,attr"`
	Bucket               string    `xml:"Bucket"`
	Key                  string    `xml:"Key"`
	UploadID             string    `xml:"UploadId"`
	Initiator            *xmlOwner `xml:"Initiator"`
	Owner                *xmlOwner `xml:"Owner"`
	StorageClass         string    `xml:"StorageClass"`
	PartNumberMarker     int       `xml:"PartNumberMarker"`
	NextPartNumberMarker int       `xml:"NextPartNumberMarker"`
	MaxParts             int       `xml:"MaxParts"`
	IsTruncated          bool      `xml:"IsTruncated"`
	ChecksumAlgorithm    string    `xml:"ChecksumAlgorithm,omitempty"`
	ChecksumType         string    `xml:"ChecksumType,omitempty"`
	Parts                []xmlPart `xml:"Part"`
}

type xmlUpload struct {
	Key               xmlText   `xml:"Key"`
	UploadID          string    `xml:"UploadId"`
	Initiator         *xmlOwner `xml:"Initiator"`
	Owner             *xmlOwner `xml:"Owner"`
	StorageClass      string    `xml:"StorageClass"`
	Initiated         string    `xml:"Initiated"`
	ChecksumAlgorithm string    `xml:"ChecksumAlgorithm,omitempty"`
	ChecksumType      string    `xml:"ChecksumType,omitempty"`
}

type xmlListUploads struct {
	XMLName            xml.Name    `xml:"ListMultipartUploadsResult"`
	NS                 string      `xml:"xmlns,attr"`
	Bucket             string      `xml:"Bucket"`
	KeyMarker          xmlText     `xml:"KeyMarker"`
	UploadIDMarker     string      `xml:"UploadIdMarker"`
	NextKeyMarker      xmlText     `xml:"NextKeyMarker"`
	NextUploadIDMarker string      `xml:"NextUploadIdMarker"`
	Prefix             xmlText     `xml:"Prefix"`
	Delimiter          xmlText     `xml:"Delimiter,omitempty"`
	EncodingType       string      `xml:"EncodingType,omitempty"`
	MaxUploads         int         `xml:"MaxUploads"`
	IsTruncated        bool        `xml:"IsTruncated"`
	Uploads            []xmlUpload `xml:"Upload"`
	CommonPrefixes     []xmlPrefix `xml:"CommonPrefixes"`
}

type xmlGrantee struct {
	XMLNSXSI    string `xml:"xmlns:xsi,attr"`
	Type        string `xml:"xsi:type,attr"`
	ID          string `xml:"ID,omitempty"`
	DisplayName string `xml:"DisplayName,omitempty"`
	URI         string `xml:"URI,omitempty"`
}

type xmlGrant struct {
	Grantee    xmlGrantee `xml:"Grantee"`
	Permission string     `xml:"Permission"`
}

type xmlACL struct {
	XMLName xml.Name   `xml:"AccessControlPolicy"`
	NS      string     `xml:"xmlns,attr"`
	Owner   *xmlOwner  `xml:"Owner"`
	Grants  []xmlGrant `xml:"AccessControlList>Grant"`
}

// xmlObjectAttributes is GetObjectAttributes' answer; each element is
// present only when its attribute was asked for (and applies).
type xmlObjectAttributes struct {
	XMLName      xml.Name               `xml:"GetObjectAttributesResponse"`
	NS           string                 `xml:"xmlns,attr"`
	ETag         string                 `xml:"ETag,omitempty"`
	Checksum     *xmlAttributesChecksum `xml:"Checksum,omitempty"`
	ObjectParts  *xmlAttributesParts    `xml:"ObjectParts,omitempty"`
	StorageClass string                 `xml:"StorageClass,omitempty"`
	ObjectSize   *int64                 `xml:"ObjectSize,omitempty"`
}

type xmlAttributesChecksum struct {
	xmlChecksums
	ChecksumType string `xml:"ChecksumType,omitempty"`
}

// xmlAttributesParts is GetObjectAttributes' ObjectParts; all but
// PartsCount (the SDKs' TotalPartsCount) only for COMPOSITE objects.
type xmlAttributesParts struct {
	PartsCount           int                 `xml:"PartsCount"`
	PartNumberMarker     *int                `xml:"PartNumberMarker,omitempty"`
	NextPartNumberMarker *int                `xml:"NextPartNumberMarker,omitempty"`
	MaxParts             *int                `xml:"MaxParts,omitempty"`
	IsTruncated          *bool               `xml:"IsTruncated,omitempty"`
	Parts                []xmlAttributesPart `xml:"Part"`
}

type xmlAttributesPart struct {
	PartNumber int   `xml:"PartNumber"`
	Size       int64 `xml:"Size"`
	xmlChecksums
}
