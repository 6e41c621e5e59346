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

	"github.com/shardstore/shardstore/internal/admin"
	"github.com/shardstore/shardstore/internal/cli"
	"github.com/shardstore/shardstore/internal/engine"
)

const poolUsage = "shardstore admin pool status|decommission start|status|cancel [POOL]|rebalance start|status|cancel|throttle|expansion cancel [--endpoint URL] [--ca-cert FILE] [--json]"

const poolHead = `usage: shardstore admin pool status [--json]
       shardstore admin pool decommission start POOL
       shardstore admin pool decommission status [--json]
       shardstore admin pool decommission cancel POOL
       shardstore admin pool rebalance start [--threshold 5%]
       shardstore admin pool rebalance status|cancel
       shardstore admin pool throttle [--bandwidth RATE] [--objects N] [--adaptive on|off]
       shardstore admin pool expansion cancel
       (each with [--endpoint URL] [--ca-cert FILE])

The server pools (docs/pools.md):
  status                   each pool's erasure sets, parity, capacity and free space,
                           and any decommission with its progress
  decommission start POOL  stop new objects going to POOL (its position on the
                           command line, from 1, or its id) and move every version,
                           delete marker and bucket record off it while it serves;
                           once "complete", restart without the pool's argument
  decommission status      the decommissions and their progress
  decommission cancel POOL stop a decommission; what was moved stays moved
  rebalance start          move objects (every version of a key together) off the
                           pools whose use is above the mean by more than the
                           threshold to the emptiest pools, until each is at the mean
  rebalance status|cancel  its progress; stop it (what was moved stays moved)
  throttle                 the limits decommission and rebalance move data at;
                           with --bandwidth and/or --objects, set them (0: no limit);
                           --adaptive on (the default) also backs them off by
                           themselves when client requests slow down, off does not
  expansion cancel         cancel a cluster's rolling expansion while its new pools
                           take no new keys: the pool list goes back, the new nodes
                           leave the consensus group once every old node runs with
                           the old list (it names the nodes to restart with it)`

// poolGroup: the commands of `shardstore admin pool`.
var poolGroup = cli.Group{Name: "admin pool", Usage: poolUsage, Head: poolHead, Commands: []string{"status", "decommission", "rebalance", "throttle", "expansion"}}

// runAdminPool runs `shardstore admin pool ...`.
func runAdminPool(args []string) error {
	what, rest, err := poolGroup.Pick(args, os.Stdout)
	if err != nil {
		return err
	}
	switch what {
	case "decommission":
		g := cli.Group{Name: "admin pool decommission", Usage: poolUsage, Head: poolHead, Commands: []string{"start", "status", "cancel"}}
		sub, more, err := g.Pick(rest, os.Stdout)
		if err != nil {
			return err
		}
		what, rest = "decommission "+sub, more
	case "rebalance", "throttle":
		return runAdminRebalance(what, rest)
	case "expansion":
		return runAdminExpansion(rest)
	}
	fs := flag.NewFlagSet("admin pool "+what, flag.ContinueOnError)
	endpoint, caCert := serverFlags(fs)
	region := fs.String("region", "us-east-1", "`REGION` to sign for")
	asJSON := fs.Bool("json", false, "print what the server answered, as JSON")
	// POOL may come before or after the flags.
	var pool string
	needPool := what == "decommission start" || what == "decommission cancel"
	if needPool && len(rest) > 0 && !strings.HasPrefix(rest[0], "-") {
		pool, rest = rest[0], rest[1:]
	}
	if err := cli.Parse(fs, rest, os.Stdout, poolUsage, poolHead); err != nil {
		return err
	}
	extra := fs.Args()
	if needPool && pool == "" && len(extra) > 0 {
		pool, extra = extra[0], extra[1:]
	}
	if len(extra) > 0 {
		return cli.Usagef(poolUsage, "shardstore admin pool -h", "unexpected arguments: %s", strings.Join(extra, " "))
	}
	if needPool && pool == "" {
		return cli.Usagef(poolUsage, "shardstore admin pool -h", "admin pool %s needs the POOL (its position on the command line, from 1, or its id)", what)
	}
	c, err := newAdminClient(*endpoint, *region, *caCert)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if needPool {
		var st engine.DecomStatus
		path := "pool/decommission/start"
		if what == "decommission cancel" {
			path = "pool/decommission/cancel"
		}
		if err := c.call(ctx, http.MethodPost, path, url.Values{"pool": {pool}}, nil, &st); err != nil {
			return err
		}
		if *asJSON {
			return printJSON(os.Stdout, st)
		}
		printDecom(os.Stdout, st)
		return nil
	}
	var reply admin.PoolStatusReply
	if err := c.call(ctx, http.MethodGet, "pool/status", nil, nil, &reply); err != nil {
		return err
	}
	if *asJSON {
		return printJSON(os.Stdout, reply)
	}
	if what == "status" {
		printPoolStatus(os.Stdout, reply)
	}
	if len(reply.Decommissions) == 0 && what != "status" {
		fmt.Fprintln(os.Stdout, "no decommission")
	}
	for _, st := range reply.Decommissions {
		printDecom(os.Stdout, st)
	}
	return nil
}

// poolRange names pools a to b with the verb for one or for several.
func poolRange(a, b int, one, several string) string {
	if a >= b {
		return fmt.Sprintf("pool %d %s", a, one)
	}
	return fmt.Sprintf("pools %d-%d %s", a, b, several)
}

// printDecom writes the human form of one decommission's state.
func printDecom(out io.Writer, st engine.DecomStatus) {
	where := fmt.Sprintf("pool %d", st.Pool)
	if st.Pool == 0 {
		where = "removed pool"
	}
	fmt.Fprintf(out, "decommission of %s (id %s): %s; %d objects, %d versions, %s moved; %d failed, %d uploads left, %d passes\n",
		where, st.PoolID, st.State, st.Objects, st.Versions, sizeString(st.Bytes), st.Failed, st.Uploads, st.Passes)
	if st.LastError != "" {
		fmt.Fprintf(out, "  last error: %s\n", st.LastError)
	}
	if st.State == engine.DecomComplete {
		fmt.Fprintln(out, "  the pool holds nothing: restart the servers without its argument")
	}
}

// printPoolStatus writes the human form of a pool status reply.
func printPoolStatus(out io.Writer, reply admin.PoolStatusReply) {
	for _, p := range reply.Pools {
		state := "serving"
		if p.Draining {
			state = "being decommissioned"
		}
		fmt.Fprintf(out, "pool %-3d %s of %d drives, parity %d; %s free of %s; %s; id %s\n", p.Index,
			plural(p.Sets, "set", "sets"), p.SetSize, p.Parity, sizeString(int64(p.Free)), sizeString(int64(p.Total)), state, p.ID)
	}
	if x := reply.Expansion; x != nil && x.State == engine.ExpansionUnderWay {
		fmt.Fprintf(out, "expansion under way: %s new keys; %s once every node runs with the new pool list\n",
			poolRange(1, x.NewKeyPools, "takes", "take"), poolRange(x.NewKeyPools+1, x.Pools, "joins", "join"))
	} else if x != nil && x.Pools > 1 {
		fmt.Fprintf(out, "expansion complete: all %d pools take new keys\n", x.Pools)
	}
}
