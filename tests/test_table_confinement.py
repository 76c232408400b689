"""What one table's user can reach of another's: nothing. Every table and view owns a prefix of its
warehouse's bucket that overlaps no other table's, view's or namespace's; a create, register or
commit naming a place outside what the table owns is refused; the server's own reads and deletes
for a table (purge, snapshot expiry, trimmed metadata files, scan planning) stay inside its prefix;
adopting a bucket as a warehouse and removing a warehouse's bucket need S3 rights on it; S3 cannot
replace or delete a table's current metadata file; and a table's uuid, which keys its maintenance
settings, belongs to it alone."""

from __future__ import annotations

import io
import json
import time

import boto3
import pyarrow as pa
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError

from catalog_util import CatalogApi, catalog_api, load_pyiceberg_catalog, split_s3_location, warehouse  # noqa: F401
from s3util import ACCESS_KEY, REGION, SECRET_KEY, SeracAdmin, make_client

SCHEMA = {"type": "struct", "schema-id": 0, "fields": [{"id": 1, "name": "id", "type": "long", "required": False}]}
SNAPSHOTS = "icebergSnapshotManagement"


@pytest.fixture
def s3(server):
    return make_client(server.endpoint)


def create_table(api: CatalogApi, warehouse: str, ns: str, name: str, location: str | None = None,
                 properties: dict | None = None):
    body = {"name": name, "schema": SCHEMA}
    if location is not None:
        body["location"] = location
    if properties:
        body["properties"] = properties
    return api.call("POST", f"/v1/{warehouse}/namespaces/{ns}/tables", body)


def victim_table(server, api: CatalogApi, warehouse: str):
    """a.victim with two appends of data written by PyIceberg; its location and data files."""
    api.ok("POST", f"/v1/{warehouse}/namespaces", {"namespace": ["a"]})
    api.ok("POST", f"/v1/{warehouse}/namespaces", {"namespace": ["b"]})
    catalog = load_pyiceberg_catalog(server.endpoint, warehouse)
    table = catalog.create_table("a.victim", pa.schema([("id", pa.int64())]))
    table.append(pa.table({"id": pa.array([1, 2, 3], pa.int64())}))
    table.append(pa.table({"id": pa.array([4, 5], pa.int64())}))
    table = catalog.load_table("a.victim")
    files = sorted(task.file.file_path for task in table.scan().plan_files())
    return catalog, table.metadata.location, table.metadata_location, files


def victim_rows(catalog) -> list[int]:
    return sorted(catalog.load_table("a.victim").scan().to_arrow()["id"].to_pylist())


def assert_refused(response, status: int, *phrases: str):
    assert response.status_code == status, response.text
    message = response.json()["error"]["message"]
    for phrase in phrases:
        assert phrase in message, message


def test_a_table_cannot_take_another_tables_location(server, catalog_api, warehouse):  # noqa: F811
    catalog, location, _, files = victim_table(server, catalog_api, warehouse)
    # The review's attack: b.attacker at a.victim's location, then DROP ... PURGE.
    for attempt in (location, location + "/", location + "/data", location.rsplit("/", 1)[0]):
        assert_refused(create_table(catalog_api, warehouse, "b", "attacker", attempt), 400, "overlaps", "a.victim")
    # A table at a namespace's default location would own every table placed in it later.
    assert_refused(create_table(catalog_api, warehouse, "b", "attacker", f"s3://{warehouse}/b"), 400,
                   "namespace b")
    # Malformed places inside the warehouse: refused, not silently moved.
    for attempt in (f"s3://{warehouse}/b/x/../y", f"s3://{warehouse}/b//y", f"s3://{warehouse}/b/./y"):
        assert_refused(create_table(catalog_api, warehouse, "b", "attacker", attempt), 400, "not a place")
    # A stage-create finished by a commit is checked the same way.
    staged = catalog_api.ok("POST", f"/v1/{warehouse}/namespaces/b/tables",
                            {"name": "staged", "schema": SCHEMA, "location": f"s3://{warehouse}/b/staged-own",
                             "stage-create": True}).json()
    assert staged["metadata"]["location"] == f"s3://{warehouse}/b/staged-own"
    finish = {"requirements": [{"type": "assert-create"}],
              "updates": [{"action": "assign-uuid", "uuid": staged["metadata"]["table-uuid"]},
                          {"action": "upgrade-format-version", "format-version": 2},
                          {"action": "add-schema", "schema": SCHEMA, "last-column-id": 1},
                          {"action": "set-current-schema", "schema-id": -1},
                          {"action": "add-spec", "spec": {"spec-id": 0, "fields": []}},
                          {"action": "set-default-spec", "spec-id": -1},
                          {"action": "add-sort-order", "sort-order": {"order-id": 0, "fields": []}},
                          {"action": "set-default-sort-order", "sort-order-id": -1},
                          {"action": "set-location", "location": location}]}
    assert_refused(catalog_api.call("POST", f"/v1/{warehouse}/namespaces/b/tables/staged", finish), 400,
                   "overlaps", "a.victim")
    # A table of its own, moved onto the victim by set-location: refused.
    assert create_table(catalog_api, warehouse, "b", "attacker").status_code == 200
    move = {"requirements": [], "updates": [{"action": "set-location", "location": location}]}
    assert_refused(catalog_api.call("POST", f"/v1/{warehouse}/namespaces/b/tables/attacker", move), 400,
                   "overlaps", "a.victim")
    # A namespace whose default location a table owns cannot be made.
    assert create_table(catalog_api, warehouse, "b", "squatter", f"s3://{warehouse}/c").status_code == 200
    assert_refused(catalog_api.call("POST", f"/v1/{warehouse}/namespaces", {"namespace": ["c"]}), 400,
                   "namespace c", "b.squatter")
    catalog_api.ok("DELETE", f"/v1/{warehouse}/namespaces/b/tables/attacker", params={"purgeRequested": "true"})
    assert victim_rows(catalog) == [1, 2, 3, 4, 5]


def test_commits_name_only_places_the_table_owns(server, catalog_api, warehouse, s3):  # noqa: F811
    catalog, location, _, files = victim_table(server, catalog_api, warehouse)
    assert create_table(catalog_api, warehouse, "b", "attacker").status_code == 200
    attacker = catalog_api.ok("GET", f"/v1/{warehouse}/namespaces/b/tables/attacker").json()
    own = attacker["metadata"]["location"]
    victim = catalog.load_table("a.victim").metadata
    victim_list = victim.snapshots[-1].manifest_list
    path = f"/v1/{warehouse}/namespaces/b/tables/attacker"

    def add_snapshot(manifest_list: str, snapshot_id: int = 7):
        snapshot = {"snapshot-id": snapshot_id, "sequence-number": 1, "timestamp-ms": int(time.time() * 1000),
                    "manifest-list": manifest_list, "summary": {"operation": "append"}, "schema-id": 0}
        return catalog_api.call("POST", path, {"requirements": [], "updates": [
            {"action": "add-snapshot", "snapshot": snapshot},
            {"action": "set-snapshot-ref", "ref-name": "main", "type": "branch", "snapshot-id": snapshot_id}]})

    # The victim's manifest list, another bucket's, a path that climbs out: each refused by name.
    assert_refused(add_snapshot(victim_list), 400, "snapshot 7's manifest list", "outside table b.attacker")
    assert_refused(add_snapshot("s3://elsewhere/x/snap.avro"), 400, "outside")
    assert_refused(add_snapshot(own + "/metadata/../../../a/x.avro"), 400, "outside")
    for prop in ("write.data.path", "write.metadata.path", "write.object-storage.path"):
        update = {"requirements": [], "updates": [{"action": "set-properties", "updates": {prop: location + "/data"}}]}
        assert_refused(catalog_api.call("POST", path, update), 400, f"property {prop}", "outside")
    statistics = {"snapshot-id": 7, "statistics-path": f"{location}/metadata/stats.puffin", "file-size-in-bytes": 1,
                  "file-footer-size-in-bytes": 1, "blob-metadata": []}
    update = {"requirements": [], "updates": [{"action": "set-statistics", "statistics": statistics}]}
    refused = catalog_api.call("POST", path, update)
    assert refused.status_code == 400, refused.text
    # Inside its own location, all of it is fine.
    ok = {"requirements": [], "updates": [{"action": "set-properties",
                                           "updates": {"write.data.path": own + "/elsewhere-data"}}]}
    catalog_api.ok("POST", path, ok)
    # A table's own trimmed metadata files go; another's named in its metadata log do not (a
    # registered table's log names whatever its author wrote).
    victim_metadata_files = [entry.metadata_file for entry in victim.metadata_log] + [
        catalog.load_table("a.victim").metadata_location]
    forged = json.loads(s3.get_object(Bucket=warehouse, Key=split_s3_location(
        attacker["metadata-location"])[1])["Body"].read())
    forged["metadata-log"] = [{"timestamp-ms": 1, "metadata-file": f} for f in victim_metadata_files]
    forged["properties"] = {"write.metadata.delete-after-commit.enabled": "true",
                            "write.metadata.previous-versions-max": "1"}
    forged_key = split_s3_location(own)[1] + "/metadata/00000-forged.metadata.json"
    s3.put_object(Bucket=warehouse, Key=forged_key, Body=json.dumps(forged).encode())
    catalog_api.ok("DELETE", path)
    catalog_api.ok("POST", f"/v1/{warehouse}/namespaces/b/register",
                   {"name": "attacker", "metadata-location": f"s3://{warehouse}/{forged_key}"})
    for i in range(3):
        catalog_api.ok("POST", path, {"requirements": [], "updates": [
            {"action": "set-properties", "updates": {"n": str(i)}}]})
    for file in victim_metadata_files:
        bucket, key = split_s3_location(file)
        s3.head_object(Bucket=bucket, Key=key)  # still there
    assert victim_rows(catalog) == [1, 2, 3, 4, 5]


def test_register_takes_only_what_the_metadata_owns(server, catalog_api, warehouse, s3):  # noqa: F811
    catalog, location, metadata_location, _ = victim_table(server, catalog_api, warehouse)
    register = f"/v1/{warehouse}/namespaces/b/register"
    # The victim's own current file: its location is the victim's.
    assert_refused(catalog_api.call("POST", register, {"name": "copy", "metadata-location": metadata_location}),
                   400, "overlaps", "a.victim")
    # A copy of it in a place of the attacker's, pointing at the victim's location or files, or
    # carrying the victim's uuid.
    document = json.loads(s3.get_object(Bucket=warehouse, Key=split_s3_location(metadata_location)[1])["Body"].read())
    own = f"s3://{warehouse}/b/own-copy"

    def put_and_register(doc, name):
        key = f"b/own-copy/metadata/00000-{name}.metadata.json"
        s3.put_object(Bucket=warehouse, Key=key, Body=json.dumps(doc).encode())
        return catalog_api.call("POST", register, {"name": name, "metadata-location": f"s3://{warehouse}/{key}"})

    assert_refused(put_and_register(document, "pointing"), 400)  # its location is the victim's
    moved = dict(document, location=own)
    assert_refused(put_and_register(moved, "lists"), 400, "manifest list", "outside")  # the victim's manifest lists
    no_snapshots = dict(moved, snapshots=[], refs={}, **{"current-snapshot-id": -1, "snapshot-log": []})
    no_snapshots.pop("statistics", None)
    assert_refused(put_and_register(no_snapshots, "same_uuid"), 400, "uuid", "a.victim")
    other_bucket = dict(no_snapshots, location="s3://elsewhere/x", **{"table-uuid": "6f2e2a3c-0000-4000-8000-000000000001"})
    assert_refused(put_and_register(other_bucket, "elsewhere"), 400, "not a place inside warehouse")
    fine = dict(no_snapshots, **{"table-uuid": "6f2e2a3c-0000-4000-8000-000000000002"})
    assert put_and_register(fine, "fine").status_code == 200
    assert victim_rows(catalog) == [1, 2, 3, 4, 5]


def test_a_commit_adding_another_tables_files_is_refused(server, catalog_api, warehouse):  # noqa: F811
    """PyIceberg's add_files of the victim's data files into another table: the commit's new
    manifest adds files outside the table's location, and is refused naming one."""
    catalog, location, _, files = victim_table(server, catalog_api, warehouse)
    catalog = load_pyiceberg_catalog(server.endpoint, warehouse, **{"header.X-Iceberg-Access-Delegation": "none"})
    attacker = catalog.create_table("b.attacker", pa.schema([("id", pa.int64())]))
    with pytest.raises(Exception) as refused:
        attacker.add_files(files)
    assert "adds data file" in str(refused.value) and "outside table b.attacker" in str(refused.value), refused.value
    assert catalog.load_table("b.attacker").current_snapshot() is None
    assert victim_rows(catalog) == [1, 2, 3, 4, 5]


def copy_manifests_naming(s3, bucket: str, victim_list: str, own_prefix: str, fake_snapshot_id: int) -> str:
    """A manifest list in `own_prefix` whose one manifest, also copied there, names the victim's data
    files, and which says an earlier snapshot added it: what a commit cannot look into."""
    import fastavro

    listing = fastavro.reader(io.BytesIO(s3.get_object(Bucket=bucket, Key=split_s3_location(victim_list)[1])["Body"].read()))
    schema, metadata = listing.writer_schema, dict(listing.metadata)
    records = [r for r in listing if r["content"] == 0][:1]
    source = split_s3_location(records[0]["manifest_path"])[1]
    copied = f"{own_prefix}/metadata/copied-m0.avro"
    s3.copy_object(Bucket=bucket, Key=copied, CopySource={"Bucket": bucket, "Key": source})
    records[0]["manifest_path"] = f"s3://{bucket}/{copied}"
    records[0]["added_snapshot_id"] = fake_snapshot_id
    out = io.BytesIO()
    codec = metadata.pop("avro.codec", "null")
    for key in [k for k in metadata if k.startswith("avro.")]:
        metadata.pop(key)
    fastavro.writer(out, schema, records, codec=codec, metadata=metadata)
    list_key = f"{own_prefix}/metadata/snap-copied.avro"
    s3.put_object(Bucket=bucket, Key=list_key, Body=out.getvalue())
    return f"s3://{bucket}/{list_key}"


def attacker_naming_victims_files(server, api: CatalogApi, warehouse: str):
    """a.victim (victim_table), and b.attacker, whose current snapshot lists the victim's data files
    through a manifest copied into the attacker's own prefix, under a manifest list that says an
    earlier snapshot added it (a commit does not read manifests it did not add). Returns the
    victim's catalog, the victim's data files and the attacker's catalog path."""
    catalog, _, _, files = victim_table(server, api, warehouse)
    s3 = make_client(server.endpoint)
    assert create_table(api, warehouse, "b", "attacker").status_code == 200
    path = f"/v1/{warehouse}/namespaces/b/tables/attacker"
    own = api.ok("GET", path).json()["metadata"]["location"]
    victim_list = catalog.load_table("a.victim").metadata.snapshots[-1].manifest_list
    copied_list = copy_manifests_naming(s3, warehouse, victim_list, split_s3_location(own)[1], 999)
    snapshot = {"snapshot-id": 7, "sequence-number": 1, "timestamp-ms": int(time.time() * 1000),
                "manifest-list": copied_list, "summary": {"operation": "append"}, "schema-id": 0}
    api.ok("POST", path, {"requirements": [], "updates": [
        {"action": "add-snapshot", "snapshot": snapshot},
        {"action": "set-snapshot-ref", "ref-name": "main", "type": "branch", "snapshot-id": 7}]})
    return catalog, files, path


def test_a_tables_preview_reads_nothing_of_another_table(server, catalog_api, warehouse):  # noqa: F811
    """The preview reads rows with the server's authority, confined like every other server-side
    read: the attacker's table whose manifests name the victim's files shows none of the victim's
    rows, and its health summary's dry run of expiry deletes nothing."""
    catalog, files, path = attacker_naming_victims_files(server, catalog_api, warehouse)
    preview = catalog_api.call("GET", path + "/preview")
    assert preview.status_code == 403, preview.text
    assert "rows" not in preview.json() and "victim" in preview.json()["error"]["message"]
    assert catalog_api.call("GET", path + "/health").status_code == 200
    s3 = make_client(server.endpoint)
    for file in files:
        bucket, key = split_s3_location(file)
        s3.head_object(Bucket=bucket, Key=key)
    assert victim_rows(catalog) == [1, 2, 3, 4, 5]


def test_server_side_deletes_stay_inside_the_table(server, catalog_api, warehouse):  # noqa: F811
    """The attacker's table lists the victim's data files through a manifest it copied into its own
    prefix, under a manifest list that says an earlier snapshot added it (a commit does not read
    manifests it did not add); expiring the attacker's snapshots, removing its unreferenced files
    and purging it delete nothing of the victim's: every server-side read and delete for a table
    is confined to its prefix."""
    catalog, files, path = attacker_naming_victims_files(server, catalog_api, warehouse)
    s3 = make_client(server.endpoint)
    attacker_catalog = load_pyiceberg_catalog(server.endpoint, warehouse,
                                              **{"header.X-Iceberg-Access-Delegation": "none"})
    attacker = attacker_catalog.load_table("b.attacker")
    named = sorted(task.file.file_path for task in attacker.scan().plan_files())
    assert named and set(named) <= set(files)
    attacker.delete(delete_filter="id >= 0")  # the victim's files are no longer the attacker's
    with attacker_catalog.load_table("b.attacker").transaction() as tx:
        tx.set_properties({"history.expire.max-snapshot-age-ms": "1", "history.expire.min-snapshots-to-keep": "1"})
    time.sleep(0.01)
    maintenance = f"/v1/warehouses/{warehouse}/namespaces/b/tables/attacker/maintenance/{SNAPSHOTS}"
    started = catalog_api.ok("POST", maintenance + "/run", expect=(202,)).json()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        jobs = catalog_api.ok("GET", maintenance + "/status").json()["jobs"]
        job = next(j for j in jobs if j["jobId"] == started["jobId"])
        if job["status"] != "running":
            break
        time.sleep(0.2)
    assert job["snapshotsRemoved"] >= 1, job
    for file in files:
        bucket, key = split_s3_location(file)
        s3.head_object(Bucket=bucket, Key=key)
    catalog_api.ok("DELETE", path, params={"purgeRequested": "true"})
    for file in files:
        bucket, key = split_s3_location(file)
        s3.head_object(Bucket=bucket, Key=key)
    assert victim_rows(catalog) == [1, 2, 3, 4, 5]


def test_s3_cannot_replace_or_delete_a_tables_current_metadata(server, catalog_api, warehouse, s3):  # noqa: F811
    catalog, location, metadata_location, _ = victim_table(server, catalog_api, warehouse)
    bucket, key = split_s3_location(metadata_location)
    with pytest.raises(ClientError) as error:
        s3.put_object(Bucket=bucket, Key=key, Body=b'{"format-version": 2}')
    assert error.value.response["Error"]["Code"] == "AccessDenied"
    assert "current metadata file of a.victim" in error.value.response["Error"]["Message"]
    for attempt in (lambda: s3.delete_object(Bucket=bucket, Key=key),
                    lambda: s3.copy_object(Bucket=bucket, Key=key, CopySource={"Bucket": bucket, "Key": files_key(s3, bucket, location)})):
        with pytest.raises(ClientError) as error:
            attempt()
        assert error.value.response["Error"]["Code"] == "AccessDenied"
    deleted = s3.delete_objects(Bucket=bucket, Delete={"Objects": [{"Key": key}]})
    assert deleted["Errors"][0]["Code"] == "AccessDenied", deleted
    # Vended credentials (write access to the table's prefix) cannot either.
    loaded = catalog_api.call("GET", f"/v1/{warehouse}/namespaces/a/tables/victim",
                              headers={"X-Iceberg-Access-Delegation": "vended-credentials"}).json()
    config = loaded["config"]
    vended = boto3.client("s3", endpoint_url=server.endpoint, aws_access_key_id=config["s3.access-key-id"],
                          aws_secret_access_key=config["s3.secret-access-key"],
                          aws_session_token=config["s3.session-token"], region_name=REGION,
                          config=Config(s3={"addressing_style": "path"}))
    with pytest.raises(ClientError) as error:
        vended.put_object(Bucket=bucket, Key=key, Body=b"{}")
    assert error.value.response["Error"]["Code"] == "AccessDenied"
    assert "current metadata file" in error.value.response["Error"]["Message"]  # not a policy's refusal
    # The previous metadata file is no longer current: it may go.
    previous = catalog.load_table("a.victim").metadata.metadata_log[-1].metadata_file
    s3.delete_object(Bucket=bucket, Key=split_s3_location(previous)[1])
    assert victim_rows(catalog) == [1, 2, 3, 4, 5]


def files_key(s3, bucket: str, location: str) -> str:
    prefix = split_s3_location(location)[1] + "/data/"
    return s3.list_objects_v2(Bucket=bucket, Prefix=prefix)["Contents"][0]["Key"]


def test_adopting_and_removing_a_bucket_needs_s3_rights_on_it(server, catalog_api, s3, bucket_name):  # noqa: F811
    admin = SeracAdmin(server.endpoint)
    tables_only = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": ["s3tables:*"], "Resource": ["*"]}]}
    user = bucket_name[:20] + "-tables"
    admin.put_policy(user + "-p", tables_only)
    access, secret = admin.create_user_with_key(user, [user + "-p"])
    api = CatalogApi(server.endpoint, access_key=access, secret_key=secret)
    s3.create_bucket(Bucket=bucket_name)
    s3.put_object(Bucket=bucket_name, Key="precious", Body=b"not the catalog's")
    refused = api.call("POST", "/v1/warehouses", {"name": bucket_name, "upgrade-existing": True})
    assert refused.status_code == 403 and "s3:" in refused.json()["error"]["message"], refused.text
    # Root adopts it; the tables-only user may not remove the bucket with what it holds.
    catalog_api.ok("POST", "/v1/warehouses", {"name": bucket_name, "upgrade-existing": True})
    refused = api.call("DELETE", f"/v1/warehouses/{bucket_name}", params={"force": "true"})
    assert refused.status_code == 403, refused.text
    assert s3.get_object(Bucket=bucket_name, Key="precious")["Body"].read() == b"not the catalog's"
    # Giving up the warehouse but keeping the bucket is the catalog's own business.
    api.ok("DELETE", f"/v1/warehouses/{bucket_name}", params={"force": "true", "preserve-bucket": "true"})
    assert s3.get_object(Bucket=bucket_name, Key="precious")["Body"].read() == b"not the catalog's"
    # A new warehouse the user makes is a new, empty bucket: no S3 rights needed to make it.
    api.ok("POST", "/v1/warehouses", {"name": bucket_name + "-new"})
