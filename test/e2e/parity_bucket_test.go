package e2e

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// regionClient is s.client configured for another region.
func (s *server) regionClient(ak, sk, region string) *s3.Client {
	return s3.New(s.client(ak, sk).Options(), func(o *s3.Options) { o.Region = region })
}

// TestParityBucketsDefaultServer: a server started without --region serves
// clients configured for any region, records each bucket's region, and
// answers CreateBucket, ListBuckets and presigned URLs as S3 does.
func TestParityBucketsDefaultServer(t *testing.T) {
	s := startServer(t)
	cx := ctx(t)

	t.Run("Regions", func(t *testing.T) {
		for _, region := range []string{"eu-west-1", "eu-central-1"} {
			c := s.regionClient(rootUser, rootPass, region)
			bucket := "parity-" + region
			_, err := c.CreateBucket(cx, &s3.CreateBucketInput{Bucket: aws.String(bucket),
				CreateBucketConfiguration: &types.CreateBucketConfiguration{LocationConstraint: types.BucketLocationConstraint(region)}})
			if err != nil {
				t.Fatalf("%s: create: %v", region, err)
			}
			// Default PutObject: signed payload with flexible checksums.
			body := strings.Repeat("regional ", 10000)
			if _, err := c.PutObject(cx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String("k"), Body: strings.NewReader(body)}); err != nil {
				t.Fatalf("%s: put: %v", region, err)
			}
			got, err := c.GetObject(cx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String("k")})
			if err != nil {
				t.Fatalf("%s: get: %v", region, err)
			}
			if string(mustRead(t, got.Body)) != body {
				t.Fatalf("%s: body differs", region)
			}
			loc, err := c.GetBucketLocation(cx, &s3.GetBucketLocationInput{Bucket: aws.String(bucket)})
			if err != nil || string(loc.LocationConstraint) != region {
				t.Fatalf("%s: location %+v %v", region, loc, err)
			}
			hb, err := c.HeadBucket(cx, &s3.HeadBucketInput{Bucket: aws.String(bucket)})
			if err != nil || aws.ToString(hb.BucketRegion) != region {
				t.Fatalf("%s: head bucket %+v %v", region, hb, err)
			}
			// A presigned GET scoped to the region.
			ps, err := s3.NewPresignClient(c).PresignGetObject(cx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String("k")})
			if err != nil {
				t.Fatal(err)
			}
			resp, err := http.Get(ps.URL)
			if err != nil {
				t.Fatal(err)
			}
			if b := mustRead(t, resp.Body); resp.StatusCode != 200 || string(b) != body {
				t.Fatalf("%s: presigned GET %d", region, resp.StatusCode)
			}
		}
		// Buckets made with no constraint are us-east-1: empty location.
		createBucket(t, s.root(), "parity-plain")
		loc, err := s.root().GetBucketLocation(cx, &s3.GetBucketLocationInput{Bucket: aws.String("parity-plain")})
		if err != nil || loc.LocationConstraint != "" {
			t.Fatalf("plain location %+v %v", loc, err)
		}
		lb, err := s.root().ListBuckets(cx, &s3.ListBucketsInput{Prefix: aws.String("parity-")})
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]string{"parity-eu-central-1": "eu-central-1", "parity-eu-west-1": "eu-west-1", "parity-plain": "us-east-1"}
		for _, b := range lb.Buckets {
			if want[aws.ToString(b.Name)] != aws.ToString(b.BucketRegion) {
				t.Errorf("%s: BucketRegion %q", aws.ToString(b.Name), aws.ToString(b.BucketRegion))
			}
		}
		if len(lb.Buckets) != len(want) || aws.ToString(lb.Prefix) != "parity-" {
			t.Fatalf("list %+v", lb)
		}
	})

	t.Run("CreateAgain", func(t *testing.T) {
		root := s.root()
		createBucket(t, root, "again-us")
		if _, err := root.PutBucketAcl(cx, &s3.PutBucketAclInput{Bucket: aws.String("again-us"), ACL: types.BucketCannedACLPublicRead}); err != nil {
			t.Fatal(err)
		}
		// 200 in us-east-1 for the bucket as it is; another ACL (none is
		// private) is refused with BucketAlreadyExists; the bucket keeps
		// its ACL.
		if _, err := root.CreateBucket(cx, &s3.CreateBucketInput{Bucket: aws.String("again-us"), ACL: types.BucketCannedACLPublicRead}); err != nil {
			t.Fatalf("re-create own us-east-1 bucket: %v", err)
		}
		_, err := root.CreateBucket(cx, &s3.CreateBucketInput{Bucket: aws.String("again-us")})
		wantCode(t, err, "BucketAlreadyExists", 409)
		acl, err := root.GetBucketAcl(cx, &s3.GetBucketAclInput{Bucket: aws.String("again-us")})
		if err != nil || len(acl.Grants) < 2 {
			t.Fatalf("ACL after re-create: %+v %v", acl, err)
		}
		eu := s.regionClient(rootUser, rootPass, "eu-west-1")
		_, err = eu.CreateBucket(cx, &s3.CreateBucketInput{Bucket: aws.String("parity-eu-west-1"),
			CreateBucketConfiguration: &types.CreateBucketConfiguration{LocationConstraint: "eu-west-1"}})
		wantCode(t, err, "BucketAlreadyOwnedByYou", 409)
		bob := s.client(bobUser, bobPass)
		_, err = bob.CreateBucket(cx, &s3.CreateBucketInput{Bucket: aws.String("again-us")})
		wantCode(t, err, "BucketAlreadyExists", 409)
		_, err = s.regionClient(bobUser, bobPass, "eu-west-1").CreateBucket(cx, &s3.CreateBucketInput{Bucket: aws.String("parity-eu-west-1"),
			CreateBucketConfiguration: &types.CreateBucketConfiguration{LocationConstraint: "eu-west-1"}})
		wantCode(t, err, "BucketAlreadyExists", 409)
	})

	t.Run("ListBucketsPaging", func(t *testing.T) {
		bob := s.client(bobUser, bobPass)
		for _, b := range []string{"bob-a", "bob-b", "bob-c", "bob-d", "bob-e"} {
			createBucket(t, bob, b)
		}
		var got []string
		pages := 0
		p := s3.NewListBucketsPaginator(bob, &s3.ListBucketsInput{MaxBuckets: aws.Int32(2)})
		for p.HasMorePages() {
			out, err := p.NextPage(cx)
			if err != nil {
				t.Fatal(err)
			}
			pages++
			for _, b := range out.Buckets {
				got = append(got, aws.ToString(b.Name))
			}
		}
		if strings.Join(got, ",") != "bob-a,bob-b,bob-c,bob-d,bob-e" || pages != 3 {
			t.Fatalf("paged %v in %d pages", got, pages)
		}
		out, err := bob.ListBuckets(cx, &s3.ListBucketsInput{Prefix: aws.String("bob-d"), ContinuationToken: aws.String("")})
		if err != nil || len(out.Buckets) != 1 || aws.ToString(out.Prefix) != "bob-d" || out.ContinuationToken != nil {
			t.Fatalf("prefix: %+v %v", out, err)
		}
		_, err = bob.ListBuckets(cx, &s3.ListBucketsInput{MaxBuckets: aws.Int32(10001)})
		wantCode(t, err, "InvalidArgument", 400)
		_, err = bob.ListBuckets(cx, &s3.ListBucketsInput{MaxBuckets: aws.Int32(0)})
		wantCode(t, err, "InvalidArgument", 400)
	})

	t.Run("PresignedExpiry", func(t *testing.T) {
		createBucket(t, s.root(), "presign-bounds")
		creds := aws.Credentials{AccessKeyID: rootUser, SecretAccessKey: rootPass}
		presign := func(method, expires string, at time.Time) string {
			u, _ := url.Parse(s.endpoint + "/presign-bounds/obj")
			u.RawQuery = "X-Amz-Expires=" + expires
			r, _ := http.NewRequest(method, u.String(), nil)
			signed, _, err := v4.NewSigner().PresignHTTP(context.Background(), creds, r, "UNSIGNED-PAYLOAD", "s3", "eu-west-1", at)
			if err != nil {
				t.Fatal(err)
			}
			return signed
		}
		send := func(method, u string) (int, string) {
			r, _ := http.NewRequest(method, u, strings.NewReader("data"))
			resp, err := http.DefaultClient.Do(r)
			if err != nil {
				t.Fatal(err)
			}
			return resp.StatusCode, string(mustRead(t, resp.Body))
		}
		if st, b := send("PUT", presign("PUT", "300", time.Now())); st != 200 {
			t.Fatalf("valid presigned PUT: %d %s", st, b)
		}
		for exp, msg := range map[string]string{
			"604801": "must be less than 604800 seconds",
			"-60":    "must be non-negative",
			"soon":   "should be a number",
		} {
			st, b := send("GET", presign("GET", exp, time.Now()))
			if st != 400 || !strings.Contains(b, "AuthorizationQueryParametersError") || !strings.Contains(b, msg) {
				t.Errorf("X-Amz-Expires=%s: %d %s", exp, st, b)
			}
		}
		// Zero: within S3's bounds, a URL valid for no time.
		if st, b := send("GET", presign("GET", "0", time.Now())); st != 403 || !strings.Contains(b, "Request has expired") {
			t.Errorf("X-Amz-Expires=0: %d %s", st, b)
		}
		for _, m := range []string{"GET", "PUT"} {
			st, b := send(m, presign(m, "60", time.Now().Add(-2*time.Minute)))
			if st != 403 || !strings.Contains(b, "AccessDenied") || !strings.Contains(b, "Request has expired") {
				t.Errorf("expired presigned %s: %d %s", m, st, b)
			}
		}
	})
}

// TestParityBucketsStrictRegion: --region makes the server answer for that
// region only, as a regional S3 endpoint does.
func TestParityBucketsStrictRegion(t *testing.T) {
	s := startServer(t, "--region", "us-east-1")
	cx := ctx(t)
	eu := s.regionClient(rootUser, rootPass, "eu-west-1")
	_, err := eu.CreateBucket(cx, &s3.CreateBucketInput{Bucket: aws.String("strict-eu"),
		CreateBucketConfiguration: &types.CreateBucketConfiguration{LocationConstraint: "eu-west-1"}})
	wantCode(t, err, "AuthorizationHeaderMalformed", 400)
	_, err = eu.ListBuckets(cx, &s3.ListBucketsInput{})
	wantCode(t, err, "AuthorizationHeaderMalformed", 400)

	us := s.root()
	_, err = us.CreateBucket(cx, &s3.CreateBucketInput{Bucket: aws.String("strict-eu"),
		CreateBucketConfiguration: &types.CreateBucketConfiguration{LocationConstraint: "eu-west-1"}})
	wantCode(t, err, "IllegalLocationConstraintException", 400)
	createBucket(t, us, "strict-us")
	if _, err := us.PutObject(cx, &s3.PutObjectInput{Bucket: aws.String("strict-us"), Key: aws.String("k"), Body: strings.NewReader("v")}); err != nil {
		t.Fatal(err)
	}
	ps, err := s3.NewPresignClient(eu).PresignGetObject(cx, &s3.GetObjectInput{Bucket: aws.String("strict-us"), Key: aws.String("k")})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(ps.URL)
	if err != nil {
		t.Fatal(err)
	}
	if b := mustRead(t, resp.Body); resp.StatusCode != 400 || !strings.Contains(string(b), "AuthorizationQueryParametersError") {
		t.Fatalf("presigned for eu-west-1 on a us-east-1 server: %d %s", resp.StatusCode, b)
	}
}
