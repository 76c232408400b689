#!/usr/bin/env python3
"""Writes the seed corpora under fuzz/corpus/ (run it after changing the shapes below; the files
are committed). The seeds are the requests and files real clients send and write: PyIceberg's and
Spark's commit bodies (appends, deletes with two snapshots, schema and spec evolution, branches,
tags, statistics, v3 row lineage), create requests, transactions, views, OAuth2 forms, SigV4- and
SigV2-signed heads, aws-chunked bodies with trailers, S3 XML bodies, IAM policies and admin API
calls. tests/test_fuzz_blackbox.py mutates the same seeds against a running server."""
import base64
import hashlib
import hmac
import json
import os
import struct
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "corpus")

SCHEMA = {"type": "struct", "schema-id": 0, "identifier-field-ids": [1], "fields": [
    {"id": 1, "name": "id", "required": True, "type": "long"},
    {"id": 2, "name": "data", "required": False, "type": "string"},
    {"id": 3, "name": "ts", "required": False, "type": "timestamptz"},
    {"id": 4, "name": "amount", "required": False, "type": "decimal(10, 2)"},
    {"id": 5, "name": "tags", "required": False, "type": {"type": "list", "element-id": 6, "element": "string", "element-required": False}},
    {"id": 7, "name": "attrs", "required": False, "type": {"type": "map", "key-id": 8, "key": "string", "value-id": 9, "value": "int", "value-required": False}},
    {"id": 10, "name": "point", "required": False, "type": {"type": "struct", "fields": [
        {"id": 11, "name": "x", "required": True, "type": "double"},
        {"id": 12, "name": "y", "required": True, "type": "double"}]}}]}
SPEC = {"spec-id": 0, "fields": [{"source-id": 3, "field-id": 1000, "name": "ts_day", "transform": "day"},
                                 {"source-id": 1, "field-id": 1001, "name": "id_bucket", "transform": "bucket[16]"}]}
ORDER = {"order-id": 1, "fields": [{"source-id": 1, "transform": "identity", "direction": "asc", "null-order": "nulls-first"}]}


def snapshot(sid, parent, seq, op="append", v3=False, first_row=0, rows=10):
    s = {"snapshot-id": sid, "sequence-number": seq, "timestamp-ms": 1767225600000 + seq * 1000,
         "manifest-list": f"s3://lake/db/{'t3' if v3 else 't2'}/metadata/snap-{sid}-1-8f1c.avro",
         "summary": {"operation": op, "added-data-files": "1", "added-records": str(rows), "total-records": str(rows * seq),
                     "total-data-files": str(seq), "total-delete-files": "0", "total-position-deletes": "0",
                     "total-equality-deletes": "0", "total-files-size": "1234"},
         "schema-id": 0}
    if parent is not None:
        s["parent-snapshot-id"] = parent
    if v3:
        s["first-row-id"] = first_row
        s["added-rows"] = rows
    return s


def add_to_main(s):
    return [{"action": "add-snapshot", "snapshot": s},
            {"action": "set-snapshot-ref", "ref-name": "main", "type": "branch", "snapshot-id": s["snapshot-id"]}]


def table_commits(v3):
    main = 1000 + (3 if v3 else 2)
    req_main = {"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": main}
    n = 0
    out = {}

    def put(name, body):
        out[name] = body

    put("append", {"requirements": [{"type": "assert-table-uuid", "uuid": "6f0b6c8c-0000-4000-8000-000000000001"}, req_main],
                   "updates": add_to_main(snapshot(2001, main, 2, v3=v3, first_row=10))})
    # PyIceberg's delete: a DELETE snapshot and an OVERWRITE in one commit.
    put("delete_two_snapshots", {"requirements": [req_main],
                                 "updates": add_to_main(snapshot(2002, main, 2, "delete", v3, 10, 0)) +
                                 add_to_main(snapshot(2003, 2002, 3, "overwrite", v3, 10, 5))})
    put("schema_evolution", {"requirements": [{"type": "assert-current-schema-id", "current-schema-id": 0},
                                              {"type": "assert-last-assigned-field-id", "last-assigned-field-id": 2}],
                             "updates": [{"action": "add-schema", "schema": {"type": "struct", "schema-id": 1, "fields": [
                                 {"id": 1, "name": "id", "required": True, "type": "long"},
                                 {"id": 2, "name": "data", "required": False, "type": "string"},
                                 {"id": 4, "name": "extra", "required": False, "type": "int", "doc": "added"}]},
                                          "last-column-id": 4},
                                         {"action": "set-current-schema", "schema-id": -1}]})
    put("spec_evolution", {"requirements": [{"type": "assert-default-spec-id", "default-spec-id": 0},
                                            {"type": "assert-last-assigned-partition-id", "last-assigned-partition-id": 999}],
                           "updates": [{"action": "add-spec", "spec": {"spec-id": 1, "fields": [
                               {"source-id": 1, "field-id": 1000, "name": "id_trunc", "transform": "truncate[4]"}]}},
                                       {"action": "set-default-spec", "spec-id": -1}]})
    put("sort_order", {"requirements": [{"type": "assert-default-sort-order-id", "default-sort-order-id": 0}],
                       "updates": [{"action": "add-sort-order", "sort-order": {"order-id": 1, "fields": [
                           {"source-id": 2, "transform": "identity", "direction": "desc", "null-order": "nulls-last"}]}},
                                   {"action": "set-default-sort-order", "sort-order-id": -1}]})
    put("branch_and_tag", {"requirements": [{"type": "assert-ref-snapshot-id", "ref": "audit", "snapshot-id": None}],
                           "updates": [{"action": "set-snapshot-ref", "ref-name": "audit", "type": "branch", "snapshot-id": main,
                                        "max-ref-age-ms": 86400000, "max-snapshot-age-ms": 3600000, "min-snapshots-to-keep": 2},
                                       {"action": "set-snapshot-ref", "ref-name": "v1", "type": "tag", "snapshot-id": main,
                                        "max-ref-age-ms": 604800000},
                                       {"action": "remove-snapshot-ref", "ref-name": "v1"}]})
    put("properties", {"requirements": [],
                       "updates": [{"action": "set-properties", "updates": {"write.format.default": "parquet",
                                                                            "write.parquet.compression-codec": "zstd",
                                                                            "commit.retry.num-retries": "4",
                                                                            "write.metadata.previous-versions-max": "5"}},
                                   {"action": "remove-properties", "removals": ["commit.retry.num-retries"]}]})
    put("statistics", {"requirements": [],
                       "updates": [{"action": "set-statistics", "snapshot-id": main, "statistics": {
                           "snapshot-id": main, "statistics-path": "s3://lake/db/t2/metadata/stats-1.puffin",
                           "file-size-in-bytes": 413, "file-footer-size-in-bytes": 42, "key-metadata": None,
                           "blob-metadata": [{"type": "apache-datasketches-theta-v1", "snapshot-id": main, "sequence-number": 1,
                                              "fields": [1], "properties": {"ndv": "10"}}]}},
                                   {"action": "set-partition-statistics", "partition-statistics": {
                                       "snapshot-id": main, "statistics-path": "s3://lake/db/t2/metadata/partition-stats-1.parquet",
                                       "file-size-in-bytes": 1024}},
                                   {"action": "remove-statistics", "snapshot-id": 1},
                                   {"action": "remove-partition-statistics", "snapshot-id": 1}]})
    put("expire", {"requirements": [], "updates": [{"action": "remove-snapshots", "snapshot-ids": [main]},
                                                     {"action": "remove-partition-specs", "spec-ids": [5]},
                                                     {"action": "remove-schemas", "schema-ids": [7]}]})
    put("upgrade_and_location", {"requirements": [],
                                 "updates": [{"action": "upgrade-format-version", "format-version": 3},
                                             {"action": "set-location", "location": "s3://lake/db/moved"},
                                             {"action": "assign-uuid", "uuid": "6f0b6c8c-0000-4000-8000-000000000001"}]})
    put("encryption", {"requirements": [], "updates": [
        {"action": "add-encryption-key", "encryption-key": {"key-id": "k1", "encrypted-key-metadata": "AAEC",
                                                             "encrypted-by-id": "kms", "properties": {}}},
        {"action": "remove-encryption-key", "key-id": "k1"}]})
    put("rollback", {"requirements": [], "updates": [
        {"action": "set-snapshot-ref", "ref-name": "main", "type": "branch", "snapshot-id": main}]})
    return out


def create_table(name, v):
    return {"name": name, "location": None, "schema": SCHEMA, "partition-spec": SPEC, "write-order": ORDER,
            "stage-create": False, "properties": {"format-version": str(v), "owner": "fuzz"}}


VIEW_VERSION = {"version-id": 1, "timestamp-ms": 1767225600000, "schema-id": 0,
                "summary": {"engine-name": "spark", "engine-version": "3.5.7"}, "default-namespace": ["db"],
                "default-catalog": "lake",
                "representations": [{"type": "sql", "sql": "SELECT id, data FROM db.t2 WHERE id > 10", "dialect": "spark"},
                                    {"type": "sql", "sql": "SELECT id, data FROM db.t2 WHERE id > 10", "dialect": "trino"}]}


def create_view(name):
    return {"name": name, "location": None, "schema": {**SCHEMA, "schema-id": 0}, "view-version": VIEW_VERSION,
            "properties": {"comment": "fuzz"}}


def view_commit():
    v2 = dict(VIEW_VERSION, **{"version-id": 2, "schema-id": -1})
    return {"requirements": [{"type": "assert-view-uuid", "uuid": "6f0b6c8c-0000-4000-8000-000000000002"}],
            "updates": [{"action": "add-schema", "schema": {"type": "struct", "schema-id": 1, "fields": [
                {"id": 1, "name": "id", "required": True, "type": "long"}]}, "last-column-id": 1},
                        {"action": "add-view-version", "view-version": v2},
                        {"action": "set-current-view-version", "view-version-id": -1},
                        {"action": "set-properties", "updates": {"k": "v"}},
                        {"action": "remove-properties", "removals": ["comment"]},
                        {"action": "set-location", "location": "s3://lake/db/v2"}]}


def table_metadata(v):
    m = {"format-version": v, "table-uuid": "6f0b6c8c-0000-4000-8000-000000000001", "location": "s3://lake/db/t2",
         "last-sequence-number": 2, "last-updated-ms": 1767225602000, "last-column-id": 12,
         "current-schema-id": 0, "schemas": [SCHEMA], "default-spec-id": 0, "partition-specs": [SPEC],
         "last-partition-id": 1001, "default-sort-order-id": 1, "sort-orders": [ORDER],
         "properties": {"write.format.default": "parquet"}, "current-snapshot-id": 2,
         "refs": {"main": {"snapshot-id": 2, "type": "branch"}, "t": {"snapshot-id": 1, "type": "tag", "max-ref-age-ms": 5}},
         "snapshots": [snapshot(1, None, 1, v3=v == 3), snapshot(2, 1, 2, v3=v == 3, first_row=10)],
         "statistics": [], "partition-statistics": [],
         "snapshot-log": [{"timestamp-ms": 1767225601000, "snapshot-id": 1}, {"timestamp-ms": 1767225602000, "snapshot-id": 2}],
         "metadata-log": [{"timestamp-ms": 1767225600000, "metadata-file": "s3://lake/db/t2/metadata/00000-a.metadata.json"}]}
    if v == 1:
        m["schema"] = SCHEMA
        m["partition-spec"] = SPEC["fields"]
        del m["last-sequence-number"]
    if v == 3:
        m["next-row-id"] = 20
    return m


def view_metadata():
    return {"view-uuid": "6f0b6c8c-0000-4000-8000-000000000002", "format-version": 1, "location": "s3://lake/db/v",
            "current-version-id": 1, "properties": {"comment": "x"}, "schemas": [SCHEMA], "versions": [VIEW_VERSION],
            "version-log": [{"timestamp-ms": 1767225600000, "version-id": 1}]}


AMZ_DATE = "20260101T000000Z"
DAY = "20260101"
ACCESS = "FUZZROOTKEY"
SECRET = "fuzz-root-secret-0123456789abcdefghijkl"


def sign_v4(method, path, query, headers, payload_hash, service="s3", region="us-east-1"):
    headers = dict(headers)
    headers["x-amz-date"] = AMZ_DATE
    headers["x-amz-content-sha256"] = payload_hash
    names = sorted(k.lower() for k in headers)
    canon_headers = "".join(f"{k}:{headers[[h for h in headers if h.lower() == k][0]].strip()}\n" for k in names)
    pairs = sorted(p.split("=", 1) if "=" in p else [p, ""] for p in query.split("&") if p)
    canon_query = "&".join(f"{k}={v}" for k, v in pairs)
    canonical = "\n".join([method, path, canon_query, canon_headers, ";".join(names), payload_hash])
    scope = f"{DAY}/{region}/{service}/aws4_request"
    to_sign = "\n".join(["AWS4-HMAC-SHA256", AMZ_DATE, scope, hashlib.sha256(canonical.encode()).hexdigest()])
    key = ("AWS4" + SECRET).encode()
    for part in (DAY, region, service, "aws4_request"):
        key = hmac.new(key, part.encode(), hashlib.sha256).digest()
    sig = hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()
    headers["Authorization"] = f"AWS4-HMAC-SHA256 Credential={ACCESS}/{scope}, SignedHeaders={';'.join(names)}, Signature={sig}"
    return headers


def request_text(method, target, headers, body=b""):
    head = f"{method} {target}\n" + "".join(f"{k}: {v}\n" for k, v in headers.items()) + "\n"
    return head.encode() + (body if isinstance(body, bytes) else body.encode())


def http_text(method, target, headers, body=b""):
    head = f"{method} {target} HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers.items()) + "\r\n"
    return head.encode() + (body if isinstance(body, bytes) else body.encode())


def chunked(body, sizes, trailer=""):
    out, pos = b"", 0
    for size in sizes:
        out += f"{size:x}\r\n".encode() + body[pos:pos + size] + b"\r\n"
        pos += size
    return out + b"0\r\n" + trailer.encode() + b"\r\n"


def write(target, name, data):
    directory = os.path.join(CORPUS, target)
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, name), "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


def dumps(obj):
    return json.dumps(obj, separators=(",", ":"))


# --- Avro object container files, written by hand (the seeds must not need an Avro library) ---

def avro_long(n):
    n = (n << 1) ^ (n >> 63)
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def avro_bytes(b):
    b = b.encode() if isinstance(b, str) else b
    return avro_long(len(b)) + b


def avro_encode(schema, value, named):
    """Encodes value as schema says; a union value is (branch, value), a record a list in field order."""
    if isinstance(schema, str) and schema in named:
        schema = named[schema]
    if isinstance(schema, list):
        branch, inner = value
        return avro_long(branch) + avro_encode(schema[branch], inner, named)
    kind = schema if isinstance(schema, str) else schema["type"]
    if isinstance(schema, dict) and schema.get("name") and kind in ("record", "enum", "fixed"):
        named[schema["name"]] = schema
    if kind == "null":
        return b""
    if kind == "boolean":
        return b"\x01" if value else b"\x00"
    if kind in ("int", "long"):
        return avro_long(value)
    if kind == "double":
        return struct.pack("<d", value)
    if kind in ("string", "bytes"):
        return avro_bytes(value)
    if kind == "fixed":
        return value
    if kind == "enum":
        return avro_long(value)
    if kind == "record":
        return b"".join(avro_encode(f["type"], v, named) for f, v in zip(schema["fields"], value))
    if kind == "array":
        body = b"".join(avro_encode(schema["items"], v, named) for v in value)
        return (avro_long(len(value)) + body if value else b"") + b"\x00"
    if kind == "map":
        body = b"".join(avro_bytes(k) + avro_encode(schema["values"], v, named) for k, v in value)
        return (avro_long(len(value)) + body if value else b"") + b"\x00"
    raise ValueError(kind)


def avro_file(schema, values, codec="null", metadata=None):
    sync = hashlib.md5(json.dumps(schema).encode()).digest()
    header = {"avro.schema": json.dumps(schema), "avro.codec": codec}
    header.update(metadata or {})
    out = b"Obj\x01" + avro_long(len(header))
    for key, value in header.items():
        out += avro_bytes(key) + avro_bytes(value)
    out += b"\x00" + sync
    block = b"".join(avro_encode(schema, v, {}) for v in values)
    if codec == "deflate":
        compressor = zlib.compressobj(6, zlib.DEFLATED, -15)
        block = compressor.compress(block) + compressor.flush()
    if values:
        out += avro_long(len(values)) + avro_bytes(block) + sync
    return out


MANIFEST_ENTRY = {"type": "record", "name": "manifest_entry", "fields": [
    {"name": "status", "type": "int", "field-id": 0},
    {"name": "snapshot_id", "type": ["null", "long"], "default": None, "field-id": 1},
    {"name": "sequence_number", "type": ["null", "long"], "default": None, "field-id": 3},
    {"name": "data_file", "field-id": 2, "type": {"type": "record", "name": "r2", "fields": [
        {"name": "content", "type": "int", "field-id": 134},
        {"name": "file_path", "type": "string", "field-id": 100},
        {"name": "file_format", "type": "string", "field-id": 101},
        {"name": "partition", "field-id": 102, "type": {"type": "record", "name": "r102", "fields": [
            {"name": "ts_day", "type": ["null", {"type": "int", "logicalType": "date"}], "default": None, "field-id": 1000}]}},
        {"name": "record_count", "type": "long", "field-id": 103},
        {"name": "file_size_in_bytes", "type": "long", "field-id": 104},
        {"name": "column_sizes", "type": ["null", {"type": "array", "logicalType": "map", "items": {
            "type": "record", "name": "k117_v118", "fields": [{"name": "key", "type": "int", "field-id": 117},
                                                           {"name": "value", "type": "long", "field-id": 118}]}}],
         "default": None, "field-id": 108},
        {"name": "lower_bounds", "type": ["null", {"type": "array", "logicalType": "map", "items": {
            "type": "record", "name": "k126_v127", "fields": [{"name": "key", "type": "int", "field-id": 126},
                                                           {"name": "value", "type": "bytes", "field-id": 127}]}}],
         "default": None, "field-id": 125},
        {"name": "key_metadata", "type": ["null", "bytes"], "default": None, "field-id": 131}]}}]}

MANIFEST_FILE = {"type": "record", "name": "manifest_file", "fields": [
    {"name": "manifest_path", "type": "string", "field-id": 500},
    {"name": "manifest_length", "type": "long", "field-id": 501},
    {"name": "partition_spec_id", "type": "int", "field-id": 502},
    {"name": "content", "type": "int", "field-id": 517},
    {"name": "added_snapshot_id", "type": "long", "field-id": 503},
    {"name": "partitions", "type": ["null", {"type": "array", "element-id": 508, "items": {
        "type": "record", "name": "r508", "fields": [
            {"name": "contains_null", "type": "boolean", "field-id": 509},
            {"name": "lower_bound", "type": ["null", "bytes"], "default": None, "field-id": 510}]}}],
     "default": None, "field-id": 507}]}

KITCHEN_SINK = {"type": "record", "name": "a.Sink", "fields": [
    {"name": "flag", "type": "boolean"}, {"name": "ratio", "type": "double"},
    {"name": "color", "type": {"type": "enum", "name": "Color", "symbols": ["RED", "GREEN"], "default": "RED"}},
    {"name": "hash", "type": {"type": "fixed", "name": "Hash", "size": 4}},
    {"name": "again", "type": "Hash"},
    {"name": "props", "type": {"type": "map", "values": ["null", "string"], "key-id": 7, "value-id": 8}},
    {"name": "amount", "type": {"type": "bytes", "logicalType": "decimal", "precision": 9, "scale": 2}}]}


def avro_seeds():
    entry = lambda i: [1, (1, 1000 + i), (0, None), [0, f"s3://lake/db/t2/data/ts_day=2026-01-0{i}/0000{i}.parquet", "PARQUET",
                                                     [(1, 20454 + i)], 10 * i, 4096 + i, (1, [[1, 120], [2, 300]]),
                                                     (1, [[1, b"\x01\x00\x00\x00\x00\x00\x00\x00"]]), (0, None)]]
    meta = {"schema": dumps(SCHEMA), "partition-spec": dumps(SPEC["fields"]), "partition-spec-id": "0",
            "format-version": "2", "content": "data"}
    write("avro_fuzzer", "manifest_null", avro_file(MANIFEST_ENTRY, [entry(i) for i in range(1, 4)], "null", meta))
    write("avro_fuzzer", "manifest_deflate", avro_file(MANIFEST_ENTRY, [entry(i) for i in range(1, 6)], "deflate", meta))
    write("avro_fuzzer", "manifest_list", avro_file(MANIFEST_FILE, [
        ["s3://lake/db/t2/metadata/m0.avro", 7021, 0, 0, 1002, (1, [[False, (1, b"\x12\x4f\x00\x00")]])],
        ["s3://lake/db/t2/metadata/m1.avro", 6500, 0, 1, 1003, (0, None)]], "deflate",
        {"snapshot-id": "1003", "parent-snapshot-id": "1002", "sequence-number": "3", "format-version": "2"}))
    write("avro_fuzzer", "kitchen_sink", avro_file(KITCHEN_SINK, [
        [True, 0.5, 1, b"abcd", b"wxyz", [("a", (1, "x")), ("b", (0, None))], b"\x01\x86"]], "null"))
    write("avro_fuzzer", "empty", avro_file({"type": "array", "items": "long"}, []))
    # The manifest reader starts from the same manifests and manifest list.
    for name in ("manifest_null", "manifest_deflate", "manifest_list"):
        with open(os.path.join(CORPUS, "avro_fuzzer", name), "rb") as f:
            write("manifest_fuzzer", name, f.read())


def deletion_vector(positions):
    """A deletion-vector-v1 blob: the portable 64-bit Roaring form of `positions` (array containers
    only), framed by its big-endian length, magic and CRC-32."""
    import struct
    import zlib
    by_key = {}
    for p in sorted(positions):
        by_key.setdefault(p >> 32, []).append(p & 0xFFFFFFFF)
    body = struct.pack("<Q", len(by_key))
    for key, lows in sorted(by_key.items()):
        containers = {}
        for low in lows:
            containers.setdefault(low >> 16, []).append(low & 0xFFFF)
        header = struct.pack("<II", 12346, len(containers))
        descriptive = b"".join(struct.pack("<HH", high, len(values) - 1) for high, values in sorted(containers.items()))
        offset = len(header) + len(descriptive) + 4 * len(containers)
        offsets, payload = b"", b""
        for high, values in sorted(containers.items()):
            offsets += struct.pack("<I", offset + len(payload))
            payload += b"".join(struct.pack("<H", v) for v in values)
        body += struct.pack("<I", key) + header + descriptive + offsets + payload
    vector = b"\xD1\xD3\x39\x64" + body
    return struct.pack(">I", len(vector)) + vector + struct.pack(">I", zlib.crc32(vector))


def puffin_file(blobs):
    import struct
    out, metadata = b"PFA1", []
    for referenced, blob in blobs:
        metadata.append({"type": "deletion-vector-v1", "fields": [2147483645], "snapshot-id": -1,
                         "sequence-number": -1, "offset": len(out), "length": len(blob),
                         "properties": {"referenced-data-file": referenced, "cardinality": "1"}})
        out += blob
    payload = json.dumps({"blobs": metadata, "properties": {"created-by": "seed"}}).encode()
    return out + b"PFA1" + payload + struct.pack("<I", len(payload)) + b"\0\0\0\0" + b"PFA1"


def puffin_seeds():
    small = deletion_vector([3])
    wide = deletion_vector([0, 1, 2, 70000, (1 << 32) + 5, 3 << 32])
    write("puffin_fuzzer", "dv_small", small)
    write("puffin_fuzzer", "dv_wide", wide)
    write("puffin_fuzzer", "puffin_two_dvs", puffin_file([("s3://lake/db/t/data/a.parquet", small),
                                                          ("s3://lake/db/t/data/b.parquet", wide)]))


def parquet_seeds():
    """Small Parquet files as pyarrow writes them (pyarrow is imported here only: the other seeds
    need nothing beyond the standard library): the fuzzer's table columns (id long, name string,
    value double) with field ids, every codec, dictionary and plain pages, data page v2, nulls, a
    narrower type, and columns it must skip (nested, unknown)."""
    import io
    import pyarrow as pa
    import pyarrow.parquet as pq

    def ids(field, field_id):
        return field.with_metadata({b"PARQUET:field_id": str(field_id).encode()})

    schema = pa.schema([ids(pa.field("id", pa.int64(), nullable=False), 1), ids(pa.field("name", pa.string()), 2),
                        ids(pa.field("value", pa.float64()), 3)])
    rows = {"id": list(range(40)), "name": [None if i % 7 == 0 else f"n{i % 5}" for i in range(40)],
            "value": [float("nan") if i == 3 else i / 4 for i in range(40)]}
    table = pa.Table.from_pydict(rows, schema=schema)

    def parquet(table, **options):
        out = io.BytesIO()
        pq.write_table(table, out, **options)
        return out.getvalue()

    write("parquet_fuzzer", "plain_none", parquet(table, compression="none", use_dictionary=False))
    write("parquet_fuzzer", "dictionary_snappy", parquet(table, compression="snappy", row_group_size=16))
    write("parquet_fuzzer", "zstd_page_v2", parquet(table, compression="zstd", data_page_version="2.0",
                                                    data_page_size=64))
    narrow = pa.Table.from_pydict({"id": pa.array(range(10), pa.int32()), "value": pa.array([1.5] * 10, pa.float32())})
    write("parquet_fuzzer", "narrow_types_no_ids", parquet(narrow, compression="gzip"))
    nested = pa.Table.from_pydict({"id": list(range(5)), "tags": [["a", "b"], [], None, ["c"], ["d"]],
                                   "point": [{"x": 1.0, "y": 2.0}] * 5, "ts": pa.array(range(5), pa.timestamp("us"))})
    write("parquet_fuzzer", "nested_and_extra", parquet(nested, compression="lz4"))


def expression_seeds():
    """Filters as users type them ('t', any first byte but 'j') and as the REST spec's JSON ('j')."""
    texts = {
        "text_compare": "id >= 10 and (s in ('a', 'it''s') or not ts is null) and s like 'ab%'",
        "text_types": "ts < '2026-03-01T01:02:03.5+01:00' or day = '2026-03-01' or d = 12.300 or "
                      "u = '6f0b6c8c-0000-4000-8000-000000000001' or b = 'cafe' or ok = true or t > '12:00:01' "
                      "or ns >= '2026-01-01 00:00:00.123456789' or f is not nan or n not in (1, -2)",
        "text_quoted": '"weird ""name""" != 1 or not (id <> 2 and id == 3) or s not like \'x\\%%\'',
    }
    for name, text in texts.items():
        write("expression_fuzzer", name, "t" + text)
    expressions = {
        "json_nested": {"type": "and", "left": {"type": "gt-eq", "term": "id", "value": 10},
                        "right": {"type": "or", "left": {"type": "in", "term": {"type": "reference", "term": "s"},
                                                         "values": ["a", {"type": "literal", "value": "b"}]},
                                  "right": {"type": "not", "child": {"type": "is-null", "term": "ts"}}}},
        "json_spark": {"type": "and", "left": {"type": "not-null", "term": "day"},
                       "right": {"type": "lt-eq", "term": "day", "value": "2026-03-01"}},
        "json_constants": {"type": "or", "left": True, "right": {"type": "literal", "value": False}},
        "json_prefix": {"type": "not-starts-with", "term": "s", "value": "ab"},
    }
    for name, expression in expressions.items():
        write("expression_fuzzer", name, "j" + dumps(expression))


def pg_values_seeds():
    """COPY rows as PostgreSQL 15 sends them to serac sync: binary (the file header with the first
    row, a row per buffer, the trailer), each buffer prefixed by its length; and text lines."""
    import struct

    def frame(*buffers):
        return b"".join(struct.pack(">H", len(b)) + b for b in buffers)

    def field(value):
        return struct.pack(">i", -1) if value is None else struct.pack(">i", len(value)) + value

    header = b"PGCOPY\n\xff\r\n\x00" + struct.pack(">ii", 0, 0)
    numeric = struct.pack(">hhhh", 3, 1, 0x4000, 3) + struct.pack(">hhh", 1, 2345, 6780)  # -12345.678
    values = [b"\x01", struct.pack(">h", -7), struct.pack(">i", 42), struct.pack(">q", 1 << 40),
              struct.pack(">f", 1.5), struct.pack(">d", -2.25), struct.pack(">i", 8825), struct.pack(">q", 3600000000),
              struct.pack(">q", 762000000000000), struct.pack(">q", 0), numeric, struct.pack(">q", -123456),
              bytes(range(16)), b"\x00\xff", b"caf\xc3\xa9", b"{1,NULL,-3}"]
    row = struct.pack(">h", len(values)) + b"".join(field(v) for v in values)
    nulls = struct.pack(">h", len(values)) + b"".join(field(None) for _ in values)
    write("pg_values_fuzzer", "binary_rows", b"\x00" + frame(header + row, nulls, struct.pack(">h", -1)))
    write("pg_values_fuzzer", "text_line",
          b"\x01t\t-7\t42\t1099511627776\t1.5\t-2.25\t2024-02-29\t01:00:00\t2024-02-24 00:00:00\t"
          b"2000-01-01 00:00:00+00\t-12345.678\t-$1,234.56\tf79c3e09-677c-4bbd-a479-3f349cb785e7\t\\\\x00ff\t"
          b"caf\xc3\xa9\t{1,NULL,-3}")


def pgoutput_seeds():
    """pgoutput messages as PostgreSQL 15 sends them, each prefixed by its length (two bytes); the
    first byte picks the protocol version (byte % 4 + 1)."""
    import struct

    def frame(*messages):
        return b"".join(struct.pack(">H", len(m)) + m for m in messages)

    def text(value):
        return b"t" + struct.pack(">i", len(value)) + value

    begin = b"B" + struct.pack(">QqI", 0x16B374D848, 123456789, 741)
    relation = (b"R" + struct.pack(">I", 16384) + b"public\0orders\0" + b"f" + struct.pack(">h", 2) +
                b"\x01id\0" + struct.pack(">Ii", 20, -1) + b"\x00note\0" + struct.pack(">Ii", 25, -1))
    insert = b"I" + struct.pack(">I", 16384) + b"N" + struct.pack(">h", 2) + text(b"1") + text(b"one")
    update = (b"U" + struct.pack(">I", 16384) + b"O" + struct.pack(">h", 2) + text(b"1") + text(b"one") +
              b"N" + struct.pack(">h", 2) + text(b"1") + b"u")
    delete = b"D" + struct.pack(">I", 16384) + b"K" + struct.pack(">h", 1) + text(b"1")
    truncate = b"T" + struct.pack(">IbI", 1, 3, 16384)
    commit = b"C" + struct.pack(">bQQq", 0, 0x16B374D848, 0x16B374D878, 123456790)
    xlog = b"w" + struct.pack(">QQq", 0x16B374D848, 0x16B374D878, 1) + insert
    keepalive = b"k" + struct.pack(">Qqb", 0x16B374D878, 2, 1)
    write("pgoutput_fuzzer", "transaction_v1", b"\x00" + frame(begin, relation, insert, update, delete, truncate, commit))
    write("pgoutput_fuzzer", "copy_frames", b"\x00" + frame(xlog, keepalive))
    stream_insert = b"I" + struct.pack(">II", 900, 16384) + b"N" + struct.pack(">h", 1) + text(b"7")
    write("pgoutput_fuzzer", "stream_v2", b"\x01" + frame(b"S" + struct.pack(">Ib", 900, 1), stream_insert, b"E",
                                                          b"c" + struct.pack(">IbQQq", 900, 0, 10, 20, 30),
                                                          b"A" + struct.pack(">II", 901, 901)))
    write("pgoutput_fuzzer", "two_phase_v3", b"\x02" + frame(b"b" + struct.pack(">QQqI", 1, 2, 3, 900) + b"gid\0",
                                                             b"P" + struct.pack(">bQQqI", 0, 1, 2, 3, 900) + b"gid\0",
                                                             b"r" + struct.pack(">bQQqqI", 0, 1, 2, 3, 4, 900) + b"gid\0"))
    write("pgoutput_fuzzer", "abort_v4", b"\x03" + frame(b"S" + struct.pack(">Ib", 5, 1), b"E",
                                                         b"A" + struct.pack(">IIQq", 5, 5, 55, 66)))


def sync_config_seeds():
    """OLake's files as its documentation writes them: 's' source.json, 'd' destination.json, 't' streams.json."""
    source = {"host": "postgres", "port": 5432, "database": "shop", "username": "olake", "password": "p",
              "jdbc_url_params": {"application_name": "olake"}, "ssl": {"mode": "require", "server_ca": "PEM"},
              "update_method": {"replication_slot": "olake_slot", "publication": "olake_pub", "initial_wait_time": 120},
              "max_threads": 4, "schemas": ["public"], "ssh_config": {"host": "bastion"}}
    write("sync_config_fuzzer", "source", "s" + dumps(source))
    destination = {"type": "ICEBERG", "writer": {
        "catalog_type": "rest", "rest_catalog_url": "http://localhost:9000/_iceberg", "iceberg_s3_path": "lake",
        "iceberg_db": "shop", "rest_signing_v_4": True, "rest_signing_name": "s3tables", "s3_endpoint": "localhost:9000",
        "s3_use_ssl": False, "aws_access_key": "a", "aws_secret_key": "b", "arrow_writes": True}}
    write("sync_config_fuzzer", "destination_sigv4", "d" + dumps(destination))
    oauth = {"type": "ICEBERG", "writer": {"catalog_type": "polaris", "rest_catalog_url": "https://c/api/catalog",
                                           "iceberg_s3_path": "w", "credential": "id:secret", "scope": "PRINCIPAL_ROLE:ALL"}}
    write("sync_config_fuzzer", "destination_oauth2", "d" + dumps(oauth))
    streams = {"selected_streams": {"public": [{"stream_name": "orders", "partition_regex": "/{created_at, day}",
                                                "normalization": True, "append_mode": False, "update_type": "dv",
                                                "selected_columns": {"columns": ["id"], "sync_new_columns": True}}]},
               "streams": [{"stream": {"name": "orders", "namespace": "public",
                                       "type_schema": {"properties": {"id": {"type": ["integer"]},
                                                                      "amount": {"type": ["number", "null"]}}},
                                       "supported_sync_modes": ["full_refresh", "cdc"],
                                       "source_defined_primary_key": ["id"], "available_cursor_fields": ["id"],
                                       "sync_mode": "cdc", "destination_database": "shop"}}]}
    write("sync_config_fuzzer", "streams", "t" + dumps(streams))


def main():
    base = "/_iceberg/v1/lake"
    # --- iceberg_metadata_fuzzer ---
    for v in (1, 2, 3):
        write("iceberg_metadata_fuzzer", f"table_v{v}.json", "0" + dumps(table_metadata(v)))
    write("iceberg_metadata_fuzzer", "view.json", "1" + dumps(view_metadata()))
    for v in (1, 2, 3):
        write("iceberg_metadata_fuzzer", f"create_v{v}.json", "2" + dumps(create_table("t", v)))
    write("iceberg_metadata_fuzzer", "create_view.json", "3" + dumps(create_view("v")))
    for v3, mode in ((False, "4"), (True, "5")):
        for name, body in table_commits(v3).items():
            write("iceberg_metadata_fuzzer", f"commit_{'v3' if v3 else 'v2'}_{name}.json", mode + dumps(body))
    write("iceberg_metadata_fuzzer", "view_commit.json", "6" + dumps(view_commit()))

    # --- catalog_request_fuzzer (signed by the target itself) ---
    cat = "catalog_request_fuzzer"
    write(cat, "config", request_text("GET", "/_iceberg/v1/config?warehouse=lake", {}))
    write(cat, "create_warehouse", request_text("POST", "/_iceberg/v1/warehouses", {}, dumps({"name": "lake2", "upgrade-existing": False})))
    write(cat, "list_namespaces", request_text("GET", f"{base}/namespaces?parent=db&pageSize=10", {}))
    write(cat, "create_namespace", request_text("POST", f"{base}/namespaces", {}, dumps({"namespace": ["db", "inner"], "properties": {"owner": "x"}})))
    write(cat, "namespace_properties", request_text("POST", f"{base}/namespaces/db/properties", {},
                                                    dumps({"removals": ["a"], "updates": {"b": "c"}})))
    for v in (2, 3):
        write(cat, f"create_table_v{v}", request_text("POST", f"{base}/namespaces/db/tables", {}, dumps(create_table(f"n{v}", v))))
    write(cat, "stage_create", request_text("POST", f"{base}/namespaces/db/tables", {}, dumps(dict(create_table("s", 2), **{"stage-create": True}))))
    write(cat, "load_table", request_text("GET", f"{base}/namespaces/db/tables/t2?snapshots=refs", {"X-Iceberg-Access-Delegation": "vended-credentials"}))
    for v3 in (False, True):
        for name, body in table_commits(v3).items():
            t = "t3" if v3 else "t2"
            write(cat, f"commit_{t}_{name}", request_text("POST", f"{base}/namespaces/db/tables/{t}", {}, dumps(body)))
    write(cat, "transaction", request_text("POST", f"{base}/transactions/commit", {}, dumps({"table-changes": [
        dict({"identifier": {"namespace": ["db"], "name": "t2"}}, **table_commits(False)["append"]),
        dict({"identifier": {"namespace": ["db"], "name": "t3"}}, **table_commits(True)["properties"])]})))
    write(cat, "rename", request_text("POST", f"{base}/tables/rename", {}, dumps({
        "source": {"namespace": ["db"], "name": "n2"}, "destination": {"namespace": ["db"], "name": "n2b"}})))
    write(cat, "register", request_text("POST", f"{base}/namespaces/db/register", {}, dumps({
        "name": "r", "metadata-location": "s3://lake/db/t2/metadata/00001-x.metadata.json", "overwrite": False})))
    write(cat, "metrics", request_text("POST", f"{base}/namespaces/db/tables/t2/metrics", {}, dumps({
        "report-type": "scan-report", "table-name": "lake.db.t2", "snapshot-id": 1002, "filter": True,
        "schema-id": 0, "projected-field-ids": [1], "projected-field-names": ["id"], "metrics": {}})))
    write(cat, "credentials", request_text("GET", f"{base}/namespaces/db/tables/t2/credentials", {}))
    write(cat, "drop_table", request_text("DELETE", f"{base}/namespaces/db/tables/n3?purgeRequested=true", {}))
    write(cat, "create_view", request_text("POST", f"{base}/namespaces/db/views", {}, dumps(create_view("w"))))
    write(cat, "view_commit", request_text("POST", f"{base}/namespaces/db/views/v", {}, dumps(view_commit())))
    write(cat, "oauth_client_credentials", request_text("POST", "/_iceberg/v1/oauth/tokens",
                                                        {"Content-Type": "application/x-www-form-urlencoded", "Authorization": "none"},
                                                        f"grant_type=client_credentials&client_id={ACCESS}&client_secret={SECRET}&scope=catalog"))
    write(cat, "oauth_token_exchange", request_text("POST", "/_iceberg/v1/oauth/tokens",
                                                    {"Content-Type": "application/x-www-form-urlencoded", "Authorization": "none"},
                                                    "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Atoken-exchange&subject_token=abc"
                                                    "&subject_token_type=urn%3Aietf%3Aparams%3Aoauth%3Atoken-type%3Aaccess_token"))
    write(cat, "warehouse_delete", request_text("DELETE", "/_iceberg/v1/warehouses/lake2", {}))

    # --- admin_api_fuzzer ---
    adm = "admin_api_fuzzer"
    policy = {"Version": "2012-10-17", "Statement": [{"Sid": "read", "Effect": "Allow", "Action": ["s3:GetObject", "s3:ListBucket"],
                                                       "Resource": ["arn:aws:s3:::bucket", "arn:aws:s3:::bucket/${aws:username}/*"],
                                                       "Condition": {"StringLike": {"s3:prefix": ["home/*"]}}}]}
    write(adm, "create_user", request_text("POST", "/_serac/admin/v1/users", {}, dumps({"name": "alice", "policies": ["readwrite"]})))
    write(adm, "list_users", request_text("GET", "/_serac/admin/v1/users", {}))
    write(adm, "get_user", request_text("GET", "/_serac/admin/v1/users/alice", {}))
    write(adm, "disable_user", request_text("PATCH", "/_serac/admin/v1/users/alice", {}, dumps({"enabled": False})))
    write(adm, "create_key", request_text("POST", "/_serac/admin/v1/users/alice/access-keys", {},
                                          dumps({"access-key": "ALICEKEY0001", "secret-key": "alice-secret-0123456789", "description": "ci"})))
    write(adm, "list_keys", request_text("GET", "/_serac/admin/v1/access-keys", {}))
    write(adm, "disable_key", request_text("PATCH", "/_serac/admin/v1/access-keys/ALICEKEY0001", {}, dumps({"enabled": False})))
    write(adm, "delete_key", request_text("DELETE", "/_serac/admin/v1/access-keys/ALICEKEY0001", {}))
    write(adm, "put_policy", request_text("PUT", "/_serac/admin/v1/policies/readers", {}, dumps(policy)))
    write(adm, "get_policy", request_text("GET", "/_serac/admin/v1/policies/readers", {}))
    write(adm, "attach_policy", request_text("PUT", "/_serac/admin/v1/users/alice/policies/readers", {}))
    write(adm, "detach_policy", request_text("DELETE", "/_serac/admin/v1/users/alice/policies/readers", {}))
    write(adm, "delete_policy", request_text("DELETE", "/_serac/admin/v1/policies/readers", {}))
    write(adm, "delete_user", request_text("DELETE", "/_serac/admin/v1/users/alice", {}))

    # --- policy_fuzzer ---
    write("policy_fuzzer", "read_home", dumps(policy))
    write("policy_fuzzer", "tables", dumps({"Version": "2012-10-17", "Statement": [
        {"Effect": "Allow", "Action": "s3tables:*", "Resource": "arn:aws:s3tables:::bucket/lake/*",
         "Condition": {"StringEquals": {"s3tables:namespace": "db"}, "IpAddress": {"aws:SourceIp": ["10.0.0.0/8", "::1/128"]},
                       "Bool": {"aws:SecureTransport": "true"}, "NumericLessThan": {"s3:max-keys": "100"}}},
        {"Effect": "Deny", "NotAction": ["s3tables:Get*"], "NotResource": "arn:aws:s3tables:::bucket/other",
         "Condition": {"ForAnyValue:StringLike": {"aws:username": ["a*", "${aws:userid}"]}, "Null": {"s3:prefix": "false"}}}]}))

    # --- s3_xml_fuzzer ---
    ns = 'xmlns="http://s3.amazonaws.com/doc/2006-03-01/"'
    write("s3_xml_fuzzer", "complete", f'c<?xml version="1.0" encoding="UTF-8"?><CompleteMultipartUpload {ns}>'
          '<Part><PartNumber>1</PartNumber><ETag>"a54357aff0632cce46d942af68356b38"</ETag><ChecksumCRC32>AAAAAA==</ChecksumCRC32></Part>'
          '<Part><PartNumber>2</PartNumber><ETag>0c78aef83f66abc1fa1e8477f296d394</ETag></Part></CompleteMultipartUpload>')
    write("s3_xml_fuzzer", "delete", f'd<Delete {ns}><Quiet>true</Quiet><Object><Key>a/b.txt</Key></Object>'
          '<Object><Key>c&amp;d</Key><VersionId>null</VersionId></Object></Delete>')
    write("s3_xml_fuzzer", "tagging", f't<Tagging {ns}><TagSet><Tag><Key>project</Key><Value>serac</Value></Tag>'
          '<Tag><Key>empty</Key><Value></Value></Tag></TagSet></Tagging>')
    write("s3_xml_fuzzer", "bucket", f'b<CreateBucketConfiguration {ns}><LocationConstraint>us-east-1</LocationConstraint></CreateBucketConfiguration>')

    # --- sigv_fuzzer ---
    host = {"Host": "127.0.0.1:9000"}
    body = b"hello world\n" * 10
    h = sign_v4("PUT", "/bucket/key.txt", "", dict(host, **{"Content-Length": str(len(body)),
                                                            "Content-MD5": base64.b64encode(hashlib.md5(body).digest()).decode()}),
                hashlib.sha256(body).hexdigest())
    write("sigv_fuzzer", "v4_put", b"r" + request_text("PUT", "/bucket/key.txt", h, body))
    h = sign_v4("GET", "/bucket", "list-type=2&prefix=a%2Fb&max-keys=10", host, "UNSIGNED-PAYLOAD")
    write("sigv_fuzzer", "v4_list", b"r" + request_text("GET", "/bucket?list-type=2&prefix=a%2Fb&max-keys=10", h))
    presigned = (f"X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential={ACCESS}%2F{DAY}%2Fus-east-1%2Fs3%2Faws4_request"
                 f"&X-Amz-Date={AMZ_DATE}&X-Amz-Expires=3600&X-Amz-SignedHeaders=host&X-Amz-Signature={'0' * 64}")
    write("sigv_fuzzer", "v4_presigned", b"r" + request_text("GET", "/bucket/key.txt?" + presigned, host))
    write("sigv_fuzzer", "v2_header", b"r" + request_text("GET", "/bucket/key.txt?acl", dict(host, **{
        "Date": "Thu, 01 Jan 2026 00:00:00 GMT", "Authorization": f"AWS {ACCESS}:" + base64.b64encode(b"x" * 20).decode()})))
    write("sigv_fuzzer", "v2_presigned", b"r" + request_text("GET", f"/bucket/key.txt?AWSAccessKeyId={ACCESS}&Expires=1767229200&Signature=abc%3D", host))
    payload = b"x" * 70000
    trailer = "x-amz-checksum-crc32:" + base64.b64encode(zlib.crc32(payload).to_bytes(4, "big")).decode() + "\r\n"
    unsigned_chunks = chunked(payload, [65536, len(payload) - 65536], trailer)
    write("sigv_fuzzer", "chunked_unsigned_trailer", b"s" + request_text("PUT", "/bucket/big.bin", dict(host, **{
        "x-amz-content-sha256": "STREAMING-UNSIGNED-PAYLOAD-TRAILER", "Content-Encoding": "aws-chunked",
        "x-amz-decoded-content-length": str(len(payload)), "x-amz-trailer": "x-amz-checksum-crc32",
        "Content-Length": str(len(unsigned_chunks))}), unsigned_chunks))
    signed_chunks = (f"10000;chunk-signature={'a' * 64}\r\n".encode() + payload[:65536] + b"\r\n" +
                     f"{len(payload) - 65536:x};chunk-signature={'b' * 64}\r\n".encode() + payload[65536:] + b"\r\n" +
                     f"0;chunk-signature={'c' * 64}\r\n".encode() + trailer.encode() + f"x-amz-trailer-signature:{'d' * 64}\r\n\r\n".encode())
    write("sigv_fuzzer", "chunked_signed_trailer", b"s" + request_text("PUT", "/bucket/big.bin", dict(host, **{
        "x-amz-content-sha256": "STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER", "Content-Encoding": "aws-chunked",
        "x-amz-decoded-content-length": str(len(payload)), "x-amz-trailer": "x-amz-checksum-crc32",
        "Content-Length": str(len(signed_chunks))}), signed_chunks))
    write("sigv_fuzzer", "checksum_header", b"s" + request_text("PUT", "/bucket/k%20ey", dict(host, **{
        "x-amz-checksum-sha256": base64.b64encode(hashlib.sha256(body).digest()).decode(), "x-amz-sdk-checksum-algorithm": "SHA256"}), body))
    write("sigv_fuzzer", "catalog_commit", b"g" + request_text("POST", f"{base}/namespaces/db/tables/t2", host,
                                                               dumps(table_commits(False)["append"])))

    # --- sigv_decision_fuzzer: [form][change kind][where lo][where hi][new byte] + an unsigned request ---
    decision = "sigv_decision_fuzzer"
    small = b"hello world\n" * 3
    write(decision, "header_put_body_byte", b"h\x05\x03\x00X" + request_text("PUT", "/bucket/key.txt", host, small))
    write(decision, "header_get_path_byte", b"h\x01\x02\x00Z" + request_text("GET", "/bucket/key.txt", host))
    write(decision, "header_list_query_byte", b"h\x02\x04\x00Q" + request_text("GET", "/bucket?list-type=2&prefix=a%2Fb", host))
    write(decision, "unsigned_put_amz_header", b"u\x07\x00\x00\x01" + request_text("PUT", "/bucket/key.txt", host, small))
    write(decision, "presigned_get_amz_header", b"p\x07\x00\x00\x01" + request_text("GET", "/bucket/key.txt", host))
    write(decision, "presigned_put_method", b"p\x00\x00\x00G" + request_text("PUT", "/bucket/up.bin", host, small))
    write(decision, "catalog_unsent_hash_body", b"g\x05\x10\x00}" + request_text(
        "POST", f"{base}/namespaces/db/tables/t2", dict(host, **{"Content-Type": "application/json"}),
        dumps(table_commits(False)["append"])))
    write(decision, "catalog_delete_path", b"g\x09\x30\x00x" + request_text("DELETE", f"{base}/namespaces/db/tables/t2", host))
    write(decision, "chunked_put_body", b"c\x05\x40\x00Y" + request_text("PUT", "/bucket/big.bin", host, b"z" * 20000))
    write(decision, "header_delete_signature", b"h\x03\x00\x01f" + request_text("DELETE", "/bucket/key.txt", host))

    # --- http_request_fuzzer (raw bytes on the wire) ---
    web = "http_request_fuzzer"
    write(web, "get", http_text("GET", "/bucket/key?x=1", dict(host, **{"Accept": "*/*", "User-Agent": "aws-cli/2.9"})))
    write(web, "put_length", http_text("PUT", "/bucket/key", dict(host, **{"Content-Length": "11"}), "hello world"))
    write(web, "put_chunked", http_text("PUT", "/bucket/key", dict(host, **{"Transfer-Encoding": "chunked"}),
                                        b"5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\nx-trailer: 1\r\n\r\n"))
    write(web, "expect_continue", http_text("PUT", "/bucket/key", dict(host, **{"Content-Length": "4", "Expect": "100-continue"}), "data"))
    write(web, "pipelined", http_text("GET", "/a", host) + http_text("HEAD", "/b", dict(host, **{"Connection": "keep-alive"})) +
          http_text("POST", "/c", dict(host, **{"Content-Length": "2", "Connection": "close"}), "{}"))


if __name__ == "__main__":
    main()
    avro_seeds()
    puffin_seeds()
    parquet_seeds()
    expression_seeds()
    sync_config_seeds()
    pgoutput_seeds()
    pg_values_seeds()
