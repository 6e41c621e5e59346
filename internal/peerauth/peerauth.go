// Package peerauth authenticates requests between the nodes of one
// cluster (remote drive calls, lock grants, peer notifications). Every
// node derives the same key from the root credentials, so an operator
// sets nothing new; S3 credentials of ordinary users never open the
// internal endpoints. A request carries its time and an HMAC-SHA256 over
// method, path, query, time and (when the sender declares it) the body's
// SHA-256; a request older or newer than MaxSkew is refused.
//
// What it does not do: encrypt traffic or stop a replay inside the skew
// window. Deployments that cross an untrusted network put the nodes
// behind TLS (see docs/ARCHITECTURE.md, "Cluster").
package peerauth

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// Header names a signed request carries.
const (
	HeaderDate      = "X-Shardstore-Peer-Date"
	HeaderBodyHash  = "X-Shardstore-Peer-Content-Sha256"
	HeaderSignature = "X-Shardstore-Peer-Signature"
	// Unsigned is the body hash of a streamed body (shard data carries
	// its own bitrot checksums).
	Unsigned = "UNSIGNED"
)

// MaxSkew is how far a request's time may be from the receiver's clock.
const MaxSkew = 5 * time.Minute

// ErrUnauthorized is returned by Verify for a request not signed with the key.
var ErrUnauthorized = errors.New("peer request not authenticated")

// Key signs and verifies peer requests.
type Key struct{ k []byte }

// Derive returns the cluster key for the root credentials. The label
// keeps it distinct from any SigV4 signing key made from the same secret.
func Derive(accessKey, secretKey string) Key {
	m := hmac.New(sha256.New, []byte("shardstore cluster key v1\x00"+secretKey))
	m.Write([]byte(accessKey))
	return Key{k: m.Sum(nil)}
}

// Valid reports whether the key was derived (the zero Key signs nothing).
func (k Key) Valid() bool { return len(k.k) > 0 }

// Sign stamps r with the current time and its signature. bodyHash is the
// hex SHA-256 of the body, or Unsigned for a streamed one.
func (k Key) Sign(r *http.Request, bodyHash string) {
	if bodyHash == "" {
		bodyHash = Unsigned
	}
	date := strconv.FormatInt(time.Now().UnixNano(), 10)
	r.Header.Set(HeaderDate, date)
	r.Header.Set(HeaderBodyHash, bodyHash)
	r.Header.Set(HeaderSignature, k.mac(r.Method, r.URL.EscapedPath(), r.URL.RawQuery, date, bodyHash))
}

// BodyHash is the hex SHA-256 of b, for Sign.
func BodyHash(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// Verify checks r's signature and time. It returns the declared body hash
// (Unsigned or a hex SHA-256 the handler must check the body against).
func (k Key) Verify(r *http.Request, now time.Time) (bodyHash string, err error) {
	if !k.Valid() {
		return "", fmt.Errorf("%w: no cluster key", ErrUnauthorized)
	}
	date := r.Header.Get(HeaderDate)
	bodyHash = r.Header.Get(HeaderBodyHash)
	sig := r.Header.Get(HeaderSignature)
	if date == "" || bodyHash == "" || sig == "" {
		return "", fmt.Errorf("%w: missing signature headers", ErrUnauthorized)
	}
	ns, err := strconv.ParseInt(date, 10, 64)
	if err != nil {
		return "", fmt.Errorf("%w: bad date", ErrUnauthorized)
	}
	if d := now.Sub(time.Unix(0, ns)); d > MaxSkew || d < -MaxSkew {
		return "", fmt.Errorf("%w: request time is %v from this node's clock (more than %v): check the clocks of the nodes", ErrUnauthorized, d.Round(time.Second), MaxSkew)
	}
	want := k.mac(r.Method, r.URL.EscapedPath(), r.URL.RawQuery, date, bodyHash)
	if !hmac.Equal([]byte(sig), []byte(want)) {
		return "", fmt.Errorf("%w: bad signature (do all nodes have the same root credentials?)", ErrUnauthorized)
	}
	return bodyHash, nil
}

func (k Key) mac(method, path, query, date, bodyHash string) string {
	m := hmac.New(sha256.New, k.k)
	for _, s := range []string{method, path, query, date, bodyHash} {
		m.Write([]byte(s))
		m.Write([]byte{'\n'})
	}
	return hex.EncodeToString(m.Sum(nil))
}
