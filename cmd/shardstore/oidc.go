package main

import (
	"crypto/x509"
	"fmt"
	"log/slog"
	"os"

	"github.com/shardstore/shardstore/internal/console"
	"github.com/shardstore/shardstore/internal/oidcidp"
)

// openOIDC returns the OpenID providers configured by
// SHARDSTORE_IDENTITY_OPENID_* (or MinIO's MINIO_IDENTITY_OPENID_*), each
// setting with a _<NAME> suffix naming one more provider; nil when none
// is. Discovery documents and keys are fetched at the first token, so a
// provider that is down does not stop the server.
func openOIDC(environ []string, roots *x509.CertPool, logger *slog.Logger) (*oidcidp.Set, error) {
	settings, err := oidcidp.EnvProviders(environ)
	if err != nil {
		return nil, err
	}
	cfgs, err := oidcidp.ParseAll(settings, roots)
	if err != nil || len(cfgs) == 0 {
		return nil, err
	}
	for _, cfg := range cfgs {
		claim := "claim " + cfg.ClaimName
		if cfg.RoleARN != "" {
			claim = fmt.Sprintf("role %s with policy %v", cfg.RoleARN, cfg.RolePolicy)
		}
		name := cfg.Name
		if name == "" {
			name = "(unnamed)"
		}
		logger.Info("OpenID Connect sign-in enabled", "provider", name, "config_url", cfg.ConfigURL, "client_id", cfg.ClientID, "policies", claim)
		fmt.Fprintf(os.Stderr, "OpenID Connect %s: %s (client %s, %s)\n", name, cfg.ConfigURL, cfg.ClientID, claim)
	}
	return oidcidp.NewSet(cfgs), nil
}

// withOpenID offers the console's "Sign in with" login of each provider.
func withOpenID(cfg console.Config, set *oidcidp.Set) console.Config {
	if set == nil {
		return cfg
	}
	for _, p := range set.Providers() {
		c := p.Config()
		cfg.OpenID = append(cfg.OpenID, console.OpenIDProvider{ID: c.Name, Name: c.DisplayName, Redirect: c.RedirectURI, RoleARN: c.RoleARN, Login: p})
	}
	return cfg
}
