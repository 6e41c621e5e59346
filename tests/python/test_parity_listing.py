"""Listing answers that S3 clients rely on (issue #12): an empty
continuation token is the first page, and with encoding-type=url every key
and prefix in the answer is URL-encoded, the request's own prefix included."""

import urllib.parse

from s3util import raw_request, sign


def test_empty_continuation_token_is_first_page(s3, bucket):
    for k in ("a", "b", "c"):
        s3.put_object(Bucket=bucket, Key=k, Body=b"x")
    page = s3.list_objects_v2(Bucket=bucket, MaxKeys=2, ContinuationToken="")
    assert [o["Key"] for o in page["Contents"]] == ["a", "b"]
    assert page["IsTruncated"] is True
    nxt = s3.list_objects_v2(Bucket=bucket, MaxKeys=2, ContinuationToken=page["NextContinuationToken"])
    assert [o["Key"] for o in nxt["Contents"]] == ["c"]


def test_encoding_type_url_encodes_every_key_and_prefix(server, s3, bucket):
    keys = ["dir one/ä b.txt", "dir one/sub dir/x+y", "dir one/plain"]
    for k in keys:
        s3.put_object(Bucket=bucket, Key=k, Body=b"x")
    # boto3 asks for encoding-type=url and decodes the answer: keys and
    # prefixes come back exactly.
    res = s3.list_objects_v2(Bucket=bucket, Prefix="dir one/", Delimiter="/")
    assert res["Prefix"] == "dir one/"
    assert sorted(o["Key"] for o in res["Contents"]) == ["dir one/plain", "dir one/ä b.txt"]
    assert [p["Prefix"] for p in res["CommonPrefixes"]] == ["dir one/sub dir/"]
    v1 = s3.list_objects(Bucket=bucket, Prefix="dir one/", Marker="dir one/a")
    # botocore decodes Marker but not Prefix of ListObjects v1, so the
    # encoded form the server sends (as S3 documents) shows through.
    assert v1["Marker"] == "dir one/a" and v1["Prefix"] == "dir%20one/"
    # On the wire, every key and prefix is encoded, the request's own
    # prefix and start-after included.
    q = urllib.parse.urlencode(
        {"list-type": "2", "prefix": "dir one/", "delimiter": "/", "encoding-type": "url", "start-after": "dir one/a b"},
        quote_via=urllib.parse.quote,
    )
    target = f"/{bucket}?{q}"
    headers = sign(server.endpoint, server.root.access_key, server.root.secret_key, "GET", target)
    r = raw_request(server.endpoint, "GET", target, headers=headers)
    body = r.body.decode()
    assert r.status == 200, body
    assert "<Prefix>dir%20one/</Prefix>" in body
    assert "<StartAfter>dir%20one/a%20b</StartAfter>" in body
    assert "<Key>dir%20one/%C3%A4%20b.txt</Key>" in body
    assert "<Prefix>dir%20one/sub%20dir/</Prefix>" in body
    assert "<EncodingType>url</EncodingType>" in body
    assert "dir one" not in body
