"""Thousands of connections on one server: waiting connections hold no thread and little memory.

10,000 keep-alive connections (from ten loopback addresses, 1,000 each, under
limits::kConnectionsPerClientMax) each make one request and then stay open, idle. Beside them,
hundreds of slow clients: heads that never finish, and unsigned PUTs whose bodies never come
(refused at once for their credentials, without waiting for the body). The server's thread count
stays where it was, its resident set grows by a bounded number of bytes per connection, and
a real S3 client is served at once all the while."""

from __future__ import annotations

import resource
import selectors
import socket
import time

import pytest

from s3util import SeracServer, make_client

IDLE_CONNECTIONS = 10_000
ADDRESSES = [f"127.0.0.{i}" for i in range(1, 11)]
SLOW_HEADS = 300
SLOW_BODIES = 300
# What one idle connection may cost the server: its Connection object, slot and event-loop state.
IDLE_CONNECTION_BYTES_MAX = 8 * 1024


def proc_status(pid: int, field: str) -> int:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise AssertionError(f"no {field} in /proc/{pid}/status")


def rss_bytes(pid: int) -> int:
    return proc_status(pid, "VmRSS") * 1024


def threads(pid: int) -> int:
    return proc_status(pid, "Threads")


def open_connections(port: int, count: int, payload: bytes, read_response: bool) -> list[socket.socket]:
    """Opens `count` connections spread over ADDRESSES, sends `payload` on each and, if asked,
    reads one whole response (these requests carry no body and their answers are short)."""
    sockets: list[socket.socket] = []
    selector = selectors.DefaultSelector()
    for i in range(count):
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.bind((ADDRESSES[i % len(ADDRESSES)], 0))
        sock.connect(("127.0.0.1", port))
        sock.sendall(payload)
        sockets.append(sock)
        if read_response:
            sock.setblocking(False)
            selector.register(sock, selectors.EVENT_READ, bytearray())
        # Keep the number of unanswered requests bounded, as a real client pool would.
        while read_response and len(selector.get_map()) > 500:
            drain(selector)
    while read_response and selector.get_map():
        drain(selector)
    return sockets


def drain(selector: selectors.BaseSelector) -> None:
    events = selector.select(timeout=10)
    assert events, "the server stopped answering while connections were being opened"
    for key, _ in events:
        sock = key.fileobj
        data = sock.recv(65536)
        assert data, "the server closed a keep-alive connection"
        received: bytearray = key.data
        received += data
        head_end = received.find(b"\r\n\r\n")
        if head_end < 0:
            continue
        assert received.startswith(b"HTTP/1.1 200"), bytes(received[:200])
        length = int(
            next(line.split(b":")[1] for line in received[:head_end].split(b"\r\n")
                 if line.lower().startswith(b"content-length:")))
        if len(received) >= head_end + 4 + length:
            selector.unregister(sock)
            sock.setblocking(True)


@pytest.mark.timeout(300)
def test_ten_thousand_idle_connections_and_slow_clients_hold_no_thread(tmp_path):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    needed = IDLE_CONNECTIONS + SLOW_HEADS + SLOW_BODIES + 512
    assert hard >= needed, f"the test needs {needed} open files; the hard limit is {hard}"
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, needed), hard))
    server = SeracServer(tmp_path / "connections", name="serac-connections")
    server.start()
    opened: list[socket.socket] = []
    try:
        s3 = make_client(server.endpoint)
        s3.create_bucket(Bucket="conn")
        s3.put_object(Bucket="conn", Key="k", Body=b"x" * 4096)
        pid = server.process.pid
        threads_before = threads(pid)
        rss_before = rss_bytes(pid)

        live = b"GET /_serac/health/live HTTP/1.1\r\nHost: serac\r\n\r\n"
        opened += open_connections(server.port, IDLE_CONNECTIONS, live, read_response=True)
        opened += open_connections(server.port, SLOW_HEADS, b"GET /conn/k HTTP/1.1\r\nHost: serac\r\nX-", False)
        opened += open_connections(
            server.port, SLOW_BODIES,
            b"PUT /conn/slow HTTP/1.1\r\nHost: serac\r\nContent-Length: 4096\r\n\r\npartial", False)
        time.sleep(1.5)  # longer than a spare thread lingers once its loop is quiet

        rss_after = rss_bytes(pid)
        per_connection = (rss_after - rss_before) / (IDLE_CONNECTIONS + SLOW_HEADS + SLOW_BODIES)
        print(f"\n{len(opened)} waiting connections: server threads {threads_before} -> {threads(pid)}, "
              f"resident set {rss_before / 2**20:.1f} -> {rss_after / 2**20:.1f} MiB, "
              f"{per_connection:.0f} bytes per connection")
        assert threads(pid) <= threads_before
        assert per_connection <= IDLE_CONNECTION_BYTES_MAX

        # A real client is served at once beside them.
        started = time.monotonic()
        s3.put_object(Bucket="conn", Key="beside", Body=b"y" * 4096)
        assert s3.get_object(Bucket="conn", Key="beside")["Body"].read() == b"y" * 4096
        assert time.monotonic() - started < 2.0

        # Every idle connection is still usable.
        for sock in opened[:IDLE_CONNECTIONS:997]:
            sock.sendall(live)
            assert sock.recv(65536).startswith(b"HTTP/1.1 200")
    finally:
        for sock in opened:
            sock.close()
        server.stop()
