"""PostgreSQL high availability as its own tooling gives it: a primary with a synchronous standby,
and serac nodes given both hosts with `target_session_attrs=read-write` (libpq's multi-host URL).
When the primary dies and the standby is promoted (what Patroni or pg_auto_failover do), the nodes
answer 503 for the moment the database is away, then write to the new primary without a restart,
and every write acknowledged before, during or after the switch-over is there."""
from __future__ import annotations

import os
import pwd
import tempfile
import time
from pathlib import Path
import subprocess

import pytest

from cluster_util import Cluster
from pg_util import PG_BIN, Postgres, _as_server_user, _free_port, start_postgres, stop_postgres
from s3util import make_client, unique_bucket_name
from test_multi_node_faults import Writer, check_acknowledged, ready


@pytest.fixture
def primary_and_standby():
    primary = start_postgres()
    primary.sql("CREATE SCHEMA failover")
    directory = Path(tempfile.mkdtemp(prefix="serac-pg-standby-"))
    if os.geteuid() == 0:
        account = pwd.getpwnam("postgres")
        os.chown(directory, account.pw_uid, account.pw_gid)
    subprocess.run(_as_server_user([str(PG_BIN / "pg_basebackup"), "-h", primary.host, "-p", str(primary.port),
                                    "-U", "postgres", "-D", str(directory / "data"), "-R", "-X", "stream"]),
                   check=True, capture_output=True, timeout=120)
    standby = Postgres("127.0.0.1", _free_port(), directory)
    standby.start()
    # From now on every commit waits for the standby to have it: a promoted standby has lost nothing
    # acknowledged.
    primary.sql("ALTER SYSTEM SET synchronous_standby_names = '*'")
    primary.sql("SELECT pg_reload_conf()")
    try:
        yield primary, standby
    finally:
        stop_postgres(standby)
        stop_postgres(primary)


def test_a_promoted_standby_takes_over_without_restarting_serac(tmp_path, primary_and_standby):
    primary, standby = primary_and_standby
    url = (f"postgresql://postgres@{primary.host}:{primary.port},{standby.host}:{standby.port}/postgres"
           f"?target_session_attrs=read-write&connect_timeout=2&options=-csearch_path%3Dfailover")
    nodes = Cluster(tmp_path, url, nodes=2)
    nodes.start()
    try:
        bucket = unique_bucket_name("failover")
        make_client(nodes.nodes[0].endpoint).create_bucket(Bucket=bucket)
        writer = Writer([node.endpoint for node in nodes.nodes], bucket, "k")
        writer.start()
        time.sleep(1.5)
        primary.stop("immediate")
        subprocess.run(_as_server_user([str(PG_BIN / "pg_ctl"), "-D", str(standby.directory / "data"), "-w",
                                        "promote"]), check=True, capture_output=True, timeout=120)
        promoted_at = time.monotonic()
        for node in nodes.nodes:
            while ready(node) != 200:
                assert time.monotonic() - promoted_at < 30, "a node did not move to the promoted standby"
                time.sleep(0.2)
        acknowledged_before = len(writer.acknowledged)
        while len(writer.acknowledged) < acknowledged_before + 20:
            assert time.monotonic() - promoted_at < 30, "writes did not resume on the new primary"
            time.sleep(0.1)
        writer.stopping.set()
        writer.join()
        assert all(status in (503, None) for status, _, _ in writer.failures), writer.failures
        for node in nodes.nodes:
            check_acknowledged(node.endpoint, bucket, writer.acknowledged)
    finally:
        nodes.stop()
