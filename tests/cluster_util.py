"""Several `serac server` nodes sharing one PostgreSQL metadata store (a schema of its own per
test) and one blob store, as tests/test_multi_node*.py start them, and nginx in front of them as a
load balancer."""
from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import pytest
import requests

from s3util import SeracServer

NODES = 3  # what a cluster has unless told


def schema_url(pg, schema: str, **params) -> str:
    """A URL of the test server whose tables live in `schema` (created here)."""
    pg.sql(f"CREATE SCHEMA IF NOT EXISTS {schema}")
    query = "&".join([f"options=-csearch_path%3D{schema}"] + [f"{key}={value}" for key, value in params.items()])
    return f"postgresql://{pg.user}@{pg.host}:{pg.port}/postgres?{query}"


class Cluster:
    """NODES servers sharing one metadata schema, one blob store (a directory of the cluster's own
    unless `blob_store` names another) and one server key."""

    def __init__(self, root, url: str, nodes: int = NODES, blob_store: str | None = None):
        self.blobs = root / "shared-blobs"
        self.blobs.mkdir(parents=True)
        blob_url = blob_store or f"file:{self.blobs}"
        self.nodes = [SeracServer(root / f"node{i}", name=f"serac-node{i}",
                                  extra_args=["--meta-store", url, "--blob-store", blob_url,
                                              "--node-name", f"node{i}", "--maintenance-interval", "0"])
                      for i in range(nodes)]

    def start(self) -> None:
        # Sealed secrets and tokens must open on every node: one server key for all.
        self.nodes[0].start()
        for node in self.nodes[1:]:
            shutil.copy(self.nodes[0].server_key_file, node.server_key_file)
            node.start()

    def stop(self) -> None:
        for node in self.nodes:
            node.stop()


# --- nginx in front of the nodes ---------------------------------------------------------------------


def free_port() -> int:
    """A loopback port free now: for a server that must come back at the same address."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Nginx:
    """Debian's nginx as a round-robin reverse proxy for the nodes, in the foreground, with its pid
    file, logs and temporary files in a directory of its own."""

    def __init__(self, upstreams: list[str]):
        self.upstreams = upstreams
        self.directory = Path(tempfile.mkdtemp(prefix="serac-nginx-"))
        # Started as root, nginx runs its workers as `nobody`; they must reach the temp paths.
        self.directory.chmod(0o755)
        self.port = free_port()
        self.process: subprocess.Popen | None = None

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def error_log(self) -> Path:
        return self.directory / "error.log"

    def config(self) -> str:
        d = self.directory
        # A node that failed a request is left out for a second only: a killed node is soon back.
        servers = "\n".join(f"        server {address} max_fails=1 fail_timeout=1s;" for address in self.upstreams)
        return f"""
daemon off;
worker_processes 2;
pid {d}/nginx.pid;
error_log {d}/error.log warn;
events {{ worker_connections 1024; }}
http {{
    log_format upstream '$remote_addr "$request" $status $upstream_addr $upstream_status $request_time';
    access_log {d}/access.log upstream;
    client_body_temp_path {d}/client_body;
    proxy_temp_path {d}/proxy;
    fastcgi_temp_path {d}/fastcgi;
    uwsgi_temp_path {d}/uwsgi;
    scgi_temp_path {d}/scgi;
    upstream serac {{
{servers}
        keepalive 32;
        # Shorter than serac's own idle timeout (60 s), so nginx never reuses a connection serac closes.
        keepalive_timeout 30s;
    }}
    server {{
        listen 127.0.0.1:{self.port};
        client_max_body_size 0;
        location / {{
            proxy_pass http://serac;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            # The client signed this Host (with the proxy's port); serac must verify the same one.
            proxy_set_header Host $http_host;
            proxy_request_buffering off;
            # nginx would resend a failed PUT or DELETE to the next node (it counts them idempotent);
            # a conditional PUT sent twice can answer 412 for a write that happened. The client sees
            # the failure instead, and records the outcome as unknown.
            proxy_next_upstream off;
            proxy_connect_timeout 5s;
            proxy_read_timeout 30s;
            proxy_send_timeout 30s;
        }}
    }}
}}
"""

    def start(self) -> None:
        binary = shutil.which("nginx", path=os.environ.get("PATH", "") + ":/usr/sbin:/sbin")
        if binary is None:
            pytest.fail("nginx is not installed (scripts/install-deps.sh --test installs it)")
        conf = self.directory / "nginx.conf"
        conf.write_text(self.config())
        args = [binary, "-p", str(self.directory), "-c", str(conf), "-e", str(self.error_log)]
        checked = subprocess.run(args + ["-t"], capture_output=True, text=True, timeout=30)
        assert checked.returncode == 0, checked.stderr
        with open(self.directory / "stderr.log", "wb") as stderr:
            self.process = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=stderr, stderr=stderr)
        deadline = time.monotonic() + 15
        while True:
            assert self.process.poll() is None, f"nginx exited: {self.error_log.read_text()}"
            try:
                if requests.get(self.endpoint + "/_serac/health/ready", timeout=2).status_code == 200:
                    return
            except requests.RequestException:
                pass
            assert time.monotonic() < deadline, f"nginx did not answer: {self.error_log.read_text()}"
            time.sleep(0.05)

    def logged_requests(self, start: str) -> list[tuple[int, str]]:
        """(status, upstream address) of each request so far whose request line starts so."""
        found = []
        for line in (self.directory / "access.log").read_text().splitlines():
            _, request, rest = line.split('"', 2)
            if request.startswith(start):
                status, upstream = rest.split()[:2]
                found.append((int(status), upstream))
        return found

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)  # fast shutdown: master and workers exit
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        shutil.rmtree(self.directory, ignore_errors=True)
