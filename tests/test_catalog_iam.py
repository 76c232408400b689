"""Identity and access on the Iceberg REST catalog: IAM users with policies (read-only, one
namespace), OAuth2 client credentials and bearer tokens (PyIceberg, DuckDB, raw), and vended
credentials that are limited to one table's files and expire."""

from __future__ import annotations

import json
import sys
import time
import uuid
from pathlib import Path

import boto3
import pyarrow as pa
import pytest
import requests
from botocore.config import Config
from botocore.exceptions import ClientError
from pyiceberg.catalog import load_catalog
from pyiceberg.exceptions import ForbiddenError
from pyiceberg.schema import Schema
from pyiceberg.types import LongType, NestedField, StringType

from catalog_util import (CATALOG_BASE, CatalogApi, assert_iceberg_error, catalog, catalog_api,  # noqa: F401
                          encode_namespace, pyiceberg_oauth_properties, pyiceberg_user_properties,
                          split_s3_location, warehouse)
from s3util import ACCESS_KEY, REGION, SECRET_KEY, SeracAdmin, SeracServer

sys.path.insert(0, str(Path(__file__).resolve().parent / "catalog_tools"))
import duckdb_offline  # noqa: E402

SCHEMA = Schema(NestedField(1, "id", LongType(), required=False), NestedField(2, "name", StringType(), required=False))
ARROW_SCHEMA = pa.schema([("id", pa.int64()), ("name", pa.string())])
ROWS = [{"id": 1, "name": "one"}, {"id": 2, "name": "two"}, {"id": 3, "name": None}]
VENDED = {"X-Iceberg-Access-Delegation": "vended-credentials"}


def rows_of(table) -> list[dict]:
    return sorted(table.scan().to_arrow().to_pylist(), key=lambda row: row["id"])


def make_table(catalog, identifier: str):
    namespace = identifier.rsplit(".", 1)[0]
    if (namespace,) not in catalog.list_namespaces():
        catalog.create_namespace(namespace)
    table = catalog.create_table(identifier, SCHEMA)
    table.append(pa.Table.from_pylist(ROWS, schema=ARROW_SCHEMA))
    return table


def new_user(admin: SeracAdmin, hint: str, policies=(), document=None) -> tuple[str, str]:
    """A fresh user (unique name) with the given built-in policies, or one custom policy document."""
    name = f"{hint}-{uuid.uuid4().hex[:8]}"
    if document is not None:
        admin.put_policy(name, document)
        policies = (name,)
    admin.create_user(name, policies)
    return admin.create_key(name)


def namespace_policy(warehouse: str, namespace: str) -> dict:
    """Everything in one namespace and its files, plus what a client needs to start."""
    return {"Version": "2012-10-17", "Statement": [
        {"Effect": "Allow", "Action": ["s3tables:GetConfig", "s3tables:GetWarehouse"],
         "Resource": f"arn:aws:s3tables:::bucket/{warehouse}"},
        {"Effect": "Allow", "Action": "s3tables:*",
         "Resource": [f"arn:aws:s3tables:::bucket/{warehouse}", f"arn:aws:s3tables:::bucket/{warehouse}/*"],
         "Condition": {"StringEquals": {"s3tables:namespace": namespace}}},
        {"Effect": "Allow", "Action": "s3:GetObject", "Resource": f"arn:aws:s3:::{warehouse}/{namespace}/*"}]}


def token_for(endpoint: str, access_key: str, secret_key: str) -> requests.Response:
    return requests.post(endpoint + CATALOG_BASE + "/v1/oauth/tokens", timeout=30, data={
        "grant_type": "client_credentials", "client_id": access_key, "client_secret": secret_key,
        "scope": "catalog"})


def bearer_get(endpoint: str, path: str, token: str, headers=None, params=None) -> requests.Response:
    return requests.get(endpoint + CATALOG_BASE + path, params=params, timeout=30,
                        headers={"Authorization": f"Bearer {token}", **(headers or {})})


def s3_with(endpoint: str, config: dict):
    """A boto3 client using only the vended keys of a table's config."""
    return boto3.client("s3", endpoint_url=endpoint, region_name=REGION,
                        aws_access_key_id=config["s3.access-key-id"],
                        aws_secret_access_key=config["s3.secret-access-key"],
                        aws_session_token=config["s3.session-token"],
                        config=Config(s3={"addressing_style": "path"}, retries={"max_attempts": 1}))


def assert_denied(call) -> None:
    with pytest.raises(ClientError) as caught:
        call()
    assert caught.value.response["ResponseMetadata"]["HTTPStatusCode"] == 403, caught.value.response
    assert caught.value.response["Error"]["Code"] == "AccessDenied", caught.value.response


@pytest.fixture(scope="module")
def admin(server) -> SeracAdmin:
    return SeracAdmin(server.endpoint)


def test_readonly_user_scans_but_cannot_append(server, warehouse, catalog, admin):
    table = make_table(catalog, "ro.items")
    snapshots = len(table.snapshots())
    key, secret = new_user(admin, "reader", ["readonly"])
    reader = load_catalog("reader", **pyiceberg_user_properties(server.endpoint, warehouse, key, secret))

    assert rows_of(reader.load_table("ro.items")) == ROWS
    with pytest.raises(Exception):
        # With the vended read-only keys the data file write fails; either way nothing lands.
        reader.load_table("ro.items").append(pa.Table.from_pylist([{"id": 9, "name": "x"}], schema=ARROW_SCHEMA))
    with pytest.raises(ForbiddenError):
        reader.create_namespace("not_allowed")
    with pytest.raises(ForbiddenError):
        reader.drop_table("ro.items")

    # The catalog itself refuses the commit, before anything changes.
    api = CatalogApi(server.endpoint, key, secret)
    path = f"/v1/{warehouse}/namespaces/ro/tables/items"
    current = api.call("GET", path).json()
    commit = api.call("POST", path, {"requirements": [], "updates": [
        {"action": "set-properties", "updates": {"owner": "reader"}}]})
    error = assert_iceberg_error(commit, 403, "ForbiddenException")
    assert "s3tables:UpdateTable" in error["message"]
    after = catalog.load_table("ro.items")
    assert len(after.snapshots()) == snapshots
    assert after.metadata_location == current["metadata-location"]
    assert "owner" not in after.properties


def test_namespace_limited_user(server, warehouse, catalog, admin):
    make_table(catalog, "sales.orders")
    make_table(catalog, "hr.salaries")
    key, secret = new_user(admin, "sales", document=namespace_policy(warehouse, "sales"))
    # No S3 keys on the client: data comes through the catalog's vended credentials.
    sales = load_catalog("sales", **pyiceberg_user_properties(server.endpoint, warehouse, key, secret, s3_keys=False))

    assert sales.list_namespaces() == [("sales",)]
    assert sales.list_tables("sales") == [("sales", "orders")]
    assert rows_of(sales.load_table("sales.orders")) == ROWS
    for denied in (lambda: sales.list_tables("hr"), lambda: sales.load_table("hr.salaries"),
                   lambda: sales.load_table("hr.missing"), lambda: sales.load_namespace_properties("hr"),
                   lambda: sales.create_table("hr.mine", SCHEMA),
                   lambda: sales.rename_table("sales.orders", "hr.orders")):
        with pytest.raises(ForbiddenError):
            denied()
    assert not sales.table_exists("sales.missing")
    assert catalog.table_exists("sales.orders") and not catalog.table_exists("hr.orders")

    api = CatalogApi(server.endpoint, key, secret)
    response = api.call("GET", f"/v1/{warehouse}/namespaces/hr/tables/salaries")
    assert_iceberg_error(response, 403, "ForbiddenException")


def test_pyiceberg_oauth2_reads_with_vended_credentials(server, warehouse, catalog, admin):
    make_table(catalog, "oauth.items")
    key, secret = new_user(admin, "oauth-reader", ["readonly"])
    reader = load_catalog("oauth", **pyiceberg_oauth_properties(server.endpoint, warehouse, key, secret))
    assert reader.list_namespaces() == [("oauth",)]
    assert rows_of(reader.load_table("oauth.items")) == ROWS

    wrong = token_for(server.endpoint, key, "not-the-secret")
    assert wrong.status_code == 401
    assert wrong.json()["error"] == "invalid_client"
    assert "not-the-secret" not in wrong.text


def test_duckdb_oauth2_reads_with_vended_credentials(server, warehouse, catalog, admin):
    make_table(catalog, "duck.items")
    key, secret = new_user(admin, "duck-reader", ["readonly"])
    con = duckdb_offline.connect()
    try:
        # No S3 secret at all: the catalog vends the keys for the table's files.
        con.execute(f"CREATE SECRET serac_oauth (TYPE iceberg, CLIENT_ID '{key}', CLIENT_SECRET '{secret}', "
                    f"OAUTH2_SERVER_URI '{server.endpoint}{CATALOG_BASE}/v1/oauth/tokens')")
        con.execute(f"ATTACH '{warehouse}' AS cat (TYPE iceberg, ENDPOINT '{server.endpoint}{CATALOG_BASE}', "
                    f"AUTHORIZATION_TYPE 'oauth2', SECRET serac_oauth)")
        got = con.execute("SELECT id, name FROM cat.duck.items ORDER BY id").fetchall()
        assert got == [(row["id"], row["name"]) for row in ROWS]
    finally:
        con.close()


def test_vended_credentials_cover_only_their_table(server, warehouse, catalog, admin):
    mine = make_table(catalog, "files.mine")
    other = make_table(catalog, "files.other")
    key, secret = new_user(admin, "vended-reader", ["readonly"])
    api = CatalogApi(server.endpoint, key, secret)
    loaded = api.call("GET", f"/v1/{warehouse}/namespaces/files/tables/mine", headers=VENDED)
    assert loaded.status_code == 200, loaded.text
    body = loaded.json()
    config = body["config"]
    assert config["s3.access-key-id"] not in (key, ACCESS_KEY)
    assert config["s3.endpoint"] == server.endpoint + "/"
    assert body["storage-credentials"][0]["prefix"] == mine.metadata.location
    assert int(config["s3.session-token-expires-at-ms"]) > time.time() * 1000

    vended = s3_with(server.endpoint, config)
    bucket, mine_key = split_s3_location(mine.metadata_location)
    _, other_key = split_s3_location(other.metadata_location)
    assert json.loads(vended.get_object(Bucket=bucket, Key=mine_key)["Body"].read())["table-uuid"]
    assert_denied(lambda: vended.get_object(Bucket=bucket, Key=other_key))
    # A read-only caller gets read-only keys.
    table_prefix = split_s3_location(mine.metadata.location)[1]
    assert_denied(lambda: vended.put_object(Bucket=bucket, Key=table_prefix + "/data/evil.parquet", Body=b"x"))

    # Root's keys for its own table write there, and only there.
    root_config = CatalogApi(server.endpoint).call(
        "GET", f"/v1/{warehouse}/namespaces/files/tables/mine/credentials").json()["storage-credentials"][0]["config"]
    writer = s3_with(server.endpoint, root_config)
    writer.put_object(Bucket=bucket, Key=table_prefix + "/data/extra.bin", Body=b"ok")
    other_prefix = split_s3_location(other.metadata.location)[1]
    assert_denied(lambda: writer.put_object(Bucket=bucket, Key=other_prefix + "/data/evil.bin", Body=b"x"))

    # Keys die with the key that obtained them (S3 answers as for an invalid token).
    admin.set_key_enabled(key, False)
    with pytest.raises(ClientError) as caught:
        vended.get_object(Bucket=bucket, Key=mine_key)
    assert caught.value.response["Error"]["Code"] in ("InvalidToken", "AccessDenied"), caught.value.response


@pytest.fixture(scope="module")
def short_token_server(tmp_path_factory):
    serac = SeracServer(tmp_path_factory.mktemp("short-ttl"), extra_args=["--token-ttl", "2"],
                        name="serac-short-ttl")
    serac.start()
    yield serac
    serac.stop()


def test_bearer_tokens_expire_and_are_refused_with_401(short_token_server):
    endpoint = short_token_server.endpoint
    CatalogApi(endpoint).create_warehouse("ttl-lake")
    issued = token_for(endpoint, ACCESS_KEY, SECRET_KEY)
    assert issued.status_code == 200, issued.text
    assert issued.headers["Cache-Control"] == "no-store"
    assert issued.json()["expires_in"] == 2
    token = issued.json()["access_token"]
    params = {"warehouse": "ttl-lake"}
    assert bearer_get(endpoint, "/v1/config", token, params=params).status_code == 200
    time.sleep(3)
    expired = bearer_get(endpoint, "/v1/config", token, params=params)
    assert_iceberg_error(expired, 401, "NotAuthorizedException")
    fresh = token_for(endpoint, ACCESS_KEY, SECRET_KEY).json()["access_token"]
    assert bearer_get(endpoint, "/v1/config", fresh, params=params).status_code == 200
    forged = fresh[:-2] + ("AA" if not fresh.endswith("AA") else "BB")
    assert_iceberg_error(bearer_get(endpoint, "/v1/config", forged, params=params), 401, "NotAuthorizedException")


# --- warehouse listing and the lifetime of vended credentials -----------------------------------------


def test_warehouse_list_shows_only_what_the_caller_may_access(server, warehouse, catalog_api, admin):
    other = f"wh-hidden-{uuid.uuid4().hex[:8]}"
    catalog_api.create_warehouse(other)
    everything = catalog_api.ok("GET", "/v1/warehouses").json()["warehouses"]
    assert warehouse in everything and other in everything

    key, secret = new_user(admin, "wh-sales", document=namespace_policy(warehouse, "sales"))
    listed = CatalogApi(server.endpoint, key, secret).call("GET", "/v1/warehouses")
    assert listed.status_code == 200, listed.text
    assert listed.json()["warehouses"] == [warehouse]

    # A user with no catalog rights gets an empty list: it learns no warehouse names.
    nobody_key, nobody_secret = new_user(admin, "wh-nobody", ["writeonly"])
    empty = CatalogApi(server.endpoint, nobody_key, nobody_secret).call("GET", "/v1/warehouses")
    assert empty.status_code == 200, empty.text
    assert empty.json()["warehouses"] == []

    # An explicit Deny of s3tables:ListWarehouses refuses the listing outright.
    denied_key, denied_secret = new_user(admin, "wh-denied", document={"Version": "2012-10-17", "Statement": [
        {"Effect": "Allow", "Action": "s3tables:*", "Resource": "*"},
        {"Effect": "Deny", "Action": "s3tables:ListWarehouses", "Resource": "*"}]})
    refused = CatalogApi(server.endpoint, denied_key, denied_secret).call("GET", "/v1/warehouses")
    assert_iceberg_error(refused, 403, "ForbiddenException")


VENDED_TTL_SECONDS = 3  # the minimum is 1; 3 leaves the reads below at least 2 s before expiry


@pytest.fixture(scope="module")
def short_vended_server(tmp_path_factory):
    serac = SeracServer(tmp_path_factory.mktemp("short-vended"),
                        extra_args=["--vended-credential-ttl", str(VENDED_TTL_SECONDS)], name="serac-short-vended")
    serac.start()
    yield serac
    serac.stop()


def test_vended_credentials_expire_after_the_configured_ttl(short_vended_server):
    endpoint = short_vended_server.endpoint
    root = CatalogApi(endpoint)
    root.create_warehouse("vend-ttl")
    # Created over the raw API: an engine that asked for vended credentials (PyIceberg does) would
    # itself be writing with keys that live only a few seconds.
    root.ok("POST", "/v1/vend-ttl/namespaces", {"namespace": ["ttl"]}, expect=(200,))
    schema = {"type": "struct", "schema-id": 0, "fields": [{"id": 1, "name": "id", "type": "long", "required": False}]}
    mine, other = (root.ok("POST", "/v1/vend-ttl/namespaces/ttl/tables", {"name": name, "schema": schema},
                           expect=(200,)).json()["metadata-location"] for name in ("mine", "other"))
    key, secret = SeracAdmin(endpoint).create_user_with_key(f"ttl-reader-{uuid.uuid4().hex[:8]}", ["readonly"])
    reader = CatalogApi(endpoint, key, secret)

    loaded = reader.call("GET", "/v1/vend-ttl/namespaces/ttl/tables/mine", headers=VENDED)
    assert loaded.status_code == 200, loaded.text
    config = loaded.json()["storage-credentials"][0]["config"]
    # Expiry is the issue time in whole seconds plus the TTL.
    left_ms = int(config["s3.session-token-expires-at-ms"]) - time.time() * 1000
    assert 0 < left_ms <= VENDED_TTL_SECONDS * 1000 + 500, left_ms

    vended = s3_with(endpoint, config)
    bucket, mine_key = split_s3_location(mine)
    _, other_key = split_s3_location(other)
    assert json.loads(vended.get_object(Bucket=bucket, Key=mine_key)["Body"].read())["table-uuid"]
    assert_denied(lambda: vended.get_object(Bucket=bucket, Key=other_key))

    time.sleep(max(0.0, int(config["s3.session-token-expires-at-ms"]) / 1000 - time.time()) + 1)
    # AWS answers a request signed with an expired session token with 400 ExpiredToken.
    with pytest.raises(ClientError) as caught:
        vended.get_object(Bucket=bucket, Key=mine_key)
    assert caught.value.response["ResponseMetadata"]["HTTPStatusCode"] == 400, caught.value.response
    assert caught.value.response["Error"]["Code"] == "ExpiredToken", caught.value.response

    # The catalog hands out fresh ones, with a new expiry, for as long as the caller may read the table.
    refreshed = reader.call("GET", "/v1/vend-ttl/namespaces/ttl/tables/mine/credentials")
    assert refreshed.status_code == 200, refreshed.text
    fresh = refreshed.json()["storage-credentials"][0]["config"]
    assert int(fresh["s3.session-token-expires-at-ms"]) > int(config["s3.session-token-expires-at-ms"])
    assert json.loads(s3_with(endpoint, fresh).get_object(Bucket=bucket, Key=mine_key)["Body"].read())["table-uuid"]
