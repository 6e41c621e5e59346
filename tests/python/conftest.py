"""Fixtures for the Python end-to-end tests.

The suite builds the server binary once, starts one `shardstore server` on a
free port with 16 temporary drive directories, and hands tests real clients
(boto3 at default settings, the aws cli, raw HTTP) pointed at it. The server's
stdout and stderr go to files; when a test fails, their tail is attached to the
failure report, and a server that dies during a test fails that test and is
restarted on the same drives for the next one. With SHARDSTORE_TEST_CLUSTER=N
it starts N node processes as one cluster instead (see CLUSTER_NODES). Every
server has a built-in KMS (see KMS_KEYS), so SSE-S3 and SSE-KMS work.
"""

from __future__ import annotations

import base64
import os
import re
import signal
import ssl
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]

# Non-default root credentials, so the tests also prove the server reads them
# from the environment as documented.
ROOT_USER = "e2eroot"
ROOT_PASSWORD = "e2e-root-secret-0123456789"
REGION = "us-east-1"


@dataclass(frozen=True)
class Creds:
    """One S3 identity known to the server."""

    access_key: str
    secret_key: str
    display_name: str = ""


ALICE = Creds("e2ealice0001", "alice-secret-key-0001", "Alice Example")
BOB = Creds("e2ebob0002", "bob-secret-key-0002", "Bob Example")

START_TIMEOUT_S = 60
READY_TIMEOUT_S = 60
STOP_TIMEOUT_S = 20

# SHARDSTORE_TEST_CLUSTER=N runs the whole suite against a cluster of N node
# processes on loopback (16/N drives each) instead of one server: every
# boto3 client a test makes talks to the next node in turn, so a test's
# requests spread over the nodes; raw HTTP goes to node 1.
CLUSTER_NODES = int(os.environ.get("SHARDSTORE_TEST_CLUSTER", "0") or "0")

# The built-in KMS every Server gets (issue 41): a key file in its base
# directory with one `name:base64(32 random bytes)` line per name (the
# first is the default key; a name repeated is a newer version of it),
# named by SHARDSTORE_KMS_SECRET_KEY_FILE for the single server and every
# cluster node alike. Written once, so a restart keeps the keys.
# Server(kms=False) starts one without a KMS.
KMS_KEYS = ("shardstore-default", "testkey-1", "testkey-2")


def kms_key_line(name: str) -> str:
    """One key-file line: name and 32 random bytes in base64."""
    return f"{name}:{base64.b64encode(os.urandom(32)).decode()}\n"


def _isolate_aws_environment() -> None:
    """Keep the developer's ~/.aws and AWS_* variables out of the tests: the
    clients must see only what the tests give them."""
    for key in list(os.environ):
        if key.startswith("AWS_"):
            del os.environ[key]
    os.environ["AWS_CONFIG_FILE"] = os.devnull
    os.environ["AWS_SHARED_CREDENTIALS_FILE"] = os.devnull
    os.environ["AWS_DEFAULT_REGION"] = REGION
    os.environ["AWS_EC2_METADATA_DISABLED"] = "true"


_isolate_aws_environment()


class Server:
    """A running `shardstore server` process on temporary drives."""

    def __init__(
        self,
        binary: Path,
        base: Path,
        extra_args: list[str] | None = None,
        ca_bundle: Path | None = None,
        node_args: list[list[str]] | None = None,
        kms: bool = True,
    ):
        self.binary = binary
        self.base = base
        # Extra server flags, e.g. ["--region", "us-east-1"].
        self.extra_args = list(extra_args or [])
        # A server started with a certificate (--certs-dir) serves HTTPS:
        # ca_bundle is the CA file its clients here verify it with (the
        # readiness check, client()); the endpoints are then https://.
        self.ca_bundle = ca_bundle
        self.scheme = "https" if ca_bundle else "http"
        # In a cluster, node n (from 0) also gets node_args[n], e.g. its
        # own --certs-dir.
        self.node_args = [list(a) for a in node_args or []]
        self.drives_dir = base / "drives"
        self.nodes = CLUSTER_NODES if CLUSTER_NODES > 1 else 0
        if self.nodes:
            per = 16 // self.nodes
            self.drives = [self.drives_dir / f"node{n}" / f"d{i}" for n in range(1, self.nodes + 1) for i in range(1, per + 1)]
        else:
            self.drives = [self.drives_dir / f"d{i}" for i in range(1, 17)]
        self.node_procs: list[subprocess.Popen] = []
        self.node_endpoints: list[str] = []
        self._next_node = 0
        self.users_file = base / "users.txt"
        self.kms_key_file = base / "kms-keys.txt" if kms else None
        self.stdout_path = base / "server.stdout"
        self.stderr_path = base / "server.stderr"
        self.proc: subprocess.Popen | None = None
        self.endpoint = ""
        self.starts = 0
        self.crashes: list[str] = []
        self._clients: dict = {}

    # -- lifecycle ---------------------------------------------------------

    def start(self) -> None:
        if self.nodes:
            return self._start_cluster()
        for d in self.drives:
            d.mkdir(parents=True, exist_ok=True)
        self.users_file.write_text(
            "".join(f"{u.access_key} {u.secret_key} {u.display_name}\n" for u in (ALICE, BOB))
        )
        env = self._node_env()
        cmd = [
            str(self.binary),
            "server",
            "--address",
            "127.0.0.1:0",
            "--users",
            str(self.users_file),
            # Servers run side by side: no console on its default port.
            "--console-address",
            "",
            *self.extra_args,
            f"{self.drives_dir}/d{{1...16}}",
        ]
        self.starts += 1
        banner = f"\n===== start #{self.starts}: {' '.join(cmd)}\n"
        with open(self.stdout_path, "a") as out, open(self.stderr_path, "a") as err:
            out.write(banner)
            err.write(banner)
        self._stdout_offset = self.stdout_path.stat().st_size
        # The child gets its own copies of the descriptors; ours close here.
        with open(self.stdout_path, "a") as out, open(self.stderr_path, "a") as err:
            self.proc = subprocess.Popen(
                cmd,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=err,
                env=env,
                cwd=self.base,
            )
        self._clients.clear()
        try:
            self.endpoint = self._wait_endpoint()
            self._wait_ready()
        except Exception:
            self.stop()
            raise

    def _wait_endpoint(self) -> str:
        """Parse the one `S3 endpoint: http://HOST:PORT` line from stdout
        (https:// for a server given a CA bundle)."""
        pattern = re.compile(rf"^S3 endpoint: ({self.scheme}://[^\s/]+)\s*$", re.M)
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            text = self.stdout_path.read_text(errors="replace")[self._stdout_offset :]
            m = pattern.search(text)
            if m:
                return m.group(1)
            if self.proc.poll() is not None:
                raise RuntimeError(
                    f"server exited with code {self.proc.returncode} before printing "
                    f"'S3 endpoint: {self.scheme}://HOST:PORT'\n{self.log_tail()}"
                )
            time.sleep(0.05)
        raise RuntimeError(
            f"server printed no 'S3 endpoint: {self.scheme}://HOST:PORT' line within {START_TIMEOUT_S}s\n{self.log_tail()}"
        )

    def _wait_ready(self) -> None:
        url = f"{self.endpoint}/shardstore/health/ready"
        deadline = time.monotonic() + READY_TIMEOUT_S
        last = "no answer"
        tls = ssl.create_default_context(cafile=str(self.ca_bundle)) if self.ca_bundle else None
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"server exited with code {self.proc.returncode} while starting\n{self.log_tail()}")
            try:
                with urllib.request.urlopen(url, timeout=5, context=tls) as resp:
                    if resp.status == 200:
                        return
                    last = f"HTTP {resp.status}"
            except urllib.error.HTTPError as e:
                last = f"HTTP {e.code}"
            except OSError as e:
                last = repr(e)
            time.sleep(0.1)
        raise RuntimeError(f"GET {url} not 200 within {READY_TIMEOUT_S}s (last: {last})\n{self.log_tail()}")

    def _node_env(self) -> dict:
        env = dict(os.environ)
        env["SHARDSTORE_ROOT_USER"] = ROOT_USER
        env["SHARDSTORE_ROOT_PASSWORD"] = ROOT_PASSWORD
        # The test drives are temporary directories, usually on the root
        # filesystem, which the server refuses unless told it is intended.
        env["SHARDSTORE_ALLOW_ROOT_DRIVES"] = "1"
        env["SHARDSTORE_CERTS_DIR"] = str(self._no_certs_dir())
        # Only the KMS given here: none of the machine's KMS variables.
        for k in list(env):
            if k.startswith(("SHARDSTORE_KMS_", "MINIO_KMS_")):
                del env[k]
        if self.kms_key_file:
            if not self.kms_key_file.exists():
                self.kms_key_file.write_text("".join(kms_key_line(n) for n in KMS_KEYS))
            env["SHARDSTORE_KMS_SECRET_KEY_FILE"] = str(self.kms_key_file)
        return env

    def _no_certs_dir(self) -> Path:
        """An empty certificates directory: a server given no --certs-dir
        speaks plain HTTP whatever the machine's ~/.shardstore/certs holds
        (the server's default); a --certs-dir flag wins over it."""
        d = self.base / "no-certs"
        d.mkdir(parents=True, exist_ok=True)
        return d

    def _start_cluster(self) -> None:
        """Start self.nodes node processes on free loopback ports, all with
        the same endpoint URLs, and wait until every one serves."""
        import socket

        self.users_file.write_text(
            "".join(f"{u.access_key} {u.secret_key} {u.display_name}\n" for u in (ALICE, BOB))
        )
        if not self.node_endpoints:
            socks = [socket.socket() for _ in range(self.nodes)]
            for sk in socks:
                sk.bind(("127.0.0.1", 0))
            self.node_endpoints = [f"{self.scheme}://127.0.0.1:{sk.getsockname()[1]}" for sk in socks]
            for sk in socks:
                sk.close()
        per = 16 // self.nodes
        urls = [f"{ep}{self.drives_dir}/node{n + 1}/d{{1...{per}}}" for n, ep in enumerate(self.node_endpoints)]
        self.starts += 1
        self.node_procs = []
        with open(self.stdout_path, "a") as out, open(self.stderr_path, "a") as err:
            banner = f"\n===== start #{self.starts}: cluster of {self.nodes} nodes: {' '.join(urls)}\n"
            out.write(banner)
            err.write(banner)
            for n, ep in enumerate(self.node_endpoints):
                own = self.node_args[n] if n < len(self.node_args) else []
                cmd = [str(self.binary), "server", "--address", ep.split("://", 1)[1], "--users", str(self.users_file),
                       "--console-address", "", *self.extra_args, *own, *urls]
                self.node_procs.append(subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                                                        env=self._node_env(), cwd=self.base))
        self.proc = self.node_procs[0]
        self._clients.clear()
        try:
            for ep, proc in zip(self.node_endpoints, self.node_procs):
                self.proc, self.endpoint = proc, ep
                self._wait_ready()
        except Exception:
            self.stop()
            raise
        self.proc, self.endpoint = self.node_procs[0], self.node_endpoints[0]

    def stop(self) -> int | None:
        """SIGTERM, then SIGKILL if it does not exit in time. Returns the exit code."""
        if self.nodes:
            procs, self.node_procs, self.proc = self.node_procs, [], None
            for proc in procs:
                if proc.poll() is None:
                    proc.send_signal(signal.SIGTERM)
            code = 0
            for proc in procs:
                try:
                    proc.wait(timeout=STOP_TIMEOUT_S * 2)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
                code = code or proc.returncode
            return code if procs else None
        if self.proc is None:
            return None
        proc, self.proc = self.proc, None
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                with open(self.stderr_path, "a") as err:
                    err.write(f"\n===== test harness: no exit {STOP_TIMEOUT_S}s after SIGTERM, sending SIGKILL\n")
                proc.kill()
                proc.wait()
        return proc.returncode

    def alive(self) -> bool:
        if self.nodes:
            return bool(self.node_procs) and all(p.poll() is None for p in self.node_procs)
        return self.proc is not None and self.proc.poll() is None

    def log_tail(self, lines: int = 120) -> str:
        parts = []
        for label, path in (("stdout", self.stdout_path), ("stderr", self.stderr_path)):
            try:
                text = path.read_text(errors="replace").splitlines()
            except OSError:
                text = []
            parts.append(f"--- server {label} (last {lines} lines of {path}) ---")
            parts.extend(text[-lines:])
        return "\n".join(parts)

    # -- clients -----------------------------------------------------------

    def client(self, creds: Creds | None = None, unsigned: bool = False, **config):
        """A boto3 S3 client at default settings except endpoint and
        credentials (unsigned=True for an anonymous client). Cached per
        server start, since client construction costs ~100 ms."""
        import boto3
        from botocore import UNSIGNED
        from botocore.config import Config

        creds = creds or Creds(ROOT_USER, ROOT_PASSWORD)
        endpoint = self.endpoint
        if self.nodes:
            # Each new client talks to the next node: a test's clients
            # (root, alice, anonymous) land on different nodes.
            endpoint = self.node_endpoints[self._next_node % self.nodes]
            self._next_node += 1
            key = (endpoint, creds, unsigned, tuple(sorted(config.items())))
            for k in self._clients:
                if k[1:] == key[1:]:
                    key = k
                    break
        else:
            key = (endpoint, creds, unsigned, tuple(sorted(config.items())))
        if key not in self._clients:
            cfg = None
            if unsigned or config:
                cfg = Config(signature_version=UNSIGNED, **config) if unsigned else Config(**config)
            session = boto3.session.Session(
                aws_access_key_id=creds.access_key,
                aws_secret_access_key=creds.secret_key,
                region_name=REGION,
            )
            verify = str(self.ca_bundle) if self.ca_bundle else None
            self._clients[key] = session.client("s3", endpoint_url=key[0], config=cfg, verify=verify)
        return self._clients[key]

    @property
    def root(self) -> Creds:
        return Creds(ROOT_USER, ROOT_PASSWORD)

    @property
    def hostport(self) -> tuple[str, int]:
        host, port = self.endpoint.split("://", 1)[1].rsplit(":", 1)
        return host, int(port)


_SERVERS = pytest.StashKey[list]()


@pytest.fixture(scope="session")
def shardstore_bin(tmp_path_factory) -> Path:
    """The server binary: $SHARDSTORE_BIN, or built once from ./cmd/shardstore."""
    given = os.environ.get("SHARDSTORE_BIN")
    if given:
        path = Path(given).resolve()
        if not os.access(path, os.X_OK):
            pytest.fail(f"SHARDSTORE_BIN={given} is not an executable file", pytrace=False)
        return path
    out = tmp_path_factory.mktemp("bin") / "shardstore"
    cmd = ["go", "build"]
    if os.environ.get("SHARDSTORE_RACE") == "1":
        cmd.append("-race")
    cmd += ["-o", str(out), "./cmd/shardstore"]
    try:
        res = subprocess.run(cmd, cwd=REPO_ROOT, capture_output=True, text=True, timeout=600)
        problem = "" if res.returncode == 0 else f"failed (exit {res.returncode}):\n{res.stdout}{res.stderr}"
    except (OSError, subprocess.TimeoutExpired) as e:
        problem = f"could not run: {e}"
    if problem:
        # Nothing can pass without a binary: stop the run with one message
        # instead of repeating it for every test.
        pytest.exit(f"{' '.join(cmd)} {problem}", returncode=1)
    return out


@pytest.fixture(scope="session")
def _server_process(request, shardstore_bin, tmp_path_factory):
    srv = Server(shardstore_bin, tmp_path_factory.mktemp("shardstore"))
    try:
        srv.start()
        problem = ""
    except RuntimeError as e:
        problem = str(e)
    if problem:
        pytest.exit(f"could not start the server: {problem}", returncode=1)
    request.config.stash.setdefault(_SERVERS, []).append(srv)
    yield srv
    code = srv.stop()
    # A server that ignores SIGTERM or exits non-zero on it breaks the
    # graceful-shutdown contract; say so at the end of the run.
    if code not in (0, None):
        sys.stderr.write(f"\nshardstore server exited with code {code} on SIGTERM\n{srv.log_tail(40)}\n")


def https_certs_dirs(pki, base: Path, cn: str) -> list[Path]:
    """One certificates directory per node (one for a single server) under
    base, each signed by pki's CA for the name "<cn> node <n>"."""
    n = CLUSTER_NODES if CLUSTER_NODES > 1 else 1
    return [pki.certs_dir(base / f"certs-node{i + 1}", cn=f"{cn} node {i + 1}") for i in range(n)]


def start_https_server(request, binary: Path, base: Path, ca_cert: Path, certs_dirs: list[Path], what: str) -> Server:
    """Start a server speaking HTTPS, or in cluster mode a cluster with one
    certificates directory per node (certs_dirs), and register it so a
    failing test shows its log; fails the test when it does not start.
    The caller stops it and takes it out of request.config.stash[_SERVERS]."""
    if len(certs_dirs) > 1:
        srv = Server(binary, base, ca_bundle=ca_cert, node_args=[["--certs-dir", str(d)] for d in certs_dirs])
    else:
        srv = Server(binary, base, ["--certs-dir", str(certs_dirs[0])], ca_bundle=ca_cert)
    try:
        srv.start()
        problem = ""
    except RuntimeError as e:
        problem = str(e)
    if problem:
        pytest.fail(f"could not start the {what}: {problem}", pytrace=False)
    request.config.stash.setdefault(_SERVERS, []).append(srv)
    return srv


def stop_https_server(request, srv: Server):
    """Stop a server start_https_server started; returns its exit code."""
    request.config.stash[_SERVERS].remove(srv)
    return srv.stop()


@pytest.fixture
def server(_server_process: Server):
    """The shared server, restarted first if an earlier test killed it. A
    test during which the server dies fails, with the server log attached."""
    srv = _server_process
    if not srv.alive():
        try:
            srv.start()
            problem = ""
        except RuntimeError as e:
            problem = str(e)
        if problem:
            pytest.fail(f"could not restart the server after an earlier crash: {problem}", pytrace=False)
    yield srv
    if srv.proc is not None and srv.proc.poll() is not None:
        code = srv.proc.returncode
        srv.proc = None
        srv.crashes.append(f"exit {code}")
        pytest.fail(f"the server process died during this test (exit code {code})\n{srv.log_tail()}", pytrace=False)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Attach the server's log tail to every failing test's report."""
    outcome = yield
    rep = outcome.get_result()
    if rep.failed:
        for srv in item.config.stash.get(_SERVERS, []):
            state = "running" if srv.alive() else "NOT running"
            rep.sections.append((f"shardstore server ({state}, {srv.endpoint})", srv.log_tail(80)))


@pytest.fixture
def s3(server):
    """boto3 client for the root user."""
    return server.client()


@pytest.fixture
def s3_alice(server):
    """boto3 client for the second user from the --users file."""
    return server.client(ALICE)


@pytest.fixture
def s3_bob(server):
    """boto3 client for a third user from the --users file."""
    return server.client(BOB)


@pytest.fixture
def s3_anon(server):
    """Anonymous (unsigned) boto3 client."""
    return server.client(unsigned=True)


def unique_bucket_name(hint: str = "b") -> str:
    hint = re.sub(r"[^a-z0-9-]+", "-", hint.lower()).strip("-")[:30].strip("-") or "b"
    return f"e2e-{hint}-{uuid.uuid4().hex[:10]}"


def empty_and_delete_bucket(client, bucket: str) -> None:
    """Best-effort cleanup: abort uploads, delete every object, delete bucket."""
    from botocore.exceptions import ClientError

    try:
        for page in client.get_paginator("list_multipart_uploads").paginate(Bucket=bucket):
            for up in page.get("Uploads", []):
                client.abort_multipart_upload(Bucket=bucket, Key=up["Key"], UploadId=up["UploadId"])
    except ClientError:
        pass
    try:
        for page in client.get_paginator("list_objects_v2").paginate(Bucket=bucket):
            keys = [{"Key": o["Key"]} for o in page.get("Contents", [])]
            if keys:
                client.delete_objects(Bucket=bucket, Delete={"Objects": keys, "Quiet": True})
        client.delete_bucket(Bucket=bucket)
    except ClientError:
        pass


@pytest.fixture
def bucket(request, s3):
    """A fresh bucket owned by root, emptied and deleted after the test."""
    name = unique_bucket_name(request.node.name.removeprefix("test_"))
    s3.create_bucket(Bucket=name)
    yield name
    try:
        empty_and_delete_bucket(s3, name)
    except Exception:  # cleanup must never mask the test's own outcome
        pass


@dataclass
class CLIResult:
    args: list
    returncode: int
    stdout: str
    stderr: str

    def __str__(self) -> str:
        return f"aws {' '.join(self.args)} -> exit {self.returncode}\nstdout:\n{self.stdout}\nstderr:\n{self.stderr}"


@pytest.fixture
def aws(server, tmp_path):
    """Run the aws cli (v1, installed in the venv) against the server as root."""

    def run(
        *args: str, check: bool = True, timeout: int = 300, creds: Creds | None = None, env: dict | None = None
    ) -> CLIResult:
        creds = creds or server.root
        full_env = dict(os.environ)
        full_env.update(
            AWS_ACCESS_KEY_ID=creds.access_key,
            AWS_SECRET_ACCESS_KEY=creds.secret_key,
            AWS_DEFAULT_REGION=REGION,
            AWS_PAGER="",
        )
        full_env.update(env or {})
        argv = [str(a) for a in args]
        cmd = [sys.executable, "-m", "awscli", *argv, "--endpoint-url", server.endpoint]
        res = subprocess.run(
            cmd,
            env=full_env,
            cwd=tmp_path,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        out = CLIResult(argv, res.returncode, res.stdout, res.stderr)
        if check and res.returncode != 0:
            pytest.fail(f"aws cli failed: {out}", pytrace=False)
        return out

    return run
