"""The Iceberg REST catalog through DuckDB 1.5.5's iceberg extension (loaded offline, SigV4 with
signing name s3tables), interoperating with PyIceberg in both directions."""

from __future__ import annotations

import sys
from pathlib import Path

import pyarrow as pa
import pytest
from pyiceberg.schema import Schema
from pyiceberg.types import DoubleType, LongType, NestedField, StringType

from catalog_util import CATALOG_BASE, catalog, catalog_api, warehouse  # noqa: F401
from s3util import ACCESS_KEY, REGION, SECRET_KEY

sys.path.insert(0, str(Path(__file__).resolve().parent / "catalog_tools"))
import duckdb_offline  # noqa: E402


@pytest.fixture
def duck(server, warehouse):
    """A DuckDB connection with the test's warehouse attached as `cat`."""
    con = duckdb_offline.connect()
    host_port = server.endpoint.split("://", 1)[1]
    con.execute(
        f"CREATE SECRET serac_s3 (TYPE s3, KEY_ID '{ACCESS_KEY}', SECRET '{SECRET_KEY}', REGION '{REGION}', "
        f"ENDPOINT '{host_port}', URL_STYLE 'path', USE_SSL false)")
    con.execute(
        f"ATTACH '{warehouse}' AS cat (TYPE iceberg, ENDPOINT '{server.endpoint}{CATALOG_BASE}', "
        f"AUTHORIZATION_TYPE 'sigv4', SIGV4_SERVICE 's3tables', SIGV4_REGION '{REGION}', SECRET serac_s3)")
    yield con
    con.close()


def test_duckdb_reads_pyiceberg_table(catalog, duck):
    catalog.create_namespace("shared")
    schema = Schema(NestedField(1, "id", LongType(), required=False),
                    NestedField(2, "name", StringType(), required=False),
                    NestedField(3, "price", DoubleType(), required=False))
    table = catalog.create_table("shared.items", schema)
    data = pa.Table.from_pydict({"id": [1, 2, 3], "name": ["a", "b", None], "price": [1.5, 2.0, 3.25]},
                                schema=pa.schema([("id", pa.int64()), ("name", pa.string()), ("price", pa.float64())]))
    table.append(data)
    table.append(pa.Table.from_pylist([{"id": 4, "name": "d", "price": 0.0}], schema=data.schema))
    table.delete("id = 2")

    got = duck.execute("SELECT id, name, price FROM cat.shared.items ORDER BY id").fetchall()
    assert got == [(1, "a", 1.5), (3, None, 3.25), (4, "d", 0.0)]
    schemas = {row[0] for row in duck.execute(
        "SELECT schema_name FROM duckdb_schemas() WHERE database_name = 'cat'").fetchall()}
    assert "shared" in schemas


def test_pyiceberg_reads_duckdb_table(catalog, duck):
    duck.execute("CREATE SCHEMA cat.made_by_duck")
    duck.execute("CREATE TABLE cat.made_by_duck.t (id BIGINT, name VARCHAR)")
    duck.execute("INSERT INTO cat.made_by_duck.t VALUES (1, 'one'), (2, 'two')")
    duck.execute("INSERT INTO cat.made_by_duck.t VALUES (3, 'three')")
    assert duck.execute("SELECT count(*) FROM cat.made_by_duck.t").fetchone() == (3,)

    assert catalog.list_tables("made_by_duck") == [("made_by_duck", "t")]
    table = catalog.load_table("made_by_duck.t")
    assert [field.name for field in table.schema().fields] == ["id", "name"]
    got = sorted(table.scan().to_arrow().to_pylist(), key=lambda row: row["id"])
    assert got == [{"id": 1, "name": "one"}, {"id": 2, "name": "two"}, {"id": 3, "name": "three"}]
    assert len(table.snapshots()) == 2


def test_duckdb_create_table_as_select_and_drop(catalog, duck):
    duck.execute("CREATE SCHEMA cat.ctas")
    duck.execute("CREATE TABLE cat.ctas.squares AS SELECT i AS n, i * i AS sq FROM range(1, 6) t(i)")
    table = catalog.load_table("ctas.squares")
    got = sorted(table.scan().to_arrow().to_pylist(), key=lambda row: row["n"])
    assert [(row["n"], row["sq"]) for row in got] == [(n, n * n) for n in range(1, 6)]

    duck.execute("DROP TABLE cat.ctas.squares")
    assert not catalog.table_exists("ctas.squares")


def test_format_version_3_table(catalog, duck):
    # PyIceberg creates the v3 table (it cannot write v3 manifests); DuckDB appends with row lineage.
    catalog.create_namespace("v3")
    schema = Schema(NestedField(1, "id", LongType(), required=False),
                    NestedField(2, "name", StringType(), required=False))
    catalog.create_table("v3.t", schema, properties={"format-version": "3"})
    duck.execute("INSERT INTO cat.v3.t VALUES (1, 'a'), (2, 'b')")
    duck.execute("INSERT INTO cat.v3.t VALUES (3, 'c')")
    assert duck.execute("SELECT id, name FROM cat.v3.t ORDER BY id").fetchall() == [(1, "a"), (2, "b"), (3, "c")]

    table = catalog.load_table("v3.t")
    assert table.format_version == 3
    got = sorted(table.scan().to_arrow().to_pylist(), key=lambda row: row["id"])
    assert got == [{"id": 1, "name": "a"}, {"id": 2, "name": "b"}, {"id": 3, "name": "c"}]
    snapshots = table.snapshots()
    assert [snapshot.first_row_id for snapshot in snapshots] == [0, 2]
    assert table.metadata.next_row_id == 3


def test_duckdb_without_a_region_is_served(server, s3):
    """DuckDB's S3 secret without REGION signs with an empty region ("AK/DAY//s3/aws4_request"),
    which MinIO accepts: serac verifies the signature over that scope and serves it too."""
    bucket = f"noregion-{__import__('uuid').uuid4().hex[:8]}"
    s3.create_bucket(Bucket=bucket)
    s3.put_object(Bucket=bucket, Key="rows.csv", Body=b"id,name\n1,ann\n2,bob\n")
    con = duckdb_offline.connect()
    host_port = server.endpoint.split("://", 1)[1]
    con.execute(f"CREATE SECRET plain (TYPE s3, KEY_ID '{ACCESS_KEY}', SECRET '{SECRET_KEY}', "
                f"ENDPOINT '{host_port}', URL_STYLE 'path', USE_SSL false)")
    assert con.execute(f"SELECT count(*) FROM read_csv('s3://{bucket}/rows.csv')").fetchone()[0] == 2
    con.execute(f"COPY (SELECT 3 AS id) TO 's3://{bucket}/out.parquet' (FORMAT parquet)")
    assert s3.head_object(Bucket=bucket, Key="out.parquet")["ContentLength"] > 0
    con.close()
