"""Nobody acts without proof, on any route. Every route of the three front ends (S3, the Iceberg
catalog, the admin API) is called with a request botocore signs — header and presigned, with and
without a body, Transfer-Encoding: chunked and aws-chunked, signed and unsigned payloads — which
must be accepted; and first with every single change of it (a signature byte, a signed header's
value, the path, a query parameter, the body, the date, the region, the service), with no
credentials, with a wrong secret and with a forged signature, each of which must be refused with
the protocol's error and change nothing on the server.

Refusals are the protocol's own: S3 and the admin API answer 403 (400 for a malformed signature,
a body that does not match its signed hash, as AWS does, or an S3 request without
x-amz-content-sha256); the Iceberg catalog answers 401 NotAuthorizedException for a request whose
signature proves nothing, as the REST spec defines it (clients fetch new credentials on a 401)."""

from __future__ import annotations

import dataclasses
import datetime
import hashlib
import http.client
import json
import re
import urllib.parse
import time
import uuid

import boto3
import pytest
import requests
from botocore.auth import S3SigV4Auth, S3SigV4QueryAuth, SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.config import Config
from botocore.credentials import Credentials

from catalog_util import CatalogApi, encode_namespace
from s3util import (ACCESS_KEY, REGION, SECRET_KEY, SeracAdmin, SeracServer, chunk_signature, make_client,
                    signing_key, split_chunks)

WRONG_SECRET = "not-the-secret-0123456789abcdef"


# --- The server, and a fingerprint of everything on it ---------------------------------------------


@pytest.fixture(scope="module")
def matrix_server(tmp_path_factory):
    serac = SeracServer(tmp_path_factory.mktemp("signature-matrix"), name="serac-signature-matrix",
                        extra_args=["--maintenance-interval", "0"])
    serac.start()
    yield serac
    serac.stop()


class World:
    """Root's clients of the test server, and names unique to one case."""

    def __init__(self, server: SeracServer):
        self.server = server
        self.s3 = make_client(server.endpoint)
        self.catalog = CatalogApi(server.endpoint)
        self.admin = SeracAdmin(server.endpoint)
        self.host = f"127.0.0.1:{server.port}"
        self.counter = 0

    def name(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}{self.counter}-{uuid.uuid4().hex[:6]}"

    def fingerprint(self, scope: str) -> dict:
        """What a request could have changed: every bucket, warehouse, user, access key and policy
        by name (with their policies and states), and in detail the case's own bucket or warehouse
        (`scope`): objects (ETag, size, tags), uploads and parts; namespaces, tables and views with
        their current metadata files, maintenance settings and scan-planning mode."""
        state = {"buckets": sorted(b["Name"] for b in self.s3.list_buckets()["Buckets"]),
                 "warehouses": sorted(self.catalog.ok("GET", "/v1/warehouses").json()["warehouses"]),
                 "users": sorted(json.dumps(u, sort_keys=True) for u in self.admin.ok("GET", "/users")["users"]),
                 "keys": sorted(json.dumps(k, sort_keys=True) for k in self.admin.ok("GET", "/access-keys")["access-keys"]),
                 "policies": sorted(p["name"] for p in self.admin.ok("GET", "/policies")["policies"])}
        if scope and scope in state["buckets"]:
            objects = {}
            for item in self.s3.list_objects_v2(Bucket=scope).get("Contents", []):
                tags = self.s3.get_object_tagging(Bucket=scope, Key=item["Key"])["TagSet"]
                objects[item["Key"]] = (item["ETag"], item["Size"], sorted((t["Key"], t["Value"]) for t in tags))
            uploads = {}
            for upload in self.s3.list_multipart_uploads(Bucket=scope).get("Uploads", []):
                parts = self.s3.list_parts(Bucket=scope, Key=upload["Key"], UploadId=upload["UploadId"])
                uploads[upload["UploadId"]] = [(p["PartNumber"], p["ETag"]) for p in parts.get("Parts", [])]
            state["scope objects"] = objects
            state["scope uploads"] = uploads
        if scope and scope in state["warehouses"]:
            entry = {"maintenance": self.catalog.ok("GET", f"/v1/warehouses/{scope}/maintenance").json(),
                     "scan-planning": self.catalog.ok("GET", f"/v1/warehouses/{scope}/scan-planning").json(),
                     "namespaces": {}}
            for ns in self.catalog.ok("GET", f"/v1/{scope}/namespaces").json()["namespaces"]:
                path = f"/v1/{scope}/namespaces/{encode_namespace(ns)}"
                ns_entry = {"properties": self.catalog.ok("GET", path).json()["properties"], "tables": {}, "views": {}}
                for table in self.catalog.ok("GET", path + "/tables").json()["identifiers"]:
                    loaded = self.catalog.ok("GET", f"{path}/tables/{table['name']}").json()
                    settings = self.catalog.ok(
                        "GET", f"/v1/warehouses/{scope}/namespaces/{encode_namespace(ns)}/tables/"
                               f"{table['name']}/maintenance").json()
                    ns_entry["tables"][table["name"]] = (loaded["metadata-location"], json.dumps(settings, sort_keys=True))
                for view in self.catalog.ok("GET", path + "/views").json()["identifiers"]:
                    loaded = self.catalog.ok("GET", f"{path}/views/{view['name']}").json()
                    ns_entry["views"][view["name"]] = loaded["metadata-location"]
                entry["namespaces"]["\x1f".join(ns)] = ns_entry
            state["scope warehouse"] = entry
        if scope == "policies":
            state["policy documents"] = {name: self.admin.ok("GET", f"/policies/{name}")["document"]
                                         for name in state["policies"]}
        return state


# --- Requests as they go on the wire ----------------------------------------------------------------


@dataclasses.dataclass
class Spec:
    """One route's request before signing. `path` is percent-encoded as it goes out."""
    front: str                      # s3 | catalog | admin
    method: str
    path: str
    query: list = dataclasses.field(default_factory=list)
    headers: dict = dataclasses.field(default_factory=dict)
    body: bytes = b""
    form: str = "header"            # header | unsigned | presigned | aws-chunked | unsigned-trailer | te-chunked
    ok: tuple = (200, 204)          # what the correctly signed request must get
    scope: str = ""                 # the bucket or warehouse whose contents the fingerprint details


@dataclasses.dataclass
class Wire:
    method: str
    path: str
    query: str                      # raw, as sent
    headers: dict                   # exactly the headers sent (Host included)
    body: bytes = b""               # raw body bytes (framing included)
    te_chunked: bool = False        # send the body with Transfer-Encoding: chunked

    def copy(self, **changes) -> "Wire":
        fields = dataclasses.asdict(self)
        fields["headers"] = dict(self.headers)
        fields.update(changes)
        return Wire(**fields)

    def target(self) -> str:
        return self.path + ("?" + self.query if self.query else "")


def encode_query(query) -> str:
    return "&".join(urllib.parse.quote(k, safe="-_.~") + ("=" + urllib.parse.quote(v, safe="-_.~") if v is not None else "")
                    for k, v in query)


class PayloadAuth(S3SigV4Auth):
    """S3's SigV4 with a payload line of the test's choosing (aws-chunked, UNSIGNED-PAYLOAD)."""

    def __init__(self, credentials, service, region, payload_line):
        super().__init__(credentials, service, region)
        self.payload_line = payload_line

    def payload(self, request):
        return self.payload_line


def service_of(spec: Spec) -> str:
    return "s3tables" if spec.front == "catalog" else "s3"


def sign(world: World, spec: Spec, secret: str = SECRET_KEY) -> Wire:
    credentials = Credentials(ACCESS_KEY, secret)
    url = f"http://{world.host}{spec.path}" + ("?" + encode_query(spec.query) if spec.query else "")
    headers = dict(spec.headers)
    body = spec.body
    # A presigned URL is made without its body (botocore would read a body as form fields).
    request = AWSRequest(method=spec.method, url=url, headers=headers,
                         data=None if spec.form == "presigned" else body)
    if spec.form == "presigned":
        S3SigV4QueryAuth(credentials, "s3", REGION, expires=900).add_auth(request)
    elif spec.front == "catalog":
        SigV4Auth(credentials, "s3tables", REGION).add_auth(request)  # PyIceberg: no x-amz-content-sha256
    elif spec.form == "unsigned":
        PayloadAuth(credentials, "s3", REGION, "UNSIGNED-PAYLOAD").add_auth(request)
    elif spec.form == "aws-chunked":
        request.headers["Content-Encoding"] = "aws-chunked"
        request.headers["x-amz-decoded-content-length"] = str(len(body))
        PayloadAuth(credentials, "s3", REGION, "STREAMING-AWS4-HMAC-SHA256-PAYLOAD").add_auth(request)
    elif spec.form == "unsigned-trailer":
        request.headers["Content-Encoding"] = "aws-chunked"
        request.headers["x-amz-decoded-content-length"] = str(len(body))
        request.headers["x-amz-trailer"] = "x-amz-checksum-sha256"
        request.context["checksum"] = {"request_algorithm": {"in": "trailer", "name": "x-amz-checksum-sha256"}}
        S3SigV4Auth(credentials, "s3", REGION).add_auth(request)
    else:
        S3SigV4Auth(credentials, "s3", REGION).add_auth(request)
    prepared = request.prepare()
    split = urllib.parse.urlsplit(prepared.url)
    sent = {"Host": world.host}
    sent.update({k: v for k, v in prepared.headers.items()})
    raw_body = body
    if spec.form == "aws-chunked":
        amz_date = sent["X-Amz-Date"]
        context = {"amz_date": amz_date, "scope": f"{amz_date[:8]}/{REGION}/s3/aws4_request",
                   "key": signing_key(secret, amz_date[:8])}
        previous = re.search(r"Signature=([0-9a-f]{64})", sent["Authorization"]).group(1)
        raw_body = b""
        for chunk in split_chunks(body, 8192) + [b""]:
            signature = chunk_signature(context, previous, chunk)
            raw_body += f"{len(chunk):x};chunk-signature={signature}\r\n".encode() + chunk + b"\r\n"
            previous = signature
    elif spec.form == "unsigned-trailer":
        checksum = __import__("base64").b64encode(hashlib.sha256(body).digest()).decode()
        raw_body = (f"{len(body):x}\r\n".encode() + body + b"\r\n" if body else b"") + \
            f"0\r\nx-amz-checksum-sha256:{checksum}\r\n\r\n".encode()
    te_chunked = spec.form == "te-chunked"
    if not te_chunked and (raw_body or spec.method in ("PUT", "POST")):
        sent["Content-Length"] = str(len(raw_body))
    return Wire(prepared.method, split.path, split.query, sent, raw_body, te_chunked)


def send(world: World, wire: Wire) -> tuple[int, dict, bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", world.server.port, timeout=30)
    connection.putrequest(wire.method, wire.target(), skip_host=True, skip_accept_encoding=True)
    headers = {k: v for k, v in wire.headers.items() if not (wire.te_chunked and k.lower() == "content-length")}
    if wire.te_chunked:
        headers["Transfer-Encoding"] = "chunked"
    for name, value in headers.items():
        connection.putheader(name, value)
    connection.endheaders()
    if wire.te_chunked:
        for piece in ([wire.body] if wire.body else []):
            connection.send(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
        connection.send(b"0\r\n\r\n")
    elif wire.body:
        connection.send(wire.body)
    try:
        response = connection.getresponse()
        data = response.read() if wire.method != "HEAD" else b""
        return response.status, {k.lower(): v for k, v in response.getheaders()}, data
    finally:
        connection.close()


# --- Single changes of a signed request ----------------------------------------------------------


def header_name(wire: Wire, name: str) -> str | None:
    return next((k for k in wire.headers if k.lower() == name), None)


def with_authorization(wire: Wire, change) -> Wire | None:
    name = header_name(wire, "authorization")
    if name is None:
        return None
    changed = wire.copy()
    changed.headers[name] = change(wire.headers[name])
    return changed


def with_query_param(wire: Wire, param: str, change) -> Wire | None:
    pairs = urllib.parse.parse_qsl(wire.query, keep_blank_values=True)
    if not any(k == param for k, _ in pairs):
        return None
    pairs = [(k, change(v) if k == param else v) for k, v in pairs]
    return wire.copy(query=encode_query(pairs))


def flip_hex(text: str) -> str:
    return text[:-1] + ("0" if text[-1] != "0" else "1")


def shifted_date(value: str) -> str:
    when = datetime.datetime.strptime(value, "%Y%m%dT%H%M%SZ") + datetime.timedelta(seconds=1)
    return when.strftime("%Y%m%dT%H%M%SZ")


def changed_body(wire: Wire, spec: Spec) -> Wire | None:
    if spec.form in ("unsigned", "presigned"):
        return None  # an unsigned payload is unsigned by choice: only its head is proved
    if not wire.body:
        changed = wire.copy(body=b"x")
        if not wire.te_chunked:
            changed.headers[header_name(wire, "content-length") or "Content-Length"] = "1"
        return changed
    body = bytearray(wire.body)
    if spec.form in ("aws-chunked", "unsigned-trailer"):
        # A byte of the data, not of the framing: after the first chunk header's CRLF.
        index = body.index(b"\r\n") + 2
    else:
        index = len(body) - 1
    body[index] = ord("Y") if body[index] != ord("Y") else ord("Z")
    return wire.copy(body=bytes(body))


def changes(world: World, spec: Spec, wire: Wire) -> dict[str, Wire]:
    """Every single change of `wire`, by name."""
    out: dict[str, Wire | None] = {}
    presigned = spec.form == "presigned"
    if presigned:
        out["signature byte"] = with_query_param(wire, "X-Amz-Signature", flip_hex)
        out["date"] = with_query_param(wire, "X-Amz-Date", shifted_date)
        out["region"] = with_query_param(wire, "X-Amz-Credential", lambda v: v.replace(f"/{REGION}/", "/eu-west-1/"))
        out["service"] = with_query_param(wire, "X-Amz-Credential", lambda v: v.replace("/s3/", "/s3tables/"))
        out["expiry"] = with_query_param(wire, "X-Amz-Expires", lambda v: str(int(v) + 1))
        out["unsigned x-amz-meta header"] = wire.copy(headers=dict(wire.headers, **{"x-amz-meta-added": "1"}))
    else:
        out["signature byte"] = with_authorization(wire, lambda v: v[:-1] + ("0" if v[-1] != "0" else "1"))
        date_name = header_name(wire, "x-amz-date")
        out["date"] = wire.copy(headers=dict(wire.headers, **{date_name: shifted_date(wire.headers[date_name])}))
        service = service_of(spec)
        out["region"] = with_authorization(wire, lambda v: v.replace(f"/{REGION}/", "/eu-west-1/"))
        out["service"] = with_authorization(
            wire, lambda v: v.replace(f"/{service}/", "/s3/" if service == "s3tables" else "/s3tables/"))
        for signed in ("content-type", "x-amz-copy-source", "x-amz-tagging", "x-amz-content-sha256",
                       "x-amz-decoded-content-length"):
            name = header_name(wire, signed)
            if name is not None:
                value = wire.headers[name]
                out[f"signed header {signed}"] = wire.copy(headers=dict(wire.headers, **{name: value[:-1] + ("x" if value[-1:] != "x" else "y")}))
        out["unsigned x-amz-meta header"] = wire.copy(headers=dict(wire.headers, **{"x-amz-meta-added": "1"}))
    out["signed header host"] = wire.copy(headers=dict(wire.headers, Host=f"localhost:{world.server.port}"))
    out["path"] = wire.copy(path=wire.path + "x")
    out["query parameter added"] = wire.copy(query=(wire.query + "&" if wire.query else "") + "extra=1")
    plain = [(k, v) for k, v in urllib.parse.parse_qsl(wire.query, keep_blank_values=True) if not k.startswith("X-Amz-")]
    if plain:
        name = plain[0][0]
        out["query parameter changed"] = with_query_param(wire, name, lambda v: v + "x")
    out["body"] = changed_body(wire, spec)
    # Who is not who they say: nobody, a wrong secret, and the forged signature of the review.
    anonymous = wire.copy(headers={k: v for k, v in wire.headers.items()
                                   if k.lower() not in ("authorization", "x-amz-date", "x-amz-content-sha256")})
    anonymous.query = encode_query([(k, v) for k, v in urllib.parse.parse_qsl(wire.query, keep_blank_values=True)
                                    if not k.startswith("X-Amz-")])
    out["no credentials"] = anonymous
    out["wrong secret"] = sign(world, spec, secret=WRONG_SECRET)
    amz_date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    forged_headers = dict(anonymous.headers)
    forged_headers["x-amz-date"] = amz_date
    forged_headers["Authorization"] = (f"AWS4-HMAC-SHA256 Credential={ACCESS_KEY}/{amz_date[:8]}/{REGION}/"
                                       f"{service_of(spec)}/aws4_request, SignedHeaders=host;x-amz-date, "
                                       f"Signature={'0' * 64}")
    forged_headers.pop(header_name(anonymous, "content-length") or "", None)
    out["forged signature, 1-byte body"] = anonymous.copy(headers=dict(forged_headers, **{"Content-Length": "1"}),
                                                          body=b"x", te_chunked=False)
    out["forged signature, chunked body"] = anonymous.copy(headers=forged_headers, body=b"x", te_chunked=True)
    return {name: changed for name, changed in out.items() if changed is not None}


REFUSALS = {"s3": (400, 403), "catalog": (401,), "admin": (400, 403)}


def assert_refused(front: str, change: str, status: int, headers: dict, body: bytes, method: str) -> None:
    assert status in REFUSALS[front], f"{change}: answered {status}: {body[:300]!r}"
    if method == "HEAD":
        return
    if front == "s3":
        assert headers.get("content-type", "").startswith("application/xml"), (change, headers)
        assert b"<Error>" in body, (change, body[:300])
    else:
        assert headers.get("content-type", "").startswith("application/json"), (change, headers)
        assert "error" in json.loads(body), (change, body[:300])


def run_case(world: World, spec: Spec) -> None:
    wire = sign(world, spec)
    before = world.fingerprint(spec.scope)
    for name, changed in changes(world, spec, wire).items():
        status, headers, body = send(world, changed)
        assert_refused(spec.front, name, status, headers, body, spec.method)
        after = world.fingerprint(spec.scope)
        assert after == before, f"{spec.method} {spec.path}: '{name}' was refused with {status} but changed the server"
    status, _, body = send(world, wire)
    assert status in spec.ok, f"correctly signed {spec.method} {spec.path} ({spec.form}): {status} {body[:500]!r}"


# --- The routes ---------------------------------------------------------------------------------


def s3_cases(world: World):
    """(name, setup) pairs: setup() makes what the route needs and returns its Spec."""
    s3 = world.s3

    def bucket_with_object(body=b"the object's bytes"):
        bucket = world.name("sig-")
        s3.create_bucket(Bucket=bucket)
        s3.put_object(Bucket=bucket, Key="obj", Body=body)
        return bucket

    def upload():
        bucket = bucket_with_object()
        upload_id = s3.create_multipart_upload(Bucket=bucket, Key="mp")["UploadId"]
        etag = s3.upload_part(Bucket=bucket, Key="mp", UploadId=upload_id, PartNumber=1, Body=b"part one")["ETag"]
        return bucket, upload_id, etag

    def complete():
        bucket, upload_id, etag = upload()
        xml = (f"<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>{etag}</ETag></Part>"
               f"</CompleteMultipartUpload>").encode()
        return Spec("s3", "POST", f"/{bucket}/mp", [("uploadId", upload_id)], {"Content-Type": "application/xml"}, xml)

    def delete_objects():
        bucket = bucket_with_object()
        xml = b"<Delete><Object><Key>obj</Key></Object></Delete>"
        return Spec("s3", "POST", f"/{bucket}", [("delete", "")],
                    {"Content-MD5": __import__("base64").b64encode(hashlib.md5(xml).digest()).decode()}, xml)

    def tagging():
        bucket = bucket_with_object()
        xml = b"<Tagging><TagSet><Tag><Key>k</Key><Value>v</Value></Tag></TagSet></Tagging>"
        return Spec("s3", "PUT", f"/{bucket}/obj", [("tagging", "")], {"Content-Type": "application/xml"}, xml)

    def put(form, body=b"new bytes " * 1000):
        bucket = bucket_with_object()
        return Spec("s3", "PUT", f"/{bucket}/new%20key", [], {"Content-Type": "text/plain"}, body, form=form)

    def part(form):
        bucket, upload_id, _ = upload()
        return Spec("s3", "PUT", f"/{bucket}/mp", [("partNumber", "2"), ("uploadId", upload_id)], {},
                    b"part two " * 800, form=form)

    def simple(method, suffix="", query=(), headers=None, ok=(200, 204), form="header"):
        def make():
            bucket = bucket_with_object()
            return Spec("s3", method, f"/{bucket}{suffix}", list(query), dict(headers or {}), ok=ok, form=form)
        return make

    def part_copy():
        bucket, upload_id, _ = upload()
        return Spec("s3", "PUT", f"/{bucket}/mp", [("partNumber", "2"), ("uploadId", upload_id)],
                    {"x-amz-copy-source": f"/{bucket}/obj"})

    def uploads_of(method, query_extra=()):
        def make():
            bucket, upload_id, _ = upload()
            return Spec("s3", method, f"/{bucket}/mp", [("uploadId", upload_id), *query_extra])
        return make

    def create_bucket():
        return Spec("s3", "PUT", f"/{world.name('sig-new-')}", [], {})

    def delete_bucket():
        bucket = world.name("sig-empty-")
        s3.create_bucket(Bucket=bucket)
        return Spec("s3", "DELETE", f"/{bucket}")

    return [
        ("ListBuckets", lambda: Spec("s3", "GET", "/")),
        ("ListBuckets presigned", lambda: Spec("s3", "GET", "/", form="presigned")),
        ("ListObjectsV2", simple("GET", "", [("list-type", "2"), ("prefix", "o")])),
        ("ListObjects", simple("GET", "")),
        ("GetBucketLocation", simple("GET", "", [("location", "")])),
        ("GetBucketVersioning", simple("GET", "", [("versioning", "")])),
        ("GetBucketAcl", simple("GET", "", [("acl", "")])),
        ("ListMultipartUploads", simple("GET", "", [("uploads", "")])),
        ("HeadBucket", simple("HEAD", "")),
        ("CreateBucket", create_bucket),
        ("DeleteBucket", delete_bucket),
        ("DeleteObjects", delete_objects),
        ("GetObject", simple("GET", "/obj")),
        ("GetObject presigned", simple("GET", "/obj", form="presigned")),
        ("GetObject with a chunked body", simple("GET", "/obj", form="te-chunked")),
        ("HeadObject", simple("HEAD", "/obj")),
        ("GetObjectTagging", simple("GET", "/obj", [("tagging", "")])),
        ("GetObjectAcl", simple("GET", "/obj", [("acl", "")])),
        ("PutObjectTagging", tagging),
        ("DeleteObjectTagging", simple("DELETE", "/obj", [("tagging", "")])),
        ("CopyObject", simple("PUT", "/copied", [], {"x-amz-copy-source": "/{bucket}/obj"})),
        ("DeleteObject", simple("DELETE", "/obj")),
        ("DeleteObject presigned", simple("DELETE", "/obj", form="presigned")),
        ("PutObject", lambda: put("header")),
        ("PutObject empty", lambda: put("header", b"")),
        ("PutObject UNSIGNED-PAYLOAD", lambda: put("unsigned")),
        ("PutObject presigned", lambda: put("presigned")),
        ("PutObject aws-chunked", lambda: put("aws-chunked", b"chunked bytes " * 1500)),
        ("PutObject unsigned trailer", lambda: put("unsigned-trailer")),
        ("PutObject Transfer-Encoding chunked", lambda: put("te-chunked")),
        ("CreateMultipartUpload", simple("POST", "/mp2", [("uploads", "")])),
        ("UploadPart", lambda: part("header")),
        ("UploadPart aws-chunked", lambda: part("aws-chunked")),
        ("UploadPart presigned", lambda: part("presigned")),
        ("UploadPartCopy", part_copy),
        ("ListParts", uploads_of("GET")),
        ("AbortMultipartUpload", uploads_of("DELETE")),
        ("CompleteMultipartUpload", complete),
    ]


def fix_placeholders(spec: Spec) -> Spec:
    bucket = spec.path.split("/")[1]
    spec.headers = {k: v.replace("{bucket}", bucket) for k, v in spec.headers.items()}
    spec.scope = bucket
    return spec


SCHEMA = {"type": "struct", "schema-id": 0, "fields": [{"id": 1, "name": "id", "type": "long", "required": False}]}
VIEW = {"name": "v", "schema": SCHEMA, "view-version": {
    "version-id": 1, "timestamp-ms": 1700000000000, "schema-id": 0, "summary": {"engine-name": "test"},
    "default-namespace": ["ns"], "representations": [{"type": "sql", "sql": "select 1 as id", "dialect": "spark"}]}}
SNAPSHOTS = "icebergSnapshotManagement"


def catalog_cases(world: World):
    api = world.catalog

    def warehouse_with_table():
        warehouse = world.name("sigwh-")
        api.create_warehouse(warehouse)
        api.ok("POST", f"/v1/{warehouse}/namespaces", {"namespace": ["ns"]})
        api.ok("POST", f"/v1/{warehouse}/namespaces/ns/tables", {"name": "t", "schema": SCHEMA})
        return warehouse

    def with_view():
        warehouse = warehouse_with_table()
        api.ok("POST", f"/v1/{warehouse}/namespaces/ns/views", VIEW)
        return warehouse

    def spec(method, path, body=None, ok=(200, 204), query=(), setup=warehouse_with_table):
        def make():
            warehouse = setup()
            data = b"" if body is None else json.dumps(body(warehouse) if callable(body) else body).encode()
            headers = {"Content-Type": "application/json"} if data else {}
            return Spec("catalog", method, path.replace("{w}", warehouse),
                        [(k, v.replace("{w}", warehouse)) for k, v in query], headers, data, ok=ok, scope=warehouse)
        return make

    def registered(warehouse):
        # The metadata file of a table dropped without purge, registered again under another name.
        location = api.ok("GET", f"/v1/{warehouse}/namespaces/ns/tables/t").json()["metadata-location"]
        api.ok("DELETE", f"/v1/{warehouse}/namespaces/ns/tables/t")
        return {"name": "t_again", "metadata-location": location}

    def registered_view(warehouse):
        location = api.ok("GET", f"/v1/{warehouse}/namespaces/ns/views/v").json()["metadata-location"]
        api.ok("DELETE", f"/v1/{warehouse}/namespaces/ns/views/v")
        return {"name": "v_again", "metadata-location": location}

    def plan_id_path():
        warehouse = warehouse_with_table()
        plan = api.ok("POST", f"/v1/{warehouse}/namespaces/ns/tables/t/plan", {}).json()
        return warehouse, plan.get("plan-id", "none")

    def plan_fetch(method):
        def make():
            warehouse, plan_id = plan_id_path()
            return Spec("catalog", method, f"/_iceberg/v1/{warehouse}/namespaces/ns/tables/t/plan/{plan_id}",
                        ok=(200, 204, 404), scope=warehouse)
        return make

    table = "/_iceberg/v1/{w}/namespaces/ns/tables/t"
    maintenance = "/_iceberg/v1/warehouses/{w}/namespaces/ns/tables/t/maintenance"
    setting = {"status": "enabled", "settings": {SNAPSHOTS: {"minSnapshotsToKeep": 4, "maxSnapshotAgeHours": 48}}}
    commit = {"requirements": [], "updates": [{"action": "set-properties", "updates": {"a": "1"}}]}
    return [
        ("GetConfig", spec("GET", "/_iceberg/v1/config", query=[("warehouse", "{w}")])),
        ("ListWarehouses", spec("GET", "/_iceberg/v1/warehouses")),
        ("CreateWarehouse", spec("POST", "/_iceberg/v1/warehouses", lambda w: {"name": w + "-new"})),
        ("GetWarehouse", spec("GET", "/_iceberg/v1/warehouses/{w}")),
        ("DeleteWarehouse", spec("DELETE", "/_iceberg/v1/warehouses/{w}",
                                 setup=lambda: (lambda w: (api.create_warehouse(w), w)[1])(world.name("sigempty-")))),
        ("GetWarehouseMaintenance", spec("GET", "/_iceberg/v1/warehouses/{w}/maintenance")),
        ("PutWarehouseMaintenance", spec("PUT", f"/_iceberg/v1/warehouses/{{w}}/maintenance/{SNAPSHOTS}", setting)),
        ("DeleteWarehouseMaintenance", spec("DELETE", f"/_iceberg/v1/warehouses/{{w}}/maintenance/{SNAPSHOTS}",
                                            ok=(204, 404))),
        ("GetWarehouseScanPlanning", spec("GET", "/_iceberg/v1/warehouses/{w}/scan-planning")),
        ("PutWarehouseScanPlanning", spec("PUT", "/_iceberg/v1/warehouses/{w}/scan-planning", {"mode": "server"})),
        ("DeleteWarehouseScanPlanning", spec("DELETE", "/_iceberg/v1/warehouses/{w}/scan-planning")),
        ("GetTableMaintenance", spec("GET", maintenance)),
        ("GetTableMaintenanceType", spec("GET", f"{maintenance}/{SNAPSHOTS}")),
        ("PutTableMaintenance", spec("PUT", f"{maintenance}/{SNAPSHOTS}", setting)),
        ("DeleteTableMaintenance", spec("DELETE", f"{maintenance}/{SNAPSHOTS}", ok=(204, 404))),
        ("GetTableMaintenanceJobStatus", spec("GET", f"{maintenance}/{SNAPSHOTS}/status")),
        ("StartTableMaintenanceJob", spec("POST", f"{maintenance}/{SNAPSHOTS}/run", {}, ok=(200, 202))),
        ("ListNamespaces", spec("GET", "/_iceberg/v1/{w}/namespaces")),
        ("CreateNamespace", spec("POST", "/_iceberg/v1/{w}/namespaces", {"namespace": ["ns2"]})),
        ("LoadNamespace", spec("GET", "/_iceberg/v1/{w}/namespaces/ns")),
        ("NamespaceExists", spec("HEAD", "/_iceberg/v1/{w}/namespaces/ns")),
        ("DropNamespace", spec("DELETE", "/_iceberg/v1/{w}/namespaces/empty",
                               setup=lambda: (lambda w: (api.ok("POST", f"/v1/{w}/namespaces", {"namespace": ["empty"]}), w)[1])(
                                   warehouse_with_table()))),
        ("UpdateNamespaceProperties", spec("POST", "/_iceberg/v1/{w}/namespaces/ns/properties",
                                           {"removals": [], "updates": {"owner": "x"}})),
        ("ListTables", spec("GET", "/_iceberg/v1/{w}/namespaces/ns/tables")),
        ("CreateTable", spec("POST", "/_iceberg/v1/{w}/namespaces/ns/tables", {"name": "t2", "schema": SCHEMA})),
        ("LoadTable", spec("GET", table)),
        ("TableExists", spec("HEAD", table)),
        ("CommitTable", spec("POST", table, commit)),
        ("DropTable", spec("DELETE", table)),
        ("DropTable purge", spec("DELETE", table, query=[("purgeRequested", "true")])),
        ("LoadCredentials", spec("GET", table + "/credentials")),
        ("RegisterTable", spec("POST", "/_iceberg/v1/{w}/namespaces/ns/register", registered)),
        ("ReportMetrics", spec("POST", table + "/metrics", {"report-type": "scan-report", "table-name": "ns.t",
                                                            "snapshot-id": 1, "filter": True, "schema-id": 0,
                                                            "projected-field-ids": [1], "projected-field-names": ["id"],
                                                            "metrics": {}})),
        ("RenameTable", spec("POST", "/_iceberg/v1/{w}/tables/rename",
                             {"source": {"namespace": ["ns"], "name": "t"}, "destination": {"namespace": ["ns"], "name": "t3"}})),
        ("CommitTransaction", spec("POST", "/_iceberg/v1/{w}/transactions/commit",
                                   {"table-changes": [dict(commit, identifier={"namespace": ["ns"], "name": "t"})]})),
        ("ListViews", spec("GET", "/_iceberg/v1/{w}/namespaces/ns/views")),
        ("CreateView", spec("POST", "/_iceberg/v1/{w}/namespaces/ns/views", VIEW)),
        ("LoadView", spec("GET", "/_iceberg/v1/{w}/namespaces/ns/views/v", setup=with_view)),
        ("ViewExists", spec("HEAD", "/_iceberg/v1/{w}/namespaces/ns/views/v", setup=with_view)),
        ("ReplaceView", spec("POST", "/_iceberg/v1/{w}/namespaces/ns/views/v",
                             {"requirements": [], "updates": [{"action": "set-properties", "updates": {"a": "1"}}]},
                             setup=with_view)),
        ("DropView", spec("DELETE", "/_iceberg/v1/{w}/namespaces/ns/views/v", setup=with_view)),
        ("RenameView", spec("POST", "/_iceberg/v1/{w}/views/rename",
                            {"source": {"namespace": ["ns"], "name": "v"}, "destination": {"namespace": ["ns"], "name": "v2"}},
                            setup=with_view)),
        ("RegisterView", spec("POST", "/_iceberg/v1/{w}/namespaces/ns/register-view", registered_view, setup=with_view)),
        ("PlanTableScan", spec("POST", table + "/plan", {})),
        ("FetchPlanningResult", plan_fetch("GET")),
        ("CancelPlanning", plan_fetch("DELETE")),
        ("FetchScanTasks", spec("POST", table + "/tasks", {"plan-task": "not-a-task"}, ok=(400, 404))),
    ]


def admin_cases(world: World):
    admin = world.admin
    base = "/_serac/admin/v1"
    policy = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": ["s3:GetObject"],
                                                      "Resource": ["arn:aws:s3:::x/*"]}]}

    def user():
        name = world.name("siguser")
        admin.create_user(name)
        return name

    def with_key():
        name = user()
        key, _ = admin.create_key(name)
        return name, key

    def with_policy():
        name = world.name("sigpolicy")
        admin.put_policy(name, policy)
        return name

    def spec(method, path, body=None, ok=(200, 201, 204)):
        def make():
            data = b"" if body is None else json.dumps(body).encode()
            return Spec("admin", method, base + path, [], {"Content-Type": "application/json"} if data else {}, data,
                        ok=ok, scope="policies" if "/policies" in path else "")
        return make

    def on_user(method, suffix="", body=None):
        def make():
            name = user()
            return spec(method, f"/users/{name}{suffix}", body)()
        return make

    def on_key(method, body=None):
        def make():
            _, key = with_key()
            return spec(method, f"/access-keys/{key}", body)()
        return make

    def attach(method):
        def make():
            name, policy_name = user(), with_policy()
            if method == "DELETE":
                admin.attach(policy_name, name)
            return spec(method, f"/users/{name}/policies/{policy_name}")()
        return make

    def on_policy(method, body=None):
        def make():
            return spec(method, f"/policies/{with_policy()}", body)()
        return make

    return [
        ("CreateUser", lambda: spec("POST", "/users", {"name": world.name("signew"), "policies": []})()),
        ("ListUsers", spec("GET", "/users")),
        ("GetUser", on_user("GET")),
        ("UpdateUser", on_user("PATCH", "", {"enabled": False})),
        ("DeleteUser", on_user("DELETE")),
        ("CreateAccessKey", on_user("POST", "/access-keys", {"description": "d"})),
        ("ListUserAccessKeys", on_user("GET", "/access-keys")),
        ("ListAllAccessKeys", spec("GET", "/access-keys")),
        ("UpdateAccessKey", on_key("PATCH", {"enabled": False})),
        ("DeleteAccessKey", on_key("DELETE")),
        ("ListPolicies", spec("GET", "/policies")),
        ("PutPolicy", lambda: spec("PUT", f"/policies/{world.name('signewpolicy')}", policy)()),
        ("GetPolicy", on_policy("GET")),
        ("DeletePolicy", on_policy("DELETE")),
        ("AttachUserPolicy", attach("PUT")),
        ("DetachUserPolicy", attach("DELETE")),
    ]


@pytest.fixture(scope="module")
def world(matrix_server):
    return World(matrix_server)


def ids(cases):
    return [name for name, _ in cases]


# The route lists are read once, unbound, for the test ids.
_PLACEHOLDER_WORLD = World.__new__(World)
_PLACEHOLDER_WORLD.s3 = _PLACEHOLDER_WORLD.catalog = _PLACEHOLDER_WORLD.admin = None


@pytest.mark.parametrize("route", ids(s3_cases(_PLACEHOLDER_WORLD)))
def test_s3_route_refuses_every_change(world, route):
    make = dict(s3_cases(world))[route]
    run_case(world, fix_placeholders(make()))


@pytest.mark.parametrize("route", ids(catalog_cases(_PLACEHOLDER_WORLD)))
def test_catalog_route_refuses_every_change(world, route):
    make = dict(catalog_cases(world))[route]
    run_case(world, make())


@pytest.mark.parametrize("route", ids(admin_cases(_PLACEHOLDER_WORLD)))
def test_admin_route_refuses_every_change(world, route):
    make = dict(admin_cases(world))[route]
    run_case(world, make())


# --- The review's findings, as they were reported -----------------------------------------------


def forged(world: World, method: str, path: str, body_form: str) -> tuple[int, bytes]:
    """Only an access key id: a zero signature, no x-amz-content-sha256, a body to make the
    verifier wait for it."""
    amz_date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    headers = {"Host": world.host, "x-amz-date": amz_date,
               "Authorization": f"AWS4-HMAC-SHA256 Credential={ACCESS_KEY}/{amz_date[:8]}/{REGION}/s3/aws4_request, "
                                f"SignedHeaders=host;x-amz-date, Signature={'0' * 64}"}
    wire = Wire(method, path, "", headers, b"x", te_chunked=body_form == "chunked")
    if body_form == "length":
        wire.headers["Content-Length"] = "1"
    status, _, data = send(world, wire)
    return status, data


@pytest.mark.parametrize("body_form", ["length", "chunked"])
def test_forged_signature_reads_and_deletes_nothing(world, body_form):
    bucket = world.name("forged-")
    world.s3.create_bucket(Bucket=bucket)
    world.s3.put_object(Bucket=bucket, Key="secret", Body=b"the secret bytes")
    status, data = forged(world, "GET", "/", body_form)
    assert status in (400, 403) and bucket.encode() not in data, (status, data[:300])
    status, data = forged(world, "GET", f"/{bucket}/secret", body_form)
    assert status in (400, 403) and b"the secret bytes" not in data, (status, data[:300])
    status, data = forged(world, "DELETE", f"/{bucket}/secret", body_form)
    assert status in (400, 403), (status, data[:300])
    assert world.s3.get_object(Bucket=bucket, Key="secret")["Body"].read() == b"the secret bytes"


def test_s3_requests_without_the_payload_header_are_refused_as_aws_does(world):
    bucket = world.name("nohash-")
    world.s3.create_bucket(Bucket=bucket)
    # Correctly signed, but by a generic-service signer that sends no x-amz-content-sha256.
    request = AWSRequest(method="GET", url=f"http://{world.host}/{bucket}", headers={})
    SigV4Auth(Credentials(ACCESS_KEY, SECRET_KEY), "s3", REGION).add_auth(request)
    prepared = request.prepare()
    wire = Wire("GET", f"/{bucket}", "", dict({"Host": world.host}, **dict(prepared.headers.items())))
    status, headers, data = send(world, wire)
    assert status == 400 and b"<Code>InvalidRequest</Code>" in data, data
    assert b"x-amz-content-sha256" in data


def test_presigned_url_refuses_unsigned_amz_headers(world):
    """The holder of a presigned PUT may not add x-amz-copy-source (copying what the signer may
    read), metadata or tags the signer did not sign."""
    bucket = world.name("presign-")
    world.s3.create_bucket(Bucket=bucket)
    world.s3.put_object(Bucket=bucket, Key="private", Body=b"private bytes")
    url = world.s3.generate_presigned_url("put_object", Params={"Bucket": bucket, "Key": "upload"}, ExpiresIn=300)
    split = urllib.parse.urlsplit(url)
    for extra in ({"x-amz-copy-source": f"/{bucket}/private"}, {"x-amz-meta-owner": "mallory"},
                  {"x-amz-tagging": "a=b"}):
        wire = Wire("PUT", split.path, split.query, dict({"Host": world.host, "Content-Length": "4"}, **extra), b"body")
        status, _, data = send(world, wire)
        assert status == 403 and b"not signed" in data, (extra, status, data[:300])
    keys = [o["Key"] for o in world.s3.list_objects_v2(Bucket=bucket).get("Contents", [])]
    assert keys == ["private"]
    # The URL as handed out still works.
    wire = Wire("PUT", split.path, split.query, {"Host": world.host, "Content-Length": "4"}, b"body")
    assert send(world, wire)[0] == 200


def test_sigv2_presigned_urls_expire_within_seven_days(world):
    bucket = world.name("sigv2-")
    world.s3.create_bucket(Bucket=bucket)
    world.s3.put_object(Bucket=bucket, Key="k", Body=b"v2")
    v2 = boto3.client("s3", endpoint_url=world.server.endpoint, aws_access_key_id=ACCESS_KEY,
                      aws_secret_access_key=SECRET_KEY, region_name=REGION,
                      config=Config(signature_version="s3", s3={"addressing_style": "path"}))
    fine = v2.generate_presigned_url("get_object", Params={"Bucket": bucket, "Key": "k"}, ExpiresIn=3600)
    split = urllib.parse.urlsplit(fine)
    assert send(world, Wire("GET", split.path, split.query, {"Host": world.host}))[0] == 200
    forever = v2.generate_presigned_url("get_object", Params={"Bucket": bucket, "Key": "k"},
                                        ExpiresIn=8 * 24 * 3600)
    split = urllib.parse.urlsplit(forever)
    status, _, data = send(world, Wire("GET", split.path, split.query, {"Host": world.host}))
    assert status == 403 and b"seven days" in data, (status, data[:300])


def test_catalog_paths_with_dot_segments_are_refused(world):
    """SigV4 signs a generic service's path with "." and ".." removed; the router would read them as
    names. A request signed for one path must not reach another, so such paths are refused."""
    warehouse = world.name("dots-")
    world.catalog.create_warehouse(warehouse)
    world.catalog.ok("POST", f"/v1/{warehouse}/namespaces", {"namespace": ["a"]})
    for path in (f"/_iceberg/v1/{warehouse}/namespaces/b/../a", f"/_iceberg/v1/{warehouse}/namespaces/./a"):
        wire = sign(world, Spec("catalog", "GET", path))
        assert wire.path == path, wire.path
        status, _, data = send(world, wire)
        assert status == 400 and b"segments" in data, (status, data[:300])


@pytest.mark.parametrize("target", ["/{bucket}/k", "/_iceberg/v1/{bucket}/namespaces", "/_serac/admin/v1/users"])
def test_a_refused_request_is_closed_not_drained(world, target):
    """A request refused for its credentials is answered and its connection closed at once: the
    server does not wait for a body nobody proved they may send (a client sending it a byte a
    minute would otherwise hold the connection)."""
    import socket

    bucket = world.name("drain-")
    world.s3.create_bucket(Bucket=bucket)
    head = (f"PUT {target.format(bucket=bucket)} HTTP/1.1\r\nHost: {world.host}\r\n"
            f"Content-Type: application/json\r\nContent-Length: 60000\r\n\r\n").encode()
    if "_iceberg" in target:
        head = head.replace(b"PUT ", b"POST ", 1)
    started = time.monotonic()
    with socket.create_connection(("127.0.0.1", world.server.port), timeout=10) as sock:
        sock.sendall(head)  # and never the body
        received = b""
        while True:
            block = sock.recv(65536)
            if not block:
                break
            received += block
    assert received.split(b" ", 2)[1] in (b"401", b"403"), received[:200]
    assert b"connection: close" in received.lower(), received[:400]
    assert time.monotonic() - started < 5, "the server waited for the body before closing"


def test_guessing_a_client_secret_is_slowed_down(world):
    """Ten wrong secrets for one client from one address within a minute, and that address may not
    try that client again until the minute has passed — not even with the right secret; other
    clients are not held up."""
    user = world.name("guess")
    access, secret = world.admin.create_user_with_key(user, ["readonly"])
    other_access, other_secret = world.admin.create_user_with_key(user + "-other", ["readonly"])
    url = world.server.endpoint + "/_iceberg/v1/oauth/tokens"

    def sign_in(client_id, client_secret):
        return requests.post(url, data={"grant_type": "client_credentials", "client_id": client_id,
                                        "client_secret": client_secret, "scope": "catalog"}, timeout=30)

    for attempt in range(10):
        assert sign_in(access, f"wrong-secret-{attempt:02d}-xxxxxxxx").status_code == 401
    refused = sign_in(access, secret)
    assert refused.status_code == 429, refused.text
    assert refused.json()["error"] == "slow_down"
    assert 0 < int(refused.headers["Retry-After"]) <= 60
    assert sign_in(other_access, other_secret).status_code == 200


def test_a_token_outlives_neither_its_key_nor_itself(world):
    """A bearer token names its key opaquely (nothing readable in it), dies with the key even when a
    key of the same id is made again for another user, and an exchange does not extend it."""
    import base64

    user = world.name("tok")
    world.admin.create_user(user, ["readonly"])
    world.admin.create_user(user + "-b", ["readonly"])
    key_id = ("AKTOK" + uuid.uuid4().hex.upper())[:20]
    secret = "a-chosen-secret-of-20-chars"
    world.admin.create_key(user, key_id, secret)
    url = world.server.endpoint + "/_iceberg/v1/oauth/tokens"
    issued = requests.post(url, data={"grant_type": "client_credentials", "client_id": key_id,
                                      "client_secret": secret}, timeout=30).json()
    token = issued["access_token"]
    raw = base64.urlsafe_b64decode(token.split(".", 1)[1] + "==")
    assert key_id.encode() not in raw and user.encode() not in raw
    exchanged = requests.post(url, data={"grant_type": "urn:ietf:params:oauth:grant-type:token-exchange",
                                         "subject_token": token}, timeout=30).json()
    assert exchanged["expires_in"] <= issued["expires_in"]
    config = world.server.endpoint + "/_iceberg/v1/warehouses"
    assert requests.get(config, headers={"Authorization": f"Bearer {token}"}, timeout=30).status_code in (200, 403)
    world.admin.ok("DELETE", f"/access-keys/{key_id}", status=204)
    time.sleep(0.01)
    world.admin.create_key(user + "-b", key_id, secret)  # the same id, another user's key now
    for stale in (token, exchanged["access_token"]):
        assert requests.get(config, headers={"Authorization": f"Bearer {stale}"}, timeout=30).status_code == 401
