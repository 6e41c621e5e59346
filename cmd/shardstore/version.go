package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/shardstore/shardstore/internal/cli"
)

// version is set at release builds with
// -ldflags "-X main.version=v1.2.3"; otherwise the module version (for
// `go install ...@version`) or "devel" is shown.
var version = ""

// buildVersion describes the running binary.
type buildVersion struct {
	Version, Commit, CommitTime, Go, Platform string
	Modified                                  bool
}

func currentBuild() buildVersion {
	b := buildVersion{Version: version, Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	info, ok := debug.ReadBuildInfo()
	if ok {
		if b.Version == "" && info.Main.Version != "" && info.Main.Version != "(devel)" {
			b.Version = info.Main.Version
		}
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				b.Commit = s.Value
			case "vcs.time":
				b.CommitTime = s.Value
			case "vcs.modified":
				b.Modified = s.Value == "true"
			}
		}
	}
	if b.Version == "" {
		b.Version = "devel"
	}
	return b
}

func (b buildVersion) write(w io.Writer) {
	fmt.Fprintf(w, "shardstore %s\n", b.Version)
	switch {
	case b.Commit == "":
		fmt.Fprintln(w, "commit  unknown (built without version control information, e.g. by `go run`)")
	default:
		c := b.Commit
		if b.CommitTime != "" {
			c += " (" + b.CommitTime + ")"
		}
		if b.Modified {
			c += " with uncommitted changes"
		}
		fmt.Fprintf(w, "commit  %s\n", c)
	}
	fmt.Fprintf(w, "go      %s %s\n", b.Go, b.Platform)
}

func runVersion(args []string) error {
	fs := flag.NewFlagSet("version", flag.ContinueOnError)
	const use = "shardstore version"
	if err := cli.Parse(fs, args, os.Stdout, use, "usage: "+use+"\n\nPrints the version, the commit it was built from and the Go version."); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return cli.Usagef(use, "shardstore version -h", "unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	currentBuild().write(os.Stdout)
	return nil
}
