"""Server-side scan planning through the REST spec's plan endpoints (POST .../plan, GET and DELETE
.../plan/{id}, POST .../tasks): the files serac plans for a filter equal, file for file and delete
file for delete file, those PyIceberg plans client-side for the same table and filter (v2 position
deletes, v3 deletion vectors); residuals as Java's ResidualEvaluator leaves them; large plans paged by
plan tasks; incremental append scans; errors in the spec's own types; and the planning mode a
table or warehouse chooses, told to clients in /v1/config and in the table's load config."""
from __future__ import annotations

import base64

import pyarrow as pa
import pytest
from pyiceberg.expressions import And, EqualTo, GreaterThanOrEqual, In, LessThan
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.transforms import IdentityTransform
from pyiceberg.types import IntegerType, LongType, NestedField

from catalog_util import CatalogApi, assert_iceberg_error, catalog, catalog_api, warehouse  # noqa: F401
from s3util import SeracServer
from test_table_writes import delete_rows, fill, load_rows, make_table, serac

pytestmark = pytest.mark.timeout(300)


def table_path(warehouse: str, name: str, suffix: str) -> str:
    ns, table = name.split(".")
    return f"/v1/{warehouse}/namespaces/{ns}/tables/{table}/{suffix}"


def file_key(content_file: dict) -> str:
    """A delete file as PyIceberg's plan names it: by its path (a task has at most one DV)."""
    return content_file["file-path"]


def server_plan(api, warehouse: str, name: str, body: dict) -> dict:
    """Every task of a plan, fetching plan tasks as Java's client does: {data path: (delete keys,
    residual, data file JSON)}, plus how many plan tasks it took."""
    reply = api.ok("POST", table_path(warehouse, name, "plan"), body).json()
    assert reply["status"] == "completed" and reply["plan-id"], reply
    tasks, pending, fetched = {}, list(reply.get("plan-tasks", [])), 0

    def collect(response: dict):
        deletes = response.get("delete-files", [])
        for task in response["file-scan-tasks"]:
            data = task["data-file"]
            refs = [file_key(deletes[i]) for i in task.get("delete-file-references", [])]
            assert data["file-path"] not in tasks, "a data file planned twice"
            tasks[data["file-path"]] = (sorted(refs, key=str), task.get("residual-filter", True), data)

    if "file-scan-tasks" in reply:
        collect(reply)
    while pending:
        page = api.ok("POST", table_path(warehouse, name, "tasks"), {"plan-task": pending.pop(0)}).json()
        fetched += 1
        collect(page)
        pending.extend(page.get("plan-tasks", []))
    return {"tasks": tasks, "plan_tasks": fetched, "plan_id": reply["plan-id"]}


def client_plan(catalog, name: str, row_filter=None) -> dict:  # noqa: F811
    scan = catalog.load_table(name).scan(row_filter=row_filter) if row_filter is not None else \
        catalog.load_table(name).scan()
    planned = {}
    for task in scan.plan_files():
        planned[task.file.file_path] = sorted(d.file_path for d in task.delete_files)
    return planned


def deletes_only(plan: dict) -> dict:
    return {path: refs for path, (refs, _, _) in plan["tasks"].items()}


@pytest.mark.parametrize("format_version,kind", [(2, "position"), (3, "dv")])
def test_plans_equal_pyiceberg_file_for_file(server, catalog, catalog_api, warehouse, tmp_path,  # noqa: F811
                                             format_version, kind):
    name = f"plan.v{format_version}"
    make_table(catalog, name, format_version)
    fill(server, warehouse, name, tmp_path)
    delete_rows(server, warehouse, name, tmp_path, [0, 3, 4, 500], kind)

    for body, row_filter in [
            ({}, None),
            ({"filter": {"type": "eq", "term": "category", "value": "a"}}, EqualTo("category", "a")),
            ({"filter": {"type": "lt", "term": "id", "value": 300}}, LessThan("id", 300)),
            ({"filter": {"type": "and", "left": {"type": "in", "term": "category", "values": ["b", "c"]},
                         "right": {"type": "gt-eq", "term": "id", "value": 300}}},
             And(In("category", ["b", "c"]), GreaterThanOrEqual("id", 300))),
            ({"filter": {"type": "eq", "term": "category", "value": "zzz"}}, EqualTo("category", "zzz"))]:
        planned = server_plan(catalog_api, warehouse, name, body)
        expected = client_plan(catalog, name, row_filter)
        assert set(planned["tasks"]) == set(expected), body
        if kind == "position":
            assert deletes_only(planned) == expected, body
        else:
            # PyIceberg 0.12 does not read a DV's referenced data file and lists it for every data
            # file of the partition; Java attaches each DV to its own data file only.
            for path, (refs, _, _) in planned["tasks"].items():
                assert set(refs) <= set(expected[path]) and len(refs) <= 1, (path, refs)

    # The deletes planned are the table's: every delete file some task names is live.
    everything = server_plan(catalog_api, warehouse, name, {})
    named = {key for refs, _, _ in everything["tasks"].values() for key in refs}
    assert named, "the deleted rows' files carry their deletes"
    live = {f.file_path for t in catalog.load_table(name).scan().plan_files() for f in t.delete_files}
    assert named == live
    # Each DV goes with the data file it names, and every deleted row's file has one.
    reply = catalog_api.ok("POST", table_path(warehouse, name, "plan"), {}).json()
    with_deletes = set()
    for task in reply["file-scan-tasks"]:
        for i in task.get("delete-file-references", []):
            deletes = reply["delete-files"][i]
            assert deletes["content"] == "position-deletes"
            if kind == "dv":
                assert deletes["file-format"] == "puffin" and deletes["referenced-data-file"] == \
                    task["data-file"]["file-path"], deletes
                assert deletes["content-offset"] >= 4 and deletes["content-size-in-bytes"] > 0
            with_deletes.add(task["data-file"]["file-path"])
    assert len(with_deletes) == (3 if kind == "dv" else len(with_deletes)) and with_deletes


def test_content_files_residuals_and_stats(server, catalog, catalog_api, warehouse, tmp_path):  # noqa: F811
    name = "plan.shapes"
    make_table(catalog, name, 2)
    fill(server, warehouse, name, tmp_path)
    table = catalog.load_table(name)
    spec_id = table.spec().spec_id

    # Residuals: the partition decides `category = 'a'` (true on its files), not `id < 100`.
    body = {"filter": {"type": "and", "left": {"type": "eq", "term": "category", "value": "a"},
                       "right": {"type": "lt", "term": "id", "value": 100}}}
    planned = server_plan(catalog_api, warehouse, name, body)["tasks"]
    assert planned
    for refs, residual, data in planned.values():
        assert residual == {"type": "lt", "term": "id", "value": 100}, residual
        assert data["partition"] == ["a"] and data["spec-id"] == spec_id
        assert data["content"] == "data" and data["file-format"] == "parquet"
        assert data["record-count"] > 0 and data["file-size-in-bytes"] > 0
        assert "lower-bounds" not in data and "value-counts" not in data, "no stats-fields: no column stats"
    only_id = {"filter": {"type": "lt", "term": "id", "value": 100}}
    for _, residual, _ in server_plan(catalog_api, warehouse, name, only_id)["tasks"].values():
        assert residual == {"type": "lt", "term": "id", "value": 100}

    # stats-fields: the named column's metrics only, bounds in the single-value form (hex of the
    # little-endian long), counts as keys and values.
    with_stats = server_plan(catalog_api, warehouse, name, {"stats-fields": ["id"]})["tasks"]
    for _, _, data in with_stats.values():
        assert data["lower-bounds"]["keys"] == [1] and data["upper-bounds"]["keys"] == [1], data
        assert data["value-counts"] == {"keys": [1], "values": [data["record-count"]]}
        lower = int.from_bytes(base64.b16decode(data["lower-bounds"]["values"][0]), "little", signed=True)
        upper = int.from_bytes(base64.b16decode(data["upper-bounds"]["values"][0]), "little", signed=True)
        assert 0 <= lower <= upper < 600


def test_plan_ids_tasks_and_errors(server, catalog, catalog_api, warehouse, tmp_path):  # noqa: F811
    name = "plan.errors"
    make_table(catalog, name, 2)
    fill(server, warehouse, name, tmp_path)
    plan = catalog_api.ok("POST", table_path(warehouse, name, "plan"), {}).json()
    plan_id = plan["plan-id"]

    # GET a plan: completed, with plan tasks that fetch the same files.
    fetched = catalog_api.ok("GET", table_path(warehouse, name, f"plan/{plan_id}")).json()
    assert fetched["status"] == "completed" and len(fetched["plan-tasks"]) == 1, fetched
    again = catalog_api.ok("POST", table_path(warehouse, name, "tasks"), {"plan-task": fetched["plan-tasks"][0]}).json()
    assert sorted(t["data-file"]["file-path"] for t in again["file-scan-tasks"]) == \
        sorted(t["data-file"]["file-path"] for t in plan["file-scan-tasks"])

    # DELETE cancels it; a second DELETE and a GET are NoSuchPlanIdException.
    assert catalog_api.call("DELETE", table_path(warehouse, name, f"plan/{plan_id}")).status_code == 204
    assert_iceberg_error(catalog_api.call("DELETE", table_path(warehouse, name, f"plan/{plan_id}")), 404,
                         "NoSuchPlanIdException")
    assert_iceberg_error(catalog_api.call("GET", table_path(warehouse, name, "plan/nope")), 404,
                         "NoSuchPlanIdException")

    # A plan task that is not one, or is another table's.
    assert_iceberg_error(catalog_api.call("POST", table_path(warehouse, name, "tasks"), {"plan-task": "x"}), 404,
                         "NoSuchPlanTaskException")
    other = "plan.other"
    make_table(catalog, other, 2)
    assert_iceberg_error(catalog_api.call("POST", table_path(warehouse, other, "tasks"),
                                          {"plan-task": fetched["plan-tasks"][0]}), 404, "NoSuchPlanTaskException")
    assert_iceberg_error(catalog_api.call("POST", table_path(warehouse, name, "tasks"), {"plan-task": 5}), 400,
                         "BadRequestException")

    # Bad requests name what is wrong.
    for body, words in [
            ({"filter": {"type": "eq", "term": "nope", "value": 1}}, "no column nope"),
            ({"filter": {"type": "lt", "term": "id", "value": "x"}}, "id"),
            ({"filter": {"type": "frobnicate"}}, "frobnicate"),
            ({"select": ["id", "missing"]}, "missing"),
            ({"stats-fields": ["ghost"]}, "ghost"),
            ({"snapshot-id": 12345}, "12345"),
            ({"snapshot-id": "12"}, "snapshot-id"),
            ({"start-snapshot-id": 1}, "end-snapshot-id")]:
        reply = catalog_api.call("POST", table_path(warehouse, name, "plan"), body)
        error = assert_iceberg_error(reply, 400, "BadRequestException")
        assert words in error["message"], (body, error)
    assert_iceberg_error(catalog_api.call("POST", table_path(warehouse, "plan.missing", "plan"), {}), 404,
                         "NoSuchTableException")
    assert_iceberg_error(catalog_api.call("POST", table_path(warehouse, name, "plan"), "not json"), 400,
                         "BadRequestException")

    # Case-insensitive names when asked.
    insensitive = {"filter": {"type": "eq", "term": "CATEGORY", "value": "b"}, "case-sensitive": False}
    assert server_plan(catalog_api, warehouse, name, insensitive)["tasks"]
    assert catalog_api.call("POST", table_path(warehouse, name, "plan"),
                            {"filter": {"type": "eq", "term": "CATEGORY", "value": "b"}}).status_code == 400

    # The endpoints are advertised.
    endpoints = catalog_api.config(warehouse)["endpoints"]
    for route in ["POST /v1/{prefix}/namespaces/{namespace}/tables/{table}/plan",
                  "GET /v1/{prefix}/namespaces/{namespace}/tables/{table}/plan/{plan-id}",
                  "DELETE /v1/{prefix}/namespaces/{namespace}/tables/{table}/plan/{plan-id}",
                  "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}/tasks"]:
        assert route in endpoints


def test_snapshots_and_incremental_appends(server, catalog, catalog_api, warehouse, tmp_path):  # noqa: F811
    name = "plan.history"
    make_table(catalog, name, 2)
    fill(server, warehouse, name, tmp_path)
    table = catalog.load_table(name)
    snapshots = [s.snapshot_id for s in table.snapshots()]
    assert len(snapshots) == 2
    first, second = snapshots
    at_first = server_plan(catalog_api, warehouse, name, {"snapshot-id": first})["tasks"]
    assert set(at_first) == set(client_plan_at(catalog, name, first))
    both = server_plan(catalog_api, warehouse, name, {})["tasks"]
    # Incremental: (first, second] holds exactly the second load's files.
    added = server_plan(catalog_api, warehouse, name, {"start-snapshot-id": first, "end-snapshot-id": second})
    assert set(added["tasks"]) == set(both) - set(at_first) and added["tasks"]
    from_start = server_plan(catalog_api, warehouse, name, {"end-snapshot-id": second})["tasks"]
    assert set(from_start) == set(both)
    reply = catalog_api.call("POST", table_path(warehouse, name, "plan"),
                             {"start-snapshot-id": second, "end-snapshot-id": first})
    assert "not an ancestor" in assert_iceberg_error(reply, 400, "BadRequestException")["message"]


def client_plan_at(catalog, name: str, snapshot_id: int) -> list[str]:  # noqa: F811
    return [t.file.file_path for t in catalog.load_table(name).scan(snapshot_id=snapshot_id).plan_files()]


def test_large_plans_page_by_plan_tasks(server, catalog, catalog_api, warehouse):  # noqa: F811
    """Two appends of 1,001 single-row partitions: more live files than one answer carries
    (limits::kScanPlanFilesPerTask, 2,000), so the plan answers with a plan task per manifest."""
    catalog.create_namespace("big")
    schema = Schema(NestedField(1, "id", LongType(), required=False), NestedField(2, "part", IntegerType(),
                                                                                 required=False))
    spec = PartitionSpec(PartitionField(source_id=2, field_id=1000, transform=IdentityTransform(), name="part"))
    table = catalog.create_table("big.many", schema, partition_spec=spec)
    arrow_schema = pa.schema([pa.field("id", pa.int64()), pa.field("part", pa.int32())])
    for start in (0, 1001):
        table.append(pa.Table.from_pylist([{"id": i, "part": i} for i in range(start, start + 1001)],
                                          schema=arrow_schema))
    planned = server_plan(catalog_api, warehouse, "big.many", {})
    assert planned["plan_tasks"] == 2 and len(planned["tasks"]) == 2002
    assert set(planned["tasks"]) == set(client_plan(catalog, "big.many"))
    narrow = server_plan(catalog_api, warehouse, "big.many", {"filter": {"type": "lt", "term": "part", "value": 10}})
    assert len(narrow["tasks"]) == 10 and narrow["plan_tasks"] == 2


def test_planning_mode_from_table_and_warehouse(server, catalog, catalog_api, warehouse, tmp_path):  # noqa: F811
    name = "plan.mode"
    make_table(catalog, name, 2)
    ns, table = name.split(".")

    def table_config() -> dict:
        return catalog_api.load_table(warehouse, ns, table).json()["config"]

    assert "scan-planning-mode" not in table_config()
    assert "scan-planning-mode" not in catalog_api.config(warehouse)["overrides"]
    mode_path = f"/v1/warehouses/{warehouse}/scan-planning"
    assert catalog_api.ok("GET", mode_path).json() == {"warehouse": warehouse, "mode": None}
    assert catalog_api.ok("PUT", mode_path, {"mode": "server"}).json()["mode"] == "server"
    assert catalog_api.config(warehouse)["overrides"]["scan-planning-mode"] == "server"
    assert table_config()["scan-planning-mode"] == "server"
    assert table_config()["s3.endpoint"], "the storage config is still there"
    # The table's property wins over its warehouse.
    catalog.load_table(name).transaction().set_properties({"scan-planning-mode": "client"}).commit_transaction()
    assert table_config()["scan-planning-mode"] == "client"
    assert_iceberg_error(catalog_api.call("PUT", mode_path, {"mode": "sometimes"}), 400, "BadRequestException")
    assert catalog_api.call("DELETE", mode_path).status_code == 204
    assert "scan-planning-mode" not in catalog_api.config(warehouse)["overrides"]
    assert catalog_api.ok("GET", mode_path).json()["mode"] is None


def test_warehouse_mode_survives_a_restart(tmp_path):
    server = SeracServer(tmp_path / "server")
    server.start()
    try:
        api = CatalogApi(server.endpoint)
        api.create_warehouse("modes")
        api.ok("PUT", "/v1/warehouses/modes/scan-planning", {"mode": "server"})
        server.stop()
        server.start()
        api = CatalogApi(server.endpoint)
        assert api.ok("GET", "/v1/warehouses/modes/scan-planning").json()["mode"] == "server"

        assert api.config("modes")["overrides"]["scan-planning-mode"] == "server"
    finally:
        server.stop()


def test_equality_deletes_go_to_older_files_of_their_partition(server, catalog, catalog_api, warehouse,  # noqa: F811
                                                               tmp_path):
    name = "plan.equality"
    make_table(catalog, name, 2)
    fill(server, warehouse, name, tmp_path)
    keys = tmp_path / "equality-keys.csv"
    keys.write_text("id,category\n0,a\n3,a\n")
    serac(server, "table", "delete-rows", warehouse, "plan", "equality", "--keys", keys, "--as", "equality")
    older = set(server_plan(catalog_api, warehouse, name, {})["tasks"])
    load_rows(server, warehouse, name, tmp_path, [{"id": 1000, "category": "a", "value": 1.0}])
    reply = catalog_api.ok("POST", table_path(warehouse, name, "plan"), {}).json()
    equality = [i for i, f in enumerate(reply["delete-files"]) if f["content"] == "equality-deletes"]
    assert len(equality) == 1 and reply["delete-files"][equality[0]]["equality-ids"] == [1, 2]
    # Only an older file of partition a whose id range can hold 0 or 3: the first load's (the
    # second load's ids are 300 and up, the newest file came after the deletes).
    with_it = [t["data-file"] for t in reply["file-scan-tasks"] if equality[0] in t.get("delete-file-references", [])]
    assert len(with_it) == 1, with_it
    assert with_it[0]["file-path"] in older and with_it[0]["partition"] == ["a"]
    ids = server_plan(catalog_api, warehouse, name, {"stats-fields": ["id"]})["tasks"][with_it[0]["file-path"]][2]
    assert int.from_bytes(base64.b16decode(ids["lower-bounds"]["values"][0]), "little") == 0
