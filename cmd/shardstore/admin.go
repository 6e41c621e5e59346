package main

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/schollz/progressbar/v3"
	"github.com/shardstore/shardstore/internal/admin"
	"github.com/shardstore/shardstore/internal/engine"
)

// runAdmin operates a running server through its admin API:
//
//	shardstore admin heal [--bucket B] [--prefix P] [--deep]
//	shardstore admin status
//
// Requests are SigV4-signed with the root credentials from
// SHARDSTORE_ROOT_USER / SHARDSTORE_ROOT_PASSWORD (the server defaults
// when unset); the endpoint comes from --endpoint or SHARDSTORE_ENDPOINT.
func runAdmin(args []string) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" {
		fmt.Fprintln(os.Stderr, "usage: shardstore admin heal [--endpoint URL] [--bucket B] [--prefix P] [--deep] [--quiet]\n       shardstore admin status [--endpoint URL]")
		if len(args) == 0 {
			return errors.New("missing admin command")
		}
		return flag.ErrHelp
	}
	fs := flag.NewFlagSet("admin "+args[0], flag.ContinueOnError)
	endpoint := fs.String("endpoint", envOr("SHARDSTORE_ENDPOINT", "http://"+defaultAddress), "server `URL`")
	region := fs.String("region", "us-east-1", "`REGION` to sign for")
	var bucket, prefix *string
	var deep, quiet *bool
	if args[0] == "heal" {
		bucket = fs.String("bucket", "", "heal only this `BUCKET`")
		prefix = fs.String("prefix", "", "heal only keys starting with `PREFIX`")
		deep = fs.Bool("deep", false, "verify every chunk checksum (reads all data)")
		quiet = fs.Bool("quiet", false, "no progress bar, only the report")
	}
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	user, pass := os.Getenv("SHARDSTORE_ROOT_USER"), os.Getenv("SHARDSTORE_ROOT_PASSWORD")
	if user == "" && pass == "" {
		user, pass = defaultRootUser, defaultRootPass
	}
	c := &adminClient{base: strings.TrimSuffix(*endpoint, "/"), region: *region,
		creds: aws.Credentials{AccessKeyID: user, SecretAccessKey: pass}}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	switch args[0] {
	case "heal":
		return c.heal(ctx, *bucket, *prefix, *deep, *quiet, os.Stdout, os.Stderr)
	case "status":
		return c.status(ctx, os.Stdout)
	}
	return fmt.Errorf("unknown admin command %q (heal, status)", args[0])
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

type adminClient struct {
	base   string
	region string
	creds  aws.Credentials
}

// emptySHA256 is the payload hash of a request without a body.
var emptySHA256 = func() string { s := sha256.Sum256(nil); return hex.EncodeToString(s[:]) }()

func (c *adminClient) do(ctx context.Context, method, path string, q url.Values) (*http.Response, error) {
	u := c.base + admin.Prefix + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, method, u, nil)
	if err != nil {
		return nil, fmt.Errorf("admin request: %w", err)
	}
	req.Header.Set("X-Amz-Content-Sha256", emptySHA256)
	if err := v4.NewSigner().SignHTTP(ctx, c.creds, req, emptySHA256, "s3", c.region, time.Now()); err != nil {
		return nil, fmt.Errorf("sign admin request: %w", err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("admin %s %s: %w", method, path, err)
	}
	if resp.StatusCode != http.StatusOK {
		defer resp.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		var ev admin.Event
		if json.Unmarshal(b, &ev) == nil && ev.Err != "" {
			return nil, fmt.Errorf("admin %s: %s: %s", path, resp.Status, ev.Err)
		}
		return nil, fmt.Errorf("admin %s: %s: %s", path, resp.Status, strings.TrimSpace(string(b)))
	}
	return resp, nil
}

func (c *adminClient) heal(ctx context.Context, bucket, prefix string, deep, quiet bool, out, errOut io.Writer) error {
	q := url.Values{}
	if bucket != "" {
		q.Set("bucket", bucket)
	}
	if prefix != "" {
		q.Set("prefix", prefix)
	}
	if deep {
		q.Set("deep", "true")
	}
	resp, err := c.do(ctx, http.MethodPost, "heal", q)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var bar *progressbar.ProgressBar
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		var ev admin.Event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			return fmt.Errorf("admin heal: bad reply line: %w", err)
		}
		switch ev.Type {
		case "progress":
			if ev.Err != "" {
				fmt.Fprintf(errOut, "\nfailed: %s/%s: %s\n", ev.Bucket, ev.Key, ev.Err)
			}
			if quiet {
				continue
			}
			if bar == nil {
				bar = progressbar.NewOptions(ev.Total, progressbar.OptionSetWriter(errOut),
					progressbar.OptionSetDescription("healing"), progressbar.OptionShowCount(),
					progressbar.OptionSetPredictTime(true), progressbar.OptionThrottle(100*time.Millisecond))
			}
			bar.ChangeMax(ev.Total)
			bar.Set(ev.Done)
		case "report", "error":
			if bar != nil {
				bar.Finish()
				fmt.Fprintln(errOut)
			}
			if ev.Report != nil {
				printReport(out, ev.Report)
			}
			if ev.Type == "error" {
				return fmt.Errorf("heal failed: %s", ev.Err)
			}
			if ev.Report != nil && ev.Report.Failed > 0 {
				return fmt.Errorf("heal finished, but %d objects could not be healed", ev.Report.Failed)
			}
			return nil
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("admin heal: reading progress: %w", err)
	}
	return errors.New("admin heal: the server closed the stream before the final report")
}

func printReport(w io.Writer, r *engine.HealReport) {
	kind := "normal"
	if r.Deep {
		kind = "deep (every chunk checksum verified)"
	}
	fmt.Fprintf(w, "heal report (%s)\n", kind)
	fmt.Fprintf(w, "  buckets            %d\n", r.Buckets)
	fmt.Fprintf(w, "  objects scanned    %d\n", r.Objects)
	fmt.Fprintf(w, "  objects damaged    %d\n", r.Damaged)
	fmt.Fprintf(w, "  shards rewritten   %d\n", r.ShardsRewritten)
	fmt.Fprintf(w, "  versions recovered %d\n", r.Recovered)
	fmt.Fprintf(w, "  remnants removed   %d dangling objects, %d orphan data dirs\n", r.Dangling, r.Orphans)
	fmt.Fprintf(w, "  unreachable        %d (objects with drives offline)\n", r.Unreachable)
	fmt.Fprintf(w, "  failed             %d\n", r.Failed)
	for _, e := range r.Errors {
		fmt.Fprintf(w, "    %s\n", e)
	}
	fmt.Fprintf(w, "  took               %v\n", r.Duration.Round(time.Millisecond))
}

func (c *adminClient) status(ctx context.Context, out io.Writer) error {
	resp, err := c.do(ctx, http.MethodGet, "status", nil)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var st admin.StatusReply
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		return fmt.Errorf("admin status: %w", err)
	}
	fmt.Fprintf(out, "drives online      %d of %d (%d sets); write quorum %v, read quorum %v\n",
		st.Status.DrivesOnline, st.Status.Drives, st.Status.Sets, st.Status.WriteQuorumOK, st.Status.ReadQuorumOK)
	for _, d := range st.Heal.DrivesOffline {
		fmt.Fprintf(out, "  offline: %s\n", d)
	}
	fmt.Fprintf(out, "heal queue         %d waiting, %d healed, %d retries, %d dropped\n",
		st.Heal.Queued, st.Heal.QueueHealed, st.Heal.QueueRetries, st.Heal.QueueDropped)
	for _, r := range st.Heal.Refills {
		fmt.Fprintf(out, "refilling          %s: %d objects, %d shards, at %s/%s\n", r.Drive, r.Objects, r.Healed, r.Bucket, r.After)
	}
	last := "never"
	if !st.Heal.LastScanEnd.IsZero() {
		last = st.Heal.LastScanEnd.Format(time.RFC3339)
	}
	fmt.Fprintf(out, "scanner            %d cycles, last ended %s (%d objects, %d damaged)\n",
		st.Heal.ScanCycles, last, st.Heal.LastScan.Objects, st.Heal.LastScan.Damaged)
	return nil
}
