package quorum

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/shardstore/shardstore/internal/meta"
)

// TestDataDriven runs testdata/*.txt. Each case is a command, its input
// (one line per drive, or one record) and the expected output; run with
// -rewrite to regenerate the output after a deliberate change.
//
// Commands:
//
//	current ec=M+K        Current over one record per drive
//	noncurrent ec=M+K     Noncurrent over one copy per drive
//	decided ec=M+K        Decided over the current versions heard
//	unanimous want=N      Unanimous over one copy per drive
//	settle ec=M+K         Settle and PendingVersion of one record
//
// A drive's line is "dN: CELL [prev=CELL] [keep=CELL]", its record holding
// CELL as current and then each previous version (keep= adds FlagKeep to
// FlagPrev); "-" as the first CELL leaves no current version. Instead of
// a record a drive can be "absent" (it holds none) or "error", "corrupt",
// "lagging" or "unasked" (no record read; all four are alike here).
//
// A CELL is a version name vT (T is its time: the newest wins a tie)
// with options after slashes: /acl=X and /tag=K:V set its settings,
// /marker makes it a delete marker, /ec=M+K gives it its own geometry.
// Records of one name are records of one version.
func TestDataDriven(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			switch d.Cmd {
			case "current":
				recs, absent := parseDrives(t, d)
				return describe(Current(recs, absent, geometry(t, d).ParityShards))
			case "noncurrent":
				recs, absent := parseDrives(t, d)
				return describe(Noncurrent(currents(recs), absent, geometry(t, d).ParityShards))
			case "decided":
				recs, _ := parseDrives(t, d)
				if Decided(currents(recs)) {
					return "decided\n"
				}
				return "undecided: wait for more drives\n"
			case "unanimous":
				var want int
				d.ScanArgs(t, "want", &want)
				recs, _ := parseDrives(t, d)
				if m := Unanimous(currents(recs), want); m != nil {
					return "unanimous: " + name(m) + "\n"
				}
				return "not unanimous: read a quorum\n"
			case "settle":
				g := geometry(t, d)
				r := parseRecord(t, strings.TrimSpace(d.Input), g)
				var b strings.Builder
				if pv := PendingVersion(r); pv != nil {
					fmt.Fprintf(&b, "pending: %s\n", name(pv))
				}
				cur := r.Current()
				if cur == nil {
					return b.String() + "no current version: nothing to settle\n"
				}
				noncurrent, dropped := Settle(r, cur)
				fmt.Fprintf(&b, "keep: %s\nnoncurrent: %s\ndropped: %s\n", name(cur), names(noncurrent), names(dropped))
				return b.String()
			default:
				t.Fatalf("%s: unknown command %q", d.Pos, d.Cmd)
				return ""
			}
		})
	})
}

// describe prints a Result.
func describe(res Result) string {
	var b strings.Builder
	if res.Version == nil {
		what := "read quorum lost"
		if res.NotFound {
			what = "not found"
		}
		fmt.Fprintf(&b, "no version: %s (votes %d, need %d)\n", what, res.Votes, res.Need)
		return b.String()
	}
	fmt.Fprintf(&b, "version: %s (votes %d, need %d)\n", name(res.Version), res.Votes, res.Need)
	if res.FromPrev {
		b.WriteString("from previous records: a commit was cut short\n")
	}
	if res.Pending {
		b.WriteString("pending: a replaced version awaits the versions table\n")
	}
	for p, s := range res.Drives {
		fmt.Fprintf(&b, "d%d: %s", p, s)
		if m := res.Held[p]; m != nil && !SameSettings(m, res.Version) {
			fmt.Fprintf(&b, " (stale settings: %s)", name(m))
		}
		b.WriteString("\n")
	}
	return b.String()
}

// name spells a version as the test data does.
func name(m *meta.Object) string {
	s := m.ETag
	if m.ACL != "" {
		s += "/acl=" + m.ACL
	}
	for _, k := range slices.Sorted(maps.Keys(m.Tags)) {
		s += "/tag=" + k + ":" + m.Tags[k]
	}
	if m.IsDeleteMarker() {
		s += "/marker"
	}
	return s
}

func names(ms []*meta.Object) string {
	if len(ms) == 0 {
		return "-"
	}
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = name(m)
	}
	return strings.Join(out, " ")
}

func currents(recs []*meta.Record) []*meta.Object {
	out := make([]*meta.Object, len(recs))
	for p, r := range recs {
		if r != nil {
			out[p] = r.Current()
		}
	}
	return out
}

// geometry reads the command's ec=M+K argument.
func geometry(t *testing.T, d *datadriven.TestData) meta.Erasure {
	var ec string
	d.ScanArgs(t, "ec", &ec)
	return parseEC(t, ec)
}

func parseEC(t *testing.T, ec string) meta.Erasure {
	m, k, ok := strings.Cut(ec, "+")
	data, err1 := strconv.Atoi(m)
	parity, err2 := strconv.Atoi(k)
	if !ok || err1 != nil || err2 != nil {
		t.Fatalf("bad geometry %q: want M+K", ec)
	}
	return meta.Erasure{DataShards: data, ParityShards: parity}
}

// parseDrives reads one line per drive, d0 first.
func parseDrives(t *testing.T, d *datadriven.TestData) ([]*meta.Record, []bool) {
	g := geometry(t, d)
	var recs []*meta.Record
	var absent []bool
	for i, line := range strings.Split(strings.TrimSpace(d.Input), "\n") {
		label, rest, ok := strings.Cut(line, ":")
		if !ok || label != fmt.Sprintf("d%d", i) {
			t.Fatalf("%s: line %q: want d%d: ...", d.Pos, line, i)
		}
		rest = strings.TrimSpace(rest)
		switch rest {
		case "absent":
			recs, absent = append(recs, nil), append(absent, true)
		case "error", "corrupt", "lagging", "unasked":
			recs, absent = append(recs, nil), append(absent, false)
		default:
			r := parseRecord(t, rest, g)
			for _, v := range r.Versions {
				v.Erasure.Index = i + 1
			}
			recs, absent = append(recs, r), append(absent, false)
		}
	}
	return recs, absent
}

// parseRecord reads "CELL [prev=CELL] [keep=CELL]".
func parseRecord(t *testing.T, s string, g meta.Erasure) *meta.Record {
	fields := strings.Fields(s)
	if len(fields) == 0 {
		t.Fatalf("empty record")
	}
	r := &meta.Record{}
	if fields[0] != "-" {
		r.Versions = append(r.Versions, parseCell(t, fields[0], g))
	}
	for _, f := range fields[1:] {
		kind, cell, _ := strings.Cut(f, "=")
		v := parseCell(t, cell, g)
		switch kind {
		case "prev":
			v.Flags |= meta.FlagPrev
		case "keep":
			v.Flags |= meta.FlagPrev | meta.FlagKeep
		default:
			t.Fatalf("record %q: unknown %q", s, f)
		}
		r.Versions = append(r.Versions, v)
	}
	return r
}

// parseCell reads "vT[/opt...]" into a version record.
func parseCell(t *testing.T, s string, g meta.Erasure) *meta.Object {
	parts := strings.Split(s, "/")
	ver := parts[0]
	tm, err := strconv.ParseInt(strings.TrimPrefix(ver, "v"), 10, 64)
	if err != nil || !strings.HasPrefix(ver, "v") {
		t.Fatalf("bad version %q: want vT", ver)
	}
	m := &meta.Object{ModTime: tm, ETag: ver, Size: 100 * tm, DataID: "data-" + ver, VersionID: "id-" + ver, Erasure: g}
	for _, opt := range parts[1:] {
		k, v, _ := strings.Cut(opt, "=")
		switch k {
		case "acl":
			m.ACL = v
		case "tag":
			tk, tv, _ := strings.Cut(v, ":")
			if m.Tags == nil {
				m.Tags = map[string]string{}
			}
			m.Tags[tk] = tv
		case "marker":
			m.Flags |= meta.FlagDeleteMarker
			m.Size, m.DataID = 0, ""
		case "ec":
			m.Erasure = parseEC(t, v)
		default:
			t.Fatalf("version %q: unknown option %q", s, opt)
		}
	}
	return m
}

func TestWriteQuorum(t *testing.T) {
	for _, c := range []struct{ data, parity, want int }{{12, 4, 12}, {4, 2, 4}, {2, 2, 3}, {8, 8, 9}, {1, 1, 2}, {3, 1, 3}} {
		if got := WriteQuorum(c.data, c.parity); got != c.want {
			t.Errorf("WriteQuorum(%d, %d) = %d, want %d", c.data, c.parity, got, c.want)
		}
	}
}

// TestResultAliasesRecords checks that the settled version and the held
// copies are the records passed in: the engine keeps each drive's copy
// (with its shard index and inline data) and changes them in place.
func TestResultAliasesRecords(t *testing.T) {
	g := meta.Erasure{DataShards: 2, ParityShards: 1}
	recs := make([]*meta.Record, 3)
	for p := range recs {
		recs[p] = &meta.Record{Versions: []*meta.Object{{ModTime: 1, ETag: "v1", Erasure: g}}}
	}
	res := Current(recs, make([]bool, 3), 1)
	if res.Version != recs[0].Versions[0] {
		t.Fatalf("Version is a copy, want drive 0's record")
	}
	for p, m := range res.Held {
		if m != recs[p].Versions[0] {
			t.Fatalf("Held[%d] is a copy, want the drive's record", p)
		}
	}
}
