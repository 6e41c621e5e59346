package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"
)

// -fill sse runs MinIO over TLS (a certificate made here for 127.0.0.1,
// in WORK/certs, trusted by the filler only), since MinIO accepts SSE-C
// over TLS only: the fixture then holds a real SSE-C version, whose
// adoption must be refused.

// minioTLS makes the certificate, and the client that trusts it.
func minioTLS(work string) (certsDir string, client *http.Client, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "minio fixture"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return "", nil, err
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return "", nil, err
	}
	certsDir = filepath.Join(work, "certs")
	if err := os.MkdirAll(certsDir, 0o700); err != nil {
		return "", nil, err
	}
	if err := os.WriteFile(filepath.Join(certsDir, "public.crt"), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		return "", nil, err
	}
	if err := os.WriteFile(filepath.Join(certsDir, "private.key"), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		return "", nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return "", nil, err
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return certsDir, &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}, nil
}
