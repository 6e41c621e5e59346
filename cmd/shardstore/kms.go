package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/shardstore/shardstore/internal/kms"
)

// kmsHelp is the server's help on the KMS settings, which come from the
// environment only (secrets stay off the command line and out of ps).
const kmsHelp = `
Encryption at rest (SSE-S3, SSE-KMS; SSE-C needs no KMS) takes its key
server from the environment:
  SHARDSTORE_KMS_SECRET_KEY=NAME:BASE64     a built-in key (32 bytes, base64);
                                            MINIO_KMS_SECRET_KEY is read too
  SHARDSTORE_KMS_SECRET_KEY_FILE=FILE       built-in keys, one NAME:BASE64 per
                                            line; a name repeated is a newer
                                            version of that key (rotation)
  SHARDSTORE_KMS_VAULT_ENDPOINT=URL         a Vault or OpenBao transit engine
  SHARDSTORE_KMS_VAULT_KEY_NAME=NAME        its default key
  SHARDSTORE_KMS_VAULT_TOKEN=TOKEN          or _APPROLE_ID and _APPROLE_SECRET
  SHARDSTORE_KMS_VAULT_MOUNT / _NAMESPACE   (MINIO_KMS_VAULT_* spellings too)
  SHARDSTORE_ENCRYPT_ALL=1                  as --encrypt-all
`

// loadKMS builds the key server the environment describes (nil when it
// describes none), counting its calls for the metrics. trust is the
// pool a Vault's certificate is verified against.
func loadKMS(getenv func(string) string, roots *x509.CertPool) (*kms.Counting, error) {
	builtin, hasBuiltin, err := kms.LoadBuiltin(getenv, os.ReadFile)
	if err != nil {
		return nil, fmt.Errorf("built-in KMS: %w", err)
	}
	vcfg, hasVault, err := kms.LoadVaultConfig(getenv)
	if err != nil {
		return nil, fmt.Errorf("Vault KMS: %w", err)
	}
	switch {
	case hasBuiltin && hasVault:
		return nil, errors.New("both a built-in KMS key (SHARDSTORE_KMS_SECRET_KEY...) and a Vault KMS (SHARDSTORE_KMS_VAULT_ENDPOINT) are configured; set one")
	case hasBuiltin:
		return kms.NewCounting(builtin), nil
	case hasVault:
		if strings.HasPrefix(vcfg.Endpoint, "https://") {
			// The Vault's certificate is checked against the system
			// roots and the certificates directory's CAs/.
			vcfg.TLS = &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
		}
		v, err := kms.NewVault(vcfg)
		if err != nil {
			return nil, fmt.Errorf("Vault KMS: %w", err)
		}
		return kms.NewCounting(v), nil
	}
	return nil, nil
}

// kmsMonitor checks the key server every interval, logs when it stops or
// starts answering, and exports what it saw and the call counts.
type kmsMonitor struct {
	k   *kms.Counting
	log *slog.Logger
	up  prometheus.Gauge
}

func newKMSMonitor(k *kms.Counting, reg prometheus.Registerer, logger *slog.Logger) (*kmsMonitor, error) {
	m := &kmsMonitor{k: k, log: logger, up: prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "shardstore_kms_up", Help: "1 when the key server answered its last health check, else 0.",
		ConstLabels: prometheus.Labels{"kind": k.Kind()}})}
	if err := reg.Register(m.up); err != nil {
		return nil, err
	}
	for _, op := range []string{"generate", "decrypt", "rewrap", "create", "status"} {
		calls := prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "shardstore_kms_calls_total",
			Help: "Calls to the key server, by operation.", ConstLabels: prometheus.Labels{"op": op}},
			func() float64 { return float64(k.Stats()[op].Calls) })
		fails := prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "shardstore_kms_failures_total",
			Help: "Calls to the key server that failed, by operation.", ConstLabels: prometheus.Labels{"op": op}},
			func() float64 { return float64(k.Stats()[op].Failures) })
		if err := reg.Register(calls); err != nil {
			return nil, err
		}
		if err := reg.Register(fails); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// check asks the key server once; it returns whether it answered.
func (m *kmsMonitor) check(ctx context.Context, wasOK bool, first bool) bool {
	st := m.k.Status(ctx)
	if st.OK {
		m.up.Set(1)
		if !wasOK && !first {
			m.log.Warn("the key server answers again", "kind", st.Kind, "endpoint", st.Endpoint)
		}
	} else {
		m.up.Set(0)
		if wasOK || first {
			m.log.Error("the key server does not answer: reads and writes of SSE-S3/SSE-KMS objects fail with 503 until it does",
				"kind", st.Kind, "endpoint", st.Endpoint, "err", st.Error)
		}
	}
	return st.OK
}

// run checks every interval until ctx ends.
func (m *kmsMonitor) run(ctx context.Context, interval time.Duration) {
	ok := m.check(ctx, true, true)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			ok = m.check(ctx, ok, false)
		}
	}
}
