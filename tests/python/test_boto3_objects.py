"""boto3 at default settings: buckets, objects, ranges, metadata, checksums,
copies, batch deletes and conditional requests."""

from __future__ import annotations

import datetime as dt
import hashlib

import boto3
import pytest
from botocore.exceptions import ClientError

from conftest import REGION, unique_bucket_name
from s3util import (
    MiB,
    crc32_b64,
    error_code,
    http_status,
    md5_hex,
    random_bytes,
    sha1_b64,
    sha256_b64,
)


def test_bucket_lifecycle(s3):
    name = unique_bucket_name("lifecycle")
    s3.create_bucket(Bucket=name)
    try:
        assert name in [b["Name"] for b in s3.list_buckets()["Buckets"]]
        s3.head_bucket(Bucket=name)
        # us-east-1 has no LocationConstraint: S3 answers an empty element.
        assert s3.get_bucket_location(Bucket=name).get("LocationConstraint") in (None, "", REGION)
        # Creating it again as its owner: S3 in us-east-1 answers 200, other
        # regions BucketAlreadyOwnedByYou; either way nothing is lost.
        s3.put_object(Bucket=name, Key="keep", Body=b"kept")
        try:
            s3.create_bucket(Bucket=name)
        except ClientError as e:
            assert error_code(e) == "BucketAlreadyOwnedByYou", e.response
        assert s3.get_object(Bucket=name, Key="keep")["Body"].read() == b"kept"
        with pytest.raises(ClientError) as exc:
            s3.delete_bucket(Bucket=name)
        assert error_code(exc.value) == "BucketNotEmpty"
        assert http_status(exc.value) == 409
        s3.delete_object(Bucket=name, Key="keep")
    finally:
        s3.delete_bucket(Bucket=name)
    assert name not in [b["Name"] for b in s3.list_buckets()["Buckets"]]
    with pytest.raises(ClientError) as exc:
        s3.head_bucket(Bucket=name)
    assert http_status(exc.value) == 404
    with pytest.raises(ClientError) as exc:
        s3.delete_bucket(Bucket=name)
    assert error_code(exc.value) == "NoSuchBucket"


@pytest.mark.parametrize(
    "name",
    [
        "ab",  # too short
        "a" * 64,  # too long
        "UpperCase-bucket",
        "under_score-bucket",
        "-leading-dash",
        "trailing-dash-",
        "double..dots",
        "192.168.10.20",  # formatted as an IP address
    ],
)
def test_invalid_bucket_name(s3, name):
    with pytest.raises(ClientError) as exc:
        s3.create_bucket(Bucket=name)
    assert error_code(exc.value) == "InvalidBucketName", exc.value.response
    assert http_status(exc.value) == 400


def test_no_such_bucket(s3):
    missing = unique_bucket_name("missing")
    for call in (
        lambda: s3.put_object(Bucket=missing, Key="k", Body=b"x"),
        lambda: s3.get_object(Bucket=missing, Key="k"),
        lambda: s3.list_objects_v2(Bucket=missing),
    ):
        with pytest.raises(ClientError) as exc:
            call()
        assert error_code(exc.value) == "NoSuchBucket", exc.value.response
        assert http_status(exc.value) == 404


@pytest.mark.parametrize(
    "size",
    [0, 1, 100 * 1024, 1 * MiB, 3 * MiB + 7],
    ids=["empty", "1B", "100KiB", "1MiB", "3MiB+7"],
)
def test_put_get_head_delete(s3, bucket, size):
    data = random_bytes(size)
    key = f"obj-{size}"
    put = s3.put_object(Bucket=bucket, Key=key, Body=data)
    assert put["ETag"] == f'"{md5_hex(data)}"'

    got = s3.get_object(Bucket=bucket, Key=key)
    assert got["ContentLength"] == size
    assert got["ETag"] == put["ETag"]
    body = got["Body"].read()
    assert len(body) == size and body == data

    head = s3.head_object(Bucket=bucket, Key=key)
    assert head["ContentLength"] == size
    assert head["ETag"] == put["ETag"]
    assert isinstance(head["LastModified"], dt.datetime)

    s3.delete_object(Bucket=bucket, Key=key)
    with pytest.raises(ClientError) as exc:
        s3.get_object(Bucket=bucket, Key=key)
    assert error_code(exc.value) == "NoSuchKey"
    assert http_status(exc.value) == 404
    with pytest.raises(ClientError) as exc:
        s3.head_object(Bucket=bucket, Key=key)
    assert http_status(exc.value) == 404
    # Deleting a missing key succeeds, as in S3.
    s3.delete_object(Bucket=bucket, Key=key)


def test_overwrite_replaces_content(s3, bucket):
    s3.put_object(Bucket=bucket, Key="k", Body=b"first version, longer")
    s3.put_object(Bucket=bucket, Key="k", Body=b"second")
    assert s3.get_object(Bucket=bucket, Key="k")["Body"].read() == b"second"


# A key of exactly 1024 bytes (S3's limit) whose first segment is 1000 bytes.
LONG_SEGMENT_1024 = "L" * 1000 + "/" + "t" * 23

# Keys that a file-system path would collapse, fold onto one another or refuse.
# Layout v2 never derives a path from a key, so S3 stores each one literally.
# boto3 at default settings (botocore 1.44, urllib3 2.x) sends all of them
# unchanged on the wire ("/bucket/..", "/bucket//leading-slash", ...), so no
# raw request is needed here; test_hostile.py covers the raw forms.
PATH_LIKE_KEYS = [
    "double//slash",
    "/leading-slash",
    "../dotdot",
    "a/./b",
    ".",
    "..",
    "a/../b",
    "./a",
    "a/..",
    LONG_SEGMENT_1024,
]


@pytest.mark.parametrize(
    "key",
    [
        "plain.txt",
        "dir/sub dir/with space.txt",
        "naïve/ünïcödé/日本語.bin",
        "symbols/a+b=c&d;e,f@g$h!i'j(k)l*m~.txt",
        "percent%20not-decoded%2F.txt",
        "trailing-slash/",
        ("s" * 200 + "/") * 4 + "e" * 220,  # 1024 bytes, S3's limit, in segments of <= 255
        "double//slash",
        "a" * 900,
        "/leading-slash",
        "../dotdot",
        "a/./b",
        ".",
        "..",
        "a/../b",
        LONG_SEGMENT_1024,
    ],
    ids=[
        "plain",
        "spaces",
        "unicode",
        "symbols",
        "percent",
        "trailing-slash",
        "1024-bytes",
        "double-slash",
        "long-segment",
        "leading-slash",
        "dotdot-prefix",
        "dot-segment",
        "dot",
        "dotdot",
        "dotdot-segment",
        "1024-bytes-1000-byte-segment",
    ],
)
def test_key_names_round_trip(s3, bucket, key):
    body = key.encode()
    s3.put_object(Bucket=bucket, Key=key, Body=body)
    assert s3.get_object(Bucket=bucket, Key=key)["Body"].read() == body
    listed = [o["Key"] for o in s3.list_objects_v2(Bucket=bucket)["Contents"]]
    assert listed == [key]


def test_path_like_keys_are_distinct(s3, bucket):
    """All the path-like keys in one bucket, beside the keys a path
    normalisation would fold them onto ("b", "a/b", "x", "dotdot", ...): each
    is its own object with its own body, and a prefix listing names exactly
    the stored keys with that prefix, byte for byte."""
    assert len(LONG_SEGMENT_1024.encode()) == 1024
    folds_onto = ["b", "a/b", "a", "a/", "dotdot", "leading-slash", "double/slash", "x", "L" * 1000]
    keys = PATH_LIKE_KEYS + folds_onto
    assert len(set(keys)) == len(keys)
    bodies = {k: f"{i}:{k}".encode() for i, k in enumerate(keys)}
    for k in keys:
        s3.put_object(Bucket=bucket, Key=k, Body=bodies[k])
    for k in keys:
        assert s3.get_object(Bucket=bucket, Key=k)["Body"].read() == bodies[k], k
        assert s3.head_object(Bucket=bucket, Key=k)["ContentLength"] == len(bodies[k]), k
    everything = [o["Key"] for o in s3.list_objects_v2(Bucket=bucket)["Contents"]]
    assert everything == sorted(keys)  # code-point order is UTF-8 byte order
    for k in PATH_LIKE_KEYS:
        listed = [o["Key"] for o in s3.list_objects_v2(Bucket=bucket, Prefix=k).get("Contents", [])]
        assert listed == sorted(x for x in keys if x.startswith(k)), k
    # Deleting one leaves the keys it would collapse to (and from) alone.
    s3.delete_object(Bucket=bucket, Key="a/../b")
    s3.delete_object(Bucket=bucket, Key="..")
    left = [o["Key"] for o in s3.list_objects_v2(Bucket=bucket)["Contents"]]
    assert left == sorted(set(keys) - {"a/../b", ".."})
    for k in ("b", ".", "../dotdot", "a/b"):
        assert s3.get_object(Bucket=bucket, Key=k)["Body"].read() == bodies[k], k


def test_key_too_long(s3, bucket):
    key = ("k" * 200 + "/") * 5  # segments under 255 bytes, so only the total is too long
    key += "y" * (1025 - len(key))
    assert len(key.encode()) == 1025
    with pytest.raises(ClientError) as exc:
        s3.put_object(Bucket=bucket, Key=key, Body=b"x")
    assert error_code(exc.value) == "KeyTooLongError", exc.value.response
    assert http_status(exc.value) == 400


def test_ranged_get(server, s3, bucket):
    # Bigger than one 1 MiB erasure block so ranges cross block boundaries.
    # Uploaded without a checksum (the clean range semantics); ranged reads of
    # an object with a stored checksum are covered by the test below.
    size = 3 * MiB + 7
    data = random_bytes(size)
    plain = server.client(request_checksum_calculation="when_required")
    plain.put_object(Bucket=bucket, Key="r", Body=data)
    check_ranges(s3, bucket, "r", data)


def test_ranged_get_of_checksummed_object(s3, bucket):
    # boto3 sends x-amz-checksum-mode: ENABLED on every GET and validates any
    # full-object checksum it gets back, so a ranged GET must not carry one.
    data = random_bytes(3 * MiB + 7)
    s3.put_object(Bucket=bucket, Key="rc", Body=data)  # boto3 default: CRC32 stored
    check_ranges(s3, bucket, "rc", data)


def check_ranges(s3, bucket, key, data):
    size = len(data)
    assert size > 2 * MiB + 10
    cases = {
        "bytes=0-0": (0, 0),
        "bytes=0-9": (0, 9),
        "bytes=100-": (100, size - 1),
        "bytes=-5": (size - 5, size - 1),
        f"bytes={MiB - 3}-{MiB + 3}": (MiB - 3, MiB + 3),  # straddles a block edge
        f"bytes={MiB}-{2 * MiB + 10}": (MiB, 2 * MiB + 10),
        f"bytes={size - 1}-{size + 1000}": (size - 1, size - 1),  # end clamped
    }
    for rng, (first, last) in cases.items():
        got = s3.get_object(Bucket=bucket, Key=key, Range=rng)
        assert got["ResponseMetadata"]["HTTPStatusCode"] == 206, rng
        assert got["ContentRange"] == f"bytes {first}-{last}/{size}", rng
        assert got["ContentLength"] == last - first + 1, rng
        assert got["Body"].read() == data[first : last + 1], rng
    with pytest.raises(ClientError) as exc:
        s3.get_object(Bucket=bucket, Key=key, Range=f"bytes={size}-{size + 10}")
    assert error_code(exc.value) == "InvalidRange"
    assert http_status(exc.value) == 416


def test_metadata_and_content_headers_round_trip(s3, bucket):
    expires = dt.datetime(2031, 1, 2, 3, 4, 5, tzinfo=dt.timezone.utc)
    s3.put_object(
        Bucket=bucket,
        Key="meta",
        Body=b"{}",
        Metadata={"color": "blue", "Mixed-Case": "Value With Spaces", "empty-ok": "x"},
        ContentType="application/json; charset=utf-8",
        CacheControl="max-age=3600, public",
        ContentDisposition='attachment; filename="report.json"',
        ContentLanguage="de-CH",
        ContentEncoding="identity",
        Expires=expires,
    )
    for resp in (s3.head_object(Bucket=bucket, Key="meta"), s3.get_object(Bucket=bucket, Key="meta")):
        # S3 stores user metadata keys lower-cased and values verbatim.
        assert resp["Metadata"] == {"color": "blue", "mixed-case": "Value With Spaces", "empty-ok": "x"}
        assert resp["ContentType"] == "application/json; charset=utf-8"
        assert resp["CacheControl"] == "max-age=3600, public"
        assert resp["ContentDisposition"] == 'attachment; filename="report.json"'
        assert resp["ContentLanguage"] == "de-CH"
        assert resp["ContentEncoding"] == "identity"
        assert resp.get("Expires") == expires or resp.get("ExpiresString", "").startswith("Thu, 02 Jan 2031")


def test_default_content_type(s3, bucket):
    s3.put_object(Bucket=bucket, Key="noct", Body=b"x")
    # boto3 sends no Content-Type for bytes; S3 then stores binary/octet-stream.
    ct = s3.head_object(Bucket=bucket, Key="noct")["ContentType"]
    assert ct in ("binary/octet-stream", "application/octet-stream")


def test_response_header_overrides(s3, bucket):
    s3.put_object(Bucket=bucket, Key="o", Body=b"data", ContentType="text/plain")
    got = s3.get_object(
        Bucket=bucket,
        Key="o",
        ResponseContentType="image/png",
        ResponseContentDisposition="inline",
        ResponseCacheControl="no-cache",
    )
    assert got["ContentType"] == "image/png"
    assert got["ContentDisposition"] == "inline"
    assert got["CacheControl"] == "no-cache"


def test_default_crc32_checksum_is_stored_and_returned(s3, bucket):
    # boto3 >= 1.36 sends x-amz-checksum-crc32 on every PutObject by default.
    data = random_bytes(2 * MiB + 3)
    put = s3.put_object(Bucket=bucket, Key="c", Body=data)
    assert put.get("ChecksumCRC32") == crc32_b64(data), put
    got = s3.get_object(Bucket=bucket, Key="c", ChecksumMode="ENABLED")
    assert got.get("ChecksumCRC32") == crc32_b64(data), {k: v for k, v in got.items() if k != "Body"}
    assert got["Body"].read() == data  # botocore also validates the checksum while reading
    head = s3.head_object(Bucket=bucket, Key="c", ChecksumMode="ENABLED")
    assert head.get("ChecksumCRC32") == crc32_b64(data)


@pytest.mark.parametrize(
    "algorithm,field,fn",
    [("SHA256", "ChecksumSHA256", sha256_b64), ("SHA1", "ChecksumSHA1", sha1_b64)],
)
def test_explicit_checksum_algorithms(s3, bucket, algorithm, field, fn):
    data = random_bytes(300 * 1024)
    put = s3.put_object(Bucket=bucket, Key=algorithm, Body=data, ChecksumAlgorithm=algorithm)
    assert put.get(field) == fn(data)
    got = s3.get_object(Bucket=bucket, Key=algorithm, ChecksumMode="ENABLED")
    assert got.get(field) == fn(data)
    assert got["Body"].read() == data


def test_wrong_checksum_is_rejected(s3, bucket):
    data = b"the payload"
    wrong = crc32_b64(b"something else")
    with pytest.raises(ClientError) as exc:
        s3.put_object(Bucket=bucket, Key="bad-crc", Body=data, ChecksumCRC32=wrong)
    assert error_code(exc.value) == "BadDigest", exc.value.response
    assert http_status(exc.value) == 400
    with pytest.raises(ClientError) as exc:
        s3.head_object(Bucket=bucket, Key="bad-crc")
    assert http_status(exc.value) == 404


def test_wrong_content_md5_is_rejected(s3, bucket):
    import base64

    wrong = base64.b64encode(hashlib.md5(b"other").digest()).decode()
    with pytest.raises(ClientError) as exc:
        s3.put_object(Bucket=bucket, Key="bad-md5", Body=b"payload", ContentMD5=wrong)
    assert error_code(exc.value) == "BadDigest", exc.value.response
    with pytest.raises(ClientError) as exc:
        s3.head_object(Bucket=bucket, Key="bad-md5")
    assert http_status(exc.value) == 404


def test_aws_chunked_trailer_upload(server, bucket):
    """Over TLS boto3 streams uploads as aws-chunked with the CRC32 in a
    trailer (STREAMING-UNSIGNED-PAYLOAD-TRAILER); over plain HTTP it puts the
    checksum in a header instead. Flip botocore's own decision so that its
    real trailer code path runs against our plain-HTTP server."""
    session = boto3.session.Session(
        aws_access_key_id=server.root.access_key,
        aws_secret_access_key=server.root.secret_key,
        region_name=REGION,
    )
    client = session.client("s3", endpoint_url=server.endpoint)
    seen = {}

    def use_trailer(params, **_):
        algo = params.get("context", {}).get("checksum", {}).get("request_algorithm")
        if isinstance(algo, dict):
            algo["in"] = "trailer"

    def record(request, **_):
        seen.update({k.lower(): v.decode() if isinstance(v, bytes) else v for k, v in request.headers.items()})

    client.meta.events.register("before-call.s3.PutObject", use_trailer)
    client.meta.events.register("before-send.s3.PutObject", record)
    data = random_bytes(3 * MiB + 11)
    put = client.put_object(Bucket=bucket, Key="chunked", Body=data)
    assert seen.get("x-amz-content-sha256") == "STREAMING-UNSIGNED-PAYLOAD-TRAILER", seen
    assert seen.get("x-amz-trailer") == "x-amz-checksum-crc32", seen
    assert put["ETag"] == f'"{md5_hex(data)}"'
    got = server.client().get_object(Bucket=bucket, Key="chunked", ChecksumMode="ENABLED")
    assert got["ContentLength"] == len(data)
    # aws-chunked is a transfer detail and must not be stored as the encoding.
    assert "aws-chunked" not in (got.get("ContentEncoding") or "")
    assert got.get("ChecksumCRC32") == crc32_b64(data)
    assert got["Body"].read() == data


def test_copy_object_copy_and_replace(s3, bucket):
    data = random_bytes(1500 * 1024)
    s3.put_object(Bucket=bucket, Key="src", Body=data, ContentType="text/x-src", Metadata={"origin": "src"})
    other = unique_bucket_name("copy-dst")
    s3.create_bucket(Bucket=other)
    try:
        # Default directive COPY keeps metadata and content type.
        res = s3.copy_object(Bucket=other, Key="dst", CopySource={"Bucket": bucket, "Key": "src"})
        assert res["CopyObjectResult"]["ETag"] == f'"{md5_hex(data)}"'
        head = s3.head_object(Bucket=other, Key="dst")
        assert head["Metadata"] == {"origin": "src"}
        assert head["ContentType"] == "text/x-src"
        assert s3.get_object(Bucket=other, Key="dst")["Body"].read() == data

        s3.copy_object(
            Bucket=bucket,
            Key="replaced",
            CopySource={"Bucket": bucket, "Key": "src"},
            MetadataDirective="REPLACE",
            Metadata={"new": "yes"},
            ContentType="application/x-new",
        )
        head = s3.head_object(Bucket=bucket, Key="replaced")
        assert head["Metadata"] == {"new": "yes"}
        assert head["ContentType"] == "application/x-new"
        assert s3.get_object(Bucket=bucket, Key="replaced")["Body"].read() == data

        # Copying onto itself is only allowed when something changes.
        with pytest.raises(ClientError) as exc:
            s3.copy_object(Bucket=bucket, Key="src", CopySource={"Bucket": bucket, "Key": "src"})
        assert error_code(exc.value) == "InvalidRequest"
        s3.copy_object(
            Bucket=bucket,
            Key="src",
            CopySource={"Bucket": bucket, "Key": "src"},
            MetadataDirective="REPLACE",
            Metadata={"origin": "rewritten"},
        )
        assert s3.head_object(Bucket=bucket, Key="src")["Metadata"] == {"origin": "rewritten"}
        assert s3.get_object(Bucket=bucket, Key="src")["Body"].read() == data

        with pytest.raises(ClientError) as exc:
            s3.copy_object(Bucket=bucket, Key="x", CopySource={"Bucket": bucket, "Key": "no-such-source"})
        assert error_code(exc.value) == "NoSuchKey"
    finally:
        from conftest import empty_and_delete_bucket

        empty_and_delete_bucket(s3, other)


def test_delete_objects(s3, bucket):
    keys = [f"del/{i:02d}" for i in range(25)]
    for k in keys:
        s3.put_object(Bucket=bucket, Key=k, Body=k.encode())
    s3.put_object(Bucket=bucket, Key="keep/me", Body=b"kept")
    victims = keys[:20] + ["del/never-existed"]
    res = s3.delete_objects(Bucket=bucket, Delete={"Objects": [{"Key": k} for k in victims]})
    # S3 reports a missing key as deleted too.
    assert sorted(d["Key"] for d in res.get("Deleted", [])) == sorted(victims)
    assert res.get("Errors", []) == []
    left = sorted(o["Key"] for o in s3.list_objects_v2(Bucket=bucket)["Contents"])
    assert left == sorted(keys[20:] + ["keep/me"])
    quiet = s3.delete_objects(Bucket=bucket, Delete={"Objects": [{"Key": k} for k in keys[20:]], "Quiet": True})
    assert quiet.get("Deleted", []) == [] and quiet.get("Errors", []) == []
    assert [o["Key"] for o in s3.list_objects_v2(Bucket=bucket)["Contents"]] == ["keep/me"]


def test_conditional_get_and_head(s3, bucket):
    put = s3.put_object(Bucket=bucket, Key="cond", Body=b"conditional")
    etag = put["ETag"]
    modified = s3.head_object(Bucket=bucket, Key="cond")["LastModified"]
    past = modified - dt.timedelta(days=1)
    future = modified + dt.timedelta(days=1)

    assert s3.get_object(Bucket=bucket, Key="cond", IfMatch=etag)["Body"].read() == b"conditional"
    assert s3.get_object(Bucket=bucket, Key="cond", IfNoneMatch='"0123456789abcdef0123456789abcdef"')
    assert s3.get_object(Bucket=bucket, Key="cond", IfModifiedSince=past)
    assert s3.get_object(Bucket=bucket, Key="cond", IfUnmodifiedSince=future)

    failing = [
        ({"IfMatch": '"0123456789abcdef0123456789abcdef"'}, 412),
        ({"IfNoneMatch": etag}, 304),
        ({"IfModifiedSince": future}, 304),
        ({"IfUnmodifiedSince": past}, 412),
    ]
    for kwargs, want in failing:
        for call in (s3.get_object, s3.head_object):
            with pytest.raises(ClientError) as exc:
                call(Bucket=bucket, Key="cond", **kwargs)
            assert http_status(exc.value) == want, (call.__name__, kwargs, exc.value.response)
            if want == 412 and call is s3.get_object:
                assert error_code(exc.value) == "PreconditionFailed"


def test_conditional_put_if_none_match(s3, bucket):
    s3.put_object(Bucket=bucket, Key="once", Body=b"first", IfNoneMatch="*")
    with pytest.raises(ClientError) as exc:
        s3.put_object(Bucket=bucket, Key="once", Body=b"second", IfNoneMatch="*")
    assert http_status(exc.value) == 412
    assert error_code(exc.value) == "PreconditionFailed"
    assert s3.get_object(Bucket=bucket, Key="once")["Body"].read() == b"first"
