package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/shardstore/shardstore/internal/drive"
	"github.com/shardstore/shardstore/internal/engine"
	"github.com/shardstore/shardstore/internal/hashing"
)

// engineDefaultDriveTimeout is the drive deadline --drive-timeout shows
// as its default.
const engineDefaultDriveTimeout = drive.DefaultOpTimeout

// checkPlacement refuses drives on the root filesystem unless allowed
// (the embedded default always is, and says so), and warns about drives
// that share a filesystem: erasure coding spreads shards over drives,
// which protects nothing when the drives are one disk.
func checkPlacement(w io.Writer, paths []string, rootDir string, allowRoot, embedded bool) error {
	var places []drive.Placement
	var onRoot []string
	var rootFS string
	for _, p := range paths {
		pl, err := drive.Place(p, rootDir)
		if err != nil {
			return err
		}
		places = append(places, pl)
		if pl.OnRoot {
			onRoot = append(onRoot, pl.Path)
			rootFS = pl.Describe()
		}
	}
	if len(onRoot) > 0 {
		switch {
		case embedded:
			fmt.Fprintf(w, "The embedded default drives are on the root filesystem (%s): fine for trying shardstore, not for data you keep; give each drive its own disk.\n", rootFS)
		case !allowRoot:
			return fmt.Errorf("%s on the root filesystem, %s: %s\n"+
				"A drive should be a disk of its own: on the root filesystem a full drive fills the system's disk,\n"+
				"and one disk failure takes every such drive with it. Mount a disk at each drive path, or,\n"+
				"if this is intended (a test, a trial on a laptop), start with --allow-root-drives or set SHARDSTORE_ALLOW_ROOT_DRIVES=1",
				plural(len(onRoot), "drive is", "drives are"), rootFS, listPaths(onRoot))
		}
	}
	for _, g := range drive.SharedFilesystems(places) {
		names := make([]string, len(g))
		for i, p := range g {
			names[i] = p.Path
		}
		fmt.Fprintf(w, "WARNING: %d drives share one filesystem, %s: %s. Erasure coding cannot protect against the loss of that disk.\n",
			len(g), g[0].Describe(), listPaths(names))
	}
	return nil
}

// listPaths names drives for a message: all of them when few, else
// the first two and the last, so a 16-drive line stays readable.
func listPaths(paths []string) string {
	if len(paths) <= 4 {
		return strings.Join(paths, ", ")
	}
	return fmt.Sprintf("%s, %s, ..., %s", paths[0], paths[1], paths[len(paths)-1])
}

// plural picks the singular or plural phrase for n things.
func plural(n int, one, many string) string {
	switch n {
	case 0:
		return "no " + many
	case 1:
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// printLayout tells the operator, at start, how objects will be stored.
func printLayout(w io.Writer, l engine.Layout, paths []string, policy hashing.Policy, etag hashing.ETagMode) {
	fmt.Fprintf(w, "Layout: %s of %d drives; each object is %d data + %d parity shards (REDUCED_REDUNDANCY: %d parity); a set survives the loss of %d drives; write quorum %d, read quorum %d\n",
		plural(l.Sets, "erasure set", "erasure sets"), l.SetSize, l.Data, l.Parity, l.RRSParity, l.Parity, l.WriteQuorum, l.ReadQuorum)
	for s := 0; l.Pools <= 1 && s < l.Sets && (s+1)*l.SetSize <= len(paths); s++ {
		fmt.Fprintf(w, "  set %d: %s\n", s+1, strings.Join(paths[s*l.SetSize:(s+1)*l.SetSize], " "))
	}
	if l.Placement != "" && l.Sets > 1 {
		fmt.Fprintf(w, "Placement: objects go to sets by %s (kept from the MinIO deployment these drives were adopted from)\n", l.Placement)
	}
	if l.InlineLimit < 0 {
		fmt.Fprintln(w, "Inline data: off (every object's shards are files)")
	} else {
		fmt.Fprintf(w, "Inline data: shards up to %s per drive are kept in the drive index (objects up to about %s)\n",
			sizeString(l.InlineLimit), sizeString(l.InlineLimit*int64(l.Data)))
	}
	fmt.Fprintf(w, "Hashing: --hash-offload %s, ETags %s; chunk checksums %s\n", policy, etag, l.Bitrot)
}

// sizeString prints a byte count in binary units.
func sizeString(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// closeWithin runs close, giving up waiting after d (a hung drive must
// not keep a stopping process alive; the kernel releases its locks).
func closeWithin(close func() error, d time.Duration) error {
	done := make(chan error, 1)
	go func() { done <- close() }()
	select {
	case err := <-done:
		return err
	case <-time.After(d):
		return fmt.Errorf("not finished after %v; exiting anyway", d)
	}
}

// printPools tells the operator, at start, the server pools of a
// deployment that has several (each with its own set geometry).
func printPools(w io.Writer, pools []engine.PoolInfo) {
	if len(pools) < 2 {
		return
	}
	fmt.Fprintf(w, "Server pools: %d; a new object goes to one of them in proportion to free space, and stays there\n", len(pools))
	for _, p := range pools {
		state := ""
		if p.Draining {
			state = " (being decommissioned)"
		}
		fmt.Fprintf(w, "  pool %d: %s of %d drives, parity %d, %s free of %s, id %s%s\n", p.Index,
			plural(p.Sets, "erasure set", "erasure sets"), p.SetSize, p.Parity, sizeString(int64(p.Free)), sizeString(int64(p.Total)), p.ID, state)
	}
}
