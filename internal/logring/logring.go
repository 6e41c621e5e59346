// Package logring keeps the server's most recent warnings and errors in
// memory, so that an operator can see them without reading the log
// files (the console's "recent errors" view). It is a log/slog handler
// that passes every record on to the real one and keeps a copy of those
// at or above a level in a fixed-size ring.
package logring

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"time"
)

// Entry is one kept log record, flattened to text.
type Entry struct {
	Time    time.Time `json:"time"`
	Level   string    `json:"level"`
	Message string    `json:"message"`
	// Attrs are the record's attributes (including those of the logger
	// it came through) as key=value text, in order.
	Attrs []string `json:"attrs,omitempty"`
}

// Ring holds the newest entries; safe for concurrent use.
type Ring struct {
	mu    sync.Mutex
	buf   []Entry
	next  int
	full  bool
	total int64
}

// New returns a ring keeping the newest n entries (n >= 1).
func New(n int) *Ring {
	return &Ring{buf: make([]Entry, max(n, 1))}
}

func (r *Ring) add(e Entry) {
	r.mu.Lock()
	r.buf[r.next] = e
	r.next = (r.next + 1) % len(r.buf)
	if r.next == 0 {
		r.full = true
	}
	r.total++
	r.mu.Unlock()
}

// Entries returns the kept entries, newest first, and how many were
// recorded in all (older ones were overwritten).
func (r *Ring) Entries() ([]Entry, int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := r.next
	if r.full {
		n = len(r.buf)
	}
	out := make([]Entry, 0, n)
	for i := 1; i <= n; i++ {
		out = append(out, r.buf[(r.next-i+len(r.buf))%len(r.buf)])
	}
	return out, r.total
}

// Handler returns a slog handler that sends every record to next and
// keeps those at or above min in the ring.
func (r *Ring) Handler(next slog.Handler, min slog.Level) slog.Handler {
	return &handler{ring: r, next: next, min: min}
}

type handler struct {
	ring   *Ring
	next   slog.Handler
	min    slog.Level
	prefix []string // attrs of WithAttrs, already qualified by groups
	group  string   // open groups, "a.b."
}

func (h *handler) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= h.min || h.next.Enabled(ctx, l)
}

func (h *handler) Handle(ctx context.Context, rec slog.Record) error {
	if rec.Level >= h.min {
		e := Entry{Time: rec.Time, Level: rec.Level.String(), Message: rec.Message,
			Attrs: append([]string(nil), h.prefix...)}
		rec.Attrs(func(a slog.Attr) bool {
			e.Attrs = appendAttr(e.Attrs, h.group, a)
			return true
		})
		h.ring.add(e)
	}
	if h.next.Enabled(ctx, rec.Level) {
		return h.next.Handle(ctx, rec)
	}
	return nil
}

func (h *handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	c := *h
	c.prefix = append([]string(nil), h.prefix...)
	for _, a := range attrs {
		c.prefix = appendAttr(c.prefix, h.group, a)
	}
	c.next = h.next.WithAttrs(attrs)
	return &c
}

func (h *handler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	c := *h
	c.group = h.group + name + "."
	c.next = h.next.WithGroup(name)
	return &c
}

// appendAttr flattens a (resolving groups and LogValuers) into key=value.
func appendAttr(out []string, group string, a slog.Attr) []string {
	a.Value = a.Value.Resolve()
	if a.Equal(slog.Attr{}) {
		return out
	}
	if a.Value.Kind() == slog.KindGroup {
		g := group
		if a.Key != "" {
			g += a.Key + "."
		}
		for _, ga := range a.Value.Group() {
			out = appendAttr(out, g, ga)
		}
		return out
	}
	return append(out, group+a.Key+"="+strings.TrimSpace(a.Value.String()))
}
