// Package cluster runs several shardstore node processes on loopback as
// one cluster and drives them with real S3 clients: every node serves
// every request, and node crashes, restarts and disagreements behave as
// docs/ARCHITECTURE.md ("Cluster") says.
//
// The nodes speak TLS, to their clients and to each other, as a
// production cluster does: each test makes a CA, and each node has its
// own certificates directory (a certificate for 127.0.0.1 and the CA in
// CAs/). SHARDSTORE_CLUSTER_TLS=0 runs the same tests over plain HTTP
// (scripts/nightly does both); CI's other cluster steps (the Go e2e and
// pytest suites on 4 nodes) run plain HTTP.
//
// SHARDSTORE_CLUSTER_ENCRYPT_ALL=1 starts every node with --encrypt-all
// and the same built-in KMS key, so every object the tests write is
// encrypted at rest (SSE-S3); scripts/nightly runs the node crash test so.
package cluster

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/shardstore/shardstore/internal/admin"
	"github.com/shardstore/shardstore/internal/certs"
	"github.com/shardstore/shardstore/test/internal/serverbin"
)

var binary string

// stopWait is how long a node may take to stop after SIGTERM: the
// server's own grace for requests in flight (30 s; a request can be
// waiting that long for a key's lock, engine.LockTimeout) and a margin.
const stopWait = 45 * time.Second

func TestMain(m *testing.M) { os.Exit(serverbin.Main(m, "shardstore-cluster-", &binary)) }

const (
	rootUser = "cluster-root"
	rootPass = "cluster-root-secret"
	region   = "us-east-1"
)

// useTLS is whether the test clusters speak TLS (SHARDSTORE_CLUSTER_TLS,
// on unless "0").
var useTLS = os.Getenv("SHARDSTORE_CLUSTER_TLS") != "0"

// encryptAll is SHARDSTORE_CLUSTER_ENCRYPT_ALL=1: every node runs with
// --encrypt-all and kmsKey.
var encryptAll = os.Getenv("SHARDSTORE_CLUSTER_ENCRYPT_ALL") == "1"

// kmsKeyName names kmsKey, the built-in KMS key (SHARDSTORE_KMS_SECRET_KEY)
// of the nodes of a cluster with a KMS: one random key for the test run,
// the same on every node and across restarts.
const kmsKeyName = "cluster-key"

var kmsKey = func() string {
	k := make([]byte, 32)
	if _, err := rand.Read(k); err != nil {
		panic(err)
	}
	return kmsKeyName + ":" + base64.StdEncoding.EncodeToString(k)
}()

// testCluster is N node processes sharing one endpoint list.
type testCluster struct {
	t     *testing.T
	dir   string
	ports []int
	args  []string // endpoint arguments, the same for every node
	extra []string
	// kms: every node has the built-in KMS key kmsKey (and with
	// encryptAll, --encrypt-all).
	kms   bool
	nodes []*node
	net   *faultNet // nil: nodes dial each other directly
	// scheme is the nodes' ("https" with TLS); tlsFiles are its CA and
	// the nodes' certificates directories, and hc an HTTP client that
	// trusts the CA (http.DefaultClient's settings otherwise).
	scheme   string
	tlsFiles *tlsFiles
	hc       *http.Client
	// bins, where set, is the binary node i runs ("" or absent: the
	// binary under test); the upgrade tests start older releases so.
	bins []string
	// hosts, where set, is node i's listen host (absent: 127.0.0.1), and
	// dirs its working directory (the expansion test's nodes share
	// drive paths under /proc/self/cwd, each in its own directory).
	hosts, dirs []string
}

// tlsFiles are a test cluster's CA and certificates directories.
type tlsFiles struct {
	caFile string
	pool   *x509.CertPool
	dirs   []string // per node
}

// newTLSFiles makes a CA in dir and a certificates directory per node
// (dir/nodeI-certs) with a certificate for 127.0.0.1.
func newTLSFiles(t *testing.T, dir string, nodes int) *tlsFiles {
	t.Helper()
	ca, err := certs.NewCA("cluster test CA", 24*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	f := &tlsFiles{caFile: filepath.Join(dir, "ca.crt"), pool: x509.NewCertPool()}
	if err := ca.WriteFiles(f.caFile, filepath.Join(dir, "ca.key")); err != nil {
		t.Fatal(err)
	}
	f.pool.AddCert(ca.Cert)
	for i := 0; i < nodes; i++ {
		d := filepath.Join(dir, fmt.Sprintf("node%d-certs", i+1))
		if err := ca.WriteCertsDir(d, []string{"127.0.0.1", "localhost"}, 24*time.Hour); err != nil {
			t.Fatal(err)
		}
		f.dirs = append(f.dirs, d)
	}
	return f
}

// httpClient is a client with http.DefaultTransport's settings that
// trusts the CA (when there is one).
func (f *tlsFiles) httpClient() *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if f != nil {
		tr.TLSClientConfig = &tls.Config{RootCAs: f.pool, MinVersion: tls.VersionTLS12}
	}
	return &http.Client{Transport: tr}
}

// node is one node process (nil cmd while stopped).
type node struct {
	index    int
	endpoint string
	cmd      *exec.Cmd
	stderr   *serverbin.SyncBuffer
	exited   chan struct{}
	exitErr  error
}

// freePorts finds n free loopback ports (every node must know all of
// them before any starts).
func freePorts(t *testing.T, n int) []int {
	var out []int
	var ls []net.Listener
	for i := 0; i < n; i++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
		out = append(out, l.Addr().(*net.TCPAddr).Port)
	}
	for _, l := range ls {
		l.Close()
	}
	return out
}

// startCluster starts nodes x drives and waits until every node serves.
func startCluster(t *testing.T, nodes, drives int, extra ...string) *testCluster {
	t.Helper()
	return start(t, nodes, drives, false, encryptAll, extra)
}

// startKMSCluster is startCluster with the built-in KMS key kmsKey on
// every node (as SHARDSTORE_CLUSTER_ENCRYPT_ALL=1 gives every cluster,
// but without --encrypt-all unless that is set).
func startKMSCluster(t *testing.T, nodes, drives int, extra ...string) *testCluster {
	t.Helper()
	return start(t, nodes, drives, false, true, extra)
}

// startFaultCluster is startCluster with a faultNet between the nodes
// (c.net), so the test can delay and cut the links between them.
func startFaultCluster(t *testing.T, nodes, drives int, extra ...string) *testCluster {
	t.Helper()
	return start(t, nodes, drives, true, encryptAll, extra)
}

func start(t *testing.T, nodes, drives int, faults, kms bool, extra []string) *testCluster {
	t.Helper()
	return startBins(t, nodes, drives, faults, kms, extra, nil)
}

// startBins is start with node i running bins[i] (see testCluster.bins).
func startBins(t *testing.T, nodes, drives int, faults, kms bool, extra, bins []string) *testCluster {
	t.Helper()
	c := &testCluster{t: t, dir: t.TempDir(), ports: freePorts(t, nodes), extra: extra, scheme: "http", kms: kms, bins: bins}
	if faults {
		c.net = newFaultNet(t, c.ports)
	}
	if useTLS {
		c.scheme, c.tlsFiles = "https", newTLSFiles(t, c.dir, nodes)
	}
	c.hc = c.tlsFiles.httpClient()
	for i := 0; i < nodes; i++ {
		c.args = append(c.args, fmt.Sprintf("%s://127.0.0.1:%d%s/node%d/d{1...%d}", c.scheme, c.ports[i], c.dir, i+1, drives))
	}
	c.nodes = make([]*node, nodes)
	t.Cleanup(c.stopAll)
	for i := range c.nodes {
		c.launch(i, c.args)
	}
	for i := range c.nodes {
		c.waitReady(i)
	}
	return c
}

// launch starts node i with the given endpoint arguments.
func (c *testCluster) launch(i int, endpoints []string) {
	c.t.Helper()
	n := &node{index: i, stderr: &serverbin.SyncBuffer{}, exited: make(chan struct{})}
	host := "127.0.0.1"
	if i < len(c.hosts) {
		host = c.hosts[i]
	}
	args := append([]string{"server", "--address", fmt.Sprintf("%s:%d", host, c.ports[i]), "--console-address", ""}, c.extra...)
	if c.tlsFiles != nil {
		args = append(args, "--certs-dir", c.tlsFiles.dirs[i])
	}
	if c.kms && encryptAll {
		args = append(args, "--encrypt-all")
	}
	args = append(args, endpoints...)
	bin := binary
	if i < len(c.bins) && c.bins[i] != "" {
		bin = c.bins[i]
	}
	n.cmd = exec.Command(bin, args...)
	if i < len(c.dirs) {
		n.cmd.Dir = c.dirs[i]
	}
	serverbin.DieWithParent(n.cmd)
	n.cmd.Env = append(os.Environ(), "SHARDSTORE_ROOT_USER="+rootUser, "SHARDSTORE_ROOT_PASSWORD="+rootPass,
		"SHARDSTORE_ALLOW_ROOT_DRIVES=1", "SHARDSTORE_CERTS_DIR="+serverbin.NoCertsDir())
	if c.net != nil {
		n.cmd.Env = append(n.cmd.Env, "SHARDSTORE_PEER_ROUTES="+c.net.routes(i))
	}
	if c.kms {
		n.cmd.Env = append(n.cmd.Env, "SHARDSTORE_KMS_SECRET_KEY="+kmsKey)
	}
	n.cmd.Stderr = n.stderr
	out, err := n.cmd.StdoutPipe()
	if err != nil {
		c.t.Fatal(err)
	}
	if err := n.cmd.Start(); err != nil {
		c.t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
		}
	}()
	go func() {
		n.exitErr = n.cmd.Wait()
		close(n.exited)
	}()
	n.endpoint = fmt.Sprintf("%s://%s:%d", c.scheme, host, c.ports[i])
	c.nodes[i] = n
}

// waitReady waits until node i answers S3 (its health check says ready).
func (c *testCluster) waitReady(i int) {
	c.t.Helper()
	c.waitAnswer(i, "/shardstore/health/ready", http.StatusOK, 90*time.Second)
}

// waitHealth waits until node i's health check at path (a
// /shardstore/health/... or /minio/health/... path) answers want: a
// node learns that drives of other nodes went away from the calls that
// fail, so the answer may lag a node's death by a health probe.
func (c *testCluster) waitHealth(i int, path string, want int) {
	c.t.Helper()
	c.waitAnswer(i, path, want, 60*time.Second)
}

// waitAnswer polls GET path on node i until it answers want, failing the
// test when the node exits or within passes.
func (c *testCluster) waitAnswer(i int, path string, want int, within time.Duration) {
	c.t.Helper()
	n := c.nodes[i]
	deadline := time.Now().Add(within)
	got := 0
	for {
		resp, err := c.hc.Get(n.endpoint + path)
		if err == nil {
			resp.Body.Close()
			if got = resp.StatusCode; got == want {
				return
			}
		}
		select {
		case <-n.exited:
			c.t.Fatalf("node %d exited while waiting for %s to answer %d: %v\n%s", i+1, path, want, n.exitErr, n.stderr)
		default:
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("node %d %s: want %d within %v, last %d (%v)\n%s", i+1, path, want, within, got, err, n.stderr)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// kill crashes node i (SIGKILL) and waits until it is gone.
func (c *testCluster) kill(i int) {
	n := c.nodes[i]
	_ = n.cmd.Process.Signal(syscall.SIGKILL)
	<-n.exited
}

// restart starts node i again on the same drives.
func (c *testCluster) restart(i int) {
	c.t.Helper()
	c.launch(i, c.args)
	c.waitReady(i)
}

// stopAll stops every running node with SIGTERM (SIGKILL after 30 s) and
// reports a node that did not stop cleanly.
func (c *testCluster) stopAll() {
	var wg sync.WaitGroup
	for _, n := range c.nodes {
		if n == nil {
			continue
		}
		select {
		case <-n.exited:
			continue
		default:
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = n.cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-n.exited:
				if n.exitErr != nil {
					c.t.Errorf("node %d did not stop cleanly: %v\n%s", n.index+1, n.exitErr, n.stderr)
				}
			case <-time.After(stopWait):
				_ = n.cmd.Process.Kill()
				<-n.exited
				c.t.Errorf("node %d did not stop within %v\n%s", n.index+1, stopWait, n.stderr)
			}
		}()
	}
	wg.Wait()
	if c.t.Failed() {
		for _, n := range c.nodes {
			if n != nil {
				c.t.Logf("node %d log:\n%s", n.index+1, tailLines(n.stderr.String(), 40))
			}
		}
	}
}

// client is an S3 client of node i with default settings (changed by
// opts, if any).
func (c *testCluster) client(i int, opts ...func(*s3.Options)) *s3.Client {
	return c.clientAs(i, rootUser, rootPass, opts...)
}

// clientAs is an S3 client of node i for another identity.
func (c *testCluster) clientAs(i int, ak, sk string, opts ...func(*s3.Options)) *s3.Client {
	return s3.New(s3.Options{
		BaseEndpoint: aws.String(c.nodes[i].endpoint),
		Region:       region,
		Credentials:  credentials.NewStaticCredentialsProvider(ak, sk, ""),
		UsePathStyle: true,
		HTTPClient: awshttp.NewBuildableClient().WithTransportOptions(func(tr *http.Transport) {
			if c.tlsFiles != nil {
				tr.TLSClientConfig = &tls.Config{RootCAs: c.tlsFiles.pool, MinVersion: tls.VersionTLS12}
			}
		}),
	}, opts...)
}

func tailLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return c
}

// driveDir is the directory of drive j (1-based) of node i (0-based).
func (c *testCluster) driveDir(i, j int) string {
	return filepath.Join(c.dir, fmt.Sprintf("node%d", i+1), fmt.Sprintf("d%d", j))
}

// admin runs `shardstore admin ARGS --endpoint <node i>` and returns its stdout.
func (c *testCluster) admin(i int, args ...string) ([]byte, error) {
	args = append(append([]string{"admin"}, args...), "--endpoint", c.nodes[i].endpoint)
	if c.tlsFiles != nil {
		args = append(args, "--ca-cert", c.tlsFiles.caFile)
	}
	cmd := exec.Command(binary, args...)
	cmd.Env = append(os.Environ(), "SHARDSTORE_ROOT_USER="+rootUser, "SHARDSTORE_ROOT_PASSWORD="+rootPass)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("admin %s via node %d: %w: %s", strings.Join(args, " "), i+1, err, stderr.String())
	}
	return out, nil
}

// status reads node i's `admin status --json`.
func (c *testCluster) status(i int) (admin.StatusReply, error) {
	var st admin.StatusReply
	out, err := c.admin(i, "status", "--json")
	if err == nil {
		err = json.Unmarshal(out, &st)
	}
	return st, err
}

// waitStatus polls node i's status until ok holds, failing the test at
// deadline with what it waited for and the last status.
func (c *testCluster) waitStatus(i int, deadline time.Time, what string, ok func(admin.StatusReply) bool) {
	c.t.Helper()
	for {
		st, err := c.status(i)
		if err == nil && ok(st) {
			return
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("node %d: timed out waiting for %s (%v): %+v", i+1, what, err, st)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// waitAllOnline waits until every node sees every drive online (a
// restarted node's drives come back at the others' next probe).
func (c *testCluster) waitAllOnline() {
	c.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for i := range c.nodes {
		c.waitStatus(i, deadline, "every drive online", func(st admin.StatusReply) bool {
			for _, d := range st.Drives {
				if d.State != "online" {
					return false
				}
			}
			return true
		})
	}
}

// heal runs a full heal through node i and waits for it to finish.
func (c *testCluster) heal(i int) {
	c.t.Helper()
	if out, err := c.admin(i, "heal", "--quiet"); err != nil {
		c.t.Fatalf("%v\n%s", err, out)
	}
}

// waitHealQueuesEmpty waits until no node has objects waiting in its heal
// queue (the objects written while a node was away have been healed).
func (c *testCluster) waitHealQueuesEmpty() {
	c.t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for i := range c.nodes {
		c.waitStatus(i, deadline, "an empty heal queue", func(st admin.StatusReply) bool { return st.Heal.Queued == 0 })
	}
}

// writers runs n goroutines, writer w calling write(w, k) for k = 0, 1,
// … until write returns false or stop is called; stop waits for them.
func writers(n int, write func(w, k int) bool) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	for w := 0; w < n; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := 0; ; k++ {
				select {
				case <-done:
					return
				default:
				}
				if !write(w, k) {
					return
				}
			}
		}()
	}
	return func() { close(done); wg.Wait() }
}

// pacedWrites runs 4 writers PUTting small and medium objects through
// the nodes via(w, k) picks, and records every acknowledged body.
type pacedWrites struct {
	mu    sync.Mutex
	acked map[string][]byte
	took  []time.Duration // of acknowledged PUTs while measuring
	fails int             // while measuring
	on    bool
	stop  func()
}

func startWrites(t *testing.T, c *testCluster, bucket, prefix string, via func(w, k int) int) *pacedWrites {
	p := &pacedWrites{acked: map[string][]byte{}}
	p.stop = writers(4, func(w, k int) bool {
		time.Sleep(150 * time.Millisecond)
		key := fmt.Sprintf("%sw%d/%d", prefix, w, k)
		body := randBytes(16<<10 + k%3*(500<<10))
		start := time.Now()
		err := put(t, c.client(via(w, k)), bucket, key, body)
		took := time.Since(start)
		p.mu.Lock()
		defer p.mu.Unlock()
		if err == nil {
			p.acked[key] = body
		}
		if p.on {
			if err == nil {
				p.took = append(p.took, took)
			} else {
				p.fails++
			}
		}
		return true
	})
	return p
}

// measure starts or ends the window whose PUTs are counted.
func (p *pacedWrites) measure(on bool) {
	p.mu.Lock()
	p.on = on
	p.mu.Unlock()
}

// summary is the count, median and slowest of the measured PUTs.
func (p *pacedWrites) summary() (n int, median, slowest time.Duration, fails int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	d := append([]time.Duration(nil), p.took...)
	slices.Sort(d)
	if len(d) > 0 {
		median, slowest = d[len(d)/2], d[len(d)-1]
	}
	return len(d), median, slowest, p.fails
}

// checkAll reads every acknowledged object back through every node.
func (p *pacedWrites) checkAll(t *testing.T, c *testCluster, bucket, when string) {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	for i := range c.nodes {
		for key, body := range p.acked {
			mustGet(t, c.client(i), bucket, key, body, fmt.Sprintf("node %d %s", i+1, when))
		}
	}
}

// nightlyOnly skips a test in the per-change run (scripts/test, CI)
// unless SHARDSTORE_NIGHTLY=1, which scripts/nightly sets: tests whose
// ground other tests in the per-change run also cover, moved out to
// keep CI within its time. The reason names those tests.
func nightlyOnly(t *testing.T, coveredBy string) {
	t.Helper()
	if os.Getenv("SHARDSTORE_NIGHTLY") != "1" {
		t.Skipf("runs in scripts/nightly (SHARDSTORE_NIGHTLY=1) to keep CI within its time; in CI %s cover its ground", coveredBy)
	}
}
