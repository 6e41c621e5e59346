"""README.md's Quickstart examples, run as written: the AWS CLI shell snippet
(with the aws cli from the venv) and the boto3 script, each from an empty
directory and each twice, since the README says a second run carries on with
the bucket the first one made. Only the endpoint and the credentials are
swapped for the test server's; the Go example is run by test/e2e/readme_test.go.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from conftest import REPO_ROOT, empty_and_delete_bucket

README = REPO_ROOT / "README.md"
README_ENDPOINT = "http://127.0.0.1:9000"
README_USER = README_PASSWORD = "shardstoreadmin"


def readme_blocks(heading: str, lang: str) -> list[str]:
    """Bodies of the ```lang fenced blocks in the first README section whose
    heading line starts with `heading` (up to the next heading of the same or
    a higher level; lines inside fences are never headings)."""
    level = len(heading) - len(heading.lstrip("#"))
    blocks: list[str] = []
    inside = found = False
    fence_lang: str | None = None
    body: list[str] = []
    for line in README.read_text().splitlines():
        if fence_lang is not None:
            if line.strip() == "```":
                if inside and fence_lang == lang:
                    blocks.append("\n".join(body) + "\n")
                fence_lang = None
            else:
                body.append(line)
            continue
        if line.lstrip().startswith("```"):
            fence_lang, body = line.strip()[3:].strip(), []
            continue
        if line.startswith("#"):
            this_level = len(line) - len(line.lstrip("#"))
            if line.startswith(heading) and not found:
                inside = found = True
            elif inside and this_level <= level:
                inside = False
    assert found, f"README.md has no section headed {heading!r}"
    assert blocks, f"README.md's {heading!r} section has no ```{lang} block"
    return blocks


def for_server(snippet: str, replacements: dict[str, str]) -> str:
    """The snippet with the README's endpoint and credentials replaced; each
    must be there, or the test would silently run something else."""
    for old, new in replacements.items():
        assert old in snippet, f"README snippet no longer contains {old!r}:\n{snippet}"
        snippet = snippet.replace(old, new)
    return snippet


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@pytest.fixture
def aws_on_path(tmp_path) -> dict:
    """An environment whose PATH starts with an `aws` that runs the venv's
    aws cli (the one the rest of the suite uses)."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    aws = bindir / "aws"
    aws.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m awscli "$@"\n')
    aws.chmod(aws.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    env = dict(os.environ)
    env["PATH"] = f"{bindir}{os.pathsep}{env.get('PATH', '')}"
    env["AWS_PAGER"] = ""
    return env


def run_in_empty_dir(cmd: list[str], cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    cwd.mkdir()
    res = subprocess.run(
        cmd, cwd=cwd, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=180
    )
    assert res.returncode == 0, (
        f"{' '.join(cmd)} exited {res.returncode}\nstdout:\n{res.stdout}\nstderr:\n{res.stderr}"
    )
    return res


def test_readme_aws_cli(server, s3, tmp_path, aws_on_path):
    blocks = readme_blocks("### AWS CLI", "sh")
    assert len(blocks) == 1, f"want one ```sh block in the AWS CLI section, found {len(blocks)}"
    script = for_server(
        blocks[0],
        {
            f"AWS_ACCESS_KEY_ID={README_USER}": f"AWS_ACCESS_KEY_ID={server.root.access_key}",
            f"AWS_SECRET_ACCESS_KEY={README_PASSWORD}": f"AWS_SECRET_ACCESS_KEY={server.root.secret_key}",
            README_ENDPOINT: server.endpoint,
        },
    )
    bucket = re.search(r"s3://([a-z0-9.-]+)", script).group(1)
    path = tmp_path / "quickstart.sh"
    path.write_text(script)
    try:
        for run in (1, 2):
            work = tmp_path / f"run{run}"
            # -e: every command of the snippet must succeed.
            res = run_in_empty_dir(["bash", "-euo", "pipefail", str(path)], work, aws_on_path)

            original = (work / "holiday.jpg").read_bytes()
            assert len(original) == 1 << 20
            assert (work / "copy.jpg").read_bytes() == original, "copy.jpg differs from holiday.jpg"
            assert "2025/holiday.jpg" in res.stdout, res.stdout  # the `s3 ls` line
            head = s3.head_object(Bucket=bucket, Key="2025/holiday.jpg")
            assert head["ContentLength"] == len(original)

            # The snippet ends by printing a presigned URL: it must fetch the
            # object without any credentials.
            url = res.stdout.strip().splitlines()[-1]
            assert url.startswith(server.endpoint + "/"), res.stdout
            with urllib.request.urlopen(url, timeout=60) as resp:
                assert sha256(resp.read()) == sha256(original)
    finally:
        empty_and_delete_bucket(s3, bucket)


def test_readme_boto3(server, s3, tmp_path):
    blocks = readme_blocks("### boto3", "python")
    assert len(blocks) == 1, f"want one ```python block in the boto3 section, found {len(blocks)}"
    script = for_server(
        blocks[0],
        {
            f'endpoint_url="{README_ENDPOINT}"': f'endpoint_url="{server.endpoint}"',
            f'aws_access_key_id="{README_USER}"': f'aws_access_key_id="{server.root.access_key}"',
            f'aws_secret_access_key="{README_PASSWORD}"': f'aws_secret_access_key="{server.root.secret_key}"',
        },
    )
    bucket = re.search(r'Bucket="([^"]+)"', script).group(1)
    path = tmp_path / "quickstart.py"
    path.write_text(script)
    try:
        for run in (1, 2):
            work = tmp_path / f"run{run}"
            res = run_in_empty_dir([sys.executable, str(path)], work)
            lines = res.stdout.strip().splitlines()
            assert lines[0] == "b'hello, shardstore'", res.stdout
            # 20 MiB through upload_file: multipart in three 8 MiB parts, as
            # the README's comments say.
            assert lines[-1].endswith('-3"'), res.stdout
            big = (work / "big.iso").read_bytes()
            assert len(big) == 20 << 20
            got = s3.get_object(Bucket=bucket, Key="big.iso")
            assert got["ETag"] == lines[-1]
            assert sha256(got["Body"].read()) == sha256(big)
            assert s3.get_object(Bucket=bucket, Key="hello.txt")["Body"].read() == b"hello, shardstore"
    finally:
        empty_and_delete_bucket(s3, bucket)
