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
	"text/tabwriter"

	"github.com/shardstore/shardstore/internal/admin"
	"github.com/shardstore/shardstore/internal/cli"
	"github.com/shardstore/shardstore/internal/iam"
)

// idpUsage is the synopsis of `shardstore admin idp`, the shape of
// `mc idp ldap policy attach|detach|entities`.
const idpUsage = "shardstore admin idp ldap policy attach|detach|list ..."

const idpHelp = `Maps policies to LDAP distinguished names, as mc idp ldap policy does:
  attach POLICY... --user DN | --group DN   map policies to a user's or group's DN
  detach POLICY... --user DN | --group DN   remove them
  list [--user DN | --group DN] [--policy NAME]   the mappings (also: entities)
A directory user signed in with AssumeRoleWithLDAPIdentity (or the console)
may do what the policies mapped to its DN and to its groups' DNs allow.
See docs/sso.md.`

// runAdminIDP runs `shardstore admin idp ldap policy SUB`: the policies
// mapped to directory DNs (users' and groups').
func runAdminIDP(args []string) error {
	if len(args) < 3 || args[0] != "ldap" || args[1] != "policy" {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help" || args[0] == "help") {
			fmt.Fprintf(os.Stdout, "usage: %s\n\n%s\n", idpUsage, idpHelp)
			return flag.ErrHelp
		}
		return cli.Usagef(idpUsage, "shardstore admin idp -h", "want: idp ldap policy attach|detach|list")
	}
	var f struct{ user, group, policy string }
	var idf identityFlags // --json
	dnFlags := func(fs *flag.FlagSet) {
		fs.StringVar(&f.user, "user", "", "`DN` of a directory user")
		fs.StringVar(&f.group, "group", "", "`DN` of a directory group")
	}
	target := func() (admin.Attachment, error) {
		if (f.user == "") == (f.group == "") {
			return admin.Attachment{}, cli.Usagef(idpUsage, "shardstore admin idp -h", "name --user DN or --group DN (one of them)")
		}
		return admin.Attachment{User: f.user, Group: f.group}, nil
	}
	change := func(word string) identityCommand {
		about := map[string]string{"attach": "map policies to a directory user's or group's DN (--user DN | --group DN)",
			"detach": "remove policies mapped to a directory user's or group's DN (--user DN | --group DN)"}[word]
		return identityCommand{args: "POLICY...", about: about, min: 1, max: -1,
			flags: dnFlags,
			run: func(ctx context.Context, c *adminClient, a []string, out io.Writer) error {
				at, err := target()
				if err != nil {
					return err
				}
				at.Policies = a
				if err := c.call(ctx, http.MethodPost, "idp/ldap/policies/"+word, nil, at, nil); err != nil {
					return err
				}
				verb := map[string]string{"attach": "attached to", "detach": "detached from"}[word]
				fmt.Fprintf(out, "%s %s %s\n", strings.Join(a, ", "), verb, at.User+at.Group)
				return nil
			}}
	}
	list := identityCommand{about: "list the DN-to-policy mappings, all or those of --user/--group DN or --policy NAME", max: 0,
		flags: func(fs *flag.FlagSet) {
			dnFlags(fs)
			fs.StringVar(&f.policy, "policy", "", "only mappings of policy `NAME`")
		},
		run: func(ctx context.Context, c *adminClient, _ []string, out io.Writer) error {
			q := url.Values{}
			if dn := f.user + f.group; dn != "" {
				q.Set("dn", dn)
			}
			if f.policy != "" {
				q.Set("policy", f.policy)
			}
			var m []iam.LDAPMapping
			if err := c.call(ctx, http.MethodGet, "idp/ldap/policies", q, nil, &m); err != nil {
				return err
			}
			if idf.json {
				return printJSON(out, m)
			}
			w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "DN\tPOLICIES")
			for _, e := range m {
				fmt.Fprintf(w, "%s\t%s\n", e.DN, orDash(e.Policies))
			}
			return w.Flush()
		}}
	cmds := map[string]identityCommand{"attach": change("attach"), "detach": change("detach"), "list": list, "entities": list}
	c, ok := cmds[args[2]]
	if !ok {
		return cli.Usagef(idpUsage, "shardstore admin idp -h", "unknown command %q (attach, detach or list)", args[2])
	}
	return runIdentityCommand("idp ldap policy", args[2], c, args[3:], &idf)
}
