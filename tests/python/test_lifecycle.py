"""Bucket lifecycle configuration (issue #15) with boto3 at default settings:
Put/Get/DeleteBucketLifecycleConfiguration, S3's validation errors with S3's
codes and messages, and x-amz-expiration on PUT, HEAD and GET (and
x-amz-abort-date on CreateMultipartUpload).

Expiry itself cannot be waited for in real time (rules count days); the
engine tests prove deletion and the space reclaimed on the drives with a
clock they move (internal/engine/lifecycle_test.go). The bucket has no
versioning, so NoncurrentVersionExpiration and ExpiredObjectDeleteMarker are
accepted and stored but have nothing to act on, as S3 documents for an
unversioned bucket."""

from __future__ import annotations

import datetime as dt
from email.utils import format_datetime

import pytest
from botocore.exceptions import ClientError

from s3util import error_code, http_status


def expect_error(fn, code: str, status: int, message: str | None = None, **kw) -> None:
    with pytest.raises(ClientError) as ei:
        fn(**kw)
    err = ei.value
    assert (error_code(err), http_status(err)) == (code, status), err.response
    if message is not None:
        assert err.response["Error"]["Message"] == message


RULES = [
    {"ID": "logs", "Status": "Enabled", "Filter": {"Prefix": "logs/"}, "Expiration": {"Days": 3}},
    {"ID": "tmp", "Status": "Enabled", "Filter": {"Tag": {"Key": "class", "Value": "tmp"}}, "Expiration": {"Days": 1}},
    {"ID": "sized", "Status": "Enabled",
     "Filter": {"And": {"Prefix": "data/", "ObjectSizeGreaterThan": 5, "ObjectSizeLessThan": 100}},
     "Expiration": {"Date": dt.datetime(2031, 1, 1, tzinfo=dt.timezone.utc)}},
    {"ID": "off", "Status": "Disabled", "Filter": {"Prefix": "keep/"}, "Expiration": {"Days": 1}},
    {"ID": "versions", "Status": "Enabled", "Filter": {},
     "NoncurrentVersionExpiration": {"NoncurrentDays": 30, "NewerNoncurrentVersions": 2},
     "AbortIncompleteMultipartUpload": {"DaysAfterInitiation": 7}},
]


def expiry(last_modified: dt.datetime, days: int) -> str:
    """S3's rule: creation + days, rounded up to the next midnight UTC."""
    t = last_modified.astimezone(dt.timezone.utc) + dt.timedelta(days=days + 1)
    midnight = dt.datetime(t.year, t.month, t.day, tzinfo=dt.timezone.utc)
    return format_datetime(midnight, usegmt=True)


def test_put_get_delete_configuration(s3, bucket):
    expect_error(s3.get_bucket_lifecycle_configuration, "NoSuchLifecycleConfiguration", 404,
                 "The lifecycle configuration does not exist", Bucket=bucket)
    s3.put_bucket_lifecycle_configuration(Bucket=bucket, LifecycleConfiguration={"Rules": RULES})
    got = s3.get_bucket_lifecycle_configuration(Bucket=bucket)["Rules"]
    assert [r["ID"] for r in got] == [r["ID"] for r in RULES]
    assert got[0]["Filter"] == {"Prefix": "logs/"} and got[0]["Expiration"] == {"Days": 3}
    assert got[1]["Filter"] == {"Tag": {"Key": "class", "Value": "tmp"}}
    assert got[2]["Filter"]["And"] == {"Prefix": "data/", "ObjectSizeGreaterThan": 5, "ObjectSizeLessThan": 100}
    assert got[2]["Expiration"]["Date"] == dt.datetime(2031, 1, 1, tzinfo=dt.timezone.utc)
    assert got[3]["Status"] == "Disabled"
    assert got[4]["NoncurrentVersionExpiration"] == {"NoncurrentDays": 30, "NewerNoncurrentVersions": 2}
    assert got[4]["AbortIncompleteMultipartUpload"] == {"DaysAfterInitiation": 7}
    # A rule without an ID is given one.
    s3.put_bucket_lifecycle_configuration(Bucket=bucket, LifecycleConfiguration={"Rules": [
        {"Status": "Enabled", "Filter": {"Prefix": ""}, "Expiration": {"Days": 1}}]})
    got = s3.get_bucket_lifecycle_configuration(Bucket=bucket)["Rules"]
    assert len(got) == 1 and got[0]["ID"]
    s3.delete_bucket_lifecycle(Bucket=bucket)
    expect_error(s3.get_bucket_lifecycle_configuration, "NoSuchLifecycleConfiguration", 404, Bucket=bucket)
    s3.delete_bucket_lifecycle(Bucket=bucket)  # idempotent, 204
    expect_error(s3.get_bucket_lifecycle_configuration, "NoSuchBucket", 404, Bucket="no-such-bucket-lc")


@pytest.mark.parametrize("rules,code,message", [
    ([{"ID": "a", "Status": "Enabled", "Filter": {}, "Expiration": {"Days": 0}}],
     "InvalidArgument", "'Days' for Expiration action must be a positive integer"),
    ([{"ID": "a", "Status": "Enabled", "Filter": {},
       "Expiration": {"Date": dt.datetime(2031, 1, 1, 12, tzinfo=dt.timezone.utc)}}],
     "InvalidArgument", "'Date' must be at midnight GMT"),
    ([{"ID": "a", "Status": "Enabled", "Filter": {}, "Expiration": {"Days": 1}},
      {"ID": "a", "Status": "Enabled", "Filter": {}, "Expiration": {"Days": 2}}],
     "InvalidArgument", "Rule ID must be unique. Found same ID for more than one rule"),
    ([{"ID": "x" * 256, "Status": "Enabled", "Filter": {}, "Expiration": {"Days": 1}}],
     "InvalidArgument", "ID length should not exceed allowed limit of 255"),
    ([{"ID": "a", "Status": "Enabled", "Filter": {"Tag": {"Key": "k", "Value": "v"}},
       "AbortIncompleteMultipartUpload": {"DaysAfterInitiation": 1}}],
     "InvalidRequest", "AbortIncompleteMultipartUpload cannot be specified with Tags."),
    ([{"ID": "a", "Status": "Enabled", "Filter": {}, "NoncurrentVersionExpiration": {"NoncurrentDays": 0}}],
     "InvalidArgument", "'NoncurrentDays' for NoncurrentVersionExpiration action must be a positive integer"),
    ([{"ID": "a", "Status": "Enabled", "Filter": {}}],
     "InvalidRequest", "At least one action needs to be specified in a rule"),
    ([{"ID": "a", "Status": "Enabled", "Filter": {}, "Expiration": {"Days": 1, "ExpiredObjectDeleteMarker": True}}],
     "MalformedXML", None),
])
def test_validation_errors(s3, bucket, rules, code, message):
    expect_error(s3.put_bucket_lifecycle_configuration, code, 400, message,
                 Bucket=bucket, LifecycleConfiguration={"Rules": rules})
    expect_error(s3.get_bucket_lifecycle_configuration, "NoSuchLifecycleConfiguration", 404, Bucket=bucket)


def test_content_md5_required(s3, server, bucket):
    import requests
    from botocore.auth import S3SigV4Auth
    from botocore.awsrequest import AWSRequest

    body = b"<LifecycleConfiguration><Rule><ID>a</ID><Filter/><Status>Enabled</Status>" \
           b"<Expiration><Days>1</Days></Expiration></Rule></LifecycleConfiguration>"
    url = f"{s3.meta.endpoint_url}/{bucket}?lifecycle"
    req = AWSRequest(method="PUT", url=url, data=body)
    S3SigV4Auth(s3._request_signer._credentials, "s3", s3.meta.region_name).add_auth(req)
    resp = requests.put(url, data=body, headers=dict(req.headers.items()), timeout=30)
    assert resp.status_code == 400 and b"<Code>InvalidRequest</Code>" in resp.content, resp.content


def test_expiration_headers(s3, bucket):
    s3.put_bucket_lifecycle_configuration(Bucket=bucket, LifecycleConfiguration={"Rules": RULES})
    put = s3.put_object(Bucket=bucket, Key="logs/a.log", Body=b"x")
    head = s3.head_object(Bucket=bucket, Key="logs/a.log")
    want = f'expiry-date="{expiry(head["LastModified"], 3)}", rule-id="logs"'
    assert put["Expiration"] == want
    assert head["Expiration"] == want
    get = s3.get_object(Bucket=bucket, Key="logs/a.log")
    get["Body"].read()
    assert get["Expiration"] == want
    # A tag rule: judged with the object's tags.
    put = s3.put_object(Bucket=bucket, Key="t", Body=b"x", Tagging="class=tmp")
    head = s3.head_object(Bucket=bucket, Key="t")
    assert put["Expiration"] == head["Expiration"] == f'expiry-date="{expiry(head["LastModified"], 1)}", rule-id="tmp"'
    # A date rule with a size filter.
    put = s3.put_object(Bucket=bucket, Key="data/mid", Body=b"x" * 50)
    assert put["Expiration"] == 'expiry-date="Wed, 01 Jan 2031 00:00:00 GMT", rule-id="sized"'
    put = s3.put_object(Bucket=bucket, Key="data/small", Body=b"x" * 5)
    assert "Expiration" not in put
    # Disabled rules and unmatched keys: no header.
    for key in ("keep/a", "other"):
        assert "Expiration" not in s3.put_object(Bucket=bucket, Key=key, Body=b"x")
        assert "Expiration" not in s3.head_object(Bucket=bucket, Key=key)
    # CreateMultipartUpload answers the abort date.
    mp = s3.create_multipart_upload(Bucket=bucket, Key="upload")
    assert mp["AbortRuleId"] == "versions" and mp["AbortDate"].tzinfo is not None
    s3.abort_multipart_upload(Bucket=bucket, Key="upload", UploadId=mp["UploadId"])
    # Without a configuration, no header.
    s3.delete_bucket_lifecycle(Bucket=bucket)
    assert "Expiration" not in s3.head_object(Bucket=bucket, Key="logs/a.log")


def test_aws_cli_lifecycle(aws, bucket, tmp_path):
    """The aws cli at default settings: put (it sends the checksum S3
    requires), get back the same rules, delete."""
    import json

    doc = {"Rules": [
        {"ID": "logs", "Status": "Enabled", "Filter": {"Prefix": "logs/"}, "Expiration": {"Days": 7}},
        {"ID": "uploads", "Status": "Enabled", "Filter": {"Prefix": ""},
         "AbortIncompleteMultipartUpload": {"DaysAfterInitiation": 2}},
    ]}
    path = tmp_path / "lifecycle.json"
    path.write_text(json.dumps(doc))
    aws("s3api", "put-bucket-lifecycle-configuration", "--bucket", bucket,
        "--lifecycle-configuration", f"file://{path}")
    got = json.loads(aws("s3api", "get-bucket-lifecycle-configuration", "--bucket", bucket).stdout)
    assert [r["ID"] for r in got["Rules"]] == ["logs", "uploads"]
    assert got["Rules"][0]["Expiration"] == {"Days": 7}
    assert got["Rules"][1]["AbortIncompleteMultipartUpload"] == {"DaysAfterInitiation": 2}
    aws("s3api", "delete-bucket-lifecycle", "--bucket", bucket)
    res = aws("s3api", "get-bucket-lifecycle-configuration", "--bucket", bucket, check=False)
    assert res.returncode != 0 and "NoSuchLifecycleConfiguration" in res.stderr
