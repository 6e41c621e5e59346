// Package oidctest runs a real OpenID Connect provider for the tests:
// panva's oidc-provider (npm, an OpenID Certified implementation) under
// Node.js, configured by provider.mjs with two users (alice: policy
// readonly, groups readers, preferred_username "al*"; bob: policies
// readwrite and diagnostics, groups writers, preferred_username bob), two clients (shardstore, other-app) and a service
// client (shardstore-svc, client-credentials grant only). Login signs a
// user in through the provider's own authorization-code flow (its
// development login and consent pages, driven over HTTP) and returns the
// ID token the token endpoint issues; ClientCredentials returns the
// service client's JWT access token (audience shardstore-svc, claim
// policy readonly).
//
// Node comes from PATH; oidc-provider from the npm registry, installed
// with npm into the user cache on first use (saying so; one test binary
// at a time). Without them a test is skipped, unless
// SHARDSTORE_REQUIRE_OIDC is set, where that is a failure.
package oidctest

import (
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shardstore/shardstore/internal/testinstall"
)

//go:embed provider.mjs
var providerScript []byte

// Package is the npm package (and version) the provider comes from.
const Package = "oidc-provider@9.13.3"

// Clients of the provider.
const (
	ClientID     = "shardstore"
	ClientSecret = "shardstore-client-secret"
	OtherClient  = "other-app"
	OtherSecret  = "other-app-secret"
	// ServiceClient uses the client-credentials grant only.
	ServiceClient = "shardstore-svc"
	ServiceSecret = "shardstore-svc-secret"
	// Resource is the resource indicator its tokens are asked for.
	Resource = "urn:shardstore"
)

// installed is node's path and the folder oidc-provider is installed in.
type installed struct{ node, dir string }

var install testinstall.Once[installed]

func findOrInstall() (installed, []string, error) {
	node := testinstall.Lookup("node")
	if node == "" {
		return installed{}, nil, errors.New("no node on PATH (Debian's nodejs package)")
	}
	dir, err := testinstall.CacheDir("oidc-provider")
	if err != nil {
		return installed{}, nil, err
	}
	marker := filepath.Join(dir, "node_modules", "oidc-provider", "package.json")
	if _, err := os.Stat(marker); err == nil {
		return installed{node, dir}, []string{"using " + Package + " in " + dir}, nil
	}
	npm := testinstall.Lookup("npm")
	if npm == "" {
		return installed{}, nil, errors.New("oidc-provider is not installed and there is no npm")
	}
	var log []string
	err = testinstall.Locked("oidc-provider", func() error {
		if _, err := os.Stat(marker); err == nil {
			return nil // another test binary installed it meanwhile
		}
		log = append(log, "installing "+Package+" from the npm registry into "+dir)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		cmd := exec.Command(npm, "install", "--no-audit", "--no-fund", "--prefix", dir, Package)
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("npm install %s: %w: %s", Package, err, testinstall.Tail(out))
		}
		return nil
	})
	if err != nil {
		return installed{}, log, err
	}
	return installed{node, dir}, log, nil
}

// Provider is a running oidc-provider.
type Provider struct {
	t        testing.TB
	Issuer   string // http://127.0.0.1:PORT
	redirect string
	proc     *testinstall.Process
}

// ConfigURL is the provider's discovery URL.
func (p *Provider) ConfigURL() string { return p.Issuer + "/.well-known/openid-configuration" }

// Start runs the provider; it is stopped when the test ends. Both
// clients accept the redirect URIs given (a console's callback) besides
// the one Login uses.
func Start(t testing.TB, redirects ...string) *Provider {
	t.Helper()
	inst := install.Get(t, testinstall.Need{What: "OpenID provider", Tests: "the OpenID tests", Require: "SHARDSTORE_REQUIRE_OIDC"}, findOrInstall)
	script := filepath.Join(inst.dir, "provider.mjs") // beside node_modules, so the import resolves
	if err := os.WriteFile(script, providerScript, 0o644); err != nil {
		t.Fatal(err)
	}
	port := testinstall.FreePort(t)
	p := &Provider{t: t, Issuer: "http://127.0.0.1:" + strconv.Itoa(port), redirect: "http://127.0.0.1:1/callback"}
	p.proc = &testinstall.Process{Name: "oidc-provider", Addr: "127.0.0.1:" + strconv.Itoa(port), Dir: inst.dir,
		Args: []string{inst.node, script, strconv.Itoa(port), strings.Join(append([]string{p.redirect}, redirects...), ",")},
		// Up once it serves its discovery document.
		Ready: func() error {
			resp, err := (&http.Client{Timeout: 5 * time.Second}).Get(p.ConfigURL())
			if err != nil {
				return err
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				return fmt.Errorf("discovery: %s", resp.Status)
			}
			return nil
		}}
	p.proc.Run(t)
	return p
}

// Stop ends the provider.
func (p *Provider) Stop() {
	p.t.Helper()
	p.proc.Stop(p.t)
}

var formAction = regexp.MustCompile(`<form[^>]*action="([^"]+)"`)

// Authorize signs user in at authURL (an authorization request a client,
// such as the console, made) through the provider's login and consent
// pages, and returns the URL the provider sends the browser back to:
// the redirect URI (starting with redirectPrefix) with code and state.
// hc carries the browser's cookies for the provider; it must not follow
// redirects to redirectPrefix.
func (p *Provider) Authorize(hc *http.Client, authURL, user, redirectPrefix string) (*url.URL, error) {
	return p.authorize(hc, authURL, user, redirectPrefix)
}

func (p *Provider) authorize(hc *http.Client, authURL, user, redirectPrefix string) (*url.URL, error) {
	resp, err := hc.Get(authURL)
	if err != nil {
		return nil, err
	}
	for _, step := range []url.Values{
		{"prompt": {"login"}, "login": {user}, "password": {user + "-password"}},
		{"prompt": {"consent"}},
	} {
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		m := formAction.FindSubmatch(body)
		if m == nil {
			if loc := resp.Header.Get("Location"); strings.HasPrefix(loc, redirectPrefix) {
				break // consent already given
			}
			return nil, fmt.Errorf("no form on %s (%d): %.300s", resp.Request.URL, resp.StatusCode, body)
		}
		action, _ := url.Parse(string(m[1]))
		resp, err = hc.PostForm(resp.Request.URL.ResolveReference(action).String(), step)
		if err != nil {
			return nil, err
		}
	}
	resp.Body.Close()
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil || !strings.HasPrefix(loc.String(), redirectPrefix) || loc.Query().Get("code") == "" {
		return nil, fmt.Errorf("no code in the redirect (%d %s)", resp.StatusCode, resp.Header.Get("Location"))
	}
	return loc, nil
}

// Login signs user in for client (ClientID or OtherClient) through the
// authorization-code flow and returns the ID token.
func (p *Provider) Login(user, client, secret string) (string, error) {
	jar, _ := cookiejar.New(nil)
	hc := &http.Client{Jar: jar, Timeout: 30 * time.Second, CheckRedirect: func(req *http.Request, _ []*http.Request) error {
		if strings.HasPrefix(req.URL.String(), p.redirect) {
			return http.ErrUseLastResponse // the code, for the client
		}
		return nil
	}}
	q := url.Values{"client_id": {client}, "response_type": {"code"}, "scope": {"openid"},
		"redirect_uri": {p.redirect}, "state": {"st-" + user}, "nonce": {"n-" + user}}
	loc, err := p.authorize(hc, p.Issuer+"/auth?"+q.Encode(), user, p.redirect)
	if err != nil {
		return "", err
	}
	tr, err := http.NewRequest(http.MethodPost, p.Issuer+"/token", strings.NewReader(url.Values{"grant_type": {"authorization_code"},
		"code": {loc.Query().Get("code")}, "redirect_uri": {p.redirect}}.Encode()))
	if err != nil {
		return "", err
	}
	tr.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	tr.SetBasicAuth(client, secret)
	resp, err := hc.Do(tr)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var tok struct {
		IDToken string `json:"id_token"`
		Error   string `json:"error"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&tok); err != nil || tok.IDToken == "" {
		return "", fmt.Errorf("token endpoint: %d %v %s", resp.StatusCode, err, tok.Error)
	}
	return tok.IDToken, nil
}

// ClientCredentials asks the token endpoint for an access token of the
// client-credentials grant (a JWT for Resource).
func (p *Provider) ClientCredentials(client, secret string) (string, error) {
	req, err := http.NewRequest(http.MethodPost, p.Issuer+"/token", strings.NewReader(url.Values{"grant_type": {"client_credentials"},
		"scope": {"read"}, "resource": {Resource}}.Encode()))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(client, secret)
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var tok struct {
		AccessToken string `json:"access_token"`
		Error       string `json:"error"`
		Description string `json:"error_description"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&tok); err != nil || tok.AccessToken == "" {
		return "", fmt.Errorf("token endpoint: %d %v %s %s", resp.StatusCode, err, tok.Error, tok.Description)
	}
	return tok.AccessToken, nil
}
