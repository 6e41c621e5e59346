//go:build testhooks

package drivefault

import (
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/shardstore/shardstore/internal/drive"
)

// Hooked reports whether this build honours SHARDSTORE_TEST_DRIVE_FAULTS
// (true: built with -tags testhooks).
const Hooked = true

// pollEvery is how often a wrapped drive reads its faults file.
const pollEvery = 200 * time.Millisecond

// Wrap returns d in a drive.Faulty whose faults follow the file
// SHARDSTORE_TEST_DRIVE_FAULTS names, or d itself when it is unset.
func Wrap(d drive.Drive, log *slog.Logger) drive.Drive {
	path := os.Getenv(EnvFile)
	if path == "" {
		return d
	}
	w := &watched{Faulty: drive.NewFaulty(d), path: path, log: log, stop: make(chan struct{})}
	w.load()
	go w.watch()
	return w
}

// watched is a Faulty that follows its faults file until closed.
type watched struct {
	*drive.Faulty
	path string
	log  *slog.Logger
	stop chan struct{}
	once sync.Once
	last string // the text last applied
}

func (w *watched) watch() {
	t := time.NewTicker(pollEvery)
	defer t.Stop()
	for {
		select {
		case <-w.stop:
			return
		case <-t.C:
			w.load()
		}
	}
}

// load applies the file's faults if its text changed. A file that does
// not parse is logged and leaves the faults as they were.
func (w *watched) load() {
	b, err := os.ReadFile(w.path)
	if err != nil && !os.IsNotExist(err) {
		w.log.Warn("test hook: drive faults file unreadable", "file", w.path, "err", err)
		return
	}
	text := string(b)
	if text == w.last {
		return
	}
	faults, err := Parse(text)
	if err != nil {
		w.log.Warn("test hook: drive faults file refused", "file", w.path, "err", err)
		w.last = text
		return
	}
	w.Faulty.Clear()
	for _, f := range faults {
		w.Faulty.Inject(f)
	}
	w.last = text
	w.log.Warn("test hook: drive faults now", "drive", w.String(), "faults", len(faults))
}

// Close stops watching and closes the drive.
func (w *watched) Close() error {
	w.once.Do(func() { close(w.stop) })
	return w.Faulty.Close()
}
