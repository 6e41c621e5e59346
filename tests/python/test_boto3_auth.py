"""Identity and access with boto3: wrong credentials, presigned URLs fetched
with requests, a second user from the --users file, and anonymous access
after a public-read ACL."""

from __future__ import annotations

import time
import urllib.parse

import pytest
import requests
from botocore.exceptions import ClientError

from conftest import ALICE, Creds, empty_and_delete_bucket, unique_bucket_name
from s3util import error_code, http_status, random_bytes


def test_wrong_secret_is_signature_mismatch(server, bucket):
    bad = server.client(Creds(server.root.access_key, "not-the-secret"))
    with pytest.raises(ClientError) as exc:
        bad.list_objects_v2(Bucket=bucket)
    assert http_status(exc.value) == 403
    assert error_code(exc.value) == "SignatureDoesNotMatch", exc.value.response
    with pytest.raises(ClientError) as exc:
        bad.put_object(Bucket=bucket, Key="x", Body=b"x")
    assert error_code(exc.value) == "SignatureDoesNotMatch"
    assert server.client().list_objects_v2(Bucket=bucket)["KeyCount"] == 0


def test_unknown_access_key(server, bucket):
    bad = server.client(Creds("NOSUCHACCESSKEY0000", "whatever-secret"))
    with pytest.raises(ClientError) as exc:
        bad.list_buckets()
    assert http_status(exc.value) == 403
    assert error_code(exc.value) == "InvalidAccessKeyId", exc.value.response


def test_anonymous_denied_on_private_bucket(s3, s3_anon, bucket):
    s3.put_object(Bucket=bucket, Key="private", Body=b"secret")
    for call in (
        lambda: s3_anon.get_object(Bucket=bucket, Key="private"),
        lambda: s3_anon.list_objects_v2(Bucket=bucket),
        lambda: s3_anon.put_object(Bucket=bucket, Key="anon", Body=b"x"),
    ):
        with pytest.raises(ClientError) as exc:
            call()
        assert http_status(exc.value) == 403
        assert error_code(exc.value) == "AccessDenied", exc.value.response


# boto3's generate_presigned_url and `aws s3 presign` (cli v1) sign with the
# SigV2 query form (AWSAccessKeyId, Signature, Expires) by default; SigV4
# (X-Amz-Signature) when the client is configured with signature_version
# s3v4. Users get the default, so both must work.
PRESIGN_STYLES = {
    "default-config": ({}, "Signature="),
    "s3v4": ({"signature_version": "s3v4"}, "X-Amz-Signature="),
}

@pytest.fixture(params=list(PRESIGN_STYLES))
def presigner(request, server):
    config, marker = PRESIGN_STYLES[request.param]
    return server.client(**config), marker


def test_presigned_get_and_put(presigner, s3, bucket):
    signer, marker = presigner
    data = random_bytes(200 * 1024)
    s3.put_object(Bucket=bucket, Key="dir/presigned get.bin", Body=data)
    url = signer.generate_presigned_url(
        "get_object", Params={"Bucket": bucket, "Key": "dir/presigned get.bin"}, ExpiresIn=300
    )
    assert marker in url, url
    resp = requests.get(url, timeout=30)
    assert resp.status_code == 200, resp.text
    assert resp.content == data

    put_url = signer.generate_presigned_url("put_object", Params={"Bucket": bucket, "Key": "uploaded"}, ExpiresIn=300)
    resp = requests.put(put_url, data=b"via presigned put", timeout=30)
    assert resp.status_code == 200, resp.text
    uploaded = s3.get_object(Bucket=bucket, Key="uploaded")
    assert uploaded["Body"].read() == b"via presigned put"
    # A SigV2 URL's Expires is the URL's expiry, never the object's header.
    assert "Expires" not in uploaded and "ExpiresString" not in uploaded, uploaded

    head_url = signer.generate_presigned_url("head_object", Params={"Bucket": bucket, "Key": "uploaded"}, ExpiresIn=300)
    assert requests.head(head_url, timeout=30).status_code == 200


def test_presigned_tampered_and_expired(presigner, s3, bucket):
    signer, _ = presigner
    s3.put_object(Bucket=bucket, Key="a", Body=b"a")
    s3.put_object(Bucket=bucket, Key="b", Body=b"b")
    url = signer.generate_presigned_url("get_object", Params={"Bucket": bucket, "Key": "a"}, ExpiresIn=300)
    # Point the signature at another key: the signature no longer matches.
    tampered = url.replace(f"/{bucket}/a?", f"/{bucket}/b?")
    assert tampered != url
    resp = requests.get(tampered, timeout=30)
    assert resp.status_code == 403
    assert "<Code>SignatureDoesNotMatch</Code>" in resp.text, resp.text
    # Change the signature itself.
    parts = urllib.parse.urlsplit(url)
    query = urllib.parse.parse_qs(parts.query)
    name = "X-Amz-Signature" if "X-Amz-Signature" in query else "Signature"
    sig = query[name][0]
    # Same alphabet (lowercase hex for SigV4), different value.
    query[name] = [("a" if sig[0] != "a" else "b") + sig[1:]]
    forged = urllib.parse.urlunsplit(parts._replace(query=urllib.parse.urlencode(query, doseq=True)))
    resp = requests.get(forged, timeout=30)
    assert resp.status_code == 403 and "SignatureDoesNotMatch" in resp.text, resp.text

    short = signer.generate_presigned_url("get_object", Params={"Bucket": bucket, "Key": "a"}, ExpiresIn=1)
    time.sleep(2.1)
    resp = requests.get(short, timeout=30)
    assert resp.status_code == 403
    assert "<Code>AccessDenied</Code>" in resp.text, resp.text


def test_second_user_is_isolated(s3, s3_alice, bucket):
    s3.put_object(Bucket=bucket, Key="root-only", Body=b"root data")
    # Alice does not see or touch root's bucket.
    assert bucket not in [b["Name"] for b in s3_alice.list_buckets().get("Buckets", [])]
    denied = [
        lambda: s3_alice.get_object(Bucket=bucket, Key="root-only"),
        lambda: s3_alice.list_objects_v2(Bucket=bucket),
        lambda: s3_alice.put_object(Bucket=bucket, Key="alice-was-here", Body=b"x"),
        lambda: s3_alice.delete_object(Bucket=bucket, Key="root-only"),
        lambda: s3_alice.delete_bucket(Bucket=bucket),
    ]
    for call in denied:
        with pytest.raises(ClientError) as exc:
            call()
        assert http_status(exc.value) == 403
        assert error_code(exc.value) == "AccessDenied", exc.value.response
    assert s3.get_object(Bucket=bucket, Key="root-only")["Body"].read() == b"root data"
    assert [o["Key"] for o in s3.list_objects_v2(Bucket=bucket)["Contents"]] == ["root-only"]

    # Alice can own a bucket of her own.
    mine = unique_bucket_name("alice")
    s3_alice.create_bucket(Bucket=mine)
    try:
        s3_alice.put_object(Bucket=mine, Key="hers", Body=b"alice data")
        assert mine in [b["Name"] for b in s3_alice.list_buckets()["Buckets"]]
        owner = s3_alice.get_bucket_acl(Bucket=mine)["Owner"]
        assert owner.get("ID")
        assert s3_alice.get_object(Bucket=mine, Key="hers")["Body"].read() == b"alice data"
    finally:
        empty_and_delete_bucket(s3_alice, mine)


def test_public_read_acl_opens_reads_only(s3, s3_anon, s3_alice, bucket):
    s3.put_object(Bucket=bucket, Key="doc.txt", Body=b"public soon")
    with pytest.raises(ClientError) as exc:
        s3_anon.get_object(Bucket=bucket, Key="doc.txt")
    assert error_code(exc.value) == "AccessDenied"

    s3.put_object_acl(Bucket=bucket, Key="doc.txt", ACL="public-read")
    grants = s3.get_object_acl(Bucket=bucket, Key="doc.txt")["Grants"]
    assert any(
        g["Grantee"].get("URI") == "http://acs.amazonaws.com/groups/global/AllUsers" and g["Permission"] == "READ"
        for g in grants
    ), grants
    assert s3_anon.get_object(Bucket=bucket, Key="doc.txt")["Body"].read() == b"public soon"
    assert s3_alice.get_object(Bucket=bucket, Key="doc.txt")["Body"].read() == b"public soon"

    s3.put_bucket_acl(Bucket=bucket, ACL="public-read")
    assert [o["Key"] for o in s3_anon.list_objects_v2(Bucket=bucket)["Contents"]] == ["doc.txt"]

    # Reading is all public-read allows.
    for call in (
        lambda: s3_anon.put_object(Bucket=bucket, Key="anon-write", Body=b"x"),
        lambda: s3_anon.delete_object(Bucket=bucket, Key="doc.txt"),
        lambda: s3_alice.put_object(Bucket=bucket, Key="alice-write", Body=b"x"),
    ):
        with pytest.raises(ClientError) as exc:
            call()
        assert error_code(exc.value) == "AccessDenied", exc.value.response
    assert [o["Key"] for o in s3.list_objects_v2(Bucket=bucket)["Contents"]] == ["doc.txt"]

    # Back to private: anonymous reads stop.
    s3.put_object_acl(Bucket=bucket, Key="doc.txt", ACL="private")
    s3.put_bucket_acl(Bucket=bucket, ACL="private")
    with pytest.raises(ClientError) as exc:
        s3_anon.get_object(Bucket=bucket, Key="doc.txt")
    assert error_code(exc.value) == "AccessDenied"


def test_alice_identity_from_users_file(s3_alice):
    # The display name from the --users file is the owner's name.
    owner = s3_alice.list_buckets().get("Owner", {})
    assert owner.get("DisplayName") in (ALICE.display_name, ALICE.access_key), owner
