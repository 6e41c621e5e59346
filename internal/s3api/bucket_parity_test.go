package s3api

import (
	"encoding/xml"
	"fmt"
	"strings"
	"testing"
)

func createBody(lc string) []byte {
	return []byte("<CreateBucketConfiguration><LocationConstraint>" + lc + "</LocationConstraint></CreateBucketConfiguration>")
}

// bucketLocation asks GetBucketLocation and returns the constraint.
func bucketLocation(h *harness, user, bucket string) string {
	h.t.Helper()
	rec := h.do(user, "GET", "/"+bucket+"?location", nil)
	h.expect(rec, 200, "")
	var lc xmlLocationConstraint
	if err := xml.Unmarshal(rec.Body.Bytes(), &lc); err != nil {
		h.t.Fatalf("location %s: %v", rec.Body.String(), err)
	}
	return lc.Region
}

// TestCreateBucketAnyRegion: without Config.Region any well-formed region
// is accepted, recorded, and reported by GetBucketLocation, HeadBucket and
// ListBuckets; us-east-1 (or none, or "US") answers an empty constraint.
func TestCreateBucketAnyRegion(t *testing.T) {
	h := newHarness(t, nil)
	cases := []struct{ bucket, lc, location, region string }{
		{"none", "", "", "us-east-1"},
		{"use1", "us-east-1", "", "us-east-1"},
		{"legacy-us", "US", "", "us-east-1"},
		{"euw1", "eu-west-1", "eu-west-1", "eu-west-1"},
		{"euc1", "eu-central-1", "eu-central-1", "eu-central-1"},
		{"legacy-eu", "EU", "EU", "eu-west-1"},
		{"gov", "us-gov-west-1", "us-gov-west-1", "us-gov-west-1"},
	}
	for _, c := range cases {
		var body []byte
		if c.lc != "" {
			body = createBody(c.lc)
		}
		h.expect(h.do("alice", "PUT", "/"+c.bucket, body), 200, "")
		if got := bucketLocation(h, "alice", c.bucket); got != c.location {
			t.Errorf("%s: GetBucketLocation %q, want %q", c.bucket, got, c.location)
		}
		rec := h.do("alice", "HEAD", "/"+c.bucket, nil)
		h.expect(rec, 200, "")
		if got := rec.Header().Get("X-Amz-Bucket-Region"); got != c.region {
			t.Errorf("%s: x-amz-bucket-region %q, want %q", c.bucket, got, c.region)
		}
	}
	var lb xmlListAllMyBuckets
	rec := h.do("alice", "GET", "/", nil)
	h.expect(rec, 200, "")
	if err := xml.Unmarshal(rec.Body.Bytes(), &lb); err != nil || len(lb.Buckets) != len(cases) {
		t.Fatalf("list: %s %v", rec.Body.String(), err)
	}
	for _, b := range lb.Buckets {
		for _, c := range cases {
			if c.bucket == b.Name && b.BucketRegion != c.region {
				t.Errorf("%s: BucketRegion %q, want %q", b.Name, b.BucketRegion, c.region)
			}
		}
	}
	for _, bad := range []string{"Not a region", "eu_west_1", "EU-WEST-1", "-eu-west-1", "eu--west-1", "euwest1", "eu-west-", strings.Repeat("a", 40) + "-1"} {
		h.expect(h.do("alice", "PUT", "/badregion", createBody(bad)), 400, "InvalidLocationConstraint")
	}
	h.expect(h.do("alice", "HEAD", "/badregion", nil), 404, "")
}

// TestCreateBucketStrictRegion: with Config.Region the server refuses a
// constraint naming another region, as a regional S3 endpoint does.
func TestCreateBucketStrictRegion(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.Region = "us-east-1" })
	h.expect(h.do("alice", "PUT", "/aa1", nil), 200, "")
	h.expect(h.do("alice", "PUT", "/aa2", createBody("us-east-1")), 200, "")
	h.expect(h.do("alice", "PUT", "/aa3", createBody("US")), 200, "")
	h.expect(h.do("alice", "PUT", "/aa4", createBody("eu-west-1")), 400, "IllegalLocationConstraintException")
	h.expect(h.do("alice", "PUT", "/aa4", createBody("EU")), 400, "IllegalLocationConstraintException")
	h.expect(h.do("alice", "PUT", "/aa4", createBody("bogus")), 400, "InvalidLocationConstraint")
	h.expect(h.do("alice", "HEAD", "/aa4", nil), 404, "")

	h = newHarness(t, func(c *Config) { c.Region = "eu-west-1" })
	h.expect(h.do("alice", "PUT", "/bb1", nil), 200, "") // the server's own region
	h.expect(h.do("alice", "PUT", "/bb2", createBody("eu-west-1")), 200, "")
	h.expect(h.do("alice", "PUT", "/bb3", createBody("EU")), 200, "")
	h.expect(h.do("alice", "PUT", "/bb4", createBody("us-east-1")), 400, "IllegalLocationConstraintException")
	h.expect(h.do("alice", "PUT", "/bb4", createBody("US")), 400, "IllegalLocationConstraintException")
	for b, want := range map[string]string{"bb1": "eu-west-1", "bb2": "eu-west-1", "bb3": "EU"} {
		if got := bucketLocation(h, "alice", b); got != want {
			t.Errorf("%s: location %q, want %q", b, got, want)
		}
	}
	rec := h.do("alice", "HEAD", "/bb1", nil)
	if got := rec.Header().Get("X-Amz-Bucket-Region"); got != "eu-west-1" {
		t.Errorf("x-amz-bucket-region %q", got)
	}
}

// TestLegacyBucketLocation: a bucket recorded without a region belongs to
// the server's region: us-east-1 when it accepts any.
func TestLegacyBucketLocation(t *testing.T) {
	for _, region := range []string{"", "us-east-1", "ap-south-1"} {
		h := newHarness(t, func(c *Config) { c.Region = region })
		h.expect(h.do("alice", "PUT", "/old", nil), 200, "")
		h.store.buckets["old"].info.Location = "" // as stored before regions were
		want, hdr := region, region
		if region == "" || region == "us-east-1" {
			want, hdr = "", "us-east-1"
		}
		if got := bucketLocation(h, "alice", "old"); got != want {
			t.Errorf("region %q: location %q, want %q", region, got, want)
		}
		if got := h.do("alice", "HEAD", "/old", nil).Header().Get("X-Amz-Bucket-Region"); got != hdr {
			t.Errorf("region %q: x-amz-bucket-region %q, want %q", region, got, hdr)
		}
	}
}

// TestCreateBucketAgain: re-creating your own us-east-1 bucket as it is
// answers 200 as S3 does there, and asking for another ACL, ownership
// or object lock BucketAlreadyExists; in any other region
// BucketAlreadyOwnedByYou; another user (root included) gets
// BucketAlreadyExists. The bucket is unchanged.
func TestCreateBucketAgain(t *testing.T) {
	h := newHarness(t, nil)
	h.expect(h.do("alice", "PUT", "/mine", nil, "x-amz-acl", "public-read"), 200, "")
	h.expect(h.do("alice", "PUT", "/mine-eu", createBody("eu-west-1")), 200, "")
	h.expect(h.do("alice", "PUT", "/plain", nil), 200, "")
	before, before2 := h.store.buckets["mine"].info, h.store.buckets["mine-eu"].info
	before3 := h.store.buckets["plain"].info

	rec := h.do("alice", "PUT", "/mine", nil, "x-amz-acl", "public-read")
	h.expect(rec, 200, "")
	if rec.Header().Get("Location") != "/mine" {
		t.Errorf("Location header %q", rec.Header().Get("Location"))
	}
	h.expect(h.do("alice", "PUT", "/mine", createBody("us-east-1"), "x-amz-acl", "public-read"), 200, "")
	for _, hdr := range [][]string{nil, {"x-amz-acl", "private"}, {"x-amz-acl", "public-read-write"},
		{"x-amz-grant-read", "uri=http://acs.amazonaws.com/groups/global/AllUsers"}} {
		h.expect(h.do("alice", "PUT", "/mine", nil, hdr...), 409, "BucketAlreadyExists")
	}
	for _, hdr := range [][]string{nil, {"x-amz-acl", "private"}, {"x-amz-acl", "bucket-owner-full-control"},
		{"x-amz-object-ownership", "ObjectWriter"}} {
		h.expect(h.do("alice", "PUT", "/plain", nil, hdr...), 200, "")
	}
	for _, hdr := range [][]string{{"x-amz-acl", "public-read"}, {"x-amz-acl", "authenticated-read"},
		{"x-amz-object-ownership", "BucketOwnerEnforced"}, {"x-amz-bucket-object-lock-enabled", "true"}} {
		h.expect(h.do("alice", "PUT", "/plain", nil, hdr...), 409, "BucketAlreadyExists")
	}
	if after := h.store.buckets["plain"].info; after != before3 {
		t.Errorf("plain changed: %+v -> %+v", before3, after)
	}
	h.expect(h.do("alice", "PUT", "/mine", createBody("eu-west-1")), 409, "BucketAlreadyOwnedByYou")
	h.expect(h.do("alice", "PUT", "/mine-eu", createBody("eu-west-1")), 409, "BucketAlreadyOwnedByYou")
	h.expect(h.do("alice", "PUT", "/mine-eu", nil), 409, "BucketAlreadyOwnedByYou")
	for _, user := range []string{"bob", "root"} {
		for _, b := range []string{"mine", "mine-eu"} {
			for _, body := range [][]byte{nil, createBody("eu-west-1")} {
				h.expect(h.do(user, "PUT", "/"+b, body), 409, "BucketAlreadyExists")
			}
		}
	}
	if after := h.store.buckets["mine"].info; after != before {
		t.Errorf("mine changed: %+v -> %+v", before, after)
	}
	if after := h.store.buckets["mine-eu"].info; after != before2 {
		t.Errorf("mine-eu changed: %+v -> %+v", before2, after)
	}

	// A server tied to eu-west-1 answers as S3 does outside us-east-1.
	h = newHarness(t, func(c *Config) { c.Region = "eu-west-1" })
	h.expect(h.do("alice", "PUT", "/mine", nil), 200, "")
	h.expect(h.do("alice", "PUT", "/mine", nil), 409, "BucketAlreadyOwnedByYou")
	h.expect(h.do("bob", "PUT", "/mine", nil), 409, "BucketAlreadyExists")
}

func listBuckets(h *harness, user, query string) xmlListAllMyBuckets {
	h.t.Helper()
	rec := h.do(user, "GET", "/"+query, nil)
	h.expect(rec, 200, "")
	var lb xmlListAllMyBuckets
	if err := xml.Unmarshal(rec.Body.Bytes(), &lb); err != nil {
		h.t.Fatalf("list %s: %v", rec.Body.String(), err)
	}
	return lb
}

func names(lb xmlListAllMyBuckets) string {
	var out []string
	for _, b := range lb.Buckets {
		out = append(out, b.Name)
	}
	return strings.Join(out, ",")
}

// TestListBucketsPaging: max-buckets, continuation-token, prefix and
// bucket-region, with ContinuationToken and Prefix in the result.
func TestListBucketsPaging(t *testing.T) {
	h := newHarness(t, nil)
	for i := 0; i < 5; i++ {
		h.expect(h.do("alice", "PUT", fmt.Sprintf("/app-%d", i), nil), 200, "")
	}
	h.expect(h.do("alice", "PUT", "/eu-data", createBody("eu-west-1")), 200, "")
	h.expect(h.do("alice", "PUT", "/zzz", nil), 200, "")
	h.expect(h.do("bob", "PUT", "/app-bob", nil), 200, "")

	// A plain ListBuckets is not paged and carries neither element.
	rec := h.do("alice", "GET", "/", nil)
	if strings.Contains(rec.Body.String(), "<ContinuationToken") || strings.Contains(rec.Body.String(), "<Prefix") {
		t.Fatalf("plain list: %s", rec.Body.String())
	}
	if got := names(listBuckets(h, "alice", "")); got != "app-0,app-1,app-2,app-3,app-4,eu-data,zzz" {
		t.Fatalf("plain list: %s", got)
	}

	// Page through two at a time.
	var pages []string
	token := ""
	for i := 0; ; i++ {
		q := "?max-buckets=2"
		if token != "" {
			q += "&continuation-token=" + token
		}
		lb := listBuckets(h, "alice", q)
		pages = append(pages, names(lb))
		if lb.ContinuationToken == "" {
			break
		}
		token = lb.ContinuationToken
		if i > 10 {
			t.Fatal("paging does not end")
		}
	}
	if got := strings.Join(pages, "|"); got != "app-0,app-1|app-2,app-3|app-4,eu-data|zzz" {
		t.Fatalf("pages %s", got)
	}
	// Exactly a page's worth: no token.
	if lb := listBuckets(h, "alice", "?max-buckets=7"); lb.ContinuationToken != "" || len(lb.Buckets) != 7 {
		t.Fatalf("max-buckets=7: %+v", lb)
	}

	// Prefix, echoed back; with paging.
	lb := listBuckets(h, "alice", "?prefix=app-")
	if names(lb) != "app-0,app-1,app-2,app-3,app-4" || lb.Prefix != "app-" || lb.ContinuationToken != "" {
		t.Fatalf("prefix: %+v", lb)
	}
	lb = listBuckets(h, "alice", "?prefix=app-&max-buckets=3")
	if names(lb) != "app-0,app-1,app-2" || lb.ContinuationToken == "" {
		t.Fatalf("prefix page 1: %+v", lb)
	}
	lb = listBuckets(h, "alice", "?prefix=app-&max-buckets=3&continuation-token="+lb.ContinuationToken)
	if names(lb) != "app-3,app-4" || lb.ContinuationToken != "" {
		t.Fatalf("prefix page 2: %+v", lb)
	}
	if lb := listBuckets(h, "root", "?prefix=app-b"); names(lb) != "app-bob" {
		t.Fatalf("root prefix: %+v", lb)
	}

	// An empty token is no token; bucket-region filters.
	if lb := listBuckets(h, "alice", "?continuation-token=&max-buckets=1"); names(lb) != "app-0" {
		t.Fatalf("empty token: %+v", lb)
	}
	if lb := listBuckets(h, "alice", "?continuation-token"); names(lb) != "app-0,app-1,app-2,app-3,app-4,eu-data,zzz" {
		t.Fatalf("valueless token: %+v", lb)
	}
	if lb := listBuckets(h, "alice", "?bucket-region=eu-west-1"); names(lb) != "eu-data" || lb.Buckets[0].BucketRegion != "eu-west-1" {
		t.Fatalf("bucket-region: %+v", lb)
	}

	for _, bad := range []string{"0", "-1", "10001", "abc", "", "1.5", "99999999999999999999"} {
		h.expect(h.do("alice", "GET", "/?max-buckets="+bad, nil), 400, "InvalidArgument")
	}
	h.expect(h.do("alice", "GET", "/?max-buckets=10000", nil), 200, "")
	h.expect(h.do("alice", "GET", "/?continuation-token=not%20a%20token", nil), 400, "InvalidArgument")
	h.expect(h.do("alice", "GET", "/?continuation-token="+strings.Repeat("A", 2000), nil), 400, "InvalidArgument")
	h.expect(h.do("", "GET", "/?max-buckets=1", nil), 403, "AccessDenied")
}
