"""OpenID Connect (issue 45) with boto3 at default settings: a real OpenID
provider (panva's oidc-provider under Node, configured by
internal/oidcidp/oidctest/provider.mjs, the same as the Go tests') signs
alice and bob in through its authorization-code flow; the server, configured
by MinIO's MINIO_IDENTITY_OPENID_* variables, exchanges their ID tokens for
credentials with boto3's assume_role_with_web_identity, which may do what the
token's policy claim names and nothing else; a token issued to another client
and a tampered one are InvalidIdentityToken.

node comes from PATH and oidc-provider is installed with npm into the user
cache when missing (as the Go harness does). Without them the test skips and
says why, unless SHARDSTORE_REQUIRE_OIDC=1."""

from __future__ import annotations

import base64
import http.cookiejar
import json
import os
import re
import shutil
import socket
import subprocess
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError

from conftest import REGION, ROOT_PASSWORD, ROOT_USER, Server, _SERVERS, REPO_ROOT

PACKAGE = "oidc-provider@9.13.3"
SCRIPT = REPO_ROOT / "internal" / "oidcidp" / "oidctest" / "provider.mjs"
REDIRECT = "http://127.0.0.1:1/callback"


def _skip_or_fail(why: str):
    if os.environ.get("SHARDSTORE_REQUIRE_OIDC"):
        pytest.fail(f"SHARDSTORE_REQUIRE_OIDC is set and {why}", pytrace=False)
    pytest.skip(f"skipping the OpenID tests: {why} (set SHARDSTORE_REQUIRE_OIDC=1 to make this a failure)")


def _provider_dir() -> Path:
    node, npm = shutil.which("node"), shutil.which("npm")
    if not node:
        _skip_or_fail("there is no node on PATH (Debian's nodejs)")
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    d = cache / "shardstore-test" / "oidc-provider"
    if not (d / "node_modules" / "oidc-provider" / "package.json").exists():
        if not npm:
            _skip_or_fail("oidc-provider is not installed and there is no npm")
        print(f"installing {PACKAGE} from the npm registry into {d}")
        d.mkdir(parents=True, exist_ok=True)
        res = subprocess.run([npm, "install", "--no-audit", "--no-fund", "--prefix", str(d), PACKAGE],
                             capture_output=True, text=True, timeout=300)
        if res.returncode != 0:
            _skip_or_fail(f"npm install {PACKAGE} failed: {res.stderr[-500:]}")
    return d


@pytest.fixture(scope="module")
def provider():
    d = _provider_dir()
    shutil.copyfile(SCRIPT, d / "provider.mjs")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([shutil.which("node"), str(d / "provider.mjs"), str(port), REDIRECT], cwd=d,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    seen = []
    while True:  # warnings (an unsupported Node version, dev keys) come first
        line = proc.stdout.readline()
        seen.append(line)
        if "listening" in line:
            break
        if not line or len(seen) > 100:
            proc.kill()
            pytest.fail(f"oidc-provider did not start: {''.join(seen)[-2000:]}", pytrace=False)
    issuer = f"http://127.0.0.1:{port}"
    yield issuer
    proc.terminate()
    proc.wait(10)


class _NoRedirectToClient(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, req, fp, code, msg, headers, newurl):
        if newurl.startswith(REDIRECT):
            return None  # the code, for the client
        return super().redirect_request(req, fp, code, msg, headers, newurl)


def _login(issuer: str, user: str, client: str, secret: str) -> str:
    """Sign user in through the provider's authorization-code flow (its
    login and consent pages) and return the ID token."""
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()), _NoRedirectToClient())
    q = urllib.parse.urlencode({"client_id": client, "response_type": "code", "scope": "openid",
                                "redirect_uri": REDIRECT, "state": "st", "nonce": "n"})
    resp = opener.open(f"{issuer}/auth?{q}", timeout=30)
    for step in ({"prompt": "login", "login": user, "password": user + "-password"}, {"prompt": "consent"}):
        body = resp.read().decode()
        m = re.search(r'<form[^>]*action="([^"]+)"', body)
        assert m, f"no form on {resp.geturl()}"
        action = urllib.parse.urljoin(resp.geturl(), m.group(1))
        try:
            resp = opener.open(action, data=urllib.parse.urlencode(step).encode(), timeout=30)
        except urllib.error.HTTPError as e:
            resp = e  # the 303 to the client's redirect URI
    location = resp.headers.get("Location", "")
    code = urllib.parse.parse_qs(urllib.parse.urlparse(location).query).get("code", [""])[0]
    assert code, f"no code in the redirect: {location}"
    req = urllib.request.Request(f"{issuer}/token", data=urllib.parse.urlencode(
        {"grant_type": "authorization_code", "code": code, "redirect_uri": REDIRECT}).encode())
    req.add_header("Authorization", "Basic " + base64.b64encode(f"{client}:{secret}".encode()).decode())
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.loads(r.read())["id_token"]


@pytest.fixture(scope="module")
def oidc_server(request, shardstore_bin, provider, tmp_path_factory):
    saved = dict(os.environ)
    os.environ.update({"MINIO_IDENTITY_OPENID_CONFIG_URL": provider + "/.well-known/openid-configuration",
                       "MINIO_IDENTITY_OPENID_CLIENT_ID": "shardstore"})
    try:
        srv = Server(shardstore_bin, tmp_path_factory.mktemp("oidcserver"), ["--log-requests"])
        srv.start()
    finally:
        os.environ.clear()
        os.environ.update(saved)
    request.config.stash.setdefault(_SERVERS, []).append(srv)
    yield srv
    request.config.stash[_SERVERS].remove(srv)
    srv.stop()


def _sts(srv):
    # No credentials: AssumeRoleWithWebIdentity is unsigned.
    return boto3.session.Session(region_name=REGION).client("sts", endpoint_url=srv.endpoint,
                                                             config=Config())  # unsigned: botocore knows the call needs no credentials


def _exchange(srv, token, **extra):
    out = _sts(srv).assume_role_with_web_identity(RoleArn="arn:aws:iam::000000000000:role/web",
                                                  RoleSessionName="pytest", WebIdentityToken=token, **extra)
    c = out["Credentials"]
    assert out["SubjectFromWebIdentityToken"]
    return boto3.session.Session(aws_access_key_id=c["AccessKeyId"], aws_secret_access_key=c["SecretAccessKey"],
                                 aws_session_token=c["SessionToken"], region_name=REGION).client(
        "s3", endpoint_url=srv.endpoint, config=Config())


def test_web_identity_with_boto3(oidc_server, provider):
    srv = oidc_server
    root = boto3.session.Session(aws_access_key_id=ROOT_USER, aws_secret_access_key=ROOT_PASSWORD,
                                 region_name=REGION).client("s3", endpoint_url=srv.endpoint, config=Config())
    root.create_bucket(Bucket="oidc-data")
    root.put_object(Bucket="oidc-data", Key="a.txt", Body=b"a")

    alice = _exchange(srv, _login(provider, "alice", "shardstore", "shardstore-client-secret"))
    assert alice.get_object(Bucket="oidc-data", Key="a.txt")["Body"].read() == b"a"
    with pytest.raises(ClientError) as e:
        alice.put_object(Bucket="oidc-data", Key="alice.txt", Body=b"x")
    assert e.value.response["Error"]["Code"] == "AccessDenied"

    bob_token = _login(provider, "bob", "shardstore", "shardstore-client-secret")
    bob = _exchange(srv, bob_token, DurationSeconds=900)
    bob.put_object(Bucket="oidc-data", Key="bob.txt", Body=b"x")

    other = _login(provider, "alice", "other-app", "other-app-secret")
    tampered = bob_token[:-5] + ("A" if bob_token[-5] != "A" else "B") + bob_token[-4:]
    for why, tok in (("another client's token", other), ("tampered", tampered)):
        with pytest.raises(ClientError) as e:
            _exchange(srv, tok)
        assert e.value.response["Error"]["Code"] == "InvalidIdentityToken", why

    log = Path(srv.stderr_path).read_text(errors="replace")
    assert bob_token not in log and other not in log


def _client_credentials(issuer: str, client: str, secret: str) -> str:
    """The provider's JWT access token for client (client-credentials grant)."""
    req = urllib.request.Request(f"{issuer}/token", data=urllib.parse.urlencode(
        {"grant_type": "client_credentials", "scope": "read", "resource": "urn:shardstore"}).encode())
    req.add_header("Authorization", "Basic " + base64.b64encode(f"{client}:{secret}".encode()).decode())
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.loads(r.read())["access_token"]


def _role_arn(client_id: str) -> str:
    """MinIO's role ARN of a provider with a role policy."""
    import hashlib
    return "arn:minio:iam:::role/" + base64.urlsafe_b64encode(hashlib.sha1(client_id.encode()).digest()).decode().rstrip("=")


@pytest.fixture(scope="module")
def multi_server(request, shardstore_bin, provider, tmp_path_factory):
    """A server with three providers of the one provider process: the
    unnamed one (client shardstore), OTHER (client other-app, groups claim,
    our spelling) and ROLE (the service client, role policy readwrite)."""
    conf = provider + "/.well-known/openid-configuration"
    saved = dict(os.environ)
    os.environ.update({"MINIO_IDENTITY_OPENID_CONFIG_URL": conf, "MINIO_IDENTITY_OPENID_CLIENT_ID": "shardstore",
                       "SHARDSTORE_IDENTITY_OPENID_CONFIG_URL_OTHER": conf, "SHARDSTORE_IDENTITY_OPENID_CLIENT_ID_OTHER": "other-app",
                       "SHARDSTORE_IDENTITY_OPENID_CLAIM_NAME_OTHER": "groups",
                       "MINIO_IDENTITY_OPENID_CONFIG_URL_ROLE": conf, "MINIO_IDENTITY_OPENID_CLIENT_ID_ROLE": "shardstore-svc",
                       "MINIO_IDENTITY_OPENID_ROLE_POLICY_ROLE": "readwrite"})
    try:
        srv = Server(shardstore_bin, tmp_path_factory.mktemp("oidcmulti"), ["--log-requests"])
        srv.start()
    finally:
        os.environ.clear()
        os.environ.update(saved)
    request.config.stash.setdefault(_SERVERS, []).append(srv)
    yield srv
    request.config.stash[_SERVERS].remove(srv)
    srv.stop()


def test_several_providers_and_a_role_with_boto3(multi_server, provider, shardstore_bin, tmp_path):
    """Tokens of two clients go to their own providers (alice's groups
    claim through OTHER names the policy "readers", whose
    ${jwt:preferred_username} is her hostile "al*": she writes under
    home/al*/ only); the service client's client-credentials token is
    answered by the role its ARN names (readwrite) and refused without it;
    an unknown role ARN is InvalidParameterValue."""
    srv = multi_server
    root = boto3.session.Session(aws_access_key_id=ROOT_USER, aws_secret_access_key=ROOT_PASSWORD,
                                 region_name=REGION).client("s3", endpoint_url=srv.endpoint, config=Config())
    root.create_bucket(Bucket="multi-data")
    root.put_object(Bucket="multi-data", Key="a.txt", Body=b"a")
    readers = tmp_path / "readers.json"
    readers.write_text(json.dumps({"Version": "2012-10-17", "Statement": [
        {"Effect": "Allow", "Action": "s3:GetObject", "Resource": "arn:aws:s3:::multi-data/a.txt"},
        {"Effect": "Allow", "Action": "s3:PutObject", "Resource": "arn:aws:s3:::multi-data/home/${jwt:preferred_username}/*"}]}))
    env = dict(os.environ, SHARDSTORE_ENDPOINT=srv.endpoint, SHARDSTORE_ROOT_USER=ROOT_USER, SHARDSTORE_ROOT_PASSWORD=ROOT_PASSWORD)
    res = subprocess.run([str(shardstore_bin), "admin", "policy", "create", "readers", str(readers)], env=env,
                         capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stdout + res.stderr

    # alice through the other client: the OTHER provider, her groups claim (readers).
    alice = _exchange(srv, _login(provider, "alice", "other-app", "other-app-secret"))
    assert alice.get_object(Bucket="multi-data", Key="a.txt")["Body"].read() == b"a"
    alice.put_object(Bucket="multi-data", Key="home/al*/notes.txt", Body=b"x")
    for key in ("alice.txt", "home/alice/notes.txt", "home/al/notes.txt", "home/albert/x"):
        with pytest.raises(ClientError) as e:
            alice.put_object(Bucket="multi-data", Key=key, Body=b"x")
        assert e.value.response["Error"]["Code"] == "AccessDenied", key

    svc_token = _client_credentials(provider, "shardstore-svc", "shardstore-svc-secret")
    role = _role_arn("shardstore-svc")
    out = _sts(srv).assume_role_with_web_identity(RoleArn=role, RoleSessionName="svc", WebIdentityToken=svc_token)
    c = out["Credentials"]
    svc = boto3.session.Session(aws_access_key_id=c["AccessKeyId"], aws_secret_access_key=c["SecretAccessKey"],
                                aws_session_token=c["SessionToken"], region_name=REGION).client(
        "s3", endpoint_url=srv.endpoint, config=Config())
    svc.put_object(Bucket="multi-data", Key="svc.txt", Body=b"x")  # the role policy: readwrite

    for arn, code in (("arn:aws:iam::000000000000:role/web", "InvalidIdentityToken"),
                      (_role_arn("nobody"), "InvalidParameterValue")):
        with pytest.raises(ClientError) as e:
            _sts(srv).assume_role_with_web_identity(RoleArn=arn, RoleSessionName="svc", WebIdentityToken=svc_token)
        assert e.value.response["Error"]["Code"] == code, arn

    log = Path(srv.stderr_path).read_text(errors="replace")
    assert svc_token not in log
