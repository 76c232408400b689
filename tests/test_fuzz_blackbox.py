"""Black-box fuzzing of a running `serac server`: thousands of mutated S3, catalog and admin API
requests built from the seed corpora in fuzz/corpus/ (the same seeds the in-process libFuzzer
targets start from), each signed with root's key after it was mutated so that the mutation reaches
the parsers behind authentication; then raw garbage, truncated heads and broken chunked framing
over plain sockets.

The server is this module's own (its RSS is measured on traffic only this module sends). What must
hold: it stays up (alive and /_serac/health/live answering 200 after every batch), every request
gets a well-formed HTTP/1.1 answer, error bodies have the shape of their API (S3 XML, Iceberg's
JSON error, OAuth2's error on the token route, the admin API's JSON error), no request is a
server error, a deeply nested JSON or XML body is a 400, the resident set after the run is within
a bounded margin of what it was after a warm-up batch, and on the wire every hostile input gets an
HTTP/1.1 error or a closed connection within a few seconds.

The run is deterministic for a given seed: the default is fixed, `SERAC_FUZZ_SEED` replays
another one, and it is printed. Traffic runs in four shards (one thread each) that share no state
(each has its own warehouse, bucket, IAM user names and access keys), so every shard sends the
same requests in the same order on every run with the same seed (only dates and signatures
differ), and gets the same answers but where they depend on ids the server makes up (upload ids).

Faults found before have tests of their own, each met by fixed requests whatever the seed: the
HTTP layer's errors in the dialect of their path (admin API, token route), S3 error XML that stays
well formed whatever bytes it echoes, and a Transfer-Encoding other than one chunked refused
instead of its body being parsed as a further request."""

from __future__ import annotations

import base64
import collections
import concurrent.futures
import copy
import dataclasses
import datetime
import hashlib
import hmac
import json
import os
import random
import re
import shutil
import socket
import tempfile
import time
import xml.etree.ElementTree as ET
import zlib
from pathlib import Path

import pytest

from s3util import ACCESS_KEY, REGION, SECRET_KEY, REPO_ROOT, SeracServer, make_client, unique_bucket_name

SEED = int(os.environ.get("SERAC_FUZZ_SEED", "20260101"))
SHARDS = 4
BATCHES = 25
REQUESTS_PER_SHARD_BATCH = 100  # 4 shards x 25 batches x 100 = 10,000 mutated requests
RSS_MARGIN_BYTES = 64 * 1024 * 1024
REQUEST_TIMEOUT_S = 30.0  # no single answer may take longer (a hang)
WIRE_TIMEOUT_S = 5.0  # hostile bytes: an answer or a close within this
CORPUS = REPO_ROOT / "fuzz" / "corpus"
KiB = 1024
MiB = 1024 * KiB

SEED_ACCESS_KEY = "FUZZROOTKEY"
SEED_SECRET_KEY = "fuzz-root-secret-0123456789abcdefghijkl"
SEED_HOST = "127.0.0.1:9000"
ICEBERG_SEED_BASE = "/_iceberg/v1/lake"

# Headers never signed: hop-by-hop ones a proxy may rewrite.
UNSIGNED_HEADERS = {"connection", "expect", "user-agent", "content-length", "transfer-encoding"}


# --- SigV4 over raw bytes, with the server's canonicalisation (src/auth/sigv4.cc) ------------------------
# botocore would normalise and re-quote a mutated path before signing it, and so sign other bytes
# than are sent; this signs exactly the target on the wire, as SigV4 defines it for S3 (the path
# decoded, then encoded once) and for other services such as s3tables (each segment encoded again).

_UNRESERVED = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.~")
_HEX_DIGITS = frozenset(b"0123456789abcdefABCDEF")


def uri_encode(data: bytes, encode_slash: bool) -> str:
    out = []
    for byte in data:
        if byte in _UNRESERVED or (byte == 0x2F and not encode_slash):
            out.append(chr(byte))
        else:
            out.append(f"%{byte:02X}")
    return "".join(out)


def uri_decode(data: bytes, plus_is_space: bool) -> bytes | None:
    out = bytearray()
    i = 0
    while i < len(data):
        byte = data[i]
        if byte == 0x25:  # '%'
            digits = data[i + 1:i + 3]
            if len(digits) < 2 or not all(c in _HEX_DIGITS for c in digits):
                return None
            out.append(int(digits, 16))
            i += 3
            continue
        out.append(0x20 if byte == 0x2B and plus_is_space else byte)
        i += 1
    return bytes(out)


def canonical_uri(raw_path: bytes, generic: bool) -> str:
    if not raw_path:
        return "/"
    if not generic:
        decoded = uri_decode(raw_path, False)
        return uri_encode(decoded if decoded is not None else raw_path, False)
    segments: list[bytes] = []
    for part in raw_path.split(b"/"):
        if part == b".":
            continue
        if part == b"..":
            if len(segments) > 1:
                segments.pop()
            continue
        segments.append(part)
    uri = "/".join(uri_encode(segment, True) for segment in segments)
    return uri if uri.startswith("/") else "/" + uri


def _decode_or_keep(raw: bytes) -> bytes:
    """A malformed escape is kept verbatim: the signature then simply does not match."""
    decoded = uri_decode(raw, True)
    return raw if decoded is None else decoded


def canonical_query(raw_query: bytes) -> str:
    pairs = []
    for piece in raw_query.split(b"&"):
        if not piece:
            continue
        name, _, value = piece.partition(b"=")
        name = _decode_or_keep(name)
        value = _decode_or_keep(value)
        pairs.append((uri_encode(name, True), uri_encode(value, True)))
    pairs.sort()
    return "&".join(f"{name}={value}" for name, value in pairs)


def normalize_header_value(value: str) -> str:
    return re.sub(r"[ \t]+", " ", value.strip(" \t"))


def signing_key(secret: str, day: str, service: str) -> bytes:
    key = ("AWS4" + secret).encode()
    for part in (day, REGION, service, "aws4_request"):
        key = hmac.new(key, part.encode(), hashlib.sha256).digest()
    return key


def _hmac_hex(key: bytes, text: str) -> str:
    return hmac.new(key, text.encode("latin-1"), hashlib.sha256).hexdigest()


# --- Requests ------------------------------------------------------------------------------------------------


@dataclasses.dataclass
class Request:
    method: str
    target: str  # latin-1: every byte as one character
    headers: list[list[str]]
    body: bytes
    origin: str  # the seed and the mutations applied, for the report
    service: str | None = None  # "s3tables", "s3" or None (sent unsigned)
    presign: bool = False
    expect: tuple[int, ...] = ()  # the only statuses allowed, for the deep-nesting cases
    chunks: list[bytes] | None = None  # signed aws-chunked: chunk signatures made at signing time
    chunk_trailer: str = ""
    chunk_mutation: str = ""

    def header(self, name: str) -> str | None:
        for key, value in self.headers:
            if key.lower() == name:
                return value
        return None

    def drop_header(self, name: str) -> None:
        self.headers = [h for h in self.headers if h[0].lower() != name]

    def set_header(self, name: str, value: str) -> None:
        self.drop_header(name.lower())
        self.headers.append([name, value])

    @property
    def path(self) -> str:
        return self.target.split("?", 1)[0]

    @property
    def query(self) -> str:
        return self.target.split("?", 1)[1] if "?" in self.target else ""

    def describe(self, body_bytes: int = 600) -> str:
        shown = self.headers
        if len(shown) > 24:
            shown = shown[:12] + [["...", f"{len(shown) - 18} more"]] + shown[-6:]
        headers = "".join(f"    {k}: {v[:200]}\n" for k, v in shown)
        return (f"  origin: {self.origin}\n  {self.method} {self.target[:400]!r}\n{headers}"
                f"  body ({len(self.body)} bytes): {self.body[:body_bytes]!r}")


def parse_text_request(data: bytes) -> Request:
    """The seeds' text form (fuzz/fuzz_request.h): "METHOD TARGET", header lines, a blank line, body."""
    rest = data
    lines = []
    while True:
        line, newline, rest = rest.partition(b"\n")
        if line.endswith(b"\r"):
            line = line[:-1]
        if not line or not newline:
            if line:
                lines.append(line)
            break
        lines.append(line)
    first = lines[0].decode("latin-1")
    method, _, target = first.partition(" ")
    headers = []
    for line in lines[1:]:
        name, colon, value = line.decode("latin-1").partition(":")
        if colon:
            headers.append([name, value.lstrip(" ")])
    return Request(method, target, headers, rest, origin="")


def sign(request: Request, host: str, now: datetime.datetime) -> None:
    """Signs with root's key as the in-process targets do (fuzz/fuzz_request.h SignAsRoot): unless
    the request carries an Authorization header of its own; a payload hash it names is signed as
    it is. Streaming (aws-chunked) bodies get real chunk signatures."""
    if request.service is None:
        return
    generic = request.service == "s3tables"
    amz_date = now.strftime("%Y%m%dT%H%M%SZ")
    day = amz_date[:8]
    scope = f"{day}/{REGION}/{request.service}/aws4_request"
    key = signing_key(SECRET_KEY, day, request.service)
    raw_path = request.path.encode("latin-1")
    if request.presign:
        query = request.query
        query = "&".join(p for p in query.split("&") if p and not p.startswith("X-Amz-"))
        credential = uri_encode(f"{ACCESS_KEY}/{scope}".encode(), True)
        auth = (f"X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential={credential}&X-Amz-Date={amz_date}"
                "&X-Amz-Expires=900&X-Amz-SignedHeaders=host")
        query = (query + "&" + auth) if query else auth
        canonical = "\n".join([request.method, canonical_uri(raw_path, generic),
                               canonical_query(query.encode("latin-1")), f"host:{normalize_header_value(host)}\n",
                               "host", "UNSIGNED-PAYLOAD"])
        string_to_sign = "\n".join(["AWS4-HMAC-SHA256", amz_date, scope,
                                    hashlib.sha256(canonical.encode("latin-1")).hexdigest()])
        request.target = request.path + "?" + query + "&X-Amz-Signature=" + _hmac_hex(key, string_to_sign)
        return
    if request.header("authorization") is not None:
        return
    if request.header("host") is None:
        request.headers.insert(0, ["Host", host])
    request.set_header("X-Amz-Date", amz_date)
    payload = request.header("x-amz-content-sha256")
    if payload is None:
        payload = hashlib.sha256(request.body).hexdigest()
        if not generic:
            request.set_header("X-Amz-Content-Sha256", payload)
    names = sorted({name.lower() for name, _ in request.headers} - UNSIGNED_HEADERS)
    canonical_headers = "".join(
        name + ":" + ",".join(normalize_header_value(v) for k, v in request.headers if k.lower() == name) + "\n"
        for name in names)
    canonical = "\n".join([request.method, canonical_uri(raw_path, generic),
                           canonical_query(request.query.encode("latin-1")), canonical_headers, ";".join(names),
                           payload])
    string_to_sign = "\n".join(["AWS4-HMAC-SHA256", amz_date, scope,
                                hashlib.sha256(canonical.encode("latin-1")).hexdigest()])
    signature = _hmac_hex(key, string_to_sign)
    request.headers.append(["Authorization", f"AWS4-HMAC-SHA256 Credential={ACCESS_KEY}/{scope}, "
                                             f"SignedHeaders={';'.join(names)}, Signature={signature}"])
    if request.chunks is not None:
        request.body = signed_chunked_body(request, key, amz_date, scope, signature)


def signed_chunked_body(request: Request, key: bytes, amz_date: str, scope: str, seed_signature: str) -> bytes:
    empty = hashlib.sha256(b"").hexdigest()
    previous = seed_signature
    pieces = []
    for chunk in request.chunks + [b""]:
        to_sign = "\n".join(["AWS4-HMAC-SHA256-PAYLOAD", amz_date, scope, previous, empty,
                             hashlib.sha256(chunk).hexdigest()])
        previous = _hmac_hex(key, to_sign)
        pieces.append(f"{len(chunk):x};chunk-signature={previous}\r\n".encode() + chunk + (b"\r\n" if chunk else b""))
    body = b"".join(pieces)
    if request.chunk_trailer:
        # The trailer's signature covers its lines ended by LF; on the wire they end with CRLF.
        to_sign = "\n".join(["AWS4-HMAC-SHA256-TRAILER", amz_date, scope, previous,
                             hashlib.sha256(request.chunk_trailer.replace("\r\n", "\n").encode()).hexdigest()])
        body += (request.chunk_trailer.encode() + b"x-amz-trailer-signature:" +
                 _hmac_hex(key, to_sign).encode() + b"\r\n\r\n")
    else:
        body += b"\r\n"
    mutation = request.chunk_mutation
    rng = random.Random(mutation)
    if mutation.startswith("flip"):
        position = rng.randrange(len(body))
        body = body[:position] + bytes([body[position] ^ (1 << rng.randrange(8))]) + body[position + 1:]
    elif mutation.startswith("truncate"):
        body = body[:rng.randrange(len(body))]
    elif mutation.startswith("size"):
        body = re.sub(rb"^[0-9a-f]+;", rng.choice([b"ffffffffffffffffff;", b"-1;", b"2000;", b"zz;", b";", b"0;"]),
                      body, count=1)
    elif mutation.startswith("extend"):
        body += rng.choice([b"0\r\n\r\n", b"garbage", b"\r\n" * 10])
    request.set_header("Content-Length", str(len(body)))
    return body


def wire_bytes(request: Request, host: str) -> bytes:
    if request.header("host") is None:
        request.headers.insert(0, ["Host", host])
    request.drop_header("content-length")
    request.drop_header("transfer-encoding")
    if request.body or request.method in ("PUT", "POST"):
        request.headers.append(["Content-Length", str(len(request.body))])
    head = f"{request.method} {request.target} HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in request.headers)
    return head.encode("latin-1") + b"\r\n" + request.body


# --- A raw HTTP/1.1 client: every byte sent is the test's, every byte received is checked -------------------


class Malformed(Exception):
    pass


@dataclasses.dataclass
class Response:
    status: int
    reason: str
    headers: list[tuple[str, str]]
    body: bytes
    close: bool

    def header(self, name: str) -> str | None:
        for key, value in self.headers:
            if key.lower() == name:
                return value
        return None


class Connection:
    def __init__(self, port: int):
        self.port = port
        self.sock: socket.socket | None = None
        self.buffer = b""
        self.reconnects = 0

    def close(self) -> None:
        if self.sock is not None:
            self.sock.close()
        self.sock = None
        self.buffer = b""

    def exchange(self, data: bytes, head_request: bool) -> Response:
        fresh = self.sock is None
        if fresh:
            self.sock = socket.create_connection(("127.0.0.1", self.port), timeout=REQUEST_TIMEOUT_S)
            self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            try:
                self.sock.sendall(data)
            except (BrokenPipeError, ConnectionResetError):
                pass  # an early answer may still be readable
            response = self._read_response(head_request)
        except socket.timeout:
            self.close()
            raise Malformed(f"no complete answer within {REQUEST_TIMEOUT_S} s") from None
        except (ConnectionResetError, EOFError) as error:
            self.close()
            if not fresh and isinstance(error, EOFError) and not error.args[0]:
                # The server closed this keep-alive connection before reading the request (it
                # may close after a response whose request body it chose not to drain): retry.
                self.reconnects += 1
                return self.exchange(data, head_request)
            raise Malformed(f"connection ended without a complete answer: {error!r}") from None
        if response.close:
            self.close()
        return response

    def _fill(self) -> bytes:
        block = self.sock.recv(1 << 16)
        if not block:
            raise EOFError(self.buffer[:200])
        self.buffer += block
        return block

    def _take(self, size: int) -> bytes:
        while len(self.buffer) < size:
            self._fill()
        data, self.buffer = self.buffer[:size], self.buffer[size:]
        return data

    def _read_line(self) -> bytes:
        while b"\r\n" not in self.buffer:
            self._fill()
        line, _, self.buffer = self.buffer.partition(b"\r\n")
        return line

    def _read_response(self, head_request: bool) -> Response:
        while True:
            while b"\r\n\r\n" not in self.buffer:
                if len(self.buffer) > 256 * KiB:
                    raise Malformed(f"response head larger than 256 KiB: {self.buffer[:200]!r}")
                self._fill()
            head, _, self.buffer = self.buffer.partition(b"\r\n\r\n")
            lines = head.split(b"\r\n")
            match = re.fullmatch(rb"HTTP/1\.1 ([1-5]\d\d) ([^\r\n]*)", lines[0])
            if not match:
                raise Malformed(f"not an HTTP/1.1 status line: {lines[0][:200]!r}")
            status = int(match.group(1))
            headers = []
            for line in lines[1:]:
                name, colon, value = line.partition(b":")
                if not colon or not re.fullmatch(rb"[!#$%&'*+.^_`|~0-9A-Za-z-]+", name):
                    raise Malformed(f"malformed response header line {line[:200]!r}")
                headers.append((name.decode("latin-1"), value.strip().decode("latin-1")))
            if status >= 200:
                break  # 1xx: an interim answer (100 Continue); the final one follows
        names = {k.lower(): v for k, v in headers}
        close = "close" in names.get("connection", "").lower()
        if head_request or status in (204, 304):
            body = b""
        elif "chunked" in names.get("transfer-encoding", "").lower():
            body = b""
            while True:
                size_line = self._read_line().split(b";")[0]
                if not re.fullmatch(rb"[0-9a-fA-F]{1,16}", size_line):
                    raise Malformed(f"bad chunk size line in a response: {size_line[:100]!r}")
                size = int(size_line, 16)
                if size == 0:
                    while self._read_line():
                        pass
                    break
                body += self._take(size)
                if self._take(2) != b"\r\n":
                    raise Malformed("chunked response framing broken")
        elif "content-length" in names:
            if not names["content-length"].isdigit():
                raise Malformed(f"bad Content-Length {names['content-length']!r}")
            body = self._take(int(names["content-length"]))
        else:
            try:
                while True:
                    self._fill()
            except EOFError:
                pass
            body, self.buffer, close = self.buffer, b"", True
        return Response(status, match.group(2).decode("latin-1"), headers, body, close)


# --- Answer checks -------------------------------------------------------------------------------------------


def path_is_under(path: str, prefix: str) -> bool:
    return path.startswith(prefix) and (len(path) == len(prefix) or path[len(prefix)] == "/")


def api_of(request: Request) -> str:
    """Which API answers the request, by the router's rules (src/server/router.cc)."""
    path = request.path
    if path_is_under(path, "/_serac/admin"):
        return "admin"
    if path_is_under(path, "/_serac"):
        return "serac"
    if path_is_under(path, "/_iceberg"):
        rest = path[len("/_iceberg"):]
        rest = rest[1:] if rest.startswith("/") else rest
        rest = rest[:-1] if rest.endswith("/") else rest
        return "oauth" if request.method == "POST" and rest == "v1/oauth/tokens" else "catalog"
    return "s3"


def error_body_problem(api: str, status: int, body: bytes) -> str | None:
    if api == "s3":
        try:
            root = ET.fromstring(body)
        except ET.ParseError as error:
            return f"S3 error body is not XML ({error})"
        code, message = root.find("Code"), root.find("Message")
        if root.tag != "Error" or code is None or not (code.text or "").strip() or message is None:
            return "S3 error body is not <Error><Code>..</Code><Message>..</Message>"
        return None
    try:
        document = json.loads(body)
    except (ValueError, RecursionError) as error:
        return f"{api} error body is not JSON ({error})"
    if not isinstance(document, dict):
        return f"{api} error body is not a JSON object"
    error = document.get("error")
    if api == "oauth":
        if not isinstance(error, str) or not error:
            return "OAuth2 error body without a string \"error\""
        if "error_description" in document and not isinstance(document["error_description"], str):
            return "OAuth2 error_description is not a string"
        return None
    if api == "admin":
        if (not isinstance(error, dict) or not isinstance(error.get("code"), str) or
                not isinstance(error.get("message"), str)):
            return "admin error body is not {\"error\":{\"code\":str,\"message\":str}}"
        return None
    if (not isinstance(error, dict) or not isinstance(error.get("message"), str) or
            not isinstance(error.get("type"), str) or type(error.get("code")) is not int or
            error["code"] != status):
        return "catalog error body is not {\"error\":{\"message\":str,\"type\":str,\"code\":status}}"
    return None


@dataclasses.dataclass
class Finding:
    kind: str  # "down", "malformed", "server-error", "status", "error-body:<api>", "slow"
    where: str
    problem: str
    request: Request
    response: Response | None

    def signature(self) -> tuple:
        code = None
        if self.response is not None:
            match = re.search(rb"<Code>([^<]*)</Code>|\"(?:type|error)\":\s*\"([^\"]*)\"", self.response.body)
            code = (match.group(1) or match.group(2)).decode("latin-1") if match else None
        return (self.kind, api_of(self.request), self.response.status if self.response else None, code)

    def describe(self) -> str:
        text = f"[{self.kind}] {self.where}: {self.problem}\n{self.request.describe()}\n"
        if self.response is not None:
            headers = "".join(f"    {k}: {v[:200]}\n" for k, v in self.response.headers)
            text += (f"  -> HTTP/1.1 {self.response.status} {self.response.reason}\n{headers}"
                     f"  body ({len(self.response.body)} bytes): {self.response.body[:600]!r}\n")
        return text


# The HTTP layer's own errors (src/http/server.cc: a malformed head, too many or too large header
# fields, a target over 8 KiB), before any handler has seen the request.
HTTP_LAYER_CODES = {400: "BadRequest", 414: "RequestURITooLong", 431: "RequestHeaderSectionTooLarge"}
XML_INVALID_CHARS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]")


def known_error_body_fault(api: str, status: int, body: bytes) -> str | None:
    """Names the two known ways an error body misses its API's shape, so that each has a test of
    its own: "http-layer" when an admin, /_serac or OAuth2 token answer is the HTTP layer's error
    in S3 XML or Iceberg JSON; "unescaped" when an S3 error is well formed but for control bytes or
    invalid UTF-8 it copied from the request."""
    if api == "s3":
        text = body.decode("utf-8", "surrogateescape")
        if XML_INVALID_CHARS.search(text):
            cleaned = XML_INVALID_CHARS.sub("?", text).encode("utf-8")
            if error_body_problem("s3", status, cleaned) is None:
                return "unescaped"
        return None
    if status not in HTTP_LAYER_CODES:
        return None
    other = "catalog" if api == "oauth" else "s3"
    if error_body_problem(other, status, body) is not None:
        return None
    if other == "s3":
        return "http-layer" if ET.fromstring(body).findtext("Code") == HTTP_LAYER_CODES[status] else None
    return "http-layer" if json.loads(body)["error"]["message"].startswith("The request ") else None


def check_answer(request: Request, response: Response) -> tuple[str, str] | None:
    if request.expect and response.status not in request.expect:
        return "status", f"expected {request.expect}, got {response.status}"
    if response.status >= 500 and response.status != 501:
        return "server-error", f"status {response.status}"
    if response.status >= 400 and response.body and request.method != "HEAD":
        api = api_of(request)
        problem = error_body_problem(api, response.status, response.body)
        if problem:
            return f"{known_error_body_fault(api, response.status, response.body) or 'error-body'}:{api}", problem
    if request.method == "HEAD" and response.body:
        return "malformed", "HEAD answer with a body"
    return None


# --- Mutations -----------------------------------------------------------------------------------------------

INTERESTING_BYTES = [b"\x00", b"\xff", b"\x7f", b"\"", b"\\", b"{", b"}", b"[", b"]", b",", b":", b"<", b">", b"&",
                     b"\r\n", b"\n", b"%", b"%00", b"\xc3", b"\xe2\x98\x83", b"\xf0\x9f", b"\\u0000", b"\\ud800",
                     b"-", b"0", b"9" * 30, b"e999", b"null", b"true", b"<![CDATA[", b"]]>", b"&lt;", b"&#0;"]
INTERESTING_NUMBERS = [0, -1, 1, 2, 7, 2 ** 31 - 1, 2 ** 31, 2 ** 63 - 1, 2 ** 63, -2 ** 63, 2 ** 64, 10 ** 30, 1.5,
                       -0.0, 1e308, -1e-308, 1000, 1001, 10000, 10001]
INTERESTING_STRINGS = ["", " ", "x", "null", "0", "-1", "true", "a" * 300, "\u0000", "\ud800", "é☃𝄞", "../..",
                       "/", "s3://other-bucket/x", "s3://", "file:///etc/passwd", "%1F", "db\u001fdb",
                       "${aws:username}",
                       "main", "v1", "t2", "db", "bucket[0]", "day", "identity", "truncate[-1]", "bucket[99999999999]",
                       "decimal(99,99)", "list<long>", "struct", "append", "overwrite", "nulls-first", "asc",
                       "1970-01-01T00:00:00Z", "NaN", "Infinity", "-0", "1e999", "\\", "\"", "<Error/>"]
JSON_OPS = ["null", "number", "string", "bool", "deep", "empty", "drop", "rename", "dup", "huge", "swap", "wrap",
            "unknown", "dup", "string", "number"]
JSON_OP_WEIGHTS = [8, 8, 8, 3, 2, 4, 8, 3, 4, 1, 4, 3, 3, 2, 4, 4]
SEGMENT_VALUES = ["", ".", "..", "%00", "%1F", "%1Fx", "%2F", "%", "%zz", "%E2%98%83", "db", "db%1Fdb", "t2", "t3", "v",
                  "n2", "nope", "x" * 300, "x" * 5000, "tables", "namespaces", "views", "v1", "v2", "_iceberg",
                  "_serac",
                  "lake", "users", "policies", "access-keys", "root", "credentials", "metrics", "plan", "register",
                  "%C0%AE", "%FF", "a+b", "a;b", "~", "*", "%25"]
QUERY_NAMES = ["pageToken", "pageSize", "parent", "snapshots", "purgeRequested", "warehouse", "returnUuid", "planId",
               "uploadId", "partNumber", "list-type", "max-keys", "prefix", "delimiter", "marker", "start-after",
               "continuation-token", "encoding-type", "fetch-owner", "versionId", "tagging", "delete", "uploads",
               "acl", "location", "versioning", "response-content-type", "x-id", "max-parts", "part-number-marker",
               "key-marker", "upload-id-marker", "max-uploads", "X-Amz-Expires", "X-Amz-Date", "X-Amz-Algorithm",
               "AWSAccessKeyId", "Signature", "Expires", "name", "attributes", "lifecycle", "policy"]
QUERY_VALUES = ["", "0", "-1", "1", "2", "3", "1000", "1001", "10001", "99999999999999999999", "abc", "%", "%zz",
                "%00", "%1F", "a%2Fb", "refs", "all", "true", "false", "url", "xml", "/", "\u00e9", "x" * 2000,
                "Zm9v", "AAAA", "==", "1.5", "+", "a+b", "%E2%98%83"]
HEADER_CHOICES = {
    "Content-Type": ["application/json", "application/xml", "text/plain", "application/x-www-form-urlencoded", "",
                     "application/json; charset=utf-16", "multipart/form-data; boundary=x", "*/*", "\xff\xfe"],
    "Content-MD5": ["", "AAAA", "1B2M2Y8AsgTpgAmY7PhCfg==", "not base64!", "=" * 24, "x" * 100],
    "Content-Encoding": ["aws-chunked", "gzip", "identity", "aws-chunked,gzip", "br"],
    "x-amz-content-sha256": ["UNSIGNED-PAYLOAD", "STREAMING-UNSIGNED-PAYLOAD-TRAILER",
                             "STREAMING-AWS4-HMAC-SHA256-PAYLOAD", "STREAMING-AWS4-ECDSA-P256-SHA256-PAYLOAD",
                             "0" * 64, "z" * 64, "", "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="],
    "x-amz-decoded-content-length": ["0", "-1", "1", "99999999999999999999", "abc"],
    "x-amz-trailer": ["x-amz-checksum-crc32", "x-amz-checksum-crc64nvme", "x-amz-checksum-sha256,x-amz-checksum-crc32",
                      "x-amz-meta-foo", "", "bogus"],
    "x-amz-checksum-crc32": ["AAAAAA==", "", "!!!", "AAAAAAAA"],
    "x-amz-checksum-sha256": ["", "AAAA", "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="],
    "x-amz-sdk-checksum-algorithm": ["CRC32", "CRC32C", "SHA1", "SHA256", "CRC64NVME", "MD5", ""],
    "x-amz-checksum-algorithm": ["CRC32", "crc32c", "BOGUS"],
    "x-amz-checksum-mode": ["ENABLED", "x"],
    "Range": ["bytes=0-0", "bytes=-1", "bytes=5-", "bytes=9-3", "bytes=0-99999999999999999999", "bytes=a-b",
              "bytes=0-1,2-3", "items=0-1", "bytes=", "bytes=-0"],
    "If-Match": ["*", "\"abc\"", "", "W/\"x\"", "\"" * 3],
    "If-None-Match": ["*", "\"abc\"", "", "x, y"],
    "If-Modified-Since": ["Thu, 01 Jan 2026 00:00:00 GMT", "yesterday", "", "Thu, 99 Foo 9999 99:99:99 GMT"],
    "If-Unmodified-Since": ["Thu, 01 Jan 1970 00:00:00 GMT", "garbage"],
    "x-amz-copy-source": ["/", "/{bucket}", "/{bucket}/key.txt", "{bucket}/nope", "/nobucket/x", "%",
                          "/{bucket}/key.txt?versionId=1", "/{bucket}/" + "k" * 2000],
    "x-amz-copy-source-range": ["bytes=0-0", "bytes=9-1", "bytes=x"],
    "x-amz-metadata-directive": ["COPY", "REPLACE", "MOVE"],
    "x-amz-tagging": ["a=b", "a=b&a=c", "=", "%", "&&&", "k=" + "v" * 300],
    "x-amz-tagging-directive": ["COPY", "REPLACE", "x"],
    "x-amz-storage-class": ["STANDARD", "GLACIER", "x"],
    "x-amz-acl": ["private", "public-read", "bogus"],
    "x-amz-meta-fuzz": ["v", "v" * 2100, "\xe9", ""],
    "x-amz-bucket-object-lock-enabled": ["true", "x"],
    "x-amz-object-lock-mode": ["GOVERNANCE", "x"],
    "x-amz-server-side-encryption": ["AES256", "aws:kms", "x"],
    "x-amz-expected-bucket-owner": ["123456789012", "x"],
    "x-amz-request-payer": ["requester"],
    "x-amz-write-offset-bytes": ["0", "-1"],
    "x-amz-mp-object-size": ["1", "x"],
    "X-Iceberg-Access-Delegation": ["vended-credentials", "remote-signing", "vended-credentials,remote-signing", "x",
                                    ""],
    "Authorization": ["none", "Bearer x", "Bearer ", "Basic Zm9vOmJhcg==", "Basic !!!", "AWS4-HMAC-SHA256",
                      "AWS4-HMAC-SHA256 Credential=", f"AWS {ACCESS_KEY}:AAAA", "AWS4-HMAC-SHA256 Credential=x/y/z, "
                      "SignedHeaders=host, Signature=00"],
    "Expect": ["100-continue", "200-ok"],
    "Accept": ["application/json", "*/*", "application/xml", "\xff"],
    "Accept-Encoding": ["gzip", "identity;q=0", "*"],
    "Date": ["Thu, 01 Jan 2026 00:00:00 GMT", "now", ""],
    "X-Amz-Date": ["20260101T000000Z", "garbage", "99991231T235959Z", ""],
    "X-Amz-Security-Token": ["x", ""],
    "Connection": ["close", "keep-alive", "upgrade"],
    "Upgrade": ["h2c", "websocket"],
    "Host": ["127.0.0.1", "bucket.localhost", "", "[::1]:1", "h" * 300],
    "X-Forwarded-For": ["1.2.3.4", "x"],
    "x-amz-user-agent": ["\xe9\xe9"],
}


class Mutator:
    def __init__(self, rng: random.Random, names: dict):
        self.rng = rng
        self.names = names  # {"bucket": ...} for placeholders in header values
        self.notes: list[str] = []

    # Bytes --------------------------------------------------------------------------------------------
    def mutate_bytes(self, data: bytes, pool: list[bytes]) -> bytes:
        rng = self.rng
        op = rng.choice(["flip", "flip", "insert", "insert", "delete", "dup", "truncate", "splice", "replace", "run"])
        self.notes.append(f"bytes:{op}")
        if not data:
            return rng.choice(INTERESTING_BYTES)
        position = rng.randrange(len(data) + 1)
        if op == "flip" and position < len(data):
            return data[:position] + bytes([data[position] ^ (1 << rng.randrange(8))]) + data[position + 1:]
        if op == "insert":
            return data[:position] + rng.choice(INTERESTING_BYTES) + data[position:]
        if op == "delete":
            return data[:position] + data[position + rng.randint(1, 64):]
        if op == "dup":
            piece = data[position:position + rng.randint(1, 256)]
            return data[:position] + piece * rng.randint(2, 20) + data[position:]
        if op == "truncate":
            return data[:position]
        if op == "splice" and pool:
            other = rng.choice(pool)
            start = rng.randrange(len(other) + 1)
            return data[:position] + other[start:start + rng.randint(1, 512)] + data[position:]
        if op == "replace" and position < len(data):
            return data[:position] + bytes([rng.randrange(256)]) + data[position + 1:]
        return data[:position] + bytes(rng.randrange(256) for _ in range(rng.randint(1, 32))) + data[position:]

    # JSON ---------------------------------------------------------------------------------------------
    def _slots(self, document, limit=600):
        slots = []
        stack = [(document, "$")]
        while stack and len(slots) < limit:
            node, where = stack.pop()
            if isinstance(node, dict):
                for key, value in node.items():
                    slots.append((node, key, f"{where}.{key}"))
                    stack.append((value, f"{where}.{key}"))
            elif isinstance(node, list):
                for index, value in enumerate(node):
                    slots.append((node, index, f"{where}[{index}]"))
                    stack.append((value, f"{where}[{index}]"))
        return slots

    def mutate_json(self, document, deep_values: dict):
        rng = self.rng
        slots = self._slots(document)
        op = rng.choices(JSON_OPS, JSON_OP_WEIGHTS)[0]
        if op == "dup" and isinstance(document, dict) and isinstance(document.get("updates"), list) \
                and document["updates"] and rng.random() < 0.5:
            times = rng.choice([2, 10, 100, 1000, 3000])
            item = rng.choice(document["updates"])
            document["updates"] = document["updates"] + [copy.deepcopy(item) for _ in range(times)]
            self.notes.append(f"json:dup-update x{times}")
            return document
        if not slots:
            self.notes.append("json:replace-root")
            return rng.choice([None, 0, "", [], {}, "x"])
        parent, key, where = rng.choice(slots)
        self.notes.append(f"json:{op}@{where[:80]}")
        if op == "null":
            parent[key] = None
        elif op == "number":
            parent[key] = rng.choice(INTERESTING_NUMBERS)
        elif op == "string":
            parent[key] = rng.choice(INTERESTING_STRINGS)
        elif op == "bool":
            parent[key] = rng.choice([True, False])
        elif op == "deep":
            depth = rng.choice([64, 999, 1000, 1001, 5000, 100000])
            token = f"\x00DEEP{len(deep_values)}\x00"
            deep_values[json.dumps(token)] = ("[" * depth + "]" * depth if rng.random() < 0.7
                                              else "{\"a\":" * depth + "1" + "}" * depth)
            parent[key] = token
            self.notes[-1] += f" depth={depth}"
        elif op == "empty":
            parent[key] = rng.choice([{}, [], ""])
        elif op == "drop":
            del parent[key]
        elif op == "rename" and isinstance(parent, dict):
            parent[rng.choice([key + "x", key.upper(), "", key[:-1]])] = parent.pop(key)
        elif op == "dup" and isinstance(parent, list):
            parent[key:key] = [copy.deepcopy(parent[key]) for _ in range(rng.choice([1, 5, 100, 1001]))]
        elif op == "huge":
            size = rng.choice([16 * KiB, 256 * KiB, 1 * MiB])
            parent[key] = rng.choice("ab\u00e9") * size
            self.notes[-1] += f" size={size}"
        elif op == "swap":
            _, other_key, _ = rng.choice(slots)
            other_parent = rng.choice(slots)[0]
            try:
                parent[key] = copy.deepcopy(other_parent[other_key])
            except (KeyError, IndexError, TypeError):
                parent[key] = None
        elif op == "wrap":
            parent[key] = rng.choice([[parent[key]], {"value": parent[key]}])
        elif op == "unknown" and isinstance(parent, dict):
            parent[rng.choice(["zz-unknown", "action", "type", "snapshot-id", "requirements"])] = rng.choice(
                INTERESTING_STRINGS + [0, None, [], {}])
        return document

    def json_body(self, body: bytes, rounds: int) -> bytes | None:
        try:
            document = json.loads(body)
        except (ValueError, RecursionError):  # not JSON, or nested past Python's own limit
            return None
        deep_values: dict[str, str] = {}
        for _ in range(rounds):
            document = self.mutate_json(document, deep_values)
        text = json.dumps(document, ensure_ascii=self.rng.random() < 0.5, separators=(",", ":"))
        for token, value in deep_values.items():
            text = text.replace(token, value)
        return text.encode("utf-8", "surrogatepass")

    # XML ----------------------------------------------------------------------------------------------
    def xml_body(self, body: bytes) -> bytes:
        rng = self.rng
        text = body.decode("utf-8", "replace")
        op = rng.choice(["dup", "dup", "text", "text", "dtd", "deep", "drop", "rename", "cdata", "comment"])
        self.notes.append(f"xml:{op}")
        elements = list(re.finditer(r"<(Part|Object|Tag|Key|Value|PartNumber|ETag|Quiet|LocationConstraint|"
                                    r"VersionId|ChecksumCRC32)>.*?</\1>", text, re.S))
        if op == "dup" and elements:
            element = rng.choice(elements)
            times = rng.choice([2, 10, 999, 1001, 10001])
            self.notes[-1] += f" x{times}"
            return (text[:element.end()] + element.group(0) * times + text[element.end():]).encode()
        if op == "text":
            texts = list(re.finditer(r">([^<]*)<", text))
            if texts:
                match = rng.choice(texts)
                value = rng.choice(["", "0", "-1", "10001", "99999999999999999999", "&amp;", "&bogus;", "&#0;",
                                    "&#x110000;", "\u00e9", "x" * 2000, "\"", "]]>", "\x01", "a/b/../..",
                                    " 1 ", "1e3", "0x10", "\"\"", "*"])
                return (text[:match.start(1)] + value + text[match.end(1):]).encode()
        if op == "dtd":
            lol = ('<!DOCTYPE d [<!ENTITY a "aaaaaaaaaa">' +
                   "".join(f'<!ENTITY {chr(98 + i)} "{("&" + chr(97 + i) + ";") * 10}">' for i in range(8)) + "]>")
            start = text.find("<", text.find("?>") + 1) if text.startswith("<?") else 0
            return (text[:start] + lol + text[start:].replace("</Key>", "&i;</Key>", 1)
                    .replace("</Value>", "&i;</Value>", 1)).encode()
        if op == "deep":
            depth = rng.choice([100, 1000, 100000])
            self.notes[-1] += f" depth={depth}"
            position = text.rfind("</")
            return (text[:position] + "<a>" * depth + "</a>" * depth + text[position:]).encode()
        if op == "drop" and elements:
            element = rng.choice(elements)
            return (text[:element.start()] + text[element.end():]).encode()
        if op == "rename" and elements:
            element = rng.choice(elements)
            name = element.group(1)
            renamed = element.group(0).replace(name, rng.choice(["X", name.lower(), "a:" + name]))
            return (text[:element.start()] + renamed + text[element.end():]).encode()
        if op == "cdata":
            position = text.find("</Key>") if "</Key>" in text else text.rfind("</")
            return (text[:position] + "<![CDATA[<x>&]]>" + text[position:]).encode()
        position = rng.randrange(len(text) + 1)
        return (text[:position] + rng.choice(["<!-- c -->", "<?pi x?>", "<", "</", "&"]) + text[position:]).encode()

    # Targets ------------------------------------------------------------------------------------------
    def target(self, request: Request, fixed_segments: int) -> None:
        rng = self.rng
        path, question, query = request.target.partition("?")
        segments = path.split("/")
        op = rng.choice(["segment", "segment", "segment", "drop", "dup", "append", "slash", "encode", "query", "query",
                         "query", "query-drop", "query-dup", "query-raw", "any-segment"])
        self.notes.append(f"target:{op}")
        low = min(fixed_segments, len(segments) - 1)
        index = rng.randrange(low, len(segments)) if len(segments) > low else len(segments) - 1
        if op == "segment":
            segments[index] = rng.choice(SEGMENT_VALUES)
        elif op == "any-segment":
            segments[rng.randrange(1, len(segments))] = rng.choice(SEGMENT_VALUES)
        elif op == "drop" and len(segments) > low + 1:
            del segments[index]
        elif op == "dup":
            segments.insert(index, segments[index])
        elif op == "append":
            segments.append(rng.choice(SEGMENT_VALUES))
        elif op == "slash":
            segments.insert(index, "")
        elif op == "encode":
            segments[index] = "".join(f"%{b:02X}" for b in segments[index].encode("latin-1"))
        elif op.startswith("query"):
            pairs = [p for p in query.split("&") if p] if query else []
            if op == "query":
                name = rng.choice(QUERY_NAMES)
                value = rng.choice(QUERY_VALUES).encode("utf-8").decode("latin-1")
                pairs.insert(rng.randrange(len(pairs) + 1), name if rng.random() < 0.2 else f"{name}={value}")
            elif op == "query-drop" and pairs:
                pairs.pop(rng.randrange(len(pairs)))
            elif op == "query-dup" and pairs:
                pairs.append(rng.choice(pairs))
            elif op == "query-raw":
                pairs.append(rng.choice(["=", "&", "==", "a=b=c", "%", "%zz=%zz", "\xe9=\xe9", "+=+", "x" * 7000]))
            query = "&".join(pairs)
            question = "?" if (query or rng.random() < 0.5) else ""
        request.target = "/".join(segments) + question + query
        if not request.target.startswith("/"):
            request.target = "/" + request.target

    # Headers ------------------------------------------------------------------------------------------
    def header(self, request: Request) -> None:
        rng = self.rng
        op = rng.choice(["set", "set", "set", "drop", "dup", "long", "weird", "many"])
        self.notes.append(f"header:{op}")
        if op == "set":
            name = rng.choice(sorted(HEADER_CHOICES))
            value = rng.choice(HEADER_CHOICES[name]).replace("{bucket}", self.names["bucket"])
            request.set_header(name, value)
            self.notes[-1] += f" {name}"
        elif op == "drop" and request.headers:
            del request.headers[rng.randrange(len(request.headers))]
        elif op == "dup" and request.headers:
            name, value = rng.choice(request.headers)
            request.headers.append([name, rng.choice([value, value + "x", ""])])
        elif op == "long":
            request.headers.append([rng.choice(["X-Fuzz", "x-amz-meta-long", "Content-Type"]),
                                    "v" * rng.choice([1000, 8000, 17000])])
        elif op == "weird":
            request.headers.append([rng.choice(["X-Fuzz", "x-amz-meta-\xe9", "Bad Name", "x:y", "", "X-\x01"]),
                                    rng.choice(["\x00", "\x01\x02", "\xff\xfe", " \t lead", "trail \t ", "\t"])])
        else:
            for i in range(rng.choice([20, 99, 120])):
                request.headers.append([f"X-Many-{i}", str(i)])


# --- The request population --------------------------------------------------------------------------------

SCHEMA = {"type": "struct", "schema-id": 0, "fields": [{"id": 1, "name": "id", "required": True, "type": "long"},
                                                      {"id": 2, "name": "data", "required": False, "type": "string"}]}

S3_SEEDS = {
    "get_object": "GET /{bucket}/key.txt\n\n",
    "head_object": "HEAD /{bucket}/key.txt\n\n",
    "get_range": "GET /{bucket}/big.bin\nRange: bytes=100-2000\n\n",
    "list_v2": "GET /{bucket}?list-type=2&prefix=a%2F&delimiter=%2F&max-keys=3&fetch-owner=true\n\n",
    "list_v1": "GET /{bucket}?marker=a&max-keys=2&encoding-type=url\n\n",
    "list_uploads": "GET /{bucket}?uploads&max-uploads=2\n\n",
    "list_parts": "GET /{bucket}/mp?uploadId={upload}&max-parts=1\n\n",
    "get_tagging": "GET /{bucket}/key.txt?tagging\n\n",
    "put_object": "PUT /{bucket}/fz/obj\nContent-Type: text/plain\nx-amz-meta-a: b\nx-amz-tagging: a=b\n\nhello fuzz",
    "copy_object": "PUT /{bucket}/fz/copy\nx-amz-copy-source: /{bucket}/key.txt\nx-amz-metadata-directive: REPLACE\n\n",
    "delete_object": "DELETE /{bucket}/fz/obj\n\n",
    "create_upload": "POST /{bucket}/fz/mp?uploads\nx-amz-checksum-algorithm: CRC32\n\n",
    "upload_part": "PUT /{bucket}/mp?partNumber=2&uploadId={upload}\n\npart two data",
    "upload_part_copy": ("PUT /{bucket}/mp?partNumber=3&uploadId={upload}\nx-amz-copy-source: /{bucket}/big.bin\n"
                         "x-amz-copy-source-range: bytes=0-99\n\n"),
    "abort_upload": "DELETE /{bucket}/fz/mp?uploadId=bogus-upload\n\n",
    "location": "GET /{bucket}?location\n\n",
    "versioning": "GET /{bucket}?versioning\n\n",
    "list_buckets": "GET /?max-buckets=2\n\n",
    "head_bucket": "HEAD /{bucket}\n\n",
    "get_conditional": ("GET /{bucket}/key.txt\nIf-None-Match: \"abc\"\n"
                        "If-Modified-Since: Thu, 01 Jan 2026 00:00:00 GMT\n\n"),
    "get_overrides": "GET /{bucket}/key.txt?response-content-type=text%2Fplain&response-cache-control=no\n\n",
    "put_checksum": ("PUT /{bucket}/fz/ck\nx-amz-checksum-crc32: DUm3vQ==\nx-amz-sdk-checksum-algorithm: CRC32\n\n"
                     "hello world"),
    "put_tagging_header": "PUT /{bucket}/fz/tagged\nx-amz-tagging: k1=v1&k2=v2\n\nx",
    "presigned_get": "GET /{bucket}/key.txt?response-content-type=a\n\n",
}

CATALOG_EXTRA_SEEDS = {
    "list_tables": "GET {base}/namespaces/db/tables?pageSize=1\n\n",
    "list_views": "GET {base}/namespaces/db/views\n\n",
    "load_view": "GET {base}/namespaces/db/views/v\n\n",
    "head_table": "HEAD {base}/namespaces/db/tables/t3\n\n",
    "head_view": "HEAD {base}/namespaces/db/views/v\n\n",
    "get_namespace": "GET {base}/namespaces/db\n\n",
    "head_namespace": "HEAD {base}/namespaces/db\n\n",
    "plan": "POST {base}/namespaces/db/tables/t2/plan\n\n{{}}",
    "rename_view": ('POST {base}/views/rename\n\n{{"source":{{"namespace":["db"],"name":"w"}},'
                    '"destination":{{"namespace":["db"],"name":"w2"}}}}'),
    "list_warehouses": "GET /_iceberg/v1/warehouses\n\n",
    "default_warehouse_namespaces": "GET /_iceberg/v1/namespaces\n\n",
    "drop_namespace": "DELETE {base}/namespaces/db%1Finner\n\n",
}


@dataclasses.dataclass
class Shard:
    index: int
    warehouse: str
    bucket: str
    upload_id: str = ""
    catalog_seeds: dict = dataclasses.field(default_factory=dict)
    admin_seeds: dict = dataclasses.field(default_factory=dict)
    xml_seeds: dict = dataclasses.field(default_factory=dict)
    sigv_seeds: dict = dataclasses.field(default_factory=dict)
    s3_seeds: dict = dataclasses.field(default_factory=dict)


def read_corpus(target: str) -> dict[str, bytes]:
    directory = CORPUS / target
    return {path.name: path.read_bytes() for path in sorted(directory.iterdir()) if path.is_file()}


def rewrite_catalog(text: bytes, shard: Shard) -> bytes:
    wh, wh2 = shard.warehouse, shard.warehouse + "-2"
    replacements = [(ICEBERG_SEED_BASE.encode(), f"/_iceberg/v1/{wh}".encode()),
                    (b"warehouse=lake", f"warehouse={wh}".encode()),
                    (b"/warehouses/lake2", f"/warehouses/{wh2}".encode()),
                    (b'"lake2"', f'"{wh2}"'.encode()),
                    (b"s3://lake/", f"s3://{wh}/".encode()),
                    (b"lake.db.", f"{wh}.db.".encode()),
                    (f"client_id={SEED_ACCESS_KEY}".encode(), f"client_id={ACCESS_KEY}".encode()),
                    (f"client_secret={SEED_SECRET_KEY}".encode(), f"client_secret={SECRET_KEY}".encode())]
    for old, new in replacements:
        text = text.replace(old, new)
    return text


def rewrite_admin(text: bytes, shard: Shard) -> bytes:
    # Every shard its own user, key and policy, so that shards do not race on them.
    return (text.replace(b"ALICEKEY0001", f"ALICEKEY{shard.index:04d}".encode())
            .replace(b"alice", f"alice{shard.index}".encode()).replace(b"readers", f"readers{shard.index}".encode()))


def build_seeds(shard: Shard) -> None:
    base = f"/_iceberg/v1/{shard.warehouse}"
    for name, data in read_corpus("catalog_request_fuzzer").items():
        shard.catalog_seeds[name] = rewrite_catalog(data, shard)
    for name, text in CATALOG_EXTRA_SEEDS.items():
        shard.catalog_seeds[name] = text.format(base=base).encode()
    for name, data in read_corpus("admin_api_fuzzer").items():
        shard.admin_seeds[name] = rewrite_admin(data, shard)
    shard.admin_seeds["list_policies"] = b"GET /_serac/admin/v1/policies\n\n"
    shard.admin_seeds["whoami"] = b"GET /_serac/admin/v1/users/root\n\n"
    for name, data in read_corpus("s3_xml_fuzzer").items():
        shard.xml_seeds[name] = data
    for name, data in read_corpus("sigv_fuzzer").items():
        text = data.replace(b"/bucket", f"/{shard.bucket}".encode())
        shard.sigv_seeds[name] = rewrite_catalog(text, shard)
    for name, text in S3_SEEDS.items():
        shard.s3_seeds[name] = text.format(bucket=shard.bucket, upload=shard.upload_id).encode()


def xml_request(kind: str, body: bytes, shard: Shard, rng: random.Random) -> Request:
    bucket = shard.bucket
    if kind == "c":
        upload = shard.upload_id if rng.random() < 0.8 else rng.choice(["bogus", "", "%00", "x" * 500])
        request = Request("POST", f"/{bucket}/mp?uploadId={upload}", [], body, "")
    elif kind == "d":
        request = Request("POST", f"/{bucket}?delete", [], body, "")
    elif kind == "t":
        request = Request("PUT", f"/{bucket}/{rng.choice(['key.txt', 'nope', 'fz/obj'])}?tagging", [], body, "")
    else:
        request = Request("PUT", f"/{bucket}-{rng.choice(['cb', 'cb2'])}", [], body, "")
    request.headers.append(["Content-Type", "application/xml"])
    return request


def make_request(shard: Shard, index: int) -> Request:
    """The index-th request of a shard: a seed, mutated, ready to sign. Deterministic in (SEED, shard, index)."""
    rng = random.Random(f"{SEED}:{shard.index}:{index}")
    mutator = Mutator(rng, {"bucket": shard.bucket})
    family = rng.choices(["catalog", "admin", "xml", "sigv", "s3", "chunked"], [44, 12, 13, 11, 16, 4])[0]
    fixed_segments = 3
    if family == "catalog":
        name = rng.choice(sorted(shard.catalog_seeds))
        request = parse_text_request(shard.catalog_seeds[name])
        request.service = "s3tables"
        pool = list(shard.catalog_seeds.values())
        fixed_segments = 4
    elif family == "admin":
        name = rng.choice(sorted(shard.admin_seeds))
        request = parse_text_request(shard.admin_seeds[name])
        request.service = "s3"
        pool = list(shard.admin_seeds.values())
        fixed_segments = 4
    elif family == "xml":
        name = rng.choice(sorted(shard.xml_seeds))
        seed = shard.xml_seeds[name]
        request = xml_request(chr(seed[0]), seed[1:], shard, rng)
        request.service = "s3"
        pool = [s[1:] for s in shard.xml_seeds.values()]
        fixed_segments = 2
    elif family == "sigv":
        name = rng.choice(sorted(shard.sigv_seeds))
        seed = shard.sigv_seeds[name]
        mode = chr(seed[0])
        request = parse_text_request(seed[1:])
        pool = [s[1:] for s in shard.sigv_seeds.values()]
        request.headers = [[k, v] for k, v in request.headers if k.lower() != "host"]
        fixed_segments = 2
        if mode == "r":
            if rng.random() < 0.5:  # its own (foreign) signature, verified as it is
                request.headers = [[k, v.replace(SEED_ACCESS_KEY, ACCESS_KEY)] for k, v in request.headers]
                request.target = request.target.replace(SEED_ACCESS_KEY, ACCESS_KEY)
                name += "(as-is)"
            else:
                request.drop_header("authorization")
                request.drop_header("x-amz-date")
                request.service = "s3"
                request.presign = "X-Amz-" in request.target or "AWSAccessKeyId" in request.target
                if not request.presign:
                    request.drop_header("x-amz-content-sha256")
                name += "(re-signed)"
        else:
            request.service = "s3tables" if mode == "g" else "s3"
    elif family == "chunked":
        # A signed aws-chunked upload with real chunk (and trailer) signatures, then broken.
        name = "signed-chunked"
        payload = bytes(rng.randrange(256) for _ in range(rng.choice([0, 1, 100, 9000, 70000])))
        sizes, chunks, position = rng.choice([[8192], [65536], [10], [100000]]), [], 0
        while position < len(payload):
            size = sizes[0] if rng.random() < 0.8 else rng.choice([1, 8191, 8192, 20000])
            chunks.append(payload[position:position + size])
            position += size
        trailer = rng.random() < 0.5
        headers = [["Content-Encoding", "aws-chunked"], ["x-amz-decoded-content-length", str(len(payload))],
                   ["x-amz-content-sha256",
                    "STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER" if trailer else "STREAMING-AWS4-HMAC-SHA256-PAYLOAD"]]
        crc = base64.b64encode(zlib.crc32(payload).to_bytes(4, "big")).decode()
        if trailer:
            headers.append(["x-amz-trailer", "x-amz-checksum-crc32"])
        request = Request("PUT", f"/{shard.bucket}/fz/chunked", headers, b"", "", service="s3", chunks=chunks,
                          chunk_trailer=(f"x-amz-checksum-crc32:{crc if rng.random() < 0.7 else 'AAAAAA=='}\r\n"
                                         if trailer else ""),
                          chunk_mutation=rng.choice(["", "", f"flip{index}", f"truncate{index}", f"size{index}",
                                                     f"extend{index}"]))
        request.origin = f"chunked[{len(payload)} bytes, {len(chunks)} chunks{', trailer' if trailer else ''}]" + (
            f" {request.chunk_mutation}" if request.chunk_mutation else "")
        if rng.random() < 0.3:
            mutator.header(request)
            request.origin += " " + " ".join(mutator.notes)
        return request
    else:
        name = rng.choice(sorted(shard.s3_seeds))
        request = parse_text_request(shard.s3_seeds[name])
        request.service = "s3"
        request.presign = name == "presigned_get"
        pool = list(shard.s3_seeds.values())
        fixed_segments = 2

    rounds = rng.choices([0, 1, 2, 3, 5], [5, 45, 25, 15, 10])[0]
    for _ in range(rounds):
        what = rng.choices(["body", "target", "header", "method"], [55, 22, 20, 3])[0]
        if what == "body":
            if request.body[:1] in (b"{", b"[") and rng.random() < 0.7:
                mutated = mutator.json_body(request.body, 1)
                if mutated is not None:
                    request.body = mutated
                    continue
            if family == "xml" and rng.random() < 0.6:
                request.body = mutator.xml_body(request.body)
                continue
            request.body = mutator.mutate_bytes(request.body, pool)
        elif what == "target":
            mutator.target(request, fixed_segments)
        elif what == "header":
            mutator.header(request)
        else:
            request.method = rng.choice(["GET", "PUT", "POST", "DELETE", "HEAD", "PATCH", "OPTIONS", "FOO", "get",
                                         "TRACE", "CONNECT"])
            mutator.notes.append(f"method:{request.method}")
    if family == "xml" and chr(shard.xml_seeds[name][0]) == "d" and rng.random() < 0.8:
        request.set_header("Content-MD5", base64.b64encode(hashlib.md5(request.body).digest()).decode())
    if rng.random() < 0.02 and request.service is not None:
        request.service = None  # unsigned
        mutator.notes.append("unsigned")
    request.origin = f"{family}:{name} " + " ".join(mutator.notes)
    return request


def deep_requests(shard: Shard) -> list[Request]:
    """Deeply nested bodies: each must be refused with a 400 (the nesting limit), never a crash."""
    base = f"/_iceberg/v1/{shard.warehouse}"
    deep = "[" * 100000 + "]" * 100000
    cases = [
        ("commit t2, updates nested 100,000 deep", "POST", f"{base}/namespaces/db/tables/t2",
         '{"requirements":[],"updates":' + deep + "}"),
        ("commit t3, updates 100,000 unclosed [", "POST", f"{base}/namespaces/db/tables/t3",
         '{"requirements":[],"updates":' + "[" * 100000),
        ("commit t2, an update nested 100,000 deep in objects", "POST", f"{base}/namespaces/db/tables/t2",
         '{"requirements":[],"updates":[' + '{"a":' * 100000 + "1" + "}" * 100000 + "]}"),
        ("create table, schema nested", "POST", f"{base}/namespaces/db/tables",
         '{"name":"deep","schema":' + deep + "}"),
        ("transaction nested", "POST", f"{base}/transactions/commit", '{"table-changes":' + deep + "}"),
        ("view commit nested", "POST", f"{base}/namespaces/db/views/v", '{"requirements":' + deep + ',"updates":[]}'),
        ("namespace properties nested", "POST", f"{base}/namespaces/db/properties", '{"updates":' + deep + "}"),
        ("create namespace nested", "POST", f"{base}/namespaces", deep),
        ("commit t2, updates 1,001 deep", "POST", f"{base}/namespaces/db/tables/t2",
         '{"requirements":[],"updates":' + "[" * 1001 + "]" * 1001 + "}"),
    ]
    requests_ = [Request(method, path, [["Content-Type", "application/json"]], body.encode(), f"deep:{label}",
                         service="s3tables", expect=(400,)) for label, method, path, body in cases]
    requests_.append(Request("POST", "/_serac/admin/v1/users", [["Content-Type", "application/json"]],
                             ('{"name":"deep","policies":' + "[" * 20000 + "]" * 20000 + "}").encode(),
                             "deep:admin create user nested 20,000", service="s3", expect=(400,)))
    requests_.append(Request("PUT", f"/_serac/admin/v1/policies/deep{shard.index}", [],
                             ('{"Version":"2012-10-17","Statement":' + "[" * 5000 + "]" * 5000 + "}").encode(),
                             "deep:admin policy nested 5,000", service="s3", expect=(400,)))
    body = b"<Delete>" + b"<a>" * 100000 + b"</a>" * 100000 + b"</Delete>"
    requests_.append(Request("POST", f"/{shard.bucket}?delete",
                             [["Content-MD5", base64.b64encode(hashlib.md5(body).digest()).decode()]], body,
                             "deep:DeleteObjects XML nested 100,000", service="s3", expect=(400,)))
    return requests_


def known_fault_requests(shard: Shard) -> list[Request]:
    """Requests that meet each fault found before every time, whatever the seed."""
    big = [["X-Big", "b" * (17 * KiB)]]
    return [Request("GET", f"/{shard.bucket}/%FF", [], b"", "known:key of invalid UTF-8", service="s3"),
            Request("GET", f"/{shard.bucket}/a%01b", [], b"", "known:key with a control byte", service="s3"),
            Request("GET", "/_serac/admin/v1/users", list(big), b"", "known:admin API, 17 KiB header", service="s3"),
            Request("POST", "/_iceberg/v1/oauth/tokens", [["Content-Type", "application/x-www-form-urlencoded"]] + big,
                    b"grant_type=client_credentials", "known:token route, 17 KiB header")]


# --- Running ------------------------------------------------------------------------------------------------


def vm_rss_bytes(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError(f"no VmRSS in /proc/{pid}/status")


def health_live(port: int) -> int:
    connection = Connection(port)
    try:
        return connection.exchange(b"GET /_serac/health/live HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n",
                                   False).status
    finally:
        connection.close()


@dataclasses.dataclass
class RunResult:
    seed: int
    requests: int = 0
    seconds: float = 0.0
    rss_after_warmup: int = 0
    rss_at_end: int = 0
    reconnects: int = 0
    statuses: collections.Counter = dataclasses.field(default_factory=collections.Counter)
    findings: list[Finding] = dataclasses.field(default_factory=list)
    down: str = ""
    deep_statuses: list[tuple[str, int]] = dataclasses.field(default_factory=list)

    def of_kind(self, prefix: str) -> list[Finding]:
        return [f for f in self.findings if f.kind.startswith(prefix)]

    def report(self, findings: list[Finding], limit: int = 6) -> str:
        """A count per kind of finding, then the first example of each."""
        groups: dict[tuple, list[Finding]] = {}
        for finding in findings:
            groups.setdefault(finding.signature(), []).append(finding)
        text = f"SERAC_FUZZ_SEED={self.seed}: {len(findings)} finding(s) in {self.requests} requests\n"
        text += "".join(f"  {len(group)} x {signature}\n" for signature, group in groups.items())
        return text + "\n".join(group[0].describe() for group in list(groups.values())[:limit])


class Runner:
    def __init__(self, server: SeracServer, shards: list[Shard]):
        self.server = server
        self.host = f"127.0.0.1:{server.port}"
        self.shards = shards
        self.connections = {shard.index: Connection(server.port) for shard in shards}

    def send(self, shard: Shard, request: Request, result: RunResult, where: str) -> Response | None:
        sign(request, self.host, datetime.datetime.now(datetime.timezone.utc))
        data = wire_bytes(request, self.host)
        connection = self.connections[shard.index]
        try:
            response = connection.exchange(data, request.method == "HEAD")
        except Malformed as error:
            result.findings.append(Finding("malformed", where, str(error), request, None))
            return None
        except OSError as error:
            result.findings.append(Finding("malformed", where, f"socket error {error!r}", request, None))
            connection.close()
            return None
        result.statuses[(api_of(request), response.status)] += 1
        problem = check_answer(request, response)
        if problem:
            result.findings.append(Finding(problem[0], where, problem[1], request, response))
        return response

    def run_shard_batch(self, shard: Shard, batch: int, result: RunResult) -> int:
        count = 0
        start = batch * REQUESTS_PER_SHARD_BATCH
        for index in range(start, start + REQUESTS_PER_SHARD_BATCH):
            request = make_request(shard, index)
            self.send(shard, request, result, f"shard {shard.index} request {index}")
            count += 1
        if batch == 1:
            for request in deep_requests(shard) + known_fault_requests(shard):
                response = self.send(shard, request, result, f"shard {shard.index} {request.origin}")
                if request.expect:
                    result.deep_statuses.append((request.origin, response.status if response else -1))
                count += 1
        return count


def setup_shard(server: SeracServer, shard: Shard) -> None:
    """A warehouse like the in-process catalog target's (namespace db, tables t2 and t3 with a
    snapshot, view v) and a bucket with a few objects and an open multipart upload."""
    host = f"127.0.0.1:{server.port}"
    connection = Connection(server.port)
    base = f"/_iceberg/v1/{shard.warehouse}"

    def call(method, path, body, service="s3tables", expect=(200,)):
        request = Request(method, path, [["Content-Type", "application/json"]] if body else [],
                          json.dumps(body).encode() if body is not None else b"", "setup", service=service)
        sign(request, host, datetime.datetime.now(datetime.timezone.utc))
        response = connection.exchange(wire_bytes(request, host), False)
        assert response.status in expect, f"setup {method} {path}: {response.status} {response.body[:500]!r}"
        return response

    call("POST", "/_iceberg/v1/warehouses", {"name": shard.warehouse})
    call("POST", f"{base}/namespaces", {"namespace": ["db"]})
    for version in (2, 3):
        name = f"t{version}"
        call("POST", f"{base}/namespaces/db/tables",
             {"name": name, "schema": SCHEMA, "location": f"s3://{shard.warehouse}/db/{name}",
              "properties": {"format-version": str(version)}})
        snapshot = {"snapshot-id": 1000 + version, "sequence-number": 1, "timestamp-ms": 1700000000000,
                    "manifest-list": f"s3://{shard.warehouse}/db/{name}/metadata/snap-1.avro",
                    "summary": {"operation": "append"}, "schema-id": 0}
        if version == 3:
            snapshot.update({"first-row-id": 0, "added-rows": 10})
        call("POST", f"{base}/namespaces/db/tables/{name}", {
            "requirements": [],
            "updates": [{"action": "add-snapshot", "snapshot": snapshot},
                        {"action": "set-snapshot-ref", "ref-name": "main", "type": "branch",
                         "snapshot-id": 1000 + version}]})
    call("POST", f"{base}/namespaces/db/views", {
        "name": "v", "schema": SCHEMA,
        "view-version": {"version-id": 1, "timestamp-ms": 1700000000000, "schema-id": 0,
                         "summary": {"engine-name": "spark"}, "default-namespace": ["db"],
                         "representations": [{"type": "sql", "sql": "select * from t2", "dialect": "spark"}]}})
    connection.close()

    s3 = make_client(server.endpoint)
    s3.create_bucket(Bucket=shard.bucket)
    for key, body in [("key.txt", b"hello world\n" * 10), ("a/b.txt", b"ab"), ("c&d", b"cd"), ("k ey", b"k"),
                      ("big.bin", bytes(range(256)) * 300), ("fz/obj", b"obj")]:
        s3.put_object(Bucket=shard.bucket, Key=key, Body=body)
    shard.upload_id = s3.create_multipart_upload(Bucket=shard.bucket, Key="mp")["UploadId"]
    s3.upload_part(Bucket=shard.bucket, Key="mp", UploadId=shard.upload_id, PartNumber=1, Body=b"part one")


@pytest.fixture(scope="module")
def fuzz_server():
    root = Path(tempfile.mkdtemp(prefix="serac-fuzz-blackbox-"))
    server = SeracServer(root, name="serac-fuzz")
    server.start()
    yield server
    server.stop()
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="module")
def fuzz_run(fuzz_server) -> RunResult:
    print(f"\nblack-box fuzz: SERAC_FUZZ_SEED={SEED}")
    started = time.monotonic()
    result = RunResult(SEED)
    # The server is this run's alone, so names made from the seed are unique in it, and a replay
    # of the seed sends the very same bytes.
    shards = [Shard(i, f"fz{SEED}-wh{i}", f"fz{SEED}-b{i}") for i in range(SHARDS)]
    for shard in shards:
        setup_shard(fuzz_server, shard)
        build_seeds(shard)
    runner = Runner(fuzz_server, shards)
    with concurrent.futures.ThreadPoolExecutor(SHARDS) as pool:
        for batch in range(BATCHES):
            counts = list(pool.map(lambda shard: runner.run_shard_batch(shard, batch, result), shards))
            result.requests += sum(counts)
            if not fuzz_server.alive():
                result.down = f"the server exited with {fuzz_server.process.returncode} during batch {batch}"
                break
            try:
                live = health_live(fuzz_server.port)
            except (Malformed, OSError) as error:
                live = repr(error)
            if live != 200:
                result.down = f"/_serac/health/live answered {live} after batch {batch}"
                break
            if batch == 0:
                result.rss_after_warmup = vm_rss_bytes(fuzz_server.process.pid)
    for connection in runner.connections.values():
        result.reconnects += connection.reconnects
        connection.close()
    if fuzz_server.alive():
        result.rss_at_end = vm_rss_bytes(fuzz_server.process.pid)
    result.seconds = time.monotonic() - started
    by_api = collections.defaultdict(collections.Counter)
    for (api, status), count in sorted(result.statuses.items()):
        by_api[api][status] = count
    print(f"black-box fuzz: {result.requests} requests in {result.seconds:.1f} s, {len(result.findings)} finding(s), "
          f"{result.reconnects} reconnect(s); VmRSS after warm-up {result.rss_after_warmup / MiB:.1f} MiB, "
          f"at end {result.rss_at_end / MiB:.1f} MiB")
    for api, counter in sorted(by_api.items()):
        print(f"  {api}: " + ", ".join(f"{status}x{count}" for status, count in sorted(counter.items())))
    if result.findings:
        print(result.report(result.findings, limit=20))
    return result


# --- Tests ---------------------------------------------------------------------------------------------------

pytestmark = pytest.mark.timeout(240)


def test_server_stays_up(fuzz_run, fuzz_server):
    assert not fuzz_run.down, fuzz_run.down + "\n" + fuzz_server.stderr_tail(40)
    assert fuzz_server.alive()
    assert health_live(fuzz_server.port) == 200
    assert fuzz_run.requests >= 5000, fuzz_run.requests


def test_every_request_gets_a_well_formed_answer(fuzz_run):
    findings = fuzz_run.of_kind("malformed")
    assert not findings, fuzz_run.report(findings)


def test_no_server_errors(fuzz_run):
    findings = fuzz_run.of_kind("server-error")
    assert not findings, fuzz_run.report(findings)


def test_deep_nesting_is_refused_with_400(fuzz_run):
    findings = fuzz_run.of_kind("status")
    assert len(fuzz_run.deep_statuses) == SHARDS * len(deep_requests(Shard(0, "w", "b"))), fuzz_run.deep_statuses
    assert not findings, fuzz_run.report(findings)


@pytest.mark.parametrize("api", ["s3", "catalog", "oauth", "admin", "serac"])
def test_error_bodies_have_their_api_shape(fuzz_run, api):
    """S3: <Error><Code>..</Code><Message>..</Message>; catalog and /_serac: {"error": {"message",
    "type", "code" == status}}; the token route: OAuth2's {"error", "error_description"}; the admin
    API: {"error": {"code", "message"}}. The faults found before have tests of their own below."""
    findings = fuzz_run.of_kind(f"error-body:{api}")
    assert not findings, fuzz_run.report(findings)


def test_http_layer_errors_speak_the_dialect_of_their_path(fuzz_run):
    findings = fuzz_run.of_kind("http-layer:")
    assert not findings, fuzz_run.report(findings)


def test_s3_error_xml_escapes_what_it_echoes(fuzz_run):
    findings = fuzz_run.of_kind("unescaped:")
    assert not findings, fuzz_run.report(findings)


def test_memory_stays_bounded(fuzz_run):
    before, after = fuzz_run.rss_after_warmup, fuzz_run.rss_at_end
    assert before > 0 and after > 0, (before, after)
    assert after <= before + RSS_MARGIN_BYTES, (
        f"VmRSS grew from {before / MiB:.1f} MiB after the warm-up batch to {after / MiB:.1f} MiB at the end "
        f"({(after - before) / MiB:+.1f} MiB; margin {RSS_MARGIN_BYTES / MiB:.0f} MiB)")
    print(f"VmRSS after warm-up {before / MiB:.1f} MiB, at end {after / MiB:.1f} MiB")


# --- The wire: garbage, truncated heads, broken chunked framing over raw sockets --------------------------


@dataclasses.dataclass
class WireCase:
    label: str
    data: bytes
    half_close: bool  # send FIN after the bytes: the server must then answer or close, not wait


def parse_wire_answers(received: bytes) -> str | None:
    """None when `received` is a sequence of complete HTTP/1.1 responses (or nothing: a close)."""
    rest = received
    while rest:
        match = re.match(rb"HTTP/1\.1 ([1-5]\d\d) [^\r\n]*\r\n", rest)
        if not match:
            return f"not an HTTP/1.1 status line: {rest[:120]!r}"
        end = rest.find(b"\r\n\r\n")
        if end < 0:
            return f"the connection ended inside a response head: {rest[:200]!r}"
        head, rest = rest[:end], rest[end + 4:]
        status = int(match.group(1))
        length = re.search(rb"\r\ncontent-length:\s*(\d+)", head, re.I)
        if status < 200 or status in (204, 304) or length is None:
            continue
        size = int(length.group(1))
        if rest.startswith(b"HTTP/1.1 ") and (len(rest) < size or not rest[size:].startswith(b"HTTP/1.1 ")):
            continue  # the answer to a HEAD: a length, no body
        if len(rest) < size:
            return f"the connection ended {size - len(rest)} bytes short of a {size}-byte body: {head[:200]!r}"
        rest = rest[size:]
    return None


def wire_statuses(received: bytes) -> list[int]:
    return [int(m) for m in re.findall(rb"(?:^|\r\n\r\n|\n)HTTP/1\.1 ([1-5]\d\d) ", received)]


def run_wire_case(port: int, case: WireCase) -> tuple[str, str, bytes] | None:
    """(kind, problem, received) when the case went wrong."""
    started = time.monotonic()
    received = b""
    with socket.create_connection(("127.0.0.1", port), timeout=WIRE_TIMEOUT_S) as sock:
        try:
            sock.sendall(case.data)
            if case.half_close:
                sock.shutdown(socket.SHUT_WR)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the server answered and closed before taking everything: fine
        closed = False
        while time.monotonic() - started < WIRE_TIMEOUT_S:
            try:
                block = sock.recv(1 << 16)
            except socket.timeout:
                break
            except ConnectionResetError:
                closed = True
                break
            if not block:
                closed = True
                break
            received += block
            if not case.half_close and parse_wire_answers(received) is None:
                closed = True  # answered; the connection may stay open for the next request
                break
        if not closed:
            return "hang", f"neither closed nor finished within {WIRE_TIMEOUT_S} s", received
    problem = parse_wire_answers(received)
    if problem:
        return "malformed", problem, received
    if any(status >= 500 and status != 501 for status in wire_statuses(received)):
        return "server-error", f"statuses {wire_statuses(received)}", received
    return None


def wire_cases(port: int, bucket: str) -> list[WireCase]:
    rng = random.Random(f"{SEED}:wire")
    host = f"127.0.0.1:{port}".encode()
    seeds = {name: data.replace(SEED_HOST.encode(), host).replace(b"/bucket/", f"/{bucket}/".encode())
             for name, data in read_corpus("http_request_fuzzer").items()}
    pool = list(seeds.values())
    cases = []
    mutator = Mutator(rng, {"bucket": bucket})
    for name, data in sorted(seeds.items()):
        for position in sorted({rng.randrange(len(data)) for _ in range(30)}):  # truncated heads and bodies
            cases.append(WireCase(f"{name} truncated at {position}", data[:position], True))
        for i in range(60):
            mutated = data
            for _ in range(rng.choice([1, 1, 2, 4, 8])):
                mutated = mutator.mutate_bytes(mutated, pool)
            cases.append(WireCase(f"{name} mutated #{i}", mutated, True))
    for i in range(60):
        size = rng.choice([1, 16, 300, 5000])
        cases.append(WireCase(f"random bytes #{i}", bytes(rng.randrange(256) for _ in range(size)), True))
        line = bytes(rng.choice(b"GETPUSOHAD /?&=%:\tHTTP1.0\x00\xff") for _ in range(rng.randint(1, 200)))
        cases.append(WireCase(f"garbage head #{i}", line + b"\r\n\r\n", True))
    # Complete but malformed heads: the answer (or the close) must come without waiting for more.
    base = b"GET /_serac/health/live HTTP/1.1\r\nHost: " + host + b"\r\n"
    must_answer = {
        "header without colon": base + b"Bad Header\r\n\r\n",
        "header name with space": base + b"Bad Name: x\r\n\r\n",
        "NUL in header value": base + b"X: a\x00b\r\n\r\n",
        "obs-fold": base + b"X: a\r\n b\r\n\r\n",
        "HTTP/9.9": b"GET / HTTP/9.9\r\n\r\n",
        "no version": b"GET /\r\n\r\n",
        "method only": b"GET\r\n\r\n",
        "empty method": b" / HTTP/1.1\r\n\r\n",
        "negative Content-Length": base + b"Content-Length: -1\r\n\r\n",
        "Content-Length not a number": base + b"Content-Length: 1x\r\n\r\n",
        "Content-Length overflow": base + b"Content-Length: 99999999999999999999999\r\n\r\n",
        "conflicting Content-Length": base + b"Content-Length: 1\r\nContent-Length: 2\r\n\r\n",
        "unknown Transfer-Encoding": b"PUT /" + bucket.encode() + b"/w HTTP/1.1\r\nHost: " + host +
                                     b"\r\nTransfer-Encoding: gzip\r\n\r\n",
        "header section over 16 KiB": base + b"X: " + b"a" * (20 * KiB) + b"\r\n\r\n",
        "header section over 16 KiB on the admin API": b"GET /_serac/admin/v1/users HTTP/1.1\r\nX: " + b"a" * (20 * KiB)
                                                       + b"\r\n\r\n",
        "header section over 16 KiB on the catalog": b"GET /_iceberg/v1/config HTTP/1.1\r\nX: " + b"a" * (20 * KiB)
                                                     + b"\r\n\r\n",
        "200 header fields": base + b"".join(b"X-%d: v\r\n" % i for i in range(200)) + b"\r\n",
        "target over 8 KiB": b"GET /" + b"a" * (10 * KiB) + b" HTTP/1.1\r\nHost: x\r\n\r\n",
        "control byte in target": b"GET /a\x01b HTTP/1.1\r\nHost: x\r\n\r\n",
        "space in target": b"GET /a b c HTTP/1.1\r\nHost: x\r\n\r\n",
        "bare LF line ends": b"GET /_serac/health/live HTTP/1.1\nHost: x\n\n",
        "HTTP/2 preface": b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",
        "absolute-form target": b"GET http://evil.example/ HTTP/1.1\r\nHost: x\r\n\r\n",
        "asterisk target": b"OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n",
        "CONNECT": b"CONNECT 127.0.0.1:22 HTTP/1.1\r\nHost: x\r\n\r\n",
        "binary method": b"\x16\x03\x01\x02\x00 / HTTP/1.1\r\n\r\n",
        "HTTP/1.0 without Host": b"GET /_serac/health/live HTTP/1.0\r\n\r\n",
        "pipelined garbage after a good request": base + b"\r\nGARBAGE\r\n\r\n",
        "Upgrade h2c": (base + b"Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\n"
                        b"HTTP2-Settings: AAMAAABkAAQAAP__\r\n\r\n"),
    }
    for label, data in must_answer.items():
        cases.append(WireCase(label, data, False))
    # A TLS ClientHello on the plain port, and a head that never ends: only the FIN ends them.
    cases.append(WireCase("TLS ClientHello", bytes.fromhex("16030100a5010000a10303") + bytes(range(32)) + b"\x00\x20" +
                          bytes(32) + b"\x01\x00\x00\x54", True))
    cases.append(WireCase("head without its end", base + b"X-Never: ending", True))
    # Chunked framing, on a signed PUT whose handler reads the body (UNSIGNED-PAYLOAD).
    chunked_bodies = {
        "bad hex size": b"zz\r\nhello\r\n0\r\n\r\n",
        "size overflow": b"ffffffffffffffffffffff\r\nhello\r\n0\r\n\r\n",
        "negative size": b"-5\r\nhello\r\n0\r\n\r\n",
        "missing CRLF after data": b"5\r\nhelloXX0\r\n\r\n",
        "huge extension": b"5;" + b"e" * (20 * KiB) + b"\r\nhello\r\n0\r\n\r\n",
        "truncated data": b"5\r\nhel",
        "truncated size line": b"5",
        "no last chunk": b"5\r\nhello\r\n",
        "no final CRLF": b"5\r\nhello\r\n0\r\n",
        "huge trailer": b"0\r\nX-T: " + b"x" * (40 * KiB) + b"\r\n\r\n",
        "malformed trailer": b"0\r\nnot a trailer\r\n\r\n",
        "space before CRLF": b"5 \r\nhello\r\n0\r\n\r\n",
        "leading space": b" 5\r\nhello\r\n0\r\n\r\n",
        "0x prefix": b"0x5\r\nhello\r\n0\r\n\r\n",
        "CR without LF": b"5\rhello\r\n0\r\n\r\n",
        "size longer than data": b"10\r\nhello\r\n0\r\n\r\n",
        "many one-byte chunks": b"1\r\na\r\n" * 20000 + b"0\r\n\r\n",
        "well formed": b"5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\nx-trailer: 1\r\n\r\n",
    }
    for label, body in chunked_bodies.items():
        for expect_continue in (False, True):
            head = signed_put_head(bucket, host.decode(), [["Expect", "100-continue"]] if expect_continue else [])
            cases.append(WireCase(f"chunked: {label}{' (Expect: 100-continue)' if expect_continue else ''}",
                                  head + b"Transfer-Encoding: chunked\r\n\r\n" + body, True))
    # Content-Length promising more than is sent, then the FIN; framing headers that contradict.
    for label, framing in [("Content-Length longer than the body", b"Content-Length: 100\r\n\r\nshort"),
                           ("Content-Length far longer than the body", b"Content-Length: 5000000000\r\n\r\nshort"),
                           ("Content-Length and chunked",
                            b"Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhe"),
                           ("chunked twice", b"Transfer-Encoding: chunked, chunked\r\n\r\n0\r\n\r\n"),
                           ("chunked, then gzip", b"Transfer-Encoding: chunked, gzip\r\n\r\n0\r\n\r\n")]:
        cases.append(WireCase(label, signed_put_head(bucket, host.decode(), []) + framing, True))
    return cases


def signed_put_head(bucket: str, host: str, headers: list[list[str]]) -> bytes:
    """The head of a signed PUT whose body is not signed (UNSIGNED-PAYLOAD), without framing
    headers or the blank line: whatever framing follows reaches the body reader."""
    request = Request("PUT", f"/{bucket}/wire-put", [["x-amz-content-sha256", "UNSIGNED-PAYLOAD"]] + headers, b"", "",
                      service="s3")
    sign(request, host, datetime.datetime.now(datetime.timezone.utc))
    head = f"PUT {request.target} HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in request.headers)
    return head.encode("latin-1")


@pytest.fixture(scope="module")
def wire_run(fuzz_server, fuzz_run):
    """Runs after the request fuzzing (so that RSS was measured on it alone)."""
    bucket = unique_bucket_name("fz-wire")
    make_client(fuzz_server.endpoint).create_bucket(Bucket=bucket)
    cases = wire_cases(fuzz_server.port, bucket)
    started = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        outcomes = list(pool.map(lambda case: run_wire_case(fuzz_server.port, case), cases))
    findings = [(case, outcome) for case, outcome in zip(cases, outcomes) if outcome is not None]
    print(f"\nwire fuzz: {len(cases)} connections in {time.monotonic() - started:.1f} s, {len(findings)} finding(s)")
    for case, (kind, problem, received) in findings[:40]:
        print(f"[{kind}] {case.label}: {problem}\n  sent {case.data[:300]!r}\n  got {received[:300]!r}")
    return cases, findings


def describe_wire(findings, limit=10) -> str:
    return f"SERAC_FUZZ_SEED={SEED}: {len(findings)} connection(s) went wrong\n" + "\n".join(
        f"[{kind}] {case.label}: {problem}\n  sent ({len(case.data)} bytes{', then FIN' if case.half_close else ''}) "
        f"{case.data[:300]!r}\n  got {received[:300]!r}"
        for case, (kind, problem, received) in findings[:limit])


def test_wire_garbage_gets_an_error_or_a_close(wire_run, fuzz_server):
    cases, findings = wire_run
    assert len(cases) > 500
    bad = [f for f in findings if f[1][0] in ("hang", "malformed")]
    assert not bad, describe_wire(bad) + "\n" + fuzz_server.stderr_tail(20)
    assert fuzz_server.alive() and health_live(fuzz_server.port) == 200


def test_wire_garbage_is_never_a_server_error(wire_run):
    _, findings = wire_run
    bad = [f for f in findings if f[1][0] == "server-error"]
    assert not bad, describe_wire(bad)


@pytest.mark.parametrize("coding", ["gzip", "chunked, gzip", "chunked, chunked"])
def test_transfer_encoding_other_than_chunked_is_refused(fuzz_server, coding):
    """The body is a complete request of its own: it must never be answered (request smuggling)."""
    bucket = unique_bucket_name("fz-te")
    make_client(fuzz_server.endpoint).create_bucket(Bucket=bucket)
    smuggled = b"GET /_serac/health/live HTTP/1.1\r\nHost: x\r\n\r\n"
    data = (signed_put_head(bucket, f"127.0.0.1:{fuzz_server.port}", []) +
            f"Transfer-Encoding: {coding}\r\n\r\n".encode() + smuggled)
    received = b""
    with socket.create_connection(("127.0.0.1", fuzz_server.port), timeout=WIRE_TIMEOUT_S) as sock:
        sock.sendall(data)
        sock.shutdown(socket.SHUT_WR)
        while block := sock.recv(1 << 16):
            received += block
    assert parse_wire_answers(received) is None, received[:500]
    statuses = wire_statuses(received)
    assert statuses and statuses[0] in (400, 501) and len(statuses) == 1, (
        f"Transfer-Encoding: {coding}: answers {statuses}\n{received[:1000]!r}")
