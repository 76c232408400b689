#!/usr/bin/env python3
"""`serac sync` from a real PostgreSQL 15 into a real serac, beside PostgreSQL's own read limit.

- full load: a table of ROWS rows and 10 mixed-type columns (about 150 bytes a row on disk, as in
  OLake's benchmark) read by `COPY ... TO STDOUT (FORMAT binary)` into /dev/null (the source's own
  read limit), and loaded by `serac sync` in cdc mode (the load under the slot's snapshot, then the
  catch-up, which is empty); rows/s, MB/s of the table's heap, rows/s per CPU second of serac, and
  serac's peak RSS; the ratio against COPY;
- changes: CHANGES inserts, updates and deletes (in transactions of about 20,000) made after the
  load in three parts, applied by a run without the key index (`key_index: false`), one with it
  while it is made (each data file read once), and one with it made; changes/s, CPU seconds, peak
  RSS and the ratio to the first. `--key uuid`
  keys the table by a uuid (keys without locality: every data file's key range holds some of every
  flush's keys) instead of the order id;
- lag: with `serac sync --follow` running, the time from the commit of one row until a table
  snapshot records its LSN (median of 5).

Not a test: it prints tables and exits 0 unless it could not run.

    bench/sync_bench.py [--rows 10000000] [--changes 5000000] [--update-type pos|dv|eq] [--key bigint|uuid]
                        [--keep]
"""
from __future__ import annotations

import argparse
import json
import os
import pwd
import secrets
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
from s3_bench import Processes, Serac  # noqa: E402
from table_load_bench import run_measured  # noqa: E402

PG_BIN = Path("/usr/lib/postgresql/15/bin")
REGION = "us-east-1"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def as_postgres(argv: list[str]) -> list[str]:
    return ["runuser", "-u", "postgres", "--", *argv] if os.geteuid() == 0 else argv


class Postgres:
    def __init__(self, directory: Path):
        self.directory, self.port = directory, free_port()
        if os.geteuid() == 0:
            account = pwd.getpwnam("postgres")
            os.chown(directory, account.pw_uid, account.pw_gid)
        self.data = directory / "data"
        subprocess.run(as_postgres([str(PG_BIN / "initdb"), "-D", str(self.data), "-A", "trust", "-U", "postgres",
                                    "--no-sync", "-E", "UTF8"]), check=True, capture_output=True)
        options = (f"-c wal_level=logical -c max_replication_slots=8 -c max_wal_senders=8 "
                   f"-c listen_addresses=127.0.0.1 -c unix_socket_directories={directory} -p {self.port} "
                   f"-c shared_buffers=1GB -c max_wal_size=8GB -c synchronous_commit=off")
        subprocess.run(as_postgres([str(PG_BIN / "pg_ctl"), "-D", str(self.data), "-l", str(directory / "log"),
                                    "-w", "-o", options, "start"]), check=True, capture_output=True)

    def psql(self, sql: str, stdout=subprocess.PIPE) -> str:
        out = subprocess.run([str(PG_BIN / "psql"), "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h",
                              "127.0.0.1", "-p", str(self.port), "-U", "postgres", "-d", "postgres", "-c", sql],
                             stdout=stdout, stderr=subprocess.PIPE, text=stdout == subprocess.PIPE, check=False)
        if out.returncode != 0:
            raise RuntimeError(f"psql: {out.stderr}")
        return out.stdout if stdout == subprocess.PIPE else ""

    def stop(self):
        subprocess.run(as_postgres([str(PG_BIN / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "stop"]),
                       capture_output=True)


CREATE = """
CREATE TABLE orders (id bigint NOT NULL, account int, amount double precision, quantity bigint,
                     ts timestamp, day date, name text, status text, flag boolean, note text, ref uuid,
                     PRIMARY KEY ({key}));
CREATE INDEX ON orders (id);
CREATE PUBLICATION bench_pub FOR TABLE orders;
"""
FILL = """
INSERT INTO orders SELECT i, (random() * 1e6)::int, random() * 1000, (random() * 99 + 1)::bigint,
  TIMESTAMP '2024-01-01' + random() * INTERVAL '365 days', DATE '2024-01-01' + (random() * 364)::int,
  'customer-' || lpad((random() * 50000)::int::text, 6, '0'),
  (ARRAY['new', 'paid', 'shipped', 'returned'])[1 + (random() * 3)::int], random() < 0.5,
  'note ' || (random() * 977)::int || ' for the order', md5(i::text)::uuid
FROM generate_series({first}, {last}) i
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--changes", type=int, default=5_000_000)
    parser.add_argument("--update-type", default="", choices=["", "pos", "dv", "eq"])
    parser.add_argument("--key", default="bigint", choices=["bigint", "uuid"],
                        help="the primary key: the order id, or a uuid made from it (keys without locality: "
                             "every data file's key range holds some of each flush's keys)")
    parser.add_argument("--serac", default=os.environ.get("SERAC_BIN", str(REPO / "build/serac")))
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="serac-sync-bench-"))
    os.chmod(work, 0o755)
    processes = Processes()
    pg_dir = work / "pg"
    pg_dir.mkdir()
    postgres = None
    try:
        postgres = Postgres(pg_dir)
        print(f"filling orders with {args.rows:,} rows", file=sys.stderr)
        postgres.psql(CREATE.format(key="id" if args.key == "bigint" else "ref"))
        step = 1_000_000
        for first in range(1, args.rows + 1, step):
            postgres.psql(FILL.format(first=first, last=min(args.rows, first + step - 1)))
        postgres.psql("VACUUM ANALYZE orders")
        heap_bytes = int(postgres.psql("SELECT pg_relation_size('orders')").strip())

        start = time.monotonic()
        with open(os.devnull, "wb") as devnull:
            postgres.psql("COPY orders TO STDOUT (FORMAT binary)", stdout=devnull)
        copy_seconds = time.monotonic() - start

        serac = Serac(processes, args.serac, str(work / "data"), str(work / "serac.log"), [])
        if not serac.start():
            print(f"sync_bench: {serac.failure}", file=sys.stderr)
            return 1
        endpoint = f"http://127.0.0.1:{serac.port}"
        env = dict(os.environ, SERAC_ENDPOINT=endpoint, SERAC_ACCESS_KEY=serac.user, SERAC_SECRET_KEY=serac.password)
        warehouse = "bench-" + secrets.token_hex(4)
        subprocess.run([args.serac, "warehouse", "create", warehouse], env=env, check=True, capture_output=True)

        files = work / "files"
        files.mkdir()
        (files / "source.json").write_text(json.dumps({
            "host": "127.0.0.1", "port": postgres.port, "database": "postgres", "username": "postgres",
            "password": "", "ssl": {"mode": "disable"}, "max_threads": 2,
            "update_method": {"replication_slot": "bench_slot", "publication": "bench_pub", "initial_wait_time": 120}}))
        writer = {
            "catalog_type": "rest", "rest_catalog_url": endpoint + "/_iceberg", "iceberg_s3_path": warehouse,
            "iceberg_db": "bench", "rest_signing_v_4": True, "rest_signing_name": "s3tables",
            "rest_signing_region": REGION, "s3_endpoint": endpoint, "s3_use_ssl": False, "s3_path_style": True,
            "aws_region": REGION, "aws_access_key": serac.user, "aws_secret_key": serac.password}
        (files / "destination.json").write_text(json.dumps({"type": "ICEBERG", "writer": writer}))
        (files / "destination-no-index.json").write_text(
            json.dumps({"type": "ICEBERG", "writer": {**writer, "key_index": False}}))
        selection = {"stream_name": "orders", "partition_regex": "", "normalization": True, "append_mode": False}
        if args.update_type:
            selection["update_type"] = args.update_type
        (files / "streams.json").write_text(json.dumps({
            "streams": [{"stream": {"name": "orders", "namespace": "public", "sync_mode": "cdc",
                                    "supported_sync_modes": ["cdc"], "type_schema": {"properties": {}}}}],
            "selected_streams": {"public": [selection]}}))
        def sync_argv_to(destination: str) -> list[str]:
            return [args.serac, "sync", "--config", str(files / "source.json"), "--streams",
                    str(files / "streams.json"), "--destination", str(files / destination),
                    "--state", str(files / "state.json")]
        sync_argv = sync_argv_to("destination.json")

        print("full load", file=sys.stderr)
        load_wall, load_cpu, load_peak, load_output = run_measured(sync_argv, dict(os.environ))
        # The load alone, as the run logs it ("loaded N rows in S s"): without start-up, slot and catch-up.
        load_only = next((float(line.split(" rows in ", 1)[1].split()[0]) for line in load_output.splitlines()
                          if "loaded " in line and " rows in " in line), load_wall)

        # The changes in three parts: applied without the key index, then with it while it is made
        # (the data files read once), then with it made.
        third = args.changes // 9
        per_transaction = 10_000
        next_id = args.rows + 1
        catch_ups = []
        for half, destination in enumerate(("destination-no-index.json", "destination.json", "destination.json")):
            print(f"making {args.changes // 3:,} changes", file=sys.stderr)
            statements = []
            for offset in range(half * third, (half + 1) * third, per_transaction):
                count = min(per_transaction, (half + 1) * third - offset)
                statements.append("BEGIN")
                statements.append(FILL.format(first=next_id, last=next_id + count - 1))
                next_id += count
                # Updates and deletes of existing rows spread over the table (every key hit once).
                statements.append(f"UPDATE orders SET amount = amount + 1, status = 'paid' WHERE id BETWEEN "
                                  f"{1 + 2 * offset} AND {2 * offset + count} AND id % 2 = 1")
                statements.append(f"UPDATE orders SET amount = amount + 1 WHERE id BETWEEN {1 + 2 * offset} AND "
                                  f"{2 * offset + 2 * count} AND id % 2 = 0 AND id % 4 = 0")
                statements.append(f"DELETE FROM orders WHERE id BETWEEN {1 + 2 * offset} AND "
                                  f"{2 * offset + 2 * count} AND id % 4 = 2")
                statements.append("COMMIT")
                if len(statements) >= 60:
                    postgres.psql(";".join(statements))
                    statements = []
            if statements:
                postgres.psql(";".join(statements))
            print("changes", file=sys.stderr)
            wall, cpu, peak, output = run_measured(sync_argv_to(destination), dict(os.environ))
            applied = 0
            for line in output.splitlines():
                if "applied " in line:
                    applied = int(line.split("applied ", 1)[1].split()[0])
            catch_ups.append((wall, cpu, peak, applied))

        # Lag: one row committed while `--follow` runs, until a snapshot names its LSN.
        lags = []
        follower = processes.start(sync_argv + ["--follow"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            time.sleep(2)
            for i in range(5):
                committed = time.monotonic()
                lsn = postgres.psql(f"INSERT INTO orders (id, ref) VALUES ({next_id + i}, "
                                    f"md5(({next_id + i})::text)::uuid); SELECT pg_current_wal_lsn()").strip()
                target = parse_lsn(lsn)
                while time.monotonic() - committed < 30:
                    state = json.loads((files / "state.json").read_text() or "{}")
                    if parse_lsn(state.get("global", {}).get("state", {}).get("lsn", "0/0")) >= target:
                        lags.append(time.monotonic() - committed)
                        break
                    time.sleep(0.02)
        finally:
            follower.terminate()
            follower.wait(timeout=30)

        mb = heap_bytes / 1e6
        print()
        print(f"full load of {args.rows:,} rows ({mb:,.0f} MB of heap), update_type {args.update_type or 'pos'}")
        print(f"{'reader':<34} {'seconds':>8} {'rows/s':>10} {'MB/s':>8} {'rows/CPU s':>11} {'peak RSS':>9} {'vs COPY':>8}")
        print(f"{'COPY TO STDOUT (FORMAT binary)':<34} {copy_seconds:>8.2f} {args.rows / copy_seconds:>10,.0f} "
              f"{mb / copy_seconds:>8.1f} {'':>11} {'':>9} {1.0:>8.2f}")
        print(f"{'serac sync (cdc: whole run)':<34} {load_wall:>8.2f} {args.rows / load_wall:>10,.0f} "
              f"{mb / load_wall:>8.1f} {args.rows / max(load_cpu, 1e-9):>11,.0f} {load_peak / 1024:>7.0f}Mi "
              f"{copy_seconds / load_wall:>8.2f}")
        print(f"{'serac sync (the load alone)':<34} {load_only:>8.2f} {args.rows / load_only:>10,.0f} "
              f"{mb / load_only:>8.1f} {'':>11} {'':>9} {copy_seconds / load_only:>8.2f}")
        print()
        print(f"changes: about {args.changes:,} inserts, updates and deletes in transactions of about "
              f"{per_transaction * 2:,}, keyed by {args.key}, in three parts: applied without the key index, "
              f"with it while it is made, with it made")
        print(f"{'run':<34} {'seconds':>8} {'changes':>10} {'changes/s':>10} {'CPU s':>8} {'peak RSS':>9} "
              f"{'vs no index':>11}")
        base_rate = catch_ups[0][3] / catch_ups[0][0]
        for name, (wall, cpu, peak, applied) in zip(
                ("serac sync, no key index", "serac sync, key index being made", "serac sync, key index made"),
                catch_ups):
            print(f"{name:<34} {wall:>8.2f} {applied:>10,} {applied / wall:>10,.0f} {cpu:>8.1f} "
                  f"{peak / 1024:>7.0f}Mi {applied / wall / base_rate:>11.2f}")
        print()
        if lags:
            print(f"lag (commit to snapshot, --follow): median {statistics.median(lags):.2f} s, "
                  f"max {max(lags):.2f} s over {len(lags)} rows")
        else:
            print("lag: no row seen within 30 s")
        return 0
    finally:
        processes.stop_all()
        if postgres is not None:
            postgres.stop()
        if args.keep:
            print(f"kept {work}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)


def parse_lsn(text: str) -> int:
    high, low = text.split("/")
    return (int(high, 16) << 32) | int(low, 16)


if __name__ == "__main__":
    sys.exit(main())
