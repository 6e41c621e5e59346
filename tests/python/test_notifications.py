"""Bucket event notifications (issue #46) to a webhook target, end to end:
the server is configured as MinIO users configure it (MINIO_NOTIFY_WEBHOOK_*
variables), the bucket through boto3's put_bucket_notification_configuration,
and the events are read back from a real HTTP receiver this module starts.

Faults: the receiver is stopped while objects are written and started again
(every event arrives), the server is killed with SIGKILL in the middle of a
write load (every acknowledged write's event arrives after the restart), and a
4-node cluster delivers each event once.
"""

from __future__ import annotations

import datetime
import http.server
import json
import threading
import time
import urllib.parse

import pytest
import requests
from botocore.exceptions import ClientError

import conftest
from conftest import empty_and_delete_bucket, unique_bucket_name
from s3util import error_code

TOKEN = "notify-secret-token-0123"
ARN = "arn:minio:sqs::PRIMARY:webhook"
WAIT_S = 90


class Receiver:
    """An HTTP receiver on a fixed loopback port that keeps every POSTed
    body; stop() closes the socket (the target is down), start() listens
    on the same port again."""

    def __init__(self):
        self.events: list[dict] = []
        self.audit: list[dict] = []
        self.auth: set[str] = set()
        self.lock = threading.Lock()
        self.port = 0
        self.httpd = None
        self.start()

    def start(self):
        recv = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                n = int(self.headers.get("Content-Length", "0"))
                body = self.rfile.read(n)
                with recv.lock:
                    if self.path.startswith("/audit"):
                        recv.audit.append(json.loads(body))
                    else:
                        recv.events.append(json.loads(body))
                        recv.auth.add(self.headers.get("Authorization", ""))
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def do_HEAD(self):
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        http.server.ThreadingHTTPServer.allow_reuse_address = True
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self.port = self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def stop(self):
        self.httpd.shutdown()
        self.httpd.server_close()

    def for_bucket(self, bucket: str) -> list[dict]:
        with self.lock:
            return [e for e in self.events if e["Key"].split("/", 1)[0] == bucket]

    def wait(self, bucket: str, n: int, timeout: float = WAIT_S) -> list[dict]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            got = self.for_bucket(bucket)
            if len(got) >= n:
                return got
            time.sleep(0.1)
        got = self.for_bucket(bucket)
        raise AssertionError(f"{len(got)} of {n} events arrived for {bucket}: {[e['EventName'] + ' ' + e['Key'] for e in got]}")


def notify_env(port: int) -> dict:
    return {
        "MINIO_NOTIFY_WEBHOOK_ENABLE_PRIMARY": "on",
        "MINIO_NOTIFY_WEBHOOK_ENDPOINT_PRIMARY": f"http://127.0.0.1:{port}/events",
        "MINIO_NOTIFY_WEBHOOK_AUTH_TOKEN_PRIMARY": TOKEN,
        "MINIO_NOTIFY_WEBHOOK_QUEUE_LIMIT_PRIMARY": "100000",
        "MINIO_AUDIT_WEBHOOK_ENABLE_AUD": "on",
        "MINIO_AUDIT_WEBHOOK_ENDPOINT_AUD": f"http://127.0.0.1:{port}/audit",
    }


def start_server(binary, base, port: int, nodes: int | None = None) -> conftest.Server:
    """A server (nodes=None: as the suite runs, single or SHARDSTORE_TEST_CLUSTER;
    0: one process; N: N node processes) with the webhook and audit targets."""
    srv = conftest.Server(binary, base, extra_args=["--notify-retry-max", "500ms"])
    if nodes is not None:
        srv.nodes = nodes
        if nodes:
            per = 16 // nodes
            srv.drives = [srv.drives_dir / f"node{n}" / f"d{i}" for n in range(1, nodes + 1) for i in range(1, per + 1)]
        else:
            srv.drives = [srv.drives_dir / f"d{i}" for i in range(1, 17)]
        for d in srv.drives:
            d.mkdir(parents=True, exist_ok=True)
    base_env = srv._node_env
    srv._node_env = lambda: {**base_env(), **notify_env(port)}
    srv.start()
    return srv


def root_client(endpoint: str, **config):
    """A boto3 client of the root user for one node's endpoint."""
    import boto3
    from botocore.config import Config
    return boto3.session.Session(aws_access_key_id=conftest.ROOT_USER, aws_secret_access_key=conftest.ROOT_PASSWORD,
                                 region_name=conftest.REGION).client("s3", endpoint_url=endpoint, config=Config(**config))


@pytest.fixture(scope="module")
def receiver():
    r = Receiver()
    yield r
    r.stop()


@pytest.fixture(scope="module")
def nserver(shardstore_bin, tmp_path_factory, receiver):
    srv = start_server(shardstore_bin, tmp_path_factory.mktemp("notify"), receiver.port)
    yield srv
    srv.stop()


def subscribe(s3, bucket: str, events=("s3:ObjectCreated:*", "s3:ObjectRemoved:*", "s3:ObjectTagging:*"), **filt):
    cfg = {"Id": "all", "QueueArn": ARN, "Events": list(events)}
    if filt:
        cfg["Filter"] = {"Key": {"FilterRules": [{"Name": k, "Value": v} for k, v in filt.items()]}}
    s3.put_bucket_notification_configuration(Bucket=bucket, NotificationConfiguration={"QueueConfigurations": [cfg]})


@pytest.fixture
def nbucket(nserver):
    s3 = nserver.client()
    name = unique_bucket_name("ntf")
    s3.create_bucket(Bucket=name)
    yield name
    empty_and_delete_bucket(nserver.client(), name)  # a test may have restarted the server


def test_configuration_round_trip_and_errors(nserver, nbucket):
    s3 = nserver.client()
    assert s3.get_bucket_notification_configuration(Bucket=nbucket).get("QueueConfigurations") is None
    subscribe(s3, nbucket, Prefix="img/", Suffix=".jpg")
    got = s3.get_bucket_notification_configuration(Bucket=nbucket)["QueueConfigurations"]
    assert got[0]["QueueArn"] == ARN and got[0]["Id"] == "all"
    assert set(got[0]["Events"]) == {"s3:ObjectCreated:*", "s3:ObjectRemoved:*", "s3:ObjectTagging:*"}
    rules = {r["Name"].lower(): r["Value"] for r in got[0]["Filter"]["Key"]["FilterRules"]}
    assert rules == {"prefix": "img/", "suffix": ".jpg"}
    bad = [
        ({"QueueConfigurations": [{"QueueArn": "arn:minio:sqs::NOPE:webhook", "Events": ["s3:ObjectCreated:*"]}]}, "InvalidArgument"),
        ({"QueueConfigurations": [{"QueueArn": ARN, "Events": ["s3:ObjectCreated:Sneeze"]}]}, "InvalidArgument"),
        ({"QueueConfigurations": [{"QueueArn": ARN, "Events": ["s3:ObjectCreated:*"]},
                                  {"QueueArn": ARN, "Events": ["s3:ObjectCreated:Put"]}]}, "InvalidArgument"),
    ]
    for cfg, code in bad:
        with pytest.raises(ClientError) as e:
            s3.put_bucket_notification_configuration(Bucket=nbucket, NotificationConfiguration=cfg)
        assert error_code(e.value) == code
    with pytest.raises(ClientError) as e:
        s3.put_bucket_notification_configuration(
            Bucket=nbucket, NotificationConfiguration={"QueueConfigurations": [{"QueueArn": "arn:minio:sqs::NOPE:webhook", "Events": ["s3:ObjectCreated:*"]}]})
    assert "Unable to validate the following destination configurations" in str(e.value)
    # The refused documents left the first one in place.
    assert s3.get_bucket_notification_configuration(Bucket=nbucket)["QueueConfigurations"][0]["Id"] == "all"
    # An empty configuration turns notifications off.
    s3.put_bucket_notification_configuration(Bucket=nbucket, NotificationConfiguration={})
    assert s3.get_bucket_notification_configuration(Bucket=nbucket).get("QueueConfigurations") is None


def test_every_kind_of_event(nserver, nbucket, receiver):
    s3 = nserver.client()
    s3.put_bucket_versioning(Bucket=nbucket, VersioningConfiguration={"Status": "Enabled"})
    # AWS's spelling of tagging events; with s3:ObjectCreated:* a rule gets
    # them as MinIO names them (s3:ObjectCreated:PutTagging).
    subscribe(s3, nbucket, events=("s3:ObjectCreated:Put", "s3:ObjectCreated:Post", "s3:ObjectCreated:Copy",
                                   "s3:ObjectCreated:CompleteMultipartUpload", "s3:ObjectRemoved:*", "s3:ObjectTagging:*"))
    key = "dir/a b+ü.txt"
    put = s3.put_object(Bucket=nbucket, Key=key, Body=b"hello")
    s3.copy_object(Bucket=nbucket, Key="copy.txt", CopySource={"Bucket": nbucket, "Key": key})
    up = s3.create_multipart_upload(Bucket=nbucket, Key="mp.bin")
    part = s3.upload_part(Bucket=nbucket, Key="mp.bin", UploadId=up["UploadId"], PartNumber=1, Body=b"x" * 100)
    s3.complete_multipart_upload(Bucket=nbucket, Key="mp.bin", UploadId=up["UploadId"],
                                 MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": part["ETag"]}]})
    presigned = s3.generate_presigned_post(nbucket, "form.txt", ExpiresIn=600)
    resp = requests.post(presigned["url"], data=presigned["fields"], files={"file": ("form.txt", b"form", "text/plain")}, timeout=60)
    assert resp.status_code == 204, resp.text
    s3.put_object_tagging(Bucket=nbucket, Key="copy.txt", Tagging={"TagSet": [{"Key": "k", "Value": "v"}]})
    s3.delete_object_tagging(Bucket=nbucket, Key="copy.txt")
    marker = s3.delete_object(Bucket=nbucket, Key="copy.txt")
    s3.delete_object(Bucket=nbucket, Key="copy.txt", VersionId=marker["VersionId"])
    s3.delete_objects(Bucket=nbucket, Delete={"Objects": [{"Key": "mp.bin"}, {"Key": "form.txt"}]})
    expected = [
        ("s3:ObjectCreated:Put", key), ("s3:ObjectCreated:Copy", "copy.txt"),
        ("s3:ObjectCreated:CompleteMultipartUpload", "mp.bin"), ("s3:ObjectCreated:Post", "form.txt"),
        ("s3:ObjectTagging:Put", "copy.txt"), ("s3:ObjectTagging:Delete", "copy.txt"),
        ("s3:ObjectRemoved:DeleteMarkerCreated", "copy.txt"), ("s3:ObjectRemoved:Delete", "copy.txt"),
        ("s3:ObjectRemoved:DeleteMarkerCreated", "mp.bin"), ("s3:ObjectRemoved:DeleteMarkerCreated", "form.txt"),
    ]
    got = receiver.wait(nbucket, len(expected))
    time.sleep(0.5)  # nothing more may come
    got = receiver.for_bucket(nbucket)
    names = sorted((e["EventName"], e["Key"].split("/", 1)[1]) for e in got)
    assert names == sorted(expected)
    # The record is S3's event message.
    first = next(e for e in got if e["EventName"] == "s3:ObjectCreated:Put")
    rec = first["Records"][0]
    assert rec["eventVersion"] == "2.0" and rec["eventSource"] == "aws:s3"
    assert rec["eventName"] == "ObjectCreated:Put"
    assert rec["awsRegion"] == conftest.REGION
    assert rec["s3"]["bucket"]["name"] == nbucket and rec["s3"]["bucket"]["arn"] == f"arn:aws:s3:::{nbucket}"
    assert rec["s3"]["configurationId"] == "all"
    obj = rec["s3"]["object"]
    assert urllib.parse.unquote_plus(obj["key"]) == key and obj["key"] != key
    assert obj["size"] == 5 and obj["eTag"] == put["ETag"].strip('"') and obj["versionId"] == put["VersionId"]
    assert obj["sequencer"]
    assert rec["userIdentity"]["principalId"] == conftest.ROOT_USER
    assert rec["requestParameters"]["sourceIPAddress"] == "127.0.0.1"
    assert rec["responseElements"]["x-amz-request-id"] == put["ResponseMetadata"]["HTTPHeaders"]["x-amz-request-id"]
    assert f"Bearer {TOKEN}" in receiver.auth
    # The token is never written to the server's logs.
    assert TOKEN not in nserver.log_tail(10000)


def test_object_accessed_lock_and_attributes_events(nserver, receiver):
    """MinIO's read events of GetObjectRetention, GetObjectLegalHold and
    GetObjectAttributes (s3:ObjectAccessed:GetRetention, :GetLegalHold,
    :Attributes), sent when the request is answered 2xx; a refused one
    (no retention set) sends none."""
    s3 = nserver.client()
    bucket = unique_bucket_name("ntf-lock")
    s3.create_bucket(Bucket=bucket, ObjectLockEnabledForBucket=True)
    s3.put_object(Bucket=bucket, Key="locked", Body=b"held",
                  ObjectLockMode="GOVERNANCE", ObjectLockLegalHoldStatus="ON",
                  ObjectLockRetainUntilDate=datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(days=1))
    put = s3.put_object(Bucket=bucket, Key="plain", Body=b"free")
    subscribe(s3, bucket, events=("s3:ObjectAccessed:*",))
    assert s3.get_object_retention(Bucket=bucket, Key="locked")["Retention"]["Mode"] == "GOVERNANCE"
    assert s3.get_object_legal_hold(Bucket=bucket, Key="locked")["LegalHold"]["Status"] == "ON"
    s3.get_object_attributes(Bucket=bucket, Key="plain", ObjectAttributes=["ETag", "ObjectSize"])
    with pytest.raises(ClientError) as e:
        s3.get_object_retention(Bucket=bucket, Key="plain")  # no retention: refused, no event
    assert error_code(e.value) == "NoSuchObjectLockConfiguration"
    expected = [("s3:ObjectAccessed:GetRetention", "locked"), ("s3:ObjectAccessed:GetLegalHold", "locked"),
                ("s3:ObjectAccessed:Attributes", "plain")]
    receiver.wait(bucket, len(expected))
    time.sleep(0.5)  # nothing more may come
    got = receiver.for_bucket(bucket)
    assert sorted((e["EventName"], e["Key"].split("/", 1)[1]) for e in got) == sorted(expected)
    attrs = next(e for e in got if e["EventName"] == "s3:ObjectAccessed:Attributes")["Records"][0]
    assert attrs["eventName"] == "ObjectAccessed:Attributes"
    obj = attrs["s3"]["object"]
    assert obj["size"] == 4 and obj["eTag"] == put["ETag"].strip('"')
    # Cleanup: the governance lock is bypassed by the root user.
    for v in s3.list_object_versions(Bucket=bucket).get("Versions", []):
        s3.put_object_legal_hold(Bucket=bucket, Key=v["Key"], VersionId=v["VersionId"], LegalHold={"Status": "OFF"})
        s3.delete_object(Bucket=bucket, Key=v["Key"], VersionId=v["VersionId"], BypassGovernanceRetention=True)
    s3.delete_bucket(Bucket=bucket)


def test_filters(nserver, nbucket, receiver):
    s3 = nserver.client()
    subscribe(s3, nbucket, events=("s3:ObjectCreated:Put",), Prefix="img/", Suffix=".jpg")
    for k in ("img/a.jpg", "img/a.png", "doc/b.jpg", "img/sub/c.jpg"):
        s3.put_object(Bucket=nbucket, Key=k, Body=b"x")
    s3.delete_object(Bucket=nbucket, Key="img/a.jpg")
    got = receiver.wait(nbucket, 2)
    time.sleep(0.5)
    assert sorted(e["Key"] for e in receiver.for_bucket(nbucket)) == [f"{nbucket}/img/a.jpg", f"{nbucket}/img/sub/c.jpg"]
    assert all(e["EventName"] == "s3:ObjectCreated:Put" for e in got)


def test_target_down_then_up(nserver, nbucket, receiver):
    s3 = nserver.client()
    subscribe(s3, nbucket, events=("s3:ObjectCreated:*",))
    receiver.stop()
    keys = [f"down/{i:03d}" for i in range(10)]
    try:
        # Three versions of every key, the n-th n bytes long, keys interleaved.
        for n in (1, 2, 3):
            for k in keys:
                s3.put_object(Bucket=nbucket, Key=k, Body=b"x" * n)
        time.sleep(1)
    finally:
        receiver.start()
    got = receiver.wait(nbucket, 3 * len(keys))
    assert sorted(e["Key"].split("/", 1)[1] for e in got) == sorted(keys * 3)
    # In order per key: the target's lanes (parallel, default 16) send
    # records of different keys at once, never two of one key.
    sizes = {}
    for e in got:
        sizes.setdefault(e["Key"].split("/", 1)[1], []).append(e["Records"][0]["s3"]["object"]["size"])
    assert sizes == {k: [1, 2, 3] for k in keys}


def test_kill9_mid_load(shardstore_bin, tmp_path_factory, receiver):
    """Writers put objects until the server is killed with SIGKILL; after a
    restart on the same drives, every put the server acknowledged has its
    event delivered (records of unacknowledged puts may come too)."""
    srv = start_server(shardstore_bin, tmp_path_factory.mktemp("notify-kill"), receiver.port, nodes=0)
    try:
        s3 = srv.client()
        bucket = unique_bucket_name("ntfkill")
        s3.create_bucket(Bucket=bucket)
        subscribe(s3, bucket, events=("s3:ObjectCreated:Put",))
        acked: list[str] = []
        lock = threading.Lock()
        stop = threading.Event()

        def writer(w: int):
            c = root_client(srv.endpoint, retries={"max_attempts": 1})
            i = 0
            while not stop.is_set():
                k = f"w{w}/{i:05d}"
                try:
                    c.put_object(Bucket=bucket, Key=k, Body=b"payload")
                except Exception:
                    return
                with lock:
                    acked.append(k)
                i += 1

        threads = [threading.Thread(target=writer, args=(w,)) for w in range(4)]
        for t in threads:
            t.start()
        deadline = time.monotonic() + 30
        while len(acked) < 200 and time.monotonic() < deadline:
            time.sleep(0.05)
        srv.proc.kill()
        srv.proc.wait()
        stop.set()
        for t in threads:
            t.join()
        with lock:
            done = set(acked)
        assert len(done) >= 50, f"only {len(done)} writes before the kill"
        srv.proc = None
        srv.start()
        deadline = time.monotonic() + WAIT_S
        while time.monotonic() < deadline:
            have = {e["Key"].split("/", 1)[1] for e in receiver.for_bucket(bucket)}
            if done <= have:
                break
            time.sleep(0.2)
        have = {e["Key"].split("/", 1)[1] for e in receiver.for_bucket(bucket)}
        missing = sorted(done - have)
        print(f"kill -9: {len(done)} acknowledged puts, {len(have)} keys with events, {len(missing)} missing")
        assert not missing, f"{len(missing)} acknowledged puts have no event: {missing[:10]}"
    finally:
        srv.stop()


def admin_cli(binary, srv, *args, user=None):
    """Runs `shardstore admin notify ...` against srv, as root or a user."""
    import os
    import subprocess
    env = dict(os.environ)
    env.update({"SHARDSTORE_ENDPOINT": srv.endpoint, "SHARDSTORE_ROOT_USER": conftest.ROOT_USER,
                "SHARDSTORE_ROOT_PASSWORD": conftest.ROOT_PASSWORD})
    if user:
        env.update({"SHARDSTORE_ACCESS_KEY": user.access_key, "SHARDSTORE_SECRET_KEY": user.secret_key})
    return subprocess.run([str(binary), "admin", "notify", *args], capture_output=True, text=True, env=env, timeout=60)


def test_admin_notify_targets(shardstore_bin, nserver, nbucket, receiver):
    """`admin notify add|list|test|remove`: a target added at run time is
    usable by buckets at once, listed without its secret, kept across a
    restart, and removable; only an admin may change targets."""
    secret = "runtime-secret-token-77"
    add = admin_cli(shardstore_bin, nserver, "add", "webhook", "rt1", f"endpoint=http://127.0.0.1:{receiver.port}/rt",
                    f"auth_token={secret}")
    assert add.returncode == 0, add.stderr
    assert "arn:minio:sqs::rt1:webhook" in add.stdout
    denied = admin_cli(shardstore_bin, nserver, "add", "webhook", "rt2", "endpoint=http://127.0.0.1:1/", user=conftest.ALICE)
    assert denied.returncode != 0 and "denied" in denied.stderr.lower()
    bad = admin_cli(shardstore_bin, nserver, "add", "webhook", "rt3", "endpoint=ftp://x/")
    assert bad.returncode != 0 and "scheme" in bad.stderr
    envdel = admin_cli(shardstore_bin, nserver, "remove", ARN)
    assert envdel.returncode != 0
    listing = admin_cli(shardstore_bin, nserver, "list", "--json")
    assert listing.returncode == 0, listing.stderr
    targets = {t["ARN"]: t for t in json.loads(listing.stdout)}
    assert targets["arn:minio:sqs::rt1:webhook"]["Source"] == "admin"
    assert targets[ARN]["Source"] == "env"
    assert secret not in listing.stdout and TOKEN not in listing.stdout
    assert targets["arn:minio:sqs::rt1:webhook"]["Settings"]["auth_token"] == "*****"
    test = admin_cli(shardstore_bin, nserver, "test", "arn:minio:sqs::rt1:webhook")
    assert test.returncode == 0, test.stderr
    s3 = nserver.client()
    s3.put_bucket_notification_configuration(Bucket=nbucket, NotificationConfiguration={"QueueConfigurations": [
        {"QueueArn": "arn:minio:sqs::rt1:webhook", "Events": ["s3:ObjectCreated:*"]}]})
    s3.put_object(Bucket=nbucket, Key="rt", Body=b"x")
    got = receiver.wait(nbucket, 1)
    assert got[0]["Key"] == f"{nbucket}/rt"
    assert f"Bearer {secret}" in receiver.auth
    # Kept across a restart.
    nserver.stop()
    nserver.start()
    listing = admin_cli(shardstore_bin, nserver, "list")
    assert "arn:minio:sqs::rt1:webhook" in listing.stdout and secret not in listing.stdout
    status = subprocess_status(shardstore_bin, nserver)
    assert "notify target" in status and "arn:minio:sqs::rt1:webhook" in status
    s3 = nserver.client()
    s3.put_bucket_notification_configuration(Bucket=nbucket, NotificationConfiguration={})
    rm = admin_cli(shardstore_bin, nserver, "remove", "arn:minio:sqs::rt1:webhook")
    assert rm.returncode == 0, rm.stderr
    assert "rt1" not in admin_cli(shardstore_bin, nserver, "list").stdout
    with pytest.raises(ClientError) as e:
        s3.put_bucket_notification_configuration(Bucket=nbucket, NotificationConfiguration={"QueueConfigurations": [
            {"QueueArn": "arn:minio:sqs::rt1:webhook", "Events": ["s3:ObjectCreated:*"]}]})
    assert error_code(e.value) == "InvalidArgument"
    assert secret not in nserver.log_tail(10000)


def subprocess_status(binary, srv) -> str:
    import os
    import subprocess
    env = dict(os.environ)
    env.update({"SHARDSTORE_ENDPOINT": srv.endpoint, "SHARDSTORE_ROOT_USER": conftest.ROOT_USER,
                "SHARDSTORE_ROOT_PASSWORD": conftest.ROOT_PASSWORD})
    res = subprocess.run([str(binary), "admin", "status"], capture_output=True, text=True, env=env, timeout=60)
    assert res.returncode == 0, res.stderr
    return res.stdout


def test_audit_records(nserver, nbucket, receiver):
    """MINIO_AUDIT_WEBHOOK_*: every request gets an audit record: API,
    bucket, object, status, bytes, duration, source, access key (never a
    secret)."""
    s3 = nserver.client()
    s3.put_object(Bucket=nbucket, Key="audited", Body=b"12345")
    assert s3.get_object(Bucket=nbucket, Key="audited")["Body"].read() == b"12345"
    with pytest.raises(ClientError):
        s3.get_object(Bucket=nbucket, Key="missing")

    def find(api, key):
        with receiver.lock:
            return [a for a in receiver.audit if a["api"]["name"] == api and a["api"].get("bucket") == nbucket
                    and a["api"].get("object") == key]

    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline and not (find("PutObject", "audited") and find("GetObject", "audited") and find("GetObject", "missing")):
        time.sleep(0.1)
    put, get, miss = find("PutObject", "audited"), find("GetObject", "audited"), find("GetObject", "missing")
    assert put and get and miss, "audit records missing"
    assert put[0]["api"]["statusCode"] == 200 and put[0]["api"]["rx"] >= 5
    assert get[0]["api"]["statusCode"] == 200 and get[0]["api"]["tx"] == 5
    assert miss[0]["api"]["statusCode"] == 404
    for a in (put[0], get[0]):
        assert a["accessKey"] == conftest.ROOT_USER and a["remotehost"] == "127.0.0.1" and a["requestID"]
        assert a["api"]["timeToResponse"].endswith("ns") and a["time"]
    with receiver.lock:
        dump = json.dumps(receiver.audit)
    assert conftest.ROOT_PASSWORD not in dump


def test_cluster_delivers_each_event_once(shardstore_bin, tmp_path_factory, receiver):
    """A 4-node cluster: requests spread over the nodes, and the node that
    handled each request sends its event, so every event arrives once."""
    srv = start_server(shardstore_bin, tmp_path_factory.mktemp("notify-cluster"), receiver.port, nodes=4)
    try:
        clients = [root_client(ep) for ep in srv.node_endpoints]
        assert len(clients) == 4
        bucket = unique_bucket_name("ntfcl")
        clients[0].create_bucket(Bucket=bucket)
        subscribe(clients[0], bucket, events=("s3:ObjectCreated:*", "s3:ObjectRemoved:*"))
        keys = [f"k{i:03d}" for i in range(24)]
        for i, k in enumerate(keys):
            clients[i % 4].put_object(Bucket=bucket, Key=k, Body=b"x")
        for i, k in enumerate(keys[:8]):
            clients[(i + 1) % 4].delete_object(Bucket=bucket, Key=k)
        got = receiver.wait(bucket, 32)
        time.sleep(2)  # a duplicate would come now
        got = receiver.for_bucket(bucket)
        seen = sorted((e["EventName"], e["Key"]) for e in got)
        assert len(seen) == 32 and len(set(seen)) == 32, seen
        # A target added at run time through node 2 is in the cluster's
        # config: node 3 validates a rule naming it and node 4 sends.
        import types
        add = admin_cli(shardstore_bin, types.SimpleNamespace(endpoint=srv.node_endpoints[1]), "add", "webhook", "clrt",
                        f"endpoint=http://127.0.0.1:{receiver.port}/clrt")
        assert add.returncode == 0, add.stderr
        b2 = unique_bucket_name("ntfcl2")
        clients[2].create_bucket(Bucket=b2)
        # The other nodes applied the change before the add was answered
        # (a change notice makes them catch up first).
        clients[2].put_bucket_notification_configuration(Bucket=b2, NotificationConfiguration={"QueueConfigurations": [
            {"QueueArn": "arn:minio:sqs::clrt:webhook", "Events": ["s3:ObjectCreated:*"]}]})
        clients[3].put_object(Bucket=b2, Key="via-node4", Body=b"x")
        got = receiver.wait(b2, 1)
        assert got[0]["Key"] == f"{b2}/via-node4"
    finally:
        srv.stop()
