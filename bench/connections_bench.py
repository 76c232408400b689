#!/usr/bin/env python3
"""Catalog load-table from 1 to 1,024 connections: does serac serve many connections as fast as a
few? wrk (two threads, like the S3 benchmark's GET cells) sends GET .../tables/<t> with an OAuth2
bearer token, as PyIceberg does with a token, over 1, 8, 64, 256 and 1,024 keep-alive connections.

With --baseline, a second serac binary (say, the one before a change) is measured in the same run,
cell by cell, the two alternating which goes first. Besides throughput, latency and CPU, each cell
shows the most threads serac ran at once (sampled every 50 ms): an event loop per core, plus the
spare threads its balancer added while a loop was blocked.

This is a measurement, not a test: it prints a table and marks the targets PASS or MISS.

    .venv/bin/python bench/connections_bench.py [--serac build/serac] [--baseline OLD_SERAC]
        [--clients 1,8,64,256,1024] [--seconds 5]
"""

import argparse
import json
import os
import shutil
import signal
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request
from dataclasses import dataclass, field

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from catalog_bench import Endpoint, prepare_catalog  # noqa: E402
from catalog_bench import LOAD_TABLE  # noqa: E402
from s3_bench import Measurement, Processes, Serac, cpu_seconds_of_tree, exit_on_signal, proc_status_kib  # noqa: E402
from s3_bench import run_wrk, write_lines  # noqa: E402

SCALE_GOAL = 0.90  # load-table at 256 connections against its rate at 8


@dataclass
class Server:
    label: str
    serac: Serac
    token: str = ""
    targets_file: str = ""
    cells: dict = field(default_factory=dict)  # clients -> (Measurement, most threads)


def bearer_token(serac: Serac) -> str:
    form = urllib.parse.urlencode({"grant_type": "client_credentials", "client_id": serac.user,
                                   "client_secret": serac.password, "scope": "catalog"}).encode()
    request = urllib.request.Request(f"{serac.endpoint}/_iceberg/v1/oauth/tokens", data=form, method="POST",
                                     headers={"Content-Type": "application/x-www-form-urlencoded"})
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())["access_token"]


def start(processes: Processes, label: str, binary: str, work_dir: str, extra_args: list[str]) -> Server:
    serac = Serac(processes, os.path.abspath(binary), os.path.join(work_dir, f"{label}-data"),
                  os.path.join(work_dir, f"{label}.log"), ["--log-level", "warn", *extra_args])
    if not serac.start():
        raise RuntimeError(f"{label}: {serac.failure}\n{serac.log_tail()}")
    endpoint = Endpoint(label, serac.port, "/_iceberg", access_key=serac.user, secret_key=serac.password)
    prepare_catalog(endpoint, 0, warehouse_admin=True)
    server = Server(label, serac, bearer_token(serac), os.path.join(work_dir, f"{label}-targets.txt"))
    write_lines(server.targets_file, [endpoint.table_path(LOAD_TABLE)])
    return server


def most_threads_while(pid: int, run):
    """Runs run() while sampling the process's thread count; returns (run's result, the most seen)."""
    most, stop = [0], threading.Event()

    def sample():
        while not stop.is_set():
            most[0] = max(most[0], proc_status_kib(pid, "Threads") or 0)
            stop.wait(0.05)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        return run(), most[0]
    finally:
        stop.set()
        sampler.join()


def measure(server: Server, clients: int, args):
    pid = server.serac.proc.pid
    return most_threads_while(pid, lambda: run_wrk(
        server.serac.port, "GET", server.targets_file, 0, clients, args.seconds, args.wrk_threads,
        lambda: cpu_seconds_of_tree(pid), headers=(f"Authorization: Bearer {server.token}",)))


def fmt(m: Measurement) -> list[str]:
    if not m.ok:
        return ["n/a", "-", "-"]
    return [f"{m.ops_per_s():,.0f}/s", f"{m.p50_ms:.2f} / {m.p99_ms:.2f}", f"{m.cpu_percent:.0f}/{m.generator_cpu_percent:.0f}"]


def print_table(servers: list[Server], clients: list[int]):
    header = ["clients"]
    for s in servers:
        header += [f"{s.label}", f"{s.label} p50/p99 ms", f"CPU% {s.label}/wrk", f"{s.label} threads"]
    if len(servers) == 2:
        header.append(f"{servers[0].label}/{servers[1].label}")
    rows = []
    for n in clients:
        row = [str(n)]
        for s in servers:
            m, threads = s.cells[n]
            row += fmt(m) + [str(threads)]
        if len(servers) == 2:
            a, b = servers[0].cells[n][0], servers[1].cells[n][0]
            row.append(f"{a.ops_per_s() / b.ops_per_s():.2f}" if a.ok and b.ok and b.ops_per_s() else "-")
        rows.append(row)
    widths = [max(len(r[i]) for r in rows + [header]) for i in range(len(header))]
    print("  ".join(h.rjust(w) for h, w in zip(header, widths)))
    print("  ".join("-" * w for w in widths))
    for r in rows:
        print("  ".join(v.rjust(w) for v, w in zip(r, widths)))
    notes = [f"  {s.label} x{n}: {s.cells[n][0].note}" for s in servers for n in clients if s.cells[n][0].note]
    if notes:
        print("notes:\n" + "\n".join(notes))


def print_targets(server: Server):
    print("\ntargets:")
    base = server.cells.get(8, (Measurement(), 0))[0]
    for n in (256, 1024):
        if n not in server.cells:
            continue
        m = server.cells[n][0]
        if not (m.ok and base.ok):
            print(f"load-table at {n} connections vs at 8  -  >= {SCALE_GOAL:.2f}  n/a")
            continue
        ratio = m.ops_per_s() / base.ops_per_s()
        verdict = "PASS" if ratio >= SCALE_GOAL else "MISS"
        print(f"load-table at {n} connections vs at 8  {ratio:.2f}  >= {SCALE_GOAL:.2f}  {verdict}")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--serac", default=os.environ.get("SERAC_BIN", "build/serac"))
    p.add_argument("--baseline", help="a second serac binary, measured beside the first")
    p.add_argument("--clients", default="1,8,64,256,1024")
    p.add_argument("--seconds", type=int, default=5)
    p.add_argument("--wrk-threads", type=int, default=2)
    p.add_argument("--tmpdir", default=os.environ.get("BENCH_TMPDIR"))
    p.add_argument("--serac-arg", action="append", default=[], metavar="ARG",
                   help="extra argument for every 'serac server', e.g. --serac-arg=--meta-store=postgresql://...")
    p.add_argument("--baseline-arg", action="append", default=[], metavar="ARG",
                   help="extra argument for the baseline's server only (say, another database)")
    args = p.parse_args()
    if not shutil.which("wrk"):
        print("wrk not found (Debian package wrk)", file=sys.stderr)
        return 2
    signal.signal(signal.SIGINT, signal.default_int_handler)
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, exit_on_signal)
    clients = [int(c) for c in args.clients.split(",")]
    processes = Processes()
    work_dir = tempfile.mkdtemp(prefix="serac-connbench-", dir=args.tmpdir)
    try:
        servers = [start(processes, "serac", args.serac, work_dir, args.serac_arg)]
        if args.baseline:
            servers.append(start(processes, "baseline", args.baseline, work_dir,
                                 args.baseline_arg or args.serac_arg))
        for i, n in enumerate(clients):
            print(f"load-table x{n} ({args.seconds}s each)", file=sys.stderr, flush=True)
            order = servers if i % 2 == 0 else list(reversed(servers))
            for server in order:
                server.cells[n] = measure(server, n, args)
        print(f"\nserac catalog load-table by connections: {os.cpu_count()} CPUs, loopback, "
              f"wrk -t{args.wrk_threads}, {args.seconds}s per cell, bearer token\n")
        print_table(servers, clients)
        print_targets(servers[0])
        return 0
    except KeyboardInterrupt:
        return 130
    finally:
        processes.stop_all()
        shutil.rmtree(work_dir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
