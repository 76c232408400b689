"""`serac table load`: local CSV, JSON-lines and Parquet files written by serac as the table's own
Parquet data files (Avro manifests, manifest list, one append snapshot through the catalog) and read
back by PyIceberg and DuckDB; partitioned tables; a bad row commits nothing and leaves no file;
appends racing PyIceberg's lose nothing."""

from __future__ import annotations

import datetime
import os
import subprocess
import sys
import threading
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.transforms import DayTransform, IdentityTransform
from pyiceberg.types import (DateType, DecimalType, DoubleType, IntegerType, LongType, NestedField, StringType,
                             TimestampType)

from catalog_util import CATALOG_BASE, catalog, catalog_api, warehouse  # noqa: F401
from s3util import ACCESS_KEY, REGION, SECRET_KEY

sys.path.insert(0, str(Path(__file__).resolve().parent / "catalog_tools"))
import duckdb_offline  # noqa: E402

SERAC = os.environ.get("SERAC_BIN", "build/serac")


def load(server, warehouse, table, *files, extra=(), check=True):
    env = dict(os.environ, SERAC_ENDPOINT=server.endpoint, SERAC_ACCESS_KEY=ACCESS_KEY, SERAC_SECRET_KEY=SECRET_KEY)
    ns, name = table.split(".")
    return subprocess.run([SERAC, "table", "load", warehouse, ns, name, *map(str, files), *extra], env=env,
                          capture_output=True, text=True, timeout=120, check=check)


def rows_of(table):
    return sorted(table.scan().to_arrow().to_pylist(), key=lambda r: (r["id"], str(r)))


def test_csv_and_jsonl_create_a_table_pyiceberg_and_duckdb_read(server, catalog, warehouse, tmp_path):
    catalog.create_namespace("loads")
    csv = tmp_path / "people.csv"
    csv.write_text("id,name,score,born,seen\n1,ann,1.5,1990-01-02,2024-05-01 10:00:00.123456\n"
                   "2,bob,,1985-06-30,\n3,,3.25,,\n")
    out = load(server, warehouse, "loads.people", csv, extra=["--create"])
    assert "Loaded 3 rows into loads.people" in out.stdout, out.stdout + out.stderr
    jsonl = tmp_path / "more.jsonl"
    jsonl.write_text('{"id": 4, "name": "dan", "score": 4.0}\n{"id": 5, "born": "2001-02-03"}\n')
    load(server, warehouse, "loads.people", jsonl)

    table = catalog.load_table("loads.people")
    assert [f.name for f in table.schema().fields] == ["id", "name", "score", "born", "seen"]
    # A timestamp read from text is Iceberg's microsecond timestamp (nanoseconds would need v3).
    assert str(table.schema().find_field("seen").field_type) == "timestamp"
    seen = datetime.datetime(2024, 5, 1, 10, 0, 0, 123456)
    assert rows_of(table) == [
        {"id": 1, "name": "ann", "score": 1.5, "born": datetime.date(1990, 1, 2), "seen": seen},
        {"id": 2, "name": "bob", "score": None, "born": datetime.date(1985, 6, 30), "seen": None},
        {"id": 3, "name": None, "score": 3.25, "born": None, "seen": None},
        {"id": 4, "name": "dan", "score": 4.0, "born": None, "seen": None},
        {"id": 5, "name": None, "score": None, "born": datetime.date(2001, 2, 3), "seen": None},
    ]
    snapshots = table.snapshots()
    assert [s.summary.operation.value for s in snapshots] == ["append", "append"]
    assert snapshots[-1].summary["total-records"] == "5"
    assert snapshots[-1].sequence_number == 2
    files = table.inspect.files().to_pylist()
    assert sorted(f["record_count"] for f in files) == [2, 3]
    # Column metrics the writer measured: PyIceberg prunes with them.
    assert all(dict(f["null_value_counts"])[1] == 0 for f in files)
    assert table.scan(row_filter="id >= 4").plan_files().__len__() == 1

    duck = duckdb_offline.connect()
    host_port = server.endpoint.split("://", 1)[1]
    duck.execute(f"CREATE SECRET serac_s3 (TYPE s3, KEY_ID '{ACCESS_KEY}', SECRET '{SECRET_KEY}', REGION '{REGION}', "
                 f"ENDPOINT '{host_port}', URL_STYLE 'path', USE_SSL false)")
    duck.execute(f"ATTACH '{warehouse}' AS cat (TYPE iceberg, ENDPOINT '{server.endpoint}{CATALOG_BASE}', "
                 f"AUTHORIZATION_TYPE 'sigv4', SIGV4_SERVICE 's3tables', SIGV4_REGION '{REGION}', SECRET serac_s3)")
    got = duck.execute("SELECT id, name, score FROM cat.loads.people ORDER BY id").fetchall()
    duck.close()
    assert got == [(1, "ann", 1.5), (2, "bob", None), (3, None, 3.25), (4, "dan", 4.0), (5, None, None)]


def test_parquet_into_a_partitioned_table(server, catalog, warehouse, tmp_path):
    catalog.create_namespace("events")
    schema = Schema(NestedField(1, "id", LongType(), required=True),
                    NestedField(2, "kind", StringType(), required=False),
                    NestedField(3, "ts", TimestampType(), required=False),
                    NestedField(4, "value", DoubleType(), required=False))
    spec = PartitionSpec(PartitionField(source_id=2, field_id=1000, transform=IdentityTransform(), name="kind"),
                         PartitionField(source_id=3, field_id=1001, transform=DayTransform(), name="ts_day"))
    catalog.create_table("events.log", schema, partition_spec=spec)
    base = datetime.datetime(2024, 5, 1, 10, 0)
    rows = [{"id": i, "kind": ["click", "view"][i % 2], "ts": base + datetime.timedelta(hours=7 * i),
             "value": float(i)} for i in range(40)]
    # The input's own types (int32 ids) are widened to the table's.
    arrow = pa.Table.from_pylist(rows, schema=pa.schema([("id", pa.int32()), ("kind", pa.string()),
                                                          ("ts", pa.timestamp("us")), ("value", pa.float64())]))
    pq.write_table(arrow, tmp_path / "events.parquet")
    load(server, warehouse, "events.log", tmp_path / "events.parquet")

    table = catalog.load_table("events.log")
    assert [r["id"] for r in rows_of(table)] == list(range(40))
    files = table.inspect.files().to_pylist()
    partitions = {(f["partition"]["kind"], f["partition"]["ts_day"]) for f in files}
    expected = {(r["kind"], r["ts"].date()) for r in rows}
    assert {(k, d if isinstance(d, datetime.date) else datetime.date(1970, 1, 1) + datetime.timedelta(days=d))
            for k, d in partitions} == expected
    assert len(files) == len(expected)
    assert all("/data/kind=" in f["file_path"] and "/ts_day=2024-05-" in f["file_path"] for f in files)
    assert {r["id"] for r in table.scan(row_filter="kind == 'click'").to_arrow().to_pylist()} == set(range(0, 40, 2))


def test_a_sorted_table_gets_sorted_files(server, catalog, warehouse, tmp_path):
    """The table's sort order (kind ascending, then value descending with nulls last) orders the
    rows of every data file it writes, and the files name the order."""
    from pyiceberg.table.sorting import NullOrder, SortDirection, SortField, SortOrder
    catalog.create_namespace("sorted")
    schema = Schema(NestedField(1, "id", LongType(), required=True),
                    NestedField(2, "kind", StringType(), required=False),
                    NestedField(3, "value", DoubleType(), required=False))
    order = SortOrder(SortField(source_id=2, transform=IdentityTransform()),
                      SortField(source_id=3, transform=IdentityTransform(), direction=SortDirection.DESC,
                                null_order=NullOrder.NULLS_LAST))
    catalog.create_table("sorted.t", schema, sort_order=order)
    rows = [{"id": i, "kind": ["b", "a", "c"][(i * 7) % 3], "value": None if i % 11 == 0 else float((i * 37) % 101)}
            for i in range(3000)]
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "in.parquet")
    load(server, warehouse, "sorted.t", tmp_path / "in.parquet")
    table = catalog.load_table("sorted.t")
    assert table.sort_order().order_id == 1
    files = table.inspect.files().to_pylist()
    assert files and all(f["sort_order_id"] == 1 for f in files), files
    for f in files:
        with table.io.new_input(f["file_path"]).open() as stream:
            got = pq.read_table(pa.BufferReader(stream.read())).to_pylist()
        keys = [(r["kind"], r["value"] is None, -(r["value"] or 0)) for r in got]
        assert keys == sorted(keys), f["file_path"]
    assert [r["id"] for r in rows_of(table)] == list(range(3000))


def test_a_row_that_does_not_fit_commits_nothing(server, catalog, warehouse, s3, tmp_path):
    catalog.create_namespace("strict")
    schema = Schema(NestedField(1, "id", LongType(), required=True),
                    NestedField(2, "day", DateType(), required=False))
    table = catalog.create_table("strict.t", schema)
    good = tmp_path / "good.csv"
    good.write_text("id,day\n1,2024-01-01\n")
    bad = tmp_path / "bad.csv"
    bad.write_text("id,day\n2,2024-01-02\n,2024-01-03\n")
    out = load(server, warehouse, "strict.t", good, bad, check=False)
    assert out.returncode != 0
    assert "bad.csv: line 3, column id: null in a required column" in out.stderr, out.stderr
    assert "nothing was committed" in out.stderr
    table = catalog.load_table("strict.t")
    assert table.current_snapshot() is None
    bucket, prefix = table.location().split("://", 1)[1].split("/", 1)
    listed = s3.list_objects_v2(Bucket=bucket, Prefix=prefix + "/data/").get("Contents", [])
    assert listed == []  # the files written before the bad row were removed

    unknown = tmp_path / "extra.csv"
    unknown.write_text("id,color\n1,red\n")
    out = load(server, warehouse, "strict.t", unknown, check=False)
    assert "extra.csv: column color is not a column of the table" in out.stderr


def test_errors_name_the_line_column_and_value(server, catalog, warehouse, tmp_path):
    """Each input format's errors say where, as an editor shows it: the file, the line (rows in
    Parquet, which has no lines), the column's name and the value."""
    catalog.create_namespace("where")
    schema = Schema(NestedField(1, "id", LongType(), required=True),
                    NestedField(2, "qty", IntegerType(), required=False),
                    NestedField(3, "price", DecimalType(5, 2), required=False),
                    NestedField(4, "note", StringType(), required=False))
    catalog.create_table("where.t", schema)

    def error_of(name, text):
        path = tmp_path / name
        path.write_text(text) if isinstance(text, str) else path.write_bytes(text)
        out = load(server, warehouse, "where.t", path, check=False)
        assert out.returncode != 0, out.stdout
        assert "nothing was committed" in out.stderr, out.stderr
        return out.stderr

    # A value CSV cannot convert: after a blank line and a quoted value spanning two lines.
    err = error_of("qty.csv", 'id,qty,price,note\n1,2,1.5,a\n\n2,3,2.5,"two\nlines"\n3,abc,3.5,c\n')
    assert "qty.csv: line 6, column qty: 'abc' does not convert to int32" in err, err
    # A decimal with more fraction digits than the column's scale: Arrow's message has no value.
    err = error_of("price.csv", "id,qty,price,note\n1,2,1.5,a\n2,3,1.234,b\n")
    assert "price.csv: line 3, column price: '1.234' does not convert to decimal128(5, 2)" in err, err
    assert "data loss" in err, err
    # Far into the file, past Arrow's first block.
    many = "id,qty,price,note\n" + "".join(f"{i},{i % 1000},1.00,x{i}\n" for i in range(200_000))
    err = error_of("late.csv", many + "200000,99999999999,1.00,y\n")
    assert "late.csv: line 200002, column qty: '99999999999' does not convert to int32" in err, err
    # A record with a field too many.
    err = error_of("fields.csv", "id,qty,price,note\n1,2,1.5,a\n2,3,2.5,b,extra\n")
    assert "fields.csv: line 3: Expected 4 columns, got 5" in err, err
    # JSON lines: the sixth line changes a column's type; lines, not rows counted from 0.
    err = error_of("six.jsonl", "".join(f'{{"id": {i}, "note": "n{i}"}}\n' for i in range(5)) + '{"id": 5, "note": 7}\n')
    assert "six.jsonl: line 6: " in err and "changed from string to number" in err, err
    # JSON lines: a value too large for the column (converted after reading).
    err = error_of("big.jsonl", '{"id": 1, "qty": 1}\n\n{"id": 2, "qty": 99999999999}\n')
    assert "big.jsonl: line 3, column qty: 99999999999 does not fit int32" in err, err
    # JSON lines: a text that is no timestamp, read by Arrow's JSON reader.
    catalog.create_table("where.times", Schema(NestedField(1, "at", TimestampType(), required=False)))
    path = tmp_path / "times.jsonl"
    path.write_text('{"at": "2024-01-01T00:00:00"}\n{"at": "2024-13-01T00:00:00"}\n')
    out = load(server, warehouse, "where.times", path, check=False)
    assert "times.jsonl: line 2: '2024-13-01T00:00:00' does not convert to timestamp" in out.stderr, out.stderr
    # Parquet has no lines: its 1-based row.
    pq.write_table(pa.table({"id": pa.array([1, None, 3], pa.int64())}), tmp_path / "rows.parquet")
    err = error_of("rows.parquet", (tmp_path / "rows.parquet").read_bytes())
    assert "rows.parquet: row 2, column id: null in a required column" in err, err


def test_loads_racing_pyiceberg_appends_lose_nothing(server, catalog, warehouse, tmp_path):
    catalog.create_namespace("race")
    schema = Schema(NestedField(1, "id", LongType(), required=False))
    table = catalog.create_table("race.t", schema)
    inputs = []
    for n in range(4):
        path = tmp_path / f"part{n}.csv"
        path.write_text("id\n" + "".join(f"{1000 * n + i}\n" for i in range(50)))
        inputs.append(path)
    errors = []

    def serac_loads():
        try:
            for path in inputs:
                load(server, warehouse, "race.t", path)
        except subprocess.CalledProcessError as e:  # pragma: no cover - reported below
            errors.append(e.stderr)

    thread = threading.Thread(target=serac_loads)
    thread.start()
    arrow_schema = pa.schema([("id", pa.int64())])
    for n in range(4):
        for attempt in range(20):
            try:
                catalog.load_table("race.t").append(pa.Table.from_pydict({"id": [10_000 + n]}, schema=arrow_schema))
                break
            except Exception:  # CommitFailedException: reload and try again
                if attempt == 19:
                    raise
    thread.join()
    assert errors == []
    ids = sorted(r["id"] for r in catalog.load_table("race.t").scan().to_arrow().to_pylist())
    assert ids == sorted([1000 * n + i for n in range(4) for i in range(50)] + [10_000 + n for n in range(4)])


@pytest.mark.parametrize("format_version", ["1", "3"])
def test_other_format_versions(server, catalog, warehouse, tmp_path, format_version):
    catalog.create_namespace(f"v{format_version}")
    schema = Schema(NestedField(1, "id", LongType(), required=False))
    catalog.create_table(f"v{format_version}.t", schema, properties={"format-version": format_version})
    data = tmp_path / "ids.csv"
    data.write_text("id\n1\n2\n3\n")
    load(server, warehouse, f"v{format_version}.t", data)
    load(server, warehouse, f"v{format_version}.t", data)
    table = catalog.load_table(f"v{format_version}.t")
    assert sorted(r["id"] for r in table.scan().to_arrow().to_pylist()) == [1, 1, 2, 2, 3, 3]
    if format_version == "3":
        first, second = table.snapshots()
        assert (first.first_row_id, second.first_row_id) == (0, 3)
        assert table.metadata.next_row_id == 6
