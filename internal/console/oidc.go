package console

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/xml"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/shardstore/shardstore/internal/oidcidp"
)

// "Sign in with <provider>": the authorization-code flow with PKCE.
// GET /api/oidc/login makes a random state, nonce and PKCE verifier,
// seals them (with the provider, the redirect URI and an expiry) into an
// HttpOnly cookie of this browser (SameSite=Lax so that it comes back
// with the provider's redirect; oidcstate.go) and sends the browser to
// the provider. GET /api/oidc/callback opens the cookie, checks that the
// state is the cookie's, trades the code for an ID token (client secret,
// PKCE verifier) and checks its signature and nonce (oidcidp), then asks
// the S3 server's STS endpoint for AssumeRoleWithWebIdentity in process,
// as for a directory login, and opens a session with the temporary
// credentials. The sealing key is the identity store's (Config.StateSealer),
// the same on every node of a cluster, so the callback may land on any
// node. Sign-out is the ordinary logout.

// OpenIDLogin is the provider side of the flow (oidcidp.Provider).
type OpenIDLogin interface {
	AuthCodeURL(ctx context.Context, redirectURI, state, nonce, challenge string) (string, error)
	Exchange(ctx context.Context, code, verifier, redirectURI, nonce string) (string, oidcidp.Claims, error)
}

// OpenIDProvider is one "Sign in with <Name>" login. With several, the
// login page shows a button each and /api/oidc/login?provider=ID picks
// one; the callback is the same for all (the pending login names its
// provider).
type OpenIDProvider struct {
	ID   string // the provider's configuration name ("" = the unnamed one)
	Name string // shown on the button ("" = "OpenID")
	// Redirect is the callback URL registered with the provider ("" =
	// this console's /api/oidc/callback as the browser reaches it).
	Redirect string
	// RoleARN is asked for in the STS call (a role-policy provider's).
	RoleARN string
	Login   OpenIDLogin
}

// openIDProvider is the provider of id, nil when none is configured.
func (c *Console) openIDProvider(id string) *OpenIDProvider {
	for i := range c.cfg.OpenID {
		if c.cfg.OpenID[i].ID == id {
			return &c.cfg.OpenID[i]
		}
	}
	return nil
}

const (
	oidcCookie      = "shardstore_oidc"
	oidcPendingTTL  = 10 * time.Minute
	maxOIDCPending  = 10000
	oidcCallbackURL = "/api/oidc/callback"
	oidcStateUse    = "console oidc login"
)

// redirectURI is the callback the provider sends the browser back to:
// the configured one, or this console's own address.
func (c *Console) redirectURI(r *http.Request, p *OpenIDProvider) string {
	if p.Redirect != "" {
		return p.Redirect
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host + oidcCallbackURL
}

func (c *Console) oidcLogin(w http.ResponseWriter, r *http.Request, _ *session) {
	p := c.openIDProvider(r.URL.Query().Get("provider"))
	if p == nil {
		writeError(w, http.StatusNotFound, "OpenIDNotConfigured", "this server has no such OpenID provider")
		return
	}
	now := c.now()
	state, nonce, verifier := randomToken(), randomToken(), randomToken()
	sum := sha256.Sum256([]byte(verifier))
	redirect := c.redirectURI(r, p)
	u, err := p.Login.AuthCodeURL(r.Context(), redirect, state, nonce, base64.RawURLEncoding.EncodeToString(sum[:]))
	if err != nil {
		c.log.Warn("console OpenID login: the provider is unavailable", "err", err)
		http.Redirect(w, r, "/?sso_error=ProviderUnavailable", http.StatusSeeOther)
		return
	}
	sealed, err := c.sealLogin(loginState{State: state, Provider: p.ID, Nonce: nonce, Verifier: verifier, Redirect: redirect,
		Expires: now.Add(oidcPendingTTL).Unix()})
	if err != nil {
		writeError(w, http.StatusInternalServerError, "InternalError", "could not start the login")
		return
	}
	http.SetCookie(w, &http.Cookie{Name: oidcCookie, Value: sealed, Path: "/api/oidc/", HttpOnly: true,
		SameSite: http.SameSiteLaxMode, Secure: r.TLS != nil, MaxAge: int(oidcPendingTTL / time.Second)})
	http.Redirect(w, r, u, http.StatusSeeOther)
}

func (c *Console) oidcCallback(w http.ResponseWriter, r *http.Request, _ *session) {
	now := c.now()
	addr := clientAddr(r)
	fail := func(code string) {
		http.SetCookie(w, &http.Cookie{Name: oidcCookie, Value: "", Path: "/api/oidc/", HttpOnly: true, MaxAge: -1})
		http.Redirect(w, r, "/?sso_error="+url.QueryEscape(code), http.StatusSeeOther)
	}
	if len(c.cfg.OpenID) == 0 {
		fail("OpenIDNotConfigured")
		return
	}
	if c.sessions.refused(addr, now) {
		fail("TooManyAttempts")
		return
	}
	q := r.URL.Query()
	var sealed string
	if ck, err := r.Cookie(oidcCookie); err == nil {
		sealed = ck.Value
	}
	login, ok := c.takeLogin(sealed, q.Get("state"), now)
	if !ok {
		c.sessions.failed(addr, now)
		fail("InvalidState")
		return
	}
	if e := q.Get("error"); e != "" {
		fail("ProviderRefused")
		return
	}
	p := c.openIDProvider(login.Provider)
	if p == nil {
		fail("OpenIDNotConfigured")
		return
	}
	token, claims, err := p.Login.Exchange(r.Context(), q.Get("code"), login.Verifier, login.Redirect, login.Nonce)
	if err != nil {
		c.sessions.failed(addr, now)
		c.log.Warn("console OpenID login refused", "remote", addr, "err", err)
		fail("InvalidIdentityToken")
		return
	}
	secs := min(max(int64(c.cfg.SessionTTL/time.Second), 900), 43200)
	form := url.Values{"Action": {"AssumeRoleWithWebIdentity"}, "Version": {"2011-06-15"},
		"WebIdentityToken": {token}, "RoleSessionName": {"console"}, "DurationSeconds": {strconv.FormatInt(secs, 10)}}
	if p.RoleARN != "" {
		form.Set("RoleArn", p.RoleARN)
	}
	rec := c.stsCall(r, form)
	if rec.status != http.StatusOK {
		var e struct {
			Error struct{ Code string } `xml:"Error"`
		}
		_ = xml.Unmarshal(rec.body.Bytes(), &e)
		fail(cmpOr(e.Error.Code, "InternalError"))
		return
	}
	var ok2 struct {
		Result struct {
			Credentials stsCredentials `xml:"Credentials"`
		} `xml:"AssumeRoleWithWebIdentityResult"`
	}
	if err := xml.Unmarshal(rec.body.Bytes(), &ok2); err != nil || ok2.Result.Credentials.SessionToken == "" {
		fail("InternalError")
		return
	}
	cr := ok2.Result.Credentials
	ttl := c.cfg.SessionTTL
	if exp, err := time.Parse(time.RFC3339, cr.Expiration); err == nil && exp.Sub(now) < ttl {
		ttl = exp.Sub(now)
	}
	s := c.sessions.create(cr.AccessKeyID, cr.SecretAccessKey, cr.SessionToken, claims.Subject, now, ttl)
	http.SetCookie(w, &http.Cookie{Name: oidcCookie, Value: "", Path: "/api/oidc/", HttpOnly: true, MaxAge: -1})
	setCookie(w, r, s, now)
	http.Redirect(w, r, "/#/buckets", http.StatusSeeOther)
}
