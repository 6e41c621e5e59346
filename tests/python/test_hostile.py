"""Hostile input over raw HTTP: malformed XML, path-traversal keys, bodies
that lie about their length or hash. Malformed requests get an error (or a
dropped connection); keys with ".." or "." segments are ordinary S3 keys and
are stored literally (layout v2 never turns a key into a path). In every case
the server writes nothing outside its drives' own files, and every object
stored before still reads back byte-identical."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

import socket
import time

from conftest import unique_bucket_name
from s3util import MiB, random_bytes, raw_request, send_truncated, sign


WITNESSES = {
    "witness/small": random_bytes(1000),
    "witness/large": random_bytes(2 * MiB + 5),
    "x": b"a key literally named x",
}


@pytest.fixture(scope="module")
def hostile_bucket(_server_process):
    """One bucket for the module, holding the witness objects; stored once
    since every test here only adds to it or fails to."""
    s3 = _server_process.client()
    name = unique_bucket_name("hostile")
    s3.create_bucket(Bucket=name)
    for k, v in WITNESSES.items():
        s3.put_object(Bucket=name, Key=k, Body=v)
    return name


@pytest.fixture
def bucket(hostile_bucket):
    """This module's tests share the witness bucket."""
    return hostile_bucket


@pytest.fixture
def witnesses(s3, bucket):
    """Checks that the objects stored before the attack still read back
    byte-for-byte; returns the bucket's keys."""

    def verify():
        keys = sorted(o["Key"] for o in s3.list_objects_v2(Bucket=bucket).get("Contents", []))
        for k, v in WITNESSES.items():
            assert s3.get_object(Bucket=bucket, Key=k)["Body"].read() == v, k
        return keys

    verify()
    return verify


# Layout v2: a drive's top level holds only the system directory, and that
# holds only these; nothing on disk is named after a bucket or a key.
SYS_DIR = ".shardstore.sys"
# "cluster" holds a cluster node's consensus log (one drive per node),
# "accesslog" the node's spool of server access log records (a few drives),
# "reserve" the space a full drive releases to take deletions (docs/ondisk.md).
SYS_ENTRIES = {"format.json", "lock", "index", "data", "cluster", "accesslog", "reserve"}
FANOUT = {f"{i:02x}" for i in range(256)}


def outside_snapshot(server) -> dict[str, set[str]]:
    """Everything a traversal could reach: the server's base directory (the
    drives' parent), its parent, the drives directory (only d1..d16 belong
    there), the top level of every drive (where a key of "../x" joined to a
    bucket directory would have landed in layout v1), and the names directly
    in each drive's system and data directories (where a key joined to a
    shard path would land). The shard files inside the fan-out directories
    are the store's own and change with every write, so they are left out."""
    base = server.base
    snap = {
        "base": {p.name for p in base.iterdir()},
        "parent": {p.name for p in base.parent.iterdir()},
        "drives": {p.name for p in server.drives_dir.iterdir()},
    }
    for d in server.drives:
        snap[d.name] = {p.name for p in d.iterdir()}
        snap[f"{d.name}/{SYS_DIR}"] = {p.name for p in (d / SYS_DIR).iterdir()}
        snap[f"{d.name}/{SYS_DIR}/data"] = {p.name for p in (d / SYS_DIR / "data").iterdir()}
    return snap


def assert_drive_layout(server) -> None:
    """Each drive holds exactly the v2 system directory and nothing else at
    its top: no bucket or key name ever becomes a path."""
    for d in server.drives:
        top = sorted(p.name for p in d.iterdir())
        assert top == [SYS_DIR], f"{d}: top level holds {top}, want only {SYS_DIR}"
        sys_entries = {p.name for p in (d / SYS_DIR).iterdir()}
        assert sys_entries <= SYS_ENTRIES, f"{d / SYS_DIR}: unexpected {sorted(sys_entries - SYS_ENTRIES)}"
        data = {p.name for p in (d / SYS_DIR / "data").iterdir()}
        assert data <= FANOUT, f"{d / SYS_DIR / 'data'}: unexpected {sorted(data - FANOUT)}"


def diff(before: dict, after: dict) -> dict:
    return {k: sorted(after.get(k, set()) ^ v) for k, v in before.items() if after.get(k, set()) != v}


def signed(server, method, target, body=b"", headers=None, sign_body=None):
    hdrs = sign(
        server.endpoint,
        server.root.access_key,
        server.root.secret_key,
        method,
        target,
        body=body if sign_body is None else sign_body,
        headers=headers,
    )
    return raw_request(server.endpoint, method, target, body=body, headers=hdrs)


def test_malformed_xml_complete_multipart(server, s3, bucket, witnesses):
    uid = s3.create_multipart_upload(Bucket=bucket, Key="mp")["UploadId"]
    etag = s3.upload_part(Bucket=bucket, Key="mp", UploadId=uid, PartNumber=1, Body=b"part one")["ETag"]
    target = f"/{bucket}/mp?uploadId={uid}"
    bodies = [
        b"<CompleteMultipartUpload><Part><PartNumber>1</PartNumber>",  # truncated
        b"this is not xml at all",
        b"<CompleteMultipartUpload></CompleteMultipartUpload>",  # no parts
        b"<CompleteMultipartUpload><Part><PartNumber>one</PartNumber><ETag>x</ETag></Part></CompleteMultipartUpload>",
        b'<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">'
        b'<!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">]><CompleteMultipartUpload>&c;</CompleteMultipartUpload>',
    ]
    for body in bodies:
        resp = signed(server, "POST", target, body=body)
        assert resp.status == 400, f"{body[:60]!r} -> {resp}"
        assert resp.error_code() in ("MalformedXML", "InvalidPart", "InvalidRequest"), f"{body[:60]!r} -> {resp}"
    # The classic truncated document must be MalformedXML precisely.
    resp = signed(server, "POST", target, body=bodies[0])
    assert resp.error_code() == "MalformedXML", str(resp)

    # The upload survived the garbage and still completes.
    good = (
        f"<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>{etag}</ETag></Part>"
        "</CompleteMultipartUpload>"
    ).encode()
    resp = signed(server, "POST", target, body=good)
    assert resp.status == 200, str(resp)
    assert s3.get_object(Bucket=bucket, Key="mp")["Body"].read() == b"part one"
    witnesses()


def test_malformed_xml_delete_objects(server, bucket, witnesses):
    body = b"<Delete><Object><Key>witness/small</Key></Object>"  # unterminated
    md5 = __import__("base64").b64encode(hashlib.md5(body).digest()).decode()
    resp = signed(server, "POST", f"/{bucket}?delete=", body=body, headers={"Content-MD5": md5})
    assert resp.status == 400 and resp.error_code() == "MalformedXML", str(resp)
    witnesses()


# Targets with ".." segments, raw and percent-encoded, and the key each one
# names. S3 does not resolve dot segments: the path after "/bucket/" is
# percent-decoded and is the key, byte for byte. Layout v2 stores every such
# key literally (no key is ever a file-system path), so each PUT must succeed
# under exactly that key, and nothing may appear outside the index and the
# shard files.
TRAVERSAL_TARGETS = [
    ("/{bucket}/../x", "../x"),
    ("/{bucket}/../../x", "../../x"),
    ("/{bucket}/a/../../x", "a/../../x"),
    ("/{bucket}/%2E%2E/x", "../x"),
    ("/{bucket}/%2e%2e/%2e%2e/x", "../../x"),
    ("/{bucket}/..%2Fx", "../x"),
    ("/{bucket}/..%2F..%2F..%2Fescaped", "../../../escaped"),
    ("/{bucket}/a/%2E%2E/%2E%2E/%2E%2E/escaped", "a/../../../escaped"),
    ("/{bucket}/..", ".."),
    ("/{bucket}/a/..", "a/.."),
    ("/{bucket}/%2E%2E", ".."),
]

# Odd but traversal-free keys: the server may refuse them or store them under
# their literal name, but must never fold them onto another key (the witness
# "x") or a path outside the bucket.
ODD_TARGETS = [
    "/{bucket}/./x",
    "/{bucket}/a/./x",
    "/{bucket}/..%5Cx",  # backslash is no separator on Linux
    "/{bucket}/...",
]


def listed_keys(s3, bucket, prefix):
    return [o["Key"] for o in s3.list_objects_v2(Bucket=bucket, Prefix=prefix).get("Contents", [])]


@pytest.mark.parametrize("template,key", TRAVERSAL_TARGETS, ids=[t for t, _ in TRAVERSAL_TARGETS])
def test_traversal_keys_stored_literally(server, s3, bucket, witnesses, template, key):
    """A ".." target is an ordinary key: stored under the literal decoded
    name, readable by the same target and by that key through boto3, listed
    as itself, and nothing is created outside the drives' own files."""
    target = template.format(bucket=bucket)
    payload = f"TRAVERSAL-PAYLOAD {template}".encode()
    assert_drive_layout(server)
    before = outside_snapshot(server)
    resp = signed(server, "PUT", target, body=payload)
    try:
        assert resp.status == 200, f"PUT {target} should store key {key!r}: {resp}"
        assert outside_snapshot(server) == before, f"PUT {target} changed: {diff(before, outside_snapshot(server))}"
        assert_drive_layout(server)
        keys = witnesses()  # in particular "x" was not overwritten
        assert key in keys, (key, keys)
        assert key in listed_keys(s3, bucket, key)
        back = signed(server, "GET", target)
        assert back.status == 200 and back.body == payload, f"GET {target}: {back}"
        assert s3.get_object(Bucket=bucket, Key=key)["Body"].read() == payload
    finally:
        s3.delete_object(Bucket=bucket, Key=key)
    assert key not in listed_keys(s3, bucket, key)
    assert outside_snapshot(server) == before
    witnesses()


@pytest.mark.parametrize("template", ODD_TARGETS)
def test_odd_keys_stay_inside(server, s3, bucket, witnesses, template):
    target = template.format(bucket=bucket)
    keys_before = set(witnesses())
    before = outside_snapshot(server)
    resp = signed(server, "PUT", target, body=b"ODD-PAYLOAD")
    assert resp.status < 500, f"PUT {target}: {resp}"
    assert outside_snapshot(server) == before, f"PUT {target} changed: {diff(before, outside_snapshot(server))}"
    assert_drive_layout(server)
    keys = set(witnesses())  # in particular "x" was not overwritten
    if 200 <= resp.status < 300:
        back = signed(server, "GET", target)
        assert back.status == 200 and back.body == b"ODD-PAYLOAD", f"GET {target}: {back}"
        new_keys = keys - keys_before
        # Stored under a key of its own (or over the same odd key earlier).
        assert len(new_keys) <= 1 and not (new_keys & set(WITNESSES)), (new_keys, keys)
        signed(server, "DELETE", target)


def test_traversal_keys_via_boto3(s3, server, bucket, witnesses):
    """The same keys through a real client. boto3 at default settings sends
    them unnormalised ("/bucket/../x"), and the server stores each under its
    literal name, distinct from the witness "x", never following it out of
    the bucket."""
    before = outside_snapshot(server)
    keys = ["../x", "../../escaped", "a/../../escaped", "..", "./x", "."]
    try:
        for k in keys:
            s3.put_object(Bucket=bucket, Key=k, Body=b"ESCAPED-PAYLOAD " + k.encode())
        assert outside_snapshot(server) == before, diff(before, outside_snapshot(server))
        assert_drive_layout(server)
        listed = witnesses()
        assert set(keys) <= set(listed), listed
        for k in keys:
            assert s3.get_object(Bucket=bucket, Key=k)["Body"].read() == b"ESCAPED-PAYLOAD " + k.encode(), k
    finally:
        s3.delete_objects(Bucket=bucket, Delete={"Objects": [{"Key": k} for k in keys], "Quiet": True})
    assert not set(keys) & set(witnesses())
    assert outside_snapshot(server) == before


def test_truncated_body(server, s3, bucket, witnesses):
    full = os.urandom(256 * 1024)
    target = f"/{bucket}/truncated"
    hdrs = sign(server.endpoint, server.root.access_key, server.root.secret_key, "PUT", target, body=full)
    hdrs["Content-Length"] = str(len(full))
    hdrs["Connection"] = "close"
    answer = send_truncated(server.endpoint, target, hdrs, full[: 64 * 1024])
    # Either the connection is dropped without an answer, or a 4xx.
    if answer:
        status_line = answer.split(b"\r\n", 1)[0]
        assert status_line.startswith(b"HTTP/1.1 4"), answer[:500]
        if b"<Code>" in answer:
            assert b"<Code>IncompleteBody</Code>" in answer or b"<Code>RequestTimeout</Code>" in answer, answer[:500]
    from botocore.exceptions import ClientError

    with pytest.raises(ClientError) as exc:
        s3.head_object(Bucket=bucket, Key="truncated")
    assert exc.value.response["ResponseMetadata"]["HTTPStatusCode"] == 404
    witnesses()


def test_truncated_body_overwrite_keeps_old_version(server, s3, bucket, witnesses):
    """A broken upload over an existing key must leave the old bytes."""
    full = os.urandom(3 * MiB)
    target = f"/{bucket}/witness/large"
    hdrs = sign(server.endpoint, server.root.access_key, server.root.secret_key, "PUT", target, body=full)
    hdrs["Content-Length"] = str(len(full))
    hdrs["Connection"] = "close"
    send_truncated(server.endpoint, target, hdrs, full[: MiB + 100])
    witnesses()


def test_payload_hash_mismatch(server, s3, bucket, witnesses):
    good = b"A" * 4096
    evil = b"B" * 4096
    resp = signed(server, "PUT", f"/{bucket}/witness/small", body=evil, sign_body=good)
    assert resp.status == 400, str(resp)
    assert resp.error_code() in ("XAmzContentSHA256Mismatch", "BadDigest"), str(resp)
    witnesses()


def test_garbage_requests(server, bucket, witnesses):
    ep = server.endpoint
    cases = [
        ("GET", f"/{bucket}/witness/small", {"Authorization": "AWS4-HMAC-SHA256 garbage"}),
        ("GET", f"/{bucket}/witness/small", {"Authorization": "Bearer x"}),
        (
            "PUT",
            f"/{bucket}/witness/small",
            {"Authorization": "AWS4-HMAC-SHA256 Credential=e2eroot/20200101/us-east-1/s3/aws4_request, "
             "SignedHeaders=host, Signature=00", "x-amz-date": "20200101T000000Z"},
        ),
    ]
    for method, target, hdrs in cases:
        hdrs = {"Host": ep.removeprefix("http://"), **hdrs}
        resp = raw_request(ep, method, target, body=b"overwrite!" if method == "PUT" else b"", headers=hdrs)
        assert 400 <= resp.status < 500, f"{method} {target} {hdrs} -> {resp}"
    # An absurd Content-Length is refused before anything is stored.
    hdrs = sign(ep, server.root.access_key, server.root.secret_key, "PUT", f"/{bucket}/huge", body=b"")
    hdrs["Content-Length"] = str(6 * 1024**4)  # 6 TiB, over S3's 5 TiB single-PUT limit
    answer = send_truncated(ep, f"/{bucket}/huge", hdrs, b"")
    assert not answer.startswith(b"HTTP/1.1 2"), answer[:300]
    witnesses()


def test_expect_100_continue_is_answered_before_the_body(server, bucket):
    """A client that sends Expect: 100-continue waits for the server before
    sending the body; the server must answer 100 Continue or a final status
    right after the headers. A liveness bound (5 s), not a speed target."""
    host, port = server.hostport
    for target, want in ((f"/{bucket}/expect-ok", b"100"), ("/no-such-bucket-for-expect/k", b"404")):
        hdrs = sign(server.endpoint, server.root.access_key, server.root.secret_key, "PUT", target, body=b"x")
        hdrs["Content-Length"] = "1"
        hdrs["Expect"] = "100-continue"
        head = f"PUT {target} HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in hdrs.items()) + "\r\n"
        with socket.create_connection((host, port), timeout=5) as sock:
            sock.sendall(head.encode())
            start = time.monotonic()
            try:
                first = sock.recv(64)
            except socket.timeout:
                first = b""
            assert first.startswith(b"HTTP/1.1 " + want), (
                f"PUT {target}: after {time.monotonic() - start:.1f}s got {first!r}, want {want!r} before the body"
            )
