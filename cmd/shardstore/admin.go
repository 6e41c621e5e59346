package main

import (
	"bufio"
	"bytes"
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
	"github.com/shardstore/shardstore/internal/cli"
	"github.com/shardstore/shardstore/internal/drive"
	"github.com/shardstore/shardstore/internal/engine"
)

// serverFlags registers the flags every admin command has for reaching
// the server: --endpoint (default $SHARDSTORE_ENDPOINT, else this
// machine's default address) and --ca-cert (default $SHARDSTORE_CA_CERT).
func serverFlags(fs *flag.FlagSet) (endpoint, caCert *string) {
	endpoint = fs.String("endpoint", envOr("SHARDSTORE_ENDPOINT", "http://"+defaultAddress), "server `URL`; SHARDSTORE_ENDPOINT sets the default")
	caCert = fs.String("ca-cert", os.Getenv("SHARDSTORE_CA_CERT"), caCertUsage)
	return endpoint, caCert
}

// adminUsage is the synopsis of the admin commands.
const adminUsage = "shardstore admin status|heal|user|group|policy|accesskey|audit|prometheus|kms|notify|idp|cluster|pool ... (shardstore admin -h lists them)"

// adminHead is the help text of `shardstore admin -h`.
const adminHead = `usage: shardstore admin status [--endpoint URL] [--ca-cert FILE] [--json]
       shardstore admin heal [--endpoint URL] [--ca-cert FILE] [--bucket B] [--prefix P] [--deep] [--quiet]
       shardstore admin user add|list|info|enable|disable|remove ...
       shardstore admin group add|remove|list|info|enable|disable ...
       shardstore admin policy create|list|info|attach|detach|remove ...
       shardstore admin accesskey create|list|info|enable|disable|remove ...
       shardstore admin audit [--json]
       shardstore admin prometheus generate [--endpoint URL] [--ca-cert FILE] [--expiry DURATION]
       shardstore admin kms status|key create NAME|rewrap [--bucket B]
       shardstore admin pool status|decommission start|status|cancel [POOL]
       shardstore admin idp ldap policy attach|detach|list ...
       shardstore admin notify list|add KIND ID FIELD=VALUE...|test ARN|remove ARN
       shardstore admin cluster upgrade-status [--json]

Operates a running server through its admin API:
  status     layout, drives (state, free space), quorum, heal queue and scanner
  heal       repair now, with a progress bar (on a terminal) and a report
  user       users of the identity store (a user's name is its access key)
  group      groups of users, which share the policies attached to the group
  policy     managed policies (IAM's policy language), attached to users and groups
  accesskey  access keys for applications, bound to a user, optionally narrowed
             by their own policy and limited in time
  audit      the latest identity changes (who, what, when)
  prometheus a scrape configuration with a bearer token for /shardstore/metrics
  kms        the key server of encryption at rest: status, create a key, rewrap
             data keys under a rotated key's newest version
  pool       the server pools: sets, parity, free space; decommission (docs/pools.md)
  idp        policies mapped to LDAP users' and groups' DNs (docs/sso.md)
  notify     bucket event notification and audit targets (docs/notifications.md)
  cluster    upgrade-status: each node's release, protocol and features, and
             the feature gates of a rolling upgrade (docs/upgrades.md)
Each of user, group, policy and accesskey prints its subcommands with -h;
--json prints what the server answered, for scripts.

The endpoint is --endpoint, or SHARDSTORE_ENDPOINT, or http://127.0.0.1:9000; an
https:// endpoint with a private CA needs --ca-cert FILE (or SHARDSTORE_CA_CERT).
Requests are signed with the root credentials from SHARDSTORE_ROOT_USER /
SHARDSTORE_ROOT_PASSWORD (or MINIO_ROOT_USER / MINIO_ROOT_PASSWORD), or the
development defaults when neither is set; SHARDSTORE_ACCESS_KEY and
SHARDSTORE_SECRET_KEY (with SHARDSTORE_SESSION_TOKEN for temporary
credentials) sign as a user instead (one whose policies allow the
admin action, or any user managing its own access keys).`

// adminGroup: the commands of `shardstore admin`.
var adminGroup = cli.Group{Name: "admin", Usage: adminUsage, Head: adminHead,
	Commands: []string{"status", "heal", "user", "group", "policy", "accesskey", "audit", "prometheus", "kms", "idp", "notify", "cluster", "pool"}}

// runAdmin operates a running server through its admin API.
func runAdmin(args []string) error {
	name, rest, err := adminGroup.Pick(args, os.Stdout)
	if err != nil {
		return err
	}
	switch name {
	case "status", "heal":
	case "user", "group", "policy", "accesskey", "audit":
		return runAdminIdentity(args)
	case "prometheus":
		return runAdminPrometheus(rest)
	case "kms":
		return runAdminKMS(rest)
	case "notify":
		return runAdminNotify(rest)
	case "pool":
		return runAdminPool(rest)
	case "idp":
		return runAdminIDP(rest)
	case "cluster":
		return runAdminCluster(rest)
	}
	fs := flag.NewFlagSet("admin "+name, flag.ContinueOnError)
	endpoint, caCert := serverFlags(fs)
	region := fs.String("region", "us-east-1", "`REGION` to sign for")
	var bucket, prefix *string
	var deep, quiet, asJSON *bool
	var use, head string
	if name == "heal" {
		bucket = fs.String("bucket", "", "heal only this `BUCKET`")
		prefix = fs.String("prefix", "", "heal only keys starting with `PREFIX`")
		deep = fs.Bool("deep", false, "verify every chunk checksum (reads all data)")
		quiet = fs.Bool("quiet", false, "no progress bar, only the report")
		use = "shardstore admin heal [--endpoint URL] [--ca-cert FILE] [--bucket B] [--prefix P] [--deep] [--quiet]"
		head = "usage: " + use + "\n\nRepairs objects now: missing or corrupt shards are rewritten, remnants removed.\nA progress bar is drawn on a terminal; the report goes to stdout."
	} else {
		asJSON = fs.Bool("json", false, "print the status as JSON (for scripts)")
		use = "shardstore admin status [--endpoint URL] [--ca-cert FILE] [--json]"
		head = "usage: " + use + "\n\nShows the layout (sets, data+parity), each drive's state and free space,\nquorum, the heal queue and the scanner."
	}
	if err := cli.Parse(fs, args[1:], os.Stdout, use, head); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return cli.Usagef(use, "shardstore admin "+name+" -h", "unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	c, err := newAdminClient(*endpoint, *region, *caCert)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if name == "heal" {
		bar := !*quiet && cli.IsTerminal(os.Stderr)
		return c.heal(ctx, *bucket, *prefix, *deep, bar, os.Stdout, os.Stderr)
	}
	return c.status(ctx, *asJSON, os.Stdout)
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

// newAdminClient signs with SHARDSTORE_ACCESS_KEY / SHARDSTORE_SECRET_KEY
// when set, else with the root credentials.
func newAdminClient(endpoint, region, caFile string) (*adminClient, error) {
	tr, err := clientTransport(caFile)
	if err != nil {
		return nil, err
	}
	c := &adminClient{base: strings.TrimSuffix(endpoint, "/"), region: region, hc: &http.Client{Transport: tr}}
	ak, sk := os.Getenv("SHARDSTORE_ACCESS_KEY"), os.Getenv("SHARDSTORE_SECRET_KEY")
	switch {
	case ak != "" && sk != "":
		// Temporary credentials (a directory user's, from
		// AssumeRoleWithLDAPIdentity) come with their session token.
		c.creds = aws.Credentials{AccessKeyID: ak, SecretAccessKey: sk, SessionToken: os.Getenv("SHARDSTORE_SESSION_TOKEN")}
		return c, nil
	case ak != "" || sk != "":
		return nil, errors.New("set both SHARDSTORE_ACCESS_KEY and SHARDSTORE_SECRET_KEY, or neither")
	}
	creds, err := rootCredentials(os.Getenv)
	if err != nil {
		return nil, err
	}
	c.creds = aws.Credentials{AccessKeyID: creds.user, SecretAccessKey: creds.pass}
	return c, nil
}

type adminClient struct {
	base   string
	region string
	creds  aws.Credentials
	hc     *http.Client
}

// emptySHA256 is the payload hash of a request without a body.
var emptySHA256 = func() string { s := sha256.Sum256(nil); return hex.EncodeToString(s[:]) }()

func (c *adminClient) do(ctx context.Context, method, path string, q url.Values) (*http.Response, error) {
	return c.doBody(ctx, method, path, q, nil)
}

// doBody sends an admin request with a body (signed: its SHA-256 is in
// the signature) and returns the response of a 2xx answer.
func (c *adminClient) doBody(ctx context.Context, method, path string, q url.Values, body []byte) (*http.Response, error) {
	u := c.base + admin.Prefix + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, method, u, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("admin request: %w", err)
	}
	hash := emptySHA256
	if len(body) > 0 {
		sum := sha256.Sum256(body)
		hash = hex.EncodeToString(sum[:])
	}
	req.Header.Set("X-Amz-Content-Sha256", hash)
	if err := v4.NewSigner().SignHTTP(ctx, c.creds, req, hash, "s3", c.region, time.Now()); err != nil {
		return nil, fmt.Errorf("sign admin request: %w", err)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		var uerr *url.Error
		if errors.As(err, &uerr) && ctx.Err() == nil {
			err = uerr.Err
		}
		if terr, ok := trustHint(err); ok {
			return nil, fmt.Errorf("%s: TLS with the server at %s: %w", path, c.base, terr)
		}
		return nil, fmt.Errorf("%s: cannot reach the server at %s (%v): is it running? Point SHARDSTORE_ENDPOINT (or --endpoint) at its S3 endpoint",
			path, c.base, err)
	}
	if resp.StatusCode/100 != 2 {
		defer resp.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		msg := strings.TrimSpace(string(b))
		var ev admin.Event
		if json.Unmarshal(b, &ev) == nil && ev.Err != "" {
			msg = ev.Err
		}
		if resp.StatusCode == http.StatusForbidden {
			return nil, fmt.Errorf("%s: the server at %s refused the credentials (%s): %s; set SHARDSTORE_ROOT_USER and SHARDSTORE_ROOT_PASSWORD to the server's root credentials (or SHARDSTORE_ACCESS_KEY and SHARDSTORE_SECRET_KEY to a user allowed this call)",
				path, c.base, resp.Status, msg)
		}
		return nil, fmt.Errorf("%s: the server at %s answered %s: %s", path, c.base, resp.Status, msg)
	}
	return resp, nil
}

// heal runs a heal on the server, drawing a progress bar on errOut when
// bar is set (a terminal) and printing the report to out.
func (c *adminClient) heal(ctx context.Context, bucket, prefix string, deep, bar bool, out, errOut io.Writer) error {
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
	var pb *progressbar.ProgressBar
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		var ev admin.Event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			return fmt.Errorf("heal: bad reply line: %w", err)
		}
		switch ev.Type {
		case "progress":
			if ev.Err != "" {
				fmt.Fprintf(errOut, "failed: %s/%s: %s\n", ev.Bucket, ev.Key, ev.Err)
			}
			if !bar {
				continue
			}
			if pb == nil {
				pb = progressbar.NewOptions(ev.Total, progressbar.OptionSetWriter(errOut),
					progressbar.OptionSetDescription("healing"), progressbar.OptionShowCount(),
					progressbar.OptionSetPredictTime(true), progressbar.OptionThrottle(100*time.Millisecond))
			}
			pb.ChangeMax(ev.Total)
			pb.Set(ev.Done)
		case "report", "error":
			if pb != nil {
				pb.Finish()
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
		return fmt.Errorf("heal: reading progress: %w", err)
	}
	return errors.New("heal: the server closed the stream before the final report")
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

// status prints the server's layout, drives, quorum and repair state,
// or the raw reply as JSON.
func (c *adminClient) status(ctx context.Context, asJSON bool, out io.Writer) error {
	var st admin.StatusReply
	if err := c.call(ctx, http.MethodGet, "status", nil, nil, &st); err != nil {
		return err
	}
	if asJSON {
		return printJSON(out, st)
	}
	printStatus(out, st)
	return nil
}

// printStatus writes the human form of a status reply.
func printStatus(out io.Writer, st admin.StatusReply) {
	l := st.Layout
	fmt.Fprintf(out, "layout             %s of %d drives, %d data + %d parity (REDUCED_REDUNDANCY %d parity); write quorum %d, read quorum %d\n",
		plural(l.Sets, "set", "sets"), l.SetSize, l.Data, l.Parity, l.RRSParity, l.WriteQuorum, l.ReadQuorum)
	inline := "off"
	if l.InlineLimit >= 0 {
		inline = "shards up to " + sizeString(l.InlineLimit) + " per drive"
	}
	fmt.Fprintf(out, "inline data        %s; chunk checksums %s\n", inline, l.Bitrot)
	fmt.Fprintf(out, "drives online      %d of %d; write quorum %s, read quorum %s\n",
		st.Status.DrivesOnline, st.Status.Drives, okWord(st.Status.WriteQuorumOK), okWord(st.Status.ReadQuorumOK))
	for _, s := range st.Status.PerSet {
		fmt.Fprintf(out, "  set %-3d          %d of %d online; writes %s (need %d), reads %s (need %d)\n",
			s.Set, s.DrivesOnline, s.Drives, okWord(s.WriteQuorumOK), s.WriteQuorum, okWord(s.ReadQuorumOK), s.ReadQuorum)
	}
	printNodes(out, st.Drives)
	if cs := st.Consensus; cs != nil {
		leader := cs.Leader
		if leader == "" {
			leader = "NONE (no majority of nodes reachable from this node)"
		}
		fmt.Fprintf(out, "Cluster state (Raft): leader %s; term %d; this node (%s) is %s, applied index %d\n",
			leader, cs.Term, cs.Node, strings.ToLower(cs.State), cs.Applied)
	}
	fmt.Fprintf(out, "\n%-4s %-5s %-8s %10s %10s  %s\n", "SET", "SLOT", "STATE", "FREE", "SIZE", "DRIVE")
	for _, d := range st.Drives {
		free, size := "-", "-"
		if d.Total > 0 {
			free, size = humanBytes(d.Free), humanBytes(d.Total)
		}
		fmt.Fprintf(out, "%-4d %-5d %-8s %10s %10s  %s\n", d.Set, d.Slot, d.State, free, size, d.Path)
		if d.State != "online" && d.Error != "" {
			fmt.Fprintf(out, "%29s  why: %s\n", "", d.Error)
		}
		if why := indexWhy(d.Index); d.State == "online" && why != "" {
			fmt.Fprintf(out, "%29s  full: %s\n", "", why)
		}
	}
	h := st.Heal
	fmt.Fprintf(out, "\nheal queue         %d waiting, %d healed, %d retries, %d dropped\n",
		h.Queued, h.QueueHealed, h.QueueRetries, h.QueueDropped)
	for _, r := range h.Refills {
		fmt.Fprintf(out, "refilling          %s: %d objects, %d shards, at %s/%s\n", r.Drive, r.Objects, r.Healed, r.Bucket, r.After)
	}
	if h.ScanRunning {
		fmt.Fprintf(out, "scanner            running since %s: %d of %d objects checked\n",
			h.ScanStarted.Format(time.RFC3339), h.ScanDone, h.ScanTotal)
	}
	last := "never"
	if !h.LastScanEnd.IsZero() {
		last = h.LastScanEnd.Format(time.RFC3339)
	}
	fmt.Fprintf(out, "scanner            %d cycles done, last ended %s (%d objects, %d damaged)\n",
		h.ScanCycles, last, h.LastScan.Objects, h.LastScan.Damaged)
	if h.ScanElsewhere {
		fmt.Fprintf(out, "scanner            runs on the cluster's consensus leader now, not on this node\n")
	}
	if st.KMS != nil {
		printKMSStatus(out, *st.KMS)
	}
	for _, t := range st.Notify {
		state := "online"
		if t.Stats.LastError != "" {
			state = "FAILING: " + t.Stats.LastError
		}
		fmt.Fprintf(out, "notify target      %s: %s; %d queued, %d sent, %d failed sends, %d refused\n",
			t.ARN, state, t.Stats.Queued, t.Stats.Sent, t.Stats.Failed, t.Stats.Refused)
	}
}

func okWord(ok bool) string {
	if ok {
		return "ok"
	}
	return "LOST"
}

// humanBytes prints a byte count with a binary unit, one decimal.
func humanBytes(n uint64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := uint64(unit), 0
	for v := n / unit; v >= unit; v /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// printNodes summarizes a cluster's drives per node (drives named by URL);
// a single server prints nothing.
func printNodes(out io.Writer, drives []engine.DriveStatus) {
	type node struct{ online, total int }
	var order []string
	nodes := map[string]*node{}
	for _, d := range drives {
		scheme, rest, ok := strings.Cut(d.Path, "://")
		if !ok {
			return
		}
		host, _, _ := strings.Cut(rest, "/")
		host = scheme + "://" + host
		n := nodes[host]
		if n == nil {
			n = &node{}
			nodes[host] = n
			order = append(order, host)
		}
		n.total++
		if d.State == "online" {
			n.online++
		}
	}
	for _, h := range order {
		n := nodes[h]
		state := "up"
		switch {
		case n.online == 0:
			state = "DOWN or unreachable from this node"
		case n.online < n.total:
			state = "up, some drives offline"
		}
		fmt.Fprintf(out, "  node %-21s %d of %d drives online; %s\n", h, n.online, n.total, state)
	}
}

// indexWhy explains a drive's index state (engine.DriveStatus.Index) in
// admin status: "" for an index that takes every write.
func indexWhy(index string) string {
	switch index {
	case "":
		return ""
	case drive.IndexReadOnly:
		return "index read-only (disk full, no reserve): reads only, writes answer 507 until space is free"
	case drive.IndexDeletesOnly:
		return "index deletes-only (disk full, reserve in use): reads and deletions, new data answers 507 until space is free"
	}
	return "index " + index
}
