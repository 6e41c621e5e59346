package certs

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"strings"

	"github.com/youmark/pkcs8"
)

// ErrNeedPassword is returned for an encrypted private key when no
// password was given.
var ErrNeedPassword = errors.New("the private key is encrypted: set SHARDSTORE_CERT_PASSWD (or MINIO_CERT_PASSWD) to its password")

// parsePrivateKey reads the first private key in a PEM file: PKCS#1
// ("RSA PRIVATE KEY"), SEC1 ("EC PRIVATE KEY"), PKCS#8 ("PRIVATE KEY"),
// PKCS#8 encrypted ("ENCRYPTED PRIVATE KEY", PBES2 as OpenSSL 3 writes
// it) or the legacy OpenSSL encryption of the first two (a Proc-Type
// header). Other blocks before it ("EC PARAMETERS", as `openssl ecparam
// -genkey` writes) are skipped.
func parsePrivateKey(data []byte, password string) (crypto.Signer, error) {
	rest := data
	sawPEM := false
	for {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		sawPEM = true
		switch block.Type {
		case "ENCRYPTED PRIVATE KEY":
			if password == "" {
				return nil, ErrNeedPassword
			}
			key, err := pkcs8.ParsePKCS8PrivateKey(block.Bytes, []byte(password))
			if err != nil && strings.Contains(err.Error(), "only PBES2") {
				return nil, fmt.Errorf("the PKCS#8 private key is encrypted with PBES1, which is not read: re-encrypt it with `openssl pkcs8 -topk8 -v2 aes256`: %w", err)
			}
			if err != nil {
				return nil, fmt.Errorf("cannot decrypt the PKCS#8 private key (wrong password?): %w", err)
			}
			return asSigner(key)
		case "RSA PRIVATE KEY", "EC PRIVATE KEY", "PRIVATE KEY":
			der := block.Bytes
			//nolint:staticcheck // legacy PEM encryption is what older keys carry; reading it is all we do
			if x509.IsEncryptedPEMBlock(block) {
				if password == "" {
					return nil, ErrNeedPassword
				}
				var err error
				//nolint:staticcheck // see above
				if der, err = x509.DecryptPEMBlock(block, []byte(password)); err != nil {
					return nil, fmt.Errorf("cannot decrypt the private key (wrong password?): %w", err)
				}
			}
			return parseKeyDER(block.Type, der)
		}
	}
	if !sawPEM {
		return nil, errors.New("no PEM data (want a PEM private key: -----BEGIN ... PRIVATE KEY-----)")
	}
	return nil, errors.New("no private key among its PEM blocks")
}

func parseKeyDER(kind string, der []byte) (crypto.Signer, error) {
	var key any
	var err error
	switch kind {
	case "RSA PRIVATE KEY":
		key, err = x509.ParsePKCS1PrivateKey(der)
	case "EC PRIVATE KEY":
		key, err = x509.ParseECPrivateKey(der)
	default:
		key, err = x509.ParsePKCS8PrivateKey(der)
	}
	if err != nil {
		return nil, fmt.Errorf("parse %s: %w", strings.ToLower(kind), err)
	}
	return asSigner(key)
}

// asSigner admits the key types TLS certificates use.
func asSigner(key any) (crypto.Signer, error) {
	switch k := key.(type) {
	case *rsa.PrivateKey:
		if k.N.BitLen() < 2048 {
			return nil, fmt.Errorf("the RSA key has %d bits: use at least 2048", k.N.BitLen())
		}
		return k, nil
	case *ecdsa.PrivateKey:
		return k, nil
	case ed25519.PrivateKey:
		return k, nil
	}
	return nil, fmt.Errorf("unsupported private key type %T (want RSA, ECDSA or Ed25519)", key)
}

// parseCertificates reads every CERTIFICATE block of a PEM file, in order,
// or one DER certificate.
func parseCertificates(data []byte) ([]*x509.Certificate, error) {
	var out []*x509.Certificate
	rest := data
	for {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			continue
		}
		c, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("certificate %d: %w", len(out)+1, err)
		}
		out = append(out, c)
	}
	if len(out) == 0 {
		if c, err := x509.ParseCertificate(data); err == nil {
			return []*x509.Certificate{c}, nil
		}
		return nil, errors.New("no certificate in it (want PEM: -----BEGIN CERTIFICATE-----)")
	}
	return out, nil
}

// publicKeyEqual reports whether a certificate's key is the key's public half.
func publicKeyEqual(pub any, key crypto.Signer) bool {
	eq, ok := key.Public().(interface{ Equal(crypto.PublicKey) bool })
	return ok && eq.Equal(pub)
}
