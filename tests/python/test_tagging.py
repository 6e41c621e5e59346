"""Object and bucket tagging (issue #15) with boto3 at default settings and the
aws cli: Put/Get/DeleteObjectTagging, x-amz-tagging on PUT, multipart
(boto3's transfer manager) and copy (x-amz-tagging-directive), the tag count on
GET, Put/Get/DeleteBucketTagging, S3's limits with S3's error codes and
messages, access decisions (s3:ExistingObjectTag in a bucket policy) and a
form upload's tagging field.

The versionId cases pin S3's documented behaviour for a bucket that has never
had versioning: the only version is "null", and any other version id is
refused as malformed (400 InvalidArgument), exactly as GET answers it."""

from __future__ import annotations

import io
import json
import time

import pytest
import requests
from boto3.s3.transfer import TransferConfig
from botocore.exceptions import ClientError

from s3util import MiB, error_code, http_status, random_bytes


def expect_error(fn, code: str, status: int, message: str | None = None, **kw) -> None:
    with pytest.raises(ClientError) as ei:
        fn(**kw)
    err = ei.value
    assert (error_code(err), http_status(err)) == (code, status), err.response
    if message is not None:
        assert err.response["Error"]["Message"] == message


def tags(*kv: str) -> list[dict]:
    return [{"Key": kv[i], "Value": kv[i + 1]} for i in range(0, len(kv), 2)]


def tag_map(tag_set: list[dict]) -> dict:
    return {t["Key"]: t["Value"] for t in tag_set}


def object_tags(s3, bucket: str, key: str) -> dict:
    return tag_map(s3.get_object_tagging(Bucket=bucket, Key=key)["TagSet"])


def test_object_tagging_roundtrip(s3, bucket):
    put = s3.put_object(Bucket=bucket, Key="doc", Body=b"hello", Tagging="project=blue&team=storage%20ops")
    assert object_tags(s3, bucket, "doc") == {"project": "blue", "team": "storage ops"}
    first = s3.get_object(Bucket=bucket, Key="doc")
    assert first["TagCount"] == 2
    head = s3.head_object(Bucket=bucket, Key="doc")
    assert head["ResponseMetadata"]["HTTPHeaders"]["x-amz-tagging-count"] == "2"

    # A new tag set replaces the old one; the version does not change.
    time.sleep(1.1)  # Last-Modified has one-second resolution
    s3.put_object_tagging(Bucket=bucket, Key="doc", Tagging={"TagSet": tags("stage", "final", "empty", "", "ключ", "значение")})
    assert object_tags(s3, bucket, "doc") == {"stage": "final", "empty": "", "ключ": "значение"}
    got = s3.get_object(Bucket=bucket, Key="doc")
    assert got["Body"].read() == b"hello"
    assert got["TagCount"] == 3
    assert got["ETag"] == put["ETag"] and got["LastModified"] == first["LastModified"]

    # The only version of an unversioned object is "null".
    assert tag_map(s3.get_object_tagging(Bucket=bucket, Key="doc", VersionId="null")["TagSet"])["stage"] == "final"
    expect_error(s3.get_object_tagging, "InvalidArgument", 400, Bucket=bucket, Key="doc", VersionId="3HL4kqtJlcpXroDTDmJ")
    expect_error(s3.get_object_tagging, "NoSuchKey", 404, Bucket=bucket, Key="missing")

    s3.delete_object_tagging(Bucket=bucket, Key="doc")
    assert s3.get_object_tagging(Bucket=bucket, Key="doc")["TagSet"] == []
    assert "TagCount" not in s3.get_object(Bucket=bucket, Key="doc")


@pytest.mark.parametrize(
    "tag_set,code,message",
    [
        (tags(*[x for i in range(11) for x in (f"k{i}", "v")]), "BadRequest", "Object tags cannot be greater than 10"),
        (tags("aws:createdBy", "me"), "InvalidTag", "Your TagKey cannot be prefixed with aws:"),
        (tags("k", "1", "k", "2"), "InvalidTag", "Cannot provide multiple Tags with the same key"),
        (tags("k" * 129, "v"), "InvalidTag", "The TagKey you have provided is invalid"),
        (tags("k", "v" * 257), "InvalidTag", "The TagValue you have provided is invalid"),
        (tags("k#", "v"), "InvalidTag", "The TagKey you have provided is invalid"),
        (tags("k", "a&b"), "InvalidTag", "The TagValue you have provided is invalid"),
    ],
    ids=["11-tags", "aws-prefix", "duplicate", "long-key", "long-value", "key-char", "value-char"],
)
def test_object_tagging_limits(s3, bucket, tag_set, code, message):
    s3.put_object(Bucket=bucket, Key="obj", Body=b"x", Tagging="keep=me")
    expect_error(s3.put_object_tagging, code, 400, message, Bucket=bucket, Key="obj", Tagging={"TagSet": tag_set})
    assert object_tags(s3, bucket, "obj") == {"keep": "me"}


def test_object_tagging_at_the_limits(s3, bucket):
    s3.put_object(Bucket=bucket, Key="obj", Body=b"x")
    ten = tags(*[x for i in range(10) for x in (f"key{i}", f"value{i}")])
    s3.put_object_tagging(Bucket=bucket, Key="obj", Tagging={"TagSet": ten})
    assert object_tags(s3, bucket, "obj") == tag_map(ten)
    edge = tags("k" * 128, "v" * 256, "spaces and + - = . _ : / @", "Ⅷ ünïcode", "aws-not-a-prefix", "x:aws:y")
    s3.put_object_tagging(Bucket=bucket, Key="obj", Tagging={"TagSet": edge})
    assert object_tags(s3, bucket, "obj") == tag_map(edge)


def test_tagging_header_on_put(s3, bucket):
    s3.put_object(Bucket=bucket, Key="bare", Body=b"x", Tagging="flag&k=")
    assert object_tags(s3, bucket, "bare") == {"flag": "", "k": ""}
    for header, code in (("a=1&a=2", "InvalidArgument"), ("a=%zz", "InvalidArgument"), ("aws:a=1", "InvalidTag"),
                         ("&".join(f"k{i}=v" for i in range(11)), "BadRequest")):
        expect_error(s3.put_object, code, 400, Bucket=bucket, Key="refused", Body=b"x", Tagging=header)
    expect_error(s3.head_object, "404", 404, Bucket=bucket, Key="refused")


def test_tagging_multipart_and_copy(s3, bucket):
    # boto3's transfer manager sends ExtraArgs Tagging with
    # CreateMultipartUpload; the completed object carries the tags.
    data = random_bytes(6 * MiB, seed=15)
    cfg = TransferConfig(multipart_threshold=5 * MiB, multipart_chunksize=5 * MiB)
    s3.upload_fileobj(io.BytesIO(data), bucket, "big", ExtraArgs={"Tagging": "kind=multipart&size=6MiB"}, Config=cfg)
    head = s3.head_object(Bucket=bucket, Key="big")
    assert head["ETag"].endswith('-2"')
    assert object_tags(s3, bucket, "big") == {"kind": "multipart", "size": "6MiB"}

    src = {"Bucket": bucket, "Key": "big"}
    s3.copy_object(Bucket=bucket, Key="copy-default", CopySource=src)
    assert object_tags(s3, bucket, "copy-default") == {"kind": "multipart", "size": "6MiB"}
    s3.copy_object(Bucket=bucket, Key="copy-replace", CopySource=src, TaggingDirective="REPLACE", Tagging="kind=copy")
    assert object_tags(s3, bucket, "copy-replace") == {"kind": "copy"}
    s3.copy_object(Bucket=bucket, Key="copy-none", CopySource=src, TaggingDirective="REPLACE")
    assert object_tags(s3, bucket, "copy-none") == {}
    s3.copy_object(Bucket=bucket, Key="copy-ignored", CopySource=src, TaggingDirective="COPY", Tagging="ignored=yes")
    assert object_tags(s3, bucket, "copy-ignored") == {"kind": "multipart", "size": "6MiB"}


def test_bucket_tagging(s3, s3_alice, bucket):
    expect_error(s3.get_bucket_tagging, "NoSuchTagSet", 404, "The TagSet does not exist", Bucket=bucket)
    s3.put_bucket_tagging(Bucket=bucket, Tagging={"TagSet": tags("cost-center", "42", "owner", "storage")})
    assert tag_map(s3.get_bucket_tagging(Bucket=bucket)["TagSet"]) == {"cost-center": "42", "owner": "storage"}
    fifty = tags(*[x for i in range(50) for x in (f"k{i:02}", "v")])
    s3.put_bucket_tagging(Bucket=bucket, Tagging={"TagSet": fifty})
    assert len(s3.get_bucket_tagging(Bucket=bucket)["TagSet"]) == 50
    expect_error(s3.put_bucket_tagging, "BadRequest", 400, "Bucket tag count cannot be greater than 50",
                 Bucket=bucket, Tagging={"TagSet": fifty + tags("one", "more")})
    expect_error(s3.put_bucket_tagging, "InvalidTag", 400, "System tags cannot be added/updated by requester",
                 Bucket=bucket, Tagging={"TagSet": tags("aws:cloudformation:stack-name", "x")})
    expect_error(s3_alice.get_bucket_tagging, "AccessDenied", 403, Bucket=bucket)
    expect_error(s3_alice.put_bucket_tagging, "AccessDenied", 403, Bucket=bucket, Tagging={"TagSet": tags("a", "b")})
    assert len(s3.get_bucket_tagging(Bucket=bucket)["TagSet"]) == 50
    resp = s3.delete_bucket_tagging(Bucket=bucket)
    assert resp["ResponseMetadata"]["HTTPStatusCode"] == 204
    expect_error(s3.get_bucket_tagging, "NoSuchTagSet", 404, Bucket=bucket)


def test_tagging_access(s3, s3_alice, bucket):
    s3.put_object(Bucket=bucket, Key="public", Body=b"p", Tagging="visibility=public")
    s3.put_object(Bucket=bucket, Key="private", Body=b"s", Tagging="visibility=private")
    # Without a policy only the object's owner reads or changes its tags.
    expect_error(s3_alice.get_object_tagging, "AccessDenied", 403, Bucket=bucket, Key="public")
    expect_error(s3_alice.put_object_tagging, "AccessDenied", 403, Bucket=bucket, Key="public",
                 Tagging={"TagSet": tags("visibility", "private")})
    expect_error(s3_alice.delete_object_tagging, "AccessDenied", 403, Bucket=bucket, Key="public")
    # s3:ExistingObjectTag: alice may read what is tagged public, and its tags.
    policy = {
        "Version": "2012-10-17",
        "Statement": [{
            "Effect": "Allow",
            "Principal": {"AWS": "e2ealice0001"},
            "Action": ["s3:GetObject", "s3:GetObjectTagging"],
            "Resource": f"arn:aws:s3:::{bucket}/*",
            "Condition": {"StringEquals": {"s3:ExistingObjectTag/visibility": "public"}},
        }],
    }
    s3.put_bucket_policy(Bucket=bucket, Policy=json.dumps(policy))
    got = s3_alice.get_object(Bucket=bucket, Key="public")
    assert got["Body"].read() == b"p" and got["TagCount"] == 1
    assert object_tags(s3_alice, bucket, "public") == {"visibility": "public"}
    expect_error(s3_alice.get_object, "AccessDenied", 403, Bucket=bucket, Key="private")
    # Retagging the object moves it out of the grant.
    s3.put_object_tagging(Bucket=bucket, Key="public", Tagging={"TagSet": tags("visibility", "private")})
    expect_error(s3_alice.get_object, "AccessDenied", 403, Bucket=bucket, Key="public")


def test_tagging_form_upload(s3, bucket):
    doc = "<Tagging><TagSet><Tag><Key>via</Key><Value>form</Value></Tag></TagSet></Tagging>"
    presigned = s3.generate_presigned_post(bucket, "form.txt", Fields={"tagging": doc}, Conditions=[{"tagging": doc}],
                                           ExpiresIn=600)
    resp = requests.post(presigned["url"], data=presigned["fields"], files={"file": ("f.txt", b"form data")}, timeout=60)
    assert resp.status_code == 204, resp.text
    assert object_tags(s3, bucket, "form.txt") == {"via": "form"}
    bad = s3.generate_presigned_post(bucket, "bad.txt", Fields={"tagging": "via=form"}, Conditions=[{"tagging": "via=form"}],
                                     ExpiresIn=600)
    resp = requests.post(bad["url"], data=bad["fields"], files={"file": ("f.txt", b"x")}, timeout=60)
    assert resp.status_code == 400 and b"<Code>MalformedXML</Code>" in resp.content, resp.text


def test_awscli_tagging(aws, bucket, tmp_path):
    aws("s3api", "put-object", "--bucket", bucket, "--key", "cli.txt", "--body", __file__, "--tagging", "made=by-cli")
    out = json.loads(aws("s3api", "get-object-tagging", "--bucket", bucket, "--key", "cli.txt").stdout)
    assert tag_map(out["TagSet"]) == {"made": "by-cli"}
    aws("s3api", "put-object-tagging", "--bucket", bucket, "--key", "cli.txt",
        "--tagging", json.dumps({"TagSet": tags("a", "1", "b", "2")}))
    out = json.loads(aws("s3api", "get-object-tagging", "--bucket", bucket, "--key", "cli.txt").stdout)
    assert tag_map(out["TagSet"]) == {"a": "1", "b": "2"}
    refused = aws("s3api", "put-object-tagging", "--bucket", bucket, "--key", "cli.txt",
                  "--tagging", json.dumps({"TagSet": tags("aws:x", "1")}), check=False)
    assert refused.returncode != 0 and "InvalidTag" in refused.stderr, refused
    aws("s3api", "delete-object-tagging", "--bucket", bucket, "--key", "cli.txt")
    out = json.loads(aws("s3api", "get-object-tagging", "--bucket", bucket, "--key", "cli.txt").stdout)
    assert out["TagSet"] == []

    aws("s3api", "put-bucket-tagging", "--bucket", bucket, "--tagging", "TagSet=[{Key=env,Value=test}]")
    out = json.loads(aws("s3api", "get-bucket-tagging", "--bucket", bucket).stdout)
    assert tag_map(out["TagSet"]) == {"env": "test"}
    aws("s3api", "delete-bucket-tagging", "--bucket", bucket)
    missing = aws("s3api", "get-bucket-tagging", "--bucket", bucket, check=False)
    assert missing.returncode != 0 and "NoSuchTagSet" in missing.stderr, missing
