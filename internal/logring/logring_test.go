package logring

import (
	"bytes"
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

func TestRingKeepsNewestWarningsAndPassesAllOn(t *testing.T) {
	var out bytes.Buffer
	r := New(3)
	log := slog.New(r.Handler(slog.NewTextHandler(&out, &slog.HandlerOptions{Level: slog.LevelInfo}), slog.LevelWarn))
	log.Debug("debug is dropped by both")
	log.Info("info goes to the log only")
	for i := 1; i <= 4; i++ {
		log.With("component", "engine").WithGroup("g").Warn(fmt.Sprintf("warn %d", i), "drive", i, slog.Group("sub", "x", 1))
	}
	log.Error("boom", "err", "disk gone")
	got, total := r.Entries()
	if total != 5 {
		t.Errorf("total = %d, want 5", total)
	}
	var msgs []string
	for _, e := range got {
		msgs = append(msgs, e.Message)
	}
	if strings.Join(msgs, ",") != "boom,warn 4,warn 3" {
		t.Fatalf("kept %v, want newest three, newest first", msgs)
	}
	if a := strings.Join(got[1].Attrs, " "); a != "component=engine g.drive=4 g.sub.x=1" {
		t.Errorf("attrs = %q", a)
	}
	if got[0].Level != "ERROR" || got[0].Attrs[0] != "err=disk gone" {
		t.Errorf("error entry = %+v", got[0])
	}
	text := out.String()
	if !strings.Contains(text, "info goes to the log only") || !strings.Contains(text, "warn 1") || strings.Contains(text, "debug is dropped") {
		t.Errorf("the next handler did not see what its level allows:\n%s", text)
	}
}

func TestRingEmptyAndPartial(t *testing.T) {
	r := New(4)
	if e, n := r.Entries(); len(e) != 0 || n != 0 {
		t.Fatalf("empty ring = %v, %d", e, n)
	}
	log := slog.New(r.Handler(slog.DiscardHandler, slog.LevelWarn))
	log.Warn("a")
	log.Warn("b")
	e, _ := r.Entries()
	if len(e) != 2 || e[0].Message != "b" || e[1].Message != "a" {
		t.Fatalf("entries = %+v", e)
	}
}
