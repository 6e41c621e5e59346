package main

import (
	"bufio"
	"context"
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
	"text/tabwriter"
	"time"

	"github.com/shardstore/shardstore/internal/admin"
	"github.com/shardstore/shardstore/internal/cli"
	"github.com/shardstore/shardstore/internal/iam"
)

// identityCommand is one `shardstore admin KIND SUB` command.
type identityCommand struct {
	args  string // synopsis of the arguments after the flags
	about string
	// min and max positional arguments (max -1: any number).
	min, max int
	flags    func(fs *flag.FlagSet) // extra flags
	run      func(ctx context.Context, c *adminClient, a []string, out io.Writer) error
}

// identityFlags are the flags identity commands may define, shared so a
// run function can read them.
type identityFlags struct {
	json                                     bool
	secretStdin                              bool
	user, group, policy, expiry, name, descr string
	ldapUser                                 string
}

func runAdminIdentity(args []string) error {
	kind := args[0]
	var f identityFlags
	cmds := identityCommands(&f)[kind]
	use := "shardstore admin " + kind + " " + strings.Join(identityOrder[kind], "|") + " ..."
	if kind == "audit" {
		return runIdentityCommand(kind, "", cmds[""], args[1:], &f)
	}
	if len(args) < 2 {
		return cli.Usagef(use, "shardstore admin "+kind+" -h", "missing command")
	}
	switch args[1] {
	case "-h", "-help", "--help", "help":
		fmt.Fprintf(os.Stdout, "usage: %s\n\n", use)
		w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
		for _, n := range identityOrder[kind] {
			c := cmds[n]
			fmt.Fprintf(w, "  %s %s\t%s\n", n, c.args, c.about)
		}
		w.Flush()
		fmt.Fprintf(os.Stdout, "\nEach command takes --endpoint URL and, where it prints, --json; -h after a command shows its flags.\n")
		return flag.ErrHelp
	}
	c, ok := cmds[args[1]]
	if !ok {
		return cli.Usagef(use, "shardstore admin "+kind+" -h", "unknown command %q", args[1])
	}
	return runIdentityCommand(kind, args[1], c, args[2:], &f)
}

// identityOrder is the order commands are listed in.
var identityOrder = map[string][]string{
	"user":      {"add", "list", "info", "enable", "disable", "remove"},
	"group":     {"add", "remove", "list", "info", "enable", "disable"},
	"policy":    {"create", "list", "info", "attach", "detach", "remove"},
	"accesskey": {"create", "list", "info", "enable", "disable", "remove"},
	"audit":     {""},
}

func runIdentityCommand(kind, name string, c identityCommand, args []string, f *identityFlags) error {
	full := strings.TrimSpace("admin " + kind + " " + name)
	fs := flag.NewFlagSet(full, flag.ContinueOnError)
	endpoint, caCert := serverFlags(fs)
	region := fs.String("region", "us-east-1", "`REGION` to sign for")
	fs.BoolVar(&f.json, "json", false, "print the server's JSON answer (for scripts)")
	if c.flags != nil {
		c.flags(fs)
	}
	use := strings.TrimSpace("shardstore " + full + " [flags] " + c.args)
	head := "usage: " + use + "\n\n" + c.about
	// Flags may come before or after the arguments.
	var pos []string
	for {
		if err := cli.Parse(fs, args, os.Stdout, use, head); err != nil {
			return err
		}
		if fs.NArg() == 0 {
			break
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if len(pos) < c.min || (c.max >= 0 && len(pos) > c.max) {
		return cli.Usagef(use, "shardstore "+full+" -h", "wrong number of arguments (%d)", len(pos))
	}
	client, err := newAdminClient(*endpoint, *region, *caCert)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	return c.run(ctx, client, pos, os.Stdout)
}

// call sends one identity call and decodes a JSON answer into v (nil:
// no answer expected).
func (c *adminClient) call(ctx context.Context, method, path string, q url.Values, body any, v any) error {
	var raw []byte
	switch b := body.(type) {
	case nil:
	case []byte:
		raw = b
	default:
		var err error
		if raw, err = json.Marshal(b); err != nil {
			return err
		}
	}
	resp, err := c.doBody(ctx, method, path, q, raw)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if v == nil {
		return nil
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		return fmt.Errorf("%s: bad reply: %w", path, err)
	}
	return nil
}

func printJSON(out io.Writer, v any) error {
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func esc(s string) string { return url.PathEscape(s) }

func orDash(list []string) string {
	if len(list) == 0 {
		return "-"
	}
	return strings.Join(list, ",")
}

// readSecret reads one line (the secret) from stdin.
func readSecret() (string, error) {
	line, err := bufio.NewReader(os.Stdin).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("read the secret from stdin: %w", err)
	}
	line = strings.TrimRight(line, "\r\n")
	if line == "" {
		return "", errors.New("--secret-stdin: stdin held no secret")
	}
	return line, nil
}

// readDocument reads a policy document from a file, or stdin for "-".
func readDocument(path string) ([]byte, error) {
	if path == "-" {
		return io.ReadAll(io.LimitReader(os.Stdin, 1<<20))
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read policy: %w", err)
	}
	return b, nil
}

// parseExpiry reads an RFC 3339 time or a duration from now.
func parseExpiry(s string) (*time.Time, error) {
	if s == "" {
		return nil, nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return &t, nil
	}
	d, err := cli.ParseDuration(s)
	if err != nil || d <= 0 {
		return nil, fmt.Errorf("--expiry %q: want a time (2026-12-31T00:00:00Z) or a duration (90m, 24h, 3600)", s)
	}
	t := time.Now().Add(d).UTC().Truncate(time.Second)
	return &t, nil
}

func identityCommands(f *identityFlags) map[string]map[string]identityCommand {
	jsonOr := func(out io.Writer, v any, human func()) error {
		if f.json {
			return printJSON(out, v)
		}
		human()
		return nil
	}
	status := func(kind, arg, path, word string) identityCommand {
		return identityCommand{args: arg, about: word + " " + kind, min: 1, max: 1,
			run: func(ctx context.Context, c *adminClient, a []string, out io.Writer) error {
				if err := c.call(ctx, http.MethodPost, path+"/"+esc(a[0])+"/"+word, nil, nil, nil); err != nil {
					return err
				}
				fmt.Fprintf(out, "%s: %sd\n", a[0], word)
				return nil
			}}
	}
	return map[string]map[string]identityCommand{
		"user": {
			"add": {args: "NAME", about: "create a user; NAME is its access key. The secret is generated and printed once (or read from stdin with --secret-stdin)", min: 1, max: 1,
				flags: func(fs *flag.FlagSet) {
					fs.BoolVar(&f.secretStdin, "secret-stdin", false, "read the secret key from stdin instead of generating one")
				},
				run: func(ctx context.Context, c *adminClient, a []string, out io.Writer) error {
					req := admin.NewUser{Name: a[0]}
					if f.secretStdin {
						var err error
						if req.SecretKey, err = readSecret(); err != nil {
							return err
						}
					}
					var reply admin.NewUserReply
					if err := c.call(ctx, http.MethodPost, "users", nil, req, &reply); err != nil {
						return err
					}
					return jsonOr(out, reply, func() {
						fmt.Fprintf(out, "user %s added\naccess key  %s\nsecret key  %s\n", reply.Name, reply.Name, reply.SecretKey)
					})
				}},
			"list": {about: "list users", max: 0, run: func(ctx context.Context, c *adminClient, _ []string, out io.Writer) error {
				var users []iam.UserInfo
				if err := c.call(ctx, http.MethodGet, "users", nil, nil, &users); err != nil {
					return err
				}
				return jsonOr(out, users, func() {
					w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
					fmt.Fprintln(w, "USER\tSTATUS\tPOLICIES\tGROUPS\tACCESS KEYS")
					for _, u := range users {
						fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%d\n", u.Name, u.Status, orDash(u.Policies), orDash(u.Groups), u.AccessKeys)
					}
					w.Flush()
				})
			}},
			"info": {args: "NAME", about: "show a user", min: 1, max: 1, run: func(ctx context.Context, c *adminClient, a []string, out io.Writer) error {
				var u iam.UserInfo
				if err := c.call(ctx, http.MethodGet, "users/"+esc(a[0]), nil, nil, &u); err != nil {
					return err
				}
				return jsonOr(out, u, func() {
					fmt.Fprintf(out, "user         %s\nstatus       %s\npolicies     %s\ngroups       %s\naccess keys  %d\ncreated      %s\nupdated      %s\n",
						u.Name, u.Status, orDash(u.Policies), orDash(u.Groups), u.AccessKeys, u.Created.Format(time.RFC3339), u.Updated.Format(time.RFC3339))
				})
			}},
			"enable":  status("a user", "NAME", "users", "enable"),
			"disable": status("a user", "NAME", "users", "disable"),
			"remove": {args: "NAME", about: "remove a user with its access keys", min: 1, max: 1,
				run: func(ctx context.Context, c *adminClient, a []string, out io.Writer) error {
					if err := c.call(ctx, http.MethodDelete, "users/"+esc(a[0]), nil, nil, nil); err != nil {
						return err
					}
					fmt.Fprintf(out, "user %s removed\n", a[0])
					return nil
				}},
		},
		"group": {
			"add": {args: "GROUP USER...", about: "add users to a group (created when new)", min: 2, max: -1,
				run: func(ctx context.Context, c *adminClient, a []string, out io.Writer) error {
					if err := c.call(ctx, http.MethodPost, "groups/"+esc(a[0])+"/members", nil, admin.Members{Add: a[1:]}, nil); err != nil {
						return err
					}
					fmt.Fprintf(out, "group %s: added %s\n", a[0], strings.Join(a[1:], ", "))
					return nil
				}},
			"remove": {args: "GROUP [USER...]", about: "remove users from a group, or the group itself (when empty) if no user is named", min: 1, max: -1,
				run: func(ctx context.Context, c *adminClient, a []string, out io.Writer) error {
					if len(a) == 1 {
						if err := c.call(ctx, http.MethodDelete, "groups/"+esc(a[0]), nil, nil, nil); err != nil {
							return err
						}
						fmt.Fprintf(out, "group %s removed\n", a[0])
						return nil
					}
					if err := c.call(ctx, http.MethodPost, "groups/"+esc(a[0])+"/members", url.Values{"remove": {""}}, admin.Members{Remove: a[1:]}, nil); err != nil {
						return err
					}
					fmt.Fprintf(out, "group %s: removed %s\n", a[0], strings.Join(a[1:], ", "))
					return nil
				}},
			"list": {about: "list groups", max: 0, run: func(ctx context.Context, c *adminClient, _ []string, out io.Writer) error {
				var groups []iam.GroupInfo
				if err := c.call(ctx, http.MethodGet, "groups", nil, nil, &groups); err != nil {
					return err
				}
				return jsonOr(out, groups, func() {
					w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
					fmt.Fprintln(w, "GROUP\tSTATUS\tPOLICIES\tMEMBERS")
					for _, g := range groups {
						fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", g.Name, g.Status, orDash(g.Policies), orDash(g.Members))
					}
					w.Flush()
				})
			}},
			"info": {args: "GROUP", about: "show a group", min: 1, max: 1, run: func(ctx context.Context, c *adminClient, a []string, out io.Writer) error {
				var g iam.GroupInfo
				if err := c.call(ctx, http.MethodGet, "groups/"+esc(a[0]), nil, nil, &g); err != nil {
					return err
				}
				return jsonOr(out, g, func() {
					fmt.Fprintf(out, "group     %s\nstatus    %s\npolicies  %s\nmembers   %s\n", g.Name, g.Status, orDash(g.Policies), orDash(g.Members))
				})
			}},
			"enable":  status("a group", "GROUP", "groups", "enable"),
			"disable": status("a group", "GROUP", "groups", "disable"),
		},
		"policy": {
			"create": {args: "NAME FILE", about: "create or replace a policy from a JSON file (- for stdin)", min: 2, max: 2,
				run: func(ctx context.Context, c *adminClient, a []string, out io.Writer) error {
					doc, err := readDocument(a[1])
					if err != nil {
						return err
					}
					if err := c.call(ctx, http.MethodPut, "policies/"+esc(a[0]), nil, doc, nil); err != nil {
						return err
					}
					fmt.Fprintf(out, "policy %s stored\n", a[0])
					return nil
				}},
			"list": {about: "list policies (built-in ones included)", max: 0, run: func(ctx context.Context, c *adminClient, _ []string, out io.Writer) error {
				var ps []iam.PolicyInfo
				if err := c.call(ctx, http.MethodGet, "policies", nil, nil, &ps); err != nil {
					return err
				}
				return jsonOr(out, ps, func() {
					w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
					fmt.Fprintln(w, "POLICY\tBUILT-IN\tUSERS\tGROUPS")
					for _, p := range ps {
						fmt.Fprintf(w, "%s\t%v\t%s\t%s\n", p.Name, p.Builtin, orDash(p.Users), orDash(p.Groups))
					}
					w.Flush()
				})
			}},
			"info": {args: "NAME", about: "show a policy and where it is attached", min: 1, max: 1,
				run: func(ctx context.Context, c *adminClient, a []string, out io.Writer) error {
					var p iam.PolicyInfo
					if err := c.call(ctx, http.MethodGet, "policies/"+esc(a[0]), nil, nil, &p); err != nil {
						return err
					}
					return jsonOr(out, p, func() {
						fmt.Fprintf(out, "policy   %s\nbuiltin  %v\nusers    %s\ngroups   %s\n", p.Name, p.Builtin, orDash(p.Users), orDash(p.Groups))
						var doc any
						if json.Unmarshal(p.Document, &doc) == nil {
							b, _ := json.MarshalIndent(doc, "", "  ")
							fmt.Fprintf(out, "%s\n", b)
						}
					})
				}},
			"attach": attachCommand(f, true),
			"detach": attachCommand(f, false),
			"remove": {args: "NAME", about: "remove a policy (detach it everywhere first)", min: 1, max: 1,
				run: func(ctx context.Context, c *adminClient, a []string, out io.Writer) error {
					if err := c.call(ctx, http.MethodDelete, "policies/"+esc(a[0]), nil, nil, nil); err != nil {
						return err
					}
					fmt.Fprintf(out, "policy %s removed\n", a[0])
					return nil
				}},
		},
		"accesskey": {
			"create": {about: "create an access key for a user (default: the caller); the secret is printed once", max: 0,
				flags: func(fs *flag.FlagSet) {
					fs.StringVar(&f.user, "user", "", "the `USER` the key acts for (default: the signing user)")
					fs.StringVar(&f.policy, "policy", "", "JSON `FILE` with a policy narrowing what the key may do")
					fs.StringVar(&f.expiry, "expiry", "", "when the key stops working: a `TIME` (RFC 3339) or a duration from now (24h)")
					fs.StringVar(&f.name, "name", "", "a `NAME` for the key")
					fs.StringVar(&f.descr, "description", "", "a `DESCRIPTION` of the key")
					fs.StringVar(&f.ldapUser, "ldap-user", "", "the LDAP user `NAME` when --user is a directory user's DN (docs/sso.md)")
				},
				run: func(ctx context.Context, c *adminClient, _ []string, out io.Writer) error {
					req := iam.NewAccessKey{Parent: f.user, Name: f.name, Description: f.descr, LDAPUsername: f.ldapUser}
					if f.policy != "" {
						doc, err := readDocument(f.policy)
						if err != nil {
							return err
						}
						req.Policy = string(doc)
					}
					exp, err := parseExpiry(f.expiry)
					if err != nil {
						return err
					}
					req.Expiry = exp
					var creds iam.Credentials
					if err := c.call(ctx, http.MethodPost, "accesskeys", nil, req, &creds); err != nil {
						return err
					}
					return jsonOr(out, creds, func() {
						fmt.Fprintf(out, "access key  %s\nsecret key  %s\n", creds.AccessKey, creds.SecretKey)
						if creds.Expiration != nil {
							fmt.Fprintf(out, "expires     %s\n", creds.Expiration.Format(time.RFC3339))
						}
					})
				}},
			"list": {about: "list access keys (of one user with --user)", max: 0,
				flags: func(fs *flag.FlagSet) {
					fs.StringVar(&f.user, "user", "", "only the keys of `USER`")
				},
				run: func(ctx context.Context, c *adminClient, _ []string, out io.Writer) error {
					q := url.Values{}
					if f.user != "" {
						q.Set("user", f.user)
					}
					var keys []iam.AccessKeyInfo
					if err := c.call(ctx, http.MethodGet, "accesskeys", q, nil, &keys); err != nil {
						return err
					}
					return jsonOr(out, keys, func() {
						w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
						fmt.Fprintln(w, "ACCESS KEY\tUSER\tSTATUS\tEXPIRES\tPOLICY\tNAME")
						for _, k := range keys {
							exp, st := "never", k.Status
							if k.Expiry != nil {
								exp = k.Expiry.Format(time.RFC3339)
							}
							if k.Expired {
								st = "expired"
							}
							pol := "-"
							if len(k.Policy) > 0 {
								pol = "own"
							}
							fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", k.AccessKey, k.Parent, st, exp, pol, k.Name)
						}
						w.Flush()
					})
				}},
			"info": {args: "ACCESS_KEY", about: "show an access key", min: 1, max: 1,
				run: func(ctx context.Context, c *adminClient, a []string, out io.Writer) error {
					var keys []iam.AccessKeyInfo
					if err := c.call(ctx, http.MethodGet, "accesskeys", nil, nil, &keys); err != nil {
						return err
					}
					for _, k := range keys {
						if k.AccessKey == a[0] {
							return printJSON(out, k)
						}
					}
					return fmt.Errorf("access key %s: not found", a[0])
				}},
			"enable":  status("an access key", "ACCESS_KEY", "accesskeys", "enable"),
			"disable": status("an access key", "ACCESS_KEY", "accesskeys", "disable"),
			"remove": {args: "ACCESS_KEY", about: "remove an access key; it stops working at once", min: 1, max: 1,
				run: func(ctx context.Context, c *adminClient, a []string, out io.Writer) error {
					if err := c.call(ctx, http.MethodDelete, "accesskeys/"+esc(a[0]), nil, nil, nil); err != nil {
						return err
					}
					fmt.Fprintf(out, "access key %s removed\n", a[0])
					return nil
				}},
		},
		"audit": {
			"": {about: "the latest identity changes since the server started (the server log has all)", max: 0,
				run: func(ctx context.Context, c *adminClient, _ []string, out io.Writer) error {
					var recs []iam.AuditRecord
					if err := c.call(ctx, http.MethodGet, "audit", nil, nil, &recs); err != nil {
						return err
					}
					return jsonOr(out, recs, func() {
						w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
						fmt.Fprintln(w, "TIME\tACTOR\tACTION\tTARGET\tRESULT")
						for _, r := range recs {
							res := "ok"
							if r.Error != "" {
								res = "failed: " + r.Error
							}
							fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", r.Time.Format(time.RFC3339), r.Actor, r.Action, r.Target, res)
						}
						w.Flush()
					})
				}},
		},
	}
}

func attachCommand(f *identityFlags, attach bool) identityCommand {
	word, path := "detach", "policies/detach"
	if attach {
		word, path = "attach", "policies/attach"
	}
	return identityCommand{args: "POLICY...", about: word + " policies to a user (--user) or a group (--group)", min: 1, max: -1,
		flags: func(fs *flag.FlagSet) {
			fs.StringVar(&f.user, "user", "", "the `USER`")
			fs.StringVar(&f.group, "group", "", "the `GROUP`")
		},
		run: func(ctx context.Context, c *adminClient, a []string, out io.Writer) error {
			if (f.user == "") == (f.group == "") {
				return errors.New("name --user or --group (one of them)")
			}
			if err := c.call(ctx, http.MethodPost, path, nil, admin.Attachment{Policies: a, User: f.user, Group: f.group}, nil); err != nil {
				return err
			}
			who := "user " + f.user
			if f.group != "" {
				who = "group " + f.group
			}
			fmt.Fprintf(out, "%sed %s: %s\n", word, who, strings.Join(a, ", "))
			return nil
		}}
}
