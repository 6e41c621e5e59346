"""ACL answers and object ownership as S3 gives them (issue #42), with boto3
at default settings against the real server.

- Get*Acl list a canned ACL as S3 does: the owner's FULL_CONTROL first,
  then the canned grants in the order of S3's "Canned ACL" table; user
  grantees carry Type, ID and DisplayName, group grantees Type and URI.
  The same through every request that sets one: CreateBucket,
  PutBucketAcl, PutObject, CopyObject, CreateMultipartUpload and
  PutObjectAcl.
- A grant naming a canonical id no user has is 400 InvalidArgument, an
  e-mail grantee 400 UnresolvableGrantByEmailAddress (users have no
  e-mail addresses here), by header or by body, and nothing is changed.
- READ_ACP, WRITE_ACP and FULL_CONTROL granted to another user let that
  user read or replace the ACL, and nothing more; an ACL grant to the
  account of an identity of the identity store counts for it together
  with its own policy, as AWS lets an account delegate a grant to its
  users.
- Re-creating your own bucket as it is answers 200 (us-east-1); asking
  for another ACL is 409 BucketAlreadyExists and leaves it as it was.
- Object ownership: none by default (GetBucketOwnershipControls 404);
  BucketOwnerEnforced, BucketOwnerPreferred and ObjectWriter decide who
  owns what PutObject, CopyObject and CreateMultipartUpload write.

Alice owns the buckets; Bob is another user of the users file. A user's
canonical id is what ListBuckets shows it as Owner ID, its DisplayName its
access key."""

from __future__ import annotations

import json
import os
import subprocess
import uuid

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError

from conftest import ALICE, BOB, REGION, ROOT_PASSWORD, ROOT_USER, empty_and_delete_bucket, unique_bucket_name
from s3util import error_code, http_status

ALL_USERS = "http://acs.amazonaws.com/groups/global/AllUsers"
AUTH_USERS = "http://acs.amazonaws.com/groups/global/AuthenticatedUsers"
LOG_DELIVERY = "http://acs.amazonaws.com/groups/s3/LogDelivery"


def canonical_id(client) -> str:
    return client.list_buckets()["Owner"]["ID"]


def user_grant(client, perm: str) -> dict:
    """The grant S3 lists for the user of client."""
    owner = client.list_buckets()["Owner"]
    return {"Grantee": {"Type": "CanonicalUser", "ID": owner["ID"], "DisplayName": owner["DisplayName"]}, "Permission": perm}


def group_grant(uri: str, perm: str) -> dict:
    return {"Grantee": {"Type": "Group", "URI": uri}, "Permission": perm}


def expect_error(call, code: str, status: int, **kwargs):
    with pytest.raises(ClientError) as e:
        call(**kwargs)
    assert (error_code(e.value), http_status(e.value)) == (code, status), e.value.response


def owner_of(client, bucket: str, key: str) -> str:
    """The object's owner, as GetObjectAcl shows it (to client, which must
    be allowed to read the ACL: root reads every one)."""
    return client.get_object_acl(Bucket=bucket, Key=key)["Owner"]["ID"]


@pytest.fixture
def alice_buckets(request, s3, s3_alice):
    """Make buckets owned by alice; root empties and deletes them afterwards."""
    made = []

    def make(**kwargs) -> str:
        name = unique_bucket_name(request.node.name.removeprefix("test_"))
        s3_alice.create_bucket(Bucket=name, **kwargs)
        made.append(name)
        return name

    yield make
    for name in made:
        try:
            empty_and_delete_bucket(s3, name)
        except Exception:  # cleanup must never mask the test's own outcome
            pass


# What each canned ACL lists beside (after) the owner's FULL_CONTROL, on a
# bucket and on an object another user (bob) wrote into alice's bucket:
# S3's "Canned ACL" table. "bucket-owner" stands for alice.
CANNED = {
    "private": ([], []),
    "public-read": ([(ALL_USERS, "READ")], [(ALL_USERS, "READ")]),
    "public-read-write": ([(ALL_USERS, "READ"), (ALL_USERS, "WRITE")], [(ALL_USERS, "READ"), (ALL_USERS, "WRITE")]),
    "authenticated-read": ([(AUTH_USERS, "READ")], [(AUTH_USERS, "READ")]),
    "bucket-owner-read": ([], [("bucket-owner", "READ")]),
    "bucket-owner-full-control": ([], [("bucket-owner", "FULL_CONTROL")]),
    "log-delivery-write": ([(LOG_DELIVERY, "WRITE"), (LOG_DELIVERY, "READ_ACP")], None),
}


def expected_grants(owner_client, bucket_owner_client, rows) -> list[dict]:
    want = [user_grant(owner_client, "FULL_CONTROL")]
    for who, perm in rows:
        want.append(user_grant(bucket_owner_client, perm) if who == "bucket-owner" else group_grant(who, perm))
    return want


@pytest.mark.parametrize("acl", list(CANNED))
def test_canned_bucket_acls(alice_buckets, s3_alice, acl):
    """CreateBucket and PutBucketAcl with each canned ACL: Get*Acl lists
    the owner with its ID and DisplayName, its FULL_CONTROL first, then
    the canned grants in S3's order (bucket-owner-* grant nothing more on
    a bucket)."""
    want = expected_grants(s3_alice, s3_alice, CANNED[acl][0])
    owner = s3_alice.list_buckets()["Owner"]
    created = alice_buckets(ACL=acl)
    got = s3_alice.get_bucket_acl(Bucket=created)
    assert got["Owner"] == owner
    assert got["Grants"] == want, f"CreateBucket ACL={acl}"

    if acl in ("public-read-write", "authenticated-read", "log-delivery-write"):
        # The same through PutBucketAcl, from a private bucket (the rest are
        # covered by the CreateBucket case and test_bucket_acl_replaced).
        plain = alice_buckets()
        s3_alice.put_bucket_acl(Bucket=plain, ACL=acl)
        assert s3_alice.get_bucket_acl(Bucket=plain)["Grants"] == want, f"PutBucketAcl ACL={acl}"


def test_bucket_acl_replaced(alice_buckets, s3_alice):
    """A canned ACL replaces the bucket's whole ACL, grants included."""
    b = alice_buckets(ACL="public-read")
    s3_alice.put_bucket_acl(Bucket=b, GrantRead=f'id="{canonical_id(s3_alice)}"', GrantWrite=f"uri={AUTH_USERS}")
    assert s3_alice.get_bucket_acl(Bucket=b)["Grants"] == [user_grant(s3_alice, "READ"), group_grant(AUTH_USERS, "WRITE")]
    s3_alice.put_bucket_acl(Bucket=b, ACL="private")
    assert s3_alice.get_bucket_acl(Bucket=b)["Grants"] == [user_grant(s3_alice, "FULL_CONTROL")]


def _complete_upload(client, bucket: str, key: str, **kwargs) -> None:
    up = client.create_multipart_upload(Bucket=bucket, Key=key, **kwargs)
    part = client.upload_part(Bucket=bucket, Key=key, UploadId=up["UploadId"], PartNumber=1, Body=b"part")
    client.complete_multipart_upload(Bucket=bucket, Key=key, UploadId=up["UploadId"],
                                     MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": part["ETag"]}]})


@pytest.mark.parametrize("acl", [a for a in CANNED if CANNED[a][1] is not None])
def test_canned_object_acls(alice_buckets, s3_alice, s3_bob, acl):
    """An object bob writes into alice's public-read-write bucket with a
    canned ACL, by PutObject, CopyObject, CreateMultipartUpload or
    PutObjectAcl, lists bob's FULL_CONTROL first, then the canned grants;
    bucket-owner-read and bucket-owner-full-control name alice."""
    b = alice_buckets(ACL="public-read-write")
    want = expected_grants(s3_bob, s3_alice, CANNED[acl][1])
    s3_bob.put_object(Bucket=b, Key="put", Body=b"x", ACL=acl)
    s3_bob.put_object(Bucket=b, Key="src", Body=b"x", ACL="public-read")
    s3_bob.copy_object(Bucket=b, Key="copy", CopySource={"Bucket": b, "Key": "src"}, ACL=acl)
    _complete_upload(s3_bob, b, "mpu", ACL=acl)
    s3_bob.put_object(Bucket=b, Key="later", Body=b"x")
    s3_bob.put_object_acl(Bucket=b, Key="later", ACL=acl)
    for key in ("put", "copy", "mpu", "later"):
        got = s3_bob.get_object_acl(Bucket=b, Key=key)
        assert got["Owner"] == s3_bob.list_buckets()["Owner"], key
        assert got["Grants"] == want, f"{key} ACL={acl}"


def test_bucket_owner_acls_by_the_bucket_owner(alice_buckets, s3_alice):
    """bucket-owner-* on the bucket owner's own object name nobody else."""
    b = alice_buckets()
    for acl in ("bucket-owner-read", "bucket-owner-full-control"):
        s3_alice.put_object(Bucket=b, Key=acl, Body=b"x", ACL=acl)
        assert s3_alice.get_object_acl(Bucket=b, Key=acl)["Grants"] == [user_grant(s3_alice, "FULL_CONTROL")]


def test_grants_to_unknown_users_are_invalid(alice_buckets, s3_alice):
    """A canonical id no user has: 400 InvalidArgument; an e-mail address:
    400 UnresolvableGrantByEmailAddress. By header on every request that
    sets an ACL and by AccessControlPolicy body; nothing is created or
    changed."""
    b = alice_buckets()
    s3_alice.put_object(Bucket=b, Key="src", Body=b"source")
    before_bucket = s3_alice.get_bucket_acl(Bucket=b)
    before_object = s3_alice.get_object_acl(Bucket=b, Key="src")
    me = canonical_id(s3_alice)
    for header, code in ((f'id="{"ab" * 32}"', "InvalidArgument"), ("id=_foo", "InvalidArgument"),
                         ('emailAddress="nobody@example.com"', "UnresolvableGrantByEmailAddress")):
        new = unique_bucket_name("unknown-grantee")
        expect_error(s3_alice.create_bucket, code, 400, Bucket=new, GrantRead=header)
        expect_error(s3_alice.head_bucket, "404", 404, Bucket=new)
        expect_error(s3_alice.put_object, code, 400, Bucket=b, Key="new", Body=b"x", GrantRead=header)
        expect_error(s3_alice.copy_object, code, 400, Bucket=b, Key="new", CopySource={"Bucket": b, "Key": "src"},
                     GrantFullControl=header)
        expect_error(s3_alice.create_multipart_upload, code, 400, Bucket=b, Key="new", GrantReadACP=header)
        expect_error(s3_alice.put_bucket_acl, code, 400, Bucket=b, GrantWrite=header)
        expect_error(s3_alice.put_object_acl, code, 400, Bucket=b, Key="src", GrantWriteACP=header)
    for grantee, code in (({"Type": "CanonicalUser", "ID": "ab" * 32}, "InvalidArgument"),
                          ({"Type": "AmazonCustomerByEmail", "EmailAddress": "nobody@example.com"},
                           "UnresolvableGrantByEmailAddress")):
        policy = {"Owner": {"ID": me}, "Grants": [user_grant(s3_alice, "FULL_CONTROL"),
                                                  {"Grantee": grantee, "Permission": "READ"}]}
        expect_error(s3_alice.put_bucket_acl, code, 400, Bucket=b, AccessControlPolicy=policy)
        expect_error(s3_alice.put_object_acl, code, 400, Bucket=b, Key="src", AccessControlPolicy=policy)
    assert s3_alice.list_objects_v2(Bucket=b)["KeyCount"] == 1
    assert s3_alice.list_multipart_uploads(Bucket=b).get("Uploads", []) == []
    assert s3_alice.get_bucket_acl(Bucket=b)["Grants"] == before_bucket["Grants"]
    assert s3_alice.get_object_acl(Bucket=b, Key="src")["Grants"] == before_object["Grants"]


@pytest.mark.parametrize("perm,reads,writes", [("FULL_CONTROL", True, True), ("WRITE_ACP", False, True),
                                               ("READ_ACP", True, False), ("READ", False, False)])
def test_acp_grants_to_another_user(alice_buckets, s3_alice, s3_bob, perm, reads, writes):
    """READ_ACP lets bob read an ACL, WRITE_ACP replace it (by header or
    by body), FULL_CONTROL both; READ neither. On objects and buckets."""
    b = alice_buckets()
    s3_alice.put_object(Bucket=b, Key="obj", Body=b"x")
    bob = f'id="{canonical_id(s3_bob)}"'
    arg = {"FULL_CONTROL": "GrantFullControl", "WRITE_ACP": "GrantWriteACP", "READ_ACP": "GrantReadACP", "READ": "GrantRead"}[perm]
    alice_owner = {"ID": canonical_id(s3_alice)}
    body = {"Owner": alice_owner, "Grants": [user_grant(s3_alice, "FULL_CONTROL"), user_grant(s3_bob, perm)]}
    for kind, get, put, where in (
        ("object", s3_bob.get_object_acl, s3_bob.put_object_acl, {"Key": "obj"}),
        ("bucket", s3_bob.get_bucket_acl, s3_bob.put_bucket_acl, {}),
    ):
        grant = s3_alice.put_object_acl if kind == "object" else s3_alice.put_bucket_acl
        grant(Bucket=b, **where, **{arg: bob})
        if reads:
            got = get(Bucket=b, **where)
            assert got["Grants"] == [user_grant(s3_bob, perm)], kind
        else:
            expect_error(get, "AccessDenied", 403, Bucket=b, **where)
        if writes:
            put(Bucket=b, **where, AccessControlPolicy=body)
            assert s3_alice.__getattribute__(f"get_{kind}_acl")(Bucket=b, **where)["Grants"] == body["Grants"]
            put(Bucket=b, **where, ACL="private")
            expect_error(get, "AccessDenied", 403, Bucket=b, **where)  # bob replaced his own grant
        else:
            expect_error(put, "AccessDenied", 403, Bucket=b, **where, ACL="public-read")
            assert s3_alice.__getattribute__(f"get_{kind}_acl")(Bucket=b, **where)["Grants"] == [user_grant(s3_bob, perm)]
    # ACP grants give no data access.
    if perm in ("READ_ACP", "WRITE_ACP"):
        expect_error(s3_bob.get_object, "AccessDenied", 403, Bucket=b, Key="obj")


def test_recreate_bucket(alice_buckets, s3_alice, s3_bob):
    """us-east-1: re-creating your own bucket as it is answers 200 and
    changes nothing; asking for another ACL answers 409
    BucketAlreadyExists and leaves the ACL as it was; another user gets
    BucketAlreadyExists."""
    b = alice_buckets(ACL="public-read")
    s3_alice.put_object(Bucket=b, Key="kept", Body=b"x")
    acl = s3_alice.get_bucket_acl(Bucket=b)["Grants"]
    s3_alice.create_bucket(Bucket=b, ACL="public-read")
    for kwargs in ({}, {"ACL": "private"}, {"ACL": "public-read-write"}, {"GrantRead": f"uri={AUTH_USERS}"}):
        expect_error(s3_alice.create_bucket, "BucketAlreadyExists", 409, Bucket=b, **kwargs)
    expect_error(s3_bob.create_bucket, "BucketAlreadyExists", 409, Bucket=b, ACL="public-read")
    assert s3_alice.get_bucket_acl(Bucket=b)["Grants"] == acl
    assert [o["Key"] for o in s3_alice.list_objects_v2(Bucket=b)["Contents"]] == ["kept"]

    plain = alice_buckets()
    s3_alice.create_bucket(Bucket=plain)
    s3_alice.create_bucket(Bucket=plain, ACL="private")
    expect_error(s3_alice.create_bucket, "BucketAlreadyExists", 409, Bucket=plain, ACL="public-read")
    expect_error(s3_alice.create_bucket, "BucketAlreadyExists", 409, Bucket=plain, ObjectOwnership="BucketOwnerEnforced")
    assert s3_alice.get_bucket_acl(Bucket=plain)["Grants"] == [user_grant(s3_alice, "FULL_CONTROL")]


def _writer_policy(bucket: str) -> str:
    """Lets everyone write and read the bucket's objects and the uploads."""
    return json.dumps({"Version": "2012-10-17", "Statement": [{
        "Effect": "Allow", "Principal": "*",
        "Action": ["s3:PutObject", "s3:GetObject", "s3:ListMultipartUploadParts", "s3:AbortMultipartUpload"],
        "Resource": f"arn:aws:s3:::{bucket}/*"}]})


def test_default_object_ownership(alice_buckets, s3, s3_alice, s3_bob):
    """A new bucket has no ownership controls (ObjectWriter: the writer
    owns what it writes, ACLs work), as MinIO and S3 before April 2023."""
    b = alice_buckets(ACL="public-read-write")
    expect_error(s3_alice.get_bucket_ownership_controls, "OwnershipControlsNotFoundError", 404, Bucket=b)
    s3_bob.put_object(Bucket=b, Key="bobs", Body=b"x")
    assert owner_of(s3, b, "bobs") == canonical_id(s3_bob)


@pytest.mark.parametrize("ownership", ["BucketOwnerEnforced", "BucketOwnerPreferred", "ObjectWriter"])
@pytest.mark.parametrize("how", ["create", "put"])
def test_object_ownership(alice_buckets, s3, s3_alice, s3_bob, ownership, how):
    """Who owns what bob writes into alice's bucket: BucketOwnerEnforced,
    alice, and only no ACL or bucket-owner-full-control is accepted;
    BucketOwnerPreferred, alice for bucket-owner-full-control, else bob;
    ObjectWriter, bob. The same for PutObject, CopyObject and
    CreateMultipartUpload (ListParts' Owner, then the object's)."""
    if how == "create":
        b = alice_buckets(ObjectOwnership=ownership)
    else:
        b = alice_buckets()
        s3_alice.put_bucket_ownership_controls(Bucket=b, OwnershipControls={"Rules": [{"ObjectOwnership": ownership}]})
    rules = s3_alice.get_bucket_ownership_controls(Bucket=b)["OwnershipControls"]["Rules"]
    assert rules == [{"ObjectOwnership": ownership}]
    s3_alice.put_bucket_policy(Bucket=b, Policy=_writer_policy(b))
    alice, bob = canonical_id(s3_alice), canonical_id(s3_bob)
    s3_bob.put_object(Bucket=b, Key="src", Body=b"x")

    def owners(acl: str | None) -> dict:
        kw = {"ACL": acl} if acl else {}
        s3_bob.put_object(Bucket=b, Key="put", Body=b"x", **kw)
        s3_bob.copy_object(Bucket=b, Key="copy", CopySource={"Bucket": b, "Key": "src"}, **kw)
        up = s3_bob.create_multipart_upload(Bucket=b, Key="mpu", **kw)
        parts_owner = s3_bob.list_parts(Bucket=b, Key="mpu", UploadId=up["UploadId"])["Owner"]["ID"]
        s3_bob.abort_multipart_upload(Bucket=b, Key="mpu", UploadId=up["UploadId"])
        return {"put": owner_of(s3, b, "put"), "copy": owner_of(s3, b, "copy"), "mpu": parts_owner}

    def all_(who: str) -> dict:
        return {"put": who, "copy": who, "mpu": who}

    if ownership == "BucketOwnerEnforced":
        assert owners(None) == all_(alice)
        assert owners("bucket-owner-full-control") == all_(alice)
        for acl in ("private", "public-read", "bucket-owner-read"):
            expect_error(s3_bob.put_object, "AccessControlListNotSupported", 400, Bucket=b, Key="put", Body=b"y", ACL=acl)
            expect_error(s3_bob.copy_object, "AccessControlListNotSupported", 400, Bucket=b, Key="copy",
                         CopySource={"Bucket": b, "Key": "src"}, ACL=acl)
            expect_error(s3_bob.create_multipart_upload, "AccessControlListNotSupported", 400, Bucket=b, Key="mpu", ACL=acl)
        expect_error(s3_alice.put_bucket_acl, "AccessControlListNotSupported", 400, Bucket=b, ACL="private")
        expect_error(s3_alice.put_object_acl, "AccessControlListNotSupported", 400, Bucket=b, Key="put", ACL="public-read")
        s3_alice.put_object_acl(Bucket=b, Key="put", ACL="bucket-owner-full-control")
        # ACLs read back as the bucket owner's FULL_CONTROL alone.
        assert s3_alice.get_object_acl(Bucket=b, Key="src")["Grants"] == [user_grant(s3_alice, "FULL_CONTROL")]
        assert s3_alice.get_bucket_acl(Bucket=b)["Grants"] == [user_grant(s3_alice, "FULL_CONTROL")]
    elif ownership == "BucketOwnerPreferred":
        assert owners(None) == all_(bob)
        assert owners("private") == all_(bob)
        assert owners("bucket-owner-full-control") == all_(alice)
        s3_alice.put_bucket_acl(Bucket=b, ACL="private")
    else:
        assert owners(None) == all_(bob)
        assert owners("bucket-owner-full-control") == all_(bob)
        s3_alice.put_bucket_acl(Bucket=b, ACL="private")
    s3_alice.delete_bucket_ownership_controls(Bucket=b)
    expect_error(s3_alice.get_bucket_ownership_controls, "OwnershipControlsNotFoundError", 404, Bucket=b)


# -- identities of the identity store ---------------------------------------


def _admin(server, binary, *args):
    env = dict(os.environ, SHARDSTORE_ENDPOINT=server.endpoint,
               SHARDSTORE_ROOT_USER=ROOT_USER, SHARDSTORE_ROOT_PASSWORD=ROOT_PASSWORD)
    res = subprocess.run([str(binary), "admin", *map(str, args)], env=env, capture_output=True, text=True, timeout=60)
    if res.returncode != 0:
        pytest.fail(f"shardstore admin {' '.join(map(str, args))}: exit {res.returncode}\n{res.stdout}{res.stderr}",
                    pytrace=False)
    return res.stdout


@pytest.fixture
def identity(server, shardstore_bin, tmp_path):
    """An identity-store user allowed every S3 action by its own policy:
    (client, canonical id of its account); removed afterwards."""
    name = f"acl{uuid.uuid4().hex[:10]}"
    secret = json.loads(_admin(server, shardstore_bin, "user", "add", name, "--json"))["secretKey"]
    pol = tmp_path / "s3all.json"
    pol.write_text(json.dumps({"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "s3:*", "Resource": "*"}]}))
    _admin(server, shardstore_bin, "policy", "create", f"{name}-s3", pol)
    _admin(server, shardstore_bin, "policy", "attach", f"{name}-s3", "--user", name)
    client = boto3.session.Session(aws_access_key_id=name, aws_secret_access_key=secret,
                                   region_name=REGION).client("s3", endpoint_url=server.endpoint, config=Config())
    yield client, canonical_id(client)
    subprocess.run([str(shardstore_bin), "admin", "user", "remove", name], capture_output=True, timeout=60,
                   env=dict(os.environ, SHARDSTORE_ENDPOINT=server.endpoint,
                            SHARDSTORE_ROOT_USER=ROOT_USER, SHARDSTORE_ROOT_PASSWORD=ROOT_PASSWORD))


def test_acl_grant_to_an_identitys_account(alice_buckets, s3, s3_alice, identity):
    """An identity's canonical id is its account's (root's). In alice's
    bucket (another account) its own policy opens nothing until alice's
    ACL grants its account: FULL_CONTROL of an object then lets it read
    the object and replace the object's ACL; bucket WRITE lets it write."""
    client, account = identity
    assert account == canonical_id(s3)
    b = alice_buckets()
    s3_alice.put_object(Bucket=b, Key="doc", Body=b"shared")
    expect_error(client.get_object, "AccessDenied", 403, Bucket=b, Key="doc")
    expect_error(client.put_object_acl, "AccessDenied", 403, Bucket=b, Key="doc", ACL="private")
    s3_alice.put_object_acl(Bucket=b, Key="doc", GrantFullControl=f'id="{account}"')
    assert client.get_object(Bucket=b, Key="doc")["Body"].read() == b"shared"
    assert client.get_object_acl(Bucket=b, Key="doc")["Grants"] == [
        {"Grantee": {"Type": "CanonicalUser", "ID": account, "DisplayName": ROOT_USER}, "Permission": "FULL_CONTROL"}]
    client.put_object_acl(Bucket=b, Key="doc", GrantRead=f'id="{account}"', GrantFullControl=f'id="{canonical_id(s3_alice)}"')
    expect_error(client.put_object_acl, "AccessDenied", 403, Bucket=b, Key="doc", ACL="private")
    expect_error(client.put_object, "AccessDenied", 403, Bucket=b, Key="new", Body=b"x")
    s3_alice.put_bucket_acl(Bucket=b, GrantWrite=f'id="{account}"')
    client.put_object(Bucket=b, Key="new", Body=b"x")
    assert owner_of(client, b, "new") == account


def test_public_acl_opens_to_identities(bucket, s3, server, shardstore_bin, tmp_path):
    """A public-read object is everyone's to read, an identity without any
    policy included (AWS evaluates an account's ACLs beside its users'
    policies); a private one is not."""
    name = f"acl{uuid.uuid4().hex[:10]}"
    secret = json.loads(_admin(server, shardstore_bin, "user", "add", name, "--json"))["secretKey"]
    try:
        client = boto3.session.Session(aws_access_key_id=name, aws_secret_access_key=secret,
                                       region_name=REGION).client("s3", endpoint_url=server.endpoint, config=Config())
        s3.put_object(Bucket=bucket, Key="public", Body=b"p", ACL="public-read")
        s3.put_object(Bucket=bucket, Key="private", Body=b"q")
        assert client.get_object(Bucket=bucket, Key="public")["Body"].read() == b"p"
        expect_error(client.get_object, "AccessDenied", 403, Bucket=bucket, Key="private")
        expect_error(client.put_object, "AccessDenied", 403, Bucket=bucket, Key="public", Body=b"x")
    finally:
        _admin(server, shardstore_bin, "user", "remove", name)
