package s3api

import (
	"bytes"
	"crypto/md5"
	"encoding/base64"
	"encoding/xml"
	"net/http"
	"testing"

	"github.com/shardstore/shardstore/internal/lifecycle"
	"github.com/shardstore/shardstore/internal/objectlock"
)

// FuzzXMLBodies sends arbitrary bodies to the request types that carry
// XML (CompleteMultipartUpload, DeleteObjects, CreateBucket, the bucket
// configurations, Put*Acl's AccessControlPolicy, Put*Tagging's Tagging,
// PutBucketVersioning's VersioningConfiguration, the object lock
// documents: ObjectLockConfiguration, Retention, LegalHold). Whatever
// the body, the server must answer with a well-formed S3 response (no 500,
// no panic), an object the request did not name must stay intact, and a
// version under COMPLIANCE retention must stay protected.
func FuzzXMLBodies(f *testing.F) {
	f.Add(uint8(0), []byte(`<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>"x"</ETag></Part></CompleteMultipartUpload>`))
	f.Add(uint8(0), []byte(`<CompleteMultipartUpload><Part><PartNumber>99999999999999999999</PartNumber></Part></CompleteMultipartUpload>`))
	f.Add(uint8(0), []byte(`<CompleteMultipartUpload><Part><PartNumber>2</PartNumber><ETag>a</ETag></Part><Part><PartNumber>1</PartNumber><ETag>b</ETag></Part></CompleteMultipartUpload>`))
	f.Add(uint8(1), []byte(`<Delete><Quiet>true</Quiet><Object><Key>other</Key></Object></Delete>`))
	f.Add(uint8(1), []byte(`<Delete><Object><Key>../../etc/passwd</Key><VersionId>7</VersionId></Object></Delete>`))
	f.Add(uint8(2), []byte(`<CreateBucketConfiguration><LocationConstraint>us-east-1</LocationConstraint></CreateBucketConfiguration>`))
	f.Add(uint8(2), []byte(`<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "aaaa">]><CreateBucketConfiguration>&a;</CreateBucketConfiguration>`))
	f.Add(uint8(1), []byte("<Delete><Object><Key>\x00</Key></Object>"))
	f.Add(uint8(3), []byte(testCORS))
	f.Add(uint8(3), []byte(`<CORSConfiguration><CORSRule><AllowedMethod>PATCH</AllowedMethod><AllowedOrigin>**</AllowedOrigin></CORSRule></CORSConfiguration>`))
	f.Add(uint8(4), []byte(testOwnership))
	f.Add(uint8(5), []byte(testWebsite))
	f.Add(uint8(5), []byte(`<WebsiteConfiguration><RedirectAllRequestsTo><HostName>h</HostName></RedirectAllRequestsTo><IndexDocument/></WebsiteConfiguration>`))
	f.Add(uint8(6), aclBody("root", "root:FULL_CONTROL", "alice:READ", uriAllUsers+":WRITE"))
	f.Add(uint8(6), []byte(`<AccessControlPolicy><Owner><ID>x</ID></Owner><AccessControlList><Grant><Grantee/><Permission>READ</Permission></Grant></AccessControlList></AccessControlPolicy>`))
	f.Add(uint8(7), aclBody("root", "bob:READ_ACP", "carol:WRITE_ACP"))
	f.Add(uint8(7), []byte(`<AccessControlPolicy><Owner><ID>`+canonicalID("root")+`</ID></Owner><AccessControlList><Grant><Grantee xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:type="AmazonCustomerByEmail"><EmailAddress>a@b</EmailAddress></Grantee><Permission>READ</Permission></Grant></AccessControlList></AccessControlPolicy>`))
	f.Add(uint8(8), []byte(testPAB))
	f.Add(uint8(8), []byte(`<PublicAccessBlockConfiguration><BlockPublicAcls>yes</BlockPublicAcls></PublicAccessBlockConfiguration>`))
	f.Add(uint8(9), []byte(taggingDoc("project", "blue", "empty", "")))
	f.Add(uint8(9), []byte(`<Tagging><TagSet><Tag><Key>k</Key><Value>v</Value></Tag><Tag><Key>k</Key><Value>w</Value></Tag></TagSet></Tagging>`))
	f.Add(uint8(9), []byte("<Tagging><TagSet><Tag><Key>\xff\xfe</Key><Value/></Tag></TagSet></Tagging>"))
	f.Add(uint8(10), []byte(taggingDoc(numberedTags(51)...)))
	f.Add(uint8(10), []byte(`<Tagging><TagSet><Tag><Key>aws:x</Key><Value>&amp;</Value></Tag></TagSet><TagSet/></Tagging>`))
	f.Add(uint8(11), []byte(testLifecycle))
	f.Add(uint8(11), []byte(`<LifecycleConfiguration><Rule><ID>a</ID><Filter><Tag><Key>k</Key><Value>v</Value></Tag></Filter><Status>Enabled</Status><AbortIncompleteMultipartUpload><DaysAfterInitiation>1</DaysAfterInitiation></AbortIncompleteMultipartUpload></Rule></LifecycleConfiguration>`))
	f.Add(uint8(11), []byte(`<LifecycleConfiguration><Rule><Prefix/><Status>Enabled</Status><Expiration><Date>2030-01-01T01:00:00Z</Date></Expiration></Rule></LifecycleConfiguration>`))
	f.Add(uint8(12), []byte(`<VersioningConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Status>Enabled</Status></VersioningConfiguration>`))
	f.Add(uint8(12), []byte(`<VersioningConfiguration><Status>Suspended</Status><MfaDelete>Enabled</MfaDelete></VersioningConfiguration>`))
	f.Add(uint8(12), []byte(`<VersioningConfiguration><Status></Status><Status>On</Status></VersioningConfiguration>`))
	f.Add(uint8(13), []byte(testLockConfigDays))
	f.Add(uint8(13), []byte(`<ObjectLockConfiguration><ObjectLockEnabled>Enabled</ObjectLockEnabled><Rule><DefaultRetention><Mode>COMPLIANCE</Mode><Days>1</Days><Years>1</Years></DefaultRetention></Rule></ObjectLockConfiguration>`))
	f.Add(uint8(14), []byte(retentionDoc("GOVERNANCE", "2999-01-01T00:00:00Z")))
	f.Add(uint8(14), []byte(`<Retention><Mode>COMPLIANCE</Mode><RetainUntilDate>yesterday</RetainUntilDate></Retention>`))
	f.Add(uint8(15), []byte(legalHoldDoc("ON")))
	f.Add(uint8(15), []byte(`<LegalHold><Status>on</Status><Status/></LegalHold>`))
	f.Add(uint8(16), []byte(testNotification))
	f.Add(uint8(16), []byte(`<NotificationConfiguration><QueueConfiguration><Queue>arn:minio:sqs::9:webhook</Queue><Event>s3:ObjectCreated:*</Event></QueueConfiguration></NotificationConfiguration>`))
	f.Add(uint8(16), []byte(`<NotificationConfiguration><QueueConfiguration><Filter><S3Key><FilterRule><Name>prefix</Name><Value>a</Value></FilterRule><FilterRule><Name>prefix</Name><Value>b</Value></FilterRule></S3Key></Filter><Queue>arn:minio:sqs::1:webhook</Queue><Event>s3:*</Event></QueueConfiguration></NotificationConfiguration>`))
	f.Fuzz(func(t *testing.T, kind uint8, body []byte) {
		h := newHarness(t, func(c *Config) { c.Notify = &fakeNotifier{} })
		h.expect(h.do("root", http.MethodPut, "/fuzz", nil), http.StatusOK, "")
		keep := []byte("must survive")
		h.expect(h.do("root", http.MethodPut, "/fuzz/keep", keep), http.StatusOK, "")
		up := h.do("root", http.MethodPost, "/fuzz/obj?uploads", nil)
		var init xmlInitiateMultipart
		if err := xml.Unmarshal(up.Body.Bytes(), &init); err != nil || init.UploadID == "" {
			t.Fatalf("create upload: %v %q", err, up.Body.String())
		}
		h.expect(h.do("root", http.MethodPut, "/fuzzlock", nil, "X-Amz-Bucket-Object-Lock-Enabled", "true"), http.StatusOK, "")
		lockedPut := h.do("root", http.MethodPut, "/fuzzlock/held", keep, "Content-MD5", contentMD5(keep),
			"X-Amz-Object-Lock-Mode", "COMPLIANCE", "X-Amz-Object-Lock-Retain-Until-Date", "2999-01-01T00:00:00Z")
		h.expect(lockedPut, http.StatusOK, "")
		held := lockedPut.Header().Get("X-Amz-Version-Id")
		var rec = h.do("root", http.MethodPost, "/fuzz/obj?uploadId="+init.UploadID, body)
		switch kind % 17 {
		case 1:
			rec = h.do("root", http.MethodPost, "/fuzz?delete", body, "Content-MD5", contentMD5(body))
		case 2:
			rec = h.do("root", http.MethodPut, "/fuzz2", body)
		case 3:
			rec = h.do("root", http.MethodPut, "/fuzz?cors", body, "Content-MD5", contentMD5(body))
		case 4:
			rec = h.do("root", http.MethodPut, "/fuzz?ownershipControls", body)
		case 5:
			rec = h.do("root", http.MethodPut, "/fuzz?website", body)
		case 6:
			rec = h.do("root", http.MethodPut, "/fuzz?acl", body)
		case 7:
			rec = h.do("root", http.MethodPut, "/fuzz/keep?acl", body)
		case 8:
			rec = h.do("root", http.MethodPut, "/fuzz?publicAccessBlock", body, "Content-MD5", contentMD5(body))
		case 9:
			rec = h.do("root", http.MethodPut, "/fuzz/keep?tagging", body, "Content-MD5", contentMD5(body))
		case 10:
			rec = h.do("root", http.MethodPut, "/fuzz?tagging", body, "Content-MD5", contentMD5(body))
		case 11:
			rec = h.do("root", http.MethodPut, "/fuzz?lifecycle", body, "Content-MD5", contentMD5(body))
		case 12:
			rec = h.do("root", http.MethodPut, "/fuzz?versioning", body)
		case 13:
			rec = h.do("root", http.MethodPut, "/fuzzlock?object-lock", body, "Content-MD5", contentMD5(body))
		case 14:
			rec = h.do("root", http.MethodPut, "/fuzzlock/held?retention", body, "Content-MD5", contentMD5(body))
		case 15:
			rec = h.do("root", http.MethodPut, "/fuzzlock/held?legal-hold", body, "Content-MD5", contentMD5(body))
		case 16:
			rec = h.do("root", http.MethodPut, "/fuzz?notification", body)
		}
		// 501 NotImplemented is a deliberate answer (MFA delete, say).
		if rec.Code >= 500 && rec.Code != http.StatusNotImplemented {
			t.Fatalf("status %d for body %q: %s", rec.Code, body, rec.Body.String())
		}
		if rec.Code >= 400 {
			var e xmlError
			if err := xml.Unmarshal(rec.Body.Bytes(), &e); err != nil || e.Code == "" {
				t.Fatalf("error answer is not S3 XML: %v %q", err, rec.Body.String())
			}
		}
		// Whatever was stored reads back as a Tagging document of at most
		// S3's number of tags.
		for target, limit := range map[string]int{"/fuzz/keep?tagging": maxObjectTags, "/fuzz?tagging": maxBucketTags} {
			got := h.do("root", http.MethodGet, target, nil)
			if got.Code == http.StatusNotFound && target == "/fuzz?tagging" {
				continue
			}
			var doc xmlTagging
			if err := xml.Unmarshal(got.Body.Bytes(), &doc); got.Code != http.StatusOK || err != nil || len(doc.TagSet) > limit {
				t.Fatalf("%s: %d %v %q", target, got.Code, err, got.Body.String())
			}
		}
		// A stored lifecycle configuration reads back and parses.
		if got := h.do("root", http.MethodGet, "/fuzz?lifecycle", nil); got.Code != http.StatusNotFound {
			if _, err := lifecycle.Parse(got.Body.Bytes()); got.Code != http.StatusOK || err != nil {
				t.Fatalf("lifecycle: %d %v %q", got.Code, err, got.Body.String())
			}
		}
		// The versioning state is one S3 knows.
		var vc xmlVersioningConfiguration
		if got := h.do("root", http.MethodGet, "/fuzz?versioning", nil); xml.Unmarshal(got.Body.Bytes(), &vc) != nil ||
			(vc.Status != "" && vc.Status != "Enabled" && vc.Status != "Suspended") {
			t.Fatalf("versioning: %d %q", got.Code, got.Body.String())
		}
		// A stored object lock configuration reads back and parses; the
		// locked object stays protected whatever the body did.
		if got := h.do("root", http.MethodGet, "/fuzzlock?object-lock", nil); got.Code != http.StatusOK {
			t.Fatalf("object lock configuration: %d %q", got.Code, got.Body.String())
		} else if _, err := objectlock.Parse(got.Body.Bytes()); err != nil {
			t.Fatalf("object lock configuration %q: %v", got.Body.String(), err)
		}
		if got := h.do("root", http.MethodDelete, "/fuzzlock/held?versionId="+held, nil); got.Code != http.StatusForbidden {
			t.Fatalf("delete of the locked version: %d %q", got.Code, got.Body.String())
		}
		if kind%16 == 1 && bytes.Contains(body, []byte("keep")) {
			return // the request may have named the object
		}
		got := h.do("root", http.MethodGet, "/fuzz/keep", nil)
		if got.Code != http.StatusOK || !bytes.Equal(got.Body.Bytes(), keep) {
			t.Fatalf("stored object changed: %d %q", got.Code, got.Body.String())
		}
	})
}

func contentMD5(b []byte) string {
	sum := md5.Sum(b)
	return base64.StdEncoding.EncodeToString(sum[:])
}
