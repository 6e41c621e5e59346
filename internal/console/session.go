package console

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/shardstore/shardstore/internal/auth"
)

// Session and login limits.
const (
	cookieName        = "shardstore_console"
	DefaultSessionTTL = 12 * time.Hour
	maxSessions       = 10000
	// A client address that fails to log in loginFailures times within
	// loginWindow is refused (429) until the window has passed.
	loginFailures = 10
	loginWindow   = 5 * time.Minute
	// opsCacheFor is how long a session's answer to "may it see the
	// operations pages" is reused before the admin API is asked again.
	opsCacheFor = 30 * time.Second
)

// session is one logged-in browser. The secret stays in the server's
// memory: the browser holds only the random session id (an HttpOnly
// cookie) and the CSRF token (in a JavaScript variable, never in
// storage). A restart logs everyone out.
type session struct {
	id      string
	csrf    string
	access  string
	secret  string
	expires time.Time
	// token is the session token of temporary credentials (a directory
	// login, ldap.go), sent with every request; display names the user
	// then.
	token, display string

	mu       sync.Mutex
	ops      bool
	opsUntil time.Time
}

func (s *session) identity() auth.Identity {
	return auth.Identity{AccessKey: s.access, SecretKey: s.secret}
}

// user is who the page shows as logged in.
func (s *session) user() string {
	if s.display != "" {
		return s.display
	}
	return s.access
}

// sessions is the console's session table.
type sessions struct {
	mu       sync.Mutex
	byID     map[string]*session
	failures map[string][]time.Time // client address -> recent failed logins
}

func newSessions() *sessions {
	return &sessions{byID: map[string]*session{}, failures: map[string][]time.Time{}}
}

func randomToken() string {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("console: no randomness: " + err.Error())
	}
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// create adds a session for the credentials, evicting expired ones
// (and, at the cap, the one closest to expiry).
func (t *sessions) create(access, secret, token, display string, now time.Time, ttl time.Duration) *session {
	s := &session{id: randomToken(), csrf: randomToken(), access: access, secret: secret, expires: now.Add(ttl),
		token: token, display: display}
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.byID) >= maxSessions {
		var oldest *session
		for id, o := range t.byID {
			if now.After(o.expires) {
				delete(t.byID, id)
			} else if oldest == nil || o.expires.Before(oldest.expires) {
				oldest = o
			}
		}
		if len(t.byID) >= maxSessions && oldest != nil {
			delete(t.byID, oldest.id)
		}
	}
	t.byID[s.id] = s
	return s
}

// lookup returns the live session named by r's cookie.
func (t *sessions) lookup(r *http.Request, now time.Time) *session {
	ck, err := r.Cookie(cookieName)
	if err != nil || ck.Value == "" {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.byID[ck.Value]
	if s == nil {
		return nil
	}
	if now.After(s.expires) {
		delete(t.byID, s.id)
		return nil
	}
	return s
}

func (t *sessions) remove(s *session) {
	t.mu.Lock()
	delete(t.byID, s.id)
	t.mu.Unlock()
}

// refused reports whether addr has failed too often lately.
func (t *sessions) refused(addr string, now time.Time) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.recent(addr, now)) >= loginFailures
}

func (t *sessions) failed(addr string, now time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.failures[addr] = append(t.recent(addr, now), now)
	if len(t.failures) > maxSessions { // bound the table under a spray of addresses
		for a := range t.failures {
			if len(t.recent(a, now)) == 0 {
				delete(t.failures, a)
			}
		}
	}
}

// recent drops addr's failures older than the window; t.mu is held.
func (t *sessions) recent(addr string, now time.Time) []time.Time {
	f := t.failures[addr]
	i := 0
	for i < len(f) && now.Sub(f[i]) > loginWindow {
		i++
	}
	f = f[i:]
	if len(f) == 0 {
		delete(t.failures, addr)
		return nil
	}
	t.failures[addr] = f
	return f
}

func clientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// setCookie hands the browser its session id: HttpOnly (no script can
// read it), SameSite=Strict (no other site's page can send it), Secure
// when the console is served over TLS.
func setCookie(w http.ResponseWriter, r *http.Request, s *session, now time.Time) {
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: s.id, Path: "/", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil, Expires: s.expires,
		MaxAge: int(s.expires.Sub(now) / time.Second)})
}

func clearCookie(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: "", Path: "/", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil, MaxAge: -1})
}

// sameOrigin refuses requests another site's page may have sent: a
// browser names the page's origin in Origin (and, since 2020, its
// relation in Sec-Fetch-Site) on every state-changing request.
func sameOrigin(r *http.Request) bool {
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" && site != "none" {
		return false
	}
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true
	}
	u, err := url.Parse(origin)
	return err == nil && strings.EqualFold(u.Host, r.Host)
}

// csrfOK checks the request's X-CSRF-Token against the session's.
func csrfOK(r *http.Request, s *session) bool {
	got := r.Header.Get("X-CSRF-Token")
	return got != "" && subtle.ConstantTimeCompare([]byte(got), []byte(s.csrf)) == 1
}
