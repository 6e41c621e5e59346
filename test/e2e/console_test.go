package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// chromiumPath finds the headless browser for the console tests:
// SHARDSTORE_CHROMIUM, or Chromium / Chrome on PATH (scripts/test
// installs Debian's chromium package).
func chromiumPath(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("SHARDSTORE_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("no Chromium found: scripts/test installs Debian's chromium package; in CI the browser tests must run")
	}
	t.Skip("no Chromium found (chromium, chromium-browser, google-chrome on PATH, or SHARDSTORE_CHROMIUM): run scripts/test, which installs it")
	return ""
}

// artifactDir is where the console screenshots go: SHARDSTORE_ARTIFACTS
// or test-artifacts/console at the repository root.
func artifactDir(t *testing.T) string {
	dir := os.Getenv("SHARDSTORE_ARTIFACTS")
	if dir == "" {
		dir = filepath.Join("..", "..", "test-artifacts")
	}
	dir = filepath.Join(dir, "console")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// consoleURL waits for the server's "Console:" line.
func (s *server) consoleURL(t *testing.T) string {
	t.Helper()
	select {
	case u := <-s.consoleLine:
		return u
	case <-time.After(15 * time.Second):
		t.Fatalf("no Console line within 15s\n%s", s.stderr)
		return ""
	}
}

// chrome is one headless browser session with helpers.
type chrome struct {
	t        *testing.T
	ctx      context.Context
	shots    string
	mu       sync.Mutex
	alerts   []string // alert() dialogs seen: any means script ran from data
	download chan string
}

// newChrome starts a headless browser; extra options (chromedp.Env, say)
// come after the defaults.
func newChrome(t *testing.T, extra ...chromedp.ExecAllocatorOption) *chrome {
	t.Helper()
	exe := chromiumPath(t)
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(exe), chromedp.NoSandbox, chromedp.Headless, chromedp.WindowSize(1280, 900),
		chromedp.Flag("disable-dev-shm-usage", true))
	opts = append(opts, extra...)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(allocCtx)
	ctx, cancelTimeout := context.WithTimeout(ctx, 4*time.Minute)
	t.Cleanup(func() { cancelTimeout(); cancelCtx(); cancelAlloc() })
	c := &chrome{t: t, ctx: ctx, shots: artifactDir(t), download: make(chan string, 4)}
	chromedp.ListenTarget(ctx, func(ev any) {
		switch e := ev.(type) {
		case *page.EventJavascriptDialogOpening:
			if e.Type == page.DialogTypeAlert {
				c.mu.Lock()
				c.alerts = append(c.alerts, e.Message)
				c.mu.Unlock()
			}
			// confirm() of a delete: accept; prompt/alert: dismiss.
			go chromedp.Run(ctx, page.HandleJavaScriptDialog(e.Type == page.DialogTypeConfirm))
		case *browser.EventDownloadProgress:
			if e.State == browser.DownloadProgressStateCompleted {
				c.download <- e.GUID
			}
		}
	})
	return c
}

func (c *chrome) run(what string, actions ...chromedp.Action) {
	c.t.Helper()
	if err := chromedp.Run(c.ctx, actions...); err != nil {
		c.shot("failure-" + strings.ReplaceAll(what, " ", "-"))
		c.t.Fatalf("%s: %v", what, err)
	}
}

// poll waits until the JavaScript expression is true.
func (c *chrome) poll(what, expr string) {
	c.t.Helper()
	var ok bool
	if err := chromedp.Run(c.ctx, chromedp.Poll(expr, &ok, chromedp.WithPollingTimeout(60*time.Second))); err != nil || !ok {
		var body string
		_ = chromedp.Run(c.ctx, chromedp.Text("body", &body, chromedp.ByQuery))
		c.shot("failure-" + strings.ReplaceAll(what, " ", "-"))
		c.t.Fatalf("%s: %v (page text: %.600s)", what, err, body)
	}
}

func (c *chrome) eval(expr string, out any) {
	c.t.Helper()
	c.run("evaluate "+expr, chromedp.Evaluate(expr, out))
}

// shot saves a full-page screenshot as NAME.png in the artefact dir.
func (c *chrome) shot(name string) {
	var buf []byte
	if err := chromedp.Run(c.ctx, chromedp.FullScreenshot(&buf, 100)); err != nil {
		c.t.Logf("screenshot %s: %v", name, err)
		return
	}
	if err := os.WriteFile(filepath.Join(c.shots, name+".png"), buf, 0o644); err != nil {
		c.t.Logf("screenshot %s: %v", name, err)
	}
}

func (c *chrome) login(url, user, pass string) {
	c.t.Helper()
	c.run("open login page", chromedp.Navigate(url+"/"), chromedp.WaitVisible("#access-key", chromedp.ByQuery))
	c.run("log in as "+user,
		chromedp.SendKeys("#access-key", user, chromedp.ByQuery),
		chromedp.SendKeys("#secret-key", pass, chromedp.ByQuery),
		chromedp.Click("#login-button", chromedp.ByQuery),
		chromedp.WaitVisible("#logout", chromedp.ByQuery))
}

func (c *chrome) logout() {
	c.t.Helper()
	c.run("log out", chromedp.Click("#logout", chromedp.ByQuery), chromedp.WaitVisible("#access-key", chromedp.ByQuery))
}

// jsString quotes s for a JavaScript expression.
func jsString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == '<' || r == '>':
			fmt.Fprintf(&b, "\\u%04x", r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// TestConsoleInBrowser drives the web console in headless Chromium the
// way a user would: log in, create a bucket, upload a 30 MiB file by the
// file input and watch the progress reach 100 %, browse into a folder,
// download and compare, share a link and fetch it with curl, delete;
// a limited user is refused with an explanation; an offline drive shows
// on the operations page. Keys and metadata that hold markup stay text.
// Screenshots of the main pages land in test-artifacts/console.
func TestConsoleInBrowser(t *testing.T) {
	c := newChrome(t)
	dir := t.TempDir()
	s := startIn(t, dir, "--console-address", "127.0.0.1:0")
	url := s.consoleURL(t)
	sdk := s.root()

	c.run("open login page", chromedp.Navigate(url+"/"), chromedp.WaitVisible("#access-key", chromedp.ByQuery))
	c.shot("login")
	// A wrong secret is refused with a message.
	c.run("wrong secret",
		chromedp.SendKeys("#access-key", rootUser, chromedp.ByQuery),
		chromedp.SendKeys("#secret-key", "not-the-secret", chromedp.ByQuery),
		chromedp.Click("#login-button", chromedp.ByQuery))
	c.poll("login error shown", `document.querySelector("#login-error").textContent.includes("wrong")`)
	c.login(url, rootUser, rootPass)

	// Create a bucket.
	c.run("create bucket",
		chromedp.WaitVisible("#new-bucket", chromedp.ByQuery),
		chromedp.SendKeys("#new-bucket", "console-e2e", chromedp.ByQuery),
		chromedp.Click("#create-bucket", chromedp.ByQuery))
	c.poll("bucket listed", `[...document.querySelectorAll("a.bucket-link")].some(a => a.textContent === "console-e2e")`)
	c.shot("buckets")

	// Objects the browser will meet: a folder, and markup in a key and in metadata.
	xssKey := `<img src=x onerror=alert(1)>`
	for key, body := range map[string]string{"docs/readme.txt": "read me", xssKey: "x"} {
		if _, err := sdk.PutObject(ctx(t), &s3.PutObjectInput{Bucket: aws.String("console-e2e"), Key: aws.String(key),
			Body: strings.NewReader(body), Metadata: map[string]string{"note": `<script>alert(2)</script>`}}); err != nil {
			t.Fatal(err)
		}
	}

	// Upload 30 MiB through the file input (multipart in the page).
	big := pattern(30<<20, 7)
	bigPath := filepath.Join(dir, "big.bin")
	if err := os.WriteFile(bigPath, big, 0o644); err != nil {
		t.Fatal(err)
	}
	c.run("open bucket", chromedp.Navigate(url+"/#/browse?bucket=console-e2e"), chromedp.WaitVisible("#objects", chromedp.ByQuery))
	c.run("choose file", chromedp.SetUploadFiles("#file-input", []string{bigPath}, chromedp.ByQuery))
	c.poll("upload reaches 100 %", `(() => {
		const bar = document.querySelector("#upload-overall-bar");
		const st = [...document.querySelectorAll(".upload-status")].map(e => e.textContent);
		return bar && bar.value === 100 && document.querySelector("#upload-overall").textContent.startsWith("100 %") && st.length === 1 && st[0] === "done";
	})()`)
	c.poll("uploaded file listed", `[...document.querySelectorAll("button.object")].some(b => b.textContent === "big.bin")`)
	c.shot("upload")
	got := getBody(t, sdk, "console-e2e", "big.bin")
	if !bytes.Equal(got, big) {
		t.Fatalf("uploaded object differs: %d bytes stored, %d sent", len(got), len(big))
	}

	// Markup in keys and metadata renders as text.
	c.poll("hostile key shown as text", `[...document.querySelectorAll("button.object")].some(b => b.textContent === `+jsString(xssKey)+`) && !document.querySelector("img[src=x]")`)
	c.eval(`[...document.querySelectorAll("button.object")].find(b => b.textContent === `+jsString(xssKey)+`).click()`, nil)
	c.poll("details of hostile key", `document.querySelector("#details .key") && document.querySelector("#details .key").textContent === `+jsString(xssKey)+
		` && document.querySelector("#details").textContent.includes("<script>alert(2)</script>") && !document.querySelector("#details script")`)

	// Browse into the folder.
	c.run("open folder", chromedp.Click(`a.folder`, chromedp.ByQuery))
	c.poll("folder content", `location.hash.includes("prefix=docs") && [...document.querySelectorAll("button.object")].some(b => b.textContent === "readme.txt")`)
	c.shot("folder")

	// At a phone's width the folder view fits the screen (no sideways scrolling).
	c.run("phone width", chromedp.EmulateViewport(390, 844))
	c.poll("fits a phone", `document.documentElement.scrollWidth <= window.innerWidth + 1`)
	c.shot("phone-folder")
	c.run("laptop width", chromedp.EmulateViewport(1280, 900))

	// Details, download, share.
	c.run("back to bucket", chromedp.Navigate(url+"/#/browse?bucket=console-e2e"), chromedp.WaitVisible("#objects", chromedp.ByQuery))
	c.eval(`[...document.querySelectorAll("button.object")].find(b => b.textContent === "big.bin").click()`, nil)
	c.run("details", chromedp.WaitVisible("#download", chromedp.ByQuery))
	c.poll("details show size", `document.querySelector("#details").textContent.includes("31,457,280 bytes")`)
	c.shot("details")
	dl := t.TempDir()
	c.run("allow downloads", browser.SetDownloadBehavior(browser.SetDownloadBehaviorBehaviorAllowAndName).WithDownloadPath(dl).WithEventsEnabled(true))
	c.run("download", chromedp.Click("#download", chromedp.ByQuery))
	select {
	case guid := <-c.download:
		data, err := os.ReadFile(filepath.Join(dl, guid))
		if err != nil || !bytes.Equal(data, big) {
			t.Fatalf("downloaded file differs (%d bytes, %v)", len(data), err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("download did not complete within 60s")
	}
	var link string
	c.run("share", chromedp.Click("#share-create", chromedp.ByQuery), chromedp.WaitVisible("#share-url", chromedp.ByQuery),
		chromedp.Value("#share-url", &link, chromedp.ByQuery))
	c.shot("share")
	if !strings.HasPrefix(link, s.endpoint+"/console-e2e/big.bin?") || !strings.Contains(link, "X-Amz-Signature=") {
		t.Fatalf("share link %q", link)
	}
	shared := fetchWithCurl(t, link)
	if !bytes.Equal(shared, big) {
		t.Fatalf("the share link gave %d bytes, want the 30 MiB object", len(shared))
	}

	// Delete it by selection.
	c.eval(`document.querySelector('input.sel[value="big.bin"]').click()`, nil)
	c.run("delete selected", chromedp.Click("#delete-selected", chromedp.ByQuery))
	c.poll("deleted object gone", `![...document.querySelectorAll("button.object")].some(b => b.textContent === "big.bin")`)
	if _, err := sdk.HeadObject(ctx(t), &s3.HeadObjectInput{Bucket: aws.String("console-e2e"), Key: aws.String("big.bin")}); err == nil {
		t.Fatal("big.bin still exists after the console deleted it")
	}

	// A limited user: no operations, and root's bucket refused with an explanation.
	c.logout()
	c.login(url, bobUser, bobPass)
	var navText string
	c.run("nav", chromedp.Text("nav", &navText, chromedp.ByQuery))
	if strings.Contains(navText, "Operations") {
		t.Errorf("bob's navigation offers Operations: %q", navText)
	}
	c.run("open root's bucket", chromedp.Navigate(url+"/#/browse?bucket=console-e2e"))
	c.poll("refusal explained", `document.querySelector(".list .error") && document.querySelector(".list .error").textContent.includes("not allowed")`)
	c.shot("refused")
	c.logout()

	// The operations page, healthy and with a drive gone.
	c.login(url, rootUser, rootPass)
	c.run("operations", chromedp.Navigate(url+"/#/ops"), chromedp.WaitVisible("#drives", chromedp.ByQuery))
	c.poll("all drives online", `document.querySelector("#ops-summary").textContent.includes("4 / 4")`)
	c.poll("live charts", `document.querySelector("#cpu-bars") !== null && document.querySelector("#ops-charts .legend").textContent.includes("MiB/s")`)
	c.shot("operations")

	// Identities: create a user (its secret shown once) and attach a policy.
	c.run("identities", chromedp.Navigate(url+"/#/identities"), chromedp.WaitVisible("#new-user", chromedp.ByQuery))
	c.run("create user", chromedp.SendKeys("#new-user", "alice", chromedp.ByQuery), chromedp.Click("#create-user", chromedp.ByQuery))
	c.poll("secret shown", `document.querySelector("#new-secret") && document.querySelector("#new-secret").textContent.length >= 16`)
	var secret string
	c.run("read secret", chromedp.Text("#new-secret", &secret, chromedp.ByQuery))
	c.eval(`(() => { const row = [...document.querySelectorAll("#users tbody tr")].find(r => r.firstChild.textContent === "alice");
		row.querySelector("select").value = "readonly"; [...row.querySelectorAll("button")].find(b => b.textContent === "Attach").click(); })()`, nil)
	c.poll("policy attached", `[...document.querySelectorAll("#users tbody tr")].some(r => r.firstChild.textContent === "alice" &&
		[...r.querySelectorAll(".chip")].some(ch => ch.firstChild.textContent === "readonly"))`)
	c.shot("identities")
	// alice's new credentials read root's bucket (readonly) but may not write.
	alice := s.client("alice", secret)
	if _, err := alice.ListObjectsV2(ctx(t), &s3.ListObjectsV2Input{Bucket: aws.String("console-e2e")}); err != nil {
		t.Fatalf("alice with readonly cannot list: %v", err)
	}
	if _, err := alice.PutObject(ctx(t), &s3.PutObjectInput{Bucket: aws.String("console-e2e"), Key: aws.String("a"), Body: strings.NewReader("x")}); err == nil {
		t.Fatal("alice with readonly could write")
	}

	// A managed policy written in the console, attached through a group
	// made there: alice may now write under tmp/ and nowhere else.
	putTmp := func(c *s3.Client, key string) error {
		_, err := c.PutObject(ctx(t), &s3.PutObjectInput{Bucket: aws.String("console-e2e"), Key: aws.String(key), Body: strings.NewReader("x")})
		return err
	}
	c.run("policy form", chromedp.SendKeys("#policy-name", "tmp-writer", chromedp.ByQuery),
		chromedp.SendKeys("#policy-text", `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["s3:PutObject"],"Resource":["arn:aws:s3:::console-e2e/tmp/*"]}]}`, chromedp.ByQuery),
		chromedp.Click("#save-policy", chromedp.ByQuery))
	c.poll("policy listed", `[...document.querySelectorAll("#policies tbody tr")].some(r => r.firstChild.textContent === "tmp-writer" && r.textContent.includes("managed"))`)
	c.eval(`(() => { document.querySelector("#new-group").value = "writers"; document.querySelector("#new-group-member").value = "alice";
		document.querySelector("#create-group").click(); })()`, nil)
	c.poll("group made", `[...document.querySelectorAll("#groups tbody tr")].some(r => r.firstChild.textContent === "writers" &&
		[...r.querySelectorAll(".chip")].some(ch => ch.firstChild.textContent === "alice"))`)
	c.eval(`(() => { const row = [...document.querySelectorAll("#groups tbody tr")].find(r => r.firstChild.textContent === "writers");
		row.querySelectorAll("select")[1].value = "tmp-writer"; [...row.querySelectorAll("button")].find(b => b.textContent === "Attach").click(); })()`, nil)
	c.poll("policy attached to the group", `[...document.querySelectorAll("#groups tbody tr")].some(r => r.firstChild.textContent === "writers" &&
		[...r.querySelectorAll(".chip")].some(ch => ch.firstChild.textContent === "tmp-writer"))`)
	if err := putTmp(alice, "tmp/ok"); err != nil {
		t.Fatalf("alice in writers cannot write under tmp/: %v", err)
	}
	if err := putTmp(alice, "elsewhere"); err == nil {
		t.Fatal("alice in writers could write outside tmp/")
	}
	// An access key made for alice in the console acts as alice, until
	// it is disabled there.
	keysButton := `[...document.querySelectorAll("#users button")].find(b => b.getAttribute("aria-label") === "Access keys of alice")`
	c.poll("keys button", keysButton+` !== undefined`)
	c.eval(keysButton+`.click()`, nil)
	c.run("keys panel", chromedp.WaitVisible("#create-key", chromedp.ByQuery), chromedp.Click("#create-key", chromedp.ByQuery))
	c.poll("key secret shown", `document.querySelector("#new-key-secret") && document.querySelector("#new-key-secret").textContent.length >= 16`)
	c.poll("key counted in the users table", `[...document.querySelectorAll("#users tbody tr")].some(r => r.firstChild.textContent === "alice" && r.querySelector("td.num").textContent === "1")`)
	var keyLine, keySecret string
	c.run("read key", chromedp.Text("#new-key code", &keyLine, chromedp.ByQuery), chromedp.Text("#new-key-secret", &keySecret, chromedp.ByQuery))
	c.shot("identities-edit")
	aliceKey := s.client(strings.TrimSpace(keyLine), keySecret)
	if err := putTmp(aliceKey, "tmp/by-key"); err != nil {
		t.Fatalf("alice's new key cannot do what alice may: %v", err)
	}
	c.eval(`[...document.querySelectorAll("#keys button")].find(b => b.textContent === "Disable").click()`, nil)
	c.poll("key disabled", `document.querySelector("#keys") && document.querySelector("#keys").textContent.includes("disabled")`)
	if err := putTmp(aliceKey, "tmp/disabled"); err == nil {
		t.Fatal("a key disabled in the console still works")
	}
	// Out of the group again: the group's policy no longer applies.
	c.eval(`[...document.querySelectorAll("#groups button")].find(b => b.getAttribute("aria-label") === "Remove alice from writers").click()`, nil)
	c.poll("member removed", `document.querySelector("#new-group") && ![...document.querySelectorAll("#groups .chip")].some(ch => ch.firstChild.textContent === "alice")`)
	if err := putTmp(alice, "tmp/after"); err == nil {
		t.Fatal("alice removed from writers could still write under tmp/")
	}

	if clusterNodes > 0 {
		// On a cluster node 3 holds only drive 3: restarted without it,
		// it refuses to start (test/cluster TestNodeWithEveryDriveMissing).
		// The drive is pulled from the running node instead; the node
		// serving the console learns it from node 3.
		if err := os.Rename(s.drives+"3", filepath.Join(dir, "unplugged")); err != nil {
			t.Fatal(err)
		}
	} else {
		if err := s.stop(); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(s.drives+"3", filepath.Join(dir, "unplugged")); err != nil {
			t.Fatal(err)
		}
		s = startIn(t, dir, "--console-address", "127.0.0.1:0")
		url = s.consoleURL(t)
		c.login(url, rootUser, rootPass)
	}
	c.run("operations, degraded", chromedp.Navigate(url+"/#/ops"), chromedp.WaitVisible("#drives", chromedp.ByQuery))
	c.poll("offline drive shown", `document.querySelector("#ops-summary").textContent.includes("3 / 4") &&
		[...document.querySelectorAll("#drives tr.offline")].some(r => r.textContent.includes("drive3") && r.textContent.includes("offline")) &&
		document.querySelector("#ops-drives .error").textContent.includes("offline")`)
	c.shot("operations-drive-offline")
	c.checkNoAlerts()
}

// checkNoAlerts fails the test if a script from stored data ran.
func (c *chrome) checkNoAlerts() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.alerts) > 0 {
		c.t.Fatalf("script from stored data ran: alert(%q)", c.alerts)
	}
}

// fetchWithCurl fetches a share link as its recipient would: with curl
// when the machine has it, else with a plain HTTP client.
func fetchWithCurl(t *testing.T, link string) []byte {
	t.Helper()
	if curl, err := exec.LookPath("curl"); err == nil {
		out, err := exec.Command(curl, "-sS", "--fail", link).Output()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("curl %s: %v: %s", link, err, ee.Stderr)
		} else if err != nil {
			t.Fatal(err)
		}
		return out
	}
	resp, err := http.Get(link)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d %s", link, resp.StatusCode, b)
	}
	return b
}

// TestConsoleUploadResumeAndDrop: a multipart upload in the page whose
// second part cannot be sent (every attempt fails, as on a cut
// connection) ends "failed" with a Resume button; Resume sends only the
// part the server lacks and the object is whole. A file dropped on the
// object browser (a drop event carrying it) is uploaded too.
func TestConsoleUploadResumeAndDrop(t *testing.T) {
	c := newChrome(t)
	dir := t.TempDir()
	s := startIn(t, dir, "--console-address", "127.0.0.1:0")
	url := s.consoleURL(t)
	sdk := s.root()
	createBucket(t, sdk, "resume")
	c.login(url, rootUser, rootPass)

	body := pattern(20<<20, 11) // three parts of 8 MiB
	path := filepath.Join(dir, "three-parts.bin")
	if err := os.WriteFile(path, body, 0o644); err != nil {
		t.Fatal(err)
	}
	// An empty bucket has no #objects list yet: wait for its upload input.
	c.run("open bucket", chromedp.Navigate(url+"/#/browse?bucket=resume"), chromedp.WaitReady("#file-input", chromedp.ByQuery))
	// Every send of part 2 fails like a dropped connection; the page's
	// part sends are recorded.
	c.eval(`(() => {
		window.partSends = []; window.failPart = 2;
		const open = XMLHttpRequest.prototype.open, send = XMLHttpRequest.prototype.send;
		XMLHttpRequest.prototype.open = function (m, u) { this._url = String(u); return open.apply(this, arguments); };
		XMLHttpRequest.prototype.send = function () {
			const m = /\/api\/multipart\/part\?.*partNumber=(\d+)/.exec(this._url || "");
			if (m) {
				window.partSends.push(Number(m[1]));
				if (Number(m[1]) === window.failPart) { setTimeout(() => this.onerror(new ProgressEvent("error")), 10); return; }
			}
			return send.apply(this, arguments);
		};
	})()`, nil)
	c.run("choose file", chromedp.SetUploadFiles("#file-input", []string{path}, chromedp.ByQuery))
	c.poll("upload failed with Resume offered", `[...document.querySelectorAll(".upload-status")].some(e => e.textContent.startsWith("failed")) &&
		[...document.querySelectorAll("#uploads button")].some(b => b.textContent === "Resume")`)
	c.shot("upload-failed")
	// Wait until the parts that could be sent are on the server.
	var uploadID string
	deadline := time.Now().Add(30 * time.Second)
	for {
		ups, err := sdk.ListMultipartUploads(ctx(t), &s3.ListMultipartUploadsInput{Bucket: aws.String("resume")})
		if err != nil {
			t.Fatal(err)
		}
		if len(ups.Uploads) == 1 {
			uploadID = aws.ToString(ups.Uploads[0].UploadId)
			parts, err := sdk.ListParts(ctx(t), &s3.ListPartsInput{Bucket: aws.String("resume"), Key: aws.String("three-parts.bin"), UploadId: aws.String(uploadID)})
			if err != nil {
				t.Fatal(err)
			}
			if len(parts.Parts) == 2 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("parts 1 and 3 never arrived")
		}
		time.Sleep(100 * time.Millisecond)
	}
	c.eval(`(() => { window.failPart = 0; window.partSends = [];
		[...document.querySelectorAll("#uploads button")].find(b => b.textContent === "Resume").click(); })()`, nil)
	c.poll("resumed upload done", `[...document.querySelectorAll(".upload-status")].map(e => e.textContent).join() === "done"`)
	var resent []int
	c.eval(`window.partSends`, &resent)
	if len(resent) != 1 || resent[0] != 2 {
		t.Fatalf("Resume sent parts %v, want only part 2", resent)
	}
	if got := getBody(t, sdk, "resume", "three-parts.bin"); !bytes.Equal(got, body) {
		t.Fatalf("resumed upload: %d bytes stored, %d sent", len(got), len(body))
	}

	// Drag and drop: the drop zone shows while dragging; the dropped file
	// is uploaded into the folder on view.
	c.run("open folder", chromedp.Navigate(url+"/#/browse?bucket=resume&prefix=in%2F"), chromedp.WaitReady("#file-input", chromedp.ByQuery))
	c.eval(`(() => {
		const dt = new DataTransfer();
		dt.items.add(new File(["dropped bytes\n"], "dropped.txt", { type: "text/plain" }));
		const target = document.querySelector("#main");
		target.dispatchEvent(new DragEvent("dragenter", { dataTransfer: dt, bubbles: true, cancelable: true }));
		window.zoneShown = !document.querySelector(".dropzone").hidden;
		target.dispatchEvent(new DragEvent("drop", { dataTransfer: dt, bubbles: true, cancelable: true }));
	})()`, nil)
	var zoneShown bool
	c.eval(`window.zoneShown`, &zoneShown)
	if !zoneShown {
		t.Error("the drop zone did not show while dragging")
	}
	c.poll("dropped file listed", `[...document.querySelectorAll("button.object")].some(b => b.textContent === "dropped.txt")`)
	if got := getBody(t, sdk, "resume", "in/dropped.txt"); string(got) != "dropped bytes\n" {
		t.Fatalf("dropped file stored as %q", got)
	}
	c.checkNoAlerts()
}

// TestConsoleShareLinkUsesPublicURL: with --public-url (the S3 endpoint
// as clients reach it), the console's share links carry that address,
// and such a link works for whoever has it.
func TestConsoleShareLinkUsesPublicURL(t *testing.T) {
	singleNodeOnly(t, "chooses the server's port and its public name")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	l.Close()
	public := "http://localhost:" + port
	s := startServer(t, "--address", "127.0.0.1:"+port, "--public-url", public+"/", "--console-address", "127.0.0.1:0")
	createBucket(t, s.root(), "shared")
	if _, err := s.root().PutObject(ctx(t), &s3.PutObjectInput{Bucket: aws.String("shared"), Key: aws.String("a b.txt"), Body: strings.NewReader("shared bytes")}); err != nil {
		t.Fatal(err)
	}
	consoleURL := s.consoleURL(t)
	jar, _ := cookiejar.New(nil)
	hc := &http.Client{Jar: jar}
	call := func(path, csrf string, body any, out any) {
		t.Helper()
		b, _ := json.Marshal(body)
		req, _ := http.NewRequest(http.MethodPost, consoleURL+path, bytes.NewReader(b))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Origin", consoleURL)
		if csrf != "" {
			req.Header.Set("X-CSRF-Token", csrf)
		}
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			msg, _ := io.ReadAll(resp.Body)
			t.Fatalf("POST %s: %d %s", path, resp.StatusCode, msg)
		}
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			t.Fatal(err)
		}
	}
	var sess struct {
		CSRF string `json:"csrf"`
	}
	call("/api/login", "", map[string]string{"accessKey": rootUser, "secretKey": rootPass}, &sess)
	var share struct {
		URL string `json:"url"`
	}
	call("/api/share", sess.CSRF, map[string]any{"bucket": "shared", "key": "a b.txt", "expiresSeconds": 600}, &share)
	if !strings.HasPrefix(share.URL, public+"/shared/a%20b.txt?") {
		t.Fatalf("share link %q does not use the public URL %s", share.URL, public)
	}
	resp, err := http.Get(share.URL) // an anonymous recipient
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || string(got) != "shared bytes" {
		t.Fatalf("share link answered %d %q", resp.StatusCode, got)
	}
}
