package drive

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// Placement says which filesystem a drive directory is on, so the
// server can refuse drives on the root filesystem and warn about drives
// that share one disk (erasure coding cannot survive losing that disk).
type Placement struct {
	Path string
	// Dev is the filesystem's device number (st_dev).
	Dev uint64
	// MountPoint, Source and FSType describe the filesystem, from
	// /proc/self/mountinfo; empty when it cannot be read.
	MountPoint, Source, FSType string
	// OnRoot is true when the directory is on the same filesystem as
	// the root directory given to Place.
	OnRoot bool
}

// Describe names the filesystem for messages: "/dev/sda1 (ext4) mounted
// at /mnt/disk1", or its device number when mountinfo is unavailable.
func (p Placement) Describe() string {
	if p.MountPoint == "" {
		return fmt.Sprintf("device %d:%d", unix.Major(p.Dev), unix.Minor(p.Dev))
	}
	return fmt.Sprintf("%s (%s) mounted at %s", p.Source, p.FSType, p.MountPoint)
}

// Place finds the filesystem of path. A path that does not exist yet is
// placed on the filesystem of its nearest existing parent, where it
// would be created. rootDir is the directory whose filesystem counts as
// the root one ("/" outside tests).
func Place(path, rootDir string) (Placement, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return Placement{}, fmt.Errorf("drive %s: %w", path, err)
	}
	p := Placement{Path: abs}
	var st unix.Stat_t
	for dir := abs; ; dir = filepath.Dir(dir) {
		err = unix.Stat(dir, &st)
		if err == nil || !errors.Is(err, unix.ENOENT) || filepath.Dir(dir) == dir {
			break
		}
	}
	if err != nil {
		return p, fmt.Errorf("drive %s: %w", abs, &fs.PathError{Op: "stat", Path: abs, Err: err})
	}
	p.Dev = st.Dev
	var rst unix.Stat_t
	if err := unix.Stat(rootDir, &rst); err != nil {
		return p, fmt.Errorf("stat %s: %w", rootDir, err)
	}
	p.OnRoot = rst.Dev == st.Dev
	p.MountPoint, p.Source, p.FSType = mountOf(st.Dev)
	return p, nil
}

// mountOf looks up the mount of device dev in /proc/self/mountinfo
// (the first one listed, which is the filesystem's own mount).
func mountOf(dev uint64) (mountPoint, source, fsType string) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return "", "", ""
	}
	defer f.Close()
	want := fmt.Sprintf("%d:%d", unix.Major(dev), unix.Minor(dev))
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// id parent major:minor root mountpoint options... - fstype source superopts
		fields := strings.Fields(sc.Text())
		if len(fields) < 5 || fields[2] != want {
			continue
		}
		mountPoint = unescapeMount(fields[4])
		for i, f := range fields {
			if f == "-" && i+2 < len(fields) {
				fsType, source = fields[i+1], unescapeMount(fields[i+2])
				break
			}
		}
		return mountPoint, source, fsType
	}
	return "", "", ""
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			var v int
			if _, err := fmt.Sscanf(s[i+1:i+4], "%3o", &v); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// SharedFilesystems groups placements by filesystem and returns the
// groups that hold more than one drive, in the order first seen.
func SharedFilesystems(ps []Placement) [][]Placement {
	index := map[uint64]int{}
	var groups [][]Placement
	for _, p := range ps {
		i, ok := index[p.Dev]
		if !ok {
			i = len(groups)
			index[p.Dev] = i
			groups = append(groups, nil)
		}
		groups[i] = append(groups[i], p)
	}
	out := groups[:0]
	for _, g := range groups {
		if len(g) > 1 {
			out = append(out, g)
		}
	}
	return out
}
