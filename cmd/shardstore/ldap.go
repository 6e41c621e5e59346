package main

import (
	"context"
	"crypto/x509"
	"flag"
	"fmt"
	"log/slog"
	"os"

	"github.com/shardstore/shardstore/internal/auth"
	"github.com/shardstore/shardstore/internal/iam"
	"github.com/shardstore/shardstore/internal/ldapidp"
	"github.com/shardstore/shardstore/internal/oidcidp"
	"github.com/shardstore/shardstore/internal/sts"
)

// ldapFlags are the --identity-ldap-* flags; each defaults to its
// SHARDSTORE_IDENTITY_LDAP_* (or MINIO_IDENTITY_LDAP_*) variable. The
// lookup password is read from the environment only: a flag would show
// in the process list.
type ldapFlags struct {
	values map[string]*string
}

func addLDAPFlags(fs *flag.FlagSet, getenv func(string) string) ldapFlags {
	env := ldapidp.Env(getenv)
	f := ldapFlags{values: map[string]*string{}}
	for _, s := range ldapidp.Settings {
		if s.Secret {
			v := env[s.Name]
			f.values[s.Name] = &v
			continue
		}
		also := " (also SHARDSTORE_IDENTITY_LDAP_" + s.Name + " or MINIO_IDENTITY_LDAP_" + s.Name + ")"
		if s.Ours {
			also = " (also SHARDSTORE_IDENTITY_LDAP_" + s.Name + ")"
		}
		f.values[s.Name] = fs.String(ldapidp.FlagName(s.Name), env[s.Name], s.Help+also)
	}
	return f
}

func (f ldapFlags) settings() map[string]string {
	out := map[string]string{}
	for k, v := range f.values {
		if v != nil && *v != "" {
			out[k] = *v
		}
	}
	return out
}

// openLDAP returns the LDAP directory of the configuration, nil when
// none is configured. An unreachable directory is a warning, not a
// failure: root and local users keep working, and sign-ins say why
// they fail.
func openLDAP(f ldapFlags, roots *x509.CertPool, logger *slog.Logger) (*ldapidp.Directory, error) {
	cfg, ok, err := ldapidp.Parse(f.settings(), roots)
	if err != nil || !ok {
		return nil, err
	}
	dir := ldapidp.New(cfg)
	mode := "LDAPS"
	switch {
	case cfg.Insecure:
		mode = "plain LDAP (no TLS)"
	case cfg.StartTLS:
		mode = "StartTLS"
	}
	ctx, cancel := context.WithTimeout(context.Background(), cfg.Timeout)
	defer cancel()
	if err := dir.Ping(ctx); err != nil {
		logger.Warn("the LDAP server does not answer now; LDAP sign-ins fail until it does", "server", cfg.Addr, "err", err)
	} else {
		logger.Info("LDAP sign-in enabled", "server", cfg.Addr, "mode", mode, "recheck", cfg.Recheck)
	}
	if cfg.SkipVerify {
		logger.Warn("TLS_SKIP_VERIFY is on: the LDAP server's certificate is not checked")
	}
	fmt.Fprintf(os.Stderr, "LDAP sign-in: %s over %s\n", cfg.Addr, mode)
	return dir, nil
}

// ldapOptions fills the identity store's directory options.
func ldapOptions(opts *iam.Options, dir *ldapidp.Directory) {
	if dir == nil {
		return
	}
	opts.Directory, opts.DirectoryRecheck = dir, dir.Config().Recheck
}

// stsHandler is the STS endpoint, serving AssumeRoleWithLDAPIdentity
// when a directory is configured.
func stsHandler(v *auth.Verifier, ids *iam.Store, dir *ldapidp.Directory, oidc *oidcidp.Set, logger *slog.Logger) *sts.Handler {
	h := &sts.Handler{Verifier: v, Issuer: ids, Log: logger, Limiter: &sts.Limiter{}}
	if dir != nil {
		h.LDAP, h.LDAPIssuer = dir, ids
	}
	if oidc != nil {
		h.OIDC, h.OIDCIssuer = oidc, ids
	}
	return h
}
