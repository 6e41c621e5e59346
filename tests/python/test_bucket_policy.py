"""Bucket policies (issue #14, first part) with boto3 and the aws cli at
default settings: a public prefix for plain HTTP clients, a user confined
to a prefix, deny over allow, and malformed documents refused."""

import json

import pytest
import requests
from botocore.exceptions import ClientError

from conftest import ALICE


def _public_policy(bucket):
    return json.dumps({
        "Version": "2012-10-17",
        "Statement": [{"Sid": "PublicDownloads", "Effect": "Allow", "Principal": "*",
                       "Action": "s3:GetObject", "Resource": f"arn:aws:s3:::{bucket}/downloads/*"}],
    })


def test_public_prefix_for_plain_http(server, s3, bucket):
    s3.put_object(Bucket=bucket, Key="downloads/tool.tar.gz", Body=b"release bytes")
    s3.put_object(Bucket=bucket, Key="internal/secret.txt", Body=b"secret")
    url = f"{server.endpoint}/{bucket}"
    assert requests.get(f"{url}/downloads/tool.tar.gz", timeout=30).status_code == 403

    s3.put_bucket_policy(Bucket=bucket, Policy=_public_policy(bucket))
    resp = requests.get(f"{url}/downloads/tool.tar.gz", timeout=30)
    assert resp.status_code == 200 and resp.content == b"release bytes"
    assert requests.get(f"{url}/internal/secret.txt", timeout=30).status_code == 403
    assert requests.get(f"{url}?list-type=2", timeout=30).status_code == 403
    assert requests.put(f"{url}/downloads/evil", data=b"x", timeout=30).status_code == 403
    assert requests.delete(f"{url}/downloads/tool.tar.gz", timeout=30).status_code == 403

    assert json.loads(s3.get_bucket_policy(Bucket=bucket)["Policy"]) == json.loads(_public_policy(bucket))
    assert s3.get_bucket_policy_status(Bucket=bucket)["PolicyStatus"]["IsPublic"] is True
    s3.delete_bucket_policy(Bucket=bucket)
    assert requests.get(f"{url}/downloads/tool.tar.gz", timeout=30).status_code == 403
    with pytest.raises(ClientError) as e:
        s3.get_bucket_policy(Bucket=bucket)
    assert e.value.response["Error"]["Code"] == "NoSuchBucketPolicy"


def test_user_confined_to_prefix_with_aws_cli(aws, s3, s3_alice, bucket, tmp_path):
    s3.put_object(Bucket=bucket, Key="team/other.txt", Body=b"not alice's")
    doc = {
        "Version": "2012-10-17",
        "Statement": [
            {"Sid": "HomeObjects", "Effect": "Allow",
             "Principal": {"AWS": f"arn:aws:iam::000000000000:user/{ALICE.access_key}"},
             "Action": ["s3:GetObject", "s3:PutObject", "s3:DeleteObject"],
             "Resource": f"arn:aws:s3:::{bucket}/home/${{aws:username}}/*"},
            {"Sid": "HomeListing", "Effect": "Allow", "Principal": {"AWS": ALICE.access_key},
             "Action": "s3:ListBucket", "Resource": f"arn:aws:s3:::{bucket}",
             "Condition": {"StringLike": {"s3:prefix": f"home/{ALICE.access_key}/*"}}},
        ],
    }
    path = tmp_path / "policy.json"
    path.write_text(json.dumps(doc))
    res = aws("s3api", "put-bucket-policy", "--bucket", bucket, "--policy", f"file://{path}")
    assert res.returncode == 0, res.stderr
    home = f"home/{ALICE.access_key}/"
    s3_alice.put_object(Bucket=bucket, Key=home + "notes.txt", Body=b"mine")
    assert s3_alice.get_object(Bucket=bucket, Key=home + "notes.txt")["Body"].read() == b"mine"
    listed = s3_alice.list_objects_v2(Bucket=bucket, Prefix=home)
    assert [o["Key"] for o in listed["Contents"]] == [home + "notes.txt"]
    denied = [
        lambda: s3_alice.put_object(Bucket=bucket, Key="team/alice.txt", Body=b"x"),
        lambda: s3_alice.get_object(Bucket=bucket, Key="team/other.txt"),
        lambda: s3_alice.list_objects_v2(Bucket=bucket),
        lambda: s3_alice.list_objects_v2(Bucket=bucket, Prefix="team/"),
        lambda: s3_alice.put_object(Bucket=bucket, Key="home/someone-else/x", Body=b"x"),
        lambda: s3_alice.get_bucket_policy(Bucket=bucket),
    ]
    for call in denied:
        with pytest.raises(ClientError) as e:
            call()
        assert e.value.response["Error"]["Code"] == "AccessDenied"
    s3_alice.delete_object(Bucket=bucket, Key=home + "notes.txt")


def test_deny_beats_allow_and_malformed_policies(s3, s3_alice, bucket):
    doc = {
        "Version": "2012-10-17",
        "Statement": [
            {"Effect": "Allow", "Principal": "*", "Action": ["s3:GetObject", "s3:PutObject"], "Resource": f"arn:aws:s3:::{bucket}/*"},
            {"Effect": "Deny", "Principal": "*", "Action": "s3:PutObject", "Resource": f"arn:aws:s3:::{bucket}/readonly/*"},
        ],
    }
    s3.put_bucket_policy(Bucket=bucket, Policy=json.dumps(doc))
    s3_alice.put_object(Bucket=bucket, Key="shared/a", Body=b"a")
    with pytest.raises(ClientError) as e:
        s3_alice.put_object(Bucket=bucket, Key="readonly/a", Body=b"a")
    assert e.value.response["Error"]["Code"] == "AccessDenied"
    # The root user is the administrator: no bucket policy binds it (the
    # README says so); a bucket owner who is not root is bound, which the
    # s3api unit tests pin.
    s3.put_object(Bucket=bucket, Key="readonly/a", Body=b"by root")

    stored = s3.get_bucket_policy(Bucket=bucket)["Policy"]
    bad_documents = [
        "{not json",
        json.dumps({"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": "*",
                    "Action": "s3:GetObjekt", "Resource": f"arn:aws:s3:::{bucket}/*"}]}),
        json.dumps({"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": "*",
                    "Action": "s3:GetObject", "Resource": f"arn:aws:s3:::{bucket}/*",
                    "Condition": {"StringEqualsMaybe": {"s3:prefix": "a"}}}]}),
        json.dumps({"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": "*",
                    "Action": "s3:GetObject", "Resource": "arn:aws:s3:::another-bucket/*"}]}),
        json.dumps({"Version": "2012-10-17", "Statement": [{"Sid": "x" * 21000, "Effect": "Allow", "Principal": "*",
                    "Action": "s3:GetObject", "Resource": f"arn:aws:s3:::{bucket}/*"}]}),
    ]
    for bad in bad_documents:
        with pytest.raises(ClientError) as e:
            s3.put_bucket_policy(Bucket=bucket, Policy=bad)
        assert e.value.response["Error"]["Code"] == "MalformedPolicy", bad[:80]
        assert e.value.response["ResponseMetadata"]["HTTPStatusCode"] == 400
    assert s3.get_bucket_policy(Bucket=bucket)["Policy"] == stored
    s3.delete_bucket_policy(Bucket=bucket)
