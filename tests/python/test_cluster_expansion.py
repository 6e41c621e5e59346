"""Rolling expansion of a cluster under boto3 load (issue 47, docs/pools.md).

A cluster of 3 node processes (one pool, 2 drives each, on 127.0.0.1-3) is
filled, then expanded by a pool on 3 new nodes (127.0.0.4-6) while boto3
writers and readers at default settings run through the old nodes: the new
nodes start with both pools, the old ones are restarted one at a time with
the pool appended. A request boto3 gave up on with a retryable outcome (a
503 "starting" past its retries, a connection refused by the node being
restarted) goes to the next node, as through a load balancer; any other
failure fails the test. After the expansion completes every acknowledged
object is read back through every node, byte-identical, and new objects are
written through the new nodes.

It starts 6 processes and restarts 3 (about 2 minutes), so it runs in
scripts/nightly (SHARDSTORE_NIGHTLY=1), not in CI, where the Go test
TestClusterRollingExpansion (test/cluster) covers the same steps.
"""

from __future__ import annotations

import os
import random
import signal
import socket
import subprocess
import threading
import time
import urllib.request
from pathlib import Path

import boto3
import botocore.config
import pytest
from botocore.exceptions import ClientError, EndpointConnectionError, ConnectionClosedError, ReadTimeoutError

from conftest import ROOT_PASSWORD, ROOT_USER, REGION

pytestmark = pytest.mark.skipif(
    os.environ.get("SHARDSTORE_NIGHTLY") != "1",
    reason="runs in scripts/nightly (SHARDSTORE_NIGHTLY=1): it starts 6 node processes and restarts 3; "
    "in CI test/cluster's TestClusterRollingExpansion covers the expansion",
)

OLD, NEW = 3, 3
RETRYABLE = {"SlowDown", "ServiceUnavailable", "503", "InternalError", "RequestTimeout"}


def free_port() -> int:
    with socket.socket() as sk:
        sk.bind(("127.0.0.1", 0))
        return sk.getsockname()[1]


class Node:
    """One node process in its own working directory on 127.0.0.I."""

    def __init__(self, binary: Path, base: Path, index: int, port: int):
        self.binary, self.index, self.port = binary, index, port
        self.host = f"127.0.0.{index + 1}"
        self.dir = base / f"node{index + 1}"
        self.dir.mkdir(parents=True, exist_ok=True)
        (self.dir / "no-certs").mkdir(exist_ok=True)  # plain HTTP: an empty certificates directory
        self.log = self.dir / "stderr.log"
        self.proc: subprocess.Popen | None = None

    @property
    def endpoint(self) -> str:
        return f"http://{self.host}:{self.port}"

    def start(self, pools: list[str]) -> None:
        env = dict(os.environ, SHARDSTORE_ROOT_USER=ROOT_USER, SHARDSTORE_ROOT_PASSWORD=ROOT_PASSWORD,
                   SHARDSTORE_ALLOW_ROOT_DRIVES="1", SHARDSTORE_CERTS_DIR=str(self.dir / "no-certs"))
        env.pop("AWS_CA_BUNDLE", None)
        with open(self.log, "a") as err:
            err.write(f"\n===== start with {' '.join(pools)}\n")
            self.proc = subprocess.Popen(
                [str(self.binary), "server", "--address", f"{self.host}:{self.port}", "--console-address", "", *pools],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err, cwd=self.dir, env=env)

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=40)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()

    def wait_ready(self, timeout: float = 120) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc is not None and self.proc.poll() is not None:
                raise AssertionError(f"node {self.index + 1} exited ({self.proc.returncode}):\n{self.tail()}")
            try:
                with urllib.request.urlopen(self.endpoint + "/shardstore/health/ready", timeout=2) as r:
                    if r.status == 200:
                        return
            except OSError:
                pass
            time.sleep(0.2)
        raise AssertionError(f"node {self.index + 1} not ready within {timeout}s:\n{self.tail()}")

    def tail(self, lines: int = 30) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    def said(self, text: str) -> bool:
        try:
            return text in self.log.read_text(errors="replace")
        except OSError:
            return False

    def client(self):
        return boto3.client("s3", endpoint_url=self.endpoint, aws_access_key_id=ROOT_USER,
                            aws_secret_access_key=ROOT_PASSWORD, region_name=REGION,
                            config=botocore.config.Config(s3={"addressing_style": "path"}))


def retryable(e: Exception) -> bool:
    if isinstance(e, (EndpointConnectionError, ConnectionClosedError, ReadTimeoutError)):
        return True
    if isinstance(e, ClientError):
        err = e.response.get("Error", {})
        return err.get("Code") in RETRYABLE or e.response.get("ResponseMetadata", {}).get("HTTPStatusCode") == 503
    return False


def test_rolling_expansion_under_boto3_load(shardstore_bin, tmp_path):
    port = free_port()
    nodes = [Node(shardstore_bin, tmp_path, i, port) for i in range(OLD + NEW)]
    one = [f"http://127.0.0.{{1...{OLD}}}:{port}/proc/self/cwd/a{{1...2}}"]
    two = one + [f"http://127.0.0.{{{OLD + 1}...{OLD + NEW}}}:{port}/proc/self/cwd/b{{1...2}}"]
    try:
        for n in nodes[:OLD]:
            n.start(one)
        for n in nodes[:OLD]:
            n.wait_ready()
        clients = [n.client() for n in nodes]
        bucket = "expanding"
        clients[0].create_bucket(Bucket=bucket)
        acked: dict[str, bytes] = {}
        for i in range(20):
            body = os.urandom(4096 + i * 1500)
            clients[i % OLD].put_object(Bucket=bucket, Key=f"before/{i:02d}", Body=body)
            acked[f"before/{i:02d}"] = body

        lock = threading.Lock()
        stop = threading.Event()
        failures: list[str] = []
        given_up: dict[str, int] = {}
        requests = {"count": 0}

        def via(k: int, tries: int = OLD):
            """Call f on old node k, then the next ones on a retryable outcome."""
            def run(f):
                last = None
                for t in range(tries):
                    c = clients[(k + t) % OLD]
                    try:
                        return f(c)
                    except Exception as e:  # noqa: BLE001 - classified below
                        if not retryable(e):
                            raise
                        last = e
                        what = e.response["Error"].get("Code", "?") if isinstance(e, ClientError) else type(e).__name__
                        with lock:
                            given_up[what] = given_up.get(what, 0) + 1
                raise last
            return run

        def writer(w: int):
            k = 0
            while not stop.is_set():
                key, body = f"load/w{w}/{k:04d}", os.urandom(random.randint(1024, 64 << 10))
                try:
                    via(k + w)(lambda c: c.put_object(Bucket=bucket, Key=key, Body=body))
                    with lock:
                        acked[key] = body
                except Exception as e:  # noqa: BLE001
                    if not retryable(e):
                        with lock:
                            failures.append(f"PUT {key}: {e!r}")
                with lock:
                    requests["count"] += 1
                k += 1
                time.sleep(0.05)

        def reader(r: int):
            k = 0
            while not stop.is_set():
                with lock:
                    key, body = random.choice(list(acked.items()))
                try:
                    got = via(k + r)(lambda c: c.get_object(Bucket=bucket, Key=key)["Body"].read())
                    if got != body:
                        with lock:
                            failures.append(f"GET {key}: {len(got)} bytes, not the {len(body)} written")
                except Exception as e:  # noqa: BLE001
                    if not retryable(e):
                        with lock:
                            failures.append(f"GET {key}: {e!r}")
                with lock:
                    requests["count"] += 1
                k += 1
                time.sleep(0.05)

        threads = [threading.Thread(target=writer, args=(w,)) for w in range(3)]
        threads += [threading.Thread(target=reader, args=(r,)) for r in range(2)]
        for t in threads:
            t.start()
        try:
            for n in nodes[OLD:]:
                for j in (1, 2):
                    (n.dir / f"b{j}").mkdir(exist_ok=True)
                n.start(two)
            for i, n in enumerate(nodes[:OLD]):
                time.sleep(1)
                n.stop()
                n.start(two)
                n.wait_ready()
                if i == 0:
                    assert n.said("Cluster: expansion recorded: 2 pools"), n.tail()
                    for m in nodes[OLD:]:
                        m.wait_ready()
            deadline = time.monotonic() + 90
            while not any(n.said("Cluster: expansion complete") for n in nodes):
                assert time.monotonic() < deadline, "the expansion did not complete within 90 s of the last restart"
                time.sleep(0.5)
            time.sleep(1)
        finally:
            stop.set()
            for t in threads:
                t.join(timeout=60)
        print(f"\nexpansion under boto3 load: {requests['count']} requests, {len(acked)} objects acknowledged, "
              f"retryable outcomes boto3 gave up on (then served by the next node): {given_up or 'none'}, {len(failures)} failures")
        assert not failures, "\n".join(failures[:20])

        # Every acknowledged object reads back through every node.
        for key, body in acked.items():
            for i, c in enumerate(clients):
                got = c.get_object(Bucket=bucket, Key=key)["Body"].read()
                assert got == body, f"{key} through node {i + 1}: {len(got)} bytes, not the {len(body)} written"
        # New objects through the new nodes read back through the old ones.
        for i in range(6):
            key, body = f"after/{i}", os.urandom(128 << 10)
            clients[OLD + i % NEW].put_object(Bucket=bucket, Key=key, Body=body)
            assert clients[i % OLD].get_object(Bucket=bucket, Key=key)["Body"].read() == body
    finally:
        for n in nodes:
            n.stop()
