package minioexport

import (
	"archive/zip"
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"
	"time"
)

func readFixture(t *testing.T, name string) *Export {
	t.Helper()
	data, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	x, err := ReadBytes(data)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return x
}

// TestRealIAMExport decodes the IAM export of a real MinIO (testdata,
// made by mkexport.sh) and finds what mkexport.sh put there.
func TestRealIAMExport(t *testing.T) {
	x := readFixture(t, "iam.zip")
	if x.Kind != KindIAM || x.IAM == nil {
		t.Fatalf("kind %v", x.Kind)
	}
	m := x.IAM
	if len(m.Unknown) != 0 {
		t.Errorf("unknown entries %v", m.Unknown)
	}
	for _, p := range []string{"data-rw", "ops", "no-delete", "readwrite", "readonly", "consoleAdmin"} {
		if len(m.Policies[p]) == 0 {
			t.Errorf("policy %s missing", p)
		}
	}
	if u := m.Users["alice"]; u.SecretKey != "alice-secret-key-1" || !u.Enabled {
		t.Errorf("alice: %+v", u)
	}
	if u := m.Users["carol"]; u.Enabled || u.SecretKey == "" {
		t.Errorf("carol should be disabled: %+v", u)
	}
	if g := m.Groups["devs"]; !g.Enabled || strings.Join(g.Members, ",") != "bob,carol" {
		t.Errorf("devs: %+v", g)
	}
	if g := m.Groups["auditors"]; g.Enabled {
		t.Errorf("auditors should be disabled: %+v", g)
	}
	if p := strings.Join(m.UserPolicies["alice"], ","); p != "data-rw" {
		t.Errorf("alice's policies %q", p)
	}
	if p := strings.Join(m.GroupPolicies["devs"], ","); p != "no-delete" {
		t.Errorf("devs' policies %q", p)
	}
	if len(m.STSUserPolicies) != 0 {
		t.Errorf("sts mappings %v", m.STSUserPolicies)
	}
	plain := m.ServiceAccounts["alicesvcplain"]
	if plain.Parent != "alice" || plain.SecretKey != "svc-plain-secret-1" || !plain.Enabled || plain.Policy != nil ||
		plain.Expiry != nil || plain.Name != "plain" || plain.Description != "alice's scripts" {
		t.Errorf("alicesvcplain: %+v", plain)
	}
	read := m.ServiceAccounts["alicesvcread"]
	if !bytes.Contains(read.Policy, []byte(`"arn:aws:s3:::data/*"`)) || read.Expiry != nil {
		t.Errorf("alicesvcread: %+v", read)
	}
	exp := m.ServiceAccounts["alicesvcexp"]
	if exp.Expiry == nil || !exp.Expiry.Equal(time.Date(2027, 6, 1, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("alicesvcexp: %+v", exp)
	}
	if m.ServiceAccounts["alicesvcoff"].Enabled {
		t.Error("alicesvcoff should be disabled")
	}
	if m.ServiceAccounts["rootsvc"].Parent != "fixtureadmin" {
		t.Errorf("rootsvc: %+v", m.ServiceAccounts["rootsvc"])
	}
}

// TestRealBucketExport decodes the bucket export of a real MinIO.
func TestRealBucketExport(t *testing.T) {
	x := readFixture(t, "buckets.zip")
	if x.Kind != KindBuckets {
		t.Fatalf("kind %v", x.Kind)
	}
	b := x.Buckets
	if got := strings.Join(b.Names(), ","); got != "data,locked,paused,shared" {
		t.Fatalf("buckets %s", got)
	}
	data := b.Buckets["data"]
	for what, doc := range map[string][]byte{"versioning": data.Versioning, "lifecycle": data.Lifecycle,
		"tagging": data.Tagging, "encryption": data.Encryption, "quota": data.Quota} {
		if len(doc) == 0 {
			t.Errorf("data: no %s", what)
		}
	}
	if !bytes.Contains(b.Buckets["locked"].ObjectLock, []byte("GOVERNANCE")) {
		t.Errorf("locked: %s", b.Buckets["locked"].ObjectLock)
	}
	if !bytes.Contains(b.Buckets["paused"].Versioning, []byte("Suspended")) {
		t.Errorf("paused: %s", b.Buckets["paused"].Versioning)
	}
	if !bytes.Contains(b.Buckets["shared"].Policy, []byte(`"s3:GetObject"`)) {
		t.Errorf("shared: %s", b.Buckets["shared"].Policy)
	}
}

type entry struct {
	name string
	data []byte
}

func makeZip(t testing.TB, entries ...entry) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range entries {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: e.name, Method: zip.Deflate})
		if err != nil {
			t.Fatal(err)
		}
		w.Write(e.data)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestHostileExports: every malformed or hostile zip is an ErrFormat
// error, not a panic, a huge allocation or a path outside the export.
func TestHostileExports(t *testing.T) {
	bomb := bytes.Repeat([]byte{'0'}, MaxEntrySize+1)
	cases := map[string][]byte{
		"not a zip":          []byte("PK\x03\x04 not really"),
		"empty input":        nil,
		"traversal":          makeZip(t, entry{"../etc/policy.json", []byte("{}")}),
		"absolute":           makeZip(t, entry{"/data/policy.json", []byte("{}")}),
		"dot segment":        makeZip(t, entry{"data/./policy.json", []byte("{}")}),
		"backslash":          makeZip(t, entry{"data\\..\\policy.json", []byte("{}")}),
		"empty segment":      makeZip(t, entry{"data//policy.json", []byte("{}")}),
		"nul":                makeZip(t, entry{"data/policy.json\x00", []byte("{}")}),
		"bad bucket":         makeZip(t, entry{"Bad_Bucket/policy.json", []byte("{}")}),
		"deep bucket entry":  makeZip(t, entry{"data/x/policy.json", []byte("{}")}),
		"bucket json":        makeZip(t, entry{"data/quota.json", []byte("{not json")}),
		"duplicate":          makeZip(t, entry{"data/policy.json", []byte("{}")}, entry{"data/policy.json", []byte("{}")}),
		"bomb":               makeZip(t, entry{"data/lifecycle.xml", bomb}),
		"users not json":     makeZip(t, entry{"iam-assets/users.json", []byte("[1,2")}),
		"users trailing":     makeZip(t, entry{"iam-assets/users.json", []byte(`{} {}`)}),
		"users wrong type":   makeZip(t, entry{"iam-assets/users.json", []byte(`{"a":{"secretKey":7}}`)}),
		"user bad status":    makeZip(t, entry{"iam-assets/users.json", []byte(`{"a":{"secretKey":"12345678","status":"maybe"}}`)}),
		"unnamed user":       makeZip(t, entry{"iam-assets/users.json", []byte(`{"":{"secretKey":"12345678"}}`)}),
		"group bad":          makeZip(t, entry{"iam-assets/groups.json", []byte(`{"g":{"members":"alice"}}`)}),
		"policy not object":  makeZip(t, entry{"iam-assets/policies.json", []byte(`{"p":"s3:*"}`)}),
		"svc key mismatch":   makeZip(t, entry{"iam-assets/svcaccts.json", []byte(`{"a":{"accessKey":"b","parent":"u"}}`)}),
		"svc policy string":  makeZip(t, entry{"iam-assets/svcaccts.json", []byte(`{"a":{"parent":"u","sessionPolicy":"x"}}`)}),
		"svc bad expiration": makeZip(t, entry{"iam-assets/svcaccts.json", []byte(`{"a":{"parent":"u","expiration":"soon"}}`)}),
		"mapping bad":        makeZip(t, entry{"iam-assets/user_mappings.json", []byte(`{"a":{"policy":["x"]}}`)}),
	}
	for name, data := range cases {
		t.Run(name, func(t *testing.T) {
			x, err := ReadBytes(data)
			if err == nil {
				t.Fatalf("accepted: %+v", x)
			}
			if !errors.Is(err, ErrFormat) {
				t.Fatalf("error %v does not wrap ErrFormat", err)
			}
		})
	}
}

// TestTotalBound: many entries each under the per-entry bound still stop
// at the total bound.
func TestTotalBound(t *testing.T) {
	lim := limits{entries: 10, entrySize: 1000, total: 2500}
	big := bytes.Repeat([]byte{' '}, 1000)
	var es []entry
	for i := range 3 {
		es = append(es, entry{name: "data/extra-" + string(rune('a'+i)) + ".xml", data: big})
	}
	data := makeZip(t, es...)
	_, err := read(bytes.NewReader(data), int64(len(data)), lim)
	if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), "in all") {
		t.Fatalf("got %v", err)
	}
}

// TestEntryCount: more entries than the bound is refused before any is read.
func TestEntryCount(t *testing.T) {
	var es []entry
	for i := range 11 {
		es = append(es, entry{name: "data/x" + string(rune('a'+i)), data: nil})
	}
	data := makeZip(t, es...)
	_, err := read(bytes.NewReader(data), int64(len(data)), limits{entries: 10, entrySize: 10, total: 10})
	if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), "entries") {
		t.Fatalf("got %v", err)
	}
}

// TestUnknownFiles are kept by name, not dropped silently.
func TestUnknownFiles(t *testing.T) {
	x, err := ReadBytes(makeZip(t, entry{"data/cors.xml", []byte("<CORSConfiguration/>")}, entry{"data/versioning.xml", []byte("<VersioningConfiguration/>")}))
	if err != nil {
		t.Fatal(err)
	}
	if b := x.Buckets.Buckets["data"]; string(b.Other["cors.xml"]) != "<CORSConfiguration/>" || len(b.Versioning) == 0 {
		t.Fatalf("%+v", b)
	}
	x, err = ReadBytes(makeZip(t, entry{"iam-assets/users.json", []byte(`{}`)}, entry{"iam-assets/idp.json", []byte(`{}`)}))
	if err != nil || strings.Join(x.IAM.Unknown, ",") != "iam-assets/idp.json" {
		t.Fatalf("%v %+v", err, x)
	}
}

// FuzzRead: no input panics or escapes the bounds; whatever decodes has
// valid bucket names. (Smaller bounds than the defaults, so that an input
// inflating to the bound does not take the fuzzer's time.)
func FuzzRead(f *testing.F) {
	for _, name := range []string{"iam.zip", "buckets.zip"} {
		data, err := os.ReadFile("testdata/" + name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add(makeZip(f, entry{"iam-assets/svcaccts.json", []byte(`{"a":{"parent":"u","status":"on","sessionPolicy":{"Statement":[]}}}`)}))
	lim := limits{entries: 1000, entrySize: 64 << 10, total: 1 << 20}
	f.Fuzz(func(t *testing.T, data []byte) {
		x, err := read(bytes.NewReader(data), int64(len(data)), lim)
		if err != nil {
			if !errors.Is(err, ErrFormat) {
				t.Fatalf("error %v does not wrap ErrFormat", err)
			}
			return
		}
		if x.Kind == KindBuckets {
			for _, n := range x.Buckets.Names() {
				if CheckBucketName(n) != nil {
					t.Fatalf("bucket %q accepted", n)
				}
			}
		}
	})
}
