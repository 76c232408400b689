#!/usr/bin/env python3
"""Table writes: `serac table load` against PyIceberg's `table.append` of the same rows, into tables
of the same serac server, side by side in one run.

- load cells: a table of ROWS rows and 10 mixed-type columns (about 150 bytes a row) loaded from
  Parquet and from CSV by `serac table load`, and appended by PyIceberg from the same pyarrow table
  in memory; rows/s, MB/s of input, rows/s per core (CPU seconds of the writing process), and the
  writer's peak RSS;
- manifest decode: entries/s of the streaming manifest reader (the C++ benchmark case
  ManifestBenchmark.DecodeEntriesPerSecond);
- commit cost: one more small append to a table of 100 data files and to one of 10,000 (both made
  by one load with a tiny target file size): the commit's time should not grow with the file count.

Not a test: it prints tables and exits 0 unless it could not run.

    bench/table_load_bench.py [--rows 10000000] [--keep]
"""
from __future__ import annotations

import argparse
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
from s3_bench import Processes, Serac  # noqa: E402

REGION = "us-east-1"


def make_table(rows: int):
    import numpy as np
    import pyarrow as pa
    rng = np.random.default_rng(7)
    base = np.datetime64("2024-01-01T00:00:00", "us")
    names = np.array([f"customer-{i:06d}" for i in range(50_000)])
    return pa.table({
        "id": pa.array(np.arange(rows, dtype=np.int64)),
        "account": pa.array(rng.integers(0, 1_000_000, rows, dtype=np.int32)),
        "amount": pa.array(rng.random(rows) * 1000),
        "quantity": pa.array(rng.integers(1, 100, rows, dtype=np.int64)),
        "ts": pa.array(base + rng.integers(0, 86_400_000_000 * 365, rows).astype("timedelta64[us]")),
        "day": pa.array((np.datetime64("2024-01-01") + rng.integers(0, 365, rows).astype("timedelta64[D]"))),
        "name": pa.array(names[rng.integers(0, len(names), rows)]),
        "status": pa.array(np.array(["new", "paid", "shipped", "returned"])[rng.integers(0, 4, rows)]),
        "flag": pa.array(rng.integers(0, 2, rows).astype(bool)),
        "note": pa.array(np.array([f"note {i % 977} for the order" for i in range(1000)])[rng.integers(0, 1000, rows)]),
    })


def run_measured(argv: list[str], env: dict) -> tuple[float, float, int, str]:
    """Runs a command; returns wall seconds, CPU seconds, peak RSS (KiB) and its output. The peak is
    the child's own VmHWM, polled while it runs: getrusage's ru_maxrss would include this process's
    resident set, which Linux carries into a child's peak across exec."""
    with tempfile.TemporaryFile() as output:
        actions = [(os.POSIX_SPAWN_DUP2, output.fileno(), 1), (os.POSIX_SPAWN_DUP2, output.fileno(), 2)]
        start = time.monotonic()
        pid = os.posix_spawn(argv[0], argv, env, file_actions=actions)
        peak_kib = 0
        while True:
            waited, status, usage = os.wait4(pid, os.WNOHANG)
            if waited == pid:
                break
            try:
                with open(f"/proc/{pid}/status") as proc_status:
                    for line in proc_status:
                        if line.startswith("VmHWM:"):
                            peak_kib = max(peak_kib, int(line.split()[1]))
            except (OSError, ValueError):
                pass
            time.sleep(0.02)
        wall = time.monotonic() - start
        output.seek(0)
        text = output.read().decode(errors="replace")
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{' '.join(argv[:4])}: {text.strip()[-2000:]}")
    return wall, usage.ru_utime + usage.ru_stime, peak_kib, text


PYICEBERG_APPEND = r"""
import resource, sys, time
import pyarrow.parquet as pq
from pyiceberg.catalog import load_catalog
endpoint, user, password, warehouse, path = sys.argv[1:6]
catalog = load_catalog("bench", **{
    "type": "rest", "uri": endpoint + "/_iceberg", "warehouse": warehouse, "rest.sigv4-enabled": "true",
    "rest.signing-name": "s3tables", "rest.signing-region": "us-east-1", "s3.endpoint": endpoint,
    "s3.access-key-id": user, "s3.secret-access-key": password, "s3.region": "us-east-1",
    "s3.path-style-access": "true", "client.access-key-id": user, "client.secret-access-key": password,
    "client.region": "us-east-1"})
data = pq.read_table(path)
table = catalog.create_table("bench.pyiceberg", data.schema)
start = time.monotonic()
usage = resource.getrusage(resource.RUSAGE_SELF)
table.append(data)
after = resource.getrusage(resource.RUSAGE_SELF)
print(time.monotonic() - start, (after.ru_utime - usage.ru_utime) + (after.ru_stime - usage.ru_stime),
      after.ru_maxrss)
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--serac", default=os.environ.get("SERAC_BIN", str(REPO / "build/serac")))
    parser.add_argument("--python", default=str(REPO / ".venv/bin/python"))
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="serac-load-bench-"))
    processes = Processes()
    try:
        print(f"generating {args.rows:,} rows", file=sys.stderr)
        table = make_table(args.rows)
        import pyarrow.csv as csv
        import pyarrow.parquet as pq
        parquet_path, csv_path = work / "input.parquet", work / "input.csv"
        pq.write_table(table, parquet_path, compression="zstd")
        csv.write_csv(table, csv_path)
        raw_bytes = table.nbytes

        serac = Serac(processes, args.serac, str(work / "data"), str(work / "serac.log"), [])
        if not serac.start():
            print(f"table_load_bench: {serac.failure}", file=sys.stderr)
            return 1
        endpoint = f"http://127.0.0.1:{serac.port}"
        env = dict(os.environ, SERAC_ENDPOINT=endpoint, SERAC_ACCESS_KEY=serac.user, SERAC_SECRET_KEY=serac.password)
        warehouse = "bench-" + secrets.token_hex(4)
        for argv in (["warehouse", "create", warehouse], ["namespace", "create", warehouse, "bench"]):
            subprocess.run([args.serac, *argv], env=env, check=True, capture_output=True)

        rows = []
        for label, path in (("serac table load (Parquet)", parquet_path), ("serac table load (CSV)", csv_path)):
            name = "from_" + path.suffix[1:]
            wall, cpu, rss, out = run_measured(
                [args.serac, "table", "load", warehouse, "bench", name, str(path), "--create"], env)
            rows.append((label, wall, cpu, rss, path.stat().st_size))
        try:
            _, _, py_peak_kib, text = run_measured([args.python, "-c", PYICEBERG_APPEND, endpoint, serac.user,
                                                    serac.password, warehouse, str(parquet_path)], dict(os.environ))
        except RuntimeError as e:
            print(f"table_load_bench: PyIceberg append failed: {e}", file=sys.stderr)
            return 1
        wall, cpu, _ = (float(v) for v in text.split()[-3:])
        rows.append(("PyIceberg table.append (reference)", wall, cpu, py_peak_kib, raw_bytes))

        reference_rate = args.rows / rows[-1][2] if rows[-1][2] else float("nan")
        print(f"\ntable load, {args.rows:,} rows x 10 columns ({raw_bytes / args.rows:.0f} bytes a row in Arrow), "
              f"one serac server on loopback, 2 CPUs")
        header = ("writer", "seconds", "rows/s", "MB/s (input)", "CPU s", "rows/s per core", "vs PyIceberg/core",
                  "peak RSS MiB")
        table_rows = []
        for label, wall, cpu, rss, input_bytes in rows:
            per_core = args.rows / cpu if cpu else float("nan")
            table_rows.append((label, f"{wall:.1f}", f"{args.rows / wall:,.0f}", f"{input_bytes / wall / 1e6:.1f}",
                               f"{cpu:.1f}", f"{per_core:,.0f}", f"{per_core / reference_rate:.2f}",
                               f"{rss / 1024:.0f}"))
        widths = [max(len(str(r[i])) for r in table_rows + [header]) for i in range(len(header))]
        for row in [header] + table_rows:
            print("  ".join(str(v).ljust(w) for v, w in zip(row, widths)))

        # Manifest decode.
        tester = Path(args.serac).resolve().parent / "src/iceberg/iceberg_test"
        if tester.exists():
            out = subprocess.run([str(tester), "--gtest_also_run_disabled_tests",
                                  "--gtest_filter=ManifestBenchmark.*"], capture_output=True, text=True).stdout
            line = next((l for l in out.splitlines() if l.startswith("manifest decode")), "manifest decode: not run")
            print("\n" + line)

        # Commit time at 100 and 10,000 files.
        print("\ncommit of a 1-row append to a table of N data files (median of 5)")
        small = work / "one.csv"
        small.write_text("id\n1\n")
        for files in (100, 10_000):
            name = f"files_{files}"
            subprocess.run([args.serac, "table", "create", warehouse, "bench", name, "--schema",
                            '{"type": "struct", "schema-id": 0, "fields": [{"id": 1, "name": "id", "required": false, '
                            '"type": "long"}]}', "--property", "write.target-file-size-bytes=1"],
                           env=env, check=True, capture_output=True)
            many = work / f"many_{files}.csv"
            many.write_text("id\n" + "".join(f"{i}\n" for i in range(files)))
            # A target of one byte rolls a file after every slice: one row per file.
            subprocess.run([args.serac, "table", "load", warehouse, "bench", name, str(many)], env=env, check=True,
                           capture_output=True)
            times = []
            for _ in range(5):
                start = time.monotonic()
                subprocess.run([args.serac, "table", "load", warehouse, "bench", name, str(small)], env=env,
                               check=True, capture_output=True)
                times.append(time.monotonic() - start)
            print(f"  {files:>6} files: {sorted(times)[2] * 1000:.0f} ms")
        return 0
    finally:
        processes.stop_all()
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
