"""The Iceberg REST catalog through ClickHouse's DataLakeCatalog database engine (catalog_type 'rest'),
run in-process with chDB.

Tested with chdb==4.4.0 (a 1.7 MB pure-Python wheel that pulls chdb-core==26.9.0, a 181 MB
manylinux wheel; `SELECT version()` = 26.9.2.1). Nothing is downloaded at run time.

ClickHouse's generic REST catalog has no SigV4: it authenticates with OAuth2 client_credentials
(`catalog_credential = 'id:secret'`) and reads S3 with vended credentials (`vended_credentials`,
default true) or with static keys from the database settings. What ClickHouse 26.9 sends:

- `POST {oauth_server_uri}` (default `{catalog}/v1/oauth/tokens`), Content-Type
  application/x-www-form-urlencoded, body
  `grant_type=client_credentials&scope=<auth_scope>&client_secret=<secret>&client_id=<id>`
  (default scope `PRINCIPAL_ROLE:ALL`). With `oauth_server_use_request_body = false` AND no
  `oauth_server_uri` (the default URL) the same parameters go in the query string and the body is
  empty; with an explicit `oauth_server_uri` the body form is used regardless. No Basic header. The token is cached
  until a catalog call returns 401/403 (`expires_in` is not used to refresh proactively).
- `Authorization: Bearer <token>` on every catalog call: `GET /v1/config?warehouse=W`, then
  `GET /v1/{prefix}/namespaces[?parent=a%1Fb]` (recursive walk), `.../namespaces/{ns}/tables`,
  `.../namespaces/{ns}/tables/{t}` with `X-Iceberg-Access-Delegation: vended-credentials`.
- Vended credentials are read from the load-table `config` only (`s3.access-key-id`,
  `s3.secret-access-key`, `s3.session-token`, `s3.endpoint`), never `storage-credentials`.
  `s3.endpoint` must END WITH "/": without it ClickHouse 26.9 fails to strip the table location
  from `metadata-location` and requests `/<bucket>/<table path>/<bucket>/<table path>/metadata/...`
  (404). PyIceberg 0.12 and DuckDB 1.5.5 accept the trailing slash.

test_clickhouse_reads_through_oauth_shim: a loopback proxy plays an OAuth2 token endpoint, re-signs
the catalog calls with SigV4 and records what ClickHouse sends; S3 is read directly from serac with
static keys (`vended_credentials = false`, `storage_endpoint`).
test_clickhouse_oauth_vended_credentials: serac's own OAuth2 token endpoint, bearer tokens and
vended credentials, with no storage keys in ClickHouse at all.
"""

from __future__ import annotations

import datetime
import decimal
import http.client
import http.server
import json
import threading
import urllib.parse

import chdb
import pyarrow as pa
import pytest
import requests
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials
from chdb import session as chdb_session
from pyiceberg.schema import Schema
from pyiceberg.types import (BooleanType, DateType, DecimalType, DoubleType, LongType, NestedField, StringType,
                             TimestampType)

from catalog_util import (CATALOG_BASE, SIGNING_NAME, catalog, catalog_api, encode_namespace,  # noqa: F401
                          warehouse)
from s3util import ACCESS_KEY, REGION, SECRET_KEY

CHDB_VERSION_TESTED = "4.4.0"
NAMESPACE = ("sales", "emea")           # nested: exercises ClickHouse's `parent` walk
TABLE = "orders"
CH_TABLE = "`sales.emea.orders`"       # ClickHouse names a table "<ns levels joined by .>.<name>"

SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=False),
    NestedField(2, "name", StringType(), required=False),
    NestedField(3, "amount", DoubleType(), required=False),
    NestedField(4, "ts", TimestampType(), required=False),
    NestedField(5, "day", DateType(), required=False),
    NestedField(6, "flag", BooleanType(), required=False),
    NestedField(7, "price", DecimalType(10, 2), required=False),
)
ARROW_SCHEMA = pa.schema([
    pa.field("id", pa.int64()), pa.field("name", pa.string()), pa.field("amount", pa.float64()),
    pa.field("ts", pa.timestamp("us")), pa.field("day", pa.date32()), pa.field("flag", pa.bool_()),
    pa.field("price", pa.decimal128(10, 2)),
])


def batch(ids) -> pa.Table:
    start = datetime.datetime(2026, 1, 1)
    rows = [{"id": i, "name": f"row-{i}" if i % 4 else None, "amount": i * 1.5,
             "ts": start + datetime.timedelta(hours=i, microseconds=i),
             "day": (start + datetime.timedelta(days=i)).date(),
             "flag": i % 2 == 0, "price": decimal.Decimal(i * 125) / 100} for i in ids]
    return pa.Table.from_pylist(rows, schema=ARROW_SCHEMA)


@pytest.fixture
def written(catalog):
    """A nested namespace with a two-snapshot table (and a sibling table), written by PyIceberg;
    returns the rows PyIceberg reads back, sorted by id."""
    catalog.create_namespace(NAMESPACE[:1])
    catalog.create_namespace(NAMESPACE)
    table = catalog.create_table(NAMESPACE + (TABLE,), SCHEMA)
    table.append(batch(range(0, 6)))
    table.append(batch(range(6, 10)))
    catalog.create_table(NAMESPACE[:1] + ("other",), SCHEMA)
    return sorted(table.scan().to_arrow().to_pylist(), key=lambda row: row["id"])


def normalise(rows):
    """ClickHouse returns DateTime64 as UTC-aware datetimes; Iceberg `timestamp` is zone-less."""
    out = []
    for row in rows:
        out.append({k: (v.astimezone(datetime.timezone.utc).replace(tzinfo=None)
                        if isinstance(v, datetime.datetime) and v.tzinfo else v) for k, v in row.items()})
    return sorted(out, key=lambda row: row["id"])


def sql_str(value: str) -> str:
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


@pytest.fixture
def clickhouse(tmp_path):
    session = chdb_session.Session(str(tmp_path / "chdb"))
    session.query("SET allow_experimental_database_iceberg = 1")
    session.query("SET session_timezone = 'UTC'")
    yield session
    session.close()


def attach(session, catalog_uri: str, warehouse_name: str, **settings) -> None:
    items = {"catalog_type": "rest", "warehouse": warehouse_name, **settings}
    rendered = ", ".join(f"{k} = {str(v).lower() if isinstance(v, bool) else sql_str(str(v))}"
                         for k, v in items.items())
    session.query(f"CREATE DATABASE lake ENGINE = DataLakeCatalog({sql_str(catalog_uri)}) SETTINGS {rendered}")


def read_table(session) -> list[dict]:
    return normalise(session.query(f"SELECT * FROM lake.{CH_TABLE}", "ArrowTable").to_pylist())


def check_listing(session) -> None:
    tables = sorted(session.query("SHOW TABLES FROM lake", "ArrowTable").column("name").to_pylist())
    assert tables == ["sales.emea.orders", "sales.other"], tables


def oauth_settings(endpoint: str, use_request_body: bool) -> dict:
    """Form body: explicit oauth_server_uri. Query string: only happens with the default URI
    ({catalog}/v1/oauth/tokens) and oauth_server_use_request_body = false."""
    if use_request_body:
        return {"oauth_server_uri": endpoint + CATALOG_BASE + "/v1/oauth/tokens"}
    return {"oauth_server_use_request_body": False}


# --- A loopback OAuth2 shim in front of today's SigV4-only catalog ------------------------------------


class OAuthShim:
    """Answers POST .../oauth/tokens with a fixed bearer token, checks that token on every other
    catalog call, re-signs the call with SigV4 (s3tables) and forwards it to serac. Records every
    request (secrets masked) so the test can assert what ClickHouse sends."""

    TOKEN = "shim-token-0123456789"

    def __init__(self, upstream: str):
        self.upstream = urllib.parse.urlsplit(upstream).netloc
        self.requests: list[dict] = []
        shim = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def handle_one(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                path, _, query = self.path.partition("?")
                record = {"method": self.command, "path": path, "query": urllib.parse.parse_qs(query),
                          "form": urllib.parse.parse_qs(body.decode(errors="replace")),
                          "headers": {k.lower(): v for k, v in self.headers.items()}}
                shim.requests.append(record)
                if path.endswith("/oauth/tokens"):
                    return self.reply(200, [("Content-Type", "application/json")], json.dumps(
                        {"access_token": shim.TOKEN, "token_type": "bearer", "expires_in": 3600,
                         "issued_token_type": "urn:ietf:params:oauth:token-type:access_token"}).encode())
                if self.headers.get("Authorization") != f"Bearer {shim.TOKEN}":
                    return self.reply(401, [("Content-Type", "application/json")], json.dumps(
                        {"error": {"message": "bad bearer", "type": "NotAuthorizedException", "code": 401}}).encode())
                headers = {k: v for k, v in self.headers.items()
                           if k.lower() not in ("authorization", "host", "connection", "content-length")}
                aws = AWSRequest(method=self.command, url=f"http://{shim.upstream}{self.path}", data=body,
                                 headers=headers)
                SigV4Auth(Credentials(ACCESS_KEY, SECRET_KEY), SIGNING_NAME, REGION).add_auth(aws)
                out = dict(aws.headers.items())
                if body:
                    out["Content-Length"] = str(len(body))
                conn = http.client.HTTPConnection(shim.upstream, timeout=60)
                try:
                    conn.request(self.command, self.path, body=body or None, headers=out)
                    response = conn.getresponse()
                    payload = response.read()
                    self.reply(response.status, response.getheaders(), payload)
                finally:
                    conn.close()

            def reply(self, status, headers, payload):
                self.send_response(status)
                for key, value in headers:
                    if key.lower() not in ("content-length", "transfer-encoding", "connection"):
                        self.send_header(key, value)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(payload)

            do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = handle_one

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.endpoint = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.mark.parametrize("use_request_body", [True, False], ids=["form-body", "query-string"])
def test_clickhouse_reads_through_oauth_shim(server, warehouse, written, clickhouse, use_request_body):
    assert chdb.__version__ == CHDB_VERSION_TESTED, f"re-check the notes at the top for chdb {chdb.__version__}"
    with OAuthShim(server.endpoint) as shim:
        attach(clickhouse, shim.endpoint + CATALOG_BASE, warehouse,
               catalog_credential=f"{ACCESS_KEY}:{SECRET_KEY}", auth_scope="catalog",
               **oauth_settings(shim.endpoint, use_request_body),
               vended_credentials=False, storage_endpoint=server.endpoint,
               aws_access_key_id=ACCESS_KEY, aws_secret_access_key=SECRET_KEY, region=REGION)
        check_listing(clickhouse)
        assert read_table(clickhouse) == written
        flagged = clickhouse.query(f"SELECT count(), sum(id) FROM lake.{CH_TABLE} WHERE flag", "CSV")
        assert str(flagged).strip() == "5,20"

    # What serac's token endpoint and bearer check must accept.
    tokens = [r for r in shim.requests if r["path"].endswith("/oauth/tokens")]
    assert len(tokens) == 1, tokens
    token = tokens[0]
    assert token["method"] == "POST" and token["path"] == CATALOG_BASE + "/v1/oauth/tokens"
    assert token["headers"]["content-type"] == "application/x-www-form-urlencoded"
    assert "authorization" not in token["headers"]
    params = token["form"] if use_request_body else token["query"]
    assert params == {"grant_type": ["client_credentials"], "scope": ["catalog"],
                      "client_id": [ACCESS_KEY], "client_secret": [SECRET_KEY]}, params
    catalog_calls = [r for r in shim.requests if r is not token]
    assert all(r["headers"].get("authorization") == f"Bearer {OAuthShim.TOKEN}" for r in catalog_calls)
    paths = {(r["method"], r["path"], tuple(sorted((k, v[0]) for k, v in r["query"].items()))) for r in catalog_calls}
    assert ("GET", CATALOG_BASE + "/v1/config", (("warehouse", warehouse),)) in paths
    namespaces = f"{CATALOG_BASE}/v1/{warehouse}/namespaces"
    assert ("GET", namespaces, ()) in paths
    assert ("GET", namespaces, (("parent", "sales"),)) in paths
    assert ("GET", namespaces, (("parent", "sales\x1femea"),)) in paths   # sent as parent=sales%1Femea
    assert ("GET", f"{namespaces}/{encode_namespace(NAMESPACE)}/tables/{TABLE}", ()) in paths


# --- The real thing: serac's own OAuth2 and vended credentials ------------------------------------------


def serac_token(server) -> str:
    """A bearer token from serac's OAuth2 endpoint."""
    response = requests.post(server.endpoint + CATALOG_BASE + "/v1/oauth/tokens", timeout=30, data={
        "grant_type": "client_credentials", "client_id": ACCESS_KEY, "client_secret": SECRET_KEY,
        "scope": "PRINCIPAL_ROLE:ALL"})
    assert response.status_code == 200, response.text[:500]
    assert response.headers.get("Cache-Control") == "no-store", response.headers
    body = response.json()
    assert body.get("token_type", "").lower() == "bearer", body
    return body["access_token"]


def vended_config(server, warehouse, token) -> dict:
    response = requests.get(
        f"{server.endpoint}{CATALOG_BASE}/v1/{warehouse}/namespaces/{encode_namespace(NAMESPACE)}/tables/{TABLE}",
        headers={"Authorization": f"Bearer {token}", "X-Iceberg-Access-Delegation": "vended-credentials"},
        timeout=30)
    assert response.status_code == 200, response.text[:500]
    config = response.json().get("config") or {}
    assert "s3.access-key-id" in config, config
    return config


def test_clickhouse_oauth_vended_credentials(server, warehouse, written, clickhouse):
    use_request_body = True  # ClickHouse's default; the query string form is refused (below)
    config = vended_config(server, warehouse, serac_token(server))
    # ClickHouse reads vended credentials only from `config`, and needs a trailing "/" on s3.endpoint.
    assert config.get("s3.endpoint", "").rstrip("/") == server.endpoint, config
    assert config["s3.endpoint"].endswith("/"), (
        "ClickHouse 26.9 doubles the table path in S3 keys unless s3.endpoint ends with '/'")
    assert config["s3.access-key-id"] != ACCESS_KEY, "vended keys should be temporary, not the root key"

    attach(clickhouse, server.endpoint + CATALOG_BASE, warehouse,
           catalog_credential=f"{ACCESS_KEY}:{SECRET_KEY}",
           **oauth_settings(server.endpoint, use_request_body),
           vended_credentials=True)   # no storage keys: S3 access must come from the vended ones
    check_listing(clickhouse)
    assert read_table(clickhouse) == written


def test_clickhouse_secret_in_the_query_string_is_refused(server, warehouse, clickhouse):
    """ClickHouse with oauth_server_use_request_body = false puts client_secret in the URL, where
    proxies and access logs keep it: serac's token endpoint refuses it, saying why."""
    response = requests.post(server.endpoint + CATALOG_BASE + "/v1/oauth/tokens", timeout=30,
                             params={"grant_type": "client_credentials", "scope": "catalog",
                                     "client_id": ACCESS_KEY, "client_secret": SECRET_KEY},
                             headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert response.status_code == 400, response.text
    assert response.json()["error"] == "invalid_request"
    assert "query string" in response.json()["error_description"]
    with pytest.raises(Exception) as refused:
        attach(clickhouse, server.endpoint + CATALOG_BASE, warehouse,
               catalog_credential=f"{ACCESS_KEY}:{SECRET_KEY}",
               **oauth_settings(server.endpoint, False), vended_credentials=True)
        check_listing(clickhouse)
    assert "400" in str(refused.value) or "invalid_request" in str(refused.value), refused.value
