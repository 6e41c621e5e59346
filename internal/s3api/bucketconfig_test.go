package s3api

import (
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
)

const testCORS = `<CORSConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/">` +
	`<CORSRule><ID>web</ID><AllowedOrigin>https://*.example.com</AllowedOrigin><AllowedMethod>GET</AllowedMethod>` +
	`<AllowedMethod>PUT</AllowedMethod><AllowedHeader>x-amz-*</AllowedHeader><AllowedHeader>content-type</AllowedHeader>` +
	`<ExposeHeader>ETag</ExposeHeader><MaxAgeSeconds>600</MaxAgeSeconds></CORSRule>` +
	`<CORSRule><AllowedOrigin>*</AllowedOrigin><AllowedMethod>HEAD</AllowedMethod></CORSRule></CORSConfiguration>`

const testOwnership = `<OwnershipControls><Rule><ObjectOwnership>BucketOwnerEnforced</ObjectOwnership></Rule></OwnershipControls>`

const testOwnershipPreferred = `<OwnershipControls><Rule><ObjectOwnership>BucketOwnerPreferred</ObjectOwnership></Rule></OwnershipControls>`

const testPAB = `<PublicAccessBlockConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><BlockPublicAcls>true</BlockPublicAcls>` +
	`<IgnorePublicAcls>false</IgnorePublicAcls><BlockPublicPolicy>true</BlockPublicPolicy>` +
	`<RestrictPublicBuckets>false</RestrictPublicBuckets></PublicAccessBlockConfiguration>`

const testWebsite = `<WebsiteConfiguration><IndexDocument><Suffix>index.html</Suffix></IndexDocument>` +
	`<ErrorDocument><Key>error.html</Key></ErrorDocument><RoutingRules><RoutingRule>` +
	`<Condition><KeyPrefixEquals>docs/</KeyPrefixEquals></Condition>` +
	`<Redirect><ReplaceKeyPrefixWith>documents/</ReplaceKeyPrefixWith><HttpRedirectCode>301</HttpRedirectCode></Redirect>` +
	`</RoutingRule></RoutingRules></WebsiteConfiguration>`

func md5b64(s string) string { return contentMD5([]byte(s)) }

func TestBucketCors(t *testing.T) {
	h := newHarness(t, nil)
	h.expect(h.do("alice", "PUT", "/bkc", nil), 200, "")
	h.expect(h.do("alice", "GET", "/bkc?cors", nil), 404, "NoSuchCORSConfiguration")
	put := func(user, body string) *httptest.ResponseRecorder {
		return h.do(user, "PUT", "/bkc?cors", []byte(body), "Content-MD5", md5b64(body))
	}
	// Content-MD5 (or a checksum) is required, and checked.
	h.expect(h.do("alice", "PUT", "/bkc?cors", []byte(testCORS)), 400, "InvalidRequest")
	h.expect(h.do("alice", "PUT", "/bkc?cors", []byte(testCORS), "Content-MD5", md5b64("other")), 400, "BadDigest")
	// Only the owner (or root) configures it; others are denied.
	h.expect(put("bob", testCORS), 403, "AccessDenied")
	h.expect(put("", testCORS), 403, "AccessDenied")
	h.expect(put("alice", testCORS), 200, "")
	rec := h.do("alice", "GET", "/bkc?cors", nil)
	h.expect(rec, 200, "")
	body := rec.Body.String()
	for _, want := range []string{`<CORSConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/">`, "<ID>web</ID>",
		"<AllowedOrigin>https://*.example.com</AllowedOrigin>", "<AllowedMethod>PUT</AllowedMethod>",
		"<AllowedHeader>x-amz-*</AllowedHeader>", "<ExposeHeader>ETag</ExposeHeader>", "<MaxAgeSeconds>600</MaxAgeSeconds>"} {
		if !strings.Contains(body, want) {
			t.Errorf("GetBucketCors lacks %s: %s", want, body)
		}
	}
	h.expect(h.do("bob", "GET", "/bkc?cors", nil), 403, "AccessDenied")
	h.expect(h.do("root", "GET", "/bkc?cors", nil), 200, "")
	h.expect(h.do("alice", "GET", "/missing?cors", nil), 404, "NoSuchBucket")

	// Validation.
	many := "<CORSConfiguration>" + strings.Repeat("<CORSRule><AllowedOrigin>*</AllowedOrigin><AllowedMethod>GET</AllowedMethod></CORSRule>", 101) + "</CORSConfiguration>"
	for _, c := range []struct{ body, code string }{
		{"not xml", "MalformedXML"},
		{"<CORSConfiguration></CORSConfiguration>", "MalformedXML"},
		{"<Other><CORSRule><AllowedOrigin>*</AllowedOrigin><AllowedMethod>GET</AllowedMethod></CORSRule></Other>", "MalformedXML"},
		{"<CORSConfiguration><CORSRule><AllowedMethod>GET</AllowedMethod></CORSRule></CORSConfiguration>", "MalformedXML"},
		{"<CORSConfiguration><CORSRule><AllowedOrigin>*</AllowedOrigin></CORSRule></CORSConfiguration>", "MalformedXML"},
		{"<CORSConfiguration><CORSRule><AllowedOrigin>*</AllowedOrigin><AllowedMethod>PATCH</AllowedMethod></CORSRule></CORSConfiguration>", "InvalidRequest"},
		{"<CORSConfiguration><CORSRule><AllowedOrigin>*.*</AllowedOrigin><AllowedMethod>GET</AllowedMethod></CORSRule></CORSConfiguration>", "InvalidRequest"},
		{many, "MalformedXML"},
	} {
		h.expect(put("alice", c.body), 400, c.code)
	}
	// A failed put leaves the stored configuration alone.
	if rec := h.do("alice", "GET", "/bkc?cors", nil); rec.Code != 200 || !strings.Contains(rec.Body.String(), "<ID>web</ID>") {
		t.Fatalf("configuration changed by a refused put: %d %s", rec.Code, rec.Body.String())
	}

	h.expect(h.do("bob", "DELETE", "/bkc?cors", nil), 403, "AccessDenied")
	h.expect(h.do("alice", "DELETE", "/bkc?cors", nil), 204, "")
	h.expect(h.do("alice", "DELETE", "/bkc?cors", nil), 204, "")
	h.expect(h.do("alice", "GET", "/bkc?cors", nil), 404, "NoSuchCORSConfiguration")
}

func TestCorsPreflight(t *testing.T) {
	h := newHarness(t, nil)
	h.expect(h.do("alice", "PUT", "/bkc", nil), 200, "")
	pre := func(target string, hdr ...string) *httptest.ResponseRecorder {
		return h.do("", "OPTIONS", target, nil, hdr...)
	}
	// No configuration: refused.
	h.expect(pre("/bkc/k", "Origin", "https://app.example.com", "Access-Control-Request-Method", "GET"), 403, "AccessForbidden")
	h.expect(h.do("alice", "PUT", "/bkc?cors", []byte(testCORS), "Content-MD5", md5b64(testCORS)), 200, "")

	rec := pre("/bkc/some/key", "Origin", "https://app.example.com", "Access-Control-Request-Method", "PUT",
		"Access-Control-Request-Headers", "Content-Type, X-Amz-Date")
	h.expect(rec, 200, "")
	for k, want := range map[string]string{
		"Access-Control-Allow-Origin":      "https://app.example.com",
		"Access-Control-Allow-Methods":     "GET, PUT",
		"Access-Control-Allow-Headers":     "content-type, x-amz-date",
		"Access-Control-Expose-Headers":    "ETag",
		"Access-Control-Max-Age":           "600",
		"Access-Control-Allow-Credentials": "true",
		"Vary":                             "Origin",
	} {
		if got := rec.Header().Get(k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	// The preflight is unsigned: even a bad signature does not matter.
	h.expect(h.do("bad", "OPTIONS", "/bkc", nil, "Origin", "https://x.example.com", "Access-Control-Request-Method", "GET"), 200, "")
	// The catch-all rule allows HEAD from anywhere, with "*".
	rec = pre("/bkc/k", "Origin", "http://other.org", "Access-Control-Request-Method", "HEAD")
	h.expect(rec, 200, "")
	if rec.Header().Get("Access-Control-Allow-Origin") != "*" || rec.Header().Get("Access-Control-Allow-Credentials") != "" {
		t.Errorf("wildcard rule headers: %v", rec.Header())
	}
	for _, c := range [][]string{
		{"Origin", "http://other.org", "Access-Control-Request-Method", "GET"},           // origin
		{"Origin", "https://app.example.com", "Access-Control-Request-Method", "DELETE"}, // method
		{"Origin", "https://app.example.com", "Access-Control-Request-Method", "GET",
			"Access-Control-Request-Headers", "authorization"}, // header
		{"Origin", "https://example.com", "Access-Control-Request-Method", "GET"}, // "*." needs a subdomain
	} {
		rec := pre("/bkc/k", c...)
		h.expect(rec, 403, "AccessForbidden")
		if rec.Header().Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("refused preflight %v carries CORS headers", c)
		}
	}
	h.expect(pre("/bkc/k", "Access-Control-Request-Method", "GET"), 400, "BadRequest")
	h.expect(pre("/bkc/k", "Origin", "https://a.example.com"), 400, "BadRequest")
	h.expect(pre("/nobucket/k", "Origin", "https://a.example.com", "Access-Control-Request-Method", "GET"), 404, "NoSuchBucket")

	// Actual requests with a matching Origin get the headers; others not.
	h.expect(h.do("alice", "PUT", "/bkc/k", []byte("x")), 200, "")
	rec = h.do("alice", "GET", "/bkc/k", nil, "Origin", "https://app.example.com")
	h.expect(rec, 200, "")
	if rec.Header().Get("Access-Control-Allow-Origin") != "https://app.example.com" ||
		rec.Header().Get("Access-Control-Expose-Headers") != "ETag" || rec.Header().Get("Vary") != "Origin" {
		t.Errorf("actual request headers: %v", rec.Header())
	}
	rec = h.do("alice", "GET", "/bkc/k", nil, "Origin", "http://evil.org")
	h.expect(rec, 200, "")
	if rec.Header().Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("unmatched origin got CORS headers: %v", rec.Header())
	}
	// An actual request carrying preflight headers is matched as its
	// preflight: a HEAD asking for GET gets the GET rule's answer, and
	// a GET asking for HEAD the catch-all's "*".
	rec = h.do("alice", "HEAD", "/bkc/k", nil, "Origin", "https://app.example.com", "Access-Control-Request-Method", "GET")
	if rec.Header().Get("Access-Control-Allow-Origin") != "https://app.example.com" || rec.Header().Get("Access-Control-Allow-Credentials") != "true" {
		t.Errorf("actual request with preflight headers: %v", rec.Header())
	}
	rec = h.do("alice", "GET", "/bkc/k", nil, "Origin", "https://app.example.com", "Access-Control-Request-Method", "HEAD")
	if rec.Header().Get("Access-Control-Allow-Origin") != "*" || rec.Header().Get("Access-Control-Allow-Credentials") != "" {
		t.Errorf("actual request asking for HEAD: %v", rec.Header())
	}
	rec = h.do("alice", "DELETE", "/bkc/k", nil, "Origin", "https://app.example.com")
	h.expect(rec, 204, "")
	if rec.Header().Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("method not in the rule got CORS headers: %v", rec.Header())
	}
}

func TestWildcardMatch(t *testing.T) {
	for _, c := range []struct {
		p, s string
		fold bool
		want bool
	}{
		{"*", "anything", false, true},
		{"https://*.example.com", "https://a.example.com", false, true},
		{"https://*.example.com", "https://example.com", false, false},
		{"http://a", "http://a", false, true},
		{"http://a", "http://A", false, false},
		{"X-Amz-*", "x-amz-date", true, true},
		{"ab*ba", "aba", false, false},
	} {
		if got := wildcardMatch(c.p, c.s, c.fold); got != c.want {
			t.Errorf("wildcardMatch(%q, %q) = %v", c.p, c.s, got)
		}
	}
}

func TestBucketOwnershipControls(t *testing.T) {
	h := newHarness(t, nil)
	h.expect(h.do("alice", "PUT", "/bkc", nil), 200, "")
	h.expect(h.do("alice", "GET", "/bkc?ownershipControls", nil), 404, "OwnershipControlsNotFoundError")
	for _, v := range []string{"BucketOwnerEnforced", "BucketOwnerPreferred", "ObjectWriter"} {
		body := fmt.Sprintf(`<OwnershipControls xmlns="%s"><Rule><ObjectOwnership>%s</ObjectOwnership></Rule></OwnershipControls>`, s3NS, v)
		h.expect(h.do("alice", "PUT", "/bkc?ownershipControls", []byte(body), "Content-MD5", md5b64(body)), 200, "")
		rec := h.do("alice", "GET", "/bkc?ownershipControls", nil)
		h.expect(rec, 200, "")
		if !strings.Contains(rec.Body.String(), "<Rule><ObjectOwnership>"+v+"</ObjectOwnership></Rule>") ||
			!strings.Contains(rec.Body.String(), `xmlns="`+s3NS+`"`) {
			t.Errorf("get after put %s: %s", v, rec.Body.String())
		}
	}
	for _, body := range []string{"", "<OwnershipControls/>", "<OwnershipControls><Rule><ObjectOwnership>Mine</ObjectOwnership></Rule></OwnershipControls>",
		"<OwnershipControls><Rule><ObjectOwnership>ObjectWriter</ObjectOwnership></Rule><Rule><ObjectOwnership>ObjectWriter</ObjectOwnership></Rule></OwnershipControls>"} {
		h.expect(h.do("alice", "PUT", "/bkc?ownershipControls", []byte(body)), 400, "MalformedXML")
	}
	h.expect(h.do("alice", "PUT", "/bkc?ownershipControls", []byte(testOwnership), "Content-MD5", md5b64("x")), 400, "BadDigest")
	h.expect(h.do("bob", "PUT", "/bkc?ownershipControls", []byte(testOwnership)), 403, "AccessDenied")
	h.expect(h.do("bob", "GET", "/bkc?ownershipControls", nil), 403, "AccessDenied")
	h.expect(h.do("bob", "DELETE", "/bkc?ownershipControls", nil), 403, "AccessDenied")
	h.expect(h.do("alice", "DELETE", "/bkc?ownershipControls", nil), 204, "")
	h.expect(h.do("alice", "GET", "/bkc?ownershipControls", nil), 404, "OwnershipControlsNotFoundError")
}

func TestBucketWebsite(t *testing.T) {
	h := newHarness(t, nil)
	h.expect(h.do("alice", "PUT", "/bkc", nil), 200, "")
	h.expect(h.do("alice", "GET", "/bkc?website", nil), 404, "NoSuchWebsiteConfiguration")
	h.expect(h.do("alice", "PUT", "/bkc?website", []byte(testWebsite)), 200, "")
	rec := h.do("alice", "GET", "/bkc?website", nil)
	h.expect(rec, 200, "")
	for _, want := range []string{`<WebsiteConfiguration xmlns="` + s3NS + `">`, "<IndexDocument><Suffix>index.html</Suffix></IndexDocument>",
		"<ErrorDocument><Key>error.html</Key></ErrorDocument>", "<KeyPrefixEquals>docs/</KeyPrefixEquals>",
		"<ReplaceKeyPrefixWith>documents/</ReplaceKeyPrefixWith>", "<HttpRedirectCode>301</HttpRedirectCode>"} {
		if !strings.Contains(rec.Body.String(), want) {
			t.Errorf("GetBucketWebsite lacks %s: %s", want, rec.Body.String())
		}
	}
	redirect := `<WebsiteConfiguration><RedirectAllRequestsTo><HostName>example.com</HostName><Protocol>https</Protocol></RedirectAllRequestsTo></WebsiteConfiguration>`
	h.expect(h.do("alice", "PUT", "/bkc?website", []byte(redirect)), 200, "")
	if rec := h.do("alice", "GET", "/bkc?website", nil); !strings.Contains(rec.Body.String(),
		"<RedirectAllRequestsTo><HostName>example.com</HostName><Protocol>https</Protocol></RedirectAllRequestsTo>") ||
		strings.Contains(rec.Body.String(), "IndexDocument") {
		t.Errorf("redirect-all website: %s", rec.Body.String())
	}
	for _, c := range []struct{ body, code string }{
		{"junk", "MalformedXML"},
		{"<WebsiteConfiguration></WebsiteConfiguration>", "InvalidArgument"},
		{"<WebsiteConfiguration><IndexDocument><Suffix></Suffix></IndexDocument></WebsiteConfiguration>", "InvalidArgument"},
		{"<WebsiteConfiguration><IndexDocument><Suffix>a/b</Suffix></IndexDocument></WebsiteConfiguration>", "InvalidArgument"},
		{"<WebsiteConfiguration><RedirectAllRequestsTo><HostName>h</HostName></RedirectAllRequestsTo><IndexDocument><Suffix>i</Suffix></IndexDocument></WebsiteConfiguration>", "InvalidArgument"},
		{"<WebsiteConfiguration><RedirectAllRequestsTo><HostName>h</HostName><Protocol>ftp</Protocol></RedirectAllRequestsTo></WebsiteConfiguration>", "InvalidArgument"},
		{"<WebsiteConfiguration><IndexDocument><Suffix>i</Suffix></IndexDocument><RoutingRules><RoutingRule><Redirect><HttpRedirectCode>200</HttpRedirectCode></Redirect></RoutingRule></RoutingRules></WebsiteConfiguration>", "InvalidArgument"},
		{"<WebsiteConfiguration><IndexDocument><Suffix>i</Suffix></IndexDocument><RoutingRules><RoutingRule></RoutingRule></RoutingRules></WebsiteConfiguration>", "MalformedXML"},
	} {
		h.expect(h.do("alice", "PUT", "/bkc?website", []byte(c.body)), 400, c.code)
	}
	h.expect(h.do("bob", "PUT", "/bkc?website", []byte(testWebsite)), 403, "AccessDenied")
	h.expect(h.do("bob", "GET", "/bkc?website", nil), 403, "AccessDenied")
	h.expect(h.do("alice", "DELETE", "/bkc?website", nil), 204, "")
	h.expect(h.do("alice", "GET", "/bkc?website", nil), 404, "NoSuchWebsiteConfiguration")
	// Configurations are independent of each other.
	h.expect(h.do("alice", "PUT", "/bkc?ownershipControls", []byte(testOwnership)), 200, "")
	h.expect(h.do("alice", "GET", "/bkc?cors", nil), 404, "NoSuchCORSConfiguration")
	h.expect(h.do("alice", "GET", "/bkc?website", nil), 404, "NoSuchWebsiteConfiguration")
	h.expect(h.do("alice", "GET", "/bkc?ownershipControls", nil), 200, "")
}
