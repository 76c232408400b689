#!/usr/bin/env python3
"""Scan planning: serac planning a filtered scan in the server (POST .../plan, then every plan
task through POST .../tasks, as Java's client fetches them) against PyIceberg planning the same scan
itself (`Table.scan(row_filter).plan_files()`: the manifest list and every manifest read over S3 from
the same serac), side by side in one run on one table.

- the table: FILES data files (default 10,000) in ten commits of FILES/10 single-partition files
  each (identity partition `part`, 1,000 values per commit; `serac table load --partition-by part`);
- the scan: `part < 300 AND id >= 0` (30% of the files), no column stats asked for (Java's default);
- each side runs ROUNDS times; the first round is reported apart (cold: nothing cached in the client),
  then the median and the 90th percentile of the rest, the files planned (equal on both sides, checked),
  and the client's and the server's peak RSS.

Not a test: it prints a table and exits 0 unless it could not run.

    bench/scan_plan_bench.py [--files 10000] [--rounds 7] [--keep]
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import secrets
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(REPO / "tests"))
from maintenance_bench import print_table  # noqa: E402
from s3_bench import Processes, Serac, proc_status_kib  # noqa: E402

REGION = "us-east-1"
COMMITS = 10
FILTER_JSON = {"type": "and", "left": {"type": "lt", "term": "part", "value": 300},
               "right": {"type": "gt-eq", "term": "id", "value": 0}}
FILTER_TEXT = "part < 300 AND id >= 0"


def make_input(path: Path, first_id: int, partitions: int) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = [{"id": first_id + i, "part": i % partitions, "value": float(i)} for i in range(partitions * 4)]
    schema = pa.schema([pa.field("id", pa.int64()), pa.field("part", pa.int32()), pa.field("value", pa.float64())])
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), path)


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--serac", default=os.environ.get("SERAC_BIN", str(REPO / "build/serac")))
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="serac-scan-plan-bench-"))
    processes = Processes()
    try:
        serac = Serac(processes, args.serac, str(work / "data"), str(work / "serac.log"),
                      ["--maintenance-interval", "0"])
        if not serac.start():
            print(f"scan_plan_bench: {serac.failure}", file=sys.stderr)
            return 1
        endpoint = serac.endpoint
        warehouse = "bench-" + secrets.token_hex(4)
        cli = serac.cli

        cli("warehouse", "create", warehouse)
        cli("namespace", "create", warehouse, "bench")
        per_commit = args.files // COMMITS
        for commit in range(COMMITS):
            print(f"load {commit + 1}/{COMMITS}: {per_commit} files", file=sys.stderr)
            path = work / f"input-{commit}.parquet"
            make_input(path, commit * per_commit * 4, per_commit)
            extra = ["--create", "--partition-by", "part"] if commit == 0 else []
            cli("table", "load", warehouse, "bench", "t", str(path), *extra)
            path.unlink()

        from catalog_util import CatalogApi, load_pyiceberg_catalog
        import requests

        api = CatalogApi(endpoint, access_key=serac.user, secret_key=serac.password)
        session = requests.Session()

        def signed(method: str, path: str, body: dict) -> dict:
            from botocore.auth import SigV4Auth
            from botocore.awsrequest import AWSRequest

            data = json.dumps(body).encode()
            url = api.url(path)
            request = AWSRequest(method=method, url=url, data=data, headers={"Content-Type": "application/json"})
            SigV4Auth(api.credentials, api.signing_name, api.region).add_auth(request)
            reply = session.request(method, url, data=data, headers=dict(request.headers.items()), timeout=300)
            reply.raise_for_status()
            return reply.json()

        base = f"/v1/{warehouse}/namespaces/bench/tables/t"

        def serac_plan() -> set[str]:
            reply = signed("POST", base + "/plan", {"filter": FILTER_JSON})
            files = {task["data-file"]["file-path"] for task in reply.get("file-scan-tasks", [])}
            for plan_task in reply.get("plan-tasks", []):
                page = signed("POST", base + "/tasks", {"plan-task": plan_task})
                files.update(task["data-file"]["file-path"] for task in page["file-scan-tasks"])
            return files

        keys = {"client.access-key-id": serac.user, "client.secret-access-key": serac.password,
                "s3.access-key-id": serac.user, "s3.secret-access-key": serac.password}
        catalog = load_pyiceberg_catalog(endpoint, warehouse, **keys)
        table = catalog.load_table("bench.t")

        def pyiceberg_plan() -> set[str]:
            return {task.file.file_path for task in table.scan(row_filter=FILTER_TEXT).plan_files()}

        results = {}
        for name, plan in (("serac (server-side)", serac_plan), ("PyIceberg (client-side)", pyiceberg_plan)):
            print(f"planning with {name}", file=sys.stderr)
            seconds, planned = [], None
            for _ in range(args.rounds):
                started = time.perf_counter()
                files = plan()
                seconds.append(time.perf_counter() - started)
                if planned is not None and files != planned:
                    raise RuntimeError(f"{name} planned different files in two rounds")
                planned = files
            results[name] = (seconds, planned)
        serac_files, py_files = results["serac (server-side)"][1], results["PyIceberg (client-side)"][1]
        if serac_files != py_files:
            raise RuntimeError(f"the plans differ: serac {len(serac_files)} files, PyIceberg {len(py_files)}")

        reference = statistics.median(results["PyIceberg (client-side)"][0][1:])
        server_rss = (proc_status_kib(serac.proc.pid, "VmHWM") or 0) / 1024
        client_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        table_rows = []
        for name, (seconds, files) in results.items():
            warm = seconds[1:]
            table_rows.append((name, len(files), f"{seconds[0] * 1000:.1f}", f"{statistics.median(warm) * 1000:.1f}",
                               f"{percentile(warm, 0.9) * 1000:.1f}",
                               f"{len(files) / statistics.median(warm):,.0f}",
                               f"{reference / statistics.median(warm):.1f}x"))
        print(f"\nplanning `{FILTER_TEXT}` on a table of {args.files:,} data files in {COMMITS} commits "
              f"({args.rounds} rounds each)\n")
        print_table(("planner", "files planned", "first ms", "median ms", "p90 ms", "files/s", "vs PyIceberg"),
                    table_rows)
        print(f"\npeak RSS: serac server {server_rss:.0f} MiB (the whole server: loads and plans); "
              f"the client process {client_rss:.0f} MiB (PyIceberg and the bench)")
        return 0
    finally:
        processes.stop_all()
        if args.keep:
            print(f"kept {work}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
