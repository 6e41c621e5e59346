package e2e

import (
	"encoding/json"
	"encoding/xml"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/chromedp/chromedp"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	miniocreds "github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/shardstore/shardstore/internal/ldapidp/slapdtest"
)

// ldapServer starts a real slapd (slapdtest: LDAPS with a test CA,
// StartTLS on its plain port) and a shardstore configured by MinIO's
// MINIO_IDENTITY_LDAP_* variables (startTLS: over StartTLS), re-checking
// the directory on every use of a credential so that a removal shows at
// once. The server logs every request (--log-requests) so that the
// password checks below read everything it writes.
func ldapServer(t *testing.T, startTLS bool, extra ...string) (*server, *slapdtest.Server) {
	t.Helper()
	dir := slapdtest.Start(t)
	for _, kv := range dir.Env(startTLS, true) {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	t.Setenv("SHARDSTORE_IDENTITY_LDAP_RECHECK_INTERVAL", "0s")
	s := startServer(t, append([]string{"--log-requests", "--log-level", "debug"}, extra...)...)
	return s, dir
}

// ldapSTS asks AssumeRoleWithLDAPIdentity as MinIO's clients do (the
// form of minio-go's credentials.LDAPIdentity), returning the
// credentials or the STS error code and HTTP status.
func ldapSTS(t *testing.T, s *server, user, password string, extra url.Values) (creds miniocreds.Value, code string, status int) {
	t.Helper()
	return ldapSTSVia(t, s, false, user, password, extra)
}

// ldapSTSVia is ldapSTS, to node 1 only when direct.
func ldapSTSVia(t *testing.T, s *server, direct bool, user, password string, extra url.Values) (creds miniocreds.Value, code string, status int) {
	t.Helper()
	form := url.Values{"Action": {"AssumeRoleWithLDAPIdentity"}, "Version": {"2011-06-15"},
		"LDAPUsername": {user}, "LDAPPassword": {password}}
	for k, v := range extra {
		form[k] = v
	}
	hc := s.http // any node answers (a cluster spreads the calls)
	if direct {
		hc = s.direct
	}
	resp, err := hc.Post(s.endpoint+"/", "application/x-www-form-urlencoded", strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Error struct{ Code, Message string } `xml:"Error"`
		}
		if err := xml.Unmarshal(body, &e); err != nil || e.Error.Code == "" {
			t.Fatalf("STS answered %d without an STS error: %s", resp.StatusCode, body)
		}
		return miniocreds.Value{}, e.Error.Code, resp.StatusCode
	}
	var ok struct {
		Result struct {
			Credentials struct{ AccessKeyId, SecretAccessKey, SessionToken string } `xml:"Credentials"`
		} `xml:"AssumeRoleWithLDAPIdentityResult"`
	}
	if err := xml.Unmarshal(body, &ok); err != nil || ok.Result.Credentials.SessionToken == "" {
		t.Fatalf("AssumeRoleWithLDAPIdentity answer: %v %s", err, body)
	}
	c := ok.Result.Credentials
	return miniocreds.Value{AccessKeyID: c.AccessKeyId, SecretAccessKey: c.SecretAccessKey, SessionToken: c.SessionToken}, "", 200
}

func (s *server) sessionS3(v miniocreds.Value) *s3.Client {
	return s3.New(s3.Options{Region: region, BaseEndpoint: aws.String(s.endpoint), UsePathStyle: true, HTTPClient: s.http,
		Credentials: credentials.NewStaticCredentialsProvider(v.AccessKeyID, v.SecretAccessKey, v.SessionToken)})
}

// TestLDAPSignIn: directory users of a real slapd get credentials
// through AssumeRoleWithLDAPIdentity (minio-go's LDAP identity provider
// and a raw form POST) and use them with aws-sdk-go-v2 at default
// settings: each may do what the policies mapped to its DN and groups
// allow, nothing else; refusals have STS's codes; a user removed from
// the directory loses its session and access key; with slapd stopped
// federated sign-ins fail with IDPCommunicationError while root works;
// no password ever reaches the server's log.
func TestLDAPSignIn(t *testing.T) {
	s, dir := ldapServer(t, false)
	c := ctx(t)
	root := s.root()
	if _, err := root.CreateBucket(c, &s3.CreateBucketInput{Bucket: aws.String("data")}); err != nil {
		t.Fatal(err)
	}
	if _, err := root.PutObject(c, &s3.PutObjectInput{Bucket: aws.String("data"), Key: aws.String("report.csv"), Body: strings.NewReader("a,b\n")}); err != nil {
		t.Fatal(err)
	}
	// readers (alice, carol) read; bob (a user mapping) reads and writes.
	s.adminJSON(t, nil, "idp", "ldap", "policy", "attach", "readonly", "--group", slapdtest.GroupDN("readers"))
	s.adminJSON(t, nil, "idp", "ldap", "policy", "attach", "readwrite", "--user", "UID=bob, ou=people,dc=example,dc=org")
	var mappings []struct {
		DN       string
		Policies []string
	}
	s.adminJSON(t, &mappings, "idp", "ldap", "policy", "list")
	if len(mappings) != 2 || mappings[0].DN != "cn=readers,ou=groups,dc=example,dc=org" || mappings[1].DN != "uid=bob,ou=people,dc=example,dc=org" {
		t.Fatalf("mappings: %+v", mappings)
	}

	// alice through minio-go's own LDAP identity provider.
	mc, err := miniocreds.NewLDAPIdentity(s.endpoint, "alice", slapdtest.Password("alice"))
	if err != nil {
		t.Fatal(err)
	}
	aliceCreds, err := mc.GetWithContext(nil)
	if err != nil {
		t.Fatalf("minio-go LDAP identity for alice: %v", err)
	}
	alice := s.sessionS3(aliceCreds)
	if _, err := alice.GetObject(c, &s3.GetObjectInput{Bucket: aws.String("data"), Key: aws.String("report.csv")}); err != nil {
		t.Fatalf("alice reads: %v", err)
	}
	_, err = alice.PutObject(c, &s3.PutObjectInput{Bucket: aws.String("data"), Key: aws.String("alice.txt"), Body: strings.NewReader("x")})
	wantCode(t, err, "AccessDenied", 403)
	// ${ldap:username} in a mapped policy: alice writes under her own
	// prefix only (the mapping applies to her session at once).
	home := filepath.Join(t.TempDir(), "home.json")
	if err := os.WriteFile(home, []byte(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:PutObject","Resource":"arn:aws:s3:::data/${ldap:username}/*"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	s.adminJSON(t, nil, "policy", "create", "home", home)
	s.adminJSON(t, nil, "idp", "ldap", "policy", "attach", "home", "--user", slapdtest.UserDN("alice"))
	if _, err := alice.PutObject(c, &s3.PutObjectInput{Bucket: aws.String("data"), Key: aws.String("alice/notes.txt"), Body: strings.NewReader("x")}); err != nil {
		t.Fatalf("alice writes under ${ldap:username}: %v", err)
	}
	_, err = alice.PutObject(c, &s3.PutObjectInput{Bucket: aws.String("data"), Key: aws.String("bob/notes.txt"), Body: strings.NewReader("x")})
	wantCode(t, err, "AccessDenied", 403)

	bobCreds, code, _ := ldapSTS(t, s, "bob", slapdtest.Password("bob"), nil)
	if code != "" {
		t.Fatalf("bob: %s", code)
	}
	bob := s.sessionS3(bobCreds)
	if _, err := bob.PutObject(c, &s3.PutObjectInput{Bucket: aws.String("data"), Key: aws.String("bob.txt"), Body: strings.NewReader("x")}); err != nil {
		t.Fatalf("bob writes: %v", err)
	}
	// A session policy narrows bob's mapped policy.
	readOnly := `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:GetObject","Resource":"arn:aws:s3:::data/*"}]}`
	narrowCreds, code, _ := ldapSTS(t, s, "bob", slapdtest.Password("bob"), url.Values{"Policy": {readOnly}, "DurationSeconds": {"900"}})
	if code != "" {
		t.Fatalf("bob with a session policy: %s", code)
	}
	narrow := s.sessionS3(narrowCreds)
	if _, err := narrow.GetObject(c, &s3.GetObjectInput{Bucket: aws.String("data"), Key: aws.String("bob.txt")}); err != nil {
		t.Fatalf("narrowed bob reads: %v", err)
	}
	_, err = narrow.PutObject(c, &s3.PutObjectInput{Bucket: aws.String("data"), Key: aws.String("bob2.txt"), Body: strings.NewReader("x")})
	wantCode(t, err, "AccessDenied", 403)

	// Refusals, each with its STS code.
	refusals := []struct {
		why, user, password, code string
		status                    int
		extra                     url.Values
	}{
		{"wrong password", "alice", "not-alice-pw", "AccessDenied", 403, nil},
		{"disabled by the filter", "carol", slapdtest.Password("carol"), "AccessDenied", 403, nil},
		{"no mapped policy", "dave", slapdtest.Password("dave"), "AccessDenied", 403, nil},
		{"unknown user", "mallory", "mallory-pw", "AccessDenied", 403, nil},
		{"wildcard name", "*", slapdtest.Password("alice"), "AccessDenied", 403, nil},
		{"filter injection", "alice)(uid=*", slapdtest.Password("alice"), "AccessDenied", 403, nil},
		{"short duration", "alice", slapdtest.Password("alice"), "ValidationError", 400, url.Values{"DurationSeconds": {"60"}}},
		{"bad session policy", "alice", slapdtest.Password("alice"), "MalformedPolicyDocument", 400, url.Values{"Policy": {"{"}}},
	}
	for _, r := range refusals {
		if _, code, status := ldapSTS(t, s, r.user, r.password, r.extra); code != r.code || status != r.status {
			t.Errorf("%s: %s %d, want %s %d", r.why, code, status, r.code, r.status)
		}
	}

	// An access key of alice's (MinIO's service account of an LDAP
	// user) carries her mapped policies.
	var key struct{ AccessKey, SecretKey string }
	s.adminJSON(t, &key, "accesskey", "create", "--user", slapdtest.UserDN("alice"), "--ldap-user", "alice")
	aliceKey := s.client(key.AccessKey, key.SecretKey)
	if _, err := aliceKey.GetObject(c, &s3.GetObjectInput{Bucket: aws.String("data"), Key: aws.String("report.csv")}); err != nil {
		t.Fatalf("alice's access key reads: %v", err)
	}

	// alice leaves the directory: her session and her access key stop
	// working (the server re-checks on every use here; by default within
	// a minute), and she cannot sign in again.
	dir.DeleteUser("alice")
	_, err = alice.GetObject(c, &s3.GetObjectInput{Bucket: aws.String("data"), Key: aws.String("report.csv")})
	wantCode(t, err, "InvalidAccessKeyId", 403)
	_, err = aliceKey.GetObject(c, &s3.GetObjectInput{Bucket: aws.String("data"), Key: aws.String("report.csv")})
	wantCode(t, err, "InvalidAccessKeyId", 403)
	if _, code, _ := ldapSTS(t, s, "alice", slapdtest.Password("alice"), nil); code != "AccessDenied" {
		t.Fatalf("removed alice signs in: %s", code)
	}
	// bob leaves the readers/writers mapping's group? bob's own DN is
	// mapped; take bob out of the directory's writers group: his DN
	// mapping still holds.
	dir.SetMember("writers", "bob", false)
	if _, err := bob.GetObject(c, &s3.GetObjectInput{Bucket: aws.String("data"), Key: aws.String("bob.txt")}); err != nil {
		t.Fatalf("bob after leaving writers: %v", err)
	}

	// bob makes an access key of his own (his mapped policies include
	// admin:CreateServiceAccount) with shardstore admin and his temporary
	// credentials; disabling him in the directory stops both.
	selfKeys := filepath.Join(t.TempDir(), "selfkeys.json")
	if err := os.WriteFile(selfKeys, []byte(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["admin:CreateServiceAccount"]}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	s.adminJSON(t, nil, "policy", "create", "selfkeys", selfKeys)
	s.adminJSON(t, nil, "idp", "ldap", "policy", "attach", "selfkeys", "--user", slapdtest.UserDN("bob"))
	cmd := exec.Command(binary, "admin", "accesskey", "create", "--json")
	cmd.Env = append(os.Environ(), "SHARDSTORE_ENDPOINT="+s.endpoint, "SHARDSTORE_ACCESS_KEY="+bobCreds.AccessKeyID,
		"SHARDSTORE_SECRET_KEY="+bobCreds.SecretAccessKey, "SHARDSTORE_SESSION_TOKEN="+bobCreds.SessionToken)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("bob creates his own access key: %v\n%s", err, out)
	}
	var bobKey struct{ AccessKey, SecretKey string }
	if err := json.Unmarshal(out, &bobKey); err != nil {
		t.Fatalf("accesskey create: %v\n%s", err, out)
	}
	bobKeyClient := s.client(bobKey.AccessKey, bobKey.SecretKey)
	if _, err := bobKeyClient.PutObject(c, &s3.PutObjectInput{Bucket: aws.String("data"), Key: aws.String("by-key.txt"), Body: strings.NewReader("k")}); err != nil {
		t.Fatalf("bob's own access key writes: %v", err)
	}
	dir.SetDisabled("bob", true)
	_, err = bobKeyClient.GetObject(c, &s3.GetObjectInput{Bucket: aws.String("data"), Key: aws.String("by-key.txt")})
	wantCode(t, err, "InvalidAccessKeyId", 403)
	_, err = bob.GetObject(c, &s3.GetObjectInput{Bucket: aws.String("data"), Key: aws.String("by-key.txt")})
	wantCode(t, err, "InvalidAccessKeyId", 403)
	dir.SetDisabled("bob", false)
	if _, err := bobKeyClient.GetObject(c, &s3.GetObjectInput{Bucket: aws.String("data"), Key: aws.String("by-key.txt")}); err != nil {
		t.Fatalf("bob's key after he is enabled again: %v", err)
	}

	// slapd stops: federated sign-ins fail clearly, existing directory
	// credentials are refused, root keeps working.
	dir.Stop()
	if _, code, status := ldapSTS(t, s, "bob", slapdtest.Password("bob"), nil); code != "IDPCommunicationError" || status != 400 {
		t.Fatalf("slapd stopped: %s %d, want IDPCommunicationError", code, status)
	}
	_, err = bob.GetObject(c, &s3.GetObjectInput{Bucket: aws.String("data"), Key: aws.String("bob.txt")})
	wantCode(t, err, "InvalidAccessKeyId", 403)
	if _, err := root.GetObject(c, &s3.GetObjectInput{Bucket: aws.String("data"), Key: aws.String("report.csv")}); err != nil {
		t.Fatalf("root with slapd stopped: %v", err)
	}
	if _, err := s.client(bobUser, bobPass).ListBuckets(c, &s3.ListBucketsInput{}); err != nil {
		t.Fatalf("a local user with slapd stopped: %v", err)
	}

	// Nothing secret in the server's log: user passwords, the lookup
	// password, session secrets.
	log := s.stderr.String()
	for _, secret := range []string{slapdtest.Password("alice"), slapdtest.Password("bob"), slapdtest.Password("carol"),
		"not-alice-pw", slapdtest.LookupPassword, aliceCreds.SecretAccessKey, aliceCreds.SessionToken, key.SecretKey, bobKey.SecretKey} {
		if strings.Contains(log, secret) {
			t.Errorf("the server log holds a secret (%.4s...)", secret)
		}
	}
	if !strings.Contains(log, "sts.assumerolewithldapidentity") {
		t.Error("sign-ins are not in the audit log")
	}
}

// TestLDAPStartTLSAndThrottle: StartTLS on slapd's plain port; failed
// sign-ins from one address are throttled (Throttling) while a good
// password still works from elsewhere (the throttle is per address; the
// test has one, so it checks the refusal only).
func TestLDAPStartTLSAndThrottle(t *testing.T) {
	s, _ := ldapServer(t, true)
	s.adminJSON(t, nil, "idp", "ldap", "policy", "attach", "readonly", "--group", slapdtest.GroupDN("writers"))
	if _, code, _ := ldapSTS(t, s, "bob", slapdtest.Password("bob"), nil); code != "" {
		t.Fatalf("bob over StartTLS: %s", code)
	}
	if clusterNodes > 0 {
		// Each node counts its own failures; the requests here go to node 1.
		t.Log("cluster mode: the throttle is per node")
	}
	got := ""
	for i := 0; i < 12 && got != "Throttling"; i++ {
		_, got, _ = ldapSTSVia(t, s, true, "bob", "wrong-pw", nil)
	}
	if got != "Throttling" {
		t.Fatalf("12 failed sign-ins from one address: %s, want Throttling", got)
	}
	if _, code, _ := ldapSTSVia(t, s, true, "bob", slapdtest.Password("bob"), nil); code != "Throttling" {
		t.Fatalf("a right password from a throttled address: %s, want Throttling", code)
	}
	if strings.Contains(s.stderr.String(), "wrong-pw") {
		t.Error("a failed password is in the server log")
	}
	// The throttle and the directory's connection reuse are metrics (of
	// node 1, which the sign-ins above went to).
	page := s.metrics(t).body
	for name, ok := range map[string]func(float64) bool{
		"shardstore_sts_signin_failures_total":     func(v float64) bool { return v >= 10 },
		"shardstore_sts_signin_throttled_total":    func(v float64) bool { return v >= 2 },
		"shardstore_sts_signin_throttled_sources":  func(v float64) bool { return v == 1 },
		"shardstore_ldap_connections_opened_total": func(v float64) bool { return v >= 1 },
		// 12+ sign-ins reached the directory over few connections.
		"shardstore_ldap_connections_reused_total": func(v float64) bool { return v >= 5 },
	} {
		if v := plainMetric(page, name); !ok(v) {
			t.Errorf("%s = %v", name, v)
		}
	}
}

// plainMetric is the value of an unlabelled sample, -1 when absent.
func plainMetric(page, name string) float64 {
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + ` (\S+)$`).FindStringSubmatch(page)
	if m == nil {
		return -1
	}
	v, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		return -1
	}
	return v
}

// TestLDAPConsoleInBrowser: the web console signs a directory user in
// with its name and password (headless Chromium, the real login page):
// a wrong password is refused with a message, alice sees the buckets her
// mapped policy lets her list and is refused a bucket creation; once she
// leaves the directory her console session stops working.
func TestLDAPConsoleInBrowser(t *testing.T) {
	c := newChrome(t)
	s, dir := ldapServer(t, false, "--console-address", "127.0.0.1:0")
	url := s.consoleURL(t)
	if _, err := s.root().CreateBucket(ctx(t), &s3.CreateBucketInput{Bucket: aws.String("team-data")}); err != nil {
		t.Fatal(err)
	}
	s.adminJSON(t, nil, "idp", "ldap", "policy", "attach", "readonly", "--group", slapdtest.GroupDN("readers"))

	c.run("open login page", chromedp.Navigate(url+"/"), chromedp.WaitVisible("#access-key", chromedp.ByQuery),
		chromedp.WaitVisible("#login-mode", chromedp.ByQuery))
	c.run("choose the directory login", chromedp.SetValue("#login-mode", "ldap", chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelector("#login-mode").dispatchEvent(new Event("change"))`, nil))
	c.poll("fields named for the directory", `document.querySelector("label[for=access-key]").textContent === "User name"`)
	c.run("wrong password",
		chromedp.SendKeys("#access-key", "alice", chromedp.ByQuery),
		chromedp.SendKeys("#secret-key", "not-alice-pw", chromedp.ByQuery),
		chromedp.Click("#login-button", chromedp.ByQuery))
	c.poll("login error shown", `document.querySelector("#login-error").textContent.includes("wrong")`)
	c.run("log in as alice",
		chromedp.Evaluate(`document.querySelector("#secret-key").value = ""`, nil),
		chromedp.SendKeys("#secret-key", slapdtest.Password("alice"), chromedp.ByQuery),
		chromedp.Click("#login-button", chromedp.ByQuery),
		chromedp.WaitVisible("#logout", chromedp.ByQuery))
	c.poll("alice's buckets listed", `[...document.querySelectorAll("a.bucket-link")].some(a => a.textContent === "team-data")`)
	c.poll("alice named in the header", `document.body.textContent.includes("alice")`)
	c.shot("ldap-buckets")
	c.run("create bucket refused",
		chromedp.SendKeys("#new-bucket", "alice-own", chromedp.ByQuery),
		chromedp.Click("#create-bucket", chromedp.ByQuery))
	c.poll("refusal shown", `document.body.textContent.includes("AccessDenied") || document.body.textContent.toLowerCase().includes("denied") || document.body.textContent.toLowerCase().includes("not allowed")`)

	// alice leaves the directory: the console session is refused and the
	// page goes back to the login.
	dir.DeleteUser("alice")
	c.run("reload buckets", chromedp.Navigate(url+"/#/buckets"), chromedp.Reload())
	c.poll("session refused", `!!document.querySelector("#access-key") || document.body.textContent.includes("InvalidAccessKeyId") || document.body.textContent.includes("no longer")`)
	c.checkNoAlerts()
	if strings.Contains(s.stderr.String(), slapdtest.Password("alice")) || strings.Contains(s.stderr.String(), "not-alice-pw") {
		t.Error("a password is in the server log")
	}
	_ = time.Second
}
