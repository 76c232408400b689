"""Bad input to the Iceberg REST catalog, sent with requests and a botocore SigV4 signer: every
error must be an IcebergErrorResponse {"error": {"message", "type", "code"}} with the status the
spec gives, and a rejected commit must leave the table unchanged."""

from __future__ import annotations

import pytest
import requests
from botocore.auth import SigV4Auth

from catalog_util import (CATALOG_BASE, CatalogApi, assert_iceberg_error, catalog, catalog_api,  # noqa: F401
                          encode_namespace, warehouse)
from pyiceberg.schema import Schema
from pyiceberg.types import LongType, NestedField
from s3util import ACCESS_KEY, SECRET_KEY

SCHEMA = Schema(NestedField(1, "id", LongType(), required=False))


@pytest.fixture
def table_path(catalog, warehouse):
    """A table db.t (via PyIceberg); returns its route path."""
    catalog.create_namespace("db")
    catalog.create_table("db.t", SCHEMA)
    return f"/v1/{warehouse}/namespaces/db/tables/t"


def metadata_location(api, path):
    response = api.call("GET", path)
    assert response.status_code == 200, response.text
    return response.json()["metadata-location"]


def table_uuid(api, path):
    return api.call("GET", path).json()["metadata"]["table-uuid"]


# --- Malformed requests ---------------------------------------------------------------------------------


@pytest.mark.parametrize("body", [b"{not json", b"", b"[1, 2]", b'{"namespace": "not-a-list"}',
                                  b'{"namespace": ["ok"], "properties": {"k": 5}}'])
def test_malformed_create_namespace_body(catalog_api, warehouse, body):
    response = catalog_api.call("POST", f"/v1/{warehouse}/namespaces", body)
    assert_iceberg_error(response, 400, "BadRequestException")
    listed = catalog_api.call("GET", f"/v1/{warehouse}/namespaces").json()
    assert listed["namespaces"] == []


def test_malformed_commit_body(catalog_api, table_path):
    before = metadata_location(catalog_api, table_path)
    assert_iceberg_error(catalog_api.call("POST", table_path, b'{"requirements": [], "updates": ['),
                         400, "BadRequestException")
    assert_iceberg_error(catalog_api.call("POST", table_path, {"requirements": [], "updates": "nope"}),
                         400, "BadRequestException")
    assert metadata_location(catalog_api, table_path) == before


# An action or requirement type serac does not know is an unsupported operation (406), as the
# reference catalog answers: most likely a newer client's, not a malformed request.
def test_unknown_update_action(catalog_api, table_path):
    before = metadata_location(catalog_api, table_path)
    body = {"requirements": [], "updates": [{"action": "set-properties", "updates": {"a": "1"}},
                                            {"action": "frobnicate-table", "level": 11}]}
    assert_iceberg_error(catalog_api.call("POST", table_path, body), 406, "UnsupportedOperationException")
    after = catalog_api.call("GET", table_path).json()
    assert after["metadata-location"] == before
    assert "a" not in after["metadata"].get("properties", {})


def test_unknown_requirement_type(catalog_api, table_path):
    before = metadata_location(catalog_api, table_path)
    body = {"requirements": [{"type": "assert-moon-phase", "phase": "full"}],
            "updates": [{"action": "set-properties", "updates": {"a": "1"}}]}
    assert_iceberg_error(catalog_api.call("POST", table_path, body), 406, "UnsupportedOperationException")
    assert metadata_location(catalog_api, table_path) == before


# --- Failed requirements ----------------------------------------------------------------------------------


def test_failed_requirement_is_409_and_changes_nothing(catalog_api, table_path):
    before = catalog_api.call("GET", table_path).json()
    body = {"requirements": [{"type": "assert-table-uuid", "uuid": "00000000-0000-0000-0000-000000000000"}],
            "updates": [{"action": "set-properties", "updates": {"changed": "yes"}}]}
    assert_iceberg_error(catalog_api.call("POST", table_path, body), 409, "CommitFailedException")
    after = catalog_api.call("GET", table_path).json()
    assert after["metadata-location"] == before["metadata-location"]
    assert after["metadata"] == before["metadata"]

    # The same commit with the right uuid (in upper case: compared case-insensitively) goes through.
    body["requirements"][0]["uuid"] = before["metadata"]["table-uuid"].upper()
    response = catalog_api.call("POST", table_path, body)
    assert response.status_code == 200, response.text
    assert response.json()["metadata"]["properties"]["changed"] == "yes"
    assert metadata_location(catalog_api, table_path) != before["metadata-location"]


def test_stale_ref_requirement_is_409(catalog_api, table_path):
    before = metadata_location(catalog_api, table_path)
    body = {"requirements": [{"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": 123456789}],
            "updates": [{"action": "set-properties", "updates": {"x": "1"}}]}
    assert_iceberg_error(catalog_api.call("POST", table_path, body), 409, "CommitFailedException")
    body = {"requirements": [{"type": "assert-current-schema-id", "current-schema-id": 7}], "updates": []}
    assert_iceberg_error(catalog_api.call("POST", table_path, body), 409, "CommitFailedException")
    assert metadata_location(catalog_api, table_path) == before


# --- Missing things ---------------------------------------------------------------------------------------


def test_missing_namespace_and_table(catalog_api, warehouse, table_path):
    # A table in a namespace that does not exist is NoSuchTable (Java clients rely on it).
    for method in ("GET", "DELETE"):
        response = catalog_api.call(method, f"/v1/{warehouse}/namespaces/nowhere/tables/t")
        assert_iceberg_error(response, 404, "NoSuchTableException")
    assert_iceberg_error(catalog_api.call("GET", f"/v1/{warehouse}/namespaces/db/tables/absent"),
                         404, "NoSuchTableException")
    head = catalog_api.call("HEAD", f"/v1/{warehouse}/namespaces/db/tables/absent")
    assert head.status_code == 404 and head.content == b""
    assert catalog_api.call("HEAD", table_path).status_code == 204

    assert_iceberg_error(catalog_api.call("GET", f"/v1/{warehouse}/namespaces/nowhere"),
                         404, "NoSuchNamespaceException")
    assert_iceberg_error(catalog_api.call("GET", f"/v1/{warehouse}/namespaces/nowhere/tables"),
                         404, "NoSuchNamespaceException")
    create = {"name": "t", "schema": {"type": "struct", "schema-id": 0, "fields": [
        {"id": 1, "name": "id", "type": "long", "required": False}]}}
    assert_iceberg_error(catalog_api.call("POST", f"/v1/{warehouse}/namespaces/nowhere/tables", create),
                         404, "NoSuchNamespaceException")
    assert_iceberg_error(catalog_api.call("GET", "/v1/config", params={"warehouse": "no-such-warehouse-x"}),
                         404, "NoSuchWarehouseException")


def test_conflicts(catalog_api, warehouse, table_path):
    assert_iceberg_error(catalog_api.call("POST", f"/v1/{warehouse}/namespaces", {"namespace": ["db"]}),
                         409, "AlreadyExistsException")
    create = {"name": "t", "schema": {"type": "struct", "schema-id": 0, "fields": [
        {"id": 1, "name": "id", "type": "long", "required": False}]}}
    assert_iceberg_error(catalog_api.call("POST", f"/v1/{warehouse}/namespaces/db/tables", create),
                         409, "AlreadyExistsException")
    assert_iceberg_error(catalog_api.call("DELETE", f"/v1/{warehouse}/namespaces/db"),
                         409, "NamespaceNotEmptyException")


# --- Authentication ---------------------------------------------------------------------------------------


def test_unsigned_request_is_401(catalog_api, warehouse):
    for method, path in (("GET", "/v1/config"), ("GET", f"/v1/{warehouse}/namespaces"),
                         ("POST", f"/v1/{warehouse}/namespaces")):
        body = {"namespace": ["sneaky"]} if method == "POST" else None
        response = catalog_api.call(method, path, body, params={"warehouse": warehouse}, sign=False)
        assert_iceberg_error(response, 401, "NotAuthorizedException")
    assert catalog_api.call("GET", f"/v1/{warehouse}/namespaces").json()["namespaces"] == []


def test_wrong_secret_is_401(server, warehouse):
    wrong = CatalogApi(server.endpoint, secret_key="not-the-secret")
    assert_iceberg_error(wrong.call("GET", f"/v1/{warehouse}/namespaces"), 401, "NotAuthorizedException")
    unknown = CatalogApi(server.endpoint, access_key="nobody-here")
    assert_iceberg_error(unknown.call("GET", f"/v1/{warehouse}/namespaces"), 401, "NotAuthorizedException")


def test_body_tampered_after_signing_is_401(catalog_api, warehouse):
    # PyIceberg-style: no x-amz-content-sha256 header, the body hash only inside the signature.
    import requests
    from botocore.awsrequest import AWSRequest

    url = catalog_api.url(f"/v1/{warehouse}/namespaces")
    signed = AWSRequest(method="POST", url=url, data=b'{"namespace": ["good"]}',
                        headers={"Content-Type": "application/json"})
    SigV4Auth(catalog_api.credentials, "s3tables", "us-east-1").add_auth(signed)
    response = requests.post(url, data=b'{"namespace": ["evil"]}', headers=dict(signed.headers.items()),
                             timeout=30)
    assert_iceberg_error(response, 401, "NotAuthorizedException")
    assert catalog_api.call("GET", f"/v1/{warehouse}/namespaces").json()["namespaces"] == []


def test_multi_level_namespace_path_signs_with_generic_encoding(catalog_api, warehouse):
    # %1F in the path is encoded again in the canonical request by generic signers (%251F).
    base = f"/v1/{warehouse}/namespaces"
    assert catalog_api.call("POST", base, {"namespace": ["a"]}).status_code == 200
    assert catalog_api.call("POST", base, {"namespace": ["a", "b c"]}).status_code == 200
    response = catalog_api.call("GET", f"{base}/{encode_namespace(['a', 'b c'])}")
    assert response.status_code == 200, response.text
    assert response.json()["namespace"] == ["a", "b c"]
    listed = catalog_api.call("GET", base, params={"parent": "a"})
    assert listed.status_code == 200, listed.text
    assert listed.json()["namespaces"] == [["a", "b c"]]


class _JavaStyleSigV4(SigV4Auth):
    """Signs like Iceberg's Java client (RESTSigV4AuthSession, AWS SDK v2 with a SHA-256 checksum):
    the x-amz-content-sha256 header carries the base64 SHA-256 of the body and is signed, while
    the canonical request's payload line is the hex SHA-256 of the body."""

    def canonical_request(self, request):
        import hashlib
        from urllib.parse import urlsplit

        headers_to_sign = self.headers_to_sign(request)
        body = request.body or b""
        return "\n".join([request.method.upper(), self._normalize_url_path(urlsplit(request.url).path),
                          self.canonical_query_string(request), self.canonical_headers(headers_to_sign) + "\n",
                          self.signed_headers(headers_to_sign), hashlib.sha256(body).hexdigest()])


def _send_java_style(catalog_api, method, path, body: bytes, checksum: bytes | None = None):
    import base64
    import hashlib

    import requests
    from botocore.awsrequest import AWSRequest

    url = catalog_api.url(path)
    digest = hashlib.sha256(checksum if checksum is not None else body).digest()
    headers = {"Content-Type": "application/json", "Accept": "application/json",
               "x-amz-content-sha256": base64.b64encode(digest).decode()}
    signed = AWSRequest(method=method, url=url, data=body, headers=headers)
    _JavaStyleSigV4(catalog_api.credentials, "s3tables", "us-east-1").add_auth(signed)
    return requests.request(method, url, data=body, headers=dict(signed.headers.items()), timeout=30)


def test_java_client_base64_content_sha256_is_accepted(catalog_api, warehouse):
    # What the RCK, Spark and Trino send on every request with a body.
    response = _send_java_style(catalog_api, "POST", f"/v1/{warehouse}/namespaces", b'{"namespace":["java"]}')
    assert response.status_code == 200, response.text
    assert catalog_api.call("GET", f"/v1/{warehouse}/namespaces").json()["namespaces"] == [["java"]]


def test_java_client_base64_content_sha256_must_match_body(catalog_api, warehouse):
    response = _send_java_style(catalog_api, "POST", f"/v1/{warehouse}/namespaces", b'{"namespace":["evil"]}',
                                checksum=b'{"namespace":["good"]}')
    assert response.status_code in (400, 401), response.text
    assert response.json()["error"]["type"] in ("BadRequestException", "NotAuthorizedException")
    assert catalog_api.call("GET", f"/v1/{warehouse}/namespaces").json()["namespaces"] == []


# --- Hostile documents ----------------------------------------------------------------------------------


@pytest.mark.parametrize("levels", [1_001, 100_000])
def test_deeply_nested_bodies_are_400_on_every_route(catalog_api, warehouse, table_path, levels):
    deep = "[" * levels + "]" * levels
    bodies = {
        table_path: '{"requirements":[],"updates":' + deep + "}",
        f"/v1/{warehouse}/namespaces": '{"namespace":["x"],"properties":' + deep + "}",
        f"/v1/{warehouse}/namespaces/db/tables": '{"name":"deep","schema":' + deep + "}",
        f"/v1/{warehouse}/transactions/commit": '{"table-changes":' + deep + "}",
        f"/v1/{warehouse}/namespaces/db/views": '{"name":"v","view-version":' + deep + "}",
    }
    before = metadata_location(catalog_api, table_path)
    for path, body in bodies.items():
        response = catalog_api.call("POST", path, body)
        assert_iceberg_error(response, 400, "BadRequestException")
        assert "kJsonNestingDepthMax" in response.json()["error"]["message"], path
    assert metadata_location(catalog_api, table_path) == before


def test_deeply_nested_metadata_file_is_refused_on_register(catalog_api, warehouse, table_path, s3):
    # A metadata file is as much input as a request body: one uploaded through S3 and then
    # registered must be refused like a deep request, not crash the server.
    key = "db/deep/metadata/00000-deep.metadata.json"
    s3.put_object(Bucket=warehouse, Key=key, Body=b"{\"format-version\":" + b"[" * 200_000 + b"]" * 200_000 + b"}")
    response = catalog_api.call("POST", f"/v1/{warehouse}/namespaces/db/register",
                                {"name": "deep", "metadata-location": f"s3://{warehouse}/{key}"})
    assert 400 <= response.status_code < 500, response.text
    assert metadata_location(catalog_api, table_path)  # the server still answers


@pytest.mark.parametrize("requirement_type", [None, 5, {"a": 1}, ["assert-create"], True])
def test_requirement_type_of_the_wrong_kind_is_400(catalog_api, table_path, requirement_type):
    before = metadata_location(catalog_api, table_path)
    response = catalog_api.call("POST", table_path, {"requirements": [{"type": requirement_type}], "updates": []})
    # A field of the wrong type inside a well-formed body: IllegalArgumentException, as Java's parser
    # (and the reference catalog) reports it; Java clients rethrow that type with the message.
    assert_iceberg_error(response, 400, "IllegalArgumentException")
    assert metadata_location(catalog_api, table_path) == before


def test_oversized_properties_and_commits_name_their_limit(catalog_api, table_path):
    before = metadata_location(catalog_api, table_path)
    big_value = {"requirements": [], "updates": [{"action": "set-properties", "updates": {"k": "v" * (600 * 1024)}}]}
    response = catalog_api.call("POST", table_path, big_value)
    assert response.status_code in (400, 413), response.text
    assert "kIcebergPropertyValueBytesMax" in response.json()["error"]["message"]
    many = {"requirements": [], "updates": [{"action": "set-properties", "updates": {"k": str(i)}} for i in range(1001)]}
    response = catalog_api.call("POST", table_path, many)
    assert response.status_code in (400, 413), response.text
    assert "kCatalogUpdatesPerCommitMax" in response.json()["error"]["message"]
    assert metadata_location(catalog_api, table_path) == before


# --- What the REST specification's request schemas forbid is refused before anything is stored -----------


def test_bodies_the_specification_forbids_are_400_and_change_nothing(catalog_api, warehouse, table_path):
    """Each was accepted once and then returned by every load, which no longer matched the
    specification's response schema (an independent schemathesis run found them)."""
    api = catalog_api
    before = api.call("GET", table_path).json()
    snapshot = {"snapshot-id": 7, "timestamp-ms": 1_700_000_000_000, "sequence-number": 1,
                "manifest-list": "s3://x/m.avro", "summary": {"operation": "append"}}
    bad_updates = [
        {"action": "add-encryption-key",
         "encryption-key": {"key-id": "k", "encrypted-key-metadata": "AAEC", "encrypted-by-id": None}},
        {"action": "add-snapshot", "snapshot": {**snapshot, "manifest-list": ""}},
        {"action": "add-snapshot", "snapshot": {**snapshot, "parent-snapshot-id": 7}},
        {"action": "add-snapshot", "snapshot": {**snapshot, "summary": {"added-files": "1"}}},
    ]
    def refused(response):  # Java's parsers name these IllegalArgumentException; both are 400
        assert response.status_code == 400, response.text
        assert response.json()["error"]["type"] in ("BadRequestException", "IllegalArgumentException")

    for update in bad_updates:
        refused(api.call("POST", table_path, {"requirements": [], "updates": [update]}))
    assert api.call("GET", table_path).json()["metadata-location"] == before["metadata-location"]

    views = f"/v1/{warehouse}/namespaces/db/views"
    version = {"version-id": 1, "timestamp-ms": 1_700_000_000_000, "schema-id": 0, "summary": {},
               "representations": [{"type": "sql", "sql": "select 1", "dialect": "spark"}],
               "default-namespace": ["db"]}
    view = {"name": "v", "schema": {"type": "struct", "schema-id": 0, "fields": [
        {"id": 1, "name": "id", "required": False, "type": "long"}]}, "view-version": version}
    for bad in ({**version, "default-catalog": None},
                {**version, "representations": [{"type": "", "sql": None, "dialect": ""}]},
                {**version, "representations": [{"type": "other"}]}):
        refused(api.call("POST", views, {**view, "view-version": bad}))
    assert api.call("POST", views, view).status_code == 200
    replace = {"requirements": [], "updates": [
        {"action": "add-view-version", "view-version": {**version, "version-id": 2, "default-catalog": None}},
        {"action": "set-current-view-version", "view-version-id": -1}]}
    refused(api.call("POST", f"{views}/v", replace))
    assert api.call("GET", f"{views}/v").json()["metadata"]["current-version-id"] == 1

    # reportMetrics needs its report's type (and what every report has).
    metrics = {"report-type": "scan-report", "table-name": "db.t", "snapshot-id": 1, "filter": True,
               "schema-id": 0, "projected-field-ids": [1], "projected-field-names": ["id"], "metrics": {}}
    assert api.call("POST", f"{table_path}/metrics", metrics).status_code == 204
    del metrics["report-type"]
    assert_iceberg_error(api.call("POST", f"{table_path}/metrics", metrics), 400, "BadRequestException")

    # An empty pageSize is no page size.
    listed = api.call("GET", f"/v1/{warehouse}/namespaces", params={"pageSize": ""})
    assert_iceberg_error(listed, 400, "BadRequestException")

    # createNamespace under a missing parent: the specification documents 400 and 409, not 404.
    orphan = api.call("POST", f"/v1/{warehouse}/namespaces", {"namespace": ["nowhere", "child"]})
    assert_iceberg_error(orphan, 400, "BadRequestException")
    assert "parent namespace does not exist: nowhere" in orphan.json()["error"]["message"]

    # A method a route does not have: 405 with the methods it has.
    refused = api.call("PUT", table_path, {})
    assert_iceberg_error(refused, 405, "BadRequestException")
    assert set(refused.headers["Allow"].split(", ")) == {"GET", "HEAD", "POST", "DELETE"}


def test_a_token_exchange_needs_its_subject_token(server, catalog_api):
    url = server.endpoint + CATALOG_BASE + "/v1/oauth/tokens"
    issued = requests.post(url, data={"grant_type": "client_credentials", "client_id": ACCESS_KEY,
                                      "client_secret": SECRET_KEY}, timeout=30).json()
    bearer = {"Authorization": f"Bearer {issued['access_token']}"}
    exchange = "urn:ietf:params:oauth:grant-type:token-exchange"
    alone = requests.post(url, data={"grant_type": exchange}, headers=bearer, timeout=30)
    assert alone.status_code == 400 and alone.json()["error"] == "invalid_request", alone.text
    named = requests.post(url, data={"grant_type": exchange, "subject_token": issued["access_token"],
                                     "subject_token_type": "urn:ietf:params:oauth:token-type:access_token"},
                          headers=bearer, timeout=30)
    assert named.status_code == 200, named.text
