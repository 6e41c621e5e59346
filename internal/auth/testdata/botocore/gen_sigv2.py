"""Regenerates sigv2.json: SigV2 requests produced by the real botocore
(the version pinned in tests/python/requirements.txt), which
TestBotocoreSigV2Vectors verifies. Run from the repository root:

    .venv/bin/python internal/auth/testdata/botocore/gen_sigv2.py

Presigned URLs come from generate_presigned_url at default settings (SigV2
for S3); header-signed requests from botocore's HmacV1Auth (what
signature_version="s3" uses). Each vector carries its own Expires or Date,
and the Go test sets its clock from them.
"""

import json
import os

import boto3
import botocore
from botocore.auth import HmacV1Auth
from botocore.awsrequest import AWSRequest
from botocore.config import Config
from botocore.credentials import Credentials

AK, SK = "AKTESTUSER", "secret/key+with=chars"
HERE = os.path.dirname(os.path.abspath(__file__))

vectors = []
for style, endpoint in (("path", "http://127.0.0.1:9000"), ("virtual", "http://s3.test:9000")):
    c = boto3.client(
        "s3", endpoint_url=endpoint, aws_access_key_id=AK, aws_secret_access_key=SK,
        region_name="us-east-1", config=Config(s3={"addressing_style": style}),
    )
    calls = [
        ("GET", "get_object", {"Bucket": "bucket", "Key": "dir/sub dir/file name+1.txt"}),
        ("GET", "get_object", {"Bucket": "bucket", "Key": "unicode/ключ-😀", "VersionId": "v+1",
                               "ResponseContentType": "text/html", "ResponseContentDisposition": 'attachment; filename="a b"'}),
        ("PUT", "put_object", {"Bucket": "bucket", "Key": "k", "ContentType": "image/png", "Metadata": {"owner": "me"}}),
        ("HEAD", "head_object", {"Bucket": "bucket", "Key": "chars/a!b'c(d)e*f"}),
        ("GET", "get_object_acl", {"Bucket": "bucket", "Key": "k"}),
        ("PUT", "upload_part", {"Bucket": "bucket", "Key": "k", "UploadId": "up/id=1", "PartNumber": 3}),
        ("GET", "list_objects_v2", {"Bucket": "bucket", "Prefix": "a/b"}),
    ]
    for method, op, params in calls:
        url = c.generate_presigned_url(op, Params=params, ExpiresIn=600)
        vectors.append({"form": "presigned", "style": style, "method": method, "url": url, "headers": {}})

# Header form: sign a few requests with HmacV1Auth directly.
auth = HmacV1Auth(Credentials(AK, SK))
for method, url, headers, auth_path in (
    ("GET", "http://127.0.0.1:9000/bucket/dir/a%20b.txt", {}, None),
    ("PUT", "http://127.0.0.1:9000/bucket/k?partNumber=2&uploadId=u1",
     {"Content-Type": "text/plain", "Content-MD5": "XUFAKrxLKna5cZ2REBfFkg==", "x-amz-meta-a": "1", "x-amz-acl": "private"}, None),
    ("GET", "http://bucket.s3.test:9000/k?acl", {}, "/bucket/k?acl"),
    ("DELETE", "http://bucket.s3.test:9000/dir/x%2By", {}, "/bucket/dir/x%2By"),
):
    req = AWSRequest(method=method, url=url, headers=headers)
    if auth_path:
        req.auth_path = auth_path.split("?")[0]
    auth.add_auth(req)
    vectors.append({"form": "header", "style": "virtual" if auth_path else "path", "method": method,
                    "url": url, "headers": dict(req.headers.items())})

with open(os.path.join(HERE, "sigv2.json"), "w") as f:
    json.dump({"botocore": botocore.__version__, "vectors": vectors}, f, indent=1, ensure_ascii=False)
    f.write("\n")
print(len(vectors), "vectors")
