package engine

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"math/rand"
	"strings"
	"testing"

	"github.com/shardstore/shardstore/internal/hashing"
)

// b64sum is the base64 checksum of data under algorithm alg.
func b64sum(t *testing.T, alg string, data []byte) string {
	t.Helper()
	h, err := hashing.NewChecksum(alg)
	if err != nil {
		t.Fatal(err)
	}
	h.Write(data)
	return base64.StdEncoding.EncodeToString(h.Sum(nil))
}

// mpu is one multipart upload of a test.
type mpu struct {
	id    string
	parts []CompletePart
	infos []PartInfo
	data  []byte
}

// startUpload creates an upload of key with opts and stores bodies as
// parts 1..n, each sent with checksum algorithm sent[i] ("" for none).
// The completion entries it returns carry no checksums.
func startUpload(t *testing.T, e *Engine, key string, opts PutOptions, bodies [][]byte, sent []string) *mpu {
	t.Helper()
	ctx := context.Background()
	id, err := e.NewMultipartUpload(ctx, "bucket", key, opts)
	if err != nil {
		t.Fatal(err)
	}
	u := &mpu{id: id}
	for i, b := range bodies {
		var po PartOptions
		if i < len(sent) && sent[i] != "" {
			v := b64sum(t, sent[i], b)
			po.ChecksumAlgorithm, po.ExpectedChecksum = sent[i], func() (string, error) { return v, nil }
		}
		pi, err := e.PutObjectPart(ctx, "bucket", key, id, i+1, bytes.NewReader(b), int64(len(b)), po)
		if err != nil {
			t.Fatalf("part %d: %v", i+1, err)
		}
		u.infos = append(u.infos, pi)
		u.parts = append(u.parts, CompletePart{Number: i + 1, ETag: pi.ETag})
		u.data = append(u.data, b...)
	}
	return u
}

// withSums returns u's entries naming each part's stored checksum.
func (u *mpu) withSums() []CompletePart {
	out := make([]CompletePart, len(u.parts))
	for i, p := range u.parts {
		p.Checksums = map[string]string{u.infos[i].ChecksumAlgorithm: u.infos[i].Checksum}
		out[i] = p
	}
	return out
}

func sentChecksum(alg, v, typ string) PutOptions {
	return PutOptions{ChecksumAlgorithm: alg, ChecksumType: typ, ExpectedChecksum: func() (string, error) { return v, nil }}
}

func wantUploadChecksumError(t *testing.T, what string, err error, reason int) {
	t.Helper()
	var ue *UploadChecksumError
	if !errors.As(err, &ue) || ue.Reason != reason || !errors.Is(err, ErrChecksumUse) {
		t.Fatalf("%s: %v, want an UploadChecksumError of reason %d", what, err, reason)
	}
}

func wantChecksumError(t *testing.T, what string, err error, alg string, part int, complete bool) {
	t.Helper()
	var ce *ChecksumError
	if !errors.As(err, &ce) || ce.Algorithm != alg || ce.Part != part || ce.Complete != complete || !errors.Is(err, ErrChecksumMismatch) {
		t.Fatalf("%s: %v, want a ChecksumError of %s part %d complete %v", what, err, alg, part, complete)
	}
}

// TestUploadPartOtherAlgorithm: a part sent with another checksum than
// its upload's is refused before it is stored; one sent without any
// gets the upload's checksum computed.
func TestUploadPartOtherAlgorithm(t *testing.T) {
	e, _ := testEngine(t, 4, Config{BlockSize: 64 << 10})
	ctx := context.Background()
	id, err := e.NewMultipartUpload(ctx, "bucket", "k", PutOptions{ChecksumAlgorithm: "SHA256"})
	if err != nil {
		t.Fatal(err)
	}
	body := []byte("part body")
	crc := b64sum(t, hashing.CRC32, body)
	_, err = e.PutObjectPart(ctx, "bucket", "k", id, 1, bytes.NewReader(body), int64(len(body)),
		PartOptions{ChecksumAlgorithm: "crc32", ExpectedChecksum: func() (string, error) { return crc, nil }})
	wantUploadChecksumError(t, "a CRC32 part of a SHA256 upload", err, ChecksumPartAlgorithm)
	if lp, err := e.ListObjectParts(ctx, "bucket", "k", id, 0, 0); err != nil || len(lp.Parts) != 0 {
		t.Fatalf("the refused part was stored: %+v %v", lp, err)
	}
	pi, err := e.PutObjectPart(ctx, "bucket", "k", id, 1, bytes.NewReader(body), int64(len(body)), PartOptions{})
	if err != nil || pi.ChecksumAlgorithm != "SHA256" || pi.Checksum != b64sum(t, hashing.SHA256, body) {
		t.Fatalf("a part sent without checksum: %+v %v", pi, err)
	}
	lp, err := e.ListObjectParts(ctx, "bucket", "k", id, 0, 0)
	if err != nil || lp.Upload.ChecksumAlgorithm != "SHA256" || lp.Upload.ChecksumType != "COMPOSITE" ||
		len(lp.Parts) != 1 || lp.Parts[0].Checksum != pi.Checksum || lp.Parts[0].ChecksumAlgorithm != "SHA256" {
		t.Fatalf("list parts: %+v %v", lp, err)
	}
}

// TestCompleteCompositeChecks: a COMPOSITE completion needs every part's
// checksum, equal to the stored one, and checks a whole-object value
// (with or without its part count) and type sent with it.
func TestCompleteCompositeChecks(t *testing.T) {
	e, _ := testEngine(t, 4, Config{BlockSize: 64 << 10})
	ctx := context.Background()
	body := []byte("one small part")
	u := startUpload(t, e, "c", PutOptions{ChecksumAlgorithm: "CRC32"}, [][]byte{body}, []string{"CRC32"})
	partSum, _ := base64.StdEncoding.DecodeString(u.infos[0].Checksum)
	composite, _ := hashing.CompositeChecksum(hashing.CRC32, [][]byte{partSum})
	bare := strings.TrimSuffix(composite, "-1")
	complete := func(parts []CompletePart, opts PutOptions) error {
		_, err := e.CompleteMultipartUpload(ctx, "bucket", "c", u.id, parts, opts)
		return err
	}

	wantUploadChecksumError(t, "no part checksums", complete(u.parts, PutOptions{}), ChecksumPartMissing)
	wrong := u.withSums()
	wrong[0].Checksums = map[string]string{"CRC32": "AAAAAA=="}
	if err := complete(wrong, PutOptions{}); !errors.Is(err, ErrInvalidPart) {
		t.Fatalf("a wrong part checksum: %v", err)
	}
	other := u.withSums()
	other[0].Checksums = map[string]string{"SHA256": b64sum(t, hashing.SHA256, body)}
	wantChecksumError(t, "a part checksum of another algorithm", complete(other, PutOptions{}), "SHA256", 1, false)
	wantUploadChecksumError(t, "type FULL_OBJECT", complete(u.withSums(), PutOptions{ChecksumType: "FULL_OBJECT"}), ChecksumCompleteType)
	wantChecksumError(t, "a wrong whole-object value", complete(u.withSums(), sentChecksum("CRC32", "AAAAAA==-1", "")), "CRC32", 0, true)
	wantChecksumError(t, "a wrong part count", complete(u.withSums(), sentChecksum("CRC32", bare+"-2", "")), "CRC32", 0, true)
	wantChecksumError(t, "another algorithm's value", complete(u.withSums(), sentChecksum("CRC32C", composite, "")), "CRC32", 0, true)
	if _, err := e.HeadObject(ctx, "bucket", "c", GetOptions{}); !errors.Is(err, ErrObjectNotFound) {
		t.Fatalf("a refused completion stored the object: %v", err)
	}
	// Without its "-N" the value is accepted too (minio-go sends it so).
	info, err := e.CompleteMultipartUpload(ctx, "bucket", "c", u.id, u.withSums(), sentChecksum("crc32", bare, "composite"))
	if err != nil {
		t.Fatal(err)
	}
	if info.Checksum != (Checksum{Algorithm: "CRC32", Value: composite, Type: "COMPOSITE"}) {
		t.Fatalf("checksum %+v, want %s COMPOSITE", info.Checksum, composite)
	}
	u = startUpload(t, e, "c2", PutOptions{ChecksumAlgorithm: "CRC32"}, [][]byte{body}, []string{"CRC32"})
	if _, err := e.CompleteMultipartUpload(ctx, "bucket", "c2", u.id, u.withSums(), sentChecksum("CRC32", composite, "")); err != nil {
		t.Fatalf("the value with its part count: %v", err)
	}
}

// TestCompleteFullObjectChecks: a FULL_OBJECT completion combines the
// part CRCs (equal to the CRC of the data), needs no part checksums, and
// refuses a whole-object value that is not that CRC.
func TestCompleteFullObjectChecks(t *testing.T) {
	e, _ := testEngine(t, 4, Config{BlockSize: 64 << 10})
	ctx := context.Background()
	r := rand.New(rand.NewSource(5))
	bodies := [][]byte{randBytes(r, MinPartSize), randBytes(r, 1000)}
	for _, alg := range []string{hashing.CRC32, hashing.CRC32C, hashing.CRC64NVME} {
		u := startUpload(t, e, "f", PutOptions{ChecksumAlgorithm: alg, ChecksumType: "FULL_OBJECT"}, bodies, []string{alg, ""})
		whole := b64sum(t, alg, u.data)
		complete := func(opts PutOptions) (ObjectInfo, error) {
			return e.CompleteMultipartUpload(ctx, "bucket", "f", u.id, u.parts, opts)
		}
		_, err := complete(sentChecksum(alg, whole+"-2", ""))
		wantChecksumError(t, alg+" with a part count", err, alg, 0, true)
		_, err = complete(sentChecksum(alg, b64sum(t, alg, bodies[0]), "FULL_OBJECT"))
		wantChecksumError(t, alg+" of part 1 only", err, alg, 0, true)
		_, err = complete(PutOptions{ChecksumType: "COMPOSITE"})
		wantUploadChecksumError(t, alg+" type COMPOSITE", err, ChecksumCompleteType)
		info, err := complete(sentChecksum(alg, whole, "FULL_OBJECT"))
		if err != nil {
			t.Fatalf("%s: %v", alg, err)
		}
		if info.Checksum != (Checksum{Algorithm: alg, Value: whole, Type: "FULL_OBJECT"}) {
			t.Fatalf("%s: checksum %+v, want %s", alg, info.Checksum, whole)
		}
	}
}

// TestCompleteUploadWithoutAlgorithm: an upload created without a
// checksum algorithm refuses a checksum type and ignores a whole-object
// checksum as S3 does, unless every part was sent with the algorithm the
// completion names: then the object takes that checksum, verified, as
// FULL_OBJECT (a CRC without type) or of the type named.
func TestCompleteUploadWithoutAlgorithm(t *testing.T) {
	e, _ := testEngine(t, 4, Config{BlockSize: 64 << 10})
	ctx := context.Background()
	r := rand.New(rand.NewSource(6))
	bodies := [][]byte{randBytes(r, MinPartSize), randBytes(r, 333)}
	whole := b64sum(t, hashing.CRC32C, append(append([]byte{}, bodies[0]...), bodies[1]...))

	u := startUpload(t, e, "n", PutOptions{}, bodies, []string{"CRC32C", ""})
	_, err := e.CompleteMultipartUpload(ctx, "bucket", "n", u.id, u.parts, PutOptions{ChecksumType: "COMPOSITE"})
	wantUploadChecksumError(t, "type COMPOSITE", err, ChecksumCompleteType)
	_, err = e.CompleteMultipartUpload(ctx, "bucket", "n", u.id, u.parts, sentChecksum("CRC32C", whole, "FULL_OBJECT"))
	wantUploadChecksumError(t, "FULL_OBJECT with a part sent without CRC32C", err, ChecksumCompleteType)
	entries := u.withSums()
	entries[1].Checksums = map[string]string{"CRC32C": "AAAAAA=="}
	if _, err := e.CompleteMultipartUpload(ctx, "bucket", "n", u.id, entries, PutOptions{}); !errors.Is(err, ErrInvalidPart) {
		t.Fatalf("a checksum for a part sent without one: %v", err)
	}
	info, err := e.CompleteMultipartUpload(ctx, "bucket", "n", u.id, u.parts, sentChecksum("CRC32C", "bogus", ""))
	if err != nil || info.Checksum != (Checksum{}) {
		t.Fatalf("a checksum that cannot apply is ignored: %+v %v", info.Checksum, err)
	}

	u = startUpload(t, e, "a", PutOptions{}, bodies, []string{"CRC32C", "CRC32C"})
	if _, err := e.CompleteMultipartUpload(ctx, "bucket", "a", u.id, u.parts, sentChecksum("CRC32C", "AAAAAA==", "")); !errors.Is(err, ErrChecksumMismatch) {
		t.Fatalf("a wrong whole-object CRC32C: %v", err)
	}
	if _, err := e.CompleteMultipartUpload(ctx, "bucket", "a", u.id, u.withSums(), sentChecksum("CRC32", whole, "")); err != nil {
		t.Fatalf("CRC32 parts were not sent: the value is ignored: %v", err)
	}
	oi, err := e.HeadObject(ctx, "bucket", "a", GetOptions{})
	if err != nil || oi.Checksum != (Checksum{}) {
		t.Fatalf("object: %+v %v", oi.Checksum, err)
	}

	u = startUpload(t, e, "b", PutOptions{}, bodies, []string{"CRC32C", "CRC32C"})
	info, err = e.CompleteMultipartUpload(ctx, "bucket", "b", u.id, u.withSums(), sentChecksum("CRC32C", whole, "FULL_OBJECT"))
	if err != nil || info.Checksum != (Checksum{Algorithm: "CRC32C", Value: whole, Type: "FULL_OBJECT"}) {
		t.Fatalf("adopted: %+v %v", info.Checksum, err)
	}
	// Its parts keep their CRCs, for reads by part number.
	oi, err = e.HeadObject(ctx, "bucket", "b", GetOptions{})
	if err != nil || len(oi.Parts) != 2 || oi.Parts[1].Checksum != b64sum(t, hashing.CRC32C, bodies[1]) {
		t.Fatalf("parts: %+v %v", oi.Parts, err)
	}

	// A COMPOSITE completion of parts all sent with SHA256 (minio-go's
	// default) takes their composite checksum; its value is verified.
	u = startUpload(t, e, "s", PutOptions{}, bodies, []string{"SHA256", "SHA256"})
	var sums [][]byte
	for _, pi := range u.infos {
		raw, _ := base64.StdEncoding.DecodeString(pi.Checksum)
		sums = append(sums, raw)
	}
	composite, _ := hashing.CompositeChecksum(hashing.SHA256, sums)
	_, err = e.CompleteMultipartUpload(ctx, "bucket", "s", u.id, u.parts, sentChecksum("SHA256", b64sum(t, hashing.SHA256, nil), "COMPOSITE"))
	wantChecksumError(t, "a wrong composite SHA256", err, "SHA256", 0, true)
	_, err = e.CompleteMultipartUpload(ctx, "bucket", "s", u.id, u.parts, sentChecksum("SHA256", b64sum(t, hashing.SHA256, nil), "FULL_OBJECT"))
	wantUploadChecksumError(t, "SHA256 FULL_OBJECT", err, ChecksumCompleteType)
	_, err = e.CompleteMultipartUpload(ctx, "bucket", "s", u.id, u.parts, sentChecksum("CRC32", "AAAAAA==", "COMPOSITE"))
	wantUploadChecksumError(t, "COMPOSITE CRC32 of SHA256 parts", err, ChecksumCompleteType)
	info, err = e.CompleteMultipartUpload(ctx, "bucket", "s", u.id, u.withSums(),
		sentChecksum("SHA256", strings.TrimSuffix(composite, "-2"), "COMPOSITE"))
	if err != nil || info.Checksum != (Checksum{Algorithm: "SHA256", Value: composite, Type: "COMPOSITE"}) {
		t.Fatalf("adopted composite: %+v %v", info.Checksum, err)
	}
}

// TestMultipartChecksumTypes: the type an upload gets, and the
// combinations refused.
func TestMultipartChecksumTypes(t *testing.T) {
	e, _ := testEngine(t, 4, Config{BlockSize: 64 << 10})
	ctx := context.Background()
	for _, tc := range []struct {
		alg, typ, want string
		ok             bool
	}{
		{"CRC32", "", "COMPOSITE", true}, {"CRC32", "FULL_OBJECT", "FULL_OBJECT", true}, {"crc32c", "full_object", "FULL_OBJECT", true},
		{"CRC64NVME", "", "FULL_OBJECT", true}, {"CRC64NVME", "COMPOSITE", "", false}, {"SHA1", "", "COMPOSITE", true},
		{"SHA256", "FULL_OBJECT", "", false}, {"SHA256", "COMPOSITE", "COMPOSITE", true}, {"", "COMPOSITE", "", false},
		{"", "", "", true}, {"CRC32", "PARTIAL", "", false}, {"XXHASH3", "FULL_OBJECT", "", false},
	} {
		id, err := e.NewMultipartUpload(ctx, "bucket", "t", PutOptions{ChecksumAlgorithm: tc.alg, ChecksumType: tc.typ})
		if !tc.ok {
			if !errors.Is(err, ErrInvalidArgument) {
				t.Errorf("%s %s: %v, want ErrInvalidArgument", tc.alg, tc.typ, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s %s: %v", tc.alg, tc.typ, err)
		}
		lp, err := e.ListObjectParts(ctx, "bucket", "t", id, 0, 0)
		if err != nil || lp.Upload.ChecksumType != tc.want || lp.Upload.ChecksumAlgorithm != strings.ToUpper(tc.alg) {
			t.Errorf("%s %s: upload %+v %v, want type %q", tc.alg, tc.typ, lp.Upload, err, tc.want)
		}
	}
}
