package engine

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/shardstore/shardstore/internal/hashing"
	"github.com/shardstore/shardstore/internal/objectlock"
	"github.com/shardstore/shardstore/internal/sse"
)

// testKeys is an S3 layer's part in these tests: one key per object,
// handed back by Unseal.
type testKeys struct{ keys map[string][]byte }

func (k *testKeys) encryption(name string, hide bool) *Encryption {
	if k.keys == nil {
		k.keys = map[string][]byte{}
	}
	key := sse.NewKey()
	k.keys[name] = key
	return &Encryption{Cipher: sse.DefaultCipher(), Key: key, Sealed: map[string]string{"name": name}, HideETag: hide}
}

func (k *testKeys) unseal(info ObjectInfo) ([]byte, error) {
	key, ok := k.keys[info.Sealed["name"]]
	if !ok {
		return nil, errors.New("no such key")
	}
	return key, nil
}

// recognisable is plaintext a grep of the drives would find.
func recognisable(n int) []byte {
	const marker = "SHARDSTORE-PLAINTEXT-MARKER-"
	b := bytes.Repeat([]byte(marker), n/len(marker)+1)
	return b[:n]
}

// grepDrives fails the test if any file under the drive roots holds
// needle.
func grepDrives(t *testing.T, paths []string, needle []byte) {
	t.Helper()
	for _, root := range paths {
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return nil
			}
			b, err := os.ReadFile(p)
			if err == nil && bytes.Contains(b, needle) {
				t.Errorf("plaintext found in %s", p)
			}
			return nil
		})
	}
}

func TestEncryptedPutGet(t *testing.T) {
	e, paths := testEngine(t, 16, Config{BlockSize: 4096, InlineLimit: 2048})
	ctx := context.Background()
	var keys testKeys
	pk := sse.PackageSize
	sizes := []int{0, 1, 100, 3000, pk - 1, pk, pk + 1, 3*pk + 7, 2 * sse.PlainBlockSize(4096)}
	for _, size := range sizes {
		for _, known := range []bool{true, false} {
			name := fmt.Sprintf("obj-%d-%v", size, known)
			data := recognisable(size)
			sz := int64(size)
			if !known {
				sz = -1
			}
			info, err := e.PutObject(ctx, "bucket", name, bytes.NewReader(data), sz, PutOptions{Encryption: keys.encryption(name, false)})
			if err != nil {
				t.Fatalf("put %s: %v", name, err)
			}
			sum := md5.Sum(data)
			if info.ETag != hex.EncodeToString(sum[:]) || info.Size != int64(size) || info.Cipher == "" {
				t.Fatalf("put %s: info %+v", name, info)
			}
			got, err := getAll(t, e, name, GetOptions{Unseal: keys.unseal})
			if err != nil || !bytes.Equal(got, data) {
				t.Fatalf("get %s: %v (%d of %d bytes)", name, err, len(got), size)
			}
			for _, r := range []Range{{Start: 1, End: int64(size - 2)}, {Start: int64(pk - 3), End: int64(pk + 2)}, {Start: -5, End: -1}} {
				if size < 3 || (r.Start > 0 && r.Start >= int64(size)) {
					continue
				}
				start, end := r.Start, r.End
				if start < 0 {
					start, end = int64(max(size-5, 0)), int64(size-1)
				}
				end = min(end, int64(size-1))
				got, err := getAll(t, e, name, GetOptions{Range: &r, Unseal: keys.unseal})
				if err != nil || !bytes.Equal(got, data[start:end+1]) {
					t.Fatalf("range %+v of %s: %v", r, name, err)
				}
			}
			if size > 0 {
				if _, err := getAll(t, e, name, GetOptions{}); !errors.Is(err, ErrEncrypted) {
					t.Fatalf("get %s without a key: %v, want ErrEncrypted", name, err)
				}
				wrong := func(ObjectInfo) ([]byte, error) { return sse.NewKey(), nil }
				if got, err := getAll(t, e, name, GetOptions{Unseal: wrong}); !errors.Is(err, ErrDataAuth) || len(got) > 0 {
					t.Fatalf("get %s with a wrong key: %d bytes, %v; want ErrDataAuth and nothing", name, len(got), err)
				}
			}
			if info, err := e.HeadObject(ctx, "bucket", name, GetOptions{}); err != nil || info.Size != int64(size) || info.Sealed["name"] != name {
				t.Fatalf("head %s: %+v %v", name, info, err)
			}
		}
	}
	grepDrives(t, paths, []byte("SHARDSTORE-PLAINTEXT-MARKER-"))
	res, err := e.ListObjects(ctx, "bucket", ListOptions{})
	if err != nil || len(res.Objects) != 2*len(sizes) {
		t.Fatalf("list: %d objects, %v", len(res.Objects), err)
	}
	for _, o := range res.Objects {
		var size int
		fmt.Sscanf(o.Key, "obj-%d-", &size)
		if o.Size != int64(size) {
			t.Fatalf("list reports %s as %d bytes", o.Key, o.Size)
		}
	}
}

func TestEncryptedHiddenETagAndMultipart(t *testing.T) {
	e, paths := testEngine(t, 16, Config{BlockSize: 4096})
	ctx := context.Background()
	var keys testKeys
	enc := keys.encryption("mp", true)
	id, err := e.NewMultipartUpload(ctx, "bucket", "mp", PutOptions{Encryption: enc})
	if err != nil {
		t.Fatal(err)
	}
	part1 := recognisable(MinPartSize + 3)
	part2 := recognisable(70000)
	if _, err := e.PutObjectPart(ctx, "bucket", "mp", id, 1, bytes.NewReader(part1), int64(len(part1)), PartOptions{}); !errors.Is(err, ErrEncrypted) {
		t.Fatalf("a part without the upload's key: %v, want ErrEncrypted", err)
	}
	var parts []CompletePart
	for i, p := range [][]byte{part1, part2, part2} {
		n := min(i+1, 2) // part 2 is uploaded twice: a fresh key each time
		pi, err := e.PutObjectPart(ctx, "bucket", "mp", id, n, bytes.NewReader(p), int64(len(p)), PartOptions{Unseal: keys.unseal})
		if err != nil {
			t.Fatal(err)
		}
		sum := md5.Sum(p)
		if pi.ETag == hex.EncodeToString(sum[:]) {
			t.Fatal("an SSE-KMS/SSE-C part's ETag must not be its MD5")
		}
		if i < 2 {
			parts = append(parts, CompletePart{Number: n, ETag: pi.ETag})
		} else {
			parts[1].ETag = pi.ETag
		}
	}
	info, err := e.CompleteMultipartUpload(ctx, "bucket", "mp", id, parts, PutOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := append(append([]byte{}, part1...), part2...)
	if info.Size != int64(len(want)) || info.Cipher == "" {
		t.Fatalf("completed: %+v", info)
	}
	got, err := getAll(t, e, "mp", GetOptions{Unseal: keys.unseal})
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("get multipart: %v", err)
	}
	// A range across the part boundary, and part 2 alone.
	r := Range{Start: int64(len(part1) - 10), End: int64(len(part1) + 10)}
	if got, err := getAll(t, e, "mp", GetOptions{Range: &r, Unseal: keys.unseal}); err != nil || !bytes.Equal(got, want[r.Start:r.End+1]) {
		t.Fatalf("range across parts: %v", err)
	}
	if got, err := getAll(t, e, "mp", GetOptions{PartNumber: 2, Unseal: keys.unseal}); err != nil || !bytes.Equal(got, part2) {
		t.Fatalf("part 2: %v", err)
	}
	// Single PUT with a hidden ETag.
	data := recognisable(5000)
	pinfo, err := e.PutObject(ctx, "bucket", "c", bytes.NewReader(data), int64(len(data)), PutOptions{Encryption: keys.encryption("c", true)})
	sum := md5.Sum(data)
	if err != nil || pinfo.ETag == hex.EncodeToString(sum[:]) || len(pinfo.ETag) != 32 {
		t.Fatalf("hidden ETag: %+v %v", pinfo, err)
	}
	grepDrives(t, paths, []byte("SHARDSTORE-PLAINTEXT-MARKER-"))
}

func TestEncryptedCopy(t *testing.T) {
	e, _ := testEngine(t, 16, Config{BlockSize: 4096})
	ctx := context.Background()
	var keys testKeys
	data := recognisable(200000)
	if _, err := e.PutObject(ctx, "bucket", "src", bytes.NewReader(data), int64(len(data)), PutOptions{Encryption: keys.encryption("src", false)}); err != nil {
		t.Fatal(err)
	}
	// Encrypted to plaintext, and to another key.
	if _, err := e.CopyObject(ctx, "bucket", "src", "bucket", "plain", CopyOptions{}); !errors.Is(err, ErrEncrypted) {
		t.Fatalf("copy without the source key: %v", err)
	}
	info, err := e.CopyObject(ctx, "bucket", "src", "bucket", "plain", CopyOptions{SourceUnseal: keys.unseal})
	if err != nil || info.Cipher != "" {
		t.Fatalf("copy to plaintext: %+v %v", info, err)
	}
	if got, err := getAll(t, e, "plain", GetOptions{}); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("plaintext copy: %v", err)
	}
	info, err = e.CopyObject(ctx, "bucket", "plain", "bucket", "re", CopyOptions{Put: PutOptions{Encryption: keys.encryption("re", true)}})
	if err != nil || info.Cipher == "" {
		t.Fatalf("copy to encrypted: %+v %v", info, err)
	}
	if got, err := getAll(t, e, "re", GetOptions{Unseal: keys.unseal}); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("re-encrypted copy: %v", err)
	}
	// Onto itself keeping its encryption: metadata only, still readable.
	info, err = e.CopyObject(ctx, "bucket", "src", "bucket", "src", CopyOptions{ReplaceMetadata: true, KeepEncryption: true,
		SourceUnseal: keys.unseal, Put: PutOptions{ContentType: "text/new"}})
	if err != nil || info.ContentType != "text/new" || info.Sealed["name"] != "src" {
		t.Fatalf("in-place copy: %+v %v", info, err)
	}
	if got, err := getAll(t, e, "src", GetOptions{Unseal: keys.unseal}); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("after in-place copy: %v", err)
	}
	// Onto itself with a new key: the data is rewritten under it.
	info, err = e.CopyObject(ctx, "bucket", "src", "bucket", "src", CopyOptions{ReplaceMetadata: true,
		SourceUnseal: keys.unseal, Put: PutOptions{Encryption: keys.encryption("src2", false)}})
	if err != nil || info.Sealed["name"] != "src2" {
		t.Fatalf("re-keying copy: %+v %v", info, err)
	}
	if got, err := getAll(t, e, "src", GetOptions{Unseal: keys.unseal}); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("after re-keying: %v", err)
	}
}

// Healing rebuilds lost ciphertext shards without any key, and the
// object reads back the same; damage beyond parity never yields a wrong
// byte.
func TestEncryptedHealAndDamage(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	ctx := context.Background()
	for trial, size := range []int{100, 3000, 70000, 300000} {
		e, paths := testEngine(t, 16, Config{BlockSize: 4096, InlineLimit: 2048, Heal: HealConfig{Disabled: true}})
		var keys testKeys
		data := randBytes(r, size)
		if _, err := e.PutObject(ctx, "bucket", "k", bytes.NewReader(data), int64(size), PutOptions{Encryption: keys.encryption("k", false)}); err != nil {
			t.Fatal(err)
		}
		for _, i := range r.Perm(16)[:4] {
			p := drivePos(e, "k", paths[i])
			if trial%2 == 0 || !corruptShardData(t, r, e, paths[i], "k", p) {
				dropRecord(t, engineDrive(e, "k", p), "k")
			}
		}
		if got, err := getAll(t, e, "k", GetOptions{Unseal: keys.unseal}); err != nil || !bytes.Equal(got, data) {
			t.Fatalf("size %d with 4 shards lost: %v", size, err)
		}
		res, err := e.HealObject(ctx, "bucket", "k", HealOptions{Deep: true})
		if err != nil {
			t.Fatalf("heal size %d: %v", size, err)
		}
		if res2, err := e.HealObject(ctx, "bucket", "k", HealOptions{Deep: true}); err != nil || res2.Damaged() {
			t.Fatalf("size %d after heal (%+v): still damaged %+v %v", size, res, res2, err)
		}
		// Now lose four other drives: only the healed shards can carry it.
		for _, i := range r.Perm(16)[:4] {
			dropRecord(t, engineDrive(e, "k", drivePos(e, "k", paths[i])), "k")
		}
		if got, err := getAll(t, e, "k", GetOptions{Unseal: keys.unseal}); err != nil || !bytes.Equal(got, data) {
			t.Fatalf("size %d after heal and four more losses: %v", size, err)
		}
	}
}

// Reading with a reader that returns data in odd pieces still gives the
// plaintext (Read, not only WriteTo).
func TestEncryptedSmallReads(t *testing.T) {
	e, _ := testEngine(t, 16, Config{BlockSize: 4096})
	ctx := context.Background()
	var keys testKeys
	data := recognisable(3*sse.PackageSize + 11)
	if _, err := e.PutObject(ctx, "bucket", "k", bytes.NewReader(data), int64(len(data)), PutOptions{Encryption: keys.encryption("k", false)}); err != nil {
		t.Fatal(err)
	}
	rd, err := e.GetObject(ctx, "bucket", "k", GetOptions{Unseal: keys.unseal})
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	var got []byte
	buf := make([]byte, 777)
	for {
		n, err := rd.Read(buf)
		got = append(got, buf[:n]...)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(got, data) {
		t.Fatal("small reads differ")
	}
}

// Concurrent encrypted PUTs and GETs under every hashing backend: each
// object reads back exactly as written. The plaintext buffers are pooled
// between writes and reads, so a buffer handed back while still in use
// (the hasher releasing it before the data was sealed) shows up here as
// objects whose bytes differ while their ETags match.
func TestEncryptedConcurrentWrites(t *testing.T) {
	for _, pol := range []hashing.Policy{hashing.PolicyInline, hashing.PolicyPipelined, hashing.PolicyMultibuffer} {
		t.Run(string(pol), func(t *testing.T) {
			h, err := hashing.New(hashing.Config{Policy: pol})
			if err != nil {
				t.Fatal(err)
			}
			defer h.Close()
			e, _ := testEngine(t, 8, Config{BlockSize: 4 * sse.PackageSize, InlineLimit: 1024, Hashing: h})
			ctx := context.Background()
			var keys testKeys
			const writers, each = 6, 8
			encs := map[string]*Encryption{}
			for w := 0; w < writers; w++ {
				for i := 0; i < each; i++ {
					name := fmt.Sprintf("w%d/%d", w, i)
					encs[name] = keys.encryption(name, false)
				}
			}
			var wg sync.WaitGroup
			errs := make(chan error, writers)
			for w := 0; w < writers; w++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					r := rand.New(rand.NewSource(int64(w)))
					for i := 0; i < each; i++ {
						name := fmt.Sprintf("w%d/%d", w, i)
						data := randBytes(r, 1+r.Intn(5*4*sse.PackageSize))
						if _, err := e.PutObject(ctx, "bucket", name, bytes.NewReader(data), int64(len(data)), PutOptions{Encryption: encs[name]}); err != nil {
							errs <- fmt.Errorf("put %s: %w", name, err)
							return
						}
						got, err := getAll(t, e, name, GetOptions{Unseal: keys.unseal})
						if err != nil || !bytes.Equal(got, data) {
							errs <- fmt.Errorf("%s read back wrong (%d of %d bytes): %v", name, len(got), len(data), err)
							return
						}
					}
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
		})
	}
}

// Object lock holds encrypted versions as any others: a retained version
// cannot be deleted, and its retention and legal hold change in place
// without touching (or needing the key of) its data.
func TestEncryptedObjectLock(t *testing.T) {
	e, clock, _ := lockEngine(t, Config{})
	ctx := context.Background()
	var keys testKeys
	data := recognisable(100000)
	oi, err := e.PutObject(ctx, "locked", "k", bytes.NewReader(data), int64(len(data)), PutOptions{
		Encryption: keys.encryption("k", true),
		Lock:       objectlock.Lock{Mode: objectlock.Governance, RetainUntil: clock.now().Add(24 * time.Hour)}})
	if err != nil {
		t.Fatal(err)
	}
	if err := ldelete(e, "k", oi.VersionID, false); !errors.Is(err, ErrObjectLocked) {
		t.Fatalf("delete of a retained encrypted version: %v", err)
	}
	if _, err := e.SetObjectLegalHold(ctx, "locked", "k", oi.VersionID, objectlock.HoldOn); err != nil {
		t.Fatal(err)
	}
	h, err := lhead(t, e, "k", oi.VersionID)
	if err != nil || h.Lock.LegalHold != objectlock.HoldOn || h.ETag != oi.ETag || h.Sealed["name"] != "k" {
		t.Fatalf("head after legal hold: %+v %v", h, err)
	}
	if got, err := getAll2(e, "locked", "k", GetOptions{VersionID: oi.VersionID, Unseal: keys.unseal}); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("read of the locked encrypted version: %v", err)
	}
}

func getAll2(e *Engine, bucket, key string, opts GetOptions) ([]byte, error) {
	rd, err := e.GetObject(context.Background(), bucket, key, opts)
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	return io.ReadAll(rd)
}
