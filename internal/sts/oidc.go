package sts

import (
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/shardstore/shardstore/internal/iam"
	"github.com/shardstore/shardstore/internal/oidcidp"
)

// AssumeRoleWithWebIdentity: an unsigned form POST, as the AWS SDKs send
// it (sts.AssumeRoleWithWebIdentity, boto3's assume_role_with_web_identity),
// with WebIdentityToken (an OpenID Connect ID token or JWT access token),
// RoleArn and RoleSessionName (the SDKs require them; recorded in the
// answer only), optionally DurationSeconds and Policy. The token is
// validated against the provider (oidcidp); the session carries the
// policies its claim names (iam).
//
// Refusals: MissingParameter; InvalidIdentityToken (signature, issuer,
// audience, not yet valid, malformed); ExpiredTokenException (AWS's code
// for an expired token); IDPCommunicationError (discovery or JWKS could
// not be fetched); AccessDenied (no existing policy named); Throttling
// (too many refused tokens from one address); InvalidAction (OpenID not
// configured).

// TokenValidator validates identity tokens (oidcidp.Provider).
type TokenValidator interface {
	Validate(ctx context.Context, token string) (oidcidp.Claims, error)
}

// WebIdentityIssuer issues OpenID sessions (iam.Store).
type WebIdentityIssuer interface {
	AssumeRoleWithWebIdentity(ctx context.Context, req iam.WebIdentityRequest) (iam.Credentials, error)
}

type xmlWebIdentityResponse struct {
	XMLName xml.Name `xml:"AssumeRoleWithWebIdentityResponse"`
	NS      string   `xml:"xmlns,attr"`
	Result  struct {
		Credentials                 xmlCredentials `xml:"Credentials"`
		SubjectFromWebIdentityToken string         `xml:"SubjectFromWebIdentityToken"`
		AssumedRoleUser             struct {
			Arn           string `xml:"Arn"`
			AssumedRoleID string `xml:"AssumedRoleId"`
		} `xml:"AssumedRoleUser"`
		Provider string `xml:"Provider,omitempty"`
		Audience string `xml:"Audience,omitempty"`
	} `xml:"AssumeRoleWithWebIdentityResult"`
	Metadata struct {
		RequestID string `xml:"RequestId"`
	} `xml:"ResponseMetadata"`
}

func (h *Handler) assumeRoleWithWebIdentity(w http.ResponseWriter, r *http.Request, form url.Values) {
	if v := form.Get("Version"); v != "2011-06-15" {
		fail(w, http.StatusBadRequest, "InvalidParameterValue", fmt.Sprintf("unsupported Version %q (2011-06-15 is)", v))
		return
	}
	if h.OIDC == nil || h.OIDCIssuer == nil {
		fail(w, http.StatusBadRequest, "InvalidAction", "OpenID Connect is not configured on this server (SHARDSTORE_IDENTITY_OPENID_CONFIG_URL)")
		return
	}
	token := form.Get("WebIdentityToken")
	if token == "" {
		fail(w, http.StatusBadRequest, "MissingParameter", "the WebIdentityToken parameter is missing")
		return
	}
	name := form.Get("RoleSessionName")
	if name != "" && (len(name) < 2 || len(name) > 64 || !validSessionName(name)) {
		fail(w, http.StatusBadRequest, "ValidationError", "1 validation error detected: Value at 'roleSessionName' failed to satisfy constraint: Member must have length between 2 and 64 and match [\\w+=,.@-]*")
		return
	}
	req := iam.WebIdentityRequest{Policy: form.Get("Policy")}
	var ok bool
	if req.Duration, ok = sessionDuration(w, form); !ok {
		return
	}
	addr := sourceAddr(r)
	lim := h.limiter()
	if lim.Refused(addr) {
		fail(w, http.StatusBadRequest, "Throttling", fmt.Sprintf("too many refused sign-ins from %s; try again in a few minutes", addr))
		return
	}
	claims, err := h.OIDC.Validate(r.Context(), token)
	switch {
	case errors.Is(err, oidcidp.ErrExpiredToken):
		fail(w, http.StatusBadRequest, "ExpiredTokenException", "Token is expired.")
		return
	case errors.Is(err, oidcidp.ErrUnavailable):
		if h.Log != nil {
			h.Log.Error("web identity: the OpenID provider is unavailable", "error", err)
		}
		fail(w, http.StatusBadRequest, "IDPCommunicationError", "The OpenID provider could not be reached to verify the token; try again later.")
		return
	case err != nil:
		lim.Failed(addr)
		if h.Log != nil {
			h.Log.Warn("web identity token refused", "source", addr, "reason", err.Error())
		}
		fail(w, http.StatusBadRequest, "InvalidIdentityToken", "The web identity token was refused: "+strings.TrimPrefix(err.Error(), oidcidp.ErrInvalidToken.Error()+": "))
		return
	}
	req.Issuer, req.Subject, req.Policies = claims.Issuer, claims.Subject, claims.Policies
	creds, err := h.OIDCIssuer.AssumeRoleWithWebIdentity(r.Context(), req)
	if err != nil {
		h.failIssue(w, "assume role with web identity", err)
		return
	}
	var out xmlWebIdentityResponse
	out.NS = stsNS
	out.Result.Credentials = credentialsXML(creds)
	out.Result.SubjectFromWebIdentityToken = claims.Subject
	if arn := form.Get("RoleArn"); arn != "" && name != "" {
		out.Result.AssumedRoleUser.Arn = assumedRoleARN(arn, name)
		out.Result.AssumedRoleUser.AssumedRoleID = creds.AccessKey + ":" + name
	}
	out.Result.Provider = claims.Issuer
	if len(claims.Audience) > 0 {
		out.Result.Audience = claims.Audience[0]
	}
	out.Metadata.RequestID = requestID()
	writeXML(w, http.StatusOK, out)
}
