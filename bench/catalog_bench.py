#!/usr/bin/env python3
"""Iceberg REST catalog benchmark: serac's /_iceberg side by side with the Apache Iceberg reference
REST catalog (RESTCatalogServer logic from iceberg-open-api, JdbcCatalog on a SQLite file,
file warehouse), the same workloads against both in one run:

- load-table: GET .../namespaces/ns/tables/<t> on a table with a few snapshots;
- hot commits: every client appends snapshots to one table (assert-ref-snapshot-id + add-snapshot +
  set-snapshot-ref main); a 409 makes the client reload the table and retry;
- spread commits: the same commits over 100 tables, each table dealt to one client;
- commit latency p50/p99, read from the 1-client commit cells.

Load comes from bench/catalog_load_client.cc (C++, one thread and one keep-alive connection per
client, serac's own SigV4 signer), so that the catalogs, not the load generator, use the CPU;
--python-load runs the former Python generator instead (processes x threads). Every request is
SigV4-signed for service s3tables as PyIceberg signs it. This is a measurement, not a test: it
prints a table and marks the targets PASS or MISS. Run it through bench/catalog_bench.sh.
"""

import argparse
import datetime
import hashlib
import hmac
import http.client
import json
import multiprocessing
import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from dataclasses import dataclass, field

BENCH_DIR = os.path.dirname(os.path.abspath(__file__))
REPO_ROOT = os.path.dirname(BENCH_DIR)
sys.path.insert(0, BENCH_DIR)
from s3_bench import (Processes, Serac, cpu_seconds_of_tree, exit_on_signal, free_loopback_port,  # noqa: E402
                      proc_status_kib, read_text)

REFERENCE_LAUNCHER = os.path.join(REPO_ROOT, "tests", "catalog_tools", "run_reference_server.sh")
REFERENCE_READY = re.compile(r"reference catalog listening on (\S+)")
REFERENCE_START_TIMEOUT_SECONDS = 120  # a JVM on a busy 2-core machine can take a while

REGION = "us-east-1"
SIGNING_NAME = "s3tables"
WAREHOUSE = "bench"
NAMESPACE = "ns"
LOAD_TABLE = "load"
LOAD_TABLE_SNAPSHOTS = 5
HOT_TABLE_SNAPSHOTS = 3
SPREAD_TABLE_PREFIX = "spread"
REQUEST_TIMEOUT_SECONDS = 60
WORKER_READY_TIMEOUT_SECONDS = 120
TARGET_RATIO = 10.0
TARGET_P99_MS = 20.0

WORKLOADS = {  # key -> label in the table
    "load": "load-table",
    "hot": "commit, 1 hot table",
    "spread": "commit, 100 tables",
}

# Top-level fields of a LoadTableResult; snapshots and refs use other key names, so a regex finds
# them without parsing the whole (growing) metadata document in the load generator.
CURRENT_SNAPSHOT_RE = re.compile(rb'"current-snapshot-id"\s*:\s*(-?\d+|null)')
LAST_SEQUENCE_RE = re.compile(rb'"last-sequence-number"\s*:\s*(\d+)')


# --------------------------------------------------------------------------- SigV4


class Signer:
    """SigV4 header signing as botocore's SigV4Auth does it (headers content-type, host, x-amz-date;
    payload hashed), written out so the load generator spends microseconds, not a botocore
    request object, per call. check_against_botocore() proves the output identical."""

    def __init__(self, access_key: str, secret_key: str, region: str = REGION, service: str = SIGNING_NAME):
        self.access_key, self.secret_key, self.region, self.service = access_key, secret_key, region, service
        self._keys: dict[str, bytes] = {}

    def _signing_key(self, day: str) -> bytes:
        key = self._keys.get(day)
        if key is None:
            key = ("AWS4" + self.secret_key).encode()
            for part in (day, self.region, self.service, "aws4_request"):
                key = hmac.new(key, part.encode(), hashlib.sha256).digest()
            self._keys = {day: key}
        return key

    def headers(self, method: str, host: str, target: str, body: bytes, amz_date: str | None = None) -> dict:
        amz_date = amz_date or datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
        path, _, query = target.partition("?")
        headers = {"Content-Type": "application/json"} if body else {}
        signed = ([("content-type", "application/json")] if body else []) + [("host", host), ("x-amz-date", amz_date)]
        canonical = "\n".join([
            method, urllib.parse.quote(path, safe="/~"), canonical_query(query),
            "".join(f"{k}:{v}\n" for k, v in signed), ";".join(k for k, _ in signed),
            hashlib.sha256(body).hexdigest()])
        scope = f"{amz_date[:8]}/{self.region}/{self.service}/aws4_request"
        to_sign = f"AWS4-HMAC-SHA256\n{amz_date}\n{scope}\n{hashlib.sha256(canonical.encode()).hexdigest()}"
        signature = hmac.new(self._signing_key(amz_date[:8]), to_sign.encode(), hashlib.sha256).hexdigest()
        headers["X-Amz-Date"] = amz_date
        headers["Authorization"] = (f"AWS4-HMAC-SHA256 Credential={self.access_key}/{scope}, "
                                    f"SignedHeaders={';'.join(k for k, _ in signed)}, Signature={signature}")
        return headers

    def check_against_botocore(self, sign=None) -> str:
        """Signs sample requests with botocore and with `sign(method, host, target, body, amz_date)`
        (default: this signer); returns the first difference or ''."""
        sign = sign or (lambda method, host, target, body, amz_date:
                        self.headers(method, host, target, body, amz_date)["Authorization"])
        from botocore.auth import SigV4Auth
        from botocore.awsrequest import AWSRequest
        from botocore.credentials import Credentials

        host = "127.0.0.1:9000"
        samples = [("GET", "/_iceberg/v1/config?warehouse=bench", b""),
                   ("GET", f"/_iceberg/v1/{WAREHOUSE}/namespaces/ns/tables/t", b""),
                   ("POST", f"/_iceberg/v1/{WAREHOUSE}/namespaces/ns/tables/t", b'{"requirements": []}')]
        for method, target, body in samples:
            request = AWSRequest(method=method, url=f"http://{host}{target}", data=body,
                                 headers={"Content-Type": "application/json"} if body else {})
            SigV4Auth(Credentials(self.access_key, self.secret_key), self.service, self.region).add_auth(request)
            expected = request.headers["Authorization"]
            mine = sign(method, host, target, body, request.headers["X-Amz-Date"])
            if mine != expected:
                return f"{method} {target}: botocore {expected!r}, bench {mine!r}"
        return ""


def canonical_query(query: str) -> str:
    pairs = urllib.parse.parse_qsl(query, keep_blank_values=True)
    return "&".join(f"{urllib.parse.quote(k, safe='-_.~')}={urllib.parse.quote(v, safe='-_.~')}"
                    for k, v in sorted(pairs))


# --------------------------------------------------------------------------- catalog client


@dataclass
class Endpoint:
    """Where one catalog answers; picklable, handed to the worker processes."""
    name: str
    port: int
    root: str  # "/_iceberg" for serac, "" for the reference server
    prefix: str = ""  # "/v1/<prefix>" once the config endpoint told us
    access_key: str = ""
    secret_key: str = ""

    def table_path(self, table: str) -> str:
        return f"{self.root}{self.prefix}/namespaces/{NAMESPACE}/tables/{table}"


class CatalogClient:
    """One persistent HTTP/1.1 connection, every request SigV4-signed."""

    def __init__(self, endpoint: Endpoint):
        self.endpoint = endpoint
        self.host = f"127.0.0.1:{endpoint.port}"
        self.signer = Signer(endpoint.access_key, endpoint.secret_key)
        self.connection: http.client.HTTPConnection | None = None

    def request(self, method: str, target: str, body: bytes = b"") -> tuple[int, bytes]:
        """(status, body); status 0 means the connection failed (it is reopened next time)."""
        headers = self.signer.headers(method, self.host, target, body)
        try:
            if self.connection is None:
                self.connection = http.client.HTTPConnection("127.0.0.1", self.endpoint.port,
                                                             timeout=REQUEST_TIMEOUT_SECONDS)
            self.connection.request(method, target, body=body or None, headers=headers)
            response = self.connection.getresponse()
            return response.status, response.read()
        except (OSError, http.client.HTTPException) as e:
            self.close()
            return 0, repr(e).encode()

    def json_call(self, method: str, target: str, document=None, expect=(200,)) -> dict:
        body = json.dumps(document).encode() if document is not None else b""
        status, data = self.request(method, target, body)
        if status not in expect:
            raise RuntimeError(f"{self.endpoint.name}: {method} {target} -> {status}: {data[:300]!r}")
        return json.loads(data) if data else {}

    def close(self):
        if self.connection is not None:
            self.connection.close()
            self.connection = None


@dataclass
class TableState:
    """What a writer believes about a table: enough to build the next append commit."""
    path: str
    location: str
    current: int | None  # None: no main branch yet
    sequence: int

    def update_from(self, load_result: bytes) -> bool:
        current, sequence = CURRENT_SNAPSHOT_RE.search(load_result), LAST_SEQUENCE_RE.search(load_result)
        if not current or not sequence:
            return False
        value = current.group(1)
        self.current = None if value in (b"null", b"-1") else int(value)
        self.sequence = int(sequence.group(1))
        return True


def load_state(client: CatalogClient, path: str) -> TableState:
    document = client.json_call("GET", path)
    metadata = document["metadata"]
    current = metadata.get("current-snapshot-id")
    return TableState(path, metadata["location"], None if current in (None, -1) else current,
                      metadata.get("last-sequence-number", 0))


def append_commit_body(state: TableState) -> tuple[bytes, int]:
    """A real Iceberg append commit: requirement main == current, a new snapshot on top of it,
    main moved to the new snapshot. Returns (body, new snapshot id)."""
    snapshot_id = secrets.randbits(63) or 1
    snapshot = {"snapshot-id": snapshot_id, "sequence-number": state.sequence + 1,
                "timestamp-ms": int(time.time() * 1000),
                "manifest-list": f"{state.location}/metadata/snap-{snapshot_id}-1-bench.avro",
                "summary": {"operation": "append"}, "schema-id": 0}
    if state.current is not None:
        snapshot["parent-snapshot-id"] = state.current
    body = {"requirements": [{"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": state.current}],
            "updates": [{"action": "add-snapshot", "snapshot": snapshot},
                        {"action": "set-snapshot-ref", "ref-name": "main", "type": "branch",
                         "snapshot-id": snapshot_id}]}
    return json.dumps(body).encode(), snapshot_id


def commit_once(client: CatalogClient, state: TableState) -> tuple[int, bytes]:
    body, snapshot_id = append_commit_body(state)
    status, data = client.request("POST", state.path, body)
    if status == 200:
        state.current, state.sequence = snapshot_id, state.sequence + 1
    return status, data


# --------------------------------------------------------------------------- load generator


@dataclass
class ClientResult:
    ops: int = 0  # successful operations completed inside the window
    retries: int = 0  # commits answered 409 and retried (inside the window)
    errors: int = 0  # other failures inside the window
    latencies: list = field(default_factory=list)  # seconds, successful operations inside the window
    first_error: str = ""


def run_client(endpoint: Endpoint, workload: str, client_id: int, clients: int, tables: int, hot_table: str,
               ready: threading.Barrier, window: dict, result: ClientResult):
    client = CatalogClient(endpoint)
    try:
        states = prepare_client(client, endpoint, workload, client_id, clients, tables, hot_table)
    except (RuntimeError, KeyError, ValueError) as e:
        result.first_error = f"setup: {e}"
        states = []
    ready.wait()
    if not states:
        return
    begin, end, i = window["begin"], window["end"], 0
    while True:
        started = time.monotonic()
        if started >= end:
            break
        if workload == "load":
            status, data = client.request("GET", states[0].path)
            ok, retry = status == 200, False
        else:
            state = states[i % len(states)]
            status, data = commit_once(client, state)
            ok, retry = status == 200, status == 409
            if ok:
                i += 1
            else:  # reload and retry the same table, as a writer does after a conflict
                reload_status, reload_data = client.request("GET", state.path)
                if reload_status != 200 or not state.update_from(reload_data):
                    status, data = reload_status, reload_data
        finished = time.monotonic()
        if begin <= finished <= end:
            if ok:
                result.ops += 1
                result.latencies.append(finished - started)
            elif retry:
                result.retries += 1
            else:
                result.errors += 1
                result.first_error = result.first_error or f"{status}: {data[:200]!r}"
    client.close()


def prepare_client(client: CatalogClient, endpoint: Endpoint, workload: str, client_id: int, clients: int,
                   tables: int, hot_table: str) -> list[TableState]:
    if workload == "load":
        return [TableState(endpoint.table_path(LOAD_TABLE), "", None, 0)]
    if workload == "hot":
        return [load_state(client, endpoint.table_path(hot_table))]
    # Table t belongs to client t mod clients: the spread cell measures commits that never conflict.
    return [load_state(client, endpoint.table_path(spread_table(t))) for t in range(client_id, tables, clients)]


def worker_main(endpoint: Endpoint, workload: str, client_ids: list[int], clients: int, tables: int,
                hot_table: str, warmup: float, seconds: float, start_barrier, results_pipe):
    """One load process: a thread per client. CPU is measured for the window only."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)  # Ctrl-C: die quietly, the parent cleans up
    window: dict = {}
    ready = threading.Barrier(len(client_ids) + 1)
    results = [ClientResult() for _ in client_ids]
    threads = [threading.Thread(target=run_client, args=(endpoint, workload, cid, clients, tables, hot_table,
                                                         ready, window, r), daemon=True)
               for cid, r in zip(client_ids, results)]
    for t in threads:
        t.start()
    # Every thread has its connection and table state; then every process starts together.
    start_together(ready, start_barrier, window, warmup, seconds)
    time.sleep(max(0.0, window["begin"] - time.monotonic()))
    cpu_before = time.process_time()
    time.sleep(max(0.0, window["end"] - time.monotonic()))
    cpu_seconds = time.process_time() - cpu_before
    for t in threads:
        t.join()
    results_pipe.send((results, cpu_seconds))
    results_pipe.close()


def start_together(ready: threading.Barrier, start_barrier, window: dict, warmup: float, seconds: float):
    """Waits for this process's threads and then for all processes; publishes the window before
    releasing the threads (the thread barrier's last party)."""
    while ready.n_waiting < ready.parties - 1:
        time.sleep(0.005)
    start_barrier.wait(WORKER_READY_TIMEOUT_SECONDS)
    now = time.monotonic()
    window["begin"], window["end"] = now + warmup, now + warmup + seconds
    ready.wait()


# --------------------------------------------------------------------------- cells


@dataclass
class Measurement:
    ok: bool = False
    ops: int = 0
    seconds: float = 0.0
    retries: int = 0
    errors: int = 0
    p50_ms: float | None = None
    p99_ms: float | None = None
    server_cpu_percent: float | None = None
    generator_cpu_percent: float | None = None
    note: str = ""

    def ops_per_s(self) -> float:
        return self.ops / self.seconds if self.seconds else 0.0


@dataclass
class Cell:
    workload: str
    clients: int
    serac: Measurement = field(default_factory=Measurement)
    reference: Measurement = field(default_factory=Measurement)

    def ratio(self) -> float | None:
        if not (self.serac.ok and self.reference.ok) or self.reference.ops_per_s() == 0:
            return None
        return self.serac.ops_per_s() / self.reference.ops_per_s()


def percentile(sorted_values: list, fraction: float) -> float | None:
    if not sorted_values:
        return None
    return sorted_values[min(len(sorted_values) - 1, int(fraction * len(sorted_values)))]


def measure(endpoint: Endpoint, server_pid: int, workload: str, clients: int, args, hot_table: str,
            live_workers: list, warmup: float, seconds: float, warmup_commits: int = 0,
            commits: int = 0) -> Measurement:
    """Runs one workload on one server with `clients` clients: catalog_load_client, or with
    --python-load the Python generator. Commit workloads run `commits` commits after
    `warmup_commits` ones when counted(), else the warmup + seconds window."""
    if args.python_load:
        return measure_python(endpoint, server_pid, workload, clients, args, hot_table, live_workers, warmup, seconds)
    return measure_native(endpoint, server_pid, workload, clients, args, hot_table, live_workers, warmup, seconds,
                          warmup_commits, commits)


NATIVE_WORKLOADS = {"load": "load", "hot": "commit-hot", "spread": "commit-spread"}  # catalog_load_client's names
NATIVE_SUMMARY_RE = re.compile(
    r"ops=(\d+) seconds=([\d.]+) ops_per_s=[\d.]+ p50_ms=([\d.]+) p99_ms=([\d.]+) retries=(\d+) errors=(\d+) "
    r"cpu_seconds=([\d.]+)(?: first_error=(.*))?")


class NativeLoad:
    """A running catalog_load_client; kill()/join() as for the Python load processes."""

    def __init__(self, argv: list, endpoint: Endpoint):
        env = dict(os.environ, AWS_ACCESS_KEY_ID=endpoint.access_key, AWS_SECRET_ACCESS_KEY=endpoint.secret_key)
        self.proc = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()

    def join(self):
        self.proc.wait()
        for stream in (self.proc.stdout, self.proc.stderr):
            stream.close()


def native_tables(workload: str, tables: int, hot_table: str) -> list[str]:
    if workload == "load":
        return [LOAD_TABLE]
    if workload == "hot":
        return [hot_table]
    return [spread_table(t) for t in range(tables)]


def measure_native(endpoint: Endpoint, server_pid: int, workload: str, clients: int, args, hot_table: str,
                   live_workers: list, warmup: float, seconds: float, warmup_commits: int = 0,
                   commits: int = 0, cpu_of_server=None) -> Measurement:
    """One catalog_load_client run. It says when its window opens and when the last operation
    started inside it has finished; the server's CPU is sampled at those two moments (by
    `cpu_of_server()` when given: a server of several processes, as bench/multi_node_bench.py has)."""
    cpu_of_server = cpu_of_server or (lambda: cpu_seconds_of_tree(server_pid))
    argv = [args.load_client, "run", "--port", str(endpoint.port), "--workload", NATIVE_WORKLOADS[workload],
            "--table-path", endpoint.table_path(""), "--tables", ",".join(native_tables(workload, args.tables, hot_table)),
            "--clients", str(clients)]
    if counted(workload, args):
        argv += ["--warmup-commits", str(warmup_commits), "--commits", str(commits)]
    else:
        argv += ["--warmup", str(warmup), "--seconds", str(seconds)]
    load = NativeLoad(argv, endpoint)
    live_workers.append(load)
    m = Measurement()
    try:
        cpu_before = wall_before = None
        lines = []
        for line in load.proc.stdout:
            lines.append(line.strip())
            if line.startswith("phase=measure"):
                cpu_before, wall_before = cpu_of_server(), time.monotonic()
            elif line.startswith("phase=done") and cpu_before is not None:
                wall = time.monotonic() - wall_before
                m.server_cpu_percent = 100 * (cpu_of_server() - cpu_before) / wall
        stderr = load.proc.stderr.read()
    finally:
        load.join()
        live_workers.remove(load)
    match = next(filter(None, (NATIVE_SUMMARY_RE.fullmatch(line) for line in lines)), None)
    if not match or m.server_cpu_percent is None:
        m.note = f"catalog_load_client failed (rc {load.proc.returncode}): {(stderr or ' '.join(lines)).strip()[-300:]}"
        return m
    ops, secs, p50, p99, retries, errors, cpu, first_error = match.groups()
    m.ops, m.seconds, m.retries, m.errors = int(ops), float(secs), int(retries), int(errors)
    m.ok = m.ops > 0
    m.p50_ms, m.p99_ms = (float(p50), float(p99)) if m.ok else (None, None)
    m.generator_cpu_percent = 100 * float(cpu) / m.seconds if m.seconds else None
    m.note = first_error or ""
    return m


def native_signer_check(binary: str, access_key: str, secret_key: str) -> str:
    """Has catalog_load_client sign the sample requests and compares with botocore."""
    def sign(method, host, target, body, amz_date):
        done = subprocess.run([binary, "sign", "--port", host.rsplit(":", 1)[1], "--method", method,
                               "--target", target, "--amz-date", amz_date], input=body,
                              env=dict(os.environ, AWS_ACCESS_KEY_ID=access_key, AWS_SECRET_ACCESS_KEY=secret_key),
                              capture_output=True)
        return done.stdout.decode().strip() or f"(rc {done.returncode}: {done.stderr.decode().strip()})"
    return Signer(access_key, secret_key).check_against_botocore(sign)


def measure_python(endpoint: Endpoint, server_pid: int, workload: str, clients: int, args, hot_table: str,
                   live_workers: list, warmup: float, seconds: float) -> Measurement:
    """Runs one workload on one server with `clients` Python threads spread over a few processes."""
    context = multiprocessing.get_context("fork")
    processes = min(clients, args.procs)
    groups = [list(range(p, clients, processes)) for p in range(processes)]
    start_barrier = context.Barrier(processes + 1)
    pipes, workers = [], []
    for ids in groups:
        receiver, sender = context.Pipe(duplex=False)
        worker = context.Process(target=worker_main, args=(endpoint, workload, ids, clients, args.tables, hot_table,
                                                           warmup, seconds, start_barrier, sender))
        worker.start()
        sender.close()
        pipes.append(receiver)
        workers.append(worker)
        live_workers.append(worker)
    m = Measurement()
    try:
        start_barrier.wait(WORKER_READY_TIMEOUT_SECONDS)
    except threading.BrokenBarrierError:
        m.note = "load processes did not get ready"
        return m
    time.sleep(warmup)
    cpu_before, wall_before = cpu_seconds_of_tree(server_pid), time.monotonic()
    time.sleep(seconds)
    m.server_cpu_percent = 100 * (cpu_seconds_of_tree(server_pid) - cpu_before) / (time.monotonic() - wall_before)
    generator_cpu, latencies = 0.0, []
    for receiver, worker in zip(pipes, workers):
        try:
            results, cpu_seconds = receiver.recv()
        except EOFError:
            m.note = m.note or f"load process exited with code {worker.exitcode}"
            continue
        finally:
            worker.join()
            live_workers.remove(worker)
        generator_cpu += cpu_seconds
        for r in results:
            m.ops, m.retries, m.errors = m.ops + r.ops, m.retries + r.retries, m.errors + r.errors
            latencies += r.latencies
            m.note = m.note or r.first_error
    latencies.sort()
    m.seconds = seconds
    m.ok = m.ops > 0
    m.p50_ms = None if not latencies else 1000 * percentile(latencies, 0.50)
    m.p99_ms = None if not latencies else 1000 * percentile(latencies, 0.99)
    m.generator_cpu_percent = 100 * generator_cpu / seconds
    return m


# --------------------------------------------------------------------------- servers and setup


def spread_table(index: int) -> str:
    return f"{SPREAD_TABLE_PREFIX}{index:03d}"


TABLE_SCHEMA = {"type": "struct", "schema-id": 0,
                "fields": [{"id": 1, "name": "id", "type": "long", "required": False},
                           {"id": 2, "name": "payload", "type": "string", "required": False}]}


def create_table(client: CatalogClient, endpoint: Endpoint, name: str, snapshots: int):
    client.json_call("POST", f"{endpoint.root}{endpoint.prefix}/namespaces/{NAMESPACE}/tables",
                     {"name": name, "schema": TABLE_SCHEMA})
    state = load_state(client, endpoint.table_path(name))
    for _ in range(snapshots):
        status, data = commit_once(client, state)
        if status != 200:
            raise RuntimeError(f"{endpoint.name}: setup commit on {name} -> {status}: {data[:300]!r}")


def prepare_catalog(endpoint: Endpoint, tables: int, warehouse_admin: bool, warehouse: str = WAREHOUSE):
    """Warehouse (serac only; a bucket, so another name where a bucket `bench` exists), prefix,
    namespace, the load-table table and the spread tables."""
    client = CatalogClient(endpoint)
    try:
        if warehouse_admin:
            client.json_call("POST", f"{endpoint.root}/v1/warehouses", {"name": warehouse})
            config = client.json_call("GET", f"{endpoint.root}/v1/config?warehouse={warehouse}")
        else:
            config = client.json_call("GET", f"{endpoint.root}/v1/config")
        prefix = {**config.get("defaults", {}), **config.get("overrides", {})}.get("prefix")
        endpoint.prefix = f"/v1/{prefix}" if prefix else "/v1"
        client.json_call("POST", f"{endpoint.root}{endpoint.prefix}/namespaces", {"namespace": [NAMESPACE]})
        create_table(client, endpoint, LOAD_TABLE, LOAD_TABLE_SNAPSHOTS)
        for t in range(tables):
            create_table(client, endpoint, spread_table(t), 0)
    finally:
        client.close()


class Reference:
    """The Iceberg reference REST catalog through tests/catalog_tools/run_reference_server.sh."""

    def __init__(self, processes: Processes, warehouse_dir: str, database_path: str, log_path: str):
        self.processes, self.warehouse_dir, self.log_path = processes, warehouse_dir, log_path
        self.database_path = database_path
        self.port = free_loopback_port()
        self.proc: subprocess.Popen | None = None
        self.failure = ""

    def start(self) -> bool:
        # The launcher's default, in-memory SQLite, is one database per pooled connection: under
        # concurrent requests it answers 500 "no such table". A SQLite file is shared by the pool.
        env = dict(os.environ, CATALOG_URI=f"jdbc:sqlite:{self.database_path}")
        with open(self.log_path, "wb") as log:
            self.proc = self.processes.start([REFERENCE_LAUNCHER, str(self.port), self.warehouse_dir], env=env,
                                             stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + REFERENCE_START_TIMEOUT_SECONDS
        while not REFERENCE_READY.search(read_text(self.log_path)):
            if self.proc.poll() is not None:
                self.failure = (f"reference server exited with code {self.proc.returncode}: "
                                f"{read_text(self.log_path)[-800:]}")
                return False
            if time.monotonic() > deadline:
                self.failure = f"reference server not ready within {REFERENCE_START_TIMEOUT_SECONDS}s"
                return False
            time.sleep(0.1)
        return True


@dataclass
class Target:
    """One catalog under test: its endpoint, process and memory high-water mark."""
    endpoint: Endpoint
    pid: int
    alive: callable
    peak_rss_kib: int | None = None
    failure: str = ""

    def sample_peak_rss(self):
        if self.alive():
            self.peak_rss_kib = proc_status_kib(self.pid, "VmHWM") or self.peak_rss_kib


def start_serac(processes: Processes, args, work_dir: str) -> tuple[Target | None, str]:
    serac = Serac(processes, os.path.abspath(args.serac), os.path.join(work_dir, "serac-data"),
                  os.path.join(work_dir, "serac.log"), args.serac_arg)
    if not os.access(serac.binary, os.X_OK):
        return None, f"no serac binary at {serac.binary}"
    if not serac.start():
        return None, serac.failure + "\n" + serac.log_tail()
    endpoint = Endpoint("serac", serac.port, "/_iceberg", access_key=serac.user, secret_key=serac.password)
    target = Target(endpoint, serac.proc.pid, serac.alive)
    try:
        prepare_catalog(endpoint, args.tables, warehouse_admin=True)
    except (RuntimeError, KeyError, ValueError) as e:
        return None, f"serac setup failed: {e}\n{serac.log_tail()}"
    return target, ""


def start_reference(processes: Processes, args, work_dir: str) -> tuple[Target | None, str]:
    reference = Reference(processes, os.path.join(work_dir, "reference-warehouse"),
                          os.path.join(work_dir, "reference-catalog.db"), os.path.join(work_dir, "reference.log"))
    if not reference.start():
        return None, reference.failure
    # It ignores Authorization; requests are signed anyway so the generator does the same work.
    endpoint = Endpoint("reference", reference.port, "", access_key="bench", secret_key="bench-unused")
    target = Target(endpoint, reference.proc.pid, lambda: reference.proc.poll() is None)
    try:
        prepare_catalog(endpoint, args.tables, warehouse_admin=False)
    except (RuntimeError, KeyError, ValueError) as e:
        return None, f"reference setup failed: {e}"
    return target, ""


def counted(workload: str, args) -> bool:
    """Commit cells are counted, not windowed (unless --commits 0 or the Python generator runs
    them): every commit adds a snapshot, so in a fixed window the faster catalog would commit
    against larger metadata than the slower one. Counted, both do the very same commits."""
    return workload in ("hot", "spread") and args.commits > 0 and not args.python_load


QUIET_CPU_PERCENT = 5          # another catalog below this share of a core counts as idle
QUIET_WAIT_SECONDS_MAX = 10    # how long a measurement waits for the other catalog to go idle


def wait_until_others_idle(targets: dict, measured: str):
    """The JVM keeps compiling and collecting for a while after a cell; the catalog measured next
    would share the cores with that. Each measurement starts once the other catalogs use less than
    QUIET_CPU_PERCENT of a core (or after QUIET_WAIT_SECONDS_MAX)."""
    others = [t.pid for name, t in targets.items() if name != measured and t.alive()]
    deadline = time.monotonic() + QUIET_WAIT_SECONDS_MAX
    while others and time.monotonic() < deadline:
        before = sum(cpu_seconds_of_tree(pid) for pid in others)
        time.sleep(0.25)
        if 100 * (sum(cpu_seconds_of_tree(pid) for pid in others) - before) / 0.25 < QUIET_CPU_PERCENT:
            return


def run_cell(cell: Cell, targets: dict, args, live_workers: list):
    """Reference first, then serac, back to back. Commit cells get a fresh hot table each."""
    if counted(cell.workload, args):
        progress(f"{WORKLOADS[cell.workload]} x{cell.clients} ({args.warmup_commits} warm-up + "
                 f"{args.commits} measured commits each)")
    else:
        progress(f"{WORKLOADS[cell.workload]} x{cell.clients} ({args.warmup}s warm-up + {args.seconds}s each)")
    hot_table = f"hot{cell.clients}"
    for name in ("reference", "serac"):
        target = targets.get(name)
        if target is None:
            continue
        if not target.alive():
            setattr(cell, name, Measurement(note=f"{name} is not running"))
            continue
        if cell.workload == "hot":
            client = CatalogClient(target.endpoint)
            try:
                create_table(client, target.endpoint, hot_table, HOT_TABLE_SNAPSHOTS)
            except (RuntimeError, KeyError, ValueError) as e:
                setattr(cell, name, Measurement(note=str(e)))
                continue
            finally:
                client.close()
        # The reference writes its metadata files without fsync; the kernel would write them back
        # during the next measurement and serac's fsyncs would queue behind that. Each catalog
        # starts its measurement with nothing of the other's left to write.
        os.sync()
        wait_until_others_idle(targets, name)
        setattr(cell, name, measure(target.endpoint, target.pid, cell.workload, cell.clients, args, hot_table,
                                    live_workers, args.warmup, args.seconds, args.warmup_commits, args.commits))
        target.sample_peak_rss()


# --------------------------------------------------------------------------- report


def fmt_rate(m: Measurement) -> str:
    return f"{m.ops_per_s():,.0f}/s" if m.ok else "n/a"


def fmt_latency(m: Measurement) -> str:
    return "-" if not m.ok or m.p50_ms is None else f"{m.p50_ms:.2f} / {m.p99_ms:.2f}"


def fmt_cpu(m: Measurement) -> str:
    if not m.ok:
        return "-"
    return f"{m.server_cpu_percent:.0f}/{m.generator_cpu_percent:.0f}"


def print_table(cells: list[Cell]):
    header = ["workload", "clients", "serac", "reference", "ratio", "serac p50/p99 ms", "ref p50/p99 ms",
              "n serac/ref", "409 retries serac/ref", "CPU% serac/load", "CPU% ref/load"]
    rows = []
    for c in cells:
        ratio = c.ratio()
        rows.append([WORKLOADS[c.workload], str(c.clients), fmt_rate(c.serac), fmt_rate(c.reference),
                     "-" if ratio is None else f"{ratio:.2f}", fmt_latency(c.serac), fmt_latency(c.reference),
                     f"{c.serac.ops}/{c.reference.ops}",
                     "-" if c.workload == "load" else f"{c.serac.retries}/{c.reference.retries}",
                     fmt_cpu(c.serac), fmt_cpu(c.reference)])
    widths = [max(len(r[i]) for r in rows + [header]) for i in range(len(header))]

    def line(r):
        return "  ".join(v.ljust(w) if i == 0 else v.rjust(w) for i, (v, w) in enumerate(zip(r, widths)))

    print(line(header))
    print("  ".join("-" * w for w in widths))
    for r in rows:
        print(line(r))
    notes = [f"  {WORKLOADS[c.workload]} x{c.clients} {who}: {m.errors} errors; {m.note}" if m.errors else
             f"  {WORKLOADS[c.workload]} x{c.clients} {who}: {m.note}"
             for c in cells for who, m in (("serac", c.serac), ("reference", c.reference)) if m.note or m.errors]
    if notes:
        print("notes:")
        print("\n".join(notes))


def evaluate_targets(cells: list[Cell]) -> list[tuple[str, str, str, str]]:
    rows = []
    for c in cells:
        ratio = c.ratio()
        verdict = "n/a" if ratio is None else ("PASS" if ratio >= TARGET_RATIO else "MISS")
        rows.append((f"{WORKLOADS[c.workload]} x{c.clients}: serac / reference",
                     "-" if ratio is None else f"{ratio:.2f}", f">= {TARGET_RATIO:.0f}", verdict))
    for c in cells:
        if c.workload in ("hot", "spread") and c.clients == 1:
            p99 = c.serac.p99_ms if c.serac.ok else None
            rows.append((f"serac commit p99, 1 client ({WORKLOADS[c.workload]})",
                         "-" if p99 is None else f"{p99:.2f} ms", f"< {TARGET_P99_MS:.0f} ms",
                         "n/a" if p99 is None else ("PASS" if p99 < TARGET_P99_MS else "MISS")))
    return rows


def print_report(args, cells: list[Cell], targets: dict, failures: list[str]):
    print()
    load = (f"<= {args.procs} Python processes x threads" if args.python_load else
            "catalog_load_client (C++, 1 thread per client)")
    window = "fixed window" if args.python_load else "window + drain"
    print(f"serac catalog benchmark: {os.cpu_count()} CPUs, loopback, {args.warmup}s warm-up + {args.seconds}s "
          f"{window} per cell, load from {load}, 1 keep-alive connection per client, SigV4 (s3tables) on every "
          f"request; reference = Iceberg RESTCatalogAdapter (1.11.0 test jar, 1.12.0 runtime), JdbcCatalog on a SQLite file, "
          f"file warehouse")
    if any(counted(c.workload, args) for c in cells):
        print(f"commit cells are counted, not windowed: each catalog lands {args.warmup_commits} warm-up commits "
              f"and then {args.commits} measured ones, so both commit against the same growing metadata")
    print()
    print_table(cells)
    print()
    for name in ("serac", "reference"):
        target = targets.get(name)
        if target:
            print(f"{name} peak RSS (VmHWM): {fmt_kib(target.peak_rss_kib)}")
    for failure in failures:
        print(failure)
    print()
    print("targets:")
    rows = evaluate_targets(cells)
    widths = [max(len(r[i]) for r in rows) for i in range(4)] if rows else []
    for r in rows:
        print("  ".join(v.ljust(w) for v, w in zip(r, widths)))
    if args.json:
        write_json(args.json, cells, targets, failures, rows)


def fmt_kib(kib: int | None) -> str:
    return "-" if kib is None else f"{kib / 1024:.1f} MiB"


def write_json(path, cells, targets, failures, target_rows):
    def measurement(m: Measurement):
        return {"ok": m.ok, "ops": m.ops, "seconds": m.seconds, "ops_per_s": m.ops_per_s(), "retries": m.retries,
                "errors": m.errors, "p50_ms": m.p50_ms, "p99_ms": m.p99_ms, "server_cpu_percent": m.server_cpu_percent,
                "generator_cpu_percent": m.generator_cpu_percent, "note": m.note}

    doc = {"cells": [{"workload": c.workload, "clients": c.clients, "ratio": c.ratio(),
                      "serac": measurement(c.serac), "reference": measurement(c.reference)} for c in cells],
           "peak_rss_kib": {name: t.peak_rss_kib for name, t in targets.items()}, "failures": failures,
           "targets": [dict(zip(("target", "measured", "goal", "result"), r)) for r in target_rows]}
    with open(path, "w") as f:
        json.dump(doc, f, indent=2)


# --------------------------------------------------------------------------- main


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--serac", default=os.environ.get("SERAC_BIN", "build/serac"), help="serac binary")
    p.add_argument("--serac-arg", action="append", default=[], metavar="ARG",
                   help="extra argument for 'serac server' (repeatable), e.g. --serac-arg=--no-fsync")
    p.add_argument("--seconds", type=float, default=5, help="measured window of each cell")
    p.add_argument("--warmup", type=float, default=1, help="unmeasured warm-up before each window (JIT, caches)")
    p.add_argument("--initial-warmup", type=float, default=3,
                   help="seconds of load-table and of spread commits per catalog before the first cell (JIT)")
    p.add_argument("--clients", default="1,8,32", help="comma-separated concurrency levels")
    p.add_argument("--workloads", default="load,hot,spread", help="comma-separated subset of load,hot,spread")
    p.add_argument("--load-client", default=os.environ.get("CATALOG_LOAD_CLIENT"),
                   help="catalog_load_client binary (default: beside the serac binary)")
    p.add_argument("--python-load", action="store_true",
                   help="load from the Python generator (processes x threads) instead of catalog_load_client")
    p.add_argument("--procs", type=int, default=2,
                   help="with --python-load: load processes at most (clients are threads in them)")
    p.add_argument("--tables", type=int, default=100, help="tables of the spread-commit cells")
    p.add_argument("--commits", type=int, default=400,
                   help="measured commits of each commit cell (0: the --seconds window instead)")
    p.add_argument("--warmup-commits", type=int, default=20, help="unmeasured commits before them")
    p.add_argument("--only", choices=("serac", "reference"), help="measure one catalog only")
    p.add_argument("--tmpdir", default=os.environ.get("BENCH_TMPDIR"), help="where serac data and the warehouse live")
    p.add_argument("--keep", action="store_true", help="keep the temp directory (for debugging)")
    p.add_argument("--json", help="also write all measurements to this file")
    return p.parse_args()


def progress(message: str):
    print(message, file=sys.stderr, flush=True)


def main() -> int:
    args = parse_args()
    signal.signal(signal.SIGINT, signal.default_int_handler)
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, exit_on_signal)
    clients = [int(c) for c in args.clients.split(",")]
    workloads = [w.strip() for w in args.workloads.split(",")]
    unknown = [w for w in workloads if w not in WORKLOADS]
    if unknown or args.procs < 1 or args.tables < 1:
        print(f"bad arguments: unknown workloads {unknown}" if unknown else "--procs and --tables must be >= 1",
              file=sys.stderr)
        return 2
    sample_keys = ("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY")
    sample = Signer(*sample_keys).check_against_botocore()
    if sample:
        print(f"SigV4 signer disagrees with botocore: {sample}", file=sys.stderr)
        return 2
    if not args.python_load:
        args.load_client = os.path.abspath(args.load_client or
                                           os.path.join(os.path.dirname(args.serac), "catalog_load_client"))
        if not os.access(args.load_client, os.X_OK):
            print(f"no catalog_load_client at {args.load_client} (build the CMake target catalog_load_client, "
                  f"or pass --python-load)", file=sys.stderr)
            return 2
        sample = native_signer_check(args.load_client, *sample_keys)
        if sample:
            print(f"catalog_load_client's SigV4 signature disagrees with botocore: {sample}", file=sys.stderr)
            return 2

    processes, live_workers = Processes(), []
    work_dir = tempfile.mkdtemp(prefix="serac-catbench-", dir=args.tmpdir)
    try:
        return run(args, clients, workloads, processes, live_workers, work_dir)
    except KeyboardInterrupt:
        print("\ninterrupted; cleaning up", file=sys.stderr)
        return 130
    finally:
        for worker in live_workers:
            worker.kill()
            worker.join()
        processes.stop_all()
        if args.keep:
            print(f"kept {work_dir}", file=sys.stderr)
        else:
            shutil.rmtree(work_dir, ignore_errors=True)


def run(args, clients, workloads, processes: Processes, live_workers: list, work_dir: str) -> int:
    targets, failures = {}, []
    starters = {"reference": start_reference, "serac": start_serac}
    for name, start in starters.items():
        if args.only and args.only != name:
            continue
        progress(f"starting {name} and creating {args.tables + 1} tables")
        target, failure = start(processes, args, work_dir)
        if target is None:
            failures.append(f"{name}: {failure}")
            progress(failure)
        else:
            targets[name] = target
            target.sample_peak_rss()
    if not targets:
        return 1
    for name, target in targets.items():
        if args.initial_warmup > 0:
            # Counted spread commits give both catalogs the same tables to start the cells with.
            spread = f"{args.commits} spread commits" if counted("spread", args) else f"{args.initial_warmup}s of spread commits"
            progress(f"warming {name} up with 8 clients: {args.initial_warmup}s of load-table, {spread}")
            os.sync()
            for workload in ("load", "spread"):
                measure(target.endpoint, target.pid, workload, 8, args, "", live_workers, 0, args.initial_warmup,
                        0, args.commits)
    cells = [Cell(w, n) for w in workloads for n in clients]
    for cell in cells:
        run_cell(cell, targets, args, live_workers)
    for name, target in targets.items():
        target.sample_peak_rss()
        if not target.alive():
            failures.append(f"{name} exited during the run")
    print_report(args, cells, targets, failures)
    return 0


if __name__ == "__main__":
    sys.exit(main())
