"""Issue #42, the small items, each as S3 answers it, with boto3 at default
settings (and raw requests where no SDK would send the request): version
and delete-marker headers, an empty ContinuationToken echoed, keys with
control characters in listings, POST object's ${filename}, redirect,
policy keys and missing signature, lifecycle transitions with a bad date,
?torrent, and the Date / X-Amz-Date pairs SigV2 and SigV4 clients send.
docs/conformance.md ("Object lock, versioning headers and the small items")
has the evidence behind each answer."""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import hmac
import json
import urllib.parse
import xml.etree.ElementTree as ET
from email.utils import formatdate

import boto3
import pytest
import requests
from botocore.config import Config
from botocore.exceptions import ClientError

from conftest import REGION
from s3util import error_code, expect_error, http_status, raw_request, sign


def headers_of(resp_or_err) -> dict:
    resp = resp_or_err.response if isinstance(resp_or_err, ClientError) else resp_or_err
    return resp["ResponseMetadata"]["HTTPHeaders"]


def fresh_client(server, creds=None, **config):
    """A boto3 client of its own, for tests that register event handlers
    (the server fixture's clients are shared)."""
    creds = creds or server.root
    return boto3.client("s3", endpoint_url=server.endpoint, aws_access_key_id=creds.access_key,
                        aws_secret_access_key=creds.secret_key, region_name=REGION,
                        config=Config(**config) if config else None)


# ---- versioning headers ------------------------------------------------------


def write_without_version_ids(s3, bucket):
    """PUT "p", multipart "m", a copy "c" of p and a form upload "f" into
    bucket, asserting that none of them answers an x-amz-version-id (or a
    VersionId); returns the copy's answer."""
    resp = s3.put_object(Bucket=bucket, Key="p", Body=b"p")
    assert "x-amz-version-id" not in headers_of(resp) and "VersionId" not in resp
    up = s3.create_multipart_upload(Bucket=bucket, Key="m")
    part = s3.upload_part(Bucket=bucket, Key="m", UploadId=up["UploadId"], PartNumber=1, Body=b"m")
    resp = s3.complete_multipart_upload(Bucket=bucket, Key="m", UploadId=up["UploadId"],
                                        MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": part["ETag"]}]})
    assert "x-amz-version-id" not in headers_of(resp) and "VersionId" not in resp
    copied = s3.copy_object(Bucket=bucket, Key="c", CopySource={"Bucket": bucket, "Key": "p"})
    assert "x-amz-version-id" not in headers_of(copied) and "VersionId" not in copied
    form = s3.generate_presigned_post(bucket, "f", ExpiresIn=600)
    posted = requests.post(form["url"], data=form["fields"], files={"file": ("f", b"f")}, timeout=30)
    assert posted.status_code == 204 and "x-amz-version-id" not in posted.headers, posted.text
    return copied


def test_never_versioned_bucket_writes_send_no_version_id(s3, bucket):
    """S3 sends x-amz-version-id only for a bucket whose versioning was ever
    configured: not on PutObject, CompleteMultipartUpload, CopyObject or a
    form upload in a bucket never versioned, and no x-amz-delete-marker on a
    DELETE there or a GET/HEAD of a key that is not there (S3's HeadObject
    reference: "If false, this response header does not appear")."""
    resp = write_without_version_ids(s3, bucket)
    assert "x-amz-copy-source-version-id" not in headers_of(resp)
    resp = s3.delete_object(Bucket=bucket, Key="p")
    assert "x-amz-delete-marker" not in headers_of(resp) and "x-amz-version-id" not in headers_of(resp)
    for fn in (s3.head_object, s3.get_object):
        err = expect_error(fn, "404" if fn == s3.head_object else "NoSuchKey", 404, Bucket=bucket, Key="p")
        assert "x-amz-delete-marker" not in headers_of(err) and "x-amz-version-id" not in headers_of(err)


def test_suspended_bucket_writes_omit_null(s3, bucket):
    """In a bucket whose versioning is suspended S3 stores each write as the
    null version and answers it without x-amz-version-id (PUT, POST, copy,
    multipart completion; docs/conformance.md, "Residual differences found
    by ceph s3-tests"), while GET and HEAD of it say null; a DELETE makes a
    null delete marker that GET and HEAD report with x-amz-delete-marker: true."""
    s3.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Suspended"})
    write_without_version_ids(s3, bucket)
    assert headers_of(s3.head_object(Bucket=bucket, Key="p"))["x-amz-version-id"] == "null"
    assert [(v["Key"], v["VersionId"]) for v in s3.list_object_versions(Bucket=bucket)["Versions"]] == [
        ("c", "null"), ("f", "null"), ("m", "null"), ("p", "null")]
    resp = s3.delete_object(Bucket=bucket, Key="p")
    assert (headers_of(resp)["x-amz-delete-marker"], headers_of(resp)["x-amz-version-id"]) == ("true", "null")
    for fn, code in ((s3.head_object, "404"), (s3.get_object, "NoSuchKey")):
        err = expect_error(fn, code, 404, Bucket=bucket, Key="p")
        assert (headers_of(err)["x-amz-delete-marker"], headers_of(err)["x-amz-version-id"]) == ("true", "null")


# ---- ListObjectsV2: an empty continuation token --------------------------------


def test_list_v2_empty_continuation_token_is_echoed(s3, server, bucket):
    """ListObjectsV2 with continuation-token= (empty) lists from the start and
    answers ContinuationToken as sent, empty; without one there is none."""
    keys = ["bar", "baz", "foo", "quxx"]
    for k in keys:
        s3.put_object(Bucket=bucket, Key=k, Body=b"x")
    resp = s3.list_objects_v2(Bucket=bucket, ContinuationToken="")
    assert resp["ContinuationToken"] == "" and resp["IsTruncated"] is False
    assert [o["Key"] for o in resp["Contents"]] == keys
    assert "ContinuationToken" not in s3.list_objects_v2(Bucket=bucket)
    page = s3.list_objects_v2(Bucket=bucket, MaxKeys=1)
    nxt = s3.list_objects_v2(Bucket=bucket, ContinuationToken=page["NextContinuationToken"])
    assert nxt["ContinuationToken"] == page["NextContinuationToken"]
    assert [o["Key"] for o in nxt["Contents"]] == keys[1:]


# ---- keys with control characters -------------------------------------------------

CONTROL_KEYS = ["ctl/a\x01b", "ctl/c\x1fd/e", "ctl/f\x7fg", "ctl/tab\tx", "ctl/nl\nx", "ctl/cr\rx",
                "ctl/sp ace+plus%25pct&amp", "ctl/\u00e9\u65e5\x02"]


@pytest.fixture
def control_bucket(s3, bucket):
    for k in CONTROL_KEYS:
        s3.put_object(Bucket=bucket, Key=k, Body=k.encode())
    return bucket


def test_control_character_keys_listed_with_encoding_type_url(s3, control_bucket):
    """boto3 asks every listing for encoding-type=url and decodes what S3
    encodes (Key, Prefix, Delimiter, StartAfter; V1's Marker and
    NextMarker; the versions' KeyMarker and NextKeyMarker; CommonPrefixes):
    keys with control characters come back exactly as stored."""
    b = control_bucket
    want = sorted(CONTROL_KEYS)
    resp = s3.list_objects_v2(Bucket=b, Prefix="ctl/")
    assert resp["EncodingType"] == "url" and [o["Key"] for o in resp["Contents"]] == want
    # Each listed key names its object.
    for o in resp["Contents"]:
        assert s3.get_object(Bucket=b, Key=o["Key"])["Body"].read() == o["Key"].encode()
    resp = s3.list_objects_v2(Bucket=b, Prefix="ctl/", StartAfter="ctl/a\x01b", Delimiter="\x1f")
    assert resp["StartAfter"] == "ctl/a\x01b" and resp["Delimiter"] == "\x1f" and resp["Prefix"] == "ctl/"
    assert [p["Prefix"] for p in resp["CommonPrefixes"]] == ["ctl/c\x1f"]
    assert "ctl/a\x01b" not in [o["Key"] for o in resp.get("Contents", [])]

    # V1, paged one key at a time with a delimiter (NextMarker is sent).
    seen, marker = [], "ctl/a\x01"
    while True:
        resp = s3.list_objects(Bucket=b, Prefix="ctl/", Delimiter="/", Marker=marker, MaxKeys=1)
        assert resp["Marker"] == marker
        seen += [o["Key"] for o in resp.get("Contents", [])] + [p["Prefix"] for p in resp.get("CommonPrefixes", [])]
        if not resp["IsTruncated"]:
            break
        marker = resp["NextMarker"]
    assert seen == sorted([k for k in want if "/" not in k[4:]] + ["ctl/c\x1fd/"])

    # Versions, paged.
    seen, key_marker = [], ""
    while True:
        kw = {"KeyMarker": key_marker} if key_marker else {}
        resp = s3.list_object_versions(Bucket=b, Prefix="ctl/", MaxKeys=2, **kw)
        assert resp.get("KeyMarker", "") == key_marker
        seen += [v["Key"] for v in resp.get("Versions", [])]
        if not resp["IsTruncated"]:
            break
        key_marker = resp["NextKeyMarker"]
    assert seen == want

    # ListMultipartUploads: boto3 neither asks for nor decodes the URL
    # encoding here, as with S3; a client that asks decodes it itself.
    up = s3.create_multipart_upload(Bucket=b, Key="ctl/up\x03load")
    resp = s3.list_multipart_uploads(Bucket=b, Prefix="ctl/", EncodingType="url")
    assert [urllib.parse.unquote(u["Key"]) for u in resp["Uploads"]] == ["ctl/up\x03load"]
    assert urllib.parse.unquote(resp["Prefix"]) == "ctl/"
    s3.abort_multipart_upload(Bucket=b, Key="ctl/up\x03load", UploadId=up["UploadId"])


def test_control_character_keys_listed_without_encoding(server, control_bucket):
    """Without encoding-type, S3 writes what XML 1.0 cannot carry as character
    references (a&#x19;&#x7; for "a\\x19\\x07"), not as U+FFFD: the key can
    still be told apart and read back by an XML 1.1-tolerant reader. (Python's
    and Go's XML 1.0 parsers refuse such a listing, from S3 as from here;
    that is why SDKs ask for encoding-type=url.) Markup is escaped as usual,
    DEL (an XML character) is written as is."""
    for target in (f"/{control_bucket}?list-type=2&prefix=ctl%2F", f"/{control_bucket}?prefix=ctl%2F",
                   f"/{control_bucket}?versions&prefix=ctl%2F"):
        hdrs = sign(server.endpoint, server.root.access_key, server.root.secret_key, "GET", target)
        resp = raw_request(server.endpoint, "GET", target, headers=hdrs)
        assert resp.status == 200, resp
        body = resp.body.decode()
        for escaped in ("<Key>ctl/a&#x1;b</Key>", "<Key>ctl/c&#x1f;d/e</Key>", "<Key>ctl/f\x7fg</Key>",
                        "<Key>ctl/tab&#x9;x</Key>", "<Key>ctl/nl&#xA;x</Key>", "<Key>ctl/cr&#xD;x</Key>",
                        "<Key>ctl/sp ace+plus%25pct&amp;amp</Key>", "<Key>ctl/\u00e9\u65e5&#x2;</Key>"):
            assert escaped in body, (target, escaped, body)
        assert "\ufffd" not in body and "\x01" not in body


# ---- POST object -----------------------------------------------------------------


def v2_form(server, policy_doc: dict | None, fields: dict, sign_it: bool = True) -> dict:
    """Form fields for a SigV2 browser upload with policy_doc (None: none)."""
    out = dict(fields)
    if policy_doc is not None:
        policy = base64.b64encode(json.dumps(policy_doc).encode()).decode()
        out["policy"] = policy
        out["AWSAccessKeyId"] = server.root.access_key
        if sign_it:
            out["signature"] = base64.b64encode(
                hmac.new(server.root.secret_key.encode(), policy.encode(), hashlib.sha1).digest()).decode()
    return out


def expiration(minutes: int = 10) -> str:
    return (dt.datetime.now(dt.timezone.utc) + dt.timedelta(minutes=minutes)).strftime("%Y-%m-%dT%H:%M:%SZ")


def post(server, bucket: str, fields: dict, filename: str = "foo.txt", body: bytes = b"bar", **kw):
    return requests.post(f"{server.endpoint}/{bucket}", data=fields, files={"file": (filename, body)}, timeout=30, **kw)


def xml_error(resp) -> tuple:
    doc = ET.fromstring(resp.content)
    return resp.status_code, doc.findtext("Code"), doc.findtext("Message")


def test_post_object_filename_key_meets_policy(s3, server, bucket):
    """${filename} in the key is the uploaded file's name, and the policy's
    conditions test the key with it substituted: "${filename}" posted with
    foo.txt meets ["starts-with", "$key", "foo"], bar.txt does not (403)."""
    doc = {"expiration": expiration(), "conditions": [{"bucket": bucket}, ["starts-with", "$key", "foo"]]}
    resp = post(server, bucket, v2_form(server, doc, {"key": "${filename}"}), filename="foo.txt")
    assert resp.status_code == 204, resp.text
    assert s3.get_object(Bucket=bucket, Key="foo.txt")["Body"].read() == b"bar"
    resp = post(server, bucket, v2_form(server, doc, {"key": "${filename}"}), filename="bar.txt")
    assert xml_error(resp) == (403, "AccessDenied",
                               'Invalid according to Policy: Policy Condition failed: ["starts-with", "$key", "foo"]')
    assert "bar.txt" not in [o["Key"] for o in s3.list_objects_v2(Bucket=bucket).get("Contents", [])]
    # The same with boto3's own form (SigV4) and a directory in front.
    form = s3.generate_presigned_post(bucket, "up/${filename}", ExpiresIn=600)
    resp = requests.post(form["url"], data=form["fields"], files={"file": ("n a+m&e.txt", b"x")}, timeout=30)
    assert resp.status_code == 204, resp.text
    assert s3.get_object(Bucket=bucket, Key="up/n a+m&e.txt")["Body"].read() == b"x"


def test_post_object_redirect_query(s3, server, bucket):
    """success_action_redirect: 303 to the URL with bucket, key and etag
    appended in that order, URL-encoded, after the URL's own query."""
    redirect = "http://app.example/done?from=form"
    doc = {"expiration": expiration(), "conditions": [{"bucket": bucket}, ["starts-with", "$key", ""],
                                                      {"success_action_redirect": redirect}]}
    resp = post(server, bucket, v2_form(server, doc, {"key": "dir/a b&c.txt", "success_action_redirect": redirect}),
                allow_redirects=False)
    assert resp.status_code == 303, resp.text
    etag = s3.head_object(Bucket=bucket, Key="dir/a b&c.txt")["ETag"]
    assert resp.headers["Location"] == (redirect + "&bucket=" + bucket + "&key=dir%2Fa+b%26c.txt&etag="
                                        + urllib.parse.quote(etag))
    assert urllib.parse.parse_qs(urllib.parse.urlsplit(resp.headers["Location"]).query) == {
        "from": ["form"], "bucket": [bucket], "key": ["dir/a b&c.txt"], "etag": [etag]}


def test_post_object_policy_keys_are_case_sensitive(s3, server, bucket):
    """The policy document's "expiration" and "conditions" are spelled so
    exactly (400 InvalidPolicyDocument otherwise), while the form's field
    names and the names and operations its conditions use are not
    case-sensitive."""
    conds = [{"bucket": bucket}, ["starts-with", "$key", "foo"]]
    for doc, message in (({"EXPIRATION": expiration(), "conditions": conds}, "Invalid Policy: Policy missing expiration."),
                         ({"expiration": expiration(), "CONDITIONS": conds}, "Invalid Policy: Policy missing conditions.")):
        resp = post(server, bucket, v2_form(server, doc, {"key": "foo.txt"}))
        assert xml_error(resp) == (400, "InvalidPolicyDocument", message)
    doc = {"expiration": expiration(), "conditions": [{"bUcKeT": bucket}, ["StArTs-WiTh", "$KeY", "foo"],
                                                      {"AcL": "private"}]}
    fields = v2_form(server, doc, {"kEy": "foo.txt", "aCl": "private"})
    fields["pOLICy"] = fields.pop("policy")
    resp = post(server, bucket, fields)
    assert resp.status_code == 204, resp.text
    assert [o["Key"] for o in s3.list_objects_v2(Bucket=bucket)["Contents"]] == ["foo.txt"]


def test_post_object_policy_needs_its_signature(s3, server, bucket):
    """A form with a policy must carry the signature over it: without one it
    is 400 InvalidArgument naming the missing field, not an anonymous upload
    (s3-tests' test_post_object_missing_signature); a form with neither is
    anonymous, which a private bucket refuses (403)."""
    doc = {"expiration": expiration(), "conditions": [{"bucket": bucket}, ["starts-with", "$key", ""]]}
    resp = post(server, bucket, v2_form(server, doc, {"key": "a"}, sign_it=False))
    assert xml_error(resp) == (400, "InvalidArgument",
                               "Bucket POST must contain a field named 'Signature'.  If it is specified, please check the order of the fields.")
    fields = v2_form(server, doc, {"key": "a"}, sign_it=False)
    del fields["AWSAccessKeyId"]
    resp = post(server, bucket, fields)
    assert xml_error(resp)[:2] == (400, "InvalidArgument")
    assert "'AWSAccessKeyId'" in xml_error(resp)[2]
    resp = post(server, bucket, {"key": "a"})
    assert xml_error(resp)[:2] == (403, "AccessDenied")
    assert "Contents" not in s3.list_objects_v2(Bucket=bucket)


# ---- lifecycle transitions -----------------------------------------------------------


def test_lifecycle_transition_with_a_bad_date_is_400(s3, bucket):
    """Transitions are not served (one storage class: 501 NotImplemented), but
    a rule S3 would refuse is refused as S3 refuses it first: a Transition
    Date that is not midnight UTC (boto3 reads "20220927" as epoch seconds)
    is 400 InvalidArgument, a Transition without a storage class
    MalformedXML. Nothing is stored by any of them."""
    base = {"ID": "r", "Prefix": "test1/", "Status": "Enabled", "Expiration": {"Date": "2023-09-27"}}
    for transition, code, status, message in (
        ({"Date": "20220927", "StorageClass": "GLACIER"}, "InvalidArgument", 400, "'Date' must be at midnight GMT"),
        ({"Date": dt.datetime(2030, 1, 2, 10, tzinfo=dt.timezone.utc), "StorageClass": "GLACIER"},
         "InvalidArgument", 400, "'Date' must be at midnight GMT"),
        ({"Days": -1, "StorageClass": "GLACIER"}, "InvalidArgument", 400, None),
        ({"Days": 30}, "MalformedXML", 400, None),
        ({"Days": 30, "StorageClass": "NOT_A_CLASS"}, "MalformedXML", 400, None),
        ({"Date": "2022-09-27", "StorageClass": "GLACIER"}, "NotImplemented", 501, None),
    ):
        expect_error(s3.put_bucket_lifecycle_configuration, code, status, message, Bucket=bucket,
                     LifecycleConfiguration={"Rules": [{**base, "Transitions": [transition]}]})
    expect_error(s3.put_bucket_lifecycle_configuration, "InvalidArgument", 400, None, Bucket=bucket,
                 LifecycleConfiguration={"Rules": [{**base, "ID": "r", "Status": "Enabled",
                                                    "NoncurrentVersionTransitions": [{"NoncurrentDays": -2, "StorageClass": "GLACIER"}]}]})
    expect_error(s3.get_bucket_lifecycle_configuration, "NoSuchLifecycleConfiguration", 404, Bucket=bucket)


# ---- ?torrent ------------------------------------------------------------------------


def test_get_object_torrent(s3, s3_alice, bucket):
    """GetObjectTorrent resolves the object as a GET would: a missing key is
    404 NoSuchKey, a caller who may not read it 403; an object that exists
    is 501 NotImplemented (S3 has served no torrents since 2022)."""
    expect_error(s3.get_object_torrent, "NoSuchKey", 404, Bucket=bucket, Key="missing")
    s3.put_object(Bucket=bucket, Key="Avatar.mpg", Body=b"A" * 1024)
    expect_error(s3.get_object_torrent, "NotImplemented", 501, Bucket=bucket, Key="Avatar.mpg")
    expect_error(s3_alice.get_object_torrent, "AccessDenied", 403, Bucket=bucket, Key="Avatar.mpg")
    expect_error(s3_alice.get_object_torrent, "AccessDenied", 403, Bucket=bucket, Key="missing")
    expect_error(s3.get_object_torrent, "NoSuchBucket", 404, Bucket=bucket + "-none", Key="k")
    assert s3.get_object(Bucket=bucket, Key="Avatar.mpg")["Body"].read() == b"A" * 1024


# ---- Date and X-Amz-Date ------------------------------------------------------------


def put_with_headers(client, bucket: str, key: str, headers: dict, remove: tuple = ()):
    """PutObject with headers added (or removed) before signing, as s3-tests
    do: the signer then signs what is sent."""
    def edit(params, **_):
        params["headers"].update(headers)
        for h in remove:
            params["headers"].pop(h, None)
    client.meta.events.register("before-call.s3.PutObject", edit)
    return client.put_object(Bucket=bucket, Key=key, Body=b"bar")


def test_sigv4_date_header_pairs(server, s3, bucket):
    """SigV4 takes the request time from X-Amz-Date, else from Date. botocore,
    given a Date header, sends only Date (RFC 1123 with "-0000") and signs
    it: S3 accepts that, and so does shardstore."""
    now = formatdate(usegmt=True)
    for headers in ({"Date": now, "X-Amz-Date": now}, {"Date": "", "X-Amz-Date": now}, {"Date": now}):
        client = fresh_client(server)
        put_with_headers(client, bucket, "dated", headers)
        assert s3.get_object(Bucket=bucket, Key="dated")["Body"].read() == b"bar"
        s3.delete_object(Bucket=bucket, Key="dated")


@pytest.mark.parametrize("amz_date,code", [
    ("", "AccessDenied"),
    ("Bad Date", "AccessDenied"),
    ("Tue, 07 Jul 1950 21:53:04 GMT", "AccessDenied"),
    ("Tue, 07 Jul 2010 21:53:04 GMT", "RequestTimeTooSkewed"),
    ("Tue, 07 Jul 9999 21:53:04 GMT", "RequestTimeTooSkewed"),
])
def test_sigv2_x_amz_date(server, s3, bucket, amz_date, code):
    """SigV2 takes the request time from x-amz-date whenever the request
    carries it, even empty, else from Date: an empty or unreadable
    x-amz-date, or one before the epoch, is 403 AccessDenied even beside a
    good Date; one far from now 403 RequestTimeTooSkewed (year 9999
    included). Nothing is written."""
    client = fresh_client(server, signature_version="s3")
    with pytest.raises(ClientError) as ei:
        put_with_headers(client, bucket, "v2", {"x-amz-date": amz_date})
    assert (http_status(ei.value), error_code(ei.value)) == (403, code), ei.value.response
    assert "Contents" not in s3.list_objects_v2(Bucket=bucket)
    # A good x-amz-date (and none at all) is accepted.
    put_with_headers(fresh_client(server, signature_version="s3"), bucket, "v2", {"x-amz-date": formatdate(usegmt=True)})
    put_with_headers(fresh_client(server, signature_version="s3"), bucket, "v2", {})
    assert s3.get_object(Bucket=bucket, Key="v2")["Body"].read() == b"bar"
