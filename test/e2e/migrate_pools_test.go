package e2e

import (
	"bytes"
	"context"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/shardstore/shardstore/internal/drive"
	"github.com/shardstore/shardstore/internal/minioformat/miniofixture"
	"github.com/shardstore/shardstore/internal/placement"
)

// The pools fixtures (internal/minioformat/testdata/README.md): a
// single-node MinIO of two server pools, drive{1...4} and drive{5...12},
// and one of two pools of 4 whose first pool MinIO decommissioned.
const (
	minioPoolsFixture  = "../../internal/minioformat/testdata/minio-pools"
	minioDecomFixture  = "../../internal/minioformat/testdata/minio-decommissioned"
	poolsFixtureDrives = 12
)

// minioPoolsDrives unpacks the pools fixture into dir and returns its
// drives, the two pool arguments and MinIO's answers.
func minioPoolsDrives(t *testing.T, dir string) ([]string, []string, *miniofixture.Expected) {
	t.Helper()
	exp, err := miniofixture.Load(minioPoolsFixture)
	if err != nil {
		t.Fatal(err)
	}
	if exp.Drives != poolsFixtureDrives {
		t.Fatalf("fixture of %d drives, want %d", exp.Drives, poolsFixtureDrives)
	}
	if err := miniofixture.Unpack(minioPoolsFixture, dir); err != nil {
		t.Fatalf("unpack fixture: %v", err)
	}
	var drives []string
	for i := 1; i <= poolsFixtureDrives; i++ {
		drives = append(drives, filepath.Join(dir, fmt.Sprintf("drive%d", i)))
	}
	return drives, []string{filepath.Join(dir, "drive{1...4}"), filepath.Join(dir, "drive{5...12}")}, exp
}

// poolsOfKeys says, for every key of the fixture (bucket/key), which
// pools' drives hold MinIO's xl.meta of it (bit p: pool p+1), and which
// pool holds its newest version (MinIO's listing: the first one).
func poolsOfKeys(t *testing.T, drives []string, exp *miniofixture.Expected) (held map[string]int, newest map[string]int) {
	t.Helper()
	pools := [][]string{drives[:4], drives[4:]}
	held, newest = map[string]int{}, map[string]int{}
	for _, b := range exp.Buckets {
		for _, v := range b.Versions {
			name := b.Name + "/" + v.Key
			if _, done := newest[name]; done {
				continue // versions are listed newest first
			}
			id := uuid.Nil
			if v.VersionID != "null" && v.VersionID != "" {
				id = uuid.MustParse(v.VersionID)
			}
			newest[name] = -1
			for p, ds := range pools {
				for _, d := range ds {
					raw, err := os.ReadFile(filepath.Join(d, b.Name, filepath.FromSlash(placement.MinIOName(v.Key)), "xl.meta"))
					if err != nil {
						continue
					}
					held[name] |= 1 << p
					if bytes.Contains(raw, id[:]) {
						newest[name] = p
					}
				}
			}
			if held[name] == 0 || newest[name] < 0 {
				t.Fatalf("fixture: %s (newest version %s) in pools %b, newest in %d", name, v.VersionID, held[name], newest[name])
			}
		}
	}
	return held, newest
}

// TestMigrateFromMinIOPools adopts a MinIO deployment of two server
// pools of other geometries (4 drives: EC 2+2; 8 drives: EC 4+4) in
// place: a dry run writes nothing; either pool alone is refused; the
// adoption, killed (SIGKILL) at chosen writes and resumed, then serves
// every version byte-identical to MinIO's recorded answers, with the
// listings equal; every key is in one pool, the one MinIO had it in, and
// a key whose versions MinIO spread over both pools (it puts a new
// version where free space says) is in the pool of its newest version,
// the other pool's versions copied there; --finish removes MinIO's
// files of every adopted key in both pools, and the server still serves
// everything.
func TestMigrateFromMinIOPools(t *testing.T) {
	singleNodeOnly(t, "the fixture is one node's 12 drives")
	dir := t.TempDir()
	drives, args, exp := minioPoolsDrives(t, dir)
	held, newest := poolsOfKeys(t, drives, exp)
	var only [2]int
	split := 0
	for name, h := range held {
		switch h {
		case 1, 2:
			only[h-1]++
		case 3:
			split++
			t.Logf("%s: versions in both pools, newest in pool %d", name, newest[name]+1)
		}
	}
	if only[0] == 0 || only[1] == 0 || split == 0 {
		t.Fatalf("fixture: keys in pool 1 only %d, pool 2 only %d, in both %d: want some of each", only[0], only[1], split)
	}

	before := treeSum(t, dir)
	for name, c := range map[string][]string{
		"pool 1 alone":          {args[0]},
		"pool 2 alone":          {args[1]},
		"pool 2 alone, dry run": {"--dry-run", args[1]},
		"pools as one argument": {filepath.Join(dir, "drive{1...12}")},
	} {
		out, err := exec.Command(binary, append([]string{"migrate", "from-minio"}, c...)...).CombinedOutput()
		if err == nil || !strings.Contains(string(out), "not adoptable") {
			t.Errorf("%s: %v, want a refusal:\n%s", name, err, out)
		}
		t.Logf("%s: %s", name, bytes.TrimSpace(out))
	}
	dry := runMigrate(t, append([]string{"--dry-run"}, args...)...)
	if !strings.Contains(dry, "2 server pools") || !strings.Contains(dry, fmt.Sprintf("would adopt %d keys", len(held))) ||
		!strings.Contains(dry, "refused: 0") {
		t.Fatalf("dry run:\n%s", dry)
	}
	if treeSum(t, dir) != before {
		t.Fatal("a dry run or a refused adoption wrote to the drives")
	}

	rng := rand.New(rand.NewSource(migrateKillSeed(t)))
	out, kills := migrateKilled(t, rng, 8, 12, append([]string{"migrate", "from-minio"}, args...), func(kills int) {
		if kills == 1 {
			serverRefusesArgs(t, dir, args)
		}
		// --finish before the adoption of every pool completed is
		// refused and removes nothing: a pool adopted already may hold
		// MinIO's files of versions a later pool still has to copy.
		fin, err := exec.Command(binary, append([]string{"migrate", "from-minio", "--finish"}, args...)...).CombinedOutput()
		if err == nil || !strings.Contains(string(fin), "has not completed") {
			t.Fatalf("--finish after kill %d: %v, want a refusal:\n%s", kills, err, fin)
		}
		checkMinIOFiles(t, drives, held)
	})
	t.Logf("%d kills, then:\n%s", kills, out)
	if kills < 2 {
		t.Fatalf("only %d runs were killed: the crash points missed the adoption", kills)
	}
	if !strings.Contains(out, "refused: 0") || !strings.Contains(out, "shardstore server "+strings.Join(args, " ")) {
		t.Fatalf("resumed adoption:\n%s", out)
	}
	if again := runMigrate(t, args...); strings.Count(again, "already adopted") != 2 {
		t.Fatalf("a completed adoption was redone:\n%s", again)
	}
	checkPoolRecords(t, drives, held, newest)

	serve := append([]string{"server", "--console-address", "", "--address", "127.0.0.1:0"}, args...)
	s := launch(t, dir, serverEnv(), serve)
	checkAdopted(t, s, exp, true)
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}

	fin := runMigrate(t, append([]string{"--finish"}, args...)...)
	t.Logf("finish:\n%s", fin)
	for name := range held {
		bucket, key, _ := strings.Cut(name, "/")
		for _, d := range drives {
			if _, err := os.Stat(filepath.Join(d, bucket, filepath.FromSlash(placement.MinIOName(key)), "xl.meta")); err == nil {
				t.Errorf("after --finish, MinIO's xl.meta of %s is still on %s", name, d)
			}
		}
	}
	s = launch(t, dir, serverEnv(), serve)
	checkAdopted(t, s, exp, true)
}

// checkPoolRecords opens the drives (no server running) and checks that
// each key's records are on the drives of the pool MinIO had its newest
// version in, and on no drive of the other pool.
func checkPoolRecords(t *testing.T, drives []string, held, newest map[string]int) {
	t.Helper()
	ctx := context.Background()
	var opened []*drive.Local
	for _, p := range drives {
		d, err := drive.OpenLocal(p, drive.LocalOptions{Beside: true, NoCreate: true})
		if err != nil {
			t.Fatal(err)
		}
		opened = append(opened, d)
	}
	defer func() {
		for _, d := range opened {
			d.Close()
		}
	}()
	pools := [][]*drive.Local{opened[:4], opened[4:]}
	for name, p := range newest {
		bucket, key, _ := strings.Cut(name, "/")
		for q, ds := range pools {
			n := 0
			for _, d := range ds {
				if _, err := d.Get(ctx, drive.TableObjects, drive.ObjectKey(bucket, key)); err == nil {
					n++
				}
			}
			if q == p && n <= len(ds)/2 {
				t.Errorf("%s (MinIO pools %b, newest in pool %d): records on %d of pool %d's %d drives", name, held[name], p+1, n, q+1, len(ds))
			}
			if q != p && n != 0 {
				t.Errorf("%s (MinIO pools %b, newest in pool %d): records on %d drives of pool %d too", name, held[name], p+1, n, q+1)
			}
		}
	}
}

// serverRefusesArgs checks that shardstore server refuses drives an
// interrupted adoption left half done.
func serverRefusesArgs(t *testing.T, dir string, args []string) {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"server", "--console-address", "", "--address", "127.0.0.1:0"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), serverEnv()...)
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "adopt") {
		t.Fatalf("server on half-adopted drives: %v\n%s", err, out)
	}
}

// TestMigrateFromMinIOPoolsDecommissioned: a MinIO deployment whose
// first pool MinIO decommissioned completely (pool.bin says so; its
// objects are in pool 2) is refused with both pools given, saying to
// leave the decommissioned pool out, and nothing is written; with pool 2
// alone it is adopted and every version reads back as MinIO answered.
func TestMigrateFromMinIOPoolsDecommissioned(t *testing.T) {
	singleNodeOnly(t, "the fixture is one node's 8 drives")
	dir := t.TempDir()
	exp, err := miniofixture.Load(minioDecomFixture)
	if err != nil {
		t.Fatal(err)
	}
	if err := miniofixture.Unpack(minioDecomFixture, dir); err != nil {
		t.Fatalf("unpack fixture: %v", err)
	}
	args := []string{filepath.Join(dir, "drive{1...4}"), filepath.Join(dir, "drive{5...8}")}
	before := treeSum(t, dir)
	for _, dry := range []bool{true, false} {
		a := args
		if dry {
			a = append([]string{"--dry-run"}, args...)
		}
		out, err := exec.Command(binary, append([]string{"migrate", "from-minio"}, a...)...).CombinedOutput()
		if err == nil || !strings.Contains(string(out), "decommissioned pool "+args[0]+" completely") ||
			!strings.Contains(string(out), "leave its drives out") {
			t.Fatalf("both pools (dry run %v): %v, want a refusal naming the decommissioned pool:\n%s", dry, err, out)
		}
	}
	if treeSum(t, dir) != before {
		t.Fatal("a refused adoption wrote to the drives")
	}
	out := runMigrate(t, args[1])
	t.Logf("pool 2 alone:\n%s", out)
	if !strings.Contains(out, "decommissioned completely by MinIO, is left out") || !strings.Contains(out, "refused: 0") {
		t.Fatalf("adoption of the remaining pool:\n%s", out)
	}
	s := launch(t, dir, serverEnv(), []string{"server", "--console-address", "", "--address", "127.0.0.1:0", args[1]})
	checkAdopted(t, s, exp, true)
}

// checkMinIOFiles checks that MinIO's xl.meta of every key is still in
// every pool that held it.
func checkMinIOFiles(t *testing.T, drives []string, held map[string]int) {
	t.Helper()
	pools := [][]string{drives[:4], drives[4:]}
	for name, h := range held {
		bucket, key, _ := strings.Cut(name, "/")
		for p, ds := range pools {
			if h&(1<<p) == 0 {
				continue
			}
			n := 0
			for _, d := range ds {
				if _, err := os.Stat(filepath.Join(d, bucket, filepath.FromSlash(placement.MinIOName(key)), "xl.meta")); err == nil {
					n++
				}
			}
			if n == 0 {
				t.Fatalf("MinIO's files of %s are gone from pool %d before --finish", name, p+1)
			}
		}
	}
}
