"""Server-side encryption end to end (issue 41): SSE-S3, SSE-KMS and SSE-C
with boto3 at its default settings and the aws cli, bucket default
encryption, --encrypt-all, key rotation, and a grep of every file on the
drives for a recognisable plaintext.

Which server runs what:

- SSE-S3 and SSE-KMS run on the shared server (conftest's, which has a
  built-in KMS with the keys conftest.KMS_KEYS), so with
  SHARDSTORE_TEST_CLUSTER=N they run on the cluster too. It speaks plain
  HTTP without --allow-ssec-over-http, so it must refuse SSE-C.
- SSE-C, and everything that needs a customer key (copies from or to
  SSE-C, UploadPartCopy from an SSE-C source, presigned SSE-C GETs,
  GetObjectAttributes), run on an HTTPS server of this module's own
  (certificates made with openssl as test_tls does; boto3 verify=CA, aws
  cli --ca-bundle). It follows the mode as the shared server does: a
  cluster of N nodes, each with its own certificate, under
  SHARDSTORE_TEST_CLUSTER=N.
- --encrypt-all with the drive grep, the no-KMS control, and the restart
  with rotated keys start single servers of their own on 4 drives
  (test_tls.Standalone); a cluster node runs the same code, so these are
  left to the single-server run.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

import boto3
import pytest
import requests
from boto3.s3.transfer import TransferConfig
from botocore.exceptions import ClientError

from conftest import (
    ALICE,
    CLUSTER_NODES,
    REGION,
    ROOT_PASSWORD,
    ROOT_USER,
    empty_and_delete_bucket,
    https_certs_dirs,
    kms_key_line,
    start_https_server,
    stop_https_server,
    unique_bucket_name,
)
from s3util import MiB, error_code, http_status, md5_hex, multipart_etag, raw_request, sign
from test_tls import PKI, Standalone, aws_cli, sha256_file, wait_ready, write_random

KiB = 1024

# Header names as boto3 reports them (lower case).
H_SSE = "x-amz-server-side-encryption"
H_KMS_KEY = "x-amz-server-side-encryption-aws-kms-key-id"
H_CONTEXT = "x-amz-server-side-encryption-context"
H_BUCKET_KEY = "x-amz-server-side-encryption-bucket-key-enabled"
H_C_ALG = "x-amz-server-side-encryption-customer-algorithm"
H_C_KEY = "x-amz-server-side-encryption-customer-key"
H_C_MD5 = "x-amz-server-side-encryption-customer-key-md5"

# Two SSE-C customer keys for the whole module.
CUSTOMER_KEY = os.urandom(32)
OTHER_KEY = os.urandom(32)

SIZES = [0, 1, 100 * KiB, 3 * MiB]

SINGLE_ONLY = pytest.mark.skipif(
    CLUSTER_NODES > 1,
    reason="starts single servers of its own on 4 drives (flags, environment, restarts); a cluster node runs "
    "the same code, and the single-server run covers it",
)


# -- helpers -------------------------------------------------------------------


def b64md5(key: bytes) -> str:
    return base64.b64encode(hashlib.md5(key).digest()).decode()


def ssec(key: bytes = CUSTOMER_KEY) -> dict:
    """boto3's SSE-C parameters (it adds the base64 and the key MD5)."""
    return {"SSECustomerAlgorithm": "AES256", "SSECustomerKey": key}


def copy_ssec(key: bytes = CUSTOMER_KEY) -> dict:
    return {"CopySourceSSECustomerAlgorithm": "AES256", "CopySourceSSECustomerKey": key}


def ssec_headers(key: bytes = CUSTOMER_KEY) -> dict:
    """The three SSE-C headers as a raw HTTP client sends them."""
    return {H_C_ALG: "AES256", H_C_KEY: base64.b64encode(key).decode(), H_C_MD5: b64md5(key)}


# What each scheme's writes send, and how its answers must read.
SCHEMES = {
    "sse-s3": {"ServerSideEncryption": "AES256"},
    "sse-kms": {"ServerSideEncryption": "aws:kms", "SSEKMSKeyId": "testkey-1"},
    "sse-c": ssec(),
}


def headers_of(resp: dict) -> dict:
    return resp["ResponseMetadata"]["HTTPHeaders"]


def check_sse_headers(h: dict, scheme: str, kms_key: str = "testkey-1", what: str = "") -> None:
    """The encryption headers of an answer (PUT, GET, HEAD, copy,
    multipart) for an object or upload of scheme."""
    where = f"{what}: {h}"
    if scheme == "sse-s3":
        assert h.get(H_SSE) == "AES256", where
        assert H_KMS_KEY not in h and H_C_ALG not in h, where
    elif scheme == "sse-kms":
        assert h.get(H_SSE) == "aws:kms", where
        # S3 answers the key's ARN; its last part is the key id.
        assert h.get(H_KMS_KEY, "").split("/")[-1].split(":")[-1] == kms_key, where
        assert H_C_ALG not in h, where
    elif scheme == "sse-c":
        assert h.get(H_C_ALG) == "AES256", where
        assert h.get(H_C_MD5) == b64md5(CUSTOMER_KEY), where
        assert h.get(H_SSE) not in ("aws:kms", "aws:kms:dsse"), where
        assert H_KMS_KEY not in h, where
    else:
        assert H_SSE not in h and H_C_ALG not in h and H_KMS_KEY not in h, where


def check_etag(etag: str, scheme: str, data: bytes) -> None:
    """A single PUT's ETag: the plaintext MD5 for SSE-S3 (and unencrypted
    objects); for SSE-KMS and SSE-C a 32-hex-digit value that is not it,
    as S3 documents."""
    assert re.fullmatch(r'"[0-9a-f]{32}"', etag), etag
    if scheme in ("sse-s3", None):
        assert etag == f'"{md5_hex(data)}"', etag
    else:
        assert etag != f'"{md5_hex(data)}"', f"{scheme} ETag is the plaintext MD5: {etag}"


def expect_error(status: int, code: str | None, fn, *args, **kwargs) -> ClientError:
    """fn(...) fails with status and (unless None: a HEAD has no body)
    the S3 error code."""
    with pytest.raises(ClientError) as ei:
        fn(*args, **kwargs)
    got = (http_status(ei.value), error_code(ei.value))
    want = (status, code if code is not None else got[1])
    assert got == want, f"want {want}, got {got}: {ei.value.response.get('Error')}"
    return ei.value


@contextmanager
def extra_headers(client, operation: str, headers: dict):
    """Add headers boto3 has no parameter for to one operation's requests
    (before signing, so they are signed as a client's own would be)."""

    def add(request, **_):
        for k, v in headers.items():
            request.headers[k] = v

    event = f"before-sign.s3.{operation}"
    client.meta.events.register(event, add)
    try:
        yield client
    finally:
        client.meta.events.unregister(event, add)


def ranges_for(size: int) -> list[tuple[str, int, int]]:
    """(Range header, start, end exclusive) pairs for an object of size:
    the first byte, spans across the 64 KiB package boundaries (and the
    1 MiB block boundary), the last bytes."""
    out = []
    if size >= 1:
        out += [("bytes=0-0", 0, 1), (f"bytes=-{min(size, 70000)}", size - min(size, 70000), size)]
    if size > 70 * KiB:
        out.append(("bytes=65530-65545", 65530, 65546))
    if size > 200 * KiB:
        out.append(("bytes=65000-200000", 65000, 200001))
    if size > 2 * MiB:
        out.append((f"bytes={MiB - 70000}-{2 * MiB + 5}", MiB - 70000, 2 * MiB + 6))
        out.append((f"bytes={size - 100}-", size - 100, size))
    return out


def round_trip(client, bucket: str, key: str, data: bytes, scheme: str) -> None:
    """PUT with scheme, then GET, HEAD, list and ranged GETs, checking the
    bytes, the encryption headers and the ETag rules."""
    read = ssec() if scheme == "sse-c" else {}
    put = client.put_object(Bucket=bucket, Key=key, Body=data, **SCHEMES[scheme])
    check_sse_headers(headers_of(put), scheme, what="PUT")
    check_etag(put["ETag"], scheme, data)

    got = client.get_object(Bucket=bucket, Key=key, **read)
    assert got["Body"].read() == data
    assert got["ContentLength"] == len(data) and got["ETag"] == put["ETag"]
    check_sse_headers(headers_of(got), scheme, what="GET")

    head = client.head_object(Bucket=bucket, Key=key, **read)
    assert head["ContentLength"] == len(data) and head["ETag"] == put["ETag"]
    check_sse_headers(headers_of(head), scheme, what="HEAD")

    listed = client.list_objects_v2(Bucket=bucket, Prefix=key)["Contents"]
    assert [(o["Key"], o["Size"], o["ETag"]) for o in listed] == [(key, len(data), put["ETag"])]

    if data:
        # A range past the end is 416 with the plaintext size.
        e = expect_error(416, "InvalidRange", client.get_object, Bucket=bucket, Key=key, Range=f"bytes={len(data)}-",
                         **read)
        assert headers_of(e.response).get("content-range") == f"bytes */{len(data)}", headers_of(e.response)
    for rng, start, end in ranges_for(len(data)):
        part = client.get_object(Bucket=bucket, Key=key, Range=rng, **read)
        body = part["Body"].read()
        assert body == data[start:end], f"{rng}: {len(body)} bytes, want {end - start}"
        assert part["ContentRange"] == f"bytes {start}-{end - 1}/{len(data)}", rng
        check_sse_headers(headers_of(part), scheme, what=f"GET {rng}")


def multipart_round_trip(client, bucket: str, key: str, tmp_path: Path, scheme: str) -> None:
    """boto3's upload_file in 5 MiB parts and a tail (3 parts), then HEAD,
    a range across a part boundary, one part by number, and download_file."""
    size = 10 * MiB + 12345
    src = write_random(tmp_path / f"{scheme}-mp.bin", size)
    data = src.read_bytes()
    cfg = TransferConfig(multipart_threshold=5 * MiB, multipart_chunksize=5 * MiB)
    client.upload_file(str(src), bucket, key, ExtraArgs=dict(SCHEMES[scheme]), Config=cfg)
    read = ssec() if scheme == "sse-c" else {}
    head = client.head_object(Bucket=bucket, Key=key, **read)
    assert head["ContentLength"] == size
    assert head["ETag"].endswith('-3"'), head["ETag"]
    parts = [data[:5 * MiB], data[5 * MiB:10 * MiB], data[10 * MiB:]]
    if scheme != "sse-s3":
        # Neither the object's nor the parts' plaintext MD5s show.
        assert head["ETag"] != multipart_etag(parts), head["ETag"]
    check_sse_headers(headers_of(head), scheme, what="HEAD multipart")

    rng = client.get_object(Bucket=bucket, Key=key, Range=f"bytes={5 * MiB - 100}-{5 * MiB + 99}", **read)
    assert rng["Body"].read() == data[5 * MiB - 100:5 * MiB + 100]
    part2 = client.get_object(Bucket=bucket, Key=key, PartNumber=2, **read)
    assert part2["Body"].read() == parts[1]
    check_sse_headers(headers_of(part2), scheme, what="GET partNumber=2")

    back = tmp_path / f"{scheme}-mp.back"
    client.download_file(bucket, key, str(back), ExtraArgs=read or None, Config=cfg)
    assert sha256_file(back) == sha256_file(src)
    listed = client.list_objects_v2(Bucket=bucket, Prefix=key)["Contents"]
    assert [(o["Key"], o["Size"]) for o in listed] == [(key, size)]


MARKER_SMALL = b"SHARDSTORE-SSE-GREP-MARKER-small-"
MARKER_LARGE = b"SHARDSTORE-SSE-GREP-MARKER-large-"


def marked(marker: bytes, size: int) -> bytes:
    return (marker * (size // len(marker) + 1))[:size]


def files_holding(root: Path, needle: bytes) -> list[str]:
    """Every regular file under root (pebble WAL and sst files, shard
    files, metadata) whose bytes contain needle."""
    hits = []
    for p in sorted(root.rglob("*")):
        if p.is_file() and not p.is_symlink() and needle in p.read_bytes():
            hits.append(str(p.relative_to(root)))
    return hits


# -- the module's HTTPS server -------------------------------------------------


@pytest.fixture(scope="module")
def pki(tmp_path_factory) -> PKI:
    return PKI(tmp_path_factory.mktemp("sse-pki"))


@pytest.fixture(scope="module")
def tls_server(request, shardstore_bin, tmp_path_factory, pki):
    """An HTTPS server (or cluster, as the shared one) with conftest's KMS,
    for the SSE-C checks."""
    base = tmp_path_factory.mktemp("sse-tls")
    dirs = https_certs_dirs(pki, base, "sse")
    srv = start_https_server(request, shardstore_bin, base, pki.ca_cert, dirs, "HTTPS server")
    yield srv
    stop_https_server(request, srv)


@pytest.fixture
def tls(tls_server):
    if not tls_server.alive():
        pytest.fail(f"the HTTPS server is not running\n{tls_server.log_tail()}", pytrace=False)
    yield tls_server
    if not tls_server.alive():
        pytest.fail(f"the HTTPS server died during this test\n{tls_server.log_tail()}", pytrace=False)


@pytest.fixture
def sc(tls):
    """boto3 (default settings, verify=the test CA) on the HTTPS server."""
    return tls.client()


@pytest.fixture
def tbucket(request, sc):
    name = unique_bucket_name(request.node.name.removeprefix("test_"))
    sc.create_bucket(Bucket=name)
    yield name
    try:
        empty_and_delete_bucket(sc, name)
    except Exception:
        pass


@pytest.fixture
def key_file(tmp_path) -> Path:
    """The customer key in a file, for the aws cli's fileb://."""
    p = tmp_path / "customer.key"
    p.write_bytes(CUSTOMER_KEY)
    return p


# -- round trips ---------------------------------------------------------------


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s}B")
@pytest.mark.parametrize("scheme", ["sse-s3", "sse-kms"])
def test_round_trip_kms_schemes(s3, bucket, scheme, size):
    round_trip(s3, bucket, f"obj-{size}", os.urandom(size), scheme)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s}B")
def test_round_trip_sse_c(sc, tbucket, size):
    round_trip(sc, tbucket, f"obj-{size}", os.urandom(size), "sse-c")


@pytest.mark.parametrize("scheme", ["sse-s3", "sse-kms"])
def test_multipart_kms_schemes(s3, bucket, tmp_path, scheme):
    multipart_round_trip(s3, bucket, "mp.bin", tmp_path, scheme)


def test_multipart_sse_c(sc, tbucket, tmp_path):
    multipart_round_trip(sc, tbucket, "mp.bin", tmp_path, "sse-c")


def test_multipart_headers_and_part_keys(s3, bucket, sc, tbucket):
    """CreateMultipartUpload, UploadPart and Complete answer the upload's
    encryption; an SSE-C upload's parts need the upload's key."""
    part = os.urandom(5 * MiB)
    up = s3.create_multipart_upload(Bucket=bucket, Key="k", ServerSideEncryption="aws:kms", SSEKMSKeyId="testkey-2")
    check_sse_headers(headers_of(up), "sse-kms", "testkey-2", "CreateMultipartUpload")
    p1 = s3.upload_part(Bucket=bucket, Key="k", UploadId=up["UploadId"], PartNumber=1, Body=part)
    check_sse_headers(headers_of(p1), "sse-kms", "testkey-2", "UploadPart")
    assert p1["ETag"] != f'"{md5_hex(part)}"', "an SSE-KMS part's ETag is its plaintext MD5"
    done = s3.complete_multipart_upload(Bucket=bucket, Key="k", UploadId=up["UploadId"],
                                        MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": p1["ETag"]}]})
    check_sse_headers(headers_of(done), "sse-kms", "testkey-2", "CompleteMultipartUpload")
    assert s3.get_object(Bucket=bucket, Key="k")["Body"].read() == part

    up = sc.create_multipart_upload(Bucket=tbucket, Key="c", **ssec())
    check_sse_headers(headers_of(up), "sse-c", what="CreateMultipartUpload")
    expect_error(400, "InvalidRequest", sc.upload_part, Bucket=tbucket, Key="c", UploadId=up["UploadId"],
                 PartNumber=1, Body=part)
    # A part under another key than the upload's: 400 InvalidRequest, as
    # S3 answers ("The provided encryption parameters did not match...").
    expect_error(400, "InvalidRequest", sc.upload_part, Bucket=tbucket, Key="c", UploadId=up["UploadId"],
                 PartNumber=1, Body=part, **ssec(OTHER_KEY))
    p1 = sc.upload_part(Bucket=tbucket, Key="c", UploadId=up["UploadId"], PartNumber=1, Body=part, **ssec())
    check_sse_headers(headers_of(p1), "sse-c", what="UploadPart")
    p2 = sc.upload_part(Bucket=tbucket, Key="c", UploadId=up["UploadId"], PartNumber=2, Body=b"tail", **ssec())
    done = sc.complete_multipart_upload(Bucket=tbucket, Key="c", UploadId=up["UploadId"],
                                        MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": p1["ETag"]},
                                                                   {"PartNumber": 2, "ETag": p2["ETag"]}]})
    assert headers_of(done).get(H_C_ALG) == "AES256", headers_of(done)
    assert sc.get_object(Bucket=tbucket, Key="c", **ssec())["Body"].read() == part + b"tail"


def test_kms_default_key_context_and_bucket_key(s3, bucket):
    """aws:kms without a key id uses the KMS's default key (the key file's
    first); an encryption context and the bucket-key flag are answered
    back on PUT, GET and HEAD."""
    put = s3.put_object(Bucket=bucket, Key="default", Body=b"x", ServerSideEncryption="aws:kms")
    check_sse_headers(headers_of(put), "sse-kms", "shardstore-default", "PUT without a key id")
    check_sse_headers(headers_of(s3.head_object(Bucket=bucket, Key="default")), "sse-kms", "shardstore-default")

    ctx = base64.b64encode(json.dumps({"project": "sse-e2e"}).encode()).decode()
    put = s3.put_object(Bucket=bucket, Key="ctx", Body=b"with context", ServerSideEncryption="aws:kms",
                        SSEKMSKeyId="testkey-2", SSEKMSEncryptionContext=ctx, BucketKeyEnabled=True)
    for what, resp in (("PUT", put), ("GET", s3.get_object(Bucket=bucket, Key="ctx")),
                       ("HEAD", s3.head_object(Bucket=bucket, Key="ctx"))):
        h = headers_of(resp)
        check_sse_headers(h, "sse-kms", "testkey-2", what)
        assert h.get(H_BUCKET_KEY) == "true" and resp.get("BucketKeyEnabled") is True, f"{what}: {h}"
        if what != "PUT" or H_CONTEXT in h:
            assert json.loads(base64.b64decode(h[H_CONTEXT])) == {"project": "sse-e2e"}, f"{what}: {h}"
    assert s3.get_object(Bucket=bucket, Key="ctx")["Body"].read() == b"with context"


# -- the aws cli ---------------------------------------------------------------


@pytest.mark.parametrize("scheme", ["sse-s3", "sse-kms"])
def test_aws_cli_cp(aws, s3, bucket, tmp_path, scheme):
    """`aws s3 cp --sse ...` of 9 MiB (over the cli's 8 MiB multipart
    threshold) up and down."""
    src = write_random(tmp_path / "big.bin", 9 * MiB + 7)
    args = ["--sse", "AES256"] if scheme == "sse-s3" else ["--sse", "aws:kms", "--sse-kms-key-id", "testkey-1"]
    aws("s3", "cp", src, f"s3://{bucket}/cli/big.bin", *args, "--only-show-errors", "--no-progress")
    head = s3.head_object(Bucket=bucket, Key="cli/big.bin")
    assert head["ContentLength"] == 9 * MiB + 7 and head["ETag"].endswith('-2"'), head
    check_sse_headers(headers_of(head), scheme, what="HEAD after aws s3 cp")
    back = tmp_path / "back.bin"
    aws("s3", "cp", f"s3://{bucket}/cli/big.bin", back, "--only-show-errors", "--no-progress")
    assert sha256_file(back) == sha256_file(src)


def test_aws_cli_sse_c(tls, pki, sc, tbucket, tmp_path, key_file):
    """`aws s3 cp --sse-c` up (multipart) and down, and `aws s3api
    put-object/head-object/get-object --sse-customer-*`, over HTTPS."""
    ep, ca = tls.endpoint, pki.ca_cert
    src = write_random(tmp_path / "big.bin", 9 * MiB + 7)
    sse_c = ["--sse-c", "AES256", "--sse-c-key", f"fileb://{key_file}"]
    quiet = ["--only-show-errors", "--no-progress"]
    res = aws_cli(ep, "s3", "cp", src, f"s3://{tbucket}/cli/big.bin", *sse_c, *quiet, ca=ca, cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    head = sc.head_object(Bucket=tbucket, Key="cli/big.bin", **ssec())
    assert head["ContentLength"] == 9 * MiB + 7 and head["ETag"].endswith('-2"'), head
    check_sse_headers(headers_of(head), "sse-c", what="HEAD after aws s3 cp --sse-c")
    back = tmp_path / "back.bin"
    res = aws_cli(ep, "s3", "cp", f"s3://{tbucket}/cli/big.bin", back, *sse_c, *quiet, ca=ca, cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert sha256_file(back) == sha256_file(src)

    small = tmp_path / "small.txt"
    small.write_bytes(b"put with the s3api\n" * 50)
    api_c = ["--sse-customer-algorithm", "AES256", "--sse-customer-key", f"fileb://{key_file}"]
    res = aws_cli(ep, "s3api", "put-object", "--bucket", tbucket, "--key", "api.txt", "--body", small, *api_c,
                  ca=ca, cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    put = json.loads(res.stdout)
    assert put["SSECustomerAlgorithm"] == "AES256" and put["SSECustomerKeyMD5"] == b64md5(CUSTOMER_KEY), put
    check_etag(put["ETag"], "sse-c", small.read_bytes())
    res = aws_cli(ep, "s3api", "head-object", "--bucket", tbucket, "--key", "api.txt", *api_c, ca=ca, cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    head = json.loads(res.stdout)
    assert head["ContentLength"] == small.stat().st_size and head["SSECustomerKeyMD5"] == b64md5(CUSTOMER_KEY)
    out = tmp_path / "api.back"
    res = aws_cli(ep, "s3api", "get-object", "--bucket", tbucket, "--key", "api.txt", *api_c, out, ca=ca,
                  cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert out.read_bytes() == small.read_bytes()


# -- errors --------------------------------------------------------------------


def test_ssec_refused_over_plain_http(s3, bucket):
    """The shared server is plain HTTP without --allow-ssec-over-http: a
    customer key in clear is refused, writing or reading."""
    expect_error(400, "InvalidRequest", s3.put_object, Bucket=bucket, Key="k", Body=b"x", **ssec())
    s3.put_object(Bucket=bucket, Key="plain", Body=b"x")
    expect_error(400, "InvalidRequest", s3.get_object, Bucket=bucket, Key="plain", **ssec())
    expect_error(400, "InvalidRequest", s3.create_multipart_upload, Bucket=bucket, Key="mp", **ssec())
    expect_error(400, "InvalidRequest", s3.copy_object, Bucket=bucket, Key="cp",
                 CopySource={"Bucket": bucket, "Key": "plain"}, **ssec())
    expect_error(400, "InvalidRequest", s3.copy_object, Bucket=bucket, Key="cp",
                 CopySource={"Bucket": bucket, "Key": "plain"}, **copy_ssec())
    assert [o["Key"] for o in s3.list_objects_v2(Bucket=bucket)["Contents"]] == ["plain"]


def test_ssec_key_errors(sc, tbucket):
    """Missing key 400, wrong key 403 AccessDenied, a key for an object
    that has none 400, a key MD5 that does not match 400 InvalidArgument,
    SSE-C together with AES256 400 InvalidArgument."""
    sc.put_object(Bucket=tbucket, Key="c", Body=b"secret", **ssec())
    sc.put_object(Bucket=tbucket, Key="plain", Body=b"plain")
    sc.put_object(Bucket=tbucket, Key="s3", Body=b"sse-s3", ServerSideEncryption="AES256")

    expect_error(400, "InvalidRequest", sc.get_object, Bucket=tbucket, Key="c")
    expect_error(400, None, sc.head_object, Bucket=tbucket, Key="c")
    expect_error(403, "AccessDenied", sc.get_object, Bucket=tbucket, Key="c", **ssec(OTHER_KEY))
    expect_error(403, None, sc.head_object, Bucket=tbucket, Key="c", **ssec(OTHER_KEY))
    expect_error(400, "InvalidRequest", sc.get_object, Bucket=tbucket, Key="c", Range="bytes=0-0")
    for key in ("plain", "s3"):
        expect_error(400, "InvalidRequest", sc.get_object, Bucket=tbucket, Key=key, **ssec())
        expect_error(400, None, sc.head_object, Bucket=tbucket, Key=key, **ssec())

    wrong_md5 = {"SSECustomerAlgorithm": "AES256", "SSECustomerKey": base64.b64encode(CUSTOMER_KEY).decode(),
                 "SSECustomerKeyMD5": b64md5(OTHER_KEY)}
    expect_error(400, "InvalidArgument", sc.put_object, Bucket=tbucket, Key="bad", Body=b"x", **wrong_md5)
    expect_error(400, "InvalidArgument", sc.get_object, Bucket=tbucket, Key="c", **wrong_md5)
    expect_error(400, "InvalidArgument", sc.put_object, Bucket=tbucket, Key="both", Body=b"x",
                 ServerSideEncryption="AES256", **ssec())
    assert sorted(o["Key"] for o in sc.list_objects_v2(Bucket=tbucket)["Contents"]) == ["c", "plain", "s3"]
    assert sc.get_object(Bucket=tbucket, Key="c", **ssec())["Body"].read() == b"secret"


def test_ssec_bucket_policy_conditions(tls):
    """ceph s3-tests' test_encryption_sse_c_enforced_with_bucket_policy and
    test_encryption_sse_c_deny_algo_with_bucket_policy over HTTPS, for the
    bucket's owner (alice: a policy binds her, not root): the condition
    key s3:x-amz-server-side-encryption-customer-algorithm is the
    request's SSE-C algorithm, absent without SSE-C."""
    alice = tls.client(ALICE)
    name = unique_bucket_name("ssec-policy")
    alice.create_bucket(Bucket=name)
    resource = f"arn:aws:s3:::{name}/*"
    try:
        alice.put_bucket_policy(Bucket=name, Policy=json.dumps({"Version": "2012-10-17", "Statement": [
            {"Effect": "Deny", "Principal": "*", "Action": "s3:PutObject", "Resource": resource,
             "Condition": {"Null": {"s3:x-amz-server-side-encryption-customer-algorithm": "true"}}}]}))
        expect_error(403, "AccessDenied", alice.put_object, Bucket=name, Key="foo", Body=b"bar")
        expect_error(403, "AccessDenied", alice.put_object, Bucket=name, Key="foo", Body=b"bar",
                     ServerSideEncryption="AES256")
        alice.put_object(Bucket=name, Key="foo", Body=b"bar", **ssec())
        assert alice.get_object(Bucket=name, Key="foo", **ssec())["Body"].read() == b"bar"

        alice.put_bucket_policy(Bucket=name, Policy=json.dumps({"Version": "2012-10-17", "Statement": [
            {"Effect": "Deny", "Principal": "*", "Action": "s3:PutObject", "Resource": resource,
             "Condition": {"StringNotEquals": {"s3:x-amz-server-side-encryption-customer-algorithm": "AES256"}}}]}))
        expect_error(403, "AccessDenied", alice.put_object, Bucket=name, Key="foo2", Body=b"bar",
                     SSECustomerAlgorithm="AES192", SSECustomerKey=CUSTOMER_KEY)
        expect_error(403, "AccessDenied", alice.put_object, Bucket=name, Key="foo2", Body=b"bar")
        alice.put_object(Bucket=name, Key="foo2", Body=b"bar", **ssec())
        assert sorted(o["Key"] for o in alice.list_objects_v2(Bucket=name)["Contents"]) == ["foo", "foo2"]
    finally:
        alice.delete_bucket_policy(Bucket=name)
        empty_and_delete_bucket(alice, name)


def test_sse_headers_on_get_refused(server, s3, bucket):
    """x-amz-server-side-encryption (and the KMS key id) belong to writes:
    a GET or HEAD that sends them is 400 InvalidArgument."""
    s3.put_object(Bucket=bucket, Key="s3", Body=b"x", ServerSideEncryption="AES256")
    for hdrs in ({"x-amz-server-side-encryption": "AES256"},
                 {"x-amz-server-side-encryption": "aws:kms", "x-amz-server-side-encryption-aws-kms-key-id": "testkey-1"}):
        with extra_headers(s3, "GetObject", hdrs):
            expect_error(400, "InvalidArgument", s3.get_object, Bucket=bucket, Key="s3")
        with extra_headers(s3, "HeadObject", hdrs):
            expect_error(400, None, s3.head_object, Bucket=bucket, Key="s3")
    # The same with a raw signed request, whose body says the code.
    target = f"/{bucket}/s3"
    hdrs = sign(server.endpoint, server.root.access_key, server.root.secret_key, "GET", target,
                headers={"x-amz-server-side-encryption": "AES256"})
    resp = raw_request(server.endpoint, "GET", target, headers=hdrs)
    assert (resp.status, resp.error_code()) == (400, "InvalidArgument"), resp


def test_unknown_kms_key(s3, bucket):
    expect_error(400, "KMS.NotFoundException", s3.put_object, Bucket=bucket, Key="k", Body=b"x",
                 ServerSideEncryption="aws:kms", SSEKMSKeyId="no-such-key")
    expect_error(400, "KMS.NotFoundException", s3.create_multipart_upload, Bucket=bucket, Key="k",
                 ServerSideEncryption="aws:kms", SSEKMSKeyId="no-such-key")
    expect_error(400, "KMS.NotFoundException", s3.put_bucket_encryption, Bucket=bucket,
                 ServerSideEncryptionConfiguration={"Rules": [{"ApplyServerSideEncryptionByDefault": {
                     "SSEAlgorithm": "aws:kms", "KMSMasterKeyID": "no-such-key"}}]})
    assert "Contents" not in s3.list_objects_v2(Bucket=bucket)


# -- copies --------------------------------------------------------------------


def test_copy_ssec_to_sse_s3_and_back(sc, tbucket):
    data = os.urandom(200 * KiB)
    sc.put_object(Bucket=tbucket, Key="c", Body=data, **ssec())
    src = {"Bucket": tbucket, "Key": "c"}

    expect_error(400, "InvalidRequest", sc.copy_object, Bucket=tbucket, Key="x", CopySource=src,
                 ServerSideEncryption="AES256")
    expect_error(403, "AccessDenied", sc.copy_object, Bucket=tbucket, Key="x", CopySource=src,
                 ServerSideEncryption="AES256", **copy_ssec(OTHER_KEY))

    cp = sc.copy_object(Bucket=tbucket, Key="s3", CopySource=src, ServerSideEncryption="AES256", **copy_ssec())
    check_sse_headers(headers_of(cp), "sse-s3", what="copy SSE-C -> SSE-S3")
    assert cp["CopyObjectResult"]["ETag"] == f'"{md5_hex(data)}"'
    got = sc.get_object(Bucket=tbucket, Key="s3")
    assert got["Body"].read() == data
    check_sse_headers(headers_of(got), "sse-s3", what="GET of the copy")

    # SSE-C to a destination that asks for nothing (and a bucket without
    # default encryption): stored unencrypted.
    cp = sc.copy_object(Bucket=tbucket, Key="plain", CopySource=src, **copy_ssec())
    check_sse_headers(headers_of(cp), None, what="copy SSE-C -> no encryption")
    got = sc.get_object(Bucket=tbucket, Key="plain")
    assert got["Body"].read() == data
    check_sse_headers(headers_of(got), None, what="GET of the unencrypted copy")

    cp = sc.copy_object(Bucket=tbucket, Key="c2", CopySource={"Bucket": tbucket, "Key": "s3"}, **ssec(OTHER_KEY))
    assert headers_of(cp).get(H_C_MD5) == b64md5(OTHER_KEY), headers_of(cp)
    assert cp["CopyObjectResult"]["ETag"] != f'"{md5_hex(data)}"'
    expect_error(400, "InvalidRequest", sc.get_object, Bucket=tbucket, Key="c2")
    expect_error(403, "AccessDenied", sc.get_object, Bucket=tbucket, Key="c2", **ssec())
    assert sc.get_object(Bucket=tbucket, Key="c2", **ssec(OTHER_KEY))["Body"].read() == data


def test_copy_plain_to_kms_and_into_default_bucket(s3, bucket):
    data = os.urandom(300 * KiB)
    s3.put_object(Bucket=bucket, Key="plain", Body=data)
    check_sse_headers(headers_of(s3.head_object(Bucket=bucket, Key="plain")), None, what="plain object")
    cp = s3.copy_object(Bucket=bucket, Key="kms", CopySource={"Bucket": bucket, "Key": "plain"},
                        ServerSideEncryption="aws:kms", SSEKMSKeyId="testkey-2")
    check_sse_headers(headers_of(cp), "sse-kms", "testkey-2", "copy plain -> SSE-KMS")
    assert cp["CopyObjectResult"]["ETag"] != f'"{md5_hex(data)}"'
    got = s3.get_object(Bucket=bucket, Key="kms")
    assert got["Body"].read() == data
    check_sse_headers(headers_of(got), "sse-kms", "testkey-2", "GET of the copy")

    # A copy without headers into a bucket with default encryption takes
    # the bucket's.
    s3.put_bucket_encryption(Bucket=bucket, ServerSideEncryptionConfiguration={"Rules": [
        {"ApplyServerSideEncryptionByDefault": {"SSEAlgorithm": "AES256"}}]})
    cp = s3.copy_object(Bucket=bucket, Key="default", CopySource={"Bucket": bucket, "Key": "plain"})
    check_sse_headers(headers_of(cp), "sse-s3", what="copy into a default-encrypted bucket")
    assert s3.get_object(Bucket=bucket, Key="default")["Body"].read() == data


def test_copy_onto_itself_replace_metadata(s3, bucket, sc, tbucket):
    """A copy onto itself with REPLACE metadata (and the same encryption
    asked for again) keeps the encryption and the data, and changes the
    metadata: SSE-S3 and SSE-KMS on the shared server, SSE-C over HTTPS."""
    data = os.urandom(100 * KiB)
    for key, scheme in (("s3", "sse-s3"), ("kms", "sse-kms")):
        s3.put_object(Bucket=bucket, Key=key, Body=data, Metadata={"v": "1"}, **SCHEMES[scheme])
        cp = s3.copy_object(Bucket=bucket, Key=key, CopySource={"Bucket": bucket, "Key": key},
                            MetadataDirective="REPLACE", Metadata={"v": "2"}, **SCHEMES[scheme])
        check_sse_headers(headers_of(cp), scheme, what=f"self-copy {scheme}")
        got = s3.get_object(Bucket=bucket, Key=key)
        assert got["Body"].read() == data and got["Metadata"] == {"v": "2"}
        check_sse_headers(headers_of(got), scheme, what=f"GET after self-copy {scheme}")

    sc.put_object(Bucket=tbucket, Key="c", Body=data, Metadata={"v": "1"}, **ssec())
    cp = sc.copy_object(Bucket=tbucket, Key="c", CopySource={"Bucket": tbucket, "Key": "c"},
                        MetadataDirective="REPLACE", Metadata={"v": "2"}, **ssec(), **copy_ssec())
    check_sse_headers(headers_of(cp), "sse-c", what="self-copy SSE-C")
    got = sc.get_object(Bucket=tbucket, Key="c", **ssec())
    assert got["Body"].read() == data and got["Metadata"] == {"v": "2"}
    expect_error(400, "InvalidRequest", sc.get_object, Bucket=tbucket, Key="c")
    # A copy onto itself under another customer key (the SSE-C way to
    # rotate a key): the old key no longer opens it.
    cp = sc.copy_object(Bucket=tbucket, Key="c", CopySource={"Bucket": tbucket, "Key": "c"},
                        MetadataDirective="COPY", **ssec(OTHER_KEY), **copy_ssec())
    assert headers_of(cp).get(H_C_MD5) == b64md5(OTHER_KEY), headers_of(cp)
    expect_error(403, "AccessDenied", sc.get_object, Bucket=tbucket, Key="c", **ssec())
    got = sc.get_object(Bucket=tbucket, Key="c", **ssec(OTHER_KEY))
    assert got["Body"].read() == data and got["Metadata"] == {"v": "2"}


def test_copy_in_place_changing_or_restating_encryption(s3, bucket, sc, tbucket):
    """A copy onto itself that only names an encryption (metadata COPY) is
    S3's way to encrypt or re-encrypt objects in place (`aws s3 cp
    s3://b/k s3://b/k --sse ...`). S3 counts an x-amz-server-side-encryption
    header as a change, so it accepts the copy whether or not the
    encryption differs (LocalStack, checked against AWS, has the same
    rule). For SSE-C with the same key S3's answer is not documented:
    success, or its InvalidRequest refusal of a copy that changes nothing."""
    data = b"encrypt me in place " * 100
    s3.put_object(Bucket=bucket, Key="k", Body=data)
    src = {"Bucket": bucket, "Key": "k"}
    for scheme, kms_key, sse in (("sse-s3", None, SCHEMES["sse-s3"]),
                                 ("sse-kms", "testkey-1", SCHEMES["sse-kms"]),
                                 ("sse-kms", "testkey-2", {"ServerSideEncryption": "aws:kms", "SSEKMSKeyId": "testkey-2"}),
                                 ("sse-s3", None, SCHEMES["sse-s3"])):
        cp = s3.copy_object(Bucket=bucket, Key="k", CopySource=src, **sse)
        check_sse_headers(headers_of(cp), scheme, kms_key, f"in-place copy to {sse}")
        got = s3.get_object(Bucket=bucket, Key="k")
        assert got["Body"].read() == data
        check_sse_headers(headers_of(got), scheme, kms_key, f"GET after in-place copy to {sse}")

    # The same encryption once more.
    sc.put_object(Bucket=tbucket, Key="c", Body=data, **ssec())
    problems = []
    for sse in (SCHEMES["sse-s3"], SCHEMES["sse-kms"], SCHEMES["sse-kms"]):
        try:
            cp = s3.copy_object(Bucket=bucket, Key="k", CopySource=src, **sse)
            check_sse_headers(headers_of(cp), "sse-s3" if sse == SCHEMES["sse-s3"] else "sse-kms", what=f"{sse}")
        except ClientError as e:
            problems.append(f"{sse['ServerSideEncryption']} again: {http_status(e)} {error_code(e)} "
                            f"{e.response['Error'].get('Message')!r} (want 200)")
    try:
        sc.copy_object(Bucket=tbucket, Key="c", CopySource={"Bucket": tbucket, "Key": "c"}, **ssec(), **copy_ssec())
    except ClientError as e:
        if (http_status(e), error_code(e)) != (400, "InvalidRequest"):
            problems.append(f"SSE-C same key again: {http_status(e)} {error_code(e)} {e.response['Error'].get('Message')!r} "
                            "(want 200 or S3's 400 InvalidRequest)")
    assert s3.get_object(Bucket=bucket, Key="k")["Body"].read() == data
    assert sc.get_object(Bucket=tbucket, Key="c", **ssec())["Body"].read() == data
    # An encryption header is a change S3 accepts on a copy onto itself
    # (`aws s3 cp s3://b/k s3://b/k --sse AES256` re-encrypts that way).
    assert not problems, "; ".join(problems)


def test_upload_part_copy_from_ssec_into_kms(sc, tbucket):
    data = os.urandom(6 * MiB + 100)
    sc.put_object(Bucket=tbucket, Key="src", Body=data, **ssec())
    src = {"Bucket": tbucket, "Key": "src"}
    up = sc.create_multipart_upload(Bucket=tbucket, Key="dst", ServerSideEncryption="aws:kms", SSEKMSKeyId="testkey-2")
    check_sse_headers(headers_of(up), "sse-kms", "testkey-2", "CreateMultipartUpload")
    uid = up["UploadId"]
    expect_error(400, "InvalidRequest", sc.upload_part_copy, Bucket=tbucket, Key="dst", UploadId=uid, PartNumber=1,
                 CopySource=src, CopySourceRange=f"bytes=0-{5 * MiB - 1}")
    p1 = sc.upload_part_copy(Bucket=tbucket, Key="dst", UploadId=uid, PartNumber=1, CopySource=src,
                             CopySourceRange=f"bytes=0-{5 * MiB - 1}", **copy_ssec())
    check_sse_headers(headers_of(p1), "sse-kms", "testkey-2", "UploadPartCopy")
    p2 = sc.upload_part_copy(Bucket=tbucket, Key="dst", UploadId=uid, PartNumber=2, CopySource=src,
                             CopySourceRange=f"bytes={5 * MiB}-{len(data) - 1}", **copy_ssec())
    done = sc.complete_multipart_upload(Bucket=tbucket, Key="dst", UploadId=uid, MultipartUpload={"Parts": [
        {"PartNumber": 1, "ETag": p1["CopyPartResult"]["ETag"]},
        {"PartNumber": 2, "ETag": p2["CopyPartResult"]["ETag"]}]})
    check_sse_headers(headers_of(done), "sse-kms", "testkey-2", "CompleteMultipartUpload")
    got = sc.get_object(Bucket=tbucket, Key="dst")
    assert got["Body"].read() == data
    check_sse_headers(headers_of(got), "sse-kms", "testkey-2", "GET")


# -- presigned URLs, POST, GetObjectAttributes ---------------------------------


def test_presigned_get_sse_s3(s3, bucket):
    data = os.urandom(70 * KiB)
    s3.put_object(Bucket=bucket, Key="p", Body=data, ServerSideEncryption="AES256")
    url = s3.generate_presigned_url("get_object", Params={"Bucket": bucket, "Key": "p"}, ExpiresIn=600)
    with urllib.request.urlopen(url, timeout=30) as resp:
        assert resp.read() == data
        assert resp.headers.get(H_SSE) == "AES256"


def test_presigned_get_sse_c(tls, sc, tbucket, pki):
    """A presigned GET of an SSE-C object over HTTPS. Signed with SigV4 the
    SSE-C headers are signed headers: the client sends them with the URL
    (requests), and without them gets no data. boto3's default presigning
    (SigV2 query form) puts the three values in the query string, where
    S3 reads x-amz-* request values too: the URL alone fetches it."""
    data = os.urandom(70 * KiB)
    sc.put_object(Bucket=tbucket, Key="p", Body=data, **ssec())
    params = {"Bucket": tbucket, "Key": "p", **ssec()}
    v4 = tls.client(signature_version="s3v4")
    url = v4.generate_presigned_url("get_object", Params=params, ExpiresIn=600)
    assert url.startswith("https://") and "x-amz-server-side-encryption-customer-key%3B" in url, url
    resp = requests.get(url, headers=ssec_headers(), verify=str(pki.ca_cert), timeout=30)
    assert resp.status_code == 200, resp.text
    assert resp.content == data
    assert resp.headers.get(H_C_MD5) == b64md5(CUSTOMER_KEY)
    resp = requests.get(url, verify=str(pki.ca_cert), timeout=30)
    assert resp.status_code in (400, 403) and resp.content != data, resp.status_code

    url = sc.generate_presigned_url("get_object", Params=params, ExpiresIn=600)
    assert "x-amz-server-side-encryption-customer-key=" in url, url
    resp = requests.get(url, verify=str(pki.ca_cert), timeout=30)
    assert resp.status_code == 200, resp.text
    assert resp.content == data


def test_post_object_sse(s3, bucket):
    """A browser form with an x-amz-server-side-encryption field stores the
    object encrypted (SSE-S3, and SSE-KMS with a key id field)."""
    answered = {}
    for key, fields, scheme in (
        ("form-s3", {"x-amz-server-side-encryption": "AES256"}, "sse-s3"),
        ("form-kms", {"x-amz-server-side-encryption": "aws:kms",
                      "x-amz-server-side-encryption-aws-kms-key-id": "testkey-2"}, "sse-kms"),
    ):
        presigned = s3.generate_presigned_post(bucket, key, Fields=fields,
                                               Conditions=[{k: v} for k, v in fields.items()], ExpiresIn=600)
        body = b"uploaded from a form\n" * 100
        resp = requests.post(presigned["url"], data=presigned["fields"], files={"file": (key, body)}, timeout=60)
        assert resp.status_code == 204, resp.text
        head = s3.head_object(Bucket=bucket, Key=key)
        check_sse_headers(headers_of(head), scheme, "testkey-2", f"HEAD after POST ({scheme})")
        assert s3.get_object(Bucket=bucket, Key=key)["Body"].read() == body
        answered[key] = (resp.headers.get(H_SSE), fields["x-amz-server-side-encryption"])
    # S3's POST Object reference lists x-amz-server-side-encryption (and
    # the KMS key id) among the response headers of an encrypted upload.
    assert all(got == want for got, want in answered.values()), \
        f"the POST Object response must carry x-amz-server-side-encryption (got, want per form: {answered})"


def test_get_object_attributes_sse_c(sc, tbucket):
    """GetObjectAttributes of an SSE-C object with the customer key. (boto3
    does not encode the key for this operation: the base64 key and its
    MD5 are given as they go on the wire.)"""
    data = os.urandom(10 * KiB)
    put = sc.put_object(Bucket=tbucket, Key="c", Body=data, **ssec())
    wire = lambda key: {"SSECustomerAlgorithm": "AES256", "SSECustomerKey": base64.b64encode(key).decode(),  # noqa: E731
                        "SSECustomerKeyMD5": b64md5(key)}
    attrs = sc.get_object_attributes(Bucket=tbucket, Key="c", ObjectAttributes=["ETag", "ObjectSize"],
                                     **wire(CUSTOMER_KEY))
    assert attrs["ObjectSize"] == len(data)
    assert f'"{attrs["ETag"]}"' == put["ETag"], (attrs["ETag"], put["ETag"])
    # S3's GetObjectAttributes reference: for an SSE-C object the SSE-C
    # headers are required, as for HeadObject (400 without them, 403
    # with a wrong key).
    problems = []
    for what, extra, want in (("no key", {}, (400, "InvalidRequest")), ("wrong key", wire(OTHER_KEY), (403, "AccessDenied"))):
        try:
            sc.get_object_attributes(Bucket=tbucket, Key="c", ObjectAttributes=["ETag", "ObjectSize"], **extra)
            problems.append(f"{what}: 200 (want {want})")
        except ClientError as e:
            got = (http_status(e), error_code(e))
            if got != want:
                problems.append(f"{what}: {got} (want {want})")
    assert not problems, "GetObjectAttributes of an SSE-C object must check the customer key: " + "; ".join(problems)


# -- bucket default encryption -------------------------------------------------


def test_bucket_default_encryption(s3, bucket):
    expect_error(404, "ServerSideEncryptionConfigurationNotFoundError", s3.get_bucket_encryption, Bucket=bucket)

    s3.put_bucket_encryption(Bucket=bucket, ServerSideEncryptionConfiguration={"Rules": [
        {"ApplyServerSideEncryptionByDefault": {"SSEAlgorithm": "AES256"}}]})
    rules = s3.get_bucket_encryption(Bucket=bucket)["ServerSideEncryptionConfiguration"]["Rules"]
    assert rules[0]["ApplyServerSideEncryptionByDefault"] == {"SSEAlgorithm": "AES256"}, rules
    put = s3.put_object(Bucket=bucket, Key="a", Body=b"default s3")
    check_sse_headers(headers_of(put), "sse-s3", what="PUT under an AES256 default")
    check_etag(put["ETag"], "sse-s3", b"default s3")
    check_sse_headers(headers_of(s3.head_object(Bucket=bucket, Key="a")), "sse-s3", what="HEAD")
    # The request's own header wins over the bucket's default.
    put = s3.put_object(Bucket=bucket, Key="b", Body=b"own kms", ServerSideEncryption="aws:kms",
                        SSEKMSKeyId="testkey-1")
    check_sse_headers(headers_of(put), "sse-kms", "testkey-1", "PUT aws:kms under an AES256 default")
    up = s3.create_multipart_upload(Bucket=bucket, Key="mp")
    check_sse_headers(headers_of(up), "sse-s3", what="CreateMultipartUpload under an AES256 default")
    s3.abort_multipart_upload(Bucket=bucket, Key="mp", UploadId=up["UploadId"])

    s3.put_bucket_encryption(Bucket=bucket, ServerSideEncryptionConfiguration={"Rules": [
        {"ApplyServerSideEncryptionByDefault": {"SSEAlgorithm": "aws:kms", "KMSMasterKeyID": "testkey-2"},
         "BucketKeyEnabled": True}]})
    rule = s3.get_bucket_encryption(Bucket=bucket)["ServerSideEncryptionConfiguration"]["Rules"][0]
    assert rule["ApplyServerSideEncryptionByDefault"] == {"SSEAlgorithm": "aws:kms", "KMSMasterKeyID": "testkey-2"}
    assert rule.get("BucketKeyEnabled") is True, rule
    put = s3.put_object(Bucket=bucket, Key="c", Body=b"default kms")
    check_sse_headers(headers_of(put), "sse-kms", "testkey-2", "PUT under an aws:kms default")
    check_etag(put["ETag"], "sse-kms", b"default kms")
    put = s3.put_object(Bucket=bucket, Key="d", Body=b"own s3", ServerSideEncryption="AES256")
    check_sse_headers(headers_of(put), "sse-s3", what="PUT AES256 under an aws:kms default")
    for key, body in (("a", b"default s3"), ("b", b"own kms"), ("c", b"default kms"), ("d", b"own s3")):
        assert s3.get_object(Bucket=bucket, Key=key)["Body"].read() == body

    s3.delete_bucket_encryption(Bucket=bucket)
    expect_error(404, "ServerSideEncryptionConfigurationNotFoundError", s3.get_bucket_encryption, Bucket=bucket)
    put = s3.put_object(Bucket=bucket, Key="e", Body=b"plain again")
    check_sse_headers(headers_of(put), None, what="PUT after DeleteBucketEncryption")
    # Objects written under the default stay as they were.
    check_sse_headers(headers_of(s3.head_object(Bucket=bucket, Key="c")), "sse-kms", "testkey-2", "HEAD old")


def test_versions_under_different_schemes(s3, bucket):
    s3.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Enabled"})
    v1 = s3.put_object(Bucket=bucket, Key="k", Body=b"version one, SSE-S3", ServerSideEncryption="AES256")
    v2 = s3.put_object(Bucket=bucket, Key="k", Body=b"version two, SSE-KMS!", ServerSideEncryption="aws:kms",
                       SSEKMSKeyId="testkey-2")
    assert v1["VersionId"] != v2["VersionId"]
    for v, body, scheme in ((v1, b"version one, SSE-S3", "sse-s3"), (v2, b"version two, SSE-KMS!", "sse-kms")):
        got = s3.get_object(Bucket=bucket, Key="k", VersionId=v["VersionId"])
        assert got["Body"].read() == body
        check_sse_headers(headers_of(got), scheme, "testkey-2", f"GET versionId ({scheme})")
        head = s3.head_object(Bucket=bucket, Key="k", VersionId=v["VersionId"])
        check_sse_headers(headers_of(head), scheme, "testkey-2", f"HEAD versionId ({scheme})")
    versions = s3.list_object_versions(Bucket=bucket)["Versions"]
    assert sorted((x["VersionId"], x["Size"]) for x in versions) == sorted(
        [(v1["VersionId"], 19), (v2["VersionId"], 21)])


# -- servers of their own ------------------------------------------------------


def _drop_kms_env() -> tuple:
    return tuple(k for k in os.environ if k.startswith(("SHARDSTORE_KMS_", "MINIO_KMS_", "SHARDSTORE_ENCRYPT")))


def own_server(binary: Path, base: Path, args: list, keys: Path | None) -> Standalone:
    """A single server on 4 drives under base with the key file keys (no
    KMS when None), started and ready."""
    env = {"SHARDSTORE_KMS_SECRET_KEY_FILE": str(keys)} if keys else {}
    srv = Standalone(binary, base, ["--address", "127.0.0.1:0", *args], env=env, drop=_drop_kms_env())
    try:
        wait_ready(srv.wait_endpoint(), None)
    except BaseException:
        srv.stop()
        raise
    return srv


def own_client(srv: Standalone):
    session = boto3.session.Session(aws_access_key_id=ROOT_USER, aws_secret_access_key=ROOT_PASSWORD,
                                    region_name=REGION)
    return session.client("s3", endpoint_url=srv.endpoint)


def write_keys(path: Path, names=("shardstore-default", "testkey-1")) -> Path:
    path.write_text("".join(kms_key_line(n) for n in names))
    return path


def put_marked(client, bucket: str, prefix: str, inline: int = 1, **sse) -> dict[str, bytes]:
    """inline objects of 60 KiB (kept in the drive index: up to 64 KiB on
    4 drives) and one of 3 MiB (in shard files), of the recognisable
    markers. INDEX_FILL of them overflow the index's 4 MiB memtable, so
    the index writes sstables as well as its WAL."""
    objs = {f"{prefix}-small-{i}": marked(MARKER_SMALL, 60 * KiB) for i in range(inline)}
    objs[f"{prefix}-large"] = marked(MARKER_LARGE, 3 * MiB)
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda kv: client.put_object(Bucket=bucket, Key=kv[0], Body=kv[1], **sse), objs.items()))
    return objs


INDEX_FILL = 160


def index_files(drives: Path, suffix: str) -> list[Path]:
    return sorted(p for p in drives.glob(f"d*/.shardstore.sys/index/*{suffix}"))


@SINGLE_ONLY
def test_encrypt_all_and_drive_grep(shardstore_bin, tmp_path):
    """--encrypt-all: a PUT without headers is SSE-S3. The drives then hold
    no plaintext: after a stop (so the index is on disk) no file under the
    drives holds a marker, neither of the small objects kept inline in the
    index nor of the 3 MiB ones in shard files; --allow-ssec-over-http
    lets SSE-C through on plain HTTP."""
    keys = write_keys(tmp_path / "keys.txt")
    srv = own_server(shardstore_bin, tmp_path / "srv", ["--encrypt-all", "--allow-ssec-over-http"], keys)
    try:
        c = own_client(srv)
        c.create_bucket(Bucket="grep")
        put = c.put_object(Bucket="grep", Key="plain-put", Body=b"no headers")
        check_sse_headers(headers_of(put), "sse-s3", what="PUT under --encrypt-all")
        check_etag(put["ETag"], "sse-s3", b"no headers")
        got = c.get_object(Bucket="grep", Key="plain-put")
        assert got["Body"].read() == b"no headers"
        check_sse_headers(headers_of(got), "sse-s3", what="GET under --encrypt-all")
        put = c.put_object(Bucket="grep", Key="own-kms", Body=b"kms", ServerSideEncryption="aws:kms",
                           SSEKMSKeyId="testkey-1")
        check_sse_headers(headers_of(put), "sse-kms", what="aws:kms under --encrypt-all")

        objs = put_marked(c, "grep", "all", INDEX_FILL)
        objs |= put_marked(c, "grep", "kms", ServerSideEncryption="aws:kms", SSEKMSKeyId="testkey-1")
        objs |= put_marked(c, "grep", "ssec", **ssec())
        for key in ("all-small-0", "all-large", "kms-small-0", "kms-large", "ssec-small-0", "ssec-large"):
            extra = ssec() if key.startswith("ssec") else {}
            got = c.get_object(Bucket="grep", Key=key, **extra)
            assert got["Body"].read() == objs[key], key
            assert H_SSE in headers_of(got) or H_C_ALG in headers_of(got), (key, headers_of(got))
        assert srv.stop() == 0, srv.log()
        drives = tmp_path / "srv" / "drives"
        # What is grepped: the index's WAL and sstables, and shard files.
        assert len(index_files(drives, ".sst")) >= 4 and len(index_files(drives, ".log")) >= 4
        assert list(drives.glob("d*/.shardstore.sys/data/*/*")), "no shard files"
        for marker in (MARKER_SMALL, MARKER_LARGE):
            assert files_holding(drives, marker) == [], f"plaintext {marker!r} on the drives"
    finally:
        srv.stop()


@SINGLE_ONLY
def test_no_kms_control(shardstore_bin, tmp_path):
    """The control for the grep, on a server without a KMS: unencrypted
    objects' markers are found on its drives (so the grep above can
    fail): inline ones in the index's WAL and sstables, the 3 MiB one in
    shard files. Without a KMS,
    SSE-S3 and SSE-KMS are 501 NotImplemented, and --encrypt-all does not
    start."""
    srv = own_server(shardstore_bin, tmp_path / "srv", [], None)
    try:
        c = own_client(srv)
        c.create_bucket(Bucket="control")
        put_marked(c, "control", "plain", INDEX_FILL)
        expect_error(501, "NotImplemented", c.put_object, Bucket="control", Key="s3", Body=b"x",
                     ServerSideEncryption="AES256")
        expect_error(501, "NotImplemented", c.put_object, Bucket="control", Key="kms", Body=b"x",
                     ServerSideEncryption="aws:kms", SSEKMSKeyId="testkey-1")
        expect_error(501, "NotImplemented", c.put_bucket_encryption, Bucket="control",
                     ServerSideEncryptionConfiguration={"Rules": [
                         {"ApplyServerSideEncryptionByDefault": {"SSEAlgorithm": "AES256"}}]})
        assert srv.stop() == 0, srv.log()
        drives = tmp_path / "srv" / "drives"
        small, large = files_holding(drives, MARKER_SMALL), files_holding(drives, MARKER_LARGE)
        # The grep sees inline data in the WAL and in (compressed)
        # sstables, and data in shard files.
        assert any(f.endswith(".log") for f in small), f"inline plaintext in no WAL file: {small}"
        assert any(f.endswith(".sst") for f in small), f"inline plaintext in no sstable: {small}"
        assert any("/data/" in f for f in large), f"3 MiB plaintext in no shard file: {large}"
    finally:
        srv.stop()

    refused = Standalone(shardstore_bin, tmp_path / "refused", ["--address", "127.0.0.1:0", "--encrypt-all"],
                         drop=_drop_kms_env())
    with refused:
        assert refused.wait_exit() != 0, refused.log()
        assert "KMS" in refused.stderr(), refused.log()


@SINGLE_ONLY
def test_restart_with_rotated_keys(shardstore_bin, tmp_path):
    """Append a new version of shardstore-default and testkey-1 to the key
    file and restart: objects sealed before read as before, new ones are
    written and read. Restarting once more with the new lines removed
    shows the new objects were sealed under the new versions (they no
    longer unseal: an error, no data) while the old ones still read."""
    keys = write_keys(tmp_path / "keys.txt")
    original = keys.read_text()
    base = tmp_path / "srv"
    old = {"old-s3": (b"sealed before rotation, SSE-S3", {"ServerSideEncryption": "AES256"}),
           "old-kms": (b"sealed before rotation, SSE-KMS", SCHEMES["sse-kms"])}
    new = {"new-s3": (b"sealed after rotation, SSE-S3", {"ServerSideEncryption": "AES256"}),
           "new-kms": (b"sealed after rotation, SSE-KMS", SCHEMES["sse-kms"])}

    with own_server(shardstore_bin, base, [], keys) as srv:
        c = own_client(srv)
        c.create_bucket(Bucket="rotate")
        for key, (data, sse) in old.items():
            c.put_object(Bucket="rotate", Key=key, Body=data, **sse)
        assert srv.stop() == 0, srv.log()

    keys.write_text(original + kms_key_line("shardstore-default") + kms_key_line("testkey-1"))
    with own_server(shardstore_bin, base, [], keys) as srv:
        c = own_client(srv)
        for key, (data, _) in old.items():
            assert c.get_object(Bucket="rotate", Key=key)["Body"].read() == data, f"{key} after rotation"
        for key, (data, sse) in new.items():
            put = c.put_object(Bucket="rotate", Key=key, Body=data, **sse)
            check_sse_headers(headers_of(put), "sse-s3" if key.endswith("s3") else "sse-kms", what=key)
            assert c.get_object(Bucket="rotate", Key=key)["Body"].read() == data, key
        assert srv.stop() == 0, srv.log()

    keys.write_text(original)
    with own_server(shardstore_bin, base, [], keys) as srv:
        c = own_client(srv)
        for key, (data, _) in old.items():
            assert c.get_object(Bucket="rotate", Key=key)["Body"].read() == data, f"{key} with the old file"
        for key in new:
            with pytest.raises(ClientError) as ei:
                c.get_object(Bucket="rotate", Key=key)["Body"].read()
            assert http_status(ei.value) >= 400, ei.value.response
