"""Bucket operations: create, name rules, head, list, location, versioning, delete."""

import pytest
import requests

from s3util import REGION, Signer, check_raw_error, expect_s3_error


def test_health_endpoints(server):
    assert requests.get(server.endpoint + "/_serac/health/ready", timeout=10).status_code == 200
    assert requests.get(server.endpoint + "/_serac/health/live", timeout=10).status_code == 200


def test_create_head_and_list(s3, bucket_name):
    created = s3.create_bucket(Bucket=bucket_name)
    assert created["ResponseMetadata"]["HTTPStatusCode"] == 200
    assert created["ResponseMetadata"]["HTTPHeaders"].get("x-amz-request-id")

    head = s3.head_bucket(Bucket=bucket_name)
    assert head["ResponseMetadata"]["HTTPHeaders"].get("x-amz-bucket-region") == REGION

    listed = s3.list_buckets()
    names = [b["Name"] for b in listed["Buckets"]]
    assert bucket_name in names
    entry = next(b for b in listed["Buckets"] if b["Name"] == bucket_name)
    assert entry["CreationDate"] is not None
    assert "Owner" in listed


def test_list_buckets_is_sorted(s3, bucket_name):
    names = [bucket_name + "-b", bucket_name + "-a", bucket_name + "-c"]
    for name in names:
        s3.create_bucket(Bucket=name)
    listed = [b["Name"] for b in s3.list_buckets()["Buckets"]]
    assert listed == sorted(listed)
    assert set(names) <= set(listed)


@pytest.mark.parametrize("name", [
    "ab",                    # too short
    "a" * 64,                # too long
    "UpperCase",             # upper case
    "under_score",           # underscore
    "-leading-hyphen",
    "trailing-hyphen-",
    "192.168.5.4",           # looks like an IP address
    "double..dot",
    ".leading-dot",
    "trailing-dot.",
])
def test_invalid_bucket_names(s3, name):
    with expect_s3_error(400, "InvalidBucketName"):
        s3.create_bucket(Bucket=name)


def test_invalid_bucket_name_with_space_raw(server):
    # boto3 refuses such names on its own, so this one goes through the hand-made signer.
    response = Signer(server.endpoint).request("PUT", "/bad name here")
    check_raw_error(response, 400, "InvalidBucketName")


def test_valid_edge_names(s3, bucket_name):
    for name in ["a" * 63, "abc", "a.b-c.d" + bucket_name[-6:], "0" + bucket_name[-10:]]:
        s3.create_bucket(Bucket=name)
        s3.head_bucket(Bucket=name)


def test_duplicate_create(s3, bucket):
    with expect_s3_error(409, "BucketAlreadyOwnedByYou"):
        s3.create_bucket(Bucket=bucket)


def test_head_missing_bucket(s3, bucket_name):
    with expect_s3_error(404, "404"):
        s3.head_bucket(Bucket=bucket_name)


def test_location(s3, bucket):
    location = s3.get_bucket_location(Bucket=bucket)
    # S3 reports us-east-1 as an empty LocationConstraint; boto3 turns that into None.
    assert location.get("LocationConstraint") in (None, "", REGION)


def test_location_of_missing_bucket(s3, bucket_name):
    with expect_s3_error(404, "NoSuchBucket"):
        s3.get_bucket_location(Bucket=bucket_name)


def test_versioning_is_unversioned(s3, bucket):
    versioning = s3.get_bucket_versioning(Bucket=bucket)
    assert versioning["ResponseMetadata"]["HTTPStatusCode"] == 200
    assert versioning.get("Status") in (None, "")


def test_delete_non_empty(s3, bucket):
    s3.put_object(Bucket=bucket, Key="k", Body=b"x")
    with expect_s3_error(409, "BucketNotEmpty"):
        s3.delete_bucket(Bucket=bucket)
    s3.head_bucket(Bucket=bucket)


def test_delete_missing(s3, bucket_name):
    with expect_s3_error(404, "NoSuchBucket"):
        s3.delete_bucket(Bucket=bucket_name)


def test_delete_empty_then_gone(s3, bucket):
    s3.put_object(Bucket=bucket, Key="k", Body=b"x")
    s3.delete_object(Bucket=bucket, Key="k")
    response = s3.delete_bucket(Bucket=bucket)
    assert response["ResponseMetadata"]["HTTPStatusCode"] == 204
    with expect_s3_error(404, "404"):
        s3.head_bucket(Bucket=bucket)
    assert bucket not in [b["Name"] for b in s3.list_buckets()["Buckets"]]
    with expect_s3_error(404, "NoSuchBucket"):
        s3.list_objects_v2(Bucket=bucket)
    # The name can be taken again.
    s3.create_bucket(Bucket=bucket)
    assert s3.list_objects_v2(Bucket=bucket)["KeyCount"] == 0


def test_object_ops_on_missing_bucket(s3, bucket_name):
    with expect_s3_error(404, "NoSuchBucket"):
        s3.put_object(Bucket=bucket_name, Key="k", Body=b"x")
    with expect_s3_error(404, "NoSuchBucket"):
        s3.get_object(Bucket=bucket_name, Key="k")
    with expect_s3_error(404, "NoSuchBucket"):
        s3.list_objects_v2(Bucket=bucket_name)


def test_reserved_prefixes_are_not_buckets(s3):
    names = [b["Name"] for b in s3.list_buckets()["Buckets"]]
    assert not any(name.startswith("_") for name in names)
