package e2e

import (
	"crypto/sha256"
	"fmt"
	"io/fs"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/shardstore/shardstore/internal/placement"
)

// TestMigrateFromMinIOPoolsRefusedInCopy: a key whose versions MinIO
// spread over the two pools is adopted into the pool of its newest
// version, the other pool's versions copied into it. Here the other
// pool's part files of that key are damaged beyond repair (every shard),
// which only the copy finds (its metadata is whole), so the owning pool
// refuses the key while the other pool, deciding from metadata, has
// journaled it for --finish. The adoption (killed at random writes and
// resumed) lists the refusal; --finish removes MinIO's files of every
// adopted key and leaves every file of the refused key, in both pools,
// byte-identical, listing it.
func TestMigrateFromMinIOPoolsRefusedInCopy(t *testing.T) {
	singleNodeOnly(t, "the fixture is one node's 12 drives")
	dir := t.TempDir()
	drives, args, exp := minioPoolsDrives(t, dir)
	held, newest := poolsOfKeys(t, drives, exp)
	pools := [][]string{drives[:4], drives[4:]}

	// A split key with part files in the pool that does not own it.
	var victim string
	var parts []string
	names := make([]string, 0, len(held))
	for name := range held {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if held[name] != 3 {
			continue
		}
		bucket, key, _ := strings.Cut(name, "/")
		other := pools[1-newest[name]]
		var found []string
		for _, d := range other {
			kd := filepath.Join(d, bucket, filepath.FromSlash(placement.MinIOName(key)))
			ents, _ := os.ReadDir(kd)
			for _, e := range ents {
				if _, err := uuid.Parse(e.Name()); err != nil || !e.IsDir() {
					continue
				}
				ps, _ := filepath.Glob(filepath.Join(kd, e.Name(), "part.*"))
				found = append(found, ps...)
			}
		}
		if len(found) > 0 {
			victim, parts = name, found
			break
		}
	}
	if victim == "" {
		t.Fatalf("fixture: no key split over the pools with part files in the pool of its older versions (split keys: %v)", held)
	}
	t.Logf("%s: newest version in pool %d; damaging its %d part files in pool %d", victim, newest[victim]+1, len(parts), 2-newest[victim])
	for _, p := range parts {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) <= 32 {
			t.Fatalf("%s: %d bytes, no data to damage", p, len(b))
		}
		for i := 32; i < len(b) && i < 32+4096; i++ {
			b[i] ^= 0xa5 // past the first chunk's checksum: its data no longer matches it
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bucket, key, _ := strings.Cut(victim, "/")
	keyFiles := func() map[string]string {
		out := map[string]string{}
		for _, d := range drives {
			kd := filepath.Join(d, bucket, filepath.FromSlash(placement.MinIOName(key)))
			filepath.WalkDir(kd, func(p string, e fs.DirEntry, err error) error {
				if err != nil || e.IsDir() {
					return nil
				}
				b, err := os.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				out[p] = fmt.Sprintf("%x", sha256.Sum256(b))
				return nil
			})
		}
		return out
	}
	before := keyFiles()

	// The dry run reads and checks the copies as the adoption does. (A
	// resumed adoption reports what its own run did: a pool adopted by
	// a killed run is "already adopted", its refusals not repeated.)
	dry := runMigrate(t, append([]string{"--dry-run"}, args...)...)
	if !strings.Contains(dry, "refused: 1;") || !strings.Contains(dry, "refused "+victim+":") {
		t.Fatalf("dry run: want %s refused (its copy from the other pool fails):\n%s", victim, dry)
	}
	rng := rand.New(rand.NewSource(migrateKillSeed(t)))
	out, kills := migrateKilled(t, rng, 8, 16, append([]string{"migrate", "from-minio"}, args...), nil)
	t.Logf("%d kills, then:\n%s", kills, out)
	if kills == 0 && (!strings.Contains(out, "refused: 1;") || !strings.Contains(out, "refused "+victim+":")) {
		t.Fatalf("adoption: want %s refused (its copy from the other pool fails):\n%s", victim, out)
	}

	fin := runMigrate(t, append([]string{"--finish"}, args...)...)
	t.Logf("finish:\n%s", fin)
	if !strings.Contains(fin, "left MinIO's files of "+victim+":") {
		t.Errorf("--finish does not list %s as left:\n%s", victim, fin)
	}
	after := keyFiles()
	if len(after) != len(before) {
		t.Errorf("%s: %d of MinIO's files before --finish, %d after", victim, len(before), len(after))
	}
	for p, sum := range before {
		if after[p] != sum {
			t.Errorf("%s: MinIO's file %s changed or removed by --finish", victim, p)
		}
	}
	for name := range held {
		if name == victim {
			continue
		}
		b, k, _ := strings.Cut(name, "/")
		for _, d := range drives {
			if _, err := os.Stat(filepath.Join(d, b, filepath.FromSlash(placement.MinIOName(k)), "xl.meta")); err == nil {
				t.Errorf("after --finish, MinIO's xl.meta of adopted %s is still on %s", name, d)
			}
		}
	}
}
