package release

import (
	"bytes"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestFromHeader(t *testing.T) {
	long := strings.Repeat("a", maxLen+1)
	many := strings.TrimSuffix(strings.Repeat("f-x,", 1), ",")
	for i := 0; i < maxFeatures; i++ {
		many += ",f" + strings.Repeat("x", i%3) + string(rune('a'+i%26)) + string(rune('a'+i/26))
	}
	cases := []struct {
		name              string
		rel, proto, feats string
		want              Stamp
		bad               bool
	}{
		{name: "unstamped", want: Stamp{Protocol: Unstamped}},
		{name: "unstamped ignores the rest", rel: "x\x00", feats: "!!", want: Stamp{Protocol: Unstamped}},
		{name: "current", rel: "v1 abc", proto: "2", feats: "stamped-calls,encrypted-records",
			want: Stamp{Release: "v1 abc", Protocol: 2, Features: []string{"encrypted-records", "stamped-calls"}}},
		{name: "duplicates folded", rel: "r", proto: "3", feats: "a,a,b",
			want: Stamp{Release: "r", Protocol: 3, Features: []string{"a", "b"}}},
		{name: "no features", rel: "r", proto: "1", want: Stamp{Release: "r", Protocol: 1}},
		{name: "zero", proto: "0", bad: true},
		{name: "negative", proto: "-2", bad: true},
		{name: "plus", proto: "+2", bad: true},
		{name: "leading zero", proto: "02", bad: true},
		{name: "not a number", proto: "two", bad: true},
		{name: "huge", proto: "99999999999999999999", bad: true},
		{name: "space", proto: " 2", bad: true},
		{name: "control in release", rel: "v1\r\nX: y", proto: "2", bad: true},
		{name: "DEL in release", rel: "v1\x7f", proto: "2", bad: true},
		{name: "long release", rel: long, proto: "2", bad: true},
		{name: "long features", proto: "2", feats: long, bad: true},
		{name: "empty feature", proto: "2", feats: "a,,b", bad: true},
		{name: "trailing comma", proto: "2", feats: "a,", bad: true},
		{name: "upper case feature", proto: "2", feats: "Encrypted", bad: true},
		{name: "feature with space", proto: "2", feats: "a b", bad: true},
		{name: "feature with unicode", proto: "2", feats: "é", bad: true},
		{name: "too many features", proto: "2", feats: many, bad: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := http.Header{}
			if c.rel != "" {
				h.Set(HeaderRelease, c.rel)
			}
			if c.proto != "" {
				h.Set(HeaderProtocol, c.proto)
			}
			if c.feats != "" {
				h.Set(HeaderFeatures, c.feats)
			}
			got, err := FromHeader(h)
			if c.bad {
				if !errors.Is(err, ErrBadStamp) {
					t.Fatalf("got %+v, %v; want ErrBadStamp", got, err)
				}
				return
			}
			if err != nil || got.Release != c.want.Release || got.Protocol != c.want.Protocol || !slices.Equal(got.Features, c.want.Features) {
				t.Fatalf("got %+v, %v; want %+v", got, err, c.want)
			}
		})
	}
}

func TestStampRoundTrip(t *testing.T) {
	h := http.Header{}
	s := Current("devel 0123abc")
	s.Set(h)
	got, err := FromHeader(h)
	if err != nil || got.Release != s.Release || got.Protocol != Protocol || !slices.Equal(got.Features, Supported()) {
		t.Fatalf("got %+v, %v; want %+v", got, err, s)
	}
	if !slices.IsSorted(Supported()) {
		t.Fatal("Supported is not sorted")
	}
}

func TestCompatible(t *testing.T) {
	all := Supported()
	cases := []struct {
		name   string
		peer   Stamp
		active []Feature
		ok     bool
	}{
		{"same", Current("x"), all, true},
		{"adjacent older, no gate active", Stamp{Protocol: Protocol - 1}, nil, true},
		{"adjacent newer", Stamp{Protocol: Protocol + 1, Features: all}, all, true},
		{"two older", Stamp{Protocol: Protocol - 2}, nil, false},
		{"two newer", Stamp{Protocol: Protocol + 2, Features: all}, nil, false},
		{"unstamped after stamped-calls activated", Stamp{Protocol: Unstamped}, []Feature{StampedCalls}, false},
		{"lacks an active feature", Stamp{Protocol: Protocol, Features: []Feature{StampedCalls}}, all, false},
		{"has more than active", Stamp{Protocol: Protocol, Features: append(slices.Clone(all), "future")}, all, true},
	}
	for _, c := range cases {
		err := Compatible(c.peer, c.active)
		if (err == nil) != c.ok || (err != nil && !errors.Is(err, ErrIncompatible)) {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}

// syncBuf is a log sink the handlers may write from several goroutines.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) { s.mu.Lock(); defer s.mu.Unlock(); return s.b.Write(p) }
func (s *syncBuf) String() string              { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// fixedStamper stamps calls as some other release would.
type fixedStamper struct {
	h    http.Header // nil: unstamped
	base http.RoundTripper
}

func (f fixedStamper) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range f.h {
		r.Header[k] = v
	}
	return f.base.RoundTrip(r)
}

func stampHeader(rel string, proto int, feats ...string) http.Header {
	h := http.Header{}
	Stamp{Release: rel, Protocol: proto, Features: feats}.Set(h)
	return h
}

// TestNegotiation runs a guarded node and calls it as nodes of other
// releases would: the adjacent protocols are answered, the others refused
// with 426 and a message, logged once; an active feature keeps out a
// caller without it; and a caller refuses an answer of a release too new.
func TestNegotiation(t *testing.T) {
	var active []Feature
	var mu sync.Mutex
	activeFn := func() []Feature { mu.Lock(); defer mu.Unlock(); return active }
	logs := &syncBuf{}
	log := slog.New(slog.NewTextHandler(logs, nil))
	served := 0
	srv := httptest.NewServer(NewGuard(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		served++
		io.WriteString(w, "ok")
	}), activeFn, log))
	defer srv.Close()

	call := func(h http.Header) (int, string, http.Header) {
		t.Helper()
		c := &http.Client{Transport: fixedStamper{h: h, base: http.DefaultTransport}}
		resp, err := c.Get(srv.URL + "/_shardstore/peer/v1/hello")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), resp.Header
	}
	for _, c := range []struct {
		name string
		h    http.Header
		want int
	}{
		{"unstamped (a release before stamps)", nil, 200},
		{"older adjacent", stampHeader("old", Protocol-1), 200},
		{"same", stampHeader("same", Protocol, Supported()...), 200},
		{"newer adjacent", stampHeader("new", Protocol+1, Supported()...), 200},
		{"too new", stampHeader("future", Protocol+2), 426},
		{"too new again", stampHeader("future", Protocol+2), 426},
		{"malformed", http.Header{HeaderProtocol: {"x"}}, 400},
	} {
		code, body, h := call(c.h)
		if code != c.want {
			t.Errorf("%s: %d %s, want %d", c.name, code, body, c.want)
		}
		if h.Get(HeaderProtocol) != "2" || h.Get(HeaderRelease) != "" {
			t.Errorf("%s: answer stamped %q release %q", c.name, h.Get(HeaderProtocol), h.Get(HeaderRelease))
		}
		if code == 426 && !strings.Contains(body, "protocol 4") {
			t.Errorf("%s: message %q does not say the protocol", c.name, body)
		}
	}
	if n := strings.Count(logs.String(), "refusing calls"); n != 1 {
		t.Errorf("refusal logged %d times, want once:\n%s", n, logs)
	}

	// Once stamped-calls is active, an unstamped caller is refused.
	mu.Lock()
	active = []Feature{StampedCalls}
	mu.Unlock()
	if code, body, _ := call(nil); code != 426 || !strings.Contains(body, StampedCalls) {
		t.Errorf("unstamped after activation: %d %s", code, body)
	}
	if code, _, _ := call(stampHeader("same", Protocol, Supported()...)); code != 200 {
		t.Errorf("current after activation: %d", code)
	}

	// The calling side: a Stamper stamps, and refuses an answer from a
	// release too new (or too old) for it.
	var seen http.Header
	future := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = r.Header.Clone()
		if r.URL.Path == "/future" {
			w.Header().Set(HeaderProtocol, "9")
		}
		io.WriteString(w, "ok")
	}))
	defer future.Close()
	st := &http.Client{Transport: NewStamper(http.DefaultTransport, "me 1", nil, log)}
	resp, err := st.Get(future.URL + "/old")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if seen.Get(HeaderRelease) != "me 1" || seen.Get(HeaderProtocol) != "2" || seen.Get(HeaderFeatures) != strings.Join(Supported(), ",") {
		t.Errorf("call stamped %v", seen)
	}
	if _, err := st.Get(future.URL + "/future"); !errors.Is(err, ErrIncompatible) {
		t.Errorf("answer of protocol 9: %v", err)
	}
	if served != 5 {
		t.Errorf("handler served %d calls, want 5", served)
	}
}

func TestPlan(t *testing.T) {
	now := time.Date(2026, 11, 28, 8, 0, 0, 0, time.UTC)
	cur := func(n string) NodeReport { return NodeReport{Node: n, Up: true, Stamp: Current("new")} }
	old := func(n string) NodeReport {
		return NodeReport{Node: n, Up: true, Stamp: Stamp{Release: "old", Protocol: 1}}
	}
	down := func(n string) NodeReport { return NodeReport{Node: n, Err: "connection refused"} }

	// Mixed: nothing activates, each gate names the old node.
	next, st, changed := Plan([]NodeReport{cur("n1"), old("n2"), cur("n3")}, Gates{}, now)
	if changed || len(next.Active) != 0 || len(st) != len(Supported()) {
		t.Fatalf("mixed: %+v %+v %v", next, st, changed)
	}
	for _, g := range st {
		if g.Active || g.Ready || len(g.Blocked) != 1 || !strings.Contains(g.Blocked[0], "n2 runs release old") {
			t.Errorf("mixed: %+v", g)
		}
	}
	// A node down blocks too.
	_, st, changed = Plan([]NodeReport{cur("n1"), down("n2")}, Gates{}, now)
	if changed || !strings.Contains(st[0].Blocked[0], "n2 is not answering") {
		t.Errorf("down: %+v %v", st, changed)
	}
	// No node at all activates nothing.
	if _, _, changed = Plan(nil, Gates{}, now); changed {
		t.Error("no nodes: changed")
	}
	// All current: every feature activates.
	next, st, changed = Plan([]NodeReport{cur("n1"), cur("n2")}, Gates{}, now)
	if !changed || !slices.Equal(next.Active, Supported()) || !st[0].Ready || next.Since[EncryptedRecords] != "2026-11-28T08:00:00Z" {
		t.Errorf("all current: %+v %+v %v", next, st, changed)
	}
	// Active stays active even with an old node (it is refused instead),
	// and a feature this release does not know stays listed.
	g := Gates{Active: []Feature{"from-the-future", StampedCalls}, Since: map[Feature]string{StampedCalls: "t"}}
	next, st, changed = Plan([]NodeReport{cur("n1"), old("n2")}, g, now)
	if changed || !slices.Equal(next.Active, g.Active) || len(st) != len(Supported())+1 {
		t.Fatalf("active kept: %+v %+v %v", next, st, changed)
	}
	for _, s := range st {
		if s.Feature != EncryptedRecords && s.Feature != Pools && s.Feature != PoolRemoval && !s.Active {
			t.Errorf("%s lost its activation", s.Feature)
		}
	}
}

func TestParseGates(t *testing.T) {
	for _, bad := range []string{"{", `{"active":["A"]}`, `{"active":[""]}`, `{"active":"x"}`, `[1]`, strings.Repeat(" ", 65<<10)} {
		if _, err := ParseGates([]byte(bad)); err == nil {
			t.Errorf("%.40q parsed", bad)
		}
	}
	g, err := ParseGates([]byte(`{"active":["b","a","b"],"since":{"a":"t"}}`))
	if err != nil || !slices.Equal(g.Active, []string{"a", "b"}) || !g.IsActive("a") || g.IsActive("c") {
		t.Fatalf("%+v %v", g, err)
	}
	if g, err := ParseGates(nil); err != nil || len(g.Active) != 0 {
		t.Fatalf("empty: %+v %v", g, err)
	}
}

func FuzzFromHeader(f *testing.F) {
	f.Add("v1 abc", "2", "encrypted-records,stamped-calls")
	f.Add("", "", "")
	f.Add("x\x00", "02", "a,,b")
	f.Fuzz(func(t *testing.T, rel, proto, feats string) {
		h := http.Header{HeaderRelease: {rel}, HeaderProtocol: {proto}, HeaderFeatures: {feats}}
		s, err := FromHeader(h)
		if err != nil {
			return
		}
		if s.Protocol < 1 || len(s.Features) > maxFeatures || !slices.IsSorted(s.Features) {
			t.Fatalf("accepted %+v", s)
		}
		for _, ft := range s.Features {
			if !validFeature(ft) {
				t.Fatalf("accepted feature %q", ft)
			}
		}
		// What is accepted survives a round trip.
		h2 := http.Header{}
		s.Set(h2)
		if proto == "" {
			return
		}
		s2, err := FromHeader(h2)
		if err != nil || s2.Release != s.Release || s2.Protocol != s.Protocol || !slices.Equal(s2.Features, s.Features) {
			t.Fatalf("round trip %+v -> %+v, %v", s, s2, err)
		}
	})
}

func FuzzParseGates(f *testing.F) {
	f.Add([]byte(`{"active":["a"]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		g, err := ParseGates(b)
		if err != nil {
			return
		}
		for _, ft := range g.Active {
			if !validFeature(ft) {
				t.Fatalf("accepted %q", ft)
			}
		}
	})
}

// trailerBody sets the request's trailer once its body is read, as
// driverpc's shard uploads do.
type trailerBody struct {
	r   io.Reader
	req *http.Request
}

func (b *trailerBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err == io.EOF {
		b.req.Trailer.Set("X-End", "done")
	}
	return n, err
}

// TestStamperKeepsTrailers: a trailer the caller fills while its body
// streams still goes out through the Stamper (a copy of the trailer map
// would send it empty, and a shard upload would be refused).
func TestStamperKeepsTrailers(t *testing.T) {
	got := make(chan string, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		got <- r.Trailer.Get("X-End") + " " + r.Header.Get(HeaderProtocol)
	}))
	defer srv.Close()
	req, _ := http.NewRequest(http.MethodPost, srv.URL, nil)
	req.Trailer = http.Header{"X-End": nil}
	req.Body = io.NopCloser(&trailerBody{r: strings.NewReader("shard data"), req: req})
	req.ContentLength = -1
	resp, err := (&http.Client{Transport: NewStamper(http.DefaultTransport, "me", nil, nil)}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if g := <-got; g != "done 2" {
		t.Fatalf("server saw trailer and protocol %q, want \"done 2\"", g)
	}
	if req.Header.Get(HeaderProtocol) != "" {
		t.Error("the Stamper changed the caller's request")
	}
}
