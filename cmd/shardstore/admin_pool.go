package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"strings"

	"github.com/shardstore/shardstore/internal/admin"
	"github.com/shardstore/shardstore/internal/cli"
)

const poolUsage = "shardstore admin pool status [--endpoint URL] [--ca-cert FILE] [--json]"

const poolHead = "usage: " + poolUsage + `

Lists the server pools (docs/pools.md): for each, its erasure sets, parity,
capacity and free space, and whether it is being decommissioned.`

// runAdminPool runs `shardstore admin pool ...`.
func runAdminPool(args []string) error {
	if len(args) == 0 {
		return cli.Usagef(poolUsage, "shardstore admin pool -h", "missing pool command (status)")
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		fmt.Fprintln(os.Stdout, poolHead)
		return flag.ErrHelp
	case "status":
	default:
		return cli.Usagef(poolUsage, "shardstore admin pool -h", "unknown pool command %q (status; decommission and rebalance are not built yet, docs/pools.md)", args[0])
	}
	fs := flag.NewFlagSet("admin pool status", flag.ContinueOnError)
	endpoint := fs.String("endpoint", envOr("SHARDSTORE_ENDPOINT", "http://"+defaultAddress), "server `URL`; SHARDSTORE_ENDPOINT sets the default")
	region := fs.String("region", "us-east-1", "`REGION` to sign for")
	caCert := fs.String("ca-cert", os.Getenv("SHARDSTORE_CA_CERT"), caCertUsage)
	asJSON := fs.Bool("json", false, "print what the server answered, as JSON")
	if err := cli.Parse(fs, args[1:], os.Stdout, poolUsage, poolHead); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return cli.Usagef(poolUsage, "shardstore admin pool -h", "unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	c, err := newAdminClient(*endpoint, *region, *caCert)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	var reply admin.PoolStatusReply
	if err := c.call(ctx, http.MethodGet, "pool/status", nil, nil, &reply); err != nil {
		return err
	}
	if *asJSON {
		return printJSON(os.Stdout, reply)
	}
	printPoolStatus(os.Stdout, reply)
	return nil
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
}
