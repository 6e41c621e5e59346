"""The bucket policy language of issue #42 with boto3 (and plain HTTP) at
default settings: NotPrincipal only with Deny, ...IfExists operators,
request and existing object tag conditions, the multipart actions,
Service principals, GetBucketPolicyStatus, RestrictPublicBuckets and the
404 a caller who may list gets for a missing key.

Buckets here are alice's (a user of the users file, so ACLs and ownership
apply as to an S3 account) unless a test needs root's account; bob is
another account, `s3_anon` and `requests` are anonymous."""

from __future__ import annotations

import json
import uuid

import pytest
import requests
from botocore.exceptions import ClientError

from conftest import ALICE, BOB, empty_and_delete_bucket
from s3util import error_code, http_status
from test_iam import _client, admin, user  # noqa: F401  (fixtures)


def _doc(*statements) -> str:
    return json.dumps({"Version": "2012-10-17", "Statement": list(statements)})


def _refused(call, code: str, message: str | None = None, status: int = 400) -> ClientError:
    with pytest.raises(ClientError) as e:
        call()
    assert (http_status(e.value), error_code(e.value)) == (status, code), e.value.response
    if message is not None:
        assert e.value.response["Error"]["Message"] == message, e.value.response
    return e.value


def _denied(call) -> None:
    _refused(call, "AccessDenied", status=403)


@pytest.fixture
def abucket(s3_alice):
    """A fresh bucket of alice's, emptied and removed afterwards."""
    name = f"e2e-pl-{uuid.uuid4().hex[:12]}"
    s3_alice.create_bucket(Bucket=name)
    yield name
    try:
        s3_alice.delete_bucket_policy(Bucket=name)
        s3_alice.delete_public_access_block(Bucket=name)
        empty_and_delete_bucket(s3_alice, name)
    except Exception:
        pass


def test_notprincipal_only_with_deny(s3_alice, s3_bob, s3_anon, abucket):
    b = abucket
    # ceph s3-tests' test_bucket_policy_allow_notprincipal; IAM: "NotPrincipal
    # must be used with Effect Deny. Using it with Allow is not supported."
    allow = {"Effect": "Allow", "NotPrincipal": {"AWS": "arn:aws:iam::s3tenant1:root"}, "Action": "s3:ListBucket",
             "Resource": [f"arn:aws:s3:::{b}", f"arn:aws:s3:::{b}/*"]}
    _refused(lambda: s3_alice.put_bucket_policy(Bucket=b, Policy=_doc(allow)), "MalformedPolicy",
             "NotPrincipal is supported only with Effect Deny")
    _refused(lambda: s3_alice.get_bucket_policy(Bucket=b), "NoSuchBucketPolicy", status=404)
    _denied(lambda: s3_bob.list_objects_v2(Bucket=b))

    # With Deny: everyone but the principals named.
    s3_alice.put_object(Bucket=b, Key="private/x", Body=b"secret")
    s3_alice.put_object(Bucket=b, Key="public/x", Body=b"open")
    s3_alice.put_bucket_policy(Bucket=b, Policy=_doc(
        {"Effect": "Allow", "Principal": "*", "Action": "s3:GetObject", "Resource": f"arn:aws:s3:::{b}/*"},
        {"Effect": "Deny", "NotPrincipal": {"AWS": f"arn:aws:iam::000000000000:user/{ALICE.access_key}"},
         "Action": "s3:GetObject", "Resource": f"arn:aws:s3:::{b}/private/*"}))
    assert s3_bob.get_object(Bucket=b, Key="public/x")["Body"].read() == b"open"
    assert s3_anon.get_object(Bucket=b, Key="public/x")["Body"].read() == b"open"
    _denied(lambda: s3_bob.get_object(Bucket=b, Key="private/x"))
    _denied(lambda: s3_anon.get_object(Bucket=b, Key="private/x"))
    assert s3_alice.get_object(Bucket=b, Key="private/x")["Body"].read() == b"secret"


def test_if_exists_operators(server, s3_alice, abucket):
    b = abucket
    s3_alice.put_object(Bucket=b, Key="foo", Body=b"bar")
    # ceph s3-tests' test_bucket_policy_set_condition_operator_end_with_IfExists,
    # asked anonymously.
    s3_alice.put_bucket_policy(Bucket=b, Policy=_doc(
        {"Sid": "Allow Public Access to All Objects", "Effect": "Allow", "Principal": "*", "Action": "s3:GetObject",
         "Resource": f"arn:aws:s3:::{b}/*",
         "Condition": {"StringLikeIfExists": {"aws:Referer": "http://www.example.com/*"}}},
        {"Effect": "Allow", "Principal": "*", "Action": "s3:ListBucket", "Resource": f"arn:aws:s3:::{b}",
         "Condition": {"NumericLessThanEqualsIfExists": {"s3:max-keys": "100"}}}))
    url = f"{server.endpoint}/{b}"
    for referer, status in [(None, 200), ("http://www.example.com/", 200), ("http://www.example.com/index.html", 200),
                            ("http://example.com", 403), ("", 200)]:
        headers = {} if referer is None else {"Referer": referer}
        got = requests.get(f"{url}/foo", headers=headers, timeout=30)
        assert got.status_code == status, (referer, got.status_code, got.text)
    for query, status in [("list-type=2", 200), ("list-type=2&max-keys=100", 200), ("list-type=2&max-keys=101", 403)]:
        assert requests.get(f"{url}?{query}", timeout=30).status_code == status, query

    bad = {"Effect": "Allow", "Principal": "*", "Action": "s3:GetObject", "Resource": f"arn:aws:s3:::{b}/*",
           "Condition": {"NullIfExists": {"aws:Referer": "true"}}}
    _refused(lambda: s3_alice.put_bucket_policy(Bucket=b, Policy=_doc(bad)), "MalformedPolicy")


def test_request_and_existing_object_tag_conditions(s3, s3_alice, s3_bob, abucket):
    b = abucket
    s3_alice.put_bucket_policy(Bucket=b, Policy=_doc(
        # ceph s3-tests' test_bucket_policy_put_obj_request_obj_tag, granted to bob.
        {"Effect": "Allow", "Principal": {"AWS": BOB.access_key}, "Action": "s3:PutObject",
         "Resource": f"arn:aws:s3:::{b}/*", "Condition": {"StringEquals": {"s3:RequestObjectTag/security": "public"}}},
        {"Effect": "Allow", "Principal": {"AWS": BOB.access_key}, "Action": "s3:PutObject",
         "Resource": f"arn:aws:s3:::{b}/team/*",
         "Condition": {"ForAllValues:StringEquals": {"s3:RequestObjectTagKeys": ["team", "env"]},
                       "Null": {"s3:RequestObjectTagKeys": "false"}}},
        {"Effect": "Allow", "Principal": {"AWS": BOB.access_key}, "Action": "s3:GetObject",
         "Resource": f"arn:aws:s3:::{b}/*", "Condition": {"StringEquals": {"s3:ExistingObjectTag/security": "public"}}}))

    _denied(lambda: s3_bob.put_object(Bucket=b, Key="testobj", Body=b"x"))
    _denied(lambda: s3_bob.put_object(Bucket=b, Key="testobj", Body=b"x", Tagging="security=private"))
    s3_bob.put_object(Bucket=b, Key="testobj", Body=b"x", Tagging="security=public")
    # bob owns what he wrote (ObjectWriter): root reads its tags.
    assert s3.get_object_tagging(Bucket=b, Key="testobj")["TagSet"] == [{"Key": "security", "Value": "public"}]
    # CreateMultipartUpload carries the tags it will set, as PutObject does.
    _denied(lambda: s3_bob.create_multipart_upload(Bucket=b, Key="mp"))
    up = s3_bob.create_multipart_upload(Bucket=b, Key="mp", Tagging="security=public")["UploadId"]
    s3_alice.abort_multipart_upload(Bucket=b, Key="mp", UploadId=up)

    s3_bob.put_object(Bucket=b, Key="team/a", Body=b"x", Tagging="team=blue&env=prod")
    _denied(lambda: s3_bob.put_object(Bucket=b, Key="team/b", Body=b"x", Tagging="team=blue&secret=1"))
    _denied(lambda: s3_bob.put_object(Bucket=b, Key="team/c", Body=b"x"))
    # A refused write left nothing behind.
    keys = [o["Key"] for o in s3_alice.list_objects_v2(Bucket=b).get("Contents", [])]
    assert sorted(keys) == ["team/a", "testobj"]

    s3_alice.put_object(Bucket=b, Key="doc-public", Body=b"p", Tagging="security=public")
    s3_alice.put_object(Bucket=b, Key="doc-private", Body=b"q", Tagging="security=private")
    s3_alice.put_object(Bucket=b, Key="doc-untagged", Body=b"r")
    assert s3_bob.get_object(Bucket=b, Key="doc-public")["Body"].read() == b"p"
    _denied(lambda: s3_bob.get_object(Bucket=b, Key="doc-private"))
    _denied(lambda: s3_bob.get_object(Bucket=b, Key="doc-untagged"))


def test_multipart_actions(s3, s3_alice, s3_bob, abucket):
    b = abucket
    for action, resource in [("s3:AbortMultipartUpload", f"arn:aws:s3:::{b}"),
                             ("s3:ListMultipartUploadParts", f"arn:aws:s3:::{b}"),
                             ("s3:ListBucketMultipartUploads", f"arn:aws:s3:::{b}/*"),
                             ("s3:PutObject", f"arn:aws:s3:::{b}")]:
        stmt = {"Effect": "Allow", "Principal": {"AWS": "*"}, "Action": action, "Resource": resource}
        _refused(lambda: s3_alice.put_bucket_policy(Bucket=b, Policy=_doc(stmt)), "MalformedPolicy",
                 "Action does not apply to any resource(s) in statement")

    s3_alice.put_bucket_policy(Bucket=b, Policy=_doc(
        {"Effect": "Allow", "Principal": {"AWS": BOB.access_key},
         "Action": ["s3:PutObject", "s3:AbortMultipartUpload", "s3:ListMultipartUploadParts"],
         "Resource": f"arn:aws:s3:::{b}/uploads/*"},
        {"Effect": "Allow", "Principal": {"AWS": BOB.access_key}, "Action": "s3:ListBucketMultipartUploads",
         "Resource": f"arn:aws:s3:::{b}"},
        {"Effect": "Deny", "Principal": "*", "Action": "s3:AbortMultipartUpload",
         "Resource": f"arn:aws:s3:::{b}/uploads/keep/*"}))
    mine = s3_alice.create_multipart_upload(Bucket=b, Key="uploads/a")["UploadId"]
    kept = s3_alice.create_multipart_upload(Bucket=b, Key="uploads/keep/a")["UploadId"]
    other = s3_alice.create_multipart_upload(Bucket=b, Key="other/a")["UploadId"]
    s3_alice.upload_part(Bucket=b, Key="uploads/a", UploadId=mine, PartNumber=1, Body=b"part")

    listed = {u["Key"] for u in s3_bob.list_multipart_uploads(Bucket=b)["Uploads"]}
    assert listed == {"uploads/a", "uploads/keep/a", "other/a"}
    assert [p["PartNumber"] for p in s3_bob.list_parts(Bucket=b, Key="uploads/a", UploadId=mine)["Parts"]] == [1]
    _denied(lambda: s3_bob.list_parts(Bucket=b, Key="other/a", UploadId=other))
    _denied(lambda: s3_bob.abort_multipart_upload(Bucket=b, Key="other/a", UploadId=other))
    _denied(lambda: s3_bob.abort_multipart_upload(Bucket=b, Key="uploads/keep/a", UploadId=kept))
    # The owner is bound by the Deny too (only root is not).
    _denied(lambda: s3_alice.abort_multipart_upload(Bucket=b, Key="uploads/keep/a", UploadId=kept))
    s3_bob.abort_multipart_upload(Bucket=b, Key="uploads/a", UploadId=mine)
    _refused(lambda: s3_alice.list_parts(Bucket=b, Key="uploads/a", UploadId=mine), "NoSuchUpload", status=404)

    # A whole upload by bob where the policy lets him write.
    up = s3_bob.create_multipart_upload(Bucket=b, Key="uploads/bob")["UploadId"]
    etag = s3_bob.upload_part(Bucket=b, Key="uploads/bob", UploadId=up, PartNumber=1, Body=b"bob's")["ETag"]
    s3_bob.complete_multipart_upload(Bucket=b, Key="uploads/bob", UploadId=up,
                                     MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": etag}]})
    assert s3.get_object(Bucket=b, Key="uploads/bob")["Body"].read() == b"bob's"
    _denied(lambda: s3_bob.create_multipart_upload(Bucket=b, Key="other/bob"))
    s3_alice.put_bucket_policy(Bucket=b, Policy=_doc(
        {"Effect": "Allow", "Principal": "*", "Action": "s3:PutObject", "Resource": f"arn:aws:s3:::{b}/*"}))
    for key, upload in [("uploads/keep/a", kept), ("other/a", other)]:
        s3_alice.abort_multipart_upload(Bucket=b, Key=key, UploadId=upload)


def test_service_principals(s3_alice, abucket):
    b = abucket
    logging_policy = {
        "Sid": "S3ServerAccessLogsPolicy", "Effect": "Allow", "Principal": {"Service": "logging.s3.amazonaws.com"},
        "Action": ["s3:PutObject"], "Resource": f"arn:aws:s3:::{b}/log/*",
        "Condition": {"ArnLike": {"aws:SourceArn": "arn:aws:s3:::source-bucket"},
                      "StringEquals": {"aws:SourceAccount": ALICE.access_key}}}
    s3_alice.put_bucket_policy(Bucket=b, Policy=_doc(logging_policy))
    assert json.loads(s3_alice.get_bucket_policy(Bucket=b)["Policy"])["Statement"][0]["Principal"] == \
        {"Service": "logging.s3.amazonaws.com"}
    assert s3_alice.get_bucket_policy_status(Bucket=b)["PolicyStatus"]["IsPublic"] is False
    # Other services that deliver into buckets load as written for AWS.
    s3_alice.put_bucket_policy(Bucket=b, Policy=_doc(
        {"Effect": "Allow", "Principal": {"Service": ["cloudtrail.amazonaws.com", "delivery.logs.amazonaws.com"]},
         "Action": "s3:PutObject", "Resource": f"arn:aws:s3:::{b}/AWSLogs/*"},
        {"Effect": "Allow", "Principal": {"Service": "logs.eu-west-1.amazonaws.com"},
         "Action": "s3:GetBucketAcl", "Resource": f"arn:aws:s3:::{b}"}))
    # A service that does not exist is refused as S3 refuses it, and the
    # stored policy stays.
    for name in ["logging.s3.amazonaws.comkaboom", "amazonaws.com", "*", ""]:
        stmt = dict(logging_policy, Principal={"Service": name})
        _refused(lambda: s3_alice.put_bucket_policy(Bucket=b, Policy=_doc(stmt)), "MalformedPolicy",
                 "Invalid principal in policy")
    stmts = json.loads(s3_alice.get_bucket_policy(Bucket=b)["Policy"])["Statement"]
    assert stmts[0]["Principal"]["Service"] == ["cloudtrail.amazonaws.com", "delivery.logs.amazonaws.com"]


def test_policy_status(s3_alice, abucket):
    b = abucket
    # S3 answers NoSuchBucketPolicy for a bucket without a policy, whatever
    # its ACL (docs/conformance.md has the evidence; ceph s3-tests expect
    # RGW's answer from the ACLs instead).
    for acl in ["private", "public-read", "authenticated-read"]:
        s3_alice.put_bucket_acl(Bucket=b, ACL=acl)
        _refused(lambda: s3_alice.get_bucket_policy_status(Bucket=b), "NoSuchBucketPolicy",
                 "The bucket policy does not exist", status=404)
    s3_alice.put_bucket_acl(Bucket=b, ACL="private")
    resources = [f"arn:aws:s3:::{b}", f"arn:aws:s3:::{b}/*"]
    for stmt, public in [
        ({"Effect": "Allow", "Principal": {"AWS": "*"}, "Action": "s3:ListBucket", "Resource": resources[0]}, True),
        ({"Effect": "Allow", "Principal": {"AWS": "*"}, "Action": "s3:ListBucket", "Resource": resources[0],
          "Condition": {"IpAddress": {"aws:SourceIp": "10.0.0.0/32"}}}, False),
        ({"Effect": "Allow", "Principal": {"AWS": "arn:aws:iam::s3tenant1:root"}, "Action": "s3:ListBucket",
          "Resource": resources[0]}, False),
        ({"Effect": "Allow", "Principal": "*", "Action": "s3:GetObject", "Resource": resources[1],
          "Condition": {"StringLikeIfExists": {"aws:Referer": "http://www.example.com/*"}}}, True),
    ]:
        s3_alice.put_bucket_policy(Bucket=b, Policy=_doc(stmt))
        assert s3_alice.get_bucket_policy_status(Bucket=b)["PolicyStatus"]["IsPublic"] is public, stmt


def test_restrict_public_buckets(server, s3_alice, s3_bob, s3_anon, abucket):
    b = abucket
    # ceph s3-tests' test_block_public_restrict_public_buckets, plus bob.
    assert s3_alice.delete_public_access_block(Bucket=b)["ResponseMetadata"]["HTTPStatusCode"] == 204
    s3_alice.put_object(Bucket=b, Key="foo", Body=b"bar")
    s3_alice.put_bucket_policy(Bucket=b, Policy=_doc(
        {"Effect": "Allow", "Principal": "*", "Action": "s3:GetObject", "Resource": f"arn:aws:s3:::{b}/*"},
        {"Effect": "Allow", "Principal": {"AWS": BOB.access_key}, "Action": "s3:ListBucket",
         "Resource": f"arn:aws:s3:::{b}"}))
    url = f"{server.endpoint}/{b}/foo"
    assert s3_anon.get_object(Bucket=b, Key="foo")["Body"].read() == b"bar"
    assert s3_bob.list_objects_v2(Bucket=b)["KeyCount"] == 1
    s3_alice.put_public_access_block(Bucket=b, PublicAccessBlockConfiguration={
        "BlockPublicAcls": False, "IgnorePublicAcls": False, "BlockPublicPolicy": False, "RestrictPublicBuckets": True})
    _denied(lambda: s3_anon.get_object(Bucket=b, Key="foo"))
    assert requests.get(url, timeout=30).status_code == 403
    _denied(lambda: s3_bob.get_object(Bucket=b, Key="foo"))
    # All cross-account access through the public policy stops, the
    # statement naming bob included.
    _denied(lambda: s3_bob.list_objects_v2(Bucket=b))
    assert s3_alice.get_object(Bucket=b, Key="foo")["Body"].read() == b"bar"
    s3_alice.delete_public_access_block(Bucket=b)
    assert requests.get(url, timeout=30).status_code == 200


def test_restrict_public_buckets_own_account(server, s3, bucket, admin, user):  # noqa: F811
    """An identity of the bucket owner's account (root's) keeps what the
    public policy grants under RestrictPublicBuckets; alice, another
    account, does not."""
    name, secret = user
    ident = _client(server, name, secret)
    s3.put_object(Bucket=bucket, Key="foo", Body=b"bar")
    s3.put_bucket_policy(Bucket=bucket, Policy=_doc(
        {"Effect": "Allow", "Principal": "*", "Action": "s3:GetObject", "Resource": f"arn:aws:s3:::{bucket}/*"}))
    alice = server.client(ALICE)
    assert ident.get_object(Bucket=bucket, Key="foo")["Body"].read() == b"bar"
    assert alice.get_object(Bucket=bucket, Key="foo")["Body"].read() == b"bar"
    s3.put_public_access_block(Bucket=bucket, PublicAccessBlockConfiguration={"RestrictPublicBuckets": True})
    assert ident.get_object(Bucket=bucket, Key="foo")["Body"].read() == b"bar"
    _denied(lambda: alice.get_object(Bucket=bucket, Key="foo"))
    assert requests.get(f"{server.endpoint}/{bucket}/foo", timeout=30).status_code == 403
    s3.delete_public_access_block(Bucket=bucket)


def test_missing_key_with_list_policy(server, s3_alice, s3_bob, s3_anon, abucket):
    b = abucket
    # ceph s3-tests' test_head_object_404_with_policy_prefix.
    s3_alice.put_bucket_policy(Bucket=b, Policy=_doc(
        {"Effect": "Allow", "Principal": {"AWS": "*"}, "Action": "s3:ListBucket", "Resource": f"arn:aws:s3:::{b}",
         "Condition": {"StringLike": {"s3:prefix": "public/*"}}}))
    for client in (s3_bob, s3_anon):
        _refused(lambda: client.head_object(Bucket=b, Key="public/object"), "404", status=404)
        _refused(lambda: client.get_object(Bucket=b, Key="public/object"), "NoSuchKey", status=404)
        _refused(lambda: client.head_object(Bucket=b, Key="private/object"), "403", status=403)
        _denied(lambda: client.get_object(Bucket=b, Key="private/object"))
    # Neither an object's nor a bucket's ?prefix= is the condition's.
    assert requests.head(f"{server.endpoint}/{b}/private/object?prefix=public/", timeout=30).status_code == 403
    assert requests.head(f"{server.endpoint}/{b}?prefix=public/", timeout=30).status_code == 403
    assert s3_bob.list_objects_v2(Bucket=b, Prefix="public/")["KeyCount"] == 0
    _denied(lambda: s3_bob.list_objects_v2(Bucket=b, Prefix="private/"))
    # Listing grants no read of what exists.
    s3_alice.put_object(Bucket=b, Key="public/there", Body=b"x")
    _refused(lambda: s3_bob.head_object(Bucket=b, Key="public/there"), "403", status=403)
    # On the bucket ARN: every missing key is 404 to bob, 403 to others.
    s3_alice.put_bucket_policy(Bucket=b, Policy=_doc(
        {"Effect": "Allow", "Principal": {"AWS": BOB.access_key}, "Action": "s3:ListBucket",
         "Resource": f"arn:aws:s3:::{b}"}))
    _refused(lambda: s3_bob.head_object(Bucket=b, Key="private/object"), "404", status=404)
    _refused(lambda: s3_anon.head_object(Bucket=b, Key="private/object"), "403", status=403)
