"""`serac sync` runs against a real PostgreSQL 15 and a real serac: a full load under the slot's
exported snapshot, then changes (inserts, updates, key updates, deletes, an insert updated again in
the same transaction, unchanged TOAST values, TRUNCATE) applied as equality deletes and data files;
after each run the Iceberg table read by DuckDB equals `SELECT * FROM` the source, value for value.
`kill -9` during a run, then a rerun: still equal, nothing lost or doubled."""

from __future__ import annotations

import datetime
import json
import os
import re
import signal
import subprocess
import time
import uuid
from decimal import Decimal
from pathlib import Path

import sys

import pytest

from catalog_util import CATALOG_BASE, catalog_api, load_pyiceberg_catalog, warehouse  # noqa: F401
from pg_util import PG_BIN, postgres  # noqa: F401
from spark_util import spark  # noqa: F401
from trino_util import trino, trino_warehouse  # noqa: F401
from s3util import ACCESS_KEY, REGION, SECRET_KEY
from spark_util import add_sigv4_catalog, spark_available

sys.path.insert(0, str(Path(__file__).resolve().parent / "catalog_tools"))
import duckdb_offline  # noqa: E402

SERAC = os.environ.get("SERAC_BIN", "build/serac")

COLUMNS = ("id bigint PRIMARY KEY, small smallint, name text, price numeric(12, 2), born date, "
           "seen timestamptz, plain timestamp, vip boolean, ref uuid, blob bytea, scores int[], "
           "profile jsonb, ratio double precision, wide numeric, essay text, cash money, span interval, "
           "host inet, tiny real")


class Database:
    """One test's own database on the module's PostgreSQL (replication slots are the cluster's:
    each test names its own)."""

    def __init__(self, server, name: str):
        self.server, self.name = server, name

    def sql(self, statements: str) -> str:
        return self.server.sql(statements, database=self.name)

    def source_config(self, **extra) -> dict:
        return self.server.source_config(database=self.name, **extra)


@pytest.fixture
def db(postgres, request):  # noqa: F811
    name = "t_" + re.sub(r"\W", "_", request.node.name.lower())[:40]
    postgres.sql(f"CREATE DATABASE {name}")
    yield Database(postgres, name)
    # The test's slots go with it: slots are the cluster's, and each holds back its WAL.
    postgres.sql("SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots "
                 f"WHERE database = '{name}' AND NOT active")


def write_json(path: Path, document: dict) -> Path:
    path.write_text(json.dumps(document, indent=2))
    return path


def setup_files(db, server, warehouse, tmp_path, tables, slot, modes=None, update_type="",  # noqa: F811
                partition_regex="", cursor="", writer=None, selection_extra=None):
    source = write_json(tmp_path / "source.json", db.source_config(
        update_method={"replication_slot": slot, "publication": "serac_pub", "initial_wait_time": 120},
        max_threads=2))
    host_port = server.endpoint.split("://", 1)[1]
    destination = write_json(tmp_path / "destination.json", {"type": "ICEBERG", "writer": {
        "catalog_type": "rest", "rest_catalog_url": server.endpoint + CATALOG_BASE, "iceberg_s3_path": warehouse,
        "iceberg_db": "replica", "rest_signing_v_4": True, "rest_signing_name": "s3tables",
        "rest_signing_region": REGION, "s3_endpoint": host_port, "s3_use_ssl": False, "s3_path_style": True,
        "aws_region": REGION, "aws_access_key": ACCESS_KEY, "aws_secret_key": SECRET_KEY, **(writer or {})}})
    streams = {"streams": [], "selected_streams": {"public": []}}
    for table in tables:
        mode = (modes or {}).get(table, "cdc")
        stream = {"name": table, "namespace": "public", "sync_mode": mode,
                  "supported_sync_modes": ["full_refresh", "incremental", "cdc", "strict_cdc"],
                  "type_schema": {"properties": {}}}
        if cursor:
            stream["cursor_field"] = cursor
        streams["streams"].append({"stream": stream})
        selection = {"stream_name": table, "partition_regex": partition_regex, "normalization": True,
                     "append_mode": False}
        if update_type:
            selection["update_type"] = update_type
        selection.update(selection_extra or {})
        streams["selected_streams"]["public"].append(selection)
    streams_path = write_json(tmp_path / "streams.json", streams)
    return ["--config", source, "--streams", streams_path, "--destination", destination,
            "--state", tmp_path / "state.json"]


def run_sync(args, check=True):
    out = subprocess.run([SERAC, "sync", *map(str, args)], capture_output=True, text=True, timeout=300)
    if check:
        assert out.returncode == 0, out.stdout + out.stderr
    return out


ORDER = {"pairs": "b, a"}


def source_rows(db, table: str) -> list[dict]:
    order = ORDER.get(table, "id")
    text = db.sql(f"SELECT coalesce(json_agg(t ORDER BY {order}), '[]') FROM {table} t")
    return [normalize(row) for row in json.loads(text, parse_float=Decimal)]


def duckdb_query(server, warehouse, *queries: str) -> list[tuple[list[str], list[tuple]]]:  # noqa: F811
    """Each query's column names and rows, read by DuckDB with the warehouse attached as `cat`."""
    duck = duckdb_offline.connect()
    try:
        duckdb_offline.attach_iceberg_catalog(duck, "cat", endpoint=server.endpoint + CATALOG_BASE,
                                              warehouse=warehouse, access_key_id=ACCESS_KEY,
                                              secret_access_key=SECRET_KEY, region=REGION)
        answers = []
        for query in queries:
            cursor = duck.execute(query)
            answers.append(([d[0] for d in cursor.description], cursor.fetchall()))
        return answers
    finally:
        duck.close()


def iceberg_rows(server, warehouse, table: str) -> list[dict]:  # noqa: F811
    [(names, rows)] = duckdb_query(server, warehouse,
                                   f"SELECT * FROM cat.replica.{table} ORDER BY {ORDER.get(table, 'id')}")
    return [normalize(dict(zip(names, row))) for row in rows]


def pyiceberg_rows(server, warehouse, table: str) -> list[dict]:  # noqa: F811
    catalog = load_pyiceberg_catalog(server.endpoint, warehouse)
    rows = catalog.load_table(f"replica.{table}").scan().to_arrow().to_pylist()
    order = [column.strip() for column in ORDER.get(table, "id").split(",")]
    return [normalize(row) for row in sorted(rows, key=lambda r: tuple(r[c] for c in order))]


def numpy_float32(value):
    import numpy
    return numpy.float32(float(value))


def spark_rows(spark, server, warehouse, table: str) -> list[dict]:  # noqa: F811
    """The table as Spark 3.5 reads it (it refuses tables with `time` columns: Spark has no such type)."""
    catalog = add_sigv4_catalog(spark, server.endpoint, warehouse)
    frame = spark.table(f"{catalog}.replica.{table}")
    order = [column.strip() for column in ORDER.get(table, "id").split(",")]
    rows = [row.asDict(recursive=True) for row in frame.collect()]
    return [normalize(row) for row in sorted(rows, key=lambda r: tuple(r[c] for c in order))]


def normalize(row: dict) -> dict:
    """Both sides' values in one form: PostgreSQL's JSON text and DuckDB's Python values."""
    out = {}
    for name, value in row.items():
        if value is None:
            out[name] = None
        elif name in ("seen", "created", "updated"):
            if isinstance(value, str):
                value = datetime.datetime.fromisoformat(value)
            if value.tzinfo is None:  # Spark's session time zone is UTC
                value = value.replace(tzinfo=datetime.timezone.utc)
            out[name] = round(value.timestamp() * 1e6)
        elif name == "plain":
            out[name] = value if isinstance(value, str) else value.isoformat()
        elif name == "blob":
            out[name] = bytes.fromhex(value[2:]) if isinstance(value, str) else bytes(value)
        elif name == "ref" and isinstance(value, bytes):
            out[name] = str(uuid.UUID(bytes=value))
        elif name in ("ref", "born", "joined"):
            out[name] = str(value)
        elif name == "profile":
            out[name] = json.loads(value) if isinstance(value, str) else value
        elif name in ("price", "wide", "cash"):
            out[name] = Decimal(str(value).replace("$", "").replace(",", ""))
        elif name == "clock":
            out[name] = datetime.time.fromisoformat(value) if isinstance(value, str) else value
        elif name == "tiny":
            out[name] = str(float(numpy_float32(value)))
        elif name == "ratio":
            out[name] = str(float(value))
        else:
            out[name] = value
    return out


def assert_equal(db, server, warehouse, table, readers=("duckdb",), spark=None):  # noqa: F811
    expected = source_rows(db, table)
    for reader in readers + (("spark",) if spark is not None else ()):
        if reader == "spark":
            actual = spark_rows(spark, server, warehouse, table)
        else:
            actual = (iceberg_rows if reader == "duckdb" else pyiceberg_rows)(server, warehouse, table)
        assert len(actual) == len(expected), (reader, len(actual), len(expected))
        for want, got in zip(expected, actual):
            assert got == want, (reader, got, want)


INSERT = ("INSERT INTO items SELECT i, i % 100, 'name ' || i, i * 1.25, DATE '2024-01-01' + i, "
          "TIMESTAMPTZ '2024-03-01 10:00:00.123456+02' + i * INTERVAL '1 minute', "
          "TIMESTAMP '2024-03-01 10:00:00' + i * INTERVAL '1 second', i % 2 = 0, "
          "md5(i::text)::uuid, decode(lpad(to_hex(i), 8, '0'), 'hex'), ARRAY[i, NULL, -i], "
          "jsonb_build_object('n', i, 'tags', jsonb_build_array('a', 'b')), i / 7.0, "
          "(i::numeric * 1000000000000000000000000000000000000000.000001), NULL, (i * 1.5)::numeric::money, "
          "i * INTERVAL '90 minutes', ('10.0.' || (i % 250) || '.1')::inet, "
          "i / 3.0 "
          "FROM generate_series({0}, {1}) i")


# Which engines read a table whose changes were written with each update_type (README's table):
# PyIceberg refuses equality deletes.
READERS = {"": ("duckdb", "pyiceberg"), "eq": ("duckdb",), "dv": ("duckdb", "pyiceberg")}


@pytest.mark.parametrize("update_type", ["", "eq", "dv"])
def test_full_load_then_changes(db, server, warehouse, tmp_path, update_type, request):  # noqa: F811
    readers = READERS[update_type]
    # Spark reads every delete kind; where it is installed (the suite's set-up installs it), it
    # reads each phase too.
    spark = request.getfixturevalue("spark") if spark_available() else None
    db.sql(f"CREATE TABLE items ({COLUMNS}); CREATE TABLE pairs (a int, b text, v text, PRIMARY KEY (b, a));"
                 "CREATE TABLE noise (id int PRIMARY KEY);"
                 "CREATE PUBLICATION serac_pub FOR TABLE items, pairs;")
    db.sql(INSERT.format(1, 2000) + "; INSERT INTO pairs SELECT i, 'k' || i, 'v' FROM generate_series(1, 50) i;"
                 "UPDATE items SET essay = (SELECT string_agg(md5(g::text), '') FROM generate_series(1, 2000) g) WHERE id <= 3;"
                 "UPDATE items SET name = NULL, price = NULL, scores = '{}' WHERE id = 4;"
                 # numeric's binary form: signs, weights below and above the point, trailing zero groups.
                 "UPDATE items SET price = -0.05, cash = '-0.01' WHERE id = 5; UPDATE items SET price = 0 WHERE id = 6;"
                 "UPDATE items SET price = 100000, cash = '92233720368547758.07' WHERE id = 7;"
                 "UPDATE items SET price = -9999999999.99, tiny = 'NaN', ratio = '-Infinity' WHERE id = 8;")
    args = setup_files(db, server, warehouse, tmp_path, ["items", "pairs"], f"changes_{update_type or 'pos'}",
                       update_type=update_type)
    out = run_sync(args)
    assert "items: loaded 2000 rows" in out.stderr, out.stderr
    assert_equal(db, server, warehouse, "items", readers, spark)
    assert_equal(db, server, warehouse, "pairs", readers, spark)
    state = json.loads((tmp_path / "state.json").read_text())
    assert state["type"] == "GLOBAL" and {s["stream"] for s in state["streams"]} == {"items", "pairs"}
    # Synced Records counts the loads' rows too, as OLake counts them.
    assert json.loads((tmp_path / "stats.json").read_text())["Synced Records"] == 2050

    # Changes of every kind, some in one transaction with the same row touched again.
    db.sql(INSERT.format(2001, 2500) + ";"
                 "UPDATE items SET name = 'renamed', price = price + 1 WHERE id % 10 = 0;"
                 "DELETE FROM items WHERE id % 7 = 0;"
                 "UPDATE items SET id = id + 100000 WHERE id BETWEEN 50 AND 60;"
                 "UPDATE items SET small = 7 WHERE id <= 3;"  # essay is TOASTed and unchanged
                 "BEGIN; INSERT INTO items (id, name) VALUES (900001, 'first');"
                 "UPDATE items SET name = 'second' WHERE id = 900001;"
                 "UPDATE items SET small = 1 WHERE id = 900001; COMMIT;"
                 "BEGIN; INSERT INTO items (id, name) VALUES (900002, 'gone'); DELETE FROM items WHERE id = 900002;"
                 "COMMIT;"
                 "UPDATE pairs SET b = 'moved' WHERE a = 5; DELETE FROM pairs WHERE a = 6;"
                 "INSERT INTO noise VALUES (1);")
    out = run_sync(args)
    assert "applied " in out.stderr, out.stderr
    assert_equal(db, server, warehouse, "items", readers, spark)
    # The delete files are of the kind asked for, on a table of the format it needs.
    table = load_pyiceberg_catalog(server.endpoint, warehouse).load_table("replica.items")
    assert table.metadata.format_version == (3 if update_type == "dv" else 2)
    summaries = [snapshot.summary.additional_properties for snapshot in table.snapshots()]
    counter = {"": "added-position-delete-files", "eq": "added-equality-delete-files", "dv": "added-dvs"}[update_type]
    assert any(int(summary.get(counter, 0)) > 0 for summary in summaries), summaries
    assert all(summary.get("serac.sync.lsn") for summary in summaries)
    # Snapshots of replicated changes say when the source committed the newest of them: before the
    # snapshot itself, and not long before this test made the changes.
    replicated = [(snapshot.timestamp_ms, snapshot.summary.additional_properties) for snapshot in table.snapshots()
                  if "serac.sync.source-commit-ms" in snapshot.summary.additional_properties]
    assert replicated, summaries
    for committed_ms, summary in replicated:
        source_ms = int(summary["serac.sync.source-commit-ms"])
        assert committed_ms - 600_000 < source_ms <= committed_ms + 1000, (source_ms, committed_ms)
    assert_equal(db, server, warehouse, "pairs", readers, spark)

    # A run with nothing new changes nothing; TRUNCATE empties the table, rows after it stay.
    run_sync(args)
    assert_equal(db, server, warehouse, "items", readers, spark)
    db.sql("BEGIN; TRUNCATE pairs; INSERT INTO pairs VALUES (1, 'after', 'x'); COMMIT;")
    run_sync(args)
    assert_equal(db, server, warehouse, "pairs", readers, spark)
    assert_equal(db, server, warehouse, "items", readers, spark)


def test_kill_during_changes_then_resume(db, server, warehouse, tmp_path):  # noqa: F811
    db.sql(f"CREATE TABLE items ({COLUMNS}); CREATE PUBLICATION serac_pub FOR TABLE items;")
    db.sql(INSERT.format(1, 5000))
    args = setup_files(db, server, warehouse, tmp_path, ["items"], slot="crash_slot")
    run_sync(args)
    assert_equal(db, server, warehouse, "items")
    # Many small transactions, so that the run commits several times before it is killed.
    for first in range(0, 300, 50):
        statements = []
        for round_number in range(first, first + 50):
            statements.append(f"BEGIN; UPDATE items SET small = {round_number % 100}, name = 'r{round_number}' "
                              f"WHERE id % 300 = {round_number};")
            statements.append(f"DELETE FROM items WHERE id = {round_number * 13 + 1};")
            statements.append(INSERT.format(10000 + round_number * 20, 10000 + round_number * 20 + 19) +
                              "; COMMIT;")
        db.sql("".join(statements))
    for delay in (0.3, 0.8, 1.5):
        process = subprocess.Popen([SERAC, "sync", *map(str, args)], stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True)
        time.sleep(delay)
        process.send_signal(signal.SIGKILL)
        process.communicate(timeout=60)
    run_sync(args)
    assert_equal(db, server, warehouse, "items")


def commit_transactions(server) -> int:
    """How many all-or-nothing commits across tables the catalog has taken."""
    import urllib.request
    text = urllib.request.urlopen(server.endpoint + "/_serac/metrics", timeout=10).read().decode()
    return sum(int(line.rsplit(" ", 1)[1]) for line in text.splitlines()
               if line.startswith('serac_http_requests_total{operation="CommitTransaction",status="204"}'))


def test_a_transaction_across_tables_lands_in_one_commit(db, server, warehouse, tmp_path):  # noqa: F811
    db.sql("CREATE TABLE accounts (id int PRIMARY KEY, balance bigint);"
           "CREATE TABLE ledger (id int PRIMARY KEY, account int, amount bigint);"
           "CREATE PUBLICATION serac_pub FOR TABLE accounts, ledger;"
           "INSERT INTO accounts SELECT i, 1000 FROM generate_series(1, 100) i;")
    args = setup_files(db, server, warehouse, tmp_path, ["accounts", "ledger"], slot="across_slot")
    run_sync(args)
    # Each transfer moves money between accounts and books it in the ledger, in one transaction.
    db.sql("".join(f"BEGIN; UPDATE accounts SET balance = balance - {n} WHERE id = {n % 100 + 1};"
                   f"UPDATE accounts SET balance = balance + {n} WHERE id = {(n * 7) % 100 + 1};"
                   f"INSERT INTO ledger VALUES ({n}, {n % 100 + 1}, {n}); COMMIT;" for n in range(1, 301)))
    before = commit_transactions(server)
    run_sync(args)
    assert commit_transactions(server) > before
    ORDER["accounts"] = ORDER["ledger"] = "id"
    assert_equal(db, server, warehouse, "accounts", ("duckdb", "pyiceberg"))
    assert_equal(db, server, warehouse, "ledger", ("duckdb", "pyiceberg"))
    # Both tables moved together: the same source positions, snapshot for snapshot.
    catalog = load_pyiceberg_catalog(server.endpoint, warehouse)

    def positions(table):
        snapshots = catalog.load_table(f"replica.{table}").snapshots()[1:]  # after the load's
        return [s.summary.additional_properties["serac.sync.lsn"] for s in snapshots]
    assert positions("accounts") and positions("accounts") == positions("ledger")


def test_source_schema_changes_become_schema_evolution(db, server, warehouse, tmp_path):  # noqa: F811
    """Columns added, renamed, widened and dropped at the source, between runs and inside the stream,
    each data change landing under the schema it was made with."""
    db.sql(f"CREATE TABLE items ({COLUMNS}); CREATE PUBLICATION serac_pub FOR TABLE items;")
    db.sql(INSERT.format(1, 300))
    args = setup_files(db, server, warehouse, tmp_path, ["items"], "schema_slot")
    run_sync(args)
    db.sql("UPDATE items SET name = 'before' WHERE id < 10;"
           "ALTER TABLE items ADD COLUMN extra int; UPDATE items SET extra = id * 2 WHERE id % 3 = 0;"
           "ALTER TABLE items RENAME COLUMN name TO title; UPDATE items SET title = 'renamed' WHERE id % 5 = 0;"
           "ALTER TABLE items ALTER COLUMN small TYPE bigint, ALTER COLUMN price TYPE numeric(16, 2);"
           "UPDATE items SET small = 9000000000, price = 12345678901234.5 WHERE id = 7;"
           "ALTER TABLE items DROP COLUMN essay; DELETE FROM items WHERE id = 8;")
    db.sql("INSERT INTO items (id, title, extra, small) VALUES (1000, 'new shape', 5, 1)")
    out = run_sync(args)
    assert "schema" in out.stderr, out.stderr
    assert_equal(db, server, warehouse, "items", ("duckdb", "pyiceberg"))
    table = load_pyiceberg_catalog(server.endpoint, warehouse).load_table("replica.items")
    fields = {f.name: f for f in table.schema().fields}
    assert "essay" not in fields and "name" not in fields and str(fields["small"].field_type) == "long"
    assert fields["title"].field_id == 3  # the renamed column keeps its id: its history stays readable
    # Changed while no sync runs: the next run's stream brings them in order.
    db.sql("ALTER TABLE items ADD COLUMN later text DEFAULT NULL; UPDATE items SET later = 'x' WHERE id < 5;"
           "ALTER TABLE items RENAME COLUMN title TO label;")
    run_sync(args)
    assert_equal(db, server, warehouse, "items", ("duckdb", "pyiceberg"))
    fields = {f.name: f for f in load_pyiceberg_catalog(server.endpoint, warehouse).load_table(
        "replica.items").schema().fields}
    assert fields["label"].field_id == 3


def test_a_column_added_with_a_default_fills_older_rows(db, server, warehouse, tmp_path):  # noqa: F811
    """ADD COLUMN ... DEFAULT gives older rows a value without a change in the WAL (a constant is
    kept in the catalog, a volatile default rewrites the table): the table is loaded again under a
    fresh snapshot, changes to it before that skipped, other tables' changes applied meanwhile."""
    db.sql("CREATE TABLE items (id int PRIMARY KEY, v text); CREATE TABLE other (id int PRIMARY KEY);"
           "CREATE PUBLICATION serac_pub FOR TABLE items, other;"
           "INSERT INTO items SELECT i, 'v' || i FROM generate_series(1, 500) i;")
    args = setup_files(db, server, warehouse, tmp_path, ["items", "other"], "filled_slot")
    run_sync(args)
    db.sql("UPDATE items SET v = 'before' WHERE id <= 10; INSERT INTO other VALUES (1);"
           "ALTER TABLE items ADD COLUMN flag int DEFAULT 7;"
           "ALTER TABLE items ADD COLUMN seq bigint DEFAULT (random() * 1000)::bigint;"
           "ALTER TABLE items ADD COLUMN plain text;"
           "UPDATE items SET v = 'after' WHERE id BETWEEN 5 AND 15; INSERT INTO other VALUES (2);"
           "INSERT INTO items (id, v) VALUES (1000, 'new'); INSERT INTO other VALUES (3);")
    out = run_sync(args)
    assert "loading again" in out.stderr, out.stderr
    assert_equal(db, server, warehouse, "items", ("duckdb", "pyiceberg"))
    assert_equal(db, server, warehouse, "other")
    # A column added after the table's last change: found at the run's end, loaded the same way.
    db.sql("ALTER TABLE items ADD COLUMN late int DEFAULT 3; INSERT INTO other VALUES (4);")
    run_sync(args)
    assert_equal(db, server, warehouse, "items", ("duckdb", "pyiceberg"))
    assert_equal(db, server, warehouse, "other")
    table = load_pyiceberg_catalog(server.endpoint, warehouse).load_table("replica.items")
    assert "serac.sync.reload" not in table.properties
    # A column without a default changes nothing that is there: no load.
    db.sql("ALTER TABLE items ADD COLUMN empty int; UPDATE items SET v = 'x' WHERE id = 1;")
    out = run_sync(args)
    assert "loading again" not in out.stderr, out.stderr
    assert_equal(db, server, warehouse, "items")


@pytest.mark.parametrize("update_type", ["", "dv"])
def test_partitioned_table_with_changes(db, server, warehouse, tmp_path, update_type):  # noqa: F811
    db.sql(f"CREATE TABLE items ({COLUMNS}); CREATE PUBLICATION serac_pub FOR TABLE items;")
    db.sql(INSERT.format(1, 1000))
    args = setup_files(db, server, warehouse, tmp_path, ["items"], f"parts_{update_type or 'pos'}",
                       update_type=update_type, partition_regex="/{born, month}/{id, bucket[4]}")
    run_sync(args)
    table = load_pyiceberg_catalog(server.endpoint, warehouse).load_table("replica.items")
    assert [(f.name, str(f.transform)) for f in table.spec().fields] == [("born_month", "month"),
                                                                       ("id_bucket", "bucket[4]")]
    assert_equal(db, server, warehouse, "items", ("duckdb", "pyiceberg"))
    db.sql(INSERT.format(1001, 1200) + "; UPDATE items SET born = born + 40, name = 'moved' WHERE id % 9 = 0;"
           "DELETE FROM items WHERE id % 11 = 0; UPDATE items SET id = id + 5000 WHERE id % 13 = 0;")
    run_sync(args)
    assert_equal(db, server, warehouse, "items", ("duckdb", "pyiceberg"))


def test_kill_during_full_load_then_resume(db, server, warehouse, tmp_path):  # noqa: F811
    """Killed while loading (the slot exists, no table is marked loaded): the next run loads again
    under a temporary slot's snapshot and skips the slot's older changes for that table."""
    db.sql(f"CREATE TABLE items ({COLUMNS}); CREATE PUBLICATION serac_pub FOR TABLE items;")
    db.sql(INSERT.format(1, 120000))
    args = setup_files(db, server, warehouse, tmp_path, ["items"], "load_crash_slot")
    for round_number, delay in enumerate((0.3, 0.8)):
        process = subprocess.Popen([SERAC, "sync", *map(str, args)], stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True)
        time.sleep(delay)
        process.send_signal(signal.SIGKILL)
        _, err = process.communicate(timeout=60)
        assert "loaded 120000 rows" not in err or round_number > 0, err
        # Changes while no sync runs: some before the next load's snapshot, all in the slot.
        db.sql(f"UPDATE items SET name = 'round {round_number}' WHERE id % 1000 = {round_number};"
               f"DELETE FROM items WHERE id % 997 = {round_number};"
               + INSERT.format(300000 + round_number * 10, 300000 + round_number * 10 + 9))
    assert db.sql("SELECT count(*) FROM pg_replication_slots WHERE slot_name = 'load_crash_slot'").strip() == "1"
    run_sync(args)
    assert_equal(db, server, warehouse, "items")
    db.sql("UPDATE items SET name = 'after' WHERE id % 500 = 0")
    run_sync(args)
    assert_equal(db, server, warehouse, "items")


def test_progress_on_a_terminal_and_in_logs(db, server, warehouse, tmp_path):  # noqa: F811
    import pty
    db.sql(f"CREATE TABLE items ({COLUMNS}); CREATE PUBLICATION serac_pub FOR TABLE items; ANALYZE items;")
    db.sql(INSERT.format(1, 20000) + "; ANALYZE items")
    args = setup_files(db, server, warehouse, tmp_path, ["items"], "progress_slot")
    primary, secondary = pty.openpty()
    proc = subprocess.Popen([SERAC, "sync", *map(str, args)], stdout=subprocess.PIPE, stderr=secondary)
    os.close(secondary)
    drawn = b""
    while True:
        try:
            chunk = os.read(primary, 4096)
        except OSError:
            break
        if not chunk:
            break
        drawn += chunk
    proc.communicate(timeout=120)
    os.close(primary)
    assert proc.returncode == 0, drawn[-2000:]
    assert b"replica.items: " in drawn and b"rows of about 20000" in drawn and b"\r" in drawn, drawn[:1000]
    assert b"\x1b[K" in drawn and b"loaded 20000 rows" in drawn
    # Away from a terminal: log lines, the first at once.
    db.sql("UPDATE items SET name = 'x' WHERE id < 100")
    out = run_sync(args)
    assert "changes: " in out.stderr and "behind the source" in out.stderr, out.stderr
    # How far behind: the distance from the slot's position, not a position (the cluster's WAL is
    # far past 5 MB; these changes are not).
    behind = [float(mb) for mb in re.findall(r"([\d.]+) MB behind the source", out.stderr)]
    assert behind and max(behind) < 5, out.stderr


def test_incremental_reads_rows_from_the_cursor_on(db, server, warehouse, tmp_path):  # noqa: F811
    db.sql("CREATE TABLE notes (id int PRIMARY KEY, body text, created timestamptz NOT NULL, updated timestamptz);"
           "INSERT INTO notes SELECT i, 'v1', TIMESTAMPTZ '2024-01-01' + i * INTERVAL '1 s', NULL "
           "FROM generate_series(1, 500) i;")
    args = setup_files(db, server, warehouse, tmp_path, ["notes"], "unused_slot", modes={"notes": "incremental"},
                       cursor="updated:created")
    out = run_sync(args)
    assert "loaded 500 rows" in out.stderr, out.stderr
    ORDER["notes"] = "id"
    assert_equal(db, server, warehouse, "notes", ("duckdb", "pyiceberg"))
    state = json.loads((tmp_path / "state.json").read_text())
    assert state["streams"][0]["state"]["cursor"].startswith("2024-01-01 00:08:20"), state
    # Updates move the cursor (updated), new rows come after it (created); the rows at the cursor
    # itself are read again and upserted, never doubled.
    db.sql("UPDATE notes SET body = 'v2', updated = TIMESTAMPTZ '2025-01-01' + id * INTERVAL '1 s' WHERE id % 10 = 0;"
           "INSERT INTO notes SELECT i, 'new', TIMESTAMPTZ '2024-06-01' + i * INTERVAL '1 s', NULL "
           "FROM generate_series(501, 520) i;")
    out = run_sync(args)
    assert "notes: " in out.stderr and "rows from cursor 2025-01-01 00:08:20" in out.stderr, out.stderr
    assert_equal(db, server, warehouse, "notes", ("duckdb", "pyiceberg"))
    out = run_sync(args)  # nothing new: only the rows at the cursor are read again
    assert_equal(db, server, warehouse, "notes", ("duckdb", "pyiceberg"))
    assert db.sql("SELECT count(*) FROM pg_replication_slots WHERE slot_name = 'unused_slot'").strip() == "0"


def test_a_transaction_of_a_million_rows(db, server, warehouse, tmp_path):  # noqa: F811
    """One transaction larger than a flush holds: committed in parts (the position stays before it
    until its end), then killed and replayed from its start without doubling a row."""
    db.sql("CREATE TABLE big (id int PRIMARY KEY, v text); CREATE PUBLICATION serac_pub FOR TABLE big;"
           "INSERT INTO big VALUES (0, 'before')")
    args = setup_files(db, server, warehouse, tmp_path, ["big"], "big_slot")
    run_sync(args)
    db.sql("BEGIN; INSERT INTO big SELECT i, 'row ' || i FROM generate_series(1, 1000000) i;"
           "UPDATE big SET v = 'changed' WHERE id % 100000 = 0; DELETE FROM big WHERE id % 250000 = 1; COMMIT;")
    process = subprocess.Popen([SERAC, "sync", *map(str, args)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True)
    time.sleep(4)
    process.send_signal(signal.SIGKILL)
    process.communicate(timeout=60)
    run_sync(args)
    expected = tuple(int(v) for v in db.sql(
        "SELECT count(*), sum(id), count(*) FILTER (WHERE v = 'changed'), count(DISTINCT id) FROM big").split("|"))
    assert expected == (999997, 499998999996, 11, 999997)
    [(_, [got])] = duckdb_query(server, warehouse, "SELECT count(*), sum(id), count(*) FILTER "
                                                   "(WHERE v = 'changed'), count(DISTINCT id) FROM cat.replica.big")
    assert got == expected, got


def test_large_transactions_streamed_while_they_run(db, server, warehouse, tmp_path):  # noqa: F811
    """PostgreSQL streams a transaction larger than logical_decoding_work_mem before its commit
    (protocol 2): kept on disk until its end, without its rolled-back subtransactions; a streamed
    transaction that rolls back leaves nothing; small transactions committed meanwhile land."""
    db.sql("CREATE TABLE big (id int PRIMARY KEY, v text); CREATE TABLE other (id int PRIMARY KEY);"
           "CREATE PUBLICATION serac_pub FOR TABLE big, other; INSERT INTO big VALUES (0, 'before')")
    args = setup_files(db, server, warehouse, tmp_path, ["big", "other"], "streamed_slot")
    run_sync(args)
    running = subprocess.Popen(
        [str(PG_BIN / "psql"), "-X", "-q", "-v", "ON_ERROR_STOP=1", "-h", db.server.host, "-p", str(db.server.port),
         "-U", db.server.user, "-d", db.name, "-c",
         "BEGIN; INSERT INTO big SELECT i, 'a' FROM generate_series(1, 20000) i;"
         "SAVEPOINT s; INSERT INTO big SELECT i, 'gone' FROM generate_series(20001, 40000) i;"
         "UPDATE big SET v = 'gone' WHERE id <= 100; ROLLBACK TO SAVEPOINT s;"
         "SAVEPOINT t; UPDATE big SET v = 'kept' WHERE id % 1000 = 0; RELEASE SAVEPOINT t;"
         "SELECT pg_sleep(1.5); DELETE FROM big WHERE id % 5000 = 1; COMMIT;"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    for n in range(1, 6):  # committed while the large one runs
        db.sql(f"INSERT INTO other VALUES ({n}); INSERT INTO big VALUES ({100000 + n}, 'meanwhile')")
        time.sleep(0.2)
    db.sql("BEGIN; INSERT INTO big SELECT i, 'x' FROM generate_series(200000, 230000) i; ROLLBACK;")
    _, errors = running.communicate(timeout=120)
    assert running.returncode == 0, errors
    # 64 kB of decoded changes is all the walsender of this run holds before it streams.
    db.sql(f"ALTER DATABASE {db.name} SET logical_decoding_work_mem = '64kB'")
    out = run_sync(args)
    assert_equal(db, server, warehouse, "big", ("duckdb", "pyiceberg"))
    assert_equal(db, server, warehouse, "other", ("duckdb",))
    streamed = int(db.sql("SELECT stream_txns FROM pg_stat_replication_slots WHERE slot_name = 'streamed_slot'"))
    assert streamed >= 2, out.stderr
    assert not list(tmp_path.glob(".serac-sync-*"))


def test_olake_columns_and_soft_deletes(db, server, warehouse, tmp_path):  # noqa: F811
    db.sql("CREATE TABLE orders (id int PRIMARY KEY, v text); CREATE TABLE lines (o int, n int, v text, at time, "
           "PRIMARY KEY (o, n)); CREATE PUBLICATION serac_pub FOR TABLE orders, lines;"
           "INSERT INTO orders SELECT i, 'v' || i FROM generate_series(1, 10) i;"
           "INSERT INTO lines SELECT i, j, 'x', TIME '10:00:00.5' + i * INTERVAL '1 s' "
           "FROM generate_series(1, 3) i, generate_series(1, 2) j;")
    args = setup_files(db, server, warehouse, tmp_path, ["orders", "lines"], "olake_columns_slot",
                       writer={"olake_columns": True})
    run_sync(args)
    db.sql("UPDATE orders SET v = 'changed' WHERE id = 2; DELETE FROM orders WHERE id = 3;"
           "INSERT INTO orders VALUES (11, 'new'); BEGIN; INSERT INTO orders VALUES (12, 'a');"
           "UPDATE orders SET v = 'b' WHERE id = 12; COMMIT; DELETE FROM lines WHERE o = 1 AND n = 2;")
    run_sync(args)
    (_, orders), (_, lines), (_, times) = duckdb_query(
        server, warehouse,
        "SELECT id, v, _olake_id, _op_type, _cdc_timestamp IS NOT NULL, _olake_timestamp IS NOT NULL "
        "FROM cat.replica.orders",
        "SELECT o, n, _olake_id, _op_type FROM cat.replica.lines ORDER BY o, n",
        "SELECT o, \"at\" FROM cat.replica.lines WHERE n = 1 ORDER BY o")
    rows = {r[0]: r[1:] for r in orders}
    assert rows[1] == ("v1", "1", "r", False, True)
    assert rows[2] == ("changed", "2", "u", True, True)
    assert rows[3] == (None, "3", "d", True, True)  # the delete kept as a row (soft delete)
    assert rows[11] == ("new", "11", "c", True, True)
    assert rows[12] == ("b", "12", "c", True, True)  # inserted and updated in one transaction: one row
    assert len(rows) == 12
    import hashlib
    # A composite key: MD5 of its values joined by | in the order of the columns' names (n, then o).
    assert (1, 2, hashlib.md5(b"2|1").hexdigest(), "d") in lines
    assert (2, 1, hashlib.md5(b"1|2").hexdigest(), "r") in lines and len(lines) == 6
    assert times == [(o, datetime.time(10, 0, o, 500000)) for o in (1, 2, 3)]  # time, read in binary
    # What OLake's users query: the live rows.
    live = {k: v[0] for k, v in rows.items() if v[2] != "d"}
    assert live == {int(i): v for i, v in (line.split("|") for line in
                                             db.sql("SELECT id, v FROM orders").strip().splitlines())}


def test_an_olake_setup_from_its_documentation_runs_unchanged(db, server, warehouse, tmp_path):  # noqa: F811
    """OLake's quick start: the user makes the publication and the slot (pgoutput) beforehand, writes
    source.json and destination.json as its docs show, runs discover, then sync with --catalog."""
    db.sql("CREATE TABLE customers (id serial PRIMARY KEY, name text, joined date);"
           "INSERT INTO customers (name, joined) SELECT 'c' || i, DATE '2024-01-01' + i FROM generate_series(1, 50) i;"
           "CREATE PUBLICATION olake_publication FOR ALL TABLES;")
    db.sql("SELECT pg_create_logical_replication_slot('olake_slot', 'pgoutput')")
    write_json(tmp_path / "source.json", dict(db.source_config(), **{
        "jdbc_url_params": {}, "max_threads": 5, "retry_count": 3, "ssh_config": {},
        "update_method": {"replication_slot": "olake_slot", "publication": "olake_publication",
                          "initial_wait_time": 120}}))
    host_port = server.endpoint.split("://", 1)[1]
    write_json(tmp_path / "destination.json", {"type": "ICEBERG", "writer": {
        "catalog_type": "rest", "catalog_name": "olake_iceberg", "rest_catalog_url": server.endpoint + CATALOG_BASE,
        "iceberg_s3_path": warehouse, "iceberg_db": "replica", "rest_signing_v_4": True,
        "rest_signing_name": "s3tables", "rest_signing_region": REGION, "s3_endpoint": host_port,
        "s3_use_ssl": False, "s3_path_style": True, "aws_region": REGION, "aws_access_key": ACCESS_KEY,
        "aws_secret_key": SECRET_KEY, "arrow_writes": True, "no_identifier_fields": False}})
    out = subprocess.run([SERAC, "sync", "discover", "--config", tmp_path / "source.json", "--catalog",
                          tmp_path / "streams.json"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    args = ["--config", tmp_path / "source.json", "--catalog", tmp_path / "streams.json", "--destination",
            tmp_path / "destination.json", "--state", tmp_path / "state.json"]
    out = run_sync(args)
    assert "writer.arrow_writes: not used" in out.stderr and out.stderr.count("arrow_writes") == 1, out.stderr
    db.sql("INSERT INTO customers (name) VALUES ('late'); UPDATE customers SET name = 'x' WHERE id = 3;"
           "DELETE FROM customers WHERE id = 4;")
    run_sync(args)
    ORDER["customers"] = "id"
    assert_equal(db, server, warehouse, "customers", ("duckdb", "pyiceberg"))


def test_append_mode_and_filter(db, server, warehouse, tmp_path):  # noqa: F811
    """append_mode keeps every version (OLake's columns tell them apart); filter narrows the load."""
    db.sql("CREATE TABLE events (id int PRIMARY KEY, v text); CREATE PUBLICATION serac_pub FOR TABLE events;"
           "INSERT INTO events SELECT i, 'v' || i FROM generate_series(1, 10) i;")
    args = setup_files(db, server, warehouse, tmp_path, ["events"], "append_slot", writer={"olake_columns": True},
                       selection_extra={"append_mode": True, "filter": "id > 5", "chunk_column": "id"})
    out = run_sync(args)
    assert "chunk_column: not used" in out.stderr, out.stderr
    db.sql("UPDATE events SET v = 'again' WHERE id = 7; DELETE FROM events WHERE id = 8;"
           "INSERT INTO events VALUES (1000, 'new'); UPDATE events SET v = 'twice' WHERE id = 1000;")
    run_sync(args)
    [(_, events)] = duckdb_query(server, warehouse, "SELECT id, v, _op_type FROM cat.replica.events")
    rows = sorted(events, key=lambda r: (r[0], "rcud".index(r[2])))
    assert rows == [(6, "v6", "r"), (7, "v7", "r"), (7, "again", "u"), (8, "v8", "r"), (8, None, "d"),
                    (9, "v9", "r"), (10, "v10", "r"), (1000, "new", "c"), (1000, "twice", "u")], rows


def test_olake_filters_as_documented(db, server, warehouse, tmp_path):  # noqa: F811
    """OLake's filter text (double-quoted strings, one or two conditions) and filter_config narrow a
    load; a filter in another syntax or naming a missing column stops the run naming streams.json and
    the stream, before anything is read."""
    db.sql("CREATE TABLE people (id int PRIMARY KEY, city text, \"Score\" numeric, note text);"
           "CREATE PUBLICATION serac_pub FOR TABLE people;"
           "INSERT INTO people VALUES (1, 'London', 1, 'it''s'), (2, 'Paris', 2, NULL), (3, 'London', 3, NULL),"
           "(4, 'London', NULL, 'x'), (5, 'Rome', 5, 'y');")
    args = setup_files(db, server, warehouse, tmp_path, ["people"], "filter_slot", modes={"people": "full_refresh"},
                       selection_extra={"filter": 'city = "London" and "Score" >= 2'})
    run_sync(args)
    [(_, rows)] = duckdb_query(server, warehouse, "SELECT id FROM cat.replica.people ORDER BY id")
    assert rows == [(3,)]

    def with_selection(extra):
        streams = json.loads((tmp_path / "streams.json").read_text())
        for key in ("filter", "filter_config"):
            streams["selected_streams"]["public"][0].pop(key, None)
        streams["selected_streams"]["public"][0].update(extra)
        (tmp_path / "streams.json").write_text(json.dumps(streams))

    with_selection({"filter_config": {"logical_operator": "or", "conditions": [
        {"column": "note", "operator": "=", "value": "it's"}, {"column": "Score", "operator": "=", "value": None}]}})
    run_sync(args)
    [(_, rows)] = duckdb_query(server, warehouse, "SELECT id FROM cat.replica.people ORDER BY id")
    assert rows == [(1,), (4,)]

    for extra, message in (({"filter": "city = 'London'"}, "strings are written in double quotes"),
                           ({"filter": "city = \"London\" and id > 1 or id < 9"}, "at most two conditions"),
                           ({"filter": "City = \"London\""}, "column City is not a column of"),
                           ({"filter_config": {"conditions": [{"column": "id", "operator": "<>", "value": 1}]}},
                            "operator: must be one of")):
        with_selection(extra)
        out = run_sync(args, check=False)
        assert out.returncode != 0 and "streams.json: stream public.people: filter" in out.stderr and \
            message in out.stderr, out.stderr


def test_configuration_mistakes_name_the_file_and_field(db, server, warehouse, tmp_path):  # noqa: F811
    """A wrong secret names destination.json's fields, whether the catalog or S3 refuses it; a
    catalog URL without /_iceberg says to add it; OLake's jdbc_url_params example connects."""
    db.sql("CREATE TABLE t (id int PRIMARY KEY); CREATE PUBLICATION serac_pub FOR TABLE t; INSERT INTO t VALUES (1);")
    args = setup_files(db, server, warehouse, tmp_path, ["t"], "mistakes_slot")
    destination_path = tmp_path / "destination.json"
    good = json.loads(destination_path.read_text())

    def with_writer(**changes):
        writer = dict(good["writer"], **changes)
        destination_path.write_text(json.dumps({"type": "ICEBERG", "writer": writer}))

    with_writer(aws_secret_key="not-the-secret")
    out = run_sync(args, check=False)
    assert out.returncode != 0 and f"{destination_path}: writer.aws_access_key and writer.aws_secret_key: " \
        "the catalog at" in out.stderr, out.stderr
    # The catalog signed in with OAuth2, the S3 keys wrong: S3 refuses them when data goes up.
    with_writer(rest_signing_v_4=False, credential=f"{ACCESS_KEY}:{SECRET_KEY}", aws_secret_key="not-the-secret")
    out = run_sync(args, check=False)
    assert out.returncode != 0 and f"{destination_path}: writer.aws_access_key and writer.aws_secret_key: " \
        "the S3 endpoint refused them" in out.stderr, out.stderr
    with_writer(rest_catalog_url=server.endpoint)
    out = run_sync(args, check=False)
    assert out.returncode != 0 and f"serac's catalog is at {server.endpoint}/_iceberg" in out.stderr, out.stderr

    with_writer()
    source = json.loads((tmp_path / "source.json").read_text())
    source["jdbc_url_params"] = {"connectTimeout": "20", "ApplicationName": "olake", "socketTimeout": "60",
                                 "statement_timeout": "5min"}
    (tmp_path / "source.json").write_text(json.dumps(source))
    out = run_sync(args)
    assert "jdbc_url_params.socketTimeout: not used" in out.stderr, out.stderr
    source["jdbc_url_params"] = {"no_such_setting": "1"}
    (tmp_path / "source.json").write_text(json.dumps(source))
    out = run_sync(args, check=False)
    assert out.returncode != 0 and "jdbc_url_params.no_such_setting in the source configuration" in out.stderr, \
        out.stderr


def test_each_state_file_has_its_own_stats(db, server, warehouse, tmp_path):  # noqa: F811
    """Two syncs whose state files share a directory keep their stats apart."""
    db.sql("CREATE TABLE a (id int PRIMARY KEY); CREATE TABLE b (id int PRIMARY KEY);"
           "CREATE PUBLICATION serac_pub FOR TABLE a, b;"
           "INSERT INTO a SELECT generate_series(1, 30); INSERT INTO b SELECT generate_series(1, 70);")
    for table, slot, count in (("a", "stats_a", 30), ("b", "stats_b", 70)):
        args = setup_files(db, server, warehouse, tmp_path, [table], slot)
        args[-1] = tmp_path / f"{table}-state.json"
        run_sync(args)
        assert json.loads((tmp_path / f"{table}-stats.json").read_text())["Synced Records"] == count
    assert not (tmp_path / "stats.json").exists()
    assert json.loads((tmp_path / "a-stats.json").read_text())["Synced Records"] == 30


def test_trino_and_clickhouse_read_a_synced_table(db, server, trino, trino_warehouse, tmp_path):  # noqa: F811
    """Position deletes (the default) are read by every engine: Trino and ClickHouse see the
    source's rows after a load and after changes."""
    from test_table_writes import ids_by_clickhouse
    db.sql("CREATE TABLE kept (id bigint PRIMARY KEY, v text); CREATE PUBLICATION serac_pub FOR TABLE kept;"
           "INSERT INTO kept SELECT i, 'v' || i FROM generate_series(1, 2000) i;")
    args = setup_files(db, server, trino_warehouse, tmp_path, ["kept"], "engines_slot",
                       selection_extra={"engines": ["trino", "clickhouse", "duckdb"]})
    run_sync(args)
    db.sql("DELETE FROM kept WHERE id % 7 = 0; UPDATE kept SET v = 'changed' WHERE id % 5 = 0;"
           "UPDATE kept SET id = id + 10000 WHERE id % 11 = 0; INSERT INTO kept VALUES (99999, 'new');")
    run_sync(args)
    expected = sorted((int(i), v) for i, v in (line.split("|") for line in
                                               db.sql("SELECT id, v FROM kept").strip().splitlines()))
    assert sorted(tuple(r) for r in trino.query("SELECT id, v FROM iceberg.replica.kept")) == expected
    assert ids_by_clickhouse(server, trino_warehouse, "replica.kept", tmp_path) == [i for i, _ in expected]


def test_delete_kind_chosen_from_the_engines(db, server, warehouse, tmp_path):  # noqa: F811
    """A stream's `engines` (else the writer's) choose the kind of deletes all of them read: the
    best the table's format holds (README's table of who reads what)."""
    db.sql("CREATE TABLE seen (id int PRIMARY KEY, v text); CREATE TABLE shared (id int PRIMARY KEY, v text);"
           "CREATE PUBLICATION serac_pub FOR TABLE seen, shared;"
           "INSERT INTO seen SELECT i, 'v' FROM generate_series(1, 100) i;"
           "INSERT INTO shared SELECT i, 'v' FROM generate_series(1, 100) i;")
    args = setup_files(db, server, warehouse, tmp_path, ["seen", "shared"], "engines_choose",
                       writer={"engines": ["Trino", "pyiceberg"]})
    streams_path = tmp_path / "streams.json"
    streams = json.loads(streams_path.read_text())
    streams["selected_streams"]["public"][0]["engines"] = ["spark", "pyiceberg", "duckdb"]
    write_json(streams_path, streams)
    run_sync(args)
    db.sql("DELETE FROM seen WHERE id % 3 = 0; UPDATE shared SET v = 'w' WHERE id % 4 = 0;")
    run_sync(args)
    catalog = load_pyiceberg_catalog(server.endpoint, warehouse)
    for name, version, counter in (("seen", 3, "added-dvs"), ("shared", 2, "added-position-delete-files")):
        table = catalog.load_table(f"replica.{name}")
        assert table.metadata.format_version == version, name
        summaries = [snapshot.summary.additional_properties for snapshot in table.snapshots()]
        assert any(int(summary.get(counter, 0)) > 0 for summary in summaries), (name, summaries)
        assert_equal(db, server, warehouse, name, ("duckdb", "pyiceberg"), None)

    # The v3 table cannot serve Trino and PyIceberg both (Trino reads no DV, PyIceberg no equality
    # delete): the run says so before writing anything.
    streams["selected_streams"]["public"][0]["engines"] = ["trino", "pyiceberg"]
    write_json(streams_path, streams)
    out = run_sync(args, check=False)
    assert out.returncode != 0
    assert "replica.seen: a format v3 table holds no kind of delete that every engine named for it reads " \
           "(trino, pyiceberg)" in out.stderr, out.stderr
    # update_type against an engine that does not read it is refused where it is written.
    streams["selected_streams"]["public"][0].update(engines=["pyiceberg"], update_type="eq")
    write_json(streams_path, streams)
    out = run_sync(args, check=False)
    assert "streams.json: selected_streams.public[0].update_type: eq deletes are not read by pyiceberg" \
        in out.stderr, out.stderr


@pytest.mark.parametrize("key_type", ["uuid", "text", "bytea"])
def test_keys_of_bytes(db, server, warehouse, tmp_path, key_type):  # noqa: F811
    """Changes to tables keyed by uuid, text or bytea find their rows by the key's bytes, in the
    data files read once and in their key index after that."""
    key = {"uuid": "md5(i::text)::uuid", "text": "'k' || i", "bytea": "decode(lpad(to_hex(i), 8, '0'), 'hex')"}[key_type]
    db.sql(f"CREATE TABLE keyed (k {key_type} PRIMARY KEY, id int, v text); CREATE PUBLICATION serac_pub FOR TABLE keyed;"
           f"INSERT INTO keyed SELECT {key}, i, 'v' || i FROM generate_series(1, 3000) i;")
    args = setup_files(db, server, warehouse, tmp_path, ["keyed"], f"bytes_{key_type}")
    run_sync(args)
    db.sql("UPDATE keyed SET v = 'changed' WHERE id % 3 = 0; DELETE FROM keyed WHERE id % 7 = 0;"
           f"INSERT INTO keyed SELECT {key}, i, 'late' FROM generate_series(5001, 5100) i;"
           "UPDATE keyed SET v = 'again' WHERE id % 9 = 0;")
    run_sync(args)
    # The data files read to find rows are indexed beside state.json, for this run and the next.
    [index] = list((tmp_path / "state.json.keys").iterdir())
    assert list(index.glob("*.kix"))
    db.sql("UPDATE keyed SET v = 'third' WHERE id % 5 = 0; DELETE FROM keyed WHERE id % 11 = 0;")
    run_sync(args)
    expected = sorted((int(i), v) for i, v in (line.split("|") for line in
                                               db.sql("SELECT id, v FROM keyed").strip().splitlines()))
    rows = load_pyiceberg_catalog(server.endpoint, warehouse).load_table("replica.keyed").scan(
        selected_fields=("id", "v")).to_arrow().to_pylist()
    assert sorted((r["id"], r["v"]) for r in rows) == expected


def test_errors_name_the_file_and_the_stream(db, server, warehouse, tmp_path):  # noqa: F811
    db.sql("CREATE TABLE plain (id int PRIMARY KEY); CREATE PUBLICATION serac_pub FOR TABLE plain;")
    # A destination that refuses the keys, and a source that is down: clear errors, no secret shown.
    args = setup_files(db, server, warehouse, tmp_path, ["plain"], "errors_slot")
    destination = json.loads((tmp_path / "destination.json").read_text())
    destination["writer"]["aws_secret_key"] = "wrong-secret-value"
    write_json(tmp_path / "bad-destination.json", destination)
    bad = [str(a) for a in args]
    bad[bad.index("--destination") + 1] = str(tmp_path / "bad-destination.json")
    out = run_sync(bad, check=False)
    assert out.returncode == 1 and "wrong-secret-value" not in out.stderr, out.stderr
    assert "SignatureDoesNotMatch" in out.stderr or "signature" in out.stderr.lower(), out.stderr
    source = json.loads((tmp_path / "source.json").read_text())
    write_json(tmp_path / "down.json", dict(source, port=1))
    down = [str(a) for a in args]
    down[down.index("--config") + 1] = str(tmp_path / "down.json")
    out = run_sync(down, check=False)
    assert out.returncode == 1 and "cannot connect to PostgreSQL at 127.0.0.1:1" in out.stderr, out.stderr
    args = setup_files(db, server, warehouse, tmp_path, ["plain", "absent"], "errors_slot")
    out = run_sync(args, check=False)
    assert out.returncode == 1 and "table public.absent does not exist in the source" in out.stderr, out.stderr
    streams = json.loads((tmp_path / "streams.json").read_text())
    streams["streams"][0]["stream"]["sync_mode"] = "incremental"
    write_json(tmp_path / "streams.json", streams)
    out = run_sync(args, check=False)
    assert out.returncode == 1 and "streams.json: public.plain: cursor_field: sync_mode incremental needs" in \
        out.stderr, out.stderr
    out = run_sync(["--config", tmp_path / "source.json"], check=False)
    assert out.returncode == 1 and "a run needs --streams" in out.stderr, out.stderr
    db.sql("CREATE TABLE other (id int PRIMARY KEY); ALTER PUBLICATION serac_pub ADD TABLE other;")
    args = setup_files(db, server, warehouse, tmp_path, ["other"], "errors_slot", partition_regex="/{nope, day}")
    out = run_sync(args, check=False)
    assert out.returncode == 1 and 'partition_regex "/{nope, day}": partition by nope: no such column' in out.stderr, \
        out.stderr


@pytest.mark.parametrize("mode", ["full_refresh"])
def test_full_refresh_replaces_the_table(db, server, warehouse, tmp_path, mode):  # noqa: F811
    db.sql(f"CREATE TABLE items ({COLUMNS}); CREATE PUBLICATION serac_pub FOR TABLE items;")
    db.sql(INSERT.format(1, 300))
    args = setup_files(db, server, warehouse, tmp_path, ["items"], "refresh_slot", modes={"items": mode})
    run_sync(args)
    assert_equal(db, server, warehouse, "items")
    db.sql("DELETE FROM items WHERE id > 100; UPDATE items SET name = 'x' WHERE id < 10;")
    run_sync(args)
    assert_equal(db, server, warehouse, "items")
    assert db.sql("SELECT count(*) FROM pg_replication_slots WHERE slot_name = 'refresh_slot'").strip() == "0"
