"""Small helpers shared by the end-to-end tests: checksums computed the way S3
defines them, error-code access, and SigV4-signed raw HTTP requests for the
cases no well-behaved client will send."""

from __future__ import annotations

import base64
import hashlib
import http.client
import os
import socket
import zlib
from dataclasses import dataclass, field

from botocore.auth import S3SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.config import Config
from botocore.credentials import Credentials
from botocore.exceptions import ClientError

MiB = 1024 * 1024


def error_code(exc: ClientError) -> str:
    return exc.response.get("Error", {}).get("Code", "")


def http_status(exc: ClientError) -> int:
    return exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0)


def expect_error(fn, code: str, status: int, message: str | None = None, **kw) -> ClientError:
    """Call fn(**kw), which must fail with S3 error code and HTTP status
    (and message, when given); return the error."""
    import pytest

    with pytest.raises(ClientError) as ei:
        fn(**kw)
    err = ei.value
    assert (error_code(err), http_status(err)) == (code, status), err.response
    if message is not None:
        assert err.response["Error"]["Message"] == message, err.response
    return err


def md5_hex(data: bytes) -> str:
    return hashlib.md5(data).hexdigest()


def crc32_b64(data: bytes) -> str:
    return base64.b64encode(zlib.crc32(data).to_bytes(4, "big")).decode()


def sha256_b64(data: bytes) -> str:
    return base64.b64encode(hashlib.sha256(data).digest()).decode()


def sha1_b64(data: bytes) -> str:
    return base64.b64encode(hashlib.sha1(data).digest()).decode()


def multipart_etag(parts: list[bytes]) -> str:
    """S3's multipart ETag: md5 of the concatenated binary part md5s, '-N'."""
    joined = b"".join(hashlib.md5(p).digest() for p in parts)
    return f'"{hashlib.md5(joined).hexdigest()}-{len(parts)}"'


def composite_crc32(parts: list[bytes]) -> str:
    """S3's COMPOSITE multipart checksum: CRC32 of the part CRC32s, '-N'."""
    joined = b"".join(zlib.crc32(p).to_bytes(4, "big") for p in parts)
    return f"{crc32_b64(joined)}-{len(parts)}"


def random_bytes(n: int, seed: int = 0) -> bytes:
    """Incompressible test data; os.urandom is fast enough at these sizes."""
    del seed  # content need not be reproducible, only compared
    return os.urandom(n)


def chunks(data: bytes, size: int) -> list[bytes]:
    return [data[i : i + size] for i in range(0, len(data), size)]


@dataclass
class RawResponse:
    status: int
    reason: str
    headers: dict = field(default_factory=dict)
    body: bytes = b""

    def __str__(self) -> str:
        return f"HTTP {self.status} {self.reason}\n{self.body[:2000].decode(errors='replace')}"

    def error_code(self) -> str:
        """The <Code> of an S3 XML error body, or ''."""
        text = self.body.decode(errors="replace")
        start = text.find("<Code>")
        end = text.find("</Code>")
        if start < 0 or end < start:
            return ""
        return text[start + len("<Code>") : end]


def sign(
    endpoint: str,
    access_key: str,
    secret_key: str,
    method: str,
    target: str,
    body: bytes = b"",
    headers: dict | None = None,
    region: str = "us-east-1",
    unsigned_payload: bool = False,
) -> dict:
    """SigV4-sign a request for target (raw path plus optional '?query',
    sent byte-for-byte as given) and return the headers to send. The payload
    hash covers body, so a caller may deliberately send something else;
    with unsigned_payload the request says UNSIGNED-PAYLOAD instead."""
    req = AWSRequest(method=method, url=endpoint + target, data=body, headers=dict(headers or {}))
    if unsigned_payload:
        req.context["client_config"] = Config(s3={"payload_signing_enabled": False})
    S3SigV4Auth(Credentials(access_key, secret_key), "s3", region).add_auth(req)
    out = dict(req.headers.items())
    out["Host"] = endpoint.removeprefix("http://")
    return out


def raw_request(
    endpoint: str,
    method: str,
    target: str,
    body: bytes = b"",
    headers: dict | None = None,
    timeout: float = 30,
) -> RawResponse:
    """Send one request with http.client, which does not normalise the path."""
    host, port = endpoint.removeprefix("http://").rsplit(":", 1)
    conn = http.client.HTTPConnection(host, int(port), timeout=timeout)
    try:
        conn.putrequest(method, target, skip_host=True, skip_accept_encoding=True)
        hdrs = dict(headers or {})
        if body and not any(k.lower() == "content-length" for k in hdrs):
            hdrs["Content-Length"] = str(len(body))
        for k, v in hdrs.items():
            conn.putheader(k, v)
        conn.endheaders(body if body else None)
        resp = conn.getresponse()
        return RawResponse(resp.status, resp.reason, dict(resp.getheaders()), resp.read())
    finally:
        conn.close()


def send_truncated(endpoint: str, target: str, headers: dict, partial_body: bytes, timeout: float = 30) -> bytes:
    """Send a request whose body is shorter than its Content-Length, then
    half-close the socket, and return whatever the server answers (possibly
    nothing, if it just closes the connection)."""
    host, port = endpoint.removeprefix("http://").rsplit(":", 1)
    lines = [f"PUT {target} HTTP/1.1"] + [f"{k}: {v}" for k, v in headers.items()]
    head = ("\r\n".join(lines) + "\r\n\r\n").encode()
    with socket.create_connection((host, int(port)), timeout=timeout) as sock:
        sock.sendall(head + partial_body)
        sock.shutdown(socket.SHUT_WR)
        got = b""
        try:
            while True:
                buf = sock.recv(65536)
                if not buf:
                    break
                got += buf
        except (ConnectionResetError, socket.timeout):
            pass
        return got
