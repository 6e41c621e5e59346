package e2e

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/feature/s3/manager"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/minio/minio-go/v7"
	mcreds "github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/shardstore/shardstore/internal/certs"
	"github.com/shardstore/shardstore/test/internal/serverbin"
)

// tlsHosts are the names every test certificate is issued for.
var tlsHosts = []string{"127.0.0.1", "localhost"}

// newTestCA makes a throwaway authority for one test.
func newTestCA(t *testing.T) *certs.CA {
	t.Helper()
	ca, err := certs.NewCA("shardstore e2e test CA", 24*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	return ca
}

// writeTLSCerts gives each server process of a test its own certificates
// directory, with a certificate ca issues for 127.0.0.1 and localhost and
// ca in CAs/: dir/certs1 for a single server, dir/certs1..N for the nodes
// of a cluster (which then speak TLS to each other). It returns the
// --certs-dir value for startIn, dir/certs{node} (see nodeArgs).
func writeTLSCerts(t *testing.T, ca *certs.CA, dir string) string {
	t.Helper()
	for i := 1; i <= max(clusterNodes, 1); i++ {
		if err := ca.WriteCertsDir(filepath.Join(dir, fmt.Sprintf("certs%d", i)), tlsHosts, 24*time.Hour); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "certs{node}")
}

// clientEnv is the environment of the binary run as a client (admin
// commands) with nothing trusted but the system's roots, whatever the
// developer's shell sets.
func clientEnv() []string {
	return append(serverEnv(), "SHARDSTORE_CA_CERT=", "SSL_CERT_FILE=", "SSL_CERT_DIR=")
}

// wantUnknownAuthority fails unless err is a certificate verification
// failure for an authority the client does not know.
func wantUnknownAuthority(t *testing.T, what string, err error) {
	t.Helper()
	var ua x509.UnknownAuthorityError
	if !errors.As(err, &ua) {
		t.Fatalf("%s with a client that does not trust the test CA: got %v, want an x509 unknown-authority error", what, err)
	}
}

// TestTLSClients runs a server with --certs-dir (on a cluster: every
// node with its own certificate, https:// endpoints, TLS between the
// nodes) and drives it over HTTPS with aws-sdk-go-v2 at default settings
// but for a root pool holding the test's CA (objects, the transfer
// manager's multipart upload and download, a presigned URL), minio-go,
// `shardstore admin status` and the metrics with a token from `admin
// prometheus generate`. Clients that do not trust the CA are refused
// with an unknown-authority error (and the admin command says to pass
// --ca-cert); plain HTTP on the port gets a 400; TLS below 1.2 and h2 are
// not offered.
func TestTLSClients(t *testing.T) {
	ca := newTestCA(t)
	dir := t.TempDir()
	s := startIn(t, dir, "--certs-dir", writeTLSCerts(t, ca, dir))
	host, ok := strings.CutPrefix(s.endpoint, "https://127.0.0.1:")
	if !ok || s.caFile == "" {
		t.Fatalf("a server with a certificate prints the endpoint %q, want https://127.0.0.1:PORT", s.endpoint)
	}
	host = "127.0.0.1:" + host
	cx := ctx(t)

	// The handshake: the certificate the CA issued for 127.0.0.1, HTTP/1.1
	// even when h2 is offered first, and nothing below TLS 1.2.
	pool := caPool(t, s.caFile)
	conn, err := tls.Dial("tcp", host, &tls.Config{RootCAs: pool, NextProtos: []string{"h2", "http/1.1"}})
	if err != nil {
		t.Fatalf("TLS handshake trusting the test CA: %v", err)
	}
	st := conn.ConnectionState()
	conn.Close()
	if st.NegotiatedProtocol != "http/1.1" || st.Version < tls.VersionTLS12 || st.PeerCertificates[0].Issuer.CommonName != ca.Cert.Subject.CommonName {
		t.Fatalf("handshake: ALPN %q, version %x, issuer %q", st.NegotiatedProtocol, st.Version, st.PeerCertificates[0].Issuer.CommonName)
	}
	if c, err := tls.Dial("tcp", host, &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS10, MaxVersion: tls.VersionTLS11}); err == nil {
		c.Close()
		t.Fatal("the server accepted TLS 1.1")
	} else if !strings.Contains(err.Error(), "remote error: tls: protocol version not supported") {
		t.Fatalf("TLS 1.1: %v, want the server's protocol_version alert", err)
	}
	// On a cluster every node serves its own certificate from the CA.
	seen := map[string]bool{st.PeerCertificates[0].SerialNumber.String(): true}
	for _, p := range s.peers {
		seen[servedCert(t, strings.TrimPrefix(p.endpoint, "https://"), "", pool).SerialNumber.String()] = true
	}
	if len(seen) != max(clusterNodes, 1) {
		t.Fatalf("%d distinct certificates served by %d nodes", len(seen), max(clusterNodes, 1))
	}
	if r, err := httpGet("http://" + host + "/shardstore/health/ready"); err != nil || r.status != http.StatusBadRequest {
		t.Fatalf("plain HTTP to the TLS port: %d %v, want 400", r.status, err)
	}

	// aws-sdk-go-v2: objects, the transfer manager, a presigned URL.
	c := s.root()
	createBucket(t, c, "tls-sdk")
	small := pattern(300<<10, 1)
	if _, err := c.PutObject(cx, &s3.PutObjectInput{Bucket: aws.String("tls-sdk"), Key: aws.String("small.bin"), Body: bytes.NewReader(small)}); err != nil {
		t.Fatalf("PUT over TLS: %v", err)
	}
	if got := getBody(t, c, "tls-sdk", "small.bin"); !bytes.Equal(got, small) {
		t.Fatalf("GET over TLS: %d bytes, want %d", len(got), len(small))
	}
	big := pattern(12<<20, 2) // three parts of 5 MiB, the last one short
	up := manager.NewUploader(c, func(u *manager.Uploader) { u.PartSize = 5 << 20 })
	res, err := up.Upload(cx, &s3.PutObjectInput{Bucket: aws.String("tls-sdk"), Key: aws.String("big.bin"), Body: bytes.NewReader(big)})
	if err != nil {
		t.Fatalf("multipart upload over TLS: %v", err)
	}
	if !strings.HasSuffix(aws.ToString(res.ETag), `-3"`) {
		t.Fatalf("multipart ETag %s, want 3 parts", aws.ToString(res.ETag))
	}
	buf := manager.NewWriteAtBuffer(nil)
	if n, err := manager.NewDownloader(c, func(d *manager.Downloader) { d.PartSize = 4 << 20 }).Download(cx, buf,
		&s3.GetObjectInput{Bucket: aws.String("tls-sdk"), Key: aws.String("big.bin")}); err != nil || !bytes.Equal(buf.Bytes(), big) {
		t.Fatalf("ranged download over TLS: %d bytes, %v", n, err)
	}
	ps, err := s3.NewPresignClient(c).PresignGetObject(cx, &s3.GetObjectInput{Bucket: aws.String("tls-sdk"), Key: aws.String("small.bin")})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(ps.URL, s.endpoint+"/tls-sdk/small.bin?") {
		t.Fatalf("presigned URL %q, want it on %s", ps.URL, s.endpoint)
	}
	resp, err := s.direct.Get(ps.URL)
	if err != nil {
		t.Fatalf("presigned GET over TLS: %v", err)
	}
	got := mustRead(t, resp.Body)
	if resp.StatusCode != http.StatusOK || !bytes.Equal(got, small) {
		t.Fatalf("presigned GET: %s, %d bytes", resp.Status, len(got))
	}

	// Clients that trust only the system's roots are refused, the SDK
	// (one attempt: a certificate error is not retried into success) as
	// plain net/http.
	_, err = http.Get(ps.URL)
	wantUnknownAuthority(t, "net/http", err)
	untrusting := s3.New(s3.Options{Region: region, BaseEndpoint: aws.String(s.endpoint), UsePathStyle: true, RetryMaxAttempts: 1,
		Credentials: credentials.NewStaticCredentialsProvider(rootUser, rootPass, "")})
	_, err = untrusting.ListBuckets(cx, &s3.ListBucketsInput{})
	wantUnknownAuthority(t, "aws-sdk-go-v2", err)

	// minio-go with a transport trusting the CA (on a cluster, the one
	// that spreads requests over the nodes).
	mc, err := minio.New(host, &minio.Options{Creds: mcreds.NewStaticV4(rootUser, rootPass, ""), Secure: true, Region: region,
		Transport: s.http.Transport})
	if err != nil {
		t.Fatal(err)
	}
	if err := mc.MakeBucket(cx, "tls-minio", minio.MakeBucketOptions{Region: region}); err != nil {
		t.Fatalf("minio-go MakeBucket over TLS: %v", err)
	}
	mbody := pattern(200<<10, 3)
	if _, err := mc.PutObject(cx, "tls-minio", "dir/m.bin", bytes.NewReader(mbody), int64(len(mbody)), minio.PutObjectOptions{}); err != nil {
		t.Fatalf("minio-go PutObject over TLS: %v", err)
	}
	obj, err := mc.GetObject(cx, "tls-minio", "dir/m.bin", minio.GetObjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := mustRead(t, obj); !bytes.Equal(got, mbody) {
		t.Fatalf("minio-go GetObject over TLS: %d bytes, want %d", len(got), len(mbody))
	}
	var listed []string
	for o := range mc.ListObjects(cx, "tls-sdk", minio.ListObjectsOptions{Recursive: true}) {
		if o.Err != nil {
			t.Fatalf("minio-go ListObjects over TLS: %v", o.Err)
		}
		listed = append(listed, fmt.Sprintf("%s=%d", o.Key, o.Size))
	}
	if want := fmt.Sprintf("big.bin=%d small.bin=%d", len(big), len(small)); strings.Join(listed, " ") != want {
		t.Fatalf("minio-go lists %q, want %q", listed, want)
	}

	// The admin commands: --ca-cert (or SHARDSTORE_CA_CERT) trusts the CA;
	// without it the command fails and says to pass it.
	out, code := runBinary(t, dir, clientEnv(), "admin", "status", "--endpoint", s.endpoint, "--ca-cert", s.caFile)
	if code != 0 || !strings.Contains(out, "drives online      4 of 4") {
		t.Fatalf("admin status --ca-cert: exit %d\n%s", code, out)
	}
	if clusterNodes > 0 && (!strings.Contains(out, "leader https://127.0.0.1:") || !strings.Contains(out, "node "+s.endpoint)) {
		t.Fatalf("admin status of a TLS cluster does not name its nodes by https:// URLs:\n%s", out)
	}
	if out, code := runBinary(t, dir, append(clientEnv(), "SHARDSTORE_CA_CERT="+s.caFile), "admin", "status", "--endpoint", s.endpoint); code != 0 {
		t.Fatalf("admin status with SHARDSTORE_CA_CERT: exit %d\n%s", code, out)
	}
	out, code = runBinary(t, dir, clientEnv(), "admin", "status", "--endpoint", s.endpoint)
	if code == 0 || !strings.Contains(out, "--ca-cert") || !strings.Contains(out, "certificate") {
		t.Fatalf("admin status without --ca-cert: exit %d, want a failure that names --ca-cert:\n%s", code, out)
	}

	// The metrics: a token from `admin prometheus generate --ca-cert`,
	// whose scrape configuration says https and names the CA file.
	out, code = runBinary(t, dir, clientEnv(), "admin", "prometheus", "generate", "--endpoint", s.endpoint, "--ca-cert", s.caFile)
	token := regexp.MustCompile(`(?m)^  bearer_token: (\S+)$`).FindStringSubmatch(out)
	if code != 0 || token == nil || !strings.Contains(out, "  scheme: https\n") || !strings.Contains(out, "    ca_file: "+s.caFile+"\n") ||
		!strings.Contains(out, "- targets: ['"+host+"']") || strings.Contains(out, "WARNING") || strings.Contains(out, "could not") {
		t.Fatalf("admin prometheus generate --ca-cert: exit %d\n%s", code, out)
	}
	metrics := func(bearer string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, s.endpoint+"/shardstore/metrics", nil)
		if bearer != "" {
			req.Header.Set("Authorization", "Bearer "+bearer)
		}
		resp, err := s.direct.Do(req)
		if err != nil {
			t.Fatalf("GET metrics over TLS: %v", err)
		}
		return resp.StatusCode, string(mustRead(t, resp.Body))
	}
	if code, body := metrics(token[1]); code != http.StatusOK || !strings.Contains(body, "shardstore_s3_requests_total") {
		t.Fatalf("metrics with the generated token: %d %.300s", code, body)
	}
	if code, body := metrics(""); code != http.StatusUnauthorized || strings.Contains(body, "shardstore_s3_requests_total") {
		t.Fatalf("metrics without a token: %d %.300s", code, body)
	}
	if r := s.metrics(t); !strings.Contains(r.body, "shardstore_s3_requests_total") {
		t.Fatalf("the harness's metrics over TLS: %.300s", r.body)
	}
	// Without --ca-cert the configuration is printed, with a warning that
	// the server could not be asked, saying what to do.
	out, _ = runBinary(t, dir, clientEnv(), "admin", "prometheus", "generate", "--endpoint", s.endpoint)
	if !strings.Contains(out, "could not be asked") || !strings.Contains(out, "--ca-cert") {
		t.Fatalf("admin prometheus generate without --ca-cert does not say to pass it:\n%s", out)
	}
}

// servedCert is the certificate the server at addr presents to a client
// asking for serverName ("" sends no name: Go sends none for an IP), as
// verified against pool.
func servedCert(t *testing.T, addr, serverName string, pool *x509.CertPool) *x509.Certificate {
	t.Helper()
	cfg := &tls.Config{RootCAs: pool, ServerName: serverName}
	if serverName == "" {
		cfg.ServerName = "127.0.0.1"
	}
	conn, err := tls.Dial("tcp", addr, cfg)
	if err != nil {
		t.Fatalf("TLS to %s as %q: %v", addr, serverName, err)
	}
	defer conn.Close()
	return conn.ConnectionState().PeerCertificates[0]
}

// issue has ca issue a certificate for hosts; it returns the certificate,
// its key and its serial number.
func issue(t *testing.T, ca *certs.CA, hosts ...string) (certPEM, keyPEM []byte, serial *big.Int) {
	t.Helper()
	cp, kp, err := ca.Issue(hosts, 24*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := pem.Decode(cp)
	if b == nil {
		t.Fatal("Issue returned no PEM certificate")
	}
	c, err := x509.ParseCertificate(b.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return cp, kp, c.SerialNumber
}

// writePair puts a certificate and its key in dir, each file replaced by
// a rename (as a deployment tool does), the key first.
func writePair(t *testing.T, dir string, certPEM, keyPEM []byte) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o750); err != nil {
		t.Fatal(err)
	}
	for _, f := range []struct {
		name string
		data []byte
	}{{certs.PrivateKey, keyPEM}, {certs.PublicCert, certPEM}} {
		tmp := filepath.Join(dir, "."+f.name+".tmp")
		if err := os.WriteFile(tmp, f.data, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, filepath.Join(dir, f.name)); err != nil {
			t.Fatal(err)
		}
	}
}

// waitServed waits until new connections to addr get the certificate
// with serial.
func waitServed(t *testing.T, s *server, addr string, pool *x509.CertPool, serial *big.Int, within time.Duration, what string) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		got := servedCert(t, addr, "", pool).SerialNumber
		if got.Cmp(serial) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: new connections still get serial %x, not %x, after %v\n%s", what, got, serial, within, s.stderr)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestTLSCertificateReload: a certificate chosen by SNI from a
// subdirectory; a replaced certificate served to new connections without
// a restart, found by the server's poll and at once on SIGHUP; a broken
// replacement (a key that does not match) refused while the last good
// one keeps serving, and refused at the next start with a message naming
// the key file; a restart on the same drives with the certificate
// replaced again serves the new one, and the objects.
func TestTLSCertificateReload(t *testing.T) {
	singleNodeOnly(t, "about one process's certificate files and signals")
	ca := newTestCA(t)
	dir := t.TempDir()
	certsDir := filepath.Join(dir, "certs")
	if err := ca.WriteCertsDir(certsDir, tlsHosts, 24*time.Hour); err != nil {
		t.Fatal(err)
	}
	altCert, altKey, altSerial := issue(t, ca, "alt.example")
	writePair(t, filepath.Join(certsDir, "alt"), altCert, altKey)
	s := startIn(t, dir, "--certs-dir", certsDir)
	addr := strings.TrimPrefix(s.endpoint, "https://")
	pool := caPool(t, s.caFile)
	c := s.root()
	createBucket(t, c, "kept")
	body := pattern(100<<10, 9)
	if _, err := c.PutObject(ctx(t), &s3.PutObjectInput{Bucket: aws.String("kept"), Key: aws.String("k"), Body: bytes.NewReader(body)}); err != nil {
		t.Fatal(err)
	}

	// SNI: the subdirectory's certificate for its name, the top one for
	// others and for a client that sends no name.
	if got := servedCert(t, addr, "alt.example", pool); got.SerialNumber.Cmp(altSerial) != 0 {
		t.Fatalf("SNI alt.example got the certificate for %v", got.DNSNames)
	}
	first := servedCert(t, addr, "", pool)
	if got := servedCert(t, addr, "localhost", pool); got.SerialNumber.Cmp(first.SerialNumber) != 0 || got.SerialNumber.Cmp(altSerial) == 0 {
		t.Fatalf("SNI localhost got the certificate for %v", got.DNSNames)
	}

	// Replaced on disk: the poll (every 5 s) picks it up.
	cert2, key2, serial2 := issue(t, ca, tlsHosts...)
	writePair(t, certsDir, cert2, key2)
	waitServed(t, s, addr, pool, serial2, 20*time.Second, "replaced certificate, by the poll")
	// Replaced again and SIGHUP: at once, well before the next poll.
	cert3, key3, serial3 := issue(t, ca, tlsHosts...)
	writePair(t, certsDir, cert3, key3)
	if err := s.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitServed(t, s, addr, pool, serial3, 2*time.Second, "replaced certificate, on SIGHUP")
	// The reload is logged just after the new certificate is in place:
	// allow the line a moment to arrive.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		n := strings.Count(s.stderr.String(), "certificates reloaded")
		if n >= 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d reloads logged, want 2:\n%s", n, s.stderr)
		}
	}
	// Requests go on over the new certificate.
	if got := getBody(t, c, "kept", "k"); !bytes.Equal(got, body) {
		t.Fatal("object differs after the reloads")
	}

	// A broken replacement: the key of another certificate. Refused, and
	// the last good certificate keeps serving.
	_, otherKey, _ := issue(t, ca, tlsHosts...)
	if err := os.WriteFile(filepath.Join(certsDir, certs.PrivateKey), otherKey, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := s.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	keyFile := filepath.Join(certsDir, certs.PrivateKey)
	waitLog(t, s, "certificates not reloaded", 5*time.Second)
	if !strings.Contains(s.stderr.String(), keyFile) {
		t.Fatalf("the refused reload does not name %s:\n%s", keyFile, s.stderr)
	}
	if got := servedCert(t, addr, "", pool).SerialNumber; got.Cmp(serial3) != 0 {
		t.Fatalf("after a broken replacement the server serves serial %x, want the last good %x", got, serial3)
	}
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}

	// A start with the mismatched key is refused, naming both files.
	out, code := runBinary(t, dir, serverEnv(), "server", "--address", "127.0.0.1:0", "--console-address", "",
		"--certs-dir", certsDir, s.drives+"{1...4}")
	want := fmt.Sprintf("private key %s does not match the certificate %s", keyFile, filepath.Join(certsDir, certs.PublicCert))
	if code != 1 || !strings.Contains(out, want) {
		t.Fatalf("start with a mismatched key: exit %d, want 1 and %q:\n%s", code, want, out)
	}

	// Fixed with a new certificate and restarted on the same drives: the
	// new certificate, and the objects.
	cert4, key4, serial4 := issue(t, ca, tlsHosts...)
	writePair(t, certsDir, cert4, key4)
	s = startIn(t, dir, "--certs-dir", certsDir)
	addr = strings.TrimPrefix(s.endpoint, "https://")
	if got := servedCert(t, addr, "", pool).SerialNumber; got.Cmp(serial4) != 0 {
		t.Fatalf("restarted server serves serial %x, want the replaced certificate's %x", got, serial4)
	}
	if got := getBody(t, s.root(), "kept", "k"); !bytes.Equal(got, body) {
		t.Fatal("object differs after the restart")
	}
}

// TestTLSShortFlagAndPublicMetrics: -S is --certs-dir (as MinIO's), and
// --metrics-public serves the metrics over HTTPS without a token.
func TestTLSShortFlagAndPublicMetrics(t *testing.T) {
	ca := newTestCA(t)
	dir := t.TempDir()
	s := startIn(t, dir, "-S", writeTLSCerts(t, ca, dir), "--metrics-public")
	if !strings.HasPrefix(s.endpoint, "https://") {
		t.Fatalf("-S: endpoint %q, want https://", s.endpoint)
	}
	resp, err := s.direct.Get(s.endpoint + "/shardstore/metrics")
	if err != nil {
		t.Fatal(err)
	}
	if body := string(mustRead(t, resp.Body)); resp.StatusCode != http.StatusOK || !strings.Contains(body, "shardstore_s3_requests_total") {
		t.Fatalf("public metrics without a token: %s %.300s", resp.Status, body)
	}
}

// freePorts returns n ports free on 127.0.0.1 just now.
func freePorts(t *testing.T, n int) []string {
	t.Helper()
	var ports []string
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		ports = append(ports, fmt.Sprint(l.Addr().(*net.TCPAddr).Port))
	}
	return ports
}

// TestTLSStartRefusals: starts the TLS setup cannot serve are refused
// with a message saying what to do, and write nothing to the drives: a
// --certs-dir that does not exist; cluster endpoints that are https://
// on a node without a certificate, http:// on a node with one, or a mix
// of both.
func TestTLSStartRefusals(t *testing.T) {
	singleNodeOnly(t, "runs the binary itself with refused arguments")
	ca := newTestCA(t)
	dir := t.TempDir()
	drives := filepath.Join(dir, "drives")
	withCert := filepath.Join(dir, "certs")
	if err := ca.WriteCertsDir(withCert, tlsHosts, 24*time.Hour); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	ports := freePorts(t, 4)
	endpoints := func(schemes ...string) []string {
		var eps []string
		for i, p := range ports {
			eps = append(eps, fmt.Sprintf("%s://127.0.0.1:%s%s%d", schemes[i%len(schemes)], p, drives, i+1))
		}
		return eps
	}
	missing := filepath.Join(dir, "no-such-dir")
	cases := []struct {
		name     string
		certsDir string
		args     []string
		want     []string
	}{
		{"missing certificates directory", missing, []string{"--address", "127.0.0.1:0", drives + "{1...4}"},
			[]string{"certificates directory " + missing}},
		{"https endpoints without a certificate", empty, append([]string{"--address", "127.0.0.1:" + ports[0]}, endpoints("https")...),
			[]string{"the endpoints are https://", "holds no public.crt and private.key", "--certs-dir"}},
		{"http endpoints with a certificate", withCert, append([]string{"--address", "127.0.0.1:" + ports[0]}, endpoints("http")...),
			[]string{"has a certificate in " + withCert, "the endpoints are http://", "write https:// endpoints"}},
		{"mixed schemes", withCert, append([]string{"--address", "127.0.0.1:" + ports[0]}, endpoints("https", "http")...),
			[]string{"is http:// but an earlier one is https://", "all nodes of a deployment use the same scheme"}},
	}
	for _, tc := range cases {
		args := append([]string{"server", "--console-address", "", "--certs-dir", tc.certsDir}, tc.args...)
		out, code := runBinary(t, dir, serverEnv(), args...)
		if code != 1 {
			t.Errorf("%s: exit %d, want 1:\n%s", tc.name, code, out)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(out, w) {
				t.Errorf("%s: no %q in:\n%s", tc.name, w, out)
			}
		}
	}
	if got := treeEntries(t, drives); len(got) != 0 {
		t.Fatalf("refused starts wrote %v", got)
	}
}

// TestDefaultCredentialsOffLoopback: with the development credentials (no
// root user in the environment) a server that would listen beyond
// loopback, S3 or console, refuses to start, saying how to go on and
// writing nothing; with --allow-default-credentials it starts and serves
// with them.
func TestDefaultCredentialsOffLoopback(t *testing.T) {
	singleNodeOnly(t, "about one server process's start")
	dir := t.TempDir()
	drives := filepath.Join(dir, "drive")
	env := []string{"SHARDSTORE_ROOT_USER=", "SHARDSTORE_ROOT_PASSWORD=", "MINIO_ROOT_USER=", "MINIO_ROOT_PASSWORD=",
		"SHARDSTORE_ALLOW_DEFAULT_CREDENTIALS=", "SHARDSTORE_ALLOW_ROOT_DRIVES=1", "SHARDSTORE_CERTS_DIR=" + serverbin.NoCertsDir()}
	for _, tc := range []struct{ address, console, named string }{
		{"0.0.0.0:0", "", "listen on 0.0.0.0:0,"},
		{"127.0.0.1:0", "0.0.0.0:0", "listen on 0.0.0.0:0 (the console)"},
	} {
		out, code := runBinary(t, dir, env, "server", "--address", tc.address, "--console-address", tc.console, drives+"{1...4}")
		for _, want := range []string{"refusing to start", tc.named, "default development credentials", "SHARDSTORE_ROOT_USER", "--allow-default-credentials"} {
			if code == 0 || !strings.Contains(out, want) {
				t.Fatalf("--address %s --console-address %q with default credentials: exit %d, want a refusal with %q:\n%s", tc.address, tc.console, code, want, out)
			}
		}
	}
	if got := treeEntries(t, dir); len(got) != 0 {
		t.Fatalf("refused starts wrote %v", got)
	}
	s := launch(t, dir, env, []string{"server", "--address", "0.0.0.0:0", "--console-address", "", "--allow-default-credentials", drives + "{1...4}"})
	if !strings.Contains(s.stderr.String(), "WARNING") {
		t.Fatalf("no credentials warning:\n%s", s.stderr)
	}
	if _, err := s.client("shardstoreadmin", "shardstoreadmin").ListBuckets(ctx(t), &s3.ListBucketsInput{}); err != nil {
		t.Fatalf("--allow-default-credentials server: %v", err)
	}
}

// certutilPath finds NSS's certutil, which the browser test needs to put
// the test CA in a browser profile's trust store (Debian's
// libnss3-tools); like the browser, it must be there in CI.
func certutilPath(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("certutil"); err == nil {
		return p
	}
	if os.Getenv("CI") != "" {
		t.Fatal("no certutil found: the TLS console test needs NSS's certutil (Debian: apt-get install libnss3-tools)")
	}
	t.Skip("no certutil found: install NSS's certutil (Debian: libnss3-tools) to run the TLS console test")
	return ""
}

// nssHome makes a HOME for Chromium whose NSS database ($HOME/.pki/nssdb,
// where Chromium on Linux takes locally trusted roots from) trusts caFile
// to identify web sites; with caFile "" the database trusts nothing.
func nssHome(t *testing.T, certutil, caFile string) string {
	t.Helper()
	home := t.TempDir()
	db := filepath.Join(home, ".pki", "nssdb")
	if err := os.MkdirAll(db, 0o700); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) {
		t.Helper()
		if out, err := exec.Command(certutil, args...).CombinedOutput(); err != nil {
			t.Fatalf("certutil %v: %v\n%s", args, err, out)
		}
	}
	run("-N", "--empty-password", "-d", "sql:"+db)
	if caFile != "" {
		run("-A", "-n", "shardstore e2e test CA", "-t", "C,,", "-i", caFile, "-d", "sql:"+db)
	}
	return home
}

// sessionCookie is the console's session cookie as the browser stores it.
func (c *chrome) sessionCookie(url string) *network.Cookie {
	c.t.Helper()
	var cookies []*network.Cookie
	c.run("read cookies", chromedp.ActionFunc(func(cx context.Context) error {
		var err error
		cookies, err = network.GetCookies().WithURLs([]string{url}).Do(cx)
		return err
	}))
	for _, ck := range cookies {
		if ck.Name == "shardstore_console" {
			return ck
		}
	}
	return nil
}

// TestTLSConsoleInBrowser: the console over HTTPS in headless Chromium
// that trusts the test CA through its NSS database (certificate errors
// are not ignored: a profile without the CA cannot open the page, with
// ERR_CERT_AUTHORITY_INVALID). Log in, create a bucket, upload a file,
// share it by an https:// link that works; the session cookie is Secure,
// HttpOnly and SameSite=Strict in the browser's store and on the wire
// and out of document.cookie's reach; logging out drops it and ends the
// session.
func TestTLSConsoleInBrowser(t *testing.T) {
	chromiumPath(t)
	certutil := certutilPath(t)
	ca := newTestCA(t)
	dir := t.TempDir()
	s := startIn(t, dir, "--console-address", "127.0.0.1:0", "--certs-dir", writeTLSCerts(t, ca, dir))
	url := s.consoleURL(t)
	if !strings.HasPrefix(url, "https://127.0.0.1:") {
		t.Fatalf("console at %q, want https://127.0.0.1:PORT", url)
	}

	// A browser whose trust store lacks the CA refuses the page.
	untrusting := newChrome(t, chromedp.Env("HOME="+nssHome(t, certutil, "")))
	err := chromedp.Run(untrusting.ctx, chromedp.Navigate(url+"/"))
	if err == nil || !strings.Contains(err.Error(), "ERR_CERT_AUTHORITY_INVALID") {
		t.Fatalf("a browser without the CA opening %s: %v, want net::ERR_CERT_AUTHORITY_INVALID", url, err)
	}
	if err := chromedp.Cancel(untrusting.ctx); err != nil {
		t.Logf("closing the first browser: %v", err)
	}

	c := newChrome(t, chromedp.Env("HOME="+nssHome(t, certutil, s.caFile)))
	c.login(url, rootUser, rootPass)
	ck := c.sessionCookie(url)
	if ck == nil || !ck.Secure || !ck.HTTPOnly || ck.SameSite != network.CookieSameSiteStrict {
		t.Fatalf("session cookie in the browser: %+v, want Secure, HttpOnly, SameSite=Strict", ck)
	}
	var script string
	c.eval(`document.cookie`, &script)
	if strings.Contains(script, "shardstore_console") || strings.Contains(script, ck.Value) {
		t.Fatalf("page script reads the session cookie: document.cookie = %q", script)
	}

	c.run("create bucket",
		chromedp.WaitVisible("#new-bucket", chromedp.ByQuery),
		chromedp.SendKeys("#new-bucket", "tls-console", chromedp.ByQuery),
		chromedp.Click("#create-bucket", chromedp.ByQuery))
	c.poll("bucket listed", `[...document.querySelectorAll("a.bucket-link")].some(a => a.textContent === "tls-console")`)
	c.shot("tls-buckets")
	body := pattern(150<<10, 5)
	path := filepath.Join(dir, "small.bin")
	if err := os.WriteFile(path, body, 0o644); err != nil {
		t.Fatal(err)
	}
	c.run("open bucket", chromedp.Navigate(url+"/#/browse?bucket=tls-console"), chromedp.WaitReady("#file-input", chromedp.ByQuery))
	c.run("choose file", chromedp.SetUploadFiles("#file-input", []string{path}, chromedp.ByQuery))
	c.poll("upload done", `[...document.querySelectorAll(".upload-status")].map(e => e.textContent).join() === "done" &&
		[...document.querySelectorAll("button.object")].some(b => b.textContent === "small.bin")`)
	if got := getBody(t, s.root(), "tls-console", "small.bin"); !bytes.Equal(got, body) {
		t.Fatalf("uploaded over HTTPS: %d bytes stored, %d sent", len(got), len(body))
	}
	c.eval(`[...document.querySelectorAll("button.object")].find(b => b.textContent === "small.bin").click()`, nil)
	var link string
	c.run("share", chromedp.WaitVisible("#share-create", chromedp.ByQuery), chromedp.Click("#share-create", chromedp.ByQuery),
		chromedp.WaitVisible("#share-url", chromedp.ByQuery), chromedp.Value("#share-url", &link, chromedp.ByQuery))
	c.shot("tls-share")
	if !strings.HasPrefix(link, s.endpoint+"/tls-console/small.bin?") || !strings.HasPrefix(link, "https://") {
		t.Fatalf("share link %q, want one on %s", link, s.endpoint)
	}
	resp, err := s.direct.Get(link)
	if err != nil {
		t.Fatalf("share link: %v", err)
	}
	if got := mustRead(t, resp.Body); resp.StatusCode != http.StatusOK || !bytes.Equal(got, body) {
		t.Fatalf("share link answered %s with %d bytes", resp.Status, len(got))
	}

	// On the wire: the login answer's Set-Cookie, as the page's login
	// call gets it.
	login, _ := json.Marshal(map[string]string{"accessKey": rootUser, "secretKey": rootPass})
	req, _ := http.NewRequest(http.MethodPost, url+"/api/login", bytes.NewReader(login))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Origin", url)
	resp, err = s.direct.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	mustRead(t, resp.Body)
	var wire *http.Cookie
	for _, k := range resp.Cookies() {
		if k.Name == "shardstore_console" {
			wire = k
		}
	}
	if resp.StatusCode != http.StatusOK || wire == nil || !wire.Secure || !wire.HttpOnly || wire.SameSite != http.SameSiteStrictMode {
		t.Fatalf("login over HTTPS: %s, Set-Cookie %q, want shardstore_console Secure, HttpOnly, SameSite=Strict", resp.Status, resp.Header.Values("Set-Cookie"))
	}

	// Logging out drops the cookie and ends the session on the server.
	c.logout()
	if after := c.sessionCookie(url); after != nil {
		t.Fatalf("session cookie kept after logout: %+v", after)
	}
	req, _ = http.NewRequest(http.MethodGet, url+"/api/session", nil)
	req.AddCookie(&http.Cookie{Name: ck.Name, Value: ck.Value})
	resp, err = s.direct.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if mustRead(t, resp.Body); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("the logged-out session's cookie still answers %s", resp.Status)
	}
	c.checkNoAlerts()
}
