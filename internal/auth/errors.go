package auth

import (
	"fmt"
	"net/http"
)

// Error is an S3 error produced by authentication: Code is the S3 error code
// (for the XML <Code> element), Status the HTTP status to answer with and
// Message a human-readable explanation.
type Error struct {
	Code    string
	Status  int
	Message string
}

// Error implements the error interface.
func (e *Error) Error() string {
	return fmt.Sprintf("%s: %s", e.Code, e.Message)
}

// S3 error codes returned by this package. They are exported so the HTTP layer
// and tests can compare without repeating string literals.
const (
	CodeAccessDenied                      = "AccessDenied"
	CodeAuthorizationHeaderMalformed      = "AuthorizationHeaderMalformed"
	CodeAuthorizationQueryParametersError = "AuthorizationQueryParametersError"
	CodeInvalidAccessKeyID                = "InvalidAccessKeyId"
	CodeSignatureDoesNotMatch             = "SignatureDoesNotMatch"
	CodeRequestTimeTooSkewed              = "RequestTimeTooSkewed"
	CodeXAmzContentSHA256Mismatch         = "XAmzContentSHA256Mismatch"
	CodeIncompleteBody                    = "IncompleteBody"
	CodeInvalidArgument                   = "InvalidArgument"
	CodeInvalidRequest                    = "InvalidRequest"
	CodeInvalidToken                      = "InvalidToken"
	CodeMalformedTrailerError             = "MalformedTrailerError"
)

// statusOf maps each code to the status S3 answers it with.
func statusOf(code string) int {
	switch code {
	case CodeAccessDenied, CodeInvalidAccessKeyID, CodeSignatureDoesNotMatch, CodeRequestTimeTooSkewed:
		return http.StatusForbidden
	default:
		return http.StatusBadRequest
	}
}

// newErr builds an *Error with the status that belongs to code.
func newErr(code, format string, args ...any) *Error {
	return &Error{Code: code, Status: statusOf(code), Message: fmt.Sprintf(format, args...)}
}

// S3's own texts for the errors clients most often compare by message.
const (
	msgSignatureDoesNotMatch = "The request signature we calculated does not match the signature you provided. Check your key and signing method."
	msgInvalidAccessKeyID    = "The AWS Access Key Id you provided does not exist in our records."
	msgInvalidToken          = "The provided token is malformed or otherwise invalid."
)

func invalidAccessKey() *Error { return newErr(CodeInvalidAccessKeyID, "%s", msgInvalidAccessKeyID) }

// invalidToken answers any session token: this server issues none.
func invalidToken() *Error { return newErr(CodeInvalidToken, "%s", msgInvalidToken) }
