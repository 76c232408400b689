"""The REST specification's Idempotency-Key: a client whose first answer is lost (the connection
drops after the request was sent) retries with the same key and gets the first answer, and the
change is applied once; /v1/config advertises how long keys are kept."""

from __future__ import annotations

import json
import socket
import time
import urllib.parse
import uuid

from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest

from catalog_util import CatalogApi, assert_iceberg_error, catalog_api, warehouse  # noqa: F401
from s3util import ACCESS_KEY, SECRET_KEY, SeracAdmin

SCHEMA = {"type": "struct", "schema-id": 0,
          "fields": [{"id": 1, "name": "id", "required": False, "type": "long"}]}


def send_and_lose_the_answer(api: CatalogApi, method: str, path: str, body: bytes, key: str) -> None:
    """Sends a signed request on a raw connection and closes it without reading the answer, as a
    client whose network fails after sending does."""
    url = api.url(path)
    headers = {"Idempotency-Key": key}
    if body:
        headers["Content-Type"] = "application/json"
    aws_request = AWSRequest(method=method, url=url, data=body, headers=headers)
    SigV4Auth(api.credentials, api.signing_name, api.region).add_auth(aws_request)
    parsed = urllib.parse.urlsplit(url)
    head = f"{method} {parsed.path} HTTP/1.1\r\nHost: {parsed.netloc}\r\nContent-Length: {len(body)}\r\n"
    for name, value in aws_request.headers.items():
        if name.lower() not in ("host", "content-length"):
            head += f"{name}: {value}\r\n"
    with socket.create_connection((parsed.hostname, parsed.port)) as connection:
        connection.sendall(head.encode() + b"\r\n" + body)


def with_key(api: CatalogApi, method: str, path: str, body, key: str):
    return api.call(method, path, body=body, headers={"Idempotency-Key": key})


def wait_for(condition, timeout_s: float = 10.0):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.05)
    raise AssertionError("the first request's change never appeared")


def test_config_advertises_the_key_lifetime(catalog_api, warehouse):
    config = catalog_api.config(warehouse)
    assert config["idempotency-key-lifetime"] == "PT30M"


def test_a_retry_after_a_lost_answer_gets_the_first_answer_and_applies_once(catalog_api, warehouse):
    api = catalog_api
    api.ok("POST", f"/v1/{warehouse}/namespaces", {"namespace": ["db"]})
    tables = f"/v1/{warehouse}/namespaces/db/tables"

    # createTable: the retry is the first 200, not "already exists".
    key = str(uuid.uuid4())
    create = {"name": "t", "schema": SCHEMA}
    send_and_lose_the_answer(api, "POST", tables, json.dumps(create).encode(), key)
    wait_for(lambda: api.call("GET", f"{tables}/t").status_code == 200)
    retried = with_key(api, "POST", tables, create, key)
    assert retried.status_code == 200, retried.text
    assert retried.headers.get("Idempotent-Replayed") == "true"
    first_location = retried.json()["metadata-location"]
    assert api.call("GET", f"{tables}/t").json()["metadata-location"] == first_location
    without_key = api.call("POST", tables, body=create)
    assert_iceberg_error(without_key, 409, "AlreadyExistsException")

    # updateTable without requirements (a blind property change, a new schema): applied once.
    key = str(uuid.uuid4())
    commit = {"requirements": [], "updates": [
        {"action": "add-schema", "schema": {"type": "struct", "schema-id": 1, "fields": [
            {"id": 1, "name": "id", "required": False, "type": "long"},
            {"id": 2, "name": "note", "required": False, "type": "string"}]}, "last-column-id": 2},
        {"action": "set-current-schema", "schema-id": -1}]}
    send_and_lose_the_answer(api, "POST", f"{tables}/t", json.dumps(commit).encode(), key)
    wait_for(lambda: api.call("GET", f"{tables}/t").json()["metadata-location"] != first_location)
    committed = api.call("GET", f"{tables}/t").json()
    for _ in range(3):
        retried = with_key(api, "POST", f"{tables}/t", commit, key)
        assert retried.status_code == 200, retried.text
        assert retried.json()["metadata-location"] == committed["metadata-location"]
    after = api.call("GET", f"{tables}/t").json()
    assert after["metadata-location"] == committed["metadata-location"]
    assert len(after["metadata"]["schemas"]) == 2
    assert len(after["metadata"]["metadata-log"]) == 1

    # The same key on a different request is refused; a new key runs the request.
    other = {"requirements": [], "updates": [{"action": "set-properties", "updates": {"k": "v"}}]}
    mismatch = with_key(api, "POST", f"{tables}/t", other, key)
    assert_iceberg_error(mismatch, 422, "UnprocessableEntityException")
    assert with_key(api, "POST", f"{tables}/t", other, str(uuid.uuid4())).status_code == 200

    # renameTable and dropTable: the retry is the first 204, not "does not exist".
    key = str(uuid.uuid4())
    rename = {"source": {"namespace": ["db"], "name": "t"}, "destination": {"namespace": ["db"], "name": "u"}}
    send_and_lose_the_answer(api, "POST", f"/v1/{warehouse}/tables/rename", json.dumps(rename).encode(), key)
    wait_for(lambda: api.call("GET", f"{tables}/u").status_code == 200)
    assert with_key(api, "POST", f"/v1/{warehouse}/tables/rename", rename, key).status_code == 204
    key = str(uuid.uuid4())
    send_and_lose_the_answer(api, "DELETE", f"{tables}/u", b"", key)
    wait_for(lambda: api.call("GET", f"{tables}/u").status_code == 404)
    assert with_key(api, "DELETE", f"{tables}/u", None, key).status_code == 204
    assert_iceberg_error(api.call("DELETE", f"{tables}/u"), 404, "NoSuchTableException")


def test_final_errors_are_kept_and_answers_go_only_to_proven_principals(server, catalog_api, warehouse):
    api = catalog_api
    key = str(uuid.uuid4())
    # A final 4xx is the answer a retry gets, even once its cause is gone.
    missing = with_key(api, "POST", f"/v1/{warehouse}/namespaces/nowhere/tables", {"name": "t", "schema": SCHEMA},
                       key)
    assert_iceberg_error(missing, 404, "NoSuchNamespaceException")
    api.ok("POST", f"/v1/{warehouse}/namespaces", {"namespace": ["nowhere"]})
    again = with_key(api, "POST", f"/v1/{warehouse}/namespaces/nowhere/tables", {"name": "t", "schema": SCHEMA},
                     key)
    assert_iceberg_error(again, 404, "NoSuchNamespaceException")
    assert again.headers.get("Idempotent-Replayed") == "true"

    # A malformed key is refused; reads ignore the header.
    bad = with_key(api, "POST", f"/v1/{warehouse}/namespaces", {"namespace": ["x"]}, "a" * 129)
    assert_iceberg_error(bad, 400, "BadRequestException")
    assert with_key(api, "GET", f"/v1/{warehouse}/namespaces", None, key).status_code == 200

    # A key's answer goes only to a request whose signature is proven.
    other_key = str(uuid.uuid4())
    first = with_key(api, "POST", f"/v1/{warehouse}/namespaces", {"namespace": ["mine"]}, other_key)
    assert first.status_code == 200, first.text
    stranger = CatalogApi(server.endpoint, ACCESS_KEY, SECRET_KEY + "x")
    refused = with_key(stranger, "POST", f"/v1/{warehouse}/namespaces", {"namespace": ["mine"]}, other_key)
    assert refused.status_code == 401 and refused.headers.get("Idempotent-Replayed") is None


def test_an_answer_goes_only_to_the_key_that_was_given_it(server, catalog_api, warehouse):
    """Keys are bound to the access key as it is: another user's key, and a key id deleted and
    made again for another user with the same secret, never get the first holder's answer."""
    admin = SeracAdmin(server.endpoint)
    suffix = uuid.uuid4().hex[:8]
    first_user, second_user = f"idem-a-{suffix}", f"idem-b-{suffix}"
    admin.create_user(first_user, ["readwrite"])
    admin.create_user(second_user, ["readwrite"])
    key_id, secret = f"AKIDEM{suffix.upper()}", f"idempotency-secret-{suffix}-0123"
    admin.create_key(first_user, key_id, secret)
    first = CatalogApi(server.endpoint, key_id, secret)
    key = str(uuid.uuid4())
    body = {"namespace": [f"owned_{suffix}"]}
    answered = with_key(first, "POST", f"/v1/{warehouse}/namespaces", body, key)
    assert answered.status_code == 200, answered.text
    assert with_key(first, "POST", f"/v1/{warehouse}/namespaces", body, key).headers.get(
        "Idempotent-Replayed") == "true"

    # Another user's own key, the same Idempotency-Key: its own request runs (and finds the namespace).
    other_id, other_secret = admin.create_key(second_user)
    other = with_key(CatalogApi(server.endpoint, other_id, other_secret), "POST", f"/v1/{warehouse}/namespaces",
                     body, key)
    assert_iceberg_error(other, 409, "AlreadyExistsException")
    assert other.headers.get("Idempotent-Replayed") is None

    # The same key id and secret, deleted and made again for the other user: not the first holder.
    admin.ok("DELETE", f"/access-keys/{key_id}", status=204)
    admin.create_key(second_user, key_id, secret)
    remade = with_key(CatalogApi(server.endpoint, key_id, secret), "POST", f"/v1/{warehouse}/namespaces",
                      body, key)
    assert_iceberg_error(remade, 409, "AlreadyExistsException")
    assert remade.headers.get("Idempotent-Replayed") is None
