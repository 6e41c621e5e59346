package engine

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/shardstore/shardstore/internal/drive"
)

// pathPlan is what New decided about its drive directories before
// touching any of them: a start that is going to be refused (a bad
// parity, a changed set size, a foreign directory) writes nothing.
type pathPlan struct {
	paths []string
	// groups are the pools' drive counts (a deployment formatted before
	// pools kept whole: mergeLegacyPools).
	groups []int
	// existing marks the drives of pools some drive of which holds a
	// format record: the pool exists, so a missing directory is a disk
	// that did not mount and is never created.
	existing []bool
	// missing marks the paths whose directory does not exist.
	missing []bool
}

// planPaths peeks at every drive directory (read-only) and checks the
// asked-for layout of every pool against what its drives record.
func planPaths(paths []string, groups []int, setSize, parity int) (pathPlan, error) {
	p := pathPlan{missing: make([]bool, len(paths)), existing: make([]bool, len(paths))}
	if len(paths) == 0 {
		return p, errors.New("engine: no drives given")
	}
	if err := checkGroups(groups, len(paths)); err != nil {
		return p, err
	}
	if len(groups) == 0 {
		groups = []int{len(paths)}
	}
	seen := map[string]bool{}
	for _, path := range paths {
		abs, err := filepath.Abs(path)
		if err != nil {
			return p, fmt.Errorf("engine: drive %s: %w", path, err)
		}
		if seen[abs] {
			return p, fmt.Errorf("engine: drive %s is given twice", abs)
		}
		seen[abs] = true
		p.paths = append(p.paths, abs)
	}
	formats := make([]drive.Format, len(paths))
	errs := make([]error, len(paths))
	notBlank := make([]error, len(paths))
	for i, path := range p.paths {
		formats[i], errs[i] = drive.PeekFormat(path)
		switch {
		case errs[i] == nil:
		case errors.Is(errs[i], drive.ErrDriveMissing):
			p.missing[i] = true
		case errors.Is(errs[i], drive.ErrOldLayout), errors.Is(errs[i], drive.ErrNewerLayout):
			return p, fmt.Errorf("engine: %w", errs[i])
		case errors.Is(errs[i], drive.ErrNotBlank):
			notBlank[i] = errs[i]
		}
	}
	p.groups = mergeLegacyPools(groups, formats, errs)
	deployed := false
	for _, err := range errs {
		deployed = deployed || err == nil
	}
	at := 0
	for n, g := range p.groups {
		fs, es := formats[at:at+g], errs[at:at+g]
		existing := false
		for _, err := range es {
			existing = existing || err == nil
		}
		allMissing := true
		for i := at; i < at+g; i++ {
			// Only a new deployment creates missing directories: in an
			// existing one a missing directory may be a disk that did
			// not mount.
			p.existing[i] = deployed
			allMissing = allMissing && p.missing[i]
		}
		what := "a new deployment"
		if len(p.groups) > 1 {
			what = fmt.Sprintf("pool %d", n+1)
		}
		if !existing && deployed && allMissing {
			return p, fmt.Errorf("engine: none of the drive directories of pool %d exists (%s ...): to add it as a new pool, create them as empty directories (mounted disks); the existing deployment never creates missing drive directories, which may be disks that did not mount", n+1, p.paths[at])
		}
		if !existing {
			// A new pool: every drive must be formattable, or none is
			// formatted.
			if bad := errors.Join(notBlank[at : at+g]...); bad != nil {
				return p, fmt.Errorf("engine: cannot format %s (its drives must be empty directories):\n%w", what, bad)
			}
			size, err := chooseSetSize(g, setSize)
			if err != nil {
				return p, err
			}
			par := parity
			if par == 0 {
				par = defaultParity(size)
			}
			if err := checkParity(par, size); err != nil {
				return p, err
			}
			at += g
			continue
		}
		recSize := majority(fs, es, func(f drive.Format) int { return f.SetSize })
		recParity := majority(fs, es, func(f drive.Format) int { return f.Parity })
		switch {
		case setSize != 0 && recSize != 0 && setSize != recSize:
			return p, fmt.Errorf("engine: the drives were formatted with sets of %d drives, but --set-size %d was asked for: start with --set-size %d (or without --set-size); the set size cannot change after formatting", recSize, setSize, recSize)
		case parity != 0 && recParity != 0 && parity != recParity:
			return p, fmt.Errorf("engine: the drives were formatted with parity %d, but --parity %d was asked for: start with --parity %d (or without --parity); the parity cannot change after formatting", recParity, parity, recParity)
		}
		at += g
	}
	return p, nil
}

// checkGroups refuses pool sizes that do not add up to the drives.
func checkGroups(groups []int, n int) error {
	if len(groups) == 0 {
		return nil
	}
	sum := 0
	for _, g := range groups {
		if g <= 0 {
			return fmt.Errorf("engine: a server pool of %d drives", g)
		}
		sum += g
	}
	if sum != n {
		return fmt.Errorf("engine: the pools have %d drives in all, but %d drives were given", sum, n)
	}
	return nil
}

// majority is the most common non-zero value of field among the
// readable formats (0 if none).
func majority(formats []drive.Format, errs []error, field func(drive.Format) int) int {
	votes := map[int]int{}
	best := 0
	for i, f := range formats {
		if v := field(f); errs[i] == nil && v > 0 {
			votes[v]++
			if votes[v] > votes[best] || (votes[v] == votes[best] && v < best) {
				best = v
			}
		}
	}
	return best
}

// openPaths opens the planned drives with health tracking. A new
// deployment creates missing directories (and removes them again if the
// start fails); an existing one opens them as missing, offline drives.
func (e *Engine) openPaths(p pathPlan) ([]drive.Drive, error) {
	size := e.cfg.IndexCache
	if size <= 0 {
		size = IndexCacheSize
	}
	e.indexCache = drive.NewIndexCache(size)
	shared := e.sharedSync
	if shared == nil {
		shared = drive.NewSharedSync()
		e.sharedSync = shared
	}
	var drives []drive.Drive
	for i, path := range p.paths {
		if !p.existing[i] && p.missing[i] {
			if err := e.createDir(path); err != nil {
				e.abandon()
				return nil, err
			}
		}
		d, err := drive.OpenLocal(path, drive.LocalOptions{Cache: e.indexCache, SharedSync: shared, NoCreate: p.existing[i]})
		if err != nil {
			e.abandon()
			return nil, fmt.Errorf("engine: %w", err)
		}
		if p.existing[i] && p.missing[i] {
			e.log.Warn("drive directory does not exist: the drive is offline (not created, since the deployment exists); mount the disk, or put an empty directory there to have it refilled as a replacement",
				"drive", path)
		}
		h := drive.NewHealth(d, drive.HealthConfig{OpTimeout: e.cfg.DriveTimeout,
			ProbeInterval: e.cfg.DriveProbeInterval, Logger: e.log})
		e.healths = append(e.healths, h)
		drives = append(drives, h)
	}
	return drives, nil
}

// createDir creates a drive directory of a new deployment, recording
// every directory it made so a failed start can remove them.
func (e *Engine) createDir(path string) error {
	var made []string
	for d := path; ; d = filepath.Dir(d) {
		if _, err := os.Stat(d); err == nil || filepath.Dir(d) == d {
			break
		}
		made = append(made, d)
	}
	if err := os.MkdirAll(path, 0o750); err != nil {
		return fmt.Errorf("engine: create drive directory %s: %w", path, err)
	}
	e.createdDirs = append(e.createdDirs, made...)
	return nil
}

// abandon undoes a start that failed: the drives are closed (each
// removes the system directory it created on a drive it did not
// format) and directories created for them are removed, deepest first,
// where they are empty.
func (e *Engine) abandon() {
	e.closeHealths()
	dirs := e.createdDirs
	sort.Slice(dirs, func(i, j int) bool { return len(dirs[i]) > len(dirs[j]) }) // children first
	for _, d := range dirs {
		_ = os.Remove(d)
	}
	e.createdDirs = nil
}

// IndexCacheStats reports the index cache the engine opened its drives
// with; zero when it was given its drives (a cluster node's cache is the
// node's).
func (e *Engine) IndexCacheStats() drive.IndexCacheStats { return e.indexCache.Stats() }

// SharedSync is the group the local drives' index syncs share per
// filesystem (nil when the engine was given drives and no group): a
// file kept beside the drives (a notification queue's segment) can
// ride their syncfs through its Guest.
func (e *Engine) SharedSync() *drive.SharedSync { return e.sharedSync }
