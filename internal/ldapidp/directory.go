package ldapidp

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-ldap/ldap/v3"
)

// Errors of a sign-in or lookup.
var (
	// ErrInvalidCredentials: no such user (or more than one entry for the
	// name), the user fails the filter (disabled), or a wrong password.
	ErrInvalidCredentials = errors.New("invalid LDAP user name or password")
	// ErrUnavailable: the directory could not be asked (down, TLS, the
	// lookup account refused).
	ErrUnavailable = errors.New("the LDAP server is unavailable")
)

// MaxUsername bounds the user names accepted.
const MaxUsername = 256

// Identity is a directory user: the name it signed in with, its entry's
// DN and its groups' DNs, all normalized (NormalizeDN).
type Identity struct {
	Username string
	DN       string
	Groups   []string
}

// Directory asks one LDAP server. It is safe for concurrent use; calls
// reuse idle connections bound as the lookup account (pool.go).
type Directory struct {
	cfg  Config
	pool pool
}

// New returns a Directory for cfg (from Parse).
func New(cfg Config) *Directory {
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	return &Directory{cfg: cfg}
}

// Config is the directory's configuration.
func (d *Directory) Config() Config { return d.cfg }

// CheckUsername refuses names no directory lookup should see: empty,
// longer than MaxUsername, not UTF-8, or with control characters (NUL
// among them). Everything else is escaped into the filter.
func CheckUsername(name string) error {
	if name == "" || len(name) > MaxUsername || !utf8.ValidString(name) {
		return fmt.Errorf("%w: the user name must be 1 to %d bytes of UTF-8", ErrInvalidCredentials, MaxUsername)
	}
	for _, r := range name {
		if r < 0x20 || r == 0x7f {
			return fmt.Errorf("%w: the user name has a control character", ErrInvalidCredentials)
		}
	}
	return nil
}

// UserFilter is the configured user filter for name, the name escaped
// (RFC 4515) so that it can only ever be a literal value.
func UserFilter(filter, name string) string {
	return strings.NewReplacer("%s", ldap.EscapeFilter(name)).Replace(filter)
}

// GroupFilter is the configured group filter for a user: %s its name,
// %d its DN, both escaped.
func GroupFilter(filter, name, dn string) string {
	return strings.NewReplacer("%s", ldap.EscapeFilter(name), "%d", ldap.EscapeFilter(dn)).Replace(filter)
}

// NormalizeDN returns dn in one canonical form (attribute types and
// values in lower case, no spaces around separators), so a mapping and a
// directory answer compare equal however each was written.
func NormalizeDN(dn string) (string, error) {
	if strings.TrimSpace(dn) == "" {
		return "", errors.New("empty DN")
	}
	parsed, err := ldap.ParseDN(dn)
	if err != nil {
		return "", fmt.Errorf("bad DN %q: %w", dn, err)
	}
	if len(parsed.RDNs) == 0 {
		return "", fmt.Errorf("bad DN %q", dn)
	}
	return strings.ToLower(parsed.String()), nil
}

// Authenticate checks name and password against the directory and
// returns the user's identity.
func (d *Directory) Authenticate(ctx context.Context, name, password string) (Identity, error) {
	if err := CheckUsername(name); err != nil {
		return Identity{}, err
	}
	if password == "" {
		// LDAP takes a bind with a DN and no password for an anonymous
		// one, which succeeds: never send it.
		return Identity{}, fmt.Errorf("%w: empty password", ErrInvalidCredentials)
	}
	var id Identity
	err := d.withConn(ctx, func(conn *ldap.Conn) (bool, error) {
		dn, err := d.findUser(conn, name)
		if err != nil {
			return true, err
		}
		bindErr := conn.Bind(dn, password)
		// Back to the lookup account, for the group search (a user may
		// not be allowed to read groups) and for the connection's next
		// use: one that cannot be rebound is closed.
		if err := conn.Bind(d.cfg.LookupBindDN, d.cfg.LookupBindPassword); err != nil {
			if bindErr != nil && ldap.IsErrorWithCode(bindErr, ldap.LDAPResultInvalidCredentials) {
				return false, fmt.Errorf("%w: wrong password", ErrInvalidCredentials)
			}
			return false, &opError{msg: ErrUnavailable.Error() + ": lookup bind: " + ldapMessage(err), cause: err}
		}
		if bindErr != nil {
			if ldap.IsErrorWithCode(bindErr, ldap.LDAPResultInvalidCredentials) {
				return true, fmt.Errorf("%w: wrong password", ErrInvalidCredentials)
			}
			return true, classify("bind as the user", bindErr)
		}
		id, err = d.identity(conn, name, dn)
		return true, err
	})
	return id, err
}

// Lookup returns the user's identity now, without its password: whether
// it still exists and passes the filter, and its groups.
func (d *Directory) Lookup(ctx context.Context, name string) (Identity, error) {
	if err := CheckUsername(name); err != nil {
		return Identity{}, err
	}
	var id Identity
	err := d.withConn(ctx, func(conn *ldap.Conn) (bool, error) {
		dn, err := d.findUser(conn, name)
		if err != nil {
			return true, err
		}
		id, err = d.identity(conn, name, dn)
		return true, err
	})
	return id, err
}

// Ping connects and binds with the lookup account (a new connection,
// kept for the next call).
func (d *Directory) Ping(ctx context.Context) error {
	conn, err := d.lookupConn(ctx)
	if err != nil {
		return err
	}
	d.pool.opened.Add(1)
	d.pool.put(conn, time.Now())
	return nil
}

func (d *Directory) identity(conn *ldap.Conn, name, dn string) (Identity, error) {
	norm, err := NormalizeDN(dn)
	if err != nil {
		return Identity{}, fmt.Errorf("%w: the directory returned %w", ErrUnavailable, err)
	}
	id := Identity{Username: name, DN: norm}
	if d.cfg.GroupFilter == "" {
		return id, nil
	}
	req := ldap.NewSearchRequest(d.cfg.GroupBase, ldap.ScopeWholeSubtree, ldap.NeverDerefAliases,
		maxGroups, d.timeLimit(), false, GroupFilter(d.cfg.GroupFilter, name, dn), []string{"1.1"}, nil)
	res, err := conn.Search(req)
	if err != nil && !ldap.IsErrorWithCode(err, ldap.LDAPResultSizeLimitExceeded) {
		if ldap.IsErrorWithCode(err, ldap.LDAPResultNoSuchObject) {
			return id, nil // no group base yet: no groups
		}
		return Identity{}, classify("group search", err)
	}
	if res != nil {
		for _, e := range res.Entries {
			if g, err := NormalizeDN(e.DN); err == nil {
				id.Groups = append(id.Groups, g)
			}
		}
	}
	return id, nil
}

// maxGroups bounds the groups read for one user.
const maxGroups = 1000

func (d *Directory) timeLimit() int {
	return max(1, int(d.cfg.Timeout/time.Second))
}

// findUser searches the user bases for exactly one entry of name.
func (d *Directory) findUser(conn *ldap.Conn, name string) (string, error) {
	filter := UserFilter(d.cfg.UserFilter, name)
	var found []string
	for _, base := range d.cfg.UserBases {
		req := ldap.NewSearchRequest(base, ldap.ScopeWholeSubtree, ldap.NeverDerefAliases,
			2, d.timeLimit(), false, filter, []string{"1.1"}, nil)
		res, err := conn.Search(req)
		switch {
		case ldap.IsErrorWithCode(err, ldap.LDAPResultSizeLimitExceeded):
			return "", fmt.Errorf("%w: the user name matches several entries", ErrInvalidCredentials)
		case ldap.IsErrorWithCode(err, ldap.LDAPResultNoSuchObject):
			continue
		case err != nil:
			return "", classify("user search", err)
		}
		for _, e := range res.Entries {
			found = append(found, e.DN)
		}
	}
	switch len(found) {
	case 0:
		return "", fmt.Errorf("%w: no such user", ErrInvalidCredentials)
	case 1:
		return found[0], nil
	}
	return "", fmt.Errorf("%w: the user name matches several entries", ErrInvalidCredentials)
}

// lookupConn connects and binds with the lookup account.
func (d *Directory) lookupConn(ctx context.Context) (*ldap.Conn, error) {
	timeout := d.cfg.Timeout
	if dl, ok := ctx.Deadline(); ok {
		timeout = min(timeout, time.Until(dl))
		if timeout <= 0 {
			return nil, fmt.Errorf("%w: %w", ErrUnavailable, context.DeadlineExceeded)
		}
	}
	host, _, _ := net.SplitHostPort(d.cfg.Addr)
	tlsCfg := &tls.Config{ServerName: host, RootCAs: d.cfg.RootCAs, InsecureSkipVerify: d.cfg.SkipVerify, //nolint:gosec // the operator's TLS_SKIP_VERIFY
		MinVersion: tls.VersionTLS12}
	dialer := &net.Dialer{Timeout: timeout}
	var conn *ldap.Conn
	var err error
	if d.cfg.Insecure || d.cfg.StartTLS {
		conn, err = ldap.DialURL("ldap://"+d.cfg.Addr, ldap.DialWithDialer(dialer))
	} else {
		conn, err = ldap.DialURL("ldaps://"+d.cfg.Addr, ldap.DialWithDialer(dialer), ldap.DialWithTLSConfig(tlsCfg))
	}
	if err != nil {
		return nil, fmt.Errorf("%w: connect to %s: %s", ErrUnavailable, d.cfg.Addr, ldapMessage(err))
	}
	conn.SetTimeout(timeout)
	if d.cfg.StartTLS {
		if err := conn.StartTLS(tlsCfg); err != nil {
			conn.Close()
			return nil, fmt.Errorf("%w: StartTLS with %s: %s", ErrUnavailable, d.cfg.Addr, ldapMessage(err))
		}
	}
	if err := conn.Bind(d.cfg.LookupBindDN, d.cfg.LookupBindPassword); err != nil {
		conn.Close()
		return nil, fmt.Errorf("%w: lookup bind as %s: %s", ErrUnavailable, d.cfg.LookupBindDN, ldapMessage(err))
	}
	return conn, nil
}

// classify wraps a failed operation: a network error or a server
// refusal other than bad credentials makes the directory unavailable.
// The LDAP error stays reachable (errors.As), its text is ldapMessage's.
func classify(what string, err error) error {
	return &opError{msg: ErrUnavailable.Error() + ": " + what + ": " + ldapMessage(err), cause: err}
}

// opError is an unavailable directory's error: ErrUnavailable and the
// LDAP error under it.
type opError struct {
	msg   string
	cause error
}

func (e *opError) Error() string   { return e.msg }
func (e *opError) Unwrap() []error { return []error{ErrUnavailable, e.cause} }

// ldapMessage is an LDAP error's text, which holds result codes and
// server messages, never what was sent (no password).
func ldapMessage(err error) string {
	var le *ldap.Error
	if errors.As(err, &le) {
		msg := ldap.LDAPResultCodeMap[le.ResultCode]
		if le.Err != nil {
			msg += ": " + le.Err.Error()
		}
		return msg
	}
	return err.Error()
}
