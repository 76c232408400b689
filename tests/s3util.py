"""Helpers shared by the system tests: a managed `serac server` process, boto3 clients, a small
SigV4 signer for requests that boto3 cannot produce (skewed clocks, hand-built aws-chunked bodies,
malformed XML), and assertions on S3 error responses."""

from __future__ import annotations

import base64
import collections
import datetime
import hashlib
import hmac
import http.client
import json
import os
import re
import signal
import socket
import subprocess
import threading
import time
import urllib.parse
import uuid
import xml.etree.ElementTree as ET
import zlib
from pathlib import Path

import boto3
import pytest
import requests
from botocore.config import Config
from botocore.exceptions import ClientError

REPO_ROOT = Path(__file__).resolve().parent.parent
ACCESS_KEY = "serac-test-admin"
SECRET_KEY = "serac-test-secret-0123456789"
REGION = "us-east-1"
EMPTY_SHA256 = hashlib.sha256(b"").hexdigest()
LISTENING_RE = re.compile(r"serac: listening on (\S+):(\d+)\s*$")

# Every server started by the suite, so a failing test can show the tail of their stderr.
ALL_SERVERS: list["SeracServer"] = []


def serac_binary() -> str:
    configured = os.environ.get("SERAC_BIN", "build/serac")
    path = Path(configured)
    if not path.is_absolute():
        path = REPO_ROOT / path
    return str(path)


class SeracServer:
    """One `serac server` process on a loopback port chosen by the kernel."""

    def __init__(self, root_dir: Path, certs_dir: Path | None = None, extra_args=(), name="serac"):
        self.root_dir = Path(root_dir)
        self.data_dir = self.root_dir / "data"
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.certs_dir = certs_dir
        self.extra_args = list(extra_args)
        self.name = name
        self.process: subprocess.Popen | None = None
        self.port = 0
        self.stdout_lines: collections.deque[str] = collections.deque(maxlen=2000)
        self.start_count = 0
        ALL_SERVERS.append(self)

    @property
    def tls(self) -> bool:
        return self.certs_dir is not None

    @property
    def endpoint(self) -> str:
        return f"{'https' if self.tls else 'http'}://127.0.0.1:{self.port}"

    @property
    def server_key_file(self) -> Path:
        """The server key lives beside the data directory, never inside it."""
        return self.root_dir / "server.key"

    @property
    def stderr_path(self) -> Path:
        return self.root_dir / f"stderr-{self.start_count}.log"

    def start(self, timeout_s: float = 30.0) -> None:
        self.start_count += 1
        args = [serac_binary(), "server", "--data", str(self.data_dir)]
        if "--address" not in self.extra_args:  # a test may pin the port, to restart at the same address
            args += ["--address", "127.0.0.1:0"]
        if self.certs_dir is not None:
            args += ["--certs-dir", str(self.certs_dir)]
        args += self.extra_args
        env = dict(os.environ, SERAC_ROOT_USER=ACCESS_KEY, SERAC_ROOT_PASSWORD=SECRET_KEY,
                   SERAC_SERVER_KEY_FILE=str(self.server_key_file))
        env.pop("SERAC_SERVER_KEY", None)
        stderr_file = open(self.stderr_path, "wb")
        self.process = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=stderr_file, env=env,
                                        stdin=subprocess.DEVNULL)
        stderr_file.close()
        port_found = threading.Event()
        threading.Thread(target=self._drain_stdout, args=(self.process, port_found), daemon=True).start()
        if not port_found.wait(timeout_s) or self.port == 0:
            exit_code = self.process.poll()
            self.kill()
            raise RuntimeError(f"{self.name} ({serac_binary()}) did not print its listening line within "
                               f"{timeout_s}s (exit code {exit_code});\n"
                               f"stdout: {list(self.stdout_lines)}\nstderr tail:\n{self.stderr_tail()}")
        self.wait_ready(timeout_s)

    def _drain_stdout(self, process: subprocess.Popen, port_found: threading.Event) -> None:
        # Keeps reading so the server never blocks on a full pipe.
        for raw in process.stdout:
            line = raw.decode("utf-8", "replace").rstrip("\n")
            self.stdout_lines.append(line)
            match = LISTENING_RE.search(line)
            if match and not port_found.is_set():
                self.port = int(match.group(2))
                port_found.set()
        port_found.set()

    def wait_ready(self, timeout_s: float = 30.0) -> None:
        deadline = time.monotonic() + timeout_s
        last_error = None
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"{self.name} exited with {self.process.returncode};\n{self.stderr_tail()}")
            try:
                response = requests.get(self.endpoint + "/_serac/health/ready", timeout=2, verify=False)
                if response.status_code == 200:
                    return
                last_error = f"status {response.status_code}"
            except requests.RequestException as error:
                last_error = repr(error)
            time.sleep(0.05)
        raise RuntimeError(f"{self.name} not ready after {timeout_s}s ({last_error});\n{self.stderr_tail()}")

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def stop(self, timeout_s: float = 20.0) -> int | None:
        """SIGTERM, then SIGKILL if the graceful shutdown takes longer than `timeout_s`."""
        if self.process is None:
            return None
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout_s)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        return self.process.returncode

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()

    def stderr_tail(self, lines: int = 60) -> str:
        try:
            text = self.stderr_path.read_text("utf-8", "replace")
        except OSError:
            return "(no stderr file)"
        return "\n".join(text.splitlines()[-lines:])


def make_tls_certs(certs_dir: Path) -> Path:
    """A self-signed certificate for 127.0.0.1 and localhost, as cert.pem + key.pem."""
    certs_dir.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
         "-keyout", str(certs_dir / "key.pem"), "-out", str(certs_dir / "cert.pem"), "-days", "2",
         "-subj", "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"],
        check=True, capture_output=True)
    return certs_dir / "cert.pem"


def make_client(endpoint: str, access_key: str = ACCESS_KEY, secret_key: str = SECRET_KEY, verify=None,
                **config_overrides):
    config = dict(signature_version="s3v4", s3={"addressing_style": "path"}, retries={"max_attempts": 1},
                  connect_timeout=10, read_timeout=60)
    config.update(config_overrides)
    return boto3.session.Session().client(
        "s3", endpoint_url=endpoint, aws_access_key_id=access_key, aws_secret_access_key=secret_key,
        region_name=REGION, config=Config(**config), verify=verify)


def unique_bucket_name(hint: str = "t") -> str:
    cleaned = re.sub(r"[^a-z0-9-]+", "-", hint.lower()).strip("-")[:40].strip("-") or "t"
    return f"{cleaned}-{uuid.uuid4().hex[:12]}"


# --- Error assertions -------------------------------------------------------------------------------


def check_client_error(error: ClientError, status: int, code: str, alternatives=()) -> None:
    response = error.response
    got_status = response["ResponseMetadata"]["HTTPStatusCode"]
    got_code = response["Error"].get("Code")
    allowed = [(status, code), *alternatives]
    assert (got_status, got_code) in allowed, f"expected one of {allowed}, got {got_status} {got_code}: {response}"
    headers = response["ResponseMetadata"]["HTTPHeaders"]
    assert headers.get("x-amz-request-id"), f"error response without x-amz-request-id: {headers}"


class expect_s3_error:
    """`with expect_s3_error(404, "NoSuchKey"): client.get_object(...)`"""

    def __init__(self, status: int, code: str, alternatives=()):
        """`alternatives`: other (status, code) pairs that are also correct, for the few cases where
        S3 and its documentation disagree."""
        self.status = status
        self.code = code
        self.alternatives = alternatives
        self.error: ClientError | None = None

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            pytest.fail(f"expected S3 error {self.status} {self.code}, but the call succeeded")
        if not issubclass(exc_type, ClientError):
            return False
        self.error = exc
        check_client_error(exc, self.status, self.code, self.alternatives)
        return True


def error_code_of(body: bytes) -> str | None:
    try:
        root = ET.fromstring(body)
    except ET.ParseError:
        return None
    node = root.find("Code")
    return node.text if node is not None else None


def check_raw_error(response, status: int, code: str) -> None:
    """For responses from `requests` or `http.client`."""
    body = response.content if hasattr(response, "content") else response.read()
    got_status = response.status_code if hasattr(response, "status_code") else response.status
    got_code = error_code_of(body)
    assert (got_status, got_code) == (status, code), f"expected {status} {code}, got {got_status}: {body[:500]!r}"
    headers = {k.lower(): v for k, v in response.headers.items()}
    assert headers.get("x-amz-request-id"), f"error response without x-amz-request-id: {headers}"


# --- Hashes -------------------------------------------------------------------------------------------


def md5_hex(data: bytes) -> str:
    return hashlib.md5(data).hexdigest()


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def crc32_b64(data: bytes) -> str:
    return b64(zlib.crc32(data).to_bytes(4, "big"))


def sha256_of_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as file:
        for block in iter(lambda: file.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


# --- Hand-made SigV4 ------------------------------------------------------------------------------------


def uri_encode(text: str, keep_slash: bool) -> str:
    return urllib.parse.quote(text, safe="-_.~" + ("/" if keep_slash else ""))


def _hmac(key: bytes, text: str) -> bytes:
    return hmac.new(key, text.encode(), hashlib.sha256).digest()


def signing_key(secret_key: str, date: str, region: str = REGION) -> bytes:
    key = _hmac(("AWS4" + secret_key).encode(), date)
    key = _hmac(key, region)
    key = _hmac(key, "s3")
    return _hmac(key, "aws4_request")


class Signer:
    """Signs requests the way an SDK would, but with every input under the test's control."""

    def __init__(self, endpoint: str, access_key: str = ACCESS_KEY, secret_key: str = SECRET_KEY):
        self.endpoint = endpoint
        parsed = urllib.parse.urlsplit(endpoint)
        self.host = parsed.hostname
        self.port = parsed.port
        self.access_key = access_key
        self.secret_key = secret_key

    def sign(self, method: str, path: str, query: list[tuple[str, str]], headers: dict[str, str],
             payload_hash: str, now: datetime.datetime | None = None) -> tuple[dict[str, str], dict]:
        """Returns the headers to send (with Authorization) and the signing context for chunk
        signatures. `path` is the unencoded path (e.g. "/bucket/key")."""
        now = now or datetime.datetime.now(datetime.timezone.utc)
        amz_date = now.strftime("%Y%m%dT%H%M%SZ")
        date = amz_date[:8]
        all_headers = {"host": f"{self.host}:{self.port}", "x-amz-date": amz_date,
                       "x-amz-content-sha256": payload_hash}
        all_headers.update({k.lower(): v for k, v in headers.items()})
        signed_names = sorted(all_headers)
        canonical_headers = "".join(f"{name}:{str(all_headers[name]).strip()}\n" for name in signed_names)
        canonical_query = "&".join(
            f"{uri_encode(k, False)}={uri_encode(v, False)}" for k, v in sorted(query))
        canonical_request = "\n".join([method, uri_encode(path, True), canonical_query, canonical_headers,
                                       ";".join(signed_names), payload_hash])
        scope = f"{date}/{REGION}/s3/aws4_request"
        string_to_sign = "\n".join(["AWS4-HMAC-SHA256", amz_date, scope,
                                    hashlib.sha256(canonical_request.encode()).hexdigest()])
        key = signing_key(self.secret_key, date)
        signature = hmac.new(key, string_to_sign.encode(), hashlib.sha256).hexdigest()
        all_headers["authorization"] = (f"AWS4-HMAC-SHA256 Credential={self.access_key}/{scope}, "
                                        f"SignedHeaders={';'.join(signed_names)}, Signature={signature}")
        context = {"amz_date": amz_date, "scope": scope, "key": key, "seed_signature": signature}
        return all_headers, context

    def url(self, path: str, query: list[tuple[str, str]]) -> str:
        encoded_query = "&".join(
            uri_encode(k, False) + ("=" + uri_encode(v, False) if v != "" else "") for k, v in query)
        return self.endpoint + uri_encode(path, True) + ("?" + encoded_query if encoded_query else "")

    def request(self, method: str, path: str, query=None, headers=None, body: bytes = b"",
                payload_hash: str | None = None, now=None) -> requests.Response:
        query = list(query or [])
        if payload_hash is None:
            payload_hash = hashlib.sha256(body).hexdigest()
        signed_headers, _ = self.sign(method, path, query, headers or {}, payload_hash, now)
        signed_headers.pop("host")
        return requests.request(method, self.url(path, query), headers=signed_headers, data=body, timeout=60,
                                verify=False)


class SeracAdmin:
    """The admin API (/_serac/admin/v1) signed like an S3 request; root's keys by default."""

    BASE = "/_serac/admin/v1"

    def __init__(self, endpoint: str, access_key: str = ACCESS_KEY, secret_key: str = SECRET_KEY):
        self.signer = Signer(endpoint, access_key, secret_key)

    def call(self, method: str, path: str, body=None) -> requests.Response:
        """`path` below the base, unencoded; `body` a JSON-able value, raw bytes/str, or None."""
        if body is None:
            data = b""
        elif isinstance(body, bytes):
            data = body
        elif isinstance(body, str):
            data = body.encode()
        else:
            data = json.dumps(body).encode()
        headers = {"content-type": "application/json"} if data else {}
        return self.signer.request(method, self.BASE + path, headers=headers, body=data)

    def ok(self, method: str, path: str, body=None, status: int | None = None):
        """Calls and asserts success; returns the parsed JSON reply (None for 204)."""
        response = self.call(method, path, body)
        assert 200 <= response.status_code < 300, f"{method} {path}: {response.status_code} {response.text}"
        if status is not None:
            assert response.status_code == status, f"{method} {path}: {response.status_code} {response.text}"
        return response.json() if response.content else None

    def create_user(self, name: str, policies=()) -> dict:
        return self.ok("POST", "/users", {"name": name, "policies": list(policies)}, status=201)

    def create_key(self, user: str, access_key: str | None = None, secret_key: str | None = None,
                   description: str = "") -> tuple[str, str]:
        body = {"description": description}
        if access_key:
            body["access-key"] = access_key
        if secret_key:
            body["secret-key"] = secret_key
        reply = self.ok("POST", f"/users/{user}/access-keys", body, status=201)
        return reply["access-key"], reply["secret-key"]

    def create_user_with_key(self, name: str, policies=()) -> tuple[str, str]:
        self.create_user(name, policies)
        return self.create_key(name)

    def put_policy(self, name: str, document) -> dict:
        return self.ok("PUT", f"/policies/{name}", document if isinstance(document, (str, bytes))
                       else json.dumps(document))

    def attach(self, policy: str, user: str) -> None:
        self.ok("PUT", f"/users/{user}/policies/{policy}", status=204)

    def detach(self, policy: str, user: str) -> None:
        self.ok("DELETE", f"/users/{user}/policies/{policy}", status=204)

    def set_key_enabled(self, access_key: str, enabled: bool) -> None:
        self.ok("PATCH", f"/access-keys/{access_key}", {"enabled": enabled}, status=204)


def chunk_signature(context: dict, previous_signature: str, chunk: bytes) -> str:
    string_to_sign = "\n".join(["AWS4-HMAC-SHA256-PAYLOAD", context["amz_date"], context["scope"],
                                previous_signature, EMPTY_SHA256, hashlib.sha256(chunk).hexdigest()])
    return hmac.new(context["key"], string_to_sign.encode(), hashlib.sha256).hexdigest()


def trailer_signature(context: dict, previous_signature: str, trailer_text: str) -> str:
    string_to_sign = "\n".join(["AWS4-HMAC-SHA256-TRAILER", context["amz_date"], context["scope"],
                                previous_signature, hashlib.sha256(trailer_text.encode()).hexdigest()])
    return hmac.new(context["key"], string_to_sign.encode(), hashlib.sha256).hexdigest()


def split_chunks(data: bytes, chunk_size: int) -> list[bytes]:
    return [data[i:i + chunk_size] for i in range(0, len(data), chunk_size)]


def send_raw(host: str, port: int, method: str, target: str, headers: dict[str, str], body: bytes,
             timeout: float = 60) -> http.client.HTTPResponse:
    """Sends exactly these headers and body bytes (no framing added) and returns the response."""
    connection = http.client.HTTPConnection(host, port, timeout=timeout)
    connection.putrequest(method, target, skip_host=True, skip_accept_encoding=True)
    for name, value in headers.items():
        connection.putheader(name, value)
    connection.endheaders()
    if body:
        connection.send(body)
    response = connection.getresponse()
    response.body = response.read()
    connection.close()
    return response


def raw_exchange(host: str, port: int, data: bytes, timeout: float = 10) -> bytes:
    """Writes raw bytes to a fresh connection and returns everything read until the first final
    (non-1xx) response is complete, the server closes, or the timeout passes."""
    with socket.create_connection((host, port), timeout=timeout) as sock:
        try:
            sock.sendall(data)
        except OSError:
            pass
        received = b""
        try:
            while not _has_final_response(received):
                block = sock.recv(65536)
                if not block:
                    break
                received += block
        except (socket.timeout, ConnectionResetError):
            pass
        return received


def _has_final_response(received: bytes) -> bool:
    rest = received
    while b"\r\n\r\n" in rest:
        head, _, rest = rest.partition(b"\r\n\r\n")
        if re.match(rb"HTTP/1\.[01] 1\d\d", head):
            continue  # interim response (100 Continue)
        match = re.search(rb"\r\ncontent-length:\s*(\d+)", head, re.I)
        return match is None or len(rest) >= int(match.group(1))
    return False


def status_of(raw_response: bytes) -> int:
    match = re.match(rb"HTTP/1\.[01] (\d{3})", raw_response)
    assert match, f"no HTTP status line in {raw_response[:200]!r}"
    return int(match.group(1))


def assert_healthy(server: SeracServer) -> None:
    assert server.alive(), f"server exited with {server.process.returncode}"
    response = requests.get(server.endpoint + "/_serac/health/ready", timeout=10, verify=False)
    assert response.status_code == 200, response.text
