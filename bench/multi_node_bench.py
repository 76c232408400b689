#!/usr/bin/env python3
"""serac on one node with SQLite, on one node with PostgreSQL, and on three nodes sharing one
PostgreSQL and one blob directory behind nginx: the same S3 and catalog load against the three
set-ups in one run, cell by cell, with the CPU each operation costs serac, PostgreSQL and nginx.

  A  one node, SQLite (`--data DIR`, the default);
  B  one node, `--meta-store postgresql://...`, `--blob-store file:DIR`;
  C  three nodes on the same kind of store (a schema of their own in the same PostgreSQL server),
     one blob directory, one server key, behind nginx (round robin, upstream keepalive).

Cells: S3 4 KiB GET and PUT (wrk, presigned URLs), 64 MiB GET and PUT (load_client, drained),
catalog load-table and append commits to 100 tables and to one hot table (catalog_load_client;
commits counted, so every set-up makes the very same commits). The load machinery is
bench/s3_bench.py's and bench/catalog_bench.py's. PostgreSQL runs with fsync and
synchronous_commit on, as serac fsyncs its SQLite log before it answers: the same durability is
compared.

This is a measurement, not a test: it prints a table and marks the targets PASS or MISS, and
exits 0 unless it could not run. Run it through bench/multi_node_bench.sh.
"""

import argparse
import json
import os
import pwd
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field

BENCH_DIR = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, BENCH_DIR)
from catalog_bench import (CatalogClient, Endpoint, HOT_TABLE_SNAPSHOTS, QUIET_CPU_PERCENT,  # noqa: E402
                           QUIET_WAIT_SECONDS_MAX, create_table, measure_native, native_signer_check,
                           prepare_catalog)
from s3_bench import (MiB, SIZES, Nginx, ObjectSize, Processes, Serac, compile_load_client,  # noqa: E402
                      cpu_seconds_of_tree, exit_on_signal, free_loopback_port, make_payloads, prepare_serac,
                      proc_status_kib, run_load_client, run_wrk)

PG_BIN = os.environ.get("SERAC_PG_BIN", "/usr/lib/postgresql/15/bin")
PG_USER = "postgres"
# Every node's pool may hold limits::kPostgresConnectionsMax (32) connections and B's node keeps
# its pool while C's three run: four pools and psql need more than the default 100.
PG_MAX_CONNECTIONS = 200
NODES = 3
WAREHOUSE = "catalog"  # a bucket: "bench" is the S3 cells' bucket
TARGET_CPU_RATIO = 2.0  # B's CPU per PUT / commit, PostgreSQL's included, against A's
TARGET_READ_RATIO = 0.8  # B's GET / load-table rate against A's
TARGET_NODES_RATIO = 0.9  # C's aggregate rate against B's


@dataclass(frozen=True)
class Workload:
    key: str
    label: str
    kind: str  # "s3" or "catalog"
    op: str  # GET / PUT, or catalog_bench's workload name (load, spread, hot)
    size: ObjectSize | None = None

    def reports_mib(self) -> bool:
        return self.size is not None and not self.size.report_ops

    def cpu_in_ms(self) -> bool:
        return self.size is not None and self.size.drain


WORKLOADS = [
    Workload("get4k", "GET 4 KiB", "s3", "GET", SIZES["4k"]),
    Workload("put4k", "PUT 4 KiB", "s3", "PUT", SIZES["4k"]),
    Workload("get64m", "GET 64 MiB", "s3", "GET", SIZES["64m"]),
    Workload("put64m", "PUT 64 MiB", "s3", "PUT", SIZES["64m"]),
    Workload("load", "load-table", "catalog", "load"),
    Workload("spread", "commit, 100 tables", "catalog", "spread"),
    Workload("hot", "commit, 1 hot table", "catalog", "hot"),
]
SETUP_LABELS = {"A": "A SQLite, 1 node", "B": "B PostgreSQL, 1 node", "C": f"C PostgreSQL, {NODES} nodes+nginx"}


# --------------------------------------------------------------------------- PostgreSQL


def as_postgres(argv: list[str]) -> list[str]:
    """PostgreSQL refuses to run as root; as root it runs as the account Debian's package made."""
    return ["runuser", "-u", PG_USER, "--", *argv] if os.geteuid() == 0 else argv


class Postgres:
    """A throwaway PostgreSQL 15 as scripts/pg-throwaway.sh starts one, but with fsync on: its
    settings are initdb's defaults (synchronous_commit on, full_page_writes on, shared_buffers
    128MB) apart from the listen address, the socket directory and max_connections."""

    def __init__(self, directory: str):
        self.directory, self.data = directory, os.path.join(directory, "data")
        self.port = free_loopback_port()
        self.failure = ""
        self.session: subprocess.Popen | None = None  # psql kept open for position()

    def start(self) -> bool:
        os.makedirs(self.directory)
        if os.geteuid() == 0:
            account = pwd.getpwnam(PG_USER)
            os.chown(self.directory, account.pw_uid, account.pw_gid)
        options = (f"-c listen_addresses=127.0.0.1 -c unix_socket_directories={self.directory} -p {self.port} "
                   f"-c max_connections={PG_MAX_CONNECTIONS} -c fsync=on -c synchronous_commit=on")
        for argv in ([os.path.join(PG_BIN, "initdb"), "-D", self.data, "-A", "trust", "-U", PG_USER, "--no-sync",
                      "-E", "UTF8"],
                     [os.path.join(PG_BIN, "pg_ctl"), "-D", self.data, "-l", os.path.join(self.directory, "log"),
                      "-w", "-o", options, "start"]):
            done = subprocess.run(as_postgres(argv), capture_output=True, text=True)
            if done.returncode != 0:
                self.failure = f"{os.path.basename(argv[0])} failed: {(done.stderr or done.stdout).strip()[-500:]}"
                return False
        return True

    def stop(self):
        if self.session:
            self.session.stdin.close()
            self.session.wait()
        if os.path.exists(os.path.join(self.data, "postmaster.pid")):
            subprocess.run(as_postgres([os.path.join(PG_BIN, "pg_ctl"), "-D", self.data, "-m", "fast", "stop"]),
                           capture_output=True)

    def postmaster_pid(self) -> int:
        with open(os.path.join(self.data, "postmaster.pid")) as f:
            return int(f.readline())

    def psql_argv(self) -> list[str]:
        return [os.path.join(PG_BIN, "psql"), "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1",
                "-p", str(self.port), "-U", PG_USER, "-d", "postgres"]

    def sql(self, statement: str) -> str:
        done = subprocess.run(self.psql_argv() + ["-c", statement], capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"psql: {done.stderr.strip()}")
        return done.stdout.strip()

    def position(self) -> tuple[int, int]:
        """(WAL position in bytes, next transaction id): their growth over a span is the WAL
        written and the write transactions begun (each gets an id; retried ones too). Neither
        query writes or takes an id itself. Asked over one open psql session, which answers in a
        fraction of a millisecond: a new psql per question took tens on a busy machine, long
        enough to skew the span it marks."""
        if self.session is None:
            self.session = subprocess.Popen(self.psql_argv(), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                            stderr=subprocess.DEVNULL, text=True, start_new_session=True)
        self.session.stdin.write("SELECT pg_current_wal_lsn(), pg_snapshot_xmax(pg_current_snapshot());\n")
        self.session.stdin.flush()
        lsn, xmax = self.session.stdout.readline().strip().split("|")
        high, low = lsn.split("/")
        return (int(high, 16) << 32) + int(low, 16), int(xmax)

    def url(self, schema: str) -> str:
        self.sql(f"CREATE SCHEMA IF NOT EXISTS {schema}")
        return f"postgresql://{PG_USER}@127.0.0.1:{self.port}/postgres?options=-csearch_path%3D{schema}"


def cpu_seconds_of_postgres(postmaster_pid: int) -> float:
    """The postmaster's process tree: backends, WAL writer, checkpointer and autovacuum are its
    children; what children that have exited used (autovacuum workers come and go) is in its own
    cutime/cstime, which cpu_seconds_of_tree leaves out."""
    try:
        with open(f"/proc/{postmaster_pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        reaped = (int(fields[13]) + int(fields[14])) / os.sysconf("SC_CLK_TCK")
    except OSError:
        reaped = 0.0
    return cpu_seconds_of_tree(postmaster_pid) + reaped


# --------------------------------------------------------------------------- nginx in front


class ProxyNginx(Nginx):
    """s3_bench's nginx, configured as a load balancer over the nodes instead of a file server."""
    # Unbuffered, nginx relays at most proxy_buffer_size (client_body_buffer_size for a request
    # body) per read, one page by default: a 64 MiB GET then cost nginx about 110 ms of CPU here,
    # with 64k about 40 ms; larger buffers saved nothing more (what is left is the copy itself).
    relay_buffer = "64k"

    def __init__(self, processes: Processes, prefix: str, upstream_ports: list[int]):
        super().__init__(processes, prefix, html_dir="")
        self.upstream_ports = upstream_ports

    def config(self) -> str:
        p = self.prefix
        user_line = "user root;\n" if os.geteuid() == 0 else ""
        temp_paths = "".join(f"  {kind}_temp_path {p}/{kind}_temp;\n"
                             for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
        servers = "".join(f"    server 127.0.0.1:{port};\n" for port in self.upstream_ports)
        return (f"{user_line}daemon off;\nworker_processes auto;\npid {p}/nginx.pid;\n"
                f"error_log {p}/error.log warn;\n"
                "events { worker_connections 4096; }\n"
                "http {\n  access_log off;\n"
                "  keepalive_timeout 75s;\n  keepalive_requests 1000000;\n" + temp_paths +
                # Connections to the nodes are kept open: a new one per request would cost each
                # node an accept and the proxy a connect per operation.
                "  upstream serac {\n" + servers +
                "    keepalive 64;\n    keepalive_requests 1000000;\n    keepalive_timeout 75s;\n  }\n"
                f"  server {{\n    listen 127.0.0.1:{self.port};\n"
                "    location / {\n"
                "      proxy_pass http://serac;\n"
                "      proxy_http_version 1.1;\n"
                '      proxy_set_header Connection "";\n'
                # SigV4 signs the Host header (presigned URLs too): the node must see the client's.
                "      proxy_set_header Host $http_host;\n"
                # Bodies stream both ways: nginx neither spools a 64 MiB PUT to disk before
                # sending it on nor holds a GET back, and any size passes.
                "      proxy_request_buffering off;\n"
                "      proxy_buffering off;\n"
                "      client_max_body_size 0;\n" +
                (f"      proxy_buffer_size {self.relay_buffer};\n      client_body_buffer_size {self.relay_buffer};\n"
                 f"      proxy_buffers 4 {self.relay_buffer};\n" if self.relay_buffer else "") +
                "      proxy_read_timeout 300s;\n      proxy_send_timeout 300s;\n"
                "    }\n  }\n}\n")


class FrontEnd:
    """What prepare_serac needs of a server (client()), for the address the load is sent to:
    presigned URLs sign host and port, so set-up C's are signed for nginx's."""
    client = Serac.client

    def __init__(self, port: int, user: str, password: str):
        self.port, self.user, self.password = port, user, password


# --------------------------------------------------------------------------- set-ups


class Setup:
    """One system under test: its serac nodes, the PostgreSQL and nginx it uses (if any), where
    the load goes, and its presigned targets and catalog endpoint once prepared."""

    def __init__(self, key: str, nodes: list[Serac], postgres: Postgres | None = None):
        self.key, self.label, self.nodes, self.postgres = key, SETUP_LABELS[key], nodes, postgres
        self.nginx: ProxyNginx | None = None
        self.failure = ""
        self.get_targets: dict[str, str] = {}
        self.put_targets: dict[str, str] = {}
        self.cell_failures: dict[tuple[str, str], str] = {}
        self.endpoint: Endpoint | None = None
        self.peak_rss_kib: dict[str, int | None] = {}

    @property
    def port(self) -> int:
        return self.nginx.port if self.nginx else self.nodes[0].port

    def cpu_parts(self) -> dict:
        """part name -> CPU seconds so far; node parts add up to "serac" in the report."""
        parts = {f"node{i}": (lambda pid=n.proc.pid: cpu_seconds_of_tree(pid)) for i, n in enumerate(self.nodes)}
        if self.postgres:
            parts["postgres"] = lambda pid=self.postgres.postmaster_pid(): cpu_seconds_of_postgres(pid)
        if self.nginx:
            parts["nginx"] = lambda pid=self.nginx.proc.pid: cpu_seconds_of_tree(pid)
        return parts

    def usable(self) -> bool:
        if self.failure:
            return False
        dead = [n for n in self.nodes if not n.alive()]
        if dead:
            self.failure = (f"{os.path.basename(dead[0].data_dir)} exited with code {dead[0].proc.returncode} "
                            f"during the run; log tail:\n{dead[0].log_tail()}")
        elif self.nginx and self.nginx.proc.poll() is not None:
            self.failure = f"nginx exited with code {self.nginx.proc.returncode} during the run"
        return not self.failure

    def sample_peak_rss(self):
        for i, node in enumerate(self.nodes):
            if node.alive():
                self.peak_rss_kib[f"node{i}"] = proc_status_kib(node.proc.pid, "VmHWM") or \
                    self.peak_rss_kib.get(f"node{i}")


def start_setups(args, processes: Processes, work_dir: str, postgres: Postgres | None) -> list[Setup]:
    setups = []
    for key in args.only:
        base = os.path.join(work_dir, key)
        os.makedirs(base)
        serac_args = ["--log-level", "warn", *args.serac_arg]  # no access log, as s3_bench runs it
        if key == "A":
            nodes = [Serac(processes, args.serac, os.path.join(base, "data"), os.path.join(base, "serac.log"),
                           serac_args)]
        else:
            url = postgres.url("single" if key == "B" else "cluster")
            count = 1 if key == "B" else NODES
            store_args = ["--meta-store", url, "--blob-store", f"file:{os.path.join(base, 'blobs')}"]
            if key == "C":
                # Behind a proxy every connection comes from its address: the per-client cap is off.
                store_args += ["--connections-per-client-max", "0"]
            nodes = [Serac(processes, args.serac, os.path.join(base, f"node{i}"), os.path.join(base, f"node{i}.log"),
                           [*store_args, "--node-name", f"node{i}", *serac_args]) for i in range(count)]
            for node in nodes[1:]:  # one root account for the cluster, as its nodes share one IAM store
                node.user, node.password = nodes[0].user, nodes[0].password
        setup = Setup(key, nodes, postgres if key != "A" else None)
        setups.append(setup)
        progress(f"starting {setup.label}")
        for node in nodes:  # one after the other: the first migrates the schema
            if not node.start():
                setup.failure = f"{node.failure}\n{node.log_tail()}"
                break
        if not setup.failure and key == "C":
            setup.nginx = ProxyNginx(processes, os.path.join(base, "nginx"), [n.port for n in nodes])
            os.makedirs(setup.nginx.prefix)
            if not setup.nginx.start():
                setup.failure = setup.nginx.failure
            else:
                setup.failure = check_round_robin(setup)
    return setups


def check_round_robin(setup: Setup) -> str:
    """Every node answers through nginx (x-serac-node names the node that did)."""
    seen = set()
    for _ in range(4 * NODES):
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{setup.port}/_serac/health/live", timeout=10) as r:
                seen.add(r.headers.get("x-serac-node"))
        except (urllib.error.URLError, OSError) as e:
            return f"nginx -> serac health check failed: {e}"
    expected = {f"node{i}" for i in range(NODES)}
    return "" if seen >= expected else f"nginx reached only {sorted(filter(None, seen))} of {sorted(expected)}"


def prepare(setup: Setup, args, payloads, work_dir: str):
    """S3 bucket, GET objects and presigned target files; the catalog's warehouse, tables."""
    node = setup.nodes[0]
    front = FrontEnd(setup.port, node.user, node.password)
    files_dir = os.path.join(work_dir, setup.key, "targets")
    os.makedirs(files_dir)
    sizes = sorted({w.size for w in args.workloads if w.size}, key=lambda s: s.bytes)
    try:
        if sizes:
            files, setup.cell_failures = prepare_serac(front, sizes, payloads, files_dir)
            setup.get_targets = {label: f for (op, label), f in files.items() if op == "GET"}
            setup.put_targets = {label: f for (op, label), f in files.items() if op == "PUT"}
        if any(w.kind == "catalog" for w in args.workloads):
            setup.endpoint = Endpoint(setup.key, setup.port, "/_iceberg", access_key=node.user,
                                      secret_key=node.password)
            prepare_catalog(setup.endpoint, args.tables, warehouse_admin=True, warehouse=WAREHOUSE)
    except (RuntimeError, KeyError, ValueError, OSError) as e:
        setup.failure = f"setup failed: {e}\n{node.log_tail()}"


# --------------------------------------------------------------------------- measuring


class CpuMeter:
    """Passed as cpu_of_server to s3_bench's and catalog_bench's runners, which call it when their
    measured span opens and closes; it keeps each part's figure at both moments, so serac's,
    PostgreSQL's and nginx's shares can be told apart afterwards. `probe` (PostgreSQL's
    position) is asked before the CPU is read when the span opens and after it when it closes,
    so that what the question costs PostgreSQL stays outside the CPU span."""

    def __init__(self, parts: dict, probe=None):
        self.parts, self.probe = parts, probe
        self.samples: list[tuple[float, dict[str, float]]] = []
        self.probes: list[tuple] = []

    def __call__(self) -> float:
        if self.probe and not self.samples:
            self.probes.append(self.probe())
        sample = {name: cpu() for name, cpu in self.parts.items()}
        self.samples.append((time.monotonic(), sample))
        if self.probe and len(self.samples) > 1:
            self.probes[1:] = [self.probe()]
        return sum(sample.values())

    def span(self) -> tuple[float, dict[str, float]]:
        if len(self.samples) < 2:
            return 0.0, {}
        (t0, first), (t1, last) = self.samples[0], self.samples[-1]
        return t1 - t0, {name: last[name] - first[name] for name in first}

    def probe_growth(self) -> tuple | None:
        """How much each probed figure grew between the first and the last probe."""
        if len(self.probes) < 2:
            return None
        return tuple(b - a for a, b in zip(self.probes[0], self.probes[-1]))


@dataclass
class Result:
    ok: bool = False
    ops: int = 0
    seconds: float = 0.0
    p50_ms: float | None = None
    p99_ms: float | None = None
    retries: int = 0
    errors: int = 0
    span_seconds: float = 0.0  # over which cpu was sampled
    cpu: dict = field(default_factory=dict)  # part -> CPU seconds over the span
    generator_cpu_percent: float | None = None
    wal_bytes_per_op: float | None = None
    pg_transactions_per_op: float | None = None
    note: str = ""

    def ops_per_s(self) -> float:
        return self.ops / self.seconds if self.seconds else 0.0

    def rate(self, w: Workload) -> float:
        return self.ops_per_s() * w.size.bytes / MiB if w.reports_mib() else self.ops_per_s()

    def part_cpu(self, part: str) -> float | None:
        if part == "serac":
            nodes = [v for k, v in self.cpu.items() if k.startswith("node")]
            return sum(nodes) if nodes else None
        return self.cpu.get(part)

    def cpu_per_op(self, *parts: str) -> float | None:
        """CPU seconds per operation: the parts' CPU over the span divided by the operations
        counted. Each runner's span holds what it counts and little else: wrk's adds its start
        (idle servers) and leaves out the requests still open at its end, load_client's and
        catalog_load_client's end when the last counted operation has finished (counted commits:
        plus at most one more per client, the ones under way when the count was reached). A
        division of rates would count the idle or thinning ends as if they were the window."""
        values = [self.part_cpu(p) for p in parts]
        if not self.ok or any(v is None for v in values):
            return None
        return sum(values) / self.ops

    def cpu_percent(self) -> float | None:
        return 100 * sum(self.cpu.values()) / self.span_seconds if self.span_seconds else None


def measure(w: Workload, setup: Setup, args, tools, live_workers: list) -> Result:
    meter = CpuMeter(setup.cpu_parts(), setup.postgres.position if setup.postgres else None)
    if w.kind == "s3":
        failure = setup.cell_failures.get((w.op, w.size.label))
        targets = (setup.get_targets if w.op == "GET" else setup.put_targets).get(w.size.label)
        if failure or not targets:
            return Result(note=failure or "no targets")
        body_bytes = w.size.bytes if w.op == "PUT" else 0
        if w.size.drain:
            m = run_load_client(tools["load_client"], setup.port, w.op, targets, body_bytes, args.clients,
                                args.large_seconds, meter)
        else:
            m = run_wrk(setup.port, w.op, targets, body_bytes, args.clients, args.seconds, args.wrk_threads, meter)
        result = Result(ok=m.ok, ops=m.ops, seconds=m.seconds, p50_ms=m.p50_ms, p99_ms=m.p99_ms,
                        generator_cpu_percent=m.generator_cpu_percent, note=m.note)
    else:
        hot_table = f"hot{args.catalog_clients}"
        if w.op == "hot":  # a fresh table per set-up, 3 snapshots, as catalog_bench starts its cells
            client = CatalogClient(setup.endpoint)
            try:
                create_table(client, setup.endpoint, hot_table, HOT_TABLE_SNAPSHOTS)
            except (RuntimeError, KeyError, ValueError) as e:
                return Result(note=str(e))
            finally:
                client.close()
        native = argparse.Namespace(load_client=tools["catalog_load_client"], tables=args.tables,
                                    commits=args.commits, python_load=False)
        m = measure_native(setup.endpoint, setup.nodes[0].proc.pid, w.op, args.catalog_clients, native, hot_table,
                           live_workers, args.warmup, args.seconds, args.warmup_commits, args.commits,
                           cpu_of_server=meter)
        note = "; ".join(filter(None, [f"{m.errors} errors" if m.errors else "", m.note]))
        result = Result(ok=m.ok, ops=m.ops, seconds=m.seconds, p50_ms=m.p50_ms, p99_ms=m.p99_ms, retries=m.retries,
                        errors=m.errors, generator_cpu_percent=m.generator_cpu_percent, note=note)
    result.span_seconds, result.cpu = meter.span()
    growth = meter.probe_growth()
    if growth and result.ok:  # as cpu_per_op
        result.wal_bytes_per_op, result.pg_transactions_per_op = (g / result.ops for g in growth)
    return result


def settle(setups: list[Setup]):
    """Each measurement starts with nothing of the previous one left: written back (64 MiB PUTs
    leave a gigabyte dirty) and every process quiet (catalog_bench's threshold and patience)."""
    os.sync()
    parts = {}
    for s in setups:
        if s.usable():
            parts.update({f"{s.key}.{k}": v for k, v in s.cpu_parts().items()})
    deadline = time.monotonic() + QUIET_WAIT_SECONDS_MAX
    while parts and time.monotonic() < deadline:
        before = sum(cpu() for cpu in parts.values())
        time.sleep(0.25)
        if 100 * (sum(cpu() for cpu in parts.values()) - before) / 0.25 < QUIET_CPU_PERCENT:
            return


def idle_background(setups: list[Setup], seconds: float = 2.0) -> dict[str, float]:
    """CPU % of one core the set-ups use with no load: every node's background work, PostgreSQL's
    share of it (nodes poll their store), and that is counted in each cell's CPU too."""
    meters = {s.key: CpuMeter(s.cpu_parts()) for s in setups if s.usable()}
    for m in meters.values():
        m()
    time.sleep(seconds)
    figures = {}
    for key, m in meters.items():
        m()
        span, cpu = m.span()
        for part, value in cpu.items():
            name = "postgres" if part == "postgres" else "nginx" if part == "nginx" else f"{key} serac"
            figures[name] = figures.get(name, 0.0) + 100 * value / span
    return figures


# --------------------------------------------------------------------------- report


def fmt_rate(w: Workload, r: Result | None) -> str:
    if r is None or not r.ok:
        return "n/a"
    return f"{r.rate(w):,.1f} MiB/s" if w.reports_mib() else f"{r.rate(w):,.0f}/s"


def fmt_cpu(w: Workload, seconds: float | None) -> str:
    if seconds is None:
        return "-"
    return f"{seconds * 1e3:,.1f} ms" if w.cpu_in_ms() else f"{seconds * 1e6:,.0f} us"


def fmt_bytes(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value / 1024:,.1f} KiB" if value >= 1024 else f"{value:,.0f} B"


def ratio(a: float | None, b: float | None) -> float | None:
    return a / b if a is not None and b else None


def rate_ratio(w: Workload, results: dict, key: str, base: str) -> float | None:
    r, b = results.get(key), results.get(base)
    if r is None or b is None or not (r.ok and b.ok):
        return None
    return ratio(r.rate(w), b.rate(w))


def total_parts(key: str) -> tuple[str, ...]:
    return {"A": ("serac",), "B": ("serac", "postgres"), "C": ("serac", "postgres", "nginx")}[key]


def print_table(cells: list[tuple[Workload, dict]]):
    header = ["workload", "set-up", "rate", "rate vs", "p50/p99 ms", "CPU/op serac", "postgres", "nginx",
              "total", "total vs", "PG xact/op", "WAL/op", "n", "409s", "CPU% all/load"]
    rows = []
    for w, results in cells:
        for i, (key, r) in enumerate(results.items()):
            base = {"B": "A", "C": "B"}.get(key)
            rr = rate_ratio(w, results, key, base) if base else None
            total = r.cpu_per_op(*total_parts(key))
            base_total = results[base].cpu_per_op(*total_parts(base)) if base in results else None
            cr = ratio(total, base_total)
            rows.append([w.label if i == 0 else "", SETUP_LABELS[key], fmt_rate(w, r),
                         "" if rr is None else f"{rr:.2f} {base}",
                         "-" if not r.ok or r.p50_ms is None else f"{r.p50_ms:.2f} / {r.p99_ms:.2f}",
                         fmt_cpu(w, r.cpu_per_op("serac")), fmt_cpu(w, r.cpu_per_op("postgres")),
                         fmt_cpu(w, r.cpu_per_op("nginx")), fmt_cpu(w, total),
                         "" if cr is None else f"{cr:.2f} {base}",
                         "-" if r.pg_transactions_per_op is None else f"{r.pg_transactions_per_op:.2f}",
                         fmt_bytes(r.wal_bytes_per_op), str(r.ops),
                         str(r.retries) if w.op in ("spread", "hot") else "-",
                         "-" if not r.ok else f"{r.cpu_percent():.0f}/{r.generator_cpu_percent or 0:.0f}"])
    widths = [max(len(r[i]) for r in rows + [header]) for i in range(len(header))]

    def line(r):
        return "  ".join(v.ljust(w) if i < 2 else v.rjust(w) for i, (v, w) in enumerate(zip(r, widths)))

    print(line(header))
    print("  ".join("-" * w for w in widths))
    for r in rows:
        print(line(r))
    shares = []
    for w, results in cells:
        c = results.get("C")
        if c and c.ok and c.part_cpu("serac"):
            serac = c.part_cpu("serac")
            shares.append(f"{w.label} " + "/".join(f"{100 * c.cpu.get(f'node{i}', 0) / serac:.0f}"
                                                  for i in range(NODES)))
    if shares:
        print("C, each node's share of serac's CPU in % (node0/1/2): " + ", ".join(shares))
    # On one machine the proxy's CPU is taken from the nodes; apart, what coordination costs is
    # serac's and PostgreSQL's CPU per operation in C against B's.
    split = []
    for w, results in cells:
        b, c = results.get("B"), results.get("C")
        if b and c and b.ok and c.ok:
            own = ratio(c.cpu_per_op("serac", "postgres"), b.cpu_per_op("serac", "postgres"))
            if own is not None:
                split.append(f"{w.label} {own:.2f}x + nginx {fmt_cpu(w, c.cpu_per_op('nginx'))}")
    if split:
        print("C against B, CPU/op of serac+PostgreSQL, and what nginx adds: " + ", ".join(split))
    notes = [f"  {w.label} {key}: {r.note}" for w, results in cells for key, r in results.items() if r.note]
    if notes:
        print("notes:")
        print("\n".join(notes))


def evaluate_targets(cells: list[tuple[Workload, dict]]) -> list[tuple[str, str, str, str]]:
    """(target, measured, goal, PASS/MISS/n/a) rows."""
    rows = []

    def verdict(value, ok) -> tuple[str, str]:
        return ("-", "n/a") if value is None else (f"{value:.2f}", "PASS" if ok(value) else "MISS")

    for w, results in cells:
        if w.op in ("PUT", "spread", "hot"):
            b = results["B"].cpu_per_op("serac", "postgres") if "B" in results else None
            a = results["A"].cpu_per_op("serac") if "A" in results else None
            shown, result = verdict(ratio(b, a), lambda v: v <= TARGET_CPU_RATIO)
            rows.append((f"{w.label}: CPU/op B (serac+PostgreSQL) / A", shown, f"<= {TARGET_CPU_RATIO:.2f}", result))
        else:
            value = rate_ratio(w, results, "B", "A") if {"A", "B"} <= results.keys() else None
            shown, result = verdict(value, lambda v: v >= TARGET_READ_RATIO)
            rows.append((f"{w.label}: rate B / A", shown, f">= {TARGET_READ_RATIO:.2f}", result))
    for w, results in cells:
        value = rate_ratio(w, results, "C", "B") if {"B", "C"} <= results.keys() else None
        shown, result = verdict(value, lambda v: v >= TARGET_NODES_RATIO)
        rows.append((f"{w.label}: rate C ({NODES} nodes) / B", shown, f">= {TARGET_NODES_RATIO:.2f}", result))
    return rows


def print_report(args, cells, setups: list[Setup], pg_settings: dict, idle: dict):
    print()
    print(f"serac multi-node benchmark: {os.cpu_count()} CPUs shared by everything below (servers, PostgreSQL, "
          f"nginx, load), loopback, data under {args.tmpdir or tempfile.gettempdir()}")
    print(f"S3: {args.clients} clients, presigned URLs; 4 KiB: wrk -t<={args.wrk_threads}, {args.seconds}s window; "
          f"64 MiB: load_client, {args.large_seconds}s + drain. Catalog: {args.catalog_clients} clients "
          f"(catalog_load_client); load-table {args.warmup}s warm-up + {args.seconds}s; commits counted, "
          f"{args.warmup_commits} warm-up + {args.commits} measured per set-up")
    if pg_settings:
        print(f"PostgreSQL {pg_settings.get('server_version', '?')}: fsync={pg_settings.get('fsync')}, "
              f"synchronous_commit={pg_settings.get('synchronous_commit')}, "
              f"shared_buffers={pg_settings.get('shared_buffers')}, max_connections={pg_settings.get('max_connections')}, "
              "the rest as initdb leaves it; B and C in a schema each of one server. The same durability is "
              "compared: every set-up fsyncs each blob, and its metadata before it answers (SQLite's log, "
              "in batches of its group committer; PostgreSQL's WAL at each commit)")
    if any(s.key == "C" for s in setups):
        print(f"C: {NODES} nodes, one blob directory, one server key, behind nginx (round robin, upstream "
              "keepalive, no buffering either way)")
    print("CPU/op: CPU seconds of the part per operation (64 MiB cells: per object); serac = every node of the "
          "set-up; postgres = the postmaster's process tree; 'vs': against the set-up named (B against A, "
          "C against B). PG xact/op: PostgreSQL write transactions begun per operation (serac's retries "
          "included), WAL/op: WAL written per operation. CPU% all: the set-up's processes together, load: the "
          "load generator; 100 = one core")
    if idle:
        print("idle, no load (in every cell's CPU too): " +
              ", ".join(f"{name} {value:.1f}%" for name, value in sorted(idle.items())))
    print()
    print_table(cells)
    print()
    for s in setups:
        rss = ", ".join(f"{node} {kib / 1024:.0f} MiB" for node, kib in s.peak_rss_kib.items() if kib)
        print(f"{s.label}: peak RSS (VmHWM) {rss or '-'}" + (f"; {s.failure}" if s.failure else ""))
    print()
    print("targets:")
    rows = evaluate_targets(cells)
    widths = [max(len(r[i]) for r in rows) for i in range(4)] if rows else []
    for r in rows:
        print("  ".join(v.ljust(w) for v, w in zip(r, widths)))
    if args.json:
        write_json(args.json, cells, setups, pg_settings, idle, rows)


def write_json(path, cells, setups, pg_settings, idle, target_rows):
    def result(w: Workload, key: str, r: Result):
        return {"ok": r.ok, "ops": r.ops, "seconds": r.seconds, "ops_per_s": r.ops_per_s(), "rate": r.rate(w),
                "rate_unit": "MiB/s" if w.reports_mib() else "ops/s", "p50_ms": r.p50_ms, "p99_ms": r.p99_ms,
                "retries": r.retries, "errors": r.errors, "cpu_seconds": r.cpu, "cpu_span_seconds": r.span_seconds,
                "cpu_seconds_per_op": {part: r.cpu_per_op(part) for part in ("serac", "postgres", "nginx")
                                       if r.part_cpu(part) is not None} | {"total": r.cpu_per_op(*total_parts(key))},
                "pg_write_transactions_per_op": r.pg_transactions_per_op, "wal_bytes_per_op": r.wal_bytes_per_op,
                "generator_cpu_percent": r.generator_cpu_percent, "note": r.note}

    doc = {"setups": {s.key: {"label": s.label, "nodes": len(s.nodes), "failure": s.failure,
                              "peak_rss_kib": s.peak_rss_kib} for s in setups},
           "postgres": pg_settings, "idle_cpu_percent": idle,
           "cells": [{"workload": w.key, "label": w.label,
                      "results": {key: result(w, key, r) for key, r in results.items()}} for w, results in cells],
           "targets": [dict(zip(("target", "measured", "goal", "result"), r)) for r in target_rows]}
    with open(path, "w") as f:
        json.dump(doc, f, indent=2)


# --------------------------------------------------------------------------- main


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--serac", default=os.environ.get("SERAC_BIN", "build/serac"), help="serac binary")
    p.add_argument("--load-client", default=os.environ.get("CATALOG_LOAD_CLIENT"),
                   help="catalog_load_client binary (default: beside the serac binary)")
    p.add_argument("--serac-arg", action="append", default=[], metavar="ARG",
                   help="extra argument for every 'serac server' (repeatable)")
    p.add_argument("--seconds", type=int, default=10, help="window of the 4 KiB and load-table cells")
    p.add_argument("--large-seconds", type=int, default=15, help="window of the 64 MiB cells (then the drain)")
    p.add_argument("--clients", type=int, default=16, help="S3 clients")
    p.add_argument("--catalog-clients", type=int, default=8, help="catalog clients")
    p.add_argument("--wrk-threads", type=int, default=2, help="wrk threads (at most the client count)")
    p.add_argument("--warmup", type=float, default=1, help="unmeasured seconds before each load-table window")
    # CPU times tick in hundredths of a second: a thousand commits keep the CPU per commit of the
    # fastest set-up within a few per cent.
    p.add_argument("--commits", type=int, default=1000, help="measured commits of each commit cell")
    p.add_argument("--warmup-commits", type=int, default=20, help="unmeasured commits before them")
    p.add_argument("--tables", type=int, default=100, help="tables of the many-tables commit cell")
    p.add_argument("--only", default="A,B,C", help="comma-separated subset of the set-ups A,B,C")
    p.add_argument("--workloads", default=",".join(w.key for w in WORKLOADS),
                   help="comma-separated subset of " + ",".join(w.key for w in WORKLOADS))
    p.add_argument("--tmpdir", default=os.environ.get("BENCH_TMPDIR"), help="where every file lives")
    p.add_argument("--keep", action="store_true", help="keep the temp directory (for debugging)")
    p.add_argument("--json", help="also write all measurements to this file")
    args = p.parse_args()
    args.only = [k.strip().upper() for k in args.only.split(",") if k.strip()]
    by_key = {w.key: w for w in WORKLOADS}
    keys = [k.strip() for k in args.workloads.split(",") if k.strip()]
    bad = [k for k in args.only if k not in SETUP_LABELS] + [k for k in keys if k not in by_key]
    if bad or not args.only or not keys or args.commits < 1 or args.tables < 1:
        p.error(f"unknown set-ups or workloads {bad}" if bad else "nothing to measure")
    args.workloads = [w for w in WORKLOADS if w.key in keys]
    args.only = [k for k in SETUP_LABELS if k in args.only]
    return args


def progress(message: str):
    print(message, file=sys.stderr, flush=True)


def main() -> int:
    args = parse_args()
    signal.signal(signal.SIGINT, signal.default_int_handler)
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, exit_on_signal)
    needs = {"wrk": shutil.which("wrk")} if any(w.size and not w.size.drain for w in args.workloads) else {}
    if "C" in args.only:
        needs["nginx"] = shutil.which("nginx") or ("/usr/sbin/nginx" if os.access("/usr/sbin/nginx", os.X_OK) else None)
    if {"B", "C"} & set(args.only):
        needs["PostgreSQL 15"] = PG_BIN if os.access(os.path.join(PG_BIN, "initdb"), os.X_OK) else None
    load_client = os.path.abspath(args.load_client or os.path.join(os.path.dirname(args.serac), "catalog_load_client"))
    if any(w.kind == "catalog" for w in args.workloads):
        needs["catalog_load_client"] = load_client if os.access(load_client, os.X_OK) else None
    needs["serac"] = args.serac if os.access(args.serac, os.X_OK) else None
    missing = [name for name, found in needs.items() if not found]
    if missing:
        print(f"missing: {', '.join(missing)} (see bench/README.md, multi-node benchmark)", file=sys.stderr)
        return 2

    processes, live_workers = Processes(), []
    work_dir = tempfile.mkdtemp(prefix="serac-multinode-", dir=args.tmpdir)
    os.chmod(work_dir, 0o755)  # PostgreSQL runs as its own account below it; nginx's workers read its config
    postgres = None
    try:
        # Copies: build/ may be rebuilt by someone else while this runs.
        bin_dir = os.path.join(work_dir, "bin")
        os.makedirs(bin_dir)
        args.serac = shutil.copy2(args.serac, os.path.join(bin_dir, "serac"))
        tools = {}
        if any(w.kind == "catalog" for w in args.workloads):
            tools["catalog_load_client"] = shutil.copy2(load_client, os.path.join(bin_dir, "catalog_load_client"))
            mismatch = native_signer_check(tools["catalog_load_client"], "AKIDEXAMPLE",
                                           "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY")
            if mismatch:
                print(f"catalog_load_client's SigV4 signature disagrees with botocore: {mismatch}", file=sys.stderr)
                return 2
        if any(w.size and w.size.drain for w in args.workloads):
            tools["load_client"] = compile_load_client(bin_dir)
        # One server key for every node (sealed secrets and tokens open on each); Serac passes our
        # environment on.
        os.environ["SERAC_SERVER_KEY_FILE"] = os.path.join(work_dir, "server.key")
        os.environ.pop("SERAC_SERVER_KEY", None)
        if {"B", "C"} & set(args.only):
            postgres = Postgres(os.path.join(work_dir, "pg"))
            progress(f"starting PostgreSQL (fsync on) on 127.0.0.1:{postgres.port}")
            if not postgres.start():
                print(postgres.failure, file=sys.stderr)
                return 1
        return run(args, tools, processes, live_workers, work_dir, postgres)
    except KeyboardInterrupt:
        print("\ninterrupted; cleaning up", file=sys.stderr)
        return 130
    finally:
        for worker in live_workers:
            worker.kill()
            worker.join()
        processes.stop_all()
        if postgres:
            postgres.stop()
        if args.keep:
            print(f"kept {work_dir}", file=sys.stderr)
        else:
            shutil.rmtree(work_dir, ignore_errors=True)


def run(args, tools, processes: Processes, live_workers: list, work_dir: str, postgres: Postgres | None) -> int:
    setups = start_setups(args, processes, work_dir, postgres)
    sizes = sorted({w.size for w in args.workloads if w.size}, key=lambda s: s.bytes)
    progress(f"generating {sum(s.bytes * s.get_objects for s in sizes) / MiB:.0f} MiB of GET objects")
    payloads = make_payloads(sizes)
    for setup in setups:
        if not setup.failure:
            progress(f"{setup.label}: preparing its bucket and objects" +
                     (f", {args.tables + 1} tables" if any(w.kind == "catalog" for w in args.workloads) else ""))
            prepare(setup, args, payloads, work_dir)
        setup.sample_peak_rss()
    for s in setups:
        if s.failure:
            progress(f"{s.label}: {s.failure}")
    live = [s for s in setups if not s.failure]
    if not live:
        return 1
    pg_settings = {}
    if postgres:
        for name in ("server_version", "fsync", "synchronous_commit", "shared_buffers", "max_connections"):
            pg_settings[name] = postgres.sql(f"SHOW {name}")
    settle(live)
    idle = idle_background(live)

    cells = []
    for w in args.workloads:
        results = {}
        for setup in live:  # back to back, so the set-ups of a cell see the same machine
            if not setup.usable():
                results[setup.key] = Result(note=setup.failure.splitlines()[0])
                continue
            progress(f"{w.label}: {setup.label}")
            settle(live)
            results[setup.key] = measure(w, setup, args, tools, live_workers)
            setup.sample_peak_rss()
        cells.append((w, results))
    print_report(args, cells, setups, pg_settings, idle)
    return 0


if __name__ == "__main__":
    sys.exit(main())
