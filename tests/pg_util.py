"""A throwaway PostgreSQL 15 for `serac sync` tests: initdb into a temporary directory, started on a
free loopback port with wal_level=logical, stopped and removed at the end. The server refuses to run
as root, so as root it runs as the `postgres` user Debian's package creates. SQL goes through psql."""

from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest

PG_BIN = Path(os.environ.get("SERAC_PG_BIN", "/usr/lib/postgresql/15/bin"))


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _as_server_user(argv: list[str]) -> list[str]:
    return ["runuser", "-u", "postgres", "--", *argv] if os.geteuid() == 0 else argv


@dataclass
class Postgres:
    host: str
    port: int
    directory: Path
    user: str = "postgres"

    def sql(self, statements: str, database: str = "postgres") -> str:
        """Runs SQL with psql (stops at the first error); returns its unaligned, tuples-only output."""
        # A long script goes through standard input (an argument has a size limit), still as one
        # transaction as -c runs it.
        long_script = len(statements) > 64 * 1024
        out = subprocess.run([str(PG_BIN / "psql"), "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h", self.host,
                              "-p", str(self.port), "-U", self.user, "-d", database,
                              *(["-1", "-f", "-"] if long_script else ["-c", statements])],
                             input=statements if long_script else None, capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stderr
        return out.stdout

    def start(self) -> None:
        """Starts (again) the server in `directory` on `port`."""
        options = (f"-c wal_level=logical -c max_replication_slots=64 -c max_wal_senders=64 "
                   f"-c listen_addresses=127.0.0.1 -c unix_socket_directories={self.directory} -p {self.port} "
                   f"-c fsync=off")
        subprocess.run(_as_server_user([str(PG_BIN / "pg_ctl"), "-D", str(self.directory / "data"), "-l",
                                        str(self.directory / "log"), "-w", "-o", options, "start"]),
                       check=True, capture_output=True, timeout=120)

    def stop(self, mode: str = "fast") -> None:
        """Stops the server; `mode` as pg_ctl's -m (immediate: as a crash would)."""
        subprocess.run(_as_server_user([str(PG_BIN / "pg_ctl"), "-D", str(self.directory / "data"), "-m", mode,
                                        "stop"]), capture_output=True, timeout=120)

    def source_config(self, database: str = "postgres", **extra) -> dict:
        """source.json for this server, as OLake writes it."""
        return {"host": self.host, "port": self.port, "database": database, "username": self.user,
                "password": "unused-with-trust", "ssl": {"mode": "disable"}, **extra}


def start_postgres() -> Postgres:
    """initdb and start a server; stop_postgres() removes it."""
    if not (PG_BIN / "initdb").exists():
        pytest.fail(f"PostgreSQL 15 is not installed in {PG_BIN} (scripts/install-deps.sh --test installs it)")
    directory = Path(tempfile.mkdtemp(prefix="serac-pg-"))
    if os.geteuid() == 0:
        account = pwd.getpwnam("postgres")
        os.chown(directory, account.pw_uid, account.pw_gid)
    subprocess.run(_as_server_user([str(PG_BIN / "initdb"), "-D", str(directory / "data"), "-A", "trust", "-U",
                                    "postgres", "--no-sync", "-E", "UTF8"]),
                   check=True, capture_output=True, timeout=120)
    server = Postgres("127.0.0.1", _free_port(), directory)
    server.start()
    return server


def stop_postgres(server: Postgres) -> None:
    server.stop("immediate")
    shutil.rmtree(server.directory, ignore_errors=True)


@pytest.fixture(scope="module")
def postgres():
    server = start_postgres()
    try:
        yield server
    finally:
        stop_postgres(server)
