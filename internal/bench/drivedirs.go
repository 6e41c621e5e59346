package bench

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
)

// driveSysDir is the directory shardstore keeps at the top of every
// drive it has opened (internal/drive's layout: format record, lock,
// index, shard files). A drive that has one belongs, or belonged, to a
// deployment.
const driveSysDir = ".shardstore.sys"

// lostAndFound is the one foreign entry a blank drive may hold: a fresh
// ext4 filesystem has it at its root.
const lostAndFound = "lost+found"

// benchDirs are the drive directories of one drive bench run, and what
// undo must remove to leave them as the bench found them.
type benchDirs struct {
	paths []string
	// root is the temporary directory holding every drive when no
	// drive was given; undo removes it whole.
	root string
	// created are the directories the bench made for given drives that
	// did not exist: for each, the topmost one that was missing.
	created []string
	// fresh are the given drives that had no driveSysDir: removing the
	// one the run made removes everything the bench wrote there.
	fresh []string
	// formatted is set when a drive already belonged to a deployment
	// (DriveOptions.AllowFormatted): what the bench writes there must be
	// deleted object by object, as the deployment stays.
	formatted bool
}

// prepareDirs checks the drives of a run and creates the missing ones.
// Given drives must be empty (lost+found aside) or missing; one holding
// driveSysDir is refused unless opts.AllowFormatted, because the bench
// formats its drives as a deployment of its own. Every check is made
// before anything is created, so a refused run leaves no trace.
func prepareDirs(opts *DriveOptions) (*benchDirs, error) {
	if len(opts.Paths) == 0 {
		root, paths, err := tempDrives(opts.Dir, opts.Drives)
		if err != nil {
			return nil, err
		}
		return &benchDirs{paths: paths, root: root}, nil
	}
	d := &benchDirs{}
	var inUse []string
	seen := map[string]bool{}
	for _, p := range opts.Paths {
		abs, err := filepath.Abs(p)
		if err != nil {
			return nil, fmt.Errorf("drive %s: %w", p, err)
		}
		if seen[abs] {
			return nil, fmt.Errorf("drive %s is given twice", abs)
		}
		seen[abs] = true
		hasSys, err := inspectDrive(abs)
		if err != nil {
			return nil, err
		}
		if hasSys {
			inUse = append(inUse, abs)
		} else {
			d.fresh = append(d.fresh, abs)
		}
		d.paths = append(d.paths, abs)
	}
	if len(inUse) > 0 && !opts.AllowFormatted {
		return nil, formattedDrivesErr(inUse)
	}
	d.formatted = len(inUse) > 0
	for _, p := range d.fresh {
		if err := d.create(p); err != nil {
			return nil, errors.Join(err, d.undo())
		}
	}
	return d, nil
}

// inspectDrive reports whether the drive directory p holds driveSysDir,
// and refuses one that is not a directory or holds anything else (the
// engine would refuse to format it anyway, but only after the bench
// had written there). A missing p is fine: the bench creates it.
func inspectDrive(p string) (hasSys bool, err error) {
	ents, err := os.ReadDir(p)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("drive %s: %w", p, err)
	}
	var foreign []string
	for _, e := range ents {
		switch e.Name() {
		case driveSysDir:
			hasSys = true
		case lostAndFound:
		default:
			foreign = append(foreign, e.Name())
		}
	}
	if len(foreign) > 0 {
		sort.Strings(foreign)
		return false, fmt.Errorf("drive %s is not empty (it holds %q%s): bench drive runs on empty directories only",
			p, foreign[0], moreEntries(len(foreign)-1))
	}
	return hasSys, nil
}

func moreEntries(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(" and %d more", n)
}

// formattedDrivesErr explains why drives holding driveSysDir are refused.
func formattedDrivesErr(paths []string) error {
	which := "drive " + paths[0]
	switch n := len(paths) - 1; {
	case n == 1:
		which += " (and 1 other)"
	case n > 1:
		which += fmt.Sprintf(" (and %d others)", n)
	}
	return fmt.Errorf("%s: %s exists, so it is (or was) a drive of a shardstore deployment; "+
		"bench drive formats its drives as a deployment of its own and would mix its data with that one's. "+
		"Give empty or new directories, or pass -allow-formatted to run on that deployment "+
		"(its server stopped): the bench then writes its objects into a new bucket %q there and deletes them at the end",
		which, filepath.Join(paths[0], driveSysDir), benchBucket)
}

// create makes drive directory p if it does not exist, remembering the
// topmost directory it had to make so that undo removes it all.
func (d *benchDirs) create(p string) error {
	top := topMissing(p)
	if top == "" {
		return nil
	}
	if err := os.MkdirAll(p, 0o755); err != nil {
		return fmt.Errorf("drive %s: %w", p, err)
	}
	d.created = append(d.created, top)
	return nil
}

// topMissing is the topmost directory of p's path that does not exist
// ("" when p exists).
func topMissing(p string) string {
	top := ""
	for dir := p; ; {
		if _, err := os.Lstat(dir); !errors.Is(err, fs.ErrNotExist) {
			return top
		}
		top = dir
		parent := filepath.Dir(dir)
		if parent == dir {
			return top
		}
		dir = parent
	}
}

// undo leaves the drives as prepareDirs found them: the driveSysDir of
// drives that had none is removed, then the directories the bench
// created, then the temporary root. The drives must be closed first.
func (d *benchDirs) undo() error {
	var errs []error
	for _, p := range d.fresh {
		errs = append(errs, os.RemoveAll(filepath.Join(p, driveSysDir)))
	}
	for i := len(d.created) - 1; i >= 0; i-- {
		errs = append(errs, os.RemoveAll(d.created[i]))
	}
	if d.root != "" {
		errs = append(errs, os.RemoveAll(d.root))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("removing what the bench wrote: %w", err)
	}
	return nil
}
