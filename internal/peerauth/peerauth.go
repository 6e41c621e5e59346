package peerauth

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shardstore/shardstore/internal/wallclock"
)

// Header names a signed request carries.
const (
	HeaderDate      = "X-Shardstore-Peer-Date"
	HeaderNonce     = "X-Shardstore-Peer-Nonce"
	HeaderBodyHash  = "X-Shardstore-Peer-Content-Sha256"
	HeaderSignature = "X-Shardstore-Peer-Signature"
	// Unsigned is the body hash of a streamed body (shard data carries
	// its own bitrot checksums).
	Unsigned = "UNSIGNED"
	// HeaderFrom is the sender's own host as the other nodes address it
	// (Key.SetSelf), HeaderToEpoch the epoch of the destination's current
	// run as the sender last learned it from the destination's own
	// requests; HeaderExtSignature signs both with the request's
	// signature (see ext.go). Releases before them ignore all three.
	HeaderFrom         = "X-Shardstore-Peer-From"
	HeaderToEpoch      = "X-Shardstore-Peer-To-Epoch"
	HeaderExtSignature = "X-Shardstore-Peer-Ext-Signature"
)

// MaxSkew is how far a request's time may be from the receiver's clock.
const MaxSkew = 5 * time.Minute

// Window is how many sequence numbers behind the newest a request from
// the same sender to the same node may arrive and still be accepted.
const Window = 1 << 16

// StartSlack is how long before a receiver's start a request from a
// sender it has not heard from may be dated (clocks differ a little).
const StartSlack = 2 * time.Second

// ErrUnauthorized is returned by Verify for a request not signed with
// the key, outside the time window, or replayed.
var ErrUnauthorized = errors.New("peer request not authenticated")

// Key signs and verifies peer requests. Copies share the sender's
// sequence numbers and the receiver's record of nonces.
type Key struct {
	k  []byte
	st *keyState
}

type keyState struct {
	epoch string
	// seqs: destination host -> *atomic.Uint64.
	seqs  sync.Map
	guard *guard
	// self is this node's host as the others address it ("" unknown).
	self atomic.Pointer[string]
	// peers: host -> epoch, the current run of each node this one
	// heard from (learned from its accepted requests' HeaderFrom).
	peers sync.Map
}

// Derive returns the cluster key for the root credentials. The label
// keeps it distinct from any SigV4 signing key made from the same secret.
func Derive(accessKey, secretKey string) Key {
	m := hmac.New(sha256.New, []byte("shardstore cluster key v1\x00"+secretKey))
	m.Write([]byte(accessKey))
	var e [16]byte
	if _, err := rand.Read(e[:]); err != nil {
		panic("peerauth: no randomness: " + err.Error())
	}
	return Key{k: m.Sum(nil), st: &keyState{epoch: hex.EncodeToString(e[:]), guard: newGuard(wallclock.Now())}}
}

// Valid reports whether the key was derived (the zero Key signs nothing).
func (k Key) Valid() bool { return len(k.k) > 0 && k.st != nil }

// host is the destination a request names, as signed.
func host(r *http.Request) string {
	h := r.Host
	if h == "" && r.URL != nil {
		h = r.URL.Host
	}
	return strings.ToLower(h)
}

// Sign stamps r with the current time, a fresh nonce and its signature.
// bodyHash is the hex SHA-256 of the body, or Unsigned for a streamed
// one. A signed request is sent once: sending it again is a replay.
func (k Key) Sign(r *http.Request, bodyHash string) {
	if bodyHash == "" {
		bodyHash = Unsigned
	}
	nonce := "-"
	if k.st != nil {
		h := host(r)
		c, ok := k.st.seqs.Load(h)
		if !ok {
			c, _ = k.st.seqs.LoadOrStore(h, new(atomic.Uint64))
		}
		nonce = k.st.epoch + "." + strconv.FormatUint(c.(*atomic.Uint64).Add(1), 10)
	}
	date := strconv.FormatInt(wallclock.Now().UnixNano(), 10)
	r.Header.Set(HeaderDate, date)
	r.Header.Set(HeaderNonce, nonce)
	r.Header.Set(HeaderBodyHash, bodyHash)
	sig := k.mac(r, date, nonce, bodyHash)
	r.Header.Set(HeaderSignature, sig)
	k.signExt(r, sig)
}

// BodyHash is the hex SHA-256 of b, for Sign.
func BodyHash(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// Verify checks r's signature, time and nonce. It returns the declared
// body hash (Unsigned or a hex SHA-256 the handler must check the body
// against). A request that passes is recorded: the same request again is
// refused.
func (k Key) Verify(r *http.Request, now time.Time) (bodyHash string, err error) {
	if !k.Valid() {
		return "", fmt.Errorf("%w: no cluster key", ErrUnauthorized)
	}
	date := r.Header.Get(HeaderDate)
	nonce := r.Header.Get(HeaderNonce)
	bodyHash = r.Header.Get(HeaderBodyHash)
	sig := r.Header.Get(HeaderSignature)
	if date == "" || nonce == "" || bodyHash == "" || sig == "" {
		return "", fmt.Errorf("%w: missing signature headers (is every node the same release?)", ErrUnauthorized)
	}
	ns, err := strconv.ParseInt(date, 10, 64)
	if err != nil {
		return "", fmt.Errorf("%w: bad date", ErrUnauthorized)
	}
	sent := time.Unix(0, ns)
	if d := now.Sub(sent); d > MaxSkew || d < -MaxSkew {
		return "", fmt.Errorf("%w: request time is %v from this node's clock (more than %v): check the clocks of the nodes", ErrUnauthorized, d.Round(time.Second), MaxSkew)
	}
	if !hmac.Equal([]byte(sig), []byte(k.mac(r, date, nonce, bodyHash))) {
		return "", fmt.Errorf("%w: bad signature (do all nodes have the same root credentials?)", ErrUnauthorized)
	}
	epoch, seqText, ok := strings.Cut(nonce, ".")
	seq, perr := strconv.ParseUint(seqText, 10, 64)
	if !ok || perr != nil || len(epoch) != 32 || seq == 0 {
		return "", fmt.Errorf("%w: bad nonce", ErrUnauthorized)
	}
	from, fresh, err := k.verifyExt(r, sig)
	if err != nil {
		return "", err
	}
	if err := k.st.guard.admit(host(r), epoch, seq, sent, now, fresh); err != nil {
		return "", fmt.Errorf("%w: %w", ErrUnauthorized, err)
	}
	k.learn(from, epoch)
	return bodyHash, nil
}

func (k Key) mac(r *http.Request, date, nonce, bodyHash string) string {
	m := hmac.New(sha256.New, k.k)
	for _, s := range []string{"v2", r.Method, host(r), r.URL.EscapedPath(), r.URL.RawQuery, date, nonce, bodyHash} {
		m.Write([]byte(s))
		m.Write([]byte{'\n'})
	}
	return hex.EncodeToString(m.Sum(nil))
}

// ForHost reports whether r names host as its destination (case
// insensitive): a node serves only requests signed for itself.
func ForHost(r *http.Request, host string) bool {
	return strings.EqualFold(r.Host, host)
}
