"""A real Trino server for the system tests: one coordinator that also runs the work, on a free
loopback port, with an Iceberg catalog on serac's REST catalog (SigV4, signing name s3tables)
and serac's S3 API through Trino's native S3 file system.

scripts/install-trino.sh puts the server under build/trino/ (SERAC_TRINO_DIR elsewhere) and
records there the home of a JDK new enough for it (SERAC_TRINO_JAVA_HOME overrides). Use the
`trino` fixture (module-scoped: one server per test module, bound to a fresh warehouse) and its
`query` / `execute` helpers; see tests/test_trino.py."""

from __future__ import annotations

import collections
import os
import shutil
import socket
import subprocess
import tempfile
import threading
import time
import uuid
from pathlib import Path

import pytest
import requests

from catalog_util import CATALOG_BASE
from s3util import ACCESS_KEY, REGION, REPO_ROOT, SECRET_KEY, unique_bucket_name

CATALOG_NAME = "iceberg"
START_TIMEOUT_S = 180.0
QUERY_TIMEOUT_S = 120.0
JVM_HEAP = "2G"

# Per-query memory kept small: the tests move a few rows, and the machine is shared.
SERVER_PROPERTIES = {
    "coordinator": "true",
    "node-scheduler.include-coordinator": "true",
    "query.max-memory": "1GB",
    "query.max-memory-per-node": "512MB",
    "task.concurrency": "2",
    "http-server.log.enabled": "false",
    "catalog.management": "static",
}

JVM_OPTIONS = [
    "-server",
    f"-Xmx{JVM_HEAP}",
    "-XX:+UseG1GC",
    "-XX:+ExplicitGCInvokesConcurrent",
    "-XX:+ExitOnOutOfMemoryError",
    "-XX:-OmitStackTraceInFastThrow",
    "-XX:ReservedCodeCacheSize=256M",
    "-XX:PerMethodRecompilationCutoff=10000",
    "-XX:PerBytecodeRecompilationCutoff=10000",
    "-XX:+EnableDynamicAgentLoading",
    "-Djdk.attach.allowAttachSelf=true",
    "-Djdk.nio.maxCachedBufferSize=2000000",
    "-Dfile.encoding=UTF-8",
    # Start-up speed over peak throughput: the tests run short queries once.
    "-XX:TieredStopAtLevel=1",
]


def trino_install_dir() -> Path:
    configured = os.environ.get("SERAC_TRINO_DIR")
    return Path(configured) if configured else REPO_ROOT / "build" / "trino"


def trino_server_dir() -> Path | None:
    """The unpacked distribution that scripts/install-trino.sh finished installing."""
    for candidate in sorted(trino_install_dir().glob("trino-server-*")):
        if (candidate / ".installed").exists():
            return candidate
    return None


def trino_java_home() -> Path | None:
    configured = os.environ.get("SERAC_TRINO_JAVA_HOME")
    if configured:
        return Path(configured)
    recorded = trino_install_dir() / "java-home"
    if recorded.exists():
        return Path(recorded.read_text().strip())
    return None


def free_loopback_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def iceberg_catalog_properties(serac_endpoint: str, warehouse: str) -> dict[str, str]:
    """The Iceberg connector on serac: REST catalog signed with SigV4 as s3tables (with the
    s3.aws-* keys and s3.region), data through native S3."""
    return {
        "connector.name": "iceberg",
        "iceberg.catalog.type": "rest",
        "iceberg.rest-catalog.uri": serac_endpoint + CATALOG_BASE,
        "iceberg.rest-catalog.warehouse": warehouse,
        # Trino 476 turns SigV4 on with this flag; later releases spell it security=SIGV4.
        "iceberg.rest-catalog.sigv4-enabled": "true",
        "iceberg.rest-catalog.signing-name": "s3tables",
        "fs.native-s3.enabled": "true",
        "s3.endpoint": serac_endpoint,
        "s3.path-style-access": "true",
        "s3.region": REGION,
        "s3.aws-access-key": ACCESS_KEY,
        "s3.aws-secret-key": SECRET_KEY,
    }


def write_properties(path: Path, properties: dict[str, str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"{key}={value}\n" for key, value in properties.items()))


class TrinoQueryError(Exception):
    """A query Trino answered with an error (its message names the cause)."""


class TrinoServer:
    """One `bin/launcher run` process with its etc/ and data/ under `work_dir`."""

    def __init__(self, server_dir: Path, java_home: Path, work_dir: Path, catalogs: dict[str, dict]):
        self.server_dir = server_dir
        self.java_home = java_home
        self.work_dir = Path(work_dir)
        self.catalogs = catalogs
        self.port = 0
        self.process: subprocess.Popen | None = None
        self.log_path = self.work_dir / "server.log"
        self.output_tail: collections.deque[str] = collections.deque(maxlen=400)

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def write_configuration(self) -> Path:
        etc = self.work_dir / "etc"
        self.port = free_loopback_port()
        write_properties(etc / "node.properties", {
            "node.environment": "serac_test",
            "node.id": str(uuid.uuid4()),
            "node.data-dir": str(self.work_dir / "data"),
            "node.bind-ip": "127.0.0.1",
            "node.internal-address": "127.0.0.1",
        })
        (etc / "jvm.config").write_text("\n".join(JVM_OPTIONS) + "\n")
        write_properties(etc / "config.properties", dict(SERVER_PROPERTIES, **{
            "http-server.http.port": str(self.port),
            "discovery.uri": self.endpoint,
        }))
        write_properties(etc / "log.properties", {"io.trino": "INFO"})
        for name, properties in self.catalogs.items():
            write_properties(etc / "catalog" / f"{name}.properties", properties)
        return etc

    def start(self, timeout_s: float = START_TIMEOUT_S) -> None:
        etc = self.write_configuration()
        environment = dict(os.environ, JAVA_HOME=str(self.java_home),
                           PATH=f"{self.java_home / 'bin'}:{os.environ.get('PATH', '')}")
        # The launcher's `run` keeps the server in the foreground; its output is the server log.
        self.process = subprocess.Popen(
            [str(self.server_dir / "bin" / "launcher"), "run", f"--etc-dir={etc}",
             f"--data-dir={self.work_dir / 'data'}"],
            cwd=self.work_dir, env=environment, stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
        threading.Thread(target=self._drain_output, daemon=True).start()
        self.wait_ready(timeout_s)

    def _drain_output(self) -> None:
        with open(self.log_path, "a", encoding="utf-8") as log:
            for line in self.process.stdout:
                log.write(line)
                log.flush()
                self.output_tail.append(line.rstrip("\n"))

    def wait_ready(self, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"trino exited with {self.process.returncode}:\n{self.log_tail()}")
            try:
                info = requests.get(self.endpoint + "/v1/info", timeout=2).json()
                # Started is not yet schedulable: until the coordinator has announced itself as a
                # worker, queries fail with NO_NODES_AVAILABLE.
                if info.get("starting") is False and self.runs_queries():
                    return
            except (requests.RequestException, ValueError):
                pass
            time.sleep(0.5)
        raise RuntimeError(f"trino did not start within {timeout_s:.0f} s:\n{self.log_tail()}")

    def runs_queries(self) -> bool:
        import trino

        connection = self.connect()
        try:
            cursor = connection.cursor()
            cursor.execute("SELECT count(*) FROM system.runtime.nodes WHERE state = 'active'")
            return cursor.fetchall()[0][0] > 0
        except trino.exceptions.TrinoQueryError as error:
            if error.error_name == "NO_NODES_AVAILABLE":
                return False
            raise
        except trino.exceptions.TrinoConnectionError:
            return False
        finally:
            connection.close()

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def stop(self, timeout_s: float = 30.0) -> None:
        if not self.alive():
            return
        self.process.terminate()
        try:
            self.process.wait(timeout_s)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(10)

    def log_tail(self, lines: int = 80) -> str:
        return "\n".join(list(self.output_tail)[-lines:])

    # --- Queries ---------------------------------------------------------------------------------

    def connect(self, schema: str | None = None):
        import trino

        return trino.dbapi.connect(host="127.0.0.1", port=self.port, user="serac-test",
                                   catalog=CATALOG_NAME, schema=schema,
                                   request_timeout=QUERY_TIMEOUT_S)

    def query(self, sql: str, schema: str | None = None) -> list[tuple]:
        """Runs one statement to completion and returns its rows as tuples."""
        import trino

        # A coordinator whose own worker missed an announcement under load refuses queries with
        # NO_NODES_AVAILABLE before running any of them: nothing ran, so asking again is safe.
        deadline = time.monotonic() + 60
        while True:
            connection = self.connect(schema)
            try:
                cursor = connection.cursor()
                try:
                    cursor.execute(sql)
                    return [tuple(row) for row in cursor.fetchall()]
                except trino.exceptions.TrinoQueryError as error:
                    if error.error_name == "NO_NODES_AVAILABLE" and time.monotonic() < deadline:
                        time.sleep(1)
                        continue
                    raise TrinoQueryError(f"{error.error_name}: {error.message}\n  in: {sql}") from error
            finally:
                connection.close()

    def execute(self, sql: str, schema: str | None = None) -> int | None:
        """Runs a statement that changes something; returns the row count Trino reports (the
        first column of a DML result), or None for DDL."""
        rows = self.query(sql, schema)
        if rows and len(rows[0]) == 1 and isinstance(rows[0][0], int):
            return rows[0][0]
        return None


# --- Fixtures (import them into the test module) --------------------------------------------------


@pytest.fixture(scope="module")
def trino_warehouse(catalog_api) -> str:
    """One warehouse for the module's Trino catalog; tests keep apart by schema."""
    name = unique_bucket_name("wh-trino")
    catalog_api.create_warehouse(name)
    return name


@pytest.fixture(scope="module")
def trino(server, trino_warehouse, request):
    """A running Trino with catalog `iceberg` on serac's warehouse `trino_warehouse`."""
    server_dir, java_home = trino_server_dir(), trino_java_home()
    if server_dir is None or java_home is None or not (java_home / "bin" / "java").exists():
        pytest.fail("Trino is not installed: run scripts/install-trino.sh")
    work_dir = Path(tempfile.mkdtemp(prefix="serac-trino-"))
    instance = TrinoServer(server_dir, java_home, work_dir, {
        CATALOG_NAME: iceberg_catalog_properties(server.endpoint, trino_warehouse)})
    try:
        instance.start()
    except Exception:
        instance.stop()
        raise
    yield instance
    failed = request.session.testsfailed
    instance.stop()
    if failed:
        print(f"\n--- trino log tail ({instance.log_path}) ---\n{instance.log_tail()}")
    else:
        shutil.rmtree(work_dir, ignore_errors=True)
