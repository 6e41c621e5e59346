"""Object answers S3 clients rely on (issue #12, S3 parity): ranges on empty
objects, partNumber beyond the parts, CompleteMultipartUpload's Location and
retries, UploadPartCopy ranges, conditional writes, and chunked PUTs."""

import http.client
import threading

import pytest
from botocore.exceptions import ClientError

from s3util import chunks, error_code, http_status, random_bytes, sign

PART = 5 * 1024 * 1024


def _upload(s3, bucket, key, last=b"tail"):
    up = s3.create_multipart_upload(Bucket=bucket, Key=key)
    parts = []
    for n, body in enumerate([random_bytes(PART), last], start=1):
        r = s3.upload_part(Bucket=bucket, Key=key, UploadId=up["UploadId"], PartNumber=n, Body=body)
        parts.append({"PartNumber": n, "ETag": r["ETag"]})
    return up["UploadId"], parts


def _expect(fn, code, status):
    with pytest.raises(ClientError) as ei:
        fn()
    assert http_status(ei.value) == status, ei.value.response
    if code:
        assert error_code(ei.value) == code, ei.value.response


def test_range_on_empty_object(s3, bucket):
    s3.put_object(Bucket=bucket, Key="empty", Body=b"")
    _expect(lambda: s3.get_object(Bucket=bucket, Key="empty", Range="bytes=0-0"), "InvalidRange", 416)
    _expect(lambda: s3.get_object(Bucket=bucket, Key="empty", Range="bytes=-5"), "InvalidRange", 416)
    # HEAD answers with the status alone.
    _expect(lambda: s3.head_object(Bucket=bucket, Key="empty", Range="bytes=0-"), "", 416)
    assert s3.get_object(Bucket=bucket, Key="empty")["Body"].read() == b""


def test_part_number_beyond_parts(s3, bucket):
    s3.put_object(Bucket=bucket, Key="single", Body=b"one part")
    got = s3.get_object(Bucket=bucket, Key="single", PartNumber=1)
    assert got["Body"].read() == b"one part"
    _expect(lambda: s3.get_object(Bucket=bucket, Key="single", PartNumber=2), "InvalidPartNumber", 416)
    _expect(lambda: s3.head_object(Bucket=bucket, Key="single", PartNumber=2), "", 416)
    upload_id, parts = _upload(s3, bucket, "mp")
    s3.complete_multipart_upload(Bucket=bucket, Key="mp", UploadId=upload_id, MultipartUpload={"Parts": parts})
    assert s3.get_object(Bucket=bucket, Key="mp", PartNumber=2)["Body"].read() == b"tail"
    _expect(lambda: s3.get_object(Bucket=bucket, Key="mp", PartNumber=3), "InvalidPartNumber", 416)


def test_complete_location_and_retry(server, s3, bucket):
    key = "dir/a b.bin"
    upload_id, parts = _upload(s3, bucket, key)
    first = s3.complete_multipart_upload(Bucket=bucket, Key=key, UploadId=upload_id, MultipartUpload={"Parts": parts})
    assert first["Location"] == f"{s3.meta.endpoint_url}/{bucket}/dir/a%20b.bin"
    # The same completion again (the first answer lost): the same answer.
    again = s3.complete_multipart_upload(Bucket=bucket, Key=key, UploadId=upload_id, MultipartUpload={"Parts": parts})
    assert again["ETag"] == first["ETag"]
    s3.put_object(Bucket=bucket, Key=key, Body=b"overwritten")
    _expect(
        lambda: s3.complete_multipart_upload(Bucket=bucket, Key=key, UploadId=upload_id, MultipartUpload={"Parts": parts}),
        "NoSuchUpload",
        404,
    )


def test_concurrent_uploads_of_one_part(s3, bucket):
    up = s3.create_multipart_upload(Bucket=bucket, Key="race")
    bodies = [random_bytes(64 * 1024) for _ in range(4)]
    errors = []

    def send(body):
        try:
            s3.upload_part(Bucket=bucket, Key="race", UploadId=up["UploadId"], PartNumber=1, Body=body)
        except Exception as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=send, args=(b,)) for b in bodies]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    listed = s3.list_parts(Bucket=bucket, Key="race", UploadId=up["UploadId"])["Parts"]
    assert len(listed) == 1
    s3.complete_multipart_upload(
        Bucket=bucket, Key="race", UploadId=up["UploadId"],
        MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": listed[0]["ETag"]}]},
    )
    assert s3.get_object(Bucket=bucket, Key="race")["Body"].read() in bodies


def test_upload_part_copy_range_outside_source(s3, bucket):
    s3.put_object(Bucket=bucket, Key="src", Body=b"0123456789")
    up = s3.create_multipart_upload(Bucket=bucket, Key="dst")
    copy = dict(Bucket=bucket, Key="dst", UploadId=up["UploadId"], PartNumber=1, CopySource={"Bucket": bucket, "Key": "src"})
    _expect(lambda: s3.upload_part_copy(CopySourceRange="bytes=0-10", **copy), "InvalidRange", 416)
    _expect(lambda: s3.upload_part_copy(CopySourceRange="bytes=10-11", **copy), "InvalidRange", 416)
    s3.upload_part_copy(CopySourceRange="bytes=0-9", **copy)


def test_conditional_writes(s3, bucket):
    other = '"0123456789abcdef0123456789abcdef"'
    _expect(lambda: s3.put_object(Bucket=bucket, Key="k", Body=b"v0", IfMatch=other), "NoSuchKey", 404)
    etag = s3.put_object(Bucket=bucket, Key="k", Body=b"v1", IfNoneMatch="*")["ETag"]
    _expect(lambda: s3.put_object(Bucket=bucket, Key="k", Body=b"v2", IfNoneMatch="*"), "PreconditionFailed", 412)
    _expect(lambda: s3.put_object(Bucket=bucket, Key="k", Body=b"v2", IfMatch=other), "PreconditionFailed", 412)
    etag = s3.put_object(Bucket=bucket, Key="k", Body=b"v2", IfMatch=etag)["ETag"]

    upload_id, parts = _upload(s3, bucket, "k")
    complete = dict(Bucket=bucket, Key="k", UploadId=upload_id, MultipartUpload={"Parts": parts})
    _expect(lambda: s3.complete_multipart_upload(IfNoneMatch="*", **complete), "PreconditionFailed", 412)
    _expect(lambda: s3.complete_multipart_upload(IfMatch=other, **complete), "PreconditionFailed", 412)
    s3.complete_multipart_upload(IfMatch=etag, **complete)

    upload_id, parts = _upload(s3, bucket, "fresh")
    complete = dict(Bucket=bucket, Key="fresh", UploadId=upload_id, MultipartUpload={"Parts": parts})
    _expect(lambda: s3.complete_multipart_upload(IfMatch=etag, **complete), "NoSuchKey", 404)
    s3.complete_multipart_upload(IfNoneMatch="*", **complete)

    src = {"Bucket": bucket, "Key": "k"}
    _expect(lambda: s3.copy_object(Bucket=bucket, Key="fresh", CopySource=src, IfNoneMatch="*"), "PreconditionFailed", 412)
    _expect(lambda: s3.copy_object(Bucket=bucket, Key="nothere", CopySource=src, IfMatch=etag), "NoSuchKey", 404)
    s3.copy_object(Bucket=bucket, Key="copy", CopySource=src, IfNoneMatch="*")


def test_chunked_put_without_content_length(server, bucket, s3):
    """Plain HTTP chunked transfer, no Content-Length, signed with the
    payload's SHA-256: stored as sent (S3 itself answers 411)."""
    data = random_bytes(3 * 1024 * 1024 + 5)
    target = f"/{bucket}/chunked"
    headers = sign(server.endpoint, server.root.access_key, server.root.secret_key, "PUT", target, body=data)
    headers.pop("Content-Length", None)
    host, port = server.endpoint.removeprefix("http://").rsplit(":", 1)
    conn = http.client.HTTPConnection(host, int(port), timeout=60)
    try:
        conn.request("PUT", target, body=iter(chunks(data, 256 * 1024)), headers=headers, encode_chunked=True)
        resp = conn.getresponse()
        body = resp.read()
        assert resp.status == 200, body
    finally:
        conn.close()
    assert s3.get_object(Bucket=bucket, Key="chunked")["Body"].read() == data
