package s3api

import (
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/shardstore/shardstore/internal/engine"
)

// TestParseImport: the import headers are read strictly; every hostile
// or malformed value is refused with InvalidArgument, never half read.
func TestParseImport(t *testing.T) {
	now := time.Date(2026, 11, 28, 3, 0, 0, 0, time.UTC)
	mod := time.Date(2024, 5, 6, 7, 8, 9, 123456789, time.UTC)
	own := fmt.Sprintf("%016x", mod.UnixNano()) + "0123456789abcdef" // shardstore's id for mod
	uuid := "0b6a1a3e-8d5f-4c8e-9a0f-1f2e3d4c5b6a"
	type hs map[string][]string
	h := func(vid, mt string, more ...string) hs {
		m := hs{}
		if vid != "-" {
			m[ImportVersionIDHeader] = []string{vid}
		}
		if mt != "-" {
			m[ImportModTimeHeader] = []string{mt}
		}
		for i := 0; i+1 < len(more); i += 2 {
			m[more[i]] = append(m[more[i]], more[i+1])
		}
		return m
	}
	mt := mod.Format(time.RFC3339Nano)
	for _, c := range []struct {
		name string
		h    hs
		want *engine.ImportVersion // nil with ok: no import
		ok   bool
	}{
		{"none", hs{}, nil, true},
		{"null version", h("null", mt), &engine.ImportVersion{ModTime: mod.UnixNano()}, true},
		{"uuid", h(uuid, mt), &engine.ImportVersion{VersionID: uuid, ModTime: mod.UnixNano()}, true},
		{"own id of its time", h(own, mt), &engine.ImportVersion{VersionID: own, ModTime: mod.UnixNano()}, true},
		{"delete marker", h(uuid, mt, ImportDeleteMarkerHeader, "true"), &engine.ImportVersion{VersionID: uuid, ModTime: mod.UnixNano(), DeleteMarker: true}, true},
		{"etag", h(uuid, mt, ImportETagHeader, `"0123456789abcdef0123456789abcdef"`), &engine.ImportVersion{VersionID: uuid, ModTime: mod.UnixNano(), ETag: "0123456789abcdef0123456789abcdef"}, true},
		{"multipart etag", h(uuid, mt, ImportETagHeader, "0123456789abcdef0123456789abcdef-10000"), &engine.ImportVersion{VersionID: uuid, ModTime: mod.UnixNano(), ETag: "0123456789abcdef0123456789abcdef-10000"}, true},

		{"only a time", h("-", mt), nil, false},
		{"only an id", h(uuid, "-"), nil, false},
		{"only a marker", h("-", "-", ImportDeleteMarkerHeader, "true"), nil, false},
		{"empty id", h("", mt), nil, false},
		{"two ids", h(uuid, mt, ImportVersionIDHeader, uuid), nil, false},
		{"two times", h(uuid, mt, ImportModTimeHeader, mt), nil, false},
		{"upper-case uuid", h(strings.ToUpper(uuid), mt), nil, false},
		{"own id of another time", h(fmt.Sprintf("%016x", mod.UnixNano()+1)+"0123456789abcdef", mt), nil, false},
		{"own id upper case", h(strings.ToUpper(own), mt), nil, false},
		{"id with a slash", h("../../etc/passwd", mt), nil, false},
		{"id with NUL", h("0123456789abcdef0123456789abcde\x00", mt), nil, false},
		{"id too long", h(strings.Repeat("a", 4096), mt), nil, false},
		{"id NULL", h("NULL", mt), nil, false},
		{"time not RFC 3339", h(uuid, "Mon, 06 May 2024 07:08:09 GMT"), nil, false},
		{"time in nanoseconds", h(uuid, "1714979289123456789"), nil, false},
		{"time before 1990", h(uuid, "1970-01-01T00:00:00Z"), nil, false},
		{"time negative", h(uuid, "-0001-01-01T00:00:00Z"), nil, false},
		{"time far ahead", h(uuid, "2300-01-01T00:00:00Z"), nil, false},
		{"time two days ahead", h(uuid, now.Add(48*time.Hour).Format(time.RFC3339)), nil, false},
		{"time empty", h(uuid, ""), nil, false},
		{"marker yes", h(uuid, mt, ImportDeleteMarkerHeader, "yes"), nil, false},
		{"marker TRUE", h(uuid, mt, ImportDeleteMarkerHeader, "TRUE"), nil, false},
		{"marker with an etag", h(uuid, mt, ImportDeleteMarkerHeader, "true", ImportETagHeader, "0123456789abcdef0123456789abcdef"), nil, false},
		{"etag short", h(uuid, mt, ImportETagHeader, "0123"), nil, false},
		{"etag upper case", h(uuid, mt, ImportETagHeader, "0123456789ABCDEF0123456789ABCDEF"), nil, false},
		{"etag not hex", h(uuid, mt, ImportETagHeader, "0123456789abcdef0123456789abcdeg"), nil, false},
		{"etag zero parts", h(uuid, mt, ImportETagHeader, "0123456789abcdef0123456789abcdef-0"), nil, false},
		{"etag too many parts", h(uuid, mt, ImportETagHeader, "0123456789abcdef0123456789abcdef-10001"), nil, false},
		{"etag parts padded", h(uuid, mt, ImportETagHeader, "0123456789abcdef0123456789abcdef-01"), nil, false},
		{"etag parts signed", h(uuid, mt, ImportETagHeader, "0123456789abcdef0123456789abcdef-+1"), nil, false},
		{"etag empty parts", h(uuid, mt, ImportETagHeader, "0123456789abcdef0123456789abcdef-"), nil, false},
		{"two etags", h(uuid, mt, ImportETagHeader, "0123456789abcdef0123456789abcdef", ImportETagHeader, "0123456789abcdef0123456789abcdef"), nil, false},

		// Parts and the checksum of a multipart object.
		{"parts", h(uuid, mt, ImportETagHeader, mpETag(3), ImportPartsHeader, "5242880*2,7"),
			&engine.ImportVersion{VersionID: uuid, ModTime: mod.UnixNano(), ETag: mpETag(3), Parts: []int64{5242880, 5242880, 7}}, true},
		{"uneven parts", h(uuid, mt, ImportETagHeader, mpETag(3), ImportPartsHeader, "9,5242880,1*1"),
			&engine.ImportVersion{VersionID: uuid, ModTime: mod.UnixNano(), ETag: mpETag(3), Parts: []int64{9, 5242880, 1}}, true},
		{"10000 parts", h(uuid, mt, ImportETagHeader, mpETag(10000), ImportPartsHeader, "1*9999,2"),
			&engine.ImportVersion{VersionID: uuid, ModTime: mod.UnixNano(), ETag: mpETag(10000), Parts: append(repeat(1, 9999), 2)}, true},
		{"composite checksum", h(uuid, mt, ImportETagHeader, mpETag(2), ImportPartsHeader, "5*2", ImportChecksumHeader, "CRC32 COMPOSITE AAAAAA==-2"),
			&engine.ImportVersion{VersionID: uuid, ModTime: mod.UnixNano(), ETag: mpETag(2), Parts: []int64{5, 5},
				Checksum: engine.ImportChecksum{Algorithm: "CRC32", Type: "COMPOSITE", Value: "AAAAAA==-2"}}, true},
		{"full-object checksum", h(uuid, mt, ImportETagHeader, mpETag(2), ImportPartsHeader, "5*2", ImportChecksumHeader, "CRC64NVME FULL_OBJECT AAAAAAAAAAA="),
			&engine.ImportVersion{VersionID: uuid, ModTime: mod.UnixNano(), ETag: mpETag(2), Parts: []int64{5, 5},
				Checksum: engine.ImportChecksum{Algorithm: "CRC64NVME", Type: "FULL_OBJECT", Value: "AAAAAAAAAAA="}}, true},
		{"parts without etag", h(uuid, mt, ImportPartsHeader, "5*2"), nil, false},
		{"parts with a plain etag", h(uuid, mt, ImportETagHeader, "0123456789abcdef0123456789abcdef", ImportPartsHeader, "5"), nil, false},
		{"parts not the etag's count", h(uuid, mt, ImportETagHeader, mpETag(3), ImportPartsHeader, "5*2"), nil, false},
		{"parts of a marker", h(uuid, mt, ImportDeleteMarkerHeader, "true", ImportPartsHeader, "5"), nil, false},
		{"part of 0 bytes", h(uuid, mt, ImportETagHeader, mpETag(2), ImportPartsHeader, "5,0"), nil, false},
		{"part negative", h(uuid, mt, ImportETagHeader, mpETag(2), ImportPartsHeader, "5,-5"), nil, false},
		{"part padded", h(uuid, mt, ImportETagHeader, mpETag(2), ImportPartsHeader, "5,05"), nil, false},
		{"part signed", h(uuid, mt, ImportETagHeader, mpETag(2), ImportPartsHeader, "5,+5"), nil, false},
		{"part too large", h(uuid, mt, ImportETagHeader, mpETag(2), ImportPartsHeader, "5,5368709121"), nil, false},
		{"part overflow", h(uuid, mt, ImportETagHeader, mpETag(2), ImportPartsHeader, "5,99999999999999999999999"), nil, false},
		{"part hex", h(uuid, mt, ImportETagHeader, mpETag(2), ImportPartsHeader, "5,0x5"), nil, false},
		{"part spaces", h(uuid, mt, ImportETagHeader, mpETag(2), ImportPartsHeader, "5, 5"), nil, false},
		{"part empty item", h(uuid, mt, ImportETagHeader, mpETag(2), ImportPartsHeader, "5,,5"), nil, false},
		{"part trailing comma", h(uuid, mt, ImportETagHeader, mpETag(1), ImportPartsHeader, "5,"), nil, false},
		{"count zero", h(uuid, mt, ImportETagHeader, mpETag(1), ImportPartsHeader, "5*0,5"), nil, false},
		{"count empty", h(uuid, mt, ImportETagHeader, mpETag(1), ImportPartsHeader, "5*"), nil, false},
		{"count twice", h(uuid, mt, ImportETagHeader, mpETag(4), ImportPartsHeader, "5*2*2"), nil, false},
		{"too many parts", h(uuid, mt, ImportETagHeader, mpETag(10000), ImportPartsHeader, "1*9999,1*2"), nil, false},
		{"huge count", h(uuid, mt, ImportETagHeader, mpETag(10000), ImportPartsHeader, "1*9223372036854775807"), nil, false},
		{"many huge counts", h(uuid, mt, ImportETagHeader, mpETag(10000), ImportPartsHeader, strings.Repeat("1*10000,", 1000)+"1"), nil, false},
		{"two parts headers", h(uuid, mt, ImportETagHeader, mpETag(1), ImportPartsHeader, "5", ImportPartsHeader, "5"), nil, false},
		{"checksum without parts", h(uuid, mt, ImportChecksumHeader, "CRC32 FULL_OBJECT AAAAAA=="), nil, false},
		{"checksum two fields", h(uuid, mt, ImportETagHeader, mpETag(2), ImportPartsHeader, "5*2", ImportChecksumHeader, "CRC32 AAAAAA=="), nil, false},
		{"checksum four fields", h(uuid, mt, ImportETagHeader, mpETag(2), ImportPartsHeader, "5*2", ImportChecksumHeader, "CRC32 COMPOSITE AAAAAA==-2 x"), nil, false},
		{"checksum double space", h(uuid, mt, ImportETagHeader, mpETag(2), ImportPartsHeader, "5*2", ImportChecksumHeader, "CRC32  COMPOSITE AAAAAA==-2"), nil, false},
		{"checksum lower case", h(uuid, mt, ImportETagHeader, mpETag(2), ImportPartsHeader, "5*2", ImportChecksumHeader, "crc32 COMPOSITE AAAAAA==-2"), nil, false},
		{"checksum unknown", h(uuid, mt, ImportETagHeader, mpETag(2), ImportPartsHeader, "5*2", ImportChecksumHeader, "CRC33 COMPOSITE AAAAAA==-2"), nil, false},
		{"checksum bad type", h(uuid, mt, ImportETagHeader, mpETag(2), ImportPartsHeader, "5*2", ImportChecksumHeader, "CRC32 PARTIAL AAAAAA==-2"), nil, false},
		{"sha full object", h(uuid, mt, ImportETagHeader, mpETag(2), ImportPartsHeader, "5*2", ImportChecksumHeader, "SHA256 FULL_OBJECT "+strings.Repeat("A", 43)+"="), nil, false},
		{"crc64 composite", h(uuid, mt, ImportETagHeader, mpETag(2), ImportPartsHeader, "5*2", ImportChecksumHeader, "CRC64NVME COMPOSITE AAAAAAAAAAA=-2"), nil, false},
		{"composite without count", h(uuid, mt, ImportETagHeader, mpETag(2), ImportPartsHeader, "5*2", ImportChecksumHeader, "CRC32 COMPOSITE AAAAAA=="), nil, false},
		{"composite other count", h(uuid, mt, ImportETagHeader, mpETag(2), ImportPartsHeader, "5*2", ImportChecksumHeader, "CRC32 COMPOSITE AAAAAA==-3"), nil, false},
		{"full object with count", h(uuid, mt, ImportETagHeader, mpETag(2), ImportPartsHeader, "5*2", ImportChecksumHeader, "CRC32 FULL_OBJECT AAAAAA==-2"), nil, false},
		{"checksum wrong size", h(uuid, mt, ImportETagHeader, mpETag(2), ImportPartsHeader, "5*2", ImportChecksumHeader, "CRC32 COMPOSITE AAAAAAAA-2"), nil, false},
		{"checksum not base64", h(uuid, mt, ImportETagHeader, mpETag(2), ImportPartsHeader, "5*2", ImportChecksumHeader, "CRC32 COMPOSITE !!!!!!==-2"), nil, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			hdr := http.Header{}
			for k, vs := range c.h {
				for _, v := range vs {
					hdr.Add(k, v)
				}
			}
			got, err := ParseImport(hdr, now)
			if !c.ok {
				if err == nil {
					t.Fatalf("accepted: %+v", got)
				}
				if e, ok := err.(*Error); !ok || e.Code != "InvalidArgument" {
					t.Fatalf("error %v, want InvalidArgument", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if (got == nil) != (c.want == nil) || (got != nil && !reflect.DeepEqual(got, c.want)) {
				t.Fatalf("got %+v, want %+v", got, c.want)
			}
		})
	}
}

// mpETag is a multipart ETag of n parts.
func mpETag(n int) string { return fmt.Sprintf("0123456789abcdef0123456789abcdef-%d", n) }

func repeat(v int64, n int) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = v
	}
	return out
}

// FuzzParseImportParts: whatever the parts and checksum headers say,
// ParseImport answers an import whose parts are 1 to 10000 sizes within
// the PUT limit and match the ETag's count, or InvalidArgument; never a
// panic, and never more parts than the limit allocated.
func FuzzParseImportParts(f *testing.F) {
	f.Add("5242880*3,7", "0123456789abcdef0123456789abcdef-4", "CRC32 COMPOSITE AAAAAA==-4")
	f.Add("1*10000", "0123456789abcdef0123456789abcdef-10000", "")
	f.Add("1*9223372036854775807,1", "0123456789abcdef0123456789abcdef-2", "CRC64NVME FULL_OBJECT AAAAAAAAAAA=")
	f.Add(",,*,", "x", "  ")
	uuid := "0b6a1a3e-8d5f-4c8e-9a0f-1f2e3d4c5b6a"
	f.Fuzz(func(t *testing.T, parts, etag, checksum string) {
		h := http.Header{}
		h.Set(ImportVersionIDHeader, uuid)
		h.Set(ImportModTimeHeader, "2024-05-06T07:08:09Z")
		h.Set(ImportETagHeader, etag)
		h.Set(ImportPartsHeader, parts)
		h.Set(ImportChecksumHeader, checksum)
		imp, err := ParseImport(h, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
		if err != nil {
			if e, ok := err.(*Error); !ok || e.Code != "InvalidArgument" {
				t.Fatalf("error %v, want InvalidArgument", err)
			}
			return
		}
		if len(imp.Parts) > engine.MaxPartNumber || (len(imp.Parts) > 0 && !strings.HasSuffix(imp.ETag, fmt.Sprintf("-%d", len(imp.Parts)))) {
			t.Fatalf("accepted %d parts with ETag %q", len(imp.Parts), imp.ETag)
		}
		for _, n := range imp.Parts {
			if n < 1 || n > engine.MaxPutSize {
				t.Fatalf("accepted a part of %d bytes", n)
			}
		}
	})
}
