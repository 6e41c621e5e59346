package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/shardstore/shardstore/internal/auth"
	"github.com/shardstore/shardstore/internal/cli"
)

const prometheusUsage = "shardstore admin prometheus generate [--endpoint URL] [--ca-cert FILE] [--expiry DURATION] [--job NAME]"

// defaultTokenExpiry is how long a generated metrics token is valid.
const defaultTokenExpiry = 365 * 24 * time.Hour

// runAdminPrometheus prints a Prometheus scrape configuration with a
// bearer token for /shardstore/metrics, made from the credentials the
// admin commands sign with (the root user's, or SHARDSTORE_ACCESS_KEY's:
// a user allowed admin:Prometheus). The token is made here, as mc makes
// MinIO's; the server is asked once with it to tell whether it is
// accepted.
func runAdminPrometheus(args []string) error {
	if len(args) == 0 || args[0] != "generate" {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help") {
			fmt.Fprintf(os.Stdout, "usage: %s\n\nPrints a Prometheus scrape configuration for the server's metrics with a bearer token.\n", prometheusUsage)
			return flag.ErrHelp
		}
		return cli.Usagef(prometheusUsage, "shardstore admin prometheus -h", "want: admin prometheus generate")
	}
	fs := flag.NewFlagSet("admin prometheus generate", flag.ContinueOnError)
	endpoint, caCert := serverFlags(fs)
	var expiry time.Duration
	cli.DurationVar(fs, &expiry, "expiry", defaultTokenExpiry, "how long the token is valid (8760h, or seconds)")
	job := fs.String("job", "shardstore", "the scrape job's `NAME`")
	head := "usage: " + prometheusUsage + "\n\nPrints a Prometheus scrape configuration for the server's metrics with a bearer\n" +
		"token signed by the credentials the admin commands use (the root user's, or\n" +
		"SHARDSTORE_ACCESS_KEY / SHARDSTORE_SECRET_KEY of a user allowed admin:Prometheus).\n" +
		"The token stops working when it expires or its access key is removed or disabled."
	if err := cli.Parse(fs, args[1:], os.Stdout, prometheusUsage, head); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return cli.Usagef(prometheusUsage, "shardstore admin prometheus generate -h", "unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	if expiry <= 0 {
		return cli.Usagef(prometheusUsage, "shardstore admin prometheus generate -h", "--expiry must be positive")
	}
	u, err := url.Parse(strings.TrimSuffix(*endpoint, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return cli.Usagef(prometheusUsage, "shardstore admin prometheus generate -h", "bad --endpoint %q: want http(s)://HOST:PORT", *endpoint)
	}
	c, err := newAdminClient(*endpoint, "us-east-1", *caCert)
	if err != nil {
		return err
	}
	token, err := auth.BearerToken(c.creds.AccessKeyID, c.creds.SecretAccessKey, time.Now().Add(expiry))
	if err != nil {
		return fmt.Errorf("make the token: %w", err)
	}
	fmt.Fprintf(os.Stdout, "scrape_configs:\n- job_name: %s\n  bearer_token: %s\n  metrics_path: /shardstore/metrics\n  scheme: %s\n  static_configs:\n  - targets: ['%s']\n",
		*job, token, u.Scheme, u.Host)
	if *caCert != "" {
		fmt.Fprintf(os.Stdout, "  tls_config:\n    ca_file: %s\n", *caCert)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if msg := c.tryMetrics(ctx, token); msg != "" {
		fmt.Fprintf(os.Stderr, "shardstore admin prometheus: %s\n", msg)
	}
	return nil
}

// tryMetrics asks the server for its metrics with token; it says what
// went wrong, or "" when the server answered them.
func (c *adminClient) tryMetrics(ctx context.Context, token string) string {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+"/shardstore/metrics", nil)
	if err != nil {
		return err.Error()
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := c.hc.Do(req)
	if err != nil {
		err, _ = trustHint(err)
		return fmt.Sprintf("the token is made, but the server at %s could not be asked whether it accepts it: %v", c.base, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusOK {
		return ""
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	return fmt.Sprintf("WARNING: the server at %s refuses this token (%s): %s", c.base, resp.Status, strings.TrimSpace(string(b)))
}
