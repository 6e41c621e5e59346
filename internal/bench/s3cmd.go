package bench

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/schollz/progressbar/v3"
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
// after printing help for -h.
func RunS3Command(ctx context.Context, args []string, cli CLI) error {
	return runS3Command(ctx, args, cli, os.Getenv)
}

func runS3Command(ctx context.Context, args []string, cli CLI, getenv func(string) string) error {
	fs := flag.NewFlagSet("bench s3", flag.ContinueOnError)
	fs.SetOutput(cli.Stderr)
	endpoint := fs.String("endpoint", DefaultS3Endpoint, "S3 endpoint `URL`; the only host the bench contacts")
	accessKey := fs.String("access-key", "", "access key (default $AWS_ACCESS_KEY_ID, else $SHARDSTORE_ROOT_USER, else "+defaultS3Key+")")
	secretKey := fs.String("secret-key", "", "secret key (default $AWS_SECRET_ACCESS_KEY, else $SHARDSTORE_ROOT_PASSWORD, else "+defaultS3Key+")")
	region := fs.String("region", DefaultS3Region, "region to sign for")
	bucket := fs.String("bucket", DefaultS3Bucket, "bucket to use; created if missing (and then removed at the end unless -keep)")
	mode := fs.String("mode", string(S3Put), "load: put, get, mixed, or small (a PUT phase of small objects, then a GET phase reading them)")
	size := fs.String("size", "", "object size, e.g. 1MiB, 16MiB, 4KiB (default 1MiB; 4KiB for -mode small)")
	concurrency := fs.Int("concurrency", DefaultS3Concurrency, "operations in flight at once")
	duration := fs.Duration("duration", 0, "how long each phase runs (default 10s; with -ops only a time limit, default 5m)")
	ops := fs.Int("ops", 0, "run exactly this many operations per phase instead of for a duration")
	getFraction := fs.Float64("get-fraction", DefaultS3GetFraction, "share of GETs in -mode mixed, in (0, 1]")
	objects := fs.Int("objects", 0, "objects get and mixed write first and then read at random (default max(concurrency,16), at most 1 GiB)")
	pid := fs.Int("pid", 0, "server process id on this machine: report its CPU seconds per GiB from /proc/PID/stat")
	pathStyle := fs.Bool("path-style", true, "path-style addressing (host/bucket/key); false addresses bucket.host, which needs DNS")
	keep := fs.Bool("keep", false, "keep the objects written (and a bucket the bench created)")
	verify := fs.Bool("verify", false, "compare every GET body with what was written, not only its length")
	seed := fs.Uint64("seed", 0, "seed for the object contents (default: from the clock, fresh data every run)")
	maxErrors := fs.Int("max-errors", DefaultS3MaxErrors, "stop a phase after this many failed operations (negative: never)")
	asJSON := fs.Bool("json", false, "print the report as JSON instead of a table")
	quiet := fs.Bool("quiet", false, "no progress bar")
	if err := parseFlags(fs, args, "usage: shardstore bench s3 [flags]\n\n"+
		"Drives PUT, GET, mixed or small-object load against any S3 endpoint (shardstore, MinIO, AWS)\n"+
		"with aws-sdk-go-v2 at its default settings, and reports throughput, ops/s, latency\n"+
		"percentiles, time to first byte and, with -pid, the server's CPU seconds per GiB.\n"+
		"Objects go under a fresh prefix and are deleted at the end unless -keep.", false); err != nil {
		return err
	}
	m, err := ParseS3Mode(*mode)
	if err != nil {
		return fmt.Errorf("-mode: %w", err)
	}
	opts := S3Options{Endpoint: *endpoint, AccessKey: *accessKey, SecretKey: *secretKey, Region: *region,
		Bucket: *bucket, VirtualHost: !*pathStyle, Mode: m, Concurrency: *concurrency, Duration: *duration,
		Ops: *ops, GetFraction: *getFraction, Objects: *objects, Keep: *keep, Verify: *verify, PID: *pid,
		Seed: *seed, MaxErrors: *maxErrors}
	if opts.AccessKey == "" && opts.SecretKey == "" {
		opts.AccessKey, opts.SecretKey, _ = s3Credentials(getenv)
	} else if opts.AccessKey == "" || opts.SecretKey == "" {
		return fmt.Errorf("-access-key and -secret-key go together")
	}
	if *size != "" {
		if opts.Size, err = ParseSize(*size); err != nil {
			return fmt.Errorf("-size: %w", err)
		}
	}
	if *concurrency < 1 {
		return fmt.Errorf("-concurrency %d: must be >= 1", *concurrency)
	}
	if *ops < 0 || *duration < 0 {
		return fmt.Errorf("-ops and -duration must not be negative")
	}
	if m == S3Mixed && (*getFraction <= 0 || *getFraction > 1) {
		return fmt.Errorf("-get-fraction %v: want (0, 1]; a mix without GETs is -mode put", *getFraction)
	}
	if *maxErrors == 0 {
		return fmt.Errorf("-max-errors 0 would stop at once; use a positive count or a negative one for never")
	}

	var progress func(S3Progress)
	if cli.ProgressBar && !*quiet {
		progress = s3ProgressBar(cli)
	}
	rep, runErr := RunS3(ctx, opts, progress)
	if len(rep.Phases) > 0 {
		// Print what was measured even when a phase failed: the error
		// rows and the first error are the useful part then.
		var err error
		if *asJSON {
			err = rep.WriteJSON(cli.Stdout)
		} else {
			err = rep.WriteTable(cli.Stdout)
		}
		if err != nil {
			return err
		}
	}
	return runErr
}

// s3ProgressBar draws one bar per phase on cli.Stderr: the share of the
// phase's duration (or op count) done, with ops and MiB/s so far.
func s3ProgressBar(cli CLI) func(S3Progress) {
	var bar *progressbar.ProgressBar
	phase := ""
	return func(p S3Progress) {
		if bar == nil || p.Phase != phase {
			if bar != nil {
				_ = bar.Finish()
			}
			phase = p.Phase
			bar = progressbar.NewOptions(1000,
				progressbar.OptionSetWriter(cli.Stderr),
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
