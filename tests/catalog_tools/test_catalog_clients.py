"""Checks that the Python catalog clients are installed and configured the way serac expects:
DuckDB's iceberg/httpfs load without the network, and both DuckDB and PyIceberg sign catalog
requests with SigV4 for the service name s3tables against a non-AWS host.

A small loopback HTTP server stands in for the catalog and records what the clients send.
"""

from __future__ import annotations

import http.server
import json
import pathlib
import re
import sys
import threading

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

import duckdb  # noqa: E402
import duckdb_offline  # noqa: E402

ACCESS_KEY = "AKIDSERACTEST"
SECRET_KEY = "serac-test-secret"
CREDENTIAL_SCOPE = re.compile(
    r"^AWS4-HMAC-SHA256 Credential=" + ACCESS_KEY + r"/\d{8}/us-east-1/s3tables/aws4_request, "
    r"SignedHeaders=[a-z0-9;-]+, Signature=[0-9a-f]{64}$"
)


class _RecordingCatalog(http.server.BaseHTTPRequestHandler):
    """Answers the two read-only calls a client makes first and records every request."""

    def do_GET(self):  # noqa: N802 (http.server naming)
        self.server.requests.append((self.command, self.path, dict(self.headers.items())))
        path = self.path.split("?", 1)[0]
        if path.endswith("/v1/config"):
            self._reply(200, {"defaults": {}, "overrides": {}})
        elif path.endswith("/v1/namespaces"):
            self._reply(200, {"namespaces": [["ns1"]]})
        else:
            self._reply(404, {"error": {"message": "no such route", "type": "NoSuchNamespaceException", "code": 404}})

    def _reply(self, status, body):
        payload = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args):
        pass


@pytest.fixture
def recording_catalog():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _RecordingCatalog)
    server.requests = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def _endpoint(server) -> str:
    return f"http://127.0.0.1:{server.server_address[1]}/_iceberg"


def _header(headers: dict, name: str) -> str | None:
    return next((v for k, v in headers.items() if k.lower() == name), None)


def test_duckdb_loads_iceberg_and_httpfs_from_packages():
    con = duckdb_offline.connect()
    loaded = dict(con.execute("SELECT extension_name, install_mode FROM duckdb_extensions() WHERE loaded").fetchall())
    assert {"avro", "httpfs", "iceberg"} <= loaded.keys()
    settings = dict(
        con.execute(
            "SELECT name, value FROM duckdb_settings() "
            "WHERE name IN ('autoinstall_known_extensions', 'autoload_known_extensions')"
        ).fetchall()
    )
    assert settings == {"autoinstall_known_extensions": "false", "autoload_known_extensions": "false"}


def test_duckdb_does_not_fetch_a_missing_extension():
    con = duckdb_offline.connect()
    # spatial is not shipped by any installed package: with installing disabled this must fail
    # at once instead of downloading it.
    with pytest.raises(duckdb.Error):
        con.execute("LOAD spatial")


def test_extension_for_another_duckdb_version_is_rejected(monkeypatch):
    monkeypatch.setattr(duckdb, "__version__", "0.0.1")
    with pytest.raises(duckdb_offline.ExtensionUnavailable, match="pin both"):
        duckdb_offline.extension_path("iceberg")


def test_duckdb_attach_signs_with_s3tables(recording_catalog):
    con = duckdb_offline.connect()
    duckdb_offline.attach_iceberg_catalog(
        con, "cat", endpoint=_endpoint(recording_catalog), warehouse="wh1",
        access_key_id=ACCESS_KEY, secret_access_key=SECRET_KEY,
    )
    method, path, headers = recording_catalog.requests[0]
    assert (method, path) == ("GET", "/_iceberg/v1/config?warehouse=wh1")
    assert CREDENTIAL_SCOPE.match(_header(headers, "authorization") or ""), headers
    assert _header(headers, "x-amz-date")


def test_duckdb_attach_without_sigv4_service_fails_on_a_custom_host(recording_catalog):
    con = duckdb_offline.connect()
    con.execute(f"CREATE SECRET s (TYPE s3, KEY_ID '{ACCESS_KEY}', SECRET '{SECRET_KEY}', REGION 'us-east-1')")
    with pytest.raises(duckdb.Error, match="Could not parse AWS"):
        con.execute(
            f"ATTACH 'wh1' AS cat (TYPE iceberg, ENDPOINT '{_endpoint(recording_catalog)}', "
            "AUTHORIZATION_TYPE 'sigv4', SECRET s)"
        )


def test_pyiceberg_signs_with_s3tables(recording_catalog):
    from pyiceberg.catalog import load_catalog

    catalog = load_catalog(
        "serac",
        **{
            "type": "rest",
            "uri": _endpoint(recording_catalog),
            "warehouse": "wh1",
            "rest.sigv4-enabled": "true",
            "rest.signing-name": "s3tables",
            "rest.signing-region": "us-east-1",
            "client.access-key-id": ACCESS_KEY,
            "client.secret-access-key": SECRET_KEY,
            "client.region": "us-east-1",
        },
    )
    assert catalog.list_namespaces() == [("ns1",)]
    paths = [path for _, path, _ in recording_catalog.requests]
    assert paths == ["/_iceberg/v1/config?warehouse=wh1", "/_iceberg/v1/namespaces"]
    for _, _, headers in recording_catalog.requests:
        assert CREDENTIAL_SCOPE.match(_header(headers, "authorization") or ""), headers
        assert _header(headers, "x-amz-content-sha256")
