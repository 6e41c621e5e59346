"""Canned ACLs and x-amz-expected-bucket-owner with boto3 against the real
server (issue #12, "Security first").

A bucket's ACL decides who may list it (READ) and write or delete objects
in it (WRITE); an object's own ACL decides who may read it (GET, HEAD, copy
source). A public-read bucket therefore lists its keys to anyone but does
not open its private objects. Alice owns the buckets, Bob is another
authenticated user, and anonymous requests are unsigned."""

from __future__ import annotations

import pytest
from botocore.exceptions import ClientError

from conftest import empty_and_delete_bucket, unique_bucket_name
from s3util import error_code, http_status

ACLS = ["private", "public-read", "public-read-write", "authenticated-read"]

# What each caller may do, by bucket ACL and object ACL, written out from
# S3's "Canned ACL" table (private: owner only; public-read: AllUsers READ;
# public-read-write: AllUsers READ and WRITE; authenticated-read:
# AuthenticatedUsers READ). Letters: L list, G get, H head, P put, D delete,
# C copy source; "-" means 403 AccessDenied.
MATRIX = {
    ("private", "private"): ("LGHPDC", "------", "------"),
    ("private", "public-read"): ("LGHPDC", "-GH--C", "-GH--C"),
    ("private", "public-read-write"): ("LGHPDC", "-GH--C", "-GH--C"),
    ("private", "authenticated-read"): ("LGHPDC", "-GH--C", "------"),
    ("public-read", "private"): ("LGHPDC", "L-----", "L-----"),
    ("public-read", "public-read"): ("LGHPDC", "LGH--C", "LGH--C"),
    ("public-read", "public-read-write"): ("LGHPDC", "LGH--C", "LGH--C"),
    ("public-read", "authenticated-read"): ("LGHPDC", "LGH--C", "L-----"),
    ("public-read-write", "private"): ("LGHPDC", "L--PD-", "L--PD-"),
    ("public-read-write", "public-read"): ("LGHPDC", "LGHPDC", "LGHPDC"),
    ("public-read-write", "public-read-write"): ("LGHPDC", "LGHPDC", "LGHPDC"),
    ("public-read-write", "authenticated-read"): ("LGHPDC", "LGHPDC", "L--PD-"),
    ("authenticated-read", "private"): ("LGHPDC", "L-----", "------"),
    ("authenticated-read", "public-read"): ("LGHPDC", "LGH--C", "-GH--C"),
    ("authenticated-read", "public-read-write"): ("LGHPDC", "LGH--C", "-GH--C"),
    ("authenticated-read", "authenticated-read"): ("LGHPDC", "LGH--C", "------"),
}


def assert_denied(call, head: bool = False):
    with pytest.raises(ClientError) as exc:
        call()
    assert http_status(exc.value) == 403, exc.value.response
    # HEAD answers carry no body, so boto3 reports the status as the code.
    assert error_code(exc.value) == ("403" if head else "AccessDenied"), exc.value.response


@pytest.fixture
def alice_bucket(request, s3, s3_alice):
    """Make buckets owned by Alice with a canned ACL; deleted after the test."""
    made = []

    def make(acl: str, hint: str = "") -> str:
        name = unique_bucket_name(hint or request.node.name.removeprefix("test_"))
        s3_alice.create_bucket(Bucket=name, ACL=acl)
        made.append(name)
        return name

    yield make
    for name in made:
        try:
            empty_and_delete_bucket(s3, name)  # root may delete what others wrote
        except Exception:  # cleanup must never mask the test's own outcome
            pass


def test_private_object_in_public_read_bucket_is_not_readable(alice_bucket, s3_alice, s3_bob, s3_anon):
    """The reported defect: bucket public-read, object private."""
    bucket = alice_bucket("public-read")
    s3_alice.put_object(Bucket=bucket, Key="secret.txt", Body=b"top secret", ACL="private")

    for client in (s3_anon, s3_bob):
        assert_denied(lambda: client.get_object(Bucket=bucket, Key="secret.txt"))
        assert_denied(lambda: client.head_object(Bucket=bucket, Key="secret.txt"), head=True)
        # Conditions and ranges do not get around it either.
        assert_denied(lambda: client.get_object(Bucket=bucket, Key="secret.txt", Range="bytes=0-3"))
        assert_denied(lambda: client.get_object(Bucket=bucket, Key="secret.txt", IfNoneMatch='"x"'))
        # Listing is what the bucket's READ grant allows.
        keys = [o["Key"] for o in client.list_objects_v2(Bucket=bucket)["Contents"]]
        assert keys == ["secret.txt"]
        # A missing key is NoSuchKey to someone who may list.
        with pytest.raises(ClientError) as exc:
            client.get_object(Bucket=bucket, Key="missing")
        assert error_code(exc.value) == "NoSuchKey"

    # Nor can Bob copy it out into a bucket of his own.
    mine = unique_bucket_name("bob-copy")
    s3_bob.create_bucket(Bucket=mine)
    try:
        assert_denied(
            lambda: s3_bob.copy_object(Bucket=mine, Key="stolen", CopySource={"Bucket": bucket, "Key": "secret.txt"})
        )
        assert s3_bob.list_objects_v2(Bucket=mine)["KeyCount"] == 0
    finally:
        empty_and_delete_bucket(s3_bob, mine)

    # The owner still reads it.
    assert s3_alice.get_object(Bucket=bucket, Key="secret.txt")["Body"].read() == b"top secret"


def test_public_read_object_in_private_bucket_is_readable(alice_bucket, s3_alice, s3_bob, s3_anon):
    bucket = alice_bucket("private")
    s3_alice.put_object(Bucket=bucket, Key="open.txt", Body=b"for everyone", ACL="public-read")
    s3_alice.put_object(Bucket=bucket, Key="closed.txt", Body=b"not for you")
    for client in (s3_anon, s3_bob):
        assert client.get_object(Bucket=bucket, Key="open.txt")["Body"].read() == b"for everyone"
        assert client.head_object(Bucket=bucket, Key="open.txt")["ContentLength"] == len(b"for everyone")
        assert_denied(lambda: client.get_object(Bucket=bucket, Key="closed.txt"))
        assert_denied(lambda: client.list_objects_v2(Bucket=bucket))
        # Without list permission a missing key is AccessDenied, not NoSuchKey.
        assert_denied(lambda: client.get_object(Bucket=bucket, Key="missing"))


def test_objects_written_by_another_user_belong_to_the_writer(alice_bucket, s3_alice, s3_bob, s3_anon):
    """In a public-read-write bucket Bob's private object is Bob's: Alice, the
    bucket owner, may delete it but not read it unless its ACL grants her."""
    bucket = alice_bucket("public-read-write")
    s3_bob.put_object(Bucket=bucket, Key="bobs.txt", Body=b"bob's", ACL="private")
    s3_bob.put_object(Bucket=bucket, Key="shared.txt", Body=b"shared", ACL="bucket-owner-read")
    assert s3_bob.get_object(Bucket=bucket, Key="bobs.txt")["Body"].read() == b"bob's"
    assert_denied(lambda: s3_alice.get_object(Bucket=bucket, Key="bobs.txt"))
    assert_denied(lambda: s3_alice.get_object_acl(Bucket=bucket, Key="bobs.txt"))
    assert_denied(lambda: s3_anon.get_object(Bucket=bucket, Key="bobs.txt"))
    assert s3_alice.get_object(Bucket=bucket, Key="shared.txt")["Body"].read() == b"shared"
    owner = s3_bob.get_object_acl(Bucket=bucket, Key="bobs.txt")["Owner"]["ID"]
    assert owner == s3_bob.list_buckets()["Owner"]["ID"]
    s3_alice.delete_object(Bucket=bucket, Key="bobs.txt")
    with pytest.raises(ClientError) as exc:
        s3_bob.get_object(Bucket=bucket, Key="bobs.txt")
    assert error_code(exc.value) == "NoSuchKey"


def test_delete_objects_is_decided_per_key(alice_bucket, s3_alice, s3_anon):
    bucket = alice_bucket("public-read")
    for k in ("a", "b"):
        s3_alice.put_object(Bucket=bucket, Key=k, Body=k.encode())
    res = s3_anon.delete_objects(Bucket=bucket, Delete={"Objects": [{"Key": "a"}, {"Key": "b"}]})
    assert sorted((e["Key"], e["Code"]) for e in res.get("Errors", [])) == [("a", "AccessDenied"), ("b", "AccessDenied")]
    assert not res.get("Deleted")
    assert [o["Key"] for o in s3_alice.list_objects_v2(Bucket=bucket)["Contents"]] == ["a", "b"]


@pytest.mark.parametrize("bucket_acl,object_acl", list(MATRIX), ids=[f"{b}+{o}" for b, o in MATRIX])
def test_canned_acl_matrix(alice_bucket, s3, s3_alice, s3_bob, s3_anon, bucket_acl, object_acl):
    bucket = alice_bucket(bucket_acl, "matrix")
    # Copies land in a public-read-write bucket so only the source is in question.
    dst = alice_bucket("public-read-write", "matrix-dst")
    callers = {"owner": s3_alice, "other": s3_bob, "anon": s3_anon}
    for name in callers:
        for k in ("obj", "del"):
            s3_alice.put_object(Bucket=bucket, Key=f"{k}-{name}", Body=b"payload", ACL=object_acl)
    problems = []
    for (name, client), want in zip(callers.items(), MATRIX[(bucket_acl, object_acl)]):
        ops = {
            "L": lambda: client.list_objects_v2(Bucket=bucket),
            "G": lambda: client.get_object(Bucket=bucket, Key=f"obj-{name}")["Body"].read(),
            "H": lambda: client.head_object(Bucket=bucket, Key=f"obj-{name}"),
            "P": lambda: client.put_object(Bucket=bucket, Key=f"new-{name}", Body=b"new"),
            "D": lambda: client.delete_object(Bucket=bucket, Key=f"del-{name}"),
            "C": lambda: client.copy_object(Bucket=dst, Key=f"copy-{name}", CopySource={"Bucket": bucket, "Key": f"obj-{name}"}),
        }
        for letter, allowed in zip("LGHPDC", want):
            try:
                ops[letter]()
                got = letter
            except ClientError as e:
                if http_status(e) != 403 or error_code(e) not in ("AccessDenied", "403"):
                    problems.append(f"{name} {letter}: unexpected {e.response}")
                    continue
                got = "-"
            if got != allowed:
                problems.append(f"{name} {letter}: {'allowed' if got != '-' else 'denied'}, want the opposite")
    assert not problems, problems
    # What was refused left nothing behind; what was allowed took effect.
    keys = {o["Key"] for o in s3.list_objects_v2(Bucket=bucket).get("Contents", [])}
    copies = {o["Key"] for o in s3.list_objects_v2(Bucket=dst).get("Contents", [])}
    for name, want in zip(callers, MATRIX[(bucket_acl, object_acl)]):
        assert (f"new-{name}" in keys) == ("P" in want), (name, keys)
        assert (f"del-{name}" in keys) == ("D" not in want), (name, keys)
        assert (f"copy-{name}" in copies) == ("C" in want), (name, copies)


def test_expected_bucket_owner(alice_bucket, s3_alice, s3_bob):
    bucket = alice_bucket("private")
    s3_alice.put_object(Bucket=bucket, Key="k", Body=b"original")
    alice_id = s3_alice.list_buckets()["Owner"]["ID"]
    bob_id = s3_bob.list_buckets()["Owner"]["ID"]
    assert alice_id == s3_alice.get_bucket_acl(Bucket=bucket)["Owner"]["ID"]

    for wrong in (bob_id, "111122223333"):
        assert_denied(lambda: s3_alice.put_object(Bucket=bucket, Key="k", Body=b"changed", ExpectedBucketOwner=wrong))
        assert_denied(lambda: s3_alice.delete_object(Bucket=bucket, Key="k", ExpectedBucketOwner=wrong))
        assert_denied(lambda: s3_alice.get_object(Bucket=bucket, Key="k", ExpectedBucketOwner=wrong))
        assert_denied(lambda: s3_alice.head_object(Bucket=bucket, Key="k", ExpectedBucketOwner=wrong), head=True)
        assert_denied(lambda: s3_alice.list_objects_v2(Bucket=bucket, ExpectedBucketOwner=wrong))
        assert_denied(lambda: s3_alice.put_bucket_acl(Bucket=bucket, ACL="public-read", ExpectedBucketOwner=wrong))
        assert_denied(lambda: s3_alice.delete_bucket(Bucket=bucket, ExpectedBucketOwner=wrong))
        assert_denied(
            lambda: s3_alice.copy_object(
                Bucket=bucket, Key="copy", CopySource={"Bucket": bucket, "Key": "k"}, ExpectedSourceBucketOwner=wrong
            )
        )

    # Nothing changed.
    assert s3_alice.get_object(Bucket=bucket, Key="k", ExpectedBucketOwner=alice_id)["Body"].read() == b"original"
    assert [o["Key"] for o in s3_alice.list_objects_v2(Bucket=bucket)["Contents"]] == ["k"]
    grants = s3_alice.get_bucket_acl(Bucket=bucket)["Grants"]
    assert [g["Permission"] for g in grants] == ["FULL_CONTROL"], grants

    # The right owner goes through.
    s3_alice.put_object(Bucket=bucket, Key="k", Body=b"updated", ExpectedBucketOwner=alice_id)
    s3_alice.copy_object(
        Bucket=bucket,
        Key="copy",
        CopySource={"Bucket": bucket, "Key": "k"},
        ExpectedBucketOwner=alice_id,
        ExpectedSourceBucketOwner=alice_id,
    )
    assert s3_alice.get_object(Bucket=bucket, Key="copy")["Body"].read() == b"updated"
