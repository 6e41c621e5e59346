package certs

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// File and directory names of the layout.
const (
	PublicCert = "public.crt"
	PrivateKey = "private.key"
	CADir      = "CAs"
)

// ExpiryWarning is how long before its end a certificate is reported as
// about to expire.
const ExpiryWarning = 30 * 24 * time.Hour

// Options say where the material is and how to read it.
type Options struct {
	// Dir is the certificates directory. A directory that does not exist
	// holds nothing (the server speaks plain HTTP and trusts the system's
	// roots); "" is no directory at all, never the working directory.
	Dir string
	// Password decrypts encrypted private keys.
	Password string
	// Logger receives reload results and warnings; nil discards them.
	Logger *slog.Logger
	// Now is the clock expiry is judged by (time.Now when nil).
	Now func() time.Time
	// SystemRoots is the pool CAs/ is added to; nil loads the system's
	// (x509.SystemCertPool, which honours SSL_CERT_FILE and SSL_CERT_DIR).
	SystemRoots func() (*x509.CertPool, error)
}

// Store holds the certificates and trusted authorities read from a
// directory, replaced as a whole by Reload.
type Store struct {
	opts   Options
	cur    atomic.Pointer[material]
	reload sync.Mutex
	// servesTLS is whether the first reading held a certificate: a
	// listener decides at start whether it speaks TLS, so certificates
	// that appear later are trusted material only until a restart.
	servesTLS bool
}

// Certificate is one certificate served, as read from its files.
type Certificate struct {
	CertFile, KeyFile string
	// Names are the DNS names and IP addresses it is valid for.
	Names     []string
	NotBefore time.Time
	NotAfter  time.Time
	tls       *tls.Certificate
}

// material is one consistent reading of the directory.
type material struct {
	// certs are every certificate served; def is the top directory's
	// (nil when it has none), the answer when no name matches.
	certs []*Certificate
	def   *Certificate
	roots *x509.CertPool
	// cas are the files of CAs/ that were read.
	cas      []string
	warnings []string
	stamp    string
}

// Load reads the directory. It fails, naming the file, on a certificate
// or key that cannot be read, a key that does not match its certificate,
// or an encrypted key without its password; expired certificates load
// with a warning (Warnings).
func Load(o Options) (*Store, error) {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.SystemRoots == nil {
		o.SystemRoots = x509.SystemCertPool
	}
	s := &Store{opts: o}
	m, err := s.read()
	if err != nil {
		return nil, err
	}
	s.cur.Store(m)
	s.servesTLS = len(m.certs) > 0
	return s, nil
}

// Dir is the directory read.
func (s *Store) Dir() string { return s.opts.Dir }

// HasCertificate reports whether the directory holds a certificate to
// serve (then the server speaks TLS).
func (s *Store) HasCertificate() bool { return len(s.cur.Load().certs) > 0 }

// Certificates are the certificates served, the default (top directory)
// first.
func (s *Store) Certificates() []Certificate {
	m := s.cur.Load()
	out := make([]Certificate, len(m.certs))
	for i, c := range m.certs {
		out[i] = *c
	}
	return out
}

// CAFiles are the files of CAs/ whose certificates are trusted.
func (s *Store) CAFiles() []string { return slices.Clone(s.cur.Load().cas) }

// Warnings are what the last reading found worth telling the operator:
// certificates expired, about to expire or not valid yet, files of CAs/
// that hold no certificate.
func (s *Store) Warnings() []string { return slices.Clone(s.cur.Load().warnings) }

// RootCAs is the pool a client of this process verifies servers with:
// the system's roots plus CAs/.
func (s *Store) RootCAs() *x509.CertPool { return s.cur.Load().roots }

// Reload reads the directory again (SIGHUP asks for this). When it
// reads, the new material serves new connections; when it fails, the old
// one stays and the error says why.
func (s *Store) Reload() error {
	_, err := s.reloadIf(true)
	return err
}

// reloadIf reads the directory again when forced or when a file changed
// since the last reading (changed says whether it read).
func (s *Store) reloadIf(force bool) (changed bool, err error) {
	s.reload.Lock()
	defer s.reload.Unlock()
	old := s.cur.Load()
	if !force {
		if stamp, err := s.stamp(); err == nil && stamp == old.stamp {
			return false, nil
		}
	}
	m, err := s.read()
	if err == nil && len(m.certs) == 0 && len(old.certs) > 0 {
		err = fmt.Errorf("%s no longer holds a certificate: keeping the one loaded (a server that speaks TLS keeps speaking it until restarted)", s.opts.Dir)
	}
	if err != nil {
		return true, err
	}
	s.cur.Store(m)
	return true, nil
}

// Watch reloads the directory every interval when a file changed, and
// whenever hup receives, until ctx ends. Each reload is logged; a broken
// replacement is logged once, and only when it is still broken at the
// next poll (a file caught half-written is usually whole by then).
func (s *Store) Watch(ctx context.Context, interval time.Duration, hup <-chan os.Signal) {
	t := time.NewTicker(interval)
	defer t.Stop()
	var pending, reported string // stamps of a failed reading: seen once, logged
	for {
		forced := false
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-hup:
			forced = true
		}
		changed, err := s.reloadIf(forced)
		switch {
		case err == nil && changed:
			pending, reported = "", ""
			switch {
			case s.servesTLS:
				s.opts.Logger.Warn("certificates reloaded: new connections use them", "dir", s.opts.Dir, "certificates", describe(s.Certificates()))
			case s.HasCertificate():
				s.opts.Logger.Warn("a certificate appeared in the certificates directory, but this server started without one and speaks plain HTTP: restart it to serve HTTPS (the trusted authorities of CAs/ are reloaded)",
					"dir", s.opts.Dir, "certificates", describe(s.Certificates()))
			default:
				s.opts.Logger.Info("certificates directory read again: no certificate to serve", "dir", s.opts.Dir, "trusted", len(s.CAFiles()))
			}
			for _, w := range s.Warnings() {
				s.opts.Logger.Warn(w)
			}
		case err != nil:
			stamp, _ := s.stamp()
			if !forced && stamp != pending {
				pending = stamp
				continue
			}
			if forced || stamp != reported {
				reported = stamp
				s.opts.Logger.Error("certificates not reloaded: the ones loaded before keep serving", "dir", s.opts.Dir, "err", err)
			}
		}
	}
}

// describe is a short account of certificates for a log line.
func describe(cs []Certificate) string {
	var parts []string
	for _, c := range cs {
		parts = append(parts, fmt.Sprintf("%s (%s, until %s)", c.CertFile, strings.Join(c.Names, " "), c.NotAfter.UTC().Format(time.DateOnly)))
	}
	return strings.Join(parts, "; ")
}

// read reads the whole directory into new material.
func (s *Store) read() (*material, error) {
	m := &material{}
	var err error
	if m.stamp, err = s.stamp(); err != nil {
		return nil, err
	}
	if s.opts.Dir == "" {
		m.roots, err = s.readCAs(m)
		return m, err
	}
	entries, err := os.ReadDir(s.opts.Dir)
	if errors.Is(err, fs.ErrNotExist) {
		entries, err = nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("certificates directory: %w", err)
	}
	if c, err := s.readPair(s.opts.Dir, true); err != nil {
		return nil, err
	} else if c != nil {
		m.def = c
		m.certs = append(m.certs, c)
	}
	for _, e := range entries {
		if !e.IsDir() || e.Name() == CADir || strings.HasPrefix(e.Name(), ".") {
			// Dot directories are Kubernetes' secret-volume plumbing
			// (..data and its timestamped targets), not certificates.
			continue
		}
		c, err := s.readPair(filepath.Join(s.opts.Dir, e.Name()), false)
		if err != nil {
			return nil, err
		}
		if c != nil {
			m.certs = append(m.certs, c)
		}
	}
	now := s.opts.Now()
	for _, c := range m.certs {
		switch {
		case now.After(c.NotAfter):
			m.warnings = append(m.warnings, fmt.Sprintf("certificate %s expired on %s: clients will refuse it; replace it (it is picked up without a restart)", c.CertFile, c.NotAfter.UTC().Format(time.RFC3339)))
		case now.Before(c.NotBefore):
			m.warnings = append(m.warnings, fmt.Sprintf("certificate %s is not valid before %s: clients will refuse it until then (check this machine's clock)", c.CertFile, c.NotBefore.UTC().Format(time.RFC3339)))
		case c.NotAfter.Sub(now) < ExpiryWarning:
			m.warnings = append(m.warnings, fmt.Sprintf("certificate %s expires on %s, in %d days", c.CertFile, c.NotAfter.UTC().Format(time.RFC3339), int(c.NotAfter.Sub(now).Hours()/24)))
		}
	}
	if m.roots, err = s.readCAs(m); err != nil {
		return nil, err
	}
	return m, nil
}

// readPair reads DIR/public.crt and DIR/private.key. Neither present is
// no certificate (nil); one without the other is an error.
func (s *Store) readPair(dir string, top bool) (*Certificate, error) {
	certFile, keyFile := filepath.Join(dir, PublicCert), filepath.Join(dir, PrivateKey)
	certPEM, cerr := os.ReadFile(certFile)
	keyPEM, kerr := os.ReadFile(keyFile)
	switch {
	case errors.Is(cerr, fs.ErrNotExist) && errors.Is(kerr, fs.ErrNotExist):
		if !top {
			return nil, fmt.Errorf("%s holds neither %s nor %s: every subdirectory of the certificates directory but %s is one certificate", dir, PublicCert, PrivateKey, CADir)
		}
		return nil, nil
	case cerr != nil:
		return nil, fmt.Errorf("certificate %s: %w (its key %s is there)", certFile, cerr, keyFile)
	case kerr != nil:
		return nil, fmt.Errorf("private key %s: %w (its certificate %s is there)", keyFile, kerr, certFile)
	}
	chain, err := parseCertificates(certPEM)
	if err != nil {
		return nil, fmt.Errorf("certificate %s: %w", certFile, err)
	}
	key, err := parsePrivateKey(keyPEM, s.opts.Password)
	if err != nil {
		return nil, fmt.Errorf("private key %s: %w", keyFile, err)
	}
	leaf := chain[0]
	if !publicKeyEqual(leaf.PublicKey, key) {
		return nil, fmt.Errorf("private key %s does not match the certificate %s (its first certificate must be the one the key signs for)", keyFile, certFile)
	}
	tc := &tls.Certificate{PrivateKey: key, Leaf: leaf}
	for _, c := range chain {
		tc.Certificate = append(tc.Certificate, c.Raw)
	}
	c := &Certificate{CertFile: certFile, KeyFile: keyFile, NotBefore: leaf.NotBefore, NotAfter: leaf.NotAfter, tls: tc}
	c.Names = append(c.Names, leaf.DNSNames...)
	for _, ip := range leaf.IPAddresses {
		c.Names = append(c.Names, ip.String())
	}
	if len(c.Names) == 0 && leaf.Subject.CommonName != "" {
		c.Names = []string{leaf.Subject.CommonName + " (common name only: clients want a subject alternative name)"}
	}
	return c, nil
}

// readCAs builds the client pool: the system's roots plus every
// certificate in the files of CAs/. A file there that holds none is a
// warning, not an error: the rest still verifies.
func (s *Store) readCAs(m *material) (*x509.CertPool, error) {
	pool, err := s.opts.SystemRoots()
	if err != nil || pool == nil {
		pool = x509.NewCertPool()
	} else {
		pool = pool.Clone()
	}
	if s.opts.Dir == "" {
		return pool, nil
	}
	dir := filepath.Join(s.opts.Dir, CADir)
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return pool, nil
	}
	if err != nil {
		return nil, fmt.Errorf("trusted certificates %s: %w", dir, err)
	}
	for _, e := range entries {
		path := filepath.Join(dir, e.Name())
		if fi, err := os.Stat(path); err != nil || !fi.Mode().IsRegular() {
			continue
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("trusted certificate %s: %w", path, err)
		}
		cs, err := parseCertificates(data)
		if err != nil {
			m.warnings = append(m.warnings, fmt.Sprintf("%s is not trusted: %v", path, err))
			continue
		}
		for _, c := range cs {
			pool.AddCert(c)
		}
		m.cas = append(m.cas, path)
	}
	return pool, nil
}

// stamp names the state of every file Load reads (path, size, time), so
// a change is seen without reading the files. Files are stat'ed through
// symbolic links: a Kubernetes secret volume swaps its targets.
func (s *Store) stamp() (string, error) {
	if s.opts.Dir == "" {
		return "", nil
	}
	var parts []string
	add := func(path string) {
		if fi, err := os.Stat(path); err == nil {
			parts = append(parts, fmt.Sprintf("%s %d %d", path, fi.Size(), fi.ModTime().UnixNano()))
		}
	}
	add(filepath.Join(s.opts.Dir, PublicCert))
	add(filepath.Join(s.opts.Dir, PrivateKey))
	entries, err := os.ReadDir(s.opts.Dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("certificates directory: %w", err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			continue
		}
		sub := filepath.Join(s.opts.Dir, e.Name())
		if e.Name() == CADir {
			cas, _ := os.ReadDir(sub)
			for _, c := range cas {
				add(filepath.Join(sub, c.Name()))
			}
			parts = append(parts, sub+"/")
			continue
		}
		if fi, err := os.Stat(sub); err == nil && fi.IsDir() {
			parts = append(parts, sub+"/")
			add(filepath.Join(sub, PublicCert))
			add(filepath.Join(sub, PrivateKey))
		}
	}
	sort.Strings(parts)
	return strings.Join(parts, "\n"), nil
}

// Safe settings shared by the server and client configurations.
var tls12Suites = []uint16{
	tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
	tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
	tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
	tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
	tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
	tls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
}

// ServerConfig is the TLS configuration of a listener: each handshake is
// given the certificate that matches the name the client asked for (SNI),
// from the material loaded at that moment.
func (s *Store) ServerConfig() *tls.Config {
	return &tls.Config{
		MinVersion:     tls.VersionTLS12,
		CipherSuites:   tls12Suites,
		NextProtos:     []string{"http/1.1"},
		GetCertificate: s.certificate,
	}
}

// certificate picks the certificate for a handshake: the first valid for
// the server name the client sent (or, without one, for the address it
// connected to) that the client can use, else the default.
func (s *Store) certificate(hello *tls.ClientHelloInfo) (*tls.Certificate, error) {
	m := s.cur.Load()
	if len(m.certs) == 0 {
		return nil, errors.New("no certificate loaded")
	}
	name := strings.ToLower(strings.TrimSuffix(hello.ServerName, "."))
	if name == "" && hello.Conn != nil {
		if a, ok := hello.Conn.LocalAddr().(*net.TCPAddr); ok {
			name = a.IP.String()
		}
	}
	if name != "" {
		for _, c := range m.certs {
			if c.tls.Leaf.VerifyHostname(name) == nil && hello.SupportsCertificate(c.tls) == nil {
				return c.tls, nil
			}
		}
	}
	if m.def != nil {
		return m.def.tls, nil
	}
	return m.certs[0].tls, nil
}

// ClientConfig is the TLS configuration of a connection to serverName (a
// host name or IP address), verified against RootCAs.
func (s *Store) ClientConfig(serverName string) *tls.Config {
	return &tls.Config{
		MinVersion:   tls.VersionTLS12,
		CipherSuites: tls12Suites,
		NextProtos:   []string{"http/1.1"},
		ServerName:   serverName,
		RootCAs:      s.RootCAs(),
	}
}

// DialFunc opens a connection, as net.Dialer.DialContext does.
type DialFunc func(ctx context.Context, network, addr string) (net.Conn, error)

// handshakeTimeout bounds a client handshake: a peer that accepts the
// connection and then says nothing must not hold a caller.
const handshakeTimeout = 10 * time.Second

// DialTLS wraps dial with a TLS handshake verified for the host of the
// address asked for (so a dial rerouted to another address still checks
// the name the caller meant). Its errors say what went wrong in words an
// operator can act on.
func (s *Store) DialTLS(dial DialFunc) DialFunc {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, _, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, err
		}
		raw, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		c := tls.Client(raw, s.ClientConfig(host))
		hctx, cancel := context.WithTimeout(ctx, handshakeTimeout)
		defer cancel()
		if err := c.HandshakeContext(hctx); err != nil {
			raw.Close()
			return nil, HandshakeError(addr, err)
		}
		return c, nil
	}
}

// HandshakeError explains a failed client handshake with addr.
func HandshakeError(addr string, err error) error {
	var rh tls.RecordHeaderError
	var unknown x509.UnknownAuthorityError
	var host x509.HostnameError
	var invalid x509.CertificateInvalidError
	switch {
	case errors.As(err, &rh):
		return fmt.Errorf("TLS with %s: it does not answer in TLS (is it started with a certificate, and do all nodes use https:// endpoints?): %w", addr, err)
	case errors.As(err, &unknown):
		return fmt.Errorf("TLS with %s: its certificate is not signed by an authority this node trusts (put the CA certificate in the certificates directory's %s/): %w", addr, CADir, err)
	case errors.As(err, &host):
		return fmt.Errorf("TLS with %s: its certificate is not valid for the name this node dialled (add it to the certificate's subject alternative names): %w", addr, err)
	case errors.As(err, &invalid):
		return fmt.Errorf("TLS with %s: its certificate is not valid now (expired, or a clock is wrong): %w", addr, err)
	}
	return fmt.Errorf("TLS with %s: %w", addr, err)
}
