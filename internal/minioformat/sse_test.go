package minioformat

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"

	"golang.org/x/crypto/chacha20poly1305"
)

// sealDARE writes plain as a DARE 2.0 stream under key, as MinIO's sio
// library does (the test's own encoder of the format the decoder reads:
// header, AEAD over the payload with the header's first 4 bytes as
// associated data, the sequence number XORed into the nonce's last 4).
func sealDARE(t testing.TB, plain, key []byte, chacha bool, nonce [12]byte) []byte {
	t.Helper()
	var a cipher.AEAD
	var err error
	if chacha {
		a, err = chacha20poly1305.New(key)
	} else {
		var b cipher.Block
		if b, err = aes.NewCipher(key); err == nil {
			a, err = cipher.NewGCM(b)
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	var out []byte
	for seq := uint32(0); len(plain) > 0; seq++ {
		n := min(len(plain), darePayload)
		final := n == len(plain)
		h := make([]byte, dareHeader)
		h[0] = 0x20
		if chacha {
			h[1] = 1
		}
		binary.LittleEndian.PutUint16(h[2:], uint16(n-1))
		copy(h[4:], nonce[:])
		h[4] &^= 0x80
		if final {
			h[4] |= 0x80
		}
		var nc [12]byte
		copy(nc[:], h[4:])
		binary.LittleEndian.PutUint32(nc[8:], binary.LittleEndian.Uint32(nc[8:])^seq)
		out = append(out, h...)
		out = a.Seal(out, nc[:], plain[:n], h[:4])
		plain = plain[n:]
	}
	return out
}

var testKey = bytes.Repeat([]byte{7}, 32)

func TestDARERoundTrip(t *testing.T) {
	for _, size := range []int{0, 1, 100, darePayload - 1, darePayload, darePayload + 1, 3*darePayload + 17} {
		for _, chacha := range []bool{false, true} {
			plain := bytes.Repeat([]byte("0123456789abcdef"), size/16+1)[:size]
			stream := sealDARE(t, plain, testKey, chacha, [12]byte{1, 2, 3})
			if int64(len(stream)) != DAREEncryptedSize(int64(size)) {
				t.Fatalf("size %d: stream of %d bytes, DAREEncryptedSize says %d", size, len(stream), DAREEncryptedSize(int64(size)))
			}
			if n, err := DAREDecryptedSize(int64(len(stream))); err != nil || n != int64(size) {
				t.Fatalf("size %d: DAREDecryptedSize %d, %v", size, n, err)
			}
			got, err := io.ReadAll(iotest.OneByteReader(NewDAREReader(bytes.NewReader(stream), testKey)))
			if err != nil || !bytes.Equal(got, plain) {
				t.Fatalf("size %d chacha %v: reader %v, %d bytes", size, chacha, err, len(got))
			}
			got, err = OpenDARE(nil, stream, testKey)
			if err != nil || !bytes.Equal(got, plain) {
				t.Fatalf("size %d chacha %v: OpenDARE %v", size, chacha, err)
			}
		}
	}
}

// TestDAREHostile: a flipped byte anywhere, a cut anywhere, packages
// reordered, dropped, repeated, from another stream, data after the
// final package, another key: an error wrapping ErrCorrupt or
// ErrUnsupported, never plaintext that did not authenticate.
func TestDAREHostile(t *testing.T) {
	plain := bytes.Repeat([]byte{0xab}, 2*darePayload+10)
	stream := sealDARE(t, plain, testKey, false, [12]byte{9})
	pkg := darePackageMax
	check := func(name string, s, key []byte) {
		t.Helper()
		got, err := io.ReadAll(NewDAREReader(bytes.NewReader(s), key))
		if err == nil {
			t.Errorf("%s: read %d bytes without an error", name, len(got))
			return
		}
		if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrUnsupported) {
			t.Errorf("%s: %v, want ErrCorrupt", name, err)
		}
		// What came back is a prefix of whole authenticated packages.
		if len(got)%darePayload != 0 && len(got) != len(plain) || !bytes.Equal(got, plain[:len(got)]) {
			t.Errorf("%s: returned %d bytes that are not whole authenticated packages", name, len(got))
		}
		if _, err := OpenDARE(nil, s, key); err == nil {
			t.Errorf("%s: OpenDARE accepted it", name)
		}
	}
	for i := 0; i < len(stream); i += 97 {
		s := bytes.Clone(stream)
		s[i] ^= 0x10
		check("flip "+itoa(i), s, testKey)
	}
	for _, cut := range []int{1, dareHeader - 1, dareHeader, pkg - 1, pkg, pkg + 1, 2 * pkg, len(stream) - 1} {
		check("cut at "+itoa(cut), stream[:cut], testKey)
	}
	p0, p1, p2 := stream[:pkg], stream[pkg:2*pkg], stream[2*pkg:]
	join := func(ps ...[]byte) []byte { return bytes.Join(ps, nil) }
	check("swapped", join(p1, p0, p2), testKey)
	check("dropped", join(p0, p2), testKey)
	check("repeated", join(p0, p0, p1, p2), testKey)
	check("after final", join(stream, p2), testKey)
	other := sealDARE(t, plain, testKey, false, [12]byte{8})
	check("other stream's package", join(p0, other[pkg:2*pkg], p2), testKey)
	check("wrong key", stream, bytes.Repeat([]byte{8}, 32))
	check("short key", stream, []byte("short"))
	v1 := bytes.Clone(stream)
	v1[0] = 0x10
	check("version 1.0", v1, testKey)
	c := bytes.Clone(stream)
	c[1] = 2
	check("cipher 2", c, testKey)
	// A non-final package shorter than 64 KiB (sealed so that only the
	// rule catches it).
	short := sealDARE(t, plain[:10], testKey, false, [12]byte{9})
	short[4] &^= 0x80
	check("short non-final", short, testKey)
	if _, err := DAREDecryptedSize(dareHeader + dareTag); err == nil {
		t.Error("DAREDecryptedSize of an empty package")
	}
	if _, err := DAREDecryptedSize(-1); err == nil {
		t.Error("DAREDecryptedSize(-1)")
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

func FuzzDARE(f *testing.F) {
	f.Add(sealDARE(f, []byte("hello"), testKey, false, [12]byte{}))
	f.Add(sealDARE(f, bytes.Repeat([]byte{1}, 300), testKey, true, [12]byte{3}))
	f.Add([]byte{0x20, 0, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, s []byte) {
		got, err := io.ReadAll(NewDAREReader(bytes.NewReader(s), testKey))
		if err == nil {
			// Only a stream sealed under the key decrypts: sealing what came
			// out again must give the same stream (same nonce).
			if len(s) == 0 {
				if len(got) != 0 {
					t.Fatal("plaintext from nothing")
				}
				return
			}
			var nonce [12]byte
			copy(nonce[:], s[4:dareHeader])
			if !bytes.Equal(sealDARE(t, got, testKey, s[1] == 1, nonce), s) {
				t.Fatal("a stream decrypted that is not what sealing its plaintext gives")
			}
		}
		_, _ = OpenDARE(nil, s, testKey)
	})
}

// sealedObject makes the metadata of an object MinIO encrypted with
// objectKey under kek, as MinIO writes it.
func sealedObject(t testing.TB, kind string, kek []byte, objectKey [32]byte, bucket, object string, extra map[string]string) *Object {
	t.Helper()
	iv := [32]byte{5, 6, 7}
	mac := hmac.New(sha256.New, kek)
	mac.Write(iv[:])
	mac.Write([]byte(kind))
	mac.Write([]byte(sealAlgorithm))
	mac.Write([]byte(bucket + "/" + object))
	sealed := sealDARE(t, objectKey[:], mac.Sum(nil), false, [12]byte{4})
	sys := map[string][]byte{
		metaSealIV:        []byte(base64.StdEncoding.EncodeToString(iv[:])),
		metaSealAlgorithm: []byte(sealAlgorithm),
	}
	switch kind {
	case "SSE-S3":
		sys[metaSealedKeyS3] = []byte(base64.StdEncoding.EncodeToString(sealed))
	case "SSE-KMS":
		sys[metaSealedKeyKMS] = []byte(base64.StdEncoding.EncodeToString(sealed))
	case "SSE-C":
		sys[metaSealedKeySSEC] = []byte(base64.StdEncoding.EncodeToString(sealed))
	}
	if kind != "SSE-C" {
		sys[metaKMSKeyID] = []byte("my-key")
		sys[metaKMSDataKey] = []byte(base64.StdEncoding.EncodeToString([]byte("the KMS's ciphertext")))
	}
	for k, v := range extra {
		if v == "\x00delete" {
			delete(sys, k)
			continue
		}
		sys[k] = []byte(v)
	}
	return &Object{MetaSys: sys}
}

func TestSSEKeysUnseal(t *testing.T) {
	kek := bytes.Repeat([]byte{3}, 32)
	ok := [32]byte{1, 2, 3, 4}
	for _, kind := range []string{"SSE-S3", "SSE-KMS", "SSE-C"} {
		o := sealedObject(t, kind, kek, ok, "b", "dir/k", nil)
		s, err := o.SSEKeys()
		if err != nil || s.Kind != kind {
			t.Fatalf("%s: %v %+v", kind, err, s)
		}
		got, err := s.UnsealObjectKey(kek, "b", "dir/k")
		if err != nil || got != ok {
			t.Fatalf("%s: unseal %v", kind, err)
		}
		for _, bad := range []struct{ kek, bucket, object string }{
			{string(bytes.Repeat([]byte{4}, 32)), "b", "dir/k"}, {string(kek), "b", "dir/k2"}, {string(kek), "c", "dir/k"},
		} {
			if _, err := s.UnsealObjectKey([]byte(bad.kek), bad.bucket, bad.object); !errors.Is(err, ErrCorrupt) {
				t.Errorf("%s: unsealed with %q/%q or another key: %v", kind, bad.bucket, bad.object, err)
			}
		}
	}
	// The ETag: sealed under HMAC(object key, "SSE-etag").
	mac := hmac.New(sha256.New, ok[:])
	mac.Write([]byte("SSE-etag"))
	md := bytes.Repeat([]byte{0xaa}, 16)
	sealedETag := hex.EncodeToString(sealDARE(t, md, mac.Sum(nil), false, [12]byte{2}))
	s3 := &SSE{Kind: "SSE-S3"}
	if shown, plain, err := ShownETag(s3, ok, sealedETag); err != nil || shown != hex.EncodeToString(md) || plain != shown {
		t.Errorf("SSE-S3 ETag: %q %q %v", shown, plain, err)
	}
	kms := &SSE{Kind: "SSE-KMS"}
	if shown, _, err := ShownETag(kms, ok, sealedETag); err != nil || shown != sealedETag[len(sealedETag)-32:] {
		t.Errorf("SSE-KMS ETag: %q %v", shown, err)
	}
	if shown, plain, err := ShownETag(s3, ok, "0123456789abcdef0123456789abcdef-3"); err != nil || shown != "0123456789abcdef0123456789abcdef-3" || plain != "" {
		t.Errorf("multipart ETag: %q %q %v", shown, plain, err)
	}
	// The S3 checksums: sealed under HMAC(object key, "object-checksum").
	cmac := hmac.New(sha256.New, ok[:])
	cmac.Write([]byte("object-checksum"))
	plainCS := append([]byte{0x10}, 1, 2, 3, 4) // CRC32C
	o := &Object{MetaSys: map[string][]byte{MetaChecksums: sealDARE(t, plainCS, cmac.Sum(nil), false, [12]byte{6})}}
	if cs, err := o.OpenChecksums(ok); err != nil || len(cs) != 1 || cs[0].Algorithm != "CRC32C" {
		t.Errorf("sealed checksums: %v %+v", err, cs)
	}
	if _, err := o.Checksums(); err == nil {
		t.Error("sealed checksums parsed without opening them")
	}
	if _, err := o.OpenChecksums([32]byte{9}); !errors.Is(err, ErrCorrupt) {
		t.Errorf("sealed checksums opened with another key: %v", err)
	}
	if cs, err := (&Object{}).OpenChecksums(ok); cs != nil || err != nil {
		t.Errorf("no checksums: %v %v", cs, err)
	}
	for _, bad := range []string{"zz", sealedETag[:len(sealedETag)-2], "00" + sealedETag[2:]} {
		if _, _, err := ShownETag(s3, ok, bad); err == nil {
			t.Errorf("ETag %q opened", bad)
		}
	}
}

// TestSSEKeysHostile: malformed seals are errors (never a panic, never
// a guess).
func TestSSEKeysHostile(t *testing.T) {
	kek := bytes.Repeat([]byte{3}, 32)
	cases := map[string]map[string]string{
		"no IV":             {metaSealIV: "\x00delete"},
		"IV not base64":     {metaSealIV: strings.Repeat("!", 44)},
		"IV short":          {metaSealIV: base64.StdEncoding.EncodeToString(make([]byte, 16))},
		"old seal":          {metaSealAlgorithm: "DARE-SHA256"},
		"no seal algorithm": {metaSealAlgorithm: "\x00delete"},
		"sealed key short":  {metaSealedKeyS3: base64.StdEncoding.EncodeToString(make([]byte, 63))},
		"sealed key long":   {metaSealedKeyS3: base64.StdEncoding.EncodeToString(make([]byte, 65))},
		"no data key":       {metaKMSDataKey: "\x00delete"},
		"no key id":         {metaKMSKeyID: "\x00delete"},
		"data key not b64":  {metaKMSDataKey: "%%%"},
		"data key empty":    {metaKMSDataKey: ""},
		"data key huge":     {metaKMSDataKey: strings.Repeat("A", 8000)},
		"key id huge":       {metaKMSKeyID: strings.Repeat("k", 300)},
		"context not b64":   {metaKMSContext: "%%%"},
		"context not json":  {metaKMSContext: base64.StdEncoding.EncodeToString([]byte("[1,2]"))},
		"context numbers":   {metaKMSContext: base64.StdEncoding.EncodeToString([]byte(`{"a":1}`))},
		"context huge":      {metaKMSContext: strings.Repeat("A", 70000)},
	}
	for name, extra := range cases {
		o := sealedObject(t, "SSE-S3", kek, [32]byte{}, "b", "k", extra)
		s, err := o.SSEKeys()
		if err == nil {
			t.Errorf("%s: accepted: %+v", name, s)
		} else if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrUnsupported) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if s, err := (&Object{}).SSEKeys(); s != nil || err != nil {
		t.Errorf("plain object: %v %v", s, err)
	}
	if _, err := (&Object{MetaSys: map[string][]byte{metaSealIV: []byte("x")}}).SSEKeys(); !errors.Is(err, ErrUnsupported) {
		t.Errorf("no scheme: %v", err)
	}
}

func FuzzSSEKeys(f *testing.F) {
	kek := bytes.Repeat([]byte{3}, 32)
	o := sealedObject(f, "SSE-KMS", kek, [32]byte{1}, "b", "k", nil)
	f.Add(string(o.MetaSys[metaSealIV]), string(o.MetaSys[metaSealedKeyKMS]), "my-key", string(o.MetaSys[metaKMSDataKey]),
		base64.StdEncoding.EncodeToString([]byte(`{"a":"b"}`)), "0123")
	f.Fuzz(func(t *testing.T, iv, sealed, keyID, dataKey, ctx, etag string) {
		o := &Object{MetaSys: map[string][]byte{metaSealIV: []byte(iv), metaSealedKeyKMS: []byte(sealed), metaKMSKeyID: []byte(keyID),
			metaKMSDataKey: []byte(dataKey), metaKMSContext: []byte(ctx), metaSealAlgorithm: []byte(sealAlgorithm)}}
		s, err := o.SSEKeys()
		if err != nil {
			return
		}
		_ = s.KMSAssociatedData("b", keyID)
		k, err := s.UnsealObjectKey(kek, "b", "k")
		_, _, _ = ShownETag(s, k, etag)
		o.MetaSys[MetaChecksums] = []byte(etag)
		_, _ = o.OpenChecksums(k)
	})
}

// TestKMSAssociatedData: the context JSON as MinIO writes it: sorted
// keys, the bucket's pair added unless the client gave one, MinIO's
// escapes (<>& and control characters as \u00XX, but \n \r \t short;
// invalid UTF-8 as \ufffd; U+2028/2029 escaped).
func TestKMSAssociatedData(t *testing.T) {
	s3 := &SSE{Kind: "SSE-S3", ContextMap: map[string]string{"x": "y"}}
	if got := string(s3.KMSAssociatedData("b", "d/k")); got != `{"b":"b/d/k"}` {
		t.Errorf("SSE-S3: %s", got)
	}
	kms := &SSE{Kind: "SSE-KMS", ContextMap: map[string]string{"z": "<&>\b\f\n\r\t\x01\"\\", "a": "\xff\u2028é"}}
	want := `{"a":"\ufffd\u2028é","b":"b/k","z":"\u003c\u0026\u003e\u0008\u000c\n\r\t\u0001\"\\"}`
	if got := string(kms.KMSAssociatedData("b", "k")); got != want {
		t.Errorf("SSE-KMS:\n got %s\nwant %s", got, want)
	}
	own := &SSE{Kind: "SSE-KMS", ContextMap: map[string]string{"b": "mine"}}
	if got := string(own.KMSAssociatedData("b", "k")); got != `{"b":"mine"}` {
		t.Errorf("client's bucket pair: %s", got)
	}
	// Plain text is what encoding/json writes (map keys sorted).
	m := map[string]string{"bucket": "bucket/a b/ü.txt", "k": "v"}
	j, _ := json.Marshal(m)
	if got := string((&SSE{Kind: "SSE-KMS", ContextMap: map[string]string{"k": "v"}}).KMSAssociatedData("bucket", "a b/ü.txt")); got != string(j) {
		t.Errorf("got %s, encoding/json %s", got, j)
	}
}
