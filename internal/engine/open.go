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
	// existing is true when some drive holds a format record: the
	// deployment exists, so a missing directory is a disk that did not
	// mount and is never created.
	existing bool
	// missing marks the paths whose directory does not exist.
	missing []bool
	// setSize and parity are what to use: asked for, or recorded at
	// format time when not asked for (0: the engine default).
	setSize, parity int
}

// planPaths peeks at every drive directory (read-only) and checks the
// asked-for layout against what the drives record.
func planPaths(paths []string, setSize, parity int) (pathPlan, error) {
	p := pathPlan{setSize: setSize, parity: parity, missing: make([]bool, len(paths))}
	if len(paths) == 0 {
		return p, errors.New("engine: no drives given")
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
	var notBlank []error
	for i, path := range p.paths {
		formats[i], errs[i] = drive.PeekFormat(path)
		switch {
		case errs[i] == nil:
			p.existing = true
		case errors.Is(errs[i], drive.ErrDriveMissing):
			p.missing[i] = true
		case errors.Is(errs[i], drive.ErrOldLayout), errors.Is(errs[i], drive.ErrNewerLayout):
			return p, fmt.Errorf("engine: %w", errs[i])
		case errors.Is(errs[i], drive.ErrNotBlank):
			notBlank = append(notBlank, errs[i])
		}
	}
	if !p.existing {
		// A new deployment: every drive must be formattable, or none is
		// formatted.
		if len(notBlank) > 0 {
			return p, fmt.Errorf("engine: cannot format a new deployment (its drives must be empty directories):\n%w", errors.Join(notBlank...))
		}
		size, err := chooseSetSize(len(paths), setSize)
		if err != nil {
			return p, err
		}
		par := parity
		if par == 0 {
			par = defaultParity(size)
		}
		return p, checkParity(par, size)
	}
	recSize := majority(formats, errs, func(f drive.Format) int { return f.SetSize })
	recParity := majority(formats, errs, func(f drive.Format) int { return f.Parity })
	switch {
	case setSize != 0 && recSize != 0 && setSize != recSize:
		return p, fmt.Errorf("engine: the drives were formatted with sets of %d drives, but --set-size %d was asked for: start with --set-size %d (or without --set-size); the set size cannot change after formatting", recSize, setSize, recSize)
	case parity != 0 && recParity != 0 && parity != recParity:
		return p, fmt.Errorf("engine: the drives were formatted with parity %d, but --parity %d was asked for: start with --parity %d (or without --parity); the parity cannot change after formatting", recParity, parity, recParity)
	}
	if p.setSize == 0 {
		p.setSize = recSize
	}
	if p.parity == 0 {
		p.parity = recParity
	}
	return p, nil
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
	shared := drive.NewSharedSync()
	var drives []drive.Drive
	for i, path := range p.paths {
		if !p.existing && p.missing[i] {
			if err := e.createDir(path); err != nil {
				e.abandon()
				return nil, err
			}
		}
		d, err := drive.OpenLocal(path, drive.LocalOptions{Cache: e.indexCache, SharedSync: shared, NoCreate: p.existing})
		if err != nil {
			e.abandon()
			return nil, fmt.Errorf("engine: %w", err)
		}
		if p.existing && p.missing[i] {
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
