package jepsen

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// probeUnlisted asks every node, by version id (HeadObject and
// GetObject with VersionId), for each acknowledged version that no
// final listing showed: it tells a version that is lost from one that
// is only left out of listings (docs/consistency.md, finding V3). It
// logs a summary and, with an OutDir, writes unlisted.txt (one line a
// version: key, id, value, and what each node answered).
func probeUnlisted(c *Cluster, h *History, cfg Config) {
	ops := h.Ops()
	listed := map[string]bool{}
	finalLists := 0
	for _, o := range ops {
		if o.Kind != OpVList || o.Outcome != Ok || o.Client < 1000 {
			continue
		}
		finalLists++
		for _, vs := range o.Versions {
			for _, v := range vs {
				listed[v.VersionID] = true
			}
		}
	}
	var missing []Op
	for _, o := range ops {
		if o.Kind == OpVPut && o.Outcome == Ok && o.VersionID != "" && !listed[o.VersionID] {
			missing = append(missing, o)
		}
	}
	cfg.Log("probe: %d final listings; %d acknowledged versions unlisted in all of them", finalLists, len(missing))
	if len(missing) == 0 {
		return
	}
	sort.Slice(missing, func(i, j int) bool { return missing[i].Call < missing[j].Call })
	counts := map[string]int{}
	var lines []string
	for _, o := range missing {
		var ans []string
		for n := range c.N() {
			cl := c.Client(n)
			ctx, cancel := ctxTimeout(cfg.OpTimeout)
			head, err := cl.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(verBucket), Key: aws.String(o.Key), VersionId: aws.String(o.VersionID)})
			hs := "head=ok"
			if err != nil {
				hs = fmt.Sprintf("head=%d", status(err))
			} else if v := h.ValueOfETag(aws.ToString(head.ETag)); v != o.Value {
				hs = "head=ok(value " + v + ")"
			}
			get, err := cl.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(verBucket), Key: aws.String(o.Key), VersionId: aws.String(o.VersionID)})
			gs := "get=ok"
			if err != nil {
				gs = fmt.Sprintf("get=%d:%s", status(err), short(err))
			} else {
				b := make([]byte, 64)
				k, _ := get.Body.Read(b)
				get.Body.Close()
				if string(b[:k]) != o.Value {
					gs = "get=ok(body " + string(b[:k]) + ")"
				}
			}
			cancel()
			counts[hs]++
			counts[gs]++
			ans = append(ans, fmt.Sprintf("n%d %s %s", n+1, hs, gs))
		}
		lines = append(lines, fmt.Sprintf("%s %s %s n%d [%.3fs %.3fs]: %s", o.Key, o.VersionID, o.Value, o.Node+1, o.Call.Seconds(), o.Return.Seconds(), strings.Join(ans, "; ")))
	}
	cfg.Log("probe answers (per version x node): %v", counts)
	for i, l := range lines {
		if i < 10 {
			cfg.Log("probe: %s", l)
		}
	}
	if cfg.OutDir != "" {
		_ = os.MkdirAll(cfg.OutDir, 0o755)
		_ = os.WriteFile(filepath.Join(cfg.OutDir, "unlisted.txt"), []byte(strings.Join(lines, "\n")+"\n"), 0o644)
	}
}

// keepDrives copies the stopped cluster's drives to OutDir/drives (with
// SHARDSTORE_JEPSEN_KEEP_DRIVES=1) to inspect the records afterwards.
func keepDrives(cfg Config) {
	if cfg.OutDir == "" || os.Getenv("SHARDSTORE_JEPSEN_KEEP_DRIVES") != "1" {
		return
	}
	dst := filepath.Join(cfg.OutDir, "drives")
	_ = os.RemoveAll(dst)
	if out, err := exec.Command("cp", "-a", cfg.Dir, dst).CombinedOutput(); err != nil {
		cfg.Log("keep drives: %v: %s", err, out)
	}
}

// keepLogs writes every node's standard error (all its processes, a
// restart marked) to OUT/logs-seed<seed>/node<i>.log, with an OUT dir.
func keepLogs(c *Cluster, cfg Config) {
	if cfg.OutDir == "" {
		return
	}
	dir := filepath.Join(cfg.OutDir, fmt.Sprintf("logs-seed%d", cfg.Seed))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		cfg.Log("keep logs: %v", err)
		return
	}
	for i := range c.N() {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("node%d.log", i+1)), []byte(c.FullLog(i)), 0o644); err != nil {
			cfg.Log("keep logs: %v", err)
		}
	}
}
