#!/usr/bin/env python3
"""Maintenance beside the foreground: do small reads stay fast while a compaction runs?

One serac server (`--maintenance-interval 0`) holds a bucket of 4 KiB objects and a format v3
table made as bench/maintenance_bench.py makes it (about --files data files of 1 to 1.5 MB, a
deletion vector on each). Two foreground cells run first on the idle server, then again while
serac compacts the table (`serac table maintenance run ... icebergCompaction`, 512 MB target):

- 4 KiB GET: wrk with presigned URLs, as the S3 benchmark's GET cells;
- catalog load-table: wrk with an OAuth2 bearer token, as bench/connections_bench.py.

The table gives each cell's rate and p50/p99 latency idle and during the compaction, the ratio of
the p99s (target: at most 1.5) and the compaction's own rate (MB of data files per second) beside
it. The compaction must still be running when the second cell ends, or the run says so (give more
--files). This is a measurement, not a test.

    .venv/bin/python bench/foreground_bench.py [--files 800] [--clients 16] [--seconds 5]
"""
from __future__ import annotations

import argparse
import json
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from connections_bench import bearer_token  # noqa: E402
from maintenance_bench import make_table, prepare_input, print_table  # noqa: E402
from s3_bench import SIZES, Measurement, Processes, Serac, cpu_seconds_of_tree, make_payloads  # noqa: E402
from s3_bench import prepare_s3_server, run_wrk, write_lines  # noqa: E402

P99_GOAL = 1.5  # p99 during a compaction against idle, at most


def load_table_targets(serac: Serac, token: str, warehouse: str, table: str, path: Path) -> str:
    import urllib.request

    request = urllib.request.Request(f"{serac.endpoint}/_iceberg/v1/config?warehouse={warehouse}",
                                     headers={"Authorization": f"Bearer {token}"})
    with urllib.request.urlopen(request, timeout=30) as response:
        config = json.loads(response.read())
    prefix = {**config.get("defaults", {}), **config.get("overrides", {})}["prefix"]
    write_lines(str(path), [f"/_iceberg/v1/{prefix}/namespaces/bench/tables/{table}"])
    return str(path)


def measure(serac: Serac, targets: str, clients: int, seconds: int, headers=()) -> Measurement:
    pid = serac.proc.pid
    return run_wrk(serac.port, "GET", targets, 0, clients, seconds, 2, lambda: cpu_seconds_of_tree(pid),
                   headers=headers)


def row(label: str, idle: Measurement, busy: Measurement) -> tuple:
    def cell(m: Measurement) -> tuple[str, str]:
        if not m.ok:
            return "n/a", "-"
        return f"{m.ops_per_s():,.0f}/s", f"{m.p50_ms:.2f} / {m.p99_ms:.2f}"

    ratio = busy.p99_ms / idle.p99_ms if idle.ok and busy.ok and idle.p99_ms else None
    verdict = "n/a" if ratio is None else ("PASS" if ratio <= P99_GOAL else "MISS")
    return (label, *cell(idle), *cell(busy), "-" if ratio is None else f"{ratio:.2f}", f"<= {P99_GOAL}", verdict)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--files", type=int, default=800)
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--seconds", type=int, default=5)
    parser.add_argument("--serac", default=os.environ.get("SERAC_BIN", str(HERE.parent / "build/serac")))
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="serac-foreground-bench-"))
    processes = Processes()
    try:
        prepare_input(work, args.files)
        serac = Serac(processes, args.serac, str(work / "data"), str(work / "serac.log"),
                      ["--maintenance-interval", "0", "--log-level", "warn"])
        if not serac.start():
            print(f"foreground_bench: {serac.failure}", file=sys.stderr)
            return 1
        warehouse = "bench-" + secrets.token_hex(4)
        serac.cli("warehouse", "create", warehouse)
        serac.cli("namespace", "create", warehouse, "bench")
        data_files, data_bytes = make_table(serac, work, warehouse, "t")
        data_mb = data_bytes / 1e6
        serac.cli("table", "maintenance", "set", warehouse, "bench", "t", "--type", "icebergCompaction",
                  "--target-file-size-mb", "512")

        sizes = [SIZES["4k"]]
        files, failures = prepare_s3_server(serac, sizes, make_payloads(sizes), str(work))
        if failures:
            print(f"foreground_bench: {failures}", file=sys.stderr)
            return 1
        get_targets = files[("GET", "4 KiB")]
        token = bearer_token(serac)
        table_targets = load_table_targets(serac, token, warehouse, "t", work / "load-table.txt")
        bearer = (f"Authorization: Bearer {token}",)

        print("idle cells", file=sys.stderr)
        idle = {"get": measure(serac, get_targets, args.clients, args.seconds),
                "load": measure(serac, table_targets, args.clients, args.seconds, bearer)}

        print("compaction, and the cells beside it", file=sys.stderr)
        cpu_before = cpu_seconds_of_tree(serac.proc.pid)
        started = time.monotonic()
        compaction = subprocess.Popen([serac.binary, "table", "maintenance", "run", warehouse, "bench", "t",
                                       "--type", "icebergCompaction"], env=serac.cli_env(), stdout=subprocess.PIPE,
                                      stderr=subprocess.STDOUT, text=True)
        time.sleep(1.0)  # the job has started reading
        busy = {"get": measure(serac, get_targets, args.clients, args.seconds),
                "load": measure(serac, table_targets, args.clients, args.seconds, bearer)}
        overlapped = compaction.poll() is None
        out, _ = compaction.communicate()
        compaction_seconds = time.monotonic() - started
        compaction_cpu = cpu_seconds_of_tree(serac.proc.pid) - cpu_before
        if "succeeded" not in out:
            print(f"foreground_bench: compaction: {out}", file=sys.stderr)
            return 1

        print(f"\nforeground beside a compaction: {os.cpu_count()} CPUs, loopback, wrk -t2 -c{args.clients}, "
              f"{args.seconds}s per cell\n")
        print_table(("cell", "idle", "idle p50/p99 ms", "compacting", "compacting p50/p99 ms", "p99 ratio", "goal",
                     ""),
                    [row("4 KiB GET", idle["get"], busy["get"]), row("catalog load-table", idle["load"], busy["load"])])
        print(f"\ncompaction: {data_files:,} data files, {data_mb:,.0f} MB in {compaction_seconds:.1f} s "
              f"({data_mb / compaction_seconds:.1f} MB/s while the cells ran beside it); "
              f"server CPU {compaction_cpu:.1f} s over that time")
        if not overlapped:
            print("note: the compaction ended before the second cell did; give more --files")
        return 0
    finally:
        processes.stop_all()
        if args.keep:
            print(f"kept {work}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
