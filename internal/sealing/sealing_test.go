package sealing

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	"github.com/shardstore/shardstore/internal/kms"
	"github.com/shardstore/shardstore/internal/sse"
)

func builtin(t testing.TB, lines ...string) *kms.Builtin {
	t.Helper()
	var keys []kms.SecretKey
	for _, l := range lines {
		k, err := kms.ParseSecretKey(l)
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k)
	}
	b, err := kms.NewBuiltin(keys...)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func secret(name string, fill byte) string {
	return name + ":" + base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{fill}, 32))
}

func TestSchemesRoundTrip(t *testing.T) {
	ctx := context.Background()
	k := Keys{KMS: builtin(t, secret("main", 1), secret("other", 2))}
	ck := bytes.Repeat([]byte{9}, 32)
	ctxJSON := base64.StdEncoding.EncodeToString([]byte(`{"team":"blue"}`))
	for _, req := range []Request{
		{Scheme: SchemeS3},
		{Scheme: SchemeKMS},
		{Scheme: SchemeKMS, KMSKey: "other", KMSContext: ctxJSON, BucketKey: true},
		{Scheme: SchemeC, CustomerKey: ck},
	} {
		objectKey, sealed, hide, err := k.NewKey(ctx, "bkt", "a/key", req)
		if err != nil {
			t.Fatalf("%+v: %v", req.Scheme, err)
		}
		if hide != (req.Scheme != SchemeS3) {
			t.Errorf("%s: hideETag %v", req.Scheme, hide)
		}
		for _, v := range sealed {
			if strings.Contains(v, base64.StdEncoding.EncodeToString(objectKey)) || strings.Contains(v, base64.StdEncoding.EncodeToString(ck)) {
				t.Fatalf("%s: a key is visible in the sealed map", req.Scheme)
			}
		}
		var customer []byte
		if req.Scheme == SchemeC {
			customer = ck
		}
		got, err := k.Unseal(ctx, "bkt", "a/key", sealed, customer)
		if err != nil || !bytes.Equal(got, objectKey) {
			t.Fatalf("%s: unseal: %v", req.Scheme, err)
		}
		// Bound to the object: the same map under another key does not unseal.
		if _, err := k.Unseal(ctx, "bkt", "b/key", sealed, customer); err == nil {
			t.Errorf("%s: a sealed map unsealed for another object", req.Scheme)
		}
		if req.KMSKey == "other" && sealed[KMSKey] != "other" {
			t.Errorf("KMS key id recorded as %q", sealed[KMSKey])
		}
	}
}

func TestCustomerKeyChecks(t *testing.T) {
	ctx := context.Background()
	k := Keys{}
	ck := bytes.Repeat([]byte{9}, 32)
	_, sealed, _, err := k.NewKey(ctx, "b", "k", Request{Scheme: SchemeC, CustomerKey: ck})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		sealed map[string]string
		key    []byte
		want   error
	}{
		{sealed, nil, ErrCustomerKeyRequired},
		{sealed, bytes.Repeat([]byte{8}, 32), ErrCustomerKeyWrong},
		{map[string]string{Scheme: SchemeS3}, ck, ErrNotApplicable},
		{map[string]string{}, ck, ErrNotApplicable},
		{map[string]string{Scheme: SchemeC}, ck, ErrDamaged},
	}
	for i, c := range cases {
		if err := CheckCustomerKey(c.sealed, c.key); !errors.Is(err, c.want) {
			t.Errorf("case %d: %v, want %v", i, err, c.want)
		}
	}
	if _, err := k.Unseal(ctx, "b", "k", sealed, bytes.Repeat([]byte{8}, 32)); !errors.Is(err, ErrCustomerKeyWrong) {
		t.Errorf("unseal with a wrong customer key: %v", err)
	}
	if _, _, _, err := k.NewKey(ctx, "b", "k", Request{Scheme: SchemeS3}); !errors.Is(err, ErrNoKMS) {
		t.Errorf("SSE-S3 without a KMS: %v", err)
	}
	if _, _, _, err := k.NewKey(ctx, "b", "k", Request{Scheme: SchemeC, CustomerKey: ck[:16]}); err == nil {
		t.Error("a 16-byte customer key was accepted")
	}
}

func TestRewrapAfterRotation(t *testing.T) {
	ctx := context.Background()
	old := Keys{KMS: builtin(t, secret("main", 1))}
	objectKey, sealed, _, err := old.NewKey(ctx, "b", "k", Request{Scheme: SchemeS3})
	if err != nil {
		t.Fatal(err)
	}
	rotated := Keys{KMS: builtin(t, secret("main", 1), secret("main", 3))}
	if got, err := rotated.Unseal(ctx, "b", "k", sealed, nil); err != nil || !bytes.Equal(got, objectKey) {
		t.Fatalf("old object after rotation: %v", err)
	}
	nm, changed, err := rotated.Rewrap(ctx, "b", "k", sealed)
	if err != nil || !changed || nm[KMSDataKey] == sealed[KMSDataKey] || nm[SealedKey] != sealed[SealedKey] {
		t.Fatalf("rewrap: changed %v err %v", changed, err)
	}
	if name, v, ok := kms.BuiltinCiphertextVersion(mustB64(t, nm[KMSDataKey])); !ok || name != "main" || v != 2 {
		t.Fatalf("rewrapped under %s v%d", name, v)
	}
	if got, err := rotated.Unseal(ctx, "b", "k", nm, nil); err != nil || !bytes.Equal(got, objectKey) {
		t.Fatalf("after rewrap: %v", err)
	}
	// SSE-C has no KMS data key: nothing to rewrap.
	_, cs, _, _ := rotated.NewKey(ctx, "b", "k", Request{Scheme: SchemeC, CustomerKey: bytes.Repeat([]byte{5}, 32)})
	if _, changed, err := rotated.Rewrap(ctx, "b", "k", cs); err != nil || changed {
		t.Fatalf("SSE-C rewrap: %v %v", changed, err)
	}
}

func mustB64(t *testing.T, s string) []byte {
	t.Helper()
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Hostile sealed maps (a damaged record, or one written by something
// else) fail with an error, never a key and never a panic.
func TestHostileSealedMaps(t *testing.T) {
	ctx := context.Background()
	k := Keys{KMS: builtin(t, secret("main", 1))}
	_, good, _, err := k.NewKey(ctx, "b", "k", Request{Scheme: SchemeS3})
	if err != nil {
		t.Fatal(err)
	}
	with := func(n, v string) map[string]string {
		m := map[string]string{}
		for a, b := range good {
			m[a] = b
		}
		if v == "\x00delete" {
			delete(m, n)
		} else {
			m[n] = v
		}
		return m
	}
	for name, m := range map[string]map[string]string{
		"no scheme":          with(Scheme, "\x00delete"),
		"unknown scheme":     with(Scheme, "ROT13"),
		"sealed key not b64": with(SealedKey, "%%%"),
		"sealed key short":   with(SealedKey, "AAAA"),
		"data key not b64":   with(KMSDataKey, "%%%"),
		"data key garbage":   with(KMSDataKey, base64.StdEncoding.EncodeToString([]byte("garbage"))),
		"unknown KMS key":    with(KMSKey, "nope"),
		"hostile KMS key":    with(KMSKey, "../../sys/seal"),
		"empty":              {},
	} {
		if key, err := k.Unseal(ctx, "b", "k", m, nil); err == nil || key != nil {
			t.Errorf("%s: unsealed (%v)", name, err)
		}
	}
}

func FuzzUnseal(f *testing.F) {
	f.Add("SSE-S3", "AAAA", "main", "AAAA")
	f.Add("SSE-C", "", "", "")
	k := Keys{KMS: builtin(f, secret("main", 1))}
	f.Fuzz(func(t *testing.T, scheme, sealedKey, kmsKey, dataKey string) {
		m := map[string]string{Scheme: scheme, SealedKey: sealedKey, KMSKey: kmsKey, KMSDataKey: dataKey,
			SSECSalt: sealedKey, SSECFinger: dataKey}
		var customer []byte
		if scheme == SchemeC {
			customer = bytes.Repeat([]byte{1}, sse.KeySize)
		}
		key, err := k.Unseal(context.Background(), "b", "k", m, customer)
		if err == nil || key != nil {
			t.Fatalf("a forged sealed map unsealed: %v", m)
		}
	})
}

// TestSealGiven: a given object key is sealed like a new one and
// unseals to itself; a key of the wrong length is refused.
func TestSealGiven(t *testing.T) {
	k := Keys{KMS: builtin(t, secret("main", 1))}
	ctx := context.Background()
	given := bytes.Repeat([]byte{0x5a}, 32)
	for _, scheme := range []string{SchemeS3, SchemeKMS} {
		got, sealed, _, err := k.SealGiven(ctx, "b", "k", Request{Scheme: scheme, KMSKey: "main"}, given)
		if err != nil || !bytes.Equal(got, given) {
			t.Fatalf("%s: %v", scheme, err)
		}
		back, err := k.Unseal(ctx, "b", "k", sealed, nil)
		if err != nil || !bytes.Equal(back, given) {
			t.Fatalf("%s: unseal %v", scheme, err)
		}
		if _, err := k.Unseal(ctx, "b", "other", sealed, nil); err == nil {
			t.Fatalf("%s: unsealed for another key", scheme)
		}
	}
	for _, n := range []int{0, 16, 31, 33} {
		if _, _, _, err := k.SealGiven(ctx, "b", "k", Request{Scheme: SchemeS3}, make([]byte, n)); err == nil {
			t.Errorf("a %d-byte object key was sealed", n)
		}
	}
}
