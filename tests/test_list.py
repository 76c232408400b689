"""ListObjectsV2 and ListObjects (v1): prefixes, delimiters, paging, encoding, owner, order."""

import urllib.parse
import xml.etree.ElementTree as ET
from concurrent.futures import ThreadPoolExecutor

import pytest

from s3util import Signer, expect_s3_error, unique_bucket_name

S3_NS = "{http://s3.amazonaws.com/doc/2006-03-01/}"
PAGING_KEY_COUNT = 2500


@pytest.fixture(scope="module")
def paging_bucket(s3):
    """One bucket with 2,500 empty objects, shared by the paging tests."""
    name = unique_bucket_name("paging")
    s3.create_bucket(Bucket=name)
    keys = [f"p/{i:05d}" for i in range(PAGING_KEY_COUNT)]
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda key: s3.put_object(Bucket=name, Key=key, Body=b""), keys))
    return name, keys


@pytest.fixture
def tree_bucket(s3, bucket):
    keys = ["a/1", "a/2", "a/b/3", "a/b/4", "a/c/5", "b/6", "top1", "top2", "x/y/z/7"]
    for key in keys:
        s3.put_object(Bucket=bucket, Key=key, Body=key.encode())
    return bucket, keys


def test_list_all_and_sizes(s3, tree_bucket):
    bucket, keys = tree_bucket
    response = s3.list_objects_v2(Bucket=bucket)
    assert [o["Key"] for o in response["Contents"]] == sorted(keys)
    assert all(o["Size"] == len(o["Key"]) for o in response["Contents"])
    assert all(o["ETag"].startswith('"') for o in response["Contents"])
    assert response["KeyCount"] == len(keys)
    assert response["IsTruncated"] is False


def test_prefix(s3, tree_bucket):
    bucket, _ = tree_bucket
    response = s3.list_objects_v2(Bucket=bucket, Prefix="a/b/")
    assert [o["Key"] for o in response["Contents"]] == ["a/b/3", "a/b/4"]
    assert response["Prefix"] == "a/b/"
    empty = s3.list_objects_v2(Bucket=bucket, Prefix="nothing-here")
    assert empty["KeyCount"] == 0
    assert "Contents" not in empty


def test_delimiter(s3, tree_bucket):
    bucket, _ = tree_bucket
    response = s3.list_objects_v2(Bucket=bucket, Delimiter="/")
    assert [o["Key"] for o in response["Contents"]] == ["top1", "top2"]
    assert [p["Prefix"] for p in response["CommonPrefixes"]] == ["a/", "b/", "x/"]
    assert response["KeyCount"] == 5

    nested = s3.list_objects_v2(Bucket=bucket, Prefix="a/", Delimiter="/")
    assert [o["Key"] for o in nested["Contents"]] == ["a/1", "a/2"]
    assert [p["Prefix"] for p in nested["CommonPrefixes"]] == ["a/b/", "a/c/"]


def test_delimiter_other_than_slash(s3, tree_bucket):
    bucket, _ = tree_bucket
    response = s3.list_objects_v2(Bucket=bucket, Delimiter="b")
    assert [p["Prefix"] for p in response["CommonPrefixes"]] == ["a/b", "b"]


def test_max_keys_with_common_prefixes(s3, tree_bucket):
    bucket, _ = tree_bucket
    seen = []
    token = None
    pages = 0
    while True:
        kwargs = {"ContinuationToken": token} if token else {}
        page = s3.list_objects_v2(Bucket=bucket, Delimiter="/", MaxKeys=2, **kwargs)
        pages += 1
        assert page["KeyCount"] <= 2
        seen += [o["Key"] for o in page.get("Contents", [])] + [p["Prefix"] for p in page.get("CommonPrefixes", [])]
        if not page["IsTruncated"]:
            break
        token = page["NextContinuationToken"]
    assert sorted(seen) == ["a/", "b/", "top1", "top2", "x/"]
    assert len(seen) == 5
    assert pages == 3


def test_max_keys_zero(s3, tree_bucket):
    bucket, _ = tree_bucket
    response = s3.list_objects_v2(Bucket=bucket, MaxKeys=0)
    assert response.get("Contents", []) == []
    assert response["KeyCount"] == 0


def test_continuation_paging_2500(s3, paging_bucket):
    bucket, keys = paging_bucket
    listed = []
    token = None
    pages = 0
    while True:
        kwargs = {"ContinuationToken": token} if token else {}
        page = s3.list_objects_v2(Bucket=bucket, **kwargs)
        pages += 1
        assert page["MaxKeys"] == 1000
        listed += [o["Key"] for o in page.get("Contents", [])]
        if not page["IsTruncated"]:
            assert "NextContinuationToken" not in page
            break
        assert page["KeyCount"] == 1000
        token = page["NextContinuationToken"]
    assert pages == 3
    assert listed == keys


def test_small_pages_and_start_after(s3, paging_bucket):
    bucket, keys = paging_bucket
    paginator = s3.get_paginator("list_objects_v2")
    listed = []
    for page in paginator.paginate(Bucket=bucket, StartAfter="p/02000", PaginationConfig={"PageSize": 137}):
        listed += [o["Key"] for o in page.get("Contents", [])]
        assert page["StartAfter"] == "p/02000"
    assert listed == keys[2001:]


def test_max_keys_above_cap_is_capped(s3, paging_bucket):
    bucket, _ = paging_bucket
    page = s3.list_objects_v2(Bucket=bucket, MaxKeys=5000)
    assert page["KeyCount"] == 1000
    assert page["IsTruncated"] is True


def test_invalid_continuation_token(s3, bucket):
    with expect_s3_error(400, "InvalidArgument"):
        s3.list_objects_v2(Bucket=bucket, ContinuationToken="this is not a token !!")


def test_list_v1_marker_paging(s3, paging_bucket):
    bucket, keys = paging_bucket
    listed = []
    marker = ""
    while True:
        page = s3.list_objects(Bucket=bucket, Marker=marker)
        assert page["Marker"] == marker
        contents = [o["Key"] for o in page.get("Contents", [])]
        listed += contents
        if not page["IsTruncated"]:
            break
        assert len(contents) == 1000
        marker = contents[-1]
    assert listed == keys


def test_list_v1_next_marker_with_delimiter(s3, tree_bucket):
    bucket, _ = tree_bucket
    page = s3.list_objects(Bucket=bucket, Delimiter="/", MaxKeys=2)
    assert page["IsTruncated"] is True
    assert page["NextMarker"] == "b/"
    assert [p["Prefix"] for p in page["CommonPrefixes"]] == ["a/", "b/"]
    rest = s3.list_objects(Bucket=bucket, Delimiter="/", Marker=page["NextMarker"])
    assert [o["Key"] for o in rest["Contents"]] == ["top1", "top2"]
    assert [p["Prefix"] for p in rest["CommonPrefixes"]] == ["x/"]


def test_fetch_owner(s3, tree_bucket):
    bucket, _ = tree_bucket
    without = s3.list_objects_v2(Bucket=bucket, MaxKeys=1)
    assert "Owner" not in without["Contents"][0]
    with_owner = s3.list_objects_v2(Bucket=bucket, MaxKeys=1, FetchOwner=True)
    assert with_owner["Contents"][0]["Owner"]["ID"]
    # ListObjects v1 always includes the owner.
    assert s3.list_objects(Bucket=bucket, MaxKeys=1)["Contents"][0]["Owner"]["ID"]


UNICODE_KEYS = ["a", "B", "Z", "_under", "é", "ä", "ÿ", "z", "ā", "中文", "😀", "\uffef", "a b", "a%b", "a+b", "a\u00a0"]


def test_utf8_byte_order(s3, bucket):
    for key in UNICODE_KEYS:
        s3.put_object(Bucket=bucket, Key=key, Body=b"")
    listed = [o["Key"] for o in s3.list_objects_v2(Bucket=bucket)["Contents"]]
    assert listed == sorted(UNICODE_KEYS, key=lambda k: k.encode("utf-8"))
    # Paging one key at a time must follow the same order.
    paged = []
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, PaginationConfig={"PageSize": 1}):
        paged += [o["Key"] for o in page.get("Contents", [])]
    assert paged == listed


def test_encoding_type_url(s3, server, bucket):
    keys = ["space key/a b", "pct%41/x", "uni/é😀", "plus+/y", "amp&lt/z"]
    for key in keys:
        s3.put_object(Bucket=bucket, Key=key, Body=b"")
    # boto3 always asks for encoding-type=url and decodes the answer itself, unless the caller set
    # EncodingType explicitly; so a server that forgot to encode '%' shows up in the first call.
    decoded = s3.list_objects_v2(Bucket=bucket, Delimiter="/")
    assert sorted(p["Prefix"] for p in decoded["CommonPrefixes"]) == sorted(
        ["space key/", "pct%41/", "uni/", "plus+/", "amp&lt/"])
    encoded = s3.list_objects_v2(Bucket=bucket, EncodingType="url")
    assert sorted(urllib.parse.unquote_plus(o["Key"]) for o in encoded["Contents"]) == sorted(keys)
    assert "pct%2541/x" in [o["Key"] for o in encoded["Contents"]]
    v1 = s3.list_objects(Bucket=bucket, EncodingType="url", Prefix="space key/")
    assert [o["Key"] for o in v1["Contents"]] in (["space%20key/a%20b"], ["space+key/a+b"])

    # And the raw XML carries encoded keys.
    response = Signer(server.endpoint).request("GET", f"/{bucket}", query=[("list-type", "2"), ("encoding-type", "url")])
    assert response.status_code == 200, response.text
    root = ET.fromstring(response.content)
    assert root.find(f"{S3_NS}EncodingType").text == "url"
    raw_keys = [node.text for node in root.iter(f"{S3_NS}Key")]
    assert sorted(urllib.parse.unquote_plus(k) for k in raw_keys) == sorted(keys)
    assert all(" " not in k and "é" not in k for k in raw_keys)
    assert any("%25" in k for k in raw_keys)


def test_list_with_prefix_and_start_after_past_end(s3, tree_bucket):
    bucket, _ = tree_bucket
    response = s3.list_objects_v2(Bucket=bucket, Prefix="a/", StartAfter="zzz")
    assert response["KeyCount"] == 0
    assert response["IsTruncated"] is False
