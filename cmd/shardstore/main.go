// Command shardstore is the S3-compatible erasure-coded object store:
// `shardstore server` runs it, `shardstore bench` measures it and
// `shardstore admin` operates a running server.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"sort"
)

// command is one subcommand; run gets the arguments after its name.
type command struct {
	summary string
	run     func(args []string) error
}

// commands is filled by the files that implement each subcommand.
func commands() map[string]command {
	return map[string]command{
		"server": {"run the S3 server on a set of drives", runServer},
		"bench":  {"run a benchmark (ec, put, drive, s3)", runBench},
		"admin":  {"operate a running server (heal, info)", runAdmin},
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: shardstore COMMAND [flags] [args]\n\ncommands:")
	cmds := commands()
	names := make([]string, 0, len(cmds))
	for n := range cmds {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(os.Stderr, "  %-8s %s\n", n, cmds[n].summary)
	}
	fmt.Fprintln(os.Stderr, "\nrun 'shardstore COMMAND -h' for a command's flags")
}

func main() {
	if len(os.Args) < 2 || os.Args[1] == "-h" || os.Args[1] == "--help" || os.Args[1] == "help" {
		usage()
		if len(os.Args) < 2 {
			os.Exit(2)
		}
		return
	}
	cmd, ok := commands()[os.Args[1]]
	if !ok {
		fmt.Fprintf(os.Stderr, "shardstore: unknown command %q\n\n", os.Args[1])
		usage()
		os.Exit(2)
	}
	if err := cmd.run(os.Args[2:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return
		}
		fmt.Fprintf(os.Stderr, "shardstore %s: %v\n", os.Args[1], err)
		os.Exit(1)
	}
}
