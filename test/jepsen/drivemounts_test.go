package jepsen

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

func TestParseDriveOwner(t *testing.T) {
	for _, c := range []struct {
		in      string
		pid     int
		dir     string
		wantErr bool
	}{
		{"123\n/tmp/TestNightly1/001\n", 123, "/tmp/TestNightly1/001", false},
		{"123\n/tmp/x", 123, "/tmp/x", false},
		{"", 0, "", true},
		{"\n", 0, "", true},
		{"123\n", 0, "", true},
		{"123", 0, "", true},
		{"0\n/tmp/x\n", 0, "", true},
		{"-5\n/tmp/x\n", 0, "", true},
		{"+5\n/tmp/x\n", 5, "/tmp/x", false}, // Atoi takes a sign; still a positive pid
		{"99999999999999999999999\n/tmp/x\n", 0, "", true},
		{"12a\n/tmp/x\n", 0, "", true},
		{" 12\n/tmp/x\n", 0, "", true},
		{"12\n/\n", 0, "", true},
		{"12\nrelative/dir\n", 0, "", true},
		{"12\n/tmp/../etc\n", 0, "", true},
		{"12\n/tmp/x/\n", 0, "", true},
		{"12\n/tmp//x\n", 0, "", true},
		{"12\n\n", 0, "", true},
		{"12\n/tmp/x\nextra\n", 0, "", true},
		{"12\r\n/tmp/x\r\n", 0, "", true},
		{"12\n/tmp/with space\n", 12, "/tmp/with space", false},
	} {
		pid, dir, err := parseDriveOwner([]byte(c.in))
		if (err != nil) != c.wantErr || pid != c.pid || dir != c.dir {
			t.Errorf("parseDriveOwner(%q) = %d, %q, %v; want %d, %q, error %v", c.in, pid, dir, err, c.pid, c.dir, c.wantErr)
		}
	}
}

func TestParseMounts(t *testing.T) {
	in := strings.Join([]string{
		"proc /proc proc rw,nosuid 0 0",
		"jepsen-drive /tmp/T1/001/node1/d1 tmpfs rw,relatime,size=262144k 0 0",
		"jepsen-drive /tmp/with\\040space/node1/d1 tmpfs rw 0 0",
		"jepsen-drive",                          // too short
		"jepsen-drive /tmp/short",               // too short
		"",                                      // empty
		"   ",                                   // blank
		"jepsen-drive2 /tmp/other tmpfs rw 0 0", // another source
		"tmpfs /tmp/T1/001/node1/d2 tmpfs rw 0 0",
		"jepsen\\055drive /tmp/escaped-source tmpfs rw 0 0", // \055 is '-'
		"jepsen-drive /tmp/back\\slash\\9 tmpfs rw 0 0",     // no octal escape: kept
		"jepsen-drive /tmp/end\\04 tmpfs rw 0 0",            // cut escape: kept
		"jepsen-drive /tmp/high\\777 tmpfs rw 0 0",          // no byte: kept
		"\tjepsen-drive\t/tmp/tabs\ttmpfs\trw 0 0",
	}, "\n")
	want := []string{
		"/tmp/T1/001/node1/d1",
		"/tmp/with space/node1/d1",
		"/tmp/escaped-source",
		`/tmp/back\slash\9`,
		`/tmp/end\04`,
		`/tmp/high\777`,
		"/tmp/tabs",
	}
	if got := parseMounts([]byte(in), driveSource); !reflect.DeepEqual(got, want) {
		t.Errorf("parseMounts:\n got %q\nwant %q", got, want)
	}
	if got := parseMounts(nil, driveSource); got != nil {
		t.Errorf("parseMounts(nil) = %q", got)
	}
}

func FuzzParseMounts(f *testing.F) {
	f.Add([]byte("jepsen-drive /tmp/a\\040b tmpfs rw 0 0\n"))
	f.Add([]byte("jepsen-drive /x\\7 tmpfs\n\\\\\\"))
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, m := range parseMounts(b, driveSource) {
			if m == "" {
				t.Errorf("an empty mount point from %q", b)
			}
		}
		pid, dir, err := parseDriveOwner(b)
		if err == nil && (pid <= 0 || !filepath.IsAbs(dir) || filepath.Clean(dir) != dir) {
			t.Errorf("parseDriveOwner(%q) accepted pid %d dir %q", b, pid, dir)
		}
	})
}

// TestStaleDriveMounts sorts mounts by owner files in a directory of
// the test's, with a made-up liveness.
func TestStaleDriveMounts(t *testing.T) {
	owners := t.TempDir()
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(owners, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(driveOwnerName("/tmp/dead"), "100\n/tmp/dead\n")
	write(driveOwnerName("/tmp/live"), "200\n/tmp/live\n")
	write(driveOwnerName("/tmp/gone"), "100\n/tmp/gone\n")  // dead, nothing mounted any more
	write(driveOwnerName("/tmp/other"), "100\n/tmp/liar\n") // the name is not its directory's
	write("drives-garbage", "not a pid\n/tmp/x\n")
	write("abc", "100")                    // a network's owner file: not ours
	write(driveOwnerName("/"), "100\n/\n") // the root: refused
	mounts := []string{
		"/tmp/dead/node1/d1", "/tmp/dead/node1/d2",
		"/tmp/deadbeef/node1/d1", // a sibling with the same prefix: not under /tmp/dead
		"/tmp/live/node1/d1",
		"/tmp/liar/node1/d1",
		"/tmp/nobody/node1/d1",
	}
	alive := func(pid int) bool { return pid == 200 }
	stale, unowned, bad, err := staleDriveMounts(owners, mounts, alive)
	if err != nil {
		t.Fatal(err)
	}
	wantStale := map[string][]string{
		driveOwnerName("/tmp/dead"): {"/tmp/dead/node1/d1", "/tmp/dead/node1/d2"},
		driveOwnerName("/tmp/gone"): nil,
	}
	if !reflect.DeepEqual(stale, wantStale) {
		t.Errorf("stale = %q, want %q", stale, wantStale)
	}
	if want := []string{"/tmp/deadbeef/node1/d1", "/tmp/liar/node1/d1", "/tmp/nobody/node1/d1"}; !reflect.DeepEqual(unowned, want) {
		t.Errorf("unowned = %q, want %q", unowned, want)
	}
	if len(bad) != 3 {
		t.Errorf("bad owner files = %q, want the liar, the garbage and the root", bad)
	}

	// No owner directory yet: every mount is unowned, no error.
	stale, unowned, _, err = staleDriveMounts(filepath.Join(owners, "missing"), mounts[:1], alive)
	if err != nil || len(stale) != 0 || len(unowned) != 1 {
		t.Errorf("no owner dir: %v %v %v", stale, unowned, err)
	}
}

// TestCleanStaleDriveMounts mounts two tmpfs drives as the disk-full
// nemesis does, one recorded to a dead process (a test killed before
// its cleanup), one to this live one, and checks that cleanStaleDrives
// unmounts the first only. Owner files go to a directory of the test's,
// so runs beside it (whose mounts have no file there) are not touched.
func TestCleanStaleDriveMounts(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("not root: tmpfs cannot be mounted (the harness leaves the disk-full nemesis out then)")
	}
	owners := t.TempDir()
	dead, live := t.TempDir(), t.TempDir()
	for _, d := range []string{dead, live} {
		if err := mountDrives(d, 1, 1); err != nil {
			unmountDrives(d, 1, 1)
			t.Skipf("cannot mount tmpfs here: %v", err)
		}
	}
	t.Cleanup(func() { unmountDrives(dead, 1, 1); unmountDrives(live, 1, 1) })
	// A pid that is dead: a child that has exited and been waited for.
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	deadPid := cmd.Process.Pid
	if pidAlive(deadPid) {
		t.Skipf("pid %d was reused already", deadPid)
	}
	if err := os.WriteFile(filepath.Join(owners, driveOwnerName(dead)), []byte(strings.Join([]string{strconv.Itoa(deadPid), dead, ""}, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := writeDriveOwner(owners, live); err != nil {
		t.Fatal(err)
	}
	removed, _, err := cleanStaleDrives(owners)
	if err != nil {
		t.Fatal(err)
	}
	mounted := func(dir string) bool {
		b, err := os.ReadFile("/proc/self/mounts")
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range parseMounts(b, driveSource) {
			if under(m, dir) {
				return true
			}
		}
		return false
	}
	if mounted(dead) {
		t.Errorf("the dead owner's drive under %s is still mounted (removed %q)", dead, removed)
	}
	if want := []string{filepath.Join(dead, "node1", "d1")}; !reflect.DeepEqual(removed, want) {
		t.Errorf("removed %q, want %q", removed, want)
	}
	if _, err := os.Stat(filepath.Join(owners, driveOwnerName(dead))); !os.IsNotExist(err) {
		t.Errorf("the dead owner's file is still there: %v", err)
	}
	if !mounted(live) {
		t.Errorf("the live owner's drive under %s was unmounted", live)
	}
	if _, err := os.Stat(filepath.Join(owners, driveOwnerName(live))); err != nil {
		t.Errorf("the live owner's file: %v", err)
	}
}
