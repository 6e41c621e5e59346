//go:build testhooks

package drivefault

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/shardstore/shardstore/internal/drive"
)

// A testhooks build follows the faults file: EIO on every Get once the
// file says so, none once it is emptied.
func TestWrapFollowsFile(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "faults")
	t.Setenv(EnvFile, file)
	l, err := drive.OpenLocal(filepath.Join(dir, "d"), drive.LocalOptions{})
	if err != nil {
		t.Fatal(err)
	}
	d := Wrap(l, slog.New(slog.NewTextHandler(os.Stderr, nil)))
	defer d.Close()
	ctx := context.Background()
	get := func() error {
		// The drive is not formatted: only an injected fault counts.
		if _, err := d.Get(ctx, drive.TableObjects, "k"); errors.Is(err, drive.ErrDriveFaulty) {
			return err
		}
		return nil
	}
	if err := get(); err != nil {
		t.Fatalf("no file, no fault: %v", err)
	}
	waitFor := func(want bool) {
		t.Helper()
		for range 100 { // the file is read every 200 ms
			if err := get(); (err != nil) == want {
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
		t.Fatalf("fault active = %v never seen", want)
	}
	if err := os.WriteFile(file, []byte("ops=Get eio=1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	waitFor(true)
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	waitFor(false)
}
