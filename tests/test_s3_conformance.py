"""S3 conformance: the cases of the AWS conformance suites (ceph s3-tests, MinIO mint) that the other
S3 test files do not already cover, one or more per operation serac implements, each error case
checked by HTTP status and S3 error code. Operations and subresources serac does not offer must
answer 501 NotImplemented and change nothing.

Operations covered here and elsewhere: ListBuckets, CreateBucket, HeadBucket, DeleteBucket,
GetBucketLocation, GetBucketVersioning, GetBucketAcl, ListObjects, ListObjectsV2,
ListMultipartUploads, DeleteObjects, PutObject, CopyObject, GetObject, HeadObject, DeleteObject,
GetObjectAcl, Get/Put/DeleteObjectTagging, CreateMultipartUpload, UploadPart, UploadPartCopy,
CompleteMultipartUpload, AbortMultipartUpload, ListParts; presigned URLs and checksums."""

import base64
import datetime
import gzip
import hashlib
import os
import urllib.parse
import xml.etree.ElementTree as ET

import pytest
import requests

from s3util import (ACCESS_KEY, REGION, SeracAdmin, Signer, assert_healthy, check_raw_error, crc32_b64,
                    expect_s3_error, make_client, md5_hex, unique_bucket_name)

MiB = 1024 * 1024
S3_NS = "{http://s3.amazonaws.com/doc/2006-03-01/}"
ZERO_ETAG = '"00000000000000000000000000000000"'


def body_of(s3, bucket, key, **kwargs) -> bytes:
    return s3.get_object(Bucket=bucket, Key=key, **kwargs)["Body"].read()


def keys_of(s3, bucket, prefix="") -> list[str]:
    keys = []
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
        keys += [o["Key"] for o in page.get("Contents", [])]
    return keys


def md5_b64(data: bytes) -> str:
    return base64.b64encode(hashlib.md5(data).digest()).decode()


def status_of(response) -> int:
    return response["ResponseMetadata"]["HTTPStatusCode"]


def multipart_etag(parts: list[bytes]) -> str:
    digests = b"".join(hashlib.md5(p).digest() for p in parts)
    return f'"{hashlib.md5(digests).hexdigest()}-{len(parts)}"'


def upload_multipart(s3, bucket, key, parts: list[bytes], **create_kwargs) -> str:
    upload_id = s3.create_multipart_upload(Bucket=bucket, Key=key, **create_kwargs)["UploadId"]
    listed = []
    for number, data in enumerate(parts, start=1):
        etag = s3.upload_part(Bucket=bucket, Key=key, UploadId=upload_id, PartNumber=number, Body=data)["ETag"]
        listed.append({"PartNumber": number, "ETag": etag})
    s3.complete_multipart_upload(Bucket=bucket, Key=key, UploadId=upload_id, MultipartUpload={"Parts": listed})
    return upload_id


def xml_root(response: requests.Response) -> ET.Element:
    assert response.status_code == 200, response.text
    return ET.fromstring(response.content)


# --- Buckets ------------------------------------------------------------------------------------------


def test_create_bucket_with_the_server_region(s3, bucket_name):
    # AWS itself wants no constraint for us-east-1; MinIO and most stores accept the region named.
    s3.create_bucket(Bucket=bucket_name, CreateBucketConfiguration={"LocationConstraint": REGION})
    s3.head_bucket(Bucket=bucket_name)
    assert s3.get_bucket_location(Bucket=bucket_name).get("LocationConstraint") in (None, "", REGION)


def test_create_bucket_in_another_region_is_refused(s3, bucket_name):
    # The bucket would claim a region the server does not serve; AWS refuses a constraint that
    # does not match the endpoint's region.
    with expect_s3_error(400, "IllegalLocationConstraintException"):
        s3.create_bucket(Bucket=bucket_name, CreateBucketConfiguration={"LocationConstraint": "eu-west-1"})
    with expect_s3_error(404, "404"):
        s3.head_bucket(Bucket=bucket_name)


def test_create_bucket_malformed_configuration(server, s3, bucket_name):
    response = Signer(server.endpoint).request("PUT", f"/{bucket_name}", body=b"<CreateBucketConfiguration><Loc")
    check_raw_error(response, 400, "MalformedXML")
    with expect_s3_error(404, "404"):
        s3.head_bucket(Bucket=bucket_name)


@pytest.mark.parametrize("name", ["xn--punycode", "sthree-bucket", "name-s3alias", "name--ol-s3", "a_b",
                                  "Bucket", "abc..def", "10.0.0.1"])
def test_reserved_and_invalid_bucket_names(s3, name):
    with expect_s3_error(400, "InvalidBucketName"):
        s3.create_bucket(Bucket=name)


def test_create_bucket_returns_location(s3, bucket_name):
    created = s3.create_bucket(Bucket=bucket_name)
    assert created["Location"] == f"/{bucket_name}"


def test_list_buckets_owner_and_creation_date(s3, bucket):
    listed = s3.list_buckets()
    assert listed["Owner"]["ID"] == ACCESS_KEY
    entry = next(b for b in listed["Buckets"] if b["Name"] == bucket)
    age = datetime.datetime.now(datetime.timezone.utc) - entry["CreationDate"]
    assert datetime.timedelta(seconds=-5) < age < datetime.timedelta(minutes=10)


def test_get_bucket_acl(s3, bucket):
    acl = s3.get_bucket_acl(Bucket=bucket)
    assert acl["Owner"]["ID"] == ACCESS_KEY
    assert [(g["Grantee"]["ID"], g["Permission"]) for g in acl["Grants"]] == [(ACCESS_KEY, "FULL_CONTROL")]


def test_get_bucket_acl_missing_bucket(s3, bucket_name):
    with expect_s3_error(404, "NoSuchBucket"):
        s3.get_bucket_acl(Bucket=bucket_name)


def test_get_bucket_versioning_missing_bucket(s3, bucket_name):
    with expect_s3_error(404, "NoSuchBucket"):
        s3.get_bucket_versioning(Bucket=bucket_name)


def test_head_bucket_after_objects_and_delete_with_object_gone(s3, bucket):
    s3.put_object(Bucket=bucket, Key="a/b", Body=b"x")
    assert status_of(s3.head_bucket(Bucket=bucket)) == 200
    with expect_s3_error(409, "BucketNotEmpty"):
        s3.delete_bucket(Bucket=bucket)
    s3.delete_objects(Bucket=bucket, Delete={"Objects": [{"Key": "a/b"}]})
    assert status_of(s3.delete_bucket(Bucket=bucket)) == 204


# What S3 operations serac does not offer answer: 501 NotImplemented with an XML body, and nothing
# changes (a DELETE ?policy must never delete the bucket).
UNSUPPORTED_BUCKET_CALLS = [
    ("get_bucket_policy", {}),
    ("put_bucket_policy", {"Policy": '{"Version":"2012-10-17","Statement":[]}'}),
    ("delete_bucket_policy", {}),
    ("get_bucket_cors", {}),
    ("put_bucket_cors", {"CORSConfiguration": {"CORSRules": [{"AllowedMethods": ["GET"], "AllowedOrigins": ["*"]}]}}),
    ("delete_bucket_cors", {}),
    ("get_bucket_lifecycle_configuration", {}),
    ("delete_bucket_lifecycle", {}),
    ("get_bucket_website", {}),
    ("delete_bucket_website", {}),
    ("get_bucket_tagging", {}),
    ("put_bucket_tagging", {"Tagging": {"TagSet": [{"Key": "k", "Value": "v"}]}}),
    ("delete_bucket_tagging", {}),
    ("get_bucket_encryption", {}),
    ("delete_bucket_encryption", {}),
    ("get_bucket_logging", {}),
    ("get_bucket_notification_configuration", {}),
    ("get_bucket_replication", {}),
    ("get_object_lock_configuration", {}),
    ("get_public_access_block", {}),
    ("get_bucket_ownership_controls", {}),
    ("get_bucket_accelerate_configuration", {}),
    ("get_bucket_request_payment", {}),
    ("put_bucket_versioning", {"VersioningConfiguration": {"Status": "Enabled"}}),
    ("list_object_versions", {}),
    ("put_bucket_acl", {"ACL": "public-read"}),
]


@pytest.mark.parametrize("method,kwargs", UNSUPPORTED_BUCKET_CALLS, ids=[c[0] for c in UNSUPPORTED_BUCKET_CALLS])
def test_unsupported_bucket_operations(server, s3, bucket, method, kwargs):
    s3.put_object(Bucket=bucket, Key="keep", Body=b"still here")
    with expect_s3_error(501, "NotImplemented"):
        getattr(s3, method)(Bucket=bucket, **kwargs)
    assert body_of(s3, bucket, "keep") == b"still here"
    assert s3.get_bucket_versioning(Bucket=bucket).get("Status") in (None, "")
    assert_healthy(server)


UNSUPPORTED_OBJECT_CALLS = [
    ("put_object_acl", {"ACL": "public-read"}),
    ("get_object_retention", {}),
    ("put_object_retention", {"Retention": {"Mode": "GOVERNANCE", "RetainUntilDate": datetime.datetime(2040, 1, 1)}}),
    ("get_object_legal_hold", {}),
    ("get_object_attributes", {"ObjectAttributes": ["ETag"]}),
    ("restore_object", {"RestoreRequest": {"Days": 1}}),
]


@pytest.mark.parametrize("method,kwargs", UNSUPPORTED_OBJECT_CALLS, ids=[c[0] for c in UNSUPPORTED_OBJECT_CALLS])
def test_unsupported_object_operations(server, s3, bucket, method, kwargs):
    put = s3.put_object(Bucket=bucket, Key="obj", Body=b"unchanged")
    with expect_s3_error(501, "NotImplemented"):
        getattr(s3, method)(Bucket=bucket, Key="obj", **kwargs)
    got = s3.get_object(Bucket=bucket, Key="obj")
    assert (got["Body"].read(), got["ETag"]) == (b"unchanged", put["ETag"])
    assert_healthy(server)


def test_not_implemented_is_an_xml_error(server, bucket):
    response = Signer(server.endpoint).request("GET", f"/{bucket}", query=[("cors", "")])
    check_raw_error(response, 501, "NotImplemented")
    assert response.headers["Content-Type"] == "application/xml"


def test_unknown_service_operation(server):
    response = Signer(server.endpoint).request("DELETE", "/")
    check_raw_error(response, 501, "NotImplemented")


# --- Objects: put, get, head, delete ---------------------------------------------------------------------


def test_user_metadata_names_are_lower_case(s3, bucket):
    s3.put_object(Bucket=bucket, Key="m", Body=b"x", Metadata={"Mixed-Case": "Value With Case"})
    assert s3.head_object(Bucket=bucket, Key="m")["Metadata"] == {"mixed-case": "Value With Case"}


def test_metadata_too_large(s3, bucket):
    with expect_s3_error(400, "MetadataTooLarge"):
        s3.put_object(Bucket=bucket, Key="big-meta", Body=b"x", Metadata={"m": "v" * 2100})
    with expect_s3_error(404, "NoSuchKey"):
        s3.get_object(Bucket=bucket, Key="big-meta")
    # Just under the limit is fine.
    s3.put_object(Bucket=bucket, Key="ok-meta", Body=b"x", Metadata={"m": "v" * 2000})
    assert s3.head_object(Bucket=bucket, Key="ok-meta")["Metadata"] == {"m": "v" * 2000}


def test_content_encoding_gzip_is_stored_not_decoded(s3, bucket):
    raw = gzip.compress(b"compressed text " * 1000)
    s3.put_object(Bucket=bucket, Key="z.txt.gz", Body=raw, ContentEncoding="gzip", ContentType="text/plain")
    got = s3.get_object(Bucket=bucket, Key="z.txt.gz")
    assert got["ContentEncoding"] == "gzip"
    assert got["ContentLength"] == len(raw)
    assert got["Body"].read() == raw


def test_storage_class_standard(s3, bucket):
    s3.put_object(Bucket=bucket, Key="std", Body=b"x", StorageClass="STANDARD")
    assert s3.head_object(Bucket=bucket, Key="std").get("StorageClass") in (None, "STANDARD")
    assert s3.list_objects_v2(Bucket=bucket)["Contents"][0]["StorageClass"] == "STANDARD"
    assert s3.list_objects(Bucket=bucket)["Contents"][0]["StorageClass"] == "STANDARD"


def test_invalid_storage_class(s3, bucket):
    with expect_s3_error(400, "InvalidStorageClass"):
        s3.put_object(Bucket=bucket, Key="odd", Body=b"x", StorageClass="NOT_A_CLASS")
    with expect_s3_error(400, "InvalidStorageClass"):
        s3.create_multipart_upload(Bucket=bucket, Key="odd", StorageClass="NOT_A_CLASS")
    assert keys_of(s3, bucket) == []


def test_head_object_missing_bucket(s3, bucket_name):
    with expect_s3_error(404, "404"):
        s3.head_object(Bucket=bucket_name, Key="k")


def test_delete_object_missing_bucket(s3, bucket_name):
    with expect_s3_error(404, "NoSuchBucket"):
        s3.delete_object(Bucket=bucket_name, Key="k")


def test_delete_object_if_match(s3, bucket):
    put = s3.put_object(Bucket=bucket, Key="d", Body=b"x")
    with expect_s3_error(412, "PreconditionFailed"):
        s3.delete_object(Bucket=bucket, Key="d", IfMatch=ZERO_ETAG)
    assert body_of(s3, bucket, "d") == b"x"
    assert status_of(s3.delete_object(Bucket=bucket, Key="d", IfMatch=put["ETag"])) == 204
    assert keys_of(s3, bucket) == []


# Buckets are unversioned: the only version of an object is "null". Any other version id names
# nothing, and must never reach (or delete) the live object.
def test_version_null_is_the_object(s3, bucket):
    s3.put_object(Bucket=bucket, Key="v", Body=b"live")
    assert body_of(s3, bucket, "v", VersionId="null") == b"live"
    assert s3.head_object(Bucket=bucket, Key="v", VersionId="null")["ContentLength"] == 4
    assert status_of(s3.delete_object(Bucket=bucket, Key="v", VersionId="null")) == 204
    assert keys_of(s3, bucket) == []


def test_other_versions_do_not_exist(s3, bucket):
    s3.put_object(Bucket=bucket, Key="v", Body=b"live")
    version = "3HL4kqtJlcpXroDTDmJ.rmSpXd3dIbrHY"
    with expect_s3_error(400, "InvalidArgument"):
        s3.delete_object(Bucket=bucket, Key="v", VersionId=version)
    with expect_s3_error(400, "InvalidArgument"):
        s3.get_object(Bucket=bucket, Key="v", VersionId=version)
    with expect_s3_error(400, "400"):
        s3.head_object(Bucket=bucket, Key="v", VersionId=version)
    with expect_s3_error(400, "InvalidArgument"):
        s3.get_object_tagging(Bucket=bucket, Key="v", VersionId=version)
    response = s3.delete_objects(Bucket=bucket, Delete={"Objects": [{"Key": "v", "VersionId": version}]})
    assert [(e["Key"], e["Code"]) for e in response["Errors"]] == [("v", "InvalidArgument")]
    assert response.get("Deleted", []) == []
    assert body_of(s3, bucket, "v") == b"live"


def test_xml_special_characters_in_keys(s3, bucket):
    keys = ["a&b", "c<d>e", "quote\"'", "amp;&amp;"]
    for key in keys:
        s3.put_object(Bucket=bucket, Key=key, Body=key.encode())
    raw = s3.list_objects_v2(Bucket=bucket, EncodingType="url")["Contents"]
    assert sorted(urllib.parse.unquote(o["Key"]) for o in raw) == sorted(keys)
    assert sorted(keys_of(s3, bucket)) == sorted(keys)
    deleted = s3.delete_objects(Bucket=bucket, Delete={"Objects": [{"Key": k} for k in keys]})
    assert sorted(d["Key"] for d in deleted["Deleted"]) == sorted(keys)
    assert keys_of(s3, bucket) == []


# --- GetObject: ranges, part numbers, conditions ---------------------------------------------------------


@pytest.mark.parametrize("range_header", ["bytes=abc", "bytes=5-2", "bytes=0-1,4-5", "items=0-1", "bytes="])
def test_ignored_ranges_serve_the_whole_object(s3, bucket, range_header):
    s3.put_object(Bucket=bucket, Key="r", Body=b"0123456789")
    got = s3.get_object(Bucket=bucket, Key="r", Range=range_header)
    assert status_of(got) == 200
    assert got["Body"].read() == b"0123456789"
    assert "ContentRange" not in got


def test_suffix_range_of_zero_bytes(s3, bucket):
    s3.put_object(Bucket=bucket, Key="r", Body=b"0123456789")
    with expect_s3_error(416, "InvalidRange") as caught:
        s3.get_object(Bucket=bucket, Key="r", Range="bytes=-0")
    assert caught.error.response["ResponseMetadata"]["HTTPHeaders"].get("content-range") == "bytes */10"


def test_range_with_conditions(s3, bucket):
    put = s3.put_object(Bucket=bucket, Key="r", Body=b"0123456789")
    got = s3.get_object(Bucket=bucket, Key="r", Range="bytes=2-3", IfMatch=put["ETag"])
    assert (status_of(got), got["Body"].read()) == (206, b"23")
    with expect_s3_error(412, "PreconditionFailed"):
        s3.get_object(Bucket=bucket, Key="r", Range="bytes=2-3", IfMatch=ZERO_ETAG)


def test_if_none_match_with_a_list_and_weak_etags(s3, bucket):
    put = s3.put_object(Bucket=bucket, Key="c", Body=b"x")
    with expect_s3_error(304, "304"):
        s3.get_object(Bucket=bucket, Key="c", IfNoneMatch=f'{ZERO_ETAG}, {put["ETag"]}')
    with expect_s3_error(304, "304"):
        s3.get_object(Bucket=bucket, Key="c", IfNoneMatch="*")
    assert body_of(s3, bucket, "c", IfMatch=f'{ZERO_ETAG}, {put["ETag"]}') == b"x"
    assert body_of(s3, bucket, "c", IfMatch="*") == b"x"


def test_not_modified_keeps_validators(s3, bucket):
    put = s3.put_object(Bucket=bucket, Key="c", Body=b"x")
    with expect_s3_error(304, "304") as caught:
        s3.get_object(Bucket=bucket, Key="c", IfNoneMatch=put["ETag"])
    headers = caught.error.response["ResponseMetadata"]["HTTPHeaders"]
    assert headers["etag"] == put["ETag"]
    assert headers.get("last-modified")


def test_conditional_head_by_date(s3, bucket):
    s3.put_object(Bucket=bucket, Key="c", Body=b"x")
    modified = s3.head_object(Bucket=bucket, Key="c")["LastModified"]
    with expect_s3_error(412, "412"):
        s3.head_object(Bucket=bucket, Key="c", IfUnmodifiedSince=modified - datetime.timedelta(days=1))
    with expect_s3_error(304, "304"):
        s3.head_object(Bucket=bucket, Key="c", IfModifiedSince=modified + datetime.timedelta(days=1))


def test_put_if_none_match_other_than_star(s3, bucket):
    # Writes accept only If-None-Match: *; an ETag there is a feature S3 does not offer.
    with expect_s3_error(501, "NotImplemented"):
        s3.put_object(Bucket=bucket, Key="k", Body=b"x", IfNoneMatch=ZERO_ETAG)
    assert keys_of(s3, bucket) == []


def test_conditional_get_missing_key(s3, bucket):
    with expect_s3_error(404, "NoSuchKey"):
        s3.get_object(Bucket=bucket, Key="absent", IfMatch=ZERO_ETAG)


def test_get_part_number(s3, bucket):
    parts = [os.urandom(5 * MiB), b"second part"]
    upload_multipart(s3, bucket, "mp", parts)
    first = s3.get_object(Bucket=bucket, Key="mp", PartNumber=1)
    assert status_of(first) == 206
    assert first["PartsCount"] == 2
    assert first["ContentRange"] == f"bytes 0-{5 * MiB - 1}/{5 * MiB + len(parts[1])}"
    assert first["Body"].read() == parts[0]
    second = s3.head_object(Bucket=bucket, Key="mp", PartNumber=2)
    assert second["ContentLength"] == len(parts[1])
    assert second["ETag"] == multipart_etag(parts)
    assert body_of(s3, bucket, "mp", PartNumber=2) == parts[1]
    with expect_s3_error(416, "InvalidPartNumber"):
        s3.get_object(Bucket=bucket, Key="mp", PartNumber=3)
    with expect_s3_error(400, "InvalidRequest"):
        s3.get_object(Bucket=bucket, Key="mp", PartNumber=1, Range="bytes=0-1")


def test_get_part_number_of_a_simple_object(s3, bucket):
    s3.put_object(Bucket=bucket, Key="simple", Body=b"whole")
    got = s3.get_object(Bucket=bucket, Key="simple", PartNumber=1)
    assert got["Body"].read() == b"whole"
    with expect_s3_error(416, "InvalidPartNumber"):
        s3.get_object(Bucket=bucket, Key="simple", PartNumber=2)


def test_get_part_number_out_of_bounds(server, s3, bucket):
    s3.put_object(Bucket=bucket, Key="simple", Body=b"whole")
    signer = Signer(server.endpoint)
    for bad in ["0", "10001", "x"]:
        check_raw_error(signer.request("GET", f"/{bucket}/simple", query=[("partNumber", bad)]), 400,
                        "InvalidArgument")


def test_get_object_acl(s3, bucket):
    s3.put_object(Bucket=bucket, Key="acl", Body=b"x")
    acl = s3.get_object_acl(Bucket=bucket, Key="acl")
    assert [(g["Grantee"]["ID"], g["Permission"]) for g in acl["Grants"]] == [(ACCESS_KEY, "FULL_CONTROL")]
    with expect_s3_error(404, "NoSuchKey"):
        s3.get_object_acl(Bucket=bucket, Key="absent")


# --- Tagging ------------------------------------------------------------------------------------------------


def tags_of(s3, bucket, key) -> dict:
    return {t["Key"]: t["Value"] for t in s3.get_object_tagging(Bucket=bucket, Key=key)["TagSet"]}


def test_object_tagging_round_trip(s3, bucket):
    s3.put_object(Bucket=bucket, Key="t", Body=b"x", Tagging="a=1&b=two%20words")
    assert tags_of(s3, bucket, "t") == {"a": "1", "b": "two words"}
    assert s3.head_object(Bucket=bucket, Key="t")["ResponseMetadata"]["HTTPHeaders"]["x-amz-tagging-count"] == "2"
    s3.put_object_tagging(Bucket=bucket, Key="t", Tagging={"TagSet": [{"Key": "c", "Value": "3"}]})
    assert tags_of(s3, bucket, "t") == {"c": "3"}
    assert body_of(s3, bucket, "t") == b"x"  # tags change, bytes stay
    assert status_of(s3.delete_object_tagging(Bucket=bucket, Key="t")) == 204
    assert tags_of(s3, bucket, "t") == {}
    assert "x-amz-tagging-count" not in s3.head_object(Bucket=bucket, Key="t")["ResponseMetadata"]["HTTPHeaders"]


def test_object_tagging_missing_key_and_bucket(s3, bucket, bucket_name):
    with expect_s3_error(404, "NoSuchKey"):
        s3.get_object_tagging(Bucket=bucket, Key="absent")
    with expect_s3_error(404, "NoSuchKey"):
        s3.put_object_tagging(Bucket=bucket, Key="absent", Tagging={"TagSet": [{"Key": "k", "Value": "v"}]})
    with expect_s3_error(404, "NoSuchKey"):
        s3.delete_object_tagging(Bucket=bucket, Key="absent")
    with expect_s3_error(404, "NoSuchBucket"):
        s3.get_object_tagging(Bucket=bucket_name, Key="k")
    assert keys_of(s3, bucket) == []


@pytest.mark.parametrize("tag_set", [
    [{"Key": f"k{i}", "Value": "v"} for i in range(11)],      # more than 10 tags
    [{"Key": "k" * 129, "Value": "v"}],                         # key longer than 128
    [{"Key": "k", "Value": "v" * 257}],                         # value longer than 256
    [{"Key": "dup", "Value": "1"}, {"Key": "dup", "Value": "2"}],
])
def test_invalid_tags(s3, bucket, tag_set):
    s3.put_object(Bucket=bucket, Key="t", Body=b"x", Tagging="keep=me")
    with expect_s3_error(400, "InvalidTag"):
        s3.put_object_tagging(Bucket=bucket, Key="t", Tagging={"TagSet": tag_set})
    assert tags_of(s3, bucket, "t") == {"keep": "me"}


def test_invalid_tagging_header_on_put(s3, bucket):
    with expect_s3_error(400, "InvalidTag"):
        s3.put_object(Bucket=bucket, Key="t", Body=b"x", Tagging="&".join(f"k{i}=v" for i in range(11)))
    assert keys_of(s3, bucket) == []


def test_put_tagging_malformed_xml(server, s3, bucket):
    s3.put_object(Bucket=bucket, Key="t", Body=b"x")
    response = Signer(server.endpoint).request("PUT", f"/{bucket}/t", query=[("tagging", "")],
                                               body=b"<Tagging><TagSet><Tag><Key>k</Key>")
    check_raw_error(response, 400, "MalformedXML")


def test_multipart_upload_keeps_tags_and_headers(s3, bucket):
    upload_multipart(s3, bucket, "mp", [b"only part"], Tagging="kind=mp", CacheControl="no-cache",
                     ContentDisposition="inline", Metadata={"m": "1"})
    head = s3.head_object(Bucket=bucket, Key="mp")
    assert (head["CacheControl"], head["ContentDisposition"], head["Metadata"]) == ("no-cache", "inline", {"m": "1"})
    assert tags_of(s3, bucket, "mp") == {"kind": "mp"}


# --- CopyObject ------------------------------------------------------------------------------------------------


def test_copy_onto_itself_without_changes_is_refused(s3, bucket):
    s3.put_object(Bucket=bucket, Key="self", Body=b"x")
    with expect_s3_error(400, "InvalidRequest"):
        s3.copy_object(Bucket=bucket, Key="self", CopySource={"Bucket": bucket, "Key": "self"})


def test_copy_invalid_metadata_directive(s3, bucket):
    s3.put_object(Bucket=bucket, Key="src", Body=b"x")
    with expect_s3_error(400, "InvalidArgument"):
        s3.copy_object(Bucket=bucket, Key="dst", CopySource={"Bucket": bucket, "Key": "src"},
                       MetadataDirective="MERGE")
    assert keys_of(s3, bucket) == ["src"]


def test_copy_keeps_standard_headers_and_tags_by_default(s3, bucket):
    expires = datetime.datetime(2032, 1, 2, 3, 4, 5, tzinfo=datetime.timezone.utc)
    s3.put_object(Bucket=bucket, Key="src", Body=b"payload", ContentType="text/x-src", ContentEncoding="gzip",
                  CacheControl="max-age=5", ContentDisposition="attachment", ContentLanguage="en", Expires=expires,
                  Metadata={"a": "1"}, Tagging="t=1")
    s3.copy_object(Bucket=bucket, Key="dst", CopySource={"Bucket": bucket, "Key": "src"})
    head = s3.head_object(Bucket=bucket, Key="dst")
    assert (head["ContentType"], head["ContentEncoding"], head["CacheControl"], head["ContentDisposition"],
            head["ContentLanguage"], head["Metadata"]) == ("text/x-src", "gzip", "max-age=5", "attachment", "en",
                                                           {"a": "1"})
    assert head["ResponseMetadata"]["HTTPHeaders"]["expires"] == "Fri, 02 Jan 2032 03:04:05 GMT"
    assert tags_of(s3, bucket, "dst") == {"t": "1"}


def test_copy_replace_drops_old_headers(s3, bucket):
    s3.put_object(Bucket=bucket, Key="src", Body=b"payload", CacheControl="max-age=5", Metadata={"a": "1"})
    s3.copy_object(Bucket=bucket, Key="dst", CopySource={"Bucket": bucket, "Key": "src"},
                   MetadataDirective="REPLACE", ContentDisposition="inline")
    head = s3.head_object(Bucket=bucket, Key="dst")
    assert head["Metadata"] == {}
    assert "CacheControl" not in head
    assert head["ContentDisposition"] == "inline"


def test_copy_tagging_directive(s3, bucket):
    s3.put_object(Bucket=bucket, Key="src", Body=b"x", Tagging="old=1")
    s3.copy_object(Bucket=bucket, Key="replaced", CopySource={"Bucket": bucket, "Key": "src"},
                   TaggingDirective="REPLACE", Tagging="new=2")
    assert tags_of(s3, bucket, "replaced") == {"new": "2"}
    s3.copy_object(Bucket=bucket, Key="copied", CopySource={"Bucket": bucket, "Key": "src"}, TaggingDirective="COPY",
                   Tagging="ignored=3")
    assert tags_of(s3, bucket, "copied") == {"old": "1"}


def test_copy_source_date_conditions(s3, bucket):
    s3.put_object(Bucket=bucket, Key="src", Body=b"dated")
    modified = s3.head_object(Bucket=bucket, Key="src")["LastModified"]
    past, future = modified - datetime.timedelta(days=1), modified + datetime.timedelta(days=1)
    source = {"Bucket": bucket, "Key": "src"}
    with expect_s3_error(412, "PreconditionFailed"):
        s3.copy_object(Bucket=bucket, Key="a", CopySource=source, CopySourceIfModifiedSince=future)
    with expect_s3_error(412, "PreconditionFailed"):
        s3.copy_object(Bucket=bucket, Key="b", CopySource=source, CopySourceIfUnmodifiedSince=past)
    s3.copy_object(Bucket=bucket, Key="c", CopySource=source, CopySourceIfModifiedSince=past)
    s3.copy_object(Bucket=bucket, Key="d", CopySource=source, CopySourceIfUnmodifiedSince=future)
    assert keys_of(s3, bucket) == ["c", "d", "src"]


def test_copy_missing_buckets(s3, bucket, bucket_name):
    s3.put_object(Bucket=bucket, Key="src", Body=b"x")
    with expect_s3_error(404, "NoSuchBucket"):
        s3.copy_object(Bucket=bucket, Key="dst", CopySource={"Bucket": bucket_name, "Key": "src"})
    with expect_s3_error(404, "NoSuchBucket"):
        s3.copy_object(Bucket=bucket_name, Key="dst", CopySource={"Bucket": bucket, "Key": "src"})


def test_copy_malformed_source(s3, bucket):
    with expect_s3_error(400, "InvalidArgument"):
        s3.copy_object(Bucket=bucket, Key="dst", CopySource=bucket)
    with expect_s3_error(400, "InvalidArgument"):
        s3.copy_object(Bucket=bucket, Key="dst", CopySource={"Bucket": bucket, "Key": "src", "VersionId": "v123"})


def test_copy_destination_conditions(s3, bucket):
    s3.put_object(Bucket=bucket, Key="src", Body=b"new")
    existing = s3.put_object(Bucket=bucket, Key="dst", Body=b"old")
    source = {"Bucket": bucket, "Key": "src"}
    with expect_s3_error(412, "PreconditionFailed"):
        s3.copy_object(Bucket=bucket, Key="dst", CopySource=source, IfNoneMatch="*")
    with expect_s3_error(412, "PreconditionFailed"):
        s3.copy_object(Bucket=bucket, Key="dst", CopySource=source, IfMatch=ZERO_ETAG)
    assert body_of(s3, bucket, "dst") == b"old"
    s3.copy_object(Bucket=bucket, Key="dst", CopySource=source, IfMatch=existing["ETag"])
    assert body_of(s3, bucket, "dst") == b"new"


@pytest.mark.parametrize("size", [0, 300_000])
def test_copy_keeps_bytes_and_checksum(s3, bucket, size):
    data = os.urandom(size)
    s3.put_object(Bucket=bucket, Key="src", Body=data, ChecksumAlgorithm="CRC32")
    copied = s3.copy_object(Bucket=bucket, Key="dst", CopySource={"Bucket": bucket, "Key": "src"})
    assert copied["CopyObjectResult"]["ETag"] == f'"{md5_hex(data)}"'
    got = s3.get_object(Bucket=bucket, Key="dst", ChecksumMode="ENABLED")
    assert got["Body"].read() == data
    assert got["ChecksumCRC32"] == crc32_b64(data)


def test_copy_of_a_multipart_object(s3, bucket):
    parts = [os.urandom(5 * MiB), os.urandom(1000)]
    upload_multipart(s3, bucket, "mp", parts)
    s3.copy_object(Bucket=bucket, Key="copy", CopySource={"Bucket": bucket, "Key": "mp"})
    assert hashlib.sha256(body_of(s3, bucket, "copy")).digest() == hashlib.sha256(b"".join(parts)).digest()
    s3.delete_object(Bucket=bucket, Key="mp")
    assert s3.head_object(Bucket=bucket, Key="copy")["ContentLength"] == len(parts[0]) + len(parts[1])


# --- DeleteObjects --------------------------------------------------------------------------------------------


def test_delete_objects_missing_bucket(s3, bucket_name):
    with expect_s3_error(404, "NoSuchBucket"):
        s3.delete_objects(Bucket=bucket_name, Delete={"Objects": [{"Key": "k"}]})


def test_delete_objects_empty_list(s3, bucket):
    with expect_s3_error(400, "MalformedXML"):
        s3.delete_objects(Bucket=bucket, Delete={"Objects": []})


def test_delete_objects_unicode_and_long_keys(s3, bucket):
    keys = ["ü/one", "日本/二", "space key", "k" * 1024]
    for key in keys:
        s3.put_object(Bucket=bucket, Key=key, Body=b"x")
    response = s3.delete_objects(Bucket=bucket, Delete={"Objects": [{"Key": k} for k in keys]})
    assert sorted(d["Key"] for d in response["Deleted"]) == sorted(keys)
    assert keys_of(s3, bucket) == []


def test_delete_objects_reports_denied_keys(server, s3, bucket):
    admin = SeracAdmin(server.endpoint)
    user = unique_bucket_name("del-user")
    policy = {"Version": "2012-10-17", "Statement": [
        {"Effect": "Allow", "Action": ["s3:DeleteObject"], "Resource": [f"arn:aws:s3:::{bucket}/open/*"]}]}
    admin.put_policy(user + "-p", policy)
    access, secret = admin.create_user_with_key(user, [user + "-p"])
    limited = make_client(server.endpoint, access, secret)
    for key in ["open/a", "closed/b"]:
        s3.put_object(Bucket=bucket, Key=key, Body=b"x")
    for quiet in (False, True):
        response = limited.delete_objects(Bucket=bucket, Delete={
            "Objects": [{"Key": "open/a"}, {"Key": "closed/b"}], "Quiet": quiet})
        assert [(e["Key"], e["Code"]) for e in response.get("Errors", [])] == [("closed/b", "AccessDenied")]
        assert [d["Key"] for d in response.get("Deleted", [])] == ([] if quiet else ["open/a"])
    assert keys_of(s3, bucket) == ["closed/b"]


# --- Listing ----------------------------------------------------------------------------------------------------


@pytest.fixture
def listing_bucket(s3, bucket):
    keys = ["a", "a/1", "a/2", "ab/3", "b/c/4", "b/d/5", "c"]
    for key in keys:
        s3.put_object(Bucket=bucket, Key=key, Body=b"")
    return bucket


def test_list_empty_bucket(s3, bucket):
    for response in (s3.list_objects_v2(Bucket=bucket), s3.list_objects(Bucket=bucket)):
        assert "Contents" not in response
        assert "CommonPrefixes" not in response
        assert response["IsTruncated"] is False
    assert s3.list_objects_v2(Bucket=bucket)["KeyCount"] == 0


def test_list_v1_missing_bucket(s3, bucket_name):
    with expect_s3_error(404, "NoSuchBucket"):
        s3.list_objects(Bucket=bucket_name)


def test_prefix_not_ending_in_delimiter(s3, listing_bucket):
    response = s3.list_objects_v2(Bucket=listing_bucket, Prefix="a", Delimiter="/")
    assert [o["Key"] for o in response["Contents"]] == ["a"]
    assert [p["Prefix"] for p in response["CommonPrefixes"]] == ["a/", "ab/"]


def test_multi_character_delimiter(s3, bucket):
    for key in ["x//y", "x//z//w", "x/y"]:
        s3.put_object(Bucket=bucket, Key=key, Body=b"")
    response = s3.list_objects_v2(Bucket=bucket, Delimiter="//")
    assert [o["Key"] for o in response["Contents"]] == ["x/y"]
    assert [p["Prefix"] for p in response["CommonPrefixes"]] == ["x//"]


def test_continuation_token_wins_over_start_after(s3, listing_bucket):
    first = s3.list_objects_v2(Bucket=listing_bucket, StartAfter="a", MaxKeys=2)
    assert [o["Key"] for o in first["Contents"]] == ["a/1", "a/2"]
    second = s3.list_objects_v2(Bucket=listing_bucket, StartAfter="a", MaxKeys=2,
                                ContinuationToken=first["NextContinuationToken"])
    assert [o["Key"] for o in second["Contents"]] == ["ab/3", "b/c/4"]
    assert second["ContinuationToken"] == first["NextContinuationToken"]
    assert second["StartAfter"] == "a"


def test_v2_paging_with_delimiter_and_prefix(s3, listing_bucket):
    seen = []
    kwargs = {}
    while True:
        page = s3.list_objects_v2(Bucket=listing_bucket, Prefix="b/", Delimiter="/", MaxKeys=1, **kwargs)
        seen += [o["Key"] for o in page.get("Contents", [])] + [p["Prefix"] for p in page.get("CommonPrefixes", [])]
        if not page["IsTruncated"]:
            break
        kwargs = {"ContinuationToken": page["NextContinuationToken"]}
    assert seen == ["b/c/", "b/d/"]


def test_v1_marker_prefix_delimiter(s3, listing_bucket):
    page = s3.list_objects(Bucket=listing_bucket, Delimiter="/", Marker="a/")
    assert [o["Key"] for o in page["Contents"]] == ["c"]
    assert [p["Prefix"] for p in page["CommonPrefixes"]] == ["ab/", "b/"]
    no_delimiter = s3.list_objects(Bucket=listing_bucket, MaxKeys=3)
    assert no_delimiter["IsTruncated"] is True
    assert "NextMarker" not in no_delimiter  # without a delimiter the client resumes from the last key


def test_v1_max_keys_zero(s3, listing_bucket):
    response = s3.list_objects(Bucket=listing_bucket, MaxKeys=0)
    assert "Contents" not in response
    assert response["MaxKeys"] == 0


def test_fetch_owner_false(s3, listing_bucket):
    response = s3.list_objects_v2(Bucket=listing_bucket, FetchOwner=False)
    assert all("Owner" not in o for o in response["Contents"])


@pytest.mark.parametrize("query", [
    [("list-type", "2"), ("max-keys", "-1")],
    [("list-type", "2"), ("encoding-type", "base64")],
    [("max-keys", "ten")],
    [("encoding-type", "xml")],
])
def test_listing_bad_arguments(server, bucket, query):
    check_raw_error(Signer(server.endpoint).request("GET", f"/{bucket}", query=query), 400, "InvalidArgument")


def test_encoding_type_url_in_every_field(server, s3, bucket):
    for key in ["dir é/a b", "dir é/c+d", "z"]:
        s3.put_object(Bucket=bucket, Key=key, Body=b"")
    signer = Signer(server.endpoint)
    root = xml_root(signer.request("GET", f"/{bucket}", query=[
        ("list-type", "2"), ("encoding-type", "url"), ("delimiter", "/"), ("start-after", "dir é"),
        ("prefix", "")]))
    assert root.find(f"{S3_NS}StartAfter").text == "dir%20%C3%A9"
    assert [p.text for p in root.iter(f"{S3_NS}Prefix")][1:] == ["dir%20%C3%A9/"]
    root = xml_root(signer.request("GET", f"/{bucket}", query=[
        ("list-type", "2"), ("encoding-type", "url"), ("prefix", "dir é/")]))
    assert root.find(f"{S3_NS}Prefix").text == "dir%20%C3%A9/"
    assert [k.text for k in root.iter(f"{S3_NS}Key")] == ["dir%20%C3%A9/a%20b", "dir%20%C3%A9/c%2Bd"]


def test_list_multipart_uploads_errors_and_encoding(server, s3, bucket, bucket_name):
    with expect_s3_error(404, "NoSuchBucket"):
        s3.list_multipart_uploads(Bucket=bucket_name)
    check_raw_error(Signer(server.endpoint).request("GET", f"/{bucket}", query=[("uploads", ""), ("max-uploads", "x")]),
                    400, "InvalidArgument")
    upload_id = s3.create_multipart_upload(Bucket=bucket, Key="dir é/a b")["UploadId"]
    encoded = s3.list_multipart_uploads(Bucket=bucket, EncodingType="url")
    assert [(u["Key"], u["UploadId"]) for u in encoded["Uploads"]] in (
        [("dir%20%C3%A9/a%20b", upload_id)], [("dir é/a b", upload_id)])
    after = s3.list_multipart_uploads(Bucket=bucket, KeyMarker="dir é/a b")
    assert after.get("Uploads", []) == []
    before = s3.list_multipart_uploads(Bucket=bucket, KeyMarker="dir")
    assert [u["UploadId"] for u in before["Uploads"]] == [upload_id]


def test_list_multipart_uploads_excludes_finished(s3, bucket):
    done = upload_multipart(s3, bucket, "done", [b"x"])
    aborted = s3.create_multipart_upload(Bucket=bucket, Key="aborted")["UploadId"]
    s3.abort_multipart_upload(Bucket=bucket, Key="aborted", UploadId=aborted)
    pending = s3.create_multipart_upload(Bucket=bucket, Key="pending")["UploadId"]
    listed = [u["UploadId"] for u in s3.list_multipart_uploads(Bucket=bucket).get("Uploads", [])]
    assert listed == [pending]
    assert done not in listed


# --- Multipart -----------------------------------------------------------------------------------------------


def test_create_multipart_errors(s3, bucket, bucket_name):
    with expect_s3_error(404, "NoSuchBucket"):
        s3.create_multipart_upload(Bucket=bucket_name, Key="k")
    with expect_s3_error(400, "KeyTooLongError"):
        s3.create_multipart_upload(Bucket=bucket, Key="k" * 1025)


def test_complete_with_no_parts(s3, bucket):
    upload_id = s3.create_multipart_upload(Bucket=bucket, Key="k")["UploadId"]
    with expect_s3_error(400, "MalformedXML"):
        s3.complete_multipart_upload(Bucket=bucket, Key="k", UploadId=upload_id, MultipartUpload={"Parts": []})


def test_complete_with_duplicate_part(s3, bucket):
    upload_id = s3.create_multipart_upload(Bucket=bucket, Key="k")["UploadId"]
    etag = s3.upload_part(Bucket=bucket, Key="k", UploadId=upload_id, PartNumber=1, Body=b"x")["ETag"]
    with expect_s3_error(400, "InvalidPartOrder"):
        s3.complete_multipart_upload(Bucket=bucket, Key="k", UploadId=upload_id, MultipartUpload={
            "Parts": [{"PartNumber": 1, "ETag": etag}, {"PartNumber": 1, "ETag": etag}]})


def test_complete_with_gaps_and_unquoted_etags(s3, bucket):
    upload_id = s3.create_multipart_upload(Bucket=bucket, Key="k")["UploadId"]
    first, third = os.urandom(5 * MiB), b"third"
    e1 = s3.upload_part(Bucket=bucket, Key="k", UploadId=upload_id, PartNumber=1, Body=first)["ETag"]
    s3.upload_part(Bucket=bucket, Key="k", UploadId=upload_id, PartNumber=2, Body=b"left out")
    e3 = s3.upload_part(Bucket=bucket, Key="k", UploadId=upload_id, PartNumber=3, Body=third)["ETag"]
    done = s3.complete_multipart_upload(Bucket=bucket, Key="k", UploadId=upload_id, MultipartUpload={
        "Parts": [{"PartNumber": 1, "ETag": e1.strip('"')}, {"PartNumber": 3, "ETag": e3}]})
    assert done["ETag"] == multipart_etag([first, third])
    assert done["Key"] == "k" and done["Bucket"] == bucket
    assert body_of(s3, bucket, "k") == first + third
    assert s3.head_object(Bucket=bucket, Key="k")["PartsCount"] == 2


def test_complete_twice(s3, bucket):
    upload_id = s3.create_multipart_upload(Bucket=bucket, Key="k")["UploadId"]
    etag = s3.upload_part(Bucket=bucket, Key="k", UploadId=upload_id, PartNumber=1, Body=b"x")["ETag"]
    parts = {"Parts": [{"PartNumber": 1, "ETag": etag}]}
    s3.complete_multipart_upload(Bucket=bucket, Key="k", UploadId=upload_id, MultipartUpload=parts)
    with expect_s3_error(404, "NoSuchUpload"):
        s3.complete_multipart_upload(Bucket=bucket, Key="k", UploadId=upload_id, MultipartUpload=parts)
    assert body_of(s3, bucket, "k") == b"x"


def test_upload_id_is_bound_to_its_key(s3, bucket):
    upload_id = s3.create_multipart_upload(Bucket=bucket, Key="mine")["UploadId"]
    with expect_s3_error(404, "NoSuchUpload"):
        s3.upload_part(Bucket=bucket, Key="other", UploadId=upload_id, PartNumber=1, Body=b"x")
    with expect_s3_error(404, "NoSuchUpload"):
        s3.list_parts(Bucket=bucket, Key="other", UploadId=upload_id)
    with expect_s3_error(404, "NoSuchUpload"):
        s3.abort_multipart_upload(Bucket=bucket, Key="other", UploadId=upload_id)
    assert s3.list_parts(Bucket=bucket, Key="mine", UploadId=upload_id).get("Parts", []) == []


def test_upload_part_bad_digest(s3, bucket):
    upload_id = s3.create_multipart_upload(Bucket=bucket, Key="k")["UploadId"]
    with expect_s3_error(400, "BadDigest"):
        s3.upload_part(Bucket=bucket, Key="k", UploadId=upload_id, PartNumber=1, Body=b"data",
                       ContentMD5=md5_b64(b"other"))
    assert s3.list_parts(Bucket=bucket, Key="k", UploadId=upload_id).get("Parts", []) == []


def test_list_parts_arguments(server, s3, bucket):
    upload_id = s3.create_multipart_upload(Bucket=bucket, Key="k")["UploadId"]
    for number in (1, 2, 3):
        s3.upload_part(Bucket=bucket, Key="k", UploadId=upload_id, PartNumber=number, Body=b"p" * number)
    after = s3.list_parts(Bucket=bucket, Key="k", UploadId=upload_id, PartNumberMarker=2)
    assert [p["PartNumber"] for p in after["Parts"]] == [3]
    assert after["IsTruncated"] is False
    assert after["Initiator"]["ID"] == ACCESS_KEY
    signer = Signer(server.endpoint)
    for name, value in [("part-number-marker", "abc"), ("max-parts", "-1")]:
        check_raw_error(signer.request("GET", f"/{bucket}/k", query=[("uploadId", upload_id), (name, value)]),
                        400, "InvalidArgument")


def test_upload_part_copy_errors_and_whole_source(s3, bucket):
    source = os.urandom(200_000)
    put = s3.put_object(Bucket=bucket, Key="src", Body=source)
    upload_id = s3.create_multipart_upload(Bucket=bucket, Key="dst")["UploadId"]
    with expect_s3_error(404, "NoSuchKey"):
        s3.upload_part_copy(Bucket=bucket, Key="dst", UploadId=upload_id, PartNumber=1,
                            CopySource={"Bucket": bucket, "Key": "absent"})
    with expect_s3_error(412, "PreconditionFailed"):
        s3.upload_part_copy(Bucket=bucket, Key="dst", UploadId=upload_id, PartNumber=1,
                            CopySource={"Bucket": bucket, "Key": "src"}, CopySourceIfMatch=ZERO_ETAG)
    with expect_s3_error(404, "NoSuchUpload"):
        s3.upload_part_copy(Bucket=bucket, Key="dst", UploadId="no-such-upload", PartNumber=1,
                            CopySource={"Bucket": bucket, "Key": "src"})
    whole = s3.upload_part_copy(Bucket=bucket, Key="dst", UploadId=upload_id, PartNumber=1,
                                CopySource={"Bucket": bucket, "Key": "src"}, CopySourceIfMatch=put["ETag"])
    assert whole["CopyPartResult"]["ETag"] == put["ETag"]
    s3.complete_multipart_upload(Bucket=bucket, Key="dst", UploadId=upload_id, MultipartUpload={
        "Parts": [{"PartNumber": 1, "ETag": whole["CopyPartResult"]["ETag"]}]})
    assert body_of(s3, bucket, "dst") == source


@pytest.mark.parametrize("copy_range", ["bytes=0-", "0-5", "bytes=5-3"])
def test_upload_part_copy_malformed_range(s3, bucket, copy_range):
    s3.put_object(Bucket=bucket, Key="src", Body=b"0123456789")
    upload_id = s3.create_multipart_upload(Bucket=bucket, Key="dst")["UploadId"]
    with expect_s3_error(400, "InvalidArgument", alternatives=[(416, "InvalidRange"), (400, "InvalidRange")]):
        s3.upload_part_copy(Bucket=bucket, Key="dst", UploadId=upload_id, PartNumber=1,
                            CopySource={"Bucket": bucket, "Key": "src"}, CopySourceRange=copy_range)


# --- Presigned URLs --------------------------------------------------------------------------------------------


def test_presigned_url_method_is_signed(s3, bucket):
    s3.put_object(Bucket=bucket, Key="p", Body=b"presigned")
    url = s3.generate_presigned_url("get_object", Params={"Bucket": bucket, "Key": "p"}, ExpiresIn=60)
    response = requests.put(url, data=b"overwrite", timeout=10)
    check_raw_error(response, 403, "SignatureDoesNotMatch")
    assert body_of(s3, bucket, "p") == b"presigned"


def test_presigned_url_wrong_secret(server, bucket):
    forged = make_client(server.endpoint, ACCESS_KEY, "not-the-secret")
    url = forged.generate_presigned_url("get_object", Params={"Bucket": bucket, "Key": "p"}, ExpiresIn=60)
    check_raw_error(requests.get(url, timeout=10), 403, "SignatureDoesNotMatch")


def test_presigned_missing_key_and_overrides(s3, bucket):
    url = s3.generate_presigned_url("get_object", Params={"Bucket": bucket, "Key": "absent"}, ExpiresIn=60)
    check_raw_error(requests.get(url, timeout=10), 404, "NoSuchKey")
    s3.put_object(Bucket=bucket, Key="doc", Body=b"document")
    url = s3.generate_presigned_url("get_object", ExpiresIn=60, Params={
        "Bucket": bucket, "Key": "doc", "ResponseContentDisposition": "attachment; filename=doc.txt"})
    response = requests.get(url, timeout=10)
    assert response.status_code == 200
    assert response.headers["Content-Disposition"] == "attachment; filename=doc.txt"
    assert response.content == b"document"


def test_presigned_list_and_head(s3, bucket):
    s3.put_object(Bucket=bucket, Key="listed", Body=b"12345")
    url = s3.generate_presigned_url("list_objects_v2", Params={"Bucket": bucket}, ExpiresIn=60)
    root = ET.fromstring(requests.get(url, timeout=10).content)
    assert [k.text for k in root.iter(f"{S3_NS}Key")] == ["listed"]
    url = s3.generate_presigned_url("head_object", Params={"Bucket": bucket, "Key": "listed"}, ExpiresIn=60)
    head = requests.head(url, timeout=10)
    assert head.status_code == 200
    assert head.headers["Content-Length"] == "5"


def test_presigned_put_checks_content_md5(s3, bucket):
    url = s3.generate_presigned_url("put_object", Params={"Bucket": bucket, "Key": "up"}, ExpiresIn=60)
    response = requests.put(url, data=b"body", headers={"Content-MD5": md5_b64(b"other body")}, timeout=10)
    check_raw_error(response, 400, "BadDigest")
    with expect_s3_error(404, "NoSuchKey"):
        s3.get_object(Bucket=bucket, Key="up")
    response = requests.put(url, data=b"body", headers={"Content-MD5": md5_b64(b"body")}, timeout=10)
    assert response.status_code == 200, response.text
    assert body_of(s3, bucket, "up") == b"body"


# --- Checksums ------------------------------------------------------------------------------------------------


def test_checksum_not_sent_for_ranges_but_for_head(s3, bucket):
    data = os.urandom(1000)
    s3.put_object(Bucket=bucket, Key="c", Body=data, ChecksumAlgorithm="CRC32")
    head = s3.head_object(Bucket=bucket, Key="c", ChecksumMode="ENABLED")
    assert head["ChecksumCRC32"] == crc32_b64(data)
    ranged = s3.get_object(Bucket=bucket, Key="c", Range="bytes=0-9", ChecksumMode="ENABLED")
    assert "ChecksumCRC32" not in ranged
    assert ranged["Body"].read() == data[:10]


def test_unsupported_checksum_algorithm(s3, bucket):
    with expect_s3_error(400, "InvalidArgument", alternatives=[(400, "InvalidRequest")]):
        s3.create_multipart_upload(Bucket=bucket, Key="k", ChecksumAlgorithm="MD5")


def test_error_bodies_name_the_resource(server, bucket):
    response = Signer(server.endpoint).request("GET", f"/{bucket}/absent key")
    check_raw_error(response, 404, "NoSuchKey")
    root = ET.fromstring(response.content)
    assert root.findtext("Key") == "absent key"
    assert root.findtext("RequestId") == response.headers["x-amz-request-id"]
    assert root.findtext("Message")
