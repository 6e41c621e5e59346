"""Browser form uploads (issue #12): boto3's generate_presigned_post, the
form a web page posts, sent with requests exactly as its docs show."""

import xml.etree.ElementTree as ET

import requests


def _post(presigned, files, data=None, allow_redirects=False):
    fields = dict(presigned["fields"])
    fields.update(data or {})
    return requests.post(presigned["url"], data=fields, files=files, timeout=60, allow_redirects=allow_redirects)


def _error(resp):
    root = ET.fromstring(resp.content)
    return root.findtext("Code"), root.findtext("Message")


def test_presigned_post_default_settings(s3, bucket):
    body = b"uploaded from a browser form\n" * 100
    presigned = s3.generate_presigned_post(bucket, "forms/${filename}", ExpiresIn=600)
    resp = _post(presigned, {"file": ("hello.txt", body, "text/plain")})
    assert resp.status_code == 204, resp.text
    obj = s3.get_object(Bucket=bucket, Key="forms/hello.txt")
    assert obj["Body"].read() == body
    # The file part's type labels the object when the form sets none.
    assert obj["ContentType"] == "text/plain"
    assert resp.headers["ETag"] == obj["ETag"]


def test_presigned_post_conditions(s3, bucket):
    presigned = s3.generate_presigned_post(
        bucket,
        "avatars/${filename}",
        Fields={"acl": "public-read", "Content-Type": "image/png", "x-amz-meta-user": "42",
                "success_action_status": "201"},
        Conditions=[
            {"acl": "public-read"},
            ["starts-with", "$Content-Type", "image/"],
            ["eq", "$x-amz-meta-user", "42"],
            {"success_action_status": "201"},
            ["content-length-range", 1, 1024],
        ],
        ExpiresIn=600,
    )
    resp = _post(presigned, {"file": ("me.png", b"\x89PNG fake", "image/png")})
    assert resp.status_code == 201, resp.text
    doc = ET.fromstring(resp.content)
    assert doc.tag == "PostResponse"
    assert doc.findtext("Bucket") == bucket and doc.findtext("Key") == "avatars/me.png"
    head = s3.head_object(Bucket=bucket, Key="avatars/me.png")
    assert head["Metadata"] == {"user": "42"} and head["ContentType"] == "image/png"
    assert doc.findtext("ETag") == head["ETag"]
    # acl=public-read from the form: anyone may read it.
    anon = requests.get(f"{presigned['url']}/avatars/me.png", timeout=30)
    assert anon.status_code == 200 and anon.content == b"\x89PNG fake"

    # Too large for the policy's range: refused, nothing stored.
    resp = _post(presigned, {"file": ("big.png", b"x" * 1025, "image/png")})
    assert resp.status_code == 400 and _error(resp)[0] == "EntityTooLarge", resp.text
    # A field changed against the policy: refused with S3's message.
    resp = _post(presigned, {"file": ("me.png", b"x", "image/png")}, data={"x-amz-meta-user": "43"})
    code, message = _error(resp)
    assert resp.status_code == 403 and code == "AccessDenied"
    assert message == 'Invalid according to Policy: Policy Condition failed: ["eq", "$x-amz-meta-user", "42"]'
    # A field the policy does not mention.
    resp = _post(presigned, {"file": ("me.png", b"x", "image/png")}, data={"x-amz-meta-extra": "1"})
    assert resp.status_code == 403 and _error(resp) == ("AccessDenied", "Invalid according to Policy: Extra input fields: x-amz-meta-extra")
    listed = [o["Key"] for o in s3.list_objects_v2(Bucket=bucket).get("Contents", [])]
    assert listed == ["avatars/me.png"]


def test_presigned_post_other_users_bucket(server, s3_bob, bucket):
    # Bob's signature is valid, but the bucket is root's and private.
    presigned = s3_bob.generate_presigned_post(bucket, "intruder", ExpiresIn=600)
    resp = _post(presigned, {"file": ("x", b"data")})
    assert resp.status_code == 403 and _error(resp)[0] == "AccessDenied"


def test_presigned_post_redirect(s3, bucket):
    presigned = s3.generate_presigned_post(
        bucket, "r.txt",
        Fields={"success_action_redirect": "https://app.example/done"},
        Conditions=[{"success_action_redirect": "https://app.example/done"}],
    )
    resp = _post(presigned, {"file": ("r.txt", b"redirect me")})
    assert resp.status_code == 303, resp.text
    location = resp.headers["Location"]
    assert location.startswith("https://app.example/done?")
    assert f"bucket={bucket}" in location and "key=r.txt" in location and "etag=%22" in location
