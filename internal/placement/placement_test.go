package placement

import (
	"encoding/binary"
	"strings"
	"testing"
)

// TestSipHashVector checks the SipHash-2-4 underneath against the
// reference vector of the SipHash paper (key 00..0f, message 00..0e).
func TestSipHashVector(t *testing.T) {
	var key [16]byte
	for i := range key {
		key[i] = byte(i)
	}
	msg := make([]byte, 15)
	for i := range msg {
		msg[i] = byte(i)
	}
	// A placer keyed by a UUID with those bytes.
	p, err := New(MinIOSipMod, "00010203-0405-0607-0809-0a0b0c0d0e0f")
	if err != nil {
		t.Fatal(err)
	}
	if p.k0 != binary.LittleEndian.Uint64(key[:8]) || p.k1 != binary.LittleEndian.Uint64(key[8:]) {
		t.Fatalf("keys %x %x", p.k0, p.k1)
	}
	const want = 0xa129ca6149be45e5
	for _, sets := range []int{2, 3, 7, 16} {
		if got := p.Set("any-bucket", string(msg), sets); got != int(uint64(want)%uint64(sets)) {
			t.Errorf("%d sets: set %d, want %d", sets, got, uint64(want)%uint64(sets))
		}
	}
}

// TestMinIOPlacement pins MinIO's placement in the multi-set fixture
// (internal/minioformat/testdata/minio-2sets: deployment id and the set
// each key's xl.meta is in; test/e2e TestMigrateFromMinIOSets adopts
// every key of it): the bucket is not hashed, a directory object is
// hashed by its stored name.
func TestMinIOPlacement(t *testing.T) {
	p, err := New(MinIOSipMod, "a74d4143-fcdb-4f17-a4d9-e16b667e9dfa")
	if err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]int{
		"folder-2/": 0, "multi-block-0.bin": 0, "ünïcødé/名前-1.txt": 0, "deep/1/a/b/leaf.txt": 0, "spread/k11.txt": 0, "compressed-1.s2z": 0,
		"folder-0/": 1, "multi-block-3.bin": 1, "ünïcødé/名前-0.txt": 1, "deep/0/a/b/leaf.txt": 1, "spread/k10.txt": 1, "compressed-0.s2z": 1,
		// The unfinished uploads' directories (.minio.sys/multipart/
		// <sha256 of plain/key>) are in the set of their key too.
		"unfinished-0.bin": 0, "unfinished-1.bin": 1,
	} {
		if got := p.Set("plain", key, 2); got != want {
			t.Errorf("%q: set %d, MinIO put it in set %d", key, got, want)
		}
	}
	for _, key := range []string{"a", "folder/", "ünïcødé/名前.txt"} {
		if p.Set("b1", key, 2) != p.Set("b2", key, 2) {
			t.Errorf("%q: the bucket changed the set", key)
		}
	}
	if MinIOName("folder/") != "folder__XLDIR__" || MinIOName("a/b") != "a/b" || MinIOName("/") != "__XLDIR__" {
		t.Errorf("MinIOName: %q %q %q", MinIOName("folder/"), MinIOName("a/b"), MinIOName("/"))
	}
	c, err := New(MinIOCRCMod, "not-a-uuid-is-fine-here")
	if err != nil {
		t.Fatal(err)
	}
	// crc32("a") = 0xe8b7be43.
	if got := c.Set("b", "a", 5); got != 0xe8b7be43%5 {
		t.Errorf("CRCMOD: set %d", got)
	}
	s, err := New(Shardstore, "dep")
	if err != nil {
		t.Fatal(err)
	}
	if s.Set("b1", "k", 64) == s.Set("b2", "k", 64) && s.Set("b3", "k", 64) == s.Set("b4", "k", 64) && s.Set("b1", "k", 64) == s.Set("b3", "k", 64) {
		t.Errorf("shardstore placement ignores the bucket")
	}
}

// TestHostile: unknown algorithms and ids are refused, never guessed.
func TestHostile(t *testing.T) {
	for _, c := range []struct {
		alg Algorithm
		id  string
	}{
		{"minio-sipmod", ""}, {"minio-sipmod", "zzzz"}, {"minio-sipmod", strings.Repeat("f", 1000)},
		{"xxh3", "dep"}, {"MINIO-SIPMOD", "5b0fd7a6-5d39-4b77-8a21-6a1a8b4c3a2e"}, {"\x00", "dep"},
	} {
		if _, err := New(c.alg, c.id); err == nil {
			t.Errorf("New(%q, %q) accepted", c.alg, c.id)
		}
	}
	for _, a := range []string{"", "sipmod", "SIPMOD+", "CRCMOD ", "SIPMOD+PARITY\x00", "ECMOD"} {
		if _, err := FromMinIO(a); err == nil {
			t.Errorf("FromMinIO(%q) accepted", a)
		}
	}
	for a, want := range map[string]Algorithm{"SIPMOD": MinIOSipMod, "SIPMOD+PARITY": MinIOSipMod, "CRCMOD": MinIOCRCMod} {
		if got, err := FromMinIO(a); err != nil || got != want {
			t.Errorf("FromMinIO(%q) = %q, %v", a, got, err)
		}
	}
}

// FuzzSet: any name lands in a set in range, the same one every time.
func FuzzSet(f *testing.F) {
	f.Add("bucket", "key", 2)
	f.Add("", "dir/", 16)
	f.Add("b", "\xff\x00", 1)
	f.Fuzz(func(t *testing.T, bucket, key string, sets int) {
		sets = sets%64 + 1
		if sets < 1 {
			sets += 64
		}
		for _, alg := range []Algorithm{Shardstore, MinIOSipMod, MinIOCRCMod} {
			p, err := New(alg, "5b0fd7a6-5d39-4b77-8a21-6a1a8b4c3a2e")
			if err != nil {
				t.Fatal(err)
			}
			s := p.Set(bucket, key, sets)
			if s < 0 || s >= sets || s != p.Set(bucket, key, sets) {
				t.Fatalf("%s: set %d of %d", alg, s, sets)
			}
		}
	})
}
