package release

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"
)

// onceLog logs each distinct refusal once (per process), remembering at
// most onceLogMax of them so hostile callers cannot grow it.
type onceLog struct {
	log  *slog.Logger
	mu   sync.Mutex
	seen map[string]bool
}

const onceLogMax = 64

func (o *onceLog) warn(key, msg string, args ...any) {
	o.mu.Lock()
	first := !o.seen[key] && len(o.seen) < onceLogMax
	if first {
		if o.seen == nil {
			o.seen = map[string]bool{}
		}
		o.seen[key] = true
	}
	o.mu.Unlock()
	if first && o.log != nil {
		o.log.Warn(msg, args...)
	}
}

// Guard answers node-to-node calls only from compatible releases; the
// answers carry this node's protocol and features (not its release: the
// guard answers before the handler has checked the cluster signature).
type Guard struct {
	next   http.Handler
	self   Stamp
	active func() []Feature
	once   onceLog
}

// NewGuard wraps next. active returns the features active in the cluster
// (nil: none yet).
func NewGuard(next http.Handler, active func() []Feature, log *slog.Logger) *Guard {
	return &Guard{next: next, self: Current(""), active: active, once: onceLog{log: log}}
}

func (g *Guard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	g.self.Set(w.Header())
	w.Header().Del(HeaderRelease)
	peer, err := FromHeader(r.Header)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var active []Feature
	if g.active != nil {
		active = g.active()
	}
	if err := Compatible(peer, active); err != nil {
		g.once.warn("in "+peer.Release+fmt.Sprint(peer.Protocol, peer.Features), "refusing calls of another node's release", "from", r.RemoteAddr, "err", err)
		http.Error(w, err.Error(), http.StatusUpgradeRequired)
		return
	}
	g.next.ServeHTTP(w, r)
}

// Stamper is an http.RoundTripper that stamps every call and refuses an
// answer from an incompatible release (the calling half of Guard: a node
// too new for this one answers, but this one must not use it).
type Stamper struct {
	base   http.RoundTripper
	self   Stamp
	active func() []Feature
	once   onceLog
}

// NewStamper stamps calls through base with release rel.
func NewStamper(base http.RoundTripper, rel string, active func() []Feature, log *slog.Logger) *Stamper {
	return &Stamper{base: base, self: Current(rel), active: active, once: onceLog{log: log}}
}

// Stamp sets this node's stamp on h (for a call that does not go through
// the RoundTripper, such as the raft stream's upgrade request).
func (s *Stamper) Stamp(h http.Header) { s.self.Set(h) }

// RoundTrip implements http.RoundTripper.
func (s *Stamper) RoundTrip(req *http.Request) (*http.Response, error) {
	// A shallow copy with its own header: the body and the trailer map
	// stay the caller's (driverpc fills trailers while the body streams).
	r := new(http.Request)
	*r = *req
	r.Header = req.Header.Clone()
	if r.Header == nil {
		r.Header = http.Header{}
	}
	s.self.Set(r.Header)
	resp, err := s.base.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	peer, err := FromHeader(resp.Header)
	if err == nil {
		var active []Feature
		if s.active != nil {
			active = s.active()
		}
		err = Compatible(peer, active)
	}
	if err != nil {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
		resp.Body.Close()
		s.once.warn("out "+req.URL.Host+fmt.Sprint(peer.Protocol, peer.Features), "refusing the answer of another node's release", "node", req.URL.Host, "err", err)
		return nil, fmt.Errorf("%s: %w", req.URL.Host, err)
	}
	return resp, nil
}
