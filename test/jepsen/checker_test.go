package jepsen

import (
	"strings"
	"testing"
	"time"
)

// ms is a time in the hand-made histories.
func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }

func keys(prefix string) []string { return []string{prefix + "k"} }

func op(kind Kind, key, value string, call, ret int, out Outcome) Op {
	return Op{Kind: kind, Key: key, Value: value, Call: ms(call), Return: ms(ret), Outcome: out}
}

// The register checker on hand-made histories: each "bad" one must be
// caught, each "good" one must pass.
func TestCheckLinearizableHistories(t *testing.T) {
	cases := []struct {
		name string
		ops  []Op
		bad  bool
	}{
		{"read sees the acknowledged write", []Op{
			op(OpPut, "k", "a", 0, 10, Ok), op(OpGet, "k", "a", 20, 30, Ok)}, false},
		{"stale read after an acknowledged overwrite", []Op{
			op(OpPut, "k", "a", 0, 10, Ok), op(OpPut, "k", "b", 20, 30, Ok), op(OpGet, "k", "a", 40, 50, Ok)}, true},
		{"lost acknowledged write (final read absent)", []Op{
			op(OpPut, "k", "a", 0, 10, Ok), op(OpGet, "k", "", 40, 50, Ok)}, true},
		{"concurrent read may see either", []Op{
			op(OpPut, "k", "a", 0, 10, Ok), op(OpPut, "k", "b", 20, 40, Ok), op(OpGet, "k", "a", 25, 30, Ok), op(OpGet, "k", "b", 35, 50, Ok)}, false},
		{"unknown write may take effect later", []Op{
			op(OpPut, "k", "a", 0, 10, Ok), op(OpPut, "k", "b", 20, 30, Unknown), op(OpGet, "k", "a", 40, 50, Ok), op(OpGet, "k", "b", 60, 70, Ok)}, false},
		{"unknown write may never take effect", []Op{
			op(OpPut, "k", "a", 0, 10, Ok), op(OpPut, "k", "b", 20, 30, Unknown), op(OpGet, "k", "a", 40, 50, Ok)}, false},
		{"read flips back to the older value", []Op{
			op(OpPut, "k", "a", 0, 10, Ok), op(OpPut, "k", "b", 20, 30, Unknown), op(OpGet, "k", "b", 40, 50, Ok), op(OpGet, "k", "a", 60, 70, Ok)}, true},
		{"If-None-Match succeeds on an existing key", []Op{
			op(OpPut, "k", "a", 0, 10, Ok), op(OpPutIfAbsent, "k", "b", 20, 30, Ok)}, true},
		{"If-None-Match refused on a missing key", []Op{
			{Kind: OpPutIfAbsent, Key: "k", Value: "b", Call: ms(20), Return: ms(30), Outcome: Fail, Refused: true}}, true},
		{"If-Match on the current value", []Op{
			op(OpPut, "k", "a", 0, 10, Ok), {Kind: OpPutIfMatch, Key: "k", Value: "b", Match: "a", Call: ms(20), Return: ms(30), Outcome: Ok}, op(OpGet, "k", "b", 40, 50, Ok)}, false},
		{"If-Match succeeds on a replaced value", []Op{
			op(OpPut, "k", "a", 0, 10, Ok), op(OpPut, "k", "c", 12, 15, Ok), {Kind: OpPutIfMatch, Key: "k", Value: "b", Match: "a", Call: ms(20), Return: ms(30), Outcome: Ok}}, true},
		{"delete then read absent", []Op{
			op(OpPut, "k", "a", 0, 10, Ok), op(OpDelete, "k", "", 20, 30, Ok), op(OpGet, "k", "", 40, 50, Ok)}, false},
		{"listing misses an acknowledged write", []Op{
			op(OpPut, "k", "a", 0, 10, Ok), {Kind: OpList, Key: "", Call: ms(20), Return: ms(30), Outcome: Ok, Listed: map[string]string{}}}, true},
		{"listing shows a deleted key", []Op{
			op(OpPut, "k", "a", 0, 10, Ok), op(OpDelete, "k", "", 12, 15, Ok), {Kind: OpList, Key: "", Call: ms(20), Return: ms(30), Outcome: Ok, Listed: map[string]string{"k": "a"}}}, true},
		{"failed reads and refused connections are ignored", []Op{
			op(OpPut, "k", "a", 0, 10, Ok), op(OpGet, "k", "zzz", 20, 30, Fail), op(OpPut, "k", "b", 40, 50, Fail)}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var st CheckStats
			got := CheckLinearizable(c.ops, keys, 10*time.Second, true, &st)
			if (len(got) > 0) != c.bad {
				t.Fatalf("anomalies %v, want bad=%v", got, c.bad)
			}
			if st.LinearKeys != 1 {
				t.Fatalf("checked %d keys, want 1", st.LinearKeys)
			}
		})
	}
}

func TestCheckVersionsHistories(t *testing.T) {
	vput := func(v, id string, call, ret int) Op {
		return Op{Kind: OpVPut, Key: "p/k", Value: v, VersionID: id, Call: ms(call), Return: ms(ret), Outcome: Ok}
	}
	vlist := func(call, ret int, vs ...ListedVersion) Op {
		return Op{Kind: OpVList, Key: "p/", Call: ms(call), Return: ms(ret), Outcome: Ok, Versions: map[string][]ListedVersion{"p/k": vs}}
	}
	a, b := ListedVersion{VersionID: "1", Value: "a"}, ListedVersion{VersionID: "2", Value: "b", Latest: true}
	cases := []struct {
		name string
		ops  []Op
		want string // "" = no anomaly, else the type expected
	}{
		{"good", []Op{vput("a", "1", 0, 10), vput("b", "2", 20, 30), vlist(40, 50, b, a)}, ""},
		{"lost", []Op{vput("a", "1", 0, 10), vput("b", "2", 20, 30), vlist(40, 50, b)}, "lost"},
		{"order", []Op{vput("a", "1", 0, 10), vput("b", "2", 20, 30), vlist(40, 50, a, b)}, "order"},
		{"duplicate", []Op{vput("a", "1", 0, 10), vput("b", "2", 20, 30), vlist(40, 50, b, b, a)}, "duplicate-id"},
		{"phantom", []Op{vput("a", "1", 0, 10), vlist(40, 50, ListedVersion{VersionID: "9", Value: "?beef"}, a)}, "phantom"},
		{"id", []Op{vput("a", "1", 0, 10), vlist(40, 50, ListedVersion{VersionID: "7", Value: "a"})}, "id-mismatch"},
		{"replaced between pages", []Op{vput("a", "1", 0, 10), vput("b", "2", 20, 30), vlist(40, 50, onPage(b, 0), onPage(b, 1), onPage(a, 1))}, ""},
		{"duplicate on one page", []Op{vput("a", "1", 0, 10), vput("b", "2", 20, 30), vlist(40, 50, onPage(b, 1), onPage(b, 1), onPage(a, 1))}, "duplicate-id"},
		{"order across pages", []Op{vput("a", "1", 0, 10), vput("b", "2", 20, 30), vlist(40, 50, onPage(a, 0), onPage(b, 1))}, ""},
		{"stale latest", []Op{vput("a", "1", 0, 10), vput("b", "2", 20, 30), vlist(40, 50, b, latest(a))}, "stale-latest"},
		{"latest first", []Op{vput("a", "1", 0, 10), vput("b", "2", 20, 30), vlist(40, 50, latest(b), a)}, ""},
		{"concurrent write not yet listed", []Op{vput("a", "1", 0, 10), vput("b", "2", 20, 60), vlist(40, 50, a)}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var st CheckStats
			got := CheckVersions(c.ops, &st)
			if c.want == "" {
				if len(got) > 0 {
					t.Fatalf("anomalies %v, want none", got)
				}
				return
			}
			var types []string
			for _, a := range got {
				types = append(types, a.Type)
			}
			if !strings.Contains(strings.Join(types, ","), c.want) {
				t.Fatalf("anomaly types %v, want %s", types, c.want)
			}
		})
	}
}

func TestParseNemeses(t *testing.T) {
	for _, bad := range []string{"partition", "kill,", "KILL", "kill;pause", "\x00", strings.Repeat("x", 1000)} {
		if _, err := ParseNemeses(bad); err == nil {
			t.Errorf("ParseNemeses(%q) accepted", bad)
		}
	}
	got, err := ParseNemeses(" kill , pause")
	if err != nil || len(got) != 2 {
		t.Fatalf("ParseNemeses: %v %v", got, err)
	}
}

func TestCheckListAfterWriteHistories(t *testing.T) {
	list := func(call, ret int, listed map[string]string) Op {
		return Op{Kind: OpList, Key: "", Call: ms(call), Return: ms(ret), Outcome: Ok, Listed: listed}
	}
	cases := []struct {
		name string
		ops  []Op
		want string
	}{
		{"shows the acknowledged write", []Op{op(OpPut, "k", "a", 0, 10, Ok), list(20, 30, map[string]string{"k": "a"})}, ""},
		{"misses the acknowledged write", []Op{op(OpPut, "k", "a", 0, 10, Ok), list(20, 30, map[string]string{})}, "stale"},
		{"shows an acknowledged delete's key", []Op{op(OpPut, "k", "a", 0, 10, Ok), op(OpDelete, "k", "", 12, 15, Ok), list(20, 30, map[string]string{"k": "a"})}, "stale"},
		{"shows an older value", []Op{op(OpPut, "k", "a", 0, 10, Ok), op(OpPut, "k", "b", 12, 15, Ok), list(20, 30, map[string]string{"k": "a"})}, "stale"},
		{"shows a write in flight", []Op{op(OpPut, "k", "a", 0, 10, Ok), op(OpPut, "k", "b", 12, 40, Ok), list(20, 30, map[string]string{"k": "b"})}, ""},
		{"shows an unknown write", []Op{op(OpPut, "k", "a", 0, 10, Ok), op(OpPut, "k", "b", 12, 15, Unknown), list(20, 30, map[string]string{"k": "b"})}, ""},
		{"shows a value never written", []Op{op(OpPut, "k", "a", 0, 10, Ok), list(20, 30, map[string]string{"k": "?00ff"})}, "phantom"},
		{"nothing acknowledged yet", []Op{op(OpPut, "k", "a", 0, 40, Ok), list(20, 30, map[string]string{})}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var st CheckStats
			got := CheckListAfterWrite(c.ops, keys, &st)
			if c.want == "" {
				if len(got) > 0 {
					t.Fatalf("anomalies %v, want none", got)
				}
				return
			}
			if len(got) != 1 || got[0].Type != c.want {
				t.Fatalf("anomalies %v, want one %s", got, c.want)
			}
		})
	}
}

// onPage is v as listed on response page n; latest is v flagged latest.
func onPage(v ListedVersion, n int) ListedVersion { v.Page = n; return v }
func latest(v ListedVersion) ListedVersion        { v.Latest = true; return v }

// A multipart object's body names its upload's value only when both
// parts are that upload's: a truncated body, another upload's first
// part or a body of plain bytes is corrupt.
func TestMultipartBody(t *testing.T) {
	good := append(mpFirstPart("c3.7"), "c3.7"...)
	if v := mpValue(good); v != "c3.7" {
		t.Fatalf("mpValue(good) = %q", v)
	}
	bad := map[string][]byte{
		"empty":           nil,
		"first part only": mpFirstPart("c3.7"),
		"other upload":    append(mpFirstPart("c3.8"), "c3.7"...),
		"short":           append(mpFirstPart("c3.7")[:mpPartSize-1], "c3.7"...),
	}
	for name, body := range bad {
		if v := mpValue(body); v == "" || v[0] != '?' {
			t.Errorf("%s: mpValue = %q, want ?corrupt", name, v)
		}
	}
	ops := []Op{{Kind: OpMPGet, Key: "m000/k0", Outcome: Ok, Value: mpValue(bad["other upload"])}, {Kind: OpMPGet, Key: "m000/k1", Outcome: Ok, Value: "c1.1"}}
	if a := CheckMultipart(ops); len(a) != 1 || a[0].Key != "m000/k0" {
		t.Fatalf("CheckMultipart = %v", a)
	}
	// A complete is a write, a multipart GET a read: a GET of a value the
	// key no longer has after a complete is not linearizable.
	hist := []Op{
		{Client: 1, Kind: OpMPComplete, Key: "m000/k0", Value: "c1.1", Outcome: Ok, Call: 0, Return: 10},
		{Client: 1, Kind: OpMPComplete, Key: "m000/k0", Value: "c1.2", Outcome: Ok, Call: 20, Return: 30},
		{Client: 2, Kind: OpMPGet, Key: "m000/k0", Value: "c1.1", Outcome: Ok, Call: 40, Return: 50},
	}
	var st CheckStats
	if a := CheckLinearizable(hist, func(string) []string { return nil }, time.Second, false, &st); len(a) != 1 {
		t.Fatalf("stale multipart read: %d anomalies, want 1", len(a))
	}
	hist[2].Value = "c1.2"
	if a := CheckLinearizable(hist, func(string) []string { return nil }, time.Second, false, &st); len(a) != 0 {
		t.Fatalf("fresh multipart read: %v", a)
	}
}
