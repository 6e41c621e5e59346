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
	"text/tabwriter"

	"github.com/shardstore/shardstore/internal/cli"
	"github.com/shardstore/shardstore/internal/release"
)

const clusterAdminUsage = "shardstore admin cluster upgrade-status [--endpoint URL] [--ca-cert FILE] [--json]"

const clusterAdminHead = "usage: " + clusterAdminUsage + `

Shows what a rolling upgrade needs to know (docs/upgrades.md): each node's
release (version and commit), internal protocol and features, and whether it
answers; which feature gates are active, and for the others which nodes keep
them back. Any node answers for the whole cluster. Exits 0 also while gates are
blocked; --json prints the server's answer for scripts.`

// runAdminCluster serves `shardstore admin cluster ...`.
func runAdminCluster(args []string) error {
	g := cli.Group{Name: "admin cluster", Usage: clusterAdminUsage, Head: clusterAdminHead, Commands: []string{"upgrade-status"}}
	if _, _, err := g.Pick(args, os.Stdout); err != nil {
		return err
	}
	fs := flag.NewFlagSet("admin cluster upgrade-status", flag.ContinueOnError)
	endpoint, caCert := serverFlags(fs)
	asJSON := fs.Bool("json", false, "print what the server answered, as JSON")
	if err := cli.Parse(fs, args[1:], os.Stdout, clusterAdminUsage, clusterAdminHead); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return cli.Usagef(clusterAdminUsage, "shardstore admin cluster -h", "unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	c, err := newAdminClient(*endpoint, "us-east-1", *caCert)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	var st release.UpgradeStatus
	if err := c.call(ctx, http.MethodGet, "cluster/upgrade-status", nil, nil, &st); err != nil {
		return err
	}
	if *asJSON {
		return printJSON(os.Stdout, st)
	}
	printUpgradeStatus(os.Stdout, st)
	return nil
}

// printUpgradeStatus writes st for people.
func printUpgradeStatus(out io.Writer, st release.UpgradeStatus) {
	fmt.Fprintf(out, "Answered by %s (internal protocol %d; answers %d to %d)\n\n", st.Answering, st.Protocol, st.MinProtocol, st.MaxProtocol)
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NODE\tSTATE\tRELEASE\tPROTOCOL\tFEATURES")
	for _, n := range st.Nodes {
		state, rel, proto := "up", n.Release, fmt.Sprint(n.Protocol)
		if !n.Up {
			state, rel, proto = "DOWN", "?", "?"
			if n.Release != "" { // answered, but still starting
				state, rel, proto = "starting", n.Release, fmt.Sprint(n.Protocol)
			}
		} else if rel == "" {
			rel = "(before release stamps)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", n.Node, state, rel, proto, orDash(n.Features))
	}
	tw.Flush()
	if len(st.Gates) > 0 {
		fmt.Fprintln(out, "\nFeature gates:")
		for _, g := range st.Gates {
			switch {
			case g.Active:
				fmt.Fprintf(out, "  %-20s active since %s\n", g.Feature, g.Since)
			case g.Ready:
				fmt.Fprintf(out, "  %-20s every node has it: activates within seconds\n", g.Feature)
			default:
				fmt.Fprintf(out, "  %-20s NOT active: %s\n", g.Feature, strings.Join(g.Blocked, "; "))
			}
		}
	}
	first := true
	for _, n := range st.Nodes {
		if !n.Up && n.Err != "" {
			if first {
				fmt.Fprintln(out)
				first = false
			}
			fmt.Fprintf(out, "%s: %s\n", n.Node, n.Err)
		}
	}
	if st.Note != "" {
		fmt.Fprintf(out, "\nNote: %s\n", st.Note)
	}
}
