// Package cli holds the conventions every shardstore subcommand shares:
// flag parsing that reports a bad flag once with a short usage line,
// duration flags that accept plain seconds, and the terminal check that
// decides whether progress bars are drawn.
package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// UsageError is a command line the command cannot run: a bad or unknown
// flag, a missing or extra argument. main prints it once, followed by
// the short usage line and a pointer to -h, and exits 2.
type UsageError struct {
	Err   error
	Usage string // e.g. "shardstore server [flags] [DRIVE...]"
	Help  string // e.g. "shardstore server -h"
}

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

// Usagef wraps a message as a UsageError of the command described by
// usage and help.
func Usagef(usage, help, format string, args ...any) error {
	return &UsageError{Err: fmt.Errorf(format, args...), Usage: usage, Help: help}
}

// Parse parses args with fs. -h / --help prints head (the usage text of
// the command, a paragraph or more), then the flags, to out and returns
// flag.ErrHelp. Any other parse failure comes back as a *UsageError
// carrying usageLine; nothing is printed, so main prints the error once.
// The flag set must use flag.ContinueOnError.
func Parse(fs *flag.FlagSet, args []string, out io.Writer, usageLine, head string) error {
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	err := fs.Parse(args)
	if err == nil {
		return nil
	}
	if errors.Is(err, flag.ErrHelp) {
		PrintHelp(fs, out, head)
		return flag.ErrHelp
	}
	return &UsageError{Err: err, Usage: usageLine, Help: helpCommand(fs.Name())}
}

// PrintHelp writes head and the flag list of fs to out.
func PrintHelp(fs *flag.FlagSet, out io.Writer, head string) {
	fmt.Fprint(out, strings.TrimRight(head, "\n")+"\n")
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	if n == 0 {
		return
	}
	fmt.Fprint(out, "\nflags:\n")
	fs.SetOutput(out)
	fs.PrintDefaults()
	fs.SetOutput(io.Discard)
}

func helpCommand(name string) string {
	return "shardstore " + name + " -h"
}

// Report prints err the way every subcommand reports failures to w and
// returns the process exit code: 0 for -h, 2 for a UsageError (with the
// short usage), 1 otherwise.
func Report(w io.Writer, command string, err error) int {
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return 0
	}
	var ue *UsageError
	if errors.As(err, &ue) {
		fmt.Fprintf(w, "shardstore %s: %v\n", command, ue.Err)
		if ue.Usage != "" {
			fmt.Fprintf(w, "usage: %s\n", ue.Usage)
		}
		if ue.Help != "" {
			fmt.Fprintf(w, "run '%s' for the flags\n", ue.Help)
		}
		return 2
	}
	fmt.Fprintf(w, "shardstore %s: %v\n", command, err)
	return 1
}

// Duration is a flag value for a time span: Go's duration syntax (15s,
// 2m30s, 1h) or a plain number of seconds (15, 0.5).
type Duration struct{ D *time.Duration }

// DurationVar defines a duration flag on fs that accepts plain seconds.
func DurationVar(fs *flag.FlagSet, p *time.Duration, name string, value time.Duration, usage string) {
	*p = value
	fs.Var(Duration{p}, name, usage)
}

func (d Duration) String() string {
	if d.D == nil {
		return "0s"
	}
	return d.D.String()
}

// Set parses s.
func (d Duration) Set(s string) error {
	v, err := ParseDuration(s)
	if err != nil {
		return err
	}
	*d.D = v
	return nil
}

// ParseDuration reads a Go duration or a plain number of seconds.
func ParseDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		if f < 0 {
			return 0, fmt.Errorf("duration %q is negative", s)
		}
		return time.Duration(f * float64(time.Second)), nil
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("duration %q: write it as seconds (15) or with a unit (15s, 500ms, 2m)", s)
	}
	if v < 0 {
		return 0, fmt.Errorf("duration %q is negative", s)
	}
	return v, nil
}

// IsTerminal reports whether f is a terminal, where a progress bar
// helps; in a pipe, a log file or /dev/null (a character device, but no
// terminal) it would be noise or wasted work.
func IsTerminal(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

// Group is a command whose first argument names a subcommand, such as
// `shardstore admin pool status`. Pick reads that argument the same way
// in every group, and the messages list the subcommands from Commands,
// so they cannot drift from what the group accepts.
type Group struct {
	Name     string   // the words after "shardstore", e.g. "admin pool"
	Usage    string   // the short usage line printed with a usage error
	Head     string   // the -h text
	Commands []string // the subcommands, in the order the messages list them
}

// Pick returns the subcommand args[0] and the arguments after it. No
// argument or one the group does not know is a *UsageError listing the
// subcommands; -h, -help, --help and help print Head to out and return
// flag.ErrHelp.
func (g Group) Pick(args []string, out io.Writer) (string, []string, error) {
	noun := g.Name[strings.LastIndex(g.Name, " ")+1:]
	if len(args) == 0 {
		return "", nil, g.Usagef("missing %s command (%s)", noun, orList(g.Commands))
	}
	switch what := args[0]; what {
	case "-h", "-help", "--help", "help":
		fmt.Fprintln(out, strings.TrimRight(g.Head, "\n"))
		return "", nil, flag.ErrHelp
	default:
		for _, c := range g.Commands {
			if c == what {
				return what, args[1:], nil
			}
		}
		return "", nil, g.Usagef("unknown %s command %q (%s)", noun, what, orList(g.Commands))
	}
}

// Usagef is a *UsageError of the group (its usage line, its -h).
func (g Group) Usagef(format string, args ...any) error {
	return Usagef(g.Usage, "shardstore "+g.Name+" -h", format, args...)
}

// orList writes a, b or c.
func orList(words []string) string {
	switch len(words) {
	case 0:
		return ""
	case 1:
		return words[0]
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}
