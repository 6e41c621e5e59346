package engine

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/shardstore/shardstore/internal/drive"
)

// Finding R1 (docs/consistency.md), from drive states: an overwrite that
// reached its write quorum, and was acknowledged, on drives of which the
// reader hears too few to read it, while the drives the reader hears
// hold the replaced version as current or (where the commit's settling
// batch never came) as previous on a read quorum. The reader must not
// answer the replaced version: the drives it cannot hear complete the
// new version's write quorum. It fails (read quorum) until they answer,
// and then reads the new version.
//
// The rig's 16 drives are one set, EC 12+4, write quorum 12. Drives
// 0-3 stand for the side a partition cut off with the writer, 4-11 for
// the reader's drives the commit reached before the cut (their settling
// batch did not), 12-15 for the reader's drives it never reached.
func TestReadPrevNotAfterAcknowledgedOverwrite(t *testing.T) {
	r := newRig(t, Config{})
	ctx := context.Background()
	v1, v2 := []byte("version one"), []byte("version two")
	if err := r.put("k", v1); err != nil {
		t.Fatal(err)
	}
	// Drives 12-15 refuse every write (ENOSPC keeps them online, so the
	// reader still hears their v1); drives 4-11 take the commit of v2 and
	// refuse what follows (its settling batch, and the heal's).
	for p := 12; p < 16; p++ {
		r.faulty[p].Inject(drive.Fault{Ops: []drive.Op{drive.OpApply}, Err: drive.ErrInjectedENOSPC})
	}
	for p := 4; p < 12; p++ {
		r.faulty[p].Inject(drive.Fault{Ops: []drive.Op{drive.OpApply}, After: 1, Err: drive.ErrInjectedENOSPC})
	}
	if err := r.put("k", v2); err != nil {
		t.Fatalf("overwrite on 12 of 16 drives (its write quorum): %v", err)
	}
	got, err := getAll(t, r.e, "k", GetOptions{})
	if err != nil || !bytes.Equal(got, v2) {
		t.Fatalf("read with every drive heard: %q, %v; want %q", got, err, v2)
	}
	// The partition: drives 0-3 fail every call (and go offline).
	cut := make([]func(), 4)
	for p := range cut {
		cut[p] = r.faulty[p].Inject(drive.Fault{Err: drive.ErrInjectedEIO})
		r.healths[p].Get(ctx, drive.TableObjects, drive.ObjectKey("bucket", "k")) //nolint:errcheck // takes it offline
	}
	for p := range cut {
		if r.healths[p].Online() {
			t.Fatalf("drive %d still online", p)
		}
	}
	for range 2 {
		got, err = getAll(t, r.e, "k", GetOptions{})
		if bytes.Equal(got, v1) {
			t.Fatalf("stale read: %q, the version the acknowledged overwrite replaced", got)
		}
		if !errors.Is(err, ErrReadQuorum) {
			t.Fatalf("read with the new version's quorum unheard: %q, %v; want %v", got, err, ErrReadQuorum)
		}
		if _, err := r.e.HeadObject(ctx, "bucket", "k", GetOptions{}); !errors.Is(err, ErrReadQuorum) {
			t.Fatalf("HEAD with the new version's quorum unheard: %v; want %v", err, ErrReadQuorum)
		}
	}
	// The partition heals: every drive is heard again, and v2 is read.
	for _, remove := range cut {
		remove()
	}
	waitUntil(t, "drives 0-3 online", time.Minute, func() bool {
		for p := range cut {
			if !r.healths[p].Online() {
				return false
			}
		}
		return true
	})
	got, err = getAll(t, r.e, "k", GetOptions{})
	if err != nil || !bytes.Equal(got, v2) {
		t.Fatalf("read after the partition healed: %q, %v; want %q", got, err, v2)
	}
}

// The heal's side of finding R1: with the same drive states, an object
// too large to be inline, and the reader's drives writable again, a heal
// that finds no version on a read quorum recovers one from records and
// shard files (recoverVersion). It must not settle on the replaced
// version while the drives it cannot hear may complete the new one's
// write quorum: it then fails (read quorum) and is retried later.
// Without the guard it reported v1 recovered (the records of every drive
// heard name it, current or previous); here that rewrote no record, but
// the heal would write v1 to any drive it counts as missing or stale.
func TestHealNoRollbackOfAcknowledgedOverwrite(t *testing.T) {
	r := newRig(t, Config{})
	ctx := context.Background()
	v1, v2 := bytes.Repeat([]byte("1"), 3*rigBlock), bytes.Repeat([]byte("2"), 3*rigBlock)
	if err := r.put("k", v1); err != nil {
		t.Fatal(err)
	}
	// Drives 12-15 refuse every write (shards included); drives 4-11
	// take v2's shards and commit and refuse its settling batch.
	var faults []func()
	for p := 12; p < 16; p++ {
		faults = append(faults, r.faulty[p].Inject(drive.Fault{Ops: drive.WriteOps, Err: drive.ErrInjectedENOSPC}))
	}
	for p := 4; p < 12; p++ {
		faults = append(faults, r.faulty[p].Inject(drive.Fault{Ops: []drive.Op{drive.OpApply}, After: 1, Err: drive.ErrInjectedENOSPC}))
	}
	if err := r.put("k", v2); err != nil {
		t.Fatalf("overwrite on 12 of 16 drives (its write quorum): %v", err)
	}
	cut := make([]func(), 4)
	for p := range cut {
		cut[p] = r.faulty[p].Inject(drive.Fault{Err: drive.ErrInjectedEIO})
		r.healths[p].Get(ctx, drive.TableObjects, drive.ObjectKey("bucket", "k")) //nolint:errcheck // takes it offline
	}
	for _, remove := range faults {
		remove()
	}
	if _, err := r.e.HealObject(ctx, "bucket", "k", HealOptions{}); !errors.Is(err, ErrReadQuorum) {
		t.Fatalf("heal with the new version's quorum unheard: %v; want %v", err, ErrReadQuorum)
	}
	for _, remove := range cut {
		remove()
	}
	waitUntil(t, "drives 0-3 online", time.Minute, func() bool {
		for p := range cut {
			if !r.healths[p].Online() {
				return false
			}
		}
		return true
	})
	got, err := getAll(t, r.e, "k", GetOptions{})
	if err != nil || !bytes.Equal(got, v2) {
		t.Fatalf("read after the partition healed: %d bytes (v1: %v), %v; want v2", len(got), bytes.Equal(got, v1), err)
	}
}

// The write's side of finding R1, in a versioned bucket: a PUT whose
// commit cannot read which version is current (the drive states above:
// the acknowledged overwrite's write quorum lies partly on drives it
// cannot hear) must be refused. Committing it wrote the new version
// without a previous record and dropped the versions the drives held,
// the acknowledged one and the one it replaced among them.
func TestVersionedPutRefusedWithoutReadQuorum(t *testing.T) {
	r := newRig(t, Config{})
	ctx := context.Background()
	setVersioning(t, r.e, VersioningEnabled)
	put := func(data []byte) (ObjectInfo, error) {
		return r.e.PutObject(ctx, "bucket", "k", bytes.NewReader(data), int64(len(data)), PutOptions{})
	}
	v1, v2 := bytes.Repeat([]byte("1"), 3*rigBlock), bytes.Repeat([]byte("2"), 3*rigBlock)
	o1, err := put(v1)
	if err != nil {
		t.Fatal(err)
	}
	var faults []func()
	for p := 12; p < 16; p++ {
		faults = append(faults, r.faulty[p].Inject(drive.Fault{Ops: drive.WriteOps, Err: drive.ErrInjectedENOSPC}))
	}
	for p := 4; p < 12; p++ {
		faults = append(faults, r.faulty[p].Inject(drive.Fault{Ops: []drive.Op{drive.OpApply}, After: 1, Err: drive.ErrInjectedENOSPC}))
	}
	o2, err := put(v2)
	if err != nil {
		t.Fatalf("overwrite on 12 of 16 drives (its write quorum): %v", err)
	}
	cut := make([]func(), 4)
	for p := range cut {
		cut[p] = r.faulty[p].Inject(drive.Fault{Err: drive.ErrInjectedEIO})
		r.healths[p].Get(ctx, drive.TableObjects, drive.ObjectKey("bucket", "k")) //nolint:errcheck // takes it offline
	}
	for _, remove := range faults {
		remove()
	}
	if _, err := put([]byte("three")); !errors.Is(err, ErrReadQuorum) {
		t.Fatalf("versioned PUT over a version it cannot read: %v; want %v", err, ErrReadQuorum)
	}
	for _, remove := range cut {
		remove()
	}
	waitUntil(t, "drives 0-3 online", time.Minute, func() bool {
		for p := range cut {
			if !r.healths[p].Online() {
				return false
			}
		}
		return true
	})
	for _, v := range []struct {
		id   string
		want []byte
	}{{o1.VersionID, v1}, {o2.VersionID, v2}} {
		got, err := getAll(t, r.e, "k", GetOptions{VersionID: v.id})
		if err != nil || !bytes.Equal(got, v.want) {
			t.Fatalf("version %s after the partition healed: %d bytes, %v", v.id, len(got), err)
		}
	}
}
