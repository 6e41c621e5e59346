package sse

import (
	"bytes"
	"crypto/rand"
	"errors"
	"testing"
)

func random(n int) []byte {
	b := make([]byte, n)
	rand.Read(b)
	return b
}

// openAll opens a sealed stream of n plaintext bytes package by package.
func openAll(t *testing.T, s *Stream, sealed []byte, n int64) ([]byte, error) {
	t.Helper()
	var out []byte
	pk := Packages(n)
	for seq := int64(0); seq < pk; seq++ {
		plain := min(int64(PackageSize), n-seq*PackageSize)
		l := int(plain) + TagSize
		if len(sealed) < l {
			return nil, ErrAuth
		}
		var err error
		out, err = s.OpenPackage(out, sealed[:l], uint64(seq), seq == pk-1)
		if err != nil {
			return nil, err
		}
		sealed = sealed[l:]
	}
	return out, nil
}

func TestRoundTripAndSizes(t *testing.T) {
	for _, c := range []Cipher{AES256GCM, ChaCha20Poly1305} {
		for _, n := range []int{0, 1, PackageSize - 1, PackageSize, PackageSize + 1, 5*PackageSize + 7} {
			s, err := NewStream(c, NewKey())
			if err != nil {
				t.Fatal(err)
			}
			plain := random(n)
			sealed := s.SealBlock(nil, plain, 0, true)
			if int64(len(sealed)) != EncryptedSize(int64(n)) {
				t.Fatalf("%s %d: sealed %d bytes, EncryptedSize says %d", c, n, len(sealed), EncryptedSize(int64(n)))
			}
			got, err := openAll(t, s, sealed, int64(n))
			if err != nil || !bytes.Equal(got, plain) {
				t.Fatalf("%s %d: round trip failed: %v", c, n, err)
			}
			if n > 0 && bytes.Contains(sealed, plain[:min(n, 32)]) && n >= 16 {
				t.Fatalf("%s %d: plaintext visible in ciphertext", c, n)
			}
		}
	}
}

func TestBlocksChainAsOneStream(t *testing.T) {
	s, _ := NewStream(DefaultCipher(), NewKey())
	pb := PlainBlockSize(1 << 20)
	plain := random(2*pb + 100)
	var sealed []byte
	sealed = s.SealBlock(sealed, plain[:pb], 0, false)
	sealed = s.SealBlock(sealed, plain[pb:2*pb], uint64(pb/PackageSize), false)
	sealed = s.SealBlock(sealed, plain[2*pb:], uint64(2*pb/PackageSize), true)
	if len(sealed) != 2*EncryptedBlockSize(pb)+int(EncryptedSize(100)) {
		t.Fatalf("blocks do not line up: %d", len(sealed))
	}
	if PlainOfBlock(EncryptedBlockSize(pb)) != pb {
		t.Fatalf("PlainOfBlock(%d) = %d, want %d", EncryptedBlockSize(pb), PlainOfBlock(EncryptedBlockSize(pb)), pb)
	}
	got, err := openAll(t, s, sealed, int64(len(plain)))
	if err != nil || !bytes.Equal(got, plain) {
		t.Fatalf("chained blocks: %v", err)
	}
}

func TestTamperingIsCaught(t *testing.T) {
	s, _ := NewStream(AES256GCM, NewKey())
	n := 3 * PackageSize
	plain := random(n)
	sealed := s.SealBlock(nil, plain, 0, true)
	pkg := PackageSize + TagSize
	cases := map[string]func() ([]byte, error){
		"flipped bit": func() ([]byte, error) {
			b := bytes.Clone(sealed)
			b[pkg+100] ^= 1
			return openAll(t, s, b, int64(n))
		},
		"swapped packages": func() ([]byte, error) {
			b := bytes.Clone(sealed)
			copy(b[:pkg], sealed[pkg:2*pkg])
			copy(b[pkg:2*pkg], sealed[:pkg])
			return openAll(t, s, b, int64(n))
		},
		"cut at a package boundary": func() ([]byte, error) {
			// the second package read as the last one: no final flag
			return openAll(t, s, sealed[:2*pkg], int64(2*PackageSize))
		},
		"wrong key": func() ([]byte, error) {
			other, _ := NewStream(AES256GCM, NewKey())
			return openAll(t, other, sealed, int64(n))
		},
		"other cipher": func() ([]byte, error) {
			other, _ := NewStream(ChaCha20Poly1305, NewKey())
			return openAll(t, other, sealed, int64(n))
		},
	}
	for name, open := range cases {
		got, err := open()
		if !errors.Is(err, ErrAuth) || got != nil {
			t.Errorf("%s: got %d bytes, err %v; want ErrAuth and nothing", name, len(got), err)
		}
	}
}

func TestPartKeysDiffer(t *testing.T) {
	k := NewKey()
	a, b := PartKey(k, "id-1"), PartKey(k, "id-2")
	if bytes.Equal(a, b) || bytes.Equal(a, PartKey(NewKey(), "id-1")) || !bytes.Equal(a, PartKey(k, "id-1")) {
		t.Fatal("PartKey must be a function of both the object key and the data id")
	}
	if len(a) != KeySize {
		t.Fatalf("PartKey is %d bytes", len(a))
	}
}

func TestSealKey(t *testing.T) {
	kek, obj := NewKey(), NewKey()
	sealed, err := SealKey(kek, obj, "bucket/key")
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(sealed, obj) {
		t.Fatal("object key visible in its sealed form")
	}
	got, err := UnsealKey(kek, sealed, "bucket/key")
	if err != nil || !bytes.Equal(got, obj) {
		t.Fatalf("unseal: %v", err)
	}
	hostile := map[string]func() ([]byte, error){
		"other context": func() ([]byte, error) { return UnsealKey(kek, sealed, "bucket/other") },
		"other kek":     func() ([]byte, error) { return UnsealKey(NewKey(), sealed, "bucket/key") },
		"flipped":       func() ([]byte, error) { b := bytes.Clone(sealed); b[20] ^= 4; return UnsealKey(kek, b, "bucket/key") },
		"short":         func() ([]byte, error) { return UnsealKey(kek, sealed[:10], "bucket/key") },
		"empty":         func() ([]byte, error) { return UnsealKey(kek, nil, "bucket/key") },
		"long":          func() ([]byte, error) { return UnsealKey(kek, append(bytes.Clone(sealed), 0), "bucket/key") },
	}
	for name, f := range hostile {
		if k, err := f(); !errors.Is(err, ErrAuth) || k != nil {
			t.Errorf("%s: %v, %d bytes; want ErrAuth", name, err, len(k))
		}
	}
	if _, err := SealKey(kek, obj[:16], "x"); err == nil {
		t.Error("a short object key was sealed")
	}
}

func TestFingerprintAndETag(t *testing.T) {
	ck, salt := NewKey(), random(32)
	fp := KeyFingerprint(ck, salt)
	if !FingerprintMatches(ck, salt, fp) || FingerprintMatches(NewKey(), salt, fp) || FingerprintMatches(ck, random(32), fp) {
		t.Fatal("fingerprint must recognise exactly the key and salt it was made with")
	}
	if bytes.Contains(fp, ck) {
		t.Fatal("fingerprint contains the key")
	}
	k := NewKey()
	e1, e2 := HiddenETag(k, "d41d8cd98f00b204e9800998ecf8427e"), HiddenETag(NewKey(), "d41d8cd98f00b204e9800998ecf8427e")
	if len(e1) != 32 || e1 == e2 || e1 == "d41d8cd98f00b204e9800998ecf8427e" || e1 != HiddenETag(k, "d41d8cd98f00b204e9800998ecf8427e") {
		t.Fatalf("hidden ETags: %s %s", e1, e2)
	}
}

func TestKeyAndCipherChecks(t *testing.T) {
	for _, n := range []int{0, 16, 31, 33} {
		if _, err := NewStream(AES256GCM, make([]byte, n)); err == nil {
			t.Errorf("a %d-byte key was accepted", n)
		}
	}
	for _, c := range []string{"", "AES-128-GCM", "aes-256-gcm", "ROT13", "AES-256-GCM\x00"} {
		if _, err := ParseCipher(c); err == nil {
			t.Errorf("cipher %q accepted", c)
		}
	}
	if _, err := NewStream("ROT13", NewKey()); err == nil {
		t.Error("unknown cipher accepted")
	}
}

// FuzzOpenPackage: hostile sealed packages never open and never panic.
func FuzzOpenPackage(f *testing.F) {
	s, _ := NewStream(AES256GCM, bytes.Repeat([]byte{7}, KeySize))
	f.Add(s.SealBlock(nil, []byte("hello"), 0, true), uint64(0), true)
	f.Add([]byte{}, uint64(1), false)
	f.Add(make([]byte, TagSize), uint64(0), true)
	f.Fuzz(func(t *testing.T, sealed []byte, seq uint64, final bool) {
		legit := s.SealBlock(nil, []byte("hello"), 0, true)
		out, err := s.OpenPackage(nil, sealed, seq, final)
		if err == nil && !(bytes.Equal(sealed, legit) && seq == 0 && final) {
			t.Fatalf("a forged package opened: %q", out)
		}
	})
}

func BenchmarkSealBlock(b *testing.B) {
	for _, c := range []Cipher{AES256GCM, ChaCha20Poly1305} {
		b.Run(string(c), func(b *testing.B) {
			s, _ := NewStream(c, NewKey())
			plain := random(PlainBlockSize(1 << 20))
			dst := make([]byte, 0, EncryptedBlockSize(len(plain)))
			b.SetBytes(int64(len(plain)))
			for b.Loop() {
				s.SealBlock(dst[:0], plain, 0, false)
			}
		})
	}
}
