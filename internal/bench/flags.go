package bench

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/shardstore/shardstore/internal/cli"
)

// benchCommand describes one `shardstore bench NAME` for its flag
// parsing: the short usage line main prints under a usage error, and
// the paragraph -h prints above the flags.
type benchCommand struct {
	name  string // "ec", "put", ...
	usage string // "shardstore bench ec [flags]"
	about string
	// positional says whether arguments may follow the flags.
	positional bool
}

// flagSet is the command's flag set, named "bench NAME" so the shared
// parser points a usage error at `shardstore bench NAME -h`.
func (c benchCommand) flagSet() *flag.FlagSet {
	return flag.NewFlagSet("bench "+c.name, flag.ContinueOnError)
}

// help is the command that prints c's flags.
func (c benchCommand) help() string { return "shardstore bench " + c.name + " -h" }

// parse parses args with fs the way every shardstore command does
// (cli.Parse): -h prints the usage, the about text and the flags to out
// and returns flag.ErrHelp; a bad flag comes back as a *cli.UsageError,
// printed nowhere, so main reports it once with the short usage. Unless
// c takes positional arguments, any left after the flags are a usage
// error too.
func (c benchCommand) parse(fs *flag.FlagSet, args []string, out io.Writer) error {
	head := "usage: " + c.usage + "\n\n" + c.about
	if err := cli.Parse(fs, args, out, c.usage, head); err != nil {
		return err
	}
	if !c.positional && fs.NArg() > 0 {
		return cli.Usagef(c.usage, c.help(), "unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	return nil
}

// usageError marks err, a flag value the bench cannot use (a size that
// does not parse, a count out of range), as a usage error of c, so it
// is reported like a bad flag: once, with the short usage. Errors that
// already are usage errors, and nil, pass through.
func (c benchCommand) usageError(err error) error {
	var ue *cli.UsageError
	if err == nil || errors.As(err, &ue) {
		return err
	}
	return &cli.UsageError{Err: err, Usage: c.usage, Help: c.help()}
}

// listFlag collects a repeatable flag whose values may also be comma lists.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }

func (l *listFlag) Set(v string) error {
	for _, part := range strings.Split(v, ",") {
		if part = strings.TrimSpace(part); part != "" {
			*l = append(*l, part)
		}
	}
	return nil
}

// approxBytes prints a byte count rounded for a reader: "1.3 GiB",
// "96.0 MiB", "12 KiB".
func approxBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%d KiB", (n+1<<9)>>10)
	}
	return fmt.Sprintf("%d B", n)
}
