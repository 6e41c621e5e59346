// Package slapdtest runs a real OpenLDAP server (slapd) for the tests of
// LDAP sign-in: on loopback, with a temporary configuration (slapd -f),
// a test CA and a server certificate for 127.0.0.1, an LDAPS port and a
// plain port that offers StartTLS, and a small test directory loaded
// with slapadd:
//
//	dc=example,dc=org
//	  cn=lookup            the read-only lookup account (password LookupPassword)
//	  ou=people            uid=alice, uid=bob, uid=carol (disabled: description=disabled),
//	                       uid=dave (not in any group); password "<uid>-pw"
//	  ou=groups            cn=readers (alice, carol), cn=writers (bob)
//
// slapd comes from PATH or /usr/sbin; when it is missing the harness
// installs Debian's slapd and ldap-utils with apt-get (as root or with
// sudo -n, through testinstall.Find), saying so. Without it a test is
// skipped, unless SHARDSTORE_REQUIRE_SLAPD is set (scripts/test sets
// it), where that is a failure.
package slapdtest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-ldap/ldap/v3"

	"github.com/shardstore/shardstore/internal/testinstall"
)

// The test directory's names.
const (
	Suffix         = "dc=example,dc=org"
	AdminDN        = "cn=admin," + Suffix
	AdminPassword  = "admin-secret-pw"
	LookupDN       = "cn=lookup," + Suffix
	LookupPassword = "lookup-secret-pw"
	PeopleDN       = "ou=people," + Suffix
	GroupsDN       = "ou=groups," + Suffix
	// UserFilter excludes disabled accounts, as an operator's
	// USER_DN_SEARCH_FILTER does.
	UserFilter  = "(&(objectClass=inetOrgPerson)(uid=%s)(!(description=disabled)))"
	GroupFilter = "(&(objectClass=groupOfNames)(member=%d))"
)

// Users of the test directory (each one's password is Password(uid)).
var Users = []string{"alice", "bob", "carol", "dave"}

// Password is a test user's password.
func Password(uid string) string { return uid + "-pw" }

// UserDN is a test user's DN.
func UserDN(uid string) string { return "uid=" + uid + "," + PeopleDN }

// GroupDN is a test group's DN.
func GroupDN(cn string) string { return "cn=" + cn + "," + GroupsDN }

// program is where slapd comes from: PATH or /usr/sbin, else Debian's
// slapd and ldap-utils.
var program = testinstall.Program{Name: "slapd", Paths: []string{"slapd", "/usr/sbin/slapd"},
	Apt: []string{"slapd", "ldap-utils"}, Recommends: true, Require: "SHARDSTORE_REQUIRE_SLAPD", Tests: "the LDAP tests"}

// Binary returns slapd's path, installing it on first use, or skips the
// test (fails it with SHARDSTORE_REQUIRE_SLAPD set).
func Binary(t testing.TB) string {
	t.Helper()
	return testinstall.Find(t, program)
}

// Server is a running slapd.
type Server struct {
	t      testing.TB
	bin    string
	dir    string
	conf   string
	proc   *testinstall.Process
	LDAPS  string // 127.0.0.1:PORT of LDAPS
	LDAP   string // 127.0.0.1:PORT of plain LDAP with StartTLS
	CAFile string // the test CA (PEM)
	CA     *x509.CertPool
}

// Start runs slapd with the test directory; it is stopped when the test
// ends.
func Start(t testing.TB) *Server {
	t.Helper()
	bin := Binary(t)
	dir := t.TempDir()
	s := &Server{t: t, bin: bin, dir: dir, conf: filepath.Join(dir, "slapd.conf")}
	if err := s.writeCerts(); err != nil {
		t.Fatalf("slapd test certificates: %v", err)
	}
	mods := "/usr/lib/ldap"
	if _, err := os.Stat(filepath.Join(mods, "back_mdb.so")); err != nil {
		mods = ""
	}
	var conf strings.Builder
	for _, sch := range []string{"core", "cosine", "inetorgperson"} {
		fmt.Fprintf(&conf, "include /etc/ldap/schema/%s.schema\n", sch)
	}
	if mods != "" {
		fmt.Fprintf(&conf, "modulepath %s\nmoduleload back_mdb\n", mods)
	}
	fmt.Fprintf(&conf, "pidfile %s\n", filepath.Join(dir, "slapd.pid"))
	fmt.Fprintf(&conf, "TLSCACertificateFile %s\nTLSCertificateFile %s\nTLSCertificateKeyFile %s\n",
		s.CAFile, filepath.Join(dir, "server.crt"), filepath.Join(dir, "server.key"))
	// Passwords are compared by slapd; only the lookup account and the
	// administrator read entries, users only authenticate.
	fmt.Fprintf(&conf, "access to attrs=userPassword by anonymous auth by * none\n")
	fmt.Fprintf(&conf, "access to * by dn.exact=%q read by * none\n", LookupDN)
	fmt.Fprintf(&conf, "database mdb\nsuffix %q\nrootdn %q\nrootpw %s\ndirectory %s\nmaxsize 16777216\n",
		Suffix, AdminDN, AdminPassword, filepath.Join(dir, "db"))
	if err := os.MkdirAll(filepath.Join(dir, "db"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(s.conf, []byte(conf.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	ldif := filepath.Join(dir, "data.ldif")
	if err := os.WriteFile(ldif, []byte(testLDIF()), 0o600); err != nil {
		t.Fatal(err)
	}
	slapadd := filepath.Join(filepath.Dir(bin), "slapadd")
	if _, err := os.Stat(slapadd); err != nil {
		slapadd = bin // slapadd is slapd under another name
	}
	if slapadd == bin {
		testinstall.RunCommand(t, nil, dir, bin, "-T", "add", "-f", s.conf, "-l", ldif)
	} else {
		testinstall.RunCommand(t, nil, dir, slapadd, "-f", s.conf, "-l", ldif)
	}
	s.LDAPS, s.LDAP = testinstall.FreeAddr(t), testinstall.FreeAddr(t)
	// -d 0: stay in the foreground, so the test owns the process.
	s.proc = &testinstall.Process{Name: "slapd", Addr: s.LDAPS, StartTimeout: 30 * time.Second,
		Args: []string{bin, "-f", s.conf, "-d", "0", "-h", "ldap://" + s.LDAP + "/ ldaps://" + s.LDAPS + "/"},
		Ready: func() error {
			c, err := s.Admin()
			if err == nil {
				c.Close()
			}
			return err
		}}
	s.Restart()
	t.Cleanup(s.Stop)
	return s
}

// Restart starts slapd again after Stop (the directory is kept).
func (s *Server) Restart() {
	s.t.Helper()
	s.proc.Start(s.t)
}

// Stop ends slapd (SIGTERM, then waits until its ports refuse).
func (s *Server) Stop() {
	s.t.Helper()
	s.proc.Stop(s.t)
}

// Admin connects over LDAPS as the directory's administrator.
func (s *Server) Admin() (*ldap.Conn, error) {
	c, err := ldap.DialURL("ldaps://"+s.LDAPS, ldap.DialWithTLSConfig(&tls.Config{RootCAs: s.CA, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12}))
	if err != nil {
		return nil, err
	}
	c.SetTimeout(10 * time.Second)
	if err := c.Bind(AdminDN, AdminPassword); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

func (s *Server) admin() *ldap.Conn {
	s.t.Helper()
	c, err := s.Admin()
	if err != nil {
		s.t.Fatalf("bind to slapd as its administrator: %v", err)
	}
	return c
}

// DeleteUser removes a user's entry (its group memberships stay, as an
// administrator's plain delete leaves them).
func (s *Server) DeleteUser(uid string) {
	s.t.Helper()
	c := s.admin()
	defer c.Close()
	if err := c.Del(ldap.NewDelRequest(UserDN(uid), nil)); err != nil {
		s.t.Fatalf("delete %s: %v", uid, err)
	}
}

// SetDisabled marks a user disabled (description=disabled, which
// UserFilter excludes) or enabled again.
func (s *Server) SetDisabled(uid string, disabled bool) {
	s.t.Helper()
	c := s.admin()
	defer c.Close()
	m := ldap.NewModifyRequest(UserDN(uid), nil)
	if disabled {
		m.Replace("description", []string{"disabled"})
	} else {
		m.Replace("description", []string{"enabled"})
	}
	if err := c.Modify(m); err != nil {
		s.t.Fatalf("modify %s: %v", uid, err)
	}
}

// SetMember adds uid to group cn or removes it.
func (s *Server) SetMember(cn, uid string, member bool) {
	s.t.Helper()
	c := s.admin()
	defer c.Close()
	m := ldap.NewModifyRequest(GroupDN(cn), nil)
	if member {
		m.Add("member", []string{UserDN(uid)})
	} else {
		m.Delete("member", []string{UserDN(uid)})
	}
	if err := c.Modify(m); err != nil {
		s.t.Fatalf("group %s member %s: %v", cn, uid, err)
	}
}

// Settings are the LDAP settings (ldapidp.Settings names) of a server
// signing in against this directory: LDAPS, or StartTLS on the plain
// port with startTLS.
func (s *Server) Settings(startTLS bool) map[string]string {
	m := map[string]string{
		"SERVER_ADDR": s.LDAPS, "LOOKUP_BIND_DN": LookupDN, "LOOKUP_BIND_PASSWORD": LookupPassword,
		"USER_DN_SEARCH_BASE_DN": PeopleDN, "USER_DN_SEARCH_FILTER": UserFilter,
		"GROUP_SEARCH_BASE_DN": GroupsDN, "GROUP_SEARCH_FILTER": GroupFilter,
		"SERVER_CA": s.CAFile,
	}
	if startTLS {
		m["SERVER_ADDR"], m["SERVER_STARTTLS"] = s.LDAP, "on"
	}
	return m
}

// Env is Settings as SHARDSTORE_IDENTITY_LDAP_* environment entries
// (MinIO's names with minio).
func (s *Server) Env(startTLS, minio bool) []string {
	prefix := "SHARDSTORE_IDENTITY_LDAP_"
	if minio {
		prefix = "MINIO_IDENTITY_LDAP_"
	}
	var out []string
	for k, v := range s.Settings(startTLS) {
		if k == "SERVER_CA" { // ours only
			out = append(out, "SHARDSTORE_IDENTITY_LDAP_"+k+"="+v)
			continue
		}
		out = append(out, prefix+k+"="+v)
	}
	return out
}

func testLDIF() string {
	var b strings.Builder
	entry := func(lines ...string) { b.WriteString(strings.Join(lines, "\n") + "\n\n") }
	entry("dn: "+Suffix, "objectClass: dcObject", "objectClass: organization", "o: example", "dc: example")
	entry("dn: "+LookupDN, "objectClass: organizationalRole", "objectClass: simpleSecurityObject", "cn: lookup", "userPassword: "+LookupPassword)
	entry("dn: "+PeopleDN, "objectClass: organizationalUnit", "ou: people")
	entry("dn: "+GroupsDN, "objectClass: organizationalUnit", "ou: groups")
	for _, u := range Users {
		desc := "enabled"
		if u == "carol" {
			desc = "disabled"
		}
		entry("dn: "+UserDN(u), "objectClass: inetOrgPerson", "uid: "+u, "cn: "+u, "sn: "+u,
			"description: "+desc, "userPassword: "+Password(u))
	}
	// groupOfNames needs a member: a placeholder DN keeps a group that
	// the tests empty valid.
	const placeholder = "member: cn=placeholder," + Suffix
	entry("dn: "+GroupDN("readers"), "objectClass: groupOfNames", "cn: readers", placeholder, "member: "+UserDN("alice"), "member: "+UserDN("carol"))
	entry("dn: "+GroupDN("writers"), "objectClass: groupOfNames", "cn: writers", placeholder, "member: "+UserDN("bob"))
	return b.String()
}

// writeCerts makes a test CA and a certificate for 127.0.0.1 signed by
// it, in PEM files slapd reads.
func (s *Server) writeCerts() error {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	now := time.Now()
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "slapdtest CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return err
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		return err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost"},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
	if err != nil {
		return err
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return err
	}
	s.CAFile = filepath.Join(s.dir, "ca.crt")
	files := map[string][]byte{
		s.CAFile:                           pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		filepath.Join(s.dir, "server.crt"): pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		filepath.Join(s.dir, "server.key"): pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}),
	}
	for p, b := range files {
		if err := os.WriteFile(p, b, 0o600); err != nil {
			return err
		}
	}
	s.CA = x509.NewCertPool()
	if !s.CA.AppendCertsFromPEM(files[s.CAFile]) {
		return fmt.Errorf("test CA does not parse")
	}
	return nil
}
