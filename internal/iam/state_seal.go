package iam

import "errors"

// SealState seals a short-lived value a browser carries for the server
// (the console's pending OpenID login: state, nonce, PKCE verifier) with
// the session-token key. Every node of a cluster derives that key alike,
// so a value sealed by one node opens on any other; context binds it to
// its use (it opens as nothing else, and no session token opens as it).
func (s *Store) SealState(plain []byte, context string) string {
	return seal(s.keys.tokens, plain, stateAAD+context)
}

// OpenState opens a value of SealState sealed for context.
func (s *Store) OpenState(sealed, context string) ([]byte, error) {
	if len(sealed) > maxToken {
		return nil, errors.New("sealed state too long")
	}
	return unseal(s.keys.tokens, sealed, stateAAD+context)
}

const stateAAD = "shardstore browser state: "
