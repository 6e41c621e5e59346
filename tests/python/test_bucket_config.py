"""Bucket configuration with boto3 against the real server (issue #12,
"Bucket configuration that tools set and read"): CORS (with browser
preflights sent by requests), ownership controls and website
configurations are stored, returned and deleted."""

from __future__ import annotations

import pytest
import requests
from botocore.exceptions import ClientError

from s3util import error_code, http_status

CORS = {
    "CORSRules": [
        {
            "ID": "web",
            "AllowedOrigins": ["https://*.example.com"],
            "AllowedMethods": ["GET", "PUT"],
            "AllowedHeaders": ["x-amz-*", "content-type"],
            "ExposeHeaders": ["ETag", "x-amz-request-id"],
            "MaxAgeSeconds": 900,
        },
        {"AllowedOrigins": ["*"], "AllowedMethods": ["HEAD"]},
    ]
}


def expect_error(fn, code: str, status: int, **kw) -> None:
    with pytest.raises(ClientError) as ei:
        fn(**kw)
    assert (error_code(ei.value), http_status(ei.value)) == (code, status)


def test_cors_roundtrip(s3, bucket):
    expect_error(s3.get_bucket_cors, "NoSuchCORSConfiguration", 404, Bucket=bucket)
    s3.put_bucket_cors(Bucket=bucket, CORSConfiguration=CORS)
    got = s3.get_bucket_cors(Bucket=bucket)["CORSRules"]
    assert got == CORS["CORSRules"]
    s3.delete_bucket_cors(Bucket=bucket)
    expect_error(s3.get_bucket_cors, "NoSuchCORSConfiguration", 404, Bucket=bucket)


def test_cors_validation_and_access(s3, s3_bob, bucket):
    bad_method = {"CORSRules": [{"AllowedOrigins": ["*"], "AllowedMethods": ["PATCH"]}]}
    expect_error(s3.put_bucket_cors, "InvalidRequest", 400, Bucket=bucket, CORSConfiguration=bad_method)
    too_many = {"CORSRules": [{"AllowedOrigins": ["*"], "AllowedMethods": ["GET"]}] * 101}
    expect_error(s3.put_bucket_cors, "MalformedXML", 400, Bucket=bucket, CORSConfiguration=too_many)
    expect_error(s3_bob.put_bucket_cors, "AccessDenied", 403, Bucket=bucket, CORSConfiguration=CORS)
    expect_error(s3_bob.get_bucket_cors, "AccessDenied", 403, Bucket=bucket)


def test_cors_preflight_and_actual(server, s3, bucket):
    url = f"{server.endpoint}/{bucket}/dir/key.txt"
    no_config = requests.options(url, headers={"Origin": "https://a.example.com", "Access-Control-Request-Method": "GET"})
    assert no_config.status_code == 403
    s3.put_bucket_cors(Bucket=bucket, CORSConfiguration=CORS)
    r = requests.options(
        url,
        headers={
            "Origin": "https://app.example.com",
            "Access-Control-Request-Method": "PUT",
            "Access-Control-Request-Headers": "Content-Type, X-Amz-Date",
        },
    )
    assert r.status_code == 200, r.text
    assert r.headers["Access-Control-Allow-Origin"] == "https://app.example.com"
    assert r.headers["Access-Control-Allow-Methods"] == "GET, PUT"
    assert r.headers["Access-Control-Allow-Headers"] == "content-type, x-amz-date"
    assert r.headers["Access-Control-Max-Age"] == "900"
    assert r.headers["Access-Control-Expose-Headers"] == "ETag, x-amz-request-id"
    denied = requests.options(url, headers={"Origin": "https://evil.org", "Access-Control-Request-Method": "GET"})
    assert denied.status_code == 403
    assert "CORSResponse" in denied.text
    assert "Access-Control-Allow-Origin" not in denied.headers
    wildcard = requests.options(url, headers={"Origin": "https://evil.org", "Access-Control-Request-Method": "HEAD"})
    assert wildcard.status_code == 200 and wildcard.headers["Access-Control-Allow-Origin"] == "*"

    # An actual (signed) request with a matching Origin gets the headers.
    s3.put_object(Bucket=bucket, Key="dir/key.txt", Body=b"hello")

    def add_origin(request, **_):
        request.headers["Origin"] = "https://app.example.com"

    events = s3.meta.events
    events.register("before-sign.s3.GetObject", add_origin)
    try:
        resp = s3.get_object(Bucket=bucket, Key="dir/key.txt")
    finally:
        events.unregister("before-sign.s3.GetObject", add_origin)
    headers = resp["ResponseMetadata"]["HTTPHeaders"]
    assert headers["access-control-allow-origin"] == "https://app.example.com"
    assert headers["access-control-expose-headers"] == "ETag, x-amz-request-id"
    assert headers["vary"] == "Origin"


def test_ownership_controls(s3, bucket):
    expect_error(s3.get_bucket_ownership_controls, "OwnershipControlsNotFoundError", 404, Bucket=bucket)
    for value in ["BucketOwnerEnforced", "BucketOwnerPreferred", "ObjectWriter"]:
        s3.put_bucket_ownership_controls(Bucket=bucket, OwnershipControls={"Rules": [{"ObjectOwnership": value}]})
        got = s3.get_bucket_ownership_controls(Bucket=bucket)["OwnershipControls"]
        assert got == {"Rules": [{"ObjectOwnership": value}]}
    s3.delete_bucket_ownership_controls(Bucket=bucket)
    expect_error(s3.get_bucket_ownership_controls, "OwnershipControlsNotFoundError", 404, Bucket=bucket)


def test_website(s3, bucket):
    expect_error(s3.get_bucket_website, "NoSuchWebsiteConfiguration", 404, Bucket=bucket)
    config = {
        "IndexDocument": {"Suffix": "index.html"},
        "ErrorDocument": {"Key": "error.html"},
        "RoutingRules": [
            {
                "Condition": {"KeyPrefixEquals": "docs/"},
                "Redirect": {"ReplaceKeyPrefixWith": "documents/", "HttpRedirectCode": "302"},
            }
        ],
    }
    s3.put_bucket_website(Bucket=bucket, WebsiteConfiguration=config)
    got = s3.get_bucket_website(Bucket=bucket)
    assert {k: got[k] for k in config} == config
    s3.put_bucket_website(
        Bucket=bucket, WebsiteConfiguration={"RedirectAllRequestsTo": {"HostName": "example.com", "Protocol": "https"}}
    )
    got = s3.get_bucket_website(Bucket=bucket)
    assert got["RedirectAllRequestsTo"] == {"HostName": "example.com", "Protocol": "https"}
    assert "IndexDocument" not in got
    expect_error(s3.put_bucket_website, "InvalidArgument", 400, Bucket=bucket, WebsiteConfiguration={})
    s3.delete_bucket_website(Bucket=bucket)
    expect_error(s3.get_bucket_website, "NoSuchWebsiteConfiguration", 404, Bucket=bucket)
