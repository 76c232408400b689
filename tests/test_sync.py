"""`serac sync` with OLake's configuration files against a real PostgreSQL 15 and a real serac:
`spec` prints the files' JSON Schemas, `check` verifies a source (wal_level, replication rights,
slot, publication) and a destination (the REST catalog with SigV4), `discover` writes streams.json
in OLake's shape and merges an edited one. Fields serac does not use are reported once."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from catalog_util import CATALOG_BASE, catalog_api, warehouse  # noqa: F401
from pg_util import postgres  # noqa: F401
from s3util import ACCESS_KEY, SECRET_KEY

SERAC = os.environ.get("SERAC_BIN", "build/serac")
SYNC_TEST = str(Path(SERAC).resolve().parent / "src" / "sync" / "sync_test")


def sync(*args, check=True):
    out = subprocess.run([SERAC, "sync", *map(str, args)], capture_output=True, text=True, timeout=120)
    if check:
        assert out.returncode == 0, out.stdout + out.stderr
    return out


def write_json(path: Path, document: dict) -> Path:
    path.write_text(json.dumps(document, indent=2))
    return path


def test_spec_prints_json_schemas():
    source = json.loads(sync("spec").stdout)
    assert source["$schema"] == "http://json-schema.org/draft-07/schema#"
    assert {"host", "port", "database", "username", "update_method"} <= set(source["properties"])
    assert set(source["required"]) == {"host", "database", "username"}
    destination = json.loads(sync("spec", "--destination").stdout)
    writer = destination["properties"]["writer"]["properties"]
    assert {"rest_catalog_url", "iceberg_s3_path", "rest_signing_v_4", "aws_access_key"} <= set(writer)


def test_check_source(postgres, tmp_path):  # noqa: F811
    postgres.sql("CREATE TABLE checked (id int PRIMARY KEY, v text); CREATE PUBLICATION serac_pub FOR TABLE checked;")
    config = write_json(tmp_path / "source.json", postgres.source_config(
        update_method={"replication_slot": "serac_slot", "publication": "serac_pub", "initial_wait_time": 120},
        ssh_config={"host": "bastion"}))
    out = sync("check", "--config", config)
    assert "PostgreSQL 15." in out.stdout and "wal_level = logical" in out.stdout, out.stdout
    assert "replication slot serac_slot: absent, created by the first sync" in out.stdout
    assert "publication serac_pub: 1 tables" in out.stdout and "source: ok" in out.stdout
    assert out.stderr.count("ssh_config: not used") == 1, out.stderr
    # An existing slot of another plugin, a missing publication, an unreachable server.
    postgres.sql("SELECT pg_create_logical_replication_slot('other_slot', 'test_decoding')")
    for update_method, message in [
            ({"replication_slot": "other_slot", "publication": "serac_pub"}, "uses the test_decoding plugin"),
            ({"replication_slot": "serac_slot", "publication": "nope"}, "publication nope does not exist")]:
        bad = write_json(tmp_path / "bad.json", postgres.source_config(update_method=update_method))
        out = sync("check", "--config", bad, check=False)
        assert out.returncode == 1 and message in out.stderr, out.stderr
    postgres.sql("SELECT pg_drop_replication_slot('other_slot')")
    down = write_json(tmp_path / "down.json", dict(postgres.source_config(), port=1))
    out = sync("check", "--config", down, check=False)
    assert out.returncode == 1 and "cannot connect to PostgreSQL at 127.0.0.1:1/postgres" in out.stderr
    assert "unused-with-trust" not in out.stderr  # never the password
    malformed = write_json(tmp_path / "malformed.json", {"host": "h", "database": "d", "username": "u", "port": "x"})
    out = sync("check", "--config", malformed, check=False)
    assert out.returncode == 1 and "malformed.json: port: must be integer" in out.stderr, out.stderr


def test_check_destination(server, warehouse, tmp_path):  # noqa: F811
    host_port = server.endpoint.split("://", 1)[1]
    writer = {"catalog_type": "rest", "rest_catalog_url": server.endpoint + CATALOG_BASE, "iceberg_s3_path": warehouse,
              "iceberg_db": "shop", "rest_signing_v_4": True, "rest_signing_name": "s3tables",
              "rest_signing_region": "us-east-1", "s3_endpoint": host_port, "s3_use_ssl": False,
              "s3_path_style": True, "aws_region": "us-east-1", "aws_access_key": ACCESS_KEY,
              "aws_secret_key": SECRET_KEY, "arrow_writes": True}
    destination = write_json(tmp_path / "destination.json", {"type": "ICEBERG", "writer": writer})
    out = sync("check", "--destination", destination)
    assert f"warehouse {warehouse}: reachable" in out.stdout and "namespace shop: absent" in out.stdout, out.stdout
    assert "destination: ok" in out.stdout and "writer.arrow_writes: not used" in out.stderr
    wrong = write_json(tmp_path / "wrong.json", {"type": "ICEBERG", "writer": dict(writer, aws_secret_key="wrong")})
    out = sync("check", "--destination", wrong, check=False)
    assert out.returncode == 1 and "wrong" not in out.stderr.replace("wrong.json", ""), out.stderr
    both = sync("check", "--config", destination, "--destination", destination, check=False)
    assert both.returncode == 1 and "either --config source.json or --destination" in both.stderr


def test_discover_writes_and_merges_streams(postgres, tmp_path):  # noqa: F811
    postgres.sql("CREATE DATABASE shop")
    postgres.sql("""
        CREATE SCHEMA sales;
        CREATE TABLE public.customers (id bigint PRIMARY KEY, name text NOT NULL, born date, vip boolean,
                                       balance numeric(12, 2), tags text[], profile jsonb);
        CREATE TABLE sales.orders (shop int, number int, placed timestamptz, amount double precision,
                                   PRIMARY KEY (number, shop));
        CREATE TABLE public.events (payload text);
        CREATE PUBLICATION shop_pub FOR ALL TABLES;""", database="shop")
    config = write_json(tmp_path / "source.json", postgres.source_config(
        database="shop", update_method={"replication_slot": "shop_slot", "publication": "shop_pub"}))
    out = sync("discover", "--config", config)
    assert "3 streams (3 selected) written to " in out.stdout, out.stdout
    streams = json.loads((tmp_path / "streams.json").read_text())
    by_name = {s["stream"]["name"]: s["stream"] for s in streams["streams"]}
    assert set(by_name) == {"customers", "orders", "events"}
    customers = by_name["customers"]
    assert customers["namespace"] == "public" and customers["source_defined_primary_key"] == ["id"]
    assert customers["sync_mode"] == "cdc"
    assert set(customers["supported_sync_modes"]) == {"full_refresh", "incremental", "cdc", "strict_cdc"}
    properties = customers["type_schema"]["properties"]
    assert properties["id"]["type"] == ["integer"] and properties["name"]["type"] == ["string"]
    assert properties["vip"]["type"] == ["boolean", "null"] and properties["tags"]["type"] == ["array", "null"]
    assert set(customers["available_cursor_fields"]) == {"id", "born", "balance"}
    assert by_name["orders"]["namespace"] == "sales"
    assert by_name["orders"]["source_defined_primary_key"] == ["number", "shop"]  # the key's own order
    assert by_name["events"]["source_defined_primary_key"] == []
    assert {s["stream_name"] for ns in streams["selected_streams"].values() for s in ns} == {
        "customers", "orders", "events"}

    # The user keeps two streams and sets a mode; a new table appears; discover merges.
    streams["selected_streams"] = {"public": [{"stream_name": "customers", "partition_regex": "/{born, year}",
                                               "normalization": True, "append_mode": False}],
                                   "sales": [{"stream_name": "orders", "partition_regex": "", "normalization": True,
                                              "append_mode": True}]}
    for entry in streams["streams"]:
        if entry["stream"]["name"] == "orders":
            entry["stream"]["sync_mode"] = "full_refresh"
    write_json(tmp_path / "edited.json", streams)
    postgres.sql("CREATE TABLE public.refunds (id int PRIMARY KEY)", database="shop")
    out = sync("discover", "--config", config, "--catalog", tmp_path / "edited.json")
    assert "4 streams (2 selected)" in out.stdout, out.stdout
    merged = json.loads((tmp_path / "edited.json").read_text())
    by_name = {s["stream"]["name"]: s["stream"] for s in merged["streams"]}
    assert by_name["orders"]["sync_mode"] == "full_refresh" and "refunds" in by_name
    assert merged["selected_streams"]["public"][0]["partition_regex"] == "/{born, year}"
    assert merged["selected_streams"]["sales"][0]["append_mode"] is True

    # Only the schemas named in source.json.
    narrowed = write_json(tmp_path / "narrow.json", postgres.source_config(database="shop", schemas=["sales"]))
    sync("discover", "--config", narrowed, "--streams", tmp_path / "narrow-streams.json")
    names = [s["stream"]["name"] for s in json.loads((tmp_path / "narrow-streams.json").read_text())["streams"]]
    assert names == ["orders"]
    assert all(s["stream"]["sync_mode"] == "full_refresh"
               for s in json.loads((tmp_path / "narrow-streams.json").read_text())["streams"])


def test_pgoutput_decoder_reads_a_real_stream(postgres):  # noqa: F811
    """The C++ decoder on the messages PostgreSQL 15's pgoutput emits: every change kind, TOAST,
    key updates, REPLICA IDENTITY FULL, TRUNCATE, an enum's type, a large transaction streamed; and
    the type mapping on the catalog entries of real columns (domains, enums, arrays, numerics); the
    replication connection: a slot's exported snapshot and its stream meet with the row committed
    between them seen once, and an acknowledgement becomes the slot's confirmed_flush_lsn."""
    env = dict(os.environ, SERAC_TEST_PG=f"{postgres.host}:{postgres.port}")
    out = subprocess.run([SYNC_TEST, "--gtest_filter=PgoutputFromPostgres.*:TypeMappingTest.ColumnsOfARealPostgres:ReplicationFromPostgres.*"], env=env, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0 and "[  PASSED  ] 4 tests" in out.stdout, out.stdout[-4000:]
