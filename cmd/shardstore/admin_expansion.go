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

	"github.com/shardstore/shardstore/internal/cli"
	"github.com/shardstore/shardstore/internal/engine"
)

// runAdminExpansion runs `shardstore admin pool expansion cancel`
// (POST pool/expansion/cancel; docs/pools.md "Canceling an expansion").
func runAdminExpansion(args []string) error {
	g := cli.Group{Name: "admin pool expansion", Usage: poolUsage, Head: poolHead, Commands: []string{"cancel"}}
	_, rest, err := g.Pick(args, os.Stdout)
	if err != nil {
		return err
	}
	fs := flag.NewFlagSet("admin pool expansion cancel", flag.ContinueOnError)
	endpoint, caCert := serverFlags(fs)
	region := fs.String("region", "us-east-1", "`REGION` to sign for")
	asJSON := fs.Bool("json", false, "print what the server answered, as JSON")
	if err := cli.Parse(fs, rest, os.Stdout, poolUsage, poolHead); err != nil {
		return err
	}
	if len(fs.Args()) > 0 {
		return cli.Usagef(poolUsage, "shardstore admin pool -h", "unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	c, err := newAdminClient(*endpoint, *region, *caCert)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	var out engine.ExpansionCancel
	if err := c.call(ctx, http.MethodPost, "pool/expansion/cancel", nil, nil, &out); err != nil {
		return err
	}
	if *asJSON {
		return printJSON(os.Stdout, out)
	}
	printExpansionCancel(os.Stdout, out)
	return nil
}

// printExpansionCancel writes the human form of a canceled expansion.
func printExpansionCancel(w io.Writer, out engine.ExpansionCancel) {
	fmt.Fprintf(w, "expansion canceled: pool(s) %v taken out; the deployment keeps %d pool(s)\n", out.Canceled, out.Pools)
	if len(out.Restart) > 0 {
		fmt.Fprintf(w, "restart with the deployment's old arguments, one at a time: %s\n", strings.Join(out.Restart, " "))
	}
	if len(out.Leaving) > 0 {
		fmt.Fprintf(w, "then these nodes leave the consensus group (the servers log it); stop them after: %s\n", strings.Join(out.Leaving, " "))
	}
}
