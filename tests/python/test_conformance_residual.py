"""Issue #42, the residual differences a run of ceph's s3-tests found, each
as S3 answers it, with boto3 at default settings: conditional deletes
(If-Match and its companions on DeleteObject, ETag / LastModifiedTime /
Size on DeleteObjects), anonymous uploads framed aws-chunked with a
trailing checksum, and the small items. docs/conformance.md ("Residual
differences found by ceph s3-tests (issue #42)") has the evidence."""

from __future__ import annotations

import base64
import concurrent.futures
import datetime as dt
import zlib

import pytest
from botocore.exceptions import ClientError

from conftest import (
    empty_and_delete_bucket,
    https_certs_dirs,
    start_https_server,
    stop_https_server,
    unique_bucket_name,
)
from s3util import error_code, http_status


def _enable_versioning(s3, bucket):
    s3.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Enabled"})


def _status_code(fn, **kw):
    try:
        return fn(**kw)["ResponseMetadata"]["HTTPStatusCode"], None
    except ClientError as e:
        return http_status(e), error_code(e)


# --- conditional deletes -------------------------------------------------


def test_delete_object_if_match(s3, bucket):
    etag = s3.put_object(Bucket=bucket, Key="obj", Body=b"data")["ETag"]
    assert _status_code(s3.delete_object, Bucket=bucket, Key="obj", IfMatch="badetag") == (412, "PreconditionFailed")
    assert s3.get_object(Bucket=bucket, Key="obj")["Body"].read() == b"data"
    assert s3.delete_object(Bucket=bucket, Key="obj", IfMatch=etag)["ResponseMetadata"]["HTTPStatusCode"] == 204
    assert _status_code(s3.head_object, Bucket=bucket, Key="obj")[0] == 404
    # A conditional delete of a key that is not there: 404 NoSuchKey,
    # as a conditional write answers (an unconditional one is 204).
    assert _status_code(s3.delete_object, Bucket=bucket, Key="obj", IfMatch="*") == (404, "NoSuchKey")
    assert _status_code(s3.delete_object, Bucket=bucket, Key="obj") == (204, None)
    s3.put_object(Bucket=bucket, Key="obj", Body=b"again")
    assert s3.delete_object(Bucket=bucket, Key="obj", IfMatch="*")["ResponseMetadata"]["HTTPStatusCode"] == 204
    assert _status_code(s3.head_object, Bucket=bucket, Key="obj")[0] == 404


def test_delete_object_if_match_size_and_time(s3, bucket):
    s3.put_object(Bucket=bucket, Key="obj", Body=b"four")
    mtime = s3.head_object(Bucket=bucket, Key="obj")["LastModified"]
    bad = dt.datetime(2015, 1, 1, tzinfo=dt.timezone.utc)
    assert _status_code(s3.delete_object, Bucket=bucket, Key="obj", IfMatchSize=9999) == (412, "PreconditionFailed")
    assert _status_code(s3.delete_object, Bucket=bucket, Key="obj", IfMatchLastModifiedTime=bad) == (
        412,
        "PreconditionFailed",
    )
    assert s3.get_object(Bucket=bucket, Key="obj")["Body"].read() == b"four"
    s3.delete_object(Bucket=bucket, Key="obj", IfMatchSize=4, IfMatchLastModifiedTime=mtime)
    assert _status_code(s3.head_object, Bucket=bucket, Key="obj")[0] == 404


def test_delete_object_if_match_versioned(s3, bucket):
    _enable_versioning(s3, bucket)
    put = s3.put_object(Bucket=bucket, Key="obj", Body=b"v1")
    assert _status_code(s3.delete_object, Bucket=bucket, Key="obj", IfMatch="badetag") == (412, "PreconditionFailed")
    r = s3.delete_object(Bucket=bucket, Key="obj", IfMatch=put["ETag"])
    assert r["DeleteMarker"] is True
    # The current version is now a delete marker: no object to match.
    assert _status_code(s3.delete_object, Bucket=bucket, Key="obj", IfMatch="*") == (404, "NoSuchKey")
    versions = s3.list_object_versions(Bucket=bucket, Prefix="obj")
    assert len(versions.get("DeleteMarkers", [])) == 1 and len(versions.get("Versions", [])) == 1
    # A version named by id is judged itself.
    assert _status_code(
        s3.delete_object, Bucket=bucket, Key="obj", VersionId=put["VersionId"], IfMatch="badetag"
    ) == (412, "PreconditionFailed")
    r = s3.delete_object(Bucket=bucket, Key="obj", VersionId=put["VersionId"], IfMatch=put["ETag"])
    assert "DeleteMarker" not in r
    assert "Versions" not in s3.list_object_versions(Bucket=bucket, Prefix="obj")


def test_delete_objects_conditions(s3, bucket):
    etag = s3.put_object(Bucket=bucket, Key="a", Body=b"aaa")["ETag"]
    s3.put_object(Bucket=bucket, Key="b", Body=b"bb")
    r = s3.delete_objects(
        Bucket=bucket,
        Delete={"Objects": [{"Key": "a", "ETag": "badetag"}, {"Key": "b", "Size": 5}, {"Key": "gone", "ETag": etag}]},
    )
    errors = {e["Key"]: e["Code"] for e in r.get("Errors", [])}
    assert errors == {"a": "PreconditionFailed", "b": "PreconditionFailed", "gone": "NoSuchKey"}
    assert "Deleted" not in r
    assert s3.get_object(Bucket=bucket, Key="a")["Body"].read() == b"aaa"
    mtime = s3.head_object(Bucket=bucket, Key="b")["LastModified"]
    r = s3.delete_objects(
        Bucket=bucket,
        Delete={"Objects": [{"Key": "a", "ETag": etag}, {"Key": "b", "Size": 2, "LastModifiedTime": mtime}]},
    )
    assert sorted(d["Key"] for d in r.get("Deleted", [])) == ["a", "b"] and "Errors" not in r, r.get("Errors")
    assert s3.list_objects_v2(Bucket=bucket)["KeyCount"] == 0


def test_delete_objects_if_match_versioned(s3, bucket):
    _enable_versioning(s3, bucket)
    put = s3.put_object(Bucket=bucket, Key="obj", Body=b"x")
    r = s3.delete_objects(Bucket=bucket, Delete={"Objects": [{"Key": "obj", "ETag": "badetag"}]})
    assert r["Errors"][0]["Code"] == "PreconditionFailed"
    r = s3.delete_objects(Bucket=bucket, Delete={"Objects": [{"Key": "obj", "ETag": put["ETag"]}]})
    assert r["Deleted"][0]["DeleteMarker"] is True
    r = s3.delete_objects(Bucket=bucket, Delete={"Objects": [{"Key": "obj", "ETag": put["ETag"]}]})
    assert r["Errors"][0]["Code"] == "NoSuchKey"
    r = s3.delete_objects(
        Bucket=bucket, Delete={"Objects": [{"Key": "obj", "VersionId": put["VersionId"], "ETag": "badetag"}]}
    )
    assert r["Errors"][0]["Code"] == "PreconditionFailed"
    r = s3.delete_objects(
        Bucket=bucket, Delete={"Objects": [{"Key": "obj", "VersionId": put["VersionId"], "ETag": put["ETag"]}]}
    )
    assert r["Deleted"][0]["VersionId"] == put["VersionId"]


def test_conditional_delete_races_overwrite(s3, bucket):
    """A conditional delete of the old ETag racing an overwrite never
    deletes the new object; two conditional deletes of one ETag: one wins."""
    for i in range(10):
        old = s3.put_object(Bucket=bucket, Key="r", Body=b"old")["ETag"]
        with concurrent.futures.ThreadPoolExecutor(2) as pool:
            d = pool.submit(_status_code, s3.delete_object, Bucket=bucket, Key="r", IfMatch=old)
            p = pool.submit(s3.put_object, Bucket=bucket, Key="r", Body=b"newer")
            dstatus, pstatus = d.result(), p.result()
        assert pstatus["ResponseMetadata"]["HTTPStatusCode"] == 200
        assert dstatus in ((204, None), (412, "PreconditionFailed")), dstatus
        assert s3.get_object(Bucket=bucket, Key="r")["Body"].read() == b"newer", f"round {i}: {dstatus}"

        cur = s3.put_object(Bucket=bucket, Key="r", Body=b"both")["ETag"]
        with concurrent.futures.ThreadPoolExecutor(2) as pool:
            outs = list(pool.map(lambda _: _status_code(s3.delete_object, Bucket=bucket, Key="r", IfMatch=cur), range(2)))
        assert sorted(outs, key=str) == sorted([(204, None), (404, "NoSuchKey")], key=str), f"round {i}: {outs}"


@pytest.mark.parametrize(
    "header,value",
    [("x-amz-if-match-size", "-1"), ("x-amz-if-match-size", "abc"), ("x-amz-if-match-last-modified-time", "yesterday")],
)
def test_delete_object_bad_condition_values(s3, bucket, header, value):
    s3.put_object(Bucket=bucket, Key="obj", Body=b"keep")

    def add(request, **_):
        request.headers[header] = value

    s3.meta.events.register("before-sign.s3.DeleteObject", add)
    try:
        assert _status_code(s3.delete_object, Bucket=bucket, Key="obj") == (400, "InvalidArgument")
    finally:
        s3.meta.events.unregister("before-sign.s3.DeleteObject", add)
    assert s3.get_object(Bucket=bucket, Key="obj")["Body"].read() == b"keep"


# --- anonymous uploads with a trailing checksum --------------------------
#
# botocore frames an unsigned upload as aws-chunked with a trailing
# checksum only over TLS, so these run against a module HTTPS server.


@pytest.fixture(scope="module")
def tls_server(request, shardstore_bin, tmp_path_factory):
    from test_tls import PKI

    pki = PKI(tmp_path_factory.mktemp("residual-pki"))
    base = tmp_path_factory.mktemp("residual-tls")
    dirs = https_certs_dirs(pki, base, "residual")
    srv = start_https_server(request, shardstore_bin, base, pki.ca_cert, dirs, "HTTPS server")
    yield srv
    stop_https_server(request, srv)


@pytest.fixture
def tls_bucket(tls_server):
    s3 = tls_server.client()
    name = unique_bucket_name("anon")
    s3.create_bucket(Bucket=name)
    s3.put_bucket_acl(Bucket=name, ACL="public-read-write")
    yield s3, tls_server.client(unsigned=True), name
    empty_and_delete_bucket(s3, name)


def test_anonymous_put_trailing_checksum(tls_bucket):
    """boto3 >= 1.36 sends an unsigned PutObject over TLS as aws-chunked
    STREAMING-UNSIGNED-PAYLOAD-TRAILER with an x-amz-checksum-crc32
    trailer: stored decoded, with its checksum."""
    s3, anon, bucket = tls_bucket
    sent = {}

    def capture(request, **_):
        v = request.headers.get("x-amz-content-sha256")
        sent["x-amz-content-sha256"] = v.decode() if isinstance(v, bytes) else v

    anon.meta.events.register("before-send.s3.PutObject", capture)
    body = b"anonymous bytes " * 4096
    try:
        r = anon.put_object(Bucket=bucket, Key="anon", Body=body)
    finally:
        anon.meta.events.unregister("before-send.s3.PutObject", capture)
    assert sent.get("x-amz-content-sha256") == "STREAMING-UNSIGNED-PAYLOAD-TRAILER", (
        f"botocore did not frame the upload: {sent}"
    )
    want = base64.b64encode(zlib.crc32(body).to_bytes(4, "big")).decode()
    assert r["ChecksumCRC32"] == want
    got = s3.get_object(Bucket=bucket, Key="anon", ChecksumMode="ENABLED")
    assert got["Body"].read() == body
    assert got["ContentLength"] == len(body)
    assert got["ChecksumCRC32"] == want
    assert "aws-chunked" not in got.get("ContentEncoding", "")


def test_anonymous_put_trailing_checksum_wrong(tls_bucket):
    """A wrong trailing checksum from an anonymous client is refused and
    nothing is stored."""
    s3, anon, bucket = tls_bucket

    try:
        anon.put_object(Bucket=bucket, Key="bad", Body=b"payload", ChecksumCRC32="AAAAAA==")
        pytest.fail("a wrong CRC32 was accepted")
    except ClientError as e:
        assert http_status(e) == 400 and error_code(e) == "BadDigest", e.response
    assert _status_code(s3.head_object, Bucket=bucket, Key="bad")[0] == 404


# --- the small items -------------------------------------------------------


def test_content_encoding_kept_as_sent(s3, bucket):
    """Content-Encoding comes back exactly as sent, aws-chunked removed."""
    for sent, want in [
        ("gzip", "gzip"),
        ("deflate, gzip", "deflate, gzip"),
        ("gzip, aws-chunked", "gzip"),
        ("aws-chunked, gzip", "gzip"),
        ("aws-chunked", None),
        ("aws-chunked, aws-chunked", None),
    ]:
        s3.put_object(Bucket=bucket, Key="enc", ContentEncoding=sent)
        assert s3.head_object(Bucket=bucket, Key="enc").get("ContentEncoding") == want, sent


def test_suspended_versioning_writes_omit_version_header(s3, bucket):
    """A PUT or CompleteMultipartUpload into a versioning-suspended bucket
    answers without x-amz-version-id (the version stored is null)."""
    s3.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Suspended"})
    r = s3.put_object(Bucket=bucket, Key="p", Body=b"p")
    assert "VersionId" not in r and "x-amz-version-id" not in r["ResponseMetadata"]["HTTPHeaders"]
    up = s3.create_multipart_upload(Bucket=bucket, Key="m")
    part = s3.upload_part(Bucket=bucket, Key="m", UploadId=up["UploadId"], PartNumber=1, Body=b"m")
    r = s3.complete_multipart_upload(
        Bucket=bucket, Key="m", UploadId=up["UploadId"], MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": part["ETag"]}]}
    )
    assert "VersionId" not in r and "x-amz-version-id" not in r["ResponseMetadata"]["HTTPHeaders"]
    assert s3.head_object(Bucket=bucket, Key="m")["VersionId"] == "null"
    # Enabled again: a real id.
    _enable_versioning(s3, bucket)
    assert s3.put_object(Bucket=bucket, Key="p", Body=b"p2")["VersionId"] not in ("", "null")


@pytest.mark.parametrize("alg", ["SHA256", "SHA1", "CRC32"])
def test_complete_with_composite_checksum_suffix(s3, bucket, alg):
    """CompleteMultipartUpload accepts the object's composite checksum in
    its -N form (what S3 answers and SDK helpers send back) and verifies it."""
    import hashlib

    def digest(b):
        if alg == "SHA256":
            return hashlib.sha256(b).digest()
        if alg == "SHA1":
            return hashlib.sha1(b).digest()
        return zlib.crc32(b).to_bytes(4, "big")

    parts = [b"a" * (5 << 20), b"b" * (5 << 20), b"c" * 1024]
    up = s3.create_multipart_upload(Bucket=bucket, Key="mp", ChecksumAlgorithm=alg)
    done = []
    for i, body in enumerate(parts, 1):
        r = s3.upload_part(Bucket=bucket, Key="mp", UploadId=up["UploadId"], PartNumber=i, Body=body, ChecksumAlgorithm=alg)
        done.append({"PartNumber": i, "ETag": r["ETag"], f"Checksum{alg}": r[f"Checksum{alg}"]})
    composite = base64.b64encode(digest(b"".join(digest(p) for p in parts))).decode() + f"-{len(parts)}"
    wrong = base64.b64encode(digest(b"other")).decode() + f"-{len(parts)}"
    try:
        s3.complete_multipart_upload(
            Bucket=bucket, Key="mp", UploadId=up["UploadId"], MultipartUpload={"Parts": done}, **{f"Checksum{alg}": wrong}
        )
        pytest.fail("a wrong composite checksum was accepted")
    except ClientError as e:
        assert http_status(e) == 400 and error_code(e) == "BadDigest", e.response
    r = s3.complete_multipart_upload(
        Bucket=bucket, Key="mp", UploadId=up["UploadId"], MultipartUpload={"Parts": done}, **{f"Checksum{alg}": composite}
    )
    assert r[f"Checksum{alg}"] == composite
    head = s3.head_object(Bucket=bucket, Key="mp", ChecksumMode="ENABLED")
    assert head[f"Checksum{alg}"] == composite and head["ContentLength"] == sum(map(len, parts))


def test_presigned_expires_zero(server, s3, bucket):
    """X-Amz-Expires=0: a URL that expired when it was signed."""
    import requests

    s3.put_object(Bucket=bucket, Key="k", Body=b"x")
    v4 = server.client(signature_version="s3v4")
    url = v4.generate_presigned_url("get_object", Params={"Bucket": bucket, "Key": "k"}, ExpiresIn=0)
    assert "X-Amz-Expires=0" in url, url
    r = requests.get(url, timeout=30)
    assert r.status_code == 403 and "<Code>AccessDenied</Code>" in r.text and "Request has expired" in r.text, r.text
