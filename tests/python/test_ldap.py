"""LDAP sign-in (issue 45) with boto3 at default settings against the real
binary and a real OpenLDAP slapd started here: a test directory over LDAPS
with a CA made by openssl (test_tls's PKI), the server configured by MinIO's
MINIO_IDENTITY_LDAP_* variables, policies mapped to DNs with `shardstore admin
idp ldap policy`, credentials from STS AssumeRoleWithLDAPIdentity (a form POST,
as MinIO's clients send it) used by boto3: allowed and denied per mapped
policy, refused with STS's codes, revoked when the user leaves the directory,
and a clear IDPCommunicationError with slapd stopped while root works.

slapd comes from PATH or /usr/sbin; when missing it is installed from
Debian's packages (slapd, ldap-utils) with apt-get as root or with sudo -n.
Without it the tests skip and say why, unless SHARDSTORE_REQUIRE_SLAPD=1."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from botocore.exceptions import ClientError

from conftest import ROOT_PASSWORD, ROOT_USER, Server, _SERVERS
from test_iam import _admin, _admin_json, _client
from test_tls import PKI

SUFFIX = "dc=example,dc=org"
ADMIN_DN, ADMIN_PW = f"cn=admin,{SUFFIX}", "py-admin-pw"
LOOKUP_DN, LOOKUP_PW = f"cn=lookup,{SUFFIX}", "py-lookup-pw"
PEOPLE, GROUPS = f"ou=people,{SUFFIX}", f"ou=groups,{SUFFIX}"
USERS = {"ann": "ann-secret-pw", "ben": "ben-secret-pw", "cid": "cid-secret-pw"}  # cid is disabled
NS = {"sts": "https://sts.amazonaws.com/doc/2011-06-15/"}


def _dn(uid):
    return f"uid={uid},{PEOPLE}"


def _find_slapd() -> str:
    for p in (shutil.which("slapd"), "/usr/sbin/slapd"):
        if p and os.path.exists(p):
            return p
    return ""


def _slapd_or_skip() -> str:
    path = _find_slapd()
    if path:
        return path
    why = "slapd is not installed"
    if shutil.which("apt-get"):
        prefix = [] if os.geteuid() == 0 else (["sudo", "-n"] if subprocess.run(["sudo", "-n", "true"], capture_output=True).returncode == 0 else None)
        if prefix is not None:
            print("installing Debian's slapd and ldap-utils with apt-get for the LDAP tests")
            env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
            cmd = [*prefix, "apt-get", "install", "-y", "-q", "slapd", "ldap-utils"]
            if subprocess.run(cmd, env=env, capture_output=True).returncode != 0:
                subprocess.run([*prefix, "apt-get", "update", "-q"], env=env, capture_output=True)
                subprocess.run(cmd, env=env, capture_output=True)
            path = _find_slapd()
            if path:
                return path
            why = "installing slapd with apt-get failed"
        else:
            why = "slapd is not installed and installing it needs root"
    if os.environ.get("SHARDSTORE_REQUIRE_SLAPD"):
        pytest.fail(f"SHARDSTORE_REQUIRE_SLAPD is set and {why}", pytrace=False)
    pytest.skip(f"skipping the LDAP tests: {why} (set SHARDSTORE_REQUIRE_SLAPD=1 to make this a failure)")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Slapd:
    """A slapd on loopback with the test directory, LDAPS only."""

    def __init__(self, binary: str, base: Path):
        self.binary, self.base = binary, base
        base.mkdir(parents=True, exist_ok=True)
        self.pki = PKI(base / "pki")
        self.crt, self.key = self.pki.pair(base / "tls", "slapd test")
        self.ca = self.pki.ca_cert
        self.port = _free_port()
        self.addr = f"127.0.0.1:{self.port}"
        self.conf = base / "slapd.conf"
        (base / "db").mkdir(exist_ok=True)
        self.conf.write_text(
            "".join(f"include /etc/ldap/schema/{s}.schema\n" for s in ("core", "cosine", "inetorgperson"))
            + ("modulepath /usr/lib/ldap\nmoduleload back_mdb\n" if os.path.exists("/usr/lib/ldap/back_mdb.so") else "")
            + f"pidfile {base}/slapd.pid\n"
            + f"TLSCACertificateFile {self.ca}\nTLSCertificateFile {self.crt}\nTLSCertificateKeyFile {self.key}\n"
            + "access to attrs=userPassword by anonymous auth by * none\n"
            + f'access to * by dn.exact="{LOOKUP_DN}" read by * none\n'
            + f'database mdb\nsuffix "{SUFFIX}"\nrootdn "{ADMIN_DN}"\nrootpw {ADMIN_PW}\n'
            + f"directory {base}/db\nmaxsize 16777216\n"
        )
        entries = [
            [f"dn: {SUFFIX}", "objectClass: dcObject", "objectClass: organization", "o: example", "dc: example"],
            [f"dn: {LOOKUP_DN}", "objectClass: organizationalRole", "objectClass: simpleSecurityObject", "cn: lookup", f"userPassword: {LOOKUP_PW}"],
            [f"dn: {PEOPLE}", "objectClass: organizationalUnit", "ou: people"],
            [f"dn: {GROUPS}", "objectClass: organizationalUnit", "ou: groups"],
        ]
        for uid, pw in USERS.items():
            entries.append([f"dn: {_dn(uid)}", "objectClass: inetOrgPerson", f"uid: {uid}", f"cn: {uid}", f"sn: {uid}",
                            f"description: {'disabled' if uid == 'cid' else 'enabled'}", f"userPassword: {pw}"])
        entries.append([f"dn: cn=analysts,{GROUPS}", "objectClass: groupOfNames", "cn: analysts",
                        f"member: cn=placeholder,{SUFFIX}", f"member: {_dn('ann')}", f"member: {_dn('cid')}"])
        ldif = base / "data.ldif"
        ldif.write_text("\n".join("\n".join(e) + "\n" for e in entries))
        slapadd = shutil.which("slapadd") or "/usr/sbin/slapadd"
        res = subprocess.run([slapadd, "-f", str(self.conf), "-l", str(ldif)], capture_output=True, text=True)
        if res.returncode != 0:
            pytest.fail(f"slapadd: {res.stdout}{res.stderr}", pytrace=False)
        self.proc = None
        self.log = base / "slapd.log"
        self.start()

    def start(self):
        with open(self.log, "a") as log:
            self.proc = subprocess.Popen([self.binary, "-f", str(self.conf), "-d", "0", "-h", f"ldaps://{self.addr}/"],
                                         stdin=subprocess.DEVNULL, stdout=log, stderr=log)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.ldap("ldapwhoami").returncode == 0:
                return
            if self.proc.poll() is not None:
                pytest.fail(f"slapd exited: {self.log.read_text()[-2000:]}", pytrace=False)
            time.sleep(0.1)
        pytest.fail("slapd did not answer within 30s", pytrace=False)

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def ldap(self, tool: str, *args, stdin: str | None = None):
        """Run an ldap-utils tool as the directory's administrator over LDAPS."""
        env = dict(os.environ, LDAPTLS_CACERT=str(self.ca))
        return subprocess.run([tool, "-H", f"ldaps://{self.addr}", "-x", "-D", ADMIN_DN, "-w", ADMIN_PW, *args],
                              env=env, capture_output=True, text=True, input=stdin, timeout=30)

    def env(self) -> dict:
        """MinIO's variables for a server signing in against this directory."""
        p = "MINIO_IDENTITY_LDAP_"
        return {p + "SERVER_ADDR": self.addr, p + "LOOKUP_BIND_DN": LOOKUP_DN, p + "LOOKUP_BIND_PASSWORD": LOOKUP_PW,
                p + "USER_DN_SEARCH_BASE_DN": PEOPLE,
                p + "USER_DN_SEARCH_FILTER": "(&(objectClass=inetOrgPerson)(uid=%s)(!(description=disabled)))",
                p + "GROUP_SEARCH_BASE_DN": GROUPS, p + "GROUP_SEARCH_FILTER": "(&(objectClass=groupOfNames)(member=%d))",
                "SHARDSTORE_IDENTITY_LDAP_SERVER_CA": str(self.ca),
                "SHARDSTORE_IDENTITY_LDAP_RECHECK_INTERVAL": "0s"}


@pytest.fixture(scope="module")
def directory(tmp_path_factory):
    binary = _slapd_or_skip()
    if not shutil.which("ldapwhoami"):
        pytest.skip("skipping the LDAP tests: ldap-utils (ldapwhoami, ldapdelete) is not installed")
    d = Slapd(binary, tmp_path_factory.mktemp("slapd"))
    yield d
    d.stop()


@pytest.fixture(scope="module")
def ldap_server(request, shardstore_bin, directory, tmp_path_factory):
    """A server of its own (single or cluster, as the suite runs) whose
    environment names the directory, logging every request."""
    saved = dict(os.environ)
    os.environ.update(directory.env())
    try:
        srv = Server(shardstore_bin, tmp_path_factory.mktemp("ldapserver"), ["--log-requests", "--log-level", "debug"])
        srv.start()
    finally:
        os.environ.clear()
        os.environ.update(saved)
    request.config.stash.setdefault(_SERVERS, []).append(srv)
    yield srv
    request.config.stash[_SERVERS].remove(srv)
    srv.stop()


def _sts(srv, user, password, **extra):
    """AssumeRoleWithLDAPIdentity: (credentials dict, None) or (None, (code, status))."""
    form = {"Action": "AssumeRoleWithLDAPIdentity", "Version": "2011-06-15", "LDAPUsername": user, "LDAPPassword": password, **extra}
    req = urllib.request.Request(srv.endpoint + "/", data=urllib.parse.urlencode(form).encode(),
                                 headers={"Content-Type": "application/x-www-form-urlencoded"}, method="POST")
    try:
        with urllib.request.urlopen(req, timeout=60) as resp:
            body = resp.read()
    except urllib.error.HTTPError as e:
        root = ET.fromstring(e.read())
        code = root.find(".//sts:Error/sts:Code", NS)
        assert code is not None, f"STS answered {e.code} without an STS error"
        return None, (code.text, e.code)
    c = ET.fromstring(body).find(".//sts:AssumeRoleWithLDAPIdentityResult/sts:Credentials", NS)
    return {k: c.find(f"sts:{k}", NS).text for k in ("AccessKeyId", "SecretAccessKey", "SessionToken")}, None


def _session(srv, creds):
    return _client(srv, creds["AccessKeyId"], creds["SecretAccessKey"], creds["SessionToken"])


def _code(fn):
    with pytest.raises(ClientError) as e:
        fn()
    return e.value.response["Error"]["Code"]


def test_ldap_sign_in_with_boto3(ldap_server, shardstore_bin, directory):
    srv = ldap_server
    root = _client(srv, ROOT_USER, ROOT_PASSWORD)
    bucket = "ldap-data"
    root.create_bucket(Bucket=bucket)
    root.put_object(Bucket=bucket, Key="report.csv", Body=b"a,b\n")
    # analysts (ann, cid) read; ben's own DN reads and writes.
    _admin(srv, shardstore_bin, "idp", "ldap", "policy", "attach", "readonly", "--group", f"cn=analysts,{GROUPS}")
    _admin(srv, shardstore_bin, "idp", "ldap", "policy", "attach", "readwrite", "--user", _dn("ben"))
    listed = _admin_json(srv, shardstore_bin, "idp", "ldap", "policy", "list", "--policy", "readwrite")
    assert listed == [{"dn": _dn("ben"), "policies": ["readwrite"]}]

    ann_creds, err = _sts(srv, "ann", USERS["ann"])
    assert err is None, err
    ann = _session(srv, ann_creds)
    assert ann.get_object(Bucket=bucket, Key="report.csv")["Body"].read() == b"a,b\n"
    assert _code(lambda: ann.put_object(Bucket=bucket, Key="ann.txt", Body=b"x")) == "AccessDenied"

    ben_creds, err = _sts(srv, "ben", USERS["ben"], DurationSeconds="900")
    assert err is None, err
    ben = _session(srv, ben_creds)
    ben.put_object(Bucket=bucket, Key="ben.txt", Body=b"x")
    assert ben.get_object(Bucket=bucket, Key="ben.txt")["Body"].read() == b"x"

    # Refusals with STS's codes.
    for why, user, pw, want in [
        ("wrong password", "ann", "not-ann-pw", ("AccessDenied", 403)),
        ("disabled", "cid", USERS["cid"], ("AccessDenied", 403)),
        ("unknown", "zed", "zed-pw", ("AccessDenied", 403)),
        ("wildcard", "*", USERS["ann"], ("AccessDenied", 403)),
        ("injection", "ann)(uid=*", USERS["ann"], ("AccessDenied", 403)),
        ("no password", "ann", "", ("MissingParameter", 400)),
    ]:
        creds, err = _sts(srv, user, pw)
        assert err == want, f"{why}: {err}, want {want}"

    # ann leaves the directory: her session stops working.
    res = directory.ldap("ldapdelete", _dn("ann"))
    assert res.returncode == 0, res.stderr
    assert _code(lambda: ann.get_object(Bucket=bucket, Key="report.csv")) == "InvalidAccessKeyId"

    # slapd stops: sign-in fails clearly, root keeps working.
    directory.stop()
    try:
        creds, err = _sts(srv, "ben", USERS["ben"])
        assert err == ("IDPCommunicationError", 400), err
        assert root.get_object(Bucket=bucket, Key="report.csv")["Body"].read() == b"a,b\n"
    finally:
        directory.start()

    log = Path(srv.stderr_path).read_text(errors="replace")
    for secret in [*USERS.values(), "not-ann-pw", LOOKUP_PW, ann_creds["SecretAccessKey"], ann_creds["SessionToken"]]:
        assert secret not in log, f"the server log holds a secret ({secret[:4]}...)"
