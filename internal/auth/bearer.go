package auth

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// Bearer tokens authenticate scrapers of the metrics endpoint, as MinIO's
// do: a JWT whose subject is an access key, signed (HMAC-SHA512, also
// SHA-256 and SHA-384) with that key's secret, with an expiry. `mc admin
// prometheus generate` and `shardstore admin prometheus generate` make
// them; a token stops working when its key is removed or disabled.

// ErrNoBearer is returned by VerifyBearer for a request without a bearer
// token.
var ErrNoBearer = errors.New("no bearer token: send Authorization: Bearer <token> (shardstore admin prometheus generate makes one)")

// MaxBearerLen bounds the token read from a header.
const MaxBearerLen = 4096

// VerifyBearer authenticates r's bearer token and returns the identity of
// its access key.
func (v *Verifier) VerifyBearer(r *http.Request) (Identity, error) {
	h := r.Header.Get("Authorization")
	scheme, token, ok := strings.Cut(h, " ")
	if h == "" || !ok || !strings.EqualFold(scheme, "Bearer") {
		return Identity{}, ErrNoBearer
	}
	token = strings.TrimSpace(token)
	if len(token) > MaxBearerLen {
		return Identity{}, errors.New("bearer token too long")
	}
	var id Identity
	_, err := jwt.ParseWithClaims(token, &jwt.RegisteredClaims{}, func(t *jwt.Token) (any, error) {
		sub, err := t.Claims.GetSubject()
		if err != nil || sub == "" {
			return nil, errors.New("the token names no access key (sub)")
		}
		found, aerr := v.lookup(sub, "")
		if aerr != nil {
			return nil, fmt.Errorf("access key %q: %s", sub, aerr.Message)
		}
		id = found
		return []byte(found.SecretKey), nil
	}, jwt.WithValidMethods([]string{"HS512", "HS384", "HS256"}), jwt.WithExpirationRequired(), jwt.WithTimeFunc(v.now))
	if err != nil {
		return Identity{}, fmt.Errorf("bearer token refused: %w", err)
	}
	if id.Refusal != nil {
		return Identity{}, fmt.Errorf("bearer token refused: %w", id.Refusal)
	}
	return id, nil
}

// BearerToken makes a metrics bearer token for an access key, valid until
// expires: the token `mc admin prometheus generate` makes (HS512, issuer
// "prometheus").
func BearerToken(accessKey, secretKey string, expires time.Time) (string, error) {
	t := jwt.NewWithClaims(jwt.SigningMethodHS512, jwt.RegisteredClaims{
		Subject: accessKey, Issuer: "prometheus", ExpiresAt: jwt.NewNumericDate(expires),
	})
	return t.SignedString([]byte(secretKey))
}
