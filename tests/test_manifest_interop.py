"""Manifests and manifest lists between serac and other Iceberg implementations.

- serac writes manifests of format v1, v2 and v3 (the C++ test ManifestExport writes them into a
  directory this test gives it); PyIceberg's reader and fastavro read them back with every field.
- PyIceberg writes a partitioned table into serac (appends and a delete); `serac file show
  --iceberg` reads its manifest list and manifests and finds what PyIceberg's own reader finds.
"""

from __future__ import annotations

import datetime
import decimal
import json
import os
import subprocess
import uuid
from pathlib import Path

import fastavro
import pyarrow as pa
from pyiceberg.io.pyarrow import PyArrowFileIO
from pyiceberg.manifest import DataFileContent, ManifestContent, ManifestEntryStatus, read_manifest_list
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.transforms import BucketTransform, DayTransform, IdentityTransform, TruncateTransform
from pyiceberg.types import DecimalType, LongType, NestedField, StringType, TimestampType

from catalog_util import catalog, catalog_api, warehouse  # noqa: F401

SERAC = os.environ.get("SERAC_BIN", "build/serac")
ICEBERG_TEST = str(Path(SERAC).resolve().parent / "src" / "iceberg" / "iceberg_test")


def serac_show(path: Path) -> list[dict]:
    out = subprocess.run([SERAC, "file", "show", "--iceberg", str(path)], check=True, capture_output=True,
                         text=True, timeout=60).stdout
    return [json.loads(line) for line in out.split("\n") if line]


def export_serac_manifests(directory: Path) -> None:
    env = dict(os.environ, SERAC_MANIFEST_EXPORT_DIR=str(directory))
    subprocess.run([ICEBERG_TEST, "--gtest_filter=ManifestExport.*"], check=True, env=env, capture_output=True,
                   timeout=120)


def test_pyiceberg_reads_manifests_serac_wrote(tmp_path):
    export_serac_manifests(tmp_path)
    io = PyArrowFileIO()
    for version in (1, 2, 3):
        manifests = list(read_manifest_list(io.new_input(str(tmp_path / f"v{version}-list.avro"))))
        assert len(manifests) == (1 if version == 1 else 2), version
        data = manifests[0]
        assert data.manifest_path == str(tmp_path / f"v{version}-data.avro")
        assert data.partition_spec_id == 2
        assert data.content == ManifestContent.DATA
        assert data.added_snapshot_id == 20
        assert (data.added_files_count, data.existing_files_count, data.deleted_files_count) == (1, 1, 1)
        assert (data.added_rows_count, data.existing_rows_count, data.deleted_rows_count) == (10, 20, 30)
        assert data.sequence_number == (0 if version == 1 else 5)
        assert len(data.partitions) == 6
        assert data.partitions[0].contains_null is False
        assert int.from_bytes(data.partitions[0].lower_bound, "little") == 17480
        assert int.from_bytes(data.partitions[0].upper_bound, "little") == 17490

        entries = data.fetch_manifest_entry(io, discard_deleted=False)
        assert [e.status for e in entries] == [ManifestEntryStatus.ADDED, ManifestEntryStatus.EXISTING,
                                               ManifestEntryStatus.DELETED]
        added = entries[0]
        assert added.snapshot_id == 20
        if version >= 2:
            assert added.sequence_number == 5  # inherited from the list
            assert entries[1].sequence_number == 2 and entries[1].file_sequence_number == 3
        f = added.data_file
        assert f.file_path == "s3://wh/t/data/a.parquet"
        assert f.file_format.name == "PARQUET"
        assert f.record_count == 10 and f.file_size_in_bytes == 1000
        assert f.column_sizes == {1: 40, 2: 80}
        assert f.value_counts == {1: 10, 2: 10}
        assert f.null_value_counts == {1: 0, 2: 1}
        assert f.nan_value_counts == {6: 0}
        assert f.lower_bounds == {1: (1).to_bytes(8, "little")}
        assert f.upper_bounds == {1: (9).to_bytes(8, "little")}
        assert f.split_offsets == [4]
        assert f.sort_order_id == 0
        partition = f.partition
        assert partition[0] == 17486
        assert partition[1] == 3
        assert partition[2] == decimal.Decimal("2.56")  # unscaled 256, scale 2
        assert partition[3] == uuid.UUID("f79c3e09-677c-4bbd-a479-3f349cb785e7")
        assert partition[4] != partition[4]  # NaN
        assert partition[5] is None
        assert entries[1].data_file.partition[2] == decimal.Decimal("-0.01")
        if version >= 2:
            deletes = manifests[1]
            assert deletes.content == ManifestContent.DELETES
            (entry,) = deletes.fetch_manifest_entry(io)
            assert entry.data_file.content == DataFileContent.POSITION_DELETES
            assert entry.data_file.file_path == "s3://wh/t/data/a-deletes.parquet"
            assert entry.sequence_number == 5


def test_fastavro_reads_manifests_serac_wrote(tmp_path):
    export_serac_manifests(tmp_path)
    for version in (1, 2, 3):
        with open(tmp_path / f"v{version}-data.avro", "rb") as handle:
            reader = fastavro.reader(handle)
            assert reader.codec == "deflate"
            metadata = reader.metadata
            assert metadata["format-version"] == str(version)
            assert json.loads(metadata["partition-spec"])[1] == {"name": "name_bucket", "transform": "bucket[8]",
                                                                 "source-id": 3, "field-id": 1001}
            assert json.loads(metadata["schema"])["schema-id"] == 3
            records = list(reader)
        assert [r["status"] for r in records] == [1, 0, 2]
        first = records[0]["data_file"]
        assert first["file_path"] == "s3://wh/t/data/a.parquet"
        assert {(item["key"], item["value"]) for item in first["column_sizes"]} == {(1, 40), (2, 80)}
        assert first["partition"]["ts_day"] == datetime.date(2017, 11, 16)
        assert first["partition"]["name_x2Dtrunc"] is None
        if version >= 2:
            assert records[0]["sequence_number"] is None  # inherited: left null as Java writes it
            assert records[1]["sequence_number"] == 2
        with open(tmp_path / f"v{version}-list.avro", "rb") as handle:
            reader = fastavro.reader(handle)
            assert reader.metadata["snapshot-id"] == "20"
            assert reader.metadata["parent-snapshot-id"] == "10"
            listed = list(reader)
        assert listed[0]["added_snapshot_id"] == 20
        if version == 3:
            # PyIceberg 0.12 does not read row lineage; the v3 fields are checked here.
            assert listed[0]["first_row_id"] == 100
            assert listed[1]["first_row_id"] is None  # delete manifests get none


EVENTS_SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=False),
    NestedField(2, "category", StringType(), required=False),
    NestedField(3, "ts", TimestampType(), required=False),
    NestedField(4, "price", DecimalType(10, 2), required=False),
    NestedField(5, "code", StringType(), required=False),
)
ARROW_SCHEMA = pa.schema([pa.field("id", pa.int64()), pa.field("category", pa.string()),
                          pa.field("ts", pa.timestamp("us")), pa.field("price", pa.decimal128(10, 2)),
                          pa.field("code", pa.string())])


def test_serac_reads_manifests_pyiceberg_wrote(catalog, tmp_path):  # noqa: F811
    catalog.create_namespace("interop")
    spec = PartitionSpec(
        PartitionField(source_id=2, field_id=1000, transform=IdentityTransform(), name="category"),
        PartitionField(source_id=3, field_id=1001, transform=DayTransform(), name="ts_day"),
        PartitionField(source_id=1, field_id=1002, transform=BucketTransform(4), name="id_bucket"),
        PartitionField(source_id=5, field_id=1003, transform=TruncateTransform(2), name="code_trunc"),
    )
    table = catalog.create_table("interop.events", EVENTS_SCHEMA, partition_spec=spec,
                                 properties={"format-version": "2"})
    day1 = datetime.datetime(2024, 5, 1, 10, 0)
    day2 = datetime.datetime(2024, 5, 2, 11, 30)
    rows = [{"id": i, "category": ["alpha", "beta"][i % 2], "ts": [day1, day2][i // 4 % 2],
             "price": decimal.Decimal(f"{i}.25"), "code": ["xa1", "ya2", "xb3"][i % 3]} for i in range(16)]
    table.append(pa.Table.from_pylist(rows[:8], schema=ARROW_SCHEMA))
    table.append(pa.Table.from_pylist(rows[8:], schema=ARROW_SCHEMA))
    table.delete("id = 3")
    table = catalog.load_table("interop.events")

    s3 = table.io
    snapshot = table.current_snapshot()
    list_path = tmp_path / "list.avro"
    list_path.write_bytes(s3.new_input(snapshot.manifest_list).open().read())
    shown = serac_show(list_path)
    assert shown[0]["kind"] == "manifest list"
    theirs = snapshot.manifests(s3)
    ours = shown[1:]
    assert [m["manifest_path"] for m in ours] == [m.manifest_path for m in theirs]
    statuses = []
    for mine, their in zip(ours, theirs):
        assert mine["sequence_number"] == their.sequence_number
        assert mine["added_snapshot_id"] == their.added_snapshot_id
        assert (mine["added_files_count"], mine["existing_files_count"], mine["deleted_files_count"]) == (
            their.added_files_count, their.existing_files_count, their.deleted_files_count)
        assert mine["added_rows_count"] == their.added_rows_count
        assert [p["contains_null"] for p in mine["partitions"]] == [p.contains_null for p in their.partitions]
        assert [p.get("lower_bound") for p in mine["partitions"]] == [
            p.lower_bound.hex() if p.lower_bound is not None else None for p in their.partitions]

        manifest_path = tmp_path / Path(their.manifest_path).name
        manifest_path.write_bytes(s3.new_input(their.manifest_path).open().read())
        shown_manifest = serac_show(manifest_path)
        head, entries = shown_manifest[0], shown_manifest[1:]
        assert head["kind"] == "manifest" and head["format_version"] == 2
        assert "types" not in head, head  # the header's schema and spec were understood
        their_entries = their.fetch_manifest_entry(s3, discard_deleted=False)
        assert len(entries) == len(their_entries)
        for entry, their_entry in zip(entries, their_entries):
            f, g = entry["data_file"], their_entry.data_file
            assert entry["status"] == their_entry.status.name
            statuses.append(entry["status"])
            assert f["file_path"] == g.file_path
            assert f["record_count"] == g.record_count and f["file_size_in_bytes"] == g.file_size_in_bytes
            assert {int(k): v for k, v in f["value_counts"].items()} == g.value_counts
            assert {int(k): v for k, v in f["null_value_counts"].items()} == g.null_value_counts
            assert f["lower_bounds"]["1"] == int.from_bytes(g.lower_bounds[1], "little", signed=True)
            assert f["upper_bounds"]["2"] == g.upper_bounds[2].decode()
            category, day, bucket, trunc = g.partition[0], g.partition[1], g.partition[2], g.partition[3]
            assert f["partition"] == {
                "category": category,
                "ts_day": (datetime.date(1970, 1, 1) + datetime.timedelta(days=day)).isoformat(),
                "id_bucket": bucket,
                "code_trunc": trunc,
            }
    # The delete rewrote a file: its manifest has a DELETED entry beside ADDED and EXISTING ones.
    assert {"ADDED", "DELETED"} <= set(statuses), statuses
