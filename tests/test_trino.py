"""Trino against serac: a real Trino server (tests/trino_util.py) with the Iceberg connector on
serac's REST catalog (SigV4 as s3tables) and serac's S3 API. Trino writes (CREATE, INSERT, UPDATE,
DELETE, MERGE, DROP), reads tables PyIceberg wrote, and PyIceberg reads what Trino wrote; the
metadata tables are checked against what happened."""

from __future__ import annotations

import datetime
import decimal

import pyarrow as pa
import pytest
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.transforms import IdentityTransform
from pyiceberg.types import DateType, DoubleType, LongType, NestedField, StringType

from catalog_util import catalog_api, load_pyiceberg_catalog  # noqa: F401
from spark_util import add_sigv4_catalog, spark  # noqa: F401
from trino_util import TrinoQueryError, trino, trino_warehouse  # noqa: F401

pytestmark = pytest.mark.timeout(600)

ORDERS = [
    (1, "eu", "alice", 10.5),
    (2, "eu", "bob", 20.0),
    (3, "us", "carol", 30.25),
    (4, "us", "dave", 40.0),
    (5, "ap", "erin", 50.75),
]


@pytest.fixture(scope="module")
def pyiceberg_catalog(server, trino_warehouse):
    """PyIceberg on the same warehouse as the module's Trino catalog."""
    return load_pyiceberg_catalog(server.endpoint, trino_warehouse)


def values_sql(rows) -> str:
    def literal(value):
        if isinstance(value, str):
            return "'" + value.replace("'", "''") + "'"
        return repr(value)

    return ", ".join("(" + ", ".join(literal(value) for value in row) + ")" for row in rows)


def create_orders(trino, table: str, format_version: int = 2) -> None:
    trino.execute(f"CREATE TABLE {table} (id bigint, region varchar, customer varchar, amount double) "
                  f"WITH (partitioning = ARRAY['region'], format_version = {format_version})")
    assert trino.execute(f"INSERT INTO {table} VALUES {values_sql(ORDERS)}") == len(ORDERS)


def test_create_insert_select_partitioned(trino, pyiceberg_catalog):
    trino.execute("CREATE SCHEMA iceberg.basics")
    assert ("basics",) in trino.query("SHOW SCHEMAS FROM iceberg")
    create_orders(trino, "iceberg.basics.orders")

    assert trino.query("SELECT * FROM iceberg.basics.orders ORDER BY id") == ORDERS
    assert trino.query("SELECT region, count(*), sum(amount) FROM iceberg.basics.orders "
                       "GROUP BY region ORDER BY region") == [("ap", 1, 50.75), ("eu", 2, 30.5), ("us", 2, 70.25)]
    assert trino.query("SELECT customer FROM iceberg.basics.orders WHERE region = 'us' ORDER BY id") == [
        ("carol",), ("dave",)]
    assert trino.query("SHOW TABLES FROM iceberg.basics") == [("orders",)]

    # One data file per partition, each with its own partition value.
    partitions = trino.query('SELECT partition.region, record_count FROM iceberg.basics."orders$partitions" '
                             "ORDER BY 1")
    assert partitions == [("ap", 1), ("eu", 2), ("us", 2)]

    # Another engine sees the same table through serac: PyIceberg reads Trino's files.
    table = pyiceberg_catalog.load_table(("basics", "orders"))
    assert [field.name for field in table.schema().fields] == ["id", "region", "customer", "amount"]
    assert [field.name for field in table.spec().fields] == ["region"]
    assert table.metadata.format_version == 2
    rows = table.scan().to_arrow().sort_by("id").to_pylist()
    assert [(r["id"], r["region"], r["customer"], r["amount"]) for r in rows] == ORDERS

    # A second schema and a duplicate name are refused the way Trino words it.
    with pytest.raises(TrinoQueryError, match="already exists"):
        trino.execute("CREATE TABLE iceberg.basics.orders (id bigint)")
    with pytest.raises(TrinoQueryError, match="already exists"):
        trino.execute("CREATE SCHEMA iceberg.basics")


def test_update_delete_merge(trino, pyiceberg_catalog):
    trino.execute("CREATE SCHEMA iceberg.dml")
    table = "iceberg.dml.orders"
    create_orders(trino, table)

    assert trino.execute(f"UPDATE {table} SET amount = amount * 2 WHERE region = 'eu'") == 2
    assert trino.execute(f"DELETE FROM {table} WHERE id = 3") == 1
    expected = [(1, "eu", "alice", 21.0), (2, "eu", "bob", 40.0), (4, "us", "dave", 40.0), (5, "ap", "erin", 50.75)]
    assert trino.query(f"SELECT * FROM {table} ORDER BY id") == expected

    # MERGE: update a matched row, delete another, insert the unmatched.
    merged = trino.execute(f"""
        MERGE INTO {table} t
        USING (VALUES (1, 'eu', 'alice', 1.0), (4, 'us', 'dave', 0.0), (6, 'ap', 'frank', 60.0))
              AS s (id, region, customer, amount)
        ON t.id = s.id
        WHEN MATCHED AND s.amount = 0 THEN DELETE
        WHEN MATCHED THEN UPDATE SET amount = t.amount + s.amount
        WHEN NOT MATCHED THEN INSERT (id, region, customer, amount) VALUES (s.id, s.region, s.customer, s.amount)
    """)
    assert merged == 3
    expected = [(1, "eu", "alice", 22.0), (2, "eu", "bob", 40.0), (5, "ap", "erin", 50.75), (6, "ap", "frank", 60.0)]
    assert trino.query(f"SELECT * FROM {table} ORDER BY id") == expected

    # Row-level changes on a v2 table are position delete files (content 1) beside the data files.
    contents = dict(trino.query(f'SELECT content, count(*) FROM iceberg.dml."orders$files" GROUP BY content'))
    assert contents.get(1, 0) >= 1, contents
    assert contents.get(0, 0) >= 3, contents

    # PyIceberg applies Trino's delete files and sees the same rows.
    rows = pyiceberg_catalog.load_table(("dml", "orders")).scan().to_arrow().sort_by("id").to_pylist()
    assert [(r["id"], r["region"], r["customer"], r["amount"]) for r in rows] == expected

    # Schema evolution and DROP TABLE.
    trino.execute(f"ALTER TABLE {table} ADD COLUMN note varchar")
    assert trino.execute(f"UPDATE {table} SET note = 'vip' WHERE id = 6") == 1
    assert trino.query(f"SELECT id, note FROM {table} WHERE note IS NOT NULL") == [(6, "vip")]
    trino.execute(f"DROP TABLE {table}")
    assert trino.query("SHOW TABLES FROM iceberg.dml") == []
    assert not pyiceberg_catalog.table_exists(("dml", "orders"))
    trino.execute("DROP SCHEMA iceberg.dml")
    assert ("dml",) not in trino.query("SHOW SCHEMAS FROM iceberg")


def test_reads_table_written_by_pyiceberg(trino, pyiceberg_catalog):
    pyiceberg_catalog.create_namespace("from_pyiceberg")
    schema = Schema(
        NestedField(1, "id", LongType(), required=True),
        NestedField(2, "city", StringType(), required=False),
        NestedField(3, "temperature", DoubleType(), required=False),
        NestedField(4, "day", DateType(), required=False),
    )
    spec = PartitionSpec(PartitionField(source_id=2, field_id=1000, transform=IdentityTransform(), name="city"))
    table = pyiceberg_catalog.create_table(("from_pyiceberg", "weather"), schema=schema, partition_spec=spec)
    arrow_schema = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("city", pa.string()),
                              pa.field("temperature", pa.float64()), pa.field("day", pa.date32())])
    first = [(1, "oslo", -3.5, datetime.date(2026, 1, 5)), (2, "lima", 24.0, datetime.date(2026, 1, 5))]
    second = [(3, "oslo", -1.0, datetime.date(2026, 1, 6)), (4, None, None, None)]
    for batch in (first, second):
        table.append(pa.Table.from_pylist(
            [dict(zip(arrow_schema.names, row)) for row in batch], schema=arrow_schema))

    rows = trino.query("SELECT id, city, temperature, day FROM iceberg.from_pyiceberg.weather ORDER BY id")
    assert rows == first + second
    assert trino.query("SELECT count(*) FROM iceberg.from_pyiceberg.weather WHERE city = 'oslo'") == [(2,)]
    snapshots = trino.query('SELECT snapshot_id, operation FROM iceberg.from_pyiceberg."weather$snapshots" '
                            "ORDER BY committed_at")
    table = pyiceberg_catalog.load_table(("from_pyiceberg", "weather"))
    assert [snapshot_id for snapshot_id, _ in snapshots] == [s.snapshot_id for s in table.snapshots()]
    assert [operation for _, operation in snapshots] == ["append", "append"]

    # Trino appends to PyIceberg's table; PyIceberg sees the new row.
    assert trino.execute("INSERT INTO iceberg.from_pyiceberg.weather VALUES (5, 'lima', 25.5, DATE '2026-01-07')") == 1
    rows = pyiceberg_catalog.load_table(("from_pyiceberg", "weather")).scan().to_arrow().sort_by("id").to_pylist()
    assert [row["id"] for row in rows] == [1, 2, 3, 4, 5]
    assert rows[-1]["temperature"] == 25.5


def test_reads_table_written_by_spark(trino, spark, server, trino_warehouse):
    """Spark writes a partitioned v2 table, then changes it with merge-on-read DELETE and UPDATE
    (position delete files); Trino reads the result and its own append is visible to Spark."""
    catalog = add_sigv4_catalog(spark, server.endpoint, trino_warehouse)
    spark.sql(f"CREATE NAMESPACE {catalog}.from_spark")
    table = f"{catalog}.from_spark.sales"
    spark.sql(f"CREATE TABLE {table} (id bigint, shop string, total double) USING iceberg "
              "PARTITIONED BY (shop) TBLPROPERTIES ('format-version'='2', 'write.delete.mode'='merge-on-read', "
              "'write.update.mode'='merge-on-read')")
    spark.sql(f"INSERT INTO {table} VALUES (1, 'north', 10.0), (2, 'north', 20.0), (3, 'south', 30.0), "
              "(4, 'south', 40.0)")
    spark.sql(f"DELETE FROM {table} WHERE id = 2")
    spark.sql(f"UPDATE {table} SET total = total + 1 WHERE id = 3")

    expected = [(1, "north", 10.0), (3, "south", 31.0), (4, "south", 40.0)]
    assert trino.query("SELECT id, shop, total FROM iceberg.from_spark.sales ORDER BY id") == expected
    contents = dict(trino.query('SELECT content, count(*) FROM iceberg.from_spark."sales$files" GROUP BY content'))
    assert contents.get(1, 0) >= 1, contents  # Spark's position deletes, applied by Trino
    assert trino.query('SELECT count(*) FROM iceberg.from_spark."sales$snapshots"') == [(3,)]

    assert trino.execute("INSERT INTO iceberg.from_spark.sales VALUES (5, 'north', 50.0)") == 1
    assert [tuple(row) for row in spark.sql(f"SELECT id, shop, total FROM {table} ORDER BY id").collect()] == (
        expected + [(5, "north", 50.0)])


def test_metadata_tables(trino):
    trino.execute("CREATE SCHEMA iceberg.meta")
    table = "iceberg.meta.events"
    trino.execute(f"CREATE TABLE {table} (id bigint, kind varchar, price decimal(10, 2)) "
                  "WITH (partitioning = ARRAY['kind'])")
    assert trino.execute(f"INSERT INTO {table} VALUES (1, 'click', 1.50), (2, 'view', 0.25)") == 2
    assert trino.execute(f"INSERT INTO {table} VALUES (3, 'click', 2.00)") == 1
    assert trino.execute(f"DELETE FROM {table} WHERE kind = 'view'") == 1

    assert trino.query(f"SELECT id, kind, price FROM {table} ORDER BY id") == [
        (1, "click", decimal.Decimal("1.50")), (3, "click", decimal.Decimal("2.00"))]

    # CREATE TABLE commits an empty snapshot, then one per statement.
    snapshots = trino.query(f'SELECT snapshot_id, parent_id, operation, summary FROM iceberg.meta."events$snapshots" '
                            "ORDER BY committed_at")
    assert len(snapshots) == 4, snapshots
    operations = [operation for _, _, operation, _ in snapshots]
    assert operations[1:3] == ["append", "append"]
    assert operations[3] in ("delete", "overwrite")
    for (previous_id, _, _, _), (_, parent_id, _, _) in zip(snapshots, snapshots[1:]):
        assert parent_id == previous_id
    assert snapshots[1][3]["added-records"] == "2"
    assert snapshots[2][3]["added-records"] == "1"

    history = trino.query(f'SELECT snapshot_id, parent_id, is_current_ancestor FROM iceberg.meta."events$history" '
                          "ORDER BY made_current_at")
    assert [row[0] for row in history] == [row[0] for row in snapshots]
    assert all(row[2] for row in history)
    current = trino.query(f'SELECT snapshot_id FROM iceberg.meta."events$snapshots" '
                          "ORDER BY committed_at DESC LIMIT 1")
    assert current == [(snapshots[-1][0],)]

    # DELETE of a whole partition drops its file: only the two 'click' files remain.
    files = trino.query(f'SELECT content, partition.kind, record_count, file_format FROM iceberg.meta."events$files" '
                        "ORDER BY record_count, file_path")
    assert sorted(files) == [(0, "click", 1, "PARQUET"), (0, "click", 1, "PARQUET")], files
    assert all(path.startswith(f"s3://{trino_warehouse_of(trino)}/meta/events-")
               for (path,) in trino.query(f'SELECT file_path FROM iceberg.meta."events$files"'))

    # Time travel to the first append.
    assert trino.query(f"SELECT id FROM {table} FOR VERSION AS OF {snapshots[1][0]} ORDER BY id") == [(1,), (2,)]


def trino_warehouse_of(trino) -> str:
    return trino.catalogs["iceberg"]["iceberg.rest-catalog.warehouse"]


def test_format_versions(trino, pyiceberg_catalog):
    """Trino 476 writes format version 1 and 2 tables; it refuses to create version 3 ones."""
    trino.execute("CREATE SCHEMA iceberg.versions")
    for version in (1, 2):
        table = f"iceberg.versions.v{version}"
        create_orders(trino, table, format_version=version)
        # A whole partition: the delete a version 1 table allows (dropping its data file).
        trino.execute(f"DELETE FROM {table} WHERE region = 'ap'")
        assert trino.query(f"SELECT id FROM {table} ORDER BY id") == [(1,), (2,), (3,), (4,)]
        loaded = pyiceberg_catalog.load_table(("versions", f"v{version}"))
        assert loaded.metadata.format_version == version
        assert len(loaded.scan().to_arrow()) == 4

    with pytest.raises(TrinoQueryError, match="format_version"):
        trino.execute("CREATE TABLE iceberg.versions.v3 (id bigint) WITH (format_version = 3)")
    assert not pyiceberg_catalog.table_exists(("versions", "v3"))


def test_reads_tables_serac_maintained(trino, catalog_api, trino_warehouse, pyiceberg_catalog):  # noqa: F811
    """Trino writes a table in many small commits with row-level deletes, serac compacts it (deletes
    applied) and expires its old snapshots as jobs in the server, and Trino reads the same rows from
    fewer files with no delete file left."""
    from test_maintenance import COMPACTION, SNAPSHOTS, table_path, wait_for_job

    trino.execute("CREATE SCHEMA iceberg.kept")
    table = "iceberg.kept.events"
    trino.execute(f"CREATE TABLE {table} (id bigint, region varchar, amount double) "
                  "WITH (partitioning = ARRAY['region'], format_version = 2)")
    for batch in range(6):
        trino.execute(f"INSERT INTO {table} VALUES " + ", ".join(
            f"({i}, '{['eu', 'us'][i % 2]}', {i * 1.25})" for i in range(batch * 10, batch * 10 + 10)))
    trino.execute(f"DELETE FROM {table} WHERE id IN (3, 14, 25, 36)")
    trino.execute(f"UPDATE {table} SET amount = -1 WHERE id % 7 = 0")
    expected = trino.query(f"SELECT * FROM {table} ORDER BY id")
    count = 'SELECT content, count(*) FROM iceberg.kept."events$files" GROUP BY content ORDER BY content'
    before = dict(trino.query(count))
    assert before[0] >= 12 and before.get(1, 0) >= 1, before

    # Snapshots older than a millisecond beyond the newest one go: Iceberg's own table property.
    with pyiceberg_catalog.load_table(("kept", "events")).transaction() as tx:
        tx.set_properties({"history.expire.max-snapshot-age-ms": "1", "history.expire.min-snapshots-to-keep": "1"})
    for kind in (COMPACTION, SNAPSHOTS):
        started = catalog_api.ok("POST", table_path(trino_warehouse, "kept.events", f"/{kind}/run"),
                                 expect=(202,)).json()
        ended = wait_for_job(catalog_api, trino_warehouse, "kept.events", kind, started["jobId"])
        assert ended["status"] == "succeeded", ended
        assert trino.query(f"SELECT * FROM {table} ORDER BY id") == expected

    after = dict(trino.query(count))
    assert after.get(1, 0) == 0 and after[0] == 2, after  # one file per partition, deletes applied
    assert trino.query('SELECT count(*) FROM iceberg.kept."events$snapshots"') == [(1,)]
    trino.execute(f"DROP TABLE {table}")
    trino.execute("DROP SCHEMA iceberg.kept")
