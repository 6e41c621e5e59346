package auth

import "github.com/shardstore/shardstore/internal/access"

// IdentityStore is where the Verifier finds credentials beyond the Users
// store (root and the users file): users and access keys created through
// the admin API, and temporary credentials with their session tokens.
// Errors are *Error values (InvalidAccessKeyId, InvalidToken,
// ExpiredToken ...), answered as they are.
type IdentityStore interface {
	// Lookup finds a long-term access key.
	Lookup(accessKey string) (Identity, error)
	// LookupSession checks a session token and the access key it was
	// issued with.
	LookupSession(accessKey, token string) (Identity, error)
}

// Permissions are what an identity of the IdentityStore may do (see
// access.Permissions). Identities without Permissions (root, the users
// file) are governed by ownership, ACLs and bucket policies alone.
type Permissions = access.Permissions

// CodeExpiredToken answers a session token past its expiry.
const CodeExpiredToken = "ExpiredToken"

// ExpiredToken is the error for an expired session token.
func ExpiredToken() *Error {
	return newErr(CodeExpiredToken, "The provided token has expired.")
}

// InvalidToken is the error for a session token that is malformed, not
// issued by this server, or not issued with the access key it came with.
func InvalidToken() *Error { return invalidToken() }

// InvalidAccessKey is the error for an access key that does not exist;
// message, when not empty, replaces S3's text (a disabled or expired
// key says so, to its own holder).
func InvalidAccessKey(message string) *Error {
	if message == "" {
		return invalidAccessKey()
	}
	return newErr(CodeInvalidAccessKeyID, "%s", message)
}

// lookup finds the identity of a request's access key, checking the
// session token when one came with it. The root user and the users file
// come first; the identity store holds everyone else.
func (v *Verifier) lookup(accessKey, token string) (Identity, *Error) {
	if token != "" {
		if v.Identities == nil {
			return Identity{}, invalidToken()
		}
		id, err := v.Identities.LookupSession(accessKey, token)
		return id, asAuthError(err)
	}
	if id, ok := v.Users.Lookup(accessKey); ok {
		return id, nil
	}
	if v.Identities == nil {
		return Identity{}, invalidAccessKey()
	}
	id, err := v.Identities.Lookup(accessKey)
	return id, asAuthError(err)
}

func asAuthError(err error) *Error {
	if err == nil {
		return nil
	}
	if ae, ok := err.(*Error); ok { //nolint:errorlint // the store returns *Error by contract
		return ae
	}
	return newErr(CodeAccessDenied, "%s", "Access Denied.")
}
