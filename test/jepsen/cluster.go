package jepsen

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/shardstore/shardstore/test/internal/serverbin"
)

const (
	rootUser = "jepsen-root"
	rootPass = "jepsen-root-secret"
	region   = "us-east-1"
)

// Cluster is N node processes of the real binary over one Network.
type Cluster struct {
	bin    string
	dir    string
	drives int
	extra  []string
	net    Network
	args   []string // endpoint arguments, the same for every node

	mu    sync.Mutex
	nodes []*nodeProc
	// env is each node's extra environment (a clock offset: the
	// clock-skew nemesis), used from its next start on.
	env [][]string
	// common is each node's environment from StartClusterEnv.
	common [][]string
	// past is what each node's earlier processes wrote to stderr (a
	// node restarted by a nemesis), for the logs a run keeps.
	past []string
}

// nodeProc is one node's process (nil cmd while it is down).
type nodeProc struct {
	cmd    *exec.Cmd
	stderr *serverbin.SyncBuffer
	exited chan struct{}
	err    error
	paused bool
}

// NewNetwork makes the network for n nodes: kind "netns", "proxy", or ""
// for namespaces where they can be made and the proxies otherwise (the
// reason is returned in note).
func NewNetwork(kind string, n int) (nw Network, note string, err error) {
	switch kind {
	case "proxy":
		nw, err = newProxyNet(n)
		return nw, "proxy network (asked for)", err
	case "netns":
		ns, err := newNSNet(n)
		if err != nil {
			return nil, "", err
		}
		return ns, "network namespaces (asked for)" + ns.staleNote(), nil
	case "":
		ns, nsErr := newNSNet(n)
		if nsErr == nil {
			return ns, "network namespaces" + ns.staleNote(), nil
		}
		nw, err = newProxyNet(n)
		return nw, fmt.Sprintf("proxy network: namespaces not available (%v)", nsErr), err
	}
	return nil, "", fmt.Errorf("jepsen: unknown network %q (netns or proxy)", kind)
}

// tmpfsSize is the size of each drive's tmpfs when the drives are
// small filesystems of their own (Config.SmallDrives). 256m filled the
// whole cluster within 3-4 minutes once the multipart workload (5 MiB
// parts) ran (H1 in docs/consistency.md); tmpfs takes memory only as
// it is written.
const tmpfsSize = "1g"

// mountDrives makes every drive directory a tmpfs of tmpfsSize (or
// SHARDSTORE_JEPSEN_TMPFS, see driveTmpfsSize), so a
// drive can be filled (FillDrives) without filling the machine's disk.
// It needs root; unmountDrives undoes it.
func mountDrives(dir string, n, drives int) error {
	size, err := driveTmpfsSize()
	if err != nil {
		return err
	}
	for i := range n {
		for j := 1; j <= drives; j++ {
			d := filepath.Join(dir, fmt.Sprintf("node%d", i+1), fmt.Sprintf("d%d", j))
			if err := os.MkdirAll(d, 0o755); err != nil {
				return err
			}
			out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "jepsen-drive", d).CombinedOutput()
			if err != nil {
				return fmt.Errorf("mount tmpfs on %s: %w: %s", d, err, strings.TrimSpace(string(out)))
			}
		}
	}
	return nil
}

func unmountDrives(dir string, n, drives int) {
	for i := range n {
		for j := 1; j <= drives; j++ {
			_ = exec.Command("umount", "-l", filepath.Join(dir, fmt.Sprintf("node%d", i+1), fmt.Sprintf("d%d", j))).Run()
		}
	}
}

// fillerName is the file FillDrives writes beside a drive's data.
const fillerName = "jepsen-filler"

// FillDrives fills every drive of node i with a file of zeros until
// the filesystem is full (ENOSPC).
func (c *Cluster) FillDrives(i int) error {
	buf := make([]byte, 1<<20)
	for j := 1; j <= c.drives; j++ {
		f, err := os.Create(filepath.Join(c.DriveDir(i, j), fillerName))
		if err != nil {
			return err
		}
		for {
			if _, err := f.Write(buf); err != nil {
				break // ENOSPC: full
			}
		}
		f.Close()
	}
	return nil
}

// EmptyDrives removes what FillDrives wrote.
func (c *Cluster) EmptyDrives(i int) error {
	var errs []error
	for j := 1; j <= c.drives; j++ {
		if err := os.Remove(filepath.Join(c.DriveDir(i, j), fillerName)); err != nil && !os.IsNotExist(err) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// StartCluster starts n nodes with drives drives each under dir and
// waits until every node answers ready.
func StartCluster(bin, dir string, nw Network, n, drives int, extra ...string) (*Cluster, error) {
	return StartClusterEnv(bin, dir, nw, n, drives, nil, extra...)
}

// StartClusterEnv is StartCluster with environment entries every node
// gets (KEY=VALUE; a %d in VALUE becomes the node's number, 1-based).
func StartClusterEnv(bin, dir string, nw Network, n, drives int, env []string, extra ...string) (*Cluster, error) {
	c := &Cluster{bin: bin, dir: dir, drives: drives, extra: extra, net: nw, nodes: make([]*nodeProc, n),
		env: make([][]string, n), common: make([][]string, n), past: make([]string, n)}
	for i := range n {
		for _, kv := range env {
			if strings.Contains(kv, "%d") {
				kv = fmt.Sprintf(kv, i+1)
			}
			c.common[i] = append(c.common[i], kv)
		}
	}
	for i := range n {
		c.args = append(c.args, fmt.Sprintf("http://%s%s/node%d/d{1...%d}", nw.PeerAddr(i), dir, i+1, drives))
	}
	for i := range n {
		if err := c.launch(i); err != nil {
			c.Stop()
			return nil, err
		}
	}
	for i := range n {
		if err := c.WaitReady(i, 2*time.Minute); err != nil {
			c.Stop()
			return nil, err
		}
	}
	return c, nil
}

// N is the number of nodes.
func (c *Cluster) N() int { return len(c.nodes) }

func (c *Cluster) launch(i int) error {
	args := append([]string{"server", "--address", c.net.ListenAddr(i), "--console-address", ""}, c.extra...)
	args = append(args, c.args...)
	cmd := c.net.Command(i, c.bin, args...)
	serverbin.DieWithParent(cmd)
	cmd.Env = append(os.Environ(), "SHARDSTORE_ROOT_USER="+rootUser, "SHARDSTORE_ROOT_PASSWORD="+rootPass,
		"SHARDSTORE_ALLOW_ROOT_DRIVES=1", "SHARDSTORE_CERTS_DIR="+serverbin.NoCertsDir())
	cmd.Env = append(cmd.Env, c.net.Env(i)...)
	c.mu.Lock()
	cmd.Env = append(cmd.Env, c.common[i]...)
	cmd.Env = append(cmd.Env, c.env[i]...)
	c.mu.Unlock()
	p := &nodeProc{cmd: cmd, stderr: &serverbin.SyncBuffer{}, exited: make(chan struct{})}
	cmd.Stderr = p.stderr
	cmd.Stdout = io.Discard
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start node %d: %w", i+1, err)
	}
	go func() {
		p.err = cmd.Wait()
		close(p.exited)
	}()
	c.mu.Lock()
	if old := c.nodes[i]; old != nil {
		c.past[i] += old.stderr.String() + "---- restarted ----\n"
	}
	c.nodes[i] = p
	c.mu.Unlock()
	return nil
}

// SetEnv sets node i's extra environment (KEY=VALUE entries) for its
// next start, replacing what an earlier SetEnv gave.
func (c *Cluster) SetEnv(i int, kv ...string) {
	c.mu.Lock()
	c.env[i] = kv
	c.mu.Unlock()
}

// FullLog is everything node i's processes wrote to stderr, the earlier
// ones (before a restart) first.
func (c *Cluster) FullLog(i int) string {
	c.mu.Lock()
	past := c.past[i]
	c.mu.Unlock()
	return past + c.node(i).stderr.String()
}

func (c *Cluster) node(i int) *nodeProc {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.nodes[i]
}

// WaitReady polls node i's readiness check until it answers 200.
func (c *Cluster) WaitReady(i int, within time.Duration) error {
	p := c.node(i)
	deadline := time.Now().Add(within)
	hc := &http.Client{Timeout: 2 * time.Second}
	for {
		resp, err := hc.Get(c.net.ClientURL(i) + "/shardstore/health/ready")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-p.exited:
			return fmt.Errorf("node %d exited while starting: %v\n%s", i+1, p.err, tail(p.stderr.String(), 30))
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("node %d not ready within %v (%v)\n%s", i+1, within, err, tail(p.stderr.String(), 30))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// Kill sends SIGKILL to node i and waits until it is gone.
func (c *Cluster) Kill(i int) {
	p := c.node(i)
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.exited
}

// Term stops node i gracefully (SIGTERM) and waits until it is gone.
func (c *Cluster) Term(i int) error {
	p := c.node(i)
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
		if p.err != nil {
			return fmt.Errorf("node %d did not stop cleanly: %w", i+1, p.err)
		}
		return nil
	case <-time.After(45 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.exited
		return fmt.Errorf("node %d did not stop within 45s of SIGTERM", i+1)
	}
}

// Up is whether node i's process is running (possibly paused).
func (c *Cluster) Up(i int) bool {
	select {
	case <-c.node(i).exited:
		return false
	default:
		return true
	}
}

// Restart starts node i again on its drives (after Kill) and waits
// until it is ready.
func (c *Cluster) Restart(i int) error {
	if err := c.launch(i); err != nil {
		return err
	}
	return c.WaitReady(i, 2*time.Minute)
}

// Pause stops node i with SIGSTOP; Resume continues it (SIGCONT).
func (c *Cluster) Pause(i int) {
	p := c.node(i)
	_ = p.cmd.Process.Signal(syscall.SIGSTOP)
	c.mu.Lock()
	p.paused = true
	c.mu.Unlock()
}

func (c *Cluster) Resume(i int) {
	p := c.node(i)
	_ = p.cmd.Process.Signal(syscall.SIGCONT)
	c.mu.Lock()
	p.paused = false
	c.mu.Unlock()
}

// Log is the tail of node i's standard error.
func (c *Cluster) Log(i, lines int) string { return tail(c.node(i).stderr.String(), lines) }

// Stop ends every node: SIGCONT (a paused node cannot stop), SIGTERM,
// SIGKILL after 45 s. It returns the nodes that did not stop cleanly.
func (c *Cluster) Stop() error {
	var wg sync.WaitGroup
	var mu sync.Mutex
	var bad []string
	for i, p := range c.nodes {
		if p == nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case <-p.exited:
				return
			default:
			}
			_ = p.cmd.Process.Signal(syscall.SIGCONT)
			_ = p.cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-p.exited:
				if p.err != nil {
					mu.Lock()
					bad = append(bad, fmt.Sprintf("node %d: %v", i+1, p.err))
					mu.Unlock()
				}
			case <-time.After(45 * time.Second):
				_ = p.cmd.Process.Kill()
				<-p.exited
				mu.Lock()
				bad = append(bad, fmt.Sprintf("node %d did not stop within 45s", i+1))
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(bad) > 0 {
		return fmt.Errorf("jepsen: %s", strings.Join(bad, "; "))
	}
	return nil
}

// Client is an S3 client of node i: aws-sdk-go-v2 at its default
// settings except one: a single attempt per request. The SDK's retries
// would turn one recorded operation into several writes (a PUT retried
// after its first attempt committed is two writes; a conditional PUT
// retried after it committed sees its own write and fails), which the
// checker would rightly call anomalies of the history it was given.
func (c *Cluster) Client(i int) *s3.Client {
	return s3.New(s3.Options{
		BaseEndpoint:     aws.String(c.net.ClientURL(i)),
		Region:           region,
		Credentials:      credentials.NewStaticCredentialsProvider(rootUser, rootPass, ""),
		UsePathStyle:     true,
		RetryMaxAttempts: 1,
	})
}

// DriveDir is drive j (1-based) of node i (0-based).
func (c *Cluster) DriveDir(i, j int) string {
	return filepath.Join(c.dir, fmt.Sprintf("node%d", i+1), fmt.Sprintf("d%d", j))
}

// ctxTimeout is a context for one client operation.
func ctxTimeout(d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), d)
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
