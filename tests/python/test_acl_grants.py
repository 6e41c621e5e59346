"""ACL grants, object ownership and public access blocks with boto3 at
default settings against the real server.

Grants name users by canonical id (what ListBuckets shows each user as its
Owner ID) in x-amz-grant-* headers or an AccessControlPolicy body.
BucketOwnerEnforced turns ACLs off; a public access block refuses public
ACLs and policies (BlockPublicAcls, BlockPublicPolicy), ignores public ACLs
(IgnorePublicAcls) and confines a public policy to the bucket's owner
(RestrictPublicBuckets). Anonymous requests are plain HTTP GETs."""

from __future__ import annotations

import json

import pytest
import requests
from botocore.exceptions import ClientError

from conftest import empty_and_delete_bucket, unique_bucket_name
from s3util import error_code, http_status

ALL_USERS = "http://acs.amazonaws.com/groups/global/AllUsers"


def canonical_id(client) -> str:
    return client.list_buckets()["Owner"]["ID"]


def expect_error(call, code: str, status: int, **kwargs):
    with pytest.raises(ClientError) as e:
        call(**kwargs)
    assert (error_code(e.value), http_status(e.value)) == (code, status), e.value.response


def anon_get(server, bucket: str, key: str) -> int:
    return requests.get(f"{server.endpoint}/{bucket}/{key}", timeout=30).status_code


@pytest.fixture
def alice_bucket(request, s3_alice):
    """A fresh bucket owned by alice (not root), deleted after the test."""
    name = unique_bucket_name(request.node.name.removeprefix("test_"))
    s3_alice.create_bucket(Bucket=name)
    yield name
    try:
        s3_alice.delete_public_access_block(Bucket=name)
        s3_alice.delete_bucket_policy(Bucket=name)
    except ClientError:
        pass
    empty_and_delete_bucket(s3_alice, name)


def test_grant_read_header_by_canonical_id(server, s3, s3_alice, s3_bob, bucket):
    alice_id = canonical_id(s3_alice)
    assert len(alice_id) == 64 and alice_id != canonical_id(s3_bob)
    s3.put_object(Bucket=bucket, Key="shared.txt", Body=b"for alice", GrantRead=f'id="{alice_id}"')
    assert s3_alice.get_object(Bucket=bucket, Key="shared.txt")["Body"].read() == b"for alice"
    assert s3_alice.head_object(Bucket=bucket, Key="shared.txt")["ContentLength"] == 9
    expect_error(s3_bob.get_object, "AccessDenied", 403, Bucket=bucket, Key="shared.txt")
    assert anon_get(server, bucket, "shared.txt") == 403
    # READ is not READ_ACP: alice may not see or change the ACL.
    expect_error(s3_alice.get_object_acl, "AccessDenied", 403, Bucket=bucket, Key="shared.txt")
    expect_error(s3_alice.put_object_acl, "AccessDenied", 403, Bucket=bucket, Key="shared.txt", ACL="public-read")
    acl = s3.get_object_acl(Bucket=bucket, Key="shared.txt")
    assert [(g["Grantee"].get("ID"), g["Permission"]) for g in acl["Grants"]] == [(alice_id, "READ")]
    # A grant on the bucket: WRITE lets bob upload, READ lets alice list.
    s3.put_bucket_acl(Bucket=bucket, GrantWrite=f'id="{canonical_id(s3_bob)}"', GrantRead=f"id={alice_id}")
    s3_bob.put_object(Bucket=bucket, Key="from-bob.txt", Body=b"b")
    assert "from-bob.txt" in [o["Key"] for o in s3_alice.list_objects_v2(Bucket=bucket)["Contents"]]
    expect_error(s3_bob.list_objects_v2, "AccessDenied", 403, Bucket=bucket)
    expect_error(s3_alice.put_object, "AccessDenied", 403, Bucket=bucket, Key="x", Body=b"x")


def test_grant_read_by_access_control_policy(server, s3, s3_alice, s3_bob, bucket):
    s3.put_object(Bucket=bucket, Key="doc.txt", Body=b"document")
    expect_error(s3_alice.get_object, "AccessDenied", 403, Bucket=bucket, Key="doc.txt")
    acl = s3.get_object_acl(Bucket=bucket, Key="doc.txt")
    alice_id = canonical_id(s3_alice)
    grants = acl["Grants"] + [{"Grantee": {"Type": "CanonicalUser", "ID": alice_id}, "Permission": "READ"}]
    s3.put_object_acl(Bucket=bucket, Key="doc.txt", AccessControlPolicy={"Owner": acl["Owner"], "Grants": grants})
    assert s3_alice.get_object(Bucket=bucket, Key="doc.txt")["Body"].read() == b"document"
    expect_error(s3_bob.get_object, "AccessDenied", 403, Bucket=bucket, Key="doc.txt")
    assert anon_get(server, bucket, "doc.txt") == 403
    shown = s3.get_object_acl(Bucket=bucket, Key="doc.txt")["Grants"]
    assert {(g["Grantee"].get("ID"), g["Permission"]) for g in shown} == {
        (acl["Owner"]["ID"], "FULL_CONTROL"),
        (alice_id, "READ"),
    }
    # Group grants by body open the object to everyone.
    s3.put_object_acl(
        Bucket=bucket,
        Key="doc.txt",
        AccessControlPolicy={"Owner": acl["Owner"], "Grants": [{"Grantee": {"Type": "Group", "URI": ALL_USERS}, "Permission": "READ"}]},
    )
    assert anon_get(server, bucket, "doc.txt") == 200
    # The body must name the object's owner, and only users the server knows.
    expect_error(
        s3.put_object_acl,
        "AccessDenied",
        403,
        Bucket=bucket,
        Key="doc.txt",
        AccessControlPolicy={"Owner": {"ID": alice_id}, "Grants": grants},
    )
    expect_error(
        s3.put_object_acl,
        "InvalidArgument",
        400,
        Bucket=bucket,
        Key="doc.txt",
        AccessControlPolicy={
            "Owner": acl["Owner"],
            "Grants": [{"Grantee": {"Type": "CanonicalUser", "ID": "ab" * 32}, "Permission": "READ"}],
        },
    )
    assert anon_get(server, bucket, "doc.txt") == 200  # unchanged by the refusals


def test_grant_header_errors(s3, s3_alice, bucket):
    alice = f'id="{canonical_id(s3_alice)}"'
    expect_error(s3.put_object, "InvalidRequest", 400, Bucket=bucket, Key="k", Body=b"x", ACL="private", GrantRead=alice)
    expect_error(s3.put_object, "UnresolvableGrantByEmailAddress", 400, Bucket=bucket, Key="k", Body=b"x", GrantRead='emailAddress="a@example.com"')
    expect_error(s3.put_object, "InvalidArgument", 400, Bucket=bucket, Key="k", Body=b"x", GrantRead='id="' + "0" * 64 + '"')
    expect_error(s3.head_object, "404", 404, Bucket=bucket, Key="k")


def test_bucket_owner_enforced_refuses_public_read(server, s3, bucket):
    name = unique_bucket_name("enforced")
    s3.create_bucket(Bucket=name, ObjectOwnership="BucketOwnerEnforced")
    try:
        got = s3.get_bucket_ownership_controls(Bucket=name)["OwnershipControls"]["Rules"]
        assert got == [{"ObjectOwnership": "BucketOwnerEnforced"}]
        expect_error(s3.put_object, "AccessControlListNotSupported", 400, Bucket=name, Key="k", Body=b"x", ACL="public-read")
        expect_error(s3.head_object, "404", 404, Bucket=name, Key="k")
        s3.put_object(Bucket=name, Key="k", Body=b"x")
        s3.put_object(Bucket=name, Key="k2", Body=b"x", ACL="bucket-owner-full-control")
        expect_error(s3.put_object_acl, "AccessControlListNotSupported", 400, Bucket=name, Key="k", ACL="public-read")
        expect_error(s3.put_bucket_acl, "AccessControlListNotSupported", 400, Bucket=name, ACL="public-read")
        grants = s3.get_object_acl(Bucket=name, Key="k")["Grants"]
        assert [g["Permission"] for g in grants] == ["FULL_CONTROL"], grants
        assert anon_get(server, name, "k") == 403
    finally:
        empty_and_delete_bucket(s3, name)
    # Turning it on for an existing bucket whose ACL is private, too.
    s3.put_bucket_ownership_controls(Bucket=bucket, OwnershipControls={"Rules": [{"ObjectOwnership": "BucketOwnerEnforced"}]})
    expect_error(s3.put_object, "AccessControlListNotSupported", 400, Bucket=bucket, Key="k", Body=b"x", ACL="public-read")
    # A bucket ACL granting others must go before ACLs can be turned off.
    s3.delete_bucket_ownership_controls(Bucket=bucket)
    s3.put_bucket_acl(Bucket=bucket, ACL="public-read")
    expect_error(
        s3.put_bucket_ownership_controls,
        "InvalidBucketAclWithObjectOwnership",
        400,
        Bucket=bucket,
        OwnershipControls={"Rules": [{"ObjectOwnership": "BucketOwnerEnforced"}]},
    )


def _public_policy(bucket: str) -> str:
    return json.dumps({
        "Version": "2012-10-17",
        "Statement": [{"Effect": "Allow", "Principal": "*", "Action": "s3:GetObject", "Resource": f"arn:aws:s3:::{bucket}/*"}],
    })


def test_public_access_block_blocks_public_policy_and_acl(server, s3, s3_alice, bucket):
    expect_error(s3.get_public_access_block, "NoSuchPublicAccessBlockConfiguration", 404, Bucket=bucket)
    cfg = {"BlockPublicAcls": True, "IgnorePublicAcls": False, "BlockPublicPolicy": True, "RestrictPublicBuckets": False}
    s3.put_public_access_block(Bucket=bucket, PublicAccessBlockConfiguration=cfg)
    assert s3.get_public_access_block(Bucket=bucket)["PublicAccessBlockConfiguration"] == cfg
    expect_error(s3_alice.get_public_access_block, "AccessDenied", 403, Bucket=bucket)

    expect_error(s3.put_bucket_policy, "AccessDenied", 403, Bucket=bucket, Policy=_public_policy(bucket))
    expect_error(s3.get_bucket_policy, "NoSuchBucketPolicy", 404, Bucket=bucket)
    expect_error(s3.put_object, "AccessDenied", 403, Bucket=bucket, Key="pub", Body=b"x", ACL="public-read")
    expect_error(s3.put_object, "AccessDenied", 403, Bucket=bucket, Key="pub", Body=b"x", GrantRead=f'uri="{ALL_USERS}"')
    expect_error(s3.head_object, "404", 404, Bucket=bucket, Key="pub")
    s3.put_object(Bucket=bucket, Key="priv", Body=b"x")
    expect_error(s3.put_object_acl, "AccessDenied", 403, Bucket=bucket, Key="priv", ACL="public-read")
    expect_error(s3.put_bucket_acl, "AccessDenied", 403, Bucket=bucket, ACL="authenticated-read")
    assert anon_get(server, bucket, "priv") == 403
    # A browser form upload with a public acl field too.
    form = s3.generate_presigned_post(bucket, "form.txt", Fields={"acl": "public-read"}, Conditions=[{"acl": "public-read"}])
    resp = requests.post(form["url"], data=form["fields"], files={"file": ("form.txt", b"x")}, timeout=30)
    assert resp.status_code == 403 and b"<Code>AccessDenied</Code>" in resp.content, resp.text
    expect_error(s3.head_object, "404", 404, Bucket=bucket, Key="form.txt")
    # A policy that names a user is not public and is accepted.
    named = json.dumps({
        "Version": "2012-10-17",
        "Statement": [{"Effect": "Allow", "Principal": {"AWS": "e2ealice0001"}, "Action": "s3:GetObject", "Resource": f"arn:aws:s3:::{bucket}/*"}],
    })
    s3.put_bucket_policy(Bucket=bucket, Policy=named)
    assert s3.get_bucket_policy_status(Bucket=bucket)["PolicyStatus"]["IsPublic"] is False

    s3.delete_public_access_block(Bucket=bucket)
    expect_error(s3.get_public_access_block, "NoSuchPublicAccessBlockConfiguration", 404, Bucket=bucket)
    s3.put_bucket_policy(Bucket=bucket, Policy=_public_policy(bucket))
    assert anon_get(server, bucket, "priv") == 200


def test_ignore_public_acls(server, s3, bucket):
    s3.put_object(Bucket=bucket, Key="pub.txt", Body=b"public", ACL="public-read")
    assert anon_get(server, bucket, "pub.txt") == 200
    s3.put_public_access_block(Bucket=bucket, PublicAccessBlockConfiguration={"IgnorePublicAcls": True})
    assert anon_get(server, bucket, "pub.txt") == 403
    # The ACL is kept and shown; only its effect is gone.
    uris = [g["Grantee"].get("URI") for g in s3.get_object_acl(Bucket=bucket, Key="pub.txt")["Grants"]]
    assert ALL_USERS in uris
    s3.delete_public_access_block(Bucket=bucket)
    assert anon_get(server, bucket, "pub.txt") == 200


def test_restrict_public_buckets(server, s3_alice, s3_bob, alice_bucket):
    b = alice_bucket
    s3_alice.put_object(Bucket=b, Key="page.html", Body=b"<p>hi</p>")
    s3_alice.put_bucket_policy(Bucket=b, Policy=_public_policy(b))
    assert anon_get(server, b, "page.html") == 200
    assert s3_bob.get_object(Bucket=b, Key="page.html")["Body"].read() == b"<p>hi</p>"

    s3_alice.put_public_access_block(Bucket=b, PublicAccessBlockConfiguration={"RestrictPublicBuckets": True})
    assert anon_get(server, b, "page.html") == 403
    expect_error(s3_bob.get_object, "AccessDenied", 403, Bucket=b, Key="page.html")
    assert s3_alice.get_object(Bucket=b, Key="page.html")["Body"].read() == b"<p>hi</p>"
    assert s3_alice.get_bucket_policy_status(Bucket=b)["PolicyStatus"]["IsPublic"] is True

    s3_alice.delete_public_access_block(Bucket=b)
    assert anon_get(server, b, "page.html") == 200
