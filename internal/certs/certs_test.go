package certs

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/youmark/pkcs8"
)

func newCA(t *testing.T) *CA {
	t.Helper()
	ca, err := NewCA("test CA", 24*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	return ca
}

// issueKey issues a certificate for hosts to key, valid from nb to na.
func issueKey(t *testing.T, ca *CA, key crypto.Signer, hosts []string, nb, na time.Time) []byte {
	t.Helper()
	tmpl := &x509.Certificate{SerialNumber: serial(), Subject: pkix.Name{CommonName: hosts[0]},
		NotBefore: nb, NotAfter: na, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, key.Public(), ca.Key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

func writePair(t *testing.T, dir string, cert, key []byte) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, PublicCert), cert, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, PrivateKey), key, 0o600); err != nil {
		t.Fatal(err)
	}
}

func pemBlock(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}

func mustDER(t *testing.T) func([]byte, error) []byte {
	return func(b []byte, err error) []byte {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
}

// TestKeyForms loads a certificate with its key in every form the
// package reads, and refuses the forms it must refuse with a message
// naming the file.
func TestKeyForms(t *testing.T) {
	ca := newCA(t)
	der := mustDER(t)
	rsaKey, _ := rsa.GenerateKey(rand.Reader, 2048)
	ecKey, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	_, edKey, _ := ed25519.GenerateKey(rand.Reader)
	weak, _ := rsa.GenerateKey(rand.Reader, 1024)
	other, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	//nolint:staticcheck // the legacy encryption is an input this package must read
	legacy, err := x509.EncryptPEMBlock(rand.Reader, "RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(rsaKey), []byte("pw"), x509.PEMCipherAES256)
	if err != nil {
		t.Fatal(err)
	}
	encPKCS8 := der(pkcs8.MarshalPrivateKey(ecKey, []byte("pw"), nil))
	ecParams := append(pemBlock("EC PARAMETERS", []byte{0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07}), pemBlock("EC PRIVATE KEY", der(x509.MarshalECPrivateKey(ecKey)))...)
	cases := []struct {
		name     string
		key      crypto.Signer
		certKey  crypto.Signer // the key the certificate is for (key when nil)
		keyPEM   []byte
		password string
		wantErr  string
	}{
		{name: "RSA PKCS#1", key: rsaKey, keyPEM: pemBlock("RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(rsaKey))},
		{name: "RSA PKCS#8", key: rsaKey, keyPEM: pemBlock("PRIVATE KEY", der(x509.MarshalPKCS8PrivateKey(rsaKey)))},
		{name: "ECDSA SEC1", key: ecKey, keyPEM: pemBlock("EC PRIVATE KEY", der(x509.MarshalECPrivateKey(ecKey)))},
		{name: "ECDSA SEC1 after EC PARAMETERS", key: ecKey, keyPEM: ecParams},
		{name: "ECDSA PKCS#8", key: ecKey, keyPEM: pemBlock("PRIVATE KEY", der(x509.MarshalPKCS8PrivateKey(ecKey)))},
		{name: "Ed25519 PKCS#8", key: edKey, keyPEM: pemBlock("PRIVATE KEY", der(x509.MarshalPKCS8PrivateKey(edKey)))},
		{name: "legacy encrypted with password", key: rsaKey, keyPEM: pem.EncodeToMemory(legacy), password: "pw"},
		{name: "PKCS#8 encrypted with password", key: ecKey, keyPEM: pemBlock("ENCRYPTED PRIVATE KEY", encPKCS8), password: "pw"},
		{name: "legacy encrypted without password", key: rsaKey, keyPEM: pem.EncodeToMemory(legacy), wantErr: "SHARDSTORE_CERT_PASSWD"},
		{name: "PKCS#8 encrypted without password", key: ecKey, keyPEM: pemBlock("ENCRYPTED PRIVATE KEY", encPKCS8), wantErr: "SHARDSTORE_CERT_PASSWD"},
		{name: "PKCS#8 encrypted, wrong password", key: ecKey, keyPEM: pemBlock("ENCRYPTED PRIVATE KEY", encPKCS8), password: "nope", wantErr: "wrong password"},
		{name: "key of another certificate", key: other, certKey: ecKey, keyPEM: pemBlock("PRIVATE KEY", der(x509.MarshalPKCS8PrivateKey(other))), wantErr: "does not match the certificate"},
		{name: "RSA 1024", key: weak, keyPEM: pemBlock("RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(weak)), wantErr: "at least 2048"},
		{name: "not PEM", key: ecKey, keyPEM: []byte("hello"), wantErr: "no PEM data"},
		{name: "only a certificate", key: ecKey, keyPEM: pemBlock("CERTIFICATE", []byte{1, 2, 3}), wantErr: "no private key"},
		{name: "garbage in a key block", key: ecKey, keyPEM: pemBlock("EC PRIVATE KEY", []byte{0x30, 0x03, 1, 2, 3}), wantErr: "parse ec private key"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			certKey := c.certKey
			if certKey == nil {
				certKey = c.key
			}
			now := time.Now()
			writePair(t, dir, issueKey(t, ca, certKey, []string{"node1.example"}, now.Add(-time.Hour), now.Add(24*time.Hour)), c.keyPEM)
			s, err := Load(Options{Dir: dir, Password: c.password})
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) || !strings.Contains(err.Error(), filepath.Join(dir, PrivateKey)) {
					t.Fatalf("err = %v, want one naming %s and saying %q", err, filepath.Join(dir, PrivateKey), c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !s.HasCertificate() || len(s.Certificates()) != 1 || s.Certificates()[0].Names[0] != "node1.example" {
				t.Fatalf("certificates = %+v", s.Certificates())
			}
		})
	}
}

// TestLayoutErrors: half a pair, an unreadable certificate, and a
// subdirectory that is not a certificate are errors naming the path.
func TestLayoutErrors(t *testing.T) {
	ca := newCA(t)
	cert, key, err := ca.Issue([]string{"a.example"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		setup func(dir string)
		want  string
	}{
		{"key without certificate", func(dir string) { os.WriteFile(filepath.Join(dir, PrivateKey), key, 0o600) }, PublicCert + ": no such file"},
		{"certificate without key", func(dir string) { os.WriteFile(filepath.Join(dir, PublicCert), cert, 0o644) }, PrivateKey + ": no such file"},
		{"certificate is garbage", func(dir string) {
			writePair(t, dir, []byte("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"), key)
		}, PublicCert + ": certificate 1: x509: malformed"},
		{"certificate file empty", func(dir string) { writePair(t, dir, nil, key) }, "no certificate in it"},
		{"empty subdirectory", func(dir string) { os.Mkdir(filepath.Join(dir, "other.example"), 0o750) }, "holds neither"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			c.setup(dir)
			_, err := Load(Options{Dir: dir})
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), dir+"/") {
				t.Fatalf("err = %v, want one naming the path and saying %q", err, c.want)
			}
		})
	}
	// No directory at all: nothing to serve, no error.
	s, err := Load(Options{Dir: filepath.Join(t.TempDir(), "absent")})
	if err != nil || s.HasCertificate() {
		t.Fatalf("absent dir: %v, has certificate %v", err, s != nil && s.HasCertificate())
	}
	// "" (no home directory to find the default in) is no directory,
	// never the working directory, even one holding a pair.
	wd := t.TempDir()
	cp, kp, _ := ca.Issue([]string{"cwd.example"}, time.Hour)
	writePair(t, wd, cp, kp)
	t.Chdir(wd)
	if s, err := Load(Options{Dir: ""}); err != nil || s.HasCertificate() || s.reloadIfChangedForTest() {
		t.Fatalf("empty Dir read the working directory: %v", err)
	}
}

// TestValidityWarnings: expired, not yet valid and soon-expiring
// certificates load, each with a warning naming its file.
func TestValidityWarnings(t *testing.T) {
	ca := newCA(t)
	now := time.Now()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	kp, _ := keyPEM(key)
	for _, c := range []struct {
		name   string
		nb, na time.Time
		want   string
	}{
		{"expired", now.Add(-48 * time.Hour), now.Add(-time.Hour), "expired on"},
		{"not yet valid", now.Add(time.Hour), now.Add(48 * time.Hour), "not valid before"},
		{"expiring", now.Add(-time.Hour), now.Add(10 * 24 * time.Hour), "expires on"},
		{"fine", now.Add(-time.Hour), now.Add(90 * 24 * time.Hour), ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			writePair(t, dir, issueKey(t, ca, key, []string{"x.example"}, c.nb, c.na), kp)
			s, err := Load(Options{Dir: dir})
			if err != nil {
				t.Fatal(err)
			}
			ws := strings.Join(s.Warnings(), "\n")
			if c.want == "" && ws != "" || c.want != "" && (!strings.Contains(ws, c.want) || !strings.Contains(ws, filepath.Join(dir, PublicCert))) {
				t.Fatalf("warnings %q, want %q", ws, c.want)
			}
		})
	}
}

// serveTLS runs a TLS echo of the server name on loopback with the store's
// server configuration.
func serveTLS(t *testing.T, s *Store) string {
	t.Helper()
	ln, err := tls.Listen("tcp", "127.0.0.1:0", s.ServerConfig())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_ = c.(*tls.Conn).Handshake()
				_, _ = io.WriteString(c, "ok")
			}()
		}
	}()
	return ln.Addr().String()
}

// peerCert dials addr asking for serverName and returns the leaf it got.
func peerCert(t *testing.T, addr, serverName string, roots *x509.CertPool, version uint16) (*x509.Certificate, error) {
	t.Helper()
	cfg := &tls.Config{ServerName: serverName, RootCAs: roots, MinVersion: version, MaxVersion: version}
	c, err := tls.Dial("tcp", addr, cfg)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return c.ConnectionState().PeerCertificates[0], nil
}

// TestSNIAndTrust: two certificates chosen by server name (RSA and ECDSA),
// the default for unknown names, CAs/ in the client pool, TLS 1.1 refused.
func TestSNIAndTrust(t *testing.T) {
	ca := newCA(t)
	dir := t.TempDir()
	now := time.Now()
	rsaKey, _ := rsa.GenerateKey(rand.Reader, 2048)
	writePair(t, dir, issueKey(t, ca, rsaKey, []string{"default.example", "127.0.0.1"}, now.Add(-time.Hour), now.Add(time.Hour)),
		pemBlock("RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(rsaKey)))
	cp, kp, err := ca.Issue([]string{"b.example"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	writePair(t, filepath.Join(dir, "b.example"), cp, kp)
	// Kubernetes' secret plumbing is skipped, not taken for a certificate.
	os.Mkdir(filepath.Join(dir, "..data"), 0o750)
	os.MkdirAll(filepath.Join(dir, CADir), 0o750)
	os.WriteFile(filepath.Join(dir, CADir, "ca.crt"), ca.CertPEM(), 0o644)
	os.WriteFile(filepath.Join(dir, CADir, "README"), []byte("not a certificate"), 0o644)
	s, err := Load(Options{Dir: dir, SystemRoots: func() (*x509.CertPool, error) { return x509.NewCertPool(), nil }})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.CAFiles()) != 1 || !strings.Contains(strings.Join(s.Warnings(), " "), "README is not trusted") {
		t.Fatalf("CA files %v, warnings %v", s.CAFiles(), s.Warnings())
	}
	addr := serveTLS(t, s)
	roots := s.RootCAs()
	// 127.0.0.1: Go sends no SNI for an address, so the server matches
	// the address the client connected to.
	for name, want := range map[string]string{"b.example": "b.example", "default.example": "default.example", "127.0.0.1": "default.example"} {
		got, err := peerCert(t, addr, name, roots, 0)
		if err != nil || got.Subject.CommonName != want {
			t.Fatalf("server name %q: %v, %v (want %s)", name, err, got, want)
		}
	}
	// A name no certificate has gets the default, which the client
	// refuses as not its name.
	var host x509.HostnameError
	if _, err := peerCert(t, addr, "unknown.example", roots, 0); !errors.As(err, &host) || host.Certificate.Subject.CommonName != "default.example" {
		t.Fatalf("unknown name: %v, want a name mismatch on the default", err)
	}
	for _, v := range []uint16{tls.VersionTLS10, tls.VersionTLS11} {
		if _, err := peerCert(t, addr, "b.example", s.RootCAs(), v); err == nil {
			t.Fatalf("a TLS %x handshake succeeded", v)
		}
	}
	if _, err := peerCert(t, addr, "b.example", s.RootCAs(), tls.VersionTLS12); err != nil {
		t.Fatalf("TLS 1.2: %v", err)
	}
	// DialTLS verifies for the host asked for, whatever address it dials.
	dial := s.DialTLS((&net.Dialer{}).DialContext)
	c, err := dial(context.Background(), "tcp", addr)
	if err != nil {
		t.Fatalf("DialTLS to %s: %v", addr, err)
	}
	c.Close()
	if _, err := (&Store{}).dialNoTrust(addr); err == nil || !strings.Contains(err.Error(), "not signed by an authority this node trusts") {
		t.Fatalf("untrusted: %v", err)
	}
}

// dialNoTrust dials with a store that trusts nothing.
func (s *Store) dialNoTrust(addr string) (net.Conn, error) {
	empty := &Store{opts: Options{}}
	empty.cur.Store(&material{roots: x509.NewCertPool()})
	return empty.DialTLS((&net.Dialer{}).DialContext)(context.Background(), "tcp", addr)
}

// TestDialPlain: a TLS dial to a plain TCP server says it does not speak TLS.
func TestDialPlain(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err == nil {
			io.WriteString(c, "HTTP/1.1 400 Bad Request\r\n\r\n")
			c.Close()
		}
	}()
	s, err := Load(Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.DialTLS((&net.Dialer{}).DialContext)(context.Background(), "tcp", ln.Addr().String())
	if err == nil || !strings.Contains(err.Error(), "does not answer in TLS") {
		t.Fatalf("err = %v", err)
	}
}

// logBuffer collects log lines.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestRotation: a replaced pair serves new connections after a poll; a
// broken replacement is refused with one log line and the old
// certificate keeps serving; SIGHUP reloads at once.
func TestRotation(t *testing.T) {
	ca := newCA(t)
	dir := t.TempDir()
	cp, kp, _ := ca.Issue([]string{"first.example", "127.0.0.1"}, time.Hour)
	writePair(t, dir, cp, kp)
	logs := &logBuffer{}
	s, err := Load(Options{Dir: dir, Logger: slog.New(slog.NewTextHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca.Cert)
	addr := serveTLS(t, s)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	hup := make(chan os.Signal, 1)
	done := make(chan struct{})
	go func() { s.Watch(ctx, 20*time.Millisecond, hup); close(done) }()
	defer func() { cancel(); <-done }()
	served := func() string {
		c, err := peerCert(t, addr, "127.0.0.1", pool, 0)
		if err != nil {
			t.Fatal(err)
		}
		return c.Subject.CommonName
	}
	waitFor := func(want string) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for served() != want {
			if time.Now().After(deadline) {
				t.Fatalf("still serving %s, want %s\n%s", served(), want, logs)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	cp2, kp2, _ := ca.Issue([]string{"second.example", "127.0.0.1"}, time.Hour)
	writePair(t, dir, cp2, kp2)
	waitFor("second.example")
	// A certificate whose key is another's: refused, logged once, the
	// second keeps serving.
	cp3, _, _ := ca.Issue([]string{"third.example", "127.0.0.1"}, time.Hour)
	writePair(t, dir, cp3, kp)
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(logs.String(), "certificates not reloaded") {
		if time.Now().After(deadline) {
			t.Fatalf("no log line for the broken pair\n%s", logs)
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond) // several polls
	if got := served(); got != "second.example" {
		t.Fatalf("serving %s after a broken replacement", got)
	}
	if n := strings.Count(logs.String(), "certificates not reloaded"); n != 1 {
		t.Fatalf("broken pair logged %d times\n%s", n, logs)
	}
	if err := s.Reload(); err == nil || !strings.Contains(err.Error(), "does not match") {
		t.Fatalf("Reload of the broken pair: %v", err)
	}
	// Fixed by writing the matching key; SIGHUP reloads even when the
	// stamp would not say so.
	cp4, kp4, _ := ca.Issue([]string{"fourth.example", "127.0.0.1"}, time.Hour)
	writePair(t, dir, cp4, kp4)
	hup <- os.Interrupt
	waitFor("fourth.example")
	// Removing the pair does not turn TLS off under the server.
	os.Remove(filepath.Join(dir, PublicCert))
	os.Remove(filepath.Join(dir, PrivateKey))
	if err := s.Reload(); err == nil || !strings.Contains(err.Error(), "no longer holds a certificate") {
		t.Fatalf("Reload with the pair removed: %v", err)
	}
	if got := served(); got != "fourth.example" {
		t.Fatalf("serving %s after the pair was removed", got)
	}
}

// TestCARoundTrip: a CA written to files loads back and issues
// certificates its pool verifies.
func TestCARoundTrip(t *testing.T) {
	ca := newCA(t)
	dir := t.TempDir()
	cf, kf := filepath.Join(dir, "ca.crt"), filepath.Join(dir, "ca.key")
	if err := ca.WriteFiles(cf, kf); err != nil {
		t.Fatal(err)
	}
	back, err := LoadCA(cf, kf)
	if err != nil {
		t.Fatal(err)
	}
	node := filepath.Join(dir, "node")
	if err := back.WriteCertsDir(node, []string{"127.0.0.1", "localhost"}, time.Hour); err != nil {
		t.Fatal(err)
	}
	s, err := Load(Options{Dir: node, SystemRoots: func() (*x509.CertPool, error) { return nil, errors.New("none") }})
	if err != nil {
		t.Fatal(err)
	}
	addr := serveTLS(t, s)
	if _, err := peerCert(t, addr, "localhost", s.RootCAs(), 0); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(kf); fi.Mode().Perm() != 0o600 {
		t.Fatalf("CA key mode %v", fi.Mode())
	}
	if _, err := LoadCA(filepath.Join(node, PublicCert), filepath.Join(node, PrivateKey)); err == nil {
		t.Fatal("a server certificate loaded as a CA")
	}
}

// FuzzParse: hostile bytes in a key or certificate file never panic, and
// a key that parses is usable.
func FuzzParse(f *testing.F) {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	kp, _ := keyPEM(key)
	f.Add(kp, "")
	f.Add(pemBlock("ENCRYPTED PRIVATE KEY", []byte{0x30, 0x80}), "pw")
	f.Add([]byte("-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-256-CBC,00\n\nAAAA\n-----END RSA PRIVATE KEY-----\n"), "pw")
	f.Add([]byte{0x30, 0x82, 0xff, 0xff}, "")
	f.Fuzz(func(t *testing.T, data []byte, password string) {
		if k, err := parsePrivateKey(data, password); err == nil && k.Public() == nil {
			t.Fatal("a key without a public half")
		}
		if cs, err := parseCertificates(data); err == nil && len(cs) == 0 {
			t.Fatal("no certificates and no error")
		}
	})
}

// TestCertificateAppearsOnPlainServer: a store read without a certificate
// (a server that speaks plain HTTP) says a restart is needed when one
// appears, never that new connections use it.
func TestCertificateAppearsOnPlainServer(t *testing.T) {
	ca := newCA(t)
	dir := t.TempDir()
	logs := &logBuffer{}
	s, err := Load(Options{Dir: dir, Logger: slog.New(slog.NewTextHandler(logs, nil))})
	if err != nil || s.HasCertificate() {
		t.Fatalf("load: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { s.Watch(ctx, 10*time.Millisecond, nil); close(done) }()
	defer func() { cancel(); <-done }()
	cp, kp, _ := ca.Issue([]string{"late.example"}, time.Hour)
	writePair(t, dir, cp, kp)
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(logs.String(), "restart it to serve HTTPS") {
		if time.Now().After(deadline) {
			t.Fatalf("no restart notice:\n%s", logs)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if strings.Contains(logs.String(), "new connections use them") {
		t.Fatalf("claims the new certificate serves:\n%s", logs)
	}
}

// reloadIfChangedForTest reports whether a poll would read the directory
// again.
func (s *Store) reloadIfChangedForTest() bool {
	changed, _ := s.reloadIf(false)
	return changed
}
