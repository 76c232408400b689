#!/usr/bin/env python3
"""What a cache that stays correct across nodes would cost, measured on PostgreSQL itself.

A node may answer a read from memory only if it knows no other node changed the row since. The
two ways the multi-node design names, and what each costs per read or write, side by side in one
run against one throwaway PostgreSQL (fsync on), with pgbench driving prepared statements:

  row       SELECT of a catalog entity's row by key: what a table load or a small GET reads today
  version   SELECT of only a version number by the same key: a cache checked on read
  floor     SELECT 1: the least any round trip to PostgreSQL costs
  fence     NOTIFY on a channel a session LISTENs to: the least a LISTEN/NOTIFY read fence costs
            (a node sends itself a notification and waits for it, so that every change committed
            before has reached it; it is a transaction of its own)
  write     UPDATE of the row (a commit's compare-and-swap)
  write+n   the same UPDATE and a pg_notify in one transaction: what LISTEN/NOTIFY adds to a write

Not a test: it prints a table (bench/README.md, "Caches across nodes").

  bench/cache_check_bench.py [--seconds 5] [--clients 1,16] [--rows 1000]
"""
from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from multi_node_bench import PG_BIN, Postgres, as_postgres, cpu_seconds_of_postgres  # noqa: E402

KEY = "\\set k random(1, {rows})\n"
VARIANTS = {
    "row": KEY + ("SELECT kind, uuid, metadata_location, location, created_ms, updated_ms FROM bench_entities "
                  "WHERE warehouse = 'wh' AND namespace = '\\x00'::bytea AND name = :k;\n"),
    "version": KEY + ("SELECT version FROM bench_entities "
                      "WHERE warehouse = 'wh' AND namespace = '\\x00'::bytea AND name = :k;\n"),
    "floor": "SELECT 1;\n",
    "fence": "NOTIFY serac_bench_fence;\n",
    "write": KEY + ("UPDATE bench_entities SET version = version + 1, updated_ms = updated_ms + 1 "
                    "WHERE warehouse = 'wh' AND namespace = '\\x00'::bytea AND name = :k;\n"),
    "write+n": KEY + ("BEGIN;\nUPDATE bench_entities SET version = version + 1, updated_ms = updated_ms + 1 "
                      "WHERE warehouse = 'wh' AND namespace = '\\x00'::bytea AND name = :k;\n"
                      "SELECT pg_notify('serac_bench_changes', :k::text);\nCOMMIT;\n"),
}


def prepare(postgres: Postgres, rows: int):
    postgres.sql("CREATE TABLE bench_entities(warehouse text COLLATE \"C\" NOT NULL, namespace bytea NOT NULL, "
                 "name bytea NOT NULL, kind smallint NOT NULL, uuid text NOT NULL, metadata_location text NOT NULL, "
                 "location text NOT NULL, created_ms bigint NOT NULL, updated_ms bigint NOT NULL, "
                 "version bigint NOT NULL DEFAULT 1, PRIMARY KEY(warehouse, namespace, name))")
    postgres.sql("INSERT INTO bench_entities(warehouse, namespace, name, kind, uuid, metadata_location, location, "
                 "created_ms, updated_ms) SELECT 'wh', '\\x00'::bytea, convert_to(i::text, 'UTF8'), 0, "
                 "md5(i::text), 's3://wh/t' || i || '/metadata/00001-' || md5(i::text) || '.metadata.json', "
                 f"'s3://wh/t' || i, 0, 0 FROM generate_series(1, {rows}) AS i")
    postgres.sql("VACUUM ANALYZE bench_entities")


def run_pgbench(postgres: Postgres, script: str, clients: int, seconds: float, work: str) -> tuple[float, float]:
    """(transactions per second, PostgreSQL CPU microseconds per transaction)."""
    path = os.path.join(work, "script.sql")
    with open(path, "w") as f:
        f.write(script)
    os.chmod(path, 0o644)
    argv = [os.path.join(PG_BIN, "pgbench"), "-n", "-M", "prepared", "-h", "127.0.0.1", "-p", str(postgres.port),
            "-U", "postgres", "-c", str(clients), "-j", str(min(clients, 2)), "-T", str(int(seconds)), "-f", path,
            "postgres"]
    pid = postgres.postmaster_pid()
    cpu_before = cpu_seconds_of_postgres(pid)
    done = subprocess.run(as_postgres(argv), capture_output=True, text=True)
    cpu_after = cpu_seconds_of_postgres(pid)
    if done.returncode != 0:
        raise RuntimeError(f"pgbench: {done.stderr.strip()[-400:]}")
    processed = re.search(r"number of transactions actually processed: (\d+)", done.stdout)
    tps = re.search(r"tps = ([0-9.]+)", done.stdout)
    count = int(processed.group(1)) if processed else 0
    return (float(tps.group(1)) if tps else 0.0), ((cpu_after - cpu_before) * 1e6 / count if count else 0.0)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=5)
    parser.add_argument("--clients", default="1,16")
    parser.add_argument("--rows", type=int, default=1000)
    args = parser.parse_args()
    clients = [int(c) for c in args.clients.split(",")]
    work = tempfile.mkdtemp(prefix="serac-cache-bench-", dir=os.environ.get("BENCH_TMPDIR"))
    os.chmod(work, 0o755)
    postgres = Postgres(os.path.join(work, "pg"))
    listener = None
    try:
        if not postgres.start():
            print(f"cache_check_bench: {postgres.failure}", file=sys.stderr)
            return 2
        prepare(postgres, args.rows)
        # Listening sessions, as nodes would keep: a NOTIFY nobody listens to is not the cost.
        listener = subprocess.Popen(postgres.psql_argv(), stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL, text=True)
        listener.stdin.write("LISTEN serac_bench_fence;\nLISTEN serac_bench_changes;\n")
        listener.stdin.flush()
        time.sleep(0.5)
        results: dict[tuple[str, int], tuple[float, float]] = {}
        for count in clients:
            for name, script in VARIANTS.items():
                results[(name, count)] = run_pgbench(postgres, script.format(rows=args.rows), count, args.seconds,
                                                     work)
        print(f"PostgreSQL 15, fsync on, pgbench -M prepared, {args.seconds:g} s per cell, {args.rows} rows\n")
        header = "| variant | " + " | ".join(f"{c} cl tx/s | {c} cl PG CPU µs/tx | {c} cl ×row" for c in clients)
        print(header + " |")
        print("|---|" + "--:|" * (3 * len(clients)))
        for name in VARIANTS:
            cells = []
            for count in clients:
                tps, cpu = results[(name, count)]
                base = results[("row", count)][1]
                cells += [f"{tps:,.0f}", f"{cpu:.1f}", f"{cpu / base:.2f}" if base else "-"]
            print(f"| {name} | " + " | ".join(cells) + " |")
        for count in clients:
            write, notified = results[("write", count)][1], results[("write+n", count)][1]
            print(f"\n{count} clients: NOTIFY adds {notified - write:.1f} µs of PostgreSQL CPU per write; a fence costs "
                  f"{results[('fence', count)][1] / results[('row', count)][1]:.2f}× a row read, a version check "
                  f"{results[('version', count)][1] / results[('row', count)][1]:.2f}×.")
        return 0
    finally:
        if listener:
            listener.stdin.close()
            listener.wait()
        postgres.stop()
        subprocess.run(["rm", "-rf", work])


if __name__ == "__main__":
    sys.exit(main())
