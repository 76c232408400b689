"""serac's preview, files and health of a table (`GET .../tables/T/preview|files|health` under
/_iceberg): tables PyIceberg wrote, with position deletes, deletion vectors and equality deletes
written by `serac table delete-rows`, previewed as PyIceberg reads them (or as the rows left must
be, where PyIceberg reads no equality deletes); limits, older snapshots and tags; the live files as
PyIceberg's `inspect.files()` lists them; a table of many tiny appends found in need of compaction
until a compaction job ran; and who may see what."""
from __future__ import annotations

import datetime
import decimal
import json
import math
import time
import uuid

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.transforms import IdentityTransform
from pyiceberg.types import (BinaryType, BooleanType, DateType, DecimalType, DoubleType, ListType, LongType,
                             NestedField, StringType, TimestamptzType)

from catalog_util import (CatalogApi, assert_iceberg_error, catalog, catalog_api, encode_namespace,  # noqa: F401
                          warehouse)
from s3util import SeracAdmin
from test_table_writes import serac

NS = "insights"
SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=True),
    NestedField(2, "category", StringType(), required=False),
    NestedField(3, "value", DoubleType(), required=False),
    NestedField(4, "amount", DecimalType(38, 10), required=False),
    NestedField(5, "day", DateType(), required=False),
    NestedField(6, "ts", TimestamptzType(), required=False),
    NestedField(7, "flag", BooleanType(), required=False),
    NestedField(8, "raw", BinaryType(), required=False),
    NestedField(9, "tags", ListType(10, StringType(), element_required=False), required=False),
)
ARROW_SCHEMA = pa.schema([
    pa.field("id", pa.int64(), nullable=False), pa.field("category", pa.string()), pa.field("value", pa.float64()),
    pa.field("amount", pa.decimal128(38, 10)), pa.field("day", pa.date32()),
    pa.field("ts", pa.timestamp("us", tz="UTC")), pa.field("flag", pa.bool_()), pa.field("raw", pa.binary()),
    pa.field("tags", pa.list_(pa.string()))])
COLUMNS = [{"name": "id", "type": "long"}, {"name": "category", "type": "string"},
           {"name": "value", "type": "double"}, {"name": "amount", "type": "decimal(38,10)"},
           {"name": "day", "type": "date"}, {"name": "ts", "type": "timestamptz"},
           {"name": "flag", "type": "boolean"}, {"name": "raw", "type": "binary"},
           {"name": "tags", "type": "list<string>"}]
BY_CATEGORY = PartitionSpec(PartitionField(source_id=2, field_id=1000, transform=IdentityTransform(), name="category"))
EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)


def make_rows(first: int, count: int) -> list[dict]:
    rows = []
    for i in range(first, first + count):
        rows.append({
            "id": i, "category": "abc"[i % 3], "value": float("nan") if i == 7 else i / 2,
            "amount": (decimal.Decimal("9999999999999999999999999999.9999999999") if i == 1
                       else (decimal.Decimal(i) / 100).quantize(decimal.Decimal("1e-10"))),
            "day": None if i % 5 == 0 else datetime.date(2020, 1, 1) + datetime.timedelta(days=i),
            "ts": EPOCH + datetime.timedelta(microseconds=i * 1_000_001),
            "flag": i % 2 == 0, "raw": bytes([i % 256, 255]),
            "tags": None if i % 4 == 0 else [f"t{i}", None, "caf\u00e9 \"q\""]})
    return rows


def render(value):
    """A value as the preview renders it (parquet/table_rows.h)."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "Infinity" if value > 0 else "-Infinity"
        return str(int(value)) if value.is_integer() and abs(value) < 1e15 else repr(value)
    if isinstance(value, decimal.Decimal):
        return format(value, "f")
    if isinstance(value, datetime.datetime):
        return value.astimezone(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f") + "+00:00"
    if isinstance(value, datetime.date):
        return value.isoformat()
    if isinstance(value, bytes):
        return value.hex()
    if isinstance(value, list):
        return json.dumps([render(element) for element in value], separators=(",", ":"), ensure_ascii=False)
    return value


def rendered(rows: list[dict]) -> list[list]:
    return sorted(([render(row[column["name"]]) for column in COLUMNS] for row in rows), key=lambda r: int(r[0]))


def route(name: str, table: str, what: str) -> str:
    return f"/v1/{name}/namespaces/{encode_namespace(NS)}/tables/{table}/{what}"


def get(api: CatalogApi, warehouse: str, table: str, what: str, expect=200, **params):
    response = api.call("GET", route(warehouse, table, what), params=params or None)
    assert response.status_code == expect, f"{what} {params} -> {response.status_code}: {response.text[:1000]}"
    return response.json()


def make_table(catalog, name: str, format_version: int, partitioned: bool = True):
    if (NS,) not in catalog.list_namespaces():
        catalog.create_namespace(NS)
    return catalog.create_table(f"{NS}.{name}", SCHEMA, partition_spec=BY_CATEGORY if partitioned else PartitionSpec(),
                                properties={"format-version": str(format_version)})


def append(server, catalog, warehouse, table: str, rows: list[dict], tmp_path):
    """By PyIceberg, or for a format-3 table (PyIceberg 0.12 writes no v3 manifests) by `serac table load`."""
    data = pa.Table.from_pylist(rows, schema=ARROW_SCHEMA)
    loaded = catalog.load_table(f"{NS}.{table}")
    if loaded.format_version < 3:
        loaded.append(data)
        return
    path = tmp_path / f"rows-{table}-{rows[0]['id']}-{len(rows)}.parquet"
    pq.write_table(data, path)
    serac(server, "table", "load", warehouse, NS, table, path)


def delete_keys(server, warehouse, table: str, tmp_path, ids, kind: str):
    keys = tmp_path / f"keys-{table}-{kind}-{ids[0]}.csv"
    keys.write_text("id,category\n" + "".join(f"{i},{'abc'[i % 3]}\n" for i in ids))
    serac(server, "table", "delete-rows", warehouse, NS, table, "--keys", keys, "--as", kind)


def wait_for_job(api: CatalogApi, warehouse: str, table: str, job_id: int) -> dict:
    status = f"/v1/warehouses/{warehouse}/namespaces/{NS}/tables/{table}/maintenance/icebergCompaction/status"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        for job in api.ok("GET", status).json()["jobs"]:
            if job["jobId"] == job_id and job["status"] != "running":
                return job
        time.sleep(0.1)
    raise AssertionError(f"job {job_id} did not end")


@pytest.mark.parametrize("format_version,kind", [(2, "position"), (3, "dv"), (2, "equality")])
def test_preview_applies_every_delete(server, catalog, catalog_api, warehouse, tmp_path,  # noqa: F811
                                      format_version, kind):
    name = f"deletes_{kind}"
    make_table(catalog, name, format_version)
    rows = make_rows(0, 30)
    append(server, catalog, warehouse, name, rows[:20], tmp_path)
    append(server, catalog, warehouse, name, rows[20:], tmp_path)
    deleted = [5, 6, 12, 22, 29]
    delete_keys(server, warehouse, name, tmp_path, deleted, kind)
    if kind == "equality":
        # Written again after the deletes: an equality delete of an earlier commit leaves it.
        append(server, catalog, warehouse, name, make_rows(5, 1), tmp_path)
        expected = [row for row in rows if row["id"] not in deleted] + make_rows(5, 1)
    else:
        expected = [row for row in rows if row["id"] not in deleted]
        # PyIceberg reads position deletes and DVs: the preview is what it reads.
        assert rendered(catalog.load_table(f"{NS}.{name}").scan().to_arrow().to_pylist()) == rendered(expected)

    preview = get(catalog_api, warehouse, name, "preview")
    assert preview["columns"] == COLUMNS
    assert preview["truncated"] is False
    assert preview["snapshot-id"] == catalog.load_table(f"{NS}.{name}").current_snapshot().snapshot_id
    assert sorted(preview["rows"], key=lambda r: int(r[0])) == rendered(expected)
    assert preview["delete-files-applied"] >= 1
    by_id = {row[0]: row for row in preview["rows"]}
    assert by_id["7"][2] == "NaN" and by_id["0"][4] is None and by_id["0"][8] is None
    assert by_id["1"][3] == "9999999999999999999999999999.9999999999"
    assert by_id["2"][3] == "0.0200000000"
    assert by_id["3"][5] == "1970-01-01T00:00:03.000003+00:00"


def test_limits_snapshots_and_tags(server, catalog, catalog_api, warehouse, tmp_path):  # noqa: F811
    name = "history"
    table = make_table(catalog, name, 2)
    first_rows = make_rows(0, 12)
    table.append(pa.Table.from_pylist(first_rows, schema=ARROW_SCHEMA))
    first = catalog.load_table(f"{NS}.{name}").current_snapshot().snapshot_id
    catalog.load_table(f"{NS}.{name}").manage_snapshots().create_tag(first, "v1").commit()
    catalog.load_table(f"{NS}.{name}").append(pa.Table.from_pylist(make_rows(12, 8), schema=ARROW_SCHEMA))
    delete_keys(server, warehouse, name, tmp_path, [0, 13], "position")

    limited = get(catalog_api, warehouse, name, "preview", limit=3)
    assert len(limited["rows"]) == 3 and limited["truncated"] is True
    exact = get(catalog_api, warehouse, name, "preview", limit=18)
    assert len(exact["rows"]) == 18 and exact["truncated"] is False
    assert len(get(catalog_api, warehouse, name, "preview", limit=17)["rows"]) == 17
    assert get(catalog_api, warehouse, name, "preview", limit=0)["truncated"] is True

    # The old snapshot, by id and by tag: its rows, as PyIceberg reads them there.
    old = catalog.load_table(f"{NS}.{name}").scan(snapshot_id=first).to_arrow().to_pylist()
    assert rendered(old) == rendered(first_rows)
    for params in ({"snapshot-id": first}, {"ref": "v1"}):
        preview = get(catalog_api, warehouse, name, "preview", **params)
        assert preview["snapshot-id"] == first
        assert sorted(preview["rows"], key=lambda r: int(r[0])) == rendered(first_rows), params
        assert preview["delete-files-applied"] == 0
    assert get(catalog_api, warehouse, name, "preview", ref="main")["snapshot-id"] != first

    # Errors are IcebergErrorResponses.
    api = catalog_api
    missing = api.call("GET", route(warehouse, name, "preview"), params={"snapshot-id": 12345})
    assert_iceberg_error(missing, 404, "NoSuchSnapshotException")
    assert_iceberg_error(api.call("GET", route(warehouse, name, "files"), params={"ref": "nope"}), 404,
                         "NoSuchSnapshotException")
    both = api.call("GET", route(warehouse, name, "preview"), params={"ref": "v1", "snapshot-id": first})
    assert_iceberg_error(both, 400, "BadRequestException")
    over = api.call("GET", route(warehouse, name, "preview"), params={"limit": 1001})
    assert "limits::kTablePreviewRowsMax" in assert_iceberg_error(over, 400, "BadRequestException")["message"]
    assert_iceberg_error(api.call("GET", route(warehouse, "nope", "health")), 404, "NoSuchTableException")

    # An empty table.
    make_table(catalog, "empty", 2)
    assert get(api, warehouse, "empty", "preview") == {"snapshot-id": None, "columns": COLUMNS, "rows": [],
                                                       "truncated": False, "delete-files-applied": 0}
    assert get(api, warehouse, "empty", "files") == {"snapshot-id": None, "files": [], "truncated": False}


def test_files_are_the_manifests_live_files(server, catalog, catalog_api, warehouse, tmp_path):  # noqa: F811
    name = "files"
    table = make_table(catalog, name, 2)
    table.append(pa.Table.from_pylist(make_rows(0, 30), schema=ARROW_SCHEMA))
    first = catalog.load_table(f"{NS}.{name}").current_snapshot().snapshot_id
    delete_keys(server, warehouse, name, tmp_path, [3, 4], "position")

    listed = get(catalog_api, warehouse, name, "files")
    table = catalog.load_table(f"{NS}.{name}")
    assert listed["snapshot-id"] == table.current_snapshot().snapshot_id and listed["truncated"] is False
    contents = {0: "data", 1: "position-deletes", 2: "equality-deletes"}
    inspected = table.inspect.files().to_pylist()
    expected = sorted((f["file_path"], contents[f["content"]], f["file_format"].lower(), f["record_count"],
                       f["file_size_in_bytes"], f["spec_id"], f"category={f['partition']['category']}")
                      for f in inspected)
    got = sorted((f["path"], f["content"], f["format"], f["records"], f["bytes"], f["spec-id"], f["partition"])
                 for f in listed["files"])
    assert got == expected
    assert {f["content"] for f in listed["files"]} == {"data", "position-deletes"}
    assert sum(f["records"] for f in listed["files"] if f["content"] == "data") == 30
    assert {f["partition"] for f in listed["files"]} == {"category=a", "category=b", "category=c"}

    old = get(catalog_api, warehouse, name, "files", **{"snapshot-id": first})
    assert old["snapshot-id"] == first and {f["content"] for f in old["files"]} == {"data"}

    # Unpartitioned: no partition text.
    make_table(catalog, "flat", 2, partitioned=False).append(pa.Table.from_pylist(make_rows(0, 3), schema=ARROW_SCHEMA))
    assert [f["partition"] for f in get(catalog_api, warehouse, "flat", "files")["files"]] == [""]


def test_health_finds_small_files_until_compacted(server, catalog, catalog_api, warehouse):  # noqa: F811
    name = "tiny"
    table = make_table(catalog, name, 2, partitioned=False)
    for i in range(18):
        table.append(pa.Table.from_pylist(make_rows(i * 2, 2), schema=ARROW_SCHEMA))
    health = get(catalog_api, warehouse, name, "health")
    assert health["data-files"] == 18 and health["small-files"] == 18, health
    assert health["small-file-bytes-threshold"] == 512 * 1024 * 1024 // 4 * 3
    assert health["snapshots"] == 18 and health["snapshots-beyond-expiry"] == 0
    assert health["delete-files"] == 0 and health["delete-records"] == 0
    assert [(f["kind"], f["fix"]) for f in health["findings"]] == [("small-files", "icebergCompaction")], health
    assert "18 data files" in health["findings"][0]["message"]

    run = f"/v1/warehouses/{warehouse}/namespaces/{NS}/tables/{name}/maintenance/icebergCompaction/run"
    started = catalog_api.ok("POST", run, expect=(202,)).json()
    assert wait_for_job(catalog_api, warehouse, name, started["jobId"])["status"] == "succeeded"
    health = get(catalog_api, warehouse, name, "health")
    assert health["data-files"] == 1 and health["small-files"] == 0, health
    assert health["findings"] == [], health
    rows = get(catalog_api, warehouse, name, "preview", limit=100)["rows"]
    assert sorted(rows, key=lambda r: int(r[0])) == rendered(make_rows(0, 36))


def test_who_may_see_what(server, catalog, catalog_api, warehouse):  # noqa: F811
    name = "guarded"
    make_table(catalog, name, 2).append(pa.Table.from_pylist(make_rows(0, 4), schema=ARROW_SCHEMA))
    admin = SeracAdmin(server.endpoint)
    tables = [f"arn:aws:s3tables:::bucket/{warehouse}", f"arn:aws:s3tables:::bucket/{warehouse}/*"]
    catalog_only = {"Version": "2012-10-17", "Statement": [
        {"Effect": "Allow", "Action": ["s3tables:GetTable", "s3tables:GetWarehouse"], "Resource": tables}]}
    with_files = {"Version": "2012-10-17", "Statement": catalog_only["Statement"] + [
        {"Effect": "Allow", "Action": "s3:GetObject", "Resource": f"arn:aws:s3:::{warehouse}/{NS}/*"}]}
    listing_only = {"Version": "2012-10-17", "Statement": [
        {"Effect": "Allow", "Action": ["s3tables:ListTables", "s3tables:GetWarehouse"], "Resource": tables},
        {"Effect": "Allow", "Action": "s3:GetObject", "Resource": f"arn:aws:s3:::{warehouse}/*"}]}
    apis = {}
    for hint, document in (("catalog", catalog_only), ("files", with_files), ("listing", listing_only)):
        user = f"{hint}-{uuid.uuid4().hex[:8]}"
        admin.put_policy(user, document)
        admin.create_user(user, (user,))
        apis[hint] = CatalogApi(server.endpoint, *admin.create_key(user))

    denied = apis["catalog"].call("GET", route(warehouse, name, "preview"))
    assert "s3:GetObject" in assert_iceberg_error(denied, 403, "ForbiddenException")["message"]
    assert len(get(apis["catalog"], warehouse, name, "files")["files"]) == 3
    assert get(apis["catalog"], warehouse, name, "health")["data-files"] == 3
    assert len(get(apis["files"], warehouse, name, "preview")["rows"]) == 4
    for what in ("preview", "files", "health"):
        assert_iceberg_error(apis["listing"].call("GET", route(warehouse, name, what)), 403, "ForbiddenException")
