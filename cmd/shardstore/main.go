// Command shardstore is the S3-compatible erasure-coded object store:
// `shardstore server` runs it, `shardstore bench` measures it and
// `shardstore admin` operates a running server.
package main

import (
	"fmt"
	"io"
	"os"

	"github.com/shardstore/shardstore/internal/cli"
)

// command is one subcommand; run gets the arguments after its name.
type command struct {
	name    string
	summary string
	run     func(args []string) error
}

// commands lists the subcommands in the order help shows them.
func commands() []command {
	return []command{
		{"server", "run the S3 server on a set of drives", runServer},
		{"cluster", "cluster demo: a cluster of node processes on this machine", runCluster},
		{"admin", "operate a running server: admin status, admin heal", runAdmin},
		{"migrate", "migrate from-minio: adopt a stopped MinIO deployment's drives in place; from-s3: copy through S3; from-minio-export: apply mc admin IAM/bucket exports", runMigrate},
		{"bench", "measure: bench ec, bench put, bench drive, bench s3", runBench},
		{"version", "print the version, commit and Go version", runVersion},
	}
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: shardstore COMMAND [flags] [args]\n\ncommands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-8s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nrun 'shardstore COMMAND -h' for a command's flags; 'shardstore --version' is 'shardstore version'")
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run dispatches args (without the program name) and returns the exit
// code: 0 on success and after -h, 2 for a bad command line, 1 when the
// command failed.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		usage(stdout)
		return 0
	case "-version", "--version", "-v":
		args = []string{"version"}
	}
	for _, c := range commands() {
		if c.name == args[0] {
			return cli.Report(stderr, c.name, c.run(args[1:]))
		}
	}
	fmt.Fprintf(stderr, "shardstore: unknown command %q\n", args[0])
	usage(stderr)
	return 2
}
