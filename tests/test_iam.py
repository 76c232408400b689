"""Identity and access against a real server: the admin API (/_serac/admin/v1), the `serac user`,
`serac key` and `serac policy` commands, and how users' policies decide S3 requests made with boto3.
One server of its own, so that its log can be searched for every secret the tests created."""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import uuid

import pytest
import requests

from s3util import (ACCESS_KEY, SECRET_KEY, SeracAdmin, SeracServer, expect_s3_error, make_client,
                    serac_binary, unique_bucket_name)

# Every secret key a test saw; the last test checks that none of them reached the server's output.
SECRETS: list[str] = []


@pytest.fixture(scope="module")
def iam_server(session_tmp):
    serac = SeracServer(session_tmp / "iam", name="serac-iam")
    serac.start()
    yield serac
    serac.stop()


@pytest.fixture(scope="module")
def admin(iam_server):
    return SeracAdmin(iam_server.endpoint)


@pytest.fixture(scope="module")
def root_s3(iam_server):
    return make_client(iam_server.endpoint)


@pytest.fixture
def name():
    """A fresh user or policy name."""
    return f"u-{uuid.uuid4().hex[:10]}"


@pytest.fixture
def iam_bucket(root_s3, request):
    bucket = unique_bucket_name(request.node.name)
    root_s3.create_bucket(Bucket=bucket)
    root_s3.put_object(Bucket=bucket, Key="seed.txt", Body=b"seed")
    return bucket


def user_with_key(admin: SeracAdmin, name: str, policies=()) -> tuple[str, str]:
    access_key, secret_key = admin.create_user_with_key(name, policies)
    SECRETS.append(secret_key)
    return access_key, secret_key


def user_client(server, access_key: str, secret_key: str):
    return make_client(server.endpoint, access_key=access_key, secret_key=secret_key)


def assert_admin_error(response: requests.Response, status: int, code: str, message_part: str = "") -> dict:
    assert response.status_code == status, f"expected {status} {code}, got {response.status_code}: {response.text}"
    assert response.headers.get("content-type", "").startswith("application/json")
    error = response.json()["error"]
    assert error["code"] == code, response.text
    assert isinstance(error["message"], str) and error["message"]
    if message_part:
        assert message_part in error["message"], response.text
    return error


# --- start-up -----------------------------------------------------------------------------------------


def test_server_key_file_is_created_outside_the_data_directory(iam_server):
    key_file = iam_server.server_key_file
    assert key_file.is_file()
    assert not str(key_file.resolve()).startswith(str(iam_server.data_dir.resolve()))
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    key_text = key_file.read_text().strip()
    banner = "\n".join(iam_server.stdout_lines)
    assert f"Server key:  {key_file}" in banner
    assert key_text not in banner


def test_server_help_lists_the_identity_flags():
    result = subprocess.run([serac_binary(), "server", "--help"], capture_output=True, text=True, timeout=30)
    assert result.returncode == 0
    assert "--server-key-file" in result.stdout
    assert "--token-ttl" in result.stdout


# --- admin API: users ---------------------------------------------------------------------------------


def test_user_lifecycle(admin, name):
    created = admin.create_user(name, ["readonly"])
    assert created["name"] == name
    assert created["enabled"] is True
    assert created["policies"] == ["readonly"]
    assert created["created-ms"] > 0

    assert admin.ok("GET", f"/users/{name}")["policies"] == ["readonly"]
    assert name in [user["name"] for user in admin.ok("GET", "/users")["users"]]

    assert_admin_error(admin.call("POST", "/users", {"name": name}), 409, "AlreadyExists")

    disabled = admin.ok("PATCH", f"/users/{name}", {"enabled": False}, status=200)
    assert disabled["enabled"] is False
    assert admin.ok("GET", f"/users/{name}")["enabled"] is False
    assert admin.ok("PATCH", f"/users/{name}", {"enabled": True})["enabled"] is True

    admin.ok("DELETE", f"/users/{name}", status=204)
    assert_admin_error(admin.call("GET", f"/users/{name}"), 404, "NotFound")
    assert_admin_error(admin.call("DELETE", f"/users/{name}"), 404, "NotFound")
    assert name not in [user["name"] for user in admin.ok("GET", "/users")["users"]]


def test_user_request_errors(admin, name):
    assert_admin_error(admin.call("GET", "/users/no-such-user"), 404, "NotFound")
    assert_admin_error(admin.call("PATCH", "/users/no-such-user", {"enabled": False}), 404, "NotFound")
    assert_admin_error(admin.call("POST", "/users", {"name": "bad name!"}), 400, "InvalidArgument")
    assert_admin_error(admin.call("POST", "/users", {}), 400, "InvalidArgument", "name")
    assert_admin_error(admin.call("POST", "/users", b"{not json"), 400, "InvalidArgument")
    assert_admin_error(admin.call("POST", "/users", {"name": name, "polcies": []}), 400, "InvalidArgument",
                       "polcies")
    assert_admin_error(admin.call("POST", "/users", {"name": name, "policies": ["no-such-policy"]}), 404,
                       "NotFound")
    assert_admin_error(admin.call("GET", f"/users/{name}"), 404, "NotFound")  # nothing half-created
    admin.create_user(name)
    assert_admin_error(admin.call("PATCH", f"/users/{name}", {"enabled": "yes"}), 400, "InvalidArgument",
                       "enabled")


# --- admin API: access keys ---------------------------------------------------------------------------


def test_access_key_lifecycle(admin, name):
    admin.create_user(name, ["readonly"])
    reply = admin.ok("POST", f"/users/{name}/access-keys", {"description": "generated"}, status=201)
    generated, generated_secret = reply["access-key"], reply["secret-key"]
    SECRETS.append(generated_secret)
    assert reply["user"] == name and reply["enabled"] is True and len(generated_secret) >= 8

    given_id = f"AK{uuid.uuid4().hex[:12].upper()}"
    given_secret = f"given-secret-{uuid.uuid4().hex}"
    SECRETS.append(given_secret)
    assert admin.create_key(name, given_id, given_secret, "given") == (given_id, given_secret)
    assert_admin_error(admin.call("POST", f"/users/{name}/access-keys", {"access-key": given_id}), 409,
                       "AlreadyExists")

    keys = admin.ok("GET", f"/users/{name}/access-keys")["access-keys"]
    assert sorted(key["access-key"] for key in keys) == sorted([generated, given_id])
    assert all("secret-key" not in key for key in keys)
    assert {key["description"] for key in keys} == {"generated", "given"}
    everyone = admin.ok("GET", "/access-keys")["access-keys"]
    assert {generated, given_id} <= {key["access-key"] for key in everyone}
    assert all("secret-key" not in key for key in everyone)

    admin.set_key_enabled(given_id, False)
    listed = {key["access-key"]: key for key in admin.ok("GET", f"/users/{name}/access-keys")["access-keys"]}
    assert listed[given_id]["enabled"] is False and listed[generated]["enabled"] is True
    admin.set_key_enabled(given_id, True)

    admin.ok("DELETE", f"/access-keys/{given_id}", status=204)
    assert_admin_error(admin.call("DELETE", f"/access-keys/{given_id}"), 404, "NotFound")
    assert_admin_error(admin.call("PATCH", f"/access-keys/{given_id}", {"enabled": True}), 404, "NotFound")
    assert [key["access-key"] for key in admin.ok("GET", f"/users/{name}/access-keys")["access-keys"]] == [generated]


def test_access_key_errors(admin, name):
    assert_admin_error(admin.call("POST", "/users/no-such-user/access-keys", {}), 404, "NotFound")
    assert_admin_error(admin.call("GET", "/users/no-such-user/access-keys"), 404, "NotFound")
    admin.create_user(name)
    assert_admin_error(admin.call("POST", f"/users/{name}/access-keys", {"access-key": "AKSHORTSECRET",
                                                                          "secret-key": "short"}),
                       400, "InvalidArgument")
    assert_admin_error(admin.call("POST", f"/users/{name}/access-keys", {"secret-key": "long-enough-secret"}),
                       400, "InvalidArgument", "access-key")


def test_deleting_a_user_deletes_its_keys(iam_server, admin, name):
    access_key, secret_key = user_with_key(admin, name, ["readonly"])
    user_client(iam_server, access_key, secret_key).list_buckets()
    admin.ok("DELETE", f"/users/{name}", status=204)
    assert access_key not in {key["access-key"] for key in admin.ok("GET", "/access-keys")["access-keys"]}
    with expect_s3_error(403, "InvalidAccessKeyId"):
        user_client(iam_server, access_key, secret_key).list_buckets()


# --- admin API: policies ------------------------------------------------------------------------------


def bucket_policy(bucket: str, effect="Allow", actions=("s3:GetObject",), resource_suffix="/*") -> dict:
    return {"Version": "2012-10-17",
            "Statement": [{"Effect": effect, "Action": list(actions),
                           "Resource": [f"arn:aws:s3:::{bucket}{resource_suffix}"]}]}


def test_policy_lifecycle(admin, name):
    document = bucket_policy("some-bucket")
    created = admin.ok("PUT", f"/policies/{name}", json.dumps(document), status=201)
    assert created["name"] == name and created["builtin"] is False
    assert created["document"]["Statement"][0]["Resource"] in (["arn:aws:s3:::some-bucket/*"],
                                                               "arn:aws:s3:::some-bucket/*")
    replaced = admin.ok("PUT", f"/policies/{name}", json.dumps(bucket_policy("other-bucket")), status=200)
    assert "other-bucket" in json.dumps(replaced["document"])
    assert "other-bucket" in json.dumps(admin.ok("GET", f"/policies/{name}")["document"])

    listed = {policy["name"]: policy["builtin"] for policy in admin.ok("GET", "/policies")["policies"]}
    assert listed[name] is False
    for builtin in ("readwrite", "readonly", "writeonly", "consoleAdmin"):
        assert listed[builtin] is True
    assert "s3:Get*" in json.dumps(admin.ok("GET", "/policies/readonly")["document"])

    user = f"{name}-user"
    admin.create_user(user)
    admin.attach(name, user)
    assert admin.ok("GET", f"/users/{user}")["policies"] == [name]
    assert_admin_error(admin.call("DELETE", f"/policies/{name}"), 409, "Conflict")
    admin.detach(name, user)
    assert admin.ok("GET", f"/users/{user}")["policies"] == []
    admin.ok("DELETE", f"/policies/{name}", status=204)
    assert_admin_error(admin.call("GET", f"/policies/{name}"), 404, "NotFound")
    assert_admin_error(admin.call("DELETE", f"/policies/{name}"), 404, "NotFound")


def test_policy_errors(admin, name):
    assert_admin_error(admin.call("PUT", f"/policies/{name}", b"{\"Version\": "), 400, "InvalidArgument")
    bad_effect = bucket_policy("b", effect="Maybe")
    assert_admin_error(admin.call("PUT", f"/policies/{name}", json.dumps(bad_effect)), 400, "InvalidArgument",
                       "Effect")
    no_action = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Resource": "*"}]}
    assert_admin_error(admin.call("PUT", f"/policies/{name}", json.dumps(no_action)), 400, "InvalidArgument",
                       "Action")
    assert_admin_error(admin.call("PUT", f"/policies/{name}", b""), 400, "InvalidArgument")
    assert_admin_error(admin.call("GET", f"/policies/{name}"), 404, "NotFound")  # nothing stored
    assert_admin_error(admin.call("PUT", "/policies/readonly", json.dumps(bucket_policy("b"))), 400,
                       "InvalidArgument")
    admin.create_user(name)
    assert_admin_error(admin.call("PUT", f"/users/{name}/policies/no-such-policy"), 404, "NotFound")
    assert_admin_error(admin.call("PUT", "/users/no-such-user/policies/readonly"), 404, "NotFound")


# --- admin API: authentication and routing -------------------------------------------------------------


def test_admin_api_requires_an_admin(iam_server, admin, name):
    unsigned = requests.get(iam_server.endpoint + "/_serac/admin/v1/users", timeout=10)
    assert_admin_error(unsigned, 403, "AccessDenied")

    wrong_secret = SeracAdmin(iam_server.endpoint, ACCESS_KEY, SECRET_KEY + "x")
    assert_admin_error(wrong_secret.call("GET", "/users"), 403, "SignatureDoesNotMatch")
    unknown_key = SeracAdmin(iam_server.endpoint, "AKNOSUCHKEY", SECRET_KEY)
    assert_admin_error(unknown_key.call("GET", "/users"), 403, "InvalidAccessKeyId")

    access_key, secret_key = user_with_key(admin, name, ["readwrite"])
    plain_user = SeracAdmin(iam_server.endpoint, access_key, secret_key)
    assert_admin_error(plain_user.call("GET", "/users"), 403, "AccessDenied")
    assert_admin_error(plain_user.call("POST", "/users", {"name": f"{name}-x"}), 403, "AccessDenied")
    assert_admin_error(plain_user.call("PUT", f"/users/{name}/policies/consoleAdmin"), 403, "AccessDenied")
    assert admin.ok("GET", f"/users/{name}")["policies"] == ["readwrite"]  # no self-promotion

    admin.attach("consoleAdmin", name)
    assert name in [user["name"] for user in plain_user.ok("GET", "/users")["users"]]


def test_narrow_admin_grants_stay_narrow(iam_server, admin, name):
    """Admin actions are checked against the user, key or policy they act on: "rotate your own
    keys" gives no reach over another user's keys, and a grant to attach one policy is no grant to
    attach another (nor to create a user holding it)."""
    rotate_own = {"Version": "2012-10-17", "Statement": [
        {"Effect": "Allow", "Action": ["admin:CreateAccessKey", "admin:ListAccessKeys"],
         "Resource": ["arn:aws:admin:::user/${aws:username}"]},
        {"Effect": "Allow", "Action": ["admin:DeleteAccessKey", "admin:DisableAccessKey", "admin:EnableAccessKey"],
         "Resource": ["arn:aws:admin:::user/${aws:username}/access-key/*"]}]}
    admin.put_policy(f"{name}-rotate", rotate_own)
    alice_key, alice_secret = user_with_key(admin, f"{name}-alice", [f"{name}-rotate"])
    bob_key, _ = user_with_key(admin, f"{name}-bob", [])
    alice = SeracAdmin(iam_server.endpoint, alice_key, alice_secret)
    created = alice.ok("POST", f"/users/{name}-alice/access-keys", {"description": "rotated"}, status=201)
    SECRETS.append(created["secret-key"])
    assert {k["access-key"] for k in alice.ok("GET", f"/users/{name}-alice/access-keys")["access-keys"]} == {
        alice_key, created["access-key"]}
    alice.ok("PATCH", f"/access-keys/{alice_key}", {"enabled": False}, status=204)
    alice = SeracAdmin(iam_server.endpoint, created["access-key"], created["secret-key"])
    alice.ok("DELETE", f"/access-keys/{alice_key}", status=204)
    # Nothing of bob's, nothing account-wide, no self-promotion.
    assert_admin_error(alice.call("POST", f"/users/{name}-bob/access-keys", {}), 403, "AccessDenied")
    assert_admin_error(alice.call("GET", f"/users/{name}-bob/access-keys"), 403, "AccessDenied")
    assert_admin_error(alice.call("DELETE", f"/access-keys/{bob_key}"), 403, "AccessDenied")
    assert_admin_error(alice.call("PATCH", f"/access-keys/{bob_key}", {"enabled": False}), 403, "AccessDenied")
    assert_admin_error(alice.call("DELETE", "/access-keys/AKNOSUCHKEY0000"), 403, "AccessDenied")
    assert_admin_error(alice.call("GET", "/access-keys"), 403, "AccessDenied")
    assert_admin_error(alice.call("PUT", f"/users/{name}-alice/policies/consoleAdmin"), 403, "AccessDenied")
    assert [k["enabled"] for k in admin.ok("GET", f"/users/{name}-bob/access-keys")["access-keys"]] == [True]

    # A helpdesk that may create users and give them "readonly", and nothing else.
    helpdesk_policy = {"Version": "2012-10-17", "Statement": [
        {"Effect": "Allow", "Action": ["admin:CreateUser", "admin:AttachUserPolicy"],
         "Resource": ["arn:aws:admin:::user/*", "arn:aws:admin:::policy/readonly"]}]}
    admin.put_policy(f"{name}-helpdesk", helpdesk_policy)
    helpdesk = SeracAdmin(iam_server.endpoint, *user_with_key(admin, f"{name}-helpdesk", [f"{name}-helpdesk"]))
    helpdesk.ok("POST", "/users", {"name": f"{name}-new", "policies": ["readonly"]}, status=201)
    helpdesk.ok("PUT", f"/users/{name}-bob/policies/readonly", status=204)
    assert_admin_error(helpdesk.call("PUT", f"/users/{name}-bob/policies/consoleAdmin"), 403, "AccessDenied")
    assert_admin_error(helpdesk.call("POST", "/users", {"name": f"{name}-root2", "policies": ["consoleAdmin"]}),
                       403, "AccessDenied")
    assert admin.call("GET", f"/users/{name}-root2").status_code == 404
    assert_admin_error(helpdesk.call("PUT", f"/users/{name}-helpdesk/policies/consoleAdmin"), 403, "AccessDenied")
    assert admin.ok("GET", f"/users/{name}-bob")["policies"] == ["readonly"]


def test_admin_routing_errors(iam_server, admin):
    assert_admin_error(admin.call("GET", "/groups"), 404, "NoSuchRoute")
    assert_admin_error(admin.call("POST", "/policies"), 405, "MethodNotAllowed")
    too_big = {"name": "x" * (64 * 1024 + 10)}
    assert_admin_error(admin.call("POST", "/users", too_big), 413, "EntityTooLarge")
    # The server is still healthy and answers the next request.
    assert admin.ok("GET", "/users")["users"] is not None


# --- S3 under users' policies -----------------------------------------------------------------------


def test_readonly_user_reads_but_cannot_write(iam_server, admin, iam_bucket, name):
    client = user_client(iam_server, *user_with_key(admin, name, ["readonly"]))
    assert client.get_object(Bucket=iam_bucket, Key="seed.txt")["Body"].read() == b"seed"
    assert [item["Key"] for item in client.list_objects_v2(Bucket=iam_bucket)["Contents"]] == ["seed.txt"]
    assert iam_bucket in [bucket["Name"] for bucket in client.list_buckets()["Buckets"]]
    with expect_s3_error(403, "AccessDenied"):
        client.put_object(Bucket=iam_bucket, Key="new.txt", Body=b"x")
    with expect_s3_error(403, "AccessDenied"):
        client.delete_object(Bucket=iam_bucket, Key="seed.txt")
    with expect_s3_error(403, "AccessDenied"):
        client.create_bucket(Bucket=unique_bucket_name("ro-create"))


def test_writeonly_user_writes_but_cannot_read(iam_server, admin, root_s3, iam_bucket, name):
    client = user_client(iam_server, *user_with_key(admin, name, ["writeonly"]))
    client.put_object(Bucket=iam_bucket, Key="drop.txt", Body=b"dropped")
    assert root_s3.get_object(Bucket=iam_bucket, Key="drop.txt")["Body"].read() == b"dropped"
    with expect_s3_error(403, "AccessDenied"):
        client.get_object(Bucket=iam_bucket, Key="drop.txt")
    with expect_s3_error(403, "AccessDenied"):
        client.list_objects_v2(Bucket=iam_bucket)


def test_home_prefix_policy_with_username_variable(iam_server, admin, root_s3, iam_bucket, name):
    policy_name = f"{name}-home"
    admin.put_policy(policy_name, {
        "Version": "2012-10-17",
        "Statement": [
            {"Effect": "Allow", "Action": ["s3:GetObject", "s3:PutObject", "s3:DeleteObject"],
             "Resource": [f"arn:aws:s3:::{iam_bucket}/home/${{aws:username}}/*"]},
            {"Effect": "Allow", "Action": "s3:ListBucket", "Resource": f"arn:aws:s3:::{iam_bucket}",
             "Condition": {"StringLike": {"s3:prefix": ["home/${aws:username}/*"]}}},
        ]})
    client = user_client(iam_server, *user_with_key(admin, name, [policy_name]))
    root_s3.put_object(Bucket=iam_bucket, Key="home/someone-else/private.txt", Body=b"private")

    own = f"home/{name}/notes.txt"
    client.put_object(Bucket=iam_bucket, Key=own, Body=b"mine")
    assert client.get_object(Bucket=iam_bucket, Key=own)["Body"].read() == b"mine"
    listed = client.list_objects_v2(Bucket=iam_bucket, Prefix=f"home/{name}/")
    assert [item["Key"] for item in listed["Contents"]] == [own]
    client.delete_object(Bucket=iam_bucket, Key=own)

    with expect_s3_error(403, "AccessDenied"):
        client.get_object(Bucket=iam_bucket, Key="home/someone-else/private.txt")
    with expect_s3_error(403, "AccessDenied"):
        client.put_object(Bucket=iam_bucket, Key="home/someone-else/x.txt", Body=b"x")
    with expect_s3_error(403, "AccessDenied"):
        client.put_object(Bucket=iam_bucket, Key=f"home/{name}-evil/x.txt", Body=b"x")
    with expect_s3_error(403, "AccessDenied"):
        client.get_object(Bucket=iam_bucket, Key="seed.txt")
    with expect_s3_error(403, "AccessDenied"):
        client.list_objects_v2(Bucket=iam_bucket)
    with expect_s3_error(403, "AccessDenied"):
        client.list_objects_v2(Bucket=iam_bucket, Prefix="home/someone-else/")


def test_deny_statement_wins_over_readwrite(iam_server, admin, root_s3, iam_bucket, name):
    policy_name = f"{name}-deny"
    admin.put_policy(policy_name, bucket_policy(iam_bucket, effect="Deny", actions=("s3:*",),
                                                resource_suffix="/secret/*"))
    client = user_client(iam_server, *user_with_key(admin, name, ["readwrite", policy_name]))
    root_s3.put_object(Bucket=iam_bucket, Key="secret/plan.txt", Body=b"plan")
    client.put_object(Bucket=iam_bucket, Key="public/a.txt", Body=b"a")
    assert client.get_object(Bucket=iam_bucket, Key="seed.txt")["Body"].read() == b"seed"
    with expect_s3_error(403, "AccessDenied"):
        client.get_object(Bucket=iam_bucket, Key="secret/plan.txt")
    with expect_s3_error(403, "AccessDenied"):
        client.put_object(Bucket=iam_bucket, Key="secret/new.txt", Body=b"x")
    with expect_s3_error(403, "AccessDenied"):
        client.delete_object(Bucket=iam_bucket, Key="secret/plan.txt")

    admin.detach(policy_name, name)  # without the Deny, readwrite allows it at once
    assert client.get_object(Bucket=iam_bucket, Key="secret/plan.txt")["Body"].read() == b"plan"


def test_disabled_key_stops_working_on_the_next_request(iam_server, admin, iam_bucket, name):
    # AWS answers a request signed with an inactive access key with 403 InvalidAccessKeyId.
    access_key, secret_key = user_with_key(admin, name, ["readwrite"])
    client = user_client(iam_server, access_key, secret_key)
    client.head_object(Bucket=iam_bucket, Key="seed.txt")
    admin.set_key_enabled(access_key, False)
    with expect_s3_error(403, "InvalidAccessKeyId"):
        client.get_object(Bucket=iam_bucket, Key="seed.txt")
    with expect_s3_error(403, "InvalidAccessKeyId"):
        client.put_object(Bucket=iam_bucket, Key="while-disabled.txt", Body=b"x")
    admin.set_key_enabled(access_key, True)
    assert client.get_object(Bucket=iam_bucket, Key="seed.txt")["Body"].read() == b"seed"


def test_disabled_user_cannot_sign(iam_server, admin, iam_bucket, name):
    client = user_client(iam_server, *user_with_key(admin, name, ["readonly"]))
    client.head_object(Bucket=iam_bucket, Key="seed.txt")
    admin.ok("PATCH", f"/users/{name}", {"enabled": False})
    with expect_s3_error(403, "InvalidAccessKeyId"):
        client.get_object(Bucket=iam_bucket, Key="seed.txt")
    admin.ok("PATCH", f"/users/{name}", {"enabled": True})
    client.head_object(Bucket=iam_bucket, Key="seed.txt")


def test_detaching_a_policy_takes_effect_at_once(iam_server, admin, iam_bucket, name):
    client = user_client(iam_server, *user_with_key(admin, name, ["readwrite"]))
    client.put_object(Bucket=iam_bucket, Key="before.txt", Body=b"x")
    admin.detach("readwrite", name)
    with expect_s3_error(403, "AccessDenied"):
        client.put_object(Bucket=iam_bucket, Key="after.txt", Body=b"x")
    with expect_s3_error(403, "AccessDenied"):
        client.get_object(Bucket=iam_bucket, Key="before.txt")
    admin.attach("readonly", name)
    assert client.get_object(Bucket=iam_bucket, Key="before.txt")["Body"].read() == b"x"


def test_replacing_a_policy_takes_effect_at_once(iam_server, admin, iam_bucket, name):
    policy_name = f"{name}-p"
    admin.put_policy(policy_name, bucket_policy(iam_bucket, actions=("s3:GetObject",)))
    client = user_client(iam_server, *user_with_key(admin, name, [policy_name]))
    client.get_object(Bucket=iam_bucket, Key="seed.txt")
    admin.put_policy(policy_name, bucket_policy(iam_bucket, actions=("s3:PutObject",)))
    with expect_s3_error(403, "AccessDenied"):
        client.get_object(Bucket=iam_bucket, Key="seed.txt")
    client.put_object(Bucket=iam_bucket, Key="now-allowed.txt", Body=b"x")


# --- the command line -----------------------------------------------------------------------------


def run_cli(server, *args, check=True, access_key=ACCESS_KEY, secret_key=SECRET_KEY, stdin=None):
    env = dict(os.environ, SERAC_ENDPOINT=server.endpoint, SERAC_ACCESS_KEY=access_key,
               SERAC_SECRET_KEY=secret_key)
    result = subprocess.run([serac_binary(), *args], capture_output=True, text=True, env=env, timeout=60,
                            input=stdin)
    if check:
        assert result.returncode == 0, f"serac {' '.join(args)} failed: {result.stderr}"
    return result


def table_rows(output: str) -> list[list[str]]:
    """Splits a table into cells (cells are separated by at least two spaces)."""
    return [re.split(r"\s{2,}", line.strip()) for line in output.splitlines() if line.strip()]


def test_cli_users(iam_server, admin, name):
    assert f"User {name} created." in run_cli(iam_server, "user", "add", name, "--policy", "readonly",
                                              "--policy", "writeonly").stdout
    rows = table_rows(run_cli(iam_server, "user", "list").stdout)
    assert rows[0] == ["NAME", "STATUS", "POLICIES", "CREATED"]
    row = next(row for row in rows if row[0] == name)
    assert row[1] == "enabled" and row[2] == "readonly,writeonly"
    users = json.loads(run_cli(iam_server, "user", "list", "--json").stdout)["users"]
    assert any(user["name"] == name for user in users)

    assert f"User {name} disabled." in run_cli(iam_server, "user", "disable", name).stdout
    assert json.loads(run_cli(iam_server, "user", "show", name, "--json").stdout)["enabled"] is False
    run_cli(iam_server, "user", "enable", name)
    assert admin.ok("GET", f"/users/{name}")["enabled"] is True

    duplicate = run_cli(iam_server, "user", "add", name, check=False)
    assert duplicate.returncode == 1 and "AlreadyExists" in duplicate.stderr
    run_cli(iam_server, "user", "remove", name)
    missing = run_cli(iam_server, "user", "remove", name, check=False)
    assert missing.returncode == 1 and "NotFound" in missing.stderr


def test_cli_keys(iam_server, admin, iam_bucket, name):
    admin.create_user(name, ["readonly"])
    output = run_cli(iam_server, "key", "add", name, "--description", "laptop").stdout
    fields = dict(line.strip().split(":  ", 1) for line in output.splitlines() if ":  " in line)
    generated, generated_secret = fields["Access key"].strip(), fields["Secret key"].strip()
    SECRETS.append(generated_secret)
    user_client(iam_server, generated, generated_secret).head_object(Bucket=iam_bucket, Key="seed.txt")

    given_id = f"AKCLI{uuid.uuid4().hex[:10].upper()}"
    given_secret = f"cli-given-{uuid.uuid4().hex}"
    SECRETS.append(given_secret)
    reply = json.loads(run_cli(iam_server, "key", "add", name, "--access-key", given_id, "--secret-key",
                               given_secret, "--json").stdout)
    assert reply["access-key"] == given_id and reply["secret-key"] == given_secret

    rows = table_rows(run_cli(iam_server, "key", "list", name).stdout)
    assert rows[0] == ["ACCESS KEY", "USER", "STATUS", "CREATED", "DESCRIPTION"]
    by_key = {row[0]: row for row in rows[1:]}
    assert set(by_key) == {generated, given_id}
    assert by_key[generated][1] == name and by_key[generated][2] == "enabled" and by_key[generated][4] == "laptop"
    assert given_id in run_cli(iam_server, "key", "list").stdout
    assert generated_secret not in run_cli(iam_server, "key", "list", name, "--json").stdout

    run_cli(iam_server, "key", "disable", given_id)
    with expect_s3_error(403, "InvalidAccessKeyId"):  # GET: a HEAD error has no body to name the code
        user_client(iam_server, given_id, given_secret).get_object(Bucket=iam_bucket, Key="seed.txt")
    run_cli(iam_server, "key", "enable", given_id)
    user_client(iam_server, given_id, given_secret).head_object(Bucket=iam_bucket, Key="seed.txt")
    assert f"Access key {given_id} removed." in run_cli(iam_server, "key", "remove", given_id).stdout
    assert given_id not in run_cli(iam_server, "key", "list", name).stdout
    assert run_cli(iam_server, "key", "remove", given_id, check=False).returncode == 1


def test_cli_policies(iam_server, admin, iam_bucket, name, tmp_path):
    admin.create_user(name)
    policy_name = f"{name}-cli"
    policy_file = tmp_path / "policy.json"
    policy_file.write_text(json.dumps(bucket_policy(iam_bucket)))
    assert f"Policy {policy_name} stored." in run_cli(iam_server, "policy", "create", policy_name,
                                                      str(policy_file)).stdout
    rows = table_rows(run_cli(iam_server, "policy", "list").stdout)
    assert rows[0] == ["NAME", "TYPE"]
    assert [policy_name, "custom"] in rows and ["readonly", "built-in"] in rows
    shown = json.loads(run_cli(iam_server, "policy", "show", policy_name).stdout)
    assert shown["Statement"][0]["Effect"] == "Allow"
    assert json.loads(run_cli(iam_server, "policy", "show", policy_name, "--json").stdout)["name"] == policy_name

    run_cli(iam_server, "policy", "attach", policy_name, name)
    assert admin.ok("GET", f"/users/{name}")["policies"] == [policy_name]
    busy = run_cli(iam_server, "policy", "remove", policy_name, check=False)
    assert busy.returncode == 1 and "Conflict" in busy.stderr
    run_cli(iam_server, "policy", "detach", policy_name, name)
    assert admin.ok("GET", f"/users/{name}")["policies"] == []
    run_cli(iam_server, "policy", "remove", policy_name)
    assert policy_name not in run_cli(iam_server, "policy", "list").stdout

    bad_file = tmp_path / "bad.json"
    bad_file.write_text(json.dumps(bucket_policy(iam_bucket, effect="Perhaps")))
    bad = run_cli(iam_server, "policy", "create", policy_name, str(bad_file), check=False)
    assert bad.returncode == 1 and "Effect" in bad.stderr
    from_stdin = run_cli(iam_server, "policy", "create", policy_name, "-", stdin=json.dumps(bucket_policy("x")))
    assert from_stdin.returncode == 0
    missing = run_cli(iam_server, "policy", "create", policy_name, str(tmp_path / "absent.json"), check=False)
    assert missing.returncode == 1 and "cannot read policy file" in missing.stderr


def test_cli_refuses_a_non_admin(iam_server, admin, name):
    access_key, secret_key = user_with_key(admin, name, ["readwrite"])
    denied = run_cli(iam_server, "user", "list", check=False, access_key=access_key, secret_key=secret_key)
    assert denied.returncode == 1 and "AccessDenied" in denied.stderr


# --- listing buckets ----------------------------------------------------------------------------------


def bucket_names(client) -> list[str]:
    return [bucket["Name"] for bucket in client.list_buckets()["Buckets"]]


def test_list_buckets_shows_only_the_buckets_the_policy_grants(iam_server, admin, root_s3, name):
    team_a, team_b = unique_bucket_name("team-a"), unique_bucket_name("team-b")
    for bucket in (team_a, team_b):
        root_s3.create_bucket(Bucket=bucket)
    admin.put_policy(f"{name}-team-a", {"Version": "2012-10-17", "Statement": [
        {"Effect": "Allow", "Action": "s3:*", "Resource": [f"arn:aws:s3:::{team_a}", f"arn:aws:s3:::{team_a}/*"]}]})
    member = user_client(iam_server, *user_with_key(admin, name, [f"{name}-team-a"]))
    assert bucket_names(member) == [team_a]
    member.put_object(Bucket=team_a, Key="k", Body=b"v")

    # Root, and anyone allowed s3:ListAllMyBuckets (readonly), sees every bucket.
    for client in (root_s3, user_client(iam_server, *user_with_key(admin, f"{name}-ro", ["readonly"]))):
        assert {team_a, team_b} <= set(bucket_names(client))

    # No bucket it may list: an empty list rather than AccessDenied.
    writer = user_client(iam_server, *user_with_key(admin, f"{name}-wo", ["writeonly"]))
    assert bucket_names(writer) == []


def test_explicit_deny_of_list_all_my_buckets_refuses_the_listing(iam_server, admin, root_s3, iam_bucket, name):
    admin.put_policy(f"{name}-no-list", {"Version": "2012-10-17", "Statement": [
        {"Effect": "Allow", "Action": "s3:*", "Resource": "arn:aws:s3:::*"},
        {"Effect": "Deny", "Action": "s3:ListAllMyBuckets", "Resource": "*"}]})
    client = user_client(iam_server, *user_with_key(admin, name, [f"{name}-no-list"]))
    with expect_s3_error(403, "AccessDenied"):
        client.list_buckets()
    assert client.get_object(Bucket=iam_bucket, Key="seed.txt")["Body"].read() == b"seed"


# --- the vended-credential lifetime flag ---------------------------------------------------------------


@pytest.mark.parametrize("flag,env", [(["--vended-credential-ttl", "0"], {}),
                                      (["--vended-credential-ttl", "43201"], {}),
                                      ([], {"SERAC_VENDED_CREDENTIAL_TTL": "0"})])
def test_out_of_range_vended_credential_ttl_stops_start_up(tmp_path, flag, env):
    result = subprocess.run([serac_binary(), "server", "--data", str(tmp_path / "data"), "--address", "127.0.0.1:0",
                             *flag], capture_output=True, text=True, timeout=30,
                            env=dict(os.environ, SERAC_SERVER_KEY_FILE=str(tmp_path / "server.key"), **env))
    assert result.returncode != 0
    assert "--vended-credential-ttl" in result.stderr and "between 1 and 43200 seconds" in result.stderr, result.stderr
    assert not (tmp_path / "data").exists()  # refused before anything was created


def test_server_help_lists_the_vended_credential_ttl():
    result = subprocess.run([serac_binary(), "server", "--help"], capture_output=True, text=True, timeout=30)
    assert result.returncode == 0
    assert "--vended-credential-ttl" in result.stdout and "SERAC_VENDED_CREDENTIAL_TTL" in result.stdout


# --- persistence and secrecy --------------------------------------------------------------------------


def test_identities_survive_a_restart(iam_server, admin, iam_bucket, name):
    access_key, secret_key = user_with_key(admin, name, ["readonly"])
    iam_server.stop()
    iam_server.start()
    client = user_client(iam_server, access_key, secret_key)
    assert client.get_object(Bucket=iam_bucket, Key="seed.txt")["Body"].read() == b"seed"
    with expect_s3_error(403, "AccessDenied"):
        client.put_object(Bucket=iam_bucket, Key="x.txt", Body=b"x")


def test_secrets_never_reach_the_server_output(iam_server):
    assert SECRETS, "the tests above created no secrets"
    outputs = ["\n".join(iam_server.stdout_lines)]
    for log in sorted(iam_server.root_dir.glob("stderr-*.log")):
        outputs.append(log.read_text("utf-8", "replace"))
    text = "\n".join(outputs)
    assert "created access key" in text  # the log did record the key creations, just not the secrets
    for secret in SECRETS:
        assert secret not in text, "a secret key appears in the server's output"
