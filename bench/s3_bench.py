#!/usr/bin/env python3
"""S3 benchmark for serac, side by side with plain references measured in the same run.

GET cells compare serac with nginx serving the same bytes as static files; PUT cells compare
serac with bench/fsync_writer.c, which stores the same payload with the durability serac promises
(write, fsync, rename, fsync the directory). With --minio, every cell also measures MinIO (built by
bench/build_minio.sh) on the same objects, as the S3 server people would otherwise run. Load comes
from wrk with presigned SigV4 URLs.
This is a measurement, not a test: it prints a table and marks the targets PASS or MISS.
Run it through bench/s3_bench.sh, which builds serac and prepares the Python environment.
"""

import argparse
import json
import os
import re
import resource
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field

BENCH_DIR = os.path.dirname(os.path.abspath(__file__))
WRK_SCRIPT = os.path.join(BENCH_DIR, "wrk_requests.lua")
FSYNC_WRITER_SOURCE = os.path.join(BENCH_DIR, "fsync_writer.c")
LOAD_CLIENT_SOURCE = os.path.join(BENCH_DIR, "load_client.cc")

KiB = 1024
MiB = 1024 * KiB
BUCKET = "bench"
REGION = "us-east-1"
PRESIGN_EXPIRY_SECONDS = 24 * 3600
SERAC_START_TIMEOUT_SECONDS = 30
WRK_REQUEST_TIMEOUT = "60s"
LISTENING_PATTERN = re.compile(r"serac: listening on (\S+)")


@dataclass(frozen=True)
class ObjectSize:
    label: str
    bytes: int
    get_objects: int  # distinct pre-uploaded objects the GET cells cycle through
    put_keys: int  # distinct keys the PUT cells cycle through
    report_ops: bool  # small objects are reported in ops/s, large ones in MiB/s
    drain: bool  # operations take seconds: measure with load_client, which lets them finish


SIZES = {
    "4k": ObjectSize("4 KiB", 4 * KiB, get_objects=100, put_keys=64, report_ops=True, drain=False),
    "1m": ObjectSize("1 MiB", MiB, get_objects=16, put_keys=32, report_ops=False, drain=False),
    "64m": ObjectSize("64 MiB", 64 * MiB, get_objects=4, put_keys=4, report_ops=False, drain=True),
}


@dataclass
class Measurement:
    ok: bool = False
    ops: int = 0  # operations finished successfully inside the window
    seconds: float = 0.0
    p50_ms: float | None = None
    p99_ms: float | None = None
    cpu_percent: float | None = None  # of the system under test, 100 = one core
    generator_cpu_percent: float | None = None  # wrk's own CPU use
    note: str = ""

    def ops_per_s(self) -> float:
        return self.ops / self.seconds if self.seconds else 0.0

    def mib_per_s(self, size_bytes: int) -> float:
        return self.ops_per_s() * size_bytes / MiB


@dataclass
class Cell:
    op: str  # GET or PUT
    size: ObjectSize
    clients: int
    serac: Measurement = field(default_factory=Measurement)
    reference: Measurement = field(default_factory=Measurement)
    minio: Measurement | None = None  # measured with --minio

    def value(self, m: Measurement) -> float:
        return m.ops_per_s() if self.size.report_ops else m.mib_per_s(self.size.bytes)

    def ratio(self) -> float | None:
        if not (self.serac.ok and self.reference.ok) or self.value(self.reference) == 0:
            return None
        return self.value(self.serac) / self.value(self.reference)

    def minio_ratio(self) -> float | None:
        if self.minio is None or not (self.serac.ok and self.minio.ok) or self.value(self.minio) == 0:
            return None
        return self.value(self.serac) / self.value(self.minio)


# --------------------------------------------------------------------------- processes


class Processes:
    """Every long-running child, each in its own session so Ctrl-C reaches us first and we stop
    them in order; stop_all() is idempotent and runs from finally/atexit paths."""

    def __init__(self):
        self.children: list[subprocess.Popen] = []

    def start(self, argv, **kwargs) -> subprocess.Popen:
        proc = subprocess.Popen(argv, start_new_session=True, **kwargs)
        self.children.append(proc)
        return proc

    def stop_all(self):
        for proc in reversed(self.children):
            stop_process_group(proc)
        self.children.clear()


def stop_process_group(proc: subprocess.Popen):
    if proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=10)
    except (ProcessLookupError, PermissionError):
        pass
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()


def exit_on_signal(signum, _frame):
    raise SystemExit(128 + signum)


def free_loopback_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port: int, proc: subprocess.Popen, timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return False
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.settimeout(0.2)
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return True
        time.sleep(0.05)
    return False


def proc_status_kib(pid: int, field_name: str) -> int | None:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(field_name + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def cpu_seconds_of_tree(root_pid: int) -> float:
    """utime+stime of a process and its direct children (nginx master + workers)."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        pid, ppid = int(entry), int(fields[1])
        if pid == root_pid or ppid == root_pid:
            total += (int(fields[11]) + int(fields[12])) / ticks
    return total


def children_cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


# --------------------------------------------------------------------------- servers


class LocalS3Server:
    """An S3 server the benchmark starts on a free loopback port with generated root credentials."""

    def __init__(self, processes: Processes, binary: str, data_dir: str, log_path: str):
        self.processes, self.binary, self.data_dir, self.log_path = processes, binary, data_dir, log_path
        self.port = free_loopback_port()
        self.user = "benchadmin"
        self.password = "bench-" + secrets.token_hex(16)
        self.proc: subprocess.Popen | None = None
        self.failure = ""

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def client(self):
        import boto3
        from botocore.config import Config

        return boto3.client(
            "s3", endpoint_url=self.endpoint, region_name=REGION,
            aws_access_key_id=self.user, aws_secret_access_key=self.password,
            config=Config(signature_version="s3v4", s3={"addressing_style": "path"}))


class Serac(LocalS3Server):
    def __init__(self, processes: Processes, binary: str, data_dir: str, log_path: str, extra_args: list[str]):
        super().__init__(processes, binary, data_dir, log_path)
        self.extra_args = extra_args

    def start(self) -> bool:
        env = dict(os.environ, SERAC_ROOT_USER=self.user, SERAC_ROOT_PASSWORD=self.password)
        argv = [self.binary, "server", "--data", self.data_dir, "--address", f"127.0.0.1:{self.port}",
                *self.extra_args]
        # The log goes straight to a file: a reader thread here would compete with serac for CPU.
        with open(self.log_path, "wb") as log:
            self.proc = self.processes.start(argv, env=env, stdout=log, stderr=subprocess.STDOUT,
                                             stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + SERAC_START_TIMEOUT_SECONDS
        while not LISTENING_PATTERN.search(read_text(self.log_path)):
            if self.proc.poll() is not None:
                self.failure = f"serac exited with code {self.proc.returncode} before listening"
                return False
            if time.monotonic() > deadline:
                self.failure = f"serac did not print 'serac: listening on' within {SERAC_START_TIMEOUT_SECONDS}s"
                return False
            time.sleep(0.05)
        return True

    def cli_env(self) -> dict:
        """The environment a serac client command needs to reach this server as its root user."""
        return dict(os.environ, SERAC_ENDPOINT=self.endpoint, SERAC_ACCESS_KEY=self.user,
                    SERAC_SECRET_KEY=self.password)

    def cli(self, *argv) -> str:
        """A serac client command against this server as its root user: its stdout, or RuntimeError
        with its error."""
        done = subprocess.run([self.binary, *map(str, argv)], env=self.cli_env(), capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"serac {' '.join(map(str, argv[:3]))}: {done.stderr.strip()}")
        return done.stdout

    def log_tail(self, lines: int = 15) -> str:
        try:
            with open(self.log_path) as f:
                return "".join(f.readlines()[-lines:])
        except OSError:
            return ""


class MinIO(LocalS3Server):
    """MinIO on one directory (its single-drive mode), as a user would start it for a comparison."""

    def start(self) -> bool:
        os.makedirs(self.data_dir, exist_ok=True)
        env = dict(os.environ, MINIO_ROOT_USER=self.user, MINIO_ROOT_PASSWORD=self.password,
                   MINIO_BROWSER="off", MINIO_UPDATE="off", MINIO_CI_CD="1")
        argv = [self.binary, "server", self.data_dir, "--address", f"127.0.0.1:{self.port}", "--quiet"]
        with open(self.log_path, "wb") as log:
            self.proc = self.processes.start(argv, env=env, stdout=log, stderr=subprocess.STDOUT,
                                             stdin=subprocess.DEVNULL)
        if not wait_for_port(self.port, self.proc, SERAC_START_TIMEOUT_SECONDS):
            self.failure = "minio did not start: " + read_text(self.log_path)[-500:]
            return False
        deadline = time.monotonic() + SERAC_START_TIMEOUT_SECONDS
        while http_request(f"http://127.0.0.1:{self.port}/minio/health/ready", "GET")[0] != 200:
            if time.monotonic() > deadline:
                self.failure = "minio never became ready: " + read_text(self.log_path)[-500:]
                return False
            time.sleep(0.1)
        return True


class Nginx:
    def __init__(self, processes: Processes, prefix: str, html_dir: str):
        self.processes, self.prefix, self.html_dir = processes, prefix, html_dir
        self.port = free_loopback_port()
        self.proc: subprocess.Popen | None = None
        self.failure = ""

    def config(self) -> str:
        p = self.prefix
        # Workers would drop to "nobody" under root and then could not read the private temp dir.
        user_line = "user root;\n" if os.geteuid() == 0 else ""
        temp_paths = "".join(f"  {kind}_temp_path {p}/{kind}_temp;\n"
                             for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
        return (f"{user_line}daemon off;\nworker_processes auto;\npid {p}/nginx.pid;\n"
                f"error_log {p}/error.log warn;\n"
                "events { worker_connections 4096; }\n"
                "http {\n  access_log off;\n  sendfile on;\n  tcp_nopush on;\n"
                "  keepalive_timeout 75s;\n  keepalive_requests 1000000;\n"
                "  default_type application/octet-stream;\n" + temp_paths +
                f"  server {{\n    listen 127.0.0.1:{self.port};\n    root {self.html_dir};\n"
                "    location / { }\n  }\n}\n")

    def start(self) -> bool:
        binary = shutil.which("nginx") or "/usr/sbin/nginx"
        conf = os.path.join(self.prefix, "nginx.conf")
        with open(conf, "w") as f:
            f.write(self.config())
        log = open(os.path.join(self.prefix, "stderr.log"), "w")
        self.proc = self.processes.start([binary, "-p", self.prefix, "-c", conf, "-e", f"{self.prefix}/error.log"],
                                         stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        if not wait_for_port(self.port, self.proc, 10):
            self.failure = "nginx did not start: " + read_text(os.path.join(self.prefix, "error.log"))[-500:]
            return False
        return True


def read_text(path: str) -> str:
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return ""


# --------------------------------------------------------------------------- load


def http_request(url: str, method: str, body: bytes | None = None) -> tuple[int, bytes]:
    request = urllib.request.Request(url, data=body, method=method)
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def target_of(url: str) -> str:
    """Path and query of a URL: what wrk puts on the request line."""
    parts = urllib.parse.urlsplit(url)
    return parts.path + ("?" + parts.query if parts.query else "")


def write_lines(path: str, lines: list[str]):
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def run_wrk(port: int, method: str, targets_file: str, body_bytes: int, clients: int, seconds: int,
            max_threads: int, cpu_of_server, headers: tuple[str, ...] = ()) -> Measurement:
    threads = max(1, min(max_threads, clients))
    argv = ["wrk", f"-t{threads}", f"-c{clients}", f"-d{seconds}s", "--timeout", WRK_REQUEST_TIMEOUT,
            *[arg for header in headers for arg in ("-H", header)],
            "-s", WRK_SCRIPT, f"http://127.0.0.1:{port}", "--", method, targets_file, str(body_bytes)]
    server_cpu_before, wrk_cpu_before, wall_before = cpu_of_server(), children_cpu_seconds(), time.monotonic()
    done = subprocess.run(argv, capture_output=True, text=True)
    wall = time.monotonic() - wall_before
    server_cpu, wrk_cpu = cpu_of_server() - server_cpu_before, children_cpu_seconds() - wrk_cpu_before
    match = re.search(r"BENCH_RESULT (.*)", done.stdout)
    if done.returncode != 0 or not match:
        return Measurement(note=f"wrk failed (rc {done.returncode}): {(done.stderr or done.stdout).strip()[-300:]}")
    r = {k: int(v) for k, v in (kv.split("=") for kv in match.group(1).split())}
    errors = {k: r[k] for k in ("status_errors", "connect_errors", "read_errors", "write_errors", "timeouts") if r[k]}
    ok_ops = r["requests"] - r["status_errors"]
    m = Measurement(ok=ok_ops > 0, ops=ok_ops, seconds=r["duration_us"] / 1e6,
                    p50_ms=r["p50_us"] / 1e3, p99_ms=r["p99_us"] / 1e3,
                    cpu_percent=100 * server_cpu / wall, generator_cpu_percent=100 * wrk_cpu / wall)
    if errors:
        m.note = "errors: " + ", ".join(f"{k}={v}" for k, v in errors.items())
    return m


def parse_drain_output(tool: str, done: subprocess.CompletedProcess, cpu_percent: float) -> Measurement:
    """Parses the one-line summary that fsync_writer and load_client share."""
    match = re.search(r"ops=(\d+) .*seconds=([\d.]+) .*p50_ms=([\d.]+) p99_ms=([\d.]+) errors=(\d+)(?: first_error=(.*))?",
                      done.stdout)
    if not match:
        return Measurement(note=f"{tool} failed (rc {done.returncode}): {done.stderr.strip()[-300:]}")
    ops, secs, p50, p99, errors, first_error = match.groups()
    m = Measurement(ok=int(ops) > 0, ops=int(ops), seconds=float(secs), p50_ms=float(p50), p99_ms=float(p99),
                    cpu_percent=cpu_percent)
    if int(errors):
        m.note = f"errors: {errors}" + (f" (first: {first_error})" if first_error else "")
    return m


def run_fsync_writer(binary: str, directory: str, size_bytes: int, clients: int, seconds: int) -> Measurement:
    shutil.rmtree(directory, ignore_errors=True)
    os.makedirs(directory)
    cpu_before, wall_before = children_cpu_seconds(), time.monotonic()
    done = subprocess.run([binary, directory, str(size_bytes), str(clients), str(seconds)],
                          capture_output=True, text=True)
    wall = time.monotonic() - wall_before
    cpu = children_cpu_seconds() - cpu_before
    shutil.rmtree(directory, ignore_errors=True)
    return parse_drain_output("fsync_writer", done, 100 * cpu / wall)


def run_load_client(binary: str, port: int, method: str, targets_file: str, body_bytes: int, clients: int,
                    seconds: int, cpu_of_server) -> Measurement:
    server_cpu_before, client_cpu_before, wall_before = cpu_of_server(), children_cpu_seconds(), time.monotonic()
    done = subprocess.run([binary, "127.0.0.1", str(port), method, targets_file, str(body_bytes), str(clients),
                           str(seconds)], capture_output=True, text=True)
    wall = time.monotonic() - wall_before
    m = parse_drain_output("load_client", done, 100 * (cpu_of_server() - server_cpu_before) / wall)
    m.generator_cpu_percent = 100 * (children_cpu_seconds() - client_cpu_before) / wall
    return m


# --------------------------------------------------------------------------- setup


def compile_fsync_writer(out_dir: str) -> str:
    binary = os.path.join(out_dir, "fsync_writer")
    compiler = os.environ.get("CC", "cc")
    subprocess.run([compiler, "-O2", "-pthread", "-Wall", "-Wextra", "-Werror", "-o", binary, FSYNC_WRITER_SOURCE],
                   check=True)
    return binary


def compile_load_client(out_dir: str) -> str:
    binary = os.path.join(out_dir, "load_client")
    compiler = os.environ.get("CXX", "g++")
    subprocess.run([compiler, "-std=c++20", "-O2", "-pthread", "-Wall", "-Wextra", "-Werror", "-o", binary,
                    LOAD_CLIENT_SOURCE], check=True)
    return binary


def get_key(size: ObjectSize, i: int) -> str:
    return f"get-{size.label.replace(' ', '').lower()}-{i}"


def put_key(size: ObjectSize, i: int) -> str:
    return f"put-{size.label.replace(' ', '').lower()}-{i}"


def make_payloads(sizes: list[ObjectSize]) -> dict[str, list[bytes]]:
    return {s.label: [os.urandom(s.bytes) for _ in range(s.get_objects)] for s in sizes}


def write_static_files(html_dir: str, sizes: list[ObjectSize], payloads: dict[str, list[bytes]]):
    bucket_dir = os.path.join(html_dir, BUCKET)
    os.makedirs(bucket_dir, exist_ok=True)
    for s in sizes:
        for i, data in enumerate(payloads[s.label]):
            with open(os.path.join(bucket_dir, get_key(s, i)), "wb") as f:
                f.write(data)


def prepare_s3_server(server, sizes: list[ObjectSize], payloads, work_dir: str,
                      name: str = "serac") -> tuple[dict[tuple[str, str], str], dict[tuple[str, str], str]]:
    """Creates the bucket, uploads the GET objects with presigned PUTs, checks one GET round trip
    per size, and writes the presigned target files. Returns ({(op, size label): targets file},
    {(op, size label): why that cell cannot run}); raises RuntimeError if nothing can run."""
    s3 = server.client()
    try:  # header-signed, as clients create buckets; the objects below go through presigned URLs
        s3.create_bucket(Bucket=BUCKET)
    except Exception as e:  # botocore raises many types; any of them means setup failed
        raise RuntimeError(f"CreateBucket failed: {e}") from e

    def presign(method: str, key: str) -> str:
        return s3.generate_presigned_url(method, Params={"Bucket": BUCKET, "Key": key},
                                         ExpiresIn=PRESIGN_EXPIRY_SECONDS)

    files, failures = {}, {}
    for s in sizes:
        files[("PUT", s.label)] = os.path.join(work_dir, f"{name}-put-{s.bytes}.txt")
        write_lines(files[("PUT", s.label)], [target_of(presign("put_object", put_key(s, i)))
                                              for i in range(s.put_keys)])
        failure = upload_and_check(s, payloads[s.label], presign)
        if failure:
            failures[("GET", s.label)] = failure
            continue
        files[("GET", s.label)] = os.path.join(work_dir, f"{name}-get-{s.bytes}.txt")
        write_lines(files[("GET", s.label)], [target_of(presign("get_object", get_key(s, i)))
                                              for i in range(s.get_objects)])
    return files, failures


def upload_and_check(size: ObjectSize, objects: list[bytes], presign) -> str:
    """Uploads one size's GET objects and reads the first back; returns the symptom or ''."""
    for i, data in enumerate(objects):
        status, body = http_request(presign("put_object", get_key(size, i)), "PUT", data)
        if status != 200:
            return f"presigned PUT of {get_key(size, i)} returned {status}: {body[:200]!r}"
    status, body = http_request(presign("get_object", get_key(size, 0)), "GET")
    if status != 200 or body != objects[0]:
        shown = body[:200] if status != 200 else f"{len(body)} bytes, content differs"
        return f"presigned GET of {get_key(size, 0)} returned {status}: {shown!r}"
    return ""


def check_nginx(nginx: Nginx, serac_get_targets: dict[str, str], payloads) -> str:
    """nginx gets the very same request targets as serac (it ignores the query string)."""
    for label, targets_file in serac_get_targets.items():
        with open(targets_file) as f:
            target = f.readline().strip()
        status, body = http_request(f"http://127.0.0.1:{nginx.port}{target}", "GET")
        if status != 200 or body != payloads[label][0]:
            return f"nginx GET {target.split('?')[0]} returned {status}, {len(body)} bytes"
    return ""


def plain_get_targets(sizes: list[ObjectSize], work_dir: str) -> dict[str, str]:
    """Unsigned targets for the nginx half when serac could not provide presigned ones."""
    files = {}
    for s in sizes:
        files[s.label] = os.path.join(work_dir, f"plain-get-{s.bytes}.txt")
        write_lines(files[s.label], [f"/{BUCKET}/{get_key(s, i)}" for i in range(s.get_objects)])
    return files


# --------------------------------------------------------------------------- report


def fmt_value(cell: Cell, m: Measurement) -> str:
    if not m.ok:
        return "n/a"
    if cell.size.report_ops:
        return f"{m.ops_per_s():,.0f} ops/s"
    return f"{m.mib_per_s(cell.size.bytes):,.1f} MiB/s"


def fmt_latency(m: Measurement) -> str:
    if not m.ok or m.p50_ms is None:
        return "-"
    return f"{m.p50_ms:.2f} / {m.p99_ms:.2f}"


def fmt_percent(value: float | None) -> str:
    return "-" if value is None else f"{value:.0f}"


def fmt_cpu(m: Measurement) -> str:
    if not m.ok:
        return "-"
    return f"{fmt_percent(m.cpu_percent)}/{fmt_percent(m.generator_cpu_percent)}"


def print_table(cells: list[Cell]):
    with_minio = any(c.minio is not None for c in cells)
    header = ["workload", "clients", "serac", "reference", "ratio", "serac p50/p99 ms", "ref p50/p99 ms",
              "n serac/ref", "CPU% serac/load", "CPU% ref/load"]
    if with_minio:
        header += ["minio", "serac/minio", "minio p50/p99 ms", "CPU% minio/load"]
    rows = []
    for c in cells:
        ref_name = "nginx" if c.op == "GET" else "fsync"
        ratio = c.ratio()
        rows.append([f"{c.op} {c.size.label}", str(c.clients), fmt_value(c, c.serac),
                     f"{fmt_value(c, c.reference)} ({ref_name})", "-" if ratio is None else f"{ratio:.2f}",
                     fmt_latency(c.serac), fmt_latency(c.reference), f"{c.serac.ops}/{c.reference.ops}",
                     fmt_cpu(c.serac), fmt_cpu(c.reference)])
        if with_minio:
            minio = c.minio or Measurement()
            minio_ratio = c.minio_ratio()
            rows[-1] += [fmt_value(c, minio), "-" if minio_ratio is None else f"{minio_ratio:.2f}",
                         fmt_latency(minio), fmt_cpu(minio)]
    widths = [max(len(r[i]) for r in rows + [header]) for i in range(len(header))]
    line = lambda r: "  ".join(v.ljust(w) if i in (0, 3) else v.rjust(w) for i, (v, w) in enumerate(zip(r, widths)))
    print(line(header))
    print("  ".join("-" * w for w in widths))
    for r in rows:
        print(line(r))
    notes = [f"  {c.op} {c.size.label} x{c.clients} {who}: {m.note}"
             for c in cells for who, m in (("serac", c.serac), ("reference", c.reference), ("minio", c.minio))
             if m is not None and m.note]
    if notes:
        print("notes:")
        print("\n".join(notes))


def evaluate_targets(cells: list[Cell], idle_rss_kib: int | None) -> list[tuple[str, str, str, str]]:
    """(target, measured, goal, PASS/MISS/n/a) rows."""
    def find(op, label, clients):
        return next((c for c in cells if c.op == op and c.size.label == label and c.clients == clients), None)

    rows = []
    clients_seen = sorted({c.clients for c in cells})
    def judged(name: str, ratio: float | None, goal: float):
        rows.append((name, "-" if ratio is None else f"{ratio:.2f}", f">= {goal:.2f}",
                     "n/a" if ratio is None else ("PASS" if ratio >= goal else "MISS")))

    for op, ref, goal in (("GET", "nginx", 0.95), ("PUT", "fsync'd write", 0.90)):
        for n in clients_seen:
            cell = find(op, "64 MiB", n)
            if cell is not None:
                judged(f"64 MiB {op} vs {ref}, {n} client(s)", cell.ratio(), goal)
    # Scale: many connections serve as fast as a few, and small GETs come near a static file server.
    for op, many_clients in (("GET", (256, 1024)), ("PUT", (256,))):
        base = find(op, "4 KiB", 16)
        for n in many_clients:
            cell = find(op, "4 KiB", n)
            if base is None or cell is None:
                continue
            ratio = cell.value(cell.serac) / base.value(base.serac) if cell.serac.ok and base.serac.ok else None
            judged(f"4 KiB {op} at {n} clients vs at 16", ratio, 0.90)
    for n in (16, 256, 1024):
        cell = find("GET", "4 KiB", n)
        if cell is not None:
            judged(f"4 KiB GET vs nginx, {n} clients", cell.ratio(), 0.80)
    for op, goal in (("GET", 10_000), ("PUT", 2_000)):
        cell = find(op, "4 KiB", 16)
        if cell is None:
            continue
        ok = cell.serac.ok
        value = cell.serac.ops_per_s()
        rows.append((f"4 KiB {op} ops/s, 16 clients", f"{value:,.0f}" if ok else "-", f">= {goal:,}",
                     "n/a" if not ok else ("PASS" if value >= goal else "MISS")))
    if idle_rss_kib is None:
        rows.append(("idle RSS after start", "-", "< 50 MiB", "n/a"))
    else:
        rows.append(("idle RSS after start", f"{idle_rss_kib / 1024:.1f} MiB", "< 50 MiB",
                     "PASS" if idle_rss_kib < 50 * 1024 else "MISS"))
    return rows


def print_targets(rows):
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    for r in rows:
        print("  ".join(v.ljust(w) for v, w in zip(r, widths)))


# --------------------------------------------------------------------------- main


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--serac", default=os.environ.get("SERAC_BIN", "build/serac"), help="serac binary")
    p.add_argument("--serac-log-level", default="warn",
                   help="serac --log-level (default warn: no per-request access log, like nginx's access_log off; "
                        "'' passes none)")
    p.add_argument("--serac-arg", action="append", default=[], metavar="ARG",
                   help="extra argument for 'serac server' (repeatable), e.g. --serac-arg=--log-level=warn")
    p.add_argument("--seconds", type=int, default=6, help="duration of each 4 KiB and 1 MiB cell")
    p.add_argument("--large-seconds", type=int, default=12,
                   help="duration of each 64 MiB cell (longer: few, long operations per window)")
    p.add_argument("--clients", default="1,16", help="comma-separated concurrency levels")
    p.add_argument("--sizes", default="4k,1m,64m", help="comma-separated subset of 4k,1m,64m")
    p.add_argument("--ops", default="GET,PUT", help="comma-separated subset of GET,PUT")
    p.add_argument("--wrk-threads", type=int, default=2, help="wrk threads (at most the client count)")
    p.add_argument("--references-only", action="store_true", help="skip serac, measure nginx and fsync only")
    p.add_argument("--minio", default=os.environ.get("MINIO_BIN"),
                   help="a MinIO server binary (bench/build_minio.sh): measure it in every cell too")
    p.add_argument("--tmpdir", default=os.environ.get("BENCH_TMPDIR"),
                   help="where the temp data lives (same filesystem for serac and the fsync reference)")
    p.add_argument("--keep", action="store_true", help="keep the temp directory (for debugging)")
    p.add_argument("--json", help="also write all measurements to this file")
    return p.parse_args()


def main() -> int:
    args = parse_args()
    # Installed explicitly: a shell that starts us in the background leaves SIGINT ignored.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, exit_on_signal)
    sizes = [SIZES[s.strip().lower()] for s in args.sizes.split(",")]
    clients = [int(c) for c in args.clients.split(",")]
    ops = [o.strip().upper() for o in args.ops.split(",")]
    if not shutil.which("wrk"):
        print("wrk not found (Debian package wrk)", file=sys.stderr)
        return 2

    processes = Processes()
    work_dir = tempfile.mkdtemp(prefix="serac-bench-", dir=args.tmpdir)
    try:
        return run(args, sizes, clients, ops, processes, work_dir)
    except KeyboardInterrupt:
        print("\ninterrupted; cleaning up", file=sys.stderr)
        return 130
    finally:
        processes.stop_all()
        if args.keep:
            print(f"kept {work_dir}", file=sys.stderr)
        else:
            shutil.rmtree(work_dir, ignore_errors=True)


def progress(message: str):
    print(message, file=sys.stderr, flush=True)


def run(args, sizes, clients, ops, processes: Processes, work_dir: str) -> int:
    os.chmod(work_dir, 0o755)  # nginx workers must be able to read the static files
    tools = {"fsync_writer": compile_fsync_writer(work_dir), "load_client": compile_load_client(work_dir)}
    progress(f"generating {sum(s.bytes * s.get_objects for s in sizes) / MiB:.0f} MiB of GET objects")
    payloads = make_payloads(sizes)
    html_dir = os.path.join(work_dir, "html")
    write_static_files(html_dir, sizes, payloads)

    target = SeracTarget()
    if args.references_only:
        target.failure = "skipped (--references-only)"
    else:
        target.start(processes, args, sizes, payloads, work_dir)
    get_targets = plain_get_targets(sizes, work_dir)
    get_targets.update(target.get_targets)  # same request lines as serac wherever serac has them

    nginx = Nginx(processes, os.path.join(work_dir, "nginx"), html_dir)
    os.makedirs(nginx.prefix)
    failure = nginx.failure if not nginx.start() else check_nginx(nginx, get_targets, payloads)
    if failure:
        progress(failure)
        return 1
    os.sync()

    minio_targets = start_minio(args, processes, sizes, payloads, work_dir) if args.minio else None

    cells = [Cell(op, s, n) for op in ops for s in sizes for n in clients]
    for cell in cells:
        run_cell(cell, args, tools, nginx, get_targets, target, os.path.join(work_dir, "fsync-reference"),
                 minio_targets)
    target.sample_peak_rss()
    if target.serac and target.serac.proc.poll() is not None and not target.failure:
        target.failure = f"serac exited with code {target.serac.proc.returncode}"
    print_report(args, cells, target)
    return 0


@dataclass
class MinIOTargets:
    minio: MinIO
    files: dict[tuple[str, str], str]  # (op, size label) -> presigned targets file
    failures: dict[tuple[str, str], str]


def start_minio(args, processes: Processes, sizes, payloads, work_dir: str) -> MinIOTargets | None:
    minio = MinIO(processes, os.path.abspath(args.minio), os.path.join(work_dir, "minio-data"),
                  os.path.join(work_dir, "minio.log"))
    if not minio.start():
        progress(minio.failure)
        return MinIOTargets(minio, {}, {})
    progress(f"minio listening on 127.0.0.1:{minio.port}; uploading objects")
    try:
        files, failures = prepare_s3_server(minio, sizes, payloads, work_dir, name="minio")
    except (RuntimeError, OSError, urllib.error.URLError) as e:
        minio.failure = f"setup failed: {e}"
        return MinIOTargets(minio, {}, {})
    return MinIOTargets(minio, files, failures)


class SeracTarget:
    """serac as the system under test: the process, its presigned targets, its memory figures,
    and why it could not be measured (failure), if so."""

    def __init__(self):
        self.serac: Serac | None = None
        self.failure = ""
        self.get_targets: dict[str, str] = {}
        self.put_targets: dict[str, str] = {}
        self.cell_failures: dict[tuple[str, str], str] = {}  # (op, size label) -> symptom
        self.idle_rss_kib: int | None = None
        self.peak_rss_kib: int | None = None

    def start(self, processes: Processes, args, sizes, payloads, work_dir: str):
        self.serac = Serac(processes, os.path.abspath(args.serac), os.path.join(work_dir, "serac-data"),
                           os.path.join(work_dir, "serac.log"),
                           (["--log-level", args.serac_log_level] if args.serac_log_level else []) + args.serac_arg)
        if not os.access(self.serac.binary, os.X_OK):
            self.failure = f"no serac binary at {self.serac.binary}"
            return
        if not self.serac.start():
            self.failure = self.serac.failure
        else:
            time.sleep(1.0)  # settle before sampling idle memory
            self.idle_rss_kib = proc_status_kib(self.serac.proc.pid, "VmRSS")
            progress(f"serac listening on 127.0.0.1:{self.serac.port}, idle RSS {self.idle_rss_kib} KiB; "
                     "uploading objects")
            try:
                files, self.cell_failures = prepare_s3_server(self.serac, sizes, payloads, work_dir)
                self.get_targets = {label: f for (op, label), f in files.items() if op == "GET"}
                self.put_targets = {label: f for (op, label), f in files.items() if op == "PUT"}
            except (RuntimeError, OSError, urllib.error.URLError) as e:
                self.failure = f"setup failed: {e}"
        tail = self.serac.log_tail().strip() if self.failure else ""
        if tail:
            self.failure += "\n  serac log tail:\n" + "".join(f"    {l}\n" for l in tail.splitlines())

    def usable(self) -> bool:
        if self.failure:
            return False
        if not self.serac.alive():
            self.failure = f"serac exited with code {self.serac.proc.returncode} during the run"
            tail = self.serac.log_tail().strip()
            if tail:
                self.failure += "\n  serac log tail:\n" + "".join(f"    {l}\n" for l in tail.splitlines())
            return False
        return True

    def sample_peak_rss(self):
        """VmHWM is a high-water mark; sampled after every cell so a crash does not lose it."""
        if self.serac and self.serac.alive():
            self.peak_rss_kib = proc_status_kib(self.serac.proc.pid, "VmHWM") or self.peak_rss_kib


def run_cell(cell: Cell, args, tools, nginx: Nginx, get_targets, target: SeracTarget, fsync_dir: str,
             minio_targets: MinIOTargets | None):
    """Reference first, then serac (then MinIO), back to back, so all see the same machine conditions."""
    seconds = args.large_seconds if cell.size.drain else args.seconds
    progress(f"{cell.op} {cell.size.label} x{cell.clients} ({seconds}s each)")
    body_bytes = cell.size.bytes if cell.op == "PUT" else 0

    def load(port: int, targets_file: str, cpu_of_server) -> Measurement:
        if cell.size.drain:
            return run_load_client(tools["load_client"], port, cell.op, targets_file, body_bytes, cell.clients,
                                   seconds, cpu_of_server)
        return run_wrk(port, cell.op, targets_file, body_bytes, cell.clients, seconds, args.wrk_threads,
                       cpu_of_server)

    if cell.op == "GET":
        cell.reference = load(nginx.port, get_targets[cell.size.label], lambda: cpu_seconds_of_tree(nginx.proc.pid))
    else:
        cell.reference = run_fsync_writer(tools["fsync_writer"], fsync_dir, cell.size.bytes, cell.clients, seconds)
    cell_failure = target.cell_failures.get((cell.op, cell.size.label))
    if cell_failure:
        cell.serac = Measurement(note=cell_failure)
    elif target.usable():
        targets = target.get_targets if cell.op == "GET" else target.put_targets
        pid = target.serac.proc.pid
        cell.serac = load(target.serac.port, targets[cell.size.label], lambda: cpu_seconds_of_tree(pid))
        target.sample_peak_rss()
    if cell.op == "PUT":
        os.sync()  # start the next cell without the previous cell's writeback
    if minio_targets is not None:
        key = (cell.op, cell.size.label)
        minio = minio_targets.minio
        if minio.failure or key not in minio_targets.files or not minio.alive():
            cell.minio = Measurement(note=minio.failure or minio_targets.failures.get(key, "minio is not running"))
        else:
            cell.minio = load(minio.port, minio_targets.files[key], lambda: cpu_seconds_of_tree(minio.proc.pid))
        if cell.op == "PUT":
            os.sync()


def print_report(args, cells: list[Cell], target: SeracTarget):
    print()
    print(f"serac S3 benchmark: {os.cpu_count()} CPUs, loopback, data under {args.tmpdir or tempfile.gettempdir()}; "
          f"4 KiB/1 MiB: wrk -t<={args.wrk_threads}, {args.seconds}s window; "
          f"64 MiB: load_client, {args.large_seconds}s + drain")
    print()
    print_table(cells)
    print()
    print(f"serac idle RSS: {fmt_kib(target.idle_rss_kib)}   peak RSS (VmHWM): {fmt_kib(target.peak_rss_kib)}")
    if target.failure:
        print(f"serac: {target.failure}")
    print()
    print("targets:")
    target_rows = evaluate_targets(cells, target.idle_rss_kib)
    print_targets(target_rows)
    if args.json:
        write_json(args.json, cells, target.idle_rss_kib, target.peak_rss_kib, target.failure, target_rows)


def fmt_kib(kib: int | None) -> str:
    return "-" if kib is None else f"{kib / 1024:.1f} MiB"


def write_json(path, cells, idle_rss_kib, peak_rss_kib, serac_failure, target_rows):
    def measurement(c: Cell, m: Measurement):
        return {"ok": m.ok, "ops": m.ops, "seconds": m.seconds, "ops_per_s": m.ops_per_s(),
                "mib_per_s": m.mib_per_s(c.size.bytes), "p50_ms": m.p50_ms, "p99_ms": m.p99_ms,
                "cpu_percent": m.cpu_percent, "generator_cpu_percent": m.generator_cpu_percent, "note": m.note}

    doc = {"cells": [{"op": c.op, "size_bytes": c.size.bytes, "clients": c.clients, "ratio": c.ratio(),
                      "serac": measurement(c, c.serac), "reference": measurement(c, c.reference),
                      "minio": None if c.minio is None else measurement(c, c.minio),
                      "serac_over_minio": c.minio_ratio()} for c in cells],
           "idle_rss_kib": idle_rss_kib, "peak_rss_kib": peak_rss_kib, "serac_failure": serac_failure,
           "targets": [dict(zip(("target", "measured", "goal", "result"), r)) for r in target_rows]}
    with open(path, "w") as f:
        json.dump(doc, f, indent=2)


if __name__ == "__main__":
    sys.exit(main())
