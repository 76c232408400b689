"""Table maintenance through the server: AIStor's maintenance API (warehouse defaults, table
overrides, status and job history), the CLI over it, snapshot expiry and compaction run as jobs
inside the server, the tables read back by PyIceberg and DuckDB, counters in /_serac/metrics, and a
server killed during a job."""
from __future__ import annotations

import json
import os
import threading
import time

import boto3
import pytest
import requests
from botocore.config import Config

from catalog_util import CatalogApi, catalog, catalog_api, load_pyiceberg_catalog, warehouse  # noqa: F401
from s3util import ACCESS_KEY, REGION, SECRET_KEY, SeracServer
from test_table_writes import ROWS, delete_rows, fill, ids_by_duckdb, ids_by_pyiceberg, load_rows
from test_table_writes import make_table, serac

SNAPSHOTS = "icebergSnapshotManagement"
COMPACTION = "icebergCompaction"
UNREFERENCED = "icebergUnreferencedFileRemoval"


def table_path(warehouse: str, name: str, suffix: str = "") -> str:
    ns, table = name.split(".")
    return f"/v1/warehouses/{warehouse}/namespaces/{ns}/tables/{table}/maintenance{suffix}"


def object_keys(server, bucket: str, prefix: str) -> set[str]:
    s3 = boto3.client("s3", endpoint_url=server.endpoint, aws_access_key_id=ACCESS_KEY,
                      aws_secret_access_key=SECRET_KEY, region_name=REGION,
                      config=Config(s3={"addressing_style": "path"}))
    keys = set()
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
        keys.update(item["Key"] for item in page.get("Contents", []))
    return keys


def wait_for_job(api: CatalogApi, warehouse: str, name: str, kind: str, job_id: int) -> dict:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        reply = api.ok("GET", table_path(warehouse, name, f"/{kind}/status")).json()
        for job in reply["jobs"]:
            if job["jobId"] == job_id and job["status"] != "running":
                return job
        time.sleep(0.2)
    raise AssertionError(f"job {job_id} did not end")


def test_settings_api_and_cli(server, catalog, catalog_api, warehouse):  # noqa: F811
    make_table(catalog, "m.settings", 2)
    # Warehouse defaults through the CLI, shown as text and as the API's JSON.
    serac(server, "warehouse", "maintenance", "set", warehouse, "--type", SNAPSHOTS, "--min-snapshots", "4",
          "--max-age-hours", "48")
    shown = serac(server, "warehouse", "maintenance", "show", warehouse).stdout
    assert "maxSnapshotAgeHours=48 minSnapshotsToKeep=4" in shown, shown
    value = json.loads(serac(server, "warehouse", "maintenance", "show", warehouse, "--json").stdout)
    assert value["configuration"][SNAPSHOTS] == {
        "settings": {SNAPSHOTS: {"minSnapshotsToKeep": 4, "maxSnapshotAgeHours": 48}}}

    # The table's effective settings: the warehouse's, then its Iceberg property, then its override.
    effective = catalog_api.ok("GET", table_path(warehouse, "m.settings")).json()
    assert effective["configuration"][SNAPSHOTS] == {
        "status": "enabled", "settings": {SNAPSHOTS: {"minSnapshotsToKeep": 4, "maxSnapshotAgeHours": 48}}}
    assert effective["configuration"][COMPACTION]["settings"][COMPACTION]["targetFileSizeMB"] == 512
    assert effective["tableARN"].startswith(f"arn:aws:s3tables:::bucket/{warehouse}/table/")
    with catalog.load_table("m.settings").transaction() as tx:
        tx.set_properties({"history.expire.min-snapshots-to-keep": "6"})
    serac(server, "table", "maintenance", "set", warehouse, "m", "settings", "--type", SNAPSHOTS,
          "--max-age-hours", "2", "--status", "disabled")
    effective = catalog_api.ok("GET", table_path(warehouse, "m.settings", f"/{SNAPSHOTS}")).json()
    assert effective["configuration"] == {SNAPSHOTS: {
        "status": "disabled", "settings": {SNAPSHOTS: {"minSnapshotsToKeep": 6, "maxSnapshotAgeHours": 2}}}}
    assert effective["overrides"] == {SNAPSHOTS: {"status": "disabled", "settings": {SNAPSHOTS: {"maxSnapshotAgeHours": 2}}}}
    shown = serac(server, "table", "maintenance", "show", warehouse, "m", "settings").stdout
    line = next(line for line in shown.splitlines() if line.startswith(SNAPSHOTS))
    assert " disabled " in line and "maxSnapshotAgeHours=2 minSnapshotsToKeep=6" in line and "table override" in line
    status = serac(server, "table", "maintenance", "status", warehouse, "m", "settings", "--type", SNAPSHOTS).stdout
    assert status.strip() == "icebergSnapshotManagement: Disabled", status
    # S3 Tables' wrapped form is taken too; removing the override goes back to the layers below.
    catalog_api.ok("PUT", table_path(warehouse, "m.settings", f"/{COMPACTION}"),
                   body={"value": {"status": "enabled", "settings": {COMPACTION: {"targetFileSizeMB": 64,
                                                                                  "strategy": "binpack"}}}})
    catalog_api.ok("DELETE", table_path(warehouse, "m.settings", f"/{SNAPSHOTS}"))
    effective = catalog_api.ok("GET", table_path(warehouse, "m.settings")).json()
    assert effective["configuration"][SNAPSHOTS]["settings"][SNAPSHOTS]["maxSnapshotAgeHours"] == 48
    assert effective["configuration"][COMPACTION]["settings"][COMPACTION] == {"targetFileSizeMB": 64,
                                                                             "strategy": "binpack"}

    # Bad input: the catalog's error document naming the field; the CLI naming the flag.
    bad = catalog_api.call("PUT", table_path(warehouse, "m.settings", f"/{COMPACTION}"),
                           body={"status": "enabled", "settings": {COMPACTION: {"strategy": "zorder"}}})
    assert bad.status_code == 400
    assert bad.json()["error"]["message"].startswith(
        "icebergCompaction.settings.icebergCompaction.strategy: must be auto, binpack or sort"), bad.text
    unknown = catalog_api.call("PUT", table_path(warehouse, "m.settings", "/icebergSorting"), body={})
    assert unknown.status_code == 400 and "unknown maintenance type" in unknown.json()["error"]["message"]
    missing = catalog_api.call("GET", table_path(warehouse, "m.ghost"))
    assert missing.status_code == 404 and missing.json()["error"]["type"] == "NoSuchTableException"
    out = serac(server, "table", "maintenance", "set", warehouse, "m", "settings", "--type", SNAPSHOTS,
                "--target-file-size-mb", "64", check=False)
    assert out.returncode != 0
    assert "--target-file-size-mb is a setting of icebergCompaction, not of icebergSnapshotManagement" in out.stderr


def test_expiry_and_compaction_run_as_jobs(server, catalog, catalog_api, warehouse, tmp_path):  # noqa: F811
    name = "m.jobs"
    make_table(catalog, name, 2)
    fill(server, warehouse, name, tmp_path)
    for part in range(4):  # small appends: many small files and snapshots
        load_rows(server, warehouse, name, tmp_path,
                  [{"id": ROWS + part * 10 + i, "category": "a", "value": 0.5} for i in range(10)])
    delete_rows(server, warehouse, name, tmp_path, [1, 2, 3], "position")
    expected = sorted(set(range(ROWS + 40)) - {1, 2, 3})
    assert ids_by_pyiceberg(catalog, name) == expected
    before = catalog.load_table(name)
    assert len(before.metadata.snapshots) == 7
    location = before.metadata.location.removeprefix(f"s3://{warehouse}/")

    # Compaction: the small files of each partition become one; rows unchanged.
    out = serac(server, "table", "maintenance", "run", warehouse, "m", "jobs", "--type", COMPACTION)
    assert "icebergCompaction succeeded" in out.stdout, out.stdout
    compacted = catalog.load_table(name)
    assert compacted.metadata.current_snapshot().summary.operation.value == "replace"
    assert ids_by_pyiceberg(catalog, name) == expected
    assert ids_by_duckdb(server, warehouse, name) == expected
    data_files = {task.file.file_path for task in compacted.scan().plan_files()}
    assert len(data_files) < len({task.file.file_path for task in before.scan().plan_files()})
    # Then the small manifests, the compaction's own among them, became one per content (a second
    # replace commit that changes no file).
    manifests = compacted.current_snapshot().manifests(compacted.io)
    assert len(manifests) < len(before.current_snapshot().manifests(before.io))
    assert len({m.content for m in manifests}) == len(manifests), manifests
    assert compacted.current_snapshot().summary["manifests-replaced"] != "0"
    status = catalog_api.ok("GET", table_path(warehouse, name, f"/{COMPACTION}/status")).json()
    assert status["jobs"][0]["manifestsRewritten"] > 1 and status["jobs"][0]["manifestsWritten"] >= 1

    # Expiry: snapshots older than a millisecond (the table's own property), two kept.
    with catalog.load_table(name).transaction() as tx:
        tx.set_properties({"history.expire.max-snapshot-age-ms": "1", "history.expire.min-snapshots-to-keep": "2"})
    keys_before = object_keys(server, warehouse, location)
    started = catalog_api.ok("POST", table_path(warehouse, name, f"/{SNAPSHOTS}/run"), expect=(202,)).json()
    job = wait_for_job(catalog_api, warehouse, name, SNAPSHOTS, started["jobId"])
    assert job["status"] == "succeeded", job
    table = catalog.load_table(name)
    assert len(table.metadata.snapshots) == 2
    assert job["snapshotsRemoved"] == 7  # seven writes, the compaction and its manifests, two kept
    assert ids_by_pyiceberg(catalog, name) == expected
    assert ids_by_duckdb(server, warehouse, name) == expected
    # Every file a remaining snapshot reaches is there; what only the expired ones reached is gone.
    keys_after = object_keys(server, warehouse, location)
    for task in table.scan().plan_files():
        assert task.file.file_path.removeprefix(f"s3://{warehouse}/") in keys_after
    removed = keys_before - keys_after
    assert job["filesRemoved"] == len(removed) > 0
    assert all(key.endswith((".avro", ".parquet")) for key in removed), removed
    assert not any(f"s3://{warehouse}/{key}" in data_files for key in removed)

    status = catalog_api.ok("GET", table_path(warehouse, name, f"/{SNAPSHOTS}/status")).json()
    assert status["status"][SNAPSHOTS]["status"] == "Successful"
    assert status["jobs"][0]["jobId"] == started["jobId"]
    history = serac(server, "table", "maintenance", "status", warehouse, "m", "jobs", "--type", COMPACTION).stdout
    assert history.startswith("icebergCompaction: Successful\n  icebergCompaction succeeded "), history
    metrics = requests.get(server.endpoint + "/_serac/metrics", timeout=10).text
    assert 'serac_maintenance_jobs_total{type="icebergSnapshotManagement",result="succeeded"}' in metrics
    assert "serac_maintenance_snapshots_removed_total" in metrics

    # Unreferenced files: objects under the table's location no metadata reaches. Young ones stay
    # (they may be a writer's files not committed yet); past the age asked for, they go.
    s3 = boto3.client("s3", endpoint_url=server.endpoint, aws_access_key_id=ACCESS_KEY,
                      aws_secret_access_key=SECRET_KEY, region_name=REGION,
                      config=Config(s3={"addressing_style": "path"}))
    orphans = [f"{location}/data/category=a/orphan.parquet", f"{location}/metadata/99999-orphan.metadata.json",
               f"{location}/stray.txt"]
    for key in orphans:
        s3.put_object(Bucket=warehouse, Key=key, Body=b"not referenced")
    reached_before = object_keys(server, warehouse, location) - set(orphans)
    out = serac(server, "table", "maintenance", "run", warehouse, "m", "jobs", "--type", UNREFERENCED)
    assert "filesKeptYoung=3 filesRemoved=0" in out.stdout, out.stdout
    assert object_keys(server, warehouse, location) == reached_before | set(orphans)
    out = serac(server, "table", "maintenance", "run", warehouse, "m", "jobs", "--type", UNREFERENCED,
                "--older-than-seconds", "0")
    assert "filesKeptYoung=0 filesRemoved=3" in out.stdout, out.stdout
    assert object_keys(server, warehouse, location) == reached_before
    assert ids_by_pyiceberg(catalog, name) == expected
    assert ids_by_duckdb(server, warehouse, name) == expected
    bad = catalog_api.call("POST", table_path(warehouse, name, f"/{COMPACTION}/run"), body={"olderThanSeconds": 1})
    assert bad.status_code == 400 and "olderThanSeconds: not a field of a icebergCompaction run" in \
        bad.json()["error"]["message"]


def test_snapshots_expire_on_demand(server, catalog, catalog_api, warehouse, tmp_path):  # noqa: F811
    """`serac table expire-snapshots` and the run route's options, as Spark's expire_snapshots takes
    them: older than a time or an age, the newest N of each branch kept, ids expired whatever their
    age; refs' heads always stay, and only files no remaining snapshot reaches are deleted."""
    name = "m.expire"
    make_table(catalog, name, 2)
    for part in range(4):
        load_rows(server, warehouse, name, tmp_path,
                  [{"id": part * 10 + i, "category": "abc"[i % 3], "value": 0.5} for i in range(10)])
    table = catalog.load_table(name)
    first, second, third, fourth = [s.snapshot_id for s in table.metadata.snapshots]
    table.manage_snapshots().create_tag(second, "release").commit()
    # An overwrite: every earlier data file is now reached only by the snapshots before it.
    load_rows(server, warehouse, name, tmp_path, [{"id": 100 + i, "category": "a", "value": 1.0} for i in range(5)],
              extra=["--mode", "overwrite"])
    table = catalog.load_table(name)
    overwrite = table.metadata.current_snapshot_id
    location = table.metadata.location.removeprefix(f"s3://{warehouse}/")
    old_files = {task.file.file_path.removeprefix(f"s3://{warehouse}/")
                 for task in table.scan(snapshot_id=fourth).plan_files()}
    tagged_files = {task.file.file_path.removeprefix(f"s3://{warehouse}/")
                    for task in table.scan(snapshot_id=second).plan_files()}
    expected = list(range(100, 105))

    # The table's settings keep five days: nothing is old enough, and a time long past expires nothing.
    out = serac(server, "table", "expire-snapshots", warehouse, "m", "expire")
    assert "snapshotsRemoved=0" in out.stdout, out.stdout
    out = serac(server, "table", "expire-snapshots", warehouse, "m", "expire", "--older-than", "2000-01-01")
    assert "snapshotsRemoved=0" in out.stdout, out.stdout
    assert len(catalog.load_table(name).metadata.snapshots) == 5

    # Refs' heads cannot be expired, and an unknown id is named.
    for snapshot_id, message in ((overwrite, "head of branch main"), (second, "head of tag release"),
                                 (12345, "no snapshot 12345")):
        out = serac(server, "table", "expire-snapshots", warehouse, "m", "expire", "--snapshot-id", snapshot_id,
                    check=False)
        assert out.returncode != 0 and message in out.stderr, out.stderr
    # An id goes whatever its age.
    out = serac(server, "table", "expire-snapshots", warehouse, "m", "expire", "--snapshot-id", first)
    assert "snapshotsRemoved=1" in out.stdout, out.stdout
    assert first not in {s.snapshot_id for s in catalog.load_table(name).metadata.snapshots}

    # Older than now, the newest two of main kept: third goes with its statistics file, the tag's
    # second stays.
    s3 = boto3.client("s3", endpoint_url=server.endpoint, aws_access_key_id=ACCESS_KEY,
                      aws_secret_access_key=SECRET_KEY, region_name=REGION,
                      config=Config(s3={"addressing_style": "path"}))
    stats_key = f"{location}/metadata/third-stats.puffin"
    s3.put_object(Bucket=warehouse, Key=stats_key, Body=b"PFA1 not read by expiry")
    catalog_api.ok("POST", f"/v1/{warehouse}/namespaces/m/tables/expire", body={"requirements": [], "updates": [
        {"action": "set-statistics", "statistics": {
            "snapshot-id": third, "statistics-path": f"s3://{warehouse}/{stats_key}", "file-size-in-bytes": 23,
            "file-footer-size-in-bytes": 4, "blob-metadata": []}}]})
    keys_before = object_keys(server, warehouse, location)
    assert stats_key in keys_before
    out = serac(server, "table", "expire-snapshots", warehouse, "m", "expire", "--older-than", "0s",
                "--retain-last", "2")
    assert "snapshotsRemoved=1" in out.stdout, out.stdout
    table = catalog.load_table(name)
    assert {s.snapshot_id for s in table.metadata.snapshots} == {second, fourth, overwrite}
    assert stats_key not in object_keys(server, warehouse, location)
    data_before = {key for key in keys_before if key.endswith(".parquet")}
    assert {key for key in object_keys(server, warehouse, location) if key.endswith(".parquet")} == data_before

    # Through the API: one kept; every data file only the expired snapshots reached is gone, the
    # tag's are there, the current ones too.
    started = catalog_api.ok("POST", table_path(warehouse, name, f"/{SNAPSHOTS}/run"),
                             body={"olderThanTimestampMs": 4102444800000, "retainLast": 1}, expect=(202,)).json()
    job = wait_for_job(catalog_api, warehouse, name, SNAPSHOTS, started["jobId"])
    assert job["status"] == "succeeded" and job["snapshotsRemoved"] == 1 and job["retainLast"] == 1, job
    table = catalog.load_table(name)
    assert {s.snapshot_id for s in table.metadata.snapshots} == {second, overwrite}
    keys_after = object_keys(server, warehouse, location)
    assert tagged_files <= keys_after
    assert not (old_files - tagged_files) & keys_after
    for task in table.scan().plan_files():
        assert task.file.file_path.removeprefix(f"s3://{warehouse}/") in keys_after
    assert ids_by_pyiceberg(catalog, name) == expected
    assert ids_by_duckdb(server, warehouse, name) == expected

    for body, message in (({"retainLast": 0}, "retainLast: must be a whole number, 1 or more"),
                          ({"olderThanSeconds": -1}, "olderThanSeconds: must be"),
                          ({"snapshotIds": ["x"]}, "snapshotIds: \"x\" is not a snapshot id"),
                          ({"olderThanSeconds": 1, "olderThanTimestampMs": 1}, "give one of them"),
                          ({"older": 1}, "older: not a field of a icebergSnapshotManagement run")):
        bad = catalog_api.call("POST", table_path(warehouse, name, f"/{SNAPSHOTS}/run"), body=body)
        assert bad.status_code == 400 and message in bad.json()["error"]["message"], (body, bad.text)
    bad = serac(server, "table", "expire-snapshots", warehouse, "m", "expire", "--older-than", "yesterday",
                check=False)
    assert bad.returncode != 0 and "--older-than yesterday: not a timestamp" in bad.stderr, bad.stderr


def test_compacting_a_table_pyiceberg_wrote(server, catalog, catalog_api, warehouse):  # noqa: F811
    """Data files PyIceberg wrote (format v2: PyIceberg 0.12 writes no v3 manifests), one small file
    per partition and append, packed by a compaction job into one file per partition (and its
    manifests into one), the rows unchanged in PyIceberg and DuckDB."""
    import pyarrow as pa

    name = "m.pyiceberg"
    table = make_table(catalog, name, 2)
    arrow_schema = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("category", pa.string()),
                              pa.field("value", pa.float64())])
    for part in range(5):
        table.append(pa.Table.from_pylist([{"id": part * 10 + i, "category": "abc"[i % 3], "value": 0.5}
                                           for i in range(10)], schema=arrow_schema))
    table = catalog.load_table(name)
    assert len(list(table.scan().plan_files())) == 15
    expected = ids_by_pyiceberg(catalog, name)
    started = catalog_api.ok("POST", table_path(warehouse, name, f"/{COMPACTION}/run"), expect=(202,)).json()
    job = wait_for_job(catalog_api, warehouse, name, COMPACTION, started["jobId"])
    assert job["status"] == "succeeded" and job["filesRead"] == 15 and job["filesWritten"] == 3, job
    compacted = catalog.load_table(name)
    assert len(list(compacted.scan().plan_files())) == 3
    assert len(compacted.current_snapshot().manifests(compacted.io)) == 1
    assert ids_by_pyiceberg(catalog, name) == expected
    assert ids_by_duckdb(server, warehouse, name) == expected


def test_writers_during_compaction_lose_and_double_nothing(server, catalog, catalog_api, warehouse,  # noqa: F811
                                                           tmp_path):
    """A writer appends and deletes rows (position deletes) while compaction jobs run one
    after another: each write either lands whole or fails with nothing committed, each job either
    lands or gives up, and the table ends with exactly the rows the landed writes leave."""
    name = "m.busy"
    make_table(catalog, name, 2)
    expected: list[int] = []
    for part in range(6):
        rows = [{"id": part * 10 + i, "category": "abc"[i % 3], "value": 1.0} for i in range(10)]
        load_rows(server, warehouse, name, tmp_path, rows)
        expected += [r["id"] for r in rows]
    done = threading.Event()
    outcomes = {"landed": 0, "refused": 0}
    writer_dir = tmp_path / "writer"
    writer_dir.mkdir()

    def write():
        next_id = 1000
        step = 0
        while not done.is_set() and step < 40:
            step += 1
            if step % 3:
                rows = [{"id": next_id + i, "category": "abc"[i % 3], "value": 2.0} for i in range(5)]
                next_id += 5
                out = load_rows(server, warehouse, name, writer_dir, rows, check=False)
                change = ("add", [r["id"] for r in rows])
            else:
                victims = sorted(set(expected))[step % 7::9][:3]
                keys = writer_dir / f"keys-{step}.csv"
                keys.write_text("id\n" + "".join(f"{v}\n" for v in victims))
                out = serac(server, "table", "delete-rows", warehouse, "m", "busy", "--keys", keys, "--as",
                            "position", check=False)
                change = ("remove", victims)
            if out.returncode == 0:
                outcomes["landed"] += 1
                if change[0] == "add":
                    expected.extend(change[1])
                else:
                    for victim in change[1]:
                        expected.remove(victim)
            else:
                assert "nothing was committed" in out.stderr, out.stderr
                outcomes["refused"] += 1

    writer = threading.Thread(target=write)
    writer.start()
    jobs = []
    try:
        while writer.is_alive() and len(jobs) < 12:
            started = catalog_api.ok("POST", table_path(warehouse, name, f"/{COMPACTION}/run"), expect=(202,)).json()
            jobs.append(wait_for_job(catalog_api, warehouse, name, COMPACTION, started["jobId"]))
    finally:
        done.set()
        writer.join(timeout=300)
    assert {job["status"] for job in jobs} <= {"succeeded", "failed"}, jobs
    assert any(job["status"] == "succeeded" and job["filesRead"] > 0 for job in jobs), jobs
    print(f"writes: {outcomes}; jobs: {[job['status'] for job in jobs]}")
    assert outcomes["landed"] > 5, outcomes
    assert ids_by_pyiceberg(catalog, name) == sorted(expected)
    assert ids_by_duckdb(server, warehouse, name) == sorted(expected)


def test_a_server_killed_during_a_job_leaves_the_table_whole(tmp_path):
    server = SeracServer(tmp_path / "server")
    server.start()
    try:
        api = CatalogApi(server.endpoint)
        api.create_warehouse("killed")
        catalog = load_pyiceberg_catalog(server.endpoint, "killed")
        name = "m.killed"
        make_table(catalog, name, 2)
        for part in range(12):
            load_rows(server, "killed", name, tmp_path,
                      [{"id": part * 100 + i, "category": "abc"[i % 3], "value": 1.0} for i in range(100)])
        with catalog.load_table(name).transaction() as tx:
            tx.set_properties({"history.expire.max-snapshot-age-ms": "1"})
        expected = list(range(1200))
        for kind in (COMPACTION, SNAPSHOTS):
            started = api.ok("POST", table_path("killed", name, f"/{kind}/run"), expect=(202,)).json()
            time.sleep(0.05)
            server.kill()
            server.start()
            api = CatalogApi(server.endpoint)
            catalog = load_pyiceberg_catalog(server.endpoint, "killed")
            assert sorted(r["id"] for r in catalog.load_table(name).scan().to_arrow().to_pylist()) == expected
            status = api.ok("GET", table_path("killed", name, f"/{kind}/status")).json()
            job = next(job for job in status["jobs"] if job["jobId"] == started["jobId"])
            assert job["status"] in ("succeeded", "failed"), job
            if job["status"] == "failed":
                assert job["error"] == "interrupted: the server stopped while the job ran", job
            # Run again to the end: the table is whole and equal.
            again = api.ok("POST", table_path("killed", name, f"/{kind}/run"), expect=(202,)).json()
            assert wait_for_job(api, "killed", name, kind, again["jobId"])["status"] == "succeeded"
            assert sorted(r["id"] for r in catalog.load_table(name).scan().to_arrow().to_pylist()) == expected
    finally:
        server.stop()



@pytest.mark.parametrize("format_version,kind", [(2, "position"), (2, "equality"), (3, "dv")])
def test_compaction_applies_deletes(server, catalog, warehouse, tmp_path, format_version, kind):  # noqa: F811
    """CDC-like history (deletes in two commits, some rows written again after them), compacted
    by the server's job: the deletes are applied, the delete files dropped, the rows unchanged."""
    name = f"m.applied_{kind}"
    make_table(catalog, name, format_version)
    fill(server, warehouse, name, tmp_path)
    deleted = set(range(0, ROWS, 7)) | {1, 2}
    for ids in (sorted(range(0, ROWS, 7)), [1, 2]):
        keys = tmp_path / f"keys-{ids[0]}-{ids[-1]}.csv"
        keys.write_text("id,category\n" + "".join(f"{i},{'abc'[i % 3]}\n" for i in ids))
        serac(server, "table", "delete-rows", warehouse, "m", f"applied_{kind}", "--keys", keys, "--as", kind)
    again = [0, 7, 14]  # written again after the deletes: equality deletes must not remove them
    load_rows(server, warehouse, name, tmp_path, [{"id": i, "category": "abc"[i % 3], "value": 1.0} for i in again])
    expected = sorted((set(range(ROWS)) - deleted) | set(again))
    readers = [lambda: ids_by_duckdb(server, warehouse, name)]
    if kind != "equality":  # PyIceberg refuses equality deletes (README's table)
        readers.append(lambda: ids_by_pyiceberg(catalog, name))
    for read in readers:
        assert read() == expected
    assert int(catalog.load_table(name).current_snapshot().summary["total-delete-files"]) > 0

    catalog_api = CatalogApi(server.endpoint)
    started = catalog_api.ok("POST", table_path(warehouse, name, f"/{COMPACTION}/run"), expect=(202,)).json()
    job = wait_for_job(catalog_api, warehouse, name, COMPACTION, started["jobId"])
    assert job["status"] == "succeeded", job
    assert job["rowsDeleted"] == len(deleted), job
    summary = catalog.load_table(name).current_snapshot().summary
    assert summary.operation.value == "replace"
    assert summary["total-delete-files"] == "0", summary
    assert int(summary["total-records"]) == len(expected)
    assert ids_by_pyiceberg(catalog, name) == expected
    assert ids_by_duckdb(server, warehouse, name) == expected


def test_jobs_start_by_themselves_after_commits(tmp_path):
    """With --maintenance-interval 1 the server looks at a table a second after a commit: a table
    with many small files and deletes is compacted, and snapshots past the table's age limit are
    expired, each job recorded as automatic."""
    server = SeracServer(tmp_path / "server", extra_args=["--maintenance-interval", "1"])
    server.start()
    try:
        api = CatalogApi(server.endpoint)
        api.create_warehouse("auto")
        catalog = load_pyiceberg_catalog(server.endpoint, "auto")
        name = "m.auto"
        make_table(catalog, name, 2)
        # Compaction held off while the table is written: a compaction landing between delete-rows'
        # read and its commit would rightly make that commit fail (its data files are gone).
        api.ok("PUT", table_path("auto", name, f"/{COMPACTION}"), {"status": "disabled"})
        for part in range(6):
            load_rows(server, "auto", name, tmp_path,
                      [{"id": part * 10 + i, "category": "abc"[i % 3], "value": 1.0} for i in range(10)])
        delete_rows(server, "auto", name, tmp_path, [1, 2, 3], "position")
        expected = sorted(set(range(60)) - {1, 2, 3})
        api.ok("DELETE", table_path("auto", name, f"/{COMPACTION}"))
        # The commit that makes the server look: the expiry age, Iceberg's own property.
        with catalog.load_table(name).transaction() as tx:
            tx.set_properties({"history.expire.max-snapshot-age-ms": "1", "history.expire.min-snapshots-to-keep": "1"})

        def jobs(kind):
            return api.ok("GET", table_path("auto", name, f"/{kind}/status")).json()["jobs"]

        def settled():
            done = {job["type"] for kind in (COMPACTION, SNAPSHOTS) for job in jobs(kind)
                    if job["status"] == "succeeded"}
            summary = catalog.load_table(name).current_snapshot().summary
            return done == {COMPACTION, SNAPSHOTS} and summary["total-delete-files"] == "0"

        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not settled():
            time.sleep(0.5)
        compaction, expiry = jobs(COMPACTION)[0], jobs(SNAPSHOTS)[0]
        assert compaction["status"] == "succeeded" and compaction["trigger"] == "automatic", compaction
        assert expiry["status"] == "succeeded" and expiry["trigger"] == "automatic", expiry
        table = catalog.load_table(name)
        assert table.current_snapshot().summary["total-delete-files"] == "0"
        assert len(table.metadata.snapshots) < 8
        assert sorted(r["id"] for r in table.scan().to_arrow().to_pylist()) == expected
        # Once nothing is due, the table is not worked on again.
        time.sleep(3)
        counts = (len(jobs(COMPACTION)), len(jobs(SNAPSHOTS)))
        time.sleep(3)
        assert (len(jobs(COMPACTION)), len(jobs(SNAPSHOTS))) == counts
    finally:
        server.stop()


def thread_nice_values(pid: int) -> list[int]:
    values = []
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/stat") as stat_file:
                stat = stat_file.read()
        except FileNotFoundError:  # the thread ended meanwhile
            continue
        # Field 19 is the nice value; fields after the command name (which may hold spaces) start at 3.
        values.append(int(stat[stat.rindex(")") + 2:].split()[19 - 3]))
    return values


def test_jobs_run_on_a_thread_of_lower_priority(tmp_path):
    """Foreground requests come first: the thread that runs maintenance jobs has the nice value
    limits::kMaintenanceNice, and the threads that serve requests keep the server's own."""
    server = SeracServer(tmp_path / "nice", name="serac-nice")
    server.start()
    try:
        values = thread_nice_values(server.process.pid)
        assert values.count(10) == 1, values
        assert values.count(0) >= 3, values  # event loops, acceptor, watchdog, ...
    finally:
        server.stop()
