package bench

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/shardstore/shardstore/internal/cli"
)

// defaultS3Key is the server's built-in root user and password, the
// last resort when neither flags nor environment name credentials.
const defaultS3Key = "shardstoreadmin"

// s3Credentials picks the credentials a run uses when no flag gives
// them: the AWS pair from the environment, else the shardstore root pair
// the server itself reads, else the server's default. A pair is taken
// whole, so an AWS access key is never signed with a shardstore password.
func s3Credentials(getenv func(string) string) (access, secret, source string) {
	if ak := getenv("AWS_ACCESS_KEY_ID"); ak != "" {
		return ak, getenv("AWS_SECRET_ACCESS_KEY"), "AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY"
	}
	if u := getenv("SHARDSTORE_ROOT_USER"); u != "" {
		return u, getenv("SHARDSTORE_ROOT_PASSWORD"), "SHARDSTORE_ROOT_USER/SHARDSTORE_ROOT_PASSWORD"
	}
	return defaultS3Key, defaultS3Key, "the server default"
}

// RunS3Command is `shardstore bench s3`: it parses args, runs RunS3 with
// a progress bar and writes the table (or JSON). It returns flag.ErrHelp
// after printing help for -h, and a *cli.UsageError for a flag it
// cannot use.
func RunS3Command(ctx context.Context, args []string, ui CLI) error {
	return runS3Command(ctx, args, ui, os.Getenv)
}

var s3Command = benchCommand{name: "s3", usage: "shardstore bench s3 [flags]",
	about: "Drives PUT, GET, mixed, small-object or listing load against any S3 endpoint (shardstore, MinIO,\n" +
		"AWS) with aws-sdk-go-v2 at its default settings, and reports throughput, ops/s, latency\n" +
		"percentiles, time to first byte, keys listed per second and, with -pid, the server's CPU.\n" +
		"Objects go under a fresh prefix and are deleted at the end unless -keep."}

// s3Flags are the flags of `shardstore bench s3`.
type s3Flags struct {
	endpoint, caCert, accessKey, secretKey, region, bucket, mode, size string
	pids, prefix, sse                                                  string
	concurrency, ops, objects, maxErrors, listings, pageSize           int
	duration                                                           time.Duration
	getFraction                                                        float64
	pathStyle, keep, verify, asJSON, quiet                             bool
	seed                                                               uint64
}

func (f *s3Flags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.endpoint, "endpoint", DefaultS3Endpoint, "S3 endpoint `URL`; the only host the bench contacts")
	fs.StringVar(&f.caCert, "ca-cert", "", "`FILE` of CA certificates (PEM) to trust beside the system's, for an https endpoint with a private CA")
	fs.StringVar(&f.accessKey, "access-key", "", "access key (default $AWS_ACCESS_KEY_ID, else $SHARDSTORE_ROOT_USER, else "+defaultS3Key+")")
	fs.StringVar(&f.secretKey, "secret-key", "", "secret key (default $AWS_SECRET_ACCESS_KEY, else $SHARDSTORE_ROOT_PASSWORD, else "+defaultS3Key+")")
	fs.StringVar(&f.region, "region", DefaultS3Region, "region to sign for")
	fs.StringVar(&f.bucket, "bucket", DefaultS3Bucket, "bucket to use; created if missing (and then removed at the end unless -keep)")
	fs.StringVar(&f.mode, "mode", string(S3Put), "load: put, get, mixed, small (a PUT phase of small objects, then a GET phase reading them)\n"+
		"or list (PUT -objects keys of -size 1 B, then list them flat -listings times in pages of -page-size)")
	fs.StringVar(&f.size, "size", "", "object size, e.g. 1MiB, 16MiB, 4KiB (default 1MiB; 4KiB for -mode small)")
	fs.IntVar(&f.concurrency, "concurrency", DefaultS3Concurrency, "operations in flight at once")
	cli.DurationVar(fs, &f.duration, "duration", 0, "how long each phase runs, a `DURATION` such as 10s or 10 (seconds) (default 10s; with -ops only a time limit, default 5m)")
	fs.IntVar(&f.ops, "ops", 0, "run exactly this many operations per phase instead of for a duration")
	fs.Float64Var(&f.getFraction, "get-fraction", DefaultS3GetFraction, "share of GETs in -mode mixed, in (0, 1]")
	fs.IntVar(&f.objects, "objects", 0, "objects get and mixed write first and then read at random (default max(concurrency,16), at most 1 GiB);\n"+
		"keys list mode writes (default 10000)")
	fs.IntVar(&f.listings, "listings", DefaultS3Listings, "full listings list mode does, one after another")
	fs.IntVar(&f.pageSize, "page-size", DefaultS3ListPageSize, "keys per ListObjectsV2 page in list mode, 1..1000")
	fs.StringVar(&f.prefix, "prefix", "", "list mode: list the objects an earlier run kept (-keep) under this `PREFIX` instead of writing new ones\n"+
		"(e.g. to list again after restarting the server); they are not deleted")
	fs.StringVar(&f.sse, "sse", "none", "server-side encryption every PUT asks for: none, s3 (SSE-S3: x-amz-server-side-encryption AES256),\n"+
		"kms (SSE-KMS with the server's default key) or kms:KEYID (aws:kms with that key id); GETs send no header")
	fs.StringVar(&f.pids, "pid", "", "server process id(s) on this machine, `PID[,PID...]` (every node of a local cluster): report their CPU seconds per GiB, summed, from /proc/PID/stat")
	fs.BoolVar(&f.pathStyle, "path-style", true, "path-style addressing (host/bucket/key); false addresses bucket.host, which needs DNS")
	fs.BoolVar(&f.keep, "keep", false, "keep the objects written (and a bucket the bench created)")
	fs.BoolVar(&f.verify, "verify", false, "compare every GET body with what was written, not only its length")
	fs.Uint64Var(&f.seed, "seed", 0, "seed for the object contents (default: from the clock, fresh data every run)")
	fs.IntVar(&f.maxErrors, "max-errors", DefaultS3MaxErrors, "stop a phase after this many failed operations (negative: never)")
	fs.BoolVar(&f.asJSON, "json", false, "print the report as JSON instead of a table")
	fs.BoolVar(&f.quiet, "quiet", false, "no progress bar")
}

// options turns the flags into RunS3's options; getenv supplies the
// credentials no flag gave.
func (f *s3Flags) options(getenv func(string) string) (S3Options, error) {
	m, err := ParseS3Mode(f.mode)
	if err != nil {
		return S3Options{}, fmt.Errorf("-mode: %w", err)
	}
	opts := S3Options{Endpoint: f.endpoint, CACert: f.caCert, AccessKey: f.accessKey, SecretKey: f.secretKey, Region: f.region,
		Bucket: f.bucket, VirtualHost: !f.pathStyle, Mode: m, Concurrency: f.concurrency, Duration: f.duration,
		Ops: f.ops, GetFraction: f.getFraction, Objects: f.objects, Keep: f.keep, Verify: f.verify,
		Seed: f.seed, MaxErrors: f.maxErrors, Prefix: f.prefix, Listings: f.listings, PageSize: f.pageSize}
	if opts.SSE, err = ParseS3SSE(f.sse); err != nil {
		return opts, fmt.Errorf("-sse: %w", err)
	}
	for _, p := range strings.FieldsFunc(f.pids, func(r rune) bool { return r == ',' || r == ' ' }) {
		pid, err := strconv.Atoi(p)
		if err != nil || pid <= 0 {
			return opts, fmt.Errorf("-pid: %q is not a process id", p)
		}
		opts.PIDs = append(opts.PIDs, pid)
	}
	if opts.AccessKey == "" && opts.SecretKey == "" {
		opts.AccessKey, opts.SecretKey, _ = s3Credentials(getenv)
	} else if opts.AccessKey == "" || opts.SecretKey == "" {
		return opts, fmt.Errorf("-access-key and -secret-key go together")
	}
	if f.size != "" {
		if opts.Size, err = ParseSize(f.size); err != nil {
			return opts, fmt.Errorf("-size: %w", err)
		}
	}
	return opts, f.check(m)
}

// check refuses counts the run cannot use.
func (f *s3Flags) check(m S3Mode) error {
	switch {
	case f.concurrency < 1:
		return fmt.Errorf("-concurrency %d: must be >= 1", f.concurrency)
	case f.ops < 0:
		return fmt.Errorf("-ops must not be negative")
	case m == S3Mixed && (f.getFraction <= 0 || f.getFraction > 1):
		return fmt.Errorf("-get-fraction %v: want (0, 1]; a mix without GETs is -mode put", f.getFraction)
	case m == S3List && f.listings < 1:
		return fmt.Errorf("-listings %d: must be >= 1", f.listings)
	case m == S3List && (f.pageSize < 1 || f.pageSize > 1000):
		return fmt.Errorf("-page-size %d: want 1..1000 (S3 returns at most 1000 keys a page)", f.pageSize)
	case f.prefix != "" && m != S3List:
		return fmt.Errorf("-prefix: only -mode list reads an earlier run's objects")
	case m == S3List && f.ops > 0:
		return fmt.Errorf("-ops: -mode list writes -objects keys and does -listings listings")
	case f.maxErrors == 0:
		return fmt.Errorf("-max-errors 0 would stop at once; use a positive count or a negative one for never")
	}
	return nil
}

func runS3Command(ctx context.Context, args []string, ui CLI, getenv func(string) string) error {
	fs := s3Command.flagSet()
	var f s3Flags
	f.register(fs)
	if err := s3Command.parse(fs, args, ui.Stderr); err != nil {
		return err
	}
	opts, err := f.options(getenv)
	if err != nil {
		return s3Command.usageError(err)
	}
	var progress func(S3Progress)
	if ui.ProgressBar && !f.quiet {
		progress = s3ProgressBar(ui)
	}
	rep, runErr := RunS3(ctx, opts, progress)
	if len(rep.Phases) > 0 {
		// Print what was measured even when a phase failed: the error
		// rows and the first error are the useful part then.
		var err error
		if f.asJSON {
			err = rep.WriteJSON(ui.Stdout)
		} else {
			err = rep.WriteTable(ui.Stdout)
		}
		if err != nil {
			return err
		}
	}
	return runErr
}

// s3ProgressBar draws one bar per phase on ui.Stderr: the share of the
// phase's duration (or op count) done, with ops and MiB/s so far. The
// caller draws it only when ui.ProgressBar says Stderr is a terminal.
func s3ProgressBar(ui CLI) func(S3Progress) {
	var bar *progressbar.ProgressBar
	phase := ""
	return func(p S3Progress) {
		if bar == nil || p.Phase != phase {
			if bar != nil {
				_ = bar.Finish()
			}
			phase = p.Phase
			bar = progressbar.NewOptions(1000,
				progressbar.OptionSetWriter(ui.Stderr),
				progressbar.OptionSetDescription("bench s3 "+p.Phase),
				progressbar.OptionSetPredictTime(false),
				progressbar.OptionClearOnFinish())
		}
		frac := 0.0
		if p.OpsTarget > 0 {
			frac = float64(p.Ops) / float64(p.OpsTarget)
		} else if p.Limit > 0 {
			frac = float64(p.Elapsed) / float64(p.Limit)
		}
		desc := fmt.Sprintf("bench s3 %s: %d ops", p.Phase, p.Ops)
		if s := p.Elapsed.Seconds(); s > 0 && p.Bytes > 0 {
			desc += fmt.Sprintf(", %.1f MiB/s", float64(p.Bytes)/(1<<20)/s)
		}
		bar.Describe(desc)
		_ = bar.Set(int(min(1, frac) * 1000))
		if p.Done {
			_ = bar.Finish()
			bar = nil
		}
	}
}
