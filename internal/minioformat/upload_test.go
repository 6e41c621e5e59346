package minioformat

import (
	"encoding/base64"
	"errors"
	"path/filepath"
	"testing"
	"time"
)

// TestParseUploadID: MinIO's upload ids, and hostile ones.
func TestParseUploadID(t *testing.T) {
	const dep = "61ed822e-a96e-4d62-b58c-2b5cb0b15a11"
	const dir = "8e65c5b7-ac22-42c2-9c29-ee6caf71c155x1795832466542489215"
	// The fixture's upload id, as MinIO answered it.
	const fixtureID = "NjFlZDgyMmUtYTk2ZS00ZDYyLWI1OGMtMmI1Y2IwYjE1YTExLjhlNjVjNWI3LWFjMjItNDJjMi05YzI5LWVlNmNhZjcxYzE1NXgxNzk1ODMyNDY2NTQyNDg5MjE1"
	u, err := ParseUploadID(fixtureID)
	if err != nil || u.Deployment != dep || u.Dir != dir || u.Initiated.UnixNano() != 1795832466542489215 {
		t.Fatalf("fixture id: %+v %v", u, err)
	}
	if UploadIDString(dep, dir) != fixtureID {
		t.Errorf("UploadIDString = %s", UploadIDString(dep, dir))
	}
	old, err := ParseUploadID(UploadIDString(dep, "8e65c5b7-ac22-42c2-9c29-ee6caf71c155"))
	if err != nil || !old.Initiated.IsZero() {
		t.Errorf("old-form id: %+v %v", old, err)
	}
	enc := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	for name, id := range map[string]string{
		"empty":            "",
		"a uuid":           dep,
		"padded":           base64.URLEncoding.EncodeToString([]byte(dep + "." + dir + "x")),
		"no dot":           enc(dep + dir),
		"path":             enc(dep + "./../../etc"),
		"slash in dir":     enc(dep + ".8e65c5b7-ac22-42c2-9c29-ee6caf71c155x1/2"),
		"upper-case uuid":  enc("61ED822E-A96E-4D62-B58C-2B5CB0B15A11." + dir),
		"empty time":       enc(dep + ".8e65c5b7-ac22-42c2-9c29-ee6caf71c155x"),
		"signed time":      enc(dep + ".8e65c5b7-ac22-42c2-9c29-ee6caf71c155x-5"),
		"time overflow":    enc(dep + ".8e65c5b7-ac22-42c2-9c29-ee6caf71c155x9999999999999999999"),
		"braced uuid":      enc("{" + dep + "}." + dir),
		"huge":             enc(string(make([]byte, 500))),
		"two dirs":         enc(dep + "." + dir + "." + dir),
		"nul":              enc(dep + ".\x00"),
		"deployment only.": enc(dep + "."),
	} {
		if u, err := ParseUploadID(id); err == nil {
			t.Errorf("%s: %q accepted as %+v", name, id, u)
		} else if !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: error %v does not wrap ErrCorrupt", name, err)
		}
	}
}

// TestDecodePartMeta reads the fixture's part.1.meta and refuses hostile
// ones.
func TestDecodePartMeta(t *testing.T) {
	// part.1.meta of the fixture's unfinished upload (plain/unfinished.bin).
	raw := []byte("\x85\xa1e\xd9\x20c882a9a0108e8589ea86053801429856\xa1n\x01\xa1s\xd2\x00\x01\x90\x00\xa2as\xd2\x00\x01\x90\x00\xa2mt\xc7\x0c\x05\x00\x00\x00\x00\x6b\x0a\x3a\x92\x21\x1f\x09\x91")
	p, err := DecodePartMeta(raw)
	if err != nil {
		t.Fatal(err)
	}
	if p.Number != 1 || p.ETag != "c882a9a0108e8589ea86053801429856" || p.Size != 102400 || p.ActualSize != 102400 || p.ModTime.Year() < 2026 || len(p.Unknown) != 0 {
		t.Errorf("decoded %+v", p)
	}
	for name, b := range map[string][]byte{
		"empty":        nil,
		"not a map":    []byte("\x91\x01"),
		"no number":    []byte("\x81\xa1e\xa1x"),
		"number 0":     []byte("\x81\xa1n\x00"),
		"number 10001": []byte("\x81\xa1n\xcd\x27\x11"),
		"negative":     []byte("\x82\xa1n\x01\xa1s\xff"),
		"truncated":    raw[:len(raw)-3],
		"trailing":     append(append([]byte{}, raw...), 0),
		"map too long": []byte("\x8f\xa1n\x01"),
		"bad time":     []byte("\x82\xa1n\x01\xa2mt\xc7\x0c\x05\x00\x00\x00\x00\x00\x00\x00\x00\xff\xff\xff\xff"),
		"huge":         make([]byte, MaxPartMetaSize+1),
	} {
		if p, err := DecodePartMeta(b); err == nil {
			t.Errorf("%s: accepted as %+v", name, p)
		}
	}
	// Unknown fields are kept by name, not dropped silently.
	p, err = DecodePartMeta([]byte("\x82\xa1n\x02\xa2zz\xc0"))
	if err != nil || p.Number != 2 || len(p.Unknown) != 1 || p.Unknown[0] != "zz" {
		t.Errorf("unknown field: %+v %v", p, err)
	}
	if p.ModTime != (time.Time{}) {
		t.Errorf("absent time: %v", p.ModTime)
	}
}

func FuzzParseUploadID(f *testing.F) {
	f.Add("NjFlZDgyMmUtYTk2ZS00ZDYyLWI1OGMtMmI1Y2IwYjE1YTExLjhlNjVjNWI3LWFjMjItNDJjMi05YzI5LWVlNmNhZjcxYzE1NXgxNzk1ODMyNDY2NTQyNDg5MjE1")
	f.Add("")
	f.Fuzz(func(t *testing.T, id string) {
		u, err := ParseUploadID(id)
		if err != nil {
			return
		}
		if filepath.Base(u.Dir) != u.Dir || u.Dir == ".." || UploadIDString(u.Deployment, u.Dir) != id {
			t.Fatalf("%q accepted as %+v", id, u)
		}
	})
}

func FuzzDecodePartMeta(f *testing.F) {
	f.Add([]byte("\x85\xa1e\xd9\x20c882a9a0108e8589ea86053801429856\xa1n\x01\xa1s\xd2\x00\x01\x90\x00\xa2as\xd2\x00\x01\x90\x00\xa2mt\xc7\x0c\x05\x00\x00\x00\x00\x6b\x0a\x3a\x92\x21\x1f\x09\x91"))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := DecodePartMeta(b)
		if err == nil && (p.Number < 1 || p.Size < 0) {
			t.Fatalf("accepted %+v", p)
		}
	})
}
