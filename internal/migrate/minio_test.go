package migrate

import (
	"bufio"
	"fmt"
	"strings"
	"testing"

	"github.com/shardstore/shardstore/internal/minioformat"
)

// TestRefusal: what adoption refuses to guess at, version by version.
func TestRefusal(t *testing.T) {
	obj := func(sys map[string][]byte, usr map[string]string) *minioformat.Version {
		return &minioformat.Version{Kind: minioformat.KindObject, Object: &minioformat.Object{
			ErasureAlgorithm: 1, ChecksumAlgo: 1, Size: 10, MetaSys: sys, MetaUser: usr}}
	}
	cases := []struct {
		name string
		v    *minioformat.Version
		want string // "" adoptable, else a part of the reason
	}{
		{"plain", obj(map[string][]byte{"x-minio-internal-inline-data": []byte("true")}, map[string]string{"etag": "x", "X-Amz-Meta-A": "b", "content-type": "t"}), ""},
		{"actual size equal", obj(map[string][]byte{"X-Minio-Internal-actual-size": []byte("10")}, nil), ""},
		{"actual size differs", obj(map[string][]byte{"X-Minio-Internal-actual-size": []byte("12")}, nil), "actual size"},
		{"SSE-C", obj(map[string][]byte{"X-Minio-Internal-Server-Side-Encryption-Sealed-Key": []byte("k")}, nil), "encrypted (SSE-C)"},
		{"SSE-S3", obj(map[string][]byte{"X-Minio-Internal-Server-Side-Encryption-S3-Sealed-Key": []byte("k"),
			"x-minio-internal-server-side-encryption-s3-kms-key-id": []byte("my-key")}, nil), `encrypted (SSE-S3, MinIO KMS key "my-key")`},
		{"SSE-KMS", obj(map[string][]byte{"X-Minio-Internal-Server-Side-Encryption-Kms-Sealed-Key": []byte("k"),
			"X-Minio-Internal-Server-Side-Encryption-S3-Kms-Key-Id": []byte("k2\"x")}, nil), `encrypted (SSE-KMS, MinIO KMS key "k2\"x")`},
		{"SSE, unknown seal", obj(map[string][]byte{"X-Minio-Internal-Server-Side-Encryption-Iv": []byte("iv")}, nil), "encrypted (SSE)"},
		{"compressed (copied)", obj(map[string][]byte{"X-Minio-Internal-compression": []byte("klauspost/compress/s2"), "X-Minio-Internal-actual-size": []byte("25")}, nil), ""},
		{"compressed otherwise", obj(map[string][]byte{"X-Minio-Internal-compression": []byte("golang/snappy/LZ77")}, nil), "compressed with"},
		{"compressed, bad actual size", obj(map[string][]byte{"X-Minio-Internal-compression": []byte("klauspost/compress/s2"), "X-Minio-Internal-actual-size": []byte("-3")}, nil), "compressed"},
		{"compressed and encrypted", obj(map[string][]byte{"X-Minio-Internal-compression": []byte("klauspost/compress/s2"), "X-Minio-Internal-Server-Side-Encryption-Sealed-Key": []byte("k")}, nil), "encrypted"},
		{"tiered", obj(map[string][]byte{"x-minio-internal-transition-status": []byte("complete")}, nil), "transitioned"},
		{"replication state", obj(map[string][]byte{"x-minio-internal-replication-status": []byte("x")}, nil), "not understood"},
		{"unknown header", obj(nil, map[string]string{"X-Amz-Replication-Status": "COMPLETED"}), "not understood"},
		{"unknown field", &minioformat.Version{Kind: minioformat.KindObject, Unknown: []string{"Zz"}, Object: &minioformat.Object{ErasureAlgorithm: 1, ChecksumAlgo: 1}}, "unknown fields"},
		{"legacy", &minioformat.Version{Kind: minioformat.KindLegacy}, "legacy"},
		{"free version", &minioformat.Version{Kind: minioformat.KindDeleteMarker, Header: minioformat.Header{Flags: minioformat.FlagFreeVersion}, DeleteMarker: &minioformat.DeleteMarker{}}, "free version"},
		{"delete marker", &minioformat.Version{Kind: minioformat.KindDeleteMarker, DeleteMarker: &minioformat.DeleteMarker{}}, ""},
		{"unknown kind", &minioformat.Version{Kind: 9}, "unknown version kind"},
	}
	for _, c := range cases {
		got := refusal(c.v)
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("%s: refusal %q, want %q", c.name, got, c.want)
		}
	}
}

// TestObjectKey: MinIO's directory form of keys ending in "/".
func TestObjectKey(t *testing.T) {
	for in, want := range map[string]string{"a/b": "a/b", "folder__XLDIR__": "folder/", "x/y__XLDIR__": "x/y/"} {
		if got := objectKey(in); got != want {
			t.Errorf("objectKey(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestParseUploadKeys: the --upload-keys file, and hostile ones.
func TestParseUploadKeys(t *testing.T) {
	good := "# comment\n\nplain/unfinished.bin\r\nb/deep/ünï/key.txt\nb/trailing/\n"
	got, err := parseUploadKeys(bufio.NewScanner(strings.NewReader(good)), "keys")
	if err != nil || fmt.Sprint(got) != "[[plain unfinished.bin] [b deep/ünï/key.txt] [b trailing/]]" {
		t.Fatalf("got %v %v", got, err)
	}
	for name, in := range map[string]string{
		"no slash":     "bucketonly\n",
		"empty key":    "bucket/\n",
		"empty bucket": "/key\n",
		"nul":          "b/k\x00ey\n",
		"bad utf-8":    "b/\xff\xfe\n",
		"long key":     "b/" + strings.Repeat("k", 1025) + "\n",
		"long bucket":  strings.Repeat("b", 64) + "/k\n",
		"dot bucket":   ".minio.sys/x\n",
		"long line":    "b/" + strings.Repeat("k", 5000) + "\n",
	} {
		if got, err := parseUploadKeys(bufio.NewScanner(strings.NewReader(in)), "keys"); err == nil {
			t.Errorf("%s: accepted as %v", name, got)
		}
	}
}

// TestPartMetaNumber: MinIO's part.N.meta names, and what is not one.
func TestPartMetaNumber(t *testing.T) {
	for name, want := range map[string]int{"part.1.meta": 1, "part.10000.meta": 10000, "part.0.meta": 0, "part.01.meta": 0,
		"part.1": 0, "part.10001.meta": 0, "part.-1.meta": 0, "part..meta": 0, "xl.meta": 0, "part.1.meta.tmp": 0, "part.99999.meta": 0} {
		n, ok := partMetaNumber(name)
		if (want > 0) != ok || (ok && n != want) {
			t.Errorf("%s: %d %v, want %d", name, n, ok, want)
		}
	}
}
