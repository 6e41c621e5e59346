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
// RoleArn and RoleSessionName (the SDKs require them; RoleArn picks a
// provider with a role policy by its MinIO role ARN, otherwise both are
// recorded in the answer only), optionally DurationSeconds and Policy.
// The token is validated against its provider (oidcidp.Set); the session
// carries the policies its claim (or the provider's role) names and the
// token's claims as ${jwt:*} variables (iam).
//
// Refusals: MissingParameter; InvalidIdentityToken (signature, issuer,
// audience, not yet valid, malformed, no provider of its issuer and
// client); ExpiredTokenException (AWS's code for an expired token);
// IDPCommunicationError (discovery or JWKS could not be fetched);
// InvalidParameterValue (a RoleArn no provider has); AccessDenied (no
// existing policy named); Throttling (too many refused tokens from one
// address); InvalidAction (OpenID not configured).

// TokenValidator validates identity tokens (oidcidp.Set): the provider
// is the role-policy one roleARN names, else the one whose issuer and
// client the token names.
type TokenValidator interface {
	Validate(ctx context.Context, token, roleARN string) (oidcidp.Claims, error)
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
	name := form.Get("RoleSessionName")
	if name != "" && (len(name) < 2 || len(name) > 64 || !validSessionName(name)) {
		fail(w, http.StatusBadRequest, "ValidationError", "1 validation error detected: Value at 'roleSessionName' failed to satisfy constraint: Member must have length between 2 and 64 and match [\\w+=,.@-]*")
		return
	}
	claims, creds, ok := h.federatedToken(w, r, form, "WebIdentityToken", "assume role with web identity")
	if !ok {
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

// federatedToken validates an OpenID token (of AssumeRoleWithWebIdentity
// or AssumeRoleWithClientGrants) and issues its session, answering any
// refusal itself.
func (h *Handler) federatedToken(w http.ResponseWriter, r *http.Request, form url.Values, param, what string) (oidcidp.Claims, iam.Credentials, bool) {
	if v := form.Get("Version"); v != "2011-06-15" {
		fail(w, http.StatusBadRequest, "InvalidParameterValue", fmt.Sprintf("unsupported Version %q (2011-06-15 is)", v))
		return oidcidp.Claims{}, iam.Credentials{}, false
	}
	if h.OIDC == nil || h.OIDCIssuer == nil {
		fail(w, http.StatusBadRequest, "InvalidAction", "OpenID Connect is not configured on this server (SHARDSTORE_IDENTITY_OPENID_CONFIG_URL)")
		return oidcidp.Claims{}, iam.Credentials{}, false
	}
	token := form.Get(param)
	if token == "" {
		fail(w, http.StatusBadRequest, "MissingParameter", "the "+param+" parameter is missing")
		return oidcidp.Claims{}, iam.Credentials{}, false
	}
	req := iam.WebIdentityRequest{Policy: form.Get("Policy")}
	var ok bool
	if req.Duration, ok = sessionDuration(w, form); !ok {
		return oidcidp.Claims{}, iam.Credentials{}, false
	}
	addr := sourceAddr(r)
	lim := h.limiter()
	if lim.Refused(addr) {
		fail(w, http.StatusBadRequest, "Throttling", fmt.Sprintf("too many refused sign-ins from %s; try again in a few minutes", addr))
		return oidcidp.Claims{}, iam.Credentials{}, false
	}
	claims, err := h.OIDC.Validate(r.Context(), token, form.Get("RoleArn"))
	switch {
	case errors.Is(err, oidcidp.ErrUnknownRole):
		fail(w, http.StatusBadRequest, "InvalidParameterValue", "Error processing RoleArn parameter: "+strings.TrimPrefix(err.Error(), oidcidp.ErrUnknownRole.Error()+": "))
		return oidcidp.Claims{}, iam.Credentials{}, false
	case errors.Is(err, oidcidp.ErrExpiredToken):
		fail(w, http.StatusBadRequest, "ExpiredTokenException", "Token is expired.")
		return oidcidp.Claims{}, iam.Credentials{}, false
	case errors.Is(err, oidcidp.ErrUnavailable):
		if h.Log != nil {
			h.Log.Error(what+": the OpenID provider is unavailable", "error", err)
		}
		fail(w, http.StatusBadRequest, "IDPCommunicationError", "The OpenID provider could not be reached to verify the token; try again later.")
		return oidcidp.Claims{}, iam.Credentials{}, false
	case err != nil:
		lim.Failed(addr)
		if h.Log != nil {
			h.Log.Warn(what+": token refused", "source", addr, "reason", err.Error())
		}
		fail(w, http.StatusBadRequest, "InvalidIdentityToken", "The web identity token was refused: "+strings.TrimPrefix(err.Error(), oidcidp.ErrInvalidToken.Error()+": "))
		return oidcidp.Claims{}, iam.Credentials{}, false
	}
	req.Issuer, req.Subject, req.Policies, req.Vars, req.RoleARN = claims.Issuer, claims.Subject, claims.Policies, claims.Vars, claims.RoleARN
	creds, err := h.OIDCIssuer.AssumeRoleWithWebIdentity(r.Context(), req)
	if err != nil {
		h.failIssue(w, what, err)
		return oidcidp.Claims{}, iam.Credentials{}, false
	}
	return claims, creds, true
}

// AssumeRoleWithClientGrants is MinIO's (deprecated, still used) call for
// a token of OAuth's client-credentials grant: the unsigned form carries
// Token (a JWT access token of the provider: signed, its issuer, the
// client in aud, azp or client_id), optionally DurationSeconds, Policy
// and RoleArn; the checks and the session are AssumeRoleWithWebIdentity's.
type xmlClientGrantsResponse struct {
	XMLName xml.Name `xml:"AssumeRoleWithClientGrantsResponse"`
	NS      string   `xml:"xmlns,attr"`
	Result  struct {
		Credentials      xmlCredentials `xml:"Credentials"`
		SubjectFromToken string         `xml:"SubjectFromToken"`
		Audience         string         `xml:"Audience,omitempty"`
		Provider         string         `xml:"Provider,omitempty"`
	} `xml:"AssumeRoleWithClientGrantsResult"`
	Metadata struct {
		RequestID string `xml:"RequestId"`
	} `xml:"ResponseMetadata"`
}

func (h *Handler) assumeRoleWithClientGrants(w http.ResponseWriter, r *http.Request, form url.Values) {
	claims, creds, ok := h.federatedToken(w, r, form, "Token", "assume role with client grants")
	if !ok {
		return
	}
	var out xmlClientGrantsResponse
	out.NS = stsNS
	out.Result.Credentials = credentialsXML(creds)
	out.Result.SubjectFromToken = claims.Subject
	out.Result.Provider = claims.Issuer
	if len(claims.Audience) > 0 {
		out.Result.Audience = claims.Audience[0]
	}
	out.Metadata.RequestID = requestID()
	writeXML(w, http.StatusOK, out)
}
