package console

import (
	"embed"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/shardstore/shardstore/internal/engine"
	"github.com/shardstore/shardstore/internal/logring"
)

//go:embed web
var webFiles embed.FS

// Config wires the console to the server it belongs to.
type Config struct {
	// S3 is the S3 server (it also serves the admin API under
	// /shardstore/admin/); required.
	S3 http.Handler
	// Region is the region requests are signed for ("" = us-east-1).
	Region string
	// ShareEndpoint is the base URL of the S3 endpoint that share links
	// (presigned URLs) point at, e.g. http://127.0.0.1:9000.
	ShareEndpoint string
	// Usage returns the scanner's last count of each bucket's objects and
	// bytes, and when it was made (nil: not shown).
	Usage func() (map[string]engine.BucketUsage, time.Time)
	// Metrics is read for the live charts (nil: no charts).
	Metrics prometheus.Gatherer
	// CPU returns the busy fraction of each core over the last seconds
	// (nil: no per-core view).
	CPU func() []float64
	// Errors holds the server's recent warnings and errors (nil: none).
	Errors *logring.Ring
	// LDAP offers the directory (LDAP) login: the S3 server answers
	// AssumeRoleWithLDAPIdentity (ldap.go).
	LDAP bool
	// OpenID are the "Sign in with <provider>" logins (oidc.go), one
	// button each.
	OpenID []OpenIDProvider
	// StateSealer seals the pending OpenID login into the browser's
	// cookie (iam.Store: the same key on every node of a cluster, so the
	// provider may send the browser back to any node); nil: a random key
	// of this process.
	StateSealer StateSealer
	// SessionTTL is how long a login lasts; 0 means DefaultSessionTTL.
	SessionTTL time.Duration
	// Now is the clock (tests); nil means time.Now.
	Now    func() time.Time
	Logger *slog.Logger
}

// Console serves the web console; it is an http.Handler.
type Console struct {
	cfg      Config
	log      *slog.Logger
	sessions *sessions
	static   http.Handler
	api      map[string]route // built once by New
	sealer   StateSealer      // seals pending OpenID logins (oidcstate.go)
	oidcUsed usedStates       // OpenID login states taken on this node
}

// New returns the console for cfg.
func New(cfg Config) (*Console, error) {
	if cfg.S3 == nil {
		return nil, errors.New("console: Config.S3 is required")
	}
	if cfg.SessionTTL <= 0 {
		cfg.SessionTTL = DefaultSessionTTL
	}
	c := &Console{cfg: cfg, log: cfg.Logger, sessions: newSessions(), sealer: cfg.StateSealer}
	if c.sealer == nil {
		l, err := newLocalSealer()
		if err != nil {
			return nil, err
		}
		c.sealer = l
	}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	sub, err := fs.Sub(webFiles, "web")
	if err != nil {
		return nil, err
	}
	c.static = http.FileServer(http.FS(sub))
	c.api = c.routes()
	return c, nil
}

// contentSecurityPolicy allows only the console's own files: no inline
// script or style, no other origin, no framing.
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; font-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

// ServeHTTP routes the console's pages and API.
func (c *Console) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", contentSecurityPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
	if r.TLS != nil {
		// Served over TLS: the browser keeps to https for a year, so a
		// later visit typed as http:// never sends the cookie in clear.
		h.Set("Strict-Transport-Security", "max-age=31536000")
	}
	if !strings.HasPrefix(r.URL.Path, "/api/") {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			writeError(w, http.StatusMethodNotAllowed, "MethodNotAllowed", "use GET")
			return
		}
		if r.URL.Path != "/" && !strings.Contains(r.URL.Path[1:], ".") {
			// A page of the single-page app (/browse/..., /ops): the app.
			r = r.Clone(r.Context())
			r.URL.Path = "/"
		}
		h.Set("Cache-Control", "no-cache")
		c.static.ServeHTTP(w, r)
		return
	}
	h.Set("Cache-Control", "no-store")
	c.serveAPI(w, r)
}

// route is one API endpoint.
type route struct {
	method string
	// public routes need no session (login, session check): serve gets
	// a nil session.
	public bool
	serve  func(w http.ResponseWriter, r *http.Request, s *session)
}

func (c *Console) routes() map[string]route {
	return map[string]route{
		"/api/login":               {method: http.MethodPost, public: true, serve: c.login},
		"/api/session":             {method: http.MethodGet, public: true, serve: c.sessionInfo},
		"/api/login-options":       {method: http.MethodGet, public: true, serve: c.loginOptions},
		"/api/oidc/login":          {method: http.MethodGet, public: true, serve: c.oidcLogin},
		oidcCallbackURL:            {method: http.MethodGet, public: true, serve: c.oidcCallback},
		"/api/logout":              {method: http.MethodPost, serve: c.logout},
		"/api/buckets":             {method: "GET POST DELETE", serve: c.buckets},
		"/api/objects":             {method: http.MethodGet, serve: c.listObjects},
		"/api/object":              {method: http.MethodGet, serve: c.objectDetails},
		"/api/download":            {method: http.MethodGet, serve: c.download},
		"/api/upload":              {method: http.MethodPut, serve: c.upload},
		"/api/multipart":           {method: "POST DELETE", serve: c.multipart},
		"/api/multipart/part":      {method: http.MethodPut, serve: c.uploadPart},
		"/api/multipart/parts":     {method: http.MethodGet, serve: c.listParts},
		"/api/multipart/complete":  {method: http.MethodPost, serve: c.completeMultipart},
		"/api/delete":              {method: http.MethodPost, serve: c.deleteObjects},
		"/api/share":               {method: http.MethodPost, serve: c.share},
		"/api/ops/status":          {method: http.MethodGet, serve: c.opsStatus},
		"/api/ops/metrics":         {method: http.MethodGet, serve: c.opsMetrics},
		"/api/ops/errors":          {method: http.MethodGet, serve: c.opsErrors},
		"/api/ops/heal":            {method: http.MethodPost, serve: c.opsHeal},
		"/api/ops/notify":          {method: "GET PUT DELETE", serve: c.opsNotify},
		"/api/ops/notify/test":     {method: http.MethodPost, serve: c.opsNotifyTest},
		"/api/ops/notify/kinds":    {method: http.MethodGet, serve: c.opsNotifyKinds},
		"/api/bucket/notification": {method: http.MethodGet, serve: c.bucketNotification},
	}
}

func (c *Console) serveAPI(w http.ResponseWriter, r *http.Request) {
	rt, ok := c.api[r.URL.Path]
	if strings.HasPrefix(r.URL.Path, iamPrefix) {
		rt, ok = route{method: "GET POST PUT DELETE", serve: c.identities}, true
	}
	if !ok {
		writeError(w, http.StatusNotFound, "NotFound", "no such console call: "+r.URL.Path)
		return
	}
	if !strings.Contains(" "+rt.method+" ", " "+r.Method+" ") {
		w.Header().Set("Allow", strings.ReplaceAll(rt.method, " ", ", "))
		writeError(w, http.StatusMethodNotAllowed, "MethodNotAllowed", "use "+rt.method)
		return
	}
	changes := r.Method != http.MethodGet && r.Method != http.MethodHead
	if changes && !sameOrigin(r) {
		writeError(w, http.StatusForbidden, "CrossOrigin", "the request did not come from the console's own page")
		return
	}
	if rt.public {
		rt.serve(w, r, nil)
		return
	}
	s := c.sessions.lookup(r, c.now())
	if s == nil {
		writeError(w, http.StatusUnauthorized, "NotLoggedIn", "log in first (or again: sessions end after a while and when the server restarts)")
		return
	}
	if changes && !csrfOK(r, s) {
		writeError(w, http.StatusForbidden, "InvalidCSRFToken", "the request's CSRF token is missing or wrong; reload the page")
		return
	}
	rt.serve(w, r, s)
}

// loginRequest is the body of POST /api/login.
type loginRequest struct {
	AccessKey string `json:"accessKey"`
	SecretKey string `json:"secretKey"`
	// LDAPUsername and LDAPPassword log a directory user in (ldap.go).
	LDAPUsername string `json:"ldapUsername"`
	LDAPPassword string `json:"ldapPassword"`
}

// sessionReply tells the page who is logged in.
type sessionReply struct {
	User string `json:"user"`
	CSRF string `json:"csrf"`
	// Ops is whether the identity may see the operations pages.
	Ops     bool      `json:"ops"`
	Expires time.Time `json:"expires"`
}

func (c *Console) login(w http.ResponseWriter, r *http.Request, _ *session) {
	now := c.now()
	addr := clientAddr(r)
	if c.sessions.refused(addr, now) {
		writeError(w, http.StatusTooManyRequests, "TooManyAttempts", "too many failed logins from this address; wait a few minutes")
		return
	}
	// A JSON body cannot be sent by another site's form without a CORS
	// preflight, which this server never grants.
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		writeError(w, http.StatusUnsupportedMediaType, "BadContentType", "send the login as application/json")
		return
	}
	var req loginRequest
	if err := json.NewDecoder(io.LimitReader(r.Body, 8<<10)).Decode(&req); err == nil && (req.LDAPUsername != "" || req.LDAPPassword != "") {
		if req.LDAPUsername == "" || req.LDAPPassword == "" {
			writeError(w, http.StatusBadRequest, "BadLogin", "give a user name and a password")
			return
		}
		c.ldapLogin(w, r, req.LDAPUsername, req.LDAPPassword)
		return
	} else if err != nil || req.AccessKey == "" || req.SecretKey == "" {
		writeError(w, http.StatusBadRequest, "BadLogin", "give an access key and a secret key")
		return
	}
	s := &session{access: req.AccessKey, secret: req.SecretKey}
	// ListBuckets proves the credentials: a bad key or secret fails the
	// signature check; AccessDenied means they are good but may not list.
	_, err := c.call(r, s, s3Request{method: http.MethodGet})
	var se *s3Error
	if errors.As(err, &se) && se.Code != "AccessDenied" {
		c.sessions.failed(addr, now)
		c.log.Warn("console login failed", "access_key", req.AccessKey, "remote", addr, "code", se.Code)
		writeError(w, http.StatusUnauthorized, "InvalidCredentials", "the access key or secret key is wrong")
		return
	} else if err != nil && se == nil {
		writeError(w, http.StatusBadGateway, "InternalError", err.Error())
		return
	}
	s = c.sessions.create(req.AccessKey, req.SecretKey, "", "", now, c.cfg.SessionTTL)
	setCookie(w, r, s, now)
	writeJSON(w, http.StatusOK, sessionReply{User: s.user(), CSRF: s.csrf, Ops: c.mayOperate(r, s), Expires: s.expires})
}

func (c *Console) sessionInfo(w http.ResponseWriter, r *http.Request, _ *session) {
	s := c.sessions.lookup(r, c.now())
	if s == nil {
		writeError(w, http.StatusUnauthorized, "NotLoggedIn", "not logged in")
		return
	}
	writeJSON(w, http.StatusOK, sessionReply{User: s.user(), CSRF: s.csrf, Ops: c.mayOperate(r, s), Expires: s.expires})
}

func (c *Console) logout(w http.ResponseWriter, r *http.Request, s *session) {
	c.sessions.remove(s)
	clearCookie(w, r)
	writeJSON(w, http.StatusOK, map[string]bool{"ok": true})
}

// apiError is every error answer's body.
type apiError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

func writeError(w http.ResponseWriter, status int, code, msg string) {
	writeJSON(w, status, apiError{Code: code, Message: msg})
}

// writeS3Error answers with err: an S3 error keeps its status and code.
func writeS3Error(w http.ResponseWriter, err error) {
	var se *s3Error
	if errors.As(err, &se) {
		writeError(w, se.Status, se.Code, se.Message)
		return
	}
	writeError(w, http.StatusInternalServerError, "InternalError", err.Error())
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// readJSON decodes a small JSON request body into v.
func readJSON(w http.ResponseWriter, r *http.Request, v any) bool {
	if err := json.NewDecoder(io.LimitReader(r.Body, 4<<20)).Decode(v); err != nil {
		writeError(w, http.StatusBadRequest, "BadRequest", "the request body is not the JSON expected: "+err.Error())
		return false
	}
	return true
}
