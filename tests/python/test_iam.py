"""Identity and access (issue #14) with boto3 and the aws cli at default
settings against the real binary: users, groups and managed policies made
with `shardstore admin`, a user confined to a prefix, a disabled user, an
access key that expires, AssumeRole sessions, deny over allow, delegated
administration, and hostile policy documents that change nothing."""

from __future__ import annotations

import json
import os
import subprocess
import time
import uuid

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError

from conftest import REGION, ROOT_PASSWORD, ROOT_USER


def _admin(server, binary, *args, creds=None, check=True, stdin=None):
    """Run `shardstore admin ARGS` against the server (as root unless
    creds = (access key, secret) are given)."""
    env = dict(os.environ, SHARDSTORE_ENDPOINT=server.endpoint,
               SHARDSTORE_ROOT_USER=ROOT_USER, SHARDSTORE_ROOT_PASSWORD=ROOT_PASSWORD)
    if creds:
        env.update(SHARDSTORE_ACCESS_KEY=creds[0], SHARDSTORE_SECRET_KEY=creds[1])
    res = subprocess.run([str(binary), "admin", *map(str, args)], env=env, capture_output=True,
                         text=True, timeout=60, input=stdin)
    if check and res.returncode != 0:
        pytest.fail(f"shardstore admin {' '.join(map(str, args))}: exit {res.returncode}\n{res.stdout}{res.stderr}",
                    pytrace=False)
    return res


def _admin_json(server, binary, *args, **kw):
    return json.loads(_admin(server, binary, *args, "--json", **kw).stdout)


def _client(server, ak, sk, token=None, service="s3"):
    session = boto3.session.Session(aws_access_key_id=ak, aws_secret_access_key=sk,
                                    aws_session_token=token, region_name=REGION)
    return session.client(service, endpoint_url=server.endpoint, config=Config())


def _code(exc_info):
    return exc_info.value.response["Error"]["Code"]


@pytest.fixture
def admin(server, shardstore_bin):
    def run(*args, **kw):
        return _admin(server, shardstore_bin, *args, **kw)

    run.json = lambda *args, **kw: _admin_json(server, shardstore_bin, *args, **kw)
    return run


@pytest.fixture
def user(admin):
    """A fresh identity-store user: (name, secret); removed afterwards."""
    name = f"u{uuid.uuid4().hex[:10]}"
    reply = admin.json("user", "add", name)
    assert reply["name"] == name and len(reply["secretKey"]) == 40
    yield name, reply["secretKey"]
    admin("user", "remove", name, check=False)


def _put_policy(admin, tmp_path, name, doc):
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(doc))
    admin("policy", "create", name, path)


def test_user_confined_to_prefix(admin, server, s3, bucket, user, tmp_path):
    name, secret = user
    s3.put_object(Bucket=bucket, Key="team/other.txt", Body=b"not yours")
    pol = f"home-{name}"
    _put_policy(admin, tmp_path, pol, {
        "Version": "2012-10-17",
        "Statement": [
            {"Effect": "Allow", "Action": "s3:ListBucket", "Resource": f"arn:aws:s3:::{bucket}",
             "Condition": {"StringLike": {"s3:prefix": ["home/${aws:username}/*", "home/${aws:username}/"]}}},
            {"Effect": "Allow", "Action": ["s3:GetObject", "s3:PutObject", "s3:DeleteObject"],
             "Resource": f"arn:aws:s3:::{bucket}/home/${{aws:username}}/*"},
        ]})
    admin("policy", "attach", pol, "--user", name)
    me = _client(server, name, secret)

    me.put_object(Bucket=bucket, Key=f"home/{name}/notes.txt", Body=b"mine")
    assert me.get_object(Bucket=bucket, Key=f"home/{name}/notes.txt")["Body"].read() == b"mine"
    listed = me.list_objects_v2(Bucket=bucket, Prefix=f"home/{name}/")
    assert [o["Key"] for o in listed["Contents"]] == [f"home/{name}/notes.txt"]
    for call in (lambda: me.list_objects_v2(Bucket=bucket),
                 lambda: me.list_objects_v2(Bucket=bucket, Prefix="team/"),
                 lambda: me.get_object(Bucket=bucket, Key="team/other.txt"),
                 lambda: me.put_object(Bucket=bucket, Key="team/evil.txt", Body=b"x"),
                 lambda: me.delete_object(Bucket=bucket, Key="team/other.txt"),
                 lambda: me.put_object(Bucket=bucket, Key="home/someoneelse/x", Body=b"x"),
                 lambda: me.delete_bucket(Bucket=bucket),
                 lambda: me.create_bucket(Bucket=f"{bucket}-mine")):
        with pytest.raises(ClientError) as e:
            call()
        assert _code(e) == "AccessDenied"
    # A denied request leaks nothing: a missing key is AccessDenied too.
    with pytest.raises(ClientError) as e:
        me.get_object(Bucket=bucket, Key="team/missing.txt")
    assert e.value.response["ResponseMetadata"]["HTTPStatusCode"] == 403
    assert s3.get_object(Bucket=bucket, Key="team/other.txt")["Body"].read() == b"not yours"
    # ListBuckets shows no bucket to a user without ListAllMyBuckets or
    # an unconditional ListBucket.
    assert me.list_buckets()["Buckets"] == []
    admin("policy", "detach", pol, "--user", name)
    admin("policy", "remove", pol)


def test_group_policy_and_disabled_user(admin, server, s3, bucket, user):
    name, secret = user
    s3.put_object(Bucket=bucket, Key="k", Body=b"v")
    me = _client(server, name, secret)
    with pytest.raises(ClientError) as e:
        me.get_object(Bucket=bucket, Key="k")
    assert _code(e) == "AccessDenied"

    group = f"g{uuid.uuid4().hex[:8]}"
    admin("group", "add", group, name)
    admin("policy", "attach", "readonly", "--group", group)
    assert me.get_object(Bucket=bucket, Key="k")["Body"].read() == b"v"
    assert bucket in [b["Name"] for b in me.list_buckets()["Buckets"]]
    info = admin.json("user", "info", name)
    assert info["groups"] == [group] and info["status"] == "enabled"

    admin("user", "disable", name)
    with pytest.raises(ClientError) as e:
        me.get_object(Bucket=bucket, Key="k")
    assert _code(e) == "InvalidAccessKeyId"
    assert "disabled" in e.value.response["Error"]["Message"]
    admin("user", "enable", name)
    assert me.get_object(Bucket=bucket, Key="k")["Body"].read() == b"v"

    admin("group", "disable", group)
    with pytest.raises(ClientError) as e:
        me.get_object(Bucket=bucket, Key="k")
    assert _code(e) == "AccessDenied"
    admin("group", "remove", group, name)
    admin("group", "remove", group)
    assert group not in [g["name"] for g in admin.json("group", "list")]


def test_access_key_expires_and_is_narrowed(admin, server, s3, bucket, user, tmp_path):
    name, _ = user
    s3.put_object(Bucket=bucket, Key="logs/a", Body=b"log")
    s3.put_object(Bucket=bucket, Key="data/b", Body=b"data")
    admin("policy", "attach", "readwrite", "--user", name)
    narrow = tmp_path / "narrow.json"
    narrow.write_text(json.dumps({"Version": "2012-10-17", "Statement": [
        {"Effect": "Allow", "Action": "s3:GetObject", "Resource": f"arn:aws:s3:::{bucket}/logs/*"}]}))
    key = admin.json("accesskey", "create", "--user", name, "--policy", narrow, "--expiry", "4", "--name", "shipper")
    assert key["accessKey"].startswith("SSAK") and key["expiration"]
    app = _client(server, key["accessKey"], key["secretKey"])
    assert app.get_object(Bucket=bucket, Key="logs/a")["Body"].read() == b"log"
    for call in (lambda: app.get_object(Bucket=bucket, Key="data/b"),
                 lambda: app.put_object(Bucket=bucket, Key="logs/new", Body=b"x")):
        with pytest.raises(ClientError) as e:
            call()
        assert _code(e) == "AccessDenied"
    listed = admin.json("accesskey", "list", "--user", name)
    assert [k["accessKey"] for k in listed] == [key["accessKey"]]
    assert "secretKey" not in json.dumps(listed) and key["secretKey"] not in json.dumps(listed)

    time.sleep(5)
    with pytest.raises(ClientError) as e:
        app.get_object(Bucket=bucket, Key="logs/a")
    assert _code(e) == "InvalidAccessKeyId" and "expired" in e.value.response["Error"]["Message"]
    assert admin.json("accesskey", "list", "--user", name)[0]["expired"] is True
    admin("accesskey", "remove", key["accessKey"])
    assert admin.json("accesskey", "list", "--user", name) == []


def test_assume_role_boto3_and_aws_cli(admin, aws, server, s3, bucket, user, tmp_path):
    name, secret = user
    s3.put_object(Bucket=bucket, Key="k", Body=b"v")
    admin("policy", "attach", "readwrite", "--user", name)
    sts = _client(server, name, secret, service="sts")
    session_policy = json.dumps({"Version": "2012-10-17", "Statement": [
        {"Effect": "Allow", "Action": "s3:GetObject", "Resource": f"arn:aws:s3:::{bucket}/*"}]})
    out = sts.assume_role(RoleArn="arn:aws:iam::000000000000:role/reader", RoleSessionName="py",
                          DurationSeconds=900, Policy=session_policy)
    c = out["Credentials"]
    sess = _client(server, c["AccessKeyId"], c["SecretAccessKey"], c["SessionToken"])
    assert sess.get_object(Bucket=bucket, Key="k")["Body"].read() == b"v"
    with pytest.raises(ClientError) as e:
        sess.put_object(Bucket=bucket, Key="k", Body=b"overwrite")
    assert _code(e) == "AccessDenied"
    # Presigned URLs carry the token too.
    url = sess.generate_presigned_url("get_object", Params={"Bucket": bucket, "Key": "k"}, ExpiresIn=60)
    import requests
    assert requests.get(url, timeout=30).content == b"v"
    with pytest.raises(ClientError) as e:
        _client(server, c["AccessKeyId"], c["SecretAccessKey"], "SS1.forged").get_object(Bucket=bucket, Key="k")
    assert _code(e) == "InvalidToken"
    # Disabling the user ends its sessions at once.
    admin("user", "disable", name)
    with pytest.raises(ClientError) as e:
        sess.get_object(Bucket=bucket, Key="k")
    assert e.value.response["ResponseMetadata"]["HTTPStatusCode"] == 403
    admin("user", "enable", name)

    # A session policy STS cannot read is refused (durations out of range
    # never leave botocore, which checks them itself).
    with pytest.raises(ClientError) as e:
        sts.assume_role(RoleArn="arn:aws:iam::000000000000:role/reader", RoleSessionName="py",
                        Policy='{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:Nope","Resource":"*"}]}')
    assert _code(e) == "MalformedPolicyDocument"

    # The aws cli: assume-role, then use the session.
    res = aws("sts", "assume-role", "--role-arn", "arn:aws:iam::000000000000:role/cli",
              "--role-session-name", "cli", creds=type(server.root)(name, secret))
    creds = json.loads(res.stdout)["Credentials"]
    env = {"AWS_ACCESS_KEY_ID": creds["AccessKeyId"], "AWS_SECRET_ACCESS_KEY": creds["SecretAccessKey"],
           "AWS_SESSION_TOKEN": creds["SessionToken"]}
    got = aws("s3", "cp", f"s3://{bucket}/k", "-", env=env)
    assert got.stdout == "v"


def test_session_expires(admin, server, s3, bucket, user):
    """A session stops at its expiry: one asked for with an access key
    that expires in seconds expires with the key."""
    name, _ = user
    s3.put_object(Bucket=bucket, Key="k", Body=b"v")
    admin("policy", "attach", "readonly", "--user", name)
    key = admin.json("accesskey", "create", "--user", name, "--expiry", "4")
    out = _client(server, key["accessKey"], key["secretKey"], service="sts").assume_role(
        RoleArn="arn:aws:iam::000000000000:role/reader", RoleSessionName="short")
    c = out["Credentials"]
    sess = _client(server, c["AccessKeyId"], c["SecretAccessKey"], c["SessionToken"])
    assert sess.get_object(Bucket=bucket, Key="k")["Body"].read() == b"v"
    left = c["Expiration"].timestamp() - time.time()
    assert left <= 5
    time.sleep(max(left, 0) + 1.5)
    with pytest.raises(ClientError) as e:
        sess.get_object(Bucket=bucket, Key="k")
    assert _code(e) == "ExpiredToken"


def test_deny_beats_allow(admin, server, s3, bucket, user, tmp_path):
    name, secret = user
    s3.put_object(Bucket=bucket, Key="public/a", Body=b"a")
    s3.put_object(Bucket=bucket, Key="private/b", Body=b"b")
    admin("policy", "attach", "readonly", "--user", name)
    me = _client(server, name, secret)
    assert me.get_object(Bucket=bucket, Key="private/b")["Body"].read() == b"b"
    # A bucket policy's Deny beats the user's Allow.
    s3.put_bucket_policy(Bucket=bucket, Policy=json.dumps({"Version": "2012-10-17", "Statement": [
        {"Effect": "Deny", "Principal": {"AWS": f"arn:aws:iam::000000000000:user/{name}"},
         "Action": "s3:GetObject", "Resource": f"arn:aws:s3:::{bucket}/private/*"}]}))
    with pytest.raises(ClientError) as e:
        me.get_object(Bucket=bucket, Key="private/b")
    assert _code(e) == "AccessDenied"
    assert me.get_object(Bucket=bucket, Key="public/a")["Body"].read() == b"a"
    # A user policy's Deny beats a bucket policy's Allow.
    s3.put_bucket_policy(Bucket=bucket, Policy=json.dumps({"Version": "2012-10-17", "Statement": [
        {"Effect": "Allow", "Principal": "*", "Action": "s3:PutObject", "Resource": f"arn:aws:s3:::{bucket}/*"}]}))
    me.put_object(Bucket=bucket, Key="public/by-bucket-policy", Body=b"x")
    pol = f"nowrite-{name}"
    _put_policy(admin, tmp_path, pol, {"Version": "2012-10-17", "Statement": [
        {"Effect": "Deny", "Action": "s3:PutObject", "Resource": "*"}]})
    admin("policy", "attach", pol, "--user", name)
    with pytest.raises(ClientError) as e:
        me.put_object(Bucket=bucket, Key="public/again", Body=b"x")
    assert _code(e) == "AccessDenied"
    s3.delete_bucket_policy(Bucket=bucket)
    admin("policy", "detach", pol, "--user", name)
    admin("policy", "remove", pol)


def test_hostile_policies_change_nothing(admin, tmp_path):
    before = admin.json("policy", "list")
    name = f"p{uuid.uuid4().hex[:8]}"
    docs = {
        "malformed": "{\"Version\": \"2012-10-17\", \"Statement\": [",
        "unknown action": json.dumps({"Version": "2012-10-17", "Statement": [
            {"Effect": "Allow", "Action": "s3:TeleportObject", "Resource": "*"}]}),
        "unknown operator": json.dumps({"Version": "2012-10-17", "Statement": [
            {"Effect": "Allow", "Action": "s3:GetObject", "Resource": "*",
             "Condition": {"StringRoughlyEquals": {"s3:prefix": "a"}}}]}),
        "oversized": json.dumps({"Version": "2012-10-17", "Statement": [
            {"Effect": "Allow", "Action": "s3:GetObject", "Resource": [f"arn:aws:s3:::b/{i:05d}" for i in range(400)]}]}),
        "principal": json.dumps({"Version": "2012-10-17", "Statement": [
            {"Effect": "Allow", "Principal": "*", "Action": "s3:GetObject", "Resource": "*"}]}),
    }
    for what, doc in docs.items():
        path = tmp_path / "p.json"
        path.write_text(doc)
        res = admin("policy", "create", name, path, check=False)
        assert res.returncode != 0, what
        assert "MalformedPolicy" in res.stderr, (what, res.stderr)
    assert admin.json("policy", "list") == before
    # Built-in policies cannot be replaced.
    path = tmp_path / "ok.json"
    path.write_text(json.dumps({"Version": "2012-10-17", "Statement": [
        {"Effect": "Allow", "Action": "s3:GetObject", "Resource": "*"}]}))
    assert admin("policy", "create", "readwrite", path, check=False).returncode != 0


def test_delegated_admin_and_self_service(admin, server, user, tmp_path):
    """A user with admin actions in its policies administers users; any
    user manages its own access keys; neither may do more; the audit
    trail names who did what and holds no secret."""
    name, secret = user
    other = f"o{uuid.uuid4().hex[:8]}"
    res = admin("user", "add", other, creds=(name, secret), check=False)
    assert res.returncode != 0 and "access denied" in res.stderr.lower()
    # Self-service: the user's own access key, without admin rights.
    own = admin.json("accesskey", "create", "--name", "ci", creds=(name, secret))
    assert admin.json("accesskey", "list", "--user", name, creds=(name, secret))[0]["accessKey"] == own["accessKey"]
    res = admin("accesskey", "create", "--user", "someone-else", creds=(name, secret), check=False)
    assert res.returncode != 0

    pol = f"useradmin-{name}"
    _put_policy(admin, tmp_path, pol, {"Version": "2012-10-17", "Statement": [
        {"Effect": "Allow", "Action": ["admin:CreateUser", "admin:ListUsers", "admin:DeleteUser"]}]})
    admin("policy", "attach", pol, "--user", name)
    added = admin.json("user", "add", other, creds=(name, secret))
    assert other in [u["name"] for u in admin.json("user", "list", creds=(name, secret))]
    res = admin("policy", "attach", "readwrite", "--user", other, creds=(name, secret), check=False)
    assert res.returncode != 0, "attaching policies was not granted"
    admin("user", "remove", other, creds=(name, secret))

    audit = admin.json("audit")
    mine = [r for r in audit if r["actor"] == name]
    assert {"accesskey.create", "user.add", "user.remove"} <= {r["action"] for r in mine}
    flat = json.dumps(audit)
    assert added["secretKey"] not in flat and own["secretKey"] not in flat and secret not in flat
    admin("policy", "detach", pol, "--user", name)
    admin("policy", "remove", pol)


def test_identities_survive_restart(admin, server, user):
    name, secret = user
    admin("policy", "attach", "readonly", "--user", name)
    server.stop()
    server.start()
    info = admin.json("user", "info", name)
    assert info["policies"] == ["readonly"]
    _client(server, name, secret).list_buckets()
