package e2e

import (
	"errors"
	"fmt"
	"math/rand"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/shardstore/shardstore/internal/minioformat/miniofixture"
	"github.com/shardstore/shardstore/test/internal/serverbin"
)

// The multi-node MinIO fixture of several server pools: 4 MinIO server
// processes, 2 pools of 8 drives (2 per node each; one set of 8, EC 4+4,
// per pool), started with http://HOST:{P...P+3}/WORK/mnt/p1/d{1...2}
// http://HOST:{P...P+3}/WORK/mnt/p2/d{1...2} (internal/minioformat/
// testdata/README.md). Tarball drive k+1 is slot k of shardstore's
// cluster.Parse of the endpoints below: pool p, path index d, node n ->
// slot p*8 + d*4 + n.
const minioClusterPoolsFixture = "../../internal/minioformat/testdata/minio-4nodes-pools"

// minioClusterPools is the fixture unpacked, each drive renamed to
// DIR/nN/pP/dD (node N, pool P, path D), and the endpoints: per pool,
// one argument per node, http://127.0.0.1:PORT/DIR/nN/pP/d{1...2}; an
// argument naming a node again with ellipses starts the next pool.
type minioClusterPools struct {
	minioCluster // the fields, the migration and server starts of the one-pool fixture
}

const clusterPoolsPerNode = 2 // drives per node in each pool

func unpackMinIOClusterPools(t *testing.T) *minioClusterPools {
	t.Helper()
	exp, err := miniofixture.Load(minioClusterPoolsFixture)
	if err != nil {
		t.Fatal(err)
	}
	m := &minioClusterPools{minioCluster{dir: t.TempDir(), exp: exp}}
	if err := miniofixture.Unpack(minioClusterPoolsFixture, m.dir); err != nil {
		t.Fatalf("unpack fixture: %v", err)
	}
	perPool := clusterFixtureNodes * clusterPoolsPerNode
	pools := exp.Drives / perPool
	if pools != 2 || exp.Drives%perPool != 0 {
		t.Fatalf("fixture has %d drives, want 2 pools of %d", exp.Drives, perPool)
	}
	for p := range pools {
		for d := range clusterPoolsPerNode {
			for n := range clusterFixtureNodes {
				src := filepath.Join(m.dir, fmt.Sprintf("drive%d", p*perPool+d*clusterFixtureNodes+n+1))
				if err := os.MkdirAll(filepath.Join(m.dir, fmt.Sprintf("n%d", n+1), fmt.Sprintf("p%d", p+1)), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.Rename(src, m.drive(n, p, d)); err != nil {
					t.Fatal(err)
				}
			}
		}
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
	for p := range pools {
		for n := range clusterFixtureNodes {
			m.endpoints = append(m.endpoints, fmt.Sprintf("http://127.0.0.1:%s%s", m.ports[n],
				filepath.Join(m.dir, fmt.Sprintf("n%d", n+1), fmt.Sprintf("p%d", p+1), fmt.Sprintf("d{1...%d}", clusterPoolsPerNode))))
		}
	}
	return m
}

// drive is node n's drive d of pool p (all 0-based).
func (m *minioClusterPools) drive(n, p, d int) string {
	return filepath.Join(m.dir, fmt.Sprintf("n%d", n+1), fmt.Sprintf("p%d", p+1), fmt.Sprintf("d%d", d+1))
}

// TestMigrateFromMinIOClusterPools adopts a real 4-node MinIO deployment
// of two server pools in place, each node's share by its own `migrate
// from-minio` run with the endpoints (one argument per node and pool),
// and serves it with a 4-node shardstore cluster of two pools on the
// same endpoints: every version (the keys MinIO spread over both pools
// too, their inline versions copied into the pool of the newest) reads
// back byte-identical by version id through every node, listings and
// ListObjectVersions as MinIO answered. Node 1's run is killed (SIGKILL)
// at random writes, while staging and while adopting, and run again until
// it completes; the others wait for it. Then the deep heal is clean, and
// --finish on every node leaves a cluster that serves it all.
//
// bigsplit-N.bin, whose versions with part files MinIO put in both pools,
// is refused on every node (moving its older version needs every node's
// shards) and keeps MinIO's files after --finish in both pools.
// Before that: one pool's endpoints alone are refused on every node
// (pool.bin lists both), and dry runs on every node agree and write
// nothing.
func TestMigrateFromMinIOClusterPools(t *testing.T) {
	if clusterNodes > 0 {
		t.Skipf("starts its own 4 nodes on the fixture's drives (SHARDSTORE_E2E_CLUSTER=%d changes nothing for it): it runs in the single-node pass", clusterNodes)
	}
	m := unpackMinIOClusterPools(t)
	// bigsplit-N.bin has versions with part files in both pools: moving
	// the older into the newer one's pool needs every node's shards, so
	// every node refuses it, and it stays MinIO's (its files untouched,
	// even by --finish). The rest is adopted.
	exp, refusedKey := withoutKeys(t, m.exp, "bigsplit-")
	versions := 0
	for _, b := range exp.Buckets {
		versions += len(b.Versions)
	}
	refusedLine := regexp.MustCompile(`(?m)^\s*refused (\S+): (.*)$`)
	onlyBigsplit := func(n int, out string) {
		t.Helper()
		got := refusedLine.FindAllStringSubmatch(out, -1)
		for _, r := range got {
			if r[1] != "pooled/"+refusedKey || !strings.Contains(r[2], "part files on every node's drives") {
				t.Fatalf("node %d: refused %s: %s; want only pooled/%s, for its part files\n%s", n+1, r[1], r[2], refusedKey, out)
			}
		}
	}

	before := treeSum(t, m.dir)
	// One pool's endpoints alone, on every node: refused (pool.bin lists
	// two pools, the other not decommissioned), the same on every node.
	outs := make([]string, clusterFixtureNodes)
	errs := make([]error, clusterFixtureNodes)
	done := make(chan int, clusterFixtureNodes)
	perPool := len(m.endpoints) / 2
	for n := range clusterFixtureNodes {
		go func() {
			args := []string{"migrate", "from-minio", "--dry-run", "--address", "127.0.0.1:" + m.ports[n]}
			cmd := exec.Command(binary, append(args, m.endpoints[:perPool]...)...)
			serverbin.DieWithParent(cmd)
			cmd.Env = append(os.Environ(), serverEnv()...)
			b, err := cmd.CombinedOutput()
			outs[n], errs[n] = string(b), err
			done <- n
		}()
	}
	for range clusterFixtureNodes {
		<-done
	}
	for n := range clusterFixtureNodes {
		if errs[n] == nil || !strings.Contains(outs[n], "not adoptable: the deployment has 2 server pools") {
			t.Fatalf("node %d, pool 1's endpoints alone: %v, want a refusal naming pool 2:\n%s", n+1, errs[n], outs[n])
		}
	}
	if after := treeSum(t, m.dir); after != before {
		t.Fatal("a refused dry run changed the drives")
	}
	for n, out := range m.migrateAll(t, "--dry-run") {
		if !strings.Contains(out, "2 server pools") || !strings.Contains(out, fmt.Sprintf(" %d versions,", versions)) ||
			!strings.Contains(out, "refused: 2;") || !regexp.MustCompile(`\([1-9][0-9]* keys with versions in several pools`).MatchString(out) {
			t.Fatalf("node %d dry run: want 2 pools, %d versions, keys in both pools, %s refused in each pool:\n%s", n+1, versions, refusedKey, out)
		}
		onlyBigsplit(n, out)
	}
	if after := treeSum(t, m.dir); after != before {
		t.Fatal("--dry-run changed the drives")
	}

	seed := migrateKillSeed(t)
	rng := rand.New(rand.NewSource(seed))
	outs = make([]string, clusterFixtureNodes)
	errs = make([]error, clusterFixtureNodes)
	for n := 1; n < clusterFixtureNodes; n++ {
		go func() {
			b, err := m.migrateCmd(n).CombinedOutput()
			outs[n], errs[n] = string(b), err
			done <- n
		}()
	}
	kills := 0
	stagingKilled, adoptingKilled := false, false
	for at := 1 + rng.Intn(4); ; at += 1 + rng.Intn(2) {
		cmd := m.migrateCmd(0)
		cmd.Env = append(cmd.Env, fmt.Sprintf("SHARDSTORE_TEST_MIGRATE_CRASH_AT=%d", at))
		b, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if errors.As(err, &ee) && ee.Sys().(syscall.WaitStatus).Signal() == syscall.SIGKILL {
			kills++
			t.Logf("node 1 killed at write %d", at)
			if strings.Contains(string(b), "counted ") {
				adoptingKilled = true
			} else {
				stagingKilled = true
			}
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
	if !stagingKilled || !adoptingKilled {
		t.Fatalf("node 1's migration was killed %d times, while staging: %v, while adopting: %v (seed %d): the test did not test the resume\n%s",
			kills, stagingKilled, adoptingKilled, seed, outs[0])
	}
	t.Logf("node 1 killed %d times (seed %d); its completing run:\n%s", kills, seed, outs[0])
	for n, out := range outs {
		if !strings.Contains(out, "every node has its copy of this node's metadata") {
			t.Fatalf("node %d adoption report:\n%s", n+1, out)
		}
		onlyBigsplit(n, out)
	}
	m.rerunSaysAdopted(t)

	s, _ := m.startShardstore(t)
	checkAdopted(t, s, exp, true)
	m.deepHealClean(t)
	if err := s.stop(); err != nil {
		t.Fatalf("stop: %v\n%s", err, s.stderr)
	}

	for n, out := range m.migrateAll(t, "--finish") {
		if !strings.Contains(out, "removed MinIO's names of") {
			t.Fatalf("node %d --finish:\n%s", n+1, out)
		}
	}
	for n := range clusterFixtureNodes {
		for p := range 2 {
			for d := range clusterPoolsPerNode {
				ents, _ := filepath.Glob(filepath.Join(m.drive(n, p, d), "pooled", "*", "xl.meta"))
				if want := filepath.Join(m.drive(n, p, d), "pooled", refusedKey, "xl.meta"); len(ents) != 1 || ents[0] != want {
					t.Fatalf("node %d pool %d drive %d: MinIO's xl.meta after --finish: %v, want the refused key's only (%s)", n+1, p+1, d+1, ents, want)
				}
			}
		}
	}
	s, _ = m.startShardstore(t)
	checkAdopted(t, s, exp, true)
}

// withoutKeys is exp without the keys that start with prefix (there must
// be exactly one such key), and that key.
func withoutKeys(t *testing.T, exp *miniofixture.Expected, prefix string) (*miniofixture.Expected, string) {
	t.Helper()
	out := *exp
	out.Buckets = nil
	found := map[string]bool{}
	for _, b := range exp.Buckets {
		nb := b
		nb.Objects, nb.Versions = nil, nil
		for _, o := range b.Objects {
			if strings.HasPrefix(o.Key, prefix) {
				found[o.Key] = true
				continue
			}
			nb.Objects = append(nb.Objects, o)
		}
		for _, v := range b.Versions {
			if strings.HasPrefix(v.Key, prefix) {
				found[v.Key] = true
				continue
			}
			nb.Versions = append(nb.Versions, v)
		}
		out.Buckets = append(out.Buckets, nb)
	}
	if len(found) != 1 {
		t.Fatalf("fixture: keys starting %q: %v, want one", prefix, found)
	}
	for k := range found {
		return &out, k
	}
	return nil, ""
}
