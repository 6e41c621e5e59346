package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"sort"
	"strings"

	"github.com/shardstore/shardstore/internal/admin"
	"github.com/shardstore/shardstore/internal/cli"
	"github.com/shardstore/shardstore/internal/notify"
)

const notifyUsage = "shardstore admin notify list|add KIND ID FIELD=VALUE...|test ARN|remove ARN [--audit] [--endpoint URL] [--ca-cert FILE] [--json]"

const notifyHead = "usage: " + notifyUsage + `

Bucket event notification (and audit) targets of a running server:
  list                        every target, where it came from (env or admin),
                              its settings (secrets masked) and its queue:
                              records queued, sent, failed sends, refused
  add KIND ID FIELD=VALUE...  add or replace a target, kept in the cluster's
                              config and applied on every node; e.g.
                              add webhook hook1 endpoint=https://h/e auth_token=T
                              (--audit: a target of audit records)
  test ARN                    whether the target's system answers
  remove ARN                  remove a target added here (its queue too)
ARNs are arn:minio:sqs::<ID>:<kind>; buckets name them in their
notification configuration (docs/notifications.md).`

// runAdminNotify serves `shardstore admin notify ...`.
func runAdminNotify(args []string) error {
	g := cli.Group{Name: "admin notify", Usage: notifyUsage, Head: notifyHead, Commands: []string{"list", "add", "test", "remove"}}
	what, rest, err := g.Pick(args, os.Stdout)
	if err != nil {
		return err
	}
	fs := flag.NewFlagSet("admin notify "+what, flag.ContinueOnError)
	endpoint, caCert := serverFlags(fs)
	asJSON := fs.Bool("json", false, "print what the server answered, as JSON")
	audit := fs.Bool("audit", false, "the target receives audit records, not bucket events")
	// Positional arguments may come before or after the flags.
	var pos []string
	for len(rest) > 0 && !strings.HasPrefix(rest[0], "-") {
		pos, rest = append(pos, rest[0]), rest[1:]
	}
	if err := cli.Parse(fs, rest, os.Stdout, notifyUsage, notifyHead); err != nil {
		return err
	}
	pos = append(pos, fs.Args()...)
	c, err := newAdminClient(*endpoint, "us-east-1", *caCert)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	arnQuery := func() (url.Values, error) {
		if len(pos) != 1 {
			return nil, cli.Usagef(notifyUsage, "shardstore admin notify -h", "admin notify %s needs one ARN", what)
		}
		q := url.Values{"arn": {pos[0]}}
		if *audit {
			q.Set("audit", "true")
		}
		return q, nil
	}
	switch what {
	case "list":
		var ts []notify.TargetInfo
		if err := c.call(ctx, http.MethodGet, "notify/targets", nil, nil, &ts); err != nil {
			return err
		}
		if *asJSON {
			return printJSON(os.Stdout, ts)
		}
		printTargets(os.Stdout, ts)
		return nil
	case "add":
		if len(pos) < 2 {
			return cli.Usagef(notifyUsage, "shardstore admin notify -h", "admin notify add needs KIND, ID and settings")
		}
		spec := notify.Spec{Kind: pos[0], ID: pos[1], Settings: map[string]string{}, Audit: *audit}
		for _, kv := range pos[2:] {
			k, v, ok := strings.Cut(kv, "=")
			if !ok || k == "" {
				return cli.Usagef(notifyUsage, "shardstore admin notify -h", "settings are FIELD=VALUE, got %q", k)
			}
			spec.Settings[strings.ToLower(k)] = v
		}
		var out map[string]string
		if err := c.call(ctx, http.MethodPut, "notify/targets", nil, spec, &out); err != nil {
			return err
		}
		fmt.Fprintf(os.Stdout, "added %s\n", out["arn"])
		return nil
	case "test":
		q, err := arnQuery()
		if err != nil {
			return err
		}
		var res admin.NotifyTest
		if err := c.call(ctx, http.MethodPost, "notify/test", q, nil, &res); err != nil {
			return err
		}
		if *asJSON {
			return printJSON(os.Stdout, res)
		}
		if !res.OK {
			return fmt.Errorf("%s does not answer: %s", res.ARN, res.Error)
		}
		fmt.Fprintf(os.Stdout, "%s answers (%s)\n", res.ARN, res.Latency.Round(100_000))
		return nil
	}
	q, err := arnQuery()
	if err != nil {
		return err
	}
	if err := c.call(ctx, http.MethodDelete, "notify/targets", q, nil, nil); err != nil {
		return err
	}
	fmt.Fprintf(os.Stdout, "removed %s\n", pos[0])
	return nil
}

// printTargets writes one block per target.
func printTargets(out io.Writer, ts []notify.TargetInfo) {
	if len(ts) == 0 {
		fmt.Fprintln(out, "no notification targets")
		return
	}
	for _, t := range ts {
		kind := "events"
		if t.Audit {
			kind = "audit"
		}
		state := "online"
		if t.Stats.LastError != "" {
			state = "FAILING: " + t.Stats.LastError
		}
		fmt.Fprintf(out, "%-40s %s, from %s; %s\n", t.ARN, kind, t.Source, state)
		fmt.Fprintf(out, "  queue    %d records (%s) waiting; %d sent, %d failed sends, %d refused\n",
			t.Stats.Queued, sizeString(t.Stats.QueuedBytes), t.Stats.Sent, t.Stats.Failed, t.Stats.Refused)
		keys := make([]string, 0, len(t.Settings))
		for k := range t.Settings {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(out, "  %-8s %s\n", k, t.Settings[k])
		}
	}
}
