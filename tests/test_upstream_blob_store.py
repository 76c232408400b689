"""`serac server --blob-store s3://BUCKET/PREFIX`: a node whose object bytes live in an upstream S3
service (here another serac), with its index and catalog in its own metadata store. boto3 and
PyIceberg use the node as they use any serac; the bytes are blobs in the upstream bucket under the
prefix, survive the node's restart, and go from the upstream when the objects that held them go."""
from __future__ import annotations

import hashlib
import os
import socket
import time

import pyarrow as pa
import pytest
import requests
from botocore.exceptions import ClientError

from catalog_util import CatalogApi, load_pyiceberg_catalog
from s3util import ACCESS_KEY, SECRET_KEY, SeracServer, make_client, unique_bucket_name

BLOB_BUCKET = "nodeblobs"
PREFIX = "node-1/"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="module")
def upstream(tmp_path_factory):
    # A fixed port: the upstream is stopped and started again at the same address below.
    server = SeracServer(tmp_path_factory.mktemp("upstream"), name="serac-upstream",
                         extra_args=["--address", f"127.0.0.1:{free_port()}"])
    server.start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def node(tmp_path_factory, upstream):
    saved = {name: os.environ.get(name) for name in ("SERAC_BLOB_S3_ACCESS_KEY_ID", "SERAC_BLOB_S3_SECRET_ACCESS_KEY")}
    os.environ["SERAC_BLOB_S3_ACCESS_KEY_ID"] = ACCESS_KEY
    os.environ["SERAC_BLOB_S3_SECRET_ACCESS_KEY"] = SECRET_KEY
    url = f"s3://{BLOB_BUCKET}/{PREFIX}?endpoint={upstream.endpoint}"
    server = SeracServer(tmp_path_factory.mktemp("node"), name="serac-node",
                         extra_args=["--blob-store", url, "--maintenance-interval", "0"])
    server.start()
    yield server
    server.stop()
    for name, value in saved.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


def upstream_blobs(upstream) -> set[str]:
    s3 = make_client(upstream.endpoint)
    keys: set[str] = set()
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=BLOB_BUCKET, Prefix=PREFIX):
        keys.update(item["Key"] for item in page.get("Contents", []))
    return keys


def test_objects_live_in_the_upstream_and_survive_a_restart(node, upstream):
    s3 = make_client(node.endpoint)
    bucket = unique_bucket_name("up")
    s3.create_bucket(Bucket=bucket)
    before = upstream_blobs(upstream)
    payloads = {"small": os.urandom(300 * 1024), "large": os.urandom(20 * 1024 * 1024 + 7)}
    for key, data in payloads.items():
        s3.put_object(Bucket=bucket, Key=key, Body=data)
    parts = [os.urandom(5 * 1024 * 1024) for _ in range(2)] + [os.urandom(1234)]
    upload = s3.create_multipart_upload(Bucket=bucket, Key="multi")
    etags = [s3.upload_part(Bucket=bucket, Key="multi", UploadId=upload["UploadId"], PartNumber=i + 1,
                            Body=part)["ETag"] for i, part in enumerate(parts)]
    s3.complete_multipart_upload(Bucket=bucket, Key="multi", UploadId=upload["UploadId"],
                                 MultipartUpload={"Parts": [{"ETag": e, "PartNumber": i + 1}
                                                            for i, e in enumerate(etags)]})
    payloads["multi"] = b"".join(parts)
    s3.copy_object(Bucket=bucket, Key="copy", CopySource={"Bucket": bucket, "Key": "large"})
    payloads["copy"] = payloads["large"]

    added = upstream_blobs(upstream) - before
    assert len(added) >= 4, added  # every object's bytes are blobs under the prefix in the upstream
    assert all(len(key) == len(PREFIX) + 32 for key in added), added
    local_blobs = node.root_dir / "data" / "blobs"
    assert not local_blobs.exists() or not any(p.is_file() for p in local_blobs.rglob("*"))

    def check_all(s3):
        for key, data in payloads.items():
            body = s3.get_object(Bucket=bucket, Key=key)["Body"].read()
            assert hashlib.sha256(body).digest() == hashlib.sha256(data).digest(), key
        ranged = s3.get_object(Bucket=bucket, Key="large", Range="bytes=5000000-5999999")["Body"].read()
        assert ranged == payloads["large"][5_000_000:6_000_000]

    check_all(s3)
    node.stop()
    node.start()
    s3 = make_client(node.endpoint)  # a restarted node listens on a port of its own again
    check_all(s3)

    # Deleted objects' blobs are collected from the upstream.
    for key in list(payloads):
        s3.delete_object(Bucket=bucket, Key=key)
    deadline = time.monotonic() + 60
    while upstream_blobs(upstream) & added and time.monotonic() < deadline:
        time.sleep(0.5)
    assert not upstream_blobs(upstream) & added


def test_a_table_written_and_read_through_the_node(node, upstream):
    api = CatalogApi(node.endpoint)
    warehouse = unique_bucket_name("wh-up")
    api.create_warehouse(warehouse)
    catalog = load_pyiceberg_catalog(node.endpoint, warehouse)
    catalog.create_namespace("db")
    rows = pa.table({"id": pa.array(range(50_000), pa.int64()),
                     "name": pa.array([f"name-{i}" * 3 for i in range(50_000)])})
    table = catalog.create_table("db.t", schema=rows.schema)
    before = upstream_blobs(upstream)
    table.append(rows)
    assert upstream_blobs(upstream) - before  # the data file's bytes went to the upstream
    read = catalog.load_table("db.t").scan().to_arrow().sort_by("id")
    assert read.num_rows == 50_000
    assert read.column("name").to_pylist()[:3] == ["name-0" * 3, "name-1" * 3, "name-2" * 3]


def test_while_the_upstream_is_down_the_node_answers_503_and_recovers_by_itself(node, upstream):
    s3 = make_client(node.endpoint)
    bucket = unique_bucket_name("down")
    s3.create_bucket(Bucket=bucket)
    data = os.urandom(400 * 1024)
    s3.put_object(Bucket=bucket, Key="k", Body=data)
    get_url = s3.generate_presigned_url("get_object", Params={"Bucket": bucket, "Key": "k"})
    assert requests.get(node.endpoint + "/_serac/health/ready").status_code == 200

    upstream.stop()
    try:
        ready = requests.get(node.endpoint + "/_serac/health/ready")
        assert ready.status_code == 503, ready.text
        got = requests.get(get_url, timeout=30)
        assert got.status_code == 503, got.text
        assert got.headers.get("Retry-After") == "1"
        assert "<Code>ServiceUnavailable</Code>" in got.text
        assert "ETag" not in got.headers and "Last-Modified" not in got.headers  # no half of the object's head
        with pytest.raises(ClientError) as refused:
            s3.put_object(Bucket=bucket, Key="k2", Body=os.urandom(400 * 1024))
        assert refused.value.response["ResponseMetadata"]["HTTPStatusCode"] == 503
    finally:
        upstream.start()

    # Back without a restart of the node: the old object reads whole, a new one writes.
    assert requests.get(node.endpoint + "/_serac/health/ready").status_code == 200
    assert s3.get_object(Bucket=bucket, Key="k")["Body"].read() == data
    s3.put_object(Bucket=bucket, Key="k2", Body=b"x" * 300_000)
    assert s3.get_object(Bucket=bucket, Key="k2")["Body"].read() == b"x" * 300_000


def test_an_unreachable_upstream_stops_the_node_at_start_with_a_clear_error(tmp_path):
    os.environ["SERAC_BLOB_S3_ACCESS_KEY_ID"] = ACCESS_KEY
    os.environ["SERAC_BLOB_S3_SECRET_ACCESS_KEY"] = SECRET_KEY
    try:
        server = SeracServer(tmp_path / "lonely", name="serac-lonely",
                             extra_args=["--blob-store", "s3://b/p?endpoint=http://127.0.0.1:9"])
        with pytest.raises(Exception):
            server.start(timeout_s=20)
        message = server.stderr_path.read_text(errors="replace")
        assert "s3://b/p/" in message and "127.0.0.1:9" in message, message
        assert SECRET_KEY not in message
    finally:
        os.environ.pop("SERAC_BLOB_S3_ACCESS_KEY_ID", None)
        os.environ.pop("SERAC_BLOB_S3_SECRET_ACCESS_KEY", None)
