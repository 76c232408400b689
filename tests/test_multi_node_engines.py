"""Three `serac server` nodes on one PostgreSQL behind nginx (cluster_util.Nginx: round-robin,
keep-alive upstream connections, the client's Host passed through), used by real engines as they
would use one serac: their endpoint is the load balancer's, or one node's. Each test runs once per
blob store the nodes share (the outage test only with the upstream): a directory
(`--blob-store file:DIR`) and an upstream S3 service (`--blob-store s3://blobs/lake/?endpoint=URL`,
a fourth serac with its own SQLite store).
It proves that:

- the AWS CLI copies, lists and removes objects through nginx and on single nodes, each seeing what
  another acknowledged; a 20 MiB `aws s3 cp` is a multipart upload whose parts nginx spread over
  several nodes, and another node serves the object byte for byte;
- a table PyIceberg creates and appends to through nginx is what DuckDB's iceberg extension reads
  through nginx, row for row, and DuckDB sees an append made on one node at its next query;
- a table append acknowledged by node0 is the snapshot node2 loads at once, and a view created,
  replaced and dropped on node1 is what node2 loads (or misses) at once;
- a warehouse created on one node is listed by every other, in the catalog and as a bucket;
- Spark (when installed) reads a table through nginx and writes to it, and a node serves the rows;
- with the upstream S3 blob store: while the upstream serac is stopped, writes through nginx get a
  prompt 503 ServiceUnavailable (no hang: every client has timeouts), readiness is 503 on every
  node; once it is back at the same address, writes succeed again without restarting a node, every
  object acknowledged before or after reads back byte for byte (from the nodes in turn), no refused
  write left an object behind, and a table written before the outage takes appends again.

PostgreSQL is tests/pg_util.py's (a schema per blob store); nothing is downloaded at run time."""
from __future__ import annotations

import dataclasses
import hashlib
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pyarrow as pa
import pytest
import requests
from botocore.exceptions import BotoCoreError, ClientError
from pyiceberg.exceptions import NoSuchViewError
from pyiceberg.schema import Schema
from pyiceberg.types import LongType, NestedField
from pyiceberg.view.metadata import SQLViewRepresentation, ViewVersion

from catalog_util import CatalogApi, assert_iceberg_error, load_pyiceberg_catalog
from cluster_util import Cluster, Nginx, free_port, schema_url
from pg_util import postgres  # noqa: F401  (fixture)
from s3util import ACCESS_KEY, REGION, SECRET_KEY, SeracServer, make_client, unique_bucket_name
from spark_util import add_sigv4_catalog, rows as spark_rows, spark  # noqa: F401  (fixture)

# DuckDB with its extensions from their PyPI packages, as tests/test_catalog_duckdb.py loads it.
sys.path.insert(0, str(Path(__file__).resolve().parent / "catalog_tools"))
import duckdb_offline  # noqa: E402

MiB = 1024 * 1024
BLOB_STORES = ["shared-dir", "upstream-s3"]
BLOB_KEY_VARIABLES = ("SERAC_BLOB_S3_ACCESS_KEY_ID", "SERAC_BLOB_S3_SECRET_ACCESS_KEY")
SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("name", pa.string()),
                    pa.field("amount", pa.float64())])
# Short timeouts and one attempt: a node that stopped answering fails the request (and the test)
# instead of hanging it, and a 503 is seen as it was sent, not hidden behind botocore's retries.
ONE_SHOT = dict(retries={"mode": "standard", "total_max_attempts": 1}, connect_timeout=2, read_timeout=10)


@dataclasses.dataclass
class Lake:
    """The nodes, nginx in front of them, and (for the upstream-S3 blob store) the upstream."""
    kind: str
    cluster: Cluster
    proxy: Nginx
    upstream: SeracServer | None

    @property
    def nodes(self) -> list[SeracServer]:
        return self.cluster.nodes

    def node_addresses(self) -> dict[str, str]:
        """nginx's upstream address of each node -> its name."""
        return {f"127.0.0.1:{node.port}": f"node{i}" for i, node in enumerate(self.nodes)}


@pytest.fixture(scope="module", params=BLOB_STORES)
def lake(request, tmp_path_factory, postgres):  # noqa: F811
    kind = request.param
    root = tmp_path_factory.mktemp(kind)
    saved = {name: os.environ.get(name) for name in BLOB_KEY_VARIABLES}
    upstream = cluster = proxy = None
    try:
        blob_store = None
        if kind == "upstream-s3":
            # A fixed port: the outage test stops the upstream and starts it again at the address
            # the nodes' --blob-store names.
            upstream = SeracServer(root / "upstream", name="serac-upstream",
                                   extra_args=["--address", f"127.0.0.1:{free_port()}"])
            upstream.start()
            # The nodes read their upstream keys from the environment at start (never from the URL).
            os.environ["SERAC_BLOB_S3_ACCESS_KEY_ID"] = ACCESS_KEY
            os.environ["SERAC_BLOB_S3_SECRET_ACCESS_KEY"] = SECRET_KEY
            blob_store = f"s3://blobs/lake/?endpoint={upstream.endpoint}"
        # A schema per blob store: one prefix (or directory) per metadata store.
        cluster = Cluster(root, schema_url(postgres, f"engines_{kind.replace('-', '_')}"), blob_store=blob_store)
        cluster.start()
        proxy = Nginx([f"127.0.0.1:{node.port}" for node in cluster.nodes])
        proxy.start()
        yield Lake(kind, cluster, proxy, upstream)
    finally:
        for part in (proxy, cluster, upstream):
            if part is not None:
                part.stop()
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


# --- Clients -----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def aws_env(tmp_path_factory):
    """The AWS CLI's environment: root keys, no user configuration, one attempt per request, and
    5 MiB multipart parts so that a 20 MiB copy is four parts for nginx to spread."""
    directory = tmp_path_factory.mktemp("aws")
    config = directory / "config"
    config.write_text("[default]\ns3 =\n  multipart_threshold = 8MB\n  multipart_chunksize = 5MB\n"
                      "  max_concurrent_requests = 4\n")
    env = dict(os.environ)
    env.update(AWS_ACCESS_KEY_ID=ACCESS_KEY, AWS_SECRET_ACCESS_KEY=SECRET_KEY, AWS_DEFAULT_REGION=REGION,
               AWS_CONFIG_FILE=str(config), AWS_SHARED_CREDENTIALS_FILE=str(directory / "no-creds"),
               AWS_EC2_METADATA_DISABLED="true", AWS_PAGER="", AWS_MAX_ATTEMPTS="1", AWS_RETRY_MODE="standard")
    return env


def aws(endpoint: str, env: dict, *args, timeout: float = 120) -> str:
    binary = shutil.which("aws")
    assert binary, "the AWS CLI is not installed (scripts/install-deps.sh --test installs it)"
    # Short timeouts turn a stalled exchange into a clear failure instead of a slow pass.
    result = subprocess.run([binary, "--endpoint-url", endpoint, "--cli-connect-timeout", "5",
                             "--cli-read-timeout", "20", *args], env=env, capture_output=True, timeout=timeout)
    assert result.returncode == 0, (f"aws {' '.join(args)} via {endpoint} failed ({result.returncode}):\n"
                                    f"stdout: {result.stdout.decode(errors='replace')[-2000:]}\n"
                                    f"stderr: {result.stderr.decode(errors='replace')[-2000:]}")
    return result.stdout.decode()


def listed_keys(ls_output: str) -> list[str]:
    """The keys of `aws s3 ls --recursive` (date, time, size, key)."""
    return sorted(line.split(None, 3)[3] for line in ls_output.splitlines() if line.strip())


def catalog(endpoint: str, warehouse: str, name: str):
    """A PyIceberg catalog whose catalog requests time out (its REST client sets no timeout)."""
    loaded = load_pyiceberg_catalog(endpoint, warehouse, name=name,
                                    **{"s3.connect-timeout": "5", "s3.request-timeout": "30"})
    session = loaded._session
    request = session.request
    session.request = lambda method, url, **kwargs: request(method, url, **{"timeout": (5, 30), **kwargs})
    return loaded


def rows_of(start: int, count: int) -> pa.Table:
    ids = list(range(start, start + count))
    return pa.table({"id": ids, "name": [f"row-{i}" for i in ids], "amount": [i * 0.5 for i in ids]}, schema=SCHEMA)


def duckdb_on(endpoint: str, warehouse: str):
    """DuckDB with `warehouse` attached as `lake` through `endpoint` (catalog and data alike)."""
    con = duckdb_offline.connect()
    duckdb_offline.attach_iceberg_catalog(con, "lake", endpoint=endpoint + "/_iceberg", warehouse=warehouse,
                                          access_key_id=ACCESS_KEY, secret_access_key=SECRET_KEY, region=REGION)
    return con


def upstreams_of(lake: Lake, start: str, since: int = 0) -> set[str]:
    """The nodes nginx sent the requests whose request line starts so (after the first `since`)."""
    names = lake.node_addresses()
    return {names[upstream] for _, upstream in lake.proxy.logged_requests(start)[since:]}


# --- The AWS CLI ---------------------------------------------------------------------------------------


def test_aws_cli_through_nginx_and_on_each_node(lake, aws_env, tmp_path):
    lb = lake.proxy.endpoint
    node0, node1, node2 = (node.endpoint for node in lake.nodes)
    bucket = unique_bucket_name("cli")
    aws(node1, aws_env, "s3", "mb", f"s3://{bucket}")
    small = tmp_path / "small.txt"
    small.write_bytes(os.urandom(70_000))
    aws(lb, aws_env, "s3", "cp", str(small), f"s3://{bucket}/dir/small.txt")
    aws(node0, aws_env, "s3", "cp", str(small), f"s3://{bucket}/dir/other.txt")
    # What one node acknowledged, every node and nginx list and serve.
    for endpoint in (lb, node0, node1, node2):
        assert listed_keys(aws(endpoint, aws_env, "s3", "ls", "--recursive", f"s3://{bucket}/")) == [
            "dir/other.txt", "dir/small.txt"], endpoint
    fetched = tmp_path / "fetched.txt"
    aws(node2, aws_env, "s3", "cp", f"s3://{bucket}/dir/small.txt", str(fetched))
    assert fetched.read_bytes() == small.read_bytes()

    # 20 MiB in 5 MiB parts: a multipart upload whose parts nginx hands to different nodes.
    big = tmp_path / "big.bin"
    big.write_bytes(os.urandom(20 * MiB))
    aws(lb, aws_env, "s3", "cp", str(big), f"s3://{bucket}/big.bin")
    # (A PUT with a query string on the key is an UploadPart: ?uploadId=...&partNumber=...)
    parts = lake.proxy.logged_requests(f"PUT /{bucket}/big.bin?")
    assert len(parts) == 4 and all(status == 200 for status, _ in parts), parts
    assert len(upstreams_of(lake, f"PUT /{bucket}/big.bin?")) >= 2, parts
    head = make_client(node1).head_object(Bucket=bucket, Key="big.bin")
    assert head["ContentLength"] == 20 * MiB and head["ETag"].endswith('-4"'), head
    # Downloaded from another node (and through nginx) byte for byte.
    for endpoint, name in ((node2, "from-node2.bin"), (lb, "from-lb.bin")):
        aws(endpoint, aws_env, "s3", "cp", f"s3://{bucket}/big.bin", str(tmp_path / name))
        assert hashlib.sha256((tmp_path / name).read_bytes()).digest() == hashlib.sha256(big.read_bytes()).digest()

    # A remove on one node is gone from every listing at once.
    aws(node2, aws_env, "s3", "rm", f"s3://{bucket}/dir/small.txt")
    aws(lb, aws_env, "s3", "rm", f"s3://{bucket}/big.bin")
    for endpoint in (lb, node0, node1):
        assert listed_keys(aws(endpoint, aws_env, "s3", "ls", "--recursive", f"s3://{bucket}/")) == [
            "dir/other.txt"], endpoint


# --- PyIceberg and DuckDB ------------------------------------------------------------------------------


def test_duckdb_reads_through_nginx_what_pyiceberg_wrote_through_nginx(lake):
    lb = lake.proxy.endpoint
    warehouse = unique_bucket_name("wh-engines")
    CatalogApi(lake.nodes[0].endpoint).create_warehouse(warehouse)
    before = {method: len(lake.proxy.logged_requests(f"{method} /_iceberg/v1/{warehouse}/")) for method in ("GET", "POST")}
    writer = catalog(lb, warehouse, "lb-writer")
    writer.create_namespace("sales")
    table = writer.create_table("sales.orders", schema=SCHEMA)
    table.append(rows_of(0, 100))
    table.append(rows_of(100, 50))
    loaded = catalog(lb, warehouse, "lb-reader").load_table("sales.orders")
    assert len(loaded.snapshots()) == 2
    expected = sorted(tuple(row.values()) for row in loaded.scan().to_arrow().to_pylist())
    assert expected == sorted(tuple(row.values()) for row in rows_of(0, 150).to_pylist())
    # nginx spread the catalog requests (loads, creates, commits) over the nodes.
    served = set().union(*(upstreams_of(lake, f"{method} /_iceberg/v1/{warehouse}/", since)
                           for method, since in before.items()))
    assert len(served) >= 2, served

    duck = duckdb_on(lb, warehouse)
    try:
        got = duck.execute("SELECT id, name, amount FROM lake.sales.orders ORDER BY id").fetchall()
        assert got == expected
        # An append acknowledged by one node is in DuckDB's next query through nginx.
        catalog(lake.nodes[1].endpoint, warehouse, "node1").load_table("sales.orders").append(rows_of(150, 5))
        assert duck.execute("SELECT count(*), max(id) FROM lake.sales.orders").fetchone() == (155, 154)
    finally:
        duck.close()


# --- Read-after-write across nodes ---------------------------------------------------------------------


def test_a_commit_on_one_node_is_what_another_loads_at_once(lake):
    warehouse = unique_bucket_name("wh-raw")
    CatalogApi(lake.nodes[2].endpoint).create_warehouse(warehouse)
    node0, node1, node2 = (catalog(node.endpoint, warehouse, f"raw{i}") for i, node in enumerate(lake.nodes))
    node1.create_namespace("raw")
    table = node0.create_table("raw.t", schema=SCHEMA)
    for round_number in range(5):
        table.append(rows_of(round_number * 10, 10))
        committed = table.current_snapshot().snapshot_id
        # No wait: node2's very next load has node0's snapshot (the catalog is PostgreSQL's, not cached).
        seen = node2.load_table("raw.t")
        assert seen.current_snapshot().snapshot_id == committed, round_number
        assert seen.metadata_location == table.metadata_location
    assert sorted(node2.load_table("raw.t").scan().to_arrow()["id"].to_pylist()) == list(range(50))

    # A view: created on node1, node2 loads it at once; replaced on node1, node2 loads the new
    # version at once; dropped on node1, node2 misses it at once.
    version = ViewVersion(version_id=1, schema_id=0, timestamp_ms=int(time.time() * 1000),
                          summary={"engine-name": "test"}, default_namespace=["raw"],
                          representations=[SQLViewRepresentation(type="sql", sql="SELECT id FROM raw.t",
                                                                 dialect="spark")])
    node1.create_view("raw.ids", Schema(NestedField(1, "id", LongType(), required=False)), version)
    view = node2.load_view("raw.ids")
    assert view.metadata.current_version_id == 1
    assert view.metadata.versions[0].representations[0].root.sql == "SELECT id FROM raw.t"
    replaced = CatalogApi(lake.nodes[1].endpoint).ok("POST", f"/v1/{warehouse}/namespaces/raw/views/ids", {
        "requirements": [{"type": "assert-view-uuid", "uuid": str(view.metadata.view_uuid)}],
        "updates": [{"action": "add-view-version", "view-version": {
            "version-id": 2, "schema-id": 0, "timestamp-ms": int(time.time() * 1000),
            "summary": {"engine-name": "test"}, "default-namespace": ["raw"],
            "representations": [{"type": "sql", "sql": "SELECT id FROM raw.t WHERE id > 9", "dialect": "spark"}]}},
            {"action": "set-current-view-version", "view-version-id": -1}]}, expect=(200,))
    current = replaced.json()["metadata"]["current-version-id"]
    view = node2.load_view("raw.ids")
    assert view.metadata.current_version_id == current != 1
    current_version = next(v for v in view.metadata.versions if v.version_id == current)
    assert current_version.representations[0].root.sql == "SELECT id FROM raw.t WHERE id > 9"
    node1.drop_view("raw.ids")
    with pytest.raises(NoSuchViewError):
        node2.load_view("raw.ids")
    assert node0.list_views("raw") == []


def test_a_warehouse_created_on_one_node_is_listed_on_every_other(lake, aws_env):
    first, second = unique_bucket_name("wh-a"), unique_bucket_name("wh-b")
    CatalogApi(lake.nodes[0].endpoint).create_warehouse(first)
    CatalogApi(lake.nodes[2].endpoint).create_warehouse(second)
    for endpoint in [node.endpoint for node in lake.nodes] + [lake.proxy.endpoint]:
        listed = CatalogApi(endpoint).ok("GET", "/v1/warehouses", expect=(200,)).json()["warehouses"]
        assert first in listed and second in listed, (endpoint, listed)
    # A warehouse is a bucket: the AWS CLI on another node lists it too.
    buckets = [line.split()[-1] for line in aws(lake.nodes[1].endpoint, aws_env, "s3", "ls").splitlines()]
    assert first in buckets and second in buckets
    # And node1 serves a table in the warehouse node2 created, to a client of nginx.
    created = catalog(lake.nodes[1].endpoint, second, "wh-node1")
    created.create_namespace("db")
    created.create_table("db.t", schema=SCHEMA).append(rows_of(0, 3))
    assert catalog(lake.proxy.endpoint, second, "wh-lb").load_table("db.t").scan().to_arrow().num_rows == 3


# --- Spark -------------------------------------------------------------------------------------------


@pytest.mark.timeout(300)
def test_spark_reads_and_writes_through_nginx(lake, spark):  # noqa: F811
    started = time.monotonic()
    warehouse = unique_bucket_name("wh-spark")
    CatalogApi(lake.nodes[1].endpoint).create_warehouse(warehouse)
    seeder = catalog(lake.nodes[0].endpoint, warehouse, "spark-seed")
    seeder.create_namespace("db")
    seeder.create_table("db.t", schema=SCHEMA).append(rows_of(0, 20))
    name = add_sigv4_catalog(spark, lake.proxy.endpoint, warehouse)
    assert spark_rows(spark, f"SELECT count(*), sum(id) FROM {name}.db.t") == [(20, sum(range(20)))]
    spark.sql(f"INSERT INTO {name}.db.t VALUES (1000, 'from spark', 1.5), (1001, 'from spark', 2.5)")
    # What Spark committed through nginx, node2 serves at once.
    table = catalog(lake.nodes[2].endpoint, warehouse, "spark-check").load_table("db.t")
    assert len(table.snapshots()) == 2
    ids = sorted(table.scan().to_arrow()["id"].to_pylist())
    assert ids == list(range(20)) + [1000, 1001]
    print(f"\nSpark read + write through nginx ({lake.kind}): {time.monotonic() - started:.1f} s")


# --- The upstream S3 blob store going away and coming back ----------------------------------------------


@dataclasses.dataclass
class Attempt:
    key: str
    body_sha256: bytes
    began: float
    ended: float = 0.0
    outcome: str = ""  # "ok", "<status> <code>", or the exception's name
    node: str | None = None
    retry_after: str | None = None


class Writer(threading.Thread):
    """PUTs fresh keys through nginx, one after another, until told to stop; records every attempt."""

    def __init__(self, endpoint: str, bucket: str):
        super().__init__(daemon=True)
        self.s3 = make_client(endpoint, **ONE_SHOT)
        self.bucket = bucket
        self.attempts: list[Attempt] = []
        self.halt = threading.Event()
        self.problems: list[str] = []

    def acknowledged_since(self, moment: float) -> int:
        return sum(1 for a in self.attempts if a.outcome == "ok" and a.began >= moment)

    def run(self) -> None:
        number = 0
        try:
            while not self.halt.is_set():
                # Large enough to be a blob of its own in the blob store.
                body = os.urandom(256 * 1024)
                attempt = Attempt(f"w/{number:05d}", hashlib.sha256(body).digest(), time.monotonic())
                number += 1
                try:
                    answer = self.s3.put_object(Bucket=self.bucket, Key=attempt.key, Body=body)
                    attempt.outcome = "ok"
                    attempt.node = answer["ResponseMetadata"]["HTTPHeaders"].get("x-serac-node")
                except ClientError as error:
                    response = error.response
                    attempt.outcome = f"{response['ResponseMetadata']['HTTPStatusCode']} {response['Error'].get('Code')}"
                    headers = response["ResponseMetadata"].get("HTTPHeaders", {})
                    attempt.node, attempt.retry_after = headers.get("x-serac-node"), headers.get("retry-after")
                except BotoCoreError as error:  # a timeout or a dropped connection: what must not happen
                    attempt.outcome = type(error).__name__
                attempt.ended = time.monotonic()
                self.attempts.append(attempt)
                time.sleep(0.02)
        except BaseException as error:  # noqa: BLE001  (a broken writer fails the test)
            self.problems.append(f"{type(error).__name__}: {error}")


def readiness(endpoint: str) -> int:
    return requests.get(endpoint + "/_serac/health/ready", timeout=5).status_code


def wait_for(condition, timeout_s: float, what: str) -> float:
    """Polls until `condition()`; returns how long it took."""
    started = time.monotonic()
    while not condition():
        assert time.monotonic() - started < timeout_s, f"{what}: not within {timeout_s} s"
        time.sleep(0.05)
    return time.monotonic() - started


@pytest.mark.timeout(180)
@pytest.mark.parametrize("lake", ["upstream-s3"], indirect=True)  # only that set has an upstream to stop
def test_an_upstream_outage_is_a_prompt_503_and_loses_nothing(lake):
    lb, upstream = lake.proxy.endpoint, lake.upstream
    s3 = make_client(lb, **ONE_SHOT)
    bucket = unique_bucket_name("outage")
    s3.create_bucket(Bucket=bucket)
    warehouse = unique_bucket_name("wh-outage")
    CatalogApi(lb).create_warehouse(warehouse)
    tables = catalog(lb, warehouse, "outage")
    tables.create_namespace("db")
    tables.create_table("db.t", schema=SCHEMA).append(rows_of(0, 10))

    writer = Writer(lb, bucket)
    writer.start()
    try:
        wait_for(lambda: writer.acknowledged_since(0) >= 10, 30, "writes before the outage")

        upstream.stop()
        down = time.monotonic()
        # Every node reports it cannot serve, and says so through nginx too.
        for node in lake.nodes:
            wait_for(lambda: readiness(node.endpoint) == 503, 5, f"{node.name} readiness 503")
        assert readiness(lb) == 503
        # Writes keep coming through nginx for a while; each is refused promptly.
        wait_for(lambda: sum(1 for a in writer.attempts if a.began > down and a.outcome != "ok") >= 10, 30,
                 "refused writes during the outage")
        # A read of an acknowledged object is a clear 503 with Retry-After, not half an answer.
        kept = next(a for a in writer.attempts if a.outcome == "ok")
        url = s3.generate_presigned_url("get_object", Params={"Bucket": bucket, "Key": kept.key})
        got = requests.get(url, timeout=10)
        assert got.status_code == 503 and "<Code>ServiceUnavailable</Code>" in got.text, got.text
        assert got.headers.get("Retry-After") and "ETag" not in got.headers
        # The catalog answers too: a table load either comes from the metadata store or is a clear
        # 503, never a hang or another error.
        load = CatalogApi(lb).call("GET", f"/v1/{warehouse}/namespaces/db/tables/t", timeout=10)
        if load.status_code != 200:
            assert_iceberg_error(load, 503, "ServiceUnavailableException")
        # A PyIceberg append through nginx fails (its data file cannot be written), and soon: it
        # never reaches the commit.
        table = catalog(lb, warehouse, "during").load_table("db.t")
        began = time.monotonic()
        with pytest.raises(Exception) as failed:  # pyarrow's OSError for the refused PUT
            table.append(rows_of(100, 5))
        failed_append = f"{type(failed.value).__name__} after {time.monotonic() - began:.2f} s"
        assert time.monotonic() - began < 20, failed_append
        # (the AWS SDK in pyarrow names the S3 error SERVICE_UNAVAILABLE)
        assert "SERVICE_UNAVAILABLE" in str(failed.value), failed.value
        # The outage lasts a while: the writer keeps being refused, by every node.
        time.sleep(max(0.0, down + 2.0 - time.monotonic()))

        upstream.start()  # the same --address: the nodes' --blob-store URL reaches it again
        up = time.monotonic()
        recovered = max(wait_for(lambda: readiness(node.endpoint) == 200, 15, f"{node.name} readiness 200")
                        for node in lake.nodes)
        wait_for(lambda: writer.acknowledged_since(up) >= 10, 30, "writes after the outage")
    finally:
        writer.halt.set()
        writer.join(30)
        if not upstream.alive():
            upstream.start()
    assert not writer.problems, writer.problems

    attempts = writer.attempts
    outcomes = {a.outcome for a in attempts}
    summary = (f"{len(attempts)} writes ({sum(a.began < down for a in attempts)} before the upstream stopped, "
               f"{sum(down <= a.began < up for a in attempts)} while it was down, {sum(a.began >= up for a in attempts)} "
               f"after), outcomes {sorted(outcomes)}, slowest {max(a.ended - a.began for a in attempts):.2f} s; "
               f"ready again {recovered:.2f} s after the upstream; catalog load while down: {load.status_code}; "
               f"PyIceberg append while down: {failed_append}")
    # Only two answers: done, or a clear 503 ServiceUnavailable (from the nodes, not nginx).
    assert outcomes <= {"ok", "503 ServiceUnavailable"}, summary
    refused = [a for a in attempts if a.outcome != "ok"]
    assert all(a.node in {"node0", "node1", "node2"} and a.retry_after for a in refused), summary
    # Every write sent well inside the outage was refused, and promptly: no hang.
    during = [a for a in attempts if down + 0.5 < a.began and a.ended < up]
    assert during and all(a.outcome == "503 ServiceUnavailable" for a in during), summary
    assert all(a.ended - a.began < 5 for a in attempts), summary
    assert len({a.node for a in during}) == 3, summary  # nginx spread them over every node

    # Everything acknowledged — before, during, after — reads back byte for byte (from the nodes in
    # turn), and the listing holds exactly those keys: nothing refused left an object behind.
    acknowledged = [a for a in attempts if a.outcome == "ok"]
    clients = [make_client(node.endpoint, **ONE_SHOT) for node in lake.nodes]
    for i, attempt in enumerate(acknowledged):
        body = clients[i % 3].get_object(Bucket=bucket, Key=attempt.key)["Body"].read()
        assert hashlib.sha256(body).digest() == attempt.body_sha256, attempt.key
    listed = set()
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket):
        listed.update(item["Key"] for item in page.get("Contents", []))
    assert listed == {a.key for a in acknowledged}, summary

    # The table written before the outage (the failed append left no snapshot) takes appends again,
    # and reads whole.
    table = catalog(lb, warehouse, "after").load_table("db.t")
    assert len(table.snapshots()) == 1
    table.append(rows_of(10, 5))
    assert sorted(catalog(lake.nodes[2].endpoint, warehouse, "after2").load_table("db.t")
                  .scan().to_arrow()["id"].to_pylist()) == list(range(15))
    print(f"\nupstream outage: {summary}")
