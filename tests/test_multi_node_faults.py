"""Faults on several nodes sharing PostgreSQL and a blob directory. PostgreSQL stopped under load:
every node answers 503 (S3 ServiceUnavailable with Retry-After, Iceberg ServiceUnavailableException,
readiness 503) and nothing hangs; once it is back, the nodes serve again without a restart and every
acknowledged write is there. A node killed with SIGKILL under load: clients carry on through another
node and nothing acknowledged is lost or partial. The node holding a table's maintenance lease
killed during a compaction: another node runs the job once the lease runs out, and the table stays
whole."""
from __future__ import annotations

import os
import threading
import time

import boto3
import pyarrow as pa
import pytest
import requests
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError

from catalog_util import CatalogApi, load_pyiceberg_catalog
from cluster_util import Cluster, schema_url
from pg_util import start_postgres, stop_postgres
from s3util import ACCESS_KEY, REGION, SECRET_KEY, make_client, unique_bucket_name

# A request that waits longer than this for a node is a hang.
REQUEST_TIMEOUT_S = 15


def impatient_client(endpoint: str):
    """boto3 without retries and with timeouts, so that each call reports what the node answered."""
    return boto3.client("s3", endpoint_url=endpoint, aws_access_key_id=ACCESS_KEY, aws_secret_access_key=SECRET_KEY,
                        region_name=REGION,
                        config=Config(s3={"addressing_style": "path"}, retries={"max_attempts": 1, "mode": "standard"},
                                      connect_timeout=5, read_timeout=REQUEST_TIMEOUT_S))


@pytest.fixture
def own_postgres():
    """A PostgreSQL of this test's own: the test stops and starts it."""
    server = start_postgres()
    try:
        yield server
    finally:
        stop_postgres(server)


def ready(node) -> int:
    return requests.get(node.endpoint + "/_serac/health/ready", timeout=REQUEST_TIMEOUT_S).status_code


class Writer(threading.Thread):
    """PUTs new keys in a loop through the given nodes in turn; remembers what was acknowledged and
    how every failure looked."""

    def __init__(self, endpoints: list[str], bucket: str, prefix: str):
        super().__init__(daemon=True)
        self.clients = [impatient_client(endpoint) for endpoint in endpoints]
        self.bucket, self.prefix = bucket, prefix
        self.acknowledged: dict[str, bytes] = {}
        self.failures: list[tuple[int | None, str, float]] = []  # status, code, seconds taken
        self.slowest_s = 0.0
        self.stopping = threading.Event()

    def run(self) -> None:
        n = 0
        while not self.stopping.is_set():
            key, body = f"{self.prefix}{n:06d}", os.urandom(100 + n % 5000)
            started = time.monotonic()
            try:
                self.clients[n % len(self.clients)].put_object(Bucket=self.bucket, Key=key, Body=body)
                self.acknowledged[key] = body
            except ClientError as error:
                metadata = error.response["ResponseMetadata"]
                self.failures.append((metadata.get("HTTPStatusCode"), error.response["Error"]["Code"],
                                      time.monotonic() - started))
                self.retry_after = metadata.get("HTTPHeaders", {}).get("retry-after")
            except BotoCoreError as error:  # the node went away: the outcome is unknown
                self.failures.append((None, type(error).__name__, time.monotonic() - started))
            self.slowest_s = max(self.slowest_s, time.monotonic() - started)
            n += 1
            time.sleep(0.01)


def check_acknowledged(endpoint: str, bucket: str, acknowledged: dict[str, bytes]) -> None:
    s3 = make_client(endpoint)
    for key, body in acknowledged.items():
        assert s3.get_object(Bucket=bucket, Key=key)["Body"].read() == body, key


def test_postgres_stopped_under_load_gives_503s_and_the_nodes_recover(tmp_path, own_postgres):
    nodes = Cluster(tmp_path, schema_url(own_postgres, "outage"), nodes=2)
    nodes.start()
    try:
        bucket = unique_bucket_name("outage")
        make_client(nodes.nodes[0].endpoint).create_bucket(Bucket=bucket)
        api = CatalogApi(nodes.nodes[1].endpoint)
        api.create_warehouse(bucket + "-wh")
        writer = Writer([node.endpoint for node in nodes.nodes], bucket, "k")
        writer.start()
        time.sleep(1.5)
        own_postgres.stop("immediate")
        down_at = time.monotonic()
        # Both nodes say they are not ready, and requests get a clear 503, not a hang.
        for node in nodes.nodes:
            while ready(node) != 503:
                assert time.monotonic() - down_at < REQUEST_TIMEOUT_S, "readiness stayed 200 without PostgreSQL"
                time.sleep(0.2)
        while not any(status == 503 for status, _, _ in writer.failures):
            assert time.monotonic() - down_at < REQUEST_TIMEOUT_S, writer.failures[-5:]
            time.sleep(0.2)
        assert all(status in (503, None) for status, _, _ in writer.failures), writer.failures
        assert all(code == "ServiceUnavailable" for status, code, _ in writer.failures if status == 503)
        assert writer.retry_after is not None
        catalog_reply = api.call("GET", "/v1/config", params={"warehouse": bucket + "-wh"})
        assert catalog_reply.status_code == 503, catalog_reply.text
        assert catalog_reply.json()["error"]["type"] == "ServiceUnavailableException", catalog_reply.text
        time.sleep(1)
        own_postgres.start()
        up_at = time.monotonic()
        for node in nodes.nodes:
            while ready(node) != 200:
                assert time.monotonic() - up_at < 30, "a node did not recover once PostgreSQL was back"
                time.sleep(0.2)
        acknowledged_before = len(writer.acknowledged)
        while len(writer.acknowledged) < acknowledged_before + 20:
            assert time.monotonic() - up_at < 30, "writes did not resume"
            time.sleep(0.1)
        writer.stopping.set()
        writer.join()
        assert writer.slowest_s < REQUEST_TIMEOUT_S
        for node in nodes.nodes:
            check_acknowledged(node.endpoint, bucket, writer.acknowledged)
        assert api.call("GET", "/v1/config", params={"warehouse": bucket + "-wh"}).status_code == 200
    finally:
        nodes.stop()


def test_a_node_killed_under_load_loses_nothing_acknowledged(tmp_path, own_postgres):
    nodes = Cluster(tmp_path, schema_url(own_postgres, "killed"))
    nodes.start()
    try:
        bucket = unique_bucket_name("kill")
        make_client(nodes.nodes[0].endpoint).create_bucket(Bucket=bucket)
        writers = [Writer([nodes.nodes[i].endpoint, nodes.nodes[(i + 1) % 3].endpoint], bucket, f"w{i}/")
                   for i in range(3)]
        for writer in writers:
            writer.start()
        time.sleep(1.5)
        nodes.nodes[0].kill()
        time.sleep(2)
        for writer in writers:
            writer.stopping.set()
            writer.join()
        # Only requests the killed node was serving failed, and only as lost connections.
        assert all(status is None for writer in writers for status, _, _ in writer.failures), \
            [writer.failures for writer in writers]
        acknowledged = {key: body for writer in writers for key, body in writer.acknowledged.items()}
        assert len(acknowledged) > 50
        check_acknowledged(nodes.nodes[1].endpoint, bucket, acknowledged)
        # Nothing partial: every listed key reads whole, at the size it was written with.
        s3 = make_client(nodes.nodes[2].endpoint)
        listed = {item["Key"]: item["Size"] for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket)
                  for item in page.get("Contents", [])}
        for key, size in listed.items():
            assert len(s3.get_object(Bucket=bucket, Key=key)["Body"].read()) == size, key
        assert set(acknowledged) <= set(listed)
        nodes.nodes[0].start()
        check_acknowledged(nodes.nodes[0].endpoint, bucket, acknowledged)
    finally:
        nodes.stop()


def test_a_lease_holder_killed_during_a_compaction_leaves_the_table_whole(tmp_path, own_postgres):
    nodes = Cluster(tmp_path, schema_url(own_postgres, "holder"), nodes=2)
    nodes.start()
    try:
        warehouse = unique_bucket_name("holder")
        CatalogApi(nodes.nodes[0].endpoint).create_warehouse(warehouse)
        catalog = load_pyiceberg_catalog(nodes.nodes[0].endpoint, warehouse)
        catalog.create_namespace("m")
        schema = pa.schema([pa.field("id", pa.int64(), nullable=False)])
        table = catalog.create_table("m.small", schema=schema)
        for n in range(20):
            table.append(pa.table({"id": list(range(n * 10, n * 10 + 10))}, schema=schema))
        path = f"/v1/warehouses/{warehouse}/namespaces/m/tables/small/maintenance/icebergCompaction"
        first = CatalogApi(nodes.nodes[0].endpoint)
        first.ok("POST", path + "/run", expect=(202,))
        time.sleep(0.05)
        nodes.nodes[0].kill()
        killed_at = time.monotonic()
        # The other node runs the table's jobs once the dead node's lease has run out.
        second = CatalogApi(nodes.nodes[1].endpoint)
        while True:
            response = second.call("POST", path + "/run")
            if response.status_code == 202:
                break
            assert response.status_code == 409, response.text
            assert time.monotonic() - killed_at < 10 + 5, "the dead node's lease was not taken over"
            time.sleep(0.2)
        job_id = response.json()["jobId"]
        deadline = time.monotonic() + 120
        while True:
            jobs = {job["jobId"]: job for job in second.ok("GET", path + "/status").json()["jobs"]}
            if jobs[job_id]["status"] != "running":
                break
            assert time.monotonic() < deadline
            time.sleep(0.2)
        assert jobs[job_id]["status"] == "succeeded", jobs[job_id]
        reader = load_pyiceberg_catalog(nodes.nodes[1].endpoint, warehouse, name="reader")
        ids = sorted(reader.load_table("m.small").scan().to_arrow()["id"].to_pylist())
        assert ids == list(range(200))
    finally:
        nodes.stop()
