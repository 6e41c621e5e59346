package peerauth

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"
)

func TestSignVerify(t *testing.T) {
	k := Derive("root", "secret")
	r := httptest.NewRequest("POST", "http://n1:9000/_shardstore/drive/v1/apply?drive=3", nil)
	k.Sign(r, BodyHash([]byte("body")))
	h, err := k.Verify(r, time.Now())
	if err != nil || h != BodyHash([]byte("body")) {
		t.Fatalf("verify = %q, %v", h, err)
	}

	// Another root secret, a changed query, an old date: all refused.
	if _, err := Derive("root", "other").Verify(r, time.Now()); !errors.Is(err, ErrUnauthorized) {
		t.Fatalf("other key: %v", err)
	}
	r2 := r.Clone(r.Context())
	r2.URL.RawQuery = "drive=4"
	if _, err := k.Verify(r2, time.Now()); !errors.Is(err, ErrUnauthorized) {
		t.Fatalf("changed query: %v", err)
	}
	if _, err := k.Verify(r, time.Now().Add(2*MaxSkew)); !errors.Is(err, ErrUnauthorized) {
		t.Fatalf("late: %v", err)
	}
	r3 := r.Clone(r.Context())
	r3.Header.Set(HeaderDate, strconv.FormatInt(time.Now().UnixNano()+1, 10))
	if _, err := k.Verify(r3, time.Now()); !errors.Is(err, ErrUnauthorized) {
		t.Fatalf("changed date: %v", err)
	}
	r4 := httptest.NewRequest("GET", "http://n1:9000/x", nil)
	if _, err := k.Verify(r4, time.Now()); !errors.Is(err, ErrUnauthorized) {
		t.Fatalf("unsigned: %v", err)
	}
	if _, err := (Key{}).Verify(r, time.Now()); !errors.Is(err, ErrUnauthorized) {
		t.Fatalf("zero key: %v", err)
	}
}

// TestReplay: a request is accepted once; requests that overtake each
// other are all accepted; one a window behind is refused; a request
// signed for one node is refused by another.
func TestReplay(t *testing.T) {
	sender, receiver := Derive("root", "secret"), Derive("root", "secret")
	sign := func(url string) *http.Request {
		r := httptest.NewRequest("POST", url, nil)
		sender.Sign(r, BodyHash(nil))
		return r
	}
	r1 := sign("http://n1:9000/_shardstore/lock/v1/batch")
	if _, err := receiver.Verify(r1, time.Now()); err != nil {
		t.Fatal(err)
	}
	if _, err := receiver.Verify(r1, time.Now()); !errors.Is(err, ErrReplayed) || !errors.Is(err, ErrUnauthorized) {
		t.Fatalf("replay: %v", err)
	}
	// Out of order: 3 before 2, both accepted once.
	r2, r3 := sign("http://n1:9000/a"), sign("http://n1:9000/b")
	for _, r := range []*http.Request{r3, r2} {
		if _, err := receiver.Verify(r, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := receiver.Verify(r2, time.Now()); !errors.Is(err, ErrReplayed) {
		t.Fatalf("replay of an overtaken request: %v", err)
	}
	// Sequence numbers count per destination: a request to n2 is its
	// first there, and the receiver keeps n2's window apart.
	other := sign("http://n2:9000/a")
	if other.Header.Get(HeaderNonce) != sender.st.epoch+".1" {
		t.Fatalf("nonce to a new host %q", other.Header.Get(HeaderNonce))
	}
	// The same request pointed at another node fails its signature; the
	// node it names is checked by the router (ForHost).
	moved := r3.Clone(r3.Context())
	moved.Host = "n2:9000"
	if _, err := receiver.Verify(moved, time.Now()); !errors.Is(err, ErrUnauthorized) || errors.Is(err, ErrReplayed) {
		t.Fatalf("moved to another host: %v", err)
	}
	if !ForHost(r3, "N1:9000") || ForHost(r3, "n2:9000") {
		t.Fatal("ForHost")
	}
	// Window later requests later, the held-back one is too old.
	held := sign("http://n1:9000/held")
	var last *http.Request
	for range Window {
		last = sign("http://n1:9000/c")
	}
	if _, err := receiver.Verify(last, time.Now()); err != nil {
		t.Fatal(err)
	}
	if _, err := receiver.Verify(held, time.Now()); !errors.Is(err, ErrTooOld) {
		t.Fatalf("held back a window: %v", err)
	}
	// A nonce that was tampered with fails the signature; a missing one
	// is refused.
	bad := sign("http://n1:9000/d")
	bad.Header.Set(HeaderNonce, sender.st.epoch+".999999999")
	if _, err := receiver.Verify(bad, time.Now()); !errors.Is(err, ErrUnauthorized) {
		t.Fatalf("tampered nonce: %v", err)
	}
	bad.Header.Del(HeaderNonce)
	if _, err := receiver.Verify(bad, time.Now()); !errors.Is(err, ErrUnauthorized) {
		t.Fatalf("no nonce: %v", err)
	}
}

// TestReplayAfterRestart: a receiver that restarted refuses requests of
// a sender it has not met dated before its start (by more than the
// slack), and accepts that sender's new requests.
func TestReplayAfterRestart(t *testing.T) {
	sender := Derive("root", "secret")
	old := httptest.NewRequest("GET", "http://n1:9000/_shardstore/peer/v1/hello", nil)
	sender.Sign(old, BodyHash(nil))
	restarted := Derive("root", "secret")
	restarted.st.guard = newGuard(time.Now().Add(StartSlack + time.Second))
	if _, err := restarted.Verify(old, time.Now()); !errors.Is(err, ErrBeforeStart) {
		t.Fatalf("request to the previous run: %v", err)
	}
	restarted.st.guard = newGuard(time.Now())
	if _, err := restarted.Verify(old, time.Now()); err != nil {
		t.Fatalf("a request within the slack: %v", err)
	}
}

// TestGuardForgets: windows of senders silent past forgetAfter are
// dropped.
func TestGuardForgets(t *testing.T) {
	now := time.Now()
	g := newGuard(now)
	if err := g.admit("h", "e1", 1, now, now, false); err != nil {
		t.Fatal(err)
	}
	later := now.Add(forgetAfter + 2*time.Minute)
	if err := g.admit("h", "e2", 1, later, later, false); err != nil {
		t.Fatal(err)
	}
	if _, ok := g.wins[windowKey{"h", "e1"}]; ok || len(g.wins) != 1 {
		t.Fatalf("windows %v", g.wins)
	}
}

// FuzzGuard: any order of sequence numbers is accepted exactly once per
// number while within the window.
func FuzzGuard(f *testing.F) {
	f.Add([]byte{1, 2, 3, 2, 1, 200, 5})
	f.Fuzz(func(t *testing.T, steps []byte) {
		now := time.Now()
		g := newGuard(now)
		seen := map[uint64]bool{}
		var top uint64
		for _, s := range steps {
			seq := uint64(s)%64 + 1
			if s >= 128 {
				seq = top + uint64(s)*300 // jumps, sometimes past the window
			}
			err := g.admit("h", "e", seq, now, now, false)
			switch {
			case seen[seq] && err == nil:
				t.Fatalf("%d accepted twice", seq)
			case !seen[seq] && top < Window+seq && err != nil:
				t.Fatalf("%d refused: %v", seq, err)
			}
			if err == nil {
				seen[seq] = true
				top = max(top, seq)
			}
		}
	})
}

// TestRestartedNodeAheadServes is finding S1: a node restarted with its
// clock ahead of a peer's by D (within MaxSkew) refused that peer's
// requests for D, since their dates fell before its start. Once the
// restarted node has sent the peer one request, the peer's requests name
// its new run and are accepted, whatever their dates; requests that do
// not name it (made for its previous run) are still refused by date,
// also after the peer's window was opened by a fresh request.
func TestRestartedNodeAheadServes(t *testing.T) {
	const skew = 3 * time.Minute // the restarted node is ahead by this
	peer := Derive("root", "secret")
	peer.SetSelf("n2:9000")
	toN1 := func() *http.Request {
		r := httptest.NewRequest("POST", "http://n1:9000/_shardstore/lock/v1/batch", nil)
		peer.Sign(r, BodyHash(nil))
		return r
	}
	// Made for n1's previous run, captured.
	captured := toN1()

	n1 := Derive("root", "secret")
	n1.SetSelf("N1:9000")
	n1Now := func() time.Time { return time.Now().Add(skew) }
	n1.st.guard = newGuard(n1Now())

	// Before n1 has said anything, the peer's requests look older than
	// n1's start: refused, as before.
	if _, err := n1.Verify(toN1(), n1Now()); !errors.Is(err, ErrBeforeStart) {
		t.Fatalf("request before the peer learned n1's run: %v", err)
	}
	// n1 calls the peer (its hello, a drive or lock call): dated ahead by
	// the skew, within MaxSkew, accepted; the peer learns n1's run.
	hello := httptest.NewRequest("GET", "http://n2:9000/_shardstore/peer/v1/hello", nil)
	n1.Sign(hello, BodyHash(nil))
	hello.Header.Set(HeaderDate, strconv.FormatInt(n1Now().UnixNano(), 10))
	// (re-signed with the moved date, as n1's clock would have stamped it)
	hello.Header.Set(HeaderSignature, n1.mac(hello, hello.Header.Get(HeaderDate), hello.Header.Get(HeaderNonce), hello.Header.Get(HeaderBodyHash)))
	n1.signExt(hello, hello.Header.Get(HeaderSignature))
	if _, err := peer.Verify(hello, time.Now()); err != nil {
		t.Fatalf("n1's request to the peer: %v", err)
	}
	fresh := toN1()
	if fresh.Header.Get(HeaderToEpoch) != n1.st.epoch {
		t.Fatalf("the peer's request names run %q, want n1's %q", fresh.Header.Get(HeaderToEpoch), n1.st.epoch)
	}
	if _, err := n1.Verify(fresh, n1Now()); err != nil {
		t.Fatalf("the peer's request naming n1's run, %v after n1's start by n1's clock: %v", skew, err)
	}
	// Replay protection kept: the same request again, the captured one
	// (its sender's window is open now), the captured one given n1's
	// epoch without a valid extension signature, or a fresh request's
	// extension moved onto it.
	if _, err := n1.Verify(fresh, n1Now()); !errors.Is(err, ErrReplayed) {
		t.Fatalf("replayed fresh request: %v", err)
	}
	if _, err := n1.Verify(captured, n1Now()); !errors.Is(err, ErrBeforeStart) {
		t.Fatalf("request to the previous run, after a fresh one opened the window: %v", err)
	}
	forged := captured.Clone(captured.Context())
	forged.Header.Set(HeaderToEpoch, n1.st.epoch)
	if _, err := n1.Verify(forged, n1Now()); !errors.Is(err, ErrUnauthorized) || err.Error() == "" {
		t.Fatalf("captured request given n1's epoch: %v", err)
	}
	forged.Header.Set(HeaderExtSignature, fresh.Header.Get(HeaderExtSignature))
	forged.Header.Set(HeaderFrom, fresh.Header.Get(HeaderFrom))
	if _, err := n1.Verify(forged, n1Now()); !errors.Is(err, ErrUnauthorized) {
		t.Fatalf("captured request with a fresh request's extension: %v", err)
	}
	// Stripped of its extension, a fresh request is judged by date.
	stripped := toN1()
	for _, h := range []string{HeaderFrom, HeaderToEpoch, HeaderExtSignature} {
		stripped.Header.Del(h)
	}
	if _, err := n1.Verify(stripped, n1Now()); !errors.Is(err, ErrBeforeStart) {
		t.Fatalf("fresh request stripped of its extension: %v", err)
	}
	// A request naming a run that is not n1's current one (its previous
	// run, after another restart) is judged by date.
	n1b := Derive("root", "secret")
	n1b.st.guard = newGuard(n1Now())
	if _, err := n1b.Verify(toN1(), n1Now()); !errors.Is(err, ErrBeforeStart) {
		t.Fatalf("request naming n1's previous run: %v", err)
	}
}

// FuzzExtHeaders: hostile extension headers never make Verify panic,
// and are accepted only when signed.
func FuzzExtHeaders(f *testing.F) {
	f.Add("n2:9000", "0123456789abcdef0123456789abcdef", "")
	f.Add("", "", "zz")
	f.Fuzz(func(t *testing.T, from, to, ext string) {
		k := Derive("root", "secret")
		r := httptest.NewRequest("GET", "http://n1:9000/x", nil)
		k.Sign(r, BodyHash(nil))
		r.Header.Set(HeaderFrom, from)
		r.Header.Set(HeaderToEpoch, to)
		r.Header.Set(HeaderExtSignature, ext)
		_, err := k.Verify(r, time.Now())
		if (from != "" || to != "" || ext != "") && err == nil && ext != k.extMAC(r.Header.Get(HeaderSignature), from, to) {
			t.Fatalf("unsigned extension accepted: from %q to %q ext %q", from, to, ext)
		}
	})
}
