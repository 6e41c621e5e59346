package sts

import (
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/shardstore/shardstore/internal/iam"
	"github.com/shardstore/shardstore/internal/ldapidp"
)

// AssumeRoleWithLDAPIdentity, MinIO's STS call for directory users: an
// unsigned form POST to "/" with Action=AssumeRoleWithLDAPIdentity,
// Version=2011-06-15, LDAPUsername, LDAPPassword, and optionally Policy
// (a session policy) and DurationSeconds. The password is checked by
// binding to the directory as the user (ldapidp); the credentials carry
// the policies mapped to the user's DN and groups (iam).
//
// Refusals, as a client shows them: a missing parameter MissingParameter;
// a wrong name or password, or a user with no mapped policy, AccessDenied
// (403); the directory unreachable IDPCommunicationError (AWS's code for
// an identity provider that could not be reached); LDAP not configured
// InvalidAction; too many failed sign-ins from one address Throttling.

// Directory signs directory users in (ldapidp.Directory).
type Directory interface {
	Authenticate(ctx context.Context, name, password string) (ldapidp.Identity, error)
}

// LDAPIssuer issues directory users' sessions (iam.Store).
type LDAPIssuer interface {
	AssumeRoleWithLDAP(ctx context.Context, req iam.LDAPRequest) (iam.Credentials, error)
}

// Sign-in throttling: an address that fails loginFailures times within
// loginWindow is refused until the window has passed.
const (
	loginFailures = 10
	loginWindow   = 5 * time.Minute
	maxFailAddrs  = 10000
)

// Limiter counts failed sign-ins per source address. The zero value is
// ready; Handler uses its own when none is given.
type Limiter struct {
	mu       sync.Mutex
	failures map[string][]time.Time
	// failed and refused count failed sign-ins and sign-ins refused for
	// throttling (LimiterStats).
	failed, refused uint64
	// Now is the clock; nil is time.Now.
	Now func() time.Time
}

func (l *Limiter) now() time.Time {
	if l.Now != nil {
		return l.Now()
	}
	return time.Now()
}

// Refused reports whether addr failed too often lately.
func (l *Limiter) Refused(addr string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	refused := len(l.recent(addr, l.now())) >= loginFailures
	if refused {
		l.refused++
	}
	return refused
}

// LimiterStats are a Limiter's counts: failed sign-ins, sign-ins refused
// with Throttling, and the source addresses throttled now.
type LimiterStats struct {
	Failed, Refused uint64
	Throttled       int
}

// Stats reports the limiter's counts (the Prometheus metrics).
func (l *Limiter) Stats() LimiterStats {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	st := LimiterStats{Failed: l.failed, Refused: l.refused}
	for a := range l.failures {
		if len(l.recent(a, now)) >= loginFailures {
			st.Throttled++
		}
	}
	return st
}

// Failed counts a failed sign-in of addr.
func (l *Limiter) Failed(addr string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	l.failed++
	if l.failures == nil {
		l.failures = map[string][]time.Time{}
	}
	l.failures[addr] = append(l.recent(addr, now), now)
	if len(l.failures) > maxFailAddrs {
		for a := range l.failures {
			if len(l.recent(a, now)) == 0 {
				delete(l.failures, a)
			}
		}
	}
}

func (l *Limiter) recent(addr string, now time.Time) []time.Time {
	f := l.failures[addr]
	i := 0
	for i < len(f) && now.Sub(f[i]) > loginWindow {
		i++
	}
	f = f[i:]
	if len(f) == 0 {
		delete(l.failures, addr)
		return nil
	}
	l.failures[addr] = f
	return f
}

type xmlLDAPResponse struct {
	XMLName xml.Name `xml:"AssumeRoleWithLDAPIdentityResponse"`
	NS      string   `xml:"xmlns,attr"`
	Result  struct {
		Credentials      xmlCredentials `xml:"Credentials"`
		SubjectFromToken string         `xml:"SubjectFromToken,omitempty"`
	} `xml:"AssumeRoleWithLDAPIdentityResult"`
	Metadata struct {
		RequestID string `xml:"RequestId"`
	} `xml:"ResponseMetadata"`
}

// federatedActions are the STS calls made without a signature: the
// identity is in the parameters.
var federatedActions = map[string]bool{"AssumeRoleWithLDAPIdentity": true, "AssumeRoleWithWebIdentity": true, "AssumeRoleWithClientGrants": true}

// serveFederated answers an unsigned STS request; false when it is not
// one of the federated calls (the caller then refuses it as unsigned).
func (h *Handler) serveFederated(w http.ResponseWriter, r *http.Request, body []byte) bool {
	form, err := url.ParseQuery(string(body))
	if err != nil {
		return false
	}
	for k, v := range r.URL.Query() {
		if _, ok := form[k]; !ok {
			form[k] = v
		}
	}
	if !federatedActions[form.Get("Action")] {
		return false
	}
	for _, secret := range []string{"LDAPPassword", "WebIdentityToken", "Token"} {
		if r.URL.Query().Has(secret) {
			// A URL ends up in proxies' and browsers' logs and histories.
			fail(w, http.StatusBadRequest, "ValidationError", "send "+secret+" in the POST body, not in the URL")
			return true
		}
	}
	switch form.Get("Action") {
	case "AssumeRoleWithWebIdentity":
		h.assumeRoleWithWebIdentity(w, r, form) // oidc.go
		return true
	case "AssumeRoleWithClientGrants":
		h.assumeRoleWithClientGrants(w, r, form) // oidc.go
		return true
	}
	h.assumeRoleWithLDAP(w, r, form)
	return true
}

func (h *Handler) limiter() *Limiter {
	h.limiterOnce.Do(func() {
		if h.Limiter == nil {
			h.Limiter = &Limiter{}
		}
	})
	return h.Limiter
}

func sourceAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

func (h *Handler) assumeRoleWithLDAP(w http.ResponseWriter, r *http.Request, form url.Values) {
	if v := form.Get("Version"); v != "2011-06-15" {
		fail(w, http.StatusBadRequest, "InvalidParameterValue", fmt.Sprintf("unsupported Version %q (2011-06-15 is)", v))
		return
	}
	if h.LDAP == nil || h.LDAPIssuer == nil {
		fail(w, http.StatusBadRequest, "InvalidAction", "LDAP sign-in is not configured on this server (SHARDSTORE_IDENTITY_LDAP_SERVER_ADDR)")
		return
	}
	name, password := form.Get("LDAPUsername"), form.Get("LDAPPassword")
	switch {
	case name == "":
		fail(w, http.StatusBadRequest, "MissingParameter", "the LDAPUsername parameter is missing")
		return
	case password == "":
		fail(w, http.StatusBadRequest, "MissingParameter", "the LDAPPassword parameter is missing")
		return
	}
	req := iam.LDAPRequest{Policy: form.Get("Policy")}
	var ok bool
	if req.Duration, ok = sessionDuration(w, form); !ok {
		return
	}
	addr := sourceAddr(r)
	lim := h.limiter()
	if lim.Refused(addr) {
		fail(w, http.StatusBadRequest, "Throttling", fmt.Sprintf("too many failed sign-ins from %s; try again in a few minutes", addr))
		return
	}
	id, err := h.LDAP.Authenticate(r.Context(), name, password)
	switch {
	case errors.Is(err, ldapidp.ErrInvalidCredentials):
		lim.Failed(addr)
		if h.Log != nil {
			// The name is logged quoted (it is the caller's input); the
			// password never is.
			h.Log.Warn("LDAP sign-in refused", "user", strconv.Quote(truncate(name, 64)), "source", addr, "reason", err.Error())
		}
		fail(w, http.StatusForbidden, "AccessDenied", "Authentication failure: invalid LDAP user name or password")
		return
	case err != nil:
		if h.Log != nil {
			h.Log.Error("LDAP sign-in: the directory is unavailable", "error", err)
		}
		fail(w, http.StatusBadRequest, "IDPCommunicationError", "The LDAP server could not be reached to check the credentials; try again later.")
		return
	}
	creds, err := h.LDAPIssuer.AssumeRoleWithLDAP(r.Context(), iam.LDAPRequest{Identity: id, Duration: req.Duration, Policy: req.Policy})
	if err != nil {
		h.failIssue(w, "assume role with LDAP identity", err)
		return
	}
	var out xmlLDAPResponse
	out.NS = stsNS
	out.Result.Credentials = credentialsXML(creds)
	out.Result.SubjectFromToken = id.DN
	out.Metadata.RequestID = requestID()
	writeXML(w, http.StatusOK, out)
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}
