package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/shardstore/shardstore/internal/certs"
)

// certsPollInterval is how often the certificates directory is checked
// for changed files (SIGHUP reloads at once).
const certsPollInterval = 5 * time.Second

// defaultCertsDir is where certificates are looked for when --certs-dir
// is not given: SHARDSTORE_CERTS_DIR, MINIO_CERTS_DIR, else
// ~/.shardstore/certs. chosen says whether the environment named it.
func defaultCertsDir(getenv func(string) string) (dir string, chosen bool) {
	for _, k := range []string{"SHARDSTORE_CERTS_DIR", "MINIO_CERTS_DIR"} {
		if v := getenv(k); v != "" {
			return v, true
		}
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", false
	}
	return filepath.Join(home, ".shardstore", "certs"), false
}

// certPassword is the password of encrypted private keys.
func certPassword(getenv func(string) string) string {
	if v := getenv("SHARDSTORE_CERT_PASSWD"); v != "" {
		return v
	}
	return getenv("MINIO_CERT_PASSWD")
}

// loadCerts reads the certificates directory: a directory named by the
// operator must exist; the default may not. It prints what the server
// will serve, and the warnings (expired certificates and the like).
func loadCerts(dir string, chosen bool, logger *slog.Logger, stderr io.Writer) (*certs.Store, error) {
	if chosen {
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			if err == nil {
				err = errors.New("not a directory")
			}
			return nil, fmt.Errorf("certificates directory %s: %w", dir, err)
		}
	}
	store, err := certs.Load(certs.Options{Dir: dir, Password: certPassword(os.Getenv), Logger: logger.With("component", "certs")})
	if err != nil {
		return nil, fmt.Errorf("TLS: %w", err)
	}
	if store.HasCertificate() {
		for _, c := range store.Certificates() {
			fmt.Fprintf(stderr, "TLS: serving %s (%s, valid until %s)\n", c.CertFile, joinNames(c.Names), c.NotAfter.UTC().Format(time.DateOnly))
		}
	} else if !chosen {
		if home, err := os.UserHomeDir(); err == nil {
			minio := filepath.Join(home, ".minio", "certs")
			if _, err := os.Stat(filepath.Join(minio, certs.PublicCert)); err == nil {
				fmt.Fprintf(stderr, "TLS: not serving TLS, though MinIO's certificates are in %s: start with --certs-dir %s to use them\n", minio, minio)
			}
		}
	}
	if n := len(store.CAFiles()); n > 0 {
		fmt.Fprintf(stderr, "TLS: trusting the system's authorities and %d file(s) of %s\n", n, filepath.Join(dir, certs.CADir))
	}
	for _, w := range store.Warnings() {
		logger.Warn(w) // to stderr, and to the console's recent warnings
	}
	return store, nil
}

func joinNames(names []string) string {
	if len(names) == 0 {
		return "no names"
	}
	out := names[0]
	for _, n := range names[1:] {
		out += ", " + n
	}
	return out
}

// scheme is the URL scheme a listener of this store serves.
func scheme(store *certs.Store) string {
	if store != nil && store.HasCertificate() {
		return "https"
	}
	return "http"
}

// serveListener wraps ln in TLS when the store has a certificate. Go's
// HTTP server answers a plain HTTP request on it with "400 Bad Request:
// Client sent an HTTP request to an HTTPS server" rather than waiting for
// a handshake, and bounds the handshake by ReadHeaderTimeout.
func serveListener(ln net.Listener, store *certs.Store) net.Listener {
	if store == nil || !store.HasCertificate() {
		return ln
	}
	return tls.NewListener(ln, store.ServerConfig())
}

// watchCerts reloads the certificates when their files change and on
// SIGHUP, until ctx ends. The signal is caught even without certificates
// (so a hang-up never stops the server) and says what it did.
func watchCerts(ctx context.Context, store *certs.Store, logger *slog.Logger) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	go func() {
		defer signal.Stop(hup)
		store.Watch(ctx, certsPollInterval, hup)
	}()
}

// isLoopbackListen reports whether a listen address reaches only this
// machine: a loopback IP, or "localhost".
func isLoopbackListen(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// clientTransport is the HTTP transport of the command's clients (admin,
// bench): Go's defaults, trusting the system's roots plus caFile when
// given (--ca-cert).
func clientTransport(caFile string) (*http.Transport, error) {
	t := http.DefaultTransport.(*http.Transport).Clone()
	if caFile == "" {
		return t, nil
	}
	pool, err := certs.PoolWith(caFile)
	if err != nil {
		return nil, err
	}
	t.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	return t, nil
}

// caCertUsage is the help of the clients' --ca-cert flag.
const caCertUsage = "`FILE` of CA certificates (PEM) to trust beside the system's, for an https:// endpoint with a private CA (also SHARDSTORE_CA_CERT; SSL_CERT_FILE replaces the system's roots)"

// trustHint adds what to do to a client's TLS error; ok is false for an
// error that is not about TLS.
func trustHint(err error) (_ error, ok bool) {
	var unknown x509.UnknownAuthorityError
	var host x509.HostnameError
	var invalid x509.CertificateInvalidError
	var rh tls.RecordHeaderError
	switch {
	case errors.As(err, &unknown):
		return fmt.Errorf("%w (the server's certificate is not signed by an authority this client trusts: pass --ca-cert FILE, or set SHARDSTORE_CA_CERT or SSL_CERT_FILE)", err), true
	case errors.As(err, &host):
		return fmt.Errorf("%w (the server's certificate is not valid for the endpoint's host name: use a name it lists)", err), true
	case errors.As(err, &invalid):
		return fmt.Errorf("%w (the server's certificate is not valid now: expired, or a clock is wrong)", err), true
	case errors.As(err, &rh), strings.Contains(err.Error(), "server gave HTTP response to HTTPS client"):
		return fmt.Errorf("%w (the endpoint's scheme does not match the server's: it speaks https:// only when it has a certificate)", err), true
	}
	return err, false
}
