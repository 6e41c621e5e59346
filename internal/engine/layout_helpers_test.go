package engine

import (
	"context"
	"math/rand"
	"os"
	"testing"

	"github.com/shardstore/shardstore/internal/drive"
	"github.com/shardstore/shardstore/internal/meta"
)

// Helpers for tests that damage what one drive holds of an object. Index
// entries are changed through the drive's own interface (the index is an
// LSM; its files cannot be edited by hand); shard files are edited on disk
// at drive.ShardPath, as a failing disk would.

// engineDrive returns the drive at position p of the set bucket/key lives in.
func engineDrive(e *Engine, key string, p int) drive.Drive {
	return e.setFor("bucket", key).drives[p]
}

// drivePos returns the set position of the drive rooted at path.
func drivePos(e *Engine, key, path string) int {
	for p, d := range e.setFor("bucket", key).drives {
		if d.String() == path {
			return p
		}
	}
	return -1
}

// recordOn reads drive d's record of bucket/key; nil when it has none.
func recordOn(t testing.TB, d drive.Drive, key string) *meta.Record {
	t.Helper()
	rec, _, err := readRecord(context.Background(), d, "bucket", key)
	if err != nil {
		return nil
	}
	return rec
}

// dropRecord removes drive d's record of key, as if the drive never got it.
func dropRecord(t testing.TB, d drive.Drive, key string) {
	t.Helper()
	b := &drive.Batch{}
	b.Delete(drive.TableObjects, drive.ObjectKey("bucket", key))
	if err := d.Apply(context.Background(), b); err != nil {
		t.Fatal(err)
	}
}

// putRaw writes a raw index value on drive d.
func putRaw(t testing.TB, d drive.Drive, table drive.Table, k string, v []byte) {
	t.Helper()
	b := &drive.Batch{}
	b.Put(table, k, v)
	if err := d.Apply(context.Background(), b); err != nil {
		t.Fatal(err)
	}
}

// shardPaths lists the shard files of the current version of key on the
// drive rooted at root (d is that drive); none for inline objects.
func shardPaths(t testing.TB, root string, d drive.Drive, key string) []string {
	t.Helper()
	rec := recordOn(t, d, key)
	if rec == nil || rec.Current() == nil {
		return nil
	}
	var out []string
	for _, ref := range shardRefs(rec.Current()) {
		out = append(out, drive.ShardPath(root, ref))
	}
	return out
}

// flipByte flips one random byte of b (in place) and returns it.
func flipByte(rnd *rand.Rand, b []byte) []byte {
	if len(b) > 0 {
		b[rnd.Intn(len(b))] ^= byte(1 + rnd.Intn(255))
	}
	return b
}

// corruptShardData flips a byte of key's data on the drive at position p
// of its set (root is its directory): a shard file, or the inline entry.
// It reports false when the drive holds no data for the key.
func corruptShardData(t testing.TB, rnd *rand.Rand, e *Engine, root, key string, p int) bool {
	t.Helper()
	d := engineDrive(e, key, p)
	rec := recordOn(t, d, key)
	if rec == nil || rec.Current() == nil {
		return false
	}
	m := rec.Current()
	if m.Inline {
		k := drive.DataKey(m.DataID, 1)
		v, err := d.Get(context.Background(), drive.TableInline, k)
		if err != nil || len(v) == 0 {
			return false
		}
		putRaw(t, d, drive.TableInline, k, flipByte(rnd, v))
		return true
	}
	files := shardPaths(t, root, d, key)
	if len(files) == 0 {
		return false
	}
	b, err := os.ReadFile(files[0])
	if err != nil || len(b) == 0 {
		return false
	}
	if err := os.WriteFile(files[0], flipByte(rnd, b), 0o644); err != nil {
		t.Fatal(err)
	}
	return true
}

// corruptRecord flips a byte of drive d's record of key.
func corruptRecord(t testing.TB, rnd *rand.Rand, d drive.Drive, key string) {
	t.Helper()
	okey := drive.ObjectKey("bucket", key)
	v, err := d.Get(context.Background(), drive.TableObjects, okey)
	if err != nil {
		t.Fatal(err)
	}
	putRaw(t, d, drive.TableObjects, okey, flipByte(rnd, v))
}

// setFor is the set of the first pool an object would live in (the
// tests' engines mostly have one pool).
func (e *Engine) setFor(bucket, key string) *erasureSet { return e.setIn(e.pools[0], bucket, key) }
