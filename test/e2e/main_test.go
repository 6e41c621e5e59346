// Package e2e runs the real shardstore binary and drives it with real S3
// clients (aws-sdk-go-v2, its transfer manager, minio-go) and raw HTTP.
package e2e

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"

	"github.com/shardstore/shardstore/test/internal/serverbin"
)

// binary is the shardstore executable built once by TestMain.
var binary string

func TestMain(m *testing.M) { os.Exit(serverbin.Main(m, "shardstore-e2e-", &binary)) }

// Credentials the tests start servers with.
const (
	rootUser = "e2e-root"
	rootPass = "e2e-root-secret"
	bobUser  = "bob-access"
	bobPass  = "bob-secret-key"
	region   = "us-east-1"
)

// server is one running shardstore process.
type server struct {
	t        testing.TB
	endpoint string
	// consoleLine carries the web console's URL once the server prints
	// it (servers started with --console-address).
	consoleLine chan string
	cmd         *exec.Cmd
	stderr      *serverbin.SyncBuffer
	exited      chan struct{}
	exitErr     error
	drives      string
	// peers are the other nodes when the tests run on a cluster
	// (SHARDSTORE_E2E_CLUSTER): s is node 1, stop stops them all.
	peers []*server
	// http sends the requests of clients (s.client, s.signed): in cluster
	// mode it spreads them over every node.
	http *http.Client
	// caFile is the CA certificate the test's clients trust when the
	// server speaks TLS (see tlsCAFile), "" when it speaks plain HTTP.
	caFile string
	// direct sends requests to this process alone (node 1 of a cluster):
	// readiness checks, metrics; it trusts caFile, and only it, when set.
	direct *http.Client
}

// clusterNodes is SHARDSTORE_E2E_CLUSTER: when set (2 or 4), every server
// these tests start is a cluster of that many node processes on loopback
// holding the same 4 drives between them (node i gets drive i, or drives
// 2i-1 and 2i), so the erasure layout, the drive paths and the restarts
// of the tests stay as they are. SDK clients and signed raw requests go
// to the next node on every request (the Host the request was signed
// for is kept); other raw requests and admin commands go to node 1. The
// nodes' logs go to one buffer (s.stderr).
var clusterNodes = func() int {
	n, err := strconv.Atoi(os.Getenv("SHARDSTORE_E2E_CLUSTER"))
	if err != nil || (n != 2 && n != 4) {
		return 0
	}
	return n
}()

// singleNodeOnly skips a test in cluster mode, saying why: it is about
// one server process (its signals, its refusal to share drives), which
// the cluster tests cover for nodes.
func singleNodeOnly(t testing.TB, why string) {
	t.Helper()
	if clusterNodes > 0 {
		t.Skipf("single-node test in cluster mode (SHARDSTORE_E2E_CLUSTER=%d): %s", clusterNodes, why)
	}
}

// startServer runs the binary on 127.0.0.1:0 with four drives in a temp
// dir and a users file, waits for the endpoint line and readiness, and
// stops it at test end.
func startServer(t testing.TB, extra ...string) *server {
	t.Helper()
	return startIn(t, t.TempDir(), extra...)
}

// startIn is startServer with the drives (dir/drive{1...4}) and users
// file in dir, so a test can restart a server on the same drives.
func startIn(t testing.TB, dir string, extra ...string) *server {
	t.Helper()
	users := filepath.Join(dir, "users.txt")
	if err := os.WriteFile(users, []byte(bobUser+" "+bobPass+" Bob Example\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	drives := filepath.Join(dir, "drive")
	args := []string{"server", "--users", users}
	if !hasFlag(extra, "--console-address") {
		// Tests run servers side by side: none takes the console's
		// default port unless it asks for a console.
		args = append(args, "--console-address", "")
	}
	args = append(args, extra...)
	if clusterNodes > 0 {
		s := startClusterIn(t, dir, drives, args, clusterNodes)
		s.drives = drives
		return s
	}
	if !hasFlag(extra, "--address") {
		args = append(args, "--address", "127.0.0.1:0")
	}
	args = append(nodeArgs(args, 1), drives+"{1...4}")
	// Temporary drives are usually on the root filesystem, which the
	// server refuses unless told it is intended.
	s := launch(t, dir, serverEnv(), args)
	s.drives = drives
	return s
}

// startClusterIn starts n node processes holding the drives
// dir/drive1..4 between them and waits until all serve. The ports are
// kept in dir, so a test that starts the server again on dir brings the
// same cluster back.
func startClusterIn(t testing.TB, dir, drives string, args []string, n int) *server {
	t.Helper()
	portsFile := filepath.Join(dir, "cluster-ports")
	var ports []string
	if b, err := os.ReadFile(portsFile); err == nil {
		ports = strings.Fields(string(b))
	} else {
		var ls []net.Listener
		for range n {
			l, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			ls = append(ls, l)
			ports = append(ports, strconv.Itoa(l.Addr().(*net.TCPAddr).Port))
		}
		for _, l := range ls {
			l.Close()
		}
		if err := os.WriteFile(portsFile, []byte(strings.Join(ports, " ")), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	per := 4 / n
	// Nodes with certificates (--certs-dir) speak TLS, to the clients and
	// to each other: the endpoints are https://.
	caFile := tlsCAFile(t, nodeArgs(args, 1))
	scheme := "http"
	if caFile != "" {
		scheme = "https"
	}
	var endpoints []string
	for i, p := range ports {
		ep := fmt.Sprintf("%s://127.0.0.1:%s%s%d", scheme, p, drives, per*i+1)
		if per > 1 {
			ep = fmt.Sprintf("%s://127.0.0.1:%s%s{%d...%d}", scheme, p, drives, per*i+1, per*i+per)
		}
		endpoints = append(endpoints, ep)
	}
	logs := &serverbin.SyncBuffer{}
	nodes := make([]*server, n)
	for i, p := range ports {
		nargs := append(append(nodeArgs(args, i+1), "--address", "127.0.0.1:"+p), endpoints...)
		nodes[i] = spawn(t, dir, serverEnv(), nargs, logs, scheme+"://127.0.0.1:"+p)
	}
	for _, node := range nodes {
		node.waitReady(t, 90*time.Second)
	}
	s := nodes[0]
	s.peers = nodes[1:]
	addrs := make([]string, n)
	for i, p := range ports {
		addrs[i] = "127.0.0.1:" + p
	}
	s.http = &http.Client{Transport: &spreadTransport{addrs: addrs, base: trustingTransport(t, caFile)}}
	return s
}

// nodeArgs is args for node n of a cluster (1-based; a single server is
// node 1): "{node}" in an argument stands for n, so that each node can
// be given its own file, such as its own certificates directory.
func nodeArgs(args []string, n int) []string {
	out := slices.Clone(args)
	for i, a := range out {
		out[i] = strings.ReplaceAll(a, "{node}", strconv.Itoa(n))
	}
	return out
}

// tlsCAFile tells whether a server started with args speaks TLS: it does
// when --certs-dir (or -S) names a directory holding public.crt. The
// test's clients then trust DIR/CAs/ca.crt (where certs.WriteCertsDir
// puts the authority) and nothing else, not the system's roots; it
// returns that file, or "" for a plain HTTP server.
func tlsCAFile(t testing.TB, args []string) string {
	t.Helper()
	dir := ""
	for i, a := range args {
		for _, f := range []string{"--certs-dir", "-S"} {
			if v, ok := strings.CutPrefix(a, f+"="); ok {
				dir = v
			} else if a == f && i+1 < len(args) {
				dir = args[i+1]
			}
		}
	}
	if dir == "" {
		return ""
	}
	if _, err := os.Stat(filepath.Join(dir, "public.crt")); err != nil {
		return ""
	}
	ca := filepath.Join(dir, "CAs", "ca.crt")
	if _, err := os.Stat(ca); err != nil {
		t.Fatalf("%s serves TLS but has no CAs/ca.crt for the test's clients to trust (write it with certs.WriteCertsDir): %v", dir, err)
	}
	return ca
}

// trustingTransport is Go's default transport; given a CA file, its TLS
// connections trust only the certificates in that file.
func trustingTransport(t testing.TB, caFile string) *http.Transport {
	t.Helper()
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if caFile != "" {
		tr.TLSClientConfig = &tls.Config{RootCAs: caPool(t, caFile)}
	}
	return tr
}

// caPool is a pool of the certificates in the PEM file caFile alone.
func caPool(t testing.TB, caFile string) *x509.CertPool {
	t.Helper()
	pem, err := os.ReadFile(caFile)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		t.Fatalf("no certificate in %s", caFile)
	}
	return pool
}

// spreadTransport sends each request to the next node in turn, keeping
// the Host header (and so the SigV4 signature) of the node the client
// addressed.
type spreadTransport struct {
	addrs []string
	next  atomic.Uint64
	base  *http.Transport
}

func (st *spreadTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	addr := st.addrs[st.next.Add(1)%uint64(len(st.addrs))]
	r := req.Clone(req.Context())
	if r.Host == "" {
		r.Host = req.URL.Host
	}
	r.URL.Host = addr
	return st.base.RoundTrip(r)
}

// hasFlag reports whether args hold flag (as "--f v" or "--f=v").
func hasFlag(args []string, flag string) bool {
	for _, a := range args {
		if a == flag || strings.HasPrefix(a, flag+"=") {
			return true
		}
	}
	return false
}

// serverEnv is the environment startServer gives the binary.
// A server a test starts without --certs-dir speaks plain HTTP even on a
// machine whose ~/.shardstore/certs holds a certificate: its certificates
// directory is an empty one of the test run's (a --certs-dir flag wins).
func serverEnv() []string {
	return []string{"SHARDSTORE_ROOT_USER=" + rootUser, "SHARDSTORE_ROOT_PASSWORD=" + rootPass,
		"SHARDSTORE_ALLOW_ROOT_DRIVES=1", "SHARDSTORE_CERTS_DIR=" + serverbin.NoCertsDir()}
}

// startEmbedded runs the server in workdir with no drive arguments and no
// credentials in the environment, so every default applies.
func startEmbedded(t testing.TB, workdir string) *server {
	t.Helper()
	return launch(t, workdir, []string{"SHARDSTORE_ROOT_USER=", "SHARDSTORE_ROOT_PASSWORD="},
		[]string{"server", "--address", "127.0.0.1:0"})
}

// launch starts the binary and waits until it is listening and ready.
func launch(t testing.TB, workdir string, env, args []string) *server {
	t.Helper()
	s := spawn(t, workdir, env, args, &serverbin.SyncBuffer{}, "")
	s.waitReady(t, 30*time.Second)
	return s
}

// spawn starts the binary, its stderr into logs, and waits until it
// prints its endpoint, unless the endpoint is given.
func spawn(t testing.TB, workdir string, env, args []string, logs *serverbin.SyncBuffer, endpoint string) *server {
	t.Helper()
	s := &server{t: t, stderr: logs, exited: make(chan struct{}), consoleLine: make(chan string, 1), http: http.DefaultClient,
		caFile: tlsCAFile(t, args), direct: http.DefaultClient}
	if s.caFile != "" {
		s.direct = &http.Client{Transport: trustingTransport(t, s.caFile)}
		s.http = s.direct
	}
	s.cmd = exec.Command(binary, args...)
	serverbin.DieWithParent(s.cmd)
	s.cmd.Dir = workdir
	s.cmd.Env = append(os.Environ(), env...)
	s.cmd.Stderr = s.stderr
	stdout, err := s.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		sent := false
		for sc.Scan() {
			if c, ok := strings.CutPrefix(sc.Text(), "Console: "); ok {
				select {
				case s.consoleLine <- c:
				default:
				}
			}
			if ep, ok := strings.CutPrefix(sc.Text(), "S3 endpoint: "); ok && !sent {
				lines <- ep
				sent = true
			}
		}
	}()
	go func() {
		s.exitErr = s.cmd.Wait()
		close(s.exited)
	}()
	t.Cleanup(func() {
		if err := s.stop(); err != nil {
			t.Errorf("server stop: %v\n%s", err, s.stderr)
		}
	})
	if endpoint != "" {
		// A cluster node prints its endpoint once the cluster formed,
		// which needs the nodes started after it.
		s.endpoint = endpoint
		return s
	}
	select {
	case s.endpoint = <-lines:
	case <-s.exited:
		t.Fatalf("server exited before listening: %v\n%s", s.exitErr, s.stderr)
	case <-time.After(30 * time.Second):
		t.Fatalf("no endpoint line within 30s\n%s", s.stderr)
	}
	return s
}

// waitReady waits until the server's readiness probe answers 200.
func (s *server) waitReady(t testing.TB, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		resp, err := s.direct.Get(s.endpoint + "/shardstore/health/ready")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		select {
		case <-s.exited:
			t.Fatalf("server exited before it was ready: %v\n%s", s.exitErr, s.stderr)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("server not ready within %v (%v)\n%s", within, err, s.stderr)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// stop sends SIGTERM and waits for a clean exit, killing after 20s; a
// cluster stops every node at once.
func (s *server) stop() error {
	if len(s.peers) > 0 {
		errs := make([]error, len(s.peers))
		var wg sync.WaitGroup
		for i, p := range s.peers {
			wg.Add(1)
			go func() { defer wg.Done(); errs[i] = p.stop() }()
		}
		err := s.stopOne()
		wg.Wait()
		return errors.Join(append(errs, err)...)
	}
	return s.stopOne()
}

func (s *server) stopOne() error {
	select {
	case <-s.exited:
		return s.exitErr
	default:
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(20 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.exited
		return errors.New("server did not stop within 20s after SIGTERM")
	}
	return s.exitErr
}

// client returns an aws-sdk-go-v2 S3 client at default settings (request
// checksums on), path-style since there is no DNS for virtual hosts. For
// a TLS server its HTTP client trusts the test's CA (and only it).
func (s *server) client(ak, sk string) *s3.Client {
	opts := s3.Options{
		Region:       region,
		BaseEndpoint: aws.String(s.endpoint),
		Credentials:  credentials.NewStaticCredentialsProvider(ak, sk, ""),
		UsePathStyle: true,
	}
	switch {
	case len(s.peers) > 0:
		opts.HTTPClient = s.http // every request to the next node
	case s.caFile != "":
		// The SDK's own HTTP client, its settings kept but the roots.
		pool := caPool(s.t, s.caFile)
		opts.HTTPClient = awshttp.NewBuildableClient().WithTransportOptions(func(tr *http.Transport) {
			if tr.TLSClientConfig == nil {
				tr.TLSClientConfig = &tls.Config{}
			}
			tr.TLSClientConfig.RootCAs = pool
		})
	}
	return s3.New(opts)
}

func (s *server) root() *s3.Client { return s.client(rootUser, rootPass) }

// errCode returns the S3 error code and HTTP status of an SDK error.
func errCode(err error) (string, int) {
	if err == nil {
		return "", 0
	}
	code, status := "", 0
	var ae smithy.APIError
	if errors.As(err, &ae) {
		code = ae.ErrorCode()
	}
	var re *awshttp.ResponseError
	if errors.As(err, &re) {
		status = re.HTTPStatusCode()
	}
	return code, status
}

// wantCode fails unless err is an S3 error with code (and status if non-zero).
func wantCode(t *testing.T, err error, code string, status int) {
	t.Helper()
	c, st := errCode(err)
	if err == nil || (code != "" && c != code) || (status != 0 && st != status) {
		t.Fatalf("got error %v (code %q, status %d), want code %q status %d", err, c, st, code, status)
	}
}

func ctx(t testing.TB) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return c
}

func mustRead(t testing.TB, r io.ReadCloser) []byte {
	t.Helper()
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// pattern returns n deterministic, non-repeating-looking bytes.
func pattern(n int, seed byte) []byte {
	b := make([]byte, n)
	x := uint32(seed) + 1
	for i := range b {
		x = x*1664525 + 1013904223
		b[i] = byte(x >> 24)
	}
	return b
}

// createBucket makes a bucket with the root client.
func createBucket(t testing.TB, c *s3.Client, name string) {
	t.Helper()
	if _, err := c.CreateBucket(ctx(t), &s3.CreateBucketInput{Bucket: aws.String(name)}); err != nil {
		t.Fatalf("create bucket %s: %v", name, err)
	}
}
