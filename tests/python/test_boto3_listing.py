"""Listing with boto3: ListObjects v1 and v2, prefixes, delimiters and
pagination over more than the default page of 1000 keys."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

from conftest import unique_bucket_name

DIRS = 7
FILES_PER_DIR = 150
EXTRA = ["dir2/sub/a", "dir2/sub/b", "dir2/sub/deeper/c", "top-a", "top-b"]
ALL_KEYS = sorted([f"dir{d}/file{i:03d}" for d in range(DIRS) for i in range(FILES_PER_DIR)] + EXTRA)


@pytest.fixture(scope="module")
def listing_bucket(_server_process):
    """One bucket holding 1055 small objects, filled once for this module."""
    srv = _server_process
    s3 = srv.client()
    name = unique_bucket_name("listing")
    s3.create_bucket(Bucket=name)

    def put(key):
        s3.put_object(Bucket=name, Key=key, Body=key.encode())

    with ThreadPoolExecutor(max_workers=8) as pool:
        list(pool.map(put, ALL_KEYS))
    # No cleanup: deleting 1055 objects costs ~15 s, and the drives are
    # temporary directories that go away with the session.
    return name


def test_default_page_is_1000_keys(s3, listing_bucket):
    first = s3.list_objects_v2(Bucket=listing_bucket)
    assert first["KeyCount"] == 1000
    assert first["IsTruncated"] is True
    assert [o["Key"] for o in first["Contents"]] == ALL_KEYS[:1000]
    rest = s3.list_objects_v2(Bucket=listing_bucket, ContinuationToken=first["NextContinuationToken"])
    assert rest["IsTruncated"] is False
    assert [o["Key"] for o in rest["Contents"]] == ALL_KEYS[1000:]
    for o in first["Contents"][:5]:
        assert o["Size"] == len(o["Key"])
        assert o["ETag"].startswith('"') and len(o["ETag"]) == 34


def test_v2_paginator(s3, listing_bucket):
    pages = list(s3.get_paginator("list_objects_v2").paginate(Bucket=listing_bucket, PaginationConfig={"PageSize": 100}))
    assert len(pages) == 11
    keys = []
    for page in pages:
        assert page["KeyCount"] <= 100
        assert page["MaxKeys"] == 100
        keys += [o["Key"] for o in page["Contents"]]
    assert keys == ALL_KEYS


def test_v1_paginator(s3, listing_bucket):
    pages = list(s3.get_paginator("list_objects").paginate(Bucket=listing_bucket, PaginationConfig={"PageSize": 100}))
    assert len(pages) == 11
    keys = [o["Key"] for page in pages for o in page["Contents"]]
    assert keys == ALL_KEYS
    assert all(p["IsTruncated"] for p in pages[:-1]) and not pages[-1]["IsTruncated"]


def test_v1_marker(s3, listing_bucket):
    res = s3.list_objects(Bucket=listing_bucket, Marker="dir6/file140", MaxKeys=1000)
    assert [o["Key"] for o in res["Contents"]] == [k for k in ALL_KEYS if k > "dir6/file140"]
    assert res["IsTruncated"] is False


def test_delimiter_at_root(s3, listing_bucket):
    for lister in (s3.list_objects, s3.list_objects_v2):
        res = lister(Bucket=listing_bucket, Delimiter="/")
        assert [p["Prefix"] for p in res["CommonPrefixes"]] == [f"dir{d}/" for d in range(DIRS)]
        assert [o["Key"] for o in res["Contents"]] == ["top-a", "top-b"]
        assert res["IsTruncated"] is False


def test_prefix_and_delimiter(s3, listing_bucket):
    res = s3.list_objects_v2(Bucket=listing_bucket, Prefix="dir2/", Delimiter="/")
    assert [p["Prefix"] for p in res["CommonPrefixes"]] == ["dir2/sub/"]
    assert len(res["Contents"]) == FILES_PER_DIR
    res = s3.list_objects_v2(Bucket=listing_bucket, Prefix="dir2/sub/", Delimiter="/")
    assert [o["Key"] for o in res["Contents"]] == ["dir2/sub/a", "dir2/sub/b"]
    assert [p["Prefix"] for p in res["CommonPrefixes"]] == ["dir2/sub/deeper/"]
    res = s3.list_objects_v2(Bucket=listing_bucket, Prefix="dir3/file01")
    assert [o["Key"] for o in res["Contents"]] == [f"dir3/file{i:03d}" for i in range(10, 20)]
    res = s3.list_objects_v2(Bucket=listing_bucket, Prefix="no-such-prefix/")
    assert res["KeyCount"] == 0 and "Contents" not in res


def test_non_slash_delimiter(s3, listing_bucket):
    # Any string is a delimiter: everything under "dir4/" rolls up at the
    # first "e" into the single prefix "dir4/file".
    res = s3.list_objects_v2(Bucket=listing_bucket, Prefix="dir4/", Delimiter="e")
    assert [p["Prefix"] for p in res.get("CommonPrefixes", [])] == ["dir4/file"]
    assert res.get("Contents", []) == []
    assert res["KeyCount"] == 1


def test_delimiter_pagination_counts_prefixes(s3, listing_bucket):
    # Common prefixes count toward MaxKeys; walking 3 at a time must yield
    # every prefix and top-level key exactly once.
    seen_prefixes, seen_keys, pages = [], [], 0
    for page in s3.get_paginator("list_objects_v2").paginate(
        Bucket=listing_bucket, Delimiter="/", PaginationConfig={"PageSize": 3}
    ):
        pages += 1
        n = len(page.get("CommonPrefixes", [])) + len(page.get("Contents", []))
        assert n <= 3
        seen_prefixes += [p["Prefix"] for p in page.get("CommonPrefixes", [])]
        seen_keys += [o["Key"] for o in page.get("Contents", [])]
    assert seen_prefixes == [f"dir{d}/" for d in range(DIRS)]
    assert seen_keys == ["top-a", "top-b"]
    assert pages >= 3


def test_start_after(s3, listing_bucket):
    res = s3.list_objects_v2(Bucket=listing_bucket, StartAfter="dir6/file145")
    assert [o["Key"] for o in res["Contents"]] == [k for k in ALL_KEYS if k > "dir6/file145"]
    assert res["StartAfter"] == "dir6/file145"


def test_v1_next_marker_with_delimiter(s3, listing_bucket):
    res = s3.list_objects(Bucket=listing_bucket, Delimiter="/", MaxKeys=4)
    assert res["IsTruncated"] is True
    assert [p["Prefix"] for p in res["CommonPrefixes"]] == ["dir0/", "dir1/", "dir2/", "dir3/"]
    nxt = s3.list_objects(Bucket=listing_bucket, Delimiter="/", MaxKeys=100, Marker=res["NextMarker"])
    assert [p["Prefix"] for p in nxt["CommonPrefixes"]] == ["dir4/", "dir5/", "dir6/"]
    assert [o["Key"] for o in nxt["Contents"]] == ["top-a", "top-b"]


def test_fetch_owner_and_encoding(s3, listing_bucket):
    res = s3.list_objects_v2(Bucket=listing_bucket, Prefix="top-", FetchOwner=True)
    assert all("Owner" in o and o["Owner"].get("ID") for o in res["Contents"])
    # boto3 asks for EncodingType=url and decodes; the keys must come back exact.
    assert [o["Key"] for o in res["Contents"]] == ["top-a", "top-b"]


def test_list_empty_bucket(s3, bucket):
    res = s3.list_objects_v2(Bucket=bucket)
    assert res["KeyCount"] == 0 and res["IsTruncated"] is False
    assert "Contents" not in res
