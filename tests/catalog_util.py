"""Helpers for the Iceberg REST catalog system tests: a SigV4-signed client for raw catalog calls,
warehouse creation, PyIceberg catalog properties for serac, assertions on Iceberg error bodies,
and fixtures (a fresh warehouse per test, a PyIceberg catalog bound to it)."""

from __future__ import annotations

import json
import urllib.parse

import pytest
import requests
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

from s3util import ACCESS_KEY, REGION, SECRET_KEY, unique_bucket_name

CATALOG_BASE = "/_iceberg"
SIGNING_NAME = "s3tables"
NAMESPACE_SEPARATOR = "\x1f"


def encode_namespace(levels) -> str:
    """Path form of a namespace: each level URL-encoded, joined by %1F."""
    if isinstance(levels, str):
        levels = (levels,)
    return "%1F".join(urllib.parse.quote(level, safe="") for level in levels)


class CatalogApi:
    """Raw catalog requests against one serac, signed the way PyIceberg signs them (botocore
    SigV4Auth, generic service encoding), unless sign=False."""

    def __init__(self, endpoint: str, access_key: str = ACCESS_KEY, secret_key: str = SECRET_KEY,
                 signing_name: str = SIGNING_NAME, region: str = REGION):
        self.endpoint = endpoint
        self.credentials = Credentials(access_key, secret_key)
        self.signing_name = signing_name
        self.region = region

    def url(self, path: str) -> str:
        """`path` is already percent-encoded and relative to /_iceberg (e.g. "/v1/config")."""
        return self.endpoint + CATALOG_BASE + path

    def call(self, method: str, path: str, body=None, params=None, headers=None, sign: bool = True,
             timeout: float = 60) -> requests.Response:
        """`body` may be a dict/list (sent as JSON), bytes/str (sent verbatim) or None."""
        if body is None:
            data = b""
        elif isinstance(body, (bytes, str)):
            data = body.encode() if isinstance(body, str) else body
        else:
            data = json.dumps(body).encode()
        all_headers = {"Content-Type": "application/json"} if data else {}
        all_headers.update(headers or {})
        url = self.url(path)
        if params:
            url += "?" + urllib.parse.urlencode(params)
        if sign:
            aws_request = AWSRequest(method=method, url=url, data=data, headers=dict(all_headers))
            SigV4Auth(self.credentials, self.signing_name, self.region).add_auth(aws_request)
            all_headers = dict(aws_request.headers.items())
        return requests.request(method, url, data=data, headers=all_headers, timeout=timeout)

    # --- Convenience wrappers that fail loudly -------------------------------------------------

    def ok(self, method: str, path: str, body=None, params=None, expect=(200, 204)) -> requests.Response:
        response = self.call(method, path, body=body, params=params)
        assert response.status_code in expect, (
            f"{method} {path} -> {response.status_code}: {response.text[:1000]}")
        return response

    def create_warehouse(self, name: str) -> None:
        self.ok("POST", "/v1/warehouses", {"name": name}, expect=(200,))

    def config(self, warehouse: str) -> dict:
        return self.ok("GET", "/v1/config", params={"warehouse": warehouse}, expect=(200,)).json()

    def load_table(self, warehouse: str, namespace, table: str) -> requests.Response:
        return self.call("GET", f"/v1/{warehouse}/namespaces/{encode_namespace(namespace)}/tables/{table}")


def assert_iceberg_error(response: requests.Response, status: int, error_type: str) -> dict:
    """Checks the status and the IcebergErrorResponse shape {"error": {"message", "type", "code"}}."""
    assert response.status_code == status, (
        f"expected {status} {error_type}, got {response.status_code}: {response.text[:1000]}")
    assert response.headers.get("Content-Type", "").startswith("application/json"), response.headers
    body = response.json()
    assert set(body) == {"error"}, body
    error = body["error"]
    assert isinstance(error.get("message"), str) and error["message"], body
    assert error.get("type") == error_type, body
    assert error.get("code") == status, body
    return error


def pyiceberg_properties(endpoint: str, warehouse: str, **extra) -> dict:
    """Catalog properties for PyIceberg 0.12 against serac: SigV4 for the catalog, path-style S3
    with the root keys for the data."""
    properties = {
        "type": "rest",
        "uri": endpoint + CATALOG_BASE,
        "warehouse": warehouse,
        "rest.sigv4-enabled": "true",
        "rest.signing-name": SIGNING_NAME,
        "rest.signing-region": REGION,
        "client.access-key-id": ACCESS_KEY,
        "client.secret-access-key": SECRET_KEY,
        "client.region": REGION,
        "s3.endpoint": endpoint,
        "s3.access-key-id": ACCESS_KEY,
        "s3.secret-access-key": SECRET_KEY,
        "s3.region": REGION,
        "s3.force-virtual-addressing": "false",
        "s3.path-style-access": "true",
    }
    properties.update(extra)
    return properties


def load_pyiceberg_catalog(endpoint: str, warehouse: str, name: str = "serac", **extra):
    from pyiceberg.catalog import load_catalog

    return load_catalog(name, **pyiceberg_properties(endpoint, warehouse, **extra))


def list_keys(s3, bucket: str, prefix: str) -> list[str]:
    keys = []
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
        keys += [item["Key"] for item in page.get("Contents", [])]
    return keys


def split_s3_location(location: str) -> tuple[str, str]:
    parsed = urllib.parse.urlsplit(location)
    assert parsed.scheme in ("s3", "s3a"), location
    return parsed.netloc, parsed.path.lstrip("/")


# --- Fixtures (import them into the test module) --------------------------------------------------


@pytest.fixture(scope="session")
def catalog_api(server) -> CatalogApi:
    return CatalogApi(server.endpoint)


@pytest.fixture
def warehouse(catalog_api, request) -> str:
    """A fresh warehouse (and bucket) for one test."""
    name = unique_bucket_name("wh-" + request.node.name)
    catalog_api.create_warehouse(name)
    return name


@pytest.fixture
def catalog(server, warehouse):
    """A PyIceberg RestCatalog bound to the test's warehouse."""
    return load_pyiceberg_catalog(server.endpoint, warehouse)


def pyiceberg_user_properties(endpoint: str, warehouse: str, access_key: str, secret_key: str,
                              s3_keys: bool = True, **extra) -> dict:
    """PyIceberg with SigV4 as one IAM user; without `s3_keys` the data is read only with the
    credentials the catalog vends."""
    properties = pyiceberg_properties(endpoint, warehouse, **{
        "client.access-key-id": access_key, "client.secret-access-key": secret_key,
        "s3.access-key-id": access_key, "s3.secret-access-key": secret_key})
    if not s3_keys:
        for key in ("s3.access-key-id", "s3.secret-access-key", "s3.endpoint"):
            properties.pop(key)
    properties.update(extra)
    return properties


def pyiceberg_oauth_properties(endpoint: str, warehouse: str, access_key: str, secret_key: str, **extra) -> dict:
    """PyIceberg with OAuth2 client credentials (the key pair) and no SigV4 and no S3 keys: the
    data is read with vended credentials."""
    properties = {"type": "rest", "uri": endpoint + CATALOG_BASE, "warehouse": warehouse,
                  "credential": f"{access_key}:{secret_key}",
                  "oauth2-server-uri": endpoint + CATALOG_BASE + "/v1/oauth/tokens"}
    properties.update(extra)
    return properties
