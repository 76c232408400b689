"""serac's Avro against an independent implementation: files fastavro writes at test time (every
codec, Iceberg's field ids and logical types, unions, enums, maps, fixed) read back through
`serac file show` exactly as fastavro's own JSON writer prints them; damaged files get a message
naming the file."""

from __future__ import annotations

import io
import json
import subprocess

import fastavro
import pytest

from s3util import serac_binary

MANIFEST_LIST = {"type": "record", "name": "manifest_file", "fields": [
    {"name": "manifest_path", "type": "string", "field-id": 500},
    {"name": "manifest_length", "type": "long", "field-id": 501},
    {"name": "partition_spec_id", "type": "int", "field-id": 502},
    {"name": "added_snapshot_id", "type": ["null", "long"], "default": None, "field-id": 503},
    {"name": "partitions", "type": ["null", {"type": "array", "element-id": 508, "items": {
        "type": "record", "name": "r508", "fields": [
            {"name": "contains_null", "type": "boolean", "field-id": 509},
            {"name": "contains_nan", "type": ["null", "boolean"], "default": None, "field-id": 518},
            {"name": "lower_bound", "type": ["null", "bytes"], "default": None, "field-id": 510}]}}],
     "default": None, "field-id": 507},
    {"name": "ratio", "type": "float"},
    {"name": "score", "type": "double"},
    {"name": "kind", "type": {"type": "enum", "name": "Kind", "symbols": ["DATA", "DELETES"]}},
    {"name": "uuid", "type": {"type": "fixed", "name": "uuid_fixed", "size": 16, "logicalType": "uuid"}},
    {"name": "stats", "type": {"type": "map", "values": "long"}},
    {"name": "day", "type": {"type": "int", "logicalType": "date"}},
]}


def records(count: int) -> list[dict]:
    return [{"manifest_path": f"s3://lake/db/t/metadata/{i:05d}-m0.avro", "manifest_length": 7000 + i,
             "partition_spec_id": i % 3, "added_snapshot_id": None if i % 7 == 0 else 10**15 + i,
             "partitions": None if i % 5 == 0 else [{"contains_null": i % 2 == 0, "contains_nan": None,
                                                     "lower_bound": bytes([i % 256, 0, 255])}],
             "ratio": i / 8, "score": -i * 1.25, "kind": "DELETES" if i % 4 == 0 else "DATA",
             "uuid": bytes(range(i % 200, i % 200 + 16)), "stats": {"rows": i, "files": i // 2},
             "day": 20454 + i} for i in range(count)]


def fastavro_json(schema: dict, rows: list[dict]) -> list:
    out = io.StringIO()
    fastavro.json_writer(out, fastavro.parse_schema(schema), rows)
    return [json.loads(line) for line in out.getvalue().split("\n") if line]


def show(path, *extra, check=True) -> subprocess.CompletedProcess:
    result = subprocess.run([serac_binary(), "file", "show", str(path), *extra], capture_output=True, text=True,
                            timeout=60)
    if check:
        assert result.returncode == 0, result.stderr
    return result


@pytest.mark.parametrize("codec", ["null", "deflate", "snappy", "zstandard"])
def test_serac_reads_what_fastavro_writes(tmp_path, codec):
    rows = records(700)
    path = tmp_path / f"list-{codec}.avro"
    with open(path, "wb") as out:
        fastavro.writer(out, fastavro.parse_schema(MANIFEST_LIST), rows, codec=codec, sync_interval=2000,
                        metadata={"snapshot-id": "1003", "format-version": "2"})
    # split("\n"), not splitlines(): bytes become code points such as U+0085, which JSON leaves
    # unescaped and splitlines() would take for line ends.
    lines = [line for line in show(path).stdout.split("\n") if line]
    head = json.loads(lines[0])
    assert head["format"] == "avro"
    assert head["metadata"]["avro.codec"] == codec
    assert head["metadata"]["snapshot-id"] == "1003"
    # Iceberg's attributes survive into the schema serac reports.
    fields = {field["name"]: field for field in head["schema"]["fields"]}
    assert fields["partitions"]["field-id"] == 507
    assert fields["partitions"]["type"][1]["element-id"] == 508
    assert fields["uuid"]["type"]["logicalType"] == "uuid"
    assert [json.loads(line) for line in lines[1:]] == fastavro_json(MANIFEST_LIST, rows)


def test_schema_only_and_limit(tmp_path):
    path = tmp_path / "list.avro"
    with open(path, "wb") as out:
        fastavro.writer(out, fastavro.parse_schema(MANIFEST_LIST), records(50))
    assert len([line for line in show(path, "--schema-only").stdout.split("\n") if line]) == 1
    assert len([line for line in show(path, "--limit", "3").stdout.split("\n") if line]) == 4


def test_damaged_files_are_refused_by_name(tmp_path):
    path = tmp_path / "list.avro"
    with open(path, "wb") as out:
        fastavro.writer(out, fastavro.parse_schema(MANIFEST_LIST), records(200), codec="deflate")
    data = path.read_bytes()
    cut = tmp_path / "cut.avro"
    cut.write_bytes(data[: len(data) // 2])
    result = show(cut, check=False)
    assert result.returncode == 1 and "cut.avro" in result.stderr, result.stderr
    flipped = bytearray(data)
    flipped[-1] ^= 0xFF  # the last sync marker
    bad = tmp_path / "bad.avro"
    bad.write_bytes(bytes(flipped))
    result = show(bad, check=False)
    assert result.returncode == 1 and "sync marker" in result.stderr, result.stderr
    text = tmp_path / "notes.txt"
    text.write_text("hello")
    result = show(text, check=False)
    assert result.returncode == 1 and "notes.txt" in result.stderr, result.stderr
