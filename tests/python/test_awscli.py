"""The aws cli (v1, from the venv) against the server: the high-level `aws s3`
commands a user types, `aws s3api`, and `aws s3 presign` fetched with curl."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import urllib.request
from pathlib import Path

import pytest

from conftest import empty_and_delete_bucket, unique_bucket_name
from s3util import MiB


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(MiB), b""):
            h.update(block)
    return h.hexdigest()


def write_random(path: Path, size: int) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as f:
        left = size
        while left:
            n = min(left, MiB)
            f.write(os.urandom(n))
            left -= n
    return path


def fetch(url: str) -> bytes:
    """GET a URL with curl, as a user would; urllib where curl is absent."""
    curl = shutil.which("curl")
    if curl:
        res = subprocess.run([curl, "-sS", "--fail-with-body", url], capture_output=True, timeout=60)
        assert res.returncode == 0, f"curl exit {res.returncode}: {res.stderr.decode()} {res.stdout[:500]!r}"
        return res.stdout
    with urllib.request.urlopen(url, timeout=60) as resp:
        return resp.read()


@pytest.fixture(scope="module")
def cli_bucket(_server_process):
    """One bucket for this module's tests (each uses its own prefix), made
    with boto3 so that only the commands under test pay the cli's start-up."""
    srv = _server_process
    name = unique_bucket_name("cli")
    srv.client().create_bucket(Bucket=name)
    yield name
    if srv.alive():
        empty_and_delete_bucket(srv.client(), name)


@pytest.mark.slow
def test_cp_multipart_round_trip(aws, s3, cli_bucket, tmp_path):
    # 24 MiB is over the cli's 8 MiB multipart threshold: 3 parts of 8 MiB.
    src = write_random(tmp_path / "big.bin", 24 * MiB)
    aws("s3", "cp", src, f"s3://{cli_bucket}/up/big.bin")
    head = s3.head_object(Bucket=cli_bucket, Key="up/big.bin")
    assert head["ContentLength"] == 24 * MiB
    assert head["ETag"].endswith('-3"'), head["ETag"]
    back = tmp_path / "back.bin"
    aws("s3", "cp", f"s3://{cli_bucket}/up/big.bin", back)
    assert sha256_file(back) == sha256_file(src)


def test_mb_cp_ls_rm_rb(aws, s3, tmp_path):
    name = unique_bucket_name("cli-mb")
    out = aws("s3", "mb", f"s3://{name}")
    assert f"make_bucket: {name}" in out.stdout
    f = tmp_path / "hello.txt"
    f.write_text("hello from the aws cli\n")
    aws("s3", "cp", f, f"s3://{name}/a/hello.txt")
    for i in range(11):
        s3.put_object(Bucket=name, Key=f"a/b/{i:02d}.txt", Body=b"x" * i)
    s3.put_object(Bucket=name, Key="keep/me", Body=b"kept")

    out = aws("s3", "ls", f"s3://{name}/")
    assert sorted(out.stdout.split()) == ["PRE", "PRE", "a/", "keep/"], out.stdout
    out = aws("s3", "ls", f"s3://{name}/", "--recursive")
    rows = [line.split() for line in out.stdout.strip().splitlines()]
    assert [r[-1] for r in rows] == [f"a/b/{i:02d}.txt" for i in range(11)] + ["a/hello.txt", "keep/me"]
    assert [int(r[2]) for r in rows] == list(range(11)) + [f.stat().st_size, 4]

    out = aws("s3", "rm", f"s3://{name}/a/", "--recursive")
    assert out.stdout.count("delete:") == 12
    assert [o["Key"] for o in s3.list_objects_v2(Bucket=name)["Contents"]] == ["keep/me"]
    # --force empties the bucket first (BucketNotEmpty is covered with boto3).
    out = aws("s3", "rb", f"s3://{name}", "--force")
    assert f"remove_bucket: {name}" in out.stdout
    assert name not in [b["Name"] for b in s3.list_buckets()["Buckets"]]


def test_sync_up_and_down(aws, s3, cli_bucket, tmp_path):
    src = tmp_path / "tree"
    files = {
        "root.txt": 10,
        "docs/readme.md": 2000,
        "docs/deep/nested/file.bin": 300 * 1024,
        "img/a.png": 4096,
        "img/b.png": 0,
    }
    for rel, size in files.items():
        write_random(src / rel, size)
    out = aws("s3", "sync", src, f"s3://{cli_bucket}/tree")
    assert out.stdout.count("upload:") == len(files)

    listed = sorted(o["Key"] for o in s3.list_objects_v2(Bucket=cli_bucket, Prefix="tree/")["Contents"])
    assert listed == sorted(f"tree/{rel}" for rel in files)

    # Nothing changed: a second sync uploads nothing.
    out = aws("s3", "sync", src, f"s3://{cli_bucket}/tree")
    assert "upload:" not in out.stdout

    # Change one file (a different size, so sync notices) and add one.
    write_random(src / "docs/readme.md", 2500)
    write_random(src / "docs/new.txt", 33)
    out = aws("s3", "sync", src, f"s3://{cli_bucket}/tree")
    # "upload: LOCAL to s3://..." with LOCAL relative to the cli's cwd (tmp_path).
    uploaded = sorted(
        str((tmp_path / line.split()[1]).resolve()) for line in out.stdout.splitlines() if line.startswith("upload:")
    )
    assert uploaded == sorted([str(src / "docs/readme.md"), str(src / "docs/new.txt")]), out.stdout

    dst = tmp_path / "down"
    aws("s3", "sync", f"s3://{cli_bucket}/tree", dst)
    got = sorted(str(p.relative_to(dst)) for p in dst.rglob("*") if p.is_file())
    want = sorted(str(p.relative_to(src)) for p in src.rglob("*") if p.is_file())
    assert got == want
    for rel in want:
        assert sha256_file(dst / rel) == sha256_file(src / rel), rel

    # --delete removes what the source no longer has.
    (src / "img/a.png").unlink()
    out = aws("s3", "sync", src, f"s3://{cli_bucket}/tree", "--delete")
    assert f"delete: s3://{cli_bucket}/tree/img/a.png" in out.stdout
    keys = [o["Key"] for o in s3.list_objects_v2(Bucket=cli_bucket, Prefix="tree/img/")["Contents"]]
    assert keys == ["tree/img/b.png"]


def test_s3api_put_and_head(aws, cli_bucket, tmp_path):
    body = tmp_path / "body.json"
    body.write_text('{"hello": "world"}')
    out = aws(
        "s3api",
        "put-object",
        "--bucket",
        cli_bucket,
        "--key",
        "api/obj.json",
        "--body",
        body,
        "--content-type",
        "application/json",
        "--metadata",
        "purpose=e2e,owner=tests",
    )
    put = json.loads(out.stdout)
    assert put["ETag"] == f'"{hashlib.md5(body.read_bytes()).hexdigest()}"'
    out = aws("s3api", "head-object", "--bucket", cli_bucket, "--key", "api/obj.json")
    head = json.loads(out.stdout)
    assert head["ContentLength"] == body.stat().st_size
    assert head["ContentType"] == "application/json"
    assert head["Metadata"] == {"purpose": "e2e", "owner": "tests"}
    assert head["ETag"] == put["ETag"]


@pytest.mark.parametrize("signature", ["default-config", "s3v4"])
def test_presign_and_fetch(aws, s3, cli_bucket, tmp_path, signature):
    # cli v1 presigns with SigV2 (AWSAccessKeyId/Signature/Expires) unless the
    # profile sets s3.signature_version = s3v4; users meet both.
    env = {}
    marker = "Signature="
    if signature == "s3v4":
        cfg = tmp_path / "aws-config"
        cfg.write_text("[default]\ns3 =\n    signature_version = s3v4\n")
        env["AWS_CONFIG_FILE"] = str(cfg)
        marker = "X-Amz-Signature="
    data = os.urandom(150 * 1024)
    key = f"share/{signature}/shared file.bin"
    s3.put_object(Bucket=cli_bucket, Key=key, Body=data)
    out = aws("s3", "presign", f"s3://{cli_bucket}/{key}", "--expires-in", "600", env=env)
    url = out.stdout.strip()
    assert url.startswith("http://") and marker in url, url
    assert fetch(url) == data
