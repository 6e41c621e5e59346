"""TLS end to end: the server reads a MinIO-style certificates directory
written by the `openssl` command line, and real clients at their default
settings (boto3, the aws cli, curl, `openssl s_client`, `shardstore admin`)
reach it over HTTPS when they trust the test CA, and are refused when they
do not.

Everything here is made with openssl as an operator would: a CA from
`openssl req -x509`, leaf certificates from `openssl x509 -req` (and `openssl
ca` for one whose validity lies in the past), keys in each form openssl
writes (`genrsa -traditional`, PKCS#8, `ecparam -genkey` with its EC
PARAMETERS block, Ed25519, encrypted PKCS#8, legacy-encrypted PEM). So the
tests prove that we read what OpenSSL writes, not what our own Go code
writes.

One server (a cluster of SHARDSTORE_TEST_CLUSTER nodes in cluster mode, each
with its own certificate and the CA in its CAs/, so the nodes verify each
other) serves the client checks, the protocol and SNI checks and, last, the
rotation. The checks of what one process does with its certificates
directory (key forms, refused material, an expired certificate, a chain with
an intermediate, the directory named by the environment, a Kubernetes-style
symlink swap, SIGHUP without certificates) and the default-credentials rule
start short-lived servers of their own on 4 drives (~0.3 s each); a cluster
node runs the same code, so they are left to the single-server run.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from conftest import (
    CLUSTER_NODES,
    REGION,
    ROOT_PASSWORD,
    ROOT_USER,
    Server,
    empty_and_delete_bucket,
    https_certs_dirs,
    start_https_server,
    stop_https_server,
    unique_bucket_name,
)
from s3util import MiB

# The certificate of node 1 (the single server) and the names its SNI
# subdirectories answer for.
DEFAULT_CN = "shardstore node 1"
SNI_RSA = "s3.one.test"
SNI_EC = "s3.two.test"
DEFAULT_SAN = "IP Address:127.0.0.1, DNS:localhost"  # as openssl x509 -text prints IP:127.0.0.1,DNS:localhost

# Password of the encrypted keys (a test value, passed to openssl as pass:).
KEY_PASSWORD = "tls-test-key-password-42"

HTTPS_MESSAGE = "Client sent an HTTP request to an HTTPS server"

# The certificates directory is polled every 5 s; a new connection must
# see a replaced certificate within this.
ROTATION_DEADLINE_S = 12

SINGLE_ONLY = pytest.mark.skipif(
    CLUSTER_NODES > 1,
    reason="starts a single server of its own on 4 drives to check what one process does with its "
    "certificates directory or credentials; a cluster node runs the same code, and the single-server run covers it",
)


def _tool(name: str) -> str:
    path = shutil.which(name)
    if not path:
        pytest.fail(f"`{name}` is not on PATH: these tests need the real {name} command line", pytrace=False)
    return path


def openssl(*args, check: bool = True, timeout: float = 60) -> subprocess.CompletedProcess:
    """Run the openssl command line; check=True fails the test on a non-zero exit."""
    res = subprocess.run([_tool("openssl"), *map(str, args)], stdin=subprocess.DEVNULL,
                         capture_output=True, text=True, timeout=timeout)
    if check and res.returncode != 0:
        pytest.fail(f"openssl {' '.join(map(str, args))}: exit {res.returncode}\n{res.stdout}{res.stderr}", pytrace=False)
    return res


def curl_env() -> dict:
    """The environment without the variables that point curl (and OpenSSL)
    at a CA bundle: each call says what it trusts."""
    env = dict(os.environ)
    for k in ("CURL_CA_BUNDLE", "SSL_CERT_FILE", "SSL_CERT_DIR"):
        env.pop(k, None)
    return env


def curl(*args, timeout: float = 60) -> subprocess.CompletedProcess:
    """Run curl (-q: no ~/.curlrc) with a bounded time."""
    return subprocess.run([_tool("curl"), "-q", "-sS", "--max-time", "20", *map(str, args)], env=curl_env(),
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout)


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(MiB), b""):
            h.update(block)
    return h.hexdigest()


def write_random(path: Path, size: int) -> Path:
    with open(path, "wb") as f:
        left = size
        while left:
            n = min(left, MiB)
            f.write(os.urandom(n))
            left -= n
    return path


def port_of(endpoint: str) -> int:
    return int(endpoint.rsplit(":", 1)[1])


def endpoints(srv: Server) -> list[str]:
    """Every node's endpoint (the one endpoint of a single server)."""
    return list(srv.node_endpoints) or [srv.endpoint]


# -- the test PKI --------------------------------------------------------------

# Key forms as openssl writes them: form -> (PEM BEGIN lines expected in the
# file, in order, and whether it is encrypted).
KEY_FORMS = {
    "rsa-pkcs1": (["RSA PRIVATE KEY"], False),  # openssl genrsa -traditional
    "rsa-pkcs8": (["PRIVATE KEY"], False),  # openssl genrsa (3.x writes PKCS#8)
    "ec-sec1": (["EC PARAMETERS", "EC PRIVATE KEY"], False),  # openssl ecparam -genkey
    "ec-pkcs8": (["PRIVATE KEY"], False),  # openssl genpkey -algorithm EC (P-384)
    "ed25519": (["PRIVATE KEY"], False),  # openssl genpkey -algorithm ED25519
    "rsa-pkcs8-aes256": (["ENCRYPTED PRIVATE KEY"], True),  # openssl pkcs8 -topk8 -v2 aes256
    "ec-genpkey-aes256": (["ENCRYPTED PRIVATE KEY"], True),  # openssl genpkey ... -aes256
    "rsa-legacy-aes256": (["RSA PRIVATE KEY"], True),  # openssl rsa -aes256 -traditional (Proc-Type)
    "rsa-pkcs8-pbes1": (["ENCRYPTED PRIVATE KEY"], True),  # openssl pkcs8 -topk8 -v1 PBE-SHA1-3DES (not read)
}


class PKI:
    """A test certificate authority, made and used with the openssl command
    line at its defaults: `openssl req -x509` for the CA, `openssl x509 -req`
    for the certificates it signs."""

    def __init__(self, root: Path):
        self.root = root
        root.mkdir(parents=True, exist_ok=True)
        self.ca_key = root / "ca.key"
        self.ca_cert = root / "ca.crt"
        openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", self.ca_key, "-out", self.ca_cert,
                "-days", "365", "-subj", "/CN=shardstore TLS test CA",
                "-addext", "basicConstraints=critical,CA:TRUE",
                "-addext", "keyUsage=critical,keyCertSign,cRLSign")
        self._n = 0

    def _tmp(self, suffix: str) -> Path:
        self._n += 1
        return self.root / f"work{self._n}{suffix}"

    def _ext(self, sans: str | None) -> Path:
        """The extensions of a leaf certificate for sans, or of an
        intermediate CA when sans is None."""
        ext = self._tmp(".ext")
        if sans is None:
            ext.write_text(
                "basicConstraints=critical,CA:TRUE,pathlen:0\n"
                "keyUsage=critical,keyCertSign,cRLSign\n"
                "subjectKeyIdentifier=hash\n"
                "authorityKeyIdentifier=keyid,issuer\n"
            )
            return ext
        ext.write_text(
            "basicConstraints=critical,CA:FALSE\n"
            "keyUsage=critical,digitalSignature\n"
            "extendedKeyUsage=serverAuth,clientAuth\n"
            f"subjectAltName={sans}\n"
            "subjectKeyIdentifier=hash\n"
            "authorityKeyIdentifier=keyid,issuer\n"
        )
        return ext

    def key(self, out: Path, form: str = "rsa-pkcs8") -> Path:
        """Write a private key in one of KEY_FORMS (encrypted ones with
        KEY_PASSWORD) and check openssl wrote the form named."""
        out.parent.mkdir(parents=True, exist_ok=True)
        if form == "rsa-pkcs1":
            openssl("genrsa", "-traditional", "-out", out, "2048")
        elif form == "rsa-pkcs8":
            openssl("genrsa", "-out", out, "2048")
        elif form == "ec-sec1":
            openssl("ecparam", "-name", "prime256v1", "-genkey", "-out", out)
        elif form == "ec-pkcs8":
            openssl("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-384", "-out", out)
        elif form == "ed25519":
            openssl("genpkey", "-algorithm", "ED25519", "-out", out)
        elif form == "rsa-pkcs8-aes256":
            plain = self._tmp(".key")
            openssl("genrsa", "-out", plain, "2048")
            openssl("pkcs8", "-topk8", "-v2", "aes256", "-in", plain, "-passout", f"pass:{KEY_PASSWORD}", "-out", out)
        elif form == "ec-genpkey-aes256":
            openssl("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-aes256",
                    "-pass", f"pass:{KEY_PASSWORD}", "-out", out)
        elif form == "rsa-pkcs8-pbes1":
            plain = self._tmp(".key")
            openssl("genrsa", "-out", plain, "2048")
            openssl("pkcs8", "-topk8", "-v1", "PBE-SHA1-3DES", "-in", plain, "-passout", f"pass:{KEY_PASSWORD}", "-out", out)
        elif form == "rsa-legacy-aes256":
            plain = self._tmp(".key")
            openssl("genrsa", "-traditional", "-out", plain, "2048")
            openssl("rsa", "-in", plain, "-aes256", "-traditional", "-passout", f"pass:{KEY_PASSWORD}", "-out", out)
        else:
            raise ValueError(form)
        text = out.read_text()
        blocks, encrypted = KEY_FORMS[form]
        assert re.findall(r"^-----BEGIN ([A-Z ]+)-----$", text, re.M) == blocks, f"openssl wrote {form} as:\n{text[:200]}"
        if form == "rsa-legacy-aes256":
            assert "Proc-Type: 4,ENCRYPTED" in text
        return out

    def _csr(self, key: Path, cn: str, encrypted: bool) -> Path:
        csr = self._tmp(".csr")
        extra = ["-passin", f"pass:{KEY_PASSWORD}"] if encrypted else []
        openssl("req", "-new", "-key", key, *extra, "-subj", f"/CN={cn}", "-out", csr)
        return csr

    def cert(self, key: Path, out: Path, cn: str, sans: str | None, serial: int | None = None,
             encrypted: bool = False, issuer: tuple[Path, Path] | None = None) -> Path:
        """Sign a certificate for key with the CA, or with issuer = (its
        certificate, its key); 365 days, a random serial unless one is
        given. sans=None makes an intermediate CA."""
        ca_cert, ca_key = issuer or (self.ca_cert, self.ca_key)
        csr = self._csr(key, cn, encrypted)
        serial_args = ["-set_serial", hex(serial)] if serial is not None else []
        openssl("x509", "-req", "-in", csr, "-CA", ca_cert, "-CAkey", ca_key, *serial_args,
                "-days", "365", "-extfile", self._ext(sans), "-out", out)
        return out

    def intermediate(self, cn: str = "shardstore TLS test intermediate") -> tuple[Path, Path]:
        """An intermediate CA signed by the CA: (its certificate, its key)."""
        key = self.key(self._tmp("-int.key"), "ec-pkcs8")
        return self.cert(key, self._tmp("-int.crt"), cn, None), key

    def expired_cert(self, key: Path, out: Path, cn: str, sans: str) -> Path:
        """A certificate valid only in January 2020: openssl 3.0's x509 has
        no -not_before/-not_after, so `openssl ca` with a minimal
        configuration signs it with -startdate/-enddate."""
        db = self._tmp("-ca")
        (db / "new").mkdir(parents=True)
        (db / "index.txt").write_text("")
        (db / "serial").write_text("2001\n")
        ext = self._ext(sans).read_text()
        cnf = db / "ca.cnf"
        cnf.write_text(
            "[ ca ]\ndefault_ca = test_ca\n"
            "[ test_ca ]\n"
            f"database = {db}/index.txt\nnew_certs_dir = {db}/new\nserial = {db}/serial\n"
            f"certificate = {self.ca_cert}\nprivate_key = {self.ca_key}\n"
            "default_md = sha256\npolicy = any_name\nunique_subject = no\nx509_extensions = leaf\n"
            "[ any_name ]\ncommonName = supplied\n"
            f"[ leaf ]\n{ext}"
        )
        csr = self._csr(key, cn, False)
        openssl("ca", "-batch", "-config", cnf, "-notext", "-in", csr, "-out", out,
                "-startdate", "20200101000000Z", "-enddate", "20200131000000Z")
        return out

    def pair(self, directory: Path, cn: str, sans: str = "IP:127.0.0.1,DNS:localhost", form: str = "rsa-pkcs8",
             serial: int | None = None, key: Path | None = None) -> tuple[Path, Path]:
        """directory/public.crt + directory/private.key (a new key of the
        form given, or a copy of key)."""
        directory.mkdir(parents=True, exist_ok=True)
        key_path = directory / "private.key"
        if key is not None:
            shutil.copyfile(key, key_path)
        else:
            self.key(key_path, form)
        crt = self.cert(key_path, directory / "public.crt", cn, sans, serial=serial, encrypted=KEY_FORMS[form][1])
        return crt, key_path

    def certs_dir(self, directory: Path, cn: str, with_ca: bool = True) -> Path:
        """A certificates directory: public.crt/private.key for 127.0.0.1
        and localhost, and the CA in CAs/ (so a cluster node trusts the
        others)."""
        self.pair(directory, cn)
        if with_ca:
            (directory / "CAs").mkdir(exist_ok=True)
            shutil.copyfile(self.ca_cert, directory / "CAs" / "test-ca.crt")
        return directory


# -- what a TLS client is shown ------------------------------------------------


def peer_cert(port: int, ca: Path, server_name: str | None = None) -> dict:
    """The certificate a new connection to 127.0.0.1:port is given, verified
    against ca (for server_name, sent by SNI, or for the IP address)."""
    ctx = ssl.create_default_context(cafile=str(ca))
    with socket.create_connection(("127.0.0.1", port), timeout=10) as raw:
        with ctx.wrap_socket(raw, server_hostname=server_name or "127.0.0.1") as tls:
            return tls.getpeercert()


def common_name(cert: dict) -> str:
    for rdn in cert.get("subject", ()):
        for k, v in rdn:
            if k == "commonName":
                return v
    return ""


def s_client(port: int, *args, ca: Path | None = None) -> subprocess.CompletedProcess:
    """`openssl s_client -connect 127.0.0.1:port ARGS` with nothing to send."""
    extra = ["-CAfile", ca] if ca else []
    return openssl("s_client", "-connect", f"127.0.0.1:{port}", *extra, *args, check=False, timeout=30)


def served_certificate_text(s_client_out: str) -> str:
    """`openssl x509 -text` of the server certificate s_client printed."""
    m = re.search(r"-----BEGIN CERTIFICATE-----.+?-----END CERTIFICATE-----\n", s_client_out, re.S)
    assert m, f"s_client printed no server certificate:\n{s_client_out[-2000:]}"
    res = subprocess.run([_tool("openssl"), "x509", "-noout", "-text"], input=m.group(0), capture_output=True,
                         text=True, timeout=30)
    assert res.returncode == 0, res.stderr
    return res.stdout


def san_of(cert_text: str) -> str:
    m = re.search(r"X509v3 Subject Alternative Name:.*?\n\s*(.+)\n", cert_text)
    return m.group(1).strip() if m else ""


# -- servers of their own ------------------------------------------------------


class Standalone:
    """One `shardstore server` on 4 drives of its own with the given flags
    and environment, for the checks of what a start reads. HOME is its
    directory, so no ~/.shardstore/certs of the machine is read."""

    def __init__(self, binary: Path, base: Path, args: list, env: dict | None = None, drop: tuple = ()):
        self.base = base
        base.mkdir(parents=True, exist_ok=True)
        self.out_path, self.err_path = base / "stdout", base / "stderr"
        e = dict(os.environ, SHARDSTORE_ROOT_USER=ROOT_USER, SHARDSTORE_ROOT_PASSWORD=ROOT_PASSWORD,
                 SHARDSTORE_ALLOW_ROOT_DRIVES="1", HOME=str(base))
        for k in ("SHARDSTORE_CERTS_DIR", "MINIO_CERTS_DIR", "SHARDSTORE_CERT_PASSWD", "MINIO_CERT_PASSWD",
                  "MINIO_ROOT_USER", "MINIO_ROOT_PASSWORD", "SHARDSTORE_ALLOW_DEFAULT_CREDENTIALS", *drop):
            e.pop(k, None)
        e.update(env or {})
        # No console unless args names an address (the last of a repeated
        # flag counts).
        cmd = [str(binary), "server", "--console-address", "", *map(str, args), f"{base}/drives/d{{1...4}}"]
        with open(self.out_path, "w") as out, open(self.err_path, "w") as err:
            self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=err, env=e, cwd=base)
        self.endpoint = ""

    def stdout(self) -> str:
        return self.out_path.read_text(errors="replace")

    def stderr(self) -> str:
        return self.err_path.read_text(errors="replace")

    def log(self) -> str:
        return f"--- stdout ---\n{self.stdout()[-3000:]}\n--- stderr ---\n{self.stderr()[-3000:]}"

    def wait_endpoint(self, timeout: float = 30) -> str:
        """The `S3 endpoint: URL` line; fails the test if the server exits."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            m = re.search(r"^S3 endpoint: (\S+)$", self.stdout(), re.M)
            if m:
                self.endpoint = m.group(1)
                return self.endpoint
            if self.proc.poll() is not None:
                pytest.fail(f"server exited with code {self.proc.returncode} before printing its endpoint\n{self.log()}",
                            pytrace=False)
            time.sleep(0.05)
        pytest.fail(f"no 'S3 endpoint:' line within {timeout}s\n{self.log()}", pytrace=False)

    def wait_exit(self, timeout: float = 30) -> int:
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            pytest.fail(f"server still running {timeout}s after start; expected it to refuse\n{self.log()}",
                        pytrace=False)

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


def wait_ready(url: str, ca: Path | None, timeout: float = 30) -> None:
    """GET url/shardstore/health/ready until 200, trusting ca for https."""
    ctx = ssl.create_default_context(cafile=str(ca)) if ca else None
    deadline = time.monotonic() + timeout
    last = "no answer"
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"{url}/shardstore/health/ready", timeout=5, context=ctx) as resp:
                if resp.status == 200:
                    return
        except urllib.error.HTTPError as e:
            last = f"HTTP {e.code}"
        except OSError as e:
            last = repr(e)
        time.sleep(0.1)
    pytest.fail(f"{url}/shardstore/health/ready not 200 within {timeout}s (last: {last})", pytrace=False)


# -- fixtures ------------------------------------------------------------------


@pytest.fixture(scope="module")
def pki(tmp_path_factory) -> PKI:
    return PKI(tmp_path_factory.mktemp("pki"))


@pytest.fixture(scope="module")
def tls_server(request, shardstore_bin, tmp_path_factory, pki):
    """A server (or cluster) serving HTTPS with certificates signed by the
    test CA for IP:127.0.0.1 and DNS:localhost, 16 drives like conftest's.
    Node 1's directory also holds two SNI certificates: s3.one.test (RSA,
    PKCS#1 key) and s3.two.test (ECDSA, SEC1 key)."""
    base = tmp_path_factory.mktemp("tls-server")
    dirs = https_certs_dirs(pki, base, "shardstore")
    pki.pair(dirs[0] / "one", SNI_RSA, sans=f"DNS:{SNI_RSA}", form="rsa-pkcs1")
    pki.pair(dirs[0] / "two", SNI_EC, sans=f"DNS:{SNI_EC}", form="ec-sec1")
    srv = start_https_server(request, shardstore_bin, base, pki.ca_cert, dirs, "TLS server")
    srv.certs_dir = dirs[0]
    yield srv
    code = stop_https_server(request, srv)
    assert code in (0, None), f"TLS server exited with code {code} on SIGTERM\n{srv.log_tail(40)}"


@pytest.fixture
def tls(tls_server):
    """The module's TLS server; a test during which it dies fails."""
    if not tls_server.alive():
        pytest.fail(f"the TLS server is not running (it died in an earlier test)\n{tls_server.log_tail()}",
                    pytrace=False)
    yield tls_server
    if not tls_server.alive():
        pytest.fail(f"the TLS server died during this test\n{tls_server.log_tail()}", pytrace=False)


@pytest.fixture(scope="module")
def tls_bucket(tls_server):
    name = unique_bucket_name("tls")
    tls_server.client().create_bucket(Bucket=name)
    yield name
    if tls_server.alive():
        empty_and_delete_bucket(tls_server.client(), name)


def boto3_client(endpoint: str, verify=None):
    """A boto3 S3 client at default settings; verify is boto3's own
    argument (None: its default trust)."""
    import boto3

    session = boto3.session.Session(aws_access_key_id=ROOT_USER, aws_secret_access_key=ROOT_PASSWORD,
                                    region_name=REGION)
    return session.client("s3", endpoint_url=endpoint, verify=verify)


def aws_cli(endpoint: str, *args, ca: Path | None = None, cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    """The venv's aws cli (v1) as root against endpoint, with --ca-bundle
    when ca is given."""
    full_env = dict(os.environ, AWS_ACCESS_KEY_ID=ROOT_USER, AWS_SECRET_ACCESS_KEY=ROOT_PASSWORD,
                    AWS_DEFAULT_REGION=REGION, AWS_PAGER="")
    full_env.update(env or {})
    cmd = [sys.executable, "-m", "awscli", *map(str, args), "--endpoint-url", endpoint]
    if ca:
        cmd += ["--ca-bundle", str(ca)]
    return subprocess.run(cmd, env=full_env, cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=300)


def check_ok(res: subprocess.CompletedProcess) -> subprocess.CompletedProcess:
    assert res.returncode == 0, f"{' '.join(map(str, res.args))}: exit {res.returncode}\n{res.stdout}\n{res.stderr}"
    return res


# -- clients that trust the CA, and those that do not --------------------------


def test_aws_cli_with_ca_bundle(tls, pki, tmp_path):
    """The aws cli with --ca-bundle: mb, cp of 20 MiB up (multipart) and down
    byte-identical, ls; in a cluster the download goes through node 2.
    Without the bundle it refuses the server's certificate."""
    eps = endpoints(tls)
    name = unique_bucket_name("tls-cli")
    res = check_ok(aws_cli(eps[0], "s3", "mb", f"s3://{name}", ca=pki.ca_cert, cwd=tmp_path))
    assert f"make_bucket: {name}" in res.stdout
    try:
        src = write_random(tmp_path / "big.bin", 20 * MiB)
        check_ok(aws_cli(eps[0], "s3", "cp", src, f"s3://{name}/dir/big.bin", ca=pki.ca_cert, cwd=tmp_path))
        head = tls.client().head_object(Bucket=name, Key="dir/big.bin")
        assert head["ContentLength"] == 20 * MiB
        assert head["ETag"].endswith('-3"'), f"20 MiB in the cli's 8 MiB parts: {head['ETag']}"
        back = tmp_path / "back.bin"
        check_ok(aws_cli(eps[1 % len(eps)], "s3", "cp", f"s3://{name}/dir/big.bin", back, ca=pki.ca_cert,
                         cwd=tmp_path))
        assert sha256_file(back) == sha256_file(src)
        res = check_ok(aws_cli(eps[-1], "s3", "ls", f"s3://{name}/dir/", ca=pki.ca_cert, cwd=tmp_path))
        assert re.search(rf"\s{20 * MiB} big\.bin$", res.stdout, re.M), res.stdout
        # AWS_CA_BUNDLE works as well as the flag.
        res = check_ok(aws_cli(eps[0], "s3", "ls", cwd=tmp_path, env={"AWS_CA_BUNDLE": str(pki.ca_cert)}))
        assert name in res.stdout

        res = aws_cli(eps[0], "s3", "ls", cwd=tmp_path)
        assert res.returncode != 0, res.stdout
        assert "CERTIFICATE_VERIFY_FAILED" in res.stderr, res.stderr
    finally:
        empty_and_delete_bucket(tls.client(), name)


def test_boto3_with_verify(tls, tls_bucket, tmp_path):
    """boto3 with verify=<CA file>: put, get, list, and a 20 MiB upload and
    download by its transfer manager (multipart up, parallel ranged GETs
    down, over several TLS connections at once); in a cluster each call
    goes through another node."""
    eps = endpoints(tls)
    clients = [boto3_client(ep, verify=str(tls.ca_bundle)) for ep in eps]
    c = lambda i: clients[i % len(clients)]  # noqa: E731
    body = os.urandom(100_000)
    c(0).put_object(Bucket=tls_bucket, Key="boto/small", Body=body)
    assert c(1).get_object(Bucket=tls_bucket, Key="boto/small")["Body"].read() == body

    data = os.urandom(20 * MiB)
    c(2).upload_fileobj(io.BytesIO(data), tls_bucket, "boto/big")
    head = c(3).head_object(Bucket=tls_bucket, Key="boto/big")
    assert head["ContentLength"] == len(data)
    assert head["ETag"].endswith('-3"'), f"20 MiB in s3transfer's 8 MiB parts: {head['ETag']}"
    out = io.BytesIO()
    c(1).download_fileobj(tls_bucket, "boto/big", out)
    assert hashlib.sha256(out.getvalue()).hexdigest() == hashlib.sha256(data).hexdigest()

    # A multipart upload by the low-level calls, each part through another node.
    key = "boto/parts"
    parts_data = [os.urandom(5 * MiB), os.urandom(5 * MiB), os.urandom(123_457)]
    up = c(0).create_multipart_upload(Bucket=tls_bucket, Key=key)["UploadId"]
    parts = []
    for i, p in enumerate(parts_data, 1):
        etag = c(i).upload_part(Bucket=tls_bucket, Key=key, UploadId=up, PartNumber=i, Body=p)["ETag"]
        parts.append({"PartNumber": i, "ETag": etag})
    c(0).complete_multipart_upload(Bucket=tls_bucket, Key=key, UploadId=up, MultipartUpload={"Parts": parts})
    assert c(2).get_object(Bucket=tls_bucket, Key=key)["Body"].read() == b"".join(parts_data)

    listed = c(3).list_objects_v2(Bucket=tls_bucket, Prefix="boto/")
    assert sorted(o["Key"] for o in listed["Contents"]) == ["boto/big", "boto/parts", "boto/small"]


def test_boto3_without_ca_refused(tls, tls_bucket):
    """boto3 at its default trust (its bundled roots; no AWS_CA_BUNDLE,
    REQUESTS_CA_BUNDLE or SSL_CERT_FILE naming the test CA) refuses the
    server's certificate: nothing is sent in the clear, no fallback."""
    from botocore.exceptions import SSLError

    ca = str(tls.ca_bundle)
    for k in ("AWS_CA_BUNDLE", "REQUESTS_CA_BUNDLE", "SSL_CERT_FILE", "CURL_CA_BUNDLE"):
        assert os.environ.get(k) != ca, f"{k} names the test CA: this test would prove nothing"
    assert "AWS_CA_BUNDLE" not in os.environ  # conftest drops every AWS_* variable
    client = boto3_client(tls.endpoint)
    with pytest.raises(SSLError) as e:
        client.list_objects_v2(Bucket=tls_bucket)
    assert "CERTIFICATE_VERIFY_FAILED" in str(e.value)


def test_curl_with_and_without_ca(tls, pki):
    """curl --cacert: the health checks answer 200 on every node, over
    HTTP/1.1 even when curl asks for HTTP/2. Without the CA (curl's own
    default bundle, then the system bundle named) it refuses with exit 60,
    certificate problem."""
    for ep in endpoints(tls):
        res = curl("--cacert", pki.ca_cert, "--http2", "-o", "/dev/null", "-w", "%{http_code} %{http_version}",
                   f"{ep}/shardstore/health/ready")
        assert res.returncode == 0, res.stderr
        assert res.stdout == "200 1.1", res.stdout
    url = f"{tls.endpoint}/shardstore/health/live"
    res = curl("-o", "/dev/null", url)
    assert res.returncode == 60, (res.returncode, res.stderr)
    assert "certificate" in res.stderr
    system = Path("/etc/ssl/certs/ca-certificates.crt")
    if system.is_file():
        res = curl("--cacert", system, "-o", "/dev/null", url)
        assert res.returncode == 60, (res.returncode, res.stderr)


def test_plain_http_to_tls_port_answered_400(tls):
    """A plain HTTP request to the TLS port gets Go's 400 "Client sent an
    HTTP request to an HTTPS server." at once, not a hang until a timeout."""
    url = tls.endpoint.replace("https://", "http://", 1) + "/shardstore/health/ready"
    t0 = time.monotonic()
    res = curl("--max-time", "10", "-w", "\n%{http_code}", url)
    elapsed = time.monotonic() - t0
    assert res.returncode == 0, (res.returncode, res.stderr)
    body, code = res.stdout.rsplit("\n", 1)
    assert code == "400", res.stdout
    assert HTTPS_MESSAGE in body, body
    assert elapsed < 5, f"the answer took {elapsed:.1f}s"


# -- protocol versions, cipher suites, ALPN (openssl s_client) -----------------


@pytest.mark.parametrize("version", ["tls1", "tls1_1"])
def test_old_protocol_versions_refused(tls, pki, version):
    """openssl s_client -tls1 / -tls1_1: the server answers with a
    protocol_version alert and sends no certificate. The client offers the
    old version at security level 0, so a system openssl configuration
    with a higher minimum cannot refuse it on the client's side instead."""
    res = s_client(port_of(tls.endpoint), f"-{version}", "-cipher", "DEFAULT@SECLEVEL=0", ca=pki.ca_cert)
    out = res.stdout + res.stderr
    assert res.returncode != 0, out[-2000:]
    assert "alert protocol version" in out, out[-2000:]
    assert "BEGIN CERTIFICATE" not in out


@pytest.mark.parametrize("version,name", [("tls1_2", "TLSv1.2"), ("tls1_3", "TLSv1.3")])
def test_current_protocol_versions_verify(tls, pki, version, name):
    """openssl s_client -tls1_2 / -tls1_3 with -CAfile: the handshake
    completes at that version and the chain verifies (Verify return code:
    0) for the IP address the certificate names."""
    res = s_client(port_of(tls.endpoint), f"-{version}", "-verify_return_error", "-verify_ip", "127.0.0.1",
                   ca=pki.ca_cert)
    out = res.stdout + res.stderr
    assert res.returncode == 0, out[-2000:]
    assert re.search(rf"Protocol\s*: {re.escape(name)}$", res.stdout, re.M), res.stdout[-2000:]
    assert "Verify return code: 0 (ok)" in res.stdout
    assert f"CN = {DEFAULT_CN}" in res.stdout


@pytest.mark.parametrize("cipher,accepted", [
    ("ECDHE-RSA-AES128-GCM-SHA256", True),
    ("ECDHE-RSA-AES256-GCM-SHA384", True),
    ("ECDHE-RSA-CHACHA20-POLY1305", True),
    ("ECDHE-RSA-AES128-SHA", False),  # CBC
    ("AES128-GCM-SHA256", False),  # RSA key exchange: no forward secrecy
])
def test_tls12_cipher_suites(tls, pki, cipher, accepted):
    """TLS 1.2 offers only forward-secret (ECDHE) AEAD suites: a client
    offering just one suite is served with it or refused by a handshake
    failure alert."""
    res = s_client(port_of(tls.endpoint), "-tls1_2", "-cipher", cipher, ca=pki.ca_cert)
    out = res.stdout + res.stderr
    if accepted:
        assert res.returncode == 0, out[-2000:]
        assert re.search(rf"Cipher\s*: {re.escape(cipher)}$", res.stdout, re.M), res.stdout[-2000:]
    else:
        assert res.returncode != 0, out[-2000:]
        assert "alert handshake failure" in out, out[-2000:]


def test_alpn_never_h2(tls, pki):
    """ALPN: offered h2 and http/1.1, the server picks http/1.1; offered
    only h2, it negotiates nothing (Go refuses the handshake with
    no_application_protocol): HTTP/2 is never spoken."""
    port = port_of(tls.endpoint)
    both = s_client(port, "-alpn", "h2,http/1.1", ca=pki.ca_cert)
    assert both.returncode == 0, both.stderr
    assert "ALPN protocol: http/1.1" in both.stdout, both.stdout[-2000:]
    only = s_client(port, "-alpn", "h2", ca=pki.ca_cert)
    out = only.stdout + only.stderr
    assert "ALPN protocol: h2" not in out
    assert "No ALPN negotiated" in out or "no application protocol" in out, out[-2000:]


# -- SNI -----------------------------------------------------------------------


@pytest.mark.parametrize("server_name,cn,san,key_alg", [
    (SNI_RSA, SNI_RSA, f"DNS:{SNI_RSA}", "rsaEncryption"),
    (SNI_EC, SNI_EC, f"DNS:{SNI_EC}", "id-ecPublicKey"),
    ("localhost", DEFAULT_CN, DEFAULT_SAN, "rsaEncryption"),
    ("s3.unknown.test", DEFAULT_CN, DEFAULT_SAN, "rsaEncryption"),
    (None, DEFAULT_CN, DEFAULT_SAN, "rsaEncryption"),
], ids=["rsa-name", "ecdsa-name", "localhost", "unknown-name", "no-sni"])
def test_sni_chooses_certificate(tls, pki, server_name, cn, san, key_alg):
    """openssl s_client -servername NAME gets the certificate of the
    subdirectory for that name (s3.one.test: RSA, s3.two.test: ECDSA), and
    it verifies for the name; a name no subdirectory has, or no SNI at all,
    gets the top directory's certificate."""
    port = port_of(tls.endpoint)
    args = ["-servername", server_name] if server_name else ["-noservername"]
    if server_name and cn != DEFAULT_CN:
        args += ["-verify_hostname", server_name, "-verify_return_error"]
    res = s_client(port, *args, ca=pki.ca_cert)
    assert res.returncode == 0, (res.stdout + res.stderr)[-2000:]
    text = served_certificate_text(res.stdout)
    assert re.search(rf"Subject: CN\s*=\s*{re.escape(cn)}$", text, re.M), text[:1500]
    assert san_of(text) == san, text[:1500]
    assert f"Public Key Algorithm: {key_alg}" in text
    assert "Verify return code: 0 (ok)" in res.stdout


def test_sni_names_with_curl(tls, pki):
    """curl --resolve NAME:PORT:127.0.0.1 https://NAME:PORT/...: each name
    the server holds a certificate for verifies with the CA and answers."""
    port = port_of(tls.endpoint)
    for name in (SNI_RSA, SNI_EC, "localhost"):
        res = curl("--resolve", f"{name}:{port}:127.0.0.1", "--cacert", pki.ca_cert, "-o", "/dev/null",
                   "-w", "%{http_code}", f"https://{name}:{port}/shardstore/health/live")
        assert res.returncode == 0, f"{name}: {res.stderr}"
        assert res.stdout == "200", f"{name}: {res.stdout}"


# -- shardstore admin --------------------------------------------------------


def test_admin_status_over_https(tls, pki, shardstore_bin):
    """`shardstore admin status` over https with --ca-cert (and with
    SHARDSTORE_CA_CERT) shows every drive online, and in a cluster every
    node by its https:// URL; without the CA it fails and says to pass
    --ca-cert."""
    env = dict(os.environ, SHARDSTORE_ROOT_USER=ROOT_USER, SHARDSTORE_ROOT_PASSWORD=ROOT_PASSWORD)
    env.pop("SHARDSTORE_CA_CERT", None)
    env.pop("SHARDSTORE_ENDPOINT", None)
    admin = [str(shardstore_bin), "admin", "status", "--endpoint", tls.endpoint]

    def run(*extra, e=env):
        return subprocess.run([*admin, *extra], env=e, capture_output=True, text=True, timeout=60)

    res = run("--ca-cert", str(pki.ca_cert))
    assert res.returncode == 0, res.stdout + res.stderr
    assert re.search(r"^drives online\s+16 of 16;", res.stdout, re.M), res.stdout
    for ep in tls.node_endpoints:
        assert re.search(rf"node {re.escape(ep)}\s+4 of 4 drives online", res.stdout), res.stdout
    js = run("--json", e=dict(env, SHARDSTORE_CA_CERT=str(pki.ca_cert)))
    assert js.returncode == 0, js.stderr
    doc = json.loads(js.stdout)
    assert doc["status"]["drives_online"] == 16, doc["status"]
    assert [d["state"] for d in doc["drives"]] == ["online"] * 16

    res = run()
    assert res.returncode != 0, res.stdout
    assert "--ca-cert" in res.stderr, res.stderr
    assert "certificate" in res.stderr, res.stderr


# -- what a start reads (servers of their own) --------------------------------


@SINGLE_ONLY
@pytest.mark.parametrize("form,password_env", [
    ("rsa-pkcs1", None),
    ("rsa-pkcs8", None),
    ("ec-sec1", None),
    ("ec-pkcs8", None),
    ("ed25519", None),
    ("rsa-pkcs8-aes256", "SHARDSTORE_CERT_PASSWD"),
    ("ec-genpkey-aes256", "MINIO_CERT_PASSWD"),
    ("rsa-legacy-aes256", "SHARDSTORE_CERT_PASSWD"),
])
def test_key_forms_openssl_writes(shardstore_bin, pki, tmp_path, form, password_env):
    """Each key form openssl writes (PKCS#1, PKCS#8, SEC1 with its EC
    PARAMETERS block, Ed25519, encrypted PKCS#8 by `pkcs8 -topk8 -v2
    aes256` and by `genpkey -aes256`, legacy-encrypted PEM), the encrypted
    ones with the password in SHARDSTORE_CERT_PASSWD or MINIO_CERT_PASSWD:
    the server starts, serves exactly that certificate and answers curl."""
    certs = tmp_path / "certs"
    crt, _ = pki.pair(certs, f"key form {form}", form=form)
    env = {password_env: KEY_PASSWORD} if password_env else {}
    with Standalone(shardstore_bin, tmp_path / "srv", ["--address", "127.0.0.1:0", "--certs-dir", certs],
                    env=env) as srv:
        ep = srv.wait_endpoint()
        assert ep.startswith("https://127.0.0.1:"), ep
        wait_ready(ep, pki.ca_cert)
        res = curl("--cacert", pki.ca_cert, "-o", "/dev/null", "-w", "%{http_code}", f"{ep}/shardstore/health/ready")
        assert (res.returncode, res.stdout) == (0, "200"), res.stderr
        served = ssl.get_server_certificate(("127.0.0.1", port_of(ep)), ca_certs=str(pki.ca_cert))
        assert ssl.PEM_cert_to_DER_cert(served) == ssl.PEM_cert_to_DER_cert(crt.read_text())
        assert f"TLS: serving {crt}" in srv.stderr(), srv.stderr()


@SINGLE_ONLY
@pytest.mark.parametrize("case", ["encrypted-no-password", "wrong-password", "legacy-encrypted-no-password",
                                  "pbes1-encrypted", "mismatched-key", "cert-without-key", "key-without-cert", "sni-dir-mismatched",
                                  "rsa-1024"])
def test_broken_material_refused(shardstore_bin, pki, tmp_path, case):
    """A certificates directory the server cannot serve from stops the start
    with a non-zero exit and a message naming the file and the problem: an
    encrypted key without its password or with a wrong one, a key that is
    not the certificate's, a certificate without its key and a key without
    its certificate, a mismatched pair in an SNI subdirectory, an RSA key
    under 2048 bits; a PKCS#8 key under the old PBES1 encryption is refused
    with how to re-encrypt it, not a guess at a wrong password."""
    certs = tmp_path / "certs"
    env = {}
    named = certs / "private.key"
    if case in ("encrypted-no-password", "wrong-password"):
        pki.pair(certs, "locked", form="rsa-pkcs8-aes256")
        says = "SHARDSTORE_CERT_PASSWD"
        if case == "wrong-password":
            env = {"SHARDSTORE_CERT_PASSWD": "not-the-password"}
            says = "password"
    elif case == "legacy-encrypted-no-password":
        pki.pair(certs, "locked", form="rsa-legacy-aes256")
        says = "SHARDSTORE_CERT_PASSWD"
    elif case == "pbes1-encrypted":
        pki.pair(certs, "locked", form="rsa-pkcs8-pbes1")
        env = {"SHARDSTORE_CERT_PASSWD": KEY_PASSWORD}
        says = "openssl pkcs8 -topk8 -v2 aes256"
    elif case == "mismatched-key":
        pki.pair(certs, "mismatched")
        pki.key(certs / "private.key", "ec-sec1")
        says = "does not match"
    elif case == "cert-without-key":
        pki.pair(certs, "lonely cert")
        (certs / "private.key").unlink()
        says = f"its certificate {certs / 'public.crt'} is there"
    elif case == "key-without-cert":
        pki.pair(certs, "lonely key")
        (certs / "public.crt").unlink()
        named = certs / "public.crt"
        says = f"its key {certs / 'private.key'} is there"
    elif case == "sni-dir-mismatched":
        pki.pair(certs, "good default")
        pki.pair(certs / "other", "s3.other.test", sans="DNS:s3.other.test")
        pki.key(certs / "other" / "private.key", "rsa-pkcs8")
        named = certs / "other" / "private.key"
        says = "does not match"
    else:
        certs.mkdir()
        openssl("genrsa", "-out", named, "1024")
        pki.cert(named, certs / "public.crt", "short key", "IP:127.0.0.1")
        says = "2048"
    with Standalone(shardstore_bin, tmp_path / "srv", ["--address", "127.0.0.1:0", "--certs-dir", certs],
                    env=env) as srv:
        code = srv.wait_exit()
        assert code != 0, srv.log()
        assert "S3 endpoint" not in srv.stdout(), srv.log()
        err = srv.stderr()
        assert str(named) in err, srv.log()
        assert says in err, srv.log()


@SINGLE_ONLY
def test_expired_certificate_starts_with_warning(shardstore_bin, pki, tmp_path):
    """A certificate that expired (January 2020, signed with `openssl ca
    -startdate/-enddate`) still loads: the server starts, serves it, and
    warns on stderr that it expired; clients that verify refuse it."""
    certs = tmp_path / "certs"
    certs.mkdir()
    key = pki.key(certs / "private.key", "ec-sec1")
    crt = pki.expired_cert(key, certs / "public.crt", "expired", "IP:127.0.0.1,DNS:localhost")
    dates = openssl("x509", "-in", crt, "-noout", "-enddate").stdout
    assert "2020" in dates, dates
    with Standalone(shardstore_bin, tmp_path / "srv", ["--address", "127.0.0.1:0", "--certs-dir", certs]) as srv:
        ep = srv.wait_endpoint()
        assert ep.startswith("https://"), ep
        assert re.search(rf"certificate {re.escape(str(crt))} expired on 2020-01-31", srv.stderr()), srv.log()
        res = curl("--cacert", pki.ca_cert, "-o", "/dev/null", f"{ep}/shardstore/health/live")
        assert res.returncode == 60 and "expired" in res.stderr, (res.returncode, res.stderr)
        res = curl("--cacert", pki.ca_cert, "--insecure", "-o", "/dev/null", "-w", "%{http_code}",
                   f"{ep}/shardstore/health/live")
        assert (res.returncode, res.stdout) == (0, "200"), res.stderr


@SINGLE_ONLY
@pytest.mark.parametrize("how", ["MINIO_CERTS_DIR", "SHARDSTORE_CERTS_DIR", "-S"])
def test_certs_dir_from_environment_and_short_flag(shardstore_bin, pki, tmp_path, how):
    """The certificates directory named by MINIO_CERTS_DIR or
    SHARDSTORE_CERTS_DIR (no flag), or by MinIO's -S flag, turns TLS on;
    the console given an address serves HTTPS with the same certificate
    and prints a https:// URL."""
    certs = pki.certs_dir(tmp_path / "certs", cn="from the environment")
    args = ["--address", "127.0.0.1:0"]
    env = {}
    if how == "-S":
        args += ["-S", certs]
    else:
        env[how] = str(certs)
    with Standalone(shardstore_bin, tmp_path / "srv", [*args, "--console-address", "127.0.0.1:0"], env=env) as srv:
        ep = srv.wait_endpoint()
        assert ep.startswith("https://127.0.0.1:"), srv.log()
        wait_ready(ep, pki.ca_cert)
        assert common_name(peer_cert(port_of(ep), pki.ca_cert)) == "from the environment"
        deadline = time.monotonic() + 10
        while not (m := re.search(r"^Console: (\S+)$", srv.stdout(), re.M)) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert m, srv.log()
        console = m.group(1)
        assert console.startswith("https://127.0.0.1:"), console
        res = curl("--cacert", pki.ca_cert, "-o", "/dev/null", "-w", "%{http_code}", f"{console}/")
        assert res.returncode == 0, res.stderr
        assert res.stdout.startswith(("2", "3")), res.stdout


@SINGLE_ONLY
@pytest.mark.parametrize("case", ["any-address-refused", "console-any-address-refused", "flag-allows",
                                  "env-allows", "loopback"])
def test_default_credentials_beyond_loopback(shardstore_bin, tmp_path, case):
    """With no root credentials set (the default development ones), a
    server that would listen beyond loopback (--address 0.0.0.0:0, or the
    console on 0.0.0.0) refuses to start and names
    --allow-default-credentials; with that flag or
    SHARDSTORE_ALLOW_DEFAULT_CREDENTIALS=1 it starts, and on 127.0.0.1 it
    starts without either."""
    drop = ("SHARDSTORE_ROOT_USER", "SHARDSTORE_ROOT_PASSWORD")
    args, env = ["--address", "0.0.0.0:0"], {}
    if case == "console-any-address-refused":
        args = ["--address", "127.0.0.1:0", "--console-address", "0.0.0.0:0"]
    elif case == "flag-allows":
        args.append("--allow-default-credentials")
    elif case == "env-allows":
        env["SHARDSTORE_ALLOW_DEFAULT_CREDENTIALS"] = "1"
    elif case == "loopback":
        args = ["--address", "127.0.0.1:0"]
    with Standalone(shardstore_bin, tmp_path / "srv", args, env=env, drop=drop) as srv:
        if case.endswith("refused"):
            code = srv.wait_exit()
            assert code != 0, srv.log()
            err = srv.stderr()
            assert "--allow-default-credentials" in err, srv.log()
            assert "0.0.0.0:0" in err, srv.log()
            assert "S3 endpoint" not in srv.stdout()
        else:
            ep = srv.wait_endpoint()
            assert ep.startswith("http://127.0.0.1:"), ep
            wait_ready(ep, None)
            assert "default development credentials" in srv.stderr(), srv.log()


@SINGLE_ONLY
def test_chain_with_intermediate(shardstore_bin, pki, tmp_path):
    """public.crt holding the leaf and then its intermediate CA (as ACME
    clients write fullchain.pem): the server sends the whole chain, so
    clients that trust only the root verify it."""
    certs = tmp_path / "certs"
    certs.mkdir()
    inter_crt, inter_key = pki.intermediate()
    key = pki.key(certs / "private.key", "ec-sec1")
    leaf = pki.cert(key, tmp_path / "leaf.crt", "behind an intermediate", "IP:127.0.0.1,DNS:localhost",
                    issuer=(inter_crt, inter_key))
    (certs / "public.crt").write_text(leaf.read_text() + inter_crt.read_text())
    with Standalone(shardstore_bin, tmp_path / "srv", ["--address", "127.0.0.1:0", "--certs-dir", certs]) as srv:
        ep = srv.wait_endpoint()
        res = curl("--cacert", pki.ca_cert, "-o", "/dev/null", "-w", "%{http_code}", f"{ep}/shardstore/health/live")
        assert (res.returncode, res.stdout) == (0, "200"), res.stderr
        res = s_client(port_of(ep), "-showcerts", "-verify_return_error", ca=pki.ca_cert)
        assert res.returncode == 0, res.stderr
        assert res.stdout.count("-----BEGIN CERTIFICATE-----") == 2, res.stdout[:3000]
        assert "Verify return code: 0 (ok)" in res.stdout


@SINGLE_ONLY
def test_rotation_by_symlink_swap(shardstore_bin, pki, tmp_path):
    """A Kubernetes secret volume: public.crt and private.key are links
    through ..data, a link to a timestamped directory that the kubelet
    swaps by rename. The poll sees the swap (it follows the links) and new
    connections get the new certificate within ROTATION_DEADLINE_S."""
    certs = tmp_path / "certs"
    pki.pair(certs / "..2024_01_01_first", "secret volume first")
    pki.pair(certs / "..2024_02_01_second", "secret volume second")
    (certs / "..data").symlink_to("..2024_01_01_first")
    for name in ("public.crt", "private.key"):
        (certs / name).symlink_to(f"..data/{name}")
    with Standalone(shardstore_bin, tmp_path / "srv", ["--address", "127.0.0.1:0", "--certs-dir", certs]) as srv:
        port = port_of(srv.wait_endpoint())
        assert common_name(peer_cert(port, pki.ca_cert)) == "secret volume first"
        (certs / "..data_tmp").symlink_to("..2024_02_01_second")
        os.replace(certs / "..data_tmp", certs / "..data")
        deadline = time.monotonic() + ROTATION_DEADLINE_S
        while (cn := common_name(peer_cert(port, pki.ca_cert))) != "secret volume second":
            assert time.monotonic() < deadline, f"still {cn!r} {ROTATION_DEADLINE_S}s after the swap\n{srv.log()}"
            time.sleep(0.2)


@SINGLE_ONLY
def test_sighup_without_certificates_keeps_serving(shardstore_bin, tmp_path):
    """SIGHUP (the reload signal) to a server without certificates neither
    stops it nor changes what it speaks: it goes on answering plain HTTP."""
    empty = tmp_path / "no-certs"
    empty.mkdir()
    with Standalone(shardstore_bin, tmp_path / "srv", ["--address", "127.0.0.1:0", "--certs-dir", empty]) as srv:
        ep = srv.wait_endpoint()
        assert ep.startswith("http://"), ep
        wait_ready(ep, None)
        srv.proc.send_signal(signal.SIGHUP)
        time.sleep(0.5)
        assert srv.proc.poll() is None, f"SIGHUP stopped the server\n{srv.log()}"
        wait_ready(ep, None, timeout=5)


@SINGLE_ONLY
def test_certificates_added_to_plain_server_not_claimed(shardstore_bin, pki, tmp_path):
    """A server that started without a certificate keeps its plain-HTTP
    listener when certificates appear in its directory (the TLS decision is
    made at start); it says a restart is needed to serve HTTPS, and never
    that new connections use them."""
    certs = tmp_path / "certs"
    certs.mkdir()
    with Standalone(shardstore_bin, tmp_path / "srv", ["--address", "127.0.0.1:0", "--certs-dir", certs]) as srv:
        ep = srv.wait_endpoint()
        assert ep.startswith("http://"), ep
        pki.pair(certs, "late")
        srv.proc.send_signal(signal.SIGHUP)
        time.sleep(1)
        wait_ready(ep, None, timeout=5)  # still plain HTTP
        assert "new connections use them" not in srv.stderr(), srv.log()
        assert "restart it to serve HTTPS" in srv.stderr(), srv.log()


# -- rotation (last: it changes node 1's certificate) -------------------------


def _install(staged_crt: Path | None, staged_key: Path | None, certs: Path) -> None:
    """Move staged files into place by rename, key first: each file changes
    at once, as a tool that writes and renames does."""
    if staged_key:
        os.replace(staged_key, certs / "private.key")
    if staged_crt:
        os.replace(staged_crt, certs / "public.crt")


def test_rotation(tls, pki, tls_bucket, tmp_path):
    """Certificates replaced under a running server: a new key and
    certificate written into the directory are served to new connections
    within one poll (<12 s); a replacement the poll cannot see (same size
    and time) is served at once after SIGHUP; a key that does not match
    its certificate is refused with "certificates not reloaded" on stderr
    while the previous certificate keeps serving; and a 24 MiB download
    streaming over a connection opened before all this completes
    byte-identical."""
    certs, port, ca = tls.certs_dir, port_of(tls.endpoint), pki.ca_cert
    assert common_name(peer_cert(port, ca)) == DEFAULT_CN
    client = boto3_client(tls.endpoint, verify=str(ca))
    data = os.urandom(24 * MiB)
    client.put_object(Bucket=tls_bucket, Key="rotation/big", Body=data)
    body = client.get_object(Bucket=tls_bucket, Key="rotation/big")["Body"]
    got = [body.read(MiB)]

    def nibble():
        got.append(body.read(64 * 1024))

    def wait_cn(want: str, within: float) -> float:
        t0 = time.monotonic()
        cn = ""
        while time.monotonic() - t0 < within:
            cn = common_name(peer_cert(port, ca))
            if cn == want:
                return time.monotonic() - t0
            nibble()
            time.sleep(0.1)
        pytest.fail(f"new connections still get CN={cn!r}, not {want!r}, {within}s after the change\n"
                    f"{tls.log_tail(30)}", pytrace=False)

    def stderr_text() -> str:
        return tls.stderr_path.read_text(errors="replace")

    # 1. A new key and certificate, found by the poll.
    stage = tmp_path / "stage"
    crt1, key1 = pki.pair(stage / "1", "rotated cert 1", serial=0x7001)
    kept_key = shutil.copyfile(key1, tmp_path / "rotated.key")
    reloads = stderr_text().count("certificates reloaded")
    _install(crt1, key1, certs)
    wait_cn("rotated cert 1", ROTATION_DEADLINE_S)
    assert stderr_text().count("certificates reloaded") > reloads, tls.log_tail(30)

    # 2. The same key, a certificate of the same size and modification
    # time: the poll cannot see it, SIGHUP loads it at once.
    before = (certs / "public.crt").stat()
    crt2, _ = pki.pair(stage / "2", "rotated cert 2", serial=0x7002, key=kept_key)
    assert crt2.stat().st_size == before.st_size, "the certificates differ in size: the test cannot hide the change"
    os.utime(crt2, ns=(before.st_atime_ns, before.st_mtime_ns))
    _install(crt2, None, certs)
    assert common_name(peer_cert(port, ca)) == "rotated cert 1"
    tls.proc.send_signal(signal.SIGHUP)
    wait_cn("rotated cert 2", 3)

    # 3. A key that does not match: refused, the previous one serves on.
    errors_before = stderr_text().count("certificates not reloaded")
    bad = pki.key(stage / "bad.key", "rsa-pkcs8")
    _install(None, bad, certs)
    deadline = time.monotonic() + 2 * 5 + 5
    while stderr_text().count("certificates not reloaded") == errors_before:
        assert time.monotonic() < deadline, f"no 'certificates not reloaded' line\n{tls.log_tail(30)}"
        assert common_name(peer_cert(port, ca)) == "rotated cert 2"
        nibble()
        time.sleep(0.2)
    line = [ln for ln in stderr_text().splitlines() if "certificates not reloaded" in ln][-1]
    assert "ERROR" in line and "does not match" in line and str(certs / "private.key") in line, line
    assert common_name(peer_cert(port, ca)) == "rotated cert 2"
    fresh = boto3_client(tls.endpoint, verify=str(ca))
    assert fresh.head_object(Bucket=tls_bucket, Key="rotation/big")["ContentLength"] == len(data)

    # Put the matching key back (and SIGHUP) so the server is whole again.
    _install(None, shutil.copyfile(kept_key, stage / "good.key"), certs)
    tls.proc.send_signal(signal.SIGHUP)
    wait_cn("rotated cert 2", 3)

    # The download opened before the first change ends whole.
    got.append(body.read())
    received = b"".join(got)
    assert len(received) == len(data)
    assert hashlib.sha256(received).digest() == hashlib.sha256(data).digest()
