"""S3's exact error texts for the codes clients and test tools compare by
message, and non-ASCII user metadata as S3 carries it (RFC 2047), both
through boto3 at default settings (issue #12)."""

import datetime
import email.header
import xml.etree.ElementTree as ET

import pytest
from botocore.exceptions import ClientError

from conftest import Creds
from s3util import crc32_b64, raw_request, sign


def _error(fn):
    with pytest.raises(ClientError) as ei:
        fn()
    err = ei.value.response["Error"]
    return err["Code"], err.get("Message")


def test_exact_messages(server, s3, s3_bob, bucket):
    wrong = server.client(Creds(server.root.access_key, "not-the-right-secret"))
    assert _error(lambda: wrong.list_buckets()) == (
        "SignatureDoesNotMatch",
        "The request signature we calculated does not match the signature you provided. Check your key and signing method.",
    )
    nobody = server.client(Creds("nobody-at-all", "whatever-secret"))
    assert _error(lambda: nobody.list_buckets()) == (
        "InvalidAccessKeyId", "The AWS Access Key Id you provided does not exist in our records.")
    assert _error(lambda: s3.get_object(Bucket=bucket, Key="missing")) == ("NoSuchKey", "The specified key does not exist.")
    assert _error(lambda: s3.list_objects_v2(Bucket=bucket + "-none")) == ("NoSuchBucket", "The specified bucket does not exist")
    assert _error(lambda: s3_bob.list_objects_v2(Bucket=bucket)) == ("AccessDenied", "Access Denied")
    assert _error(lambda: s3.upload_part(Bucket=bucket, Key="k", UploadId="bogus", PartNumber=1, Body=b"x")) == (
        "NoSuchUpload",
        "The specified upload does not exist. The upload ID may be invalid, or the upload may have been aborted or completed.",
    )
    up = s3.create_multipart_upload(Bucket=bucket, Key="k")
    s3.upload_part(Bucket=bucket, Key="k", UploadId=up["UploadId"], PartNumber=1, Body=b"x")
    assert _error(lambda: s3.complete_multipart_upload(
        Bucket=bucket, Key="k", UploadId=up["UploadId"],
        MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": '"00000000000000000000000000000000"'}]})) == (
        "InvalidPart",
        "One or more of the specified parts could not be found.  The part may not have been uploaded, "
        "or the specified entity tag may not match the part's entity tag.",
    )
    s3.put_object(Bucket=bucket, Key="k2", Body=b"x")
    assert _error(lambda: s3.delete_bucket(Bucket=bucket)) == ("BucketNotEmpty", "The bucket you tried to delete is not empty")


def test_exact_messages_raw(server, bucket, monkeypatch):
    creds = server.root
    # MalformedXML for a body that is not XML.
    body = b"<CORSConfiguration><CORSRule>"
    hdrs = sign(server.endpoint, creds.access_key, creds.secret_key, "PUT", f"/{bucket}?cors", body,
                {"x-amz-checksum-crc32": crc32_b64(body)})
    resp = raw_request(server.endpoint, "PUT", f"/{bucket}?cors", body, hdrs)
    doc = ET.fromstring(resp.body)
    assert (resp.status, doc.findtext("Code"), doc.findtext("Message")) == (
        400, "MalformedXML", "The XML you provided was not well-formed or did not validate against our published schema")

    # A request signed 20 minutes ago.
    old = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(minutes=20)
    import botocore.auth

    monkeypatch.setattr(botocore.auth, "get_current_datetime", lambda: old.replace(tzinfo=None))
    hdrs = sign(server.endpoint, creds.access_key, creds.secret_key, "GET", f"/{bucket}")
    monkeypatch.undo()
    resp = raw_request(server.endpoint, "GET", f"/{bucket}", b"", hdrs)
    doc = ET.fromstring(resp.body)
    assert resp.status == 403 and doc.findtext("Code") == "RequestTimeTooSkewed", resp.body
    assert doc.findtext("Message") == "The difference between the request time and the current time is too large."


def test_non_ascii_metadata(s3, bucket):
    # botocore refuses raw non-ASCII metadata, so its users send RFC 2047
    # encoded words; S3 decodes them before storing and encodes what is
    # not ASCII when returning it.
    sent = {"name": "=?UTF-8?Q?Zo=C3=AB_=C3=85ngstr=C3=B6m?=", "city": "=?UTF-8?B?5p2x5Lqs?=", "word": "=?UTF-8?B?YWJj?="}
    s3.put_object(Bucket=bucket, Key="m", Body=b"x", Metadata=sent)
    meta = s3.head_object(Bucket=bucket, Key="m")["Metadata"]
    decoded = {k: str(email.header.make_header(email.header.decode_header(v))) for k, v in meta.items()}
    assert decoded == {"name": "Zoë Ångström", "city": "東京", "word": "abc"}
    assert meta["word"] == "abc"  # decoded to ASCII: returned as it is
    assert meta["name"].startswith("=?UTF-8?") and meta["city"].startswith("=?UTF-8?")
    s3.copy_object(Bucket=bucket, Key="m2", CopySource={"Bucket": bucket, "Key": "m"})
    assert s3.get_object(Bucket=bucket, Key="m2")["Metadata"] == meta
