package auth

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"
)

// serviceSTS is the credential scope service of STS requests, which the
// server answers on its S3 endpoint.
const serviceSTS = "sts"

// IsSTSRequest reports whether r is signed for STS (the service in its
// Authorization header's credential scope is "sts").
func IsSTSRequest(r *http.Request) bool {
	h := r.Header.Get("Authorization")
	_, rest, ok := strings.Cut(h, "Credential=")
	if !ok {
		return false
	}
	cred, _, _ := strings.Cut(rest, ",")
	parts := strings.Split(strings.TrimSpace(cred), "/")
	return len(parts) == 5 && parts[3] == serviceSTS
}

// VerifySTS authenticates an STS request (a form-encoded POST signed
// with SigV4 for service "sts"), whose payload hash is that of body:
// STS clients do not send x-amz-content-sha256, so the body is read
// first and hashed here.
func (v *Verifier) VerifySTS(r *http.Request, body []byte) (Identity, error) {
	id, err := v.verifySTS(r, body)
	if err != nil {
		return Identity{}, err
	}
	if err := id.Refusal; err != nil {
		return Identity{}, err
	}
	return id, nil
}

func (v *Verifier) verifySTS(r *http.Request, body []byte) (Identity, *Error) {
	authz := r.Header.Values("Authorization")
	if len(authz) != 1 || !strings.HasPrefix(strings.TrimSpace(authz[0]), algorithm+" ") {
		return Identity{}, newErr(CodeAccessDenied, "STS requests must be signed with AWS Signature Version 4 in the Authorization header")
	}
	p, err := parseAuthorizationFor(strings.TrimSpace(authz[0]), serviceSTS)
	if err != nil {
		return Identity{}, err
	}
	if err := v.checkRegion(p.scope, CodeAuthorizationHeaderMalformed); err != nil {
		return Identity{}, err
	}
	id, err := v.lookup(p.accessKey, r.Header.Get("X-Amz-Security-Token"))
	if err != nil {
		return Identity{}, err
	}
	t, amzDate, terr := requestTimeV4(r.Header)
	if terr != nil {
		return Identity{}, terr
	}
	if err := v.checkSkew(t); err != nil {
		return Identity{}, err
	}
	if p.scope.date != amzDate[:8] {
		return Identity{}, newErr(CodeAuthorizationHeaderMalformed, "The authorization header is malformed; Invalid credential date. Date is not the same as X-Amz-Date.")
	}
	if err := checkSignedHeaders(r, p.signedHeaders, false); err != nil {
		return Identity{}, err
	}
	sum := sha256.Sum256(body)
	payload := hex.EncodeToString(sum[:])
	if h := r.Header.Get("X-Amz-Content-Sha256"); h != "" && h != payload {
		return Identity{}, newErr(CodeXAmzContentSHA256Mismatch, "The provided 'x-amz-content-sha256' header does not match what was computed.")
	}
	if err := checkSignature(r, signingKey(id.SecretKey, p.scope), amzDate, p, canonicalQuery(r.URL.RawQuery, ""), payload); err != nil {
		return Identity{}, err
	}
	return id, nil
}
