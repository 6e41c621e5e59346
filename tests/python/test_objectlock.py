"""S3 Object Lock with boto3 at default settings and the aws cli: buckets
created with object lock, Put/GetObjectLockConfiguration and the default
retention, the x-amz-object-lock-* headers of PutObject and HEAD,
Put/GetObjectRetention, Put/GetObjectLegalHold, deletes refused while a
retention or a legal hold protects a version, the governance bypass, and the
errors S3 answers (NoSuchObjectLockConfiguration,
ObjectLockConfigurationNotFoundError, InvalidRequest on a bucket without
object lock, InvalidArgument for a past retain-until date, MalformedXML,
AccessDenied for a locked delete, InvalidBucketState).

Retain-until dates are minutes or days ahead of the real clock; nothing here
waits for one to pass (the engine's tests move a fake clock for expiry).
COMPLIANCE versions can never be removed before their date, so the tests
give them a few minutes and leave them behind in their (uniquely named)
buckets."""

from __future__ import annotations

import datetime
import json
import xml.etree.ElementTree as ET

import pytest
from botocore.exceptions import ClientError

from conftest import unique_bucket_name
from s3util import expect_error, raw_request, sign

MSG_LOCKED = "Access Denied because object protected by object lock."
MSG_NOT_ENABLED = "Bucket is missing Object Lock Configuration"
MSG_NO_LOCK_CONFIG = "The specified object does not have a ObjectLock configuration"
MSG_PUT_CHECKSUM = "Content-MD5 OR x-amz-checksum- HTTP header is required for Put Object requests with Object Lock parameters"


def ahead(**delta) -> datetime.datetime:
    """A retain-until date the given time ahead of now, at whole seconds."""
    now = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)
    return now + datetime.timedelta(**delta)


def lock_of(head: dict) -> tuple:
    return (head.get("ObjectLockMode"), head.get("ObjectLockRetainUntilDate"), head.get("ObjectLockLegalHoldStatus"))


def remove_everything(client, bucket: str) -> None:
    """Best effort: release legal holds, remove every version a governance
    bypass can remove, and the bucket if nothing is left (COMPLIANCE versions
    stay until their date)."""
    for page in client.get_paginator("list_object_versions").paginate(Bucket=bucket):
        for v in page.get("Versions", []) + page.get("DeleteMarkers", []):
            try:
                if "ETag" in v:
                    client.put_object_legal_hold(Bucket=bucket, Key=v["Key"], VersionId=v["VersionId"],
                                                 LegalHold={"Status": "OFF"})
            except ClientError:
                pass
            try:
                client.delete_object(Bucket=bucket, Key=v["Key"], VersionId=v["VersionId"], BypassGovernanceRetention=True)
            except ClientError:
                pass
    try:
        client.delete_bucket(Bucket=bucket)
    except ClientError:
        pass


@pytest.fixture
def lock_bucket(request, s3):
    """A fresh bucket created with object lock (and so versioning Enabled)."""
    name = unique_bucket_name("l-" + request.node.name.removeprefix("test_"))
    s3.create_bucket(Bucket=name, ObjectLockEnabledForBucket=True)
    yield name
    try:
        remove_everything(s3, name)
    except Exception:  # cleanup must never mask the test's own outcome
        pass


@pytest.fixture
def plain_bucket(request, s3):
    """A fresh bucket without object lock, never versioned."""
    name = unique_bucket_name("p-" + request.node.name.removeprefix("test_"))
    s3.create_bucket(Bucket=name)
    yield name
    try:
        remove_everything(s3, name)
    except Exception:
        pass


def test_lock_bucket_has_versioning_and_a_configuration(s3, lock_bucket):
    """S3: CreateBucket with x-amz-bucket-object-lock-enabled turns versioning
    on, and GetObjectLockConfiguration answers ObjectLockEnabled without a Rule
    until a default retention is set."""
    assert s3.get_bucket_versioning(Bucket=lock_bucket)["Status"] == "Enabled"
    got = s3.get_object_lock_configuration(Bucket=lock_bucket)["ObjectLockConfiguration"]
    assert got == {"ObjectLockEnabled": "Enabled"}


def test_versioning_cannot_be_suspended(s3, lock_bucket):
    """S3: once object lock is on, PutBucketVersioning cannot suspend
    versioning (409 InvalidBucketState); Enabled is still accepted."""
    expect_error(s3.put_bucket_versioning, "InvalidBucketState", 409,
                 "An Object Lock configuration is present on this bucket, so the versioning state cannot be changed.",
                 Bucket=lock_bucket, VersioningConfiguration={"Status": "Suspended"})
    s3.put_bucket_versioning(Bucket=lock_bucket, VersioningConfiguration={"Status": "Enabled"})
    assert s3.get_bucket_versioning(Bucket=lock_bucket)["Status"] == "Enabled"


def test_object_lock_configuration_round_trip(s3, lock_bucket):
    """S3: PutObjectLockConfiguration stores a default retention of Days or
    Years, GetObjectLockConfiguration answers it as sent, and a document
    without a Rule removes the default retention (object lock stays on)."""
    for rule in ({"DefaultRetention": {"Mode": "GOVERNANCE", "Days": 2}},
                 {"DefaultRetention": {"Mode": "COMPLIANCE", "Years": 1}}):
        s3.put_object_lock_configuration(Bucket=lock_bucket,
                                         ObjectLockConfiguration={"ObjectLockEnabled": "Enabled", "Rule": rule})
        got = s3.get_object_lock_configuration(Bucket=lock_bucket)["ObjectLockConfiguration"]
        assert got == {"ObjectLockEnabled": "Enabled", "Rule": rule}
    s3.put_object_lock_configuration(Bucket=lock_bucket, ObjectLockConfiguration={"ObjectLockEnabled": "Enabled"})
    assert s3.get_object_lock_configuration(Bucket=lock_bucket)["ObjectLockConfiguration"] == {"ObjectLockEnabled": "Enabled"}


def test_object_lock_configuration_errors(s3, server, plain_bucket, lock_bucket):
    """S3: a bucket without object lock answers 404
    ObjectLockConfigurationNotFoundError; putting one needs versioning Enabled
    (409 InvalidBucketState); a document S3's schema refuses is MalformedXML;
    the call needs Content-MD5 or a checksum."""
    expect_error(s3.get_object_lock_configuration, "ObjectLockConfigurationNotFoundError", 404,
                 "Object Lock configuration does not exist for this bucket", Bucket=plain_bucket)
    expect_error(s3.put_object_lock_configuration, "InvalidBucketState", 409,
                 "Versioning must be 'Enabled' on the bucket to apply a Object Lock configuration",
                 Bucket=plain_bucket, ObjectLockConfiguration={"ObjectLockEnabled": "Enabled"})
    # Once versioning is Enabled, object lock can be turned on.
    s3.put_bucket_versioning(Bucket=plain_bucket, VersioningConfiguration={"Status": "Enabled"})
    s3.put_object_lock_configuration(Bucket=plain_bucket, ObjectLockConfiguration={"ObjectLockEnabled": "Enabled"})
    assert s3.get_object_lock_configuration(Bucket=plain_bucket)["ObjectLockConfiguration"]["ObjectLockEnabled"] == "Enabled"

    # Schema errors; boto3 does not check enum values, so they reach the server.
    expect_error(s3.put_object_lock_configuration, "MalformedXML", 400, Bucket=lock_bucket,
                 ObjectLockConfiguration={"ObjectLockEnabled": "Enabled",
                                          "Rule": {"DefaultRetention": {"Mode": "FOREVER", "Days": 1}}})
    expect_error(s3.put_object_lock_configuration, "MalformedXML", 400, Bucket=lock_bucket,
                 ObjectLockConfiguration={"ObjectLockEnabled": "Enabled",
                                          "Rule": {"DefaultRetention": {"Mode": "GOVERNANCE", "Days": 1, "Years": 1}}})
    expect_error(s3.put_object_lock_configuration, "MalformedXML", 400, Bucket=lock_bucket,
                 ObjectLockConfiguration={"ObjectLockEnabled": "Disabled"})
    assert "Rule" not in s3.get_object_lock_configuration(Bucket=lock_bucket)["ObjectLockConfiguration"]

    # Without Content-MD5, an x-amz-checksum-* header or a body digest the
    # signature covers, S3 refuses the call. (S3 does not count a signed
    # payload digest; shardstore does, see README "Object lock".)
    body = (b'<ObjectLockConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><ObjectLockEnabled>Enabled'
            b'</ObjectLockEnabled><Rule><DefaultRetention><Mode>GOVERNANCE</Mode><Days>1</Days></DefaultRetention>'
            b'</Rule></ObjectLockConfiguration>')
    target = f"/{lock_bucket}?object-lock"
    hdrs = sign(server.endpoint, server.root.access_key, server.root.secret_key, "PUT", target, body,
                unsigned_payload=True)
    resp = raw_request(server.endpoint, "PUT", target, body, hdrs)
    doc = ET.fromstring(resp.body)
    assert (resp.status, doc.findtext("Code"), doc.findtext("Message")) == (
        400, "InvalidRequest", "Missing required header for this request: Content-MD5"), resp
    assert "Rule" not in s3.get_object_lock_configuration(Bucket=lock_bucket)["ObjectLockConfiguration"]
    # The same request with its SHA-256 signed is accepted.
    hdrs = sign(server.endpoint, server.root.access_key, server.root.secret_key, "PUT", target, body)
    resp = raw_request(server.endpoint, "PUT", target, body, hdrs)
    assert resp.status == 200, resp
    assert s3.get_object_lock_configuration(Bucket=lock_bucket)["ObjectLockConfiguration"]["Rule"] == {
        "DefaultRetention": {"Mode": "GOVERNANCE", "Days": 1}}


def test_default_retention_period_errors(s3, server, lock_bucket):
    """S3 (as AWS answers it): a default retention of zero or fewer Days or
    Years is 400 InvalidArgument "Default retention period must be a positive
    integer value."; more than S3's 100 years (36500 days) is InvalidArgument
    too; Days and Years together, or a value that is no integer, MalformedXML.
    A refused document leaves the stored configuration as it was. (Ceph's
    s3-tests expect InvalidRetentionPeriod, RGW's code: docs/conformance.md.)"""
    kept = {"DefaultRetention": {"Mode": "GOVERNANCE", "Days": 3}}
    s3.put_object_lock_configuration(Bucket=lock_bucket, ObjectLockConfiguration={"ObjectLockEnabled": "Enabled", "Rule": kept})
    for retention, message in (
        ({"Days": 0}, "Default retention period must be a positive integer value."),
        ({"Days": -1}, "Default retention period must be a positive integer value."),
        ({"Years": 0}, "Default retention period must be a positive integer value."),
        ({"Years": -5}, "Default retention period must be a positive integer value."),
        ({"Days": -(2**31)}, "Default retention period must be a positive integer value."),
        ({"Days": 36501}, "Default retention period must be a positive integer value of at most 36500 days."),
        ({"Years": 101}, "Default retention period must be a positive integer value of at most 100 years."),
    ):
        for mode in ("GOVERNANCE", "COMPLIANCE"):
            expect_error(s3.put_object_lock_configuration, "InvalidArgument", 400, message, Bucket=lock_bucket,
                         ObjectLockConfiguration={"ObjectLockEnabled": "Enabled",
                                                  "Rule": {"DefaultRetention": {"Mode": mode, **retention}}})
    expect_error(s3.put_object_lock_configuration, "MalformedXML", 400, Bucket=lock_bucket,
                 ObjectLockConfiguration={"ObjectLockEnabled": "Enabled",
                                          "Rule": {"DefaultRetention": {"Mode": "GOVERNANCE", "Days": 0, "Years": 1}}})
    # Values boto3 would not send, raw: not an integer, or past int64.
    target = f"/{lock_bucket}?object-lock"
    for days in (b"1.5", b"99999999999999999999", b"ten"):
        body = (b'<ObjectLockConfiguration><ObjectLockEnabled>Enabled</ObjectLockEnabled><Rule><DefaultRetention>'
                b'<Mode>GOVERNANCE</Mode><Days>' + days + b'</Days></DefaultRetention></Rule></ObjectLockConfiguration>')
        hdrs = sign(server.endpoint, server.root.access_key, server.root.secret_key, "PUT", target, body)
        resp = raw_request(server.endpoint, "PUT", target, body, hdrs)
        assert (resp.status, resp.error_code()) == (400, "MalformedXML"), resp
    assert s3.get_object_lock_configuration(Bucket=lock_bucket)["ObjectLockConfiguration"]["Rule"] == kept
    # The limits themselves are accepted.
    for rule in ({"DefaultRetention": {"Mode": "GOVERNANCE", "Days": 36500}},
                 {"DefaultRetention": {"Mode": "GOVERNANCE", "Years": 100}}):
        s3.put_object_lock_configuration(Bucket=lock_bucket, ObjectLockConfiguration={"ObjectLockEnabled": "Enabled", "Rule": rule})
        assert s3.get_object_lock_configuration(Bucket=lock_bucket)["ObjectLockConfiguration"]["Rule"] == rule
    s3.put_object_lock_configuration(Bucket=lock_bucket, ObjectLockConfiguration={"ObjectLockEnabled": "Enabled"})


def test_put_with_retention_and_legal_hold(s3, lock_bucket):
    """S3: PutObject's x-amz-object-lock-mode, -retain-until-date and
    -legal-hold are stored with the version; HEAD and GET answer them, and
    GetObjectRetention / GetObjectLegalHold show them."""
    until = ahead(days=1)
    v = s3.put_object(Bucket=lock_bucket, Key="doc", Body=b"kept", ObjectLockMode="GOVERNANCE",
                      ObjectLockRetainUntilDate=until, ObjectLockLegalHoldStatus="ON")["VersionId"]
    assert lock_of(s3.head_object(Bucket=lock_bucket, Key="doc")) == ("GOVERNANCE", until, "ON")
    got = s3.get_object(Bucket=lock_bucket, Key="doc", VersionId=v)
    assert got["Body"].read() == b"kept" and lock_of(got) == ("GOVERNANCE", until, "ON")
    assert s3.get_object_retention(Bucket=lock_bucket, Key="doc")["Retention"] == {"Mode": "GOVERNANCE", "RetainUntilDate": until}
    assert s3.get_object_legal_hold(Bucket=lock_bucket, Key="doc", VersionId=v)["LegalHold"] == {"Status": "ON"}
    # A later version without headers has no lock of its own.
    s3.put_object(Bucket=lock_bucket, Key="doc", Body=b"newer")
    assert lock_of(s3.head_object(Bucket=lock_bucket, Key="doc")) == (None, None, None)
    assert lock_of(s3.head_object(Bucket=lock_bucket, Key="doc", VersionId=v)) == ("GOVERNANCE", until, "ON")


def test_lock_headers_only_for_callers_who_may_read_them(s3, s3_alice, lock_bucket):
    """S3 sends x-amz-object-lock-* only to callers allowed
    s3:GetObjectRetention / s3:GetObjectLegalHold: a public-read object shows
    its body to another user, not its lock."""
    until = ahead(days=1)
    s3.put_object(Bucket=lock_bucket, Key="pub", Body=b"x", ACL="public-read", ObjectLockMode="GOVERNANCE",
                  ObjectLockRetainUntilDate=until, ObjectLockLegalHoldStatus="OFF")
    assert lock_of(s3_alice.head_object(Bucket=lock_bucket, Key="pub")) == (None, None, None)
    assert lock_of(s3.head_object(Bucket=lock_bucket, Key="pub")) == ("GOVERNANCE", until, "OFF")
    expect_error(s3_alice.get_object_retention, "AccessDenied", 403, Bucket=lock_bucket, Key="pub")


def test_default_retention_applies_to_new_versions(s3, lock_bucket):
    """S3: a bucket's default retention is given to every new version whose
    request names none; an explicit retention wins."""
    s3.put_object_lock_configuration(Bucket=lock_bucket, ObjectLockConfiguration={
        "ObjectLockEnabled": "Enabled", "Rule": {"DefaultRetention": {"Mode": "GOVERNANCE", "Days": 1}}})
    before = datetime.datetime.now(datetime.timezone.utc)
    v = s3.put_object(Bucket=lock_bucket, Key="d", Body=b"default")["VersionId"]
    after = datetime.datetime.now(datetime.timezone.utc)
    mode, until, hold = lock_of(s3.head_object(Bucket=lock_bucket, Key="d"))
    day = datetime.timedelta(days=1)
    assert mode == "GOVERNANCE" and hold is None
    assert before + day - datetime.timedelta(seconds=2) <= until <= after + day + datetime.timedelta(seconds=2), until
    expect_error(s3.delete_object, "AccessDenied", 403, MSG_LOCKED, Bucket=lock_bucket, Key="d", VersionId=v)
    explicit = ahead(minutes=5)
    s3.put_object(Bucket=lock_bucket, Key="e", Body=b"explicit", ObjectLockMode="COMPLIANCE", ObjectLockRetainUntilDate=explicit)
    assert lock_of(s3.head_object(Bucket=lock_bucket, Key="e"))[:2] == ("COMPLIANCE", explicit)


def test_locked_delete_and_governance_bypass(s3, lock_bucket):
    """S3: removing a version under retention is 403 AccessDenied; with
    x-amz-bypass-governance-retention (and s3:BypassGovernanceRetention, which
    root has) a GOVERNANCE version can be removed; a delete without a version
    id only adds a delete marker."""
    v = s3.put_object(Bucket=lock_bucket, Key="g", Body=b"g", ObjectLockMode="GOVERNANCE",
                      ObjectLockRetainUntilDate=ahead(days=2))["VersionId"]
    expect_error(s3.delete_object, "AccessDenied", 403, MSG_LOCKED, Bucket=lock_bucket, Key="g", VersionId=v)
    marker = s3.delete_object(Bucket=lock_bucket, Key="g")
    assert marker["DeleteMarker"] is True
    s3.delete_object(Bucket=lock_bucket, Key="g", VersionId=marker["VersionId"])
    # Shortening GOVERNANCE also needs the bypass.
    expect_error(s3.put_object_retention, "AccessDenied", 403, MSG_LOCKED, Bucket=lock_bucket, Key="g",
                 Retention={"Mode": "GOVERNANCE", "RetainUntilDate": ahead(days=1)})
    shorter = ahead(hours=1)
    s3.put_object_retention(Bucket=lock_bucket, Key="g", Retention={"Mode": "GOVERNANCE", "RetainUntilDate": shorter},
                            BypassGovernanceRetention=True)
    assert s3.get_object_retention(Bucket=lock_bucket, Key="g")["Retention"]["RetainUntilDate"] == shorter
    s3.delete_object(Bucket=lock_bucket, Key="g", VersionId=v, BypassGovernanceRetention=True)
    expect_error(s3.head_object, "404", 404, Bucket=lock_bucket, Key="g", VersionId=v)


def test_governance_to_compliance_needs_bypass(s3, s3_alice, lock_bucket):
    """S3: governance mode protects a version's lock settings too ("users can't
    overwrite or delete an object version or alter its lock settings unless
    they have special permissions"), so turning GOVERNANCE into COMPLIANCE,
    even with a later date, is 403 AccessDenied without
    x-amz-bypass-governance-retention; with it (and s3:BypassGovernanceRetention)
    the mode changes. A bypass header from a caller without that permission is
    no bypass. Extending GOVERNANCE in the same mode needs none."""
    until = ahead(minutes=3)
    v = s3.put_object(Bucket=lock_bucket, Key="g", Body=b"g", ObjectLockMode="GOVERNANCE",
                      ObjectLockRetainUntilDate=until)["VersionId"]
    for retention in ({"Mode": "COMPLIANCE", "RetainUntilDate": until},
                      {"Mode": "COMPLIANCE", "RetainUntilDate": ahead(minutes=4)}):
        expect_error(s3.put_object_retention, "AccessDenied", 403, MSG_LOCKED, Bucket=lock_bucket, Key="g",
                     VersionId=v, Retention=retention)
    # Alice may write to the bucket by policy, but not bypass governance.
    s3.put_bucket_policy(Bucket=lock_bucket, Policy=json.dumps({"Version": "2012-10-17", "Statement": [{
        "Effect": "Allow", "Principal": {"AWS": ["*"]}, "Action": ["s3:PutObjectRetention", "s3:GetObjectRetention"],
        "Resource": [f"arn:aws:s3:::{lock_bucket}/*"]}]}))
    # Extending in the same mode needs no bypass (and shows the policy
    # lets Alice set retention at all).
    longer = ahead(minutes=4)
    s3_alice.put_object_retention(Bucket=lock_bucket, Key="g", VersionId=v,
                                  Retention={"Mode": "GOVERNANCE", "RetainUntilDate": longer})
    expect_error(s3_alice.put_object_retention, "AccessDenied", 403, Bucket=lock_bucket, Key="g", VersionId=v,
                 Retention={"Mode": "COMPLIANCE", "RetainUntilDate": longer}, BypassGovernanceRetention=True)
    assert s3.get_object_retention(Bucket=lock_bucket, Key="g", VersionId=v)["Retention"] == {
        "Mode": "GOVERNANCE", "RetainUntilDate": longer}
    s3.put_object_retention(Bucket=lock_bucket, Key="g", VersionId=v, Retention={"Mode": "COMPLIANCE", "RetainUntilDate": longer},
                            BypassGovernanceRetention=True)
    assert s3.get_object_retention(Bucket=lock_bucket, Key="g", VersionId=v)["Retention"] == {
        "Mode": "COMPLIANCE", "RetainUntilDate": longer}
    s3.delete_bucket_policy(Bucket=lock_bucket)


def test_compliance_can_only_be_extended(s3, lock_bucket):
    """S3: a COMPLIANCE retention cannot be shortened, removed or turned into
    GOVERNANCE by anyone, root and bypass included; it can be extended; its
    version cannot be removed."""
    until = ahead(minutes=5)
    v = s3.put_object(Bucket=lock_bucket, Key="c", Body=b"c", ObjectLockMode="COMPLIANCE",
                      ObjectLockRetainUntilDate=until)["VersionId"]
    for retention in ({"Mode": "COMPLIANCE", "RetainUntilDate": ahead(minutes=2)},
                      {"Mode": "GOVERNANCE", "RetainUntilDate": ahead(minutes=10)}):
        expect_error(s3.put_object_retention, "AccessDenied", 403, MSG_LOCKED, Bucket=lock_bucket, Key="c",
                     VersionId=v, Retention=retention, BypassGovernanceRetention=True)
    expect_error(s3.delete_object, "AccessDenied", 403, MSG_LOCKED, Bucket=lock_bucket, Key="c", VersionId=v,
                 BypassGovernanceRetention=True)
    later = ahead(minutes=6)
    s3.put_object_retention(Bucket=lock_bucket, Key="c", VersionId=v, Retention={"Mode": "COMPLIANCE", "RetainUntilDate": later})
    assert s3.get_object_retention(Bucket=lock_bucket, Key="c", VersionId=v)["Retention"] == {
        "Mode": "COMPLIANCE", "RetainUntilDate": later}


def test_legal_hold_blocks_delete_until_released(s3, lock_bucket):
    """S3: a legal hold has no date and yields to no bypass; released with
    PutObjectLegalHold OFF, the version can be removed."""
    v = s3.put_object(Bucket=lock_bucket, Key="h", Body=b"h")["VersionId"]
    expect_error(s3.get_object_legal_hold, "NoSuchObjectLockConfiguration", 404, MSG_NO_LOCK_CONFIG,
                 Bucket=lock_bucket, Key="h")
    s3.put_object_legal_hold(Bucket=lock_bucket, Key="h", LegalHold={"Status": "ON"})
    assert s3.get_object_legal_hold(Bucket=lock_bucket, Key="h")["LegalHold"]["Status"] == "ON"
    expect_error(s3.delete_object, "AccessDenied", 403, MSG_LOCKED, Bucket=lock_bucket, Key="h", VersionId=v,
                 BypassGovernanceRetention=True)
    s3.put_object_legal_hold(Bucket=lock_bucket, Key="h", VersionId=v, LegalHold={"Status": "OFF"})
    assert s3.get_object_legal_hold(Bucket=lock_bucket, Key="h", VersionId=v)["LegalHold"]["Status"] == "OFF"
    s3.delete_object(Bucket=lock_bucket, Key="h", VersionId=v)
    expect_error(s3.head_object, "404", 404, Bucket=lock_bucket, Key="h", VersionId=v)


def test_delete_objects_reports_locked_keys(s3, lock_bucket):
    """S3: DeleteObjects answers a per-key Error with Code AccessDenied for each
    protected version and deletes the others; the bypass header frees the
    GOVERNANCE ones."""
    gov = s3.put_object(Bucket=lock_bucket, Key="gov", Body=b"g", ObjectLockMode="GOVERNANCE",
                        ObjectLockRetainUntilDate=ahead(days=1))["VersionId"]
    held = s3.put_object(Bucket=lock_bucket, Key="held", Body=b"h", ObjectLockLegalHoldStatus="ON")["VersionId"]
    free = s3.put_object(Bucket=lock_bucket, Key="free", Body=b"f")["VersionId"]
    objs = [{"Key": "gov", "VersionId": gov}, {"Key": "held", "VersionId": held}, {"Key": "free", "VersionId": free}]
    out = s3.delete_objects(Bucket=lock_bucket, Delete={"Objects": objs})
    assert [d["Key"] for d in out.get("Deleted", [])] == ["free"]
    errors = {e["Key"]: (e["Code"], e["Message"], e.get("VersionId")) for e in out["Errors"]}
    assert errors == {"gov": ("AccessDenied", MSG_LOCKED, gov), "held": ("AccessDenied", MSG_LOCKED, held)}
    out = s3.delete_objects(Bucket=lock_bucket, Delete={"Objects": objs[:2]}, BypassGovernanceRetention=True)
    assert [d["Key"] for d in out.get("Deleted", [])] == ["gov"]
    assert [(e["Key"], e["Code"]) for e in out["Errors"]] == [("held", "AccessDenied")]


def test_error_cases(s3, server, lock_bucket, plain_bucket):
    """S3's answers to object lock requests it refuses: NoSuchObjectLockConfiguration
    for a version without retention, InvalidRequest in a bucket without object
    lock, InvalidArgument for a past retain-until date or a header without its
    pair, MalformedXML for a Retention or LegalHold S3's schema refuses, and
    InvalidRequest for a PutObject with lock headers but no checksum."""
    s3.put_object(Bucket=lock_bucket, Key="k", Body=b"k")
    expect_error(s3.get_object_retention, "NoSuchObjectLockConfiguration", 404, MSG_NO_LOCK_CONFIG,
                 Bucket=lock_bucket, Key="k")

    # A bucket without object lock.
    s3.put_object(Bucket=plain_bucket, Key="k", Body=b"k")
    expect_error(s3.put_object, "InvalidRequest", 400, MSG_NOT_ENABLED, Bucket=plain_bucket, Key="k2", Body=b"x",
                 ObjectLockLegalHoldStatus="ON")
    expect_error(s3.put_object_retention, "InvalidRequest", 400, MSG_NOT_ENABLED, Bucket=plain_bucket, Key="k",
                 Retention={"Mode": "GOVERNANCE", "RetainUntilDate": ahead(days=1)})
    expect_error(s3.get_object_legal_hold, "InvalidRequest", 400, MSG_NOT_ENABLED, Bucket=plain_bucket, Key="k")

    # Dates in the past, a mode without a date.
    past = ahead(minutes=-5)
    expect_error(s3.put_object, "InvalidArgument", 400, "The retain until date must be in the future!",
                 Bucket=lock_bucket, Key="k", Body=b"x", ObjectLockMode="GOVERNANCE", ObjectLockRetainUntilDate=past)
    expect_error(s3.put_object_retention, "InvalidArgument", 400, "The retain until date must be in the future!",
                 Bucket=lock_bucket, Key="k", Retention={"Mode": "GOVERNANCE", "RetainUntilDate": past})
    expect_error(s3.put_object, "InvalidArgument", 400,
                 "x-amz-object-lock-retain-until-date and x-amz-object-lock-mode must both be supplied",
                 Bucket=lock_bucket, Key="k", Body=b"x", ObjectLockMode="GOVERNANCE")
    expect_error(s3.put_object, "InvalidArgument", 400, "Unknown wormMode directive.",
                 Bucket=lock_bucket, Key="k", Body=b"x", ObjectLockMode="FOREVER", ObjectLockRetainUntilDate=ahead(days=1))
    expect_error(s3.put_object, "InvalidArgument", 400, "Legal Hold must be either of 'ON' or 'OFF'",
                 Bucket=lock_bucket, Key="k", Body=b"x", ObjectLockLegalHoldStatus="on")

    # Documents S3's schema refuses (boto3 does not check enum values).
    for retention in ({"Mode": "GOVERNANCE"}, {"RetainUntilDate": ahead(days=1)},
                      {"Mode": "FOREVER", "RetainUntilDate": ahead(days=1)}):
        expect_error(s3.put_object_retention, "MalformedXML", 400, Bucket=lock_bucket, Key="k", Retention=retention)
    expect_error(s3.put_object_legal_hold, "MalformedXML", 400, Bucket=lock_bucket, Key="k", LegalHold={"Status": "on"})
    expect_error(s3.get_object_legal_hold, "NoSuchObjectLockConfiguration", 404, Bucket=lock_bucket, Key="k")
    expect_error(s3.get_object_retention, "NoSuchKey", 404, Bucket=lock_bucket, Key="missing")

    # S3 requires Content-MD5 or a checksum on a PutObject with lock
    # parameters (shardstore also takes a body digest the signature
    # covers); an UNSIGNED-PAYLOAD request with neither is refused.
    target = f"/{lock_bucket}/raw"
    hdrs = sign(server.endpoint, server.root.access_key, server.root.secret_key, "PUT", target, b"raw",
                {"x-amz-object-lock-legal-hold": "ON"}, unsigned_payload=True)
    resp = raw_request(server.endpoint, "PUT", target, b"raw", hdrs)
    doc = ET.fromstring(resp.body)
    assert (resp.status, doc.findtext("Code"), doc.findtext("Message")) == (400, "InvalidRequest", MSG_PUT_CHECKSUM), resp
    expect_error(s3.head_object, "404", 404, Bucket=lock_bucket, Key="raw")
    hdrs = sign(server.endpoint, server.root.access_key, server.root.secret_key, "PUT", target, b"raw",
                {"x-amz-object-lock-legal-hold": "ON"})
    resp = raw_request(server.endpoint, "PUT", target, b"raw", hdrs)
    assert resp.status == 200, resp
    assert s3.get_object_legal_hold(Bucket=lock_bucket, Key="raw")["LegalHold"] == {"Status": "ON"}
    s3.put_object_legal_hold(Bucket=lock_bucket, Key="raw", LegalHold={"Status": "OFF"})


def test_aws_cli_object_lock(aws, s3, tmp_path):
    """The aws cli's spelling of the same calls: create-bucket
    --object-lock-enabled-for-bucket, put/get-object-lock-configuration,
    put-object with lock options, get-object-retention, put-object-legal-hold,
    a refused delete-object and put-object-retention with
    --bypass-governance-retention."""
    bucket = unique_bucket_name("cli-lock")
    aws("s3api", "create-bucket", "--bucket", bucket, "--object-lock-enabled-for-bucket")
    try:
        aws("s3api", "put-object-lock-configuration", "--bucket", bucket, "--object-lock-configuration",
            json.dumps({"ObjectLockEnabled": "Enabled", "Rule": {"DefaultRetention": {"Mode": "GOVERNANCE", "Days": 1}}}))
        got = json.loads(aws("s3api", "get-object-lock-configuration", "--bucket", bucket).stdout)
        assert got["ObjectLockConfiguration"]["Rule"]["DefaultRetention"] == {"Mode": "GOVERNANCE", "Days": 1}

        src = tmp_path / "body.txt"
        src.write_bytes(b"cli body")
        until = ahead(days=2)
        out = json.loads(aws("s3api", "put-object", "--bucket", bucket, "--key", "k", "--body", str(src),
                             "--object-lock-mode", "GOVERNANCE", "--object-lock-retain-until-date",
                             until.strftime("%Y-%m-%dT%H:%M:%SZ"), "--object-lock-legal-hold-status", "OFF").stdout)
        vid = out["VersionId"]
        ret = json.loads(aws("s3api", "get-object-retention", "--bucket", bucket, "--key", "k").stdout)["Retention"]
        assert ret["Mode"] == "GOVERNANCE"
        assert datetime.datetime.fromisoformat(ret["RetainUntilDate"].replace("Z", "+00:00")) == until

        aws("s3api", "put-object-legal-hold", "--bucket", bucket, "--key", "k", "--legal-hold", "Status=ON")
        hold = json.loads(aws("s3api", "get-object-legal-hold", "--bucket", bucket, "--key", "k").stdout)
        assert hold["LegalHold"]["Status"] == "ON"
        res = aws("s3api", "delete-object", "--bucket", bucket, "--key", "k", "--version-id", vid,
                  "--bypass-governance-retention", check=False)
        assert res.returncode != 0 and "AccessDenied" in res.stderr, res
        aws("s3api", "put-object-legal-hold", "--bucket", bucket, "--key", "k", "--legal-hold", "Status=OFF")
        res = aws("s3api", "delete-object", "--bucket", bucket, "--key", "k", "--version-id", vid, check=False)
        assert res.returncode != 0 and "AccessDenied" in res.stderr, res
        # An empty retention with the bypass removes a GOVERNANCE retention.
        aws("s3api", "put-object-retention", "--bucket", bucket, "--key", "k", "--retention", "{}",
            "--bypass-governance-retention")
        res = aws("s3api", "get-object-retention", "--bucket", bucket, "--key", "k", check=False)
        assert res.returncode != 0 and "NoSuchObjectLockConfiguration" in res.stderr, res
        aws("s3api", "delete-object", "--bucket", bucket, "--key", "k", "--version-id", vid)
    finally:
        remove_everything(s3, bucket)
