package migrate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestKeptID: which source ids the target keeps, hostile ones included.
func TestKeptID(t *testing.T) {
	mod := time.Date(2025, 3, 4, 5, 6, 7, 891_000_000, time.UTC)
	own := newTargetID(mod.Add(234567), "0123456789abcdef")
	for id, want := range map[string]bool{
		"null":                                 true,
		"c39279c4-c148-4deb-a634-61dafea523c7": true,
		"C39279C4-C148-4DEB-A634-61DAFEA523C7": false, // the target keeps lower case only
		"c39279c4c1484deba63461dafea523c7x":    false,
		own:                                    true,
		strings.ToUpper(own):                   false,
		newTargetID(mod.Add(time.Second), "0123456789abcdef"):                false, // its time is not the version's
		"0000000000000000" + "0123456789abcdef":                              false,
		"ffffffffffffffff" + "0123456789abcdef":                              false,
		"3/60O30C1G60O30C1G60O30C1G60O30C1G60O30C1G60O30C1L00AK5NPRPTPBK20=": false,
		"3HL4kqtJlcpXroDTDmJ+rmSpXd3dIbrHY+MTRCxf3vjVBH40Nrjfkd":             false,
		"": false, "NULL": false, "../../etc": false, "\x00": false, strings.Repeat("a", 1024): false,
		"zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz": false,
	} {
		if got := keptID(id, mod); got != want {
			t.Errorf("keptID(%q) = %v, want %v", id, got, want)
		}
	}
}

// TestPlanIDs: versions the target cannot keep the ids of get ids of
// shardstore's form whose times keep the versions' order, also where the
// source lists several with the same time; the same input gives the same
// ids (so a re-run recognises what it imported).
func TestPlanIDs(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 0, 0, 1, 0, time.UTC)
	list := func() []srcVersion {
		// As a source that keeps seconds lists them: newest first, the
		// delete marker in its own list.
		vs := []srcVersion{
			{key: "k", id: "3/C", mod: t0, latest: true, seq: 0, etag: "c"},
			{key: "k", id: "3/B", mod: t0, seq: 1, etag: "b"},
			{key: "k", id: "3/A", mod: t0.Add(-time.Second), seq: 2, etag: "a"},
			{key: "k", id: "3/M", mod: t0, marker: true, seq: 3},
			{key: "k", id: "null", mod: t0.Add(-2 * time.Second), seq: 4, etag: "n"},
		}
		for i := range vs {
			vs[i].order = -1 // the answer's order not known
		}
		sortOldestFirst(vs)
		planIDs("b", vs)
		return vs
	}
	vs := list()
	var order []string
	for _, v := range vs {
		order = append(order, v.id)
	}
	if got := strings.Join(order, " "); got != "null 3/A 3/B 3/M 3/C" {
		t.Fatalf("order %s", got)
	}
	for i, v := range vs {
		if v.id == "null" {
			if v.target != "null" || v.suffix != "" {
				t.Fatalf("the null version: %+v", v)
			}
			continue
		}
		if !keptID(v.target, v.at) || v.suffix == "" || remappedSuffix(v.target) != v.suffix {
			t.Fatalf("%s: target id %q (suffix %q) is not one the target keeps", v.id, v.target, v.suffix)
		}
		if v.at.Truncate(time.Second) != v.mod {
			t.Fatalf("%s: time %v moved from %v", v.id, v.at, v.mod)
		}
		if i > 0 && !v.at.After(vs[i-1].at) {
			t.Fatalf("%s: time %v not after the one before (%v)", v.id, v.at, vs[i-1].at)
		}
	}
	again := list()
	for i := range vs {
		if vs[i].target != again[i].target {
			t.Fatalf("a second plan gave %s another id", vs[i].id)
		}
		if !imported(vs[i], []srcVersion{{key: "k", id: again[i].target, etag: again[i].etag, marker: again[i].marker, mod: again[i].at}}) {
			t.Fatalf("%s is not recognised on the target", vs[i].id)
		}
	}
	// Where the answer's order is known, it decides ties: here the
	// delete marker came after the version of the same time.
	tied := []srcVersion{
		{key: "k", id: "3/M", mod: t0, marker: true, latest: true, order: 0},
		{key: "k", id: "3/V", mod: t0, order: 1},
		{key: "k", id: "3/O", mod: t0.Add(-time.Second), order: 2},
	}
	sortOldestFirst(tied)
	if got := tied[0].id + " " + tied[1].id + " " + tied[2].id; got != "3/O 3/V 3/M" {
		t.Fatalf("order by the answer: %s", got)
	}
	// An answer that lists the markers after the versions (moto) or the
	// oldest first (gofakes3) is not gone by.
	for name, vs := range map[string][]srcVersion{
		"markers after": {
			{key: "k", id: "3/V2", mod: t0, order: 0},
			{key: "k", id: "3/V1", mod: t0, order: 1},
			{key: "k", id: "3/M", mod: t0, marker: true, latest: true, order: 2},
		},
		"oldest first": {
			{key: "k", id: "3/V1", mod: t0.Add(-time.Second), order: 0},
			{key: "k", id: "3/V2", mod: t0, order: 1},
			{key: "k", id: "3/M", mod: t0, marker: true, latest: true, order: 2},
		},
		"an entry without its place": {
			{key: "k", id: "3/V2", mod: t0, order: 1, latest: true},
			{key: "k", id: "3/V1", mod: t0, order: -1},
		},
	} {
		if answerOrderFits(vs) {
			t.Errorf("%s: the answer's order is gone by", name)
		}
	}
	if !answerOrderFits(tied) {
		t.Error("S3's order is not gone by")
	}
	if idSuffix("b", "k", "3/A") == idSuffix("b", "k2", "3/A") || idSuffix("b", "k", "3/A") == idSuffix("b2", "k", "3/A") ||
		idSuffix("a\x00b", "c", "d") == idSuffix("a", "b\x00c", "d") {
		t.Fatal("derived halves collide across keys or buckets")
	}
}

// TestReadIDMap: the id map file's reader refuses what is not an entry.
func TestReadIDMap(t *testing.T) {
	good := `{"bucket":"b","key":"k/ü","source_version_id":"3/x=","version_id":"` +
		newTargetID(time.Date(2025, 1, 1, 0, 0, 0, 5, time.UTC), "0123456789abcdef") + `","mod_time":"2025-01-01T00:00:00.000000005Z"}`
	if es, err := readIDMap(strings.NewReader(good + "\n\n" + good + "\n")); err != nil || len(es) != 2 || es[0].Key != "k/ü" {
		t.Fatalf("good map: %v %+v", err, es)
	}
	for name, in := range map[string]string{
		"not json":        "hello\n",
		"unknown field":   strings.Replace(good, `"bucket"`, `"bucket2":1,"bucket"`, 1),
		"two on a line":   good + good,
		"no bucket":       strings.Replace(good, `"bucket":"b"`, `"bucket":""`, 1),
		"no key":          strings.Replace(good, `"key":"k/ü"`, `"key":""`, 1),
		"no source id":    strings.Replace(good, `"3/x="`, `""`, 1),
		"bad time":        strings.Replace(good, `2025-01-01T00:00:00.000000005Z`, `yesterday`, 1),
		"id of none time": strings.Replace(good, `2025-01-01T00:00:00.000000005Z`, `2026-01-01T00:00:00Z`, 1),
		"id not ours":     strings.Replace(good, `"version_id":"`, `"version_id":"../`, 1),
		"wrong types":     `{"bucket":1,"key":"k","source_version_id":"s","version_id":"v","mod_time":"t"}`,
		"too long line":   `{"bucket":"` + strings.Repeat("a", maxIDMapLine) + `"}`,
		"array":           `[]`,
	} {
		if es, err := readIDMap(strings.NewReader(in)); err == nil {
			t.Errorf("%s: read as %+v", name, es)
		}
	}
}

// TestWriteIDMap: a rewrite keeps other buckets' entries and this
// bucket's that the target still holds, adds the new ones once, and
// refuses to overwrite a damaged file.
func TestWriteIDMap(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ids.jsonl")
	at := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	e := func(b, k, src string, n int) IDMapEntry {
		tt := at.Add(time.Duration(n))
		return IDMapEntry{Bucket: b, Key: k, SourceID: src, TargetID: newTargetID(tt, idSuffix(b, k, src)), ModTime: tt.Format(time.RFC3339Nano)}
	}
	if err := writeIDMap(path, "a", nil, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("an empty map made a file: %v", err)
	}
	all := func(IDMapEntry) bool { return true }
	if err := writeIDMap(path, "a", []IDMapEntry{e("a", "k", "1", 1), e("a", "k", "2", 2)}, all); err != nil {
		t.Fatal(err)
	}
	if err := writeIDMap(path, "b", []IDMapEntry{e("b", "k", "1", 1), e("b", "k", "1", 1)}, all); err != nil {
		t.Fatal(err)
	}
	gone := e("a", "k", "1", 1).TargetID
	if err := writeIDMap(path, "a", []IDMapEntry{e("a", "k", "3", 3)}, func(x IDMapEntry) bool { return x.TargetID != gone }); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	es, err := readIDMap(f)
	f.Close()
	var got []string
	for _, x := range es {
		got = append(got, x.Bucket+"/"+x.Key+"/"+x.SourceID)
	}
	if err != nil || strings.Join(got, " ") != "a/k/2 a/k/3 b/k/1" {
		t.Fatalf("map %v: %v", got, err)
	}
	if err := os.WriteFile(path, []byte("damaged\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := writeIDMap(path, "a", []IDMapEntry{e("a", "k", "4", 4)}, all); err == nil {
		t.Fatal("a damaged map was overwritten")
	}
}

// FuzzReadIDMap: any file is read as entries that each pass the
// checks, or refused; never a panic.
func FuzzReadIDMap(f *testing.F) {
	f.Add(`{"bucket":"b","key":"k","source_version_id":"3/x=","version_id":"` +
		newTargetID(time.Date(2025, 1, 1, 0, 0, 0, 5, time.UTC), "0123456789abcdef") + `","mod_time":"2025-01-01T00:00:00.000000005Z"}` + "\n")
	f.Add("{}\n[]\nnull\n")
	f.Fuzz(func(t *testing.T, in string) {
		es, err := readIDMap(strings.NewReader(in))
		if err != nil {
			return
		}
		for _, e := range es {
			at, err := time.Parse(time.RFC3339Nano, e.ModTime)
			if err != nil || e.Bucket == "" || e.Key == "" || e.SourceID == "" || !keptID(e.TargetID, at) {
				t.Fatalf("accepted %+v", e)
			}
		}
	})
}

// TestGoneFromSource: the target versions that no source version
// accounts for, by id or by derived half, are the ones --delete removes.
func TestGoneFromSource(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	src := map[string][]srcVersion{
		"k": {{key: "k", id: "null", mod: t0}, {key: "k", id: "3/A", mod: t0.Add(time.Second)}},
		"u": {{key: "u", id: "c39279c4-c148-4deb-a634-61dafea523c7", mod: t0}},
	}
	for k := range src {
		for i := range src[k] {
			src[k][i].order = -1
		}
		sortOldestFirst(src[k])
		planIDs("b", src[k])
	}
	a := src["k"][1].target
	other := newTargetID(t0.Add(time.Second), idSuffix("b", "k", "3/GONE"))
	have := map[string][]srcVersion{
		"k":    {{key: "k", id: "null"}, {key: "k", id: a}, {key: "k", id: other}},
		"u":    {{key: "u", id: "c39279c4-c148-4deb-a634-61dafea523c7"}, {key: "u", id: "d39279c4-c148-4deb-a634-61dafea523c7"}},
		"gone": {{key: "gone", id: "null"}, {key: "gone", id: "e39279c4-c148-4deb-a634-61dafea523c7", marker: true}},
	}
	var got []string
	for _, h := range goneFromSource(src, have) {
		got = append(got, h.key+" "+h.id)
	}
	want := "gone e39279c4-c148-4deb-a634-61dafea523c7, gone null, k " + other + ", u d39279c4-c148-4deb-a634-61dafea523c7"
	if strings.Join(got, ", ") != want {
		t.Fatalf("gone: %s\nwant %s", strings.Join(got, ", "), want)
	}
	if g := goneFromSource(src, map[string][]srcVersion{}); len(g) != 0 {
		t.Fatalf("an empty target: %v", g)
	}
}
