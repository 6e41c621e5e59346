package e2e

import (
	"errors"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	"github.com/aws/smithy-go"

	"github.com/shardstore/shardstore/internal/oidcidp/oidctest"
)

// webIdentity asks AssumeRoleWithWebIdentity with aws-sdk-go-v2 at its
// defaults (the call is unsigned) and returns an S3 client of the
// session, or the STS error code.
func webIdentity(t *testing.T, s *server, token string, policy *string) (*s3.Client, string) {
	t.Helper()
	c := sts.New(sts.Options{Region: region, BaseEndpoint: aws.String(s.endpoint), HTTPClient: s.http})
	out, err := c.AssumeRoleWithWebIdentity(ctx(t), &sts.AssumeRoleWithWebIdentityInput{
		RoleArn: aws.String("arn:aws:iam::000000000000:role/web"), RoleSessionName: aws.String("e2e-session"),
		WebIdentityToken: aws.String(token), Policy: policy})
	if err != nil {
		var ae smithy.APIError
		if errors.As(err, &ae) {
			return nil, ae.ErrorCode()
		}
		t.Fatalf("AssumeRoleWithWebIdentity: %v", err)
	}
	cr := out.Credentials
	return s3.New(s3.Options{Region: region, BaseEndpoint: aws.String(s.endpoint), UsePathStyle: true, HTTPClient: s.http,
		Credentials: credentials.NewStaticCredentialsProvider(*cr.AccessKeyId, *cr.SecretAccessKey, *cr.SessionToken)}), ""
}

// TestOIDCWebIdentity: a real OpenID provider (oidc-provider, oidctest)
// signs alice and bob in through its authorization-code flow; the
// server, configured by MinIO's MINIO_IDENTITY_OPENID_* variables,
// exchanges their ID tokens for credentials (aws-sdk-go-v2's
// AssumeRoleWithWebIdentity) that may do what the policy claim names and
// nothing else; a token of another client and a tampered one are
// InvalidIdentityToken; with the provider down a server that has not
// seen its keys answers IDPCommunicationError while root works; no token
// reaches the log.
func TestOIDCWebIdentity(t *testing.T) {
	op := oidctest.Start(t)
	t.Setenv("MINIO_IDENTITY_OPENID_CONFIG_URL", op.ConfigURL())
	t.Setenv("MINIO_IDENTITY_OPENID_CLIENT_ID", oidctest.ClientID)
	s := startServer(t, "--log-requests", "--log-level", "debug")
	c := ctx(t)
	root := s.root()
	if _, err := root.CreateBucket(c, &s3.CreateBucketInput{Bucket: aws.String("web")}); err != nil {
		t.Fatal(err)
	}
	if _, err := root.PutObject(c, &s3.PutObjectInput{Bucket: aws.String("web"), Key: aws.String("a.txt"), Body: strings.NewReader("a")}); err != nil {
		t.Fatal(err)
	}
	tokens := map[string]string{}
	for _, who := range []struct{ user, client, secret string }{
		{"alice", oidctest.ClientID, oidctest.ClientSecret}, {"bob", oidctest.ClientID, oidctest.ClientSecret},
		{"other", oidctest.OtherClient, oidctest.OtherSecret},
	} {
		user := who.user
		if user == "other" {
			user = "alice"
		}
		tok, err := op.Login(user, who.client, who.secret)
		if err != nil {
			t.Fatalf("%s signs in at the provider: %v", who.user, err)
		}
		tokens[who.user] = tok
	}

	alice, code := webIdentity(t, s, tokens["alice"], nil)
	if code != "" {
		t.Fatalf("alice: %s", code)
	}
	if _, err := alice.GetObject(c, &s3.GetObjectInput{Bucket: aws.String("web"), Key: aws.String("a.txt")}); err != nil {
		t.Fatalf("alice (readonly) reads: %v", err)
	}
	_, err := alice.PutObject(c, &s3.PutObjectInput{Bucket: aws.String("web"), Key: aws.String("alice.txt"), Body: strings.NewReader("x")})
	wantCode(t, err, "AccessDenied", 403)

	bob, code := webIdentity(t, s, tokens["bob"], nil)
	if code != "" {
		t.Fatalf("bob: %s", code)
	}
	if _, err := bob.PutObject(c, &s3.PutObjectInput{Bucket: aws.String("web"), Key: aws.String("bob.txt"), Body: strings.NewReader("x")}); err != nil {
		t.Fatalf("bob (readwrite) writes: %v", err)
	}
	narrow, code := webIdentity(t, s, tokens["bob"], aws.String(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:GetObject","Resource":"arn:aws:s3:::web/*"}]}`))
	if code != "" {
		t.Fatalf("bob with a session policy: %s", code)
	}
	_, err = narrow.PutObject(c, &s3.PutObjectInput{Bucket: aws.String("web"), Key: aws.String("bob2.txt"), Body: strings.NewReader("x")})
	wantCode(t, err, "AccessDenied", 403)

	// ${jwt:sub}: bob's token also names "diagnostics", which root now
	// creates to deny writes outside web/${jwt:sub}/; a new session of
	// bob's writes there only.
	diag := filepath.Join(t.TempDir(), "diagnostics.json")
	if err := os.WriteFile(diag, []byte(`{"Version":"2012-10-17","Statement":[{"Effect":"Deny","Action":"s3:PutObject","NotResource":"arn:aws:s3:::web/${jwt:sub}/*"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	s.adminJSON(t, nil, "policy", "create", "diagnostics", diag)
	bob2, code := webIdentity(t, s, tokens["bob"], nil)
	if code != "" {
		t.Fatalf("bob again: %s", code)
	}
	if _, err := bob2.PutObject(c, &s3.PutObjectInput{Bucket: aws.String("web"), Key: aws.String("bob/own.txt"), Body: strings.NewReader("x")}); err != nil {
		t.Fatalf("bob writes under ${jwt:sub}: %v", err)
	}
	_, err = bob2.PutObject(c, &s3.PutObjectInput{Bucket: aws.String("web"), Key: aws.String("elsewhere.txt"), Body: strings.NewReader("x")})
	wantCode(t, err, "AccessDenied", 403)

	tampered := []byte(tokens["alice"])
	tampered[len(tampered)-5] ^= 1
	for why, tok := range map[string]string{"another client's token": tokens["other"], "tampered": string(tampered), "not a JWT": "abc"} {
		if _, code := webIdentity(t, s, tok, nil); code != "InvalidIdentityToken" {
			t.Errorf("%s: %q, want InvalidIdentityToken", why, code)
		}
	}

	// The provider goes down: a server that has not fetched its keys yet
	// cannot check a token and says so; root works.
	op.Stop()
	s2 := startServer(t)
	if _, code := webIdentity(t, s2, tokens["alice"], nil); code != "IDPCommunicationError" {
		t.Fatalf("provider down: %q, want IDPCommunicationError", code)
	}
	if _, err := s2.root().ListBuckets(c, &s3.ListBucketsInput{}); err != nil {
		t.Fatalf("root with the provider down: %v", err)
	}
	for _, tok := range tokens {
		if strings.Contains(s.stderr.String(), tok) || strings.Contains(s2.stderr.String(), tok) {
			t.Fatal("an identity token is in the server log")
		}
	}
}

// TestOIDCConsoleInBrowser: the console's login page offers a button per
// provider ("Sign in with TestIdP" and, for a second provider process
// configured as SECOND, "Sign in with Second IdP"); the second takes
// headless Chromium to that provider's login and consent pages and back
// (authorization code with PKCE, state and nonce); alice then sees the
// buckets her policy claim lets her list, and signs out. A callback with
// a state the console did not issue is refused.
func TestOIDCConsoleInBrowser(t *testing.T) {
	// The provider must know the console's callback URL before the
	// server starts, so the console gets a fixed port, which only one
	// node process could take.
	singleNodeOnly(t, "the console's callback port is registered with the provider in advance")
	c := newChrome(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	consoleAddr := "127.0.0.1:" + strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	l.Close()
	op := oidctest.Start(t, "http://"+consoleAddr+"/api/oidc/callback")
	op2 := oidctest.Start(t, "http://"+consoleAddr+"/api/oidc/callback")
	t.Setenv("MINIO_IDENTITY_OPENID_CONFIG_URL", op.ConfigURL())
	t.Setenv("MINIO_IDENTITY_OPENID_CLIENT_ID", oidctest.ClientID)
	t.Setenv("MINIO_IDENTITY_OPENID_CLIENT_SECRET", oidctest.ClientSecret)
	t.Setenv("MINIO_IDENTITY_OPENID_DISPLAY_NAME", "TestIdP")
	t.Setenv("MINIO_IDENTITY_OPENID_CONFIG_URL_SECOND", op2.ConfigURL())
	t.Setenv("MINIO_IDENTITY_OPENID_CLIENT_ID_SECOND", oidctest.OtherClient)
	t.Setenv("MINIO_IDENTITY_OPENID_CLIENT_SECRET_SECOND", oidctest.OtherSecret)
	t.Setenv("SHARDSTORE_IDENTITY_OPENID_DISPLAY_NAME_SECOND", "Second IdP")
	s := startServer(t, "--console-address", consoleAddr)
	url := s.consoleURL(t)
	if _, err := s.root().CreateBucket(ctx(t), &s3.CreateBucketInput{Bucket: aws.String("idp-data")}); err != nil {
		t.Fatal(err)
	}

	// A callback the console did not start is refused.
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noRedirect.Get(url + "/api/oidc/callback?state=forged&code=x")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if loc := resp.Header.Get("Location"); resp.StatusCode != http.StatusSeeOther || !strings.Contains(loc, "sso_error=InvalidState") {
		t.Fatalf("forged callback: %d %s", resp.StatusCode, loc)
	}

	c.run("open login page", chromedp.Navigate(url+"/"), chromedp.WaitVisible("#sso-login", chromedp.ByQuery))
	c.poll("sign-in button named", `document.querySelector("#sso-login").textContent === "Sign in with TestIdP"`)
	c.poll("second sign-in button named", `document.querySelector("#sso-login-SECOND")?.textContent === "Sign in with Second IdP"`)
	c.shot("oidc-login")
	c.run("sign in with the second provider", chromedp.Click("#sso-login-SECOND", chromedp.ByQuery),
		chromedp.WaitVisible(`input[name=login]`, chromedp.ByQuery))
	c.shot("oidc-provider-login")
	c.run("provider login page",
		chromedp.SendKeys(`input[name=login]`, "alice", chromedp.ByQuery),
		chromedp.SendKeys(`input[name=password]`, "alice-password", chromedp.ByQuery),
		chromedp.Click(`button[type=submit]`, chromedp.ByQuery))
	c.run("provider consent page", chromedp.WaitReady(`input[name=prompt][value=consent]`, chromedp.ByQuery),
		chromedp.Click(`button[type=submit]`, chromedp.ByQuery))
	c.run("back in the console", chromedp.WaitVisible("#logout", chromedp.ByQuery))
	c.poll("alice's buckets listed", `[...document.querySelectorAll("a.bucket-link")].some(a => a.textContent === "idp-data")`)
	c.poll("alice named", `document.body.textContent.includes("alice")`)
	c.shot("oidc-buckets")
	c.logout()
	c.checkNoAlerts()
}
