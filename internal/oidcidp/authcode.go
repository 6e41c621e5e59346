package oidcidp

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// The authorization-code flow of the console's "Sign in with" login:
// AuthCodeURL sends the browser to the provider with state, nonce and a
// PKCE challenge (S256); Exchange trades the code (with the client
// secret and the PKCE verifier) for an ID token at the token endpoint,
// validates it and checks its nonce.

// AuthCodeURL is the provider's authorization URL for one login.
func (p *Provider) AuthCodeURL(ctx context.Context, redirectURI, state, nonce, challenge string) (string, error) {
	p.mu.Lock()
	err := p.discover(ctx)
	auth := p.authURL
	p.mu.Unlock()
	if err != nil {
		return "", err
	}
	if auth == "" {
		return "", fmt.Errorf("%w: the discovery document names no authorization_endpoint", ErrUnavailable)
	}
	scopes := p.cfg.Scopes
	if len(scopes) == 0 {
		scopes = []string{"openid"}
	} else if !contains(scopes, "openid") {
		scopes = append([]string{"openid"}, scopes...)
	}
	q := url.Values{"response_type": {"code"}, "client_id": {p.cfg.ClientID}, "redirect_uri": {redirectURI},
		"scope": {strings.Join(scopes, " ")}, "state": {state}, "nonce": {nonce},
		"code_challenge": {challenge}, "code_challenge_method": {"S256"}}
	sep := "?"
	if strings.Contains(auth, "?") {
		sep = "&"
	}
	return auth + sep + q.Encode(), nil
}

// Exchange trades an authorization code for the provider's ID token,
// validated and bound to nonce; it returns the token and its claims.
func (p *Provider) Exchange(ctx context.Context, code, verifier, redirectURI, nonce string) (string, Claims, error) {
	p.mu.Lock()
	err := p.discover(ctx)
	tokenURL := p.tokenURL
	p.mu.Unlock()
	if err != nil {
		return "", Claims{}, err
	}
	if tokenURL == "" {
		return "", Claims{}, fmt.Errorf("%w: the discovery document names no token_endpoint", ErrUnavailable)
	}
	form := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {redirectURI}, "code_verifier": {verifier}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, tokenURL, strings.NewReader(form.Encode()))
	if err != nil {
		return "", Claims{}, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(url.QueryEscape(p.cfg.ClientID), url.QueryEscape(p.cfg.ClientSecret))
	resp, err := p.hc.Do(req)
	if err != nil {
		return "", Claims{}, fmt.Errorf("%w: token endpoint: %w", ErrUnavailable, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxDoc))
	var tok struct {
		IDToken string `json:"id_token"`
		Error   string `json:"error"`
	}
	_ = json.Unmarshal(body, &tok)
	if resp.StatusCode != http.StatusOK || tok.IDToken == "" {
		return "", Claims{}, fmt.Errorf("%w: the token endpoint refused the code (%d %s)", ErrInvalidToken, resp.StatusCode, tok.Error)
	}
	c, err := p.Validate(ctx, tok.IDToken)
	if err != nil {
		return "", Claims{}, err
	}
	if nonce == "" || subtle.ConstantTimeCompare([]byte(c.Nonce), []byte(nonce)) != 1 {
		return "", Claims{}, errors.Join(ErrInvalidToken, errors.New("the ID token's nonce is not this login's"))
	}
	return tok.IDToken, c, nil
}
