package testinstall

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestValidPackage(t *testing.T) {
	for _, ok := range []string{"slapd", "ldap-utils", "openjdk-17-jre-headless", "g++", "libc6.1", "nats-server", "mariadb-server", "xz", "0ad"} {
		if !ValidPackage(ok) {
			t.Errorf("ValidPackage(%q) = false, want true", ok)
		}
	}
	for _, bad := range []string{
		"", "a", "-y", "--allow-unauthenticated", "-oAPT::Get::AllowUnauthenticated=1", "--", "-",
		"Slapd", "slapd ", " slapd", "sl apd", "slapd\n", "slapd\x00", "slapd\t",
		"slapd=2.5.13", "slapd/bookworm", "slapd:amd64", "./x.deb", "/tmp/x.deb", "../x",
		"slapd;rm -rf /", "$(id)", "`id`", "slapd|true", "slapd&", "slapdé", "+x", ".x", "*", "slap?d",
		strings.Repeat("a", 129),
	} {
		if ValidPackage(bad) {
			t.Errorf("ValidPackage(%q) = true, want false", bad)
		}
	}
}

func FuzzValidPackage(f *testing.F) {
	for _, s := range []string{"slapd", "-y", "g++", "a=1", "x/y", "ä", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !ValidPackage(s) {
			return
		}
		if strings.HasPrefix(s, "-") || strings.ContainsAny(s, " \t\n\x00/=:*?[]$`;|&'\"\\") || strings.ToLower(s) != s || len(s) < 2 {
			t.Fatalf("ValidPackage accepted %q", s)
		}
	})
}

// recorder is a testing.TB whose Log, Skip and Fatal are recorded; Skip
// and Fatal end the goroutine as the testing package's do.
type recorder struct {
	testing.TB
	mu            sync.Mutex
	logs          []string
	skip, fatal   string
	skipped, died bool
}

func (r *recorder) Helper() {}
func (r *recorder) Log(args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.logs = append(r.logs, fmt.Sprint(args...))
}
func (r *recorder) Logf(format string, args ...any) { r.Log(fmt.Sprintf(format, args...)) }
func (r *recorder) Skip(args ...any) {
	r.skip, r.skipped = fmt.Sprint(args...), true
	runtime.Goexit()
}
func (r *recorder) Fatal(args ...any) { r.Fatalf("%s", fmt.Sprint(args...)) }
func (r *recorder) Fatalf(format string, args ...any) {
	r.fatal, r.died = fmt.Sprintf(format, args...), true
	runtime.Goexit()
}

// in runs fn with a recorder in its own goroutine (Skip and Fatal end it).
func in(t *testing.T, fn func(r *recorder)) *recorder {
	r := &recorder{TB: t}
	done := make(chan struct{})
	go func() { defer close(done); fn(r) }()
	<-done
	return r
}

func TestOnce(t *testing.T) {
	var o Once[string]
	calls := 0
	find := func() (string, []string, error) { calls++; return "/x/slapd", []string{"using slapd: /x/slapd"}, nil }
	n := Need{What: "slapd", Tests: "the LDAP tests", Require: "SHARDSTORE_TEST_REQUIRE_X"}
	for i := 0; i < 3; i++ {
		r := in(t, func(r *recorder) {
			if got := o.Get(r, n, find); got != "/x/slapd" {
				t.Errorf("Get = %q", got)
			}
		})
		if r.skipped || r.died || len(r.logs) != 1 || r.logs[0] != "using slapd: /x/slapd" {
			t.Errorf("Get %d: skipped %v, failed %v, logs %q", i, r.skipped, r.died, r.logs)
		}
	}
	if calls != 1 {
		t.Errorf("find ran %d times, want once", calls)
	}
}

func TestOnceSkipOrFail(t *testing.T) {
	var o Once[string]
	find := func() (string, []string, error) {
		return "", []string{"installing Debian's slapd"}, errors.New("apt-get install slapd: exit status 100")
	}
	n := Need{What: "slapd", Tests: "the LDAP tests", Require: "SHARDSTORE_TEST_REQUIRE_X"}
	t.Setenv("SHARDSTORE_TEST_REQUIRE_X", "")
	r := in(t, func(r *recorder) { o.Get(r, n, find); t.Error("Get returned") })
	want := "skipping the LDAP tests: no slapd and installing it failed (apt-get install slapd: exit status 100); set SHARDSTORE_TEST_REQUIRE_X=1 to make this a failure"
	if !r.skipped || r.skip != want || len(r.logs) != 1 {
		t.Errorf("skipped %v %q (logs %q), want %q", r.skipped, r.skip, r.logs, want)
	}
	t.Setenv("SHARDSTORE_TEST_REQUIRE_X", "1")
	r = in(t, func(r *recorder) { o.Get(r, n, find); t.Error("Get returned") })
	want = "SHARDSTORE_TEST_REQUIRE_X is set and there is no slapd: apt-get install slapd: exit status 100"
	if !r.died || r.fatal != want {
		t.Errorf("failed %v %q, want %q", r.died, r.fatal, want)
	}
	// No Tests and no Require: the plain message.
	var o2 Once[int]
	r = in(t, func(r *recorder) {
		o2.Get(r, Need{What: "x"}, func() (int, []string, error) { return 0, nil, errors.New("gone") })
	})
	if r.skip != "skipping: no x and installing it failed (gone)" {
		t.Errorf("skip %q", r.skip)
	}
}

// A find that ends its goroutine (a t.Skip inside it) leaves an error
// behind, not a zero value that later tests would take for a result.
func TestOnceGoexit(t *testing.T) {
	var o Once[string]
	n := Need{What: "mvn"}
	r := in(t, func(r *recorder) {
		o.Get(r, n, func() (string, []string, error) { runtime.Goexit(); return "", nil, nil })
	})
	if r.skipped || r.died {
		t.Fatalf("first Get: skipped %v failed %v", r.skipped, r.died)
	}
	r = in(t, func(r *recorder) {
		o.Get(r, n, func() (string, []string, error) { return "/late", nil, nil })
		t.Error("Get returned")
	})
	if !r.skipped || !strings.Contains(r.skip, "looking for mvn did not finish") {
		t.Errorf("second Get: skipped %v %q", r.skipped, r.skip)
	}
}

func TestLookup(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"prog", "ver/1/bin/srv", "ver/2/bin/srv"} {
		p := filepath.Join(dir, n)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", dir)
	for _, c := range []struct {
		paths []string
		want  string
	}{
		{[]string{"prog"}, filepath.Join(dir, "prog")},
		{[]string{"missing", filepath.Join(dir, "prog")}, filepath.Join(dir, "prog")},
		{[]string{filepath.Join(dir, "ver/*/bin/srv")}, filepath.Join(dir, "ver/2/bin/srv")},
		{[]string{filepath.Join(dir, "ver")}, ""},            // a directory
		{[]string{filepath.Join(dir, "nope/*/srv")}, ""},     // a glob that matches nothing
		{[]string{filepath.Join(dir, "ver/[")}, ""},          // a bad glob
		{[]string{"ver/1/bin/srv", "./prog", "../prog"}, ""}, // relative paths
		{[]string{""}, ""},
		{nil, ""},
	} {
		if got := Lookup(c.paths...); got != c.want {
			t.Errorf("Lookup(%q) = %q, want %q", c.paths, got, c.want)
		}
	}
}

// fakeApt puts an apt-get and a sudo first on PATH: apt-get records its
// arguments and, on install, makes bin (what the package provides);
// failInstalls installs fail first.
func fakeApt(t *testing.T, bin string, failInstalls int) (argsFile string) {
	t.Helper()
	dir := t.TempDir()
	argsFile = filepath.Join(dir, "args")
	count := filepath.Join(dir, "count")
	script := fmt.Sprintf(`#!/bin/sh
echo "$*" >> %[1]q
case "$1" in install) ;; *) exit 0 ;; esac
n=$(cat %[2]q 2>/dev/null || echo 0); echo $((n+1)) > %[2]q
if [ "$n" -lt %[3]d ]; then echo "E: Unable to locate package"; exit 100; fi
printf '#!/bin/sh\n' > %[4]q && chmod 755 %[4]q
`, argsFile, count, failInstalls, bin)
	if err := os.WriteFile(filepath.Join(dir, "apt-get"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "sudo"), []byte("#!/bin/sh\nshift\nexec \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	return argsFile
}

func TestFindOrInstall(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "fake-srv")
	args := fakeApt(t, bin, 1)
	p := Program{Name: "fake-srv", Paths: []string{"fake-srv-not-on-path", bin}, Apt: []string{"fake-srv", "fake-tools"}, Tests: "the fake tests"}
	path, log, err := FindOrInstall(p)
	if err != nil || path != bin {
		t.Fatalf("FindOrInstall = %q, %v (log %q)", path, err, log)
	}
	want := []string{"installing Debian's fake-srv fake-tools with apt-get for the fake tests", "installed fake-srv: " + bin}
	if strings.Join(log, "|") != strings.Join(want, "|") {
		t.Errorf("log %q, want %q", log, want)
	}
	got, _ := os.ReadFile(args)
	// The first install fails: apt-get update, then the install again.
	wantArgs := "install -y -q --no-install-recommends -- fake-srv fake-tools\nupdate -q\ninstall -y -q --no-install-recommends -- fake-srv fake-tools\n"
	if string(got) != wantArgs {
		t.Errorf("apt-get ran with\n%s\nwant\n%s", got, wantArgs)
	}
	// Present now: used, not installed again.
	path, log, err = FindOrInstall(p)
	if err != nil || path != bin || len(log) != 1 || log[0] != "using fake-srv: "+bin {
		t.Errorf("second FindOrInstall = %q, %v, %q", path, err, log)
	}
}

func TestFindOrInstallFails(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "fake-srv")
	args := fakeApt(t, bin, 100)
	p := Program{Name: "fake-srv", Paths: []string{bin}, Apt: []string{"fake-srv"}, Recommends: true}
	_, log, err := FindOrInstall(p)
	if err == nil || !strings.Contains(err.Error(), "apt-get install fake-srv: exit status 100: E: Unable to locate package") {
		t.Fatalf("err %v", err)
	}
	if len(log) != 1 || log[0] != "installing Debian's fake-srv with apt-get for the fake-srv tests" {
		t.Errorf("log %q", log)
	}
	got, _ := os.ReadFile(args)
	if !strings.HasPrefix(string(got), "install -y -q -- fake-srv\n") {
		t.Errorf("apt-get ran with %q", got)
	}
}

// Names that are not Debian package names never reach apt-get.
func TestFindOrInstallHostilePackages(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "fake-srv")
	args := fakeApt(t, bin, 0)
	for _, bad := range []string{"-oAPT::Get::AllowUnauthenticated=true", "--reinstall", "x;touch /tmp/pwned", "../../x.deb", "srv=1.0", "Srv", ""} {
		_, _, err := FindOrInstall(Program{Name: "fake-srv", Paths: []string{bin}, Apt: []string{"fake-srv", bad}})
		if err == nil || !strings.Contains(err.Error(), "is not a Debian package name") {
			t.Errorf("Apt %q: err %v", bad, err)
		}
	}
	if got, err := os.ReadFile(args); err == nil {
		t.Errorf("apt-get ran: %q", got)
	}
	if _, err := os.Stat(bin); err == nil {
		t.Error("the program was installed")
	}
	// Nothing to install from.
	if _, _, err := FindOrInstall(Program{Name: "fake-srv", Paths: []string{bin}}); err == nil || err.Error() != "fake-srv is not installed" {
		t.Errorf("no Apt: %v", err)
	}
}

func TestFind(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "fake-find-srv")
	fakeApt(t, bin, 0)
	p := Program{Name: "fake-find-srv " + t.Name(), Paths: []string{bin}, Apt: []string{"fake-find-srv"}}
	for i := 0; i < 2; i++ {
		r := in(t, func(r *recorder) {
			if got := Find(r, p); got != bin {
				t.Errorf("Find = %q", got)
			}
		})
		// Once per process: every test sees the lines of the install.
		if r.skipped || r.died || len(r.logs) != 2 || !strings.HasPrefix(r.logs[1], "installed ") {
			t.Errorf("Find %d: skipped %v %q, failed %v %q, logs %q", i, r.skipped, r.skip, r.died, r.fatal, r.logs)
		}
	}
}

func TestCacheDir(t *testing.T) {
	for _, bad := range []string{"", ".", "..", "../x", "a/b", "/abs", ".hidden", "a\x00b", "a b", "a\\b", strings.Repeat("x", 129)} {
		if d, err := CacheDir(bad); err == nil {
			t.Errorf("CacheDir(%q) = %q, want an error", bad, d)
		}
	}
	d, err := CacheDir("oidc-provider")
	if err != nil {
		t.Fatal(err)
	}
	cache, _ := os.UserCacheDir()
	if d != filepath.Join(cache, "shardstore-test", "oidc-provider") {
		t.Errorf("CacheDir = %q", d)
	}
}

// Locked excludes another process (flock(1) here) holding the same lock.
func TestLocked(t *testing.T) {
	flock, err := exec.LookPath("flock")
	if err != nil {
		t.Skip("skipping: no flock(1) (util-linux) to hold the lock from another process")
	}
	name := fmt.Sprintf("unit-%d", os.Getpid())
	path := filepath.Join(os.TempDir(), "shardstore-test-"+name+".lock")
	t.Cleanup(func() { os.Remove(path) })
	ran := false
	if err := Locked(name, func() error {
		ran = true
		if err := exec.Command(flock, "-n", path, "true").Run(); err == nil {
			t.Error("another process took the lock while Locked held it")
		}
		return nil
	}); err != nil || !ran {
		t.Fatalf("Locked: %v, ran %v", err, ran)
	}
	if out, err := exec.Command(flock, "-n", path, "true").CombinedOutput(); err != nil {
		t.Errorf("the lock is still held after Locked: %v %s", err, out)
	}
	boom := errors.New("boom")
	if err := Locked(name, func() error { return boom }); !errors.Is(err, boom) {
		t.Errorf("Locked returned %v, want fn's error", err)
	}
	for _, bad := range []string{"", "../apt", "a/b", ".x"} {
		if err := Locked(bad, func() error { t.Errorf("fn ran for lock %q", bad); return nil }); err == nil {
			t.Errorf("Locked(%q) accepted", bad)
		}
	}
}

func TestWaitTCP(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	if err := WaitTCP(l.Addr().String(), 10*time.Second, nil, nil); err != nil {
		t.Errorf("listening: %v", err)
	}
	calls := 0
	if err := WaitTCP(l.Addr().String(), 30*time.Second, nil, func() error {
		if calls++; calls < 3 {
			return errors.New("not yet")
		}
		return nil
	}); err != nil || calls != 3 {
		t.Errorf("ready: %v after %d calls", err, calls)
	}
	closed := FreeAddr(t)
	exited := make(chan struct{})
	close(exited)
	if err := WaitTCP(closed, time.Minute, exited, nil); err == nil || !strings.Contains(err.Error(), "exited") {
		t.Errorf("exited: %v", err)
	}
	if err := WaitTCP(closed, 0, nil, nil); err == nil || !strings.Contains(err.Error(), "did not answer on "+closed) {
		t.Errorf("nothing listening: %v", err)
	}
}

func TestTailAndLastLines(t *testing.T) {
	if got := Tail([]byte("short")); got != "short" {
		t.Errorf("Tail = %q", got)
	}
	long := strings.Repeat("a", 3000) + strings.Repeat("b", 2000)
	if got := Tail([]byte(long)); got != strings.Repeat("b", 2000) {
		t.Errorf("Tail kept %d bytes", len(got))
	}
	for _, c := range []struct {
		s    string
		n    int
		want string
	}{
		{"a\nb\nc\n", 2, "b\nc"}, {"a\nb", 5, "a\nb"}, {"", 3, ""}, {"a\nb", 0, ""}, {"a\nb", -1, ""},
	} {
		if got := LastLines(c.s, c.n); got != c.want {
			t.Errorf("LastLines(%q, %d) = %q, want %q", c.s, c.n, got, c.want)
		}
	}
}

// The helper server of TestProcess: this test binary, run again, prints
// a line and serves TCP on TESTINSTALL_HELPER_ADDR until it is stopped.
func TestMain(m *testing.M) {
	switch addr := os.Getenv("TESTINSTALL_HELPER_ADDR"); addr {
	case "":
		os.Exit(m.Run())
	case "exit":
		fmt.Println("helper: giving up")
		os.Exit(3)
	default:
		l, err := net.Listen("tcp", addr)
		if err != nil {
			fmt.Println("helper:", err)
			os.Exit(2)
		}
		fmt.Println("helper: listening on", addr)
		for {
			c, err := l.Accept()
			if err != nil {
				os.Exit(1)
			}
			c.Close()
		}
	}
}

func TestProcess(t *testing.T) {
	addr := FreeAddr(t)
	p := &Process{Name: "helper", Addr: addr, Args: []string{os.Args[0]}, Env: []string{"TESTINSTALL_HELPER_ADDR=" + addr}}
	p.Run(t)
	if !strings.Contains(p.Output(), "helper: listening on "+addr) {
		t.Errorf("output %q", p.Output())
	}
	p.Stop(t)
	if c, err := net.Dial("tcp", addr); err == nil {
		c.Close()
		t.Fatal("still answering after Stop")
	}
	p.Start(t) // again, on the same address
	if c, err := net.Dial("tcp", addr); err != nil {
		t.Fatalf("not answering after a second Start: %v", err)
	} else {
		c.Close()
	}
	// The cleanup Run registered stops it.
}

func TestProcessExits(t *testing.T) {
	p := &Process{Name: "helper", Addr: FreeAddr(t), Args: []string{os.Args[0]}, Env: []string{"TESTINSTALL_HELPER_ADDR=exit"}}
	r := in(t, func(r *recorder) { p.Start(r); t.Error("Start returned") })
	if !r.died || !strings.Contains(r.fatal, "starting helper: helper exited while starting: helper: giving up") {
		t.Errorf("failed %v: %q", r.died, r.fatal)
	}
	r = in(t, func(r *recorder) { (&Process{Name: "none", Addr: FreeAddr(t)}).Start(r) })
	if !r.died || !strings.Contains(r.fatal, "no command line") {
		t.Errorf("no Args: %q", r.fatal)
	}
	r = in(t, func(r *recorder) { RunCommand(r, nil, "", "/bin/sh", "-c", "echo out; exit 4") })
	if !r.died || !strings.Contains(r.fatal, "exit status 4: out") {
		t.Errorf("RunCommand: %q", r.fatal)
	}
}
