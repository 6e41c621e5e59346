"""S3's flexible checksums (the 2025 API) with boto3, at default settings
(botocore >= 1.36 sends a CRC32 with every upload) and with
ChecksumAlgorithm/ChecksumType explicit: wrong checksums answered BadDigest,
the checksum types of multipart uploads, full-object CRCs combined from the
parts, composite checksums with their "-N", part checksums in the
completion, GetObjectAttributes of multipart objects, and the checksum
fields of a browser form upload.

The expected errors and messages are S3's as recorded against AWS (see
docs/conformance.md, "Checksums and GetObjectAttributes"). boto3 here has
no awscrt, so it computes CRC32, SHA1 and SHA256 only: CRC32C and
CRC64NVME uploads are covered by test/e2e (aws-sdk-go-v2)."""

from __future__ import annotations

import base64
import hashlib
import io
import zlib

import pytest
import requests
from boto3.s3.transfer import TransferConfig
from botocore.exceptions import ClientError

from s3util import MiB, chunks, crc32_b64, error_code, http_status, random_bytes, sha256_b64

ALGORITHMS = ["CRC32", "CRC32C", "CRC64NVME", "SHA1", "SHA256"]
# The checksum types S3 allows per algorithm for multipart uploads, and
# the default (first).
TYPES = {
    "CRC32": ["COMPOSITE", "FULL_OBJECT"],
    "CRC32C": ["COMPOSITE", "FULL_OBJECT"],
    "CRC64NVME": ["FULL_OBJECT"],
    "SHA1": ["COMPOSITE"],
    "SHA256": ["COMPOSITE"],
}


def raw(b64: str) -> bytes:
    return base64.b64decode(b64)


def composite(fn, part_sums: list[str]) -> str:
    """A COMPOSITE checksum: fn over the raw part checksums, with '-N'."""
    return f"{fn(b''.join(raw(s) for s in part_sums))}-{len(part_sums)}"


def client_error(fn, **kwargs) -> ClientError:
    with pytest.raises(ClientError) as exc:
        fn(**kwargs)
    return exc.value


def assert_error(err: ClientError, code: str, message: str | None = None, status: int = 400):
    assert http_status(err) == status and error_code(err) == code, err.response
    if message is not None:
        assert err.response["Error"]["Message"] == message, err.response


def assert_absent(s3, bucket, key):
    err = client_error(s3.head_object, Bucket=bucket, Key=key)
    assert http_status(err) == 404


def test_put_wrong_checksum_is_bad_digest(s3, bucket):
    data = b"the payload"
    for alg, fn in (("CRC32", crc32_b64), ("SHA256", sha256_b64)):
        err = client_error(s3.put_object, Bucket=bucket, Key="k", Body=data, **{f"Checksum{alg}": fn(b"other")})
        assert_error(err, "BadDigest", f"The {alg} you specified did not match the calculated checksum.")
    # A value that is not base64 of the right size is malformed, not wrong.
    err = client_error(s3.put_object, Bucket=bucket, Key="k", Body=data, ChecksumCRC32="AAAA")
    assert_error(err, "InvalidRequest", "Value for x-amz-checksum-crc32 header is invalid.")
    err = client_error(s3.put_object, Bucket=bucket, Key="k", Body=data, ChecksumSHA256="not base64!")
    assert_error(err, "InvalidRequest", "Value for x-amz-checksum-sha256 header is invalid.")
    assert_absent(s3, bucket, "k")
    # Default settings: boto3 sends the right CRC32; a PUT is FULL_OBJECT.
    put = s3.put_object(Bucket=bucket, Key="k", Body=data)
    assert put["ChecksumCRC32"] == crc32_b64(data) and put["ChecksumType"] == "FULL_OBJECT", put
    head = s3.head_object(Bucket=bucket, Key="k", ChecksumMode="ENABLED")
    assert head["ChecksumCRC32"] == crc32_b64(data) and head["ChecksumType"] == "FULL_OBJECT"


@pytest.mark.parametrize("alg", ALGORITHMS)
@pytest.mark.parametrize("typ", [None, "COMPOSITE", "FULL_OBJECT"])
def test_create_multipart_checksum_type(s3, bucket, alg, typ):
    kwargs = {"ChecksumAlgorithm": alg}
    if typ:
        kwargs["ChecksumType"] = typ
    if typ and typ not in TYPES[alg]:
        err = client_error(s3.create_multipart_upload, Bucket=bucket, Key="k", **kwargs)
        assert_error(err, "InvalidRequest", f"The {typ} checksum type cannot be used with the {alg.lower()} checksum algorithm.")
        assert s3.list_multipart_uploads(Bucket=bucket).get("Uploads", []) == []
        return
    want = typ or TYPES[alg][0]
    up = s3.create_multipart_upload(Bucket=bucket, Key="k", **kwargs)
    assert up["ChecksumAlgorithm"] == alg and up["ChecksumType"] == want, up
    listed = s3.list_multipart_uploads(Bucket=bucket)["Uploads"]
    assert [(u["ChecksumAlgorithm"], u["ChecksumType"]) for u in listed] == [(alg, want)]
    parts = s3.list_parts(Bucket=bucket, Key="k", UploadId=up["UploadId"])
    assert parts["ChecksumAlgorithm"] == alg and parts["ChecksumType"] == want
    s3.abort_multipart_upload(Bucket=bucket, Key="k", UploadId=up["UploadId"])


def test_create_multipart_checksum_refusals(s3, bucket):
    err = client_error(s3.create_multipart_upload, Bucket=bucket, Key="k", ChecksumType="COMPOSITE")
    assert_error(err, "InvalidRequest", "The x-amz-checksum-type header can only be used with the x-amz-checksum-algorithm header.")
    err = client_error(s3.create_multipart_upload, Bucket=bucket, Key="k", ChecksumAlgorithm="CRC32", ChecksumType="PARTIAL")
    assert_error(err, "InvalidRequest", "Value for x-amz-checksum-type header is invalid.")
    err = client_error(s3.create_multipart_upload, Bucket=bucket, Key="k", ChecksumAlgorithm="CRC16")
    assert_error(err, "InvalidRequest")
    assert s3.list_multipart_uploads(Bucket=bucket).get("Uploads", []) == []
    # Without an algorithm an upload has none: no ChecksumAlgorithm/Type.
    up = s3.create_multipart_upload(Bucket=bucket, Key="k")
    assert "ChecksumAlgorithm" not in up and "ChecksumType" not in up, up
    s3.abort_multipart_upload(Bucket=bucket, Key="k", UploadId=up["UploadId"])


def test_upload_part_checksums(s3, bucket):
    uid = s3.create_multipart_upload(Bucket=bucket, Key="k", ChecksumAlgorithm="SHA256")["UploadId"]
    body = b"part body"
    # Default settings: boto3 adds a CRC32, which is not the upload's.
    err = client_error(s3.upload_part, Bucket=bucket, Key="k", UploadId=uid, PartNumber=1, Body=body)
    assert_error(err, "InvalidRequest", "Checksum Type mismatch occurred, expected checksum Type: sha256, actual checksum Type: crc32")
    err = client_error(s3.upload_part, Bucket=bucket, Key="k", UploadId=uid, PartNumber=1, Body=body,
                       ChecksumSHA256=sha256_b64(b"other"))
    assert_error(err, "BadDigest", "The SHA256 you specified did not match the calculated checksum.")
    err = client_error(s3.upload_part, Bucket=bucket, Key="k", UploadId=uid, PartNumber=1, Body=body, ChecksumSHA256="AAAA")
    assert_error(err, "InvalidRequest", "Value for x-amz-checksum-sha256 header is invalid.")
    assert s3.list_parts(Bucket=bucket, Key="k", UploadId=uid).get("Parts", []) == []
    part = s3.upload_part(Bucket=bucket, Key="k", UploadId=uid, PartNumber=1, Body=body, ChecksumAlgorithm="SHA256")
    assert part["ChecksumSHA256"] == sha256_b64(body), part
    s3.abort_multipart_upload(Bucket=bucket, Key="k", UploadId=uid)


def _upload_parts(s3, bucket, key, uid, bodies, alg):
    """Uploads bodies as parts 1..n with alg; returns the parts for the
    completion, each with its checksum."""
    out = []
    for n, body in enumerate(bodies, 1):
        r = s3.upload_part(Bucket=bucket, Key=key, UploadId=uid, PartNumber=n, Body=body, ChecksumAlgorithm=alg)
        out.append({"PartNumber": n, "ETag": r["ETag"], f"Checksum{alg}": r[f"Checksum{alg}"]})
    return out


def test_composite_sha256_multipart(s3, bucket):
    bodies = [random_bytes(5 * MiB), random_bytes(5 * MiB), random_bytes(1000)]
    uid = s3.create_multipart_upload(Bucket=bucket, Key="c", ChecksumAlgorithm="SHA256")["UploadId"]
    parts = _upload_parts(s3, bucket, "c", uid, bodies, "SHA256")
    sums = [p["ChecksumSHA256"] for p in parts]
    assert sums == [sha256_b64(b) for b in bodies]
    listed = s3.list_parts(Bucket=bucket, Key="c", UploadId=uid)["Parts"]
    assert [p["ChecksumSHA256"] for p in listed] == sums
    want = composite(sha256_b64, sums)

    def complete(parts, **kw):
        return s3.complete_multipart_upload(Bucket=bucket, Key="c", UploadId=uid, MultipartUpload={"Parts": parts}, **kw)

    bare = [{"PartNumber": p["PartNumber"], "ETag": p["ETag"]} for p in parts]
    assert_error(client_error(complete, parts=bare), "InvalidRequest",
                 "The upload was created using a sha256 checksum. The complete request must include the checksum for each part. "
                 "It was missing for part 1 in the request.")
    wrong = [dict(p, ChecksumSHA256=sha256_b64(b"bbb")) for p in parts]
    assert_error(client_error(complete, parts=wrong), "InvalidPart")
    other = [{"PartNumber": p["PartNumber"], "ETag": p["ETag"], "ChecksumCRC32": crc32_b64(b)} for p, b in zip(parts, bodies)]
    assert_error(client_error(complete, parts=other), "BadDigest", "The crc32 you specified for part 1 did not match what we received.")
    assert_error(client_error(complete, parts=parts, ChecksumType="FULL_OBJECT"), "InvalidRequest",
                 "The upload was created using the COMPOSITE checksum mode. The complete request must use the same checksum mode.")
    bad = want.replace("-3", "-2")
    assert_error(client_error(complete, parts=parts, ChecksumSHA256=bad), "BadDigest",
                 "The sha256 you specified did not match the calculated checksum.")
    assert_absent(s3, bucket, "c")

    done = complete(parts, ChecksumSHA256=want, ChecksumType="COMPOSITE")
    assert done["ChecksumSHA256"] == want and done["ChecksumType"] == "COMPOSITE", done
    for read in (s3.head_object, s3.get_object):
        got = read(Bucket=bucket, Key="c", ChecksumMode="ENABLED")
        assert got["ChecksumSHA256"] == want and got["ChecksumType"] == "COMPOSITE", got
    # A part by number: that part's checksum, botocore validating the body.
    got = s3.get_object(Bucket=bucket, Key="c", PartNumber=3, ChecksumMode="ENABLED")
    assert got["Body"].read() == bodies[2]
    assert got["ChecksumSHA256"] == sums[2] and got["ChecksumType"] == "COMPOSITE" and got["PartsCount"] == 3

    # GetObjectAttributes: the checksum without its "-N", the parts pages.
    attrs = s3.get_object_attributes(Bucket=bucket, Key="c", ObjectAttributes=["Checksum", "ObjectParts", "ETag", "ObjectSize"])
    assert attrs["Checksum"] == {"ChecksumSHA256": want.split("-")[0], "ChecksumType": "COMPOSITE"}, attrs
    op = attrs["ObjectParts"]
    assert op["TotalPartsCount"] == 3 and op["IsTruncated"] is False and op["MaxParts"] == 1000, op
    assert [(p["PartNumber"], p["Size"], p["ChecksumSHA256"]) for p in op["Parts"]] == [
        (n, len(b), s) for n, b, s in zip((1, 2, 3), bodies, sums)
    ]
    page = s3.get_object_attributes(Bucket=bucket, Key="c", ObjectAttributes=["ObjectParts"], MaxParts=1, PartNumberMarker=1)
    op = page["ObjectParts"]
    assert op["IsTruncated"] is True and op["MaxParts"] == 1 and str(op["PartNumberMarker"]) == "1", op
    assert str(op["NextPartNumberMarker"]) == "2" and [p["PartNumber"] for p in op["Parts"]] == [2], op
    page = s3.get_object_attributes(Bucket=bucket, Key="c", ObjectAttributes=["ObjectParts"], MaxParts=5,
                                    PartNumberMarker=int(op["NextPartNumberMarker"]))
    assert page["ObjectParts"]["IsTruncated"] is False and [p["PartNumber"] for p in page["ObjectParts"]["Parts"]] == [3]


def test_full_object_crc32_multipart(s3, bucket):
    bodies = [random_bytes(5 * MiB), random_bytes(777)]
    data = b"".join(bodies)
    up = s3.create_multipart_upload(Bucket=bucket, Key="f", ChecksumAlgorithm="CRC32", ChecksumType="FULL_OBJECT")
    assert up["ChecksumType"] == "FULL_OBJECT"
    uid = up["UploadId"]
    # Default settings: boto3 sends each part's CRC32, the upload's algorithm.
    parts = []
    for n, body in enumerate(bodies, 1):
        r = s3.upload_part(Bucket=bucket, Key="f", UploadId=uid, PartNumber=n, Body=body)
        assert r["ChecksumCRC32"] == crc32_b64(body)
        parts.append({"PartNumber": n, "ETag": r["ETag"]})  # part checksums are optional for FULL_OBJECT

    def complete(**kw):
        return s3.complete_multipart_upload(Bucket=bucket, Key="f", UploadId=uid, MultipartUpload={"Parts": parts}, **kw)

    whole = crc32_b64(data)
    assert_error(client_error(complete, ChecksumCRC32=crc32_b64(bodies[0]), ChecksumType="FULL_OBJECT"), "BadDigest",
                 "The crc32 you specified did not match the calculated checksum.")
    assert_error(client_error(complete, ChecksumCRC32=whole + "-2", ChecksumType="FULL_OBJECT"), "BadDigest")
    assert_error(client_error(complete, ChecksumSHA256=sha256_b64(data), ChecksumType="FULL_OBJECT"), "BadDigest",
                 "The crc32 you specified did not match the calculated checksum.")
    assert_error(client_error(complete, ChecksumType="COMPOSITE"), "InvalidRequest",
                 "The upload was created using the FULL_OBJECT checksum mode. The complete request must use the same checksum mode.")
    assert_absent(s3, bucket, "f")
    # The CRC32 of the whole object, combined from the parts' CRCs.
    done = complete(ChecksumCRC32=whole, ChecksumType="FULL_OBJECT")
    assert done["ChecksumCRC32"] == whole and done["ChecksumType"] == "FULL_OBJECT", done
    got = s3.get_object(Bucket=bucket, Key="f", ChecksumMode="ENABLED")
    assert got["ChecksumCRC32"] == whole and got["ChecksumType"] == "FULL_OBJECT"
    assert got["Body"].read() == data  # botocore validates the CRC32 as it reads
    # GetObjectAttributes of a FULL_OBJECT object: the parts are only counted.
    attrs = s3.get_object_attributes(Bucket=bucket, Key="f", ObjectAttributes=["Checksum", "ObjectParts"])
    assert attrs["Checksum"] == {"ChecksumCRC32": whole, "ChecksumType": "FULL_OBJECT"}
    assert attrs["ObjectParts"] == {"TotalPartsCount": 2}, attrs
    # A part by number: its own CRC32 (a documented difference from S3,
    # which sends none), true of the bytes returned.
    got = s3.get_object(Bucket=bucket, Key="f", PartNumber=2, ChecksumMode="ENABLED")
    assert got["Body"].read() == bodies[1]
    assert got.get("ChecksumCRC32") == crc32_b64(bodies[1]) and "ChecksumType" not in got, got


def test_upload_fileobj_checksums(s3, bucket):
    """s3transfer at default settings makes a COMPOSITE CRC32 upload; given
    the whole object's CRC32 it makes a FULL_OBJECT one."""
    part = 5 * MiB
    data = random_bytes(11 * MiB)
    cfg = TransferConfig(multipart_threshold=part, multipart_chunksize=part)
    s3.upload_fileobj(io.BytesIO(data), bucket, "default", Config=cfg)
    head = s3.head_object(Bucket=bucket, Key="default", ChecksumMode="ENABLED")
    assert head["ChecksumType"] == "COMPOSITE"
    assert head["ChecksumCRC32"] == composite(crc32_b64, [crc32_b64(c) for c in chunks(data, part)]), head

    s3.upload_fileobj(io.BytesIO(data), bucket, "full", Config=cfg, ExtraArgs={"ChecksumCRC32": crc32_b64(data)})
    head = s3.head_object(Bucket=bucket, Key="full", ChecksumMode="ENABLED")
    assert head["ChecksumType"] == "FULL_OBJECT" and head["ChecksumCRC32"] == crc32_b64(data), head
    # A wrong whole-object CRC32 fails the transfer and stores nothing.
    with pytest.raises(ClientError) as exc:
        s3.upload_fileobj(io.BytesIO(data), bucket, "wrong", Config=cfg, ExtraArgs={"ChecksumCRC32": crc32_b64(b"x")})
    assert_error(exc.value, "BadDigest", "The crc32 you specified did not match the calculated checksum.")
    assert_absent(s3, bucket, "wrong")
    assert s3.list_multipart_uploads(Bucket=bucket).get("Uploads", []) == []


def test_upload_without_checksum_algorithm(s3, bucket):
    """An upload created without an algorithm (boto3's default create): its
    parts' CRC32s (sent by boto3) are answered but not listed, a checksum
    type is refused, and the whole object's CRC32 sent with the parts'
    makes a FULL_OBJECT object, verified (S3 ignores the value: a
    documented difference)."""
    bodies = [random_bytes(5 * MiB), random_bytes(99)]
    uid = s3.create_multipart_upload(Bucket=bucket, Key="n")["UploadId"]
    parts = []
    for n, body in enumerate(bodies, 1):
        r = s3.upload_part(Bucket=bucket, Key="n", UploadId=uid, PartNumber=n, Body=body)
        assert r["ChecksumCRC32"] == crc32_b64(body)
        parts.append({"PartNumber": n, "ETag": r["ETag"], "ChecksumCRC32": r["ChecksumCRC32"]})
    listed = s3.list_parts(Bucket=bucket, Key="n", UploadId=uid)
    assert "ChecksumAlgorithm" not in listed and all("ChecksumCRC32" not in p for p in listed["Parts"]), listed

    def complete(parts, **kw):
        return s3.complete_multipart_upload(Bucket=bucket, Key="n", UploadId=uid, MultipartUpload={"Parts": parts}, **kw)

    assert_error(client_error(complete, parts=parts, ChecksumType="COMPOSITE"), "InvalidRequest",
                 "The upload was created using the null checksum mode. The complete request must use the same checksum mode.")
    wrong = [dict(p, ChecksumCRC32=crc32_b64(b"zz")) for p in parts]
    assert_error(client_error(complete, parts=wrong), "InvalidPart")
    assert_error(client_error(complete, parts=parts, ChecksumCRC32=crc32_b64(b"zz"), ChecksumType="FULL_OBJECT"), "BadDigest")
    whole = crc32_b64(b"".join(bodies))
    done = complete(parts, ChecksumCRC32=whole, ChecksumType="FULL_OBJECT")
    assert done["ChecksumCRC32"] == whole and done["ChecksumType"] == "FULL_OBJECT", done

    # Without a whole-object checksum the object has none.
    uid = s3.create_multipart_upload(Bucket=bucket, Key="plain")["UploadId"]
    e = s3.upload_part(Bucket=bucket, Key="plain", UploadId=uid, PartNumber=1, Body=b"only part")["ETag"]
    s3.complete_multipart_upload(Bucket=bucket, Key="plain", UploadId=uid, MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": e}]})
    head = s3.head_object(Bucket=bucket, Key="plain", ChecksumMode="ENABLED")
    assert not any(k.startswith("Checksum") for k in head), head
    attrs = s3.get_object_attributes(Bucket=bucket, Key="plain", ObjectAttributes=["Checksum", "ObjectParts"])
    assert "Checksum" not in attrs and attrs["ObjectParts"] == {"TotalPartsCount": 1}, attrs


def test_upload_part_copy_checksum(s3, bucket):
    src = random_bytes(2 * MiB)
    s3.put_object(Bucket=bucket, Key="src", Body=src)
    uid = s3.create_multipart_upload(Bucket=bucket, Key="dst", ChecksumAlgorithm="SHA1")["UploadId"]
    r = s3.upload_part_copy(Bucket=bucket, Key="dst", UploadId=uid, PartNumber=1, CopySource={"Bucket": bucket, "Key": "src"})
    want = base64.b64encode(hashlib.sha1(src).digest()).decode()
    assert r["CopyPartResult"]["ChecksumSHA1"] == want, r
    parts = [{"PartNumber": 1, "ETag": r["CopyPartResult"]["ETag"], "ChecksumSHA1": want}]
    done = s3.complete_multipart_upload(Bucket=bucket, Key="dst", UploadId=uid, MultipartUpload={"Parts": parts})
    sha1 = lambda b: base64.b64encode(hashlib.sha1(b).digest()).decode()  # noqa: E731
    assert done["ChecksumSHA1"] == composite(sha1, [want]), done


def _post(presigned, body, data=None):
    fields = dict(presigned["fields"])
    fields.update(data or {})
    return requests.post(presigned["url"], data=fields, files={"file": ("f.bin", body)}, timeout=60, allow_redirects=False)


def test_post_object_checksum_fields(s3, bucket):
    body = random_bytes(40 * 1024)
    good = sha256_b64(body)
    conditions = [["starts-with", "$x-amz-checksum-algorithm", ""], ["starts-with", "$x-amz-checksum-sha256", ""]]
    presigned = s3.generate_presigned_post(bucket, "form", Fields={"x-amz-checksum-algorithm": "SHA256"},
                                           Conditions=conditions, ExpiresIn=600)
    resp = _post(presigned, body, {"x-amz-checksum-sha256": sha256_b64(b"other")})
    assert resp.status_code == 400 and "<Code>BadDigest</Code>" in resp.text, resp.text
    assert "The SHA256 you specified did not match the calculated checksum." in resp.text
    resp = _post(presigned, body, {"x-amz-checksum-sha256": "AAAA"})
    assert resp.status_code == 400 and "<Code>InvalidRequest</Code>" in resp.text, resp.text
    assert_absent(s3, bucket, "form")
    resp = _post(presigned, body, {"x-amz-checksum-sha256": good})
    assert resp.status_code == 204, resp.text
    assert resp.headers["x-amz-checksum-sha256"] == good and resp.headers["x-amz-checksum-type"] == "FULL_OBJECT"
    head = s3.head_object(Bucket=bucket, Key="form", ChecksumMode="ENABLED")
    assert head["ChecksumSHA256"] == good and head["ChecksumType"] == "FULL_OBJECT"

    # The algorithm field alone: the checksum is computed and stored.
    presigned = s3.generate_presigned_post(bucket, "computed", Fields={"x-amz-checksum-algorithm": "CRC32"},
                                           Conditions=[{"x-amz-checksum-algorithm": "CRC32"}], ExpiresIn=600)
    resp = _post(presigned, body)
    assert resp.status_code == 204, resp.text
    head = s3.head_object(Bucket=bucket, Key="computed", ChecksumMode="ENABLED")
    assert head["ChecksumCRC32"] == base64.b64encode(zlib.crc32(body).to_bytes(4, "big")).decode()
