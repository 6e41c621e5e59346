package jepsen

import (
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// The disk-full nemesis makes every drive a tmpfs (mountDrives). A test
// killed before its cleanup leaves them mounted, holding memory, under a
// temporary directory nobody removes. As for networks (netns_clean.go),
// a run records its owner before it mounts: a file drives-<hash of the
// run's directory> in ownerDir holding the test's pid and the directory;
// the next run that mounts drives first unmounts the tmpfs mounts under
// the directories of owners that died, and removes their files. Mounts
// with no owner file (a harness from before the files, or another
// process's) are left alone: nothing says whether their owner lives.

// driveSource is the source name of the harness's tmpfs mounts.
const driveSource = "jepsen-drive"

// driveOwnerPrefix starts the name of a drive owner file in ownerDir
// (network owner files are named by a 3-digit hex id: no clash).
const driveOwnerPrefix = "drives-"

func driveOwnerName(dir string) string {
	h := fnv.New64a()
	h.Write([]byte(dir))
	return fmt.Sprintf("%s%016x", driveOwnerPrefix, h.Sum64())
}

// writeDriveOwner records this process as the owner of the drives
// mounted under dir.
func writeDriveOwner(owners, dir string) error {
	if err := os.MkdirAll(owners, 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(owners, driveOwnerName(dir)), []byte(fmt.Sprintf("%d\n%s\n", os.Getpid(), dir)), 0o644)
}

func removeDriveOwner(owners, dir string) {
	_ = os.Remove(filepath.Join(owners, driveOwnerName(dir)))
}

// parseDriveOwner reads an owner file: a positive pid, then an absolute,
// clean directory other than the root, one a line.
func parseDriveOwner(b []byte) (pid int, dir string, err error) {
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(lines) != 2 {
		return 0, "", fmt.Errorf("drive owner file: %d lines, want 2 (pid, directory)", len(lines))
	}
	pid, err = strconv.Atoi(lines[0])
	if err != nil || pid <= 0 {
		return 0, "", fmt.Errorf("drive owner file: pid %q: not a positive number", lines[0])
	}
	dir = lines[1]
	if !filepath.IsAbs(dir) || filepath.Clean(dir) != dir || dir == "/" {
		return 0, "", fmt.Errorf("drive owner file: directory %q: want an absolute, clean path below /", dir)
	}
	return pid, dir, nil
}

// parseMounts returns the mount points of /proc/mounts-format text b
// whose source is source (octal escapes such as \040 for a space
// undone). Lines too short to be mounts are skipped.
func parseMounts(b []byte, source string) []string {
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 3 || unescapeMount(f[0]) != source {
			continue
		}
		out = append(out, unescapeMount(f[1]))
	}
	return out
}

// unescapeMount undoes the kernel's octal escapes (\ooo) in a mount
// table field; a backslash not followed by three octal digits stays.
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) && isOctal(s[i+1]) && isOctal(s[i+2]) && isOctal(s[i+3]) {
			v := (s[i+1]-'0')*64 + (s[i+2]-'0')*8 + (s[i+3] - '0')
			if s[i+1] <= '3' { // \400 and up are no byte
				b.WriteByte(v)
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func isOctal(c byte) bool { return c >= '0' && c <= '7' }

// under reports whether path is dir or inside it.
func under(path, dir string) bool {
	return path == dir || strings.HasPrefix(path, dir+"/")
}

// staleDriveMounts sorts the harness's mount points: those under the
// directory of an owner file in owners whose pid is dead (by owner
// file name), and those no owner file covers. alive says whether a pid
// runs. Unreadable owner files are returned as bad (and their mounts
// count as unowned).
func staleDriveMounts(owners string, mounts []string, alive func(int) bool) (stale map[string][]string, unowned []string, bad []string, err error) {
	entries, err := os.ReadDir(owners)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, nil, nil, err
	}
	type owner struct {
		file string
		dir  string
		dead bool
	}
	var owns []owner
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), driveOwnerPrefix) || e.IsDir() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(owners, e.Name()))
		if err != nil {
			bad = append(bad, e.Name())
			continue
		}
		pid, dir, err := parseDriveOwner(b)
		if err != nil || driveOwnerName(dir) != e.Name() {
			bad = append(bad, e.Name())
			continue
		}
		owns = append(owns, owner{file: e.Name(), dir: dir, dead: !alive(pid)})
	}
	stale = map[string][]string{}
	for _, m := range mounts {
		owned := false
		for _, o := range owns {
			if under(m, o.dir) {
				owned = true
				if o.dead {
					stale[o.file] = append(stale[o.file], m)
				}
				break
			}
		}
		if !owned {
			unowned = append(unowned, m)
		}
	}
	// A dead owner whose mounts are all gone: only its file is left.
	for _, o := range owns {
		if o.dead {
			if _, ok := stale[o.file]; !ok {
				stale[o.file] = nil
			}
		}
	}
	return stale, unowned, bad, nil
}

// pidAlive reports whether process pid runs (EPERM: it does, not ours).
func pidAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// cleanStaleDrives unmounts the tmpfs drives of dead owners recorded in
// owners and removes their owner files; it returns the mount points it
// unmounted and how many harness mounts it left alone for want of an
// owner file, for the run's log.
func cleanStaleDrives(owners string) (removed []string, unowned int, err error) {
	b, err := os.ReadFile("/proc/self/mounts")
	if err != nil {
		return nil, 0, err
	}
	stale, un, _, err := staleDriveMounts(owners, parseMounts(b, driveSource), pidAlive)
	if err != nil {
		return nil, 0, err
	}
	var errs []error
	for file, mounts := range stale {
		ok := true
		for _, m := range mounts {
			// -l: a process still inside cannot keep it mounted.
			if out, err := exec.Command("umount", "-l", m).CombinedOutput(); err != nil {
				errs = append(errs, fmt.Errorf("umount %s: %w: %s", m, err, strings.TrimSpace(string(out))))
				ok = false
				continue
			}
			removed = append(removed, m)
		}
		if ok {
			_ = os.Remove(filepath.Join(owners, file))
		}
	}
	return removed, len(un), errors.Join(errs...)
}

// listNote is ": a, b" for a log line, "" for none.
func listNote(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return ": " + strings.Join(s, ", ")
}
