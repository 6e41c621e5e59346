package console

import (
	"encoding/xml"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Directory (LDAP) login: the console asks the S3 server's STS endpoint
// for AssumeRoleWithLDAPIdentity in process, as any client would (the
// browser's address as the request's, so the STS endpoint's throttle of
// failed sign-ins counts the browser), and keeps the temporary
// credentials in the session; every later call is signed with them and
// their session token. The password is forwarded once and kept nowhere.
// The session ends when the credentials expire or the directory no
// longer confirms the user (the S3 server refuses them).

// loginOptions tells the login page which logins the console offers.
func (c *Console) loginOptions(w http.ResponseWriter, _ *http.Request, _ *session) {
	out := map[string]any{"ldap": c.cfg.LDAP}
	if len(c.cfg.OpenID) > 0 {
		out["openid"] = cmpOr(c.cfg.OpenID[0].Name, "OpenID")
		var list []map[string]string
		for _, p := range c.cfg.OpenID {
			list = append(list, map[string]string{"id": p.ID, "name": cmpOr(p.Name, "OpenID")})
		}
		out["openidProviders"] = list
	}
	writeJSON(w, http.StatusOK, out)
}

type stsCredentials struct {
	AccessKeyID     string `xml:"AccessKeyId"`
	SecretAccessKey string `xml:"SecretAccessKey"`
	SessionToken    string `xml:"SessionToken"`
	Expiration      string `xml:"Expiration"`
}

// ldapLogin signs a directory user in; it answers the browser itself.
func (c *Console) ldapLogin(w http.ResponseWriter, r *http.Request, name, password string) {
	now := c.now()
	addr := clientAddr(r)
	if !c.cfg.LDAP {
		writeError(w, http.StatusBadRequest, "LDAPNotConfigured", "this server does not sign in directory (LDAP) users")
		return
	}
	ttl := c.cfg.SessionTTL
	secs := min(max(int64(ttl/time.Second), 900), 43200)
	form := url.Values{"Action": {"AssumeRoleWithLDAPIdentity"}, "Version": {"2011-06-15"},
		"LDAPUsername": {name}, "LDAPPassword": {password}, "DurationSeconds": {strconv.FormatInt(secs, 10)}}
	rec := c.stsCall(r, form)
	if rec.status != http.StatusOK {
		var e struct {
			Error struct{ Code, Message string } `xml:"Error"`
		}
		_ = xml.Unmarshal(rec.body.Bytes(), &e)
		switch e.Error.Code {
		case "AccessDenied", "MissingParameter":
			c.sessions.failed(addr, now)
			c.log.Warn("console directory login failed", "user", strconv.Quote(truncate(name, 64)), "remote", addr, "code", e.Error.Code)
			writeError(w, http.StatusUnauthorized, "InvalidCredentials", "the user name or password is wrong, or no policy is mapped to this directory user")
		case "Throttling":
			writeError(w, http.StatusTooManyRequests, "TooManyAttempts", "too many failed logins from this address; wait a few minutes")
		case "IDPCommunicationError":
			writeError(w, http.StatusServiceUnavailable, "DirectoryUnavailable", "the directory (LDAP) server cannot be reached; try again later, or log in with an access key")
		default:
			writeError(w, http.StatusBadGateway, cmpOr(e.Error.Code, "InternalError"), e.Error.Message)
		}
		return
	}
	var ok struct {
		Result struct {
			Credentials stsCredentials `xml:"Credentials"`
		} `xml:"AssumeRoleWithLDAPIdentityResult"`
	}
	if err := xml.Unmarshal(rec.body.Bytes(), &ok); err != nil || ok.Result.Credentials.SessionToken == "" {
		writeError(w, http.StatusBadGateway, "InternalError", "the STS answer could not be read")
		return
	}
	cr := ok.Result.Credentials
	if exp, err := time.Parse(time.RFC3339, cr.Expiration); err == nil && exp.Sub(now) < ttl {
		ttl = exp.Sub(now)
	}
	s := c.sessions.create(cr.AccessKeyID, cr.SecretAccessKey, cr.SessionToken, name, now, ttl)
	setCookie(w, r, s, now)
	writeJSON(w, http.StatusOK, sessionReply{User: name, CSRF: s.csrf, Ops: c.mayOperate(r, s), Expires: s.expires})
}

// stsCall sends an unsigned STS form to the S3 server in process, as
// from the browser's address, and returns the buffered answer.
func (c *Console) stsCall(r *http.Request, form url.Values) *recorder {
	body := form.Encode()
	u := &url.URL{Scheme: "http", Host: consoleHost, Path: "/"}
	req := (&http.Request{Method: http.MethodPost, URL: u, Host: consoleHost, Header: http.Header{},
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, RequestURI: "/", RemoteAddr: r.RemoteAddr,
		Body: readCloser{strings.NewReader(body)}, ContentLength: int64(len(body))}).WithContext(r.Context())
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	rec := &recorder{header: http.Header{}}
	c.cfg.S3.ServeHTTP(rec, req)
	if rec.status == 0 {
		rec.status = http.StatusOK
	}
	return rec
}

type readCloser struct{ *strings.Reader }

func (readCloser) Close() error { return nil }

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
