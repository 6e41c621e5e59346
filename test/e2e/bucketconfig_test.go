package e2e

import (
	"net/http"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// TestBucketConfigSDK sets, reads and deletes CORS, ownership controls and
// website configurations through aws-sdk-go-v2, checks they survive a
// restart, and sends browser preflights with net/http.
func TestBucketConfigSDK(t *testing.T) {
	dir := t.TempDir()
	s := startIn(t, dir)
	c := s.root()
	const b = "config-bucket"
	createBucket(t, c, b)

	_, err := c.GetBucketCors(ctx(t), &s3.GetBucketCorsInput{Bucket: aws.String(b)})
	wantCode(t, err, "NoSuchCORSConfiguration", 404)
	_, err = c.GetBucketOwnershipControls(ctx(t), &s3.GetBucketOwnershipControlsInput{Bucket: aws.String(b)})
	wantCode(t, err, "OwnershipControlsNotFoundError", 404)
	_, err = c.GetBucketWebsite(ctx(t), &s3.GetBucketWebsiteInput{Bucket: aws.String(b)})
	wantCode(t, err, "NoSuchWebsiteConfiguration", 404)

	cors := &types.CORSConfiguration{CORSRules: []types.CORSRule{{
		ID:             aws.String("app"),
		AllowedOrigins: []string{"https://*.example.com"},
		AllowedMethods: []string{"GET", "PUT"},
		AllowedHeaders: []string{"x-amz-*", "content-type"},
		ExposeHeaders:  []string{"ETag"},
		MaxAgeSeconds:  aws.Int32(300),
	}}}
	if _, err := c.PutBucketCors(ctx(t), &s3.PutBucketCorsInput{Bucket: aws.String(b), CORSConfiguration: cors}); err != nil {
		t.Fatal("PutBucketCors:", err)
	}
	bad := &types.CORSConfiguration{CORSRules: []types.CORSRule{{AllowedOrigins: []string{"*"}, AllowedMethods: []string{"PATCH"}}}}
	_, err = c.PutBucketCors(ctx(t), &s3.PutBucketCorsInput{Bucket: aws.String(b), CORSConfiguration: bad})
	wantCode(t, err, "InvalidRequest", 400)
	bob := s.client(bobUser, bobPass)
	_, err = bob.GetBucketCors(ctx(t), &s3.GetBucketCorsInput{Bucket: aws.String(b)})
	wantCode(t, err, "AccessDenied", 403)
	_, err = bob.PutBucketCors(ctx(t), &s3.PutBucketCorsInput{Bucket: aws.String(b), CORSConfiguration: cors})
	wantCode(t, err, "AccessDenied", 403)

	if _, err := c.PutBucketOwnershipControls(ctx(t), &s3.PutBucketOwnershipControlsInput{Bucket: aws.String(b),
		OwnershipControls: &types.OwnershipControls{Rules: []types.OwnershipControlsRule{{ObjectOwnership: types.ObjectOwnershipBucketOwnerPreferred}}}}); err != nil {
		t.Fatal("PutBucketOwnershipControls:", err)
	}
	if _, err := c.PutBucketWebsite(ctx(t), &s3.PutBucketWebsiteInput{Bucket: aws.String(b), WebsiteConfiguration: &types.WebsiteConfiguration{
		IndexDocument: &types.IndexDocument{Suffix: aws.String("index.html")},
		ErrorDocument: &types.ErrorDocument{Key: aws.String("404.html")},
		RoutingRules: []types.RoutingRule{{
			Condition: &types.Condition{KeyPrefixEquals: aws.String("old/")},
			Redirect:  &types.Redirect{ReplaceKeyPrefixWith: aws.String("new/"), HttpRedirectCode: aws.String("301")},
		}},
	}}); err != nil {
		t.Fatal("PutBucketWebsite:", err)
	}

	check := func(c *s3.Client) {
		t.Helper()
		gc, err := c.GetBucketCors(ctx(t), &s3.GetBucketCorsInput{Bucket: aws.String(b)})
		if err != nil || len(gc.CORSRules) != 1 {
			t.Fatalf("GetBucketCors: %+v %v", gc, err)
		}
		r := gc.CORSRules[0]
		if aws.ToString(r.ID) != "app" || len(r.AllowedMethods) != 2 || r.AllowedOrigins[0] != "https://*.example.com" ||
			len(r.AllowedHeaders) != 2 || r.ExposeHeaders[0] != "ETag" || aws.ToInt32(r.MaxAgeSeconds) != 300 {
			t.Fatalf("CORS rule: %+v", r)
		}
		oc, err := c.GetBucketOwnershipControls(ctx(t), &s3.GetBucketOwnershipControlsInput{Bucket: aws.String(b)})
		if err != nil || len(oc.OwnershipControls.Rules) != 1 || oc.OwnershipControls.Rules[0].ObjectOwnership != types.ObjectOwnershipBucketOwnerPreferred {
			t.Fatalf("GetBucketOwnershipControls: %+v %v", oc, err)
		}
		ws, err := c.GetBucketWebsite(ctx(t), &s3.GetBucketWebsiteInput{Bucket: aws.String(b)})
		if err != nil || aws.ToString(ws.IndexDocument.Suffix) != "index.html" || aws.ToString(ws.ErrorDocument.Key) != "404.html" ||
			len(ws.RoutingRules) != 1 || aws.ToString(ws.RoutingRules[0].Redirect.ReplaceKeyPrefixWith) != "new/" {
			t.Fatalf("GetBucketWebsite: %+v %v", ws, err)
		}
	}
	check(c)

	preflight := func(origin, method, headers string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(http.MethodOptions, s.endpoint+"/"+b+"/some/key.txt", nil)
		req.Header.Set("Origin", origin)
		req.Header.Set("Access-Control-Request-Method", method)
		if headers != "" {
			req.Header.Set("Access-Control-Request-Headers", headers)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	resp := preflight("https://app.example.com", "PUT", "content-type,x-amz-date")
	if resp.StatusCode != 200 || resp.Header.Get("Access-Control-Allow-Origin") != "https://app.example.com" ||
		resp.Header.Get("Access-Control-Allow-Methods") != "GET, PUT" || resp.Header.Get("Access-Control-Max-Age") != "300" ||
		resp.Header.Get("Access-Control-Allow-Headers") != "content-type, x-amz-date" || resp.Header.Get("Access-Control-Expose-Headers") != "ETag" {
		t.Fatalf("allowed preflight: %d %v", resp.StatusCode, resp.Header)
	}
	if resp := preflight("https://evil.org", "GET", ""); resp.StatusCode != 403 || resp.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Fatalf("foreign origin preflight: %d %v", resp.StatusCode, resp.Header)
	}
	if resp := preflight("https://app.example.com", "DELETE", ""); resp.StatusCode != 403 {
		t.Fatalf("DELETE preflight: %d", resp.StatusCode)
	}

	// A restart keeps all three.
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}
	s = startIn(t, dir)
	c = s.root()
	check(c)

	if _, err := c.DeleteBucketCors(ctx(t), &s3.DeleteBucketCorsInput{Bucket: aws.String(b)}); err != nil {
		t.Fatal("DeleteBucketCors:", err)
	}
	if _, err := c.DeleteBucketOwnershipControls(ctx(t), &s3.DeleteBucketOwnershipControlsInput{Bucket: aws.String(b)}); err != nil {
		t.Fatal("DeleteBucketOwnershipControls:", err)
	}
	if _, err := c.DeleteBucketWebsite(ctx(t), &s3.DeleteBucketWebsiteInput{Bucket: aws.String(b)}); err != nil {
		t.Fatal("DeleteBucketWebsite:", err)
	}
	_, err = c.GetBucketCors(ctx(t), &s3.GetBucketCorsInput{Bucket: aws.String(b)})
	wantCode(t, err, "NoSuchCORSConfiguration", 404)
	_, err = c.GetBucketOwnershipControls(ctx(t), &s3.GetBucketOwnershipControlsInput{Bucket: aws.String(b)})
	wantCode(t, err, "OwnershipControlsNotFoundError", 404)
	_, err = c.GetBucketWebsite(ctx(t), &s3.GetBucketWebsiteInput{Bucket: aws.String(b)})
	wantCode(t, err, "NoSuchWebsiteConfiguration", 404)
	req, _ := http.NewRequest(http.MethodOptions, s.endpoint+"/"+b+"/k", nil)
	req.Header.Set("Origin", "https://app.example.com")
	req.Header.Set("Access-Control-Request-Method", "GET")
	if r, err := http.DefaultClient.Do(req); err != nil || r.StatusCode != 403 {
		t.Fatalf("preflight after delete: %v %v", r, err)
	} else {
		r.Body.Close()
	}
}
