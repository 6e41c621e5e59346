"""Adoption of MinIO's drives, checked with boto3 (the Go SDK checks the
same in test/e2e/migrate*_test.go): the compressed fixture of
internal/minioformat/testdata (a real MinIO's 16 drives, compression on)
is adopted with `shardstore migrate from-minio`, then every version reads
back byte-identical by version id, the listings match what MinIO
answered, and the unfinished upload keeps MinIO's upload id: listed, its
parts listed with MinIO's ETags and sizes, a part added, completed."""

import hashlib
import json
import subprocess
from pathlib import Path

import pytest

from conftest import CLUSTER_NODES, REPO_ROOT, Server

FIXTURE = REPO_ROOT / "internal" / "minioformat" / "testdata" / "minio-compressed"


@pytest.fixture
def adopted(request, shardstore_bin, tmp_path):
    if CLUSTER_NODES > 1:
        pytest.skip("the fixture is one node's 16 drives; this run is a cluster")
    drives = tmp_path / "drives"
    # The fixture is a zstd tarball; the fixture tool unpacks it (Python
    # has no zstd in this venv).
    subprocess.run(
        ["go", "run", "./internal/minioformat/testdata/mkfixture", "-kind", "compressed",
         "-out", str(FIXTURE.parent), "-unpack", str(tmp_path / "unpacked")],
        cwd=REPO_ROOT, check=True, capture_output=True, timeout=600,
    )
    drives.mkdir()
    for i in range(1, 17):
        (tmp_path / "unpacked" / f"drive{i}").rename(drives / f"d{i}")
    exp = json.loads(FIXTURE.with_suffix(".json").read_text())
    keys = tmp_path / "upload-keys"
    keys.write_text("".join(f"{b['name']}/{u['key']}\n" for b in exp["buckets"] for u in b.get("uploads", [])))
    res = subprocess.run(
        [str(shardstore_bin), "migrate", "from-minio", "--upload-keys", str(keys), f"{drives}/d{{1...16}}"],
        capture_output=True, text=True, timeout=600,
    )
    assert res.returncode == 0, res.stdout + res.stderr
    assert "of them compressed by MinIO (decompressed, written uncompressed): 8 versions" in res.stdout, res.stdout
    srv = Server(shardstore_bin, tmp_path, kms=False)
    srv.start()
    yield srv, exp
    srv.stop()


def test_adopted_versions_read_back(adopted):
    srv, exp = adopted
    s3 = srv.client()
    for b in exp["buckets"]:
        got = []
        for page in s3.get_paginator("list_object_versions").paginate(Bucket=b["name"]):
            got += [(v["Key"], v["VersionId"], v["ETag"], v["Size"]) for v in page.get("Versions", [])]
            got += [(d["Key"], d["VersionId"], "", 0) for d in page.get("DeleteMarkers", [])]
        want = [(v["key"], v["versionId"], "" if v["deleteMarker"] else v["etag"], v["size"]) for v in b["versions"]]
        assert sorted(got) == sorted(want), b["name"]
        for v in b["versions"]:
            if v["deleteMarker"]:
                continue
            body = s3.get_object(Bucket=b["name"], Key=v["key"], VersionId=v["versionId"])["Body"].read()
            assert hashlib.sha256(body).hexdigest() == v["sha256"], (b["name"], v["key"], v["versionId"])
        listed = [(o["Key"], o["ETag"], o["Size"]) for o in s3.list_objects_v2(Bucket=b["name"]).get("Contents", [])]
        assert listed == [(o["key"], o["etag"], o["size"]) for o in b["objects"]], b["name"]


def test_adopted_upload_continues(adopted):
    srv, exp = adopted
    s3 = srv.client()
    want = next(u for b in exp["buckets"] if b["name"] == "comp" for u in b.get("uploads", []) if u["key"] == "upload.mp4")
    ups = s3.list_multipart_uploads(Bucket="comp").get("Uploads", [])
    # upload.txt (compressed parts) is refused and not listed.
    assert [(u["Key"], u["UploadId"]) for u in ups] == [("upload.mp4", want["uploadId"])]
    parts = s3.list_parts(Bucket="comp", Key="upload.mp4", UploadId=want["uploadId"])["Parts"]
    assert [(p["PartNumber"], p["ETag"], p["Size"]) for p in parts] == list(zip(want["parts"], want["partETags"], want["partSizes"]))
    third = b"part three from boto3\n" * 500
    p3 = s3.upload_part(Bucket="comp", Key="upload.mp4", UploadId=want["uploadId"], PartNumber=3, Body=third)
    s3.complete_multipart_upload(
        Bucket="comp", Key="upload.mp4", UploadId=want["uploadId"],
        MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": want["partETags"][0]}, {"PartNumber": 3, "ETag": p3["ETag"]}]},
    )
    body = s3.get_object(Bucket="comp", Key="upload.mp4")["Body"].read()
    assert len(body) == want["partSizes"][0] + len(third)
    assert '"' + hashlib.md5(body[: want["partSizes"][0]]).hexdigest() + '"' == want["partETags"][0]
    assert body[want["partSizes"][0]:] == third
    assert s3.list_multipart_uploads(Bucket="comp").get("Uploads", []) == []
