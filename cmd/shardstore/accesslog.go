package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"golang.org/x/sys/unix"

	"github.com/shardstore/shardstore/internal/accesslog"
	"github.com/shardstore/shardstore/internal/drive"
)

// accessLogCloseWait bounds the last delivery of access log records at a
// stop; what is left is delivered at the next start.
const accessLogCloseWait = 10 * time.Second

// accessLogDirs picks the spool directories of this node's server access
// log among its local drives (roots): one drive per filesystem, in
// order, up to parity+1 of them, so that spooled records survive as many
// lost drives as the objects do (on a node that has that many
// filesystems). Only formatted drives count: a drive whose directory is
// missing may be a disk that did not mount, whose mount point must not
// be filled.
func accessLogDirs(roots []string, parity int) []string {
	seen := map[uint64]bool{}
	var out []string
	for _, root := range roots {
		var st unix.Stat_t
		if !drive.HasFormat(root) || unix.Stat(drive.SysDir(root), &st) != nil {
			continue
		}
		if seen[st.Dev] {
			continue
		}
		seen[st.Dev] = true
		out = append(out, drive.AccessLogDir(root))
		if len(out) > parity {
			break
		}
	}
	return out
}

// openAccessLog opens the server access log spool on the node's drives;
// deliver writes log objects (s3api.Server.DeliverAccessLog).
func openAccessLog(roots []string, parity int, interval time.Duration, deliver func(context.Context, accesslog.Object) error, logger *slog.Logger) (*accesslog.Spool, error) {
	dirs := accessLogDirs(roots, parity)
	if len(dirs) == 0 {
		return nil, fmt.Errorf("server access log: none of this node's drives %v is formatted", roots)
	}
	for _, d := range dirs {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, fmt.Errorf("server access log: %w", err)
		}
	}
	s, err := accesslog.Open(accesslog.Config{Dirs: dirs, Interval: interval, Deliver: deliver, Logger: logger})
	if err != nil {
		return nil, fmt.Errorf("server access log: %w", err)
	}
	return s, nil
}
