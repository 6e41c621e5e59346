package ldapidp

import (
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"time"
)

// Setting names, as they follow SHARDSTORE_IDENTITY_LDAP_ (or MinIO's
// MINIO_IDENTITY_LDAP_) in the environment and --identity-ldap- (in
// lower case, '_' as '-') on the command line.
const (
	SettingServerAddr         = "SERVER_ADDR"
	SettingLookupBindDN       = "LOOKUP_BIND_DN"
	SettingLookupBindPassword = "LOOKUP_BIND_PASSWORD" // environment only: a flag shows in ps
	SettingUserBaseDN         = "USER_DN_SEARCH_BASE_DN"
	SettingUserFilter         = "USER_DN_SEARCH_FILTER"
	SettingGroupBaseDN        = "GROUP_SEARCH_BASE_DN"
	SettingGroupFilter        = "GROUP_SEARCH_FILTER"
	SettingTLSSkipVerify      = "TLS_SKIP_VERIFY"
	SettingServerInsecure     = "SERVER_INSECURE"
	SettingServerStartTLS     = "SERVER_STARTTLS"
	SettingServerCA           = "SERVER_CA" // ours: a PEM file of trusted authorities
	SettingRecheckInterval    = "RECHECK_INTERVAL"
)

// Settings lists every setting name; Secret says which may not be a
// flag.
var Settings = []struct {
	Name, Help string
	Secret     bool
	// Ours marks settings MinIO does not have (no MINIO_ alias).
	Ours bool
}{
	{SettingServerAddr, "`HOST:PORT` of the LDAP server (enables LDAP sign-in)", false, false},
	{SettingLookupBindDN, "`DN` of the read-only account that searches users and groups", false, false},
	{SettingLookupBindPassword, "password of the lookup account", true, false},
	{SettingUserBaseDN, "`DN` under which users are searched (several separated by ';')", false, false},
	{SettingUserFilter, "`FILTER` finding a user by name, %s standing for the (escaped) name, e.g. (uid=%s)", false, false},
	{SettingGroupBaseDN, "`DN` under which groups are searched", false, false},
	{SettingGroupFilter, "`FILTER` finding a user's groups: %d the user's DN, %s its name, e.g. (&(objectclass=groupOfNames)(member=%d))", false, false},
	{SettingTLSSkipVerify, "on: do not verify the LDAP server's certificate (tests only)", false, false},
	{SettingServerInsecure, "on: plain LDAP without TLS (a trusted network only)", false, false},
	{SettingServerStartTLS, "on: StartTLS on the plain LDAP port instead of LDAPS", false, false},
	{SettingServerCA, "`FILE` of PEM authorities trusted for the LDAP server beside the system's and the certificates directory's CAs/", false, true},
	{SettingRecheckInterval, "how long a federated credential's directory check is reused (`DURATION`, default 1m; 0s checks on every request)", false, true},
}

// Env reads the settings from the environment: SHARDSTORE_IDENTITY_LDAP_X,
// else MINIO_IDENTITY_LDAP_X.
func Env(getenv func(string) string) map[string]string {
	out := map[string]string{}
	for _, s := range Settings {
		v := getenv("SHARDSTORE_IDENTITY_LDAP_" + s.Name)
		if v == "" && !s.Ours {
			v = getenv("MINIO_IDENTITY_LDAP_" + s.Name)
		}
		if v != "" {
			out[s.Name] = v
		}
	}
	return out
}

// FlagName is the command-line flag of a setting.
func FlagName(setting string) string {
	return "identity-ldap-" + strings.ReplaceAll(strings.ToLower(setting), "_", "-")
}

// Config is a parsed LDAP configuration.
type Config struct {
	// Addr is HOST:PORT.
	Addr               string
	LookupBindDN       string
	LookupBindPassword string
	UserBases          []string
	UserFilter         string
	GroupBase          string
	GroupFilter        string
	Insecure           bool // plain LDAP
	StartTLS           bool
	SkipVerify         bool
	// RootCAs verify the server's certificate (nil: the system's).
	RootCAs *x509.CertPool
	// Timeout bounds each connection and operation.
	Timeout time.Duration
	// Recheck is how long a Lookup answer about a federated credential
	// may be reused.
	Recheck time.Duration
}

// DefaultTimeout bounds a directory operation; DefaultRecheck is how
// long a federated credential's check is reused.
const (
	DefaultTimeout = 10 * time.Second
	DefaultRecheck = time.Minute
)

// ErrConfig is a bad LDAP setting.
var ErrConfig = errors.New("LDAP configuration")

// Parse checks settings (from Env, flags overriding) and returns the
// configuration; ok is false when LDAP is not configured (no server
// address). roots are the authorities trusted beside SERVER_CA's (the
// system's plus the certificates directory's CAs/; nil: the system's).
func Parse(settings map[string]string, roots *x509.CertPool) (cfg Config, ok bool, err error) {
	get := func(n string) string { return strings.TrimSpace(settings[n]) }
	cfg.Addr = get(SettingServerAddr)
	if cfg.Addr == "" {
		for n, v := range settings {
			if v != "" && n != SettingRecheckInterval {
				return Config{}, false, fmt.Errorf("%w: %s is set but %s is not", ErrConfig, n, SettingServerAddr)
			}
		}
		return Config{}, false, nil
	}
	bools := map[string]*bool{SettingTLSSkipVerify: &cfg.SkipVerify, SettingServerInsecure: &cfg.Insecure, SettingServerStartTLS: &cfg.StartTLS}
	for n, p := range bools {
		if v := get(n); v != "" {
			b, err := parseBool(v)
			if err != nil {
				return Config{}, false, fmt.Errorf("%w: %s: %w", ErrConfig, n, err)
			}
			*p = b
		}
	}
	if cfg.Insecure && cfg.StartTLS {
		return Config{}, false, fmt.Errorf("%w: %s and %s exclude each other", ErrConfig, SettingServerInsecure, SettingServerStartTLS)
	}
	host, port, err := net.SplitHostPort(cfg.Addr)
	if err != nil {
		// MinIO accepts a bare host: the port is LDAPS's, or LDAP's for
		// plain and StartTLS connections.
		host, port = cfg.Addr, "636"
		if cfg.Insecure || cfg.StartTLS {
			port = "389"
		}
		cfg.Addr = net.JoinHostPort(host, port)
	}
	if n, err := strconv.Atoi(port); host == "" || strings.ContainsAny(host, "/ ") || err != nil || n < 1 || n > 65535 {
		return Config{}, false, fmt.Errorf("%w: %s %q: want HOST:PORT", ErrConfig, SettingServerAddr, settings[SettingServerAddr])
	}
	cfg.LookupBindDN, cfg.LookupBindPassword = get(SettingLookupBindDN), settings[SettingLookupBindPassword]
	if cfg.LookupBindDN == "" || cfg.LookupBindPassword == "" {
		return Config{}, false, fmt.Errorf("%w: %s and %s are needed (the account that searches users and groups)", ErrConfig, SettingLookupBindDN, SettingLookupBindPassword)
	}
	for _, b := range strings.Split(get(SettingUserBaseDN), ";") {
		if b = strings.TrimSpace(b); b != "" {
			if _, err := NormalizeDN(b); err != nil {
				return Config{}, false, fmt.Errorf("%w: %s: %w", ErrConfig, SettingUserBaseDN, err)
			}
			cfg.UserBases = append(cfg.UserBases, b)
		}
	}
	if len(cfg.UserBases) == 0 {
		return Config{}, false, fmt.Errorf("%w: %s is needed", ErrConfig, SettingUserBaseDN)
	}
	cfg.UserFilter = get(SettingUserFilter)
	if !strings.Contains(cfg.UserFilter, "%s") || !balanced(cfg.UserFilter) {
		return Config{}, false, fmt.Errorf("%w: %s %q must be a filter in parentheses with %%s for the user name, e.g. (uid=%%s)", ErrConfig, SettingUserFilter, cfg.UserFilter)
	}
	cfg.GroupBase, cfg.GroupFilter = get(SettingGroupBaseDN), get(SettingGroupFilter)
	switch {
	case (cfg.GroupBase == "") != (cfg.GroupFilter == ""):
		return Config{}, false, fmt.Errorf("%w: %s and %s go together", ErrConfig, SettingGroupBaseDN, SettingGroupFilter)
	case cfg.GroupFilter != "" && !balanced(cfg.GroupFilter):
		return Config{}, false, fmt.Errorf("%w: %s %q is not a filter in parentheses", ErrConfig, SettingGroupFilter, cfg.GroupFilter)
	case cfg.GroupBase != "":
		if _, err := NormalizeDN(cfg.GroupBase); err != nil {
			return Config{}, false, fmt.Errorf("%w: %s: %w", ErrConfig, SettingGroupBaseDN, err)
		}
	}
	cfg.RootCAs = roots
	if f := get(SettingServerCA); f != "" {
		pem, err := os.ReadFile(f)
		if err != nil {
			return Config{}, false, fmt.Errorf("%w: %s: %w", ErrConfig, SettingServerCA, err)
		}
		if cfg.RootCAs == nil {
			if cfg.RootCAs, err = x509.SystemCertPool(); err != nil {
				cfg.RootCAs = x509.NewCertPool()
			}
		} else {
			cfg.RootCAs = cfg.RootCAs.Clone()
		}
		if !cfg.RootCAs.AppendCertsFromPEM(pem) {
			return Config{}, false, fmt.Errorf("%w: %s %s holds no PEM certificate", ErrConfig, SettingServerCA, f)
		}
	}
	cfg.Timeout, cfg.Recheck = DefaultTimeout, DefaultRecheck
	if v := get(SettingRecheckInterval); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 || d > time.Hour {
			return Config{}, false, fmt.Errorf("%w: %s %q: want a duration from 0s to 1h", ErrConfig, SettingRecheckInterval, v)
		}
		cfg.Recheck = d
	}
	return cfg, true, nil
}

func parseBool(v string) (bool, error) {
	switch strings.ToLower(v) {
	case "on", "true", "1", "yes", "enable", "enabled":
		return true, nil
	case "off", "false", "0", "no", "disable", "disabled":
		return false, nil
	}
	return false, fmt.Errorf("%q is neither on nor off", v)
}

// balanced reports whether a configured filter is one parenthesised
// expression (a cheap check that catches a forgotten parenthesis before
// the first sign-in does; the server parses it for real).
func balanced(f string) bool {
	if len(f) < 3 || f[0] != '(' || f[len(f)-1] != ')' {
		return false
	}
	depth := 0
	for i := 0; i < len(f); i++ {
		switch f[i] {
		case '\\':
			i += 2
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 && i != len(f)-1 {
				return false
			}
			if depth < 0 {
				return false
			}
		}
	}
	return depth == 0
}
