package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"strings"

	"github.com/shardstore/shardstore/internal/cli"
	"github.com/shardstore/shardstore/internal/engine"
)

// runAdminRebalance runs `shardstore admin pool rebalance start|status|cancel`
// and `shardstore admin pool throttle` (what is "rebalance" or "throttle").
func runAdminRebalance(what string, args []string) error {
	if what == "rebalance" {
		g := cli.Group{Name: "admin pool rebalance", Usage: poolUsage, Head: poolHead, Commands: []string{"start", "status", "cancel"}}
		sub, rest, err := g.Pick(args, os.Stdout)
		if err != nil {
			return err
		}
		what, args = "rebalance "+sub, rest
	}
	fs := flag.NewFlagSet("admin pool "+what, flag.ContinueOnError)
	endpoint, caCert := serverFlags(fs)
	region := fs.String("region", "us-east-1", "`REGION` to sign for")
	asJSON := fs.Bool("json", false, "print what the server answered, as JSON")
	threshold, bandwidth, objects, adaptive := new(string), new(string), new(string), new(string)
	switch what {
	case "rebalance start":
		threshold = fs.String("threshold", "5%", "how far above the mean used fraction a pool may be before objects move off it (`T`: 5% or 0.05)")
	case "throttle":
		bandwidth = fs.String("bandwidth", "", "move at most `RATE` a second (64MiB, 1G; 0: no limit)")
		objects = fs.String("objects", "", "move at most `N` objects a second (0: no limit)")
		adaptive = fs.String("adaptive", "", "`on` (the default): back off by itself when client requests slow down; off: only the fixed limits")
	}
	if err := cli.Parse(fs, args, os.Stdout, poolUsage, poolHead); err != nil {
		return err
	}
	if len(fs.Args()) > 0 {
		return cli.Usagef(poolUsage, "shardstore admin pool -h", "unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	q := url.Values{}
	method, path := http.MethodPost, "pool/"+strings.ReplaceAll(what, " ", "/")
	switch what {
	case "rebalance status":
		method = http.MethodGet
	case "rebalance start":
		if _, err := engine.ParseThreshold(*threshold); err != nil {
			return cli.Usagef(poolUsage, "shardstore admin pool -h", "--threshold: %v", err)
		}
		q.Set("threshold", *threshold)
	case "throttle":
		if *bandwidth == "" && *objects == "" && *adaptive == "" {
			method = http.MethodGet
			break
		}
		if _, err := engine.ParseRate(*bandwidth); err != nil {
			return cli.Usagef(poolUsage, "shardstore admin pool -h", "--bandwidth: %v", err)
		}
		if _, err := engine.ParseObjectRate(*objects); err != nil {
			return cli.Usagef(poolUsage, "shardstore admin pool -h", "--objects: %v", err)
		}
		if a, err := engine.ParseAdaptive(*adaptive); err != nil || (a == "" && *adaptive != "") {
			return cli.Usagef(poolUsage, "shardstore admin pool -h", "--adaptive: want on or off, not %q", *adaptive)
		}
		if *bandwidth != "" || *objects != "" {
			q.Set("bandwidth", *bandwidth)
			q.Set("objects", *objects)
		}
		if *adaptive != "" {
			q.Set("adaptive", *adaptive)
		}
	}
	c, err := newAdminClient(*endpoint, *region, *caCert)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if what == "throttle" {
		var th engine.MoveThrottle
		if err := c.call(ctx, method, path, q, nil, &th); err != nil {
			return err
		}
		if *asJSON {
			return printJSON(os.Stdout, th)
		}
		printThrottle(os.Stdout, th)
		return nil
	}
	var st engine.RebalStatus
	if err := c.call(ctx, method, path, q, nil, &st); err != nil {
		return err
	}
	if *asJSON {
		return printJSON(os.Stdout, st)
	}
	printRebal(os.Stdout, st)
	return nil
}

func printThrottle(out io.Writer, th engine.MoveThrottle) {
	bw, obj := "no limit", "no limit"
	if th.Bandwidth > 0 {
		bw = sizeString(th.Bandwidth) + "/s"
	}
	if th.Objects > 0 {
		obj = fmt.Sprintf("%g objects/s", th.Objects)
	}
	fmt.Fprintf(out, "decommission and rebalance move at most: %s, %s\n", bw, obj)
	if th.Adaptive == "off" {
		fmt.Fprintln(out, "adaptive: off (only the limits above)")
	} else {
		fmt.Fprintln(out, "adaptive: on (they also back off when client requests slow down)")
	}
}

// printRebal writes the human form of the rebalance's state.
func printRebal(out io.Writer, st engine.RebalStatus) {
	if st.State == "" {
		fmt.Fprintln(out, "no rebalance")
		return
	}
	fmt.Fprintf(out, "rebalance: %s; threshold %.1f%%, mean use %.1f%%, %d passes\n", st.State, st.Threshold*100, st.Mean*100, st.Passes)
	if st.Paused != "" {
		fmt.Fprintf(out, "  paused: %s\n", st.Paused)
	}
	if st.Note != "" {
		fmt.Fprintf(out, "  %s\n", st.Note)
	}
	for _, p := range st.Pools {
		where := fmt.Sprintf("pool %d", p.Pool)
		if p.Pool == 0 {
			where = "removed pool"
		}
		role := "target"
		if p.Source {
			role = "source"
			if p.Done {
				role = "source (done)"
			}
		}
		fmt.Fprintf(out, "  %s (id %s): %s; used %.1f%% (%.1f%% at the start); %d objects, %d versions, %s moved off; %d failed\n",
			where, p.PoolID, role, p.Used*100, p.UsedStart*100, p.Objects, p.Versions, sizeString(p.Bytes), p.Failed)
		if p.Uploads > 0 {
			fmt.Fprintf(out, "    %d multipart upload(s) in progress moved off, with their parts\n", p.Uploads)
		}
		if p.Source {
			fmt.Fprintf(out, "    disk space freed: %.1f MiB of the %.1f MiB to free\n", float64(p.Moved)/(1<<20), float64(p.Goal)/(1<<20))
		}
		if p.LastError != "" {
			fmt.Fprintf(out, "    last error: %s\n", p.LastError)
		}
	}
}
