package main

import (
	"crypto/x509"
	"fmt"
	"log/slog"
	"os"

	"github.com/shardstore/shardstore/internal/console"
	"github.com/shardstore/shardstore/internal/oidcidp"
)

// openOIDC returns the OpenID provider configured by
// SHARDSTORE_IDENTITY_OPENID_* (or MinIO's MINIO_IDENTITY_OPENID_*), nil
// when none is. Its discovery document and keys are fetched at the first
// token, so a provider that is down does not stop the server.
func openOIDC(getenv func(string) string, roots *x509.CertPool, logger *slog.Logger) (*oidcidp.Provider, error) {
	cfg, ok, err := oidcidp.Parse(oidcidp.Env(getenv), roots)
	if err != nil || !ok {
		return nil, err
	}
	claim := "claim " + cfg.ClaimName
	if len(cfg.RolePolicy) > 0 {
		claim = fmt.Sprintf("role policy %v", cfg.RolePolicy)
	}
	logger.Info("OpenID Connect sign-in enabled", "config_url", cfg.ConfigURL, "client_id", cfg.ClientID, "policies", claim)
	fmt.Fprintf(os.Stderr, "OpenID Connect: %s (client %s, %s)\n", cfg.ConfigURL, cfg.ClientID, claim)
	return oidcidp.New(cfg), nil
}

// withOpenID offers the console's "Sign in with" login of the provider.
func withOpenID(cfg console.Config, p *oidcidp.Provider) console.Config {
	if p != nil {
		cfg.OpenID, cfg.OpenIDName, cfg.OpenIDRedirect = p, p.Config().DisplayName, p.Config().RedirectURI
	}
	return cfg
}
