package e2e

import (
	"net"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestConsoleNotifyTargetKinds drives the operations page's target form
// in headless Chromium: the kind selector offers every kind the server
// has; choosing redis draws its fields (labelled, the password a
// password input, the required ones required); a redis target pointing
// at a loopback port nothing listens on is added (kinds connect lazily,
// so adding succeeds), listed without its password, and removed.
func TestConsoleNotifyTargetKinds(t *testing.T) {
	c := newChrome(t)
	s := startIn(t, t.TempDir(), "--console-address", "127.0.0.1:0")
	url := s.consoleURL(t)
	// A port that was free a moment ago and has no listener now.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()

	c.login(url, rootUser, rootPass)
	c.run("operations", chromedp.Navigate(url+"/#/ops"), chromedp.WaitVisible("#notify-kind", chromedp.ByQuery))
	// No panel shows a stray "null" (a conditional child given to
	// replaceChildren once did, above the drives table).
	c.poll("drives panel drawn", `document.querySelector("#drives") !== null`)
	var stray []string
	c.eval(`[...document.querySelectorAll("main section")].filter((p) => [...p.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim() === "null")).map((p) => p.id)`, &stray)
	if len(stray) > 0 {
		t.Errorf("panels showing a stray null: %v", stray)
	}
	var kinds []string
	c.eval(`[...document.querySelectorAll("#notify-kind option")].map((o) => o.value)`, &kinds)
	for _, want := range []string{"webhook", "nats", "kafka", "amqp", "redis", "postgresql", "mysql", "mqtt"} {
		if !strings.Contains(","+strings.Join(kinds, ",")+",", ","+want+",") {
			t.Errorf("kind selector lacks %s: %v", want, kinds)
		}
	}
	c.eval(`(() => { const s = document.querySelector("#notify-kind"); s.value = "redis"; s.dispatchEvent(new Event("change")); return true; })()`, nil)
	c.poll("redis fields drawn", `document.querySelector("#notify-f-address") !== null &&
		document.querySelector("#notify-f-address").required &&
		document.querySelector("#notify-f-key").required &&
		document.querySelector("#notify-f-password").type === "password" &&
		!document.querySelector("#notify-f-password").required &&
		document.querySelector('label[for="notify-f-address"]').textContent.includes("address") &&
		document.querySelector("#notify-f-endpoint") === null`)
	c.run("fill in the redis target",
		chromedp.SendKeys("#notify-id", "rd1", chromedp.ByQuery),
		chromedp.SendKeys("#notify-f-address", addr, chromedp.ByQuery),
		chromedp.SendKeys("#notify-f-key", "events", chromedp.ByQuery),
		chromedp.SendKeys("#notify-f-password", "redis-ui-secret", chromedp.ByQuery))
	c.shot("notify-redis-form")
	c.run("add it", chromedp.Click("#notify-add", chromedp.ByQuery))
	c.poll("redis target added and listed", `document.querySelector("#ops-notify .notify-out").textContent.includes("added arn:minio:sqs::rd1:redis") &&
		document.querySelector("#notify-targets") !== null &&
		document.querySelector("#notify-targets").textContent.includes("arn:minio:sqs::rd1:redis")`)
	var page string
	c.eval(`document.body.innerHTML`, &page)
	if strings.Contains(page, "redis-ui-secret") {
		t.Fatal("the redis password is on the page after adding")
	}
	// Remove it (the confirm() is accepted by newChrome's listener).
	c.eval(`(() => { const row = [...document.querySelectorAll("#notify-targets tr")].find((r) => r.textContent.includes("arn:minio:sqs::rd1:redis"));
		[...row.querySelectorAll("button")].find((b) => b.textContent === "Remove").click(); return true; })()`, nil)
	c.poll("redis target removed", `document.querySelector("#ops-notify .notify-out").textContent.includes("removed arn:minio:sqs::rd1:redis") &&
		(document.querySelector("#notify-targets") === null || !document.querySelector("#notify-targets").textContent.includes("arn:minio:sqs::rd1:redis"))`)
	if len(c.alerts) != 0 {
		t.Fatalf("alerts: %v", c.alerts)
	}
}
