"""Differential test against the Apache Iceberg reference REST catalog: the same sequences of REST
calls (table creates, commits, multi-table transactions, views) go to serac and to the reference
server (RESTCatalogAdapter on a JdbcCatalog, started by tests/catalog_tools/run_reference_server.sh
from the Java tools of scripts/install-java-tools.sh). After every call the HTTP status and the
Iceberg error type must be equal on both, and so must the metadata of every table (view) of the
sequence as loadTable (loadView) returns it. Error messages may differ. Only what must differ is
normalised: `Normaliser` lists each normalisation with the reason, and `ReferenceCatalog` the one
for the reference servlet's answer to a body it cannot parse. Where serac differs, the case is an
expected failure recorded difference by difference in KNOWN_DIFFERENCES (see FINDINGS).

Both catalogs get plain HTTP requests: serac SigV4-signed (signing name s3tables) under
/_iceberg/v1/<warehouse>/, the reference unsigned under /v1/ (it has no prefix). Snapshots carry a
manifest-list location but no file: neither catalog reads manifests on commit."""

from __future__ import annotations

import collections
import copy
import json
import os
import re
import shutil
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import requests

from catalog_util import CatalogApi
from s3util import REPO_ROOT, unique_bucket_name

RUN_REFERENCE = REPO_ROOT / "tests" / "catalog_tools" / "run_reference_server.sh"
JAVA_TOOLS = Path(os.environ.get("SERAC_JAVA_TOOLS_DIR", REPO_ROOT / "build" / "java"))
REFERENCE_LISTENING_RE = re.compile(r"reference catalog listening on (http://127\.0\.0\.1:\d+)/")
REFERENCE_START_TIMEOUT_S = 90

pytestmark = pytest.mark.skipif(
    not (JAVA_TOOLS / "server.classpath").is_file() or not shutil.which("java"),
    reason="Java tools not installed (scripts/install-java-tools.sh)")


def now_ms() -> int:
    return time.time_ns() // 1_000_000


# --- The two catalogs ------------------------------------------------------------------------------


@dataclass
class Answer:
    status: int
    error_type: str | None
    body: Any


class Catalog:
    """One side of the comparison: sends a request relative to the catalog's /v1/<prefix>/."""

    name = ""

    def send(self, method: str, path: str, body=None) -> requests.Response:
        raise NotImplementedError

    def answer(self, method: str, path: str, body=None) -> Answer:
        response = self.send(method, path, body)
        try:
            parsed = response.json() if response.content else None
        except ValueError:
            parsed = None
        error_type = None
        if response.status_code >= 400:
            if isinstance(parsed, dict) and isinstance(parsed.get("error"), dict):
                error_type = parsed["error"].get("type")
            else:
                return self.non_iceberg_error(response)
        return Answer(response.status_code, error_type, parsed)

    def non_iceberg_error(self, response: requests.Response) -> Answer:
        return Answer(response.status_code, f"<no Iceberg error body: {response.text[:120]!r}>", None)


class SeracCatalog(Catalog):
    name = "serac"

    def __init__(self, api: CatalogApi, warehouse: str):
        self.api = api
        self.warehouse = warehouse

    def send(self, method, path, body=None):
        return self.api.call(method, f"/v1/{self.warehouse}/{path}", body=body)


# The reference servlet (RESTCatalogServlet of the iceberg-core test jar) deserialises the request
# body in ServletRequestContext.from(), before and outside RESTCatalogAdapter's exception mapping.
# A body its JSON parsers refuse ("Cannot parse missing string: direction") therefore escapes the
# servlet, and Jetty answers with its own HTML page, status 500. That 500 is the test servlet's, not
# the catalog's: the adapter maps the very same exception like every other refusal of a request,
# IllegalArgumentException and ValidationException to 400 with the exception's simple class name as
# the Iceberg error type (RESTCatalogAdapter.EXCEPTION_ERROR_CODES). The comparison expects that.
ADAPTER_STATUS_BY_EXCEPTION = {"IllegalArgumentException": 400, "ValidationException": 400}
JETTY_ERROR_PAGE_RE = re.compile(r"<title>Error 500 ([\w.$]+): (.*?)</title>", re.S)


class ReferenceCatalog(Catalog):
    name = "reference"

    def __init__(self, base: str):
        self.base = base

    def send(self, method, path, body=None):
        data = None if body is None else body if isinstance(body, (str, bytes)) else json.dumps(body)
        return requests.request(method, f"{self.base}/v1/{path}", data=data,
                                headers={"Content-Type": "application/json"} if data is not None else {},
                                timeout=60)

    def non_iceberg_error(self, response):
        match = JETTY_ERROR_PAGE_RE.search(response.text) if response.status_code == 500 else None
        if match:
            exception = match.group(1).rsplit(".", 1)[-1]
            if exception in ADAPTER_STATUS_BY_EXCEPTION:
                return Answer(ADAPTER_STATUS_BY_EXCEPTION[exception], exception, None)
        return super().non_iceberg_error(response)


class ReferenceServer:
    """run_reference_server.sh on a port the JVM picks, its output drained into a bounded tail."""

    def __init__(self, warehouse_dir: Path):
        self.warehouse_dir = warehouse_dir
        self.process: subprocess.Popen | None = None
        self.base = ""
        self.output: collections.deque[str] = collections.deque(maxlen=200)

    def start(self) -> None:
        self.process = subprocess.Popen(["bash", str(RUN_REFERENCE), "0", str(self.warehouse_dir)],
                                        stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                        stdin=subprocess.DEVNULL)
        listening = threading.Event()

        def drain():
            for raw in self.process.stdout:
                line = raw.decode("utf-8", "replace").rstrip("\n")
                self.output.append(line)
                match = REFERENCE_LISTENING_RE.search(line)
                if match and not listening.is_set():
                    self.base = match.group(1)
                    listening.set()
            listening.set()

        threading.Thread(target=drain, daemon=True).start()
        if not listening.wait(REFERENCE_START_TIMEOUT_S) or not self.base:
            self.stop()
            raise RuntimeError("reference catalog did not start:\n" + "\n".join(self.output))

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        # The script execs java: the process is the JVM itself, which starts no others.
        self.process.terminate()
        try:
            self.process.wait(20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


@pytest.fixture(scope="module")
def reference():
    root = Path(tempfile.mkdtemp(prefix="serac-reference-diff-"))
    server = ReferenceServer(root / "warehouse")
    server.start()
    yield ReferenceCatalog(server.base)
    server.stop()
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="module")
def serac(server):
    api = CatalogApi(server.endpoint)
    warehouse = unique_bucket_name("reference-diff")
    api.create_warehouse(warehouse)
    return SeracCatalog(api, warehouse)


# --- Sequences -------------------------------------------------------------------------------------
#
# A Plan is a list of requests, built once and sent to both catalogs. Strings may hold markers that
# stand for what differs between them: @location(t)@ (table t's location as its create answered),
# @uuid(t)@ (its table-uuid) and @ns@ (the sequence's namespace, the same name on both).

SCHEMA = {"type": "struct", "schema-id": 0, "fields": [
    {"id": 1, "name": "id", "type": "long", "required": True},
    {"id": 2, "name": "data", "type": "string", "required": False}]}
SCHEMA_PLUS_X = {"type": "struct", "schema-id": 1, "fields": SCHEMA["fields"] + [
    {"id": 3, "name": "x", "type": "int", "required": False}]}
SCHEMA_PLUS_XY = {"type": "struct", "schema-id": 2, "fields": SCHEMA_PLUS_X["fields"] + [
    {"id": 4, "name": "y", "type": "string", "required": False}]}
# Set explicitly at every create but the one that compares the defaults: the reference adds it at
# create on its own (TableMetadata's persisted defaults), serac does not; create_defaults compares
# that, and every other sequence then starts from the same properties.
CODEC = {"write.parquet.compression-codec": "zstd"}
# A uuid a client assigns: one per table, as Java's are (serac keeps a table's uuid its own in its
# warehouse, and every case of a run shares one warehouse).
def new_uuid(p, case: int = 1) -> str:
    return f"9f4b4b4e-1111-4222-8333-44445555{case:02d}{p.format_version:02d}"


@dataclass
class Step:
    label: str
    method: str
    path: str
    body: Any = None
    creates: tuple[str, str] | None = None   # ("table" | "view", name) made by this request


class Plan:
    def __init__(self, format_version: int, base_ms: int):
        self.format_version = format_version
        self.steps: list[Step] = []
        # The client's clock runs a little behind both servers' (base_ms is taken before any
        # request of the sequence, and no sequence ticks 5 s), so a client timestamp never falls
        # inside a request's time window, yet stays well within the minute of skew both allow
        # against the snapshot log.
        self.clock = base_ms - 5_000
        self.base_ms = base_ms
        self.table_versions: dict[str, int] = {}
        self.next_row_ids: dict[str, int] = {}

    def tick(self) -> int:
        self.clock += 100
        return self.clock

    # Requests.

    def create_table(self, table="t", *, properties=None, schema=SCHEMA, spec=None, order=None,
                     format_version=None, label=None, codec=True, stage=False):
        version = format_version or self.format_version
        props = {"format-version": str(version), **(CODEC if codec else {}), **(properties or {})}
        body = {"name": table, "schema": schema, "properties": props}
        if spec is not None:
            body["partition-spec"] = spec
        if order is not None:
            body["write-order"] = order
        if stage:
            body["stage-create"] = True
        self.table_versions[table] = version
        self.next_row_ids[table] = 0
        self.steps.append(Step(label or f"create {table} (v{version})", "POST", "namespaces/@ns@/tables", body,
                               ("table", table)))

    def commit(self, label, updates, requirements=(), table="t"):
        self.steps.append(Step(label, "POST", f"namespaces/@ns@/tables/{table}",
                               {"requirements": list(requirements), "updates": list(updates)}))

    def transaction(self, label, changes):
        """changes: [(table, requirements, updates)] committed together."""
        self.steps.append(Step(label, "POST", "transactions/commit", {"table-changes": [
            {"identifier": {"namespace": ["@ns@"], "name": table}, "requirements": list(requirements),
             "updates": list(updates)} for table, requirements, updates in changes]}))

    def create_view(self, label, view="v", version=None):
        body = {"name": view, "schema": SCHEMA, "view-version": version or self.view_version(1), "properties": {}}
        self.steps.append(Step(label, "POST", "namespaces/@ns@/views", body, ("view", view)))

    def commit_view(self, label, updates, requirements=(), view="v"):
        self.steps.append(Step(label, "POST", f"namespaces/@ns@/views/{view}",
                               {"requirements": list(requirements), "updates": list(updates)}))

    # Pieces of requests.

    def snapshot(self, snapshot_id, parent=None, sequence=None, operation="append", timestamp=None,
                 rows=10, table="t", schema_id=0, row_lineage=None, advance=True, **extra):
        """An add-snapshot update. On v3 tables it carries first-row-id and added-rows as a Java
        client's do; the client's next-row-id advances unless the commit is meant to fail
        (advance=False). row_lineage=False leaves them out."""
        snapshot = {"snapshot-id": snapshot_id, "sequence-number": sequence or snapshot_id,
                    "timestamp-ms": self.tick() if timestamp is None else timestamp,
                    "manifest-list": f"@location({table})@/metadata/snap-{snapshot_id}.avro",
                    "summary": {"operation": operation, "added-records": str(rows)}, "schema-id": schema_id}
        if parent is not None:
            snapshot["parent-snapshot-id"] = parent
        if row_lineage if row_lineage is not None else self.table_versions.get(table, 2) >= 3:
            snapshot["first-row-id"] = self.next_row_ids[table]
            snapshot["added-rows"] = rows
            if advance:
                self.next_row_ids[table] += rows
        snapshot.update(extra)
        return {"action": "add-snapshot", "snapshot": snapshot}

    def view_version(self, version_id, sql="select id, data from t", dialect="spark"):
        representation = {"type": "sql", "sql": sql}
        if dialect is not None:
            representation["dialect"] = dialect
        return {"version-id": version_id, "timestamp-ms": self.tick(), "schema-id": 0,
                "summary": {"engine-name": "spark"}, "representations": [representation],
                "default-namespace": ["@ns@"]}


def ref(snapshot_id, name="main", ref_type="branch", **retention):
    return {"action": "set-snapshot-ref", "ref-name": name, "snapshot-id": snapshot_id, "type": ref_type,
            **{key.replace("_", "-"): value for key, value in retention.items()}}


def assert_ref(snapshot_id, name="main"):
    return {"type": "assert-ref-snapshot-id", "ref": name, "snapshot-id": snapshot_id}


def append(plan, snapshot_id, parent, table="t", **snapshot_args):
    """One append commit as a client sends it: add-snapshot, set-snapshot-ref main, guarded by main."""
    plan.commit(f"append S{snapshot_id} to {table}",
                [plan.snapshot(snapshot_id, parent, table=table, **snapshot_args), ref(snapshot_id)],
                [assert_ref(parent)], table=table)


def statistics_file(snapshot_id, name):
    return {"snapshot-id": snapshot_id, "statistics-path": f"@location(t)@/metadata/{name}.stats",
            "file-size-in-bytes": 413, "file-footer-size-in-bytes": 42,
            "blob-metadata": [{"type": "apache-datasketches-theta-v1", "snapshot-id": snapshot_id,
                               "sequence-number": snapshot_id, "fields": [1], "properties": {"ndv": "3"}}]}


def partition_statistics_file(snapshot_id, name):
    return {"snapshot-id": snapshot_id, "statistics-path": f"@location(t)@/metadata/{name}.parquet",
            "file-size-in-bytes": 1024}


def seq_create_defaults(p: Plan):
    # No properties but format-version: what each catalog adds on its own shows here.
    p.create_table(codec=False)
    p.create_table(label="create t again", codec=False)


def seq_create_partitioned_sorted(p: Plan):
    # Client ids (10, 11, 12) are reassigned from 1 by the catalog, the spec and order rebound.
    schema = {"type": "struct", "schema-id": 7, "fields": [
        {"id": 10, "name": "id", "type": "long", "required": True},
        {"id": 11, "name": "data", "type": "string", "required": False},
        {"id": 12, "name": "day", "type": "date", "required": False}]}
    spec = {"spec-id": 3, "fields": [
        {"name": "id_bucket", "transform": "bucket[16]", "source-id": 10, "field-id": 1005},
        {"name": "day", "transform": "identity", "source-id": 12, "field-id": 1009}]}
    order = {"order-id": 4, "fields": [
        {"transform": "identity", "source-id": 11, "direction": "desc", "null-order": "nulls-last"}]}
    p.create_table(schema=schema, spec=spec, order=order,
                   properties={"owner": "diff", "commit.retry.num-retries": "2"})


def seq_appends(p: Plan):
    p.create_table()
    append(p, 1, None)
    append(p, 2, 1)
    append(p, 3, 2)
    p.commit("append S4 guarded by a stale main", [p.snapshot(4, 3, advance=False), ref(4)], [assert_ref(1)])


def seq_delete_then_overwrite(p: Plan):
    # PyIceberg's delete: a DELETE and an OVERWRITE snapshot in one commit, each made main in turn.
    p.create_table()
    append(p, 1, None)
    p.commit("delete S2 + overwrite S3", [p.snapshot(2, 1, operation="delete", rows=0), ref(2),
                                          p.snapshot(3, 2, operation="overwrite", rows=4), ref(3)],
             [assert_ref(1)])
    append(p, 4, 3)


def seq_two_appends_one_commit(p: Plan):
    # A Java transaction with two appends: both snapshots in one commit, main set after each.
    p.create_table()
    append(p, 1, None)
    p.commit("append S2 + append S3", [p.snapshot(2, 1), ref(2), p.snapshot(3, 2), ref(3)], [assert_ref(1)])


def seq_multi_table_transaction(p: Plan):
    p.create_table("t")
    p.create_table("u")
    p.transaction("append to t and u", [("t", [assert_ref(None)], [p.snapshot(1, table="t"), ref(1)]),
                                        ("u", [assert_ref(None)], [p.snapshot(2, table="u"), ref(2)])])
    # The second table's requirement fails: neither table changes.
    p.transaction("t ok, u stale", [("t", [assert_ref(1)], [p.snapshot(3, 1, table="t", advance=False), ref(3)]),
                                    ("u", [assert_ref(99)], [p.snapshot(4, 2, table="u", advance=False), ref(4)])])
    p.transaction("set properties on both", [
        ("t", [], [{"action": "set-properties", "updates": {"k": "t"}}]),
        ("u", [], [{"action": "set-properties", "updates": {"k": "u"}}])])


def seq_rollback(p: Plan):
    p.create_table()
    append(p, 1, None)
    append(p, 2, 1)
    append(p, 3, 2)
    p.commit("roll main back to S1", [ref(1)], [assert_ref(3)])
    p.commit("roll main forward to S3", [ref(3)], [assert_ref(1)])
    p.commit("set main to S3 again", [ref(3)])
    append(p, 4, 3)


def seq_branches_and_tags(p: Plan):
    p.create_table()
    append(p, 1, None)
    append(p, 2, 1)
    p.commit("create branch b at S1", [ref(1, "b", min_snapshots_to_keep=2, max_snapshot_age_ms=3_600_000,
                                           max_ref_age_ms=86_400_000)], [assert_ref(None, "b")])
    p.commit("create tag v1 at S2", [ref(2, "v1", "tag", max_ref_age_ms=604_800_000)])
    p.commit("move tag v1 to S1", [ref(1, "v1", "tag")], [assert_ref(2, "v1")])
    p.commit("append S3 to branch b", [p.snapshot(3, 1), ref(3, "b", min_snapshots_to_keep=2,
                                                              max_snapshot_age_ms=3_600_000,
                                                              max_ref_age_ms=86_400_000)],
             [assert_ref(1, "b")])
    p.commit("branch b retention changed", [ref(3, "b", max_ref_age_ms=1000)])
    p.commit("set main to a tag", [ref(2, "main", "tag")])
    p.commit("tag with min-snapshots-to-keep", [ref(2, "v2", "tag", min_snapshots_to_keep=1)])
    p.commit("branch with max-ref-age-ms 0", [ref(2, "c", max_ref_age_ms=0)])
    p.commit("ref to an unknown snapshot", [ref(99, "c")])
    p.commit("turn tag v1 into a branch", [ref(1, "v1")])
    p.commit("remove v1", [{"action": "remove-snapshot-ref", "ref-name": "v1"}])
    p.commit("remove a ref that does not exist", [{"action": "remove-snapshot-ref", "ref-name": "nope"}])
    p.commit("remove main", [{"action": "remove-snapshot-ref", "ref-name": "main"}])
    p.commit("set main to S2 again", [ref(2)], [assert_ref(None)])


def seq_remove_snapshots(p: Plan):
    p.create_table()
    append(p, 1, None)
    p.commit("delete S2 + overwrite S3", [p.snapshot(2, 1, operation="delete", rows=0), ref(2),
                                          p.snapshot(3, 2, operation="overwrite"), ref(3)], [assert_ref(1)])
    append(p, 4, 3)
    p.commit("branch b at S1", [ref(1, "b")])
    p.commit("remove S2 (not in the snapshot log)", [{"action": "remove-snapshots", "snapshot-ids": [2]}])
    p.commit("remove S3 (named by the snapshot log)", [{"action": "remove-snapshots", "snapshot-ids": [3]}])
    p.commit("remove an unknown snapshot", [{"action": "remove-snapshots", "snapshot-ids": [99]}])
    p.commit("remove S1 (branch b's)", [{"action": "remove-snapshots", "snapshot-ids": [1]}])
    p.commit("remove S4 (main's)", [{"action": "remove-snapshots", "snapshot-ids": [4]}])
    append(p, 5, None)


def seq_statistics(p: Plan):
    p.create_table()
    append(p, 1, None)
    append(p, 2, 1)
    p.commit("set statistics of S1", [{"action": "set-statistics", "snapshot-id": 1,
                                       "statistics": statistics_file(1, "s1-a")}])
    p.commit("replace statistics of S1", [{"action": "set-statistics", "statistics": statistics_file(1, "s1-b")}])
    p.commit("set statistics of S2", [{"action": "set-statistics", "statistics": statistics_file(2, "s2")}])
    p.commit("set statistics of an unknown snapshot",
             [{"action": "set-statistics", "statistics": statistics_file(77, "s77")}])
    p.commit("remove statistics of S2", [{"action": "remove-statistics", "snapshot-id": 2}])
    p.commit("remove statistics of S2 again", [{"action": "remove-statistics", "snapshot-id": 2}])
    p.commit("set partition statistics of S1",
             [{"action": "set-partition-statistics", "partition-statistics": partition_statistics_file(1, "p1-a")}])
    p.commit("replace partition statistics of S1",
             [{"action": "set-partition-statistics", "partition-statistics": partition_statistics_file(1, "p1-b")}])
    p.commit("set partition statistics of S2",
             [{"action": "set-partition-statistics", "partition-statistics": partition_statistics_file(2, "p2")}])
    p.commit("remove partition statistics of S2", [{"action": "remove-partition-statistics", "snapshot-id": 2}])
    p.commit("remove partition statistics of S2 again", [{"action": "remove-partition-statistics", "snapshot-id": 2}])
    p.commit("remove S1 and with it its statistics", [{"action": "remove-snapshots", "snapshot-ids": [1]}])


def seq_schema_evolution(p: Plan):
    p.create_table()
    p.commit("add schema with x, make it current",
             [{"action": "add-schema", "schema": SCHEMA_PLUS_X, "last-column-id": 3},
              {"action": "set-current-schema", "schema-id": -1}],
             [{"type": "assert-current-schema-id", "current-schema-id": 0},
              {"type": "assert-last-assigned-field-id", "last-assigned-field-id": 2}])
    p.commit("re-add the identical schema",
             [{"action": "add-schema", "schema": dict(SCHEMA_PLUS_X, **{"schema-id": 5})}])
    p.commit("re-add the identical schema, set-current-schema -1",
             [{"action": "add-schema", "schema": dict(SCHEMA_PLUS_X, **{"schema-id": 5})},
              {"action": "set-current-schema", "schema-id": -1}])
    p.commit("add schema with y, stale last-column-id 2",
             [{"action": "add-schema", "schema": SCHEMA_PLUS_XY, "last-column-id": 2},
              {"action": "set-current-schema", "schema-id": -1}])
    p.commit("stale assert-last-assigned-field-id", [{"action": "set-current-schema", "schema-id": 0}],
             [{"type": "assert-last-assigned-field-id", "last-assigned-field-id": 3}])
    p.commit("set the first schema current again", [{"action": "set-current-schema", "schema-id": 0}])
    p.commit("set an unknown schema current", [{"action": "set-current-schema", "schema-id": 9}])
    append(p, 1, None, schema_id=0)


def seq_spec_and_sort_order_evolution(p: Plan):
    p.create_table()
    p.commit("add spec bucket(id), make it default",
             [{"action": "add-spec", "spec": {"spec-id": 1, "fields": [
                 {"name": "id_bucket", "transform": "bucket[8]", "source-id": 1, "field-id": 1000}]}},
              {"action": "set-default-spec", "spec-id": -1}],
             [{"type": "assert-default-spec-id", "default-spec-id": 0},
              {"type": "assert-last-assigned-partition-id", "last-assigned-partition-id": 999}])
    p.commit("re-add the identical spec", [{"action": "add-spec", "spec": {"spec-id": 4, "fields": [
        {"name": "id_bucket", "transform": "bucket[8]", "source-id": 1, "field-id": 1000}]}}])
    p.commit("add spec on a column that does not exist", [{"action": "add-spec", "spec": {"spec-id": 2, "fields": [
        {"name": "ghost", "transform": "identity", "source-id": 42, "field-id": 1001}]}}])
    p.commit("add spec identity(data) without field-id", [{"action": "add-spec", "spec": {"spec-id": 2, "fields": [
        {"name": "data", "transform": "identity", "source-id": 2}]}}, {"action": "set-default-spec", "spec-id": -1}])
    p.commit("stale assert-default-spec-id", [{"action": "set-default-spec", "spec-id": 0}],
             [{"type": "assert-default-spec-id", "default-spec-id": 1}])
    p.commit("set spec 0 default again", [{"action": "set-default-spec", "spec-id": 0}])
    p.commit("add sort order, make it default",
             [{"action": "add-sort-order", "sort-order": {"order-id": 1, "fields": [
                 {"transform": "identity", "source-id": 1, "direction": "desc", "null-order": "nulls-last"}]}},
              {"action": "set-default-sort-order", "sort-order-id": -1}],
             [{"type": "assert-default-sort-order-id", "default-sort-order-id": 0}])
    p.commit("re-add the identical sort order", [{"action": "add-sort-order", "sort-order": {"order-id": 7, "fields": [
        {"transform": "identity", "source-id": 1, "direction": "desc", "null-order": "nulls-last"}]}}])
    p.commit("add sort order on a column that does not exist",
             [{"action": "add-sort-order", "sort-order": {"order-id": 2, "fields": [
                 {"transform": "identity", "source-id": 42, "direction": "asc", "null-order": "nulls-first"}]}}])
    p.commit("add the unsorted order, make it default",
             [{"action": "add-sort-order", "sort-order": {"order-id": 0, "fields": []}},
              {"action": "set-default-sort-order", "sort-order-id": -1}])


def spec_update(*fields):
    return {"action": "add-spec", "spec": {"spec-id": 1, "fields": [
        {"name": name, "transform": transform, "source-id": source, "field-id": 1000 + index}
        for index, (name, transform, source) in enumerate(fields)]}}


def sort_order_update(transform, source, direction="asc"):
    return {"action": "add-sort-order", "sort-order": {"order-id": 1, "fields": [
        {"transform": transform, "source-id": source, "direction": direction, "null-order": "nulls-first"}]}}


# How each catalog binds a new spec or sort order to the schema (id long, data string): each update
# alone in a commit on a fresh table.
BINDING_UPDATES = {
    "spec_day_of_a_string": spec_update(("d", "day", 2)),
    "spec_bucket_named_like_another_column": spec_update(("data", "bucket[4]", 1)),
    "spec_identity_named_like_another_column": spec_update(("id", "identity", 2)),
    "spec_partition_name_twice": spec_update(("a", "identity", 1), ("a", "bucket[2]", 2)),
    "spec_unknown_transform": spec_update(("a", "frobnicate", 1)),
    "sort_year_of_a_long": sort_order_update("year", 1),
    "sort_direction_sideways": sort_order_update("identity", 1, "sideways"),
    "sort_unknown_transform": sort_order_update("frobnicate", 1),
}


def binding_sequence(name):
    def build(p: Plan):
        p.create_table()
        p.commit(f"bind: {name}", [copy.deepcopy(BINDING_UPDATES[name])])
    build.__name__ = f"seq_binding_{name}"
    return build


def seq_staged_snapshot_published_later(p: Plan):
    # Write-audit-publish: a snapshot added without a ref (or on a branch) becomes main in a later
    # commit; the snapshot log then records the time of that commit, not the snapshot's.
    p.create_table()
    append(p, 1, None)
    p.commit("stage S2 (no ref)", [p.snapshot(2, 1)])
    p.commit("publish S2 to main", [ref(2)], [assert_ref(1)])
    p.commit("S3 on branch b", [p.snapshot(3, 2), ref(3, "b")], [assert_ref(None, "b")])
    p.commit("fast-forward main to S3", [ref(3)], [assert_ref(2)])
    p.commit("S4 on main, S5 staged, one commit", [p.snapshot(4, 3), ref(4), p.snapshot(5, 4)], [assert_ref(3)])


def seq_remove_schemas_and_specs(p: Plan):
    p.create_table()
    p.commit("add schema 1, current", [{"action": "add-schema", "schema": SCHEMA_PLUS_X},
                                       {"action": "set-current-schema", "schema-id": -1}])
    p.commit("add schema 2", [{"action": "add-schema", "schema": SCHEMA_PLUS_XY}])
    p.commit("remove schema 2", [{"action": "remove-schemas", "schema-ids": [2]}])
    p.commit("remove the current schema", [{"action": "remove-schemas", "schema-ids": [1]}])
    p.commit("remove schema 0", [{"action": "remove-schemas", "schema-ids": [0]}])
    p.commit("remove an unknown schema", [{"action": "remove-schemas", "schema-ids": [42]}])
    p.commit("add spec 1, default", [{"action": "add-spec", "spec": {"spec-id": 1, "fields": [
        {"name": "x", "transform": "identity", "source-id": 3, "field-id": 1000}]}},
                                     {"action": "set-default-spec", "spec-id": -1}])
    p.commit("remove the default spec", [{"action": "remove-partition-specs", "spec-ids": [1]}])
    p.commit("remove spec 0", [{"action": "remove-partition-specs", "spec-ids": [0]}])
    p.commit("remove an unknown spec", [{"action": "remove-partition-specs", "spec-ids": [42]}])


def seq_properties(p: Plan):
    p.create_table()
    p.commit("set a and b", [{"action": "set-properties", "updates": {"a": "1", "b": "2"}}])
    p.commit("remove a and a missing key", [{"action": "remove-properties", "removals": ["a", "missing"]}])
    p.commit("set then remove c", [{"action": "set-properties", "updates": {"c": "3"}},
                                   {"action": "remove-properties", "removals": ["c"]}])
    p.commit("set nothing, remove nothing", [{"action": "set-properties", "updates": {}},
                                             {"action": "remove-properties", "removals": []}])
    other = "2" if p.format_version == 3 else "3"
    p.commit(f"set-properties format-version={other}",
             [{"action": "set-properties", "updates": {"format-version": other, "d": "4"}}])
    p.commit("remove-properties format-version", [{"action": "remove-properties", "removals": ["format-version"]}])


def seq_upgrade_format_version(p: Plan):
    p.create_table(format_version=2)
    append(p, 1, None)
    p.commit("upgrade to v3", [{"action": "upgrade-format-version", "format-version": 3}])
    p.table_versions["t"] = 3
    append(p, 2, 1, rows=5)
    append(p, 3, 2, rows=3)
    p.commit("v3 snapshot with first-row-id behind next-row-id",
             [p.snapshot(4, 3, row_lineage=False, **{"first-row-id": 2, "added-rows": 1}), ref(4)])
    p.commit("v3 snapshot without first-row-id", [p.snapshot(4, 3, row_lineage=False), ref(4)])
    p.commit("upgrade to v3 again", [{"action": "upgrade-format-version", "format-version": 3}])
    p.commit("downgrade to v2", [{"action": "upgrade-format-version", "format-version": 2}])


def seq_assign_uuid_at_create(p: Plan):
    # A Java create transaction: stage-create, then one commit that creates the table.
    p.create_table(stage=True, label="stage-create t")
    p.commit("create t by commit with assign-uuid", [
        {"action": "assign-uuid", "uuid": new_uuid(p)},
        {"action": "upgrade-format-version", "format-version": p.format_version},
        {"action": "add-schema", "schema": SCHEMA},
        {"action": "set-current-schema", "schema-id": -1},
        {"action": "add-spec", "spec": {"spec-id": 0, "fields": []}},
        {"action": "set-default-spec", "spec-id": -1},
        {"action": "add-sort-order", "sort-order": {"order-id": 0, "fields": []}},
        {"action": "set-default-sort-order", "sort-order-id": -1},
        {"action": "set-location", "location": "@location(t)@"},
        {"action": "set-properties", "updates": dict(CODEC)}],
        [{"type": "assert-create"}])
    p.commit("assert-table-uuid with the assigned uuid", [{"action": "set-properties", "updates": {"k": "v"}}],
             [{"type": "assert-table-uuid", "uuid": new_uuid(p)}])
    p.commit("assign the same uuid again", [{"action": "assign-uuid", "uuid": new_uuid(p)}])


def seq_assign_uuid_existing(p: Plan):
    p.create_table()
    p.commit("assert-table-uuid", [{"action": "set-properties", "updates": {"k": "v"}}],
             [{"type": "assert-table-uuid", "uuid": "@uuid(t)@"}])
    p.commit("assign the table's own uuid", [{"action": "assign-uuid", "uuid": "@uuid(t)@"}])
    p.commit("assign a new uuid to an existing table", [{"action": "assign-uuid", "uuid": new_uuid(p, 2)}],
             [{"type": "assert-table-uuid", "uuid": "@uuid(t)@"}])


def seq_set_location(p: Plan):
    p.create_table()
    append(p, 1, None)
    p.commit("set-location to a sibling", [{"action": "set-location", "location": "@location(t)@_moved"}])
    append(p, 2, 1)
    p.commit("set-location to the same location", [{"action": "set-location", "location": "@location(t)@_moved"}])
    p.commit("set-location back", [{"action": "set-location", "location": "@location(t)@"}])


def seq_client_timestamps(p: Plan):
    p.create_table()
    first = p.tick()
    append(p, 1, None, timestamp=first)
    p.commit("S2 ten minutes in the future", [p.snapshot(2, 1, timestamp=p.base_ms + 600_000, advance=False),
                                               ref(2)], [assert_ref(1)])
    p.commit("S2 two minutes behind S1", [p.snapshot(2, 1, timestamp=first - 120_000, advance=False), ref(2)],
             [assert_ref(1)])
    p.commit("S2 on branch b two minutes behind S1",
             [p.snapshot(2, 1, timestamp=first - 120_000), ref(2, "b")])
    append(p, 3, 1, timestamp=first - 20_000)
    append(p, 4, 3, timestamp=p.base_ms + 30_000)


# Updates a catalog's JSON parser must refuse, each in its own commit on a table with one snapshot.
MALFORMED_UPDATES = {
    "sort_field_without_direction": {"action": "add-sort-order", "sort-order": {"order-id": 1, "fields": [
        {"transform": "identity", "source-id": 1, "null-order": "nulls-first"}]}},
    "partition_field_without_source_id": {"action": "add-spec", "spec": {"spec-id": 1, "fields": [
        {"name": "id", "transform": "identity", "field-id": 1000}]}},
    "schema_field_without_required": {"action": "add-schema", "schema": {"type": "struct", "schema-id": 1, "fields": [
        *SCHEMA["fields"], {"id": 3, "name": "x", "type": "int"}]}},
    "statistics_without_blob_metadata": {"action": "set-statistics", "statistics": {
        "snapshot-id": 1, "statistics-path": "@location(t)@/metadata/s.stats", "file-size-in-bytes": 1,
        "file-footer-size-in-bytes": 1}},
    "snapshot_without_manifest_list": {"action": "add-snapshot", "snapshot": {
        "snapshot-id": 2, "parent-snapshot-id": 1, "sequence-number": 2, "timestamp-ms": 0,
        "summary": {"operation": "append"}, "schema-id": 0}},
}


def malformed_sequence(name):
    def build(p: Plan):
        p.create_table()
        append(p, 1, None)
        update = copy.deepcopy(MALFORMED_UPDATES[name])
        if update["action"] == "add-snapshot":
            update["snapshot"]["timestamp-ms"] = p.tick()
        p.commit(f"malformed: {name}", [update, {"action": "set-properties", "updates": {"after": "malformed"}}])
    build.__name__ = f"seq_malformed_{name}"
    return build


def seq_unknown_action_and_requirement(p: Plan):
    p.create_table()
    p.commit("an update action nobody defined", [{"action": "frobnicate-table", "level": 11},
                                                 {"action": "set-properties", "updates": {"after": "unknown"}}])
    p.commit("a requirement type nobody defined", [{"action": "set-properties", "updates": {"after": "unknown"}}],
             [{"type": "assert-moon-phase", "phase": "full"}])
    p.create_view("create view v")
    p.commit_view("a view update action nobody defined", [{"action": "frobnicate-view"}])


def seq_view_create_and_replace(p: Plan):
    p.create_view("create view v")
    p.commit_view("replace v", [{"action": "add-view-version", "view-version": p.view_version(2, "select id from t")},
                                {"action": "set-current-view-version", "view-version-id": -1}],
                  [{"type": "assert-view-uuid", "uuid": "@uuid(v)@"}])
    p.commit_view("set a view property", [{"action": "set-properties", "updates": {"comment": "diff"}}])
    p.commit_view("back to version 1", [{"action": "set-current-view-version", "view-version-id": 1}])


def seq_malformed_view_create_without_dialect(p: Plan):
    p.create_view("create view v without dialect", version=p.view_version(1, dialect=None))


def seq_malformed_view_replace_without_dialect(p: Plan):
    p.create_view("create view v")
    p.commit_view("add view version without dialect",
                  [{"action": "add-view-version", "view-version": p.view_version(2, "select id from t", None)},
                   {"action": "set-current-view-version", "view-version-id": -1}])


TABLE_SEQUENCES = (
    seq_create_defaults, seq_create_partitioned_sorted, seq_appends, seq_delete_then_overwrite,
    seq_two_appends_one_commit, seq_multi_table_transaction, seq_rollback, seq_branches_and_tags,
    seq_remove_snapshots, seq_staged_snapshot_published_later, seq_statistics, seq_schema_evolution,
    seq_spec_and_sort_order_evolution, seq_remove_schemas_and_specs, seq_properties,
    seq_assign_uuid_at_create, seq_assign_uuid_existing, seq_set_location, seq_client_timestamps)
# (sequence, format version); views are format version 1.
CASES = [
    *[(builder, version) for builder in TABLE_SEQUENCES for version in (2, 3)],
    (seq_upgrade_format_version, 2),
    *[(binding_sequence(name), 2) for name in BINDING_UPDATES],
    *[(malformed_sequence(name), 2) for name in MALFORMED_UPDATES],
    (seq_unknown_action_and_requirement, 2),
    (seq_view_create_and_replace, 1),
    (seq_malformed_view_create_without_dialect, 1),
    (seq_malformed_view_replace_without_dialect, 1),
]

# What serac does differently from the reference, and per case the differences each finding
# causes, as "step N: <where>" ("answer" for the status/error type, else the path in the loaded
# state). A case with recorded differences is xfail(strict=True, raises=KnownDifferences):
# it counts as an expected failure only while its differences are exactly the recorded ones, so a
# new difference fails it, and so does a fix, until this table is brought up to date.
# SERAC_REFERENCE_DIFF_DUMP=<file> appends every case's differences to <file> as JSON lines.
FINDINGS = {
    "spec-field-id": "add-spec, field without field-id: the reference numbers it 1000 (its parser counts from 1000 "
                     "within the spec, though spec 1 has 1000 already) and last-partition-id stays 1000, serac "
                     "numbers it 1001 and moves last-partition-id to 1001 (kept: the spec wants partition field "
                     "ids unique across a v2 table's specs, which the reference's 1000 breaks)",
    "format-version-property": "set-properties format-version=N: the reference stores it as a plain property and "
                               "keeps the format version (for a lower N too), serac upgrades the table (v2 to v3, "
                               "next-row-id 0) or refuses a lower N with 400, and stores no property",
    "assign-uuid-existing": "assign-uuid of a new uuid on an existing table: the reference answers 500 "
                            "IllegalStateException (its JdbcCatalog's refresh check, after storing the new "
                            "metadata: the new uuid stays), serac 200 with the same outcome (kept: the reference's 500 is its catalog's check after the fact)",
    "unknown-action": "an update action or requirement type nobody defined (a view's too): the reference answers "
                      "500 with its servlet container's HTML page (the UnsupportedOperationException of its "
                      "parser escapes before its error mapping), serac 406 UnsupportedOperationException, what "
                      "the reference maps that exception to (kept: a 500 would say the server broke)",
    "files-outside-location": "a snapshot whose manifest list lies outside the table's location (here: the "
                              "location the table had before set-location moved it): the reference stores it, "
                              "serac answers 400 (kept: a table owns its location alone and names no file of "
                              "serac's storage outside it, so no read or delete made for it reaches another's)",
    "view-create": "createView: the reference makes the first version itself (timestamp-ms and its version-log "
                   'entry from its clock, summary replaced by {"iceberg-version": ...}, the client\'s engine-name '
                   'dropped) and leaves empty properties out; serac keeps the client\'s version and "properties": {}',
}
KNOWN_DIFFERENCES: dict[str, dict[str, list[str]]] = {
    "set_location-v2": {
        "files-outside-location": ["step 3: answer", "step 3: table t.metadata-location",
            "step 3: table t.metadata.current-snapshot-id", "step 3: table t.metadata.last-sequence-number",
            "step 3: table t.metadata.last-updated-ms", "step 3: table t.metadata.metadata-log[2]",
            "step 3: table t.metadata.refs.main.snapshot-id", "step 3: table t.metadata.snapshot-log[1]",
            "step 3: table t.metadata.snapshots[1]", "step 5: table t.metadata-location",
            "step 5: table t.metadata.metadata-log[3]"],
    },
    "set_location-v3": {
        "files-outside-location": ["step 3: answer", "step 3: table t.metadata-location",
            "step 3: table t.metadata.current-snapshot-id", "step 3: table t.metadata.last-sequence-number",
            "step 3: table t.metadata.last-updated-ms", "step 3: table t.metadata.metadata-log[2]",
            "step 3: table t.metadata.next-row-id", "step 3: table t.metadata.refs.main.snapshot-id",
            "step 3: table t.metadata.snapshot-log[1]", "step 3: table t.metadata.snapshots[1]",
            "step 5: table t.metadata-location", "step 5: table t.metadata.metadata-log[3]"],
    },
    "spec_and_sort_order_evolution-v2": {
        "spec-field-id": ["step 4: table t.metadata.last-partition-id",
            "step 4: table t.metadata.partition-specs[2].fields[0].field-id"],
    },
    "spec_and_sort_order_evolution-v3": {
        "spec-field-id": ["step 4: table t.metadata.last-partition-id",
            "step 4: table t.metadata.partition-specs[2].fields[0].field-id"],
    },
    "properties-v2": {
        "format-version-property": ["step 5: table t.metadata.current-snapshot-id",
            "step 5: table t.metadata.format-version", "step 5: table t.metadata.next-row-id",
            "step 5: table t.metadata.properties.format-version", "step 6: table t.metadata-location",
            "step 6: table t.metadata.last-updated-ms", "step 6: table t.metadata.metadata-log[4]"],
    },
    "properties-v3": {
        "format-version-property": ["step 5: answer", "step 5: table t.metadata-location",
            "step 5: table t.metadata.last-updated-ms", "step 5: table t.metadata.metadata-log[3]",
            "step 5: table t.metadata.properties.d", "step 5: table t.metadata.properties.format-version",
            "step 6: table t.metadata-location", "step 6: table t.metadata.last-updated-ms",
            "step 6: table t.metadata.metadata-log[4]"],
    },
    "assign_uuid_existing-v2": {
        "assign-uuid-existing": ["step 3: answer"],
    },
    "assign_uuid_existing-v3": {
        "assign-uuid-existing": ["step 3: answer"],
    },
    "view_create_and_replace-v1": {
        "view-create": ["step 0: view v.metadata.properties", "step 0: view v.metadata.version-log[0].timestamp-ms",
            "step 0: view v.metadata.versions[0].summary.engine-name",
            "step 0: view v.metadata.versions[0].summary.iceberg-version",
            "step 0: view v.metadata.versions[0].timestamp-ms"],
    },
    "malformed_view_replace_without_dialect-v1": {
        "view-create": ["step 0: view v.metadata.properties", "step 0: view v.metadata.version-log[0].timestamp-ms",
            "step 0: view v.metadata.versions[0].summary.engine-name",
            "step 0: view v.metadata.versions[0].summary.iceberg-version",
            "step 0: view v.metadata.versions[0].timestamp-ms"],
    },
    "unknown_action_and_requirement-v2": {
        "unknown-action": ["step 1: answer", "step 2: answer", "step 4: answer"],
        "view-create": ["step 3: view v.metadata.properties", "step 3: view v.metadata.version-log[0].timestamp-ms",
            "step 3: view v.metadata.versions[0].summary.engine-name",
            "step 3: view v.metadata.versions[0].summary.iceberg-version",
            "step 3: view v.metadata.versions[0].timestamp-ms"],
    },
}


class KnownDifferences(AssertionError):
    """The case differs from the reference in exactly the ways KNOWN_DIFFERENCES records."""


def known_signatures(name: str) -> list[str]:
    return sorted({signature for signatures in KNOWN_DIFFERENCES.get(name, {}).values()
                   for signature in signatures})


def case_id(builder, version) -> str:
    return f"{builder.__name__.removeprefix('seq_')}-v{version}"


def case_params():
    params = []
    for builder, version in CASES:
        name = case_id(builder, version)
        marks = ()
        if name in KNOWN_DIFFERENCES:
            reason = "serac differs: " + "; ".join(FINDINGS[finding] for finding in KNOWN_DIFFERENCES[name])
            marks = pytest.mark.xfail(strict=True, raises=KnownDifferences, reason=reason)
        params.append(pytest.param(builder, version, id=name, marks=marks))
    return params


# --- Running a plan on one catalog -------------------------------------------------------------------


@dataclass
class Entity:
    kind: str                  # "table" or "view"
    name: str
    uuid: str | None = None    # as the create answered
    location: str | None = None


@dataclass
class Run:
    """One catalog's side of a sequence: what it answered and the time window of every request."""
    catalog: Catalog
    namespace: str
    windows: list[tuple[int, int]] = field(default_factory=list)
    entities: dict[tuple[str, str], Entity] = field(default_factory=dict)
    transcript: list[dict] = field(default_factory=list)

    def materialise(self, value):
        if isinstance(value, dict):
            return {self.materialise(k): self.materialise(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.materialise(v) for v in value]
        if isinstance(value, str):
            value = value.replace("@ns@", self.namespace)
            for entity in self.entities.values():
                if entity.location is not None:
                    value = value.replace(f"@location({entity.name})@", entity.location)
                if entity.uuid is not None:
                    value = value.replace(f"@uuid({entity.name})@", entity.uuid)
        return value

    def load(self, entity: Entity) -> dict:
        answer = self.catalog.answer("GET", f"namespaces/{self.namespace}/{entity.kind}s/{entity.name}")
        if answer.status != 200:
            return {"status": answer.status, "error-type": answer.error_type}
        return {"status": 200, **Normaliser(self, entity).normalise(answer.body)}

    def step(self, step: Step) -> None:
        if step.creates and step.creates not in self.entities:
            self.entities[step.creates] = Entity(*step.creates)
        before = now_ms()
        answer = self.catalog.answer(step.method, self.materialise(step.path), self.materialise(step.body))
        self.windows.append((before, now_ms()))
        entity = self.entities.get(step.creates) if step.creates else None
        if entity is not None and answer.status == 200 and entity.uuid is None:
            metadata = answer.body["metadata"]
            entity.uuid = metadata.get("table-uuid" if entity.kind == "table" else "view-uuid")
            entity.location = metadata.get("location")
        self.transcript.append({
            "step": step.label, "status": answer.status, "error-type": answer.error_type,
            "state": {f"{e.kind} {e.name}": self.load(e) for e in self.entities.values()}})


METADATA_FILE_RE = re.compile(r"^(?P<dir>.*/)?(?P<seq>\d{5})-[0-9a-fA-F-]{36}(?P<suffix>(\.gz)?\.metadata\.json)$")


class Normaliser:
    """Replaces in one loadTable/loadView answer what is bound to differ between two catalogs:

    - table-uuid / view-uuid: each catalog makes its own at create; the one the create answered
      becomes "<uuid at create>" (a uuid a client assigned stays as it is);
    - locations: each catalog chooses its own (an s3:// key in serac's warehouse bucket, a local
      directory in the reference's), so the location the create answered, wherever it begins a
      string, becomes "<location of t>";
    - metadata file names: "NNNNN-<random uuid>[.gz].metadata.json"; only the sequence number
      NNNNN is compared (with the directory, after the location replacement): the uuid is random,
      and whether the file is compressed (the reference gzips view metadata) is the catalog's
      storage choice, invisible to a client that reads the metadata through the catalog;
    - the value (not the presence) of "iceberg-version" in a view version's summary, which the
      reference sets to its own build ("Apache Iceberg 1.x.y (commit ...)");
    - server clock readings: a timestamp (last-updated-ms, metadata-log, snapshot-log, snapshot and
      view version timestamps) inside the time window of one of the sequence's requests on that
      catalog becomes "<clock during step N>"; timestamps a client sent are compared as they are
      (the plan's client clock runs behind every window, so the two never mix);
    - the load answer's config and storage credentials, which carry each catalog's own endpoints.

    No table or view property is normalised away: every one either catalog adds on its own is
    reported (the reference's write.parquet.compression-codec=zstd at create is one)."""

    TIMESTAMP_LISTS = ("snapshots", "snapshot-log", "metadata-log", "versions", "version-log")

    def __init__(self, run: Run, entity: Entity):
        self.run = run
        self.entity = entity
        self.locations = sorted(((e.location, f"<location of {e.name}>") for e in run.entities.values()
                                 if e.location), key=lambda pair: -len(pair[0]))

    def text(self, value: str) -> str:
        for location, token in self.locations:
            if value.startswith(location):
                value = token + value[len(location):]
                break
        match = METADATA_FILE_RE.match(value)
        if match:
            value = f"{match['dir'] or ''}{match['seq']}-<uuid>.metadata.json"
        return value

    def strings(self, value):
        if isinstance(value, dict):
            return {k: self.strings(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.strings(v) for v in value]
        return self.text(value) if isinstance(value, str) else value

    def clock(self, value):
        if not isinstance(value, int):
            return value
        for index, (start, end) in enumerate(self.run.windows):
            if start <= value <= end:
                return f"<clock during step {index}>"
        return value

    def normalise(self, answer: dict) -> dict:
        answer = {k: v for k, v in answer.items() if k not in ("config", "storage-credentials")}
        metadata = answer.get("metadata") or {}
        uuid_key = "table-uuid" if self.entity.kind == "table" else "view-uuid"
        if metadata.get(uuid_key) is not None and metadata.get(uuid_key) == self.entity.uuid:
            metadata[uuid_key] = "<uuid at create>"
        if "last-updated-ms" in metadata:
            metadata["last-updated-ms"] = self.clock(metadata["last-updated-ms"])
        for key in self.TIMESTAMP_LISTS:
            for item in metadata.get(key) or []:
                if isinstance(item, dict) and "timestamp-ms" in item:
                    item["timestamp-ms"] = self.clock(item["timestamp-ms"])
        for version in metadata.get("versions") or []:
            summary = version.get("summary") if isinstance(version, dict) else None
            if isinstance(summary, dict) and "iceberg-version" in summary:
                summary["iceberg-version"] = "<server build>"
        return self.strings(answer)


def run_plan(catalogs: list[Catalog], plan: Plan, namespaces: list[str]) -> list[Run]:
    runs = [Run(catalog, namespace) for catalog, namespace in zip(catalogs, namespaces)]
    for run in runs:
        answer = run.catalog.answer("POST", "namespaces", {"namespace": [run.namespace]})
        assert answer.status == 200, f"{run.catalog.name}: create namespace {run.namespace}: {answer}"
    for step in plan.steps:
        for run in runs:
            run.step(step)
    return runs


# --- Comparing ---------------------------------------------------------------------------------------


def json_differences(left, right, path="") -> list[tuple[str, Any, Any]]:
    if isinstance(left, dict) and isinstance(right, dict):
        found = []
        for key in list(left) + [k for k in right if k not in left]:
            found += json_differences(left.get(key, "<absent>"), right.get(key, "<absent>"), f"{path}.{key}")
        return found
    if isinstance(left, list) and isinstance(right, list):
        found = []
        for index in range(max(len(left), len(right))):
            found += json_differences(left[index] if index < len(left) else "<absent>",
                                      right[index] if index < len(right) else "<absent>", f"{path}[{index}]")
        return found
    return [] if left == right else [(path, left, right)]


@dataclass(frozen=True)
class Difference:
    step: int
    where: str    # "answer", or the JSON path in the loaded state that differs
    text: str

    @property
    def signature(self) -> str:
        return f"step {self.step}: {self.where}"


def compare(serac_run: Run, reference_run: Run) -> list[Difference]:
    """Every difference, each reported at the step where it appears (not again while it lasts)."""
    found = []
    previous: set[str] = set()
    for index, (ours, theirs) in enumerate(zip(serac_run.transcript, reference_run.transcript)):
        label = f"step {index} ({ours['step']})"
        if (ours["status"], ours["error-type"]) != (theirs["status"], theirs["error-type"]):
            found.append(Difference(index, "answer", f"{label}: serac answered {ours['status']} "
                                    f"{ours['error-type']}, the reference {theirs['status']} {theirs['error-type']}"))
        current = set()
        for where, a, b in json_differences(ours["state"], theirs["state"]):
            where = where.lstrip(".")
            line = f"{where}: serac {json.dumps(a)[:400]} vs reference {json.dumps(b)[:400]}"
            current.add(line)
            if line not in previous:
                found.append(Difference(index, where, f"{label}: after it, {line}"))
        previous = current
    return found


def compact_transcript(run: Run) -> str:
    lines = []
    for index, entry in enumerate(run.transcript):
        lines.append(f"  {index} {entry['step']}: {entry['status']} {entry['error-type'] or ''}")
    return "\n".join(lines)


@pytest.mark.parametrize("builder, format_version", case_params())
def test_same_answers_as_reference(serac, reference, builder, format_version, request):
    name = request.node.callspec.id
    plan = Plan(format_version, now_ms())
    builder(plan)
    namespace = re.sub(r"[^a-z0-9]+", "_", name.lower())
    serac_run, reference_run = run_plan([serac, reference], plan, [namespace, namespace])
    differences = compare(serac_run, reference_run)
    signatures = sorted({difference.signature for difference in differences})
    if os.environ.get("SERAC_REFERENCE_DIFF_DUMP"):
        with open(os.environ["SERAC_REFERENCE_DIFF_DUMP"], "a") as dump:
            dump.write(json.dumps({"case": name, "signatures": signatures,
                                   "differences": [d.text for d in differences]}) + "\n")
    message = (f"{len(differences)} differences from the reference:\n"
               + "\n".join(difference.text for difference in differences)
               + f"\nserac:\n{compact_transcript(serac_run)}\nreference:\n{compact_transcript(reference_run)}")
    recorded = known_signatures(name)
    if recorded and signatures == recorded:
        raise KnownDifferences(message)
    if recorded:
        message += "\nrecorded for this case (KNOWN_DIFFERENCES):\n" + "\n".join(recorded)
    assert not differences, message


@pytest.mark.parametrize("builder, format_version", [(seq_rollback, 2), (seq_remove_snapshots, 3),
                                                      (seq_staged_snapshot_published_later, 2),
                                                      (seq_set_location, 3), (seq_statistics, 2)],
                         ids=lambda value: getattr(value, "__name__", str(value)))
def test_reference_agrees_with_itself(reference, builder, format_version, request):
    """The normalisation is sufficient: the same plan run twice on the reference (in two
    namespaces) compares equal."""
    plan = Plan(format_version, now_ms())
    builder(plan)
    namespace = re.sub(r"[^a-z0-9]+", "_", request.node.callspec.id.lower())
    first, second = run_plan([reference, reference], plan, [f"{namespace}_a", f"{namespace}_b"])
    differences = compare(first, second)
    assert not differences, "\n".join(difference.text for difference in differences)
