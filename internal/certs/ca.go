package certs

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// CA is a small certificate authority for trials and tests: `cluster demo
// --tls` makes one under its directory and issues each node's
// certificate with it. It is not meant to run a production PKI.
type CA struct {
	Cert *x509.Certificate
	Key  crypto.Signer
}

// NewCA makes an authority (ECDSA P-256) valid for validFor.
func NewCA(commonName string, validFor time.Duration) (*CA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: commonName, Organization: []string{"shardstore"}},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(validFor),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, fmt.Errorf("create CA certificate: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &CA{Cert: cert, Key: key}, nil
}

// LoadCA reads an authority written by WriteFiles.
func LoadCA(certFile, keyFile string) (*CA, error) {
	cb, err := os.ReadFile(certFile)
	if err != nil {
		return nil, err
	}
	kb, err := os.ReadFile(keyFile)
	if err != nil {
		return nil, err
	}
	certs, err := parseCertificates(cb)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", certFile, err)
	}
	key, err := parsePrivateKey(kb, "")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", keyFile, err)
	}
	if !publicKeyEqual(certs[0].PublicKey, key) || !certs[0].IsCA {
		return nil, fmt.Errorf("%s and %s are not a CA certificate and its key", certFile, keyFile)
	}
	return &CA{Cert: certs[0], Key: key}, nil
}

// CertPEM is the authority's certificate in PEM.
func (ca *CA) CertPEM() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.Cert.Raw})
}

// WriteFiles writes the authority's certificate and key (the key readable
// by its owner only).
func (ca *CA) WriteFiles(certFile, keyFile string) error {
	kp, err := keyPEM(ca.Key)
	if err != nil {
		return err
	}
	if err := os.WriteFile(keyFile, kp, 0o600); err != nil {
		return err
	}
	return os.WriteFile(certFile, ca.CertPEM(), 0o644)
}

// Issue makes a server certificate for hosts (DNS names and IP addresses)
// with a fresh ECDSA P-256 key, valid for validFor, and returns both in
// PEM (the key in PKCS#8).
func (ca *CA) Issue(hosts []string, validFor time.Duration) (certPEM, keyPEMBytes []byte, err error) {
	if len(hosts) == 0 {
		return nil, nil, errors.New("issue: no host names")
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: hosts[0], Organization: []string{"shardstore"}},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(validFor),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, key.Public(), ca.Key)
	if err != nil {
		return nil, nil, fmt.Errorf("issue certificate: %w", err)
	}
	kp, err := keyPEM(key)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), kp, nil
}

// WriteCertsDir fills dir as a certificates directory for hosts: a new
// public.crt and private.key issued by the authority, and the authority's
// certificate in CAs/ (so the process trusts its peers).
func (ca *CA) WriteCertsDir(dir string, hosts []string, validFor time.Duration) error {
	cp, kp, err := ca.Issue(hosts, validFor)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(dir, CADir), 0o750); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, PrivateKey), kp, 0o600); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, PublicCert), cp, 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, CADir, "ca.crt"), ca.CertPEM(), 0o644)
}

func keyPEM(key crypto.Signer) ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		panic("certs: no randomness: " + err.Error())
	}
	return n
}

// PoolWith is the system's roots (SSL_CERT_FILE and SSL_CERT_DIR apply)
// plus every certificate in files: what a client given --ca-cert trusts.
func PoolWith(files ...string) (*x509.CertPool, error) {
	pool, err := x509.SystemCertPool()
	if err != nil || pool == nil {
		pool = x509.NewCertPool()
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("CA certificate: %w", err)
		}
		cs, err := parseCertificates(data)
		if err != nil {
			return nil, fmt.Errorf("CA certificate %s: %w", f, err)
		}
		for _, c := range cs {
			pool.AddCert(c)
		}
	}
	return pool, nil
}
