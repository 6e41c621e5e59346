package engine

import (
	"context"
	"errors"
	"testing"

	"github.com/shardstore/shardstore/internal/drive"
)

func TestConfigDocuments(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, Config{})
	if _, _, err := r.e.ReadConfig(ctx, "doc"); !errors.Is(err, ErrNoConfig) {
		t.Fatalf("read before any write: %v, want ErrNoConfig", err)
	}
	seq, err := r.e.WriteConfig(ctx, "doc", 0, []byte("one"))
	if err != nil || seq != 1 {
		t.Fatalf("first write: seq %d, %v", seq, err)
	}
	if _, err := r.e.WriteConfig(ctx, "doc", 0, []byte("lost update")); !errors.Is(err, ErrConfigConflict) {
		t.Fatalf("write from a stale version: %v, want ErrConfigConflict", err)
	}

	// A write that reaches fewer than half of the drives fails, and is
	// not what a later read (or a restart) sees.
	var removes []func()
	for i := 0; i < 9; i++ {
		removes = append(removes, r.faulty[i].Inject(drive.Fault{Ops: []drive.Op{drive.OpApply}, Err: drive.ErrInjectedEIO}))
	}
	if _, err := r.e.WriteConfig(ctx, "doc", seq, []byte("minority")); !errors.Is(err, ErrWriteQuorum) {
		t.Fatalf("write on 7 of 16 drives: %v, want ErrWriteQuorum", err)
	}
	for _, rm := range removes {
		rm()
	}
	r.reopen()
	data, got, err := r.e.ReadConfig(ctx, "doc")
	if err != nil || string(data) != "one" || got != seq {
		t.Fatalf("after a failed write and a restart: %q seq %d, %v; want \"one\" seq %d", data, got, err, seq)
	}

	// The read repaired the failed write's leftovers; the next write
	// succeeds.
	seq2, err := r.e.WriteConfig(ctx, "doc", seq, []byte("two"))
	if err != nil || seq2 <= seq {
		t.Fatalf("second write: seq %d, %v", seq2, err)
	}

	// A write that fails with exactly half of the drives holding it is
	// indeterminate: it is read back (8 copies outnumber what any older
	// version can have left) and repaired.
	removes = nil
	for i := 0; i < 8; i++ {
		removes = append(removes, r.faulty[i].Inject(drive.Fault{Ops: []drive.Op{drive.OpApply}, Err: drive.ErrInjectedEIO}))
	}
	if _, err := r.e.WriteConfig(ctx, "doc", seq2, []byte("half")); !errors.Is(err, ErrWriteQuorum) {
		t.Fatalf("write on 8 of 16 drives: %v, want ErrWriteQuorum", err)
	}
	for _, rm := range removes {
		rm()
	}
	r.reopen()
	data, seq3, err := r.e.ReadConfig(ctx, "doc")
	if err != nil || string(data) != "half" || seq3 <= seq2 {
		t.Fatalf("after a write to half of the drives: %q seq %d, %v", data, seq3, err)
	}
	if _, err := r.e.WriteConfig(ctx, "doc", seq3, []byte("two")); err != nil {
		t.Fatal(err)
	}

	// Losing copies down to half of the drives still reads the
	// document; a drive that missed it is repaired by the read.
	for i := 0; i < 8; i++ {
		b := &drive.Batch{}
		b.Delete(drive.TableSystem, configKey("doc"))
		if err := r.faulty[i].Inner().Apply(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	data, _, err = r.e.ReadConfig(ctx, "doc")
	if err != nil || string(data) != "two" {
		t.Fatalf("read with 8 of 16 copies: %q, %v", data, err)
	}
	if v, err := r.faulty[0].Inner().Get(ctx, drive.TableSystem, configKey("doc")); err != nil {
		t.Fatalf("drive 1 not repaired: %v", err)
	} else if _, d, ok := decodeConfig(v); !ok || string(d) != "two" {
		t.Fatalf("drive 1 repaired with %q", d)
	}

	// A damaged copy is not counted.
	b := &drive.Batch{}
	b.Put(drive.TableSystem, configKey("doc"), []byte("SSC1garbage-garbage"))
	if err := r.faulty[1].Inner().Apply(ctx, b); err != nil {
		t.Fatal(err)
	}
	if data, _, err := r.e.ReadConfig(ctx, "doc"); err != nil || string(data) != "two" {
		t.Fatalf("read with one damaged copy: %q, %v", data, err)
	}
}

func TestConfigEnvelope(t *testing.T) {
	v := encodeConfig(7, []byte("data"))
	seq, data, ok := decodeConfig(v)
	if !ok || seq != 7 || string(data) != "data" {
		t.Fatalf("round trip: %d %q %v", seq, data, ok)
	}
	v[len(v)-1] ^= 1
	if _, _, ok := decodeConfig(v); ok {
		t.Fatal("a flipped bit decoded")
	}
}

// TestConfigHealedByHealRuns: a heal run restores config document copies
// drives lost (a replaced drive), without a read of the document.
func TestConfigHealedByHealRuns(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, Config{})
	if _, err := r.e.WriteConfig(ctx, "doc", 0, []byte("v1")); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 8; i++ {
		b := &drive.Batch{}
		b.Delete(drive.TableSystem, configKey("doc"))
		if err := r.faulty[i].Inner().Apply(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := r.e.Heal(ctx, HealRequest{}, nil); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 16; i++ {
		v, err := r.faulty[i].Inner().Get(ctx, drive.TableSystem, configKey("doc"))
		if err != nil {
			t.Fatalf("drive %d has no copy after a heal run: %v", i+1, err)
		}
		if _, d, ok := decodeConfig(v); !ok || string(d) != "v1" {
			t.Fatalf("drive %d holds %q", i+1, d)
		}
	}
}
