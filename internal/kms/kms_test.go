package kms

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// testKMS is the conformance suite every KMS passes. keyID must exist at
// version 1 (fresh); rotate makes a new newest version of it.
func testKMS(t *testing.T, k KMS, keyID string, rotate func()) {
	t.Helper()
	ctx := context.Background()
	kc := Context{"bucket": "photos", "object": "2024/cat.jpg"}
	unknown := "no-such-key-" + randomHex(t, 6)

	t.Run("RoundTrip", func(t *testing.T) {
		dk := mustGenerate(t, k, keyID, kc)
		if dk.KeyID != keyID || len(dk.Plaintext) != 32 || len(dk.Ciphertext) == 0 {
			t.Fatalf("GenerateKey = key %q, %d-byte plaintext, %d-byte ciphertext; want %q, 32, some", dk.KeyID, len(dk.Plaintext), len(dk.Ciphertext), keyID)
		}
		if bytes.Contains(dk.Ciphertext, dk.Plaintext) {
			t.Fatal("ciphertext holds the plaintext")
		}
		got, err := k.Decrypt(ctx, keyID, dk.Ciphertext, kc)
		if err != nil || !bytes.Equal(got, dk.Plaintext) {
			t.Fatalf("Decrypt = %x, %v; want the data key", got, err)
		}
		// A context with the same pairs in another map is the same context.
		same := Context{"object": "2024/cat.jpg", "bucket": "photos"}
		if got, err := k.Decrypt(ctx, keyID, dk.Ciphertext, same); err != nil || !bytes.Equal(got, dk.Plaintext) {
			t.Fatalf("Decrypt with an equal context = %v", err)
		}
		dk2 := mustGenerate(t, k, keyID, kc)
		if bytes.Equal(dk.Plaintext, dk2.Plaintext) || bytes.Equal(dk.Ciphertext, dk2.Ciphertext) {
			t.Fatal("two GenerateKey calls returned the same key or ciphertext")
		}
		// No context at all works too.
		dk3 := mustGenerate(t, k, keyID, nil)
		if got, err := k.Decrypt(ctx, keyID, dk3.Ciphertext, nil); err != nil || !bytes.Equal(got, dk3.Plaintext) {
			t.Fatalf("Decrypt without context = %v", err)
		}
	})

	t.Run("WrongContext", func(t *testing.T) {
		if k.Kind() == "vault" {
			// Transit binds context only for derived keys; the Vault
			// client sends none (see Vault), so a wrong context unseals.
			t.Skip("vault does not bind Context")
		}
		dk := mustGenerate(t, k, keyID, kc)
		for _, wrong := range []Context{
			nil,
			{"bucket": "photos"},
			{"bucket": "photos", "object": "2024/dog.jpg"},
			{"bucket": "photos", "object": "2024/cat.jpg", "extra": ""},
			{"bucketphotos": "", "object": "2024/cat.jpg"},
		} {
			if _, err := k.Decrypt(ctx, keyID, dk.Ciphertext, wrong); !errors.Is(err, ErrDecrypt) {
				t.Errorf("Decrypt with context %v = %v; want ErrDecrypt", wrong, err)
			}
			if _, err := k.Rewrap(ctx, keyID, dk.Ciphertext, wrong); !errors.Is(err, ErrDecrypt) {
				t.Errorf("Rewrap with context %v = %v; want ErrDecrypt", wrong, err)
			}
		}
	})

	t.Run("Tampered", func(t *testing.T) {
		dk := mustGenerate(t, k, keyID, kc)
		ct := dk.Ciphertext
		var bad [][]byte
		// Change one byte at several places in the sealed tail (for
		// Vault, to another base64 character so the change reaches the
		// cipher rather than the decoder).
		for _, back := range []int{2, 5, 17, 30} {
			c := bytes.Clone(ct)
			i := len(c) - back
			if c[i] == 'A' {
				c[i] = 'B'
			} else if k.Kind() == "vault" {
				c[i] = 'A'
			} else {
				c[i] ^= 0x40
			}
			bad = append(bad, c)
		}
		bad = append(bad, ct[:len(ct)-1], ct[:len(ct)/2], append(bytes.Clone(ct), 'A'), []byte("garbage"), nil)
		for _, c := range bad {
			if got, err := k.Decrypt(ctx, keyID, c, kc); !errors.Is(err, ErrDecrypt) {
				t.Errorf("Decrypt(%q) = %x, %v; want ErrDecrypt", c, got, err)
			}
			if got, err := k.Rewrap(ctx, keyID, c, kc); !errors.Is(err, ErrDecrypt) {
				t.Errorf("Rewrap(%q) = %x, %v; want ErrDecrypt", c, got, err)
			}
		}
	})

	t.Run("UnknownKey", func(t *testing.T) {
		dk := mustGenerate(t, k, keyID, kc)
		if _, err := k.GenerateKey(ctx, unknown, kc); !errors.Is(err, ErrKeyNotFound) {
			t.Errorf("GenerateKey(unknown) = %v; want ErrKeyNotFound", err)
		}
		if _, err := k.Decrypt(ctx, unknown, dk.Ciphertext, kc); !errors.Is(err, ErrKeyNotFound) {
			t.Errorf("Decrypt(unknown) = %v; want ErrKeyNotFound", err)
		}
		if _, err := k.Rewrap(ctx, unknown, dk.Ciphertext, kc); !errors.Is(err, ErrKeyNotFound) {
			t.Errorf("Rewrap(unknown) = %v; want ErrKeyNotFound", err)
		}
	})

	t.Run("Rotation", func(t *testing.T) {
		old := mustGenerate(t, k, keyID, kc)
		v1 := ciphertextVersion(t, old.Ciphertext)
		rotate()
		if got, err := k.Decrypt(ctx, keyID, old.Ciphertext, kc); err != nil || !bytes.Equal(got, old.Plaintext) {
			t.Fatalf("Decrypt of a ciphertext from before the rotation = %v", err)
		}
		fresh := mustGenerate(t, k, keyID, kc)
		if v := ciphertextVersion(t, fresh.Ciphertext); v != v1+1 {
			t.Fatalf("after rotation GenerateKey seals under version %d; want %d", v, v1+1)
		}
		re, err := k.Rewrap(ctx, keyID, old.Ciphertext, kc)
		if err != nil {
			t.Fatalf("Rewrap: %v", err)
		}
		if v := ciphertextVersion(t, re); v != v1+1 {
			t.Fatalf("Rewrap sealed under version %d; want %d", v, v1+1)
		}
		if k.Kind() == "vault" && !bytes.HasPrefix(old.Ciphertext, []byte("vault:v"+strconv.Itoa(v1)+":")) ||
			k.Kind() == "vault" && !bytes.HasPrefix(re, []byte("vault:v"+strconv.Itoa(v1+1)+":")) {
			t.Fatalf("vault ciphertext prefixes %.9q → %.9q; want vault:v%d → vault:v%d", old.Ciphertext, re, v1, v1+1)
		}
		if bytes.Contains(re, old.Plaintext) {
			t.Fatal("Rewrap's ciphertext holds the data key")
		}
		if got, err := k.Decrypt(ctx, keyID, re, kc); err != nil || !bytes.Equal(got, old.Plaintext) {
			t.Fatalf("Decrypt of the rewrapped ciphertext = %v; want the old data key", err)
		}
		// Rewrapping what is already newest leaves it as it is, so a
		// caller can tell what a rewrap changed.
		if re2, err := k.Rewrap(ctx, keyID, re, kc); err != nil || !bytes.Equal(re2, re) {
			t.Fatalf("Rewrap of a newest ciphertext = %v, changed %v; want it back unchanged", err, !bytes.Equal(re2, re))
		}
		// And a tampered newest ciphertext is still refused, not passed through.
		if k.Kind() == "builtin" {
			bad := bytes.Clone(re)
			bad[len(bad)-1] ^= 1
			if _, err := k.Rewrap(ctx, keyID, bad, kc); !errors.Is(err, ErrDecrypt) {
				t.Fatalf("Rewrap of a tampered newest ciphertext = %v; want ErrDecrypt", err)
			}
		}
	})

	t.Run("CreateKey", func(t *testing.T) {
		name := "created-" + randomHex(t, 6)
		err := k.CreateKey(ctx, name)
		if errors.Is(err, ErrNotSupported) {
			if k.Kind() != "builtin" {
				t.Fatalf("%s refuses CreateKey: %v", k.Kind(), err)
			}
			if errors.Is(err, ErrKeyExists) || errors.Is(k.CreateKey(ctx, keyID), ErrKeyExists) {
				t.Fatal("builtin CreateKey answers ErrKeyExists; want ErrNotSupported")
			}
			if !strings.Contains(err.Error(), "key file") {
				t.Errorf("builtin CreateKey error %q does not point at the key file", err)
			}
			return
		}
		if err != nil {
			t.Fatalf("CreateKey(%s) = %v", name, err)
		}
		if err := k.CreateKey(ctx, name); !errors.Is(err, ErrKeyExists) {
			t.Fatalf("CreateKey of an existing key = %v; want ErrKeyExists", err)
		}
		if err := k.CreateKey(ctx, keyID); !errors.Is(err, ErrKeyExists) {
			t.Fatalf("CreateKey(%s) = %v; want ErrKeyExists", keyID, err)
		}
		dk := mustGenerate(t, k, name, kc)
		if got, err := k.Decrypt(ctx, name, dk.Ciphertext, kc); err != nil || !bytes.Equal(got, dk.Plaintext) {
			t.Fatalf("Decrypt under the new key = %v", err)
		}
		// A ciphertext of one key does not unseal under another.
		if _, err := k.Decrypt(ctx, keyID, dk.Ciphertext, kc); !errors.Is(err, ErrDecrypt) {
			t.Fatalf("Decrypt under another key = %v; want ErrDecrypt", err)
		}
	})

	t.Run("Status", func(t *testing.T) {
		st := k.Status(ctx)
		if !st.OK || st.Error != "" || st.Kind != k.Kind() || st.DefaultKey != k.DefaultKey() {
			t.Fatalf("Status = %+v; want OK, kind %q, default key %q", st, k.Kind(), k.DefaultKey())
		}
	})

	t.Run("Concurrent", func(t *testing.T) {
		var wg sync.WaitGroup
		for g := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				c := Context{"object": strconv.Itoa(g)}
				for range 5 {
					dk, err := k.GenerateKey(ctx, keyID, c)
					if err != nil {
						t.Error(err)
						return
					}
					got, err := k.Decrypt(ctx, keyID, dk.Ciphertext, c)
					if err != nil || !bytes.Equal(got, dk.Plaintext) {
						t.Error(err)
						return
					}
				}
			}()
		}
		wg.Wait()
	})
}

func mustGenerate(t *testing.T, k KMS, keyID string, c Context) DataKey {
	t.Helper()
	dk, err := k.GenerateKey(context.Background(), keyID, c)
	if err != nil {
		t.Fatalf("GenerateKey(%s): %v", keyID, err)
	}
	return dk
}

// ciphertextVersion is the key version a builtin or vault ciphertext names.
func ciphertextVersion(t *testing.T, ct []byte) int {
	t.Helper()
	if rest, ok := bytes.CutPrefix(ct, []byte("vault:v")); ok {
		n, _, _ := bytes.Cut(rest, []byte(":"))
		v, err := strconv.Atoi(string(n))
		if err != nil {
			t.Fatalf("vault ciphertext %.12q has no version", ct)
		}
		return v
	}
	_, v, ok := BuiltinCiphertextVersion(ct)
	if !ok {
		t.Fatalf("%x is neither a builtin nor a vault ciphertext", ct)
	}
	return int(v)
}

func randomHex(t testing.TB, n int) string {
	t.Helper()
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// reloadable is a Builtin whose key list can grow, as a restart with a
// line appended to the key file does: the way builtin keys rotate.
type reloadable struct {
	keys []SecretKey
	cur  atomic.Pointer[Builtin]
}

func newReloadable(t *testing.T, keys ...SecretKey) *reloadable {
	r := &reloadable{}
	r.add(t, keys...)
	return r
}

func (r *reloadable) add(t *testing.T, keys ...SecretKey) {
	t.Helper()
	r.keys = append(r.keys, keys...)
	b, err := NewBuiltin(r.keys...)
	if err != nil {
		t.Fatal(err)
	}
	r.cur.Store(b)
}

func (r *reloadable) Kind() string       { return r.cur.Load().Kind() }
func (r *reloadable) DefaultKey() string { return r.cur.Load().DefaultKey() }
func (r *reloadable) GenerateKey(ctx context.Context, keyID string, c Context) (DataKey, error) {
	return r.cur.Load().GenerateKey(ctx, keyID, c)
}
func (r *reloadable) Decrypt(ctx context.Context, keyID string, ct []byte, c Context) ([]byte, error) {
	return r.cur.Load().Decrypt(ctx, keyID, ct, c)
}
func (r *reloadable) Rewrap(ctx context.Context, keyID string, ct []byte, c Context) ([]byte, error) {
	return r.cur.Load().Rewrap(ctx, keyID, ct, c)
}
func (r *reloadable) CreateKey(ctx context.Context, keyID string) error {
	return r.cur.Load().CreateKey(ctx, keyID)
}
func (r *reloadable) Status(ctx context.Context) Status { return r.cur.Load().Status(ctx) }

// newSecretKey makes a random key named name.
func newSecretKey(t testing.TB, name string) SecretKey {
	t.Helper()
	k, err := ParseSecretKey(name + ":" + randomSecret(t))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func randomSecret(t testing.TB) string {
	t.Helper()
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return base64Std(b)
}

func TestBuiltinConformance(t *testing.T) {
	t.Run("Direct", func(t *testing.T) {
		r := newReloadable(t, newSecretKey(t, "sse-default"), newSecretKey(t, "other"))
		testKMS(t, r, "sse-default", func() { r.add(t, newSecretKey(t, "sse-default")) })
	})
	// Through the counting wrapper too: it must change nothing.
	t.Run("Counting", func(t *testing.T) {
		c := NewCounting(newReloadable(t, newSecretKey(t, "k")))
		inner := c.Unwrap().(*reloadable)
		testKMS(t, c, "k", func() { inner.add(t, newSecretKey(t, "k")) })
		if s := c.Stats(); s["generate"].Calls == 0 || s["decrypt"].Failures == 0 || s["status"].Calls == 0 {
			t.Errorf("Counting saw %+v", s)
		}
	})
}

func TestCheckKeyName(t *testing.T) {
	for _, ok := range []string{"a", "Z", "0", "my-key", "key_1.2", "sse-default", strings.Repeat("k", 255)} {
		if err := CheckKeyName(ok); err != nil {
			t.Errorf("CheckKeyName(%q) = %v", ok, err)
		}
	}
	for _, bad := range hostileKeyNames {
		err := CheckKeyName(bad)
		if err == nil {
			t.Errorf("CheckKeyName(%q) accepted it", bad)
			continue
		}
		if len(err.Error()) > 200 || strings.ContainsAny(err.Error(), "\n\r\x00") {
			t.Errorf("CheckKeyName(%q) error is long or holds control characters: %q", bad, err)
		}
	}
}

// hostileKeyNames must never reach a Vault URL or name a builtin key.
var hostileKeyNames = []string{
	"",
	".",
	"..",
	"../sys/seal",
	"../../sys/raw/core",
	"a/b",
	"/abs",
	"a\\b",
	"a?version=1",
	"a#frag",
	"a%2fb",
	"%2e%2e",
	"a b",
	" a",
	"a\tb",
	"a\x00b",
	"a\nX-Vault-Token: x",
	"a\rb",
	"ключ",
	"a:b",
	"-lead",
	"_lead",
	".hidden",
	"a;b",
	"a&b=c",
	"a\"b",
	"a'b",
	"a<b>",
	"a@b",
	"a+b",
	strings.Repeat("a", 256),
	strings.Repeat("../", 100),
}
