"""Every Arrow type that pyarrow, Polars, DuckDB and Spark write to Parquet, loaded by `serac table
load`: a table created from the file (`--create`) takes the Iceberg type that holds the values
(uuids from the arrow.uuid extension, large and view strings and binaries, dictionaries and
categoricals, nanosecond timestamps in a format-3 table, unsigned longs as decimal(20, 0), fixed-size
and view lists, maps and structs), an append of the same file into that table converts each value
to it, and PyIceberg reads back what the file holds. A type Iceberg has no place for (durations,
intervals, a column of nulls without a type, decimals beyond 38 digits) is refused with a message
naming the column."""
from __future__ import annotations

import datetime
import decimal
import uuid
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from catalog_util import catalog, catalog_api, load_pyiceberg_catalog, warehouse  # noqa: F401
from spark_util import spark, spark_available  # noqa: F401
from test_table_writes import serac

ROW_IDS = [1, 2, 3]


def normal(value):
    """One form for a value as pyarrow reads the input and as PyIceberg reads the table."""
    if isinstance(value, uuid.UUID):
        return value.bytes
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    if isinstance(value, dict):
        return {k: normal(v) for k, v in value.items()}
    if isinstance(value, list):
        if value and all(isinstance(item, tuple) and len(item) == 2 for item in value):
            return sorted((normal(k), normal(v)) for k, v in value)  # a map's entries
        return [normal(item) for item in value]
    if isinstance(value, datetime.datetime) and value.tzinfo is not None:
        return value.astimezone(datetime.timezone.utc)
    if isinstance(value, decimal.Decimal):
        return value.normalize() if value == value.to_integral_value() else value
    return value


def rows_of(table: pa.Table) -> list[tuple]:
    out = [(row["id"], normal(row["v"])) for row in table.to_pylist()]
    return sorted(out, key=lambda row: row[0])


def pyarrow_table(array: pa.Array) -> pa.Table:
    return pa.table({"id": pa.array(ROW_IDS, pa.int64()), "v": array})


NS_TS = [1_700_000_000_123_456_000, None, -86_400_000_000_000]

# (id, the column as pyarrow builds it, the Iceberg type a created table gives it)
PYARROW = [
    ("uuid", pa.array([uuid.UUID(int=1).bytes, None, uuid.UUID(int=2**128 - 1).bytes], pa.uuid()), "uuid"),
    ("large_string", pa.array(["a", None, "ünïcode ✓"], pa.large_string()), "string"),
    ("string_view", pa.array(["a", None, "x" * 100], pa.string_view()), "string"),
    ("large_binary", pa.array([b"\x00", None, b"\xff" * 20], pa.large_binary()), "binary"),
    ("binary_view", pa.array([b"\x00", None, b"\xff" * 20], pa.binary_view()), "binary"),
    ("dictionary", pa.array(["a", None, "b"]).dictionary_encode(), "string"),
    ("json", pa.array(['{"a": 1}', None, "[]"], pa.json_()), "string"),
    ("bool8", pa.array([1, None, 0], pa.bool8()), "boolean"),
    ("timestamp_ns", pa.array(NS_TS, pa.timestamp("ns")), "timestamp_ns"),
    ("timestamptz_ns", pa.array(NS_TS, pa.timestamp("ns", "UTC")), "timestamptz_ns"),
    ("timestamptz_ms", pa.array([1, None, -1], pa.timestamp("ms", "UTC")), "timestamptz"),
    ("timestamp_s", pa.array([1, None, 253402300799], pa.timestamp("s")), "timestamp"),
    ("uint64", pa.array([2**64 - 1, None, 0], pa.uint64()), "decimal(20, 0)"),
    ("uint32", pa.array([2**32 - 1, None, 0], pa.uint32()), "long"),
    ("uint8", pa.array([255, None, 0], pa.uint8()), "int"),
    ("int8", pa.array([-128, None, 127], pa.int8()), "int"),
    ("float16", pa.array([1.5, None, -2.0], pa.float16()), "float"),
    ("decimal256", pa.array([decimal.Decimal("9" * 36 + ".99"), None, decimal.Decimal("-1.5")],
                            pa.decimal256(38, 2)), "decimal(38, 2)"),
    ("date64", pa.array([86_400_000, None, 0], pa.date64()), "date"),
    ("time32", pa.array([1, None, 86_399_999], pa.time32("ms")), "time"),
    ("fixed_size_list", pa.array([[1, 2], None, [3, None]], pa.list_(pa.int32(), 2)), "list<int>"),
    ("large_list", pa.array([[1], None, []], pa.large_list(pa.int32())), "list<int>"),
    ("list_view", pa.array([[1], None, [2, 3]], pa.list_view(pa.int32())), "list<int>"),
    ("map", pa.array([[("k", 1)], None, []], pa.map_(pa.string(), pa.int64())), "map<string, long>"),
    ("struct", pa.array([{"a": 1, "b": "x"}, None, {"a": None, "b": None}],
                        pa.struct([("a", pa.int32()), ("b", pa.string())])), "struct<3: a: optional int, 4: b: optional string>"),
    ("nested_dictionary", pa.array([["a"], None, ["b", None]], pa.list_(pa.dictionary(pa.int8(), pa.string()))),
     "list<string>"),
]

REFUSED = [
    ("duration", pa.array([1, None, 2], pa.duration("us")), "has no Iceberg type (Iceberg has no durations"),
    ("null", pa.array([None, None, None], pa.null()), "holds only nulls and has no type"),
    ("decimal_40", pa.array([decimal.Decimal("1.5"), None, None], pa.decimal256(40, 2)),
     "has more digits than Iceberg's decimal holds (38)"),
]


def iceberg_type_text(table, column: str = "v") -> str:
    text = str(table.schema().find_field(column).field_type)
    return text


def load_and_compare(server, warehouse, name: str, path: Path, iceberg_type: str | None,  # noqa: F811
                     int96_instants: bool = False):
    source = pq.read_table(path, coerce_int96_timestamp_unit="us")
    if int96_instants:  # Spark's INT96 timestamps are instants, as the table keeps them
        source = source.set_column(1, "v", source.column("v").cast(pa.timestamp("us", "UTC")))
    serac(server, "table", "load", warehouse, "types", name, path, "--create")
    table = load_pyiceberg_catalog(server.endpoint, warehouse).load_table(f"types.{name}")
    if iceberg_type is not None:
        assert iceberg_type_text(table) == iceberg_type
    assert rows_of(table.scan().to_arrow()) == rows_of(source)
    # An append of the same file into the table it created: every value converted to its type.
    serac(server, "table", "load", warehouse, "types", name, path)
    read = rows_of(load_pyiceberg_catalog(server.endpoint, warehouse).load_table(f"types.{name}").scan().to_arrow())
    assert read == sorted(rows_of(source) * 2, key=lambda row: row[0])


@pytest.fixture
def types_ns(catalog):  # noqa: F811
    catalog.create_namespace_if_not_exists("types")
    return catalog


@pytest.mark.parametrize("case", [case[0] for case in PYARROW])
def test_pyarrow_types(server, warehouse, types_ns, tmp_path, case):  # noqa: F811
    _, array, iceberg_type = next(c for c in PYARROW if c[0] == case)
    path = tmp_path / f"{case}.parquet"
    pq.write_table(pyarrow_table(array), path)
    load_and_compare(server, warehouse, f"pa_{case}", path, iceberg_type)


@pytest.mark.parametrize("case", [case[0] for case in REFUSED])
def test_types_iceberg_has_no_place_for_are_refused(server, warehouse, types_ns, tmp_path, case):  # noqa: F811
    _, array, message = next(c for c in REFUSED if c[0] == case)
    path = tmp_path / f"{case}.parquet"
    pq.write_table(pyarrow_table(array), path)
    out = serac(server, "table", "load", warehouse, "types", f"refused_{case}", path, "--create", check=False)
    assert out.returncode != 0 and str(path) in out.stderr and "column v" in out.stderr and message in out.stderr, \
        out.stderr


def test_a_uuid_file_appends_to_a_uuid_column(server, warehouse, types_ns, tmp_path):  # noqa: F811
    from pyiceberg.schema import Schema
    from pyiceberg.types import LongType, NestedField, UUIDType
    types_ns.create_table("types.uuids", Schema(NestedField(1, "id", LongType()), NestedField(2, "v", UUIDType())))
    path = tmp_path / "uuids.parquet"
    pq.write_table(pyarrow_table(pa.array([uuid.UUID(int=7).bytes, None, uuid.uuid4().bytes], pa.uuid())), path)
    serac(server, "table", "load", warehouse, "types", "uuids", path)
    table = load_pyiceberg_catalog(server.endpoint, warehouse).load_table("types.uuids")
    assert rows_of(table.scan().to_arrow()) == rows_of(pq.read_table(path))


def test_polars_types(server, warehouse, types_ns, tmp_path):  # noqa: F811
    """Polars' own writer: view strings, categoricals and enums, nanosecond datetimes, decimals,
    unsigned integers, lists and structs."""
    import polars as pl

    columns = {
        "string": (pl.Series(["a", None, "ü"], dtype=pl.String), "string"),
        "categorical": (pl.Series(["a", None, "b"], dtype=pl.Categorical), "string"),
        "enum": (pl.Series(["x", None, "y"], dtype=pl.Enum(["x", "y"])), "string"),
        "binary": (pl.Series([b"\x00", None, b"\xff"], dtype=pl.Binary), "binary"),
        "datetime_ns": (pl.Series(NS_TS, dtype=pl.Int64).cast(pl.Datetime("ns")), "timestamp_ns"),
        "datetime_us_utc": (pl.Series([1, None, -1], dtype=pl.Int64).cast(pl.Datetime("us", "UTC")), "timestamptz"),
        "date": (pl.Series([datetime.date(1, 1, 1), None, datetime.date(9999, 12, 31)], dtype=pl.Date), "date"),
        "time": (pl.Series([datetime.time(0), None, datetime.time(23, 59, 59, 999999)], dtype=pl.Time), "time"),
        "decimal": (pl.Series([decimal.Decimal("1.5"), None, decimal.Decimal("-" + "9" * 34 + ".9999")],
                              dtype=pl.Decimal(38, 4)), "decimal(38, 4)"),
        "uint64": (pl.Series([2**64 - 1, None, 0], dtype=pl.UInt64), "decimal(20, 0)"),
        "int16": (pl.Series([-32768, None, 32767], dtype=pl.Int16), "int"),
        "float32": (pl.Series([1.5, None, float("inf")], dtype=pl.Float32), "float"),
        "boolean": (pl.Series([True, None, False], dtype=pl.Boolean), "boolean"),
        "list": (pl.Series([[1, 2], None, []], dtype=pl.List(pl.Int64)), "list<long>"),
        "array": (pl.Series([[1, 2], None, [3, 4]], dtype=pl.Array(pl.Int32, 2)), "list<int>"),
        "struct": (pl.Series([{"a": 1, "b": "x"}, None, {"a": None, "b": None}],
                             dtype=pl.Struct({"a": pl.Int32, "b": pl.String})),
                   "struct<3: a: optional int, 4: b: optional string>"),
    }
    for case, (series, iceberg_type) in columns.items():
        path = tmp_path / f"polars_{case}.parquet"
        pl.DataFrame({"id": pl.Series(ROW_IDS, dtype=pl.Int64), "v": series}).write_parquet(path)
        load_and_compare(server, warehouse, f"polars_{case}", path, iceberg_type)


def test_duckdb_types(server, warehouse, types_ns, tmp_path):  # noqa: F811
    """DuckDB's writer: UUID, HUGEINT, unsigned integers, nanosecond and zoned timestamps, maps,
    structs, lists, enums, JSON and blobs."""
    import duckdb

    columns = {
        "uuid": ("'00000000-0000-0000-0000-000000000001'::UUID", "NULL::UUID", "gen_random_uuid()", "uuid"),
        "hugeint": ("170141183460469231731687303715884105727::HUGEINT", "NULL::HUGEINT", "-1::HUGEINT", None),
        "ubigint": ("18446744073709551615::UBIGINT", "NULL::UBIGINT", "0::UBIGINT", "decimal(20, 0)"),
        "utinyint": ("255::UTINYINT", "NULL::UTINYINT", "0::UTINYINT", "int"),
        "timestamp_ns": ("'2024-01-01 00:00:00.123456789'::TIMESTAMP_NS", "NULL::TIMESTAMP_NS",
                         "'1677-09-22 00:00:00'::TIMESTAMP_NS", None),
        "timestamptz": ("'2024-01-01 00:00:00.123456+02'::TIMESTAMPTZ", "NULL::TIMESTAMPTZ",
                        "'0001-01-01 00:00:00+00'::TIMESTAMPTZ", "timestamptz"),
        "map": ("MAP {'k': 1}", "NULL::MAP(VARCHAR, INTEGER)", "MAP {}::MAP(VARCHAR, INTEGER)", "map<string, int>"),
        "struct": ("{'a': 1, 'b': 'x'}", "NULL::STRUCT(a INTEGER, b VARCHAR)",
                   "{'a': NULL, 'b': NULL}::STRUCT(a INTEGER, b VARCHAR)", None),
        "list": ("[1, 2]", "NULL::INTEGER[]", "[]::INTEGER[]", "list<int>"),
        "enum": ("'x'::ENUM('x', 'y')", "NULL::ENUM('x', 'y')", "'y'::ENUM('x', 'y')", "string"),
        "json": ("'{\"a\": 1}'::JSON", "NULL::JSON", "'[]'::JSON", "string"),
        "blob": ("'\\x00\\xFF'::BLOB", "NULL::BLOB", "''::BLOB", "binary"),
        "decimal": ("123456789012345678901234567.8901234567::DECIMAL(38, 10)", "NULL::DECIMAL(38, 10)",
                    "-0.0000000001::DECIMAL(38, 10)", "decimal(38, 10)"),
        "time": ("'23:59:59.999999'::TIME", "NULL::TIME", "'00:00:00'::TIME", "time"),
        "date": ("'9999-12-31'::DATE", "NULL::DATE", "'0001-01-01'::DATE", "date"),
    }
    for case, (first, second, third, iceberg_type) in columns.items():
        path = tmp_path / f"duckdb_{case}.parquet"
        duckdb.sql(f"COPY (SELECT 1::BIGINT AS id, {first} AS v UNION ALL SELECT 2, {second} UNION ALL "
                   f"SELECT 3, {third}) TO '{path}' (FORMAT parquet)")
        load_and_compare(server, warehouse, f"duckdb_{case}", path, iceberg_type)


@pytest.mark.skipif(not spark_available(), reason="Spark is installed by scripts/install-spark.sh")
def test_spark_types(spark, server, warehouse, types_ns, tmp_path):  # noqa: F811
    """Spark's writer, with its default INT96 timestamps among them."""
    columns = {
        "timestamp_int96": ("TIMESTAMP '2024-01-01 00:00:00.123456'", "timestamptz"),
        "timestamp_ntz": ("TIMESTAMP_NTZ '2024-01-01 00:00:00.123456'", "timestamp"),
        "byte": ("CAST(-128 AS TINYINT)", "int"),
        "short": ("CAST(32767 AS SMALLINT)", "int"),
        "decimal": ("CAST('12345678901234567890123456.123456789012' AS DECIMAL(38, 12))", "decimal(38, 12)"),
        "binary": ("X'00FF'", "binary"),
        "array": ("array(1, NULL, 3)", "list<int>"),
        "map": ("map('k', 1L)", "map<string, long>"),
        "struct": ("named_struct('a', 1, 'b', 'x')", None),
        "date": ("DATE '9999-12-31'", "date"),
    }
    for case, (value, iceberg_type) in columns.items():
        path = tmp_path / f"spark_{case}"
        spark.sql(f"SELECT CAST(id AS BIGINT) AS id, CASE WHEN id = 2 THEN NULL ELSE {value} END AS v "
                  "FROM range(1, 4) AS r(id)").coalesce(1).write.parquet(str(path))
        [written] = [p for p in path.iterdir() if p.suffix == ".parquet"]
        load_and_compare(server, warehouse, f"spark_{case}", written, iceberg_type,
                         int96_instants=case == "timestamp_int96")
