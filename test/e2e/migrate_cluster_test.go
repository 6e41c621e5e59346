package e2e

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/shardstore/shardstore/internal/minioformat/miniofixture"
	"github.com/shardstore/shardstore/test/internal/serverbin"
)

// The multi-node MinIO fixture: the 16 drives of a MinIO deployment of 4
// server processes with 4 drives each (internal/minioformat/testdata/
// README.md): position i of its one erasure set is drive i+1, on node
// i%4+1.
const minioClusterFixture = "../../internal/minioformat/testdata/minio-4nodes"

const clusterFixtureNodes = 4

// minioCluster is the fixture unpacked, and the endpoints each node's
// MinIO had, on loopback ports of this test.
type minioCluster struct {
	dir       string
	exp       *miniofixture.Expected
	ports     []string
	endpoints []string
}

func unpackMinIOCluster(t *testing.T) *minioCluster {
	t.Helper()
	exp, err := miniofixture.Load(minioClusterFixture)
	if err != nil {
		t.Fatal(err)
	}
	m := &minioCluster{dir: t.TempDir(), exp: exp}
	if err := miniofixture.Unpack(minioClusterFixture, m.dir); err != nil {
		t.Fatalf("unpack fixture: %v", err)
	}
	var ls []net.Listener
	for range clusterFixtureNodes {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
		m.ports = append(m.ports, strconv.Itoa(l.Addr().(*net.TCPAddr).Port))
	}
	for _, l := range ls {
		l.Close()
	}
	for i := range exp.Drives {
		m.endpoints = append(m.endpoints, fmt.Sprintf("http://127.0.0.1:%s%s", m.ports[i%clusterFixtureNodes], m.drive(i)))
	}
	return m
}

// drive is the directory of the deployment's drive i (0-based).
func (m *minioCluster) drive(i int) string { return filepath.Join(m.dir, fmt.Sprintf("drive%d", i+1)) }

// migrateCmd is node n's (0-based) `migrate from-minio` with extra flags.
func (m *minioCluster) migrateCmd(n int, extra ...string) *exec.Cmd {
	args := append([]string{"migrate", "from-minio", "--address", "127.0.0.1:" + m.ports[n]}, extra...)
	cmd := exec.Command(binary, append(args, m.endpoints...)...)
	serverbin.DieWithParent(cmd)
	cmd.Env = append(os.Environ(), serverEnv()...)
	return cmd
}

// migrateAll runs every node's migration at once and returns their
// outputs; any failure fails the test.
func (m *minioCluster) migrateAll(t *testing.T, extra ...string) []string {
	t.Helper()
	outs := make([]string, clusterFixtureNodes)
	errs := make([]error, clusterFixtureNodes)
	done := make(chan int)
	for n := range clusterFixtureNodes {
		go func() {
			b, err := m.migrateCmd(n, extra...).CombinedOutput()
			outs[n], errs[n] = string(b), err
			done <- n
		}()
	}
	for range clusterFixtureNodes {
		<-done
	}
	for n, err := range errs {
		if err != nil {
			t.Fatalf("node %d: migrate %v: %v\n%s", n+1, extra, err, outs[n])
		}
	}
	return outs
}

// startShardstore starts `shardstore server` with the MinIO endpoints on
// every node and waits until all serve; the returned server is node 1,
// its clients' requests spread over every node.
func (m *minioCluster) startShardstore(t *testing.T) (*server, []*server) {
	t.Helper()
	logs := &serverbin.SyncBuffer{}
	nodes := make([]*server, clusterFixtureNodes)
	for n := range nodes {
		args := append([]string{"server", "--console-address", "", "--address", "127.0.0.1:" + m.ports[n]}, m.endpoints...)
		nodes[n] = spawn(t, m.dir, serverEnv(), args, logs, "http://127.0.0.1:"+m.ports[n])
	}
	for _, node := range nodes {
		node.waitReady(t, 90*time.Second)
	}
	spread(t, nodes)
	return nodes[0], nodes
}

// spread makes nodes[0] the cluster's client, its requests going to
// each of nodes in turn.
func spread(t *testing.T, nodes []*server) {
	s := nodes[0]
	s.peers = nodes[1:]
	var addrs []string
	for _, n := range nodes {
		addrs = append(addrs, strings.TrimPrefix(n.endpoint, "http://"))
	}
	s.http = &http.Client{Transport: &spreadTransport{addrs: addrs, base: trustingTransport(t, "")}}
}

// TestMigrateFromMinIOCluster adopts a real 4-node MinIO deployment in
// place, each node's share by its own `migrate from-minio` run with the
// endpoints MinIO had (4 processes on loopback ports), and serves it with
// a 4-node shardstore cluster on the same endpoints: every version,
// delete marker, ETag, metadata, listing and bucket configuration is what
// MinIO answered, through every node, and the unfinished upload keeps
// MinIO's id. Before that: a dry run on every node changes nothing; a
// node with a drive missing refuses before writing; and one node's run
// is killed (SIGKILL) at random writes and run again, the others waiting
// for it. The deep heal finds every adopted chunk sound (MinIO's
// checksums); after --finish on every node the cluster still serves it
// all, also with a whole node killed.
func TestMigrateFromMinIOCluster(t *testing.T) {
	if clusterNodes > 0 {
		t.Skipf("starts its own 4 nodes on the fixture's drives (SHARDSTORE_E2E_CLUSTER=%d changes nothing for it): it runs in the single-node pass", clusterNodes)
	}
	m := unpackMinIOCluster(t)
	exp := m.exp
	versions := 0
	for _, b := range exp.Buckets {
		versions += len(b.Versions)
	}

	// A node whose drive is missing refuses at once, naming it, and
	// writes nothing.
	gone := m.drive(5) // node 2's second drive
	if err := os.Rename(gone, gone+".away"); err != nil {
		t.Fatal(err)
	}
	before := treeSum(t, m.dir)
	out, err := m.migrateCmd(1).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "drive "+gone+" of this node") || !strings.Contains(string(out), "missing") {
		t.Fatalf("migrate on node 2 with %s missing: %v, want a refusal naming it\n%s", gone, err, out)
	}
	if after := treeSum(t, m.dir); after != before {
		t.Fatalf("a refused run changed the drives\n%s", out)
	}
	if err := os.Rename(gone+".away", gone); err != nil {
		t.Fatal(err)
	}
	before = treeSum(t, m.dir)

	// Dry runs, every node at once: the same decision everywhere, and
	// nothing written.
	for n, out := range m.migrateAll(t, "--dry-run") {
		if !strings.Contains(out, fmt.Sprintf("would adopt %d buckets", len(exp.Buckets))) || !strings.Contains(out, fmt.Sprintf(" %d versions,", versions)) ||
			!strings.Contains(out, "refused: 0") {
			t.Fatalf("node %d dry run: want %d buckets and %d versions, none refused:\n%s", n+1, len(exp.Buckets), versions, out)
		}
	}
	if after := treeSum(t, m.dir); after != before {
		t.Fatal("--dry-run changed the drives")
	}

	// The adoption: nodes 2-4 run once; node 1 is killed at random
	// writes and run again until it completes: first while it copies
	// the other nodes' metadata (a step per drive copied: 12), then
	// while it adopts.
	keys := uploadKeysFile(t, t.TempDir(), exp)
	seed := migrateKillSeed(t)
	rng := rand.New(rand.NewSource(seed))
	outs := make([]string, clusterFixtureNodes)
	errs := make([]error, clusterFixtureNodes)
	done := make(chan int, clusterFixtureNodes)
	for n := 1; n < clusterFixtureNodes; n++ {
		go func() {
			b, err := m.migrateCmd(n, "--upload-keys", keys).CombinedOutput()
			outs[n], errs[n] = string(b), err
			done <- n
		}()
	}
	kills := 0
	stagingKilled := false
	for at := 1 + rng.Intn(8); ; at += 1 + rng.Intn(12) {
		cmd := m.migrateCmd(0, "--upload-keys", keys)
		cmd.Env = append(cmd.Env, fmt.Sprintf("SHARDSTORE_TEST_MIGRATE_CRASH_AT=%d", at))
		b, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if errors.As(err, &ee) && ee.Sys().(syscall.WaitStatus).Signal() == syscall.SIGKILL {
			kills++
			t.Logf("node 1 killed at write %d", at)
			stagingKilled = stagingKilled || !strings.Contains(string(b), "counted ")
			continue
		}
		outs[0], errs[0] = string(b), err
		break
	}
	for n := 1; n < clusterFixtureNodes; n++ {
		<-done
	}
	for n, err := range errs {
		if err != nil {
			t.Fatalf("node %d: migrate: %v\n%s", n+1, err, outs[n])
		}
	}
	if kills < 2 || !stagingKilled {
		t.Fatalf("node 1's migration was killed %d times, while staging: %v (seed %d): the test did not test the resume\n%s", kills, stagingKilled, seed, outs[0])
	}
	t.Logf("node 1 killed %d times (seed %d); its completing run:\n%s", kills, seed, outs[0])
	for n, out := range outs {
		if !strings.Contains(out, fmt.Sprintf("adopted %d buckets", len(exp.Buckets))) || !strings.Contains(out, "refused: 0") ||
			!strings.Contains(out, "unfinished multipart uploads adopted: 1") || !strings.Contains(out, "every node has its copy of this node's metadata") {
			t.Fatalf("node %d adoption report:\n%s", n+1, out)
		}
		for _, name := range []string{"migrate-minio-cluster", "migrate-minio-cluster.removing"} {
			if _, err := os.Stat(filepath.Join(m.drive(n), ".shardstore.sys", name)); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("node %d: staged copies left in %s: %v", n+1, name, err)
			}
		}
	}
	// A run again does nothing: the share is adopted.
	m.rerunSaysAdopted(t)

	s, _ := m.startShardstore(t)
	checkAdopted(t, s, exp, true)
	m.deepHealClean(t)
	c := s.root()
	cx := ctx(t)
	for _, b := range exp.Buckets {
		for _, u := range b.Uploads {
			lu, err := c.ListMultipartUploads(cx, &s3.ListMultipartUploadsInput{Bucket: aws.String(b.Name)})
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for _, got := range lu.Uploads {
				found = found || (aws.ToString(got.Key) == u.Key && aws.ToString(got.UploadId) == u.UploadID)
			}
			if !found {
				t.Errorf("upload %s of %s/%s not listed: %v", u.UploadID, b.Name, u.Key, lu.Uploads)
			}
			lp, err := c.ListParts(cx, &s3.ListPartsInput{Bucket: aws.String(b.Name), Key: aws.String(u.Key), UploadId: aws.String(u.UploadID)})
			if err != nil || len(lp.Parts) != len(u.Parts) || aws.ToString(lp.Parts[0].ETag) != u.PartETags[0] {
				t.Errorf("ListParts of %s: %v %v, want ETags %v", u.Key, err, lp, u.PartETags)
			}
		}
	}
	// A new object through one node reads back through the others.
	body := bytes.Repeat([]byte("after adoption "), 5000)
	if _, err := c.PutObject(cx, &s3.PutObjectInput{Bucket: aws.String("plain"), Key: aws.String("new-after-adoption"), Body: bytes.NewReader(body)}); err != nil {
		t.Fatal(err)
	}
	for range clusterFixtureNodes {
		r := mustGet(t, c, "plain", "new-after-adoption")
		got, _ := io.ReadAll(r)
		r.Close()
		if !bytes.Equal(got, body) {
			t.Fatal("new object differs")
		}
	}
	if _, err := c.DeleteObject(cx, &s3.DeleteObjectInput{Bucket: aws.String("plain"), Key: aws.String("new-after-adoption")}); err != nil {
		t.Fatal(err)
	}
	if err := s.stop(); err != nil {
		t.Fatalf("stop: %v\n%s", err, s.stderr)
	}

	// --finish on every node removes MinIO's names of what each adopted;
	// the cluster serves everything as before.
	for n, out := range m.migrateAll(t, "--finish") {
		if !strings.Contains(out, "removed MinIO's names of") {
			t.Fatalf("node %d --finish:\n%s", n+1, out)
		}
	}
	for i := range exp.Drives {
		ents, _ := filepath.Glob(filepath.Join(m.drive(i), "versioned", "*", "xl.meta"))
		if len(ents) != 0 {
			t.Fatalf("drive %d: MinIO's xl.meta left after --finish: %v", i+1, ents)
		}
	}
	s, nodes := m.startShardstore(t)
	checkAdopted(t, s, exp, false)
	// A whole node gone (its 4 drives of the set of 16): every version
	// still reads through the other three.
	gone4 := nodes[3]
	if err := gone4.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-gone4.exited
	gone4.exitErr = nil // killed on purpose: its cleanup has nothing to report
	spread(t, nodes[:3])
	checkAdopted(t, s, exp, false)
}

// rerunSaysAdopted runs every node's migration again: each must say its
// share is already adopted (and do nothing).
func (m *minioCluster) rerunSaysAdopted(t *testing.T) {
	t.Helper()
	for n, out := range m.migrateAll(t) {
		if !strings.Contains(out, "already adopted") {
			t.Fatalf("node %d: a second run:\n%s", n+1, out)
		}
	}
}

// deepHealClean runs the deep check through node 2, which reads every
// adopted chunk on every node's drives against MinIO's checksums: no
// object damaged, no read failed.
func (m *minioCluster) deepHealClean(t *testing.T) {
	t.Helper()
	heal := exec.Command(binary, "admin", "heal", "--deep", "--quiet")
	heal.Env = append(os.Environ(), "SHARDSTORE_ENDPOINT=http://127.0.0.1:"+m.ports[1],
		"SHARDSTORE_ROOT_USER="+rootUser, "SHARDSTORE_ROOT_PASSWORD="+rootPass)
	hout, err := heal.CombinedOutput()
	if err != nil || !regexp.MustCompile(`objects damaged\s+0\b`).Match(hout) || !regexp.MustCompile(`failed\s+0\b`).Match(hout) {
		t.Fatalf("deep heal of the adopted cluster: %v\n%s", err, hout)
	}
}
