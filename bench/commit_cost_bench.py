#!/usr/bin/env python3
"""What one large catalog commit costs: commits of about 1,000 updates of each kind (properties,
snapshots with their branch, schemas, partition specs, sort orders, branches, statistics, view
versions and view schemas), each sent once to a fresh table of one serac, with the seconds it took,
its answer and the server's resident set after all of them.

With --reference OLD_BINARY the same commits go to that binary too, started beside the first on
its own data directory, and the table shows both side by side with old/new time ratios (above 1:
the binary under test is faster). A commit's cost grows with its updates when applying them is
quadratic; it should not.

Not a test: it prints a table and exits 0 unless it could not run.

    bench/commit_cost_bench.py [--updates 1000] [--reference OLD_BINARY]   (SERAC_BIN: default build/serac)
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
import uuid
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(REPO / "tests"))
from s3_bench import Processes, Serac, proc_status_kib  # noqa: E402

SCHEMA = {"type": "struct", "schema-id": 0, "fields": [{"id": 1, "name": "id", "type": "long", "required": False}]}
EPOCH_MS = 1_700_000_000_000


def snapshot(snapshot_id: int, location: str, parent: int | None = None) -> dict:
    out = {"snapshot-id": snapshot_id, "sequence-number": snapshot_id, "timestamp-ms": EPOCH_MS + snapshot_id,
           "manifest-list": f"{location}/metadata/snap-{snapshot_id}.avro", "summary": {"operation": "append"},
           "schema-id": 0}
    if parent is not None:
        out["parent-snapshot-id"] = parent
    return out


def table_cases(n: int):
    """(name, updates(location)) for a table commit of about n updates."""
    half = n // 2

    def snapshots(location):
        updates = []
        for i in range(1, half + 1):
            updates.append({"action": "add-snapshot", "snapshot": snapshot(i, location, i - 1 if i > 1 else None)})
            updates.append({"action": "set-snapshot-ref", "ref-name": "main", "type": "branch", "snapshot-id": i})
        return updates

    def schemas(_):
        updates = []
        for i in range(1, half + 1):
            fields = SCHEMA["fields"] + [{"id": 1 + i, "name": f"c{i}", "type": "string", "required": False}]
            updates.append({"action": "add-schema", "schema": {"type": "struct", "schema-id": i, "fields": fields}})
            updates.append({"action": "set-current-schema", "schema-id": -1})
        return updates

    def specs(_):
        updates = []
        for i in range(1, half + 1):
            updates.append({"action": "add-spec", "spec": {"spec-id": i, "fields": [
                {"source-id": 1, "field-id": 1000 + i, "name": f"b{i}", "transform": f"bucket[{i + 2}]"}]}})
            updates.append({"action": "set-default-spec", "spec-id": -1})
        return updates

    def orders(_):
        return [{"action": "add-sort-order", "sort-order": {"order-id": i, "fields": [
            {"source-id": 1, "transform": f"bucket[{i + 1}]", "direction": "asc", "null-order": "nulls-first"}]}}
            for i in range(1, n)]

    def branches(location):
        return [{"action": "add-snapshot", "snapshot": snapshot(1, location)}] + [
            {"action": "set-snapshot-ref", "ref-name": f"b{i}", "type": "branch", "snapshot-id": 1} for i in range(n - 1)]

    def statistics(location):
        return [{"action": "add-snapshot", "snapshot": snapshot(1, location)}] + [
            {"action": "set-statistics", "statistics": {
                "snapshot-id": 1, "statistics-path": f"{location}/metadata/s{i}.puffin", "file-size-in-bytes": 1,
                "file-footer-size-in-bytes": 1, "blob-metadata": []}} for i in range(n - 1)]

    return [
        ("properties", lambda _: [{"action": "set-properties", "updates": {f"k{i}": "v" * 100}} for i in range(n)]),
        ("snapshots + main", snapshots),
        ("schemas, each current", schemas),
        ("specs, each default", specs),
        ("sort orders", orders),
        ("branches", branches),
        ("statistics files", statistics),
    ]


def view_cases(n: int):
    half = n // 2

    def versions():
        updates = []
        for i in range(2, half + 2):
            updates.append({"action": "add-view-version", "view-version": {
                "version-id": i, "timestamp-ms": EPOCH_MS + i, "schema-id": 0, "summary": {"engine-name": "bench"},
                "default-namespace": ["ns"],
                "representations": [{"type": "sql", "sql": f"select {i} as id", "dialect": "spark"}]}})
            updates.append({"action": "set-current-view-version", "view-version-id": -1})
        return updates

    def schemas():
        return [{"action": "add-schema", "schema": {"type": "struct", "schema-id": i, "fields": [
            SCHEMA["fields"][0], {"id": i + 1, "name": f"c{i}", "type": "string", "required": False}]}}
            for i in range(1, n)]

    return [("view versions, each current", versions), ("view schemas", schemas)]


def view_body(name: str) -> dict:
    return {"name": name, "schema": SCHEMA, "view-version": {
        "version-id": 1, "timestamp-ms": EPOCH_MS, "schema-id": 0, "summary": {"engine-name": "bench"},
        "default-namespace": ["ns"], "representations": [{"type": "sql", "sql": "select 1 as id", "dialect": "spark"}]}}


def measure(serac: Serac, n: int) -> dict:
    """{case: (seconds, status, KiB sent)} and the resident set after them all."""
    from catalog_util import CatalogApi

    api = CatalogApi(serac.endpoint, serac.user, serac.password)
    warehouse = "commit-cost-" + uuid.uuid4().hex[:8]
    api.create_warehouse(warehouse)
    api.ok("POST", f"/v1/{warehouse}/namespaces", {"namespace": ["ns"]})
    results = {}

    def timed(name, path, updates):
        body = json.dumps({"requirements": [], "updates": updates})
        start = time.monotonic()
        response = api.call("POST", path, body, timeout=600)
        results[name] = (time.monotonic() - start, response.status_code, len(body) / 1024)

    for index, (name, updates_of) in enumerate(table_cases(n)):
        table = f"t{index}"
        api.ok("POST", f"/v1/{warehouse}/namespaces/ns/tables", {"name": table, "schema": SCHEMA})
        location = api.ok("GET", f"/v1/{warehouse}/namespaces/ns/tables/{table}").json()["metadata"]["location"]
        timed(name, f"/v1/{warehouse}/namespaces/ns/tables/{table}", updates_of(location))
    for index, (name, updates_of) in enumerate(view_cases(n)):
        view = f"v{index}"
        api.ok("POST", f"/v1/{warehouse}/namespaces/ns/views", view_body(view))
        timed(name, f"/v1/{warehouse}/namespaces/ns/views/{view}", updates_of())
    return {"cases": results, "rss_kib": proc_status_kib(serac.proc.pid, "VmRSS"),
            "peak_kib": proc_status_kib(serac.proc.pid, "VmHWM")}


def start(processes: Processes, binary: str, work: str, label: str) -> Serac:
    serac = Serac(processes, os.path.abspath(binary), os.path.join(work, label + "-data"),
                  os.path.join(work, label + ".log"), [])
    if not serac.start():
        sys.exit(f"commit_cost_bench: {label} ({binary}): {serac.failure}\n{serac.log_tail()}")
    return serac


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--updates", type=int, default=1000, help="updates per commit (default 1000)")
    parser.add_argument("--reference", help="an older serac binary to run the same commits against")
    args = parser.parse_args()
    binary = os.environ.get("SERAC_BIN", str(REPO / "build" / "serac"))
    processes = Processes()
    try:
        with tempfile.TemporaryDirectory(prefix="serac-commit-cost-") as work:
            runs = {}
            for label, path in ([("old", args.reference)] if args.reference else []) + [("new", binary)]:
                serac = start(processes, path, work, label)
                runs[label] = measure(serac, args.updates)
                processes.stop_all()
    finally:
        processes.stop_all()

    new = runs["new"]
    old = runs.get("old")
    print(f"\ncommits of about {args.updates} updates, one per fresh table or view")
    header = f"{'commit':30s} {'KiB':>7s} {'new s':>8s} {'answer':>6s}"
    if old:
        header += f" {'old s':>8s} {'answer':>6s} {'old/new':>8s}"
    print(header)
    for name, (seconds, status, kib) in new["cases"].items():
        line = f"{name:30s} {kib:7.0f} {seconds:8.3f} {status:6d}"
        if old:
            old_seconds, old_status, _ = old["cases"][name]
            line += f" {old_seconds:8.3f} {old_status:6d} {old_seconds / seconds:8.1f}"
        print(line)
    worst = max(seconds for seconds, _, _ in new["cases"].values())
    summary = f"worst commit: new {worst:.3f} s"
    if old:
        summary += f", old {max(s for s, _, _ in old['cases'].values()):.3f} s"
    print(summary)
    memory = f"resident set after: new {new['rss_kib'] / 1024:.0f} MiB (peak {new['peak_kib'] / 1024:.0f} MiB)"
    if old:
        memory += f", old {old['rss_kib'] / 1024:.0f} MiB (peak {old['peak_kib'] / 1024:.0f} MiB)"
    print(memory)
    return 0


if __name__ == "__main__":
    sys.exit(main())
