package console

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"sync"
	"time"
)

// The pending OpenID login travels in the browser's cookie, sealed:
// nothing about it is kept in one node's memory, so a cluster behind a
// load balancer may take the provider's redirect on any node. A state
// works for the browser holding its cookie only (another browser cannot
// use it, nor use it up), until it expires; the node that takes it
// remembers it until then, so a replay there is refused, and on another
// node the provider refuses the spent code.

// StateSealer seals values a browser carries for the server, with a key
// every node of a cluster has (iam.Store).
type StateSealer interface {
	SealState(plain []byte, context string) string
	OpenState(sealed, context string) ([]byte, error)
}

// loginState is a pending login, as sealed into the cookie.
type loginState struct {
	State    string `json:"s"`
	Provider string `json:"p"`
	Nonce    string `json:"n"`
	Verifier string `json:"v"`
	Redirect string `json:"r"`
	Expires  int64  `json:"e"` // Unix seconds
}

// localSealer seals with a random key of this process: for a console
// given no StateSealer (one node; a restart forgets pending logins).
type localSealer struct{ aead cipher.AEAD }

func newLocalSealer() (*localSealer, error) {
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &localSealer{aead: aead}, nil
}

func (l *localSealer) SealState(plain []byte, context string) string {
	nonce := make([]byte, l.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		panic("console: no randomness: " + err.Error())
	}
	return base64.RawURLEncoding.EncodeToString(l.aead.Seal(nonce, nonce, plain, []byte(context)))
}

func (l *localSealer) OpenState(sealed, context string) ([]byte, error) {
	raw, err := base64.RawURLEncoding.DecodeString(sealed)
	n := l.aead.NonceSize()
	if err != nil || len(raw) < n+l.aead.Overhead() {
		return nil, errors.New("not a sealed state")
	}
	return l.aead.Open(nil, raw[:n], raw[n:], []byte(context))
}

// maxStateCookie bounds the cookie read.
const maxStateCookie = 4096

func (c *Console) sealLogin(l loginState) (string, error) {
	plain, err := json.Marshal(l)
	if err != nil {
		return "", err
	}
	return c.sealer.SealState(plain, oidcStateUse), nil
}

// takeLogin opens the cookie's pending login and checks that state is
// its own, unexpired and not taken on this node before.
func (c *Console) takeLogin(sealed, state string, now time.Time) (loginState, bool) {
	if sealed == "" || state == "" || len(sealed) > maxStateCookie {
		return loginState{}, false
	}
	plain, err := c.sealer.OpenState(sealed, oidcStateUse)
	if err != nil {
		return loginState{}, false
	}
	var l loginState
	if json.Unmarshal(plain, &l) != nil || l.State == "" || subtle.ConstantTimeCompare([]byte(l.State), []byte(state)) != 1 {
		return loginState{}, false
	}
	exp := time.Unix(l.Expires, 0)
	if !now.Before(exp) || !c.oidcUsed.use(l.State, exp, now) {
		return loginState{}, false
	}
	return l, true
}

// usedStates are the states taken on this node, until they expire.
type usedStates struct {
	mu sync.Mutex
	m  map[string]time.Time
}

// use records state; false when it was taken already (or too many
// unexpired states are recorded: the login fails rather than memory
// growing).
func (u *usedStates) use(state string, exp, now time.Time) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.m == nil {
		u.m = map[string]time.Time{}
	}
	if _, ok := u.m[state]; ok {
		return false
	}
	if len(u.m) >= maxOIDCPending {
		for k, e := range u.m {
			if !now.Before(e) {
				delete(u.m, k)
			}
		}
		if len(u.m) >= maxOIDCPending {
			return false
		}
	}
	u.m[state] = exp
	return true
}
