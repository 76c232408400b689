"""Spark SQL (local[2], iceberg-spark-runtime 1.12.0 with the Iceberg SQL extensions) against
serac's REST catalog: SigV4-signed catalog calls with S3FileIO on serac for the data, and one
catalog over OAuth2 client credentials that touches data only through vended credentials. The Spark
line is the installed PySpark's: 3.5 in .venv, 4.1 in .venv-spark41 (test_spark41.py runs this
module there), each with its own runtime jar (tests/spark_util.py).

Every test gets a fresh warehouse and its own Spark catalog over it; one SparkSession serves the
whole module. Format v2 and v3 tables are covered where the engine behaves differently (delete
files: position deletes on v2, deletion vectors in Puffin files on v3). The jars come from
scripts/install-spark.sh; nothing is downloaded at run time."""

from __future__ import annotations

import datetime
import os
import subprocess
import threading

import pytest
import requests

from catalog_util import catalog_api, list_keys, split_s3_location, warehouse  # noqa: F401
from s3util import ACCESS_KEY, SECRET_KEY
from spark_util import add_oauth2_catalog, add_sigv4_catalog, requires_spark, rows, spark  # noqa: F401

pytestmark = [requires_spark, pytest.mark.timeout(300)]

FORMAT_VERSIONS = [2, 3]
MERGE_ON_READ = ("'write.delete.mode'='merge-on-read', 'write.update.mode'='merge-on-read', "
                 "'write.merge.mode'='merge-on-read'")
CONTENT_POSITION_DELETES = 1


@pytest.fixture
def cat(spark, server, warehouse):
    """A SigV4 Spark catalog over the test's warehouse, with namespace `db` created through Spark."""
    name = add_sigv4_catalog(spark, server.endpoint, warehouse)
    spark.sql(f"CREATE NAMESPACE {name}.db")
    return name


def table_metadata(catalog_api, warehouse, table: str) -> dict:
    response = catalog_api.load_table(warehouse, "db", table)
    assert response.status_code == 200, response.text[:500]
    return response.json()["metadata"]


def snapshot_ids(spark, table: str) -> list[int]:
    return [row[0] for row in spark.sql(f"SELECT snapshot_id FROM {table}.snapshots ORDER BY committed_at").collect()]


def catalog_views(spark, cat: str) -> list[tuple]:
    """SHOW VIEWS without the session's temporary views."""
    return [row for row in rows(spark, f"SHOW VIEWS IN {cat}.db") if not row[2]]


def row_id(spark, table: str, id_value: int) -> int:
    return spark.sql(f"SELECT _row_id FROM {table} WHERE id = {id_value}").collect()[0][0]


def assert_row_lineage(spark, catalog_api, warehouse, table: str, name: str) -> None:
    """v3: the catalog hands every snapshot the next free row ids, and every live row has its own."""
    metadata = table_metadata(catalog_api, warehouse, name)
    next_row_id = 0
    for snapshot in sorted(metadata["snapshots"], key=lambda s: s["sequence-number"]):
        assert snapshot["first-row-id"] == next_row_id, snapshot
        next_row_id += snapshot["added-rows"]
    assert metadata["next-row-id"] == next_row_id
    row_ids = [row[0] for row in spark.sql(f"SELECT _row_id FROM {table}").collect()]
    assert len(set(row_ids)) == len(row_ids) and all(0 <= r < next_row_id for r in row_ids), row_ids


# --- Create, sort order, insert, metadata tables --------------------------------------------------


@pytest.mark.parametrize("format_version", FORMAT_VERSIONS)
def test_create_partitioned_sorted_insert_and_metadata_tables(spark, cat, catalog_api, warehouse, s3, format_version):
    t = f"{cat}.db.events"
    spark.sql(f"CREATE TABLE {t} (id bigint, category string, amount double, ts timestamp) USING iceberg "
              f"PARTITIONED BY (category) TBLPROPERTIES ('format-version'='{format_version}')")
    spark.sql(f"ALTER TABLE {t} WRITE ORDERED BY id")
    spark.sql(f"INSERT INTO {t} VALUES (3, 'b', 3.5, TIMESTAMP '2024-01-03 00:00:00'), "
              f"(2, 'a', 2.5, TIMESTAMP '2024-01-02 00:00:00'), (1, 'a', 1.5, TIMESTAMP '2024-01-01 00:00:00')")
    spark.sql(f"INSERT INTO {t} VALUES (4, 'c', 4.5, NULL)")

    assert rows(spark, f"SELECT id, category, amount, CAST(ts AS string) FROM {t}") == [
        (1, "a", 1.5, "2024-01-01 00:00:00"), (2, "a", 2.5, "2024-01-02 00:00:00"),
        (3, "b", 3.5, "2024-01-03 00:00:00"), (4, "c", 4.5, None)]
    # One small file per partition is read by one task in file order: the writer sorted by id.
    assert [row[0] for row in spark.sql(f"SELECT id FROM {t} WHERE category = 'a'").collect()] == [1, 2]

    metadata = table_metadata(catalog_api, warehouse, "events")
    assert metadata["format-version"] == format_version
    sort_order = next(order for order in metadata["sort-orders"] if order["order-id"] == metadata["default-sort-order-id"])
    id_field = next(field["id"] for field in metadata["schemas"][-1]["fields"] if field["name"] == "id")
    assert [(f["source-id"], f["direction"]) for f in sort_order["fields"]] == [(id_field, "asc")]
    spec = next(s for s in metadata["partition-specs"] if s["spec-id"] == metadata["default-spec-id"])
    assert [(f["name"], f["transform"]) for f in spec["fields"]] == [("category", "identity")]

    # Metadata tables: one data file per partition and insert.
    assert rows(spark, f"SELECT partition.category, record_count, file_count FROM {t}.partitions") == [
        ("a", 2, 1), ("b", 1, 1), ("c", 1, 1)]
    assert rows(spark, f"SELECT DISTINCT file_format, content FROM {t}.files") == [("PARQUET", 0)]
    assert rows(spark, f"SELECT count(*), sum(record_count) FROM {t}.files") == [(3, 4)]
    snapshots = spark.sql(f"SELECT snapshot_id, parent_id, operation, summary['added-records'] "
                          f"FROM {t}.snapshots ORDER BY committed_at").collect()
    assert [(row[2], row[3]) for row in snapshots] == [("append", "3"), ("append", "1")]
    assert snapshots[1][1] == snapshots[0][0]
    history = spark.sql(f"SELECT snapshot_id, is_current_ancestor FROM {t}.history ORDER BY made_current_at").collect()
    assert [tuple(row) for row in history] == [(snapshots[0][0], True), (snapshots[1][0], True)]
    assert metadata["current-snapshot-id"] == snapshots[1][0]
    assert rows(spark, f"SHOW TABLES IN {cat}.db") == [("db", "events", False)]

    # The metadata log ends at the current metadata file; every logged file is stored.
    current_location = catalog_api.load_table(warehouse, "db", "events").json()["metadata-location"]
    logged = [row[0] for row in spark.sql(f"SELECT file FROM {t}.metadata_log_entries ORDER BY timestamp").collect()]
    assert len(logged) == 4 and logged[-1] == current_location  # create, sort order, two appends
    for location in logged:
        bucket, key = split_s3_location(location)
        assert list_keys(s3, bucket, key) == [key]


# --- Namespaces -----------------------------------------------------------------------------------


def test_namespaces(spark, cat):
    spark.sql(f"CREATE NAMESPACE {cat}.db.inner")
    spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {cat}.db")
    assert rows(spark, f"SHOW NAMESPACES IN {cat}") == [("db",)]
    assert rows(spark, f"SHOW NAMESPACES IN {cat}.db") == [("db.inner",)]
    spark.sql(f"ALTER NAMESPACE {cat}.db SET PROPERTIES ('team'='data', 'tier'='gold')")
    described = dict(rows(spark, f"DESCRIBE NAMESPACE EXTENDED {cat}.db"))
    assert described["Namespace Name"] == "db"
    assert described["Properties"] == "((team,data), (tier,gold))"

    # A namespace that holds a namespace or a table cannot be dropped.
    with pytest.raises(Exception, match="NamespaceNotEmptyException"):
        spark.sql(f"DROP NAMESPACE {cat}.db")
    spark.sql(f"CREATE TABLE {cat}.db.inner.t (id int) USING iceberg")
    with pytest.raises(Exception, match="NamespaceNotEmptyException"):
        spark.sql(f"DROP NAMESPACE {cat}.db.inner")
    spark.sql(f"DROP TABLE {cat}.db.inner.t")
    spark.sql(f"DROP NAMESPACE {cat}.db.inner")
    assert rows(spark, f"SHOW NAMESPACES IN {cat}.db") == []
    with pytest.raises(Exception, match="(?i)SCHEMA_NOT_FOUND|NoSuchNamespace"):
        spark.sql(f"CREATE TABLE {cat}.missing.t (id int) USING iceberg")


def test_old_metadata_files_are_removed_after_commit(spark, cat, catalog_api, warehouse, s3):
    t = f"{cat}.db.trimmed"
    spark.sql(f"CREATE TABLE {t} (id int) USING iceberg TBLPROPERTIES ("
              f"'write.metadata.delete-after-commit.enabled'='true', 'write.metadata.previous-versions-max'='1')")
    for value in range(3):
        spark.sql(f"INSERT INTO {t} VALUES ({value})")
    assert rows(spark, f"SELECT * FROM {t}") == [(0,), (1,), (2,)]
    response = catalog_api.load_table(warehouse, "db", "trimmed").json()
    logged = [entry["metadata-file"] for entry in response["metadata"]["metadata-log"]]
    assert len(logged) == 1
    bucket, prefix = split_s3_location(response["metadata"]["location"])
    stored = sorted(key for key in list_keys(s3, bucket, prefix + "/metadata/") if key.endswith(".metadata.json"))
    assert stored == sorted(split_s3_location(location)[1] for location in logged + [response["metadata-location"]])


def test_concurrent_appends_all_land(spark, cat):
    """Four threads append at once; losers of the compare-and-swap get 409 and retry."""
    t = f"{cat}.db.contended"
    spark.sql(f"CREATE TABLE {t} (writer int, n int) USING iceberg "
              f"TBLPROPERTIES ('commit.retry.num-retries'='10', 'commit.retry.min-wait-ms'='50')")
    writers = 4
    errors = []

    def append(writer: int) -> None:
        try:
            spark.sql(f"INSERT INTO {t} VALUES ({writer}, 1), ({writer}, 2)")
        except Exception as error:  # noqa: BLE001 - reported below
            errors.append(error)

    threads = [threading.Thread(target=append, args=(writer,)) for writer in range(writers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert rows(spark, f"SELECT * FROM {t}") == [(w, n) for w in range(writers) for n in (1, 2)]
    assert rows(spark, f"SELECT count(*) FROM {t}.snapshots") == [(writers,)]
    # Each append's parent is the previous one: a linear history, nothing lost.
    history = spark.sql(f"SELECT snapshot_id, parent_id FROM {t}.snapshots ORDER BY committed_at").collect()
    assert [row[1] for row in history[1:]] == [row[0] for row in history[:-1]]


# --- CTAS / RTAS (staged creates) -----------------------------------------------------------------


def test_ctas_and_rtas(spark, cat, catalog_api, warehouse):
    source = f"{cat}.db.source"
    spark.sql(f"CREATE TABLE {source} (id int, name string) USING iceberg")
    spark.sql(f"INSERT INTO {source} VALUES (1, 'one'), (2, 'two'), (3, 'three')")

    copy = f"{cat}.db.copy"
    spark.sql(f"CREATE TABLE {copy} USING iceberg PARTITIONED BY (bucket(2, id)) "
              f"TBLPROPERTIES ('format-version'='3') AS SELECT id, upper(name) AS name FROM {source} WHERE id < 3")
    assert rows(spark, f"SELECT * FROM {copy}") == [(1, "ONE"), (2, "TWO")]
    assert table_metadata(catalog_api, warehouse, "copy")["format-version"] == 3

    # A CTAS whose query fails commits nothing: the staged table never becomes visible.
    with pytest.raises(Exception, match="boom"):
        spark.sql(f"CREATE TABLE {cat}.db.broken USING iceberg AS "
                  f"SELECT id, CASE WHEN id = 2 THEN raise_error('boom') ELSE name END AS name FROM {source}")
    assert catalog_api.load_table(warehouse, "db", "broken").status_code == 404
    assert rows(spark, f"SHOW TABLES IN {cat}.db") == [("db", "copy", False), ("db", "source", False)]

    # CTAS onto an existing table fails and leaves it as it was.
    with pytest.raises(Exception, match="(?i)already exists"):
        spark.sql(f"CREATE TABLE {copy} USING iceberg AS SELECT 9 AS id")
    assert rows(spark, f"SELECT * FROM {copy}") == [(1, "ONE"), (2, "TWO")]

    spark.sql(f"REPLACE TABLE {copy} USING iceberg AS SELECT id * 10 AS id, name, length(name) AS len FROM {source}")
    assert rows(spark, f"SELECT * FROM {copy}") == [(10, "one", 3), (20, "two", 3), (30, "three", 5)]
    metadata = table_metadata(catalog_api, warehouse, "copy")
    assert [f["name"] for f in metadata["schemas"][-1]["fields"]] == ["id", "name", "len"]
    assert len(metadata["snapshots"]) == 2, "a replace keeps the table's history"

    spark.sql(f"CREATE OR REPLACE TABLE {cat}.db.fresh USING iceberg AS SELECT 'x' AS tag")
    assert rows(spark, f"SELECT * FROM {cat}.db.fresh") == [("x",)]
    spark.sql(f"CREATE OR REPLACE TABLE {cat}.db.fresh USING iceberg AS SELECT 'y' AS tag, 1 AS n")
    assert rows(spark, f"SELECT * FROM {cat}.db.fresh") == [("y", 1)]


# --- Row-level DML in merge-on-read mode ----------------------------------------------------------


@pytest.mark.parametrize("format_version", FORMAT_VERSIONS)
def test_merge_on_read_dml(spark, cat, catalog_api, warehouse, format_version):
    t = f"{cat}.db.accounts"
    spark.sql(f"CREATE TABLE {t} (id int, region string, balance bigint) USING iceberg PARTITIONED BY (region) "
              f"TBLPROPERTIES ('format-version'='{format_version}', {MERGE_ON_READ})")
    spark.sql(f"INSERT INTO {t} VALUES (1, 'eu', 100), (2, 'eu', 200), (3, 'eu', 300), (4, 'us', 400), (5, 'us', 500)")

    spark.sql(f"INSERT OVERWRITE {t} PARTITION (region = 'us') VALUES (6, 600), (7, 700)")
    assert rows(spark, f"SELECT * FROM {t}") == [
        (1, "eu", 100), (2, "eu", 200), (3, "eu", 300), (6, "us", 600), (7, "us", 700)]

    row_id_of_3 = row_id(spark, t, 3) if format_version == 3 else None
    spark.sql(f"DELETE FROM {t} WHERE id = 2")
    spark.sql(f"UPDATE {t} SET balance = balance + 1 WHERE id IN (3, 7)")
    spark.sql(f"CREATE OR REPLACE TEMPORARY VIEW changes AS SELECT * FROM VALUES "
              f"(1, 'eu', -1), (6, 'us', 0), (8, 'us', 800) AS changes(id, region, balance)")
    spark.sql(f"MERGE INTO {t} AS target USING changes AS source ON target.id = source.id "
              f"WHEN MATCHED AND source.balance < 0 THEN DELETE "
              f"WHEN MATCHED THEN UPDATE SET target.balance = 0 "
              f"WHEN NOT MATCHED THEN INSERT *")

    assert rows(spark, f"SELECT * FROM {t}") == [(3, "eu", 301), (6, "us", 0), (7, "us", 701), (8, "us", 800)]

    # Merge-on-read: the data files of the first insert are still live, masked by delete files.
    delete_files = rows(spark, f"SELECT content, file_format FROM {t}.delete_files")
    expected_format = "PARQUET" if format_version == 2 else "PUFFIN"
    assert delete_files and set(delete_files) == {(CONTENT_POSITION_DELETES, expected_format)}, delete_files
    assert rows(spark, f"SELECT DISTINCT content FROM {t}.files") == [(0,), (CONTENT_POSITION_DELETES,)]
    operations = [row[0] for row in spark.sql(f"SELECT operation FROM {t}.snapshots ORDER BY committed_at").collect()]
    assert operations == ["append", "overwrite", "delete", "overwrite", "overwrite"]
    if format_version == 3:
        # One deletion vector per data file at most: the second delete on the eu file merged into it.
        per_file = rows(spark, f"SELECT referenced_data_file, count(*) FROM {t}.delete_files GROUP BY 1")
        assert all(count == 1 for _, count in per_file), per_file
        assert_row_lineage(spark, catalog_api, warehouse, t, "accounts")
        assert row_id(spark, t, 3) == row_id_of_3, "an updated row keeps its row id"


# --- Server-side scan planning --------------------------------------------------------------------


def plan_requests(server) -> int:
    """How many PlanTableScan and FetchScanTasks calls the server has answered with 200."""
    metrics = requests.get(server.endpoint + "/_serac/metrics", timeout=10).text
    total = 0
    for line in metrics.splitlines():
        if line.startswith("serac_http_requests_total{") and ('operation="PlanTableScan"' in line or
                                                              'operation="FetchScanTasks"' in line) \
                and 'status="200"' in line:
            total += int(float(line.rsplit(" ", 1)[1]))
    return total


@pytest.mark.parametrize("format_version", FORMAT_VERSIONS)
def test_server_side_scan_planning(spark, cat, server, warehouse, format_version):
    """With `scan-planning-mode=server` in a table's load config (its property here), Iceberg 1.12's
    Spark reader plans every scan through serac's plan endpoints and reads the same rows as with its
    own planning: filters on partition and data columns, deletes (position deletes on v2, DVs on
    v3), time travel."""
    t = f"{cat}.db.planned"
    spark.sql(f"CREATE TABLE {t} (id bigint, category string, amount double, day date) USING iceberg "
              f"PARTITIONED BY (category, days(day)) TBLPROPERTIES ('format-version'='{format_version}', "
              f"{MERGE_ON_READ})")
    for batch in range(4):
        values = ", ".join(f"({i}, '{'abc'[i % 3]}', {i * 1.5}, DATE '2026-01-0{1 + batch}')"
                           for i in range(batch * 25, batch * 25 + 25))
        spark.sql(f"INSERT INTO {t} VALUES {values}")
    first_snapshot = snapshot_ids(spark, t)[0]
    spark.sql(f"DELETE FROM {t} WHERE id IN (1, 2, 30, 77)")
    spark.sql(f"UPDATE {t} SET amount = -1 WHERE id % 10 = 5")
    queries = ["SELECT * FROM {t}",
               "SELECT id FROM {t} WHERE category = 'a'",
               "SELECT id, amount FROM {t} WHERE id < 40 AND category IN ('b', 'c')",
               "SELECT count(*), sum(amount) FROM {t} WHERE day >= DATE '2026-01-03'",
               "SELECT id FROM {t} WHERE amount < 0",
               "SELECT * FROM {t} VERSION AS OF " + str(first_snapshot)]
    expected = [rows(spark, q.format(t=t)) for q in queries]
    assert len(expected[0]) == 96 and len(expected[5]) == 25

    spark.sql(f"ALTER TABLE {t} SET TBLPROPERTIES ('scan-planning-mode'='server')")
    planned = f"{add_sigv4_catalog(spark, server.endpoint, warehouse)}.db.planned"
    before = plan_requests(server)
    assert [rows(spark, q.format(t=planned)) for q in queries] == expected
    assert plan_requests(server) >= before + len(queries), "every scan was planned by the server"


# --- Schema and partition evolution ---------------------------------------------------------------


def serac_cli(server, *args) -> str:
    env = dict(os.environ, SERAC_ENDPOINT=server.endpoint, SERAC_ACCESS_KEY=ACCESS_KEY, SERAC_SECRET_KEY=SECRET_KEY)
    out = subprocess.run([os.environ.get("SERAC_BIN", "build/serac"), *map(str, args)], env=env, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
    return out.stdout


@pytest.mark.parametrize("format_version", FORMAT_VERSIONS)
def test_deletes_serac_wrote_and_spark_extends(spark, cat, server, warehouse, tmp_path, format_version):
    """serac loads rows in two commits and packs them (`serac table compact`, a replace-files commit),
    then deletes some (position delete files on v2, DVs on v3); Spark reads without them, deletes
    more itself, and serac deletes again on top (v3: merged into Spark's DV)."""
    table = f"{cat}.db.serac_deletes"
    spark.sql(f"CREATE TABLE {table} (id BIGINT, category STRING) USING iceberg PARTITIONED BY (category) "
              f"TBLPROPERTIES ('format-version'='{format_version}', {MERGE_ON_READ})")
    for first in (0, 50):
        rows_csv = tmp_path / f"rows-{first}.csv"
        rows_csv.write_text("id,category\n" + "".join(f"{i},{'ab'[i % 2]}\n" for i in range(first, first + 50)))
        serac_cli(server, "table", "load", warehouse, "db", "serac_deletes", rows_csv)
    assert "into 2 files" in serac_cli(server, "table", "compact", warehouse, "db", "serac_deletes")
    assert spark.sql(f"SELECT count(*) FROM {table}.files").collect()[0][0] == 2

    def serac_delete(ids):
        keys = tmp_path / f"keys-{ids[0]}.csv"
        keys.write_text("id\n" + "".join(f"{i}\n" for i in ids))
        serac_cli(server, "table", "delete-rows", warehouse, "db", "serac_deletes", "--keys", keys)

    def ids():
        spark.sql(f"REFRESH TABLE {table}")
        return sorted(row[0] for row in spark.sql(f"SELECT id FROM {table}").collect())

    serac_delete([3, 4])
    assert ids() == [i for i in range(100) if i not in (3, 4)]
    spark.sql(f"DELETE FROM {table} WHERE id IN (5, 6)")
    serac_delete([7, 9])
    assert ids() == [i for i in range(100) if i not in (3, 4, 5, 6, 7, 9)]
    formats = {row[0] for row in spark.sql(f"SELECT file_format FROM {table}.delete_files").collect()}
    assert formats == ({"PUFFIN"} if format_version == 3 else {"PARQUET"}), formats
    if format_version == 3:  # one DV per data file: serac merged its deletes into Spark's DVs
        referenced = [row[0] for row in spark.sql(f"SELECT referenced_data_file FROM {table}.delete_files").collect()]
        assert len(referenced) == len(set(referenced)) == 2, referenced
    # serac compacts with every delete applied, Spark's and its own: no delete file is left to read.
    out = serac_cli(server, "table", "compact", warehouse, "db", "serac_deletes")
    assert "6 deleted rows left out" in out, out
    assert ids() == [i for i in range(100) if i not in (3, 4, 5, 6, 7, 9)]
    assert spark.sql(f"SELECT count(*) FROM {table}.delete_files").collect()[0][0] == 0


def test_alter_table_schema_and_partition_evolution(spark, cat, catalog_api, warehouse):
    t = f"{cat}.db.people"
    spark.sql(f"CREATE TABLE {t} (id int, name string, age int, city string) USING iceberg PARTITIONED BY (city)")
    spark.sql(f"INSERT INTO {t} VALUES (1, 'ann', 30, 'oslo'), (2, 'bob', 40, 'rome')")

    spark.sql(f"ALTER TABLE {t} ADD COLUMNS (email string COMMENT 'contact')")
    spark.sql(f"ALTER TABLE {t} RENAME COLUMN name TO full_name")
    spark.sql(f"ALTER TABLE {t} DROP COLUMN age")
    spark.sql(f"ALTER TABLE {t} ALTER COLUMN id TYPE bigint")
    spark.sql(f"INSERT INTO {t} VALUES (5000000000, 'cid', 'oslo', 'c@x')")
    assert rows(spark, f"SELECT id, full_name, city, email FROM {t}") == [
        (1, "ann", "oslo", None), (2, "bob", "rome", None), (5000000000, "cid", "oslo", "c@x")]
    assert [(f.name, f.dataType.simpleString()) for f in spark.table(t).schema.fields] == [
        ("id", "bigint"), ("full_name", "string"), ("city", "string"), ("email", "string")]

    spark.sql(f"ALTER TABLE {t} ADD PARTITION FIELD bucket(4, id) AS id_bucket")
    spark.sql(f"ALTER TABLE {t} DROP PARTITION FIELD city")
    spark.sql(f"INSERT INTO {t} VALUES (3, 'dan', 'rome', NULL)")
    assert rows(spark, f"SELECT id, full_name, city FROM {t} WHERE city = 'rome'") == [(2, "bob", "rome"), (3, "dan", "rome")]

    metadata = table_metadata(catalog_api, warehouse, "people")
    fields = metadata["schemas"][-1]["fields"]
    assert [(f["name"], f["type"]) for f in fields] == [
        ("id", "long"), ("full_name", "string"), ("city", "string"), ("email", "string")]
    assert next(f for f in fields if f["name"] == "email").get("doc") == "contact"
    default_spec = next(s for s in metadata["partition-specs"] if s["spec-id"] == metadata["default-spec-id"])
    assert [(f["name"], f["transform"]) for f in default_spec["fields"]] == [("id_bucket", "bucket[4]")]
    assert len(metadata["partition-specs"]) == 3  # city; city + id_bucket; id_bucket
    assert rows(spark, f"SELECT spec_id, count(*) FROM {t}.files GROUP BY spec_id") == [
        (0, 3), (metadata["default-spec-id"], 1)]

    # A narrowing change is refused and leaves the schema as it was.
    with pytest.raises(Exception, match="NOT_SUPPORTED_CHANGE_COLUMN"):
        spark.sql(f"ALTER TABLE {t} ALTER COLUMN id TYPE int")
    assert table_metadata(catalog_api, warehouse, "people")["current-schema-id"] == metadata["current-schema-id"]


# --- Time travel, branches, tags ------------------------------------------------------------------


def test_time_travel_branches_and_tags(spark, cat):
    t = f"{cat}.db.readings"
    spark.sql(f"CREATE TABLE {t} (id int, value string) USING iceberg TBLPROPERTIES ('format-version'='3')")
    spark.sql(f"INSERT INTO {t} VALUES (1, 'a')")
    spark.sql(f"INSERT INTO {t} VALUES (2, 'b')")
    first, second = snapshot_ids(spark, t)
    first_committed_at = spark.sql(f"SELECT date_format(committed_at, 'yyyy-MM-dd HH:mm:ss.SSS') FROM {t}.snapshots "
                                   f"WHERE snapshot_id = {first}").collect()[0][0]

    assert rows(spark, f"SELECT * FROM {t} VERSION AS OF {first}") == [(1, "a")]
    assert rows(spark, f"SELECT * FROM {t} VERSION AS OF {second}") == [(1, "a"), (2, "b")]
    assert rows(spark, f"SELECT * FROM {t} TIMESTAMP AS OF '{first_committed_at}'") == [(1, "a")]
    with pytest.raises(Exception, match="(?i)cannot find a snapshot older than|no snapshot"):
        spark.sql(f"SELECT * FROM {t} TIMESTAMP AS OF '2000-01-01 00:00:00'").collect()

    # A Java transaction that commits two snapshots at once (a delete, then an append) drops only the
    # intermediate one from the history: the time before it still resolves.
    second_committed_at = spark.sql(f"SELECT date_format(committed_at, 'yyyy-MM-dd HH:mm:ss.SSS') FROM "
                                    f"{t}.snapshots WHERE snapshot_id = {second}").collect()[0][0]
    jvm = spark._jvm
    table = spark._jsparkSession.sessionState().catalogManager().catalog(cat).icebergCatalog().loadTable(
        jvm.org.apache.iceberg.catalog.TableIdentifier.parse("db.readings"))
    second_file = table.currentSnapshot().addedDataFiles(table.io()).iterator().next()
    transaction = table.newTransaction()
    transaction.newDelete().deleteFromRowFilter(jvm.org.apache.iceberg.expressions.Expressions.equal("id", 1)).commit()
    transaction.newFastAppend().appendFile(second_file).commit()
    transaction.commitTransaction()
    spark.sql(f"REFRESH TABLE {t}")
    assert rows(spark, f"SELECT * FROM {t}") == [(2, "b"), (2, "b")]
    assert rows(spark, f"SELECT * FROM {t} TIMESTAMP AS OF '{second_committed_at}'") == [(1, "a"), (2, "b")]
    assert rows(spark, f"SELECT * FROM {t} TIMESTAMP AS OF '{first_committed_at}'") == [(1, "a")]
    history = [row[0] for row in spark.sql(f"SELECT snapshot_id FROM {t}.history ORDER BY made_current_at").collect()]
    assert history[:2] == [first, second] and len(history) == 3, history
    # Back to the second snapshot for the branch and tag checks below.
    spark.sql(f"CALL {cat}.system.rollback_to_snapshot('db.readings', {second})")

    spark.sql(f"ALTER TABLE {t} CREATE TAG v1 AS OF VERSION {first}")
    spark.sql(f"ALTER TABLE {t} CREATE BRANCH dev")
    spark.sql(f"INSERT INTO {t}.branch_dev VALUES (3, 'dev-only')")
    spark.sql(f"DELETE FROM {t}.branch_dev WHERE id = 1")

    assert rows(spark, f"SELECT * FROM {t}") == [(1, "a"), (2, "b")], "main is untouched by branch writes"
    assert rows(spark, f"SELECT * FROM {t} VERSION AS OF 'dev'") == [(2, "b"), (3, "dev-only")]
    assert rows(spark, f"SELECT * FROM {t}.branch_dev") == [(2, "b"), (3, "dev-only")]
    assert rows(spark, f"SELECT * FROM {t} VERSION AS OF 'v1'") == [(1, "a")]
    assert rows(spark, f"SELECT name, type, snapshot_id = {second} FROM {t}.refs") == [
        ("dev", "BRANCH", False), ("main", "BRANCH", True), ("v1", "TAG", False)]

    # A tag cannot be written to; dropping it leaves the branch.
    with pytest.raises(Exception):
        spark.sql(f"INSERT INTO {t}.branch_v1 VALUES (9, 'x')")
    spark.sql(f"ALTER TABLE {t} DROP TAG v1")
    assert rows(spark, f"SELECT name FROM {t}.refs") == [("dev",), ("main",)]


# --- Views ----------------------------------------------------------------------------------------


def test_views(spark, cat):
    t = f"{cat}.db.orders"
    spark.sql(f"CREATE TABLE {t} (id int, amount int) USING iceberg")
    spark.sql(f"INSERT INTO {t} VALUES (1, 10), (2, 20), (3, 30)")
    spark.sql(f"CREATE VIEW {cat}.db.big_orders (id, amount COMMENT 'euros') COMMENT 'orders over 15' "
              f"AS SELECT id, amount FROM {t} WHERE amount > 15")
    assert rows(spark, f"SELECT * FROM {cat}.db.big_orders") == [(2, 20), (3, 30)]
    assert catalog_views(spark, cat) == [("db", "big_orders", False)]

    spark.sql(f"INSERT INTO {t} VALUES (4, 40)")
    assert rows(spark, f"SELECT sum(amount) FROM {cat}.db.big_orders") == [(90,)]

    spark.sql(f"CREATE OR REPLACE VIEW {cat}.db.big_orders AS SELECT id FROM {t} WHERE amount > 25")
    assert rows(spark, f"SELECT * FROM {cat}.db.big_orders") == [(3,), (4,)]
    spark.sql(f"DROP VIEW {cat}.db.big_orders")
    assert catalog_views(spark, cat) == []


# --- Rename and purge -----------------------------------------------------------------------------


def test_rename_and_drop_purge(spark, cat, catalog_api, warehouse, s3):
    spark.sql(f"CREATE TABLE {cat}.db.old_name (id int) USING iceberg")
    spark.sql(f"INSERT INTO {cat}.db.old_name VALUES (1), (2)")
    spark.sql(f"CREATE NAMESPACE {cat}.archive")
    spark.sql(f"ALTER TABLE {cat}.db.old_name RENAME TO archive.new_name")  # the target names no catalog
    assert rows(spark, f"SELECT * FROM {cat}.archive.new_name") == [(1,), (2,)]
    assert rows(spark, f"SHOW TABLES IN {cat}.db") == []
    with pytest.raises(Exception, match="(?i)table or view .* cannot be found|TABLE_OR_VIEW_NOT_FOUND"):
        spark.sql(f"SELECT * FROM {cat}.db.old_name").collect()

    location = catalog_api.load_table(warehouse, "archive", "new_name").json()["metadata"]["location"]
    bucket, prefix = split_s3_location(location)
    keys = list_keys(s3, bucket, prefix + "/")
    assert any(key.endswith(".parquet") for key in keys) and any(key.endswith(".metadata.json") for key in keys)

    spark.sql(f"DROP TABLE {cat}.archive.new_name PURGE")
    assert rows(spark, f"SHOW TABLES IN {cat}.archive") == []
    assert list_keys(s3, bucket, prefix + "/") == []


# --- Maintenance procedures -----------------------------------------------------------------------


@pytest.mark.parametrize("format_version", FORMAT_VERSIONS)
def test_maintenance_procedures(spark, cat, catalog_api, warehouse, s3, format_version):
    t = f"{cat}.db.metrics"
    spark.sql(f"CREATE TABLE {t} (id int, name string) USING iceberg "
              f"TBLPROPERTIES ('format-version'='{format_version}', {MERGE_ON_READ})")
    for batch in range(4):
        spark.sql(f"INSERT INTO {t} VALUES ({batch * 2}, 'n{batch * 2}'), ({batch * 2 + 1}, 'n{batch * 2 + 1}')")
    spark.sql(f"DELETE FROM {t} WHERE id = 3")
    expected = [(i, f"n{i}") for i in range(8) if i != 3]
    assert rows(spark, f"SELECT * FROM {t}") == expected
    live_data_files = {row[0] for row in spark.sql(f"SELECT file_path FROM {t}.files WHERE content = 0").collect()}
    assert len(live_data_files) >= 4  # each insert writes one or two files (two tasks)
    # Every data file ever written, including one the delete may have dropped whole.
    old_data_files = {row[0] for row in spark.sql(f"SELECT file_path FROM {t}.all_data_files").collect()}
    assert old_data_files >= live_data_files

    result = spark.sql(f"CALL {cat}.system.rewrite_data_files(table => 'db.metrics', "
                       f"options => map('min-input-files', '2', 'delete-file-threshold', '1'))").collect()[0]
    assert (result["rewritten_data_files_count"], result["added_data_files_count"]) == (len(live_data_files), 1)
    assert rows(spark, f"SELECT * FROM {t}") == expected
    assert rows(spark, f"SELECT count(*) FROM {t}.files WHERE content = 0") == [(1,)]

    result = spark.sql(f"CALL {cat}.system.rewrite_manifests('db.metrics')").collect()[0]
    assert result["added_manifests_count"] >= 1
    assert rows(spark, f"SELECT * FROM {t}") == expected

    snapshots_before = len(snapshot_ids(spark, t))
    assert snapshots_before == 7
    now = spark.sql("SELECT date_format(current_timestamp(), 'yyyy-MM-dd HH:mm:ss.SSS')").collect()[0][0]
    result = spark.sql(f"CALL {cat}.system.expire_snapshots(table => 'db.metrics', older_than => TIMESTAMP '{now}', "
                       f"retain_last => 1)").collect()[0]
    assert result["deleted_data_files_count"] == len(old_data_files)
    assert len(snapshot_ids(spark, t)) == 1
    assert rows(spark, f"SELECT * FROM {t}") == expected
    for path in old_data_files:
        bucket, key = split_s3_location(path)
        assert list_keys(s3, bucket, key) == [], f"expired data file still stored: {path}"

    location = table_metadata(catalog_api, warehouse, "metrics")["location"]
    bucket, prefix = split_s3_location(location)
    orphan_key = f"{prefix}/data/orphan-0001.parquet"
    s3.put_object(Bucket=bucket, Key=orphan_key, Body=b"not referenced by any snapshot")
    # The procedure refuses cut-offs younger than 24 hours, so it lists the whole table location
    # and keeps the fresh orphan; the same action with a cut-off in the future removes exactly it.
    orphans = spark.sql(f"CALL {cat}.system.remove_orphan_files(table => 'db.metrics', prefix_listing => true)")
    assert orphans.collect() == []
    assert list_keys(s3, bucket, orphan_key) == [orphan_key]
    later_ms = int((datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(minutes=5)).timestamp() * 1000)
    jvm = spark._jvm
    table = jvm.org.apache.iceberg.spark.Spark3Util.loadIcebergTable(spark._jsparkSession, t)
    result = (jvm.org.apache.iceberg.spark.actions.SparkActions.get(spark._jsparkSession).deleteOrphanFiles(table)
              .olderThan(later_ms).usePrefixListing(True).execute())
    assert [str(path) for path in result.orphanFileLocations()] == [f"s3://{bucket}/{orphan_key}"]
    assert list_keys(s3, bucket, orphan_key) == []
    assert rows(spark, f"SELECT * FROM {t}") == expected


# --- OAuth2 with vended credentials ---------------------------------------------------------------


def test_oauth2_with_vended_credentials(spark, server, warehouse):
    cat = add_oauth2_catalog(spark, server.endpoint, warehouse)
    spark.sql(f"CREATE NAMESPACE {cat}.vended")
    t = f"{cat}.vended.items"
    spark.sql(f"CREATE TABLE {t} (id int, label string) USING iceberg PARTITIONED BY (label) "
              f"TBLPROPERTIES ('format-version'='3')")
    spark.sql(f"INSERT INTO {t} VALUES (1, 'x'), (2, 'y'), (3, 'x')")
    spark.sql(f"DELETE FROM {t} WHERE id = 2")
    assert rows(spark, f"SELECT * FROM {t}") == [(1, "x"), (3, "x")]
    assert rows(spark, f"SELECT count(*) FROM {t}.snapshots") == [(2,)]
    # The same table read through a SigV4 catalog with static keys.
    other = add_sigv4_catalog(spark, server.endpoint, warehouse)
    assert rows(spark, f"SELECT * FROM {other}.vended.items") == [(1, "x"), (3, "x")]
