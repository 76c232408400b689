"""`serac admin migrate`: a single node's state (its SQLite metadata store) moved into PostgreSQL.
A node on SQLite is written to with boto3 (objects inline and in blobs, a multipart object, an
upload in progress), PyIceberg (a table with two snapshots) and the admin API (a user and its key),
then stopped; the migration refuses while the server runs, then moves everything and checks it, and
a second run finds nothing left to copy. Two servers on the PostgreSQL store, sharing the node's
blob directory and server key, then serve it all: objects byte for byte, the upload completed, the
table's rows (and a new commit), the user's key."""
from __future__ import annotations

import os
import re
import shutil
import subprocess

import pyarrow as pa
import pytest

from catalog_util import CatalogApi, load_pyiceberg_catalog
from cluster_util import Cluster, schema_url
from pg_util import postgres  # noqa: F401  (fixture)
from s3util import ACCESS_KEY, SECRET_KEY, SeracAdmin, SeracServer, make_client, serac_binary

BUCKET = "photos"
WAREHOUSE = "lake"
PART = 5 * 1024 * 1024


def migrate(source: SeracServer, url: str) -> subprocess.CompletedProcess:
    return subprocess.run([serac_binary(), "admin", "migrate", "--from", f"sqlite:{source.data_dir}/meta.db",
                           "--to", url], capture_output=True, text=True, timeout=300)


def moved(output: str, kind: str) -> tuple[int, int]:
    """(copied, already there) of one row of the summary."""
    match = re.search(rf"^  {re.escape(kind)}\s+(\d+)\s+(\d+)$", output, re.MULTILINE)
    assert match, output
    return int(match.group(1)), int(match.group(2))


def test_a_node_moves_to_postgres_and_two_servers_serve_it(tmp_path, postgres):  # noqa: F811
    node = SeracServer(tmp_path / "single", name="serac-single", extra_args=["--maintenance-interval", "0"])
    node.start()
    s3 = make_client(node.endpoint)
    s3.create_bucket(Bucket=BUCKET)
    bodies = {"small.txt": os.urandom(1000), "dir/large.bin": os.urandom(3 * 1024 * 1024 + 5), "empty": b""}
    for key, body in bodies.items():
        s3.put_object(Bucket=BUCKET, Key=key, Body=body, Metadata={"origin": "single"})
    parts = [os.urandom(PART), os.urandom(77)]
    upload = s3.create_multipart_upload(Bucket=BUCKET, Key="multi")["UploadId"]
    etags = [s3.upload_part(Bucket=BUCKET, Key="multi", UploadId=upload, PartNumber=i + 1, Body=part)["ETag"]
             for i, part in enumerate(parts)]
    s3.complete_multipart_upload(Bucket=BUCKET, Key="multi", UploadId=upload,
                                 MultipartUpload={"Parts": [{"ETag": e, "PartNumber": i + 1}
                                                            for i, e in enumerate(etags)]})
    bodies["multi"] = b"".join(parts)
    # An upload still in progress, to be completed after the move.
    pending_part = os.urandom(PART)
    pending = s3.create_multipart_upload(Bucket=BUCKET, Key="pending")["UploadId"]
    pending_etag = s3.upload_part(Bucket=BUCKET, Key="pending", UploadId=pending, PartNumber=1,
                                  Body=pending_part)["ETag"]

    CatalogApi(node.endpoint).create_warehouse(WAREHOUSE)
    catalog = load_pyiceberg_catalog(node.endpoint, WAREHOUSE)
    catalog.create_namespace("sales", properties={"owner": "ann"})
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("name", pa.string())])
    table = catalog.create_table("sales.orders", schema=schema)
    table.append(pa.table({"id": [1, 2], "name": ["a", "b"]}, schema=schema))
    table.append(pa.table({"id": [3], "name": ["c"]}, schema=schema))
    metadata_location = catalog.load_table("sales.orders").metadata_location

    access_key, secret_key = SeracAdmin(node.endpoint).create_user_with_key("ann", policies=["readwrite"])

    # Not while the node's server runs: its data directory's lock is held.
    refused = migrate(node, "sqlite:" + str(tmp_path / "unused" / "meta.db"))
    assert refused.returncode != 0
    assert "serac.lock" in refused.stderr and "stop the server" in refused.stderr, refused.stderr
    node.stop()

    url = schema_url(postgres, "migrated")
    first = migrate(node, url)
    assert first.returncode == 0, first.stdout + first.stderr
    assert "source and target hold the same state" in first.stdout, first.stdout
    assert moved(first.stdout, "objects")[0] >= len(bodies) + 2  # and the table's metadata and data files
    assert moved(first.stdout, "multipart uploads") == (1, 0)
    assert moved(first.stdout, "tables") == (1, 0)
    assert moved(first.stdout, "IAM users") == (1, 0)
    assert "server key" in first.stdout
    assert url not in first.stdout + first.stderr  # a PostgreSQL URL may hold a password
    # Running it again finds everything there.
    again = migrate(node, url)
    assert again.returncode == 0, again.stdout + again.stderr
    copied, present = moved(again.stdout, "objects")
    assert copied == 0 and present >= len(bodies) + 2, again.stdout
    assert moved(again.stdout, "access keys") == (0, 1)

    # Two servers on the PostgreSQL store, with the node's blobs and server key.
    cluster = Cluster(tmp_path, url, nodes=2, blob_store=f"file:{node.data_dir}/blobs")
    nodes = cluster.nodes
    shutil.copy(node.server_key_file, nodes[0].server_key_file)
    cluster.start()
    try:
        a, b = (make_client(server.endpoint) for server in nodes)
        for key, body in bodies.items():
            for client in (a, b):
                got = client.get_object(Bucket=BUCKET, Key=key)
                assert got["Body"].read() == body, key
                assert got["Metadata"] == ({} if key == "multi" else {"origin": "single"}), key
        # The upload begun on the single node is completed on a migrated one.
        b.complete_multipart_upload(Bucket=BUCKET, Key="pending", UploadId=pending,
                                    MultipartUpload={"Parts": [{"ETag": pending_etag, "PartNumber": 1}]})
        assert a.get_object(Bucket=BUCKET, Key="pending")["Body"].read() == pending_part

        catalogs = [load_pyiceberg_catalog(server.endpoint, WAREHOUSE, name=f"m{i}") for i, server in enumerate(nodes)]
        assert catalogs[1].load_namespace_properties("sales")["owner"] == "ann"
        moved_table = catalogs[0].load_table("sales.orders")
        assert moved_table.metadata_location == metadata_location
        assert len(moved_table.history()) == 2
        assert sorted(moved_table.scan().to_arrow()["id"].to_pylist()) == [1, 2, 3]
        # The table goes on from its migrated metadata.
        moved_table.append(pa.table({"id": [4], "name": ["d"]}, schema=schema))
        assert sorted(catalogs[1].load_table("sales.orders").scan().to_arrow()["id"].to_pylist()) == [1, 2, 3, 4]

        # The user's key, sealed by the node's server key, opens on both servers.
        for server in nodes:
            user_client = make_client(server.endpoint, access_key, secret_key)
            assert user_client.get_object(Bucket=BUCKET, Key="small.txt")["Body"].read() == bodies["small.txt"]
    finally:
        cluster.stop()


def test_a_source_that_is_not_a_node_is_refused(tmp_path):
    missing = subprocess.run([serac_binary(), "admin", "migrate", "--from", f"sqlite:{tmp_path}/none/meta.db",
                              "--to", f"sqlite:{tmp_path}/to/meta.db"], capture_output=True, text=True, timeout=60)
    assert missing.returncode != 0
    assert "no database at" in missing.stderr
    shared = subprocess.run([serac_binary(), "admin", "migrate", "--from", "postgresql://u:secret@127.0.0.1:1/db",
                             "--to", f"sqlite:{tmp_path}/to/meta.db"], capture_output=True, text=True, timeout=60)
    assert shared.returncode != 0
    assert "sqlite:DIR/meta.db" in shared.stderr and "secret" not in shared.stderr


@pytest.mark.parametrize("flag", ["--from", "--to"])
def test_both_stores_must_be_named(flag):
    result = subprocess.run([serac_binary(), "admin", "migrate", flag, "sqlite:x"], capture_output=True, text=True,
                            timeout=60)
    assert result.returncode != 0


@pytest.mark.parametrize("destination", ["directory", "upstream-s3"])
def test_the_blobs_move_too(tmp_path, postgres, destination):  # noqa: F811
    """--copy-blobs-to: every blob an object or part names is copied under its id, so the new
    servers run on another blob store (a new directory, or an upstream S3 service) and the node's
    directory can go."""
    node = SeracServer(tmp_path / "single", name="serac-single", extra_args=["--maintenance-interval", "0"])
    node.start()
    s3 = make_client(node.endpoint)
    s3.create_bucket(Bucket=BUCKET)
    bodies = {f"blob{n}": os.urandom(300 * 1024 + n) for n in range(4)}
    bodies["inline"] = b"small"
    for key, body in bodies.items():
        s3.put_object(Bucket=BUCKET, Key=key, Body=body)
    pending = s3.create_multipart_upload(Bucket=BUCKET, Key="pending")["UploadId"]
    pending_part = os.urandom(PART)
    pending_etag = s3.upload_part(Bucket=BUCKET, Key="pending", UploadId=pending, PartNumber=1,
                                  Body=pending_part)["ETag"]
    node.stop()

    upstream = None
    if destination == "directory":
        blob_url = f"file:{tmp_path / 'moved-blobs'}"
        env = dict(os.environ)
    else:
        upstream = SeracServer(tmp_path / "upstream", name="serac-upstream")
        upstream.start()
        make_client(upstream.endpoint).create_bucket(Bucket="blobs")
        blob_url = f"s3://blobs/lake/?endpoint={upstream.endpoint}"
        env = dict(os.environ, SERAC_BLOB_S3_ACCESS_KEY_ID=ACCESS_KEY, SERAC_BLOB_S3_SECRET_ACCESS_KEY=SECRET_KEY)
    try:
        url = schema_url(postgres, f"blobs_{destination.replace('-', '_')}")
        argv = [serac_binary(), "admin", "migrate", "--from", f"sqlite:{node.data_dir}/meta.db", "--to", url,
                "--copy-blobs-to", blob_url]
        first = subprocess.run(argv, capture_output=True, text=True, timeout=300, env=env)
        assert first.returncode == 0, first.stdout + first.stderr
        assert moved(first.stdout, "blobs") == (5, 0), first.stdout  # four objects' blobs and the part's
        assert "every one of 5 blobs" in first.stdout, first.stdout
        again = subprocess.run(argv, capture_output=True, text=True, timeout=300, env=env)
        assert again.returncode == 0, again.stdout + again.stderr
        assert moved(again.stdout, "blobs") == (0, 5), again.stdout
        # The node's own blob directory goes: the new servers have everything in the new store.
        shutil.rmtree(node.data_dir / "blobs")
        servers = Cluster(tmp_path / "new", url, nodes=2, blob_store=blob_url)
        shutil.copy(node.server_key_file, servers.nodes[0].server_key_file)
        saved = {name: os.environ.get(name) for name in ("SERAC_BLOB_S3_ACCESS_KEY_ID", "SERAC_BLOB_S3_SECRET_ACCESS_KEY")}
        os.environ.update({name: value for name, value in env.items() if name in saved})
        try:
            servers.start()
            for server in servers.nodes:
                client = make_client(server.endpoint)
                for key, body in bodies.items():
                    assert client.get_object(Bucket=BUCKET, Key=key)["Body"].read() == body, key
            client = make_client(servers.nodes[1].endpoint)
            client.complete_multipart_upload(Bucket=BUCKET, Key="pending", UploadId=pending,
                                             MultipartUpload={"Parts": [{"ETag": pending_etag, "PartNumber": 1}]})
            assert client.get_object(Bucket=BUCKET, Key="pending")["Body"].read() == pending_part
        finally:
            servers.stop()
            for name, value in saved.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value
    finally:
        if upstream is not None:
            upstream.stop()
