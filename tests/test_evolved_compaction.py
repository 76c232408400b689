"""Compaction of tables whose schema changed, as Java Iceberg compacts them: older files read by
field id and written in the current schema (renamed columns by id, widened types widened, added
columns null or their initial-default, dropped columns gone). Tables evolved by PyIceberg, by Spark
(add, drop, rename, widen, reorder, a nested field) and by `serac sync` after an ALTER TABLE at the
source; each compacted by the server's job and read afterwards by PyIceberg, DuckDB and Spark with
the same rows as before."""
from __future__ import annotations

import decimal
import sys
from pathlib import Path

import pyarrow as pa
import pytest
from pyiceberg.schema import Schema
from pyiceberg.types import DecimalType, DoubleType, FloatType, IntegerType, LongType, NestedField, StringType, StructType

from catalog_util import CATALOG_BASE, CatalogApi, catalog, catalog_api, load_pyiceberg_catalog, warehouse  # noqa: F401
from pg_util import postgres  # noqa: F401
from s3util import ACCESS_KEY, REGION, SECRET_KEY
from spark_util import add_sigv4_catalog, spark, spark_available  # noqa: F401
from test_maintenance import COMPACTION, table_path, wait_for_job
from test_sync_run import assert_equal, db, run_sync, setup_files  # noqa: F401
from test_table_writes import serac

sys.path.insert(0, str(Path(__file__).resolve().parent / "catalog_tools"))
import duckdb_offline  # noqa: E402


def plain(value):
    """One form for what the readers return: Spark Rows and DuckDB structs as dicts, floats as floats."""
    if hasattr(value, "asDict"):
        return {k: plain(v) for k, v in value.asDict(recursive=True).items()}
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, float):
        return round(value, 6)
    return value


def sorted_rows(rows: list[dict]) -> list[dict]:
    return sorted((plain(row) for row in rows), key=lambda row: row["id"])


def by_pyiceberg(server, warehouse, name: str) -> list[dict]:  # noqa: F811
    table = load_pyiceberg_catalog(server.endpoint, warehouse).load_table(name)
    return sorted_rows(table.scan().to_arrow().to_pylist())


def by_duckdb(server, warehouse, name: str) -> list[dict]:  # noqa: F811
    duck = duckdb_offline.connect()
    try:
        duckdb_offline.attach_iceberg_catalog(duck, "cat", endpoint=server.endpoint + CATALOG_BASE, warehouse=warehouse,
                                              access_key_id=ACCESS_KEY, secret_access_key=SECRET_KEY, region=REGION)
        cursor = duck.execute(f"SELECT * FROM cat.{name}")
        names = [d[0] for d in cursor.description]
        return sorted_rows([dict(zip(names, row)) for row in cursor.fetchall()])
    finally:
        duck.close()


def by_spark(spark, server, warehouse, name: str) -> list[dict]:  # noqa: F811
    cat = add_sigv4_catalog(spark, server.endpoint, warehouse)
    return sorted_rows([row.asDict(recursive=True) for row in spark.table(f"{cat}.{name}").collect()])


def compact(server, warehouse, name: str) -> dict:  # noqa: F811
    api = CatalogApi(server.endpoint)
    started = api.ok("POST", table_path(warehouse, name, f"/{COMPACTION}/run"), expect=(202,)).json()
    job = wait_for_job(api, warehouse, name, COMPACTION, started["jobId"])
    assert job["status"] == "succeeded", job
    return job


def live_files(server, warehouse, name: str) -> tuple[int, int]:  # noqa: F811
    """(data files, delete files) of the current snapshot."""
    table = load_pyiceberg_catalog(server.endpoint, warehouse).load_table(name)
    summary = table.current_snapshot().summary
    return int(summary["total-data-files"]), int(summary["total-delete-files"])


def test_a_table_pyiceberg_evolved_is_compacted(server, catalog, warehouse):  # noqa: F811
    name = "evolved.by_pyiceberg"
    catalog.create_namespace_if_not_exists("evolved")
    schema = Schema(NestedField(1, "id", IntegerType(), required=True),
                    NestedField(2, "name", StringType()),
                    NestedField(3, "score", FloatType()),
                    NestedField(4, "price", DecimalType(9, 2)),
                    NestedField(5, "gone", StringType()),
                    NestedField(6, "point", StructType(NestedField(7, "x", IntegerType(), required=True))))
    table = catalog.create_table(name, schema, properties={"format-version": "2"})

    def append(rows):
        current = catalog.load_table(name)
        current.append(pa.Table.from_pylist(rows, schema=current.schema().as_arrow()))

    append([{"id": i, "name": f"n{i}", "score": i / 2, "price": decimal.Decimal(f"{i}.25"), "gone": "g",
             "point": {"x": i}} for i in range(0, 20)])
    with table.update_schema() as update:
        update.rename_column("name", "full_name")
        update.update_column("id", LongType())
        update.update_column("score", DoubleType())
        update.update_column("price", DecimalType(20, 2))
        update.add_column("region", StringType())
        update.add_column(("point", "y"), IntegerType())
    append([{"id": 10_000_000_000 + i, "full_name": f"m{i}", "score": 1e300, "price": decimal.Decimal("123456789012345678.99"),
             "gone": None, "region": "eu", "point": {"x": i, "y": -i}} for i in range(5)])
    table = catalog.load_table(name)
    with table.update_schema() as update:
        update.delete_column("gone")
        update.move_first("region")
    append([{"id": 100 + i, "full_name": None, "score": None, "price": None, "region": "us", "point": None}
            for i in range(5)])
    catalog.load_table(name).delete("id < 3")
    expected = by_pyiceberg(server, warehouse, name)
    assert len(expected) == 27 and list(expected[0]) == ["region", "id", "full_name", "score", "price", "point"]
    assert by_duckdb(server, warehouse, name) == expected

    files_before, _ = live_files(server, warehouse, name)
    job = compact(server, warehouse, name)
    assert job["filesRead"] == files_before and job["filesWritten"] == 1, job
    assert live_files(server, warehouse, name)[0] == 1
    assert by_pyiceberg(server, warehouse, name) == expected
    assert by_duckdb(server, warehouse, name) == expected


def test_initial_defaults_are_written_by_compaction(server, catalog, warehouse, tmp_path):  # noqa: F811
    """A v3 column added with an initial-default: rows written before it read as the default, and
    compaction writes the default into them."""
    name = "evolved.defaults"
    catalog.create_namespace_if_not_exists("evolved")
    path = tmp_path / "first.parquet"
    import pyarrow.parquet as pq
    pq.write_table(pa.table({"id": pa.array(range(10), pa.int64())}), path)
    table = catalog.create_table(name, Schema(NestedField(1, "id", LongType())), properties={"format-version": "3"})
    serac(server, "table", "load", warehouse, "evolved", "defaults", path)
    with table.update_schema() as update:
        update.add_column("region", StringType(), default_value="eu")
        update.add_column("rank", IntegerType(), default_value=7)
    path = tmp_path / "second.parquet"
    pq.write_table(pa.table({"id": pa.array([10, 11], pa.int64()), "region": ["us", None],
                             "rank": pa.array([1, None], pa.int32())}), path)
    serac(server, "table", "load", warehouse, "evolved", "defaults", path)
    expected = [{"id": i, "region": "eu", "rank": 7} for i in range(10)] + [
        {"id": 10, "region": "us", "rank": 1}, {"id": 11, "region": None, "rank": None}]
    assert by_pyiceberg(server, warehouse, name) == expected

    compact(server, warehouse, name)
    assert live_files(server, warehouse, name)[0] == 1
    assert by_pyiceberg(server, warehouse, name) == expected
    # DuckDB reads no initial-default; after compaction there is none left to read.
    assert by_duckdb(server, warehouse, name) == expected


@pytest.mark.skipif(not spark_available(), reason="Spark is installed by scripts/install-spark.sh")
def test_a_table_spark_evolved_is_compacted(spark, server, warehouse):  # noqa: F811
    cat = add_sigv4_catalog(spark, server.endpoint, warehouse)
    spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {cat}.evolved")
    t = f"{cat}.evolved.by_spark"
    spark.sql(f"CREATE TABLE {t} (id int NOT NULL, name string, score float, price decimal(9, 2), gone string, "
              "point struct<x: int>, day date) USING iceberg PARTITIONED BY (bucket(2, id)) "
              "TBLPROPERTIES ('format-version'='2', 'write.delete.mode'='merge-on-read', "
              "'write.update.mode'='merge-on-read')")
    spark.sql(f"INSERT INTO {t} SELECT CAST(id AS int), concat('n', id), id / 2, id + 0.25, 'g', named_struct('x', id), "
              f"date_add(DATE '2024-01-01', CAST(id AS int)) FROM range(0, 40) AS r(id)")
    spark.sql(f"ALTER TABLE {t} RENAME COLUMN name TO full_name")
    spark.sql(f"ALTER TABLE {t} ALTER COLUMN id TYPE bigint")
    spark.sql(f"ALTER TABLE {t} ALTER COLUMN score TYPE double")
    spark.sql(f"ALTER TABLE {t} ALTER COLUMN price TYPE decimal(20, 2)")
    spark.sql(f"ALTER TABLE {t} ADD COLUMN region string FIRST")
    spark.sql(f"ALTER TABLE {t} ADD COLUMN point.y int")
    spark.sql(f"INSERT INTO {t} VALUES ('eu', 10000000000, 'm', 1e300, 123456789012345678.99, NULL, "
              "named_struct('x', 1, 'y', 2), DATE '2030-01-01')")
    spark.sql(f"ALTER TABLE {t} DROP COLUMN gone")
    spark.sql(f"ALTER TABLE {t} ALTER COLUMN day AFTER region")
    spark.sql(f"INSERT INTO {t} (region, day, id, full_name, score, price, point) VALUES "
              "('us', NULL, 41, NULL, NULL, NULL, NULL), "
              "('us', DATE '1970-01-01', 42, 'x', 0.5, 1.00, named_struct('x', 0, 'y', NULL))")
    spark.sql(f"DELETE FROM {t} WHERE id % 9 = 0")
    spark.sql(f"UPDATE {t} SET full_name = 'updated' WHERE id = 5")
    name = "evolved.by_spark"
    expected = by_spark(spark, server, warehouse, name)
    assert len(expected) == 38 and list(expected[0]) == ["region", "day", "id", "full_name", "score", "price", "point"]
    assert by_pyiceberg(server, warehouse, name) == expected
    assert by_duckdb(server, warehouse, name) == expected
    assert live_files(server, warehouse, name)[1] > 0

    compact(server, warehouse, name)
    files, deletes = live_files(server, warehouse, name)
    assert deletes == 0 and files <= 2, (files, deletes)
    assert by_spark(spark, server, warehouse, name) == expected
    assert by_pyiceberg(server, warehouse, name) == expected
    assert by_duckdb(server, warehouse, name) == expected


def test_a_cdc_table_after_add_column_is_compacted(db, server, warehouse, tmp_path):  # noqa: F811
    """The review's case: a replicated table whose source got an ADD COLUMN kept growing because
    compaction refused it; now it is compacted to the source's rows."""
    db.sql("CREATE TABLE items (id int PRIMARY KEY, v text, n numeric(10, 2));"
           "CREATE PUBLICATION serac_pub FOR TABLE items;"
           "INSERT INTO items SELECT i, 'v' || i, i * 1.5 FROM generate_series(1, 2000) i;")
    args = setup_files(db, server, warehouse, tmp_path, ["items"], "evolved_slot")
    run_sync(args)
    db.sql("ALTER TABLE items ADD COLUMN extra int; UPDATE items SET extra = id WHERE id % 3 = 0;"
           "ALTER TABLE items RENAME COLUMN v TO label; DELETE FROM items WHERE id % 7 = 0;"
           "ALTER TABLE items ALTER COLUMN n TYPE numeric(16, 2); UPDATE items SET n = 12345678901234.5 WHERE id = 1;")
    run_sync(args)
    db.sql("UPDATE items SET label = 'again' WHERE id % 11 = 0; INSERT INTO items (id, label, extra) VALUES (5000, 'new', 1)")
    run_sync(args)
    assert_equal(db, server, warehouse, "items", ("duckdb", "pyiceberg"))
    assert live_files(server, warehouse, "replica.items")[1] > 0

    compact(server, warehouse, "replica.items")
    files, deletes = live_files(server, warehouse, "replica.items")
    assert deletes == 0 and files == 1, (files, deletes)
    assert_equal(db, server, warehouse, "items", ("duckdb", "pyiceberg"))
