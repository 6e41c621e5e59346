package s3api

import (
	"fmt"
	"net/http"
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
			if (got == nil) != (c.want == nil) || (got != nil && *got != *c.want) {
				t.Fatalf("got %+v, want %+v", got, c.want)
			}
		})
	}
}
