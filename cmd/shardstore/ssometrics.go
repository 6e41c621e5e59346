package main

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/shardstore/shardstore/internal/ldapidp"
	"github.com/shardstore/shardstore/internal/sts"
)

// registerSSOMetrics exports the federated sign-in throttle (every
// unsigned STS sign-in: LDAP, web identity, client grants, and the
// console's directory and OpenID logins, which go through it) and, with
// LDAP configured, the directory's connection reuse.
func registerSSOMetrics(reg prometheus.Registerer, lim *sts.Limiter, dir *ldapidp.Directory) error {
	cs := []prometheus.Collector{
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "shardstore_sts_signin_failures_total",
			Help: "Federated sign-ins refused (wrong LDAP password, unknown user, refused identity token), counted per source toward the throttle."},
			func() float64 { return float64(lim.Stats().Failed) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "shardstore_sts_signin_throttled_total",
			Help: "Federated sign-ins answered Throttling: their source failed too often lately."},
			func() float64 { return float64(lim.Stats().Refused) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "shardstore_sts_signin_throttled_sources",
			Help: "Source addresses whose federated sign-ins are refused now."},
			func() float64 { return float64(lim.Stats().Throttled) }),
	}
	if dir != nil {
		cs = append(cs,
			prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "shardstore_ldap_connections_opened_total",
				Help: "Connections to the LDAP server opened and bound with the lookup account."},
				func() float64 { return float64(dir.Stats().Opened) }),
			prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "shardstore_ldap_connections_reused_total",
				Help: "LDAP sign-ins and lookups served on an idle lookup connection."},
				func() float64 { return float64(dir.Stats().Reused) }),
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "shardstore_ldap_connections_idle",
				Help: "Idle LDAP lookup connections kept for reuse."},
				func() float64 { return float64(dir.Stats().Idle) }))
	}
	for _, c := range cs {
		if err := reg.Register(c); err != nil {
			return err
		}
	}
	return nil
}
