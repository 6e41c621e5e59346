package kms

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"golang.org/x/crypto/chacha20"
	"golang.org/x/crypto/chacha20poly1305"
)

// The static key of the minio-sse fixture (internal/minioformat/testdata,
// mkfixture/sse.go: a fixed test key, no one's secret) and a data key
// MinIO itself sealed under it for enc/sse-s3.txt.
const (
	fixtureMinIOKey = "fixture-key:c2hhcmRzdG9yZSBtaW5pbyBmaXh0dXJlIGttcyBrZXk="
	fixtureDataKey  = "q8AYqOq7lig65Znhr+5ujMYZfWMGF86b795S6yKb2/pq4AU7esch1Q07wKjPCN00qDxY9Hw+f2Kyerzqd4v0blJX+Ah8R0+CRKjyVw=="
	fixtureAD       = `{"enc":"enc/sse-s3.txt"}`
)

func minioBuiltin(t testing.TB, keys ...string) *Builtin {
	t.Helper()
	var sk []SecretKey
	for _, k := range keys {
		s, err := ParseSecretKey(k)
		if err != nil {
			t.Fatal(err)
		}
		sk = append(sk, s)
	}
	b, err := NewBuiltin(sk...)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// sealMinIO seals plain as MinIO's static key does (the test's own
// encoder: AES-256-GCM under HMAC-SHA256(secret, iv), iv and nonce
// appended), or as the JSON form with ChaCha20-Poly1305 under
// HChaCha20(secret, iv).
func sealMinIO(t testing.TB, secret, plain, ad []byte, chacha bool) []byte {
	t.Helper()
	iv, nonce := bytes.Repeat([]byte{1}, 16), bytes.Repeat([]byte{2}, 12)
	if chacha {
		k, err := chacha20.HChaCha20(secret, iv)
		if err != nil {
			t.Fatal(err)
		}
		a, _ := chacha20poly1305.New(k)
		j, _ := json.Marshal(map[string]any{"aead": "ChaCha20Poly1305", "id": "x", "iv": iv, "nonce": nonce, "bytes": a.Seal(nil, nonce, plain, ad)})
		return j
	}
	m := hmac.New(sha256.New, secret)
	m.Write(iv)
	b, _ := aes.NewCipher(m.Sum(nil))
	a, _ := cipher.NewGCM(b)
	out := a.Seal(nil, nonce, plain, ad)
	return append(append(out, iv...), nonce...)
}

func TestDecryptMinIOFixture(t *testing.T) {
	b := minioBuiltin(t, fixtureMinIOKey)
	ct, _ := base64.StdEncoding.DecodeString(fixtureDataKey)
	dk, err := b.DecryptMinIO("fixture-key", ct, []byte(fixtureAD))
	if err != nil || len(dk) != 32 {
		t.Fatalf("MinIO's data key: %v (%d bytes)", err, len(dk))
	}
	if _, err := b.DecryptMinIO("fixture-key", ct, []byte(`{"enc":"enc/other.txt"}`)); !errors.Is(err, ErrDecrypt) {
		t.Errorf("another object's context: %v", err)
	}
	if _, err := b.DecryptMinIO("other", ct, []byte(fixtureAD)); !errors.Is(err, ErrKeyNotFound) {
		t.Errorf("another key name: %v", err)
	}
	// A rotated key file: the old secret as version 1 still opens it.
	r := minioBuiltin(t, fixtureMinIOKey, "fixture-key:"+base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{9}, 32)))
	if _, err := r.DecryptMinIO("fixture-key", ct, []byte(fixtureAD)); err != nil {
		t.Errorf("after rotation: %v", err)
	}
}

func TestDecryptMinIOHostile(t *testing.T) {
	secret := bytes.Repeat([]byte{5}, 32)
	b := minioBuiltin(t, "k:"+base64.StdEncoding.EncodeToString(secret))
	plain := bytes.Repeat([]byte{0x42}, 32)
	ad := []byte(`{"b":"b/o"}`)
	for _, chacha := range []bool{false, true} {
		ct := sealMinIO(t, secret, plain, ad, chacha)
		got, err := b.DecryptMinIO("k", ct, ad)
		if err != nil || !bytes.Equal(got, plain) {
			t.Fatalf("chacha %v: %v", chacha, err)
		}
		for i := range ct {
			bad := bytes.Clone(ct)
			bad[i] ^= 1
			if got, err := b.DecryptMinIO("k", bad, ad); err == nil && !bytes.Equal(got, plain) {
				t.Fatalf("chacha %v: byte %d flipped opened to other bytes", chacha, i)
			} else if err != nil && !errors.Is(err, ErrDecrypt) {
				t.Fatalf("chacha %v: byte %d flipped: %v", chacha, i, err)
			}
		}
		for cut := 0; cut < len(ct); cut += 7 {
			if _, err := b.DecryptMinIO("k", ct[:cut], ad); !errors.Is(err, ErrDecrypt) {
				t.Fatalf("chacha %v: cut at %d: %v", chacha, cut, err)
			}
		}
	}
	for name, ct := range map[string]string{
		"unknown aead": `{"aead":"ROT13","iv":"AQEBAQEBAQEBAQEBAQEBAQ==","nonce":"AgICAgICAgICAgIC","bytes":""}`,
		"short iv":     `{"aead":"ChaCha20Poly1305","iv":"AQ==","nonce":"AgICAgICAgICAgIC","bytes":"AAAA"}`,
		"huge":         strings.Repeat("x", 5000),
		"empty":        "",
	} {
		_, err := b.DecryptMinIO("k", []byte(ct), ad)
		if !errors.Is(err, ErrDecrypt) {
			t.Errorf("%s: %v", name, err)
		}
		if err != nil && strings.Contains(fmt.Sprint(err), base64.StdEncoding.EncodeToString(secret)) {
			t.Errorf("%s: the error shows the secret", name)
		}
	}
}

func FuzzDecryptMinIO(f *testing.F) {
	secret := bytes.Repeat([]byte{5}, 32)
	b := minioBuiltin(f, "k:"+base64.StdEncoding.EncodeToString(secret))
	f.Add(sealMinIO(f, secret, []byte("data key"), []byte("ad"), false), []byte("ad"))
	f.Add(sealMinIO(f, secret, []byte("data key"), []byte("ad"), true), []byte("ad"))
	f.Fuzz(func(t *testing.T, ct, ad []byte) {
		got, err := b.DecryptMinIO("k", ct, ad)
		if err == nil && len(got) > len(ct) {
			t.Fatalf("%d bytes from a ciphertext of %d", len(got), len(ct))
		}
		if err != nil && !errors.Is(err, ErrDecrypt) {
			t.Fatalf("error %v not ErrDecrypt", err)
		}
	})
}
