package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"strings"

	"github.com/shardstore/shardstore/internal/admin"
	"github.com/shardstore/shardstore/internal/cli"
	"github.com/shardstore/shardstore/internal/kms"
)

const kmsUsage = "shardstore admin kms status|key create NAME|rewrap [--bucket B] [--endpoint URL] [--ca-cert FILE] [--json]"

const kmsHead = "usage: " + kmsUsage + `

Operates the server's key server (KMS) for encryption at rest:
  status           the KMS's kind, endpoint, default key and whether it answers
  key create NAME  a new key at the KMS (Vault/OpenBao transit; built-in keys
                   are added to SHARDSTORE_KMS_SECRET_KEY_FILE instead)
  rewrap           after the KMS key was rotated, re-seal every SSE-S3/SSE-KMS
                   object's data key under the key's newest version; object data
                   is not rewritten (--bucket B limits it to one bucket)`

// runAdminKMS serves `shardstore admin kms ...`.
func runAdminKMS(args []string) error {
	g := cli.Group{Name: "admin kms", Usage: kmsUsage, Head: kmsHead, Commands: []string{"status", "key", "rewrap"}}
	what, rest, err := g.Pick(args, os.Stdout)
	if err != nil {
		return err
	}
	if what == "key" {
		if len(rest) == 0 || rest[0] != "create" {
			return g.Usagef("want: admin kms key create NAME")
		}
		what, rest = "key create", rest[1:]
	}
	fs := flag.NewFlagSet("admin kms "+what, flag.ContinueOnError)
	endpoint, caCert := serverFlags(fs)
	asJSON := fs.Bool("json", false, "print what the server answered, as JSON")
	bucket := fs.String("bucket", "", "rewrap only this `BUCKET`")
	// NAME may come before or after the flags.
	var name string
	if what == "key create" && len(rest) > 0 && !strings.HasPrefix(rest[0], "-") {
		name, rest = rest[0], rest[1:]
	}
	if err := cli.Parse(fs, rest, os.Stdout, kmsUsage, kmsHead); err != nil {
		return err
	}
	extra := fs.Args()
	if what == "key create" && name == "" && len(extra) > 0 {
		name, extra = extra[0], extra[1:]
	}
	if len(extra) > 0 {
		return cli.Usagef(kmsUsage, "shardstore admin kms -h", "unexpected arguments: %s", strings.Join(extra, " "))
	}
	if what == "key create" && name == "" {
		return cli.Usagef(kmsUsage, "shardstore admin kms -h", "admin kms key create needs the key's NAME")
	}
	c, err := newAdminClient(*endpoint, "us-east-1", *caCert)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	switch what {
	case "status":
		return c.kmsStatus(ctx, *asJSON, os.Stdout)
	case "key create":
		if err := c.call(ctx, http.MethodPost, "kms/key/create", url.Values{"name": {name}}, nil, nil); err != nil {
			return err
		}
		fmt.Fprintf(os.Stdout, "created key %s\n", name)
		return nil
	}
	return c.kmsRewrap(ctx, *bucket, *asJSON, os.Stdout)
}

func (c *adminClient) kmsStatus(ctx context.Context, asJSON bool, out io.Writer) error {
	var st kms.Status
	if err := c.call(ctx, http.MethodGet, "kms/status", nil, nil, &st); err != nil {
		return err
	}
	if asJSON {
		return printJSON(out, st)
	}
	printKMSStatus(out, st)
	if !st.OK {
		return fmt.Errorf("the key server does not answer: %s", st.Error)
	}
	return nil
}

func printKMSStatus(out io.Writer, st kms.Status) {
	where := st.Endpoint
	if where == "" {
		where = "in the server"
	}
	state := fmt.Sprintf("answers (%s)", st.Latency.Round(100_000))
	if !st.OK {
		state = "DOES NOT ANSWER: " + st.Error
	}
	fmt.Fprintf(out, "KMS                %s, %s; default key %s; %s\n", st.Kind, where, st.DefaultKey, state)
}

func (c *adminClient) kmsRewrap(ctx context.Context, bucket string, asJSON bool, out io.Writer) error {
	q := url.Values{}
	if bucket != "" {
		q.Set("bucket", bucket)
	}
	resp, err := c.do(ctx, http.MethodPost, "kms/rewrap", q)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var last admin.RewrapEvent
	for sc.Scan() {
		if asJSON {
			fmt.Fprintln(out, sc.Text())
		}
		var ev admin.RewrapEvent
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			return fmt.Errorf("kms rewrap: bad reply line: %w", err)
		}
		last = ev
		if asJSON {
			continue
		}
		switch ev.Type {
		case "failed":
			fmt.Fprintf(out, "failed   %s/%s %s: %s\n", ev.Bucket, ev.Key, ev.VersionID, ev.Err)
		case "progress":
			fmt.Fprintf(out, "progress %d versions scanned, %d rewrapped (at %s/%s)\n", ev.Scanned, ev.Rewrapped, ev.Bucket, ev.Key)
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("kms rewrap: %w", err)
	}
	switch last.Type {
	case "report":
		if !asJSON {
			fmt.Fprintf(out, "rewrapped %d of %d versions scanned; %d failed\n", last.Rewrapped, last.Scanned, last.Failed)
		}
		if last.Failed > 0 {
			return fmt.Errorf("kms rewrap: %d versions failed (listed above); run it again once their cause is fixed", last.Failed)
		}
		return nil
	case "error":
		return fmt.Errorf("kms rewrap stopped after %d versions (%d rewrapped): %s", last.Scanned, last.Rewrapped, last.Err)
	}
	return fmt.Errorf("kms rewrap: the server's answer ended early (after %d versions)", last.Scanned)
}
