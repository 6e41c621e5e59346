// Package sts serves the AWS Security Token Service's AssumeRole on the
// S3 endpoint, as the AWS SDKs and CLI call it: a form-encoded POST to
// "/" signed with SigV4 for service "sts". It authenticates the caller
// with the auth.Verifier and has the identity store issue the session
// (iam.Store.AssumeRole); answers are STS's XML.
//
// AssumeRoleWithLDAPIdentity (ldap.go) is MinIO's unsigned STS call for
// directory users: the user name and password are checked against the
// LDAP directory (internal/ldapidp), failed sign-ins are counted and
// throttled per source address, and the session carries the policies
// mapped to the user's DN and groups (iam.Store.AssumeRoleWithLDAP).
// AssumeRoleWithWebIdentity (oidc.go), the AWS SDKs' unsigned call,
// exchanges an OpenID Connect token validated by internal/oidcidp for a
// session with the policies its claim names
// (iam.Store.AssumeRoleWithWebIdentity); MinIO's AssumeRoleWithClientGrants
// does the same with a client-credentials token (Token). Their RoleArn
// picks an OpenID provider with a role policy (MinIO's role ARN,
// oidcidp.Set); an unknown one is InvalidParameterValue.
//
// Otherwise roles are not modelled: AssumeRole's RoleArn is required
// (the SDKs insist on it) and recorded nowhere; the session has the
// caller's own permissions, narrowed by the Policy parameter when one is
// given.
package sts

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/shardstore/shardstore/internal/auth"
	"github.com/shardstore/shardstore/internal/iam"
)

// Issuer issues sessions (iam.Store does).
type Issuer interface {
	AssumeRole(ctx context.Context, caller auth.Identity, req iam.AssumeRoleRequest) (iam.Credentials, error)
}

// Handler is the STS endpoint.
type Handler struct {
	Verifier *auth.Verifier
	Issuer   Issuer
	Log      *slog.Logger
	// LDAP and LDAPIssuer serve AssumeRoleWithLDAPIdentity; nil when
	// LDAP is not configured. Limiter counts failed sign-ins (nil: the
	// handler's own).
	LDAP       Directory
	LDAPIssuer LDAPIssuer
	// OIDC and OIDCIssuer serve AssumeRoleWithWebIdentity (oidc.go);
	// nil when OpenID Connect is not configured.
	OIDC        TokenValidator
	OIDCIssuer  WebIdentityIssuer
	Limiter     *Limiter
	limiterOnce sync.Once
}

// maxBody bounds the form: AssumeRole's parameters with a 2 KiB policy
// fit many times over.
const maxBody = 64 << 10

const stsNS = "https://sts.amazonaws.com/doc/2011-06-15/"

type xmlCredentials struct {
	AccessKeyID     string `xml:"AccessKeyId"`
	SecretAccessKey string `xml:"SecretAccessKey"`
	SessionToken    string `xml:"SessionToken"`
	Expiration      string `xml:"Expiration"`
}

type xmlAssumeRoleResponse struct {
	XMLName xml.Name `xml:"AssumeRoleResponse"`
	NS      string   `xml:"xmlns,attr"`
	Result  struct {
		Credentials     xmlCredentials `xml:"Credentials"`
		AssumedRoleUser struct {
			Arn           string `xml:"Arn"`
			AssumedRoleID string `xml:"AssumedRoleId"`
		} `xml:"AssumedRoleUser"`
		PackedPolicySize int `xml:"PackedPolicySize,omitempty"`
	} `xml:"AssumeRoleResult"`
	Metadata struct {
		RequestID string `xml:"RequestId"`
	} `xml:"ResponseMetadata"`
}

type xmlErrorResponse struct {
	XMLName xml.Name `xml:"ErrorResponse"`
	NS      string   `xml:"xmlns,attr"`
	Error   struct {
		Type    string `xml:"Type"`
		Code    string `xml:"Code"`
		Message string `xml:"Message"`
	} `xml:"Error"`
	RequestID string `xml:"RequestId"`
}

func requestID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func writeXML(w http.ResponseWriter, status int, v any) {
	body, err := xml.Marshal(v)
	if err != nil {
		http.Error(w, "encode reply", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/xml")
	w.Header().Set("Content-Length", strconv.Itoa(len(xml.Header)+len(body)))
	w.WriteHeader(status)
	_, _ = io.WriteString(w, xml.Header)
	_, _ = w.Write(body)
}

// sessionDuration reads DurationSeconds (0 when absent; -1 for a
// value below 1, which the issuers refuse), answering a ValidationError
// itself when it is not an integer.
func sessionDuration(w http.ResponseWriter, form url.Values) (time.Duration, bool) {
	v := form.Get("DurationSeconds")
	if v == "" {
		return 0, true
	}
	secs, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		fail(w, http.StatusBadRequest, "ValidationError", "DurationSeconds must be an integer")
		return 0, false
	}
	// Clamp before converting, so a huge value cannot overflow into an
	// accepted one; the issuers refuse anything out of range.
	secs = max(-1, min(secs, int64(iam.MaxSessionDuration/time.Second)+1))
	if secs <= 0 {
		return -1, true
	}
	return time.Duration(secs) * time.Second, true
}

// failIssue answers an issuer's refusal with its STS error (403 for
// AccessDenied), anything else as an InternalError logged under what.
func (h *Handler) failIssue(w http.ResponseWriter, what string, err error) {
	var se *iam.STSError
	if errors.As(err, &se) {
		status := http.StatusBadRequest
		if se.Code == "AccessDenied" {
			status = http.StatusForbidden
		}
		fail(w, status, se.Code, se.Message)
		return
	}
	if h.Log != nil {
		h.Log.Error(what, "error", err)
	}
	fail(w, http.StatusInternalServerError, "InternalError", "could not issue credentials")
}

// credentialsXML is the Credentials element of an answer.
func credentialsXML(creds iam.Credentials) xmlCredentials {
	return xmlCredentials{AccessKeyID: creds.AccessKey, SecretAccessKey: creds.SecretKey,
		SessionToken: creds.SessionToken, Expiration: creds.Expiration.UTC().Format(time.RFC3339)}
}

// fail answers an STS error. Sender errors are the caller's fault.
func fail(w http.ResponseWriter, status int, code, msg string) {
	var e xmlErrorResponse
	e.NS, e.RequestID = stsNS, requestID()
	e.Error.Type, e.Error.Code, e.Error.Message = "Sender", code, msg
	if status >= 500 {
		e.Error.Type = "Receiver"
	}
	writeXML(w, status, e)
}

// stsCodes are STS's names for the authentication errors S3 names
// otherwise.
var stsCodes = map[string]string{
	auth.CodeInvalidAccessKeyID:           "InvalidClientTokenId",
	auth.CodeInvalidToken:                 "InvalidClientTokenId",
	auth.CodeAuthorizationHeaderMalformed: "IncompleteSignature",
	auth.CodeRequestTimeTooSkewed:         "SignatureDoesNotMatch",
}

// ServeHTTP answers one STS request.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		fail(w, http.StatusMethodNotAllowed, "InvalidAction", "STS requests are POSTs")
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil {
		fail(w, http.StatusBadRequest, "IncompleteSignature", "could not read the request body")
		return
	}
	if len(body) > maxBody {
		fail(w, http.StatusRequestEntityTooLarge, "ValidationError", fmt.Sprintf("the request body is larger than %d bytes", maxBody))
		return
	}
	if r.Header.Get("Authorization") == "" && h.serveFederated(w, r, body) {
		return
	}
	id, err := h.Verifier.VerifySTS(r, body)
	if err != nil {
		var ae *auth.Error
		if errors.As(err, &ae) {
			code := ae.Code
			if c, ok := stsCodes[code]; ok {
				code = c
			}
			fail(w, ae.Status, code, ae.Message)
			return
		}
		fail(w, http.StatusForbidden, "AccessDenied", "Access Denied")
		return
	}
	form, err := url.ParseQuery(string(body))
	if err != nil {
		fail(w, http.StatusBadRequest, "MalformedQueryString", "the request body is not a valid form")
		return
	}
	for k, v := range r.URL.Query() { // the query works too, as in STS
		if _, ok := form[k]; !ok {
			form[k] = v
		}
	}
	switch form.Get("Action") {
	case "AssumeRole":
		h.assumeRole(w, r, id, form)
	case "":
		fail(w, http.StatusBadRequest, "MissingAction", "the Action parameter is missing")
	default:
		fail(w, http.StatusBadRequest, "InvalidAction", fmt.Sprintf("could not find operation %s for version %s", form.Get("Action"), form.Get("Version")))
	}
}

func (h *Handler) assumeRole(w http.ResponseWriter, r *http.Request, caller auth.Identity, form url.Values) {
	if v := form.Get("Version"); v != "2011-06-15" {
		fail(w, http.StatusBadRequest, "InvalidParameterValue", fmt.Sprintf("unsupported Version %q (2011-06-15 is)", v))
		return
	}
	arn, name := form.Get("RoleArn"), form.Get("RoleSessionName")
	switch {
	case len(arn) < 20 || len(arn) > 2048:
		fail(w, http.StatusBadRequest, "ValidationError", "1 validation error detected: Value at 'roleArn' failed to satisfy constraint: Member must have length between 20 and 2048")
		return
	case len(name) < 2 || len(name) > 64 || !validSessionName(name):
		fail(w, http.StatusBadRequest, "ValidationError", "1 validation error detected: Value at 'roleSessionName' failed to satisfy constraint: Member must have length between 2 and 64 and match [\\w+=,.@-]*")
		return
	}
	req := iam.AssumeRoleRequest{Policy: form.Get("Policy")}
	var ok bool
	if req.Duration, ok = sessionDuration(w, form); !ok {
		return
	}
	creds, err := h.Issuer.AssumeRole(r.Context(), caller, req)
	if err != nil {
		h.failIssue(w, "assume role", err)
		return
	}
	var out xmlAssumeRoleResponse
	out.NS = stsNS
	out.Result.Credentials = credentialsXML(creds)
	out.Result.AssumedRoleUser.Arn = assumedRoleARN(arn, name)
	out.Result.AssumedRoleUser.AssumedRoleID = creds.AccessKey + ":" + name
	out.Metadata.RequestID = requestID()
	writeXML(w, http.StatusOK, out)
}

// assumedRoleARN is the ARN STS gives a session of role arn:
// arn:aws:sts::ACCOUNT:assumed-role/ROLE/SESSION.
func assumedRoleARN(roleARN, session string) string {
	account, role := "000000000000", roleARN
	if parts := strings.SplitN(roleARN, ":", 6); len(parts) == 6 {
		if parts[4] != "" {
			account = parts[4]
		}
		role = parts[5]
	}
	role = role[strings.LastIndex(role, "/")+1:]
	return "arn:aws:sts::" + account + ":assumed-role/" + role + "/" + session
}

func validSessionName(s string) bool {
	for _, c := range s {
		ok := c == '_' || c == '+' || c == '=' || c == ',' || c == '.' || c == '@' || c == '-' ||
			(c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
		if !ok {
			return false
		}
	}
	return true
}
