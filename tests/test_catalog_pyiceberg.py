"""The Iceberg REST catalog through PyIceberg 0.12 (SigV4 signing name s3tables, data on serac's
S3 with path-style addressing): namespaces, partitioned tables, writes, schema evolution, time
travel, rename, register, purge, stage-create, views, format v3 and concurrent appends."""

from __future__ import annotations

import datetime
import multiprocessing

import pyarrow as pa
import pytest
from pyiceberg.exceptions import (CommitFailedException, NamespaceAlreadyExistsError, NamespaceNotEmptyError,
                                  NoSuchNamespaceError, NoSuchTableError, NoSuchViewError,
                                  TableAlreadyExistsError)
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.transforms import DayTransform, IdentityTransform
from pyiceberg.types import LongType, NestedField, StringType, TimestampType
from pyiceberg.view.metadata import SQLViewRepresentation, ViewVersion

from catalog_util import (catalog, catalog_api, list_keys, load_pyiceberg_catalog, split_s3_location,  # noqa: F401
                          warehouse)

SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=False),
    NestedField(2, "name", StringType(), required=False),
)

EVENTS_SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=False),
    NestedField(2, "category", StringType(), required=False),
    NestedField(3, "ts", TimestampType(), required=False),
)

ARROW_SCHEMA = pa.schema([pa.field("id", pa.int64()), pa.field("name", pa.string())])


def rows(ids, prefix="row"):
    ids = list(ids)
    return pa.Table.from_pydict({"id": ids, "name": [f"{prefix}-{i}" for i in ids]}, schema=ARROW_SCHEMA)


def read_sorted(table, **scan_args) -> list[dict]:
    return sorted(table.scan(**scan_args).to_arrow().to_pylist(), key=lambda row: row["id"])


def ids_of(table, **scan_args) -> list[int]:
    return [row["id"] for row in read_sorted(table, **scan_args)]


# --- Namespaces -------------------------------------------------------------------------------------


def test_nested_namespaces(catalog):
    catalog.create_namespace(("org",), {"owner": "alice"})
    catalog.create_namespace(("org", "sales"), {"team": "emea", "drop-me": "x"})
    catalog.create_namespace(("org", "sales", "daily"))
    catalog.create_namespace(("other",))
    with pytest.raises(NamespaceAlreadyExistsError):
        catalog.create_namespace(("org", "sales"))

    assert sorted(catalog.list_namespaces()) == [("org",), ("other",)]
    assert catalog.list_namespaces(("org",)) == [("org", "sales")]
    assert catalog.list_namespaces(("org", "sales")) == [("org", "sales", "daily")]
    assert catalog.list_namespaces(("org", "sales", "daily")) == []
    with pytest.raises(NoSuchNamespaceError):
        catalog.list_namespaces(("missing",))

    assert catalog.load_namespace_properties(("org",))["owner"] == "alice"
    summary = catalog.update_namespace_properties(("org", "sales"), removals={"drop-me", "never-set"},
                                                  updates={"team": "apac", "region": "jp"})
    assert sorted(summary.updated) == ["region", "team"]
    assert summary.removed == ["drop-me"]
    assert summary.missing == ["never-set"]
    properties = catalog.load_namespace_properties(("org", "sales"))
    assert properties["team"] == "apac" and properties["region"] == "jp" and "drop-me" not in properties

    # A namespace with a child namespace or a table cannot be dropped.
    with pytest.raises(NamespaceNotEmptyError):
        catalog.drop_namespace(("org", "sales"))
    catalog.drop_namespace(("org", "sales", "daily"))
    catalog.create_table(("org", "sales", "orders"), SCHEMA)
    with pytest.raises(NamespaceNotEmptyError):
        catalog.drop_namespace(("org", "sales"))
    assert catalog.namespace_exists(("org", "sales"))
    catalog.drop_table(("org", "sales", "orders"))
    catalog.drop_namespace(("org", "sales"))
    assert not catalog.namespace_exists(("org", "sales"))
    assert catalog.list_namespaces(("org",)) == []
    with pytest.raises(NoSuchNamespaceError):
        catalog.drop_namespace(("org", "sales"))


# --- Tables -----------------------------------------------------------------------------------------


def test_partitioned_table_append_overwrite_delete(catalog):
    catalog.create_namespace("shop2")
    spec = PartitionSpec(
        PartitionField(source_id=2, field_id=1000, transform=IdentityTransform(), name="category"),
        PartitionField(source_id=3, field_id=1001, transform=DayTransform(), name="ts_day"),
    )
    table = catalog.create_table("shop2.events", EVENTS_SCHEMA, partition_spec=spec)
    assert table.spec().fields[1].transform == DayTransform()

    day1 = datetime.datetime(2024, 5, 1, 10, 0)
    day2 = datetime.datetime(2024, 5, 2, 11, 30)
    arrow_schema = pa.schema([pa.field("id", pa.int64()), pa.field("category", pa.string()),
                              pa.field("ts", pa.timestamp("us"))])
    batch = pa.Table.from_pylist([
        {"id": 1, "category": "a", "ts": day1},
        {"id": 2, "category": "a", "ts": day2},
        {"id": 3, "category": "b", "ts": day1},
        {"id": 4, "category": "b", "ts": day2},
    ], schema=arrow_schema)
    table.append(batch)

    table = catalog.load_table("shop2.events")
    assert ids_of(table) == [1, 2, 3, 4]
    assert ids_of(table, row_filter="category == 'a'") == [1, 2]
    # One data file per (category, day) partition.
    partitions = {(f["partition"]["category"], f["partition"]["ts_day"])
                  for f in table.inspect.files().to_pylist()}
    assert len(partitions) == 4

    table.delete("id = 2")
    table = catalog.load_table("shop2.events")
    assert ids_of(table) == [1, 3, 4]

    replacement = pa.Table.from_pylist([{"id": 10, "category": "c", "ts": day1}], schema=arrow_schema)
    table.overwrite(replacement)
    table = catalog.load_table("shop2.events")
    assert read_sorted(table) == [{"id": 10, "category": "c", "ts": day1}]
    operations = [snapshot.summary.operation.value for snapshot in table.snapshots()]
    assert operations[0] == "append" and "delete" in operations and operations[-1] == "append"


def test_schema_evolution(catalog):
    catalog.create_namespace("evo")
    table = catalog.create_table("evo.t", SCHEMA)
    table.append(rows([1, 2]))
    with table.update_schema() as update:
        update.add_column("score", LongType())
        update.rename_column("name", "label")

    table = catalog.load_table("evo.t")
    assert [field.name for field in table.schema().fields] == ["id", "label", "score"]
    assert len(table.schemas()) == 2
    new_rows = pa.Table.from_pydict({"id": [3], "label": ["three"], "score": [30]},
                                    schema=pa.schema([("id", pa.int64()), ("label", pa.string()),
                                                      ("score", pa.int64())]))
    table.append(new_rows)
    table = catalog.load_table("evo.t")
    assert read_sorted(table) == [
        {"id": 1, "label": "row-1", "score": None},
        {"id": 2, "label": "row-2", "score": None},
        {"id": 3, "label": "three", "score": 30},
    ]


def test_time_travel(catalog):
    catalog.create_namespace("tt")
    table = catalog.create_table("tt.t", SCHEMA)
    table.append(rows([1, 2]))
    first = catalog.load_table("tt.t").current_snapshot().snapshot_id
    table.append(rows([3]))
    table.delete("id = 1")
    table = catalog.load_table("tt.t")
    assert ids_of(table) == [2, 3]
    assert ids_of(table, snapshot_id=first) == [1, 2]
    assert len(table.snapshots()) == 3
    assert [entry.snapshot_id for entry in table.history()][0] == first


def test_delete_keeps_the_history_before_it(catalog):
    # A delete that drops one file whole and rewrites another commits two snapshots in one request
    # (DELETE, then OVERWRITE); only the intermediate one leaves the log, so the appends before it
    # stay reachable by time.
    catalog.create_namespace(("hist",))
    table = catalog.create_table(("hist", "events"), schema=SCHEMA)
    table.append(rows(range(100)))
    table.append(rows(range(100, 200)))
    appends = [snapshot.snapshot_id for snapshot in catalog.load_table(("hist", "events")).snapshots()]
    table = catalog.load_table(("hist", "events"))
    table.delete("id < 150")
    table = catalog.load_table(("hist", "events"))
    operations = [snapshot.summary.operation.value for snapshot in table.snapshots()]
    assert operations == ["append", "append", "delete", "overwrite"], operations
    table.append(rows(range(1000, 1010)))
    table = catalog.load_table(("hist", "events"))
    history = [entry.snapshot_id for entry in table.history()]
    snapshots = [snapshot.snapshot_id for snapshot in table.snapshots()]
    assert history == [snapshots[0], snapshots[1], snapshots[3], snapshots[4]]
    assert history[:2] == appends
    # As of just before the delete, the table still holds all 200 rows.
    before_delete = table.snapshot_as_of_timestamp(table.history()[2].timestamp_ms - 1)
    assert before_delete.snapshot_id == appends[1]
    assert ids_of(table, snapshot_id=before_delete.snapshot_id) == list(range(200))
    assert ids_of(table) == list(range(150, 200)) + list(range(1000, 1010))


def test_large_metadata_round_trips(catalog):
    # Past 64 KiB the server sends the metadata as its own write after the response's head; a
    # table with many snapshots gets there, and so does one with a large property.
    catalog.create_namespace("big")
    table = catalog.create_table("big.t", SCHEMA)
    value = "v" * (200 * 1024)
    with table.transaction() as transaction:
        transaction.set_properties(large=value)
    for batch in range(3):
        table.append(rows([batch]))
    loaded = catalog.load_table("big.t")
    assert loaded.properties["large"] == value
    assert len(loaded.snapshots()) == 3
    assert ids_of(loaded) == [0, 1, 2]


def test_rename_table_across_namespaces(catalog):
    catalog.create_namespace("src")
    catalog.create_namespace("dst")
    table = catalog.create_table("src.t", SCHEMA)
    table.append(rows([1, 2, 3]))

    catalog.rename_table("src.t", "dst.renamed")
    assert catalog.list_tables("src") == []
    assert catalog.list_tables("dst") == [("dst", "renamed")]
    with pytest.raises(NoSuchTableError):
        catalog.load_table("src.t")
    assert ids_of(catalog.load_table("dst.renamed")) == [1, 2, 3]

    catalog.create_table("src.taken", SCHEMA)
    with pytest.raises(TableAlreadyExistsError):
        catalog.rename_table("dst.renamed", "src.taken")
    with pytest.raises(NoSuchNamespaceError):
        catalog.rename_table("dst.renamed", "nowhere.t")
    with pytest.raises(NoSuchTableError):
        catalog.rename_table("src.missing", "dst.x")


def test_register_table(catalog):
    catalog.create_namespace("reg")
    table = catalog.create_table("reg.original", SCHEMA)
    table.append(rows([1, 2]))
    table = catalog.load_table("reg.original")
    metadata_location = table.metadata_location
    catalog.drop_table("reg.original")  # no purge: the files stay
    with pytest.raises(NoSuchTableError):
        catalog.load_table("reg.original")

    registered = catalog.register_table("reg.again", metadata_location)
    assert registered.metadata_location == metadata_location
    assert ids_of(catalog.load_table("reg.again")) == [1, 2]
    with pytest.raises(TableAlreadyExistsError):
        catalog.register_table("reg.again", metadata_location)
    # The registered table accepts further commits.
    registered.append(rows([3]))
    assert ids_of(catalog.load_table("reg.again")) == [1, 2, 3]


def test_drop_with_purge_removes_files(catalog, warehouse, s3):
    catalog.create_namespace("purge")
    table = catalog.create_table("purge.t", SCHEMA)
    table.append(rows([1, 2]))
    table.append(rows([3]))
    bucket, prefix = split_s3_location(catalog.load_table("purge.t").location())
    assert bucket == warehouse
    before = list_keys(s3, bucket, prefix.rstrip("/") + "/")
    assert any(key.endswith(".parquet") for key in before), before
    assert any(key.endswith(".metadata.json") for key in before), before

    catalog.purge_table("purge.t")
    assert not catalog.table_exists("purge.t")
    assert list_keys(s3, bucket, prefix.rstrip("/") + "/") == []


def test_stage_create_with_transaction(catalog):
    catalog.create_namespace("staged")
    transaction = catalog.create_table_transaction("staged.t", SCHEMA, properties={"owner": "bob"})
    transaction.append(rows([1, 2, 3]))
    # Nothing is persisted until the transaction commits.
    assert not catalog.table_exists("staged.t")
    assert catalog.list_tables("staged") == []
    transaction.commit_transaction()

    table = catalog.load_table("staged.t")
    assert ids_of(table) == [1, 2, 3]
    assert table.properties["owner"] == "bob"
    assert len(table.snapshots()) == 1

    # Finishing a second staged create of the same name fails: the table exists now.
    again = catalog.create_table_transaction("staged.t2", SCHEMA)
    catalog.create_table("staged.t2", SCHEMA)
    with pytest.raises((CommitFailedException, TableAlreadyExistsError)):
        again.commit_transaction()


def test_views(catalog):
    catalog.create_namespace("vw")
    catalog.create_table("vw.base", SCHEMA)
    version = ViewVersion(
        version_id=1, schema_id=0, timestamp_ms=1_700_000_000_000, summary={"engine-name": "test"},
        representations=[SQLViewRepresentation(type="sql", sql="SELECT id FROM vw.base", dialect="spark")],
        default_namespace=["vw"],
    )
    view_schema = Schema(NestedField(1, "id", LongType(), required=False))
    catalog.create_view("vw.ids", view_schema, version, properties={"comment": "ids only"})

    assert catalog.view_exists("vw.ids")
    assert not catalog.view_exists("vw.nope")
    assert catalog.list_views("vw") == [("vw", "ids")]
    assert catalog.list_tables("vw") == [("vw", "base")]
    view = catalog.load_view("vw.ids")
    current = view.metadata.versions[0]
    assert current.representations[0].root.sql == "SELECT id FROM vw.base"
    assert view.metadata.properties["comment"] == "ids only"
    assert [field.name for field in view.metadata.schemas[0].fields] == ["id"]

    # Views and tables share one name space.
    with pytest.raises(TableAlreadyExistsError):
        catalog.create_table("vw.ids", SCHEMA)

    catalog.drop_view("vw.ids")
    assert not catalog.view_exists("vw.ids")
    assert catalog.list_views("vw") == []
    with pytest.raises(NoSuchViewError):
        catalog.load_view("vw.ids")
    with pytest.raises(NoSuchViewError):
        catalog.drop_view("vw.ids")


def test_stage_create_over_a_view_fails_cleanly(catalog):
    # A view created between the stage-create and its commit takes the name: the commit must be
    # refused as a conflict at once, not retried until the server gives up.
    catalog.create_namespace("clash")
    transaction = catalog.create_table_transaction("clash.name", SCHEMA)
    version = ViewVersion(version_id=1, schema_id=0, representations=[
        SQLViewRepresentation(type="sql", sql="SELECT 1 AS id", dialect="spark")], default_namespace=["clash"])
    catalog.create_view("clash.name", Schema(NestedField(1, "id", LongType(), required=False)), version)
    with pytest.raises((CommitFailedException, TableAlreadyExistsError)) as raised:
        transaction.commit_transaction()
    assert "concurrent" not in str(raised.value), raised.value
    assert catalog.view_exists("clash.name")
    assert not catalog.table_exists("clash.name")


def test_format_version_3_table_create(catalog):
    # PyIceberg 0.12 creates and reads v3 tables but cannot write v3 manifests; the v3 append
    # is in test_catalog_duckdb.py.
    catalog.create_namespace("v3")
    table = catalog.create_table("v3.t", SCHEMA, properties={"format-version": "3", "owner": "carol"})
    assert table.format_version == 3
    assert table.metadata.next_row_id == 0
    assert "format-version" not in table.properties and table.properties["owner"] == "carol"
    table = catalog.load_table("v3.t")
    assert table.format_version == 3
    assert table.snapshots() == []


# --- Concurrent writers -------------------------------------------------------------------------------

WRITERS = 8
ROWS_PER_WRITER = 25


def _append_worker(endpoint: str, warehouse: str, writer: int, start, results) -> None:
    try:
        catalog = load_pyiceberg_catalog(endpoint, warehouse, name=f"writer-{writer}")
        table = catalog.load_table("busy.t")
        start.wait(60)
        first = 1000 * (writer + 1)
        table.append(rows(range(first, first + ROWS_PER_WRITER), prefix=f"w{writer}"))
        results.put((writer, "ok"))
    except Exception as error:  # reported to the parent, which fails the test
        results.put((writer, f"{type(error).__name__}: {error}"))


@pytest.mark.timeout(300)
def test_concurrent_appends_from_processes(catalog, warehouse, server):
    catalog.create_namespace("busy")
    # Generous commit retries: every writer but one loses each round of the race.
    table = catalog.create_table("busy.t", SCHEMA, properties={
        "commit.retry.num-retries": "40", "commit.retry.min-wait-ms": "20",
        "commit.retry.max-wait-ms": "1000", "commit.retry.total-timeout-ms": "240000"})
    table.append(rows([1, 2, 3], prefix="initial"))

    context = multiprocessing.get_context("spawn")
    start = context.Event()
    results = context.Queue()
    workers = [context.Process(target=_append_worker, args=(server.endpoint, warehouse, writer, start, results))
               for writer in range(WRITERS)]
    for worker in workers:
        worker.start()
    start.set()
    outcomes = dict(results.get(timeout=240) for _ in workers)
    for worker in workers:
        worker.join(30)
    assert outcomes == {writer: "ok" for writer in range(WRITERS)}

    table = catalog.load_table("busy.t")
    assert len(table.scan().to_arrow()) == 3 + WRITERS * ROWS_PER_WRITER
    assert sorted(ids_of(table)) == sorted([1, 2, 3] + [1000 * (w + 1) + i for w in range(WRITERS)
                                                        for i in range(ROWS_PER_WRITER)])
    snapshots = table.snapshots()
    assert len(snapshots) == WRITERS + 1
    # The snapshots form one chain (each parent is the previous one) and the log holds all of them.
    by_id = {snapshot.snapshot_id: snapshot for snapshot in snapshots}
    chain = []
    current = table.current_snapshot()
    while current is not None:
        chain.append(current.snapshot_id)
        current = by_id.get(current.parent_snapshot_id) if current.parent_snapshot_id else None
    assert len(chain) == WRITERS + 1
    assert len(table.history()) == WRITERS + 1
    sequence_numbers = sorted(snapshot.sequence_number for snapshot in snapshots)
    assert sequence_numbers == list(range(1, WRITERS + 2))
