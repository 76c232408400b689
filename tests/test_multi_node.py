"""Several `serac server` nodes on one PostgreSQL (`--meta-store postgresql://...`) and one shared
blob directory (`--blob-store file:DIR`, as an NFS or CephFS mount would be): what one node
acknowledges, every other node serves at once — objects, listings, multipart uploads, tables —;
an IAM change made on one node is in force on all within a second; commits to one table from
several nodes all land; nodes started at the same moment migrate the schema once; a node refuses a
schema newer than it knows; and the database's password never reaches a log."""
from __future__ import annotations

import os
import subprocess
import threading
import time
import uuid

import pyarrow as pa
import pytest
import requests
from botocore.exceptions import ClientError

from catalog_util import CatalogApi, load_pyiceberg_catalog
from pg_util import postgres  # noqa: F401  (fixture)
from cluster_util import Cluster, schema_url
from s3util import SeracAdmin, SeracServer, make_client, serac_binary, unique_bucket_name

@pytest.fixture(scope="module")
def cluster(tmp_path_factory, postgres):  # noqa: F811
    nodes = Cluster(tmp_path_factory.mktemp("cluster"), schema_url(postgres, "cluster"))
    nodes.start()
    yield nodes
    nodes.stop()


def test_every_node_serves_what_another_acknowledged(cluster):
    a, b, c = (make_client(node.endpoint) for node in cluster.nodes)
    bucket = unique_bucket_name("mn")
    a.create_bucket(Bucket=bucket)
    assert bucket in [entry["Name"] for entry in c.list_buckets()["Buckets"]]
    small, large = os.urandom(1000), os.urandom(3 * 1024 * 1024 + 5)
    a.put_object(Bucket=bucket, Key="small", Body=small)
    b.put_object(Bucket=bucket, Key="dir/large", Body=large)
    assert c.get_object(Bucket=bucket, Key="small")["Body"].read() == small
    assert a.get_object(Bucket=bucket, Key="dir/large")["Body"].read() == large
    # An overwrite on one node is what the next read on another returns.
    for round_number in range(20):
        body = f"version {round_number}".encode()
        (a, b, c)[round_number % 3].put_object(Bucket=bucket, Key="hot", Body=body)
        assert (a, b, c)[(round_number + 1) % 3].get_object(Bucket=bucket, Key="hot")["Body"].read() == body
    listed = [item["Key"] for item in b.list_objects_v2(Bucket=bucket)["Contents"]]
    assert listed == ["dir/large", "hot", "small"]
    # A multipart upload begun on one node, its parts sent to the others, completed on the first.
    parts = [os.urandom(5 * 1024 * 1024), os.urandom(5 * 1024 * 1024), os.urandom(77)]
    upload = a.create_multipart_upload(Bucket=bucket, Key="multi")["UploadId"]
    etags = [(a, b, c)[i].upload_part(Bucket=bucket, Key="multi", UploadId=upload, PartNumber=i + 1,
                                      Body=part)["ETag"] for i, part in enumerate(parts)]
    assert [p["PartNumber"] for p in c.list_parts(Bucket=bucket, Key="multi", UploadId=upload)["Parts"]] == [1, 2, 3]
    a.complete_multipart_upload(Bucket=bucket, Key="multi", UploadId=upload,
                                MultipartUpload={"Parts": [{"ETag": e, "PartNumber": i + 1}
                                                           for i, e in enumerate(etags)]})
    assert b.get_object(Bucket=bucket, Key="multi")["Body"].read() == b"".join(parts)
    # A delete on one node is a 404 on the others.
    c.delete_object(Bucket=bucket, Key="small")
    with pytest.raises(ClientError) as missing:
        a.head_object(Bucket=bucket, Key="small")
    assert missing.value.response["ResponseMetadata"]["HTTPStatusCode"] == 404
    # Which node answered is in every response.
    answered = requests.get(cluster.nodes[2].endpoint + "/_serac/health/live", timeout=5)
    assert answered.headers.get("x-serac-node") == "node2"


def test_a_table_is_written_from_every_node(cluster):
    warehouse = unique_bucket_name("wh")
    CatalogApi(cluster.nodes[0].endpoint).create_warehouse(warehouse)
    catalogs = [load_pyiceberg_catalog(node.endpoint, warehouse, name=f"n{i}") for i, node in enumerate(cluster.nodes)]
    catalogs[1].create_namespace("sales")
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("node", pa.string())])
    catalogs[2].create_table("sales.orders", schema=schema)
    # Appends from two nodes at once, on the same table: each lands, none is lost.
    per_node = 6
    errors: list[BaseException] = []

    def append_from(index: int) -> None:
        try:
            table = catalogs[index].load_table("sales.orders")
            for n in range(per_node):
                table.append(pa.table({"id": [index * 1000 + n], "node": [f"node{index}"]}, schema=schema))
        except BaseException as error:  # noqa: BLE001  (reported below)
            errors.append(error)

    threads = [threading.Thread(target=append_from, args=(i,)) for i in (0, 1)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors
    table = catalogs[2].load_table("sales.orders")
    assert len(table.history()) == 2 * per_node
    ids = sorted(table.scan().to_arrow()["id"].to_pylist())
    assert ids == sorted([i * 1000 + n for i in (0, 1) for n in range(per_node)])
    # Renames and drops on one node are what the others list.
    catalogs[0].rename_table("sales.orders", "sales.orders_v2")
    assert [name for _, name in catalogs[1].list_tables("sales")] == ["orders_v2"]


def test_an_iam_change_is_in_force_on_every_node_within_a_second(cluster):
    first, second, third = cluster.nodes
    user = f"mn-{uuid.uuid4().hex[:8]}"
    access_key, secret_key = SeracAdmin(first.endpoint).create_user_with_key(user, policies=["readwrite"])
    for node in (second, third):
        started = time.monotonic()
        while True:
            try:
                make_client(node.endpoint, access_key, secret_key).list_buckets()
                break
            except ClientError:
                assert time.monotonic() - started < 1.5, "a new key was refused on another node after 1.5 s"
                time.sleep(0.05)
    SeracAdmin(second.endpoint).set_key_enabled(access_key, False)
    for node in (first, third):
        started = time.monotonic()
        while True:
            try:
                make_client(node.endpoint, access_key, secret_key).list_buckets()
            except ClientError as error:
                assert error.response["ResponseMetadata"]["HTTPStatusCode"] == 403
                break
            assert time.monotonic() - started < 1.5, "a disabled key still worked on another node after 1.5 s"
            time.sleep(0.05)


def test_a_restarted_node_keeps_the_other_nodes_blobs(cluster):
    a = make_client(cluster.nodes[0].endpoint)
    bucket = unique_bucket_name("sweep")
    a.create_bucket(Bucket=bucket)
    data = os.urandom(2 * 1024 * 1024)
    a.put_object(Bucket=bucket, Key="kept", Body=data)
    # Its start-up sweep sees blobs it did not write; while others write, none is an orphan yet.
    cluster.nodes[1].stop()
    cluster.nodes[1].start()
    assert make_client(cluster.nodes[1].endpoint).get_object(Bucket=bucket, Key="kept")["Body"].read() == data


def test_nodes_started_together_migrate_the_schema_once(tmp_path, postgres):  # noqa: F811
    nodes = Cluster(tmp_path, schema_url(postgres, "together"))
    failures: list[BaseException] = []

    def start(node) -> None:
        try:
            node.start()
        except BaseException as error:  # noqa: BLE001  (reported below)
            failures.append(error)

    threads = [threading.Thread(target=start, args=(node,)) for node in nodes.nodes]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    try:
        assert not failures, failures
        # One version row, at the newest migration: every node saw the schema it knows.
        assert postgres.sql("SELECT count(*), min(version) = max(version) FROM together.serac_schema").split() == \
            ["1|t"]
        assert int(postgres.sql("SELECT version FROM together.serac_schema")) >= 2
        bucket = unique_bucket_name("tg")
        make_client(nodes.nodes[0].endpoint).create_bucket(Bucket=bucket)
        assert bucket in [b["Name"] for b in make_client(nodes.nodes[2].endpoint).list_buckets()["Buckets"]]
    finally:
        nodes.stop()


def test_a_schema_newer_than_the_node_is_refused(tmp_path, postgres):  # noqa: F811
    url = schema_url(postgres, "newer")
    node = SeracServer(tmp_path / "node", extra_args=["--meta-store", url])
    node.start()
    node.stop()
    postgres.sql("UPDATE newer.serac_schema SET version = 99")
    result = subprocess.run([serac_binary(), "server", "--data", str(tmp_path / "again"), "--address", "127.0.0.1:0",
                             "--meta-store", url], capture_output=True, text=True, timeout=60,
                            env=dict(os.environ, SERAC_SERVER_KEY_FILE=str(tmp_path / "key")))
    assert result.returncode != 0
    assert "newer than this serac" in result.stderr + result.stdout


def test_the_database_password_never_reaches_a_log(tmp_path, postgres):  # noqa: F811
    secret = "pw-" + uuid.uuid4().hex
    # The test server trusts loopback, so the password is sent and not needed.
    url = schema_url(postgres, "secretive", password=secret)
    node = SeracServer(tmp_path / "node", extra_args=["--meta-store", url])
    node.start()
    make_client(node.endpoint).create_bucket(Bucket=unique_bucket_name("pw"))
    node.stop()
    assert secret not in node.stderr_path.read_text() + "\n".join(node.stdout_lines)
    # Nor when the server cannot be reached and the error names the URL's host.
    unreachable = f"postgresql://serac:{secret}@127.0.0.1:1/postgres?connect_timeout=2"
    result = subprocess.run([serac_binary(), "server", "--data", str(tmp_path / "other"), "--address", "127.0.0.1:0",
                             "--meta-store", unreachable], capture_output=True, text=True, timeout=60,
                            env=dict(os.environ, SERAC_SERVER_KEY_FILE=str(tmp_path / "key")))
    assert result.returncode != 0
    assert "PostgreSQL" in result.stderr + result.stdout
    assert secret not in result.stderr + result.stdout


COMPACTION = "icebergCompaction"


def maintenance_path(warehouse: str, namespace: str, table: str, suffix: str) -> str:
    return f"/v1/warehouses/{warehouse}/namespaces/{namespace}/tables/{table}/maintenance/{COMPACTION}{suffix}"


def small_file_table(endpoint: str, warehouse: str, files: int):
    catalog = load_pyiceberg_catalog(endpoint, warehouse, name=f"c-{warehouse}")
    catalog.create_namespace("m")
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False)])
    table = catalog.create_table("m.small", schema=schema)
    for n in range(files):
        table.append(pa.table({"id": [n]}, schema=schema))
    return catalog.load_table("m.small")


def wait_for_job(api: CatalogApi, warehouse: str, job_id: int, timeout_s: float = 120) -> dict:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        for job in api.ok("GET", maintenance_path(warehouse, "m", "small", "/status")).json()["jobs"]:
            if job["jobId"] == job_id and job["status"] != "running":
                return job
        time.sleep(0.1)
    raise AssertionError(f"job {job_id} did not end")


def test_a_job_started_on_one_node_is_seen_on_the_others(cluster):
    warehouse = unique_bucket_name("jobs")
    first, second = (CatalogApi(node.endpoint) for node in cluster.nodes[:2])
    first.create_warehouse(warehouse)
    small_file_table(cluster.nodes[0].endpoint, warehouse, 12)
    started = first.ok("POST", maintenance_path(warehouse, "m", "small", "/run"), expect=(202,)).json()
    # The other node lists the job at once (running there, or already ended), and sees it end.
    listed = second.ok("GET", maintenance_path(warehouse, "m", "small", "/status")).json()["jobs"]
    assert started["jobId"] in [job["jobId"] for job in listed]
    job = wait_for_job(second, warehouse, started["jobId"])
    assert job["status"] == "succeeded" and job["filesRead"] == 12, job
    assert job["node"].startswith("node0/"), job


def test_a_dead_nodes_maintenance_is_taken_over(cluster, postgres):  # noqa: F811
    warehouse = unique_bucket_name("takeover")
    api = CatalogApi(cluster.nodes[1].endpoint)
    api.create_warehouse(warehouse)
    table = small_file_table(cluster.nodes[1].endpoint, warehouse, 6)
    # A node that died while it held the table's lease: its lease runs out, then another node runs
    # the table's jobs.
    postgres.sql(f"INSERT INTO cluster.leases(name, holder, expires_ms) VALUES "
                 f"('maintenance/{warehouse}/{table.metadata.table_uuid}', 'dead-node/1/0', "
                 f"(extract(epoch from clock_timestamp()) * 1000)::bigint + 3000)")
    started = time.monotonic()
    while True:
        response = api.call("POST", maintenance_path(warehouse, "m", "small", "/run"))
        if response.status_code == 202:
            break
        assert response.status_code == 409 and "another server" in response.text, response.text
        assert time.monotonic() - started < 3 + 5, "the lease was not taken over"
        time.sleep(0.2)
    assert time.monotonic() - started >= 2.5  # not before the dead node's lease ran out
    job = wait_for_job(api, warehouse, response.json()["jobId"])
    assert job["status"] == "succeeded" and job["filesRead"] == 6, job


def test_one_node_collects_garbage_for_all(cluster, postgres):  # noqa: F811
    a, b = make_client(cluster.nodes[0].endpoint), make_client(cluster.nodes[2].endpoint)
    bucket = unique_bucket_name("gc")
    a.create_bucket(Bucket=bucket)
    before = {path for path in cluster.blobs.rglob("*") if path.is_file()}
    for n in range(6):
        (a, b)[n % 2].put_object(Bucket=bucket, Key=f"big{n}", Body=os.urandom(1024 * 1024))
    written = {path for path in cluster.blobs.rglob("*") if path.is_file()} - before
    assert len(written) >= 6
    for n in range(6):
        (b, a)[n % 2].delete_object(Bucket=bucket, Key=f"big{n}")
    deadline = time.monotonic() + 15
    while any(path.exists() for path in written):
        assert time.monotonic() < deadline, "the deleted objects' blobs were not collected"
        time.sleep(0.2)
    holders = postgres.sql("SELECT holder FROM cluster.leases WHERE name = 'gc'").split()
    assert len(holders) == 1 and holders[0].split("/")[0] in {"node0", "node1", "node2"}, holders
    # The metrics say the same: which node collects, and how its PostgreSQL pool is doing.
    metrics = [requests.get(node.endpoint + "/_serac/metrics", timeout=10).text for node in cluster.nodes]
    assert sum("serac_gc_lease_held 1" in text for text in metrics) == 1
    assert "serac_gc_lease_held 1" in metrics[int(holders[0][len("node"):holders[0].index("/")])]
    for text in metrics:
        assert "serac_postgres_connections_open" in text and "serac_postgres_races_lost_total" in text
        assert "serac_maintenance_leases_held" in text
