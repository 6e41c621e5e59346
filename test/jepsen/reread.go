package jepsen

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// Unavailable or lost? (finding V4 in docs/consistency.md). With
// SHARDSTORE_JEPSEN_REREAD=1, after the final reads of a run with the
// disk-full nemesis (its drives on tmpfs), the harness reads back every
// acknowledged version by its id three times: as the faults left the
// cluster; after every drive's tmpfs was made larger (space freed,
// nodes untouched: a drive whose index stopped on ENOSPC must come back
// by itself); and after every node was restarted. A version every node
// answers 404 for in the last round is lost; one answered 503 is
// unavailable. Each round is logged ("reread: ...") and, with an OUT
// dir, written to reread-<round>.txt (the versions not read back).

// tmpfsSizeRE is what SHARDSTORE_JEPSEN_TMPFS may be: a size mount's
// tmpfs takes (a number and k, m or g), nothing else (it goes on a
// mount command line).
var tmpfsSizeRE = regexp.MustCompile(`^[1-9][0-9]{0,5}[kmg]$`)

// driveTmpfsSize is the drives' tmpfs size: SHARDSTORE_JEPSEN_TMPFS
// (e.g. 256m, as the nightly that found V4 and H1 had), or tmpfsSize.
func driveTmpfsSize() (string, error) {
	s := os.Getenv("SHARDSTORE_JEPSEN_TMPFS")
	if s == "" {
		return tmpfsSize, nil
	}
	if !tmpfsSizeRE.MatchString(s) {
		return "", fmt.Errorf("SHARDSTORE_JEPSEN_TMPFS=%q: want a size such as 256m or 1g", s)
	}
	return s, nil
}

// growDrives remounts every drive's tmpfs with size (space freed under
// running nodes).
func growDrives(dir string, n, drives int, size string) error {
	for i := range n {
		for j := 1; j <= drives; j++ {
			d := filepath.Join(dir, fmt.Sprintf("node%d", i+1), fmt.Sprintf("d%d", j))
			if out, err := exec.Command("mount", "-o", "remount,size="+size, d).CombinedOutput(); err != nil {
				return fmt.Errorf("remount %s: %w: %s", d, err, strings.TrimSpace(string(out)))
			}
		}
	}
	return nil
}

// rereadCounts is one round of the reread: how many versions were
// read back, answered 404 (by a node that could tell), or no better
// than 503 through every node; missed lists the versions not read back
// with what the nodes answered.
type rereadCounts struct {
	ok, notFound, other int
	missed              []rereadMiss
}

type rereadMiss struct {
	op      Op
	answers string
}

// rereadVersions asks for every acknowledged version by id (HEAD),
// through each node in turn until one answers 200 or 404.
func rereadVersions(c *Cluster, h *History, cfg Config, round string) rereadCounts {
	var acked []Op
	for _, o := range h.Ops() {
		if o.Kind == OpVPut && o.Outcome == Ok && o.VersionID != "" {
			acked = append(acked, o)
		}
	}
	sort.Slice(acked, func(i, j int) bool { return acked[i].Call < acked[j].Call })
	answers := make([]string, len(acked))
	var wg sync.WaitGroup
	next := make(chan int)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				o := acked[i]
				var got []string
				for n := range c.N() {
					ctx, cancel := ctxTimeout(cfg.OpTimeout)
					_, err := c.Client(n).HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(verBucket), Key: aws.String(o.Key), VersionId: aws.String(o.VersionID)})
					cancel()
					if err == nil {
						got = []string{"ok"}
						break
					}
					got = append(got, fmt.Sprintf("n%d=%d", n+1, status(err)))
					if status(err) == 404 {
						break
					}
				}
				answers[i] = strings.Join(got, " ")
			}
		}()
	}
	for i := range acked {
		next <- i
	}
	close(next)
	wg.Wait()
	var cnt rereadCounts
	var lines []string
	for i, a := range answers {
		switch {
		case a == "ok":
			cnt.ok++
			continue
		case strings.HasSuffix(a, "=404"):
			cnt.notFound++
		default:
			cnt.other++
		}
		o := acked[i]
		cnt.missed = append(cnt.missed, rereadMiss{op: o, answers: a})
		lines = append(lines, fmt.Sprintf("%s version %s %q acked at %v: %s", o.Key, o.VersionID, o.Value, o.Return.Round(time.Millisecond), a))
	}
	cfg.Log("reread (%s): %d acknowledged versions: %d read back, %d not found (404), %d unavailable (503 or no answer)",
		round, len(acked), cnt.ok, cnt.notFound, cnt.other)
	if cfg.OutDir != "" {
		_ = os.MkdirAll(cfg.OutDir, 0o755)
		name := "reread-" + strings.ReplaceAll(round, " ", "-") + ".txt"
		_ = os.WriteFile(filepath.Join(cfg.OutDir, name), []byte(strings.Join(lines, "\n")+"\n"), 0o644)
	}
	return cnt
}

// rereader returns the three rounds (see the top of this file) when
// asked and the drives are tmpfs mounts of the run's, else nil. Their
// anomalies are the versions the last round, after every node restarted
// with space to spare, did not read back: reread/lost (404) and
// reread/unavailable (503 or no answer through every node).
func rereader(c *Cluster, h *History, cfg Config, mounted bool) func() ([]Anomaly, error) {
	if os.Getenv("SHARDSTORE_JEPSEN_REREAD") != "1" {
		return nil
	}
	if !mounted {
		cfg.Log("reread: left out, the drives are not tmpfs mounts of this run (no disk-full nemesis)")
		return nil
	}
	return func() ([]Anomaly, error) { return rereadRounds(c, h, cfg) }
}

func rereadRounds(c *Cluster, h *History, cfg Config) ([]Anomaly, error) {
	rereadVersions(c, h, cfg, "as left")
	for i := range c.N() {
		if err := c.EmptyDrives(i); err != nil {
			return nil, err
		}
	}
	if err := growDrives(c.dir, c.N(), c.drives, "4g"); err != nil {
		return nil, err
	}
	// The drives' health probes run every 2 s; a stopped index is
	// reopened by the first one after its old instance closed.
	time.Sleep(15 * time.Second)
	rereadVersions(c, h, cfg, "space freed")
	for i := range c.N() {
		if err := c.Term(i); err != nil {
			cfg.Log("reread: %v", err)
		}
		if err := c.launch(i); err != nil {
			return nil, err
		}
	}
	for i := range c.N() {
		if err := c.WaitReady(i, 2*time.Minute); err != nil {
			return nil, err
		}
	}
	last := rereadVersions(c, h, cfg, "after restart")
	var out []Anomaly
	for _, m := range last.missed {
		typ := "unavailable"
		if strings.HasSuffix(m.answers, "=404") {
			typ = "lost"
		}
		out = append(out, Anomaly{Checker: "reread", Type: typ, Key: m.op.Key, At: m.op.Call,
			Detail:  fmt.Sprintf("acknowledged version %s not read back after every node restarted: %s", m.op.VersionID, m.answers),
			Excerpt: []string{m.op.String()}})
	}
	return out, nil
}
