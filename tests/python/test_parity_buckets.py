"""S3 parity for buckets (issue #12): clients configured for any region,
CreateBucket's answers, ListBuckets paging, presigned URL expiry bounds.

Most tests use the shared server, which is started without --region and so
accepts any region. `strict_server` starts a second one with
--region us-east-1, which must behave like a regional S3 endpoint.
"""

from __future__ import annotations

import time
import urllib.error
import urllib.request

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError

import conftest
from conftest import ALICE, BOB, ROOT_PASSWORD, ROOT_USER, Creds, empty_and_delete_bucket, unique_bucket_name


def region_client(server, region: str, creds: Creds | None = None, **config):
    """A boto3 client at default settings, configured for `region`."""
    creds = creds or Creds(ROOT_USER, ROOT_PASSWORD)
    session = boto3.session.Session(
        aws_access_key_id=creds.access_key, aws_secret_access_key=creds.secret_key, region_name=region
    )
    return session.client("s3", endpoint_url=server.endpoint, config=Config(**config) if config else None)


def error_code(e: ClientError) -> str:
    return e.response["Error"]["Code"]


def http_status(e: ClientError) -> int:
    return e.response["ResponseMetadata"]["HTTPStatusCode"]


def fetch(url: str, method: str = "GET", data: bytes | None = None) -> tuple[int, bytes]:
    req = urllib.request.Request(url, method=method, data=data)
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


@pytest.fixture
def cleanup(s3):
    names: list[str] = []
    yield names
    for name in names:
        try:
            empty_and_delete_bucket(s3, name)
        except Exception:
            pass


@pytest.fixture(scope="module")
def strict_server(shardstore_bin, tmp_path_factory):
    srv = conftest.Server(shardstore_bin, tmp_path_factory.mktemp("strict"), extra_args=["--region", "us-east-1"])
    srv.start()
    yield srv
    srv.stop()


@pytest.mark.parametrize("region", ["eu-west-1", "eu-central-1"])
def test_client_in_another_region(server, cleanup, region):
    c = region_client(server, region)
    name = unique_bucket_name("region")
    cleanup.append(name)
    c.create_bucket(Bucket=name, CreateBucketConfiguration={"LocationConstraint": region})
    c.put_object(Bucket=name, Key="k", Body=b"regional body" * 1000)
    assert c.get_object(Bucket=name, Key="k")["Body"].read() == b"regional body" * 1000
    assert c.get_bucket_location(Bucket=name)["LocationConstraint"] == region
    head = c.head_bucket(Bucket=name)
    assert head["ResponseMetadata"]["HTTPHeaders"]["x-amz-bucket-region"] == region
    listed = {b["Name"]: b.get("BucketRegion") for b in c.list_buckets(Prefix=name)["Buckets"]}
    assert listed == {name: region}
    # Presigned URLs in both of boto3's forms, scoped to the region.
    for sig in (None, "s3v4"):
        signer = region_client(server, region, signature_version=sig) if sig else c
        url = signer.generate_presigned_url("get_object", Params={"Bucket": name, "Key": "k"}, ExpiresIn=300)
        assert fetch(url) == (200, b"regional body" * 1000)


def test_aws_cli_mb_in_another_region(server, aws, cleanup):
    name = unique_bucket_name("cli-region")
    cleanup.append(name)
    env = {"AWS_DEFAULT_REGION": "eu-central-1"}
    aws("s3", "mb", f"s3://{name}", env=env)  # sends LocationConstraint eu-central-1
    out = aws("s3api", "get-bucket-location", "--bucket", name, env=env)
    assert '"eu-central-1"' in out.stdout
    aws("s3", "cp", "-", f"s3://{name}/k", env=env)


def test_no_constraint_is_us_east_1(s3, cleanup):
    name = unique_bucket_name("plain")
    cleanup.append(name)
    s3.create_bucket(Bucket=name)
    assert s3.get_bucket_location(Bucket=name).get("LocationConstraint") in (None, "")
    with pytest.raises(ClientError) as e:
        s3.create_bucket(Bucket=unique_bucket_name("bad"), CreateBucketConfiguration={"LocationConstraint": "mars-1x"})
    assert error_code(e.value) == "InvalidLocationConstraint"


def test_create_bucket_again(server, s3, cleanup):
    alice = server.client(ALICE)
    us, eu = unique_bucket_name("again-us"), unique_bucket_name("again-eu")
    cleanup.extend([us, eu])
    alice.create_bucket(Bucket=us, ACL="public-read")
    region_client(server, "eu-west-1", ALICE).create_bucket(
        Bucket=eu, CreateBucketConfiguration={"LocationConstraint": "eu-west-1"}
    )
    # Your own us-east-1 bucket as it is: 200, and nothing about it changes;
    # with another ACL (none is private): 409 BucketAlreadyExists, as the
    # s3-tests expect (docs/conformance.md, "ACL answers and object
    # ownership").
    assert alice.create_bucket(Bucket=us, ACL="public-read")["ResponseMetadata"]["HTTPStatusCode"] == 200
    with pytest.raises(ClientError) as e:
        alice.create_bucket(Bucket=us)
    assert (error_code(e.value), http_status(e.value)) == ("BucketAlreadyExists", 409)
    grants = alice.get_bucket_acl(Bucket=us)["Grants"]
    assert any(g["Permission"] == "READ" for g in grants), grants
    assert alice.get_bucket_location(Bucket=us).get("LocationConstraint") in (None, "")
    # Your own bucket elsewhere: BucketAlreadyOwnedByYou.
    with pytest.raises(ClientError) as e:
        region_client(server, "eu-west-1", ALICE).create_bucket(
            Bucket=eu, CreateBucketConfiguration={"LocationConstraint": "eu-west-1"}
        )
    assert (error_code(e.value), http_status(e.value)) == ("BucketAlreadyOwnedByYou", 409)
    # Someone else's, in any region, root included: BucketAlreadyExists.
    for client in (server.client(BOB), s3):
        for name in (us, eu):
            with pytest.raises(ClientError) as e:
                client.create_bucket(Bucket=name)
            assert (error_code(e.value), http_status(e.value)) == ("BucketAlreadyExists", 409)
    assert alice.get_bucket_location(Bucket=eu)["LocationConstraint"] == "eu-west-1"
    for name in (us, eu):  # alice cleans up her own buckets
        alice.delete_bucket(Bucket=name)
    cleanup.clear()


def test_list_buckets_paging(server, cleanup):
    bob = server.client(BOB)
    prefix = unique_bucket_name("page")
    names = [f"{prefix}-{i}" for i in range(5)]
    for n in names:
        bob.create_bucket(Bucket=n)
    try:
        seen, pages = [], 0
        for page in bob.get_paginator("list_buckets").paginate(Prefix=prefix, PaginationConfig={"PageSize": 2}):
            pages += 1
            assert page["Prefix"] == prefix
            seen += [b["Name"] for b in page["Buckets"]]
        assert (seen, pages) == (names, 3)
        first = bob.list_buckets(MaxBuckets=4, Prefix=prefix)
        assert [b["Name"] for b in first["Buckets"]] == names[:4] and first["ContinuationToken"]
        rest = bob.list_buckets(MaxBuckets=4, Prefix=prefix, ContinuationToken=first["ContinuationToken"])
        assert [b["Name"] for b in rest["Buckets"]] == names[4:] and "ContinuationToken" not in rest
        assert all(b["BucketRegion"] == "us-east-1" for b in first["Buckets"])
        # (botocore itself refuses MaxBuckets below 1.)
        with pytest.raises(ClientError) as e:
            bob.list_buckets(MaxBuckets=10001)
        assert (error_code(e.value), http_status(e.value)) == ("InvalidArgument", 400)
        with pytest.raises(ClientError) as e:
            bob.list_buckets(ContinuationToken="garbage!")
        assert error_code(e.value) == "InvalidArgument"
    finally:
        for n in names:
            bob.delete_bucket(Bucket=n)


def test_presigned_expiry_bounds(server, s3, bucket):
    v4 = server.client(signature_version="s3v4")
    s3.put_object(Bucket=bucket, Key="k", Body=b"x")
    # botocore signs whatever ExpiresIn it is given; S3 refuses over a week.
    url = v4.generate_presigned_url("get_object", Params={"Bucket": bucket, "Key": "k"}, ExpiresIn=604801)
    status, body = fetch(url)
    assert status == 400 and b"AuthorizationQueryParametersError" in body and b"must be less than 604800 seconds" in body, body
    # Zero is within S3's bounds: a URL valid for no time, already expired.
    url = v4.generate_presigned_url("get_object", Params={"Bucket": bucket, "Key": "k"}, ExpiresIn=0)
    status, body = fetch(url)
    assert status == 403 and b"AccessDenied" in body and b"Request has expired" in body, body
    url = v4.generate_presigned_url("get_object", Params={"Bucket": bucket, "Key": "k"}, ExpiresIn=604800)
    assert fetch(url) == (200, b"x")
    # boto3's default (SigV2) form: Expires is a date, held to a week too.
    url = s3.generate_presigned_url("get_object", Params={"Bucket": bucket, "Key": "k"}, ExpiresIn=8 * 86400)
    assert "Expires=" in url and "X-Amz-Expires" not in url, url
    status, body = fetch(url)
    assert status == 400 and b"AuthorizationQueryParametersError" in body and b"less than a week" in body, body
    url = s3.generate_presigned_url("get_object", Params={"Bucket": bucket, "Key": "k"}, ExpiresIn=604800)
    assert fetch(url) == (200, b"x")
    # Expired, for PUT as for GET, in both of boto3's presigned forms.
    urls = []
    for signer in (s3, v4):
        urls.append(("PUT", signer.generate_presigned_url("put_object", Params={"Bucket": bucket, "Key": "late"}, ExpiresIn=1)))
        urls.append(("GET", signer.generate_presigned_url("get_object", Params={"Bucket": bucket, "Key": "k"}, ExpiresIn=1)))
    time.sleep(2.1)
    for method, url in urls:
        status, body = fetch(url, method, b"late body" if method == "PUT" else None)
        assert status == 403 and b"AccessDenied" in body and b"Request has expired" in body, (method, body)
    with pytest.raises(ClientError):
        s3.head_object(Bucket=bucket, Key="late")


def test_strict_region_server(strict_server):
    eu = region_client(strict_server, "eu-west-1")
    with pytest.raises(ClientError) as e:
        eu.list_buckets()
    assert (error_code(e.value), http_status(e.value)) == ("AuthorizationHeaderMalformed", 400)
    us = region_client(strict_server, "us-east-1")
    name = unique_bucket_name("strict")
    with pytest.raises(ClientError) as e:
        us.create_bucket(Bucket=name, CreateBucketConfiguration={"LocationConstraint": "eu-west-1"})
    assert (error_code(e.value), http_status(e.value)) == ("IllegalLocationConstraintException", 400)
    us.create_bucket(Bucket=name)
    us.put_object(Bucket=name, Key="k", Body=b"v")
    assert us.get_bucket_location(Bucket=name).get("LocationConstraint") in (None, "")
    url = region_client(strict_server, "eu-west-1", signature_version="s3v4").generate_presigned_url(
        "get_object", Params={"Bucket": name, "Key": "k"}, ExpiresIn=60
    )
    status, body = fetch(url)
    assert status == 400 and b"AuthorizationQueryParametersError" in body, body
