"""The `serac` client subcommands (warehouse, namespace, table, view, config) run as a user would:
the real binary against a real server, signing with the root keys taken from the environment."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid

import pytest

from s3util import ACCESS_KEY, REGION, SECRET_KEY, serac_binary

SCHEMA = {
    "type": "struct",
    "schema-id": 0,
    "fields": [
        {"id": 1, "name": "id", "required": True, "type": "long"},
        {"id": 2, "name": "name", "required": False, "type": "string"},
    ],
}
PARTITION_SPEC = {"spec-id": 0, "fields": [{"source-id": 1, "field-id": 1000, "name": "id_bucket",
                                            "transform": "bucket[4]"}]}


def run_cli(server, *args, env_extra=None, check=True) -> subprocess.CompletedProcess:
    env = dict(os.environ, SERAC_ENDPOINT=server.endpoint, SERAC_ACCESS_KEY=ACCESS_KEY,
               SERAC_SECRET_KEY=SECRET_KEY)
    env.update(env_extra or {})
    result = subprocess.run([serac_binary(), *args], capture_output=True, text=True, env=env, timeout=60)
    if check:
        assert result.returncode == 0, f"serac {' '.join(args)} failed: {result.stderr}"
    return result


def lines(result) -> list[str]:
    return [line for line in result.stdout.splitlines() if line]


@pytest.fixture
def warehouse_name():
    return f"cli-{uuid.uuid4().hex[:12]}"


def test_warehouse_create_list_remove(server, warehouse_name):
    run_cli(server, "warehouse", "create", warehouse_name)
    assert warehouse_name in lines(run_cli(server, "warehouse", "list"))

    again = run_cli(server, "warehouse", "create", warehouse_name, check=False)
    assert again.returncode != 0
    assert "already exists" in again.stderr

    run_cli(server, "warehouse", "remove", warehouse_name)
    assert warehouse_name not in lines(run_cli(server, "warehouse", "list"))

    missing = run_cli(server, "warehouse", "remove", warehouse_name, check=False)
    assert missing.returncode != 0
    assert "does not exist" in missing.stderr


def test_warehouse_upgrade_existing_bucket(server, s3, warehouse_name):
    s3.create_bucket(Bucket=warehouse_name)
    refused = run_cli(server, "warehouse", "create", warehouse_name, check=False)
    assert refused.returncode != 0
    assert "AlreadyExistsException" in refused.stderr
    run_cli(server, "warehouse", "create", warehouse_name, "--upgrade-existing")
    assert warehouse_name in lines(run_cli(server, "warehouse", "list"))
    run_cli(server, "warehouse", "remove", warehouse_name, "--preserve-bucket")
    assert warehouse_name not in lines(run_cli(server, "warehouse", "list"))
    s3.head_bucket(Bucket=warehouse_name)  # the bucket stayed


def test_warehouse_remove_force(server, warehouse_name):
    run_cli(server, "warehouse", "create", warehouse_name)
    run_cli(server, "namespace", "create", warehouse_name, "ns")
    refused = run_cli(server, "warehouse", "remove", warehouse_name, check=False)
    assert refused.returncode != 0
    assert "WarehouseNotEmptyException" in refused.stderr
    run_cli(server, "warehouse", "remove", warehouse_name, "--force")
    assert warehouse_name not in lines(run_cli(server, "warehouse", "list"))


def test_namespace_lifecycle(server, warehouse_name):
    run_cli(server, "warehouse", "create", warehouse_name)
    run_cli(server, "namespace", "create", warehouse_name, "sales", "--property", "owner=alice",
            "--property", "tier=gold")
    run_cli(server, "namespace", "create", warehouse_name, "sales.eu")
    run_cli(server, "namespace", "create", warehouse_name, "sales.us")
    run_cli(server, "namespace", "create", warehouse_name, "ops")

    assert lines(run_cli(server, "namespace", "list", warehouse_name)) == ["ops", "sales"]
    assert lines(run_cli(server, "namespace", "list", warehouse_name, "--parent", "sales")) == ["sales.eu",
                                                                                                  "sales.us"]
    shown = json.loads(run_cli(server, "namespace", "show", warehouse_name, "sales").stdout)
    assert shown["namespace"] == ["sales"]
    assert shown["properties"]["owner"] == "alice"
    assert shown["properties"]["tier"] == "gold"

    updated = json.loads(run_cli(server, "namespace", "update", warehouse_name, "sales", "--set", "owner=bob",
                                 "--set", "region=eu", "--unset", "tier", "--unset", "absent").stdout)
    assert sorted(updated["updated"]) == ["owner", "region"]
    assert updated["removed"] == ["tier"]
    assert updated["missing"] == ["absent"]
    properties = json.loads(run_cli(server, "namespace", "show", warehouse_name, "sales").stdout)["properties"]
    assert properties["owner"] == "bob" and properties["region"] == "eu" and "tier" not in properties

    nested = json.loads(run_cli(server, "namespace", "show", warehouse_name, "sales.eu").stdout)
    assert nested["namespace"] == ["sales", "eu"]

    run_cli(server, "namespace", "remove", warehouse_name, "sales.eu")
    assert lines(run_cli(server, "namespace", "list", warehouse_name, "--parent", "sales")) == ["sales.us"]
    missing = run_cli(server, "namespace", "show", warehouse_name, "sales.eu", check=False)
    assert missing.returncode != 0
    assert "NoSuchNamespaceException" in missing.stderr

    bad = run_cli(server, "namespace", "create", warehouse_name, "a..b", check=False)
    assert bad.returncode != 0
    assert "empty" in bad.stderr


def test_table_lifecycle(server, warehouse_name):
    run_cli(server, "warehouse", "create", warehouse_name)
    run_cli(server, "namespace", "create", warehouse_name, "db")
    run_cli(server, "namespace", "create", warehouse_name, "archive")
    created = run_cli(server, "table", "create", warehouse_name, "db", "events", "--schema", json.dumps(SCHEMA),
                      "--partition-spec", json.dumps(PARTITION_SPEC), "--property", "owner=cli")
    assert f"s3://{warehouse_name}/" in created.stdout
    run_cli(server, "table", "create", warehouse_name, "db", "plain", "--schema", json.dumps(SCHEMA))

    assert lines(run_cli(server, "table", "list", warehouse_name, "db")) == ["events", "plain"]
    metadata = json.loads(run_cli(server, "table", "show", warehouse_name, "db", "events").stdout)
    assert [field["name"] for field in metadata["schemas"][0]["fields"]] == ["id", "name"]
    assert metadata["properties"]["owner"] == "cli"
    assert metadata["partition-specs"][0]["fields"][0]["transform"] == "bucket[4]"
    assert metadata["location"].startswith(f"s3://{warehouse_name}/")

    duplicate = run_cli(server, "table", "create", warehouse_name, "db", "events", "--schema", json.dumps(SCHEMA),
                        check=False)
    assert duplicate.returncode != 0
    assert "AlreadyExistsException" in duplicate.stderr
    bad_schema = run_cli(server, "table", "create", warehouse_name, "db", "x", "--schema", "{not json", check=False)
    assert bad_schema.returncode != 0
    assert "--schema" in bad_schema.stderr

    run_cli(server, "table", "rename", warehouse_name, "db.events", "archive.events_2024")
    assert lines(run_cli(server, "table", "list", warehouse_name, "db")) == ["plain"]
    assert lines(run_cli(server, "table", "list", warehouse_name, "archive")) == ["events_2024"]

    run_cli(server, "table", "remove", warehouse_name, "archive", "events_2024", "--purge")
    run_cli(server, "table", "remove", warehouse_name, "db", "plain")
    assert lines(run_cli(server, "table", "list", warehouse_name, "db")) == []
    gone = run_cli(server, "table", "show", warehouse_name, "db", "plain", check=False)
    assert gone.returncode != 0
    assert "NoSuchTableException" in gone.stderr


def test_view_list_and_missing_view(server, warehouse_name):
    run_cli(server, "warehouse", "create", warehouse_name)
    run_cli(server, "namespace", "create", warehouse_name, "db")
    assert lines(run_cli(server, "view", "list", warehouse_name, "db")) == []
    missing = run_cli(server, "view", "show", warehouse_name, "db", "nope", check=False)
    assert missing.returncode != 0
    assert "NoSuchViewException" in missing.stderr


def test_wrong_secret_is_refused(server):
    result = run_cli(server, "warehouse", "list", env_extra={"SERAC_SECRET_KEY": "wrong-secret-value"},
                     check=False)
    assert result.returncode != 0
    assert "NotAuthorizedException" in result.stderr
    assert "wrong-secret-value" not in result.stderr


def test_flags_override_environment(server):
    result = run_cli(server, "warehouse", "list", "--endpoint", server.endpoint, "--access-key", ACCESS_KEY,
                     "--secret-key", SECRET_KEY,
                     env_extra={"SERAC_ENDPOINT": "http://127.0.0.1:1", "SERAC_SECRET_KEY": "wrong"})
    assert result.returncode == 0


def test_unreachable_endpoint_is_named(server):
    result = run_cli(server, "warehouse", "list", env_extra={"SERAC_ENDPOINT": "http://127.0.0.1:1"}, check=False)
    assert result.returncode != 0
    assert "http://127.0.0.1:1" in result.stderr


@pytest.mark.parametrize("engine", ["spark", "pyiceberg", "trino", "duckdb", "clickhouse", "aws"])
def test_config_for_each_engine(server, engine):
    result = run_cli(server, "config", "--engine", engine, "--warehouse", "lake")
    assert server.endpoint in result.stdout
    assert "lake" in result.stdout
    assert ACCESS_KEY in result.stdout
    assert SECRET_KEY not in result.stdout and SECRET_KEY not in result.stderr
    assert "SERAC_SECRET_KEY" in result.stdout


def test_config_needs_no_server():
    env = dict(os.environ, SERAC_SECRET_KEY=SECRET_KEY)
    env.pop("SERAC_ENDPOINT", None)
    result = subprocess.run([serac_binary(), "config", "--engine", "spark"], capture_output=True, text=True,
                            env=env, timeout=30)
    assert result.returncode == 0, result.stderr
    assert "http://127.0.0.1:9000/_iceberg" in result.stdout
    assert SECRET_KEY not in result.stdout
    unknown = subprocess.run([serac_binary(), "config", "--engine", "hive"], capture_output=True, text=True,
                             env=env, timeout=30)
    assert unknown.returncode != 0


def test_pyiceberg_config_runs(server, warehouse_name):
    """The printed PyIceberg snippet, executed as is, reaches the catalog."""
    pytest.importorskip("pyiceberg")
    run_cli(server, "warehouse", "create", warehouse_name)
    run_cli(server, "namespace", "create", warehouse_name, "from_cli")
    snippet = run_cli(server, "config", "--engine", "pyiceberg", "--warehouse", warehouse_name,
                      "--region", REGION).stdout
    env = dict(os.environ, SERAC_SECRET_KEY=SECRET_KEY)
    result = subprocess.run([sys.executable, "-c", snippet], capture_output=True, text=True, env=env,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    assert "from_cli" in result.stdout


def test_the_banners_lines_are_all_a_user_needs(server, warehouse_name):
    """The start-up banner's export line, pasted into a shell with nothing else set, serves the serac
    CLI (which falls back to the AWS variables) as it serves the AWS CLI; the banner names the
    catalog's URI and the `serac config` command that prints an engine's settings."""
    banner = "\n".join(server.stdout_lines)
    assert f"Catalog:     {server.endpoint}/_iceberg " in banner, banner
    assert "serac config --engine spark --warehouse my-warehouse" in banner, banner
    export = next(line.strip() for line in server.stdout_lines if line.strip().startswith("export AWS_"))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SERAC_", "AWS_"))}
    env["SERAC_ROOT_PASSWORD"] = SECRET_KEY  # what the operator's shell started the server with
    script = (f"{export}\n"
              f"{serac_binary()} warehouse create {warehouse_name}\n"
              f"{serac_binary()} warehouse list\n"
              f"{serac_binary()} config --engine pyiceberg --warehouse {warehouse_name}\n")
    out = subprocess.run(["bash", "-euc", script], env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert warehouse_name in out.stdout
    assert f"{server.endpoint}/_iceberg" in out.stdout
    assert "AWS_ENDPOINT_URL" in export
