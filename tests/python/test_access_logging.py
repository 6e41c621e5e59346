"""Server access logging (issue #42): Put/GetBucketLogging through boto3, and
the log objects the server writes into target buckets, parsed as S3's server
access log format.

The module starts its own server with --access-log-interval 1s, so that
batches of records become log objects within a second or two instead of the
default five minutes.
"""

from __future__ import annotations

import re
import time
import urllib.parse
import urllib.request

import pytest
from botocore.exceptions import ClientError

import conftest
from conftest import ALICE, BOB, empty_and_delete_bucket, unique_bucket_name
from s3util import error_code, http_status

DELIVERY_TIMEOUT_S = 60

# One log record: S3's documented fields, unquoted ones without spaces, the
# time in brackets, the request line, referer and user agent in quotes.
LINE = re.compile(
    r'^(?P<owner>\S+) (?P<bucket>\S+) \[(?P<time>[^\]]+)\] (?P<ip>\S+) (?P<requester>\S+) (?P<id>\S+) '
    r'(?P<op>\S+) (?P<key>\S+) "(?P<uri>[^"]*)" (?P<status>\S+) (?P<error>\S+) (?P<sent>\S+) (?P<size>\S+) '
    r'(?P<total>\S+) (?P<turn>\S+) "(?P<referer>[^"]*)" "(?P<ua>[^"]*)" (?P<version>\S+) (?P<hostid>\S+) '
    r'(?P<sig>\S+) (?P<cipher>\S+) (?P<auth>\S+) (?P<host>\S+) (?P<tls>\S+) (?P<ap>\S+) (?P<acl>\S+)$'
)
SIMPLE_KEY = re.compile(r"^(?P<prefix>.*)(\d{4}-\d{2}-\d{2}-\d{2}-\d{2}-\d{2})-[0-9A-F]{16}$")


@pytest.fixture(scope="module")
def log_server(shardstore_bin, tmp_path_factory):
    srv = conftest.Server(shardstore_bin, tmp_path_factory.mktemp("accesslog"), extra_args=["--access-log-interval", "1s"])
    srv.start()
    yield srv
    srv.stop()


@pytest.fixture
def buckets(log_server):
    """Makes buckets (as root unless a client is given) and removes them afterwards."""
    made: list[tuple[object, str]] = []

    def make(hint: str, client=None, **kwargs) -> str:
        c = client or log_server.client()
        name = unique_bucket_name(hint)
        c.create_bucket(Bucket=name, **kwargs)
        made.append((c, name))
        return name

    yield make
    for c, name in reversed(made):
        try:
            empty_and_delete_bucket(c, name)
        except Exception:
            pass


def enable(client, source: str, target: str, prefix: str, **extra) -> None:
    client.put_bucket_logging(
        Bucket=source,
        BucketLoggingStatus={"LoggingEnabled": {"TargetBucket": target, "TargetPrefix": prefix, **extra}},
    )


def log_records(client, target: str, prefix: str, want_ids: set[str]) -> tuple[list[str], list[dict]]:
    """Wait until the log objects under prefix hold every request id in
    want_ids; return their keys and parsed records."""
    deadline = time.monotonic() + DELIVERY_TIMEOUT_S
    while True:
        keys, records = [], []
        for page in client.get_paginator("list_objects_v2").paginate(Bucket=target, Prefix=prefix):
            for o in page.get("Contents", []):
                keys.append(o["Key"])
                body = client.get_object(Bucket=target, Key=o["Key"])["Body"].read().decode()
                assert body.endswith("\n"), body
                for line in body.splitlines():
                    m = LINE.match(line)
                    assert m, f"not a log line: {line!r}"
                    records.append(m.groupdict())
        if want_ids <= {r["id"] for r in records}:
            return keys, records
        if time.monotonic() > deadline:
            pytest.fail(f"log records of {sorted(want_ids - {r['id'] for r in records})} not delivered within {DELIVERY_TIMEOUT_S}s; have {len(records)}")
        time.sleep(0.5)


def request_id(resp: dict) -> str:
    return resp["ResponseMetadata"]["RequestId"]


def test_logging_configuration(log_server, buckets):
    s3 = log_server.client()
    src, logs = buckets("src"), buckets("logs")
    assert "LoggingEnabled" not in s3.get_bucket_logging(Bucket=src)
    enable(s3, src, logs, "access/", TargetObjectKeyFormat={"PartitionedPrefix": {"PartitionDateSource": "EventTime"}})
    got = s3.get_bucket_logging(Bucket=src)["LoggingEnabled"]
    assert got["TargetBucket"] == logs and got["TargetPrefix"] == "access/"
    assert got["TargetObjectKeyFormat"] == {"PartitionedPrefix": {"PartitionDateSource": "EventTime"}}
    # An empty BucketLoggingStatus turns logging off.
    s3.put_bucket_logging(Bucket=src, BucketLoggingStatus={})
    assert "LoggingEnabled" not in s3.get_bucket_logging(Bucket=src)


def test_logging_refusals(log_server, buckets):
    alice, bob = log_server.client(ALICE), log_server.client(BOB)
    src = buckets("src", alice)
    alices_logs = buckets("alogs", alice)
    bobs = buckets("bobs", bob)
    eu = buckets("eu", alice, CreateBucketConfiguration={"LocationConstraint": "eu-west-1"})
    locked = buckets("locked", alice, ObjectLockEnabledForBucket=True)
    cases = [
        (alice, src, unique_bucket_name("missing"), {}, 400, "InvalidTargetBucketForLogging"),
        (alice, src, bobs, {}, 400, "InvalidTargetBucketForLogging"),
        (alice, src, eu, {}, 403, "CrossLocationLoggingProhibitted"),
        (alice, src, locked, {}, 400, "InvalidTargetBucketForLogging"),
        (bob, src, alices_logs, {}, 403, "AccessDenied"),
        (alice, src, alices_logs, {"TargetGrants": [{"Grantee": {"Type": "AmazonCustomerByEmail", "EmailAddress": "x@example.com"}, "Permission": "READ"}]},
         400, "UnresolvableGrantByEmailAddress"),
    ]
    for client, source, target, extra, status, code in cases:
        with pytest.raises(ClientError) as e:
            enable(client, source, target, "p/", **extra)
        assert (http_status(e.value), error_code(e.value)) == (status, code), (target, e.value.response)
    assert "LoggingEnabled" not in alice.get_bucket_logging(Bucket=src)
    with pytest.raises(ClientError) as e:
        bob.get_bucket_logging(Bucket=src)
    assert error_code(e.value) == "AccessDenied"
    # Grants on a target whose ACLs are off.
    enforced = buckets("enforced", alice, ObjectOwnership="BucketOwnerEnforced")
    with pytest.raises(ClientError) as e:
        enable(alice, src, enforced, "p/", TargetGrants=[{"Grantee": {"Type": "Group", "URI": "http://acs.amazonaws.com/groups/global/AuthenticatedUsers"}, "Permission": "READ"}])
    assert error_code(e.value) == "AccessControlListNotSupported"


def test_log_records_delivered(log_server, buckets):
    """Requests on a logged bucket, hostile keys and user agent included,
    arrive as one record each in S3's format."""
    ua = 'evil "agent" with spaces\\and a backslash'
    s3 = log_server.client(user_agent_extra=ua)
    anon = log_server.client(unsigned=True)
    src, logs = buckets("src"), buckets("logs")
    other = buckets("plain")
    enable(s3, src, logs, "logs/")
    ids: dict[str, tuple[str, str, int, str]] = {}  # id -> op, key, status, error

    def note(resp, op, key, status=200, error="-"):
        ids[request_id(resp)] = (op, key, status, error)

    hostile = 'dir/a key "quoted"\n\t%2F+é'
    note(s3.put_object(Bucket=src, Key=hostile, Body=b"x" * 1000), "REST.PUT.OBJECT", hostile)
    note(s3.get_object(Bucket=src, Key=hostile, Range="bytes=0-9"), "REST.GET.OBJECT", hostile, 206)
    note(s3.head_object(Bucket=src, Key=hostile), "REST.HEAD.OBJECT", hostile)
    note(s3.list_objects_v2(Bucket=src), "REST.GET.BUCKET", "-")
    for client, code, status in ((s3, "NoSuchKey", 404), (anon, "AccessDenied", 403)):
        with pytest.raises(ClientError) as e:
            client.get_object(Bucket=src, Key="missing")
        ids[e.value.response["ResponseMetadata"]["RequestId"]] = ("REST.GET.OBJECT", "missing", status, code)
    # A presigned GET (boto3's default form: SigV2 in the query string).
    url = s3.generate_presigned_url("get_object", Params={"Bucket": src, "Key": "dir/plain"}, ExpiresIn=300)
    s3.put_object(Bucket=src, Key="dir/plain", Body=b"p")
    with urllib.request.urlopen(url, timeout=30) as resp:
        assert resp.read() == b"p"
        presigned = resp.headers["x-amz-request-id"]
    note(s3.delete_object(Bucket=src, Key=hostile), "REST.DELETE.OBJECT", hostile, 204)
    # Nothing from a bucket without logging.
    unlogged = request_id(s3.put_object(Bucket=other, Key="k", Body=b"y"))

    keys, records = log_records(s3, logs, "logs/", set(ids) | {presigned})
    for k in keys:
        assert SIMPLE_KEY.match(k) and k.startswith("logs/"), k
    by_id = {}
    for r in records:
        assert r["id"] not in by_id, f"request {r['id']} logged twice"
        by_id[r["id"]] = r
    assert unlogged not in by_id
    owner = s3.list_buckets()["Owner"]["ID"]
    for rid, (op, key, status, error) in ids.items():
        r = by_id[rid]
        assert r["bucket"] == src and r["owner"] == owner, r
        assert r["op"] == op and int(r["status"]) == status and r["error"] == error, r
        assert (urllib.parse.unquote(r["key"]) if r["key"] != "-" else "-") == key, r
        assert r["ip"] == "127.0.0.1", r
        if r["error"] == "AccessDenied":
            assert r["requester"] == "-" and r["sig"] == "-" and r["auth"] == "-", r
        else:
            assert r["requester"] == owner and r["sig"] == "SigV4" and r["auth"] == "AuthHeader", r
            # The user agent arrives whole, its quotes and backslash escaped.
            assert 'evil \\x22agent\\x22 with spaces\\x5Cand a backslash' in r["ua"], r
        time.strptime(r["time"], "%d/%b/%Y:%H:%M:%S +0000")
    p = by_id[presigned]
    assert (p["op"], p["key"], p["status"], p["auth"], p["sig"]) == ("REST.GET.OBJECT", "dir/plain", "200", "QueryString", "SigV2"), p
    assert p["uri"].startswith("GET /" + src + "/dir/plain?") and "Signature=" in p["uri"], p
    put = next(by_id[i] for i, v in ids.items() if v[0] == "REST.PUT.OBJECT")
    get = next(by_id[i] for i, v in ids.items() if v[0] == "REST.GET.OBJECT" and v[2] == 206)
    assert put["size"] == "1000" and put["sent"] == "-", put
    assert get["size"] == "1000" and get["sent"] == "10", get
    assert put["uri"].startswith("PUT /" + src + "/dir/a%20key") and put["uri"].endswith(" HTTP/1.1"), put


def test_partitioned_keys_and_grants(log_server, buckets):
    alice, bob = log_server.client(ALICE), log_server.client(BOB)
    src = buckets("src", alice, ObjectOwnership="ObjectWriter")
    logs = buckets("logs", alice, ObjectOwnership="ObjectWriter")
    bob_id = bob.list_buckets()["Owner"]["ID"]
    enable(alice, src, logs, "part/",
           TargetObjectKeyFormat={"PartitionedPrefix": {"PartitionDateSource": "DeliveryTime"}},
           TargetGrants=[{"Grantee": {"Type": "CanonicalUser", "ID": bob_id}, "Permission": "READ"}])
    rid = request_id(alice.put_object(Bucket=src, Key="k", Body=b"z"))
    keys, _ = log_records(alice, logs, "part/", {rid})
    region = alice.get_bucket_location(Bucket=src).get("LocationConstraint") or "us-east-1"
    account = alice.list_buckets()["Owner"]["ID"]
    pat = re.compile(rf"^part/{account}/{region}/{re.escape(src)}/(\d{{4}})/(\d{{2}})/(\d{{2}})/\1-\2-\3-\d{{2}}-\d{{2}}-\d{{2}}-[0-9A-F]{{16}}$")
    assert all(pat.match(k) for k in keys), keys
    # The TargetGrants let bob read the log objects.
    assert bob.get_object(Bucket=logs, Key=keys[0])["Body"].read()


def test_target_deleted_later(log_server, buckets):
    """Records for a target that no longer exists are dropped with a log line
    naming the buckets, not kept or retried forever."""
    s3 = log_server.client()
    src = buckets("src")
    target = unique_bucket_name("gone")
    s3.create_bucket(Bucket=target)
    enable(s3, src, target, "p/")
    empty_and_delete_bucket(s3, target)
    s3.put_object(Bucket=src, Key="after-delete", Body=b"1")
    deadline = time.monotonic() + DELIVERY_TIMEOUT_S
    line = ""
    while time.monotonic() < deadline:
        text = log_server.stderr_path.read_text(errors="replace")
        line = next((ln for ln in text.splitlines() if "access log records dropped" in ln and f"target_bucket={target}" in ln), "")
        if line:
            break
        time.sleep(0.5)
    assert line, "no log line for records dropped for a deleted target"
    assert f"source_bucket={src}" in line and "records=" in line, line
    # The server goes on: a new target of the same name gets later records.
    s3.create_bucket(Bucket=target)
    try:
        rid = request_id(s3.put_object(Bucket=src, Key="after-recreate", Body=b"2"))
        log_records(s3, target, "p/", {rid})
    finally:
        empty_and_delete_bucket(s3, target)


def test_records_survive_restart(log_server, buckets):
    """Records of answered requests are delivered after a stop and a start."""
    s3 = log_server.client()
    src, logs = buckets("src"), buckets("logs")
    enable(s3, src, logs, "r/")
    ids = {request_id(s3.put_object(Bucket=src, Key=f"k{i}", Body=b"v")) for i in range(20)}
    log_server.stop()
    log_server.start()
    s3 = log_server.client()
    _, records = log_records(s3, logs, "r/", ids)
    assert sorted(r["id"] for r in records if r["id"] in ids) == sorted(ids)


def test_malformed_logging_bodies(log_server, buckets):
    """Documents S3's schema refuses, sent raw: MalformedXML, nothing stored."""
    from s3util import raw_request, sign

    s3 = log_server.client()
    src, logs = buckets("src"), buckets("logs")
    bodies = [
        b"",
        b"<BucketLoggingStatus><LoggingEnabled><TargetBucket>" + logs.encode() + b"</TargetBucket></LoggingEnabled></BucketLoggingStatus>",
        b"<BucketLoggingStatus><LoggingEnabled><TargetBucket>" + logs.encode() + b"</TargetBucket><TargetPrefix>p</TargetPrefix>"
        b"<TargetObjectKeyFormat><SimplePrefix/><PartitionedPrefix/></TargetObjectKeyFormat></LoggingEnabled></BucketLoggingStatus>",
        b"<BucketLoggingStatus><LoggingEnabled>",
        b'<!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]><BucketLoggingStatus><LoggingEnabled><TargetBucket>&e;</TargetBucket>'
        b"<TargetPrefix>p</TargetPrefix></LoggingEnabled></BucketLoggingStatus>",
    ]
    root = log_server.root
    for body in bodies:
        target = f"/{src}?logging"
        hdrs = sign(log_server.endpoint, root.access_key, root.secret_key, "PUT", target, body)
        resp = raw_request(log_server.endpoint, "PUT", target, body, hdrs)
        assert resp.status == 400 and resp.error_code() == "MalformedXML", (body, str(resp))
    assert "LoggingEnabled" not in s3.get_bucket_logging(Bucket=src)
    # DELETE ?logging is no API, and must never delete the bucket.
    hdrs = sign(log_server.endpoint, root.access_key, root.secret_key, "DELETE", f"/{src}?logging")
    assert raw_request(log_server.endpoint, "DELETE", f"/{src}?logging", b"", hdrs).status == 405
    s3.head_bucket(Bucket=src)
