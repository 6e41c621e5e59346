package jepsen

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
)

// A test killed before its Close (SIGKILL, a timeout, a crash) leaves
// its namespaces and bridges behind: nsNet records its owner and
// removes, when a new network is made, what dead owners left.

// ownerDir holds one file per live nsNet, named by its id, holding the
// test process's pid.
const ownerDir = "/run/shardstore-jepsen"

var nsName = regexp.MustCompile(`^jepsen-([0-9a-f]{3})-[0-9]+$`)

// writeOwner records this process as the owner of network id.
func writeOwner(id string) error {
	if err := os.MkdirAll(ownerDir, 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(ownerDir, id), []byte(strconv.Itoa(os.Getpid())), 0o644)
}

func removeOwner(id string) { _ = os.Remove(filepath.Join(ownerDir, id)) }

// ownerAlive reports whether network id has a recorded owner still
// running; known is false when none is recorded.
func ownerAlive(id string) (alive, known bool) {
	b, err := os.ReadFile(filepath.Join(ownerDir, id))
	if err != nil {
		return false, false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return false, false
	}
	err = syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM), true
}

// staleNetworks returns the ids of harness networks whose owner is dead:
// recorded and no longer running, or (made by a harness that recorded
// none) with no process in any of their namespaces, which a running
// run never has (a nemesis stops a minority of the nodes at most).
func staleNetworks() ([]string, error) {
	out, err := exec.Command("ip", "netns", "list").Output()
	if err != nil {
		return nil, fmt.Errorf("ip netns list: %w", err)
	}
	groups := map[string][]string{}
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if m := nsName.FindStringSubmatch(f[0]); m != nil {
			groups[m[1]] = append(groups[m[1]], f[0])
		}
	}
	var stale []string
	for id, names := range groups {
		if alive, known := ownerAlive(id); known {
			if !alive {
				stale = append(stale, id)
			}
			continue
		}
		empty := true
		for _, ns := range names {
			pids, err := exec.Command("ip", "netns", "pids", ns).Output()
			if err != nil || strings.TrimSpace(string(pids)) != "" {
				empty = false
				break
			}
		}
		if empty {
			stale = append(stale, id)
		}
	}
	return stale, nil
}

// removeNetwork deletes what network id made: its namespaces and every
// device of the test's namespace named after it.
func removeNetwork(id string) error {
	var errs []error
	out, err := exec.Command("ip", "netns", "list").Output()
	if err != nil {
		return err
	}
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) > 0 && strings.HasPrefix(f[0], "jepsen-"+id+"-") {
			if err := ip("netns", "del", f[0]); err != nil {
				errs = append(errs, err)
			}
		}
	}
	links, err := exec.Command("ip", "-o", "link", "show").Output()
	if err != nil {
		return errors.Join(append(errs, err)...)
	}
	for _, line := range strings.Split(string(links), "\n") {
		// "12: jp1a312@...: <...>" or "12: jc1a3: <...>"
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		name, _, _ := strings.Cut(strings.TrimSuffix(f[1], ":"), "@")
		if isHarnessDevice(name, id) {
			if err := ip("link", "del", name); err != nil && !strings.Contains(err.Error(), "Cannot find device") {
				errs = append(errs, err)
			}
		}
	}
	removeOwner(id)
	return errors.Join(errs...)
}

// isHarnessDevice reports whether a device of the test's namespace is
// one network id made (nsNet's names: jc, jp, ja, jk + id).
func isHarnessDevice(name, id string) bool {
	for _, p := range []string{"jc", "jp", "ja", "jk"} {
		if strings.HasPrefix(name, p+id) {
			return true
		}
	}
	return false
}

// cleanStale removes the networks dead owners left; it returns what it
// removed, for the log.
func cleanStale() ([]string, error) {
	ids, err := staleNetworks()
	if err != nil {
		return nil, err
	}
	var errs []error
	for _, id := range ids {
		errs = append(errs, removeNetwork(id))
	}
	return ids, errors.Join(errs...)
}

// staleNote says, for the run's log, what cleanStale removed.
func (s *nsNet) staleNote() string {
	if len(s.stale) == 0 {
		return ""
	}
	return fmt.Sprintf(" (removed %d networks killed runs left: %s)", len(s.stale), strings.Join(s.stale, ", "))
}
