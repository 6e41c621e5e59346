package auth

import (
	"mime"
	"net/http"
)

// IsFederatedSTSRequest reports whether r may be an unsigned STS call
// whose identity is in its parameters (AssumeRoleWithLDAPIdentity): a
// form POST without an Authorization header or presigned query. The STS
// handler reads the Action and refuses anything else as unsigned; an S3
// browser upload (POST Object) is multipart, so it never matches.
func IsFederatedSTSRequest(r *http.Request) bool {
	if r.Method != http.MethodPost || r.Header.Get("Authorization") != "" || r.URL.Query().Has("X-Amz-Credential") {
		return false
	}
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return err == nil && mt == "application/x-www-form-urlencoded"
}
