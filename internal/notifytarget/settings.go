package notifytarget

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/shardstore/shardstore/internal/notify"
)

// maxValue bounds one setting's length: every setting of every kind is
// an address, a name, a small number or a secret, and a value of many
// kilobytes is a mistake or an attack.
const maxValue = 4096

// ErrSetting is what every refused setting wraps: errors.Is(err,
// ErrSetting) tells a configuration mistake from a system that is down.
var ErrSetting = errors.New("invalid notification target setting")

// settings is one target's settings, read through its kind's fields.
// Keys that are not fields of the kind (queue_dir, queue_limit, comment,
// enable: the queue's and the configuration's own) are ignored here; the
// configuration layer checks names against Kind.Fields.
type settings struct {
	kind   string
	fields map[string]notify.Field
	m      map[string]string
}

// parse checks every field's value: bounded length, valid UTF-8, no
// control characters, present when required. Its errors name the field
// and never echo a value.
func parse(kind string, fields []notify.Field, m map[string]string) (settings, error) {
	s := settings{kind: kind, fields: make(map[string]notify.Field, len(fields)), m: make(map[string]string, len(fields))}
	for _, f := range fields {
		s.fields[f.Name] = f
		v := m[f.Name]
		if !f.Secret {
			// A password may begin or end with a space; nothing else does.
			v = strings.TrimSpace(v)
		}
		switch {
		case len(v) > maxValue:
			return s, s.errf(f.Name, "longer than %d bytes", maxValue)
		case !utf8.ValidString(v):
			return s, s.errf(f.Name, "not valid UTF-8")
		case strings.IndexFunc(v, unicode.IsControl) >= 0:
			return s, s.errf(f.Name, "contains a control character")
		case f.Required && v == "":
			return s, s.errf(f.Name, "is required")
		}
		s.m[f.Name] = v
	}
	return s, nil
}

// errf is a setting's error: the kind, the field and the reason, never
// the value.
func (s settings) errf(field, format string, args ...any) error {
	return fmt.Errorf("notify_%s %s: %s: %w", s.kind, field, fmt.Sprintf(format, args...), ErrSetting)
}

func (s settings) str(name string) string { return s.m[name] }

// secrets lists the values of the secret fields that are set, for
// scrub.
func (s settings) secrets() []string {
	var out []string
	for name, f := range s.fields {
		if f.Secret && s.m[name] != "" {
			out = append(out, s.m[name])
		}
	}
	return out
}

// boolean reads on/off (MinIO's spelling), true/false, yes/no, 1/0,
// enable/disable; empty is def.
func (s settings) boolean(name string, def bool) (bool, error) {
	switch strings.ToLower(s.m[name]) {
	case "":
		return def, nil
	case "on", "true", "yes", "1", "enable", "enabled":
		return true, nil
	case "off", "false", "no", "0", "disable", "disabled":
		return false, nil
	}
	return false, s.errf(name, "not on or off")
}

// integer reads a decimal in [lo, hi]; empty is def.
func (s settings) integer(name string, def, lo, hi int) (int, error) {
	v := s.m[name]
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		return 0, s.errf(name, "not a whole number from %d to %d", lo, hi)
	}
	return n, nil
}

// duration reads a Go duration ("10s", "1m") or a number of seconds in
// [lo, hi]; empty is def.
func (s settings) duration(name string, def, lo, hi time.Duration) (time.Duration, error) {
	v := s.m[name]
	if v == "" {
		return def, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		n, nerr := strconv.Atoi(v)
		if nerr != nil || n > int(hi/time.Second)+1 {
			return 0, s.errf(name, "not a duration (like 10s)")
		}
		d = time.Duration(n) * time.Second
	}
	if d < lo || d > hi {
		return 0, s.errf(name, "not between %s and %s", lo, hi)
	}
	return d, nil
}

// oneOf reads a value from a fixed set (compared case-insensitively and
// returned lower-case); empty is def.
func (s settings) oneOf(name, def string, allowed ...string) (string, error) {
	v := strings.ToLower(s.m[name])
	if v == "" {
		return def, nil
	}
	for _, a := range allowed {
		if v == a {
			return v, nil
		}
	}
	return "", s.errf(name, "not one of %s", strings.Join(allowed, ", "))
}

// hostPort checks one host:port address; a missing port is defPort
// (when defPort is empty, the port is required).
func (s settings) hostPort(name, addr, defPort string) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		if defPort == "" || strings.Count(addr, ":") == 1 {
			return "", s.errf(name, "not a host:port address")
		}
		host, port = strings.Trim(addr, "[]"), defPort
	}
	if !validHost(host) {
		return "", s.errf(name, "not a host name or IP address")
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return "", s.errf(name, "port not from 1 to 65535")
	}
	return net.JoinHostPort(host, port), nil
}

var hostName = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9_.-]{0,251}[A-Za-z0-9])?$`)

func validHost(h string) bool {
	if h == "" {
		return false
	}
	if net.ParseIP(h) != nil {
		return true
	}
	return hostName.MatchString(h) && !strings.Contains(h, "..")
}

// identifierPart is an unquoted SQL identifier (PostgreSQL's and MySQL's
// common ground, at most 63 bytes: PostgreSQL's limit).
var identifierPart = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,62}$`)

// identifier checks a table name, optionally schema-qualified
// ("schema.table"), and returns its parts. Table names are never
// interpolated raw: only names of letters, digits and underscores pass,
// and the SQL kinds quote each part as well.
func (s settings) identifier(name string) ([]string, error) {
	parts := strings.Split(s.m[name], ".")
	if len(parts) > 2 {
		return nil, s.errf(name, "not a table name (letters, digits and _, optionally schema.table)")
	}
	for _, p := range parts {
		if !identifierPart.MatchString(p) {
			return nil, s.errf(name, "not a table name (letters, digits and _, optionally schema.table)")
		}
	}
	return parts, nil
}

// tlsFiles builds a client TLS configuration from a CA file and a client
// certificate and key (any may be empty), reading the files now so that
// a wrong path is a setting error at New, not a retry loop later.
func (s settings) tlsFiles(skipVerify bool, caField, certField, keyField string) (*tls.Config, error) {
	c := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: skipVerify} //nolint:gosec // an operator's explicit tls_skip_verify
	if caField != "" && s.m[caField] != "" {
		pem, err := os.ReadFile(s.m[caField])
		if err != nil {
			return nil, s.errf(caField, "cannot read the CA file: %v", errors.Unwrap(err))
		}
		c.RootCAs = x509.NewCertPool()
		if !c.RootCAs.AppendCertsFromPEM(pem) {
			return nil, s.errf(caField, "no PEM certificate in the CA file")
		}
	}
	cert, key := s.m[certField], s.m[keyField]
	if certField != "" && (cert != "" || key != "") {
		if cert == "" || key == "" {
			return nil, s.errf(certField, "a client certificate needs both %s and %s", certField, keyField)
		}
		pair, err := tls.LoadX509KeyPair(cert, key)
		if err != nil {
			return nil, s.errf(certField, "cannot load the client certificate and key")
		}
		c.Certificates = []tls.Certificate{pair}
	}
	return c, nil
}

// scrub returns err with every secret replaced by "***" in its message
// (a driver may quote a URL or a DSN back), keeping err for errors.Is
// and errors.As.
func scrub(err error, secrets []string) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	out := msg
	for _, sec := range secrets {
		if sec != "" {
			out = strings.ReplaceAll(out, sec, "***")
		}
	}
	if out == msg {
		return err
	}
	return &scrubbed{msg: out, err: err}
}

type scrubbed struct {
	msg string
	err error
}

func (e *scrubbed) Error() string { return e.msg }
func (e *scrubbed) Unwrap() error { return e.err }

// arn is a target's ARN in MinIO's form.
func arn(id, kind string) string { return "arn:minio:sqs::" + id + ":" + kind }

// validID checks a target's ID: what stands in its ARN and in the
// environment variables' suffix.
var idPattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

func checkID(kind, id string) error {
	if !idPattern.MatchString(id) {
		return fmt.Errorf("notify_%s: target ID must be 1 to 64 letters, digits, _ or -: %w", kind, ErrSetting)
	}
	return nil
}

// urlUserinfo is "user:password@" escaped for a URL, or "" without a
// user.
func urlUserinfo(user, password string) string {
	switch {
	case user == "":
		return ""
	case password == "":
		return url.User(user).String() + "@"
	}
	return url.UserPassword(user, password).String() + "@"
}

func urlPathEscape(s string) string { return url.PathEscape(s) }
