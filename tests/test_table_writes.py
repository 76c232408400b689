"""Tables whose deletes and overwrites serac writes itself (`serac table delete-rows`, `serac table
load --mode overwrite` of everything or `--where` a filter matches, `--partition-by`), read back by PyIceberg, DuckDB and Spark with the same
rows: position delete files (format v2), deletion vectors in Puffin files merged one per data file
(v3), equality delete files (v2); Spark- and DuckDB-written tables changed by serac and the reverse. Which
engine reads which delete kind is in the README ("Delete files and the engines that read them")."""

from __future__ import annotations

import io
import os
import subprocess

import fastavro

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.transforms import IdentityTransform
from pyiceberg.types import DoubleType, LongType, NestedField, StringType

from catalog_util import CATALOG_BASE, catalog, catalog_api, load_pyiceberg_catalog, warehouse  # noqa: F401
from s3util import ACCESS_KEY, REGION, SECRET_KEY
from spark_util import add_sigv4_catalog, requires_spark, spark  # noqa: F401
from trino_util import trino, trino_warehouse  # noqa: F401

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "catalog_tools"))
import duckdb_offline  # noqa: E402

SERAC = os.environ.get("SERAC_BIN", "build/serac")
ROWS = 600


def serac(server, *args, check=True):
    env = dict(os.environ, SERAC_ENDPOINT=server.endpoint, SERAC_ACCESS_KEY=ACCESS_KEY, SERAC_SECRET_KEY=SECRET_KEY)
    out = subprocess.run([SERAC, *map(str, args)], env=env, capture_output=True, text=True, timeout=180)
    if check:
        assert out.returncode == 0, out.stdout + out.stderr
    return out


def make_table(catalog, name: str, format_version: int):
    """(id long, category string, value double), partitioned by category, filled by two serac loads
    so that every partition has two data files."""
    namespace = name.split(".")[0]
    if (namespace,) not in catalog.list_namespaces():
        catalog.create_namespace(namespace)
    schema = Schema(NestedField(1, "id", LongType(), required=True),
                    NestedField(2, "category", StringType(), required=False),
                    NestedField(3, "value", DoubleType(), required=False))
    spec = PartitionSpec(PartitionField(source_id=2, field_id=1000, transform=IdentityTransform(), name="category"))
    return catalog.create_table(name, schema, partition_spec=spec,
                                properties={"format-version": str(format_version)})


def all_rows():
    return [{"id": i, "category": ["a", "b", "c"][i % 3], "value": i / 2} for i in range(ROWS)]


def load_rows(server, warehouse, name: str, tmp_path, rows, extra=(), check=True):
    ns, table = name.split(".")
    path = tmp_path / f"rows-{len(list(tmp_path.iterdir()))}.parquet"
    pq.write_table(pa.Table.from_pylist(rows), path)
    return serac(server, "table", "load", warehouse, ns, table, path, *extra, check=check)


def fill(server, warehouse, name, tmp_path):
    rows = all_rows()
    load_rows(server, warehouse, name, tmp_path, rows[: ROWS // 2])
    load_rows(server, warehouse, name, tmp_path, rows[ROWS // 2:])


def delete_rows(server, warehouse, name: str, tmp_path, ids, kind: str | None, check=True):
    ns, table = name.split(".")
    keys = tmp_path / f"keys-{len(list(tmp_path.iterdir()))}.csv"
    keys.write_text("id\n" + "".join(f"{i}\n" for i in ids))
    extra = ["--as", kind] if kind else []
    return serac(server, "table", "delete-rows", warehouse, ns, table, "--keys", keys, *extra, check=check)


def ids_by_pyiceberg(catalog, name: str) -> list[int]:
    return sorted(r["id"] for r in catalog.load_table(name).scan().to_arrow().to_pylist())


def ids_by_duckdb(server, warehouse, name: str) -> list[int]:
    duck = duckdb_offline.connect()
    try:
        duckdb_offline.attach_iceberg_catalog(duck, "cat", endpoint=server.endpoint + CATALOG_BASE, warehouse=warehouse,
                                              access_key_id=ACCESS_KEY, secret_access_key=SECRET_KEY, region=REGION)
        return sorted(r[0] for r in duck.execute(f"SELECT id FROM cat.{name}").fetchall())
    finally:
        duck.close()


def duckdb_execute(server, warehouse, *statements: str) -> None:
    duck = duckdb_offline.connect()
    try:
        duckdb_offline.attach_iceberg_catalog(duck, "cat", endpoint=server.endpoint + CATALOG_BASE, warehouse=warehouse,
                                              access_key_id=ACCESS_KEY, secret_access_key=SECRET_KEY, region=REGION)
        for statement in statements:
            duck.execute(statement)
    finally:
        duck.close()


def ids_by_spark(spark, server, warehouse, name: str) -> list[int]:
    cat = add_sigv4_catalog(spark, server.endpoint, warehouse)
    spark.sql(f"REFRESH TABLE {cat}.{name}")
    return sorted(r[0] for r in spark.sql(f"SELECT id FROM {cat}.{name}").collect())


def delete_files(catalog, name: str) -> list[dict]:
    """The live delete files of the current snapshot as the manifests hold them (fastavro reads the
    Avro; PyIceberg's metadata tables leave out referenced_data_file)."""
    table = catalog.load_table(name)
    snapshot = table.current_snapshot()
    if snapshot is None:
        return []
    files = []
    for manifest in snapshot.manifests(table.io):
        if manifest.content.value != 1:
            continue
        with table.io.new_input(manifest.manifest_path).open() as stream:
            for entry in fastavro.reader(io.BytesIO(stream.read())):
                if entry["status"] != 2:
                    files.append(entry["data_file"])
    return files


@requires_spark
def test_position_deletes_on_v2_read_by_every_engine(server, catalog, warehouse, tmp_path, spark):
    name = "writes.positions"
    make_table(catalog, name, 2)
    fill(server, warehouse, name, tmp_path)
    out = delete_rows(server, warehouse, name, tmp_path, [3, 301, 599, 100000], None)
    assert "Deleted 3 rows from writes.positions: 3 position delete files" in out.stdout, out.stdout
    expected = [i for i in range(ROWS) if i not in (3, 301, 599)]
    deletes = delete_files(catalog, name)
    assert [d["content"] for d in deletes] == [1, 1, 1]
    # File-scoped: each names its data file and holds that file's partition.
    assert all(d["referenced_data_file"].endswith(".parquet") and d["partition"]["category"] for d in deletes)
    snapshot = catalog.load_table(name).current_snapshot()
    assert snapshot.summary.operation.value == "delete"
    assert snapshot.summary["added-position-deletes"] == "3"
    assert snapshot.summary["total-records"] == str(ROWS)
    assert ids_by_pyiceberg(catalog, name) == expected
    assert ids_by_duckdb(server, warehouse, name) == expected
    assert ids_by_spark(spark, server, warehouse, name) == expected


@requires_spark
def test_deletion_vectors_on_v3_are_merged_one_per_data_file(server, catalog, warehouse, tmp_path, spark):
    name = "writes.dvs"
    make_table(catalog, name, 3)
    fill(server, warehouse, name, tmp_path)
    out = delete_rows(server, warehouse, name, tmp_path, [0, 3, 301, 302], None)
    assert "Deleted 4 rows from writes.dvs: 3 deletion vectors" in out.stdout, out.stdout
    # Again, overlapping: 0 is deleted already; 6 and 304 are new in files that have DVs.
    out = delete_rows(server, warehouse, name, tmp_path, [0, 6, 304], "dv")
    assert "Deleted 2 rows from writes.dvs: 2 deletion vectors" in out.stdout, out.stdout
    deletes = delete_files(catalog, name)
    assert all(d["file_format"] == "PUFFIN" for d in deletes)
    referenced = [d["referenced_data_file"] for d in deletes]
    assert len(referenced) == len(set(referenced)) == 3, referenced
    by_file = {d["referenced_data_file"]: d["record_count"] for d in deletes}
    assert sorted(by_file.values()) == [1, 2, 3]
    summary = catalog.load_table(name).current_snapshot().summary
    assert summary["added-dvs"] == "2" and summary["removed-dvs"] == "2"
    assert summary["total-position-deletes"] == "6"
    expected = [i for i in range(ROWS) if i not in (0, 3, 6, 301, 302, 304)]
    assert ids_by_spark(spark, server, warehouse, name) == expected
    assert ids_by_pyiceberg(catalog, name) == expected
    assert ids_by_duckdb(server, warehouse, name) == expected


@requires_spark
def test_equality_deletes_on_v2(server, catalog, warehouse, tmp_path, spark):
    name = "writes.equality"
    make_table(catalog, name, 2)
    fill(server, warehouse, name, tmp_path)
    # The partition column must be part of the key: each delete file lives in its partition.
    refused = delete_rows(server, warehouse, name, tmp_path, [1], "equality", check=False)
    assert refused.returncode != 0
    assert "partition field category is not computed from a key column" in refused.stderr, refused.stderr
    keys = tmp_path / "eq-keys.csv"
    keys.write_text("id,category\n1,b\n2,c\n4,b\n5,a\n")  # 5 is in c, not a: matches nothing
    out = serac(server, "table", "delete-rows", warehouse, "writes", "equality", "--keys", keys, "--as", "equality")
    assert "equality delete files" in out.stdout, out.stdout
    deletes = delete_files(catalog, name)
    assert {d["content"] for d in deletes} == {2}
    assert all(d["equality_ids"] == [1, 2] for d in deletes)
    expected = [i for i in range(ROWS) if i not in (1, 2, 4)]
    assert ids_by_spark(spark, server, warehouse, name) == expected
    assert ids_by_duckdb(server, warehouse, name) == expected


def test_overwrite_replaces_rows_and_delete_files(server, catalog, warehouse, tmp_path):
    name = "writes.overwrite"
    make_table(catalog, name, 2)
    fill(server, warehouse, name, tmp_path)
    delete_rows(server, warehouse, name, tmp_path, [1, 2], "position")
    fresh = [{"id": 10_000 + i, "category": "z", "value": 0.0} for i in range(5)]
    out = load_rows(server, warehouse, name, tmp_path, fresh, extra=["--mode", "overwrite"])
    assert "Replaced the table's rows with 5 rows" in out.stdout, out.stdout
    table = catalog.load_table(name)
    assert ids_by_pyiceberg(catalog, name) == [10_000 + i for i in range(5)]
    assert delete_files(catalog, name) == []
    summary = table.current_snapshot().summary
    assert summary.operation.value == "overwrite"
    assert summary["deleted-records"] == str(ROWS)
    assert summary["total-records"] == "5" and summary["total-delete-files"] == "0"
    assert ids_by_duckdb(server, warehouse, name) == [10_000 + i for i in range(5)]


def test_overwrite_where_replaces_matching_partitions(server, catalog, warehouse, tmp_path):
    """--where replaces the files all of whose rows match (here: partition b and its DV), refuses a
    filter that would split a file and loaded rows outside the filter, and commits nothing then."""
    name = "writes.where"
    make_table(catalog, name, 3)
    fill(server, warehouse, name, tmp_path)
    delete_rows(server, warehouse, name, tmp_path, [1, 4], None)  # ids 1 and 4 are in partition b
    fresh = [{"id": 20_000 + i, "category": "b", "value": 1.0} for i in range(3)]
    out = load_rows(server, warehouse, name, tmp_path, fresh, extra=["--mode", "overwrite", "--where", "category = 'b'"])
    assert "Replaced the matching rows with 3 rows" in out.stdout, out.stdout
    expected = sorted([r["id"] for r in all_rows() if r["category"] != "b"] + [20_000, 20_001, 20_002])
    assert ids_by_pyiceberg(catalog, name) == expected
    assert ids_by_duckdb(server, warehouse, name) == expected
    assert delete_files(catalog, name) == []  # the DV went with its data file
    summary = catalog.load_table(name).current_snapshot().summary
    assert summary.operation.value == "overwrite" and summary["deleted-data-files"] == "2", summary

    before = catalog.load_table(name).current_snapshot().snapshot_id
    partial = load_rows(server, warehouse, name, tmp_path, [{"id": 19_999, "category": "b", "value": 1.0}],
                        extra=["--mode", "overwrite", "--where", "category = 'b' and id < 20001"], check=False)
    assert partial.returncode != 0, partial.stdout
    assert "Cannot delete file where some, but not all, rows match filter (category = 'b' AND id < 20001)" \
        in partial.stderr and "nothing was committed" in partial.stderr, partial.stderr
    outside = load_rows(server, warehouse, name, tmp_path, [{"id": 1, "category": "a", "value": 0.0}],
                        extra=["--mode", "overwrite", "--where", "category = 'b'"], check=False)
    assert outside.returncode != 0 and "do not match filter: category = 'b'" in outside.stderr, outside.stderr
    for where, message in [("colour = 'b'", "no column colour"), ("category = ", "position 12"),
                           ("id = 'x'", "cannot compare id (long)")]:
        bad = load_rows(server, warehouse, name, tmp_path, fresh, extra=["--mode", "overwrite", "--where", where],
                        check=False)
        assert bad.returncode != 0 and message in bad.stderr, (where, bad.stderr)
    append = load_rows(server, warehouse, name, tmp_path, fresh, extra=["--where", "category = 'b'"], check=False)
    assert append.returncode != 0 and "--where applies to --mode overwrite" in append.stderr
    assert catalog.load_table(name).current_snapshot().snapshot_id == before
    assert ids_by_pyiceberg(catalog, name) == expected


def test_create_with_partition_by(server, catalog, warehouse, tmp_path):
    catalog.create_namespace("parts")
    rows = [{"id": i, "kind": ["x", "y"][i % 2], "amount": float(i)} for i in range(50)]
    path = tmp_path / "in.parquet"
    pq.write_table(pa.Table.from_pylist(rows), path)
    serac(server, "table", "load", warehouse, "parts", "sales", path, "--create", "--partition-by", "kind, bucket(4, id)")
    table = catalog.load_table("parts.sales")
    assert [(f.name, str(f.transform)) for f in table.spec().fields] == [("kind", "identity"), ("id_bucket", "bucket[4]")]
    files = table.inspect.files().to_pylist()
    assert len({(f["partition"]["kind"], f["partition"]["id_bucket"]) for f in files}) == len(files) <= 8
    assert ids_by_pyiceberg(catalog, "parts.sales") == list(range(50))
    bad = serac(server, "table", "load", warehouse, "parts", "other", path, "--create", "--partition-by", "days(nope)",
                check=False)
    assert bad.returncode != 0 and "--partition-by: the input has no column nope" in bad.stderr, bad.stderr
    exists = serac(server, "table", "load", warehouse, "parts", "sales", path, "--partition-by", "kind", check=False)
    assert exists.returncode != 0 and "--partition-by applies when --create creates the table" in exists.stderr


def test_bad_keys_commit_nothing(server, catalog, warehouse, tmp_path):
    name = "writes.badkeys"
    make_table(catalog, name, 3)
    fill(server, warehouse, name, tmp_path)
    before = catalog.load_table(name).current_snapshot().snapshot_id
    keys = tmp_path / "bad.csv"
    keys.write_text("id,colour\n1,red\n")
    out = serac(server, "table", "delete-rows", warehouse, "writes", "badkeys", "--keys", keys, check=False)
    assert out.returncode != 0 and "bad.csv: column colour is not a column of the table" in out.stderr, out.stderr
    keys.write_text("id\n1\nnot-a-number\n")
    out = serac(server, "table", "delete-rows", warehouse, "writes", "badkeys", "--keys", keys, check=False)
    assert out.returncode != 0 and "bad.csv" in out.stderr, out.stderr
    out = delete_rows(server, warehouse, name, tmp_path, [1], "position", check=False)
    assert out.returncode != 0 and "format version 3 keeps position deletes as DVs" in out.stderr
    assert catalog.load_table(name).current_snapshot().snapshot_id == before
    out = delete_rows(server, warehouse, name, tmp_path, [123456], None)
    assert "nothing was committed" in out.stdout
    assert catalog.load_table(name).current_snapshot().snapshot_id == before


@requires_spark
@pytest.mark.parametrize("format_version", [2, 3])
def test_spark_and_serac_write_one_table(server, catalog, warehouse, tmp_path, spark, format_version):
    cat = add_sigv4_catalog(spark, server.endpoint, warehouse)
    spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {cat}.mixed")
    table = f"{cat}.mixed.t{format_version}"
    spark.sql(f"CREATE TABLE {table} (id BIGINT NOT NULL, category STRING, value DOUBLE) USING iceberg "
              f"PARTITIONED BY (category) TBLPROPERTIES ('format-version'='{format_version}', "
              "'write.delete.mode'='merge-on-read')")
    spark.sql(f"INSERT INTO {table} VALUES (1, 'a', 1.0), (2, 'b', 2.0), (3, 'a', 3.0), (4, 'b', 4.0)")
    spark.sql(f"DELETE FROM {table} WHERE id = 2")  # Spark's own position delete or DV
    name = f"mixed.t{format_version}"
    load_rows(server, warehouse, name, tmp_path, [{"id": 5, "category": "a", "value": 5.0},
                                                  {"id": 6, "category": "c", "value": 6.0}])
    kind = "dv" if format_version == 3 else "position"
    delete_rows(server, warehouse, name, tmp_path, [4, 6], kind)  # 4's file has Spark's delete of 2
    spark.sql(f"REFRESH TABLE {table}")
    spark.sql(f"INSERT INTO {table} VALUES (7, 'c', 7.0)")
    expected = [1, 3, 5, 7]
    assert ids_by_spark(spark, server, warehouse, name) == expected
    assert ids_by_pyiceberg(catalog, name) == expected
    assert ids_by_duckdb(server, warehouse, name) == expected
    if format_version == 3:
        referenced = [d["referenced_data_file"] for d in delete_files(catalog, name)]
        assert len(referenced) == len(set(referenced)), referenced


@pytest.mark.parametrize("format_version", [2, 3])
def test_duckdb_and_serac_write_one_table(server, catalog, warehouse, tmp_path, format_version):
    """DuckDB's manifests and lists are read and rewritten by serac's producers (an append, a row
    delta), and DuckDB appends on top of serac's snapshots; nothing is lost either way."""
    name = f"writes.duck{format_version}"
    if ("writes",) not in catalog.list_namespaces():
        catalog.create_namespace("writes")
    schema = Schema(NestedField(1, "id", LongType(), required=False),
                    NestedField(2, "category", StringType(), required=False),
                    NestedField(3, "value", DoubleType(), required=False))
    catalog.create_table(name, schema, properties={"format-version": str(format_version)})
    duckdb_execute(server, warehouse,
                   f"INSERT INTO cat.{name} SELECT i, 'd', i / 2 FROM range(0, 50) t(i)",
                   f"INSERT INTO cat.{name} SELECT i, 'd', i / 2 FROM range(50, 100) t(i)")
    load_rows(server, warehouse, name, tmp_path, [{"id": i, "category": "s", "value": 0.5} for i in range(100, 200)])
    delete_rows(server, warehouse, name, tmp_path, [1, 99, 150], None)
    duckdb_execute(server, warehouse, f"INSERT INTO cat.{name} SELECT i, 'd', 0 FROM range(200, 210) t(i)")
    expected = [i for i in range(210) if i not in (1, 99, 150)]
    assert ids_by_pyiceberg(catalog, name) == expected
    assert ids_by_duckdb(server, warehouse, name) == expected
    table = catalog.load_table(name)
    assert [s.summary.operation.value for s in table.snapshots()] == ["append", "append", "append", "delete", "append"]
    kinds = {f["content"] for f in delete_files(catalog, name)}
    assert kinds == {1}, kinds  # position deletes (v2) or DVs (v3), for DuckDB's data files too


def ids_by_clickhouse(server, warehouse, name: str, tmp_path) -> list[int]:
    from chdb import session as chdb_session
    session = chdb_session.Session(str(tmp_path / f"chdb-{len(list(tmp_path.iterdir()))}"))
    try:
        session.query("SET allow_experimental_database_iceberg = 1")
        uri = server.endpoint + CATALOG_BASE
        session.query(f"CREATE DATABASE lake ENGINE = DataLakeCatalog('{uri}') SETTINGS catalog_type = 'rest', "
                      f"warehouse = '{warehouse}', catalog_credential = '{ACCESS_KEY}:{SECRET_KEY}', "
                      f"oauth_server_uri = '{uri}/v1/oauth/tokens', vended_credentials = true")
        return sorted(session.query(f"SELECT id FROM lake.`{name}`", "ArrowTable").column("id").to_pylist())
    finally:
        session.close()


# Which engine reads which delete kind serac writes (the README's table): every other pair reads the
# right rows; these refuse the table with an error rather than return deleted rows.
UNREADABLE = {("dv", "trino"): "Unexpected PUFFIN file format",
              ("dv", "clickhouse"): "Position deletes are supported only for parquet format",
              ("equality", "pyiceberg"): "does not yet support equality deletes"}


@pytest.mark.timeout(600)
def test_trino_clickhouse_duckdb_and_pyiceberg_read_serac_deletes(server, trino, trino_warehouse, tmp_path):
    pyice = load_pyiceberg_catalog(server.endpoint, trino_warehouse)
    # "compacted": a replace-files commit (`serac table compact`) packs each partition's two files
    # into one, then position deletes go into the packed files.
    cases = {"position": (2, [3, 301]), "dv": (3, [3, 301]), "equality": (2, None), "compacted": (2, [3, 301])}
    outcomes = {}
    for kind, (version, ids) in cases.items():
        name = f"engines.{kind}"
        make_table(pyice, name, version)
        fill(server, trino_warehouse, name, tmp_path)
        if kind == "compacted":
            out = serac(server, "table", "compact", trino_warehouse, "engines", kind)
            assert "Compacted engines.compacted: 6 files (" in out.stdout and "into 3 files" in out.stdout, out.stdout
            assert pyice.load_table(name).current_snapshot().summary.operation.value == "replace"
            delete_rows(server, trino_warehouse, name, tmp_path, ids, "position")
        elif ids is None:
            keys = tmp_path / "eq.csv"
            keys.write_text("id,category\n1,b\n4,b\n")
            serac(server, "table", "delete-rows", trino_warehouse, "engines", kind, "--keys", keys, "--as", kind)
            ids = [1, 4]
        else:
            delete_rows(server, trino_warehouse, name, tmp_path, ids, kind)
        expected = [i for i in range(ROWS) if i not in ids]
        readers = {"trino": lambda: sorted(r[0] for r in trino.query(f"SELECT id FROM iceberg.{name}")),
                   "clickhouse": lambda: ids_by_clickhouse(server, trino_warehouse, name, tmp_path),
                   "pyiceberg": lambda: ids_by_pyiceberg(pyice, name),
                   "duckdb": lambda: ids_by_duckdb(server, trino_warehouse, name)}
        for engine, read in readers.items():
            try:
                got = read()
                outcomes[(kind, engine)] = "right rows" if got == expected else f"WRONG ROWS: {len(got)}"
            except Exception as error:  # noqa: BLE001 - the engine's own error type
                outcomes[(kind, engine)] = str(error)
    for (kind, engine), outcome in outcomes.items():
        if (kind, engine) in UNREADABLE:
            assert UNREADABLE[(kind, engine)] in outcome, (kind, engine, outcome)
        else:
            assert outcome == "right rows", (kind, engine, outcome)


def test_load_from_objects_on_the_server(server, catalog, warehouse, s3, tmp_path):
    s3.create_bucket(Bucket="incoming")
    s3.put_object(Bucket="incoming", Key="drop/people.csv", Body=b"id,name\n1,ann\n2,bob\n")
    buffer = io.BytesIO()
    pq.write_table(pa.Table.from_pylist([{"id": 3, "name": "cy"}]), buffer)
    s3.put_object(Bucket="incoming", Key="drop/more.parquet", Body=buffer.getvalue())
    catalog.create_namespace("remote")
    out = serac(server, "table", "load", warehouse, "remote", "people", "s3://incoming/drop/people.csv",
                "s3://incoming/drop/more.parquet", "--create")
    assert "Loaded 3 rows into remote.people" in out.stdout, out.stdout
    assert ids_by_pyiceberg(catalog, "remote.people") == [1, 2, 3]
    missing = serac(server, "table", "load", warehouse, "remote", "people", "s3://incoming/nope.csv", check=False)
    assert missing.returncode != 0 and "nothing was committed" in missing.stderr, missing.stderr
    assert "s3://incoming/nope.csv: no object nope.csv in bucket incoming" in missing.stderr, missing.stderr
    no_bucket = serac(server, "table", "load", warehouse, "remote", "people", "s3://nobucket/x.csv", check=False)
    assert "s3://nobucket/x.csv: no bucket nobucket" in no_bucket.stderr, no_bucket.stderr


def test_progress_on_a_terminal(server, catalog, warehouse, tmp_path):
    import pty
    rows = 3_000_000
    path = tmp_path / "many.parquet"
    pq.write_table(pa.table({"id": pa.array(range(rows), pa.int64())}), path, row_group_size=100_000)
    catalog.create_namespace("progress")
    env = dict(os.environ, SERAC_ENDPOINT=server.endpoint, SERAC_ACCESS_KEY=ACCESS_KEY, SERAC_SECRET_KEY=SECRET_KEY)
    primary, secondary = pty.openpty()
    proc = subprocess.Popen([SERAC, "table", "load", warehouse, "progress", "t", str(path), "--create"], env=env,
                            stdout=subprocess.PIPE, stderr=secondary, text=True)
    os.close(secondary)
    drawn = b""
    while True:
        try:
            chunk = os.read(primary, 4096)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        drawn += chunk
    out = proc.communicate(timeout=120)[0]
    os.close(primary)
    assert proc.returncode == 0, out
    assert f"Loaded {rows} rows" in out
    assert b"rows/s" in drawn and b"\r" in drawn, drawn[:500]
