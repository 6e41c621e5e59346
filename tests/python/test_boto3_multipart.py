"""Multipart uploads with boto3: the managed transfer (upload_fileobj) and the
low-level calls, including abort, list_parts and S3's part-size rules."""

from __future__ import annotations

import hashlib
import io

import pytest
from boto3.s3.transfer import TransferConfig
from botocore.exceptions import ClientError

from s3util import (
    MiB,
    chunks,
    composite_crc32,
    crc32_b64,
    error_code,
    http_status,
    md5_hex,
    multipart_etag,
    random_bytes,
)


@pytest.mark.slow
def test_upload_fileobj_multipart_and_download(s3, bucket):
    part = 5 * MiB
    data = random_bytes(20 * MiB)
    cfg = TransferConfig(multipart_threshold=part, multipart_chunksize=part)
    s3.upload_fileobj(io.BytesIO(data), bucket, "big.bin", Config=cfg)

    head = s3.head_object(Bucket=bucket, Key="big.bin", ChecksumMode="ENABLED")
    assert head["ContentLength"] == len(data)
    assert head["ETag"] == multipart_etag(chunks(data, part))
    # s3transfer asks for CRC32 on multipart uploads; S3 reports either the
    # full-object CRC32 or the composite "crc-of-crcs-N", per ChecksumType.
    if "ChecksumCRC32" in head:
        assert head["ChecksumCRC32"] in (crc32_b64(data), composite_crc32(chunks(data, part))), head

    out = io.BytesIO()
    s3.download_fileobj(bucket, "big.bin", out, Config=cfg)
    assert hashlib.sha256(out.getvalue()).hexdigest() == hashlib.sha256(data).hexdigest()

    # A plain GET of the whole object and a range across a part boundary.
    assert s3.get_object(Bucket=bucket, Key="big.bin")["Body"].read() == data
    rng = s3.get_object(Bucket=bucket, Key="big.bin", Range=f"bytes={part - 10}-{part + 10}")
    assert rng["Body"].read() == data[part - 10 : part + 11]


def test_low_level_multipart(s3, bucket):
    p1 = random_bytes(5 * MiB)
    p2 = random_bytes(1234)
    up = s3.create_multipart_upload(Bucket=bucket, Key="mp", ContentType="application/x-mp", Metadata={"k": "v"})
    uid = up["UploadId"]
    assert uid

    listed = s3.list_multipart_uploads(Bucket=bucket)
    assert [(u["Key"], u["UploadId"]) for u in listed.get("Uploads", [])] == [("mp", uid)]

    e1 = s3.upload_part(Bucket=bucket, Key="mp", UploadId=uid, PartNumber=1, Body=p1)["ETag"]
    e2 = s3.upload_part(Bucket=bucket, Key="mp", UploadId=uid, PartNumber=2, Body=p2)["ETag"]
    assert e1 == f'"{md5_hex(p1)}"' and e2 == f'"{md5_hex(p2)}"'
    # Re-uploading a part number replaces it.
    e2 = s3.upload_part(Bucket=bucket, Key="mp", UploadId=uid, PartNumber=2, Body=p2)["ETag"]

    parts = s3.list_parts(Bucket=bucket, Key="mp", UploadId=uid)
    assert [(p["PartNumber"], p["ETag"], p["Size"]) for p in parts["Parts"]] == [(1, e1, len(p1)), (2, e2, len(p2))]
    page = s3.list_parts(Bucket=bucket, Key="mp", UploadId=uid, MaxParts=1)
    assert page["IsTruncated"] is True and [p["PartNumber"] for p in page["Parts"]] == [1]
    page = s3.list_parts(Bucket=bucket, Key="mp", UploadId=uid, PartNumberMarker=page["NextPartNumberMarker"])
    assert [p["PartNumber"] for p in page["Parts"]] == [2]

    # Not visible before completion.
    with pytest.raises(ClientError) as exc:
        s3.head_object(Bucket=bucket, Key="mp")
    assert http_status(exc.value) == 404

    done = s3.complete_multipart_upload(
        Bucket=bucket,
        Key="mp",
        UploadId=uid,
        MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": e1}, {"PartNumber": 2, "ETag": e2}]},
    )
    assert done["ETag"] == multipart_etag([p1, p2])
    got = s3.get_object(Bucket=bucket, Key="mp")
    assert got["ContentType"] == "application/x-mp"
    assert got["Metadata"] == {"k": "v"}
    assert got["ETag"] == done["ETag"]
    assert got["Body"].read() == p1 + p2
    assert s3.list_multipart_uploads(Bucket=bucket).get("Uploads", []) == []
    # The upload is gone once completed.
    with pytest.raises(ClientError) as exc:
        s3.list_parts(Bucket=bucket, Key="mp", UploadId=uid)
    assert error_code(exc.value) == "NoSuchUpload"


def test_abort_multipart(s3, bucket):
    uid = s3.create_multipart_upload(Bucket=bucket, Key="aborted")["UploadId"]
    s3.upload_part(Bucket=bucket, Key="aborted", UploadId=uid, PartNumber=1, Body=random_bytes(MiB))
    s3.abort_multipart_upload(Bucket=bucket, Key="aborted", UploadId=uid)
    with pytest.raises(ClientError) as exc:
        s3.list_parts(Bucket=bucket, Key="aborted", UploadId=uid)
    assert error_code(exc.value) == "NoSuchUpload"
    assert http_status(exc.value) == 404
    with pytest.raises(ClientError) as exc:
        s3.upload_part(Bucket=bucket, Key="aborted", UploadId=uid, PartNumber=2, Body=b"late")
    assert error_code(exc.value) == "NoSuchUpload"
    assert s3.list_multipart_uploads(Bucket=bucket).get("Uploads", []) == []
    with pytest.raises(ClientError) as exc:
        s3.head_object(Bucket=bucket, Key="aborted")
    assert http_status(exc.value) == 404
    # The now-empty bucket can be deleted: no upload debris keeps it alive.
    assert s3.list_objects_v2(Bucket=bucket)["KeyCount"] == 0


def test_multipart_errors(s3, bucket):
    big1, big2 = random_bytes(5 * MiB), random_bytes(5 * MiB)
    small = random_bytes(100 * 1024)
    uid = s3.create_multipart_upload(Bucket=bucket, Key="bad")["UploadId"]

    def upload(n, body):
        return s3.upload_part(Bucket=bucket, Key="bad", UploadId=uid, PartNumber=n, Body=body)["ETag"]

    e1, e2, e3, e4 = upload(1, big1), upload(2, big2), upload(3, small), upload(4, small)

    def complete(parts):
        with pytest.raises(ClientError) as exc:
            s3.complete_multipart_upload(Bucket=bucket, Key="bad", UploadId=uid, MultipartUpload={"Parts": parts})
        return exc.value

    # Every part but the last must be at least 5 MiB.
    err = complete([{"PartNumber": 3, "ETag": e3}, {"PartNumber": 4, "ETag": e4}])
    assert error_code(err) == "EntityTooSmall", err.response
    # A part whose ETag does not match, or that was never uploaded.
    err = complete([{"PartNumber": 1, "ETag": '"00000000000000000000000000000000"'}])
    assert error_code(err) == "InvalidPart", err.response
    err = complete([{"PartNumber": 1, "ETag": e1}, {"PartNumber": 7, "ETag": e2}])
    assert error_code(err) == "InvalidPart", err.response
    # Parts must be listed in ascending order.
    err = complete([{"PartNumber": 2, "ETag": e2}, {"PartNumber": 1, "ETag": e1}])
    assert error_code(err) == "InvalidPartOrder", err.response

    # The failed completions left the upload intact; a subset completes.
    done = s3.complete_multipart_upload(
        Bucket=bucket,
        Key="bad",
        UploadId=uid,
        MultipartUpload={"Parts": [{"PartNumber": n, "ETag": e} for n, e in ((1, e1), (2, e2), (3, e3))]},
    )
    assert done["ETag"] == multipart_etag([big1, big2, small])
    assert s3.get_object(Bucket=bucket, Key="bad")["Body"].read() == big1 + big2 + small

    with pytest.raises(ClientError) as exc:
        s3.upload_part(Bucket=bucket, Key="bad", UploadId="no-such-upload-id", PartNumber=1, Body=b"x")
    assert error_code(exc.value) == "NoSuchUpload"


def test_upload_part_copy(s3, bucket):
    src = random_bytes(6 * MiB)
    s3.put_object(Bucket=bucket, Key="src", Body=src)
    uid = s3.create_multipart_upload(Bucket=bucket, Key="assembled")["UploadId"]
    r1 = s3.upload_part_copy(
        Bucket=bucket,
        Key="assembled",
        UploadId=uid,
        PartNumber=1,
        CopySource={"Bucket": bucket, "Key": "src"},
        CopySourceRange=f"bytes=0-{5 * MiB - 1}",
    )
    r2 = s3.upload_part(Bucket=bucket, Key="assembled", UploadId=uid, PartNumber=2, Body=b"tail")
    s3.complete_multipart_upload(
        Bucket=bucket,
        Key="assembled",
        UploadId=uid,
        MultipartUpload={
            "Parts": [
                {"PartNumber": 1, "ETag": r1["CopyPartResult"]["ETag"]},
                {"PartNumber": 2, "ETag": r2["ETag"]},
            ]
        },
    )
    assert s3.get_object(Bucket=bucket, Key="assembled")["Body"].read() == src[: 5 * MiB] + b"tail"
