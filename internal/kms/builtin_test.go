package kms

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"testing"
)

func base64Std(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

// assertNoLeak fails if msg holds secret or any 12-byte stretch of it.
func assertNoLeak(t *testing.T, what, msg, secret string) {
	t.Helper()
	if secret == "" {
		return
	}
	if strings.Contains(msg, secret) {
		t.Errorf("%s %q contains the secret", what, msg)
		return
	}
	const w = 12
	for i := 0; i+w <= len(secret); i++ {
		if strings.Contains(msg, secret[i:i+w]) {
			t.Errorf("%s %q contains part of the secret (%q)", what, msg, secret[i:i+w])
			return
		}
	}
}

func TestParseSecretKey(t *testing.T) {
	good := randomSecret(t)
	b64 := func(n int) string { return base64Std(bytes.Repeat([]byte{0x5a}, n)) }
	long := strings.Repeat("A", 100_000)

	k, err := ParseSecretKey("my-minio-key:" + good + "\n")
	if err != nil || k.Name() != "my-minio-key" {
		t.Fatalf("ParseSecretKey(valid) = %v, %v", k, err)
	}

	for _, tc := range []struct {
		name, in, secret, want string
	}{
		{"empty", "", "", "empty"},
		{"blank", " \n\t", "", "empty"},
		{"no colon (a bare secret)", good, good, "no ':'"},
		{"empty name", ":" + good, good, "name"},
		{"colon in name", "a:b:" + good, good, "name"},
		{"space in name", "my key:" + good, good, "name"},
		{"slash in name", "../x:" + good, good, "name"},
		{"name too long", strings.Repeat("n", 256) + ":" + good, good, "256 bytes long"},
		{"nothing after colon", "k:", "", "nothing after"},
		{"16 bytes", "k:" + b64(16), b64(16), "16 bytes"},
		{"31 bytes", "k:" + b64(31), b64(31), "31 bytes"},
		{"33 bytes", "k:" + b64(33), b64(33), "33 bytes"},
		{"64 bytes", "k:" + b64(64), b64(64), "64 bytes"},
		{"bad base64 char", "k:" + good[:10] + "!" + good[11:], good[:10], "base64"},
		{"missing padding", "k:" + strings.TrimRight(good, "="), strings.TrimRight(good, "="), "base64"},
		{"url alphabet", "k:" + strings.NewReplacer("+", "-", "/", "_").Replace(base64Std(bytes.Repeat([]byte{0xfb, 0xff}, 16))),
			strings.NewReplacer("+", "-", "/", "_").Replace(base64Std(bytes.Repeat([]byte{0xfb, 0xff}, 16))), "base64"},
		{"hex not base64", "k:" + strings.Repeat("ab", 32), strings.Repeat("ab", 32), "48 bytes"},
		{"all zero", "k:" + b64(0) + base64Std(make([]byte, 32)), "", "zero"},
		{"very long", "k:" + long, long, "bytes long"},
		{"very long name", long + ":" + good, good, "bytes long"},
		{"nul in secret", "k:" + good[:20] + "\x00" + good[21:], good[:20], "base64"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k, err := ParseSecretKey(tc.in)
			if err == nil {
				t.Fatalf("ParseSecretKey accepted it: %v", k)
			}
			msg := err.Error()
			if !strings.Contains(msg, tc.want) {
				t.Errorf("error %q does not say %q", msg, tc.want)
			}
			assertNoLeak(t, "error", msg, tc.secret)
			assertNoLeak(t, "error", msg, strings.TrimSpace(tc.in))
			if len(msg) > 200 {
				t.Errorf("error is %d bytes long", len(msg))
			}
		})
	}
}

func TestSecretsNeverPrinted(t *testing.T) {
	secret := randomSecret(t)
	k, err := ParseSecretKey("k:" + secret)
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewBuiltin(k)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := base64.StdEncoding.DecodeString(secret)
	values := []any{k, &k, []SecretKey{k}, struct{ K SecretKey }{k}, struct{ k SecretKey }{k}, b, *b, struct{ b *Builtin }{b}}
	for _, v := range values {
		for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%d"} {
			out := fmt.Sprintf(verb, v)
			assertNoLeak(t, "fmt "+verb, out, secret)
			assertNoLeak(t, "fmt "+verb, out, fmt.Sprintf("%x", raw))
			assertNoLeak(t, "fmt "+verb, out, fmt.Sprint(raw))
		}
	}
	if s := k.String(); !strings.Contains(s, `"k"`) || !strings.Contains(s, "redacted") {
		t.Errorf("SecretKey.String() = %q", s)
	}
	if s := b.String(); !strings.Contains(s, `"k" (1 version)`) {
		t.Errorf("Builtin.String() = %q", s)
	}
}

func TestNewBuiltin(t *testing.T) {
	if _, err := NewBuiltin(); err == nil {
		t.Error("NewBuiltin() with no keys succeeded")
	}
	if _, err := NewBuiltin(SecretKey{}); err == nil {
		t.Error("NewBuiltin(zero SecretKey) succeeded")
	}
	k := newSecretKey(t, "k")
	if _, err := NewBuiltin(k, newSecretKey(t, "j"), k); err == nil || !strings.Contains(err.Error(), "repeats version 1") {
		t.Errorf("NewBuiltin with a repeated version = %v", err)
	}
	b, err := NewBuiltin(k, newSecretKey(t, "j"), newSecretKey(t, "k"))
	if err != nil {
		t.Fatal(err)
	}
	if b.DefaultKey() != "k" || b.Versions("k") != 2 || b.Versions("j") != 1 || b.Versions("x") != 0 {
		t.Errorf("default %q, versions k=%d j=%d", b.DefaultKey(), b.Versions("k"), b.Versions("j"))
	}
	if st := b.Status(context.Background()); !st.OK || st.Kind != "builtin" || st.Endpoint != "" || st.DefaultKey != "k" {
		t.Errorf("Status = %+v", st)
	}
	err = b.CreateKey(context.Background(), "new")
	if !errors.Is(err, ErrNotSupported) || errors.Is(err, ErrKeyExists) {
		t.Errorf("CreateKey = %v; want ErrNotSupported", err)
	}
}

func TestLoadBuiltin(t *testing.T) {
	s1, s2, s3, s4 := randomSecret(t), randomSecret(t), randomSecret(t), randomSecret(t)
	files := map[string]string{
		"/keys":          "# rotated 2024-01\n\nsse:" + s2 + "\r\n  other:" + s3 + "  \n# rotated 2024-06\nsse:" + s4 + "\n",
		"/only-comments": "# nothing\n\n",
		"/bad":           "# one\nsse:" + s2 + "\nsse:" + s3[:20] + "\n",
	}
	readFile := func(p string) ([]byte, error) {
		if f, ok := files[p]; ok {
			return []byte(f), nil
		}
		return nil, &fs.PathError{Op: "open", Path: p, Err: fs.ErrNotExist}
	}
	envOf := func(kv ...string) func(string) string {
		m := map[string]string{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) string { return m[k] }
	}
	load := func(t *testing.T, env func(string) string) *Builtin {
		t.Helper()
		b, ok, err := LoadBuiltin(env, readFile)
		if err != nil || !ok {
			t.Fatalf("LoadBuiltin = %v, %v", ok, err)
		}
		return b
	}

	t.Run("nothing set", func(t *testing.T) {
		b, ok, err := LoadBuiltin(envOf(), readFile)
		if b != nil || ok || err != nil {
			t.Fatalf("LoadBuiltin = %v, %v, %v; want nil, false, nil", b, ok, err)
		}
	})
	t.Run("env key", func(t *testing.T) {
		b := load(t, envOf("SHARDSTORE_KMS_SECRET_KEY", "sse:"+s1))
		if b.DefaultKey() != "sse" || b.Versions("sse") != 1 {
			t.Fatal(b)
		}
	})
	t.Run("minio env key", func(t *testing.T) {
		b := load(t, envOf("MINIO_KMS_SECRET_KEY", "minio-key:"+s1))
		if b.DefaultKey() != "minio-key" {
			t.Fatal(b)
		}
	})
	t.Run("shardstore spelling wins", func(t *testing.T) {
		b := load(t, envOf("SHARDSTORE_KMS_SECRET_KEY", "a:"+s1, "MINIO_KMS_SECRET_KEY", "b:"+s2))
		if b.DefaultKey() != "a" || b.Versions("b") != 0 {
			t.Fatal(b)
		}
	})
	t.Run("file only", func(t *testing.T) {
		b := load(t, envOf("MINIO_KMS_SECRET_KEY_FILE", "/keys"))
		if b.DefaultKey() != "sse" || b.Versions("sse") != 2 || b.Versions("other") != 1 {
			t.Fatal(b)
		}
	})
	t.Run("env key then file versions", func(t *testing.T) {
		env := envOf("SHARDSTORE_KMS_SECRET_KEY", "sse:"+s1, "SHARDSTORE_KMS_SECRET_KEY_FILE", "/keys")
		b := load(t, env)
		if b.DefaultKey() != "sse" || b.Versions("sse") != 3 {
			t.Fatal(b)
		}
		// Version 1 is the env key: a Builtin of the env key alone sealed
		// it, and the three-version one (a restart with the file added)
		// unseals it and seals under version 3.
		only, _ := NewBuiltin(mustParse(t, "sse:"+s1))
		dk, err := only.GenerateKey(context.Background(), "sse", nil)
		if err != nil {
			t.Fatal(err)
		}
		got, err := b.Decrypt(context.Background(), "sse", dk.Ciphertext, nil)
		if err != nil || !bytes.Equal(got, dk.Plaintext) {
			t.Fatalf("version 1 does not unseal: %v", err)
		}
		re, err := b.Rewrap(context.Background(), "sse", dk.Ciphertext, nil)
		if _, v, _ := BuiltinCiphertextVersion(re); err != nil || v != 3 {
			t.Fatalf("Rewrap = version %d, %v; want 3", v, err)
		}
		// The file's last sse line alone is not version 3: a ciphertext
		// names its version, so it does not unseal there.
		if _, err := only.Decrypt(context.Background(), "sse", re, nil); !errors.Is(err, ErrKeyNotFound) {
			t.Fatalf("Decrypt of version 3 with one version = %v; want ErrKeyNotFound", err)
		}
	})
	t.Run("bad env key", func(t *testing.T) {
		_, ok, err := LoadBuiltin(envOf("SHARDSTORE_KMS_SECRET_KEY", "sse:"+s1[:30]), readFile)
		if err == nil || !ok || !strings.Contains(err.Error(), "SHARDSTORE_KMS_SECRET_KEY") {
			t.Fatalf("LoadBuiltin = %v, %v", ok, err)
		}
		assertNoLeak(t, "error", err.Error(), s1[:30])
	})
	t.Run("bad file line", func(t *testing.T) {
		_, _, err := LoadBuiltin(envOf("SHARDSTORE_KMS_SECRET_KEY_FILE", "/bad"), readFile)
		if err == nil || !strings.Contains(err.Error(), "/bad: line 3:") {
			t.Fatalf("LoadBuiltin = %v; want the file and line", err)
		}
		assertNoLeak(t, "error", err.Error(), s2)
		assertNoLeak(t, "error", err.Error(), s3[:20])
	})
	t.Run("missing file", func(t *testing.T) {
		_, _, err := LoadBuiltin(envOf("SHARDSTORE_KMS_SECRET_KEY_FILE", "/nope"), readFile)
		if !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("LoadBuiltin = %v", err)
		}
	})
	t.Run("file of comments", func(t *testing.T) {
		_, _, err := LoadBuiltin(envOf("SHARDSTORE_KMS_SECRET_KEY_FILE", "/only-comments"), readFile)
		if err == nil || !strings.Contains(err.Error(), "no keys") {
			t.Fatalf("LoadBuiltin = %v", err)
		}
	})
	t.Run("env key repeated in file", func(t *testing.T) {
		_, _, err := LoadBuiltin(envOf("SHARDSTORE_KMS_SECRET_KEY", "sse:"+s2, "SHARDSTORE_KMS_SECRET_KEY_FILE", "/keys"), readFile)
		if err == nil || !strings.Contains(err.Error(), "repeats") {
			t.Fatalf("LoadBuiltin = %v", err)
		}
	})
}

func mustParse(t *testing.T, s string) SecretKey {
	t.Helper()
	k, err := ParseSecretKey(s)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestBuiltinCiphertextFormat(t *testing.T) {
	b, _ := NewBuiltin(newSecretKey(t, "sse-key"))
	ctx := context.Background()
	dk, err := b.GenerateKey(ctx, "sse-key", Context{"a": "bc"})
	if err != nil {
		t.Fatal(err)
	}
	ct := dk.Ciphertext
	if len(ct) != 78+len("sse-key") || ct[0] != 1 || ct[1] != 7 || string(ct[2:9]) != "sse-key" || !bytes.Equal(ct[9:13], []byte{0, 0, 0, 1}) {
		t.Fatalf("ciphertext %x does not follow the documented layout", ct)
	}
	if name, v, ok := BuiltinCiphertextVersion(ct); name != "sse-key" || v != 1 || !ok {
		t.Fatalf("BuiltinCiphertextVersion = %q, %d, %v", name, v, ok)
	}
	// Length prefixes keep {"a":"bc"} and {"ab":"c"} apart.
	if _, err := b.Decrypt(ctx, "sse-key", ct, Context{"ab": "c"}); !errors.Is(err, ErrDecrypt) {
		t.Fatalf("Decrypt with a context of the same concatenation = %v", err)
	}
	// The header is bound: a version rewritten to 0 or one that does not
	// exist fails, and so does another name of the same length.
	for i, want := range map[int]error{12: ErrDecrypt, 11: ErrKeyNotFound, 2: ErrDecrypt} {
		c := bytes.Clone(ct)
		if i == 12 {
			c[12] = 0
		} else {
			c[i] ^= 1
		}
		if _, err := b.Decrypt(ctx, "sse-key", c, Context{"a": "bc"}); !errors.Is(err, want) {
			t.Errorf("byte %d changed: Decrypt = %v; want %v", i, err, want)
		}
	}
}

// FuzzBuiltinDecrypt feeds hostile ciphertexts to Decrypt and Rewrap:
// neither may panic, and neither may unseal anything but the genuine
// ciphertexts among the seeds.
//
// The secrets are random per process: the fuzzer's workers are separate
// processes that each make their own genuine ciphertexts, so with a fixed
// secret one process's genuine ciphertext would be another's "forgery".
func FuzzBuiltinDecrypt(f *testing.F) {
	b, err := NewBuiltin(newSecretKey(f, "fuzz"), newSecretKey(f, "fuzz"))
	if err != nil {
		f.Fatal(err)
	}
	ctx := context.Background()
	kc := Context{"bucket": "b"}
	var genuine [][]byte
	for range 3 {
		dk, err := b.GenerateKey(ctx, "fuzz", kc)
		if err != nil {
			f.Fatal(err)
		}
		genuine = append(genuine, dk.Ciphertext)
		f.Add(dk.Ciphertext)
		f.Add(dk.Ciphertext[:len(dk.Ciphertext)-1])
		c := bytes.Clone(dk.Ciphertext)
		c[len(c)-1] ^= 1
		f.Add(c)
	}
	f.Add([]byte{})
	f.Add([]byte{1})
	f.Add([]byte{1, 0})
	f.Add([]byte{1, 255})
	f.Add([]byte{1, 4, 'f', 'u', 'z', 'z', 0xff, 0xff, 0xff, 0xff})
	f.Add([]byte("vault:v1:AAAA"))
	f.Add(bytes.Repeat([]byte{1}, 300))
	f.Fuzz(func(t *testing.T, ct []byte) {
		isGenuine := false
		for _, g := range genuine {
			isGenuine = isGenuine || bytes.Equal(g, ct)
		}
		plain, err := b.Decrypt(ctx, "fuzz", ct, kc)
		if err == nil && !isGenuine {
			t.Fatalf("Decrypt unsealed a forged ciphertext %x to %x", ct, plain)
		}
		if err != nil && !errors.Is(err, ErrDecrypt) && !errors.Is(err, ErrKeyNotFound) {
			t.Fatalf("Decrypt error %v is neither ErrDecrypt nor ErrKeyNotFound", err)
		}
		if isGenuine && (err != nil || len(plain) != 32) {
			t.Fatalf("Decrypt of a genuine ciphertext = %v", err)
		}
		re, err := b.Rewrap(ctx, "fuzz", ct, kc)
		if err == nil && !isGenuine {
			t.Fatalf("Rewrap accepted a forged ciphertext %x (gave %x)", ct, re)
		}
		if _, err := b.Decrypt(ctx, "fuzz", ct, Context{"bucket": "c"}); err == nil {
			t.Fatalf("Decrypt with the wrong context unsealed %x", ct)
		}
	})
}
