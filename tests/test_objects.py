"""Object operations: put/get/head, metadata, ranges, conditional GET, overrides, delete,
DeleteObjects, CopyObject and awkward keys."""

import datetime
import os
from concurrent.futures import ThreadPoolExecutor
from email.utils import format_datetime

import pytest

from s3util import EMPTY_SHA256, Signer, expect_s3_error, md5_hex, raw_exchange


def get_bytes(s3, bucket, key, **kwargs):
    return s3.get_object(Bucket=bucket, Key=key, **kwargs)["Body"].read()


@pytest.mark.parametrize("size", [0, 1, 100, 64 * 1024 - 1, 64 * 1024, 64 * 1024 + 1, 3 * 1024 * 1024 + 7])
def test_put_get_head_round_trip(s3, bucket, size):
    data = os.urandom(size)
    put = s3.put_object(Bucket=bucket, Key="obj", Body=data)
    assert put["ETag"] == f'"{md5_hex(data)}"'
    assert put["ResponseMetadata"]["HTTPHeaders"].get("x-amz-request-id")

    got = s3.get_object(Bucket=bucket, Key="obj")
    assert got["Body"].read() == data
    assert got["ContentLength"] == size
    assert got["ETag"] == put["ETag"]

    head = s3.head_object(Bucket=bucket, Key="obj")
    assert head["ContentLength"] == size
    assert head["ETag"] == put["ETag"]
    assert isinstance(head["LastModified"], datetime.datetime)


def test_metadata_and_standard_headers_round_trip(s3, bucket):
    expires = datetime.datetime(2031, 3, 4, 5, 6, 7, tzinfo=datetime.timezone.utc)
    s3.put_object(Bucket=bucket, Key="meta", Body=b"payload",
                  Metadata={"color": "blue", "multi-word": "Hello World", "empty": ""},
                  ContentType="text/x-serac; charset=utf-8", ContentEncoding="identity",
                  CacheControl="max-age=60, private", ContentDisposition='attachment; filename="a b.txt"',
                  ContentLanguage="de-CH", Expires=expires)
    for response in (s3.head_object(Bucket=bucket, Key="meta"), s3.get_object(Bucket=bucket, Key="meta")):
        assert response["Metadata"] == {"color": "blue", "multi-word": "Hello World", "empty": ""}
        assert response["ContentType"] == "text/x-serac; charset=utf-8"
        assert response["ContentEncoding"] == "identity"
        assert response["CacheControl"] == "max-age=60, private"
        assert response["ContentDisposition"] == 'attachment; filename="a b.txt"'
        assert response["ContentLanguage"] == "de-CH"
        expires_header = response["ResponseMetadata"]["HTTPHeaders"]["expires"]
        assert expires_header == format_datetime(expires, usegmt=True)


def test_default_content_type(s3, bucket):
    s3.put_object(Bucket=bucket, Key="plain", Body=b"x")
    assert s3.head_object(Bucket=bucket, Key="plain")["ContentType"]


def test_overwrite_returns_new_content(s3, bucket):
    s3.put_object(Bucket=bucket, Key="k", Body=b"first version", Metadata={"v": "1"})
    second = os.urandom(100_000)
    s3.put_object(Bucket=bucket, Key="k", Body=second)
    got = s3.get_object(Bucket=bucket, Key="k")
    assert got["Body"].read() == second
    assert got["Metadata"] == {}
    assert got["ETag"] == f'"{md5_hex(second)}"'
    listed = s3.list_objects_v2(Bucket=bucket)["Contents"]
    assert [(o["Key"], o["Size"]) for o in listed] == [("k", len(second))]


def test_expect_continue_with_empty_body(server, bucket):
    # botocore sends "Expect: 100-continue" for every file-like body, even an empty one. Releases
    # before 1.43.1xx (the AWS CLI v1 still ships one) keep the early final response's status line
    # for the next request on that keep-alive connection when no 100 Continue came first, then
    # misparse that next response and stall until their read timeout (60 s per empty file in
    # `aws s3 sync`). So the server answers 100 Continue even when the body is empty.
    signer = Signer(server.endpoint)
    path = f"/{bucket}/empty-with-expect"
    headers, _ = signer.sign("PUT", path, [], {"content-length": "0", "expect": "100-continue"}, EMPTY_SHA256)
    request = f"PUT {path} HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers.items()) + "\r\n"
    response = raw_exchange("127.0.0.1", server.port, request.encode())
    assert response.startswith(b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 "), response[:200]


def test_get_missing_key(s3, bucket):
    with expect_s3_error(404, "NoSuchKey"):
        s3.get_object(Bucket=bucket, Key="nope")
    with expect_s3_error(404, "404"):
        s3.head_object(Bucket=bucket, Key="nope")


# --- Ranges ---------------------------------------------------------------------------------------------

RANGE_DATA = bytes(range(256)) * 400  # 102,400 bytes: crosses the inline-object threshold


@pytest.mark.parametrize("range_header,start,end", [
    ("bytes=0-0", 0, 0),
    ("bytes=10-19", 10, 19),
    ("bytes=100-", 100, len(RANGE_DATA) - 1),
    ("bytes=-5", len(RANGE_DATA) - 5, len(RANGE_DATA) - 1),
    ("bytes=-200000", 0, len(RANGE_DATA) - 1),                  # suffix longer than the object
    ("bytes=102000-999999", 102000, len(RANGE_DATA) - 1),       # end clamped to the object
])
def test_ranges(s3, bucket, range_header, start, end):
    s3.put_object(Bucket=bucket, Key="r", Body=RANGE_DATA)
    got = s3.get_object(Bucket=bucket, Key="r", Range=range_header)
    assert got["ResponseMetadata"]["HTTPStatusCode"] == 206
    assert got["Body"].read() == RANGE_DATA[start:end + 1]
    assert got["ContentRange"] == f"bytes {start}-{end}/{len(RANGE_DATA)}"
    assert got["ContentLength"] == end - start + 1


def test_range_beyond_eof(s3, bucket):
    s3.put_object(Bucket=bucket, Key="r", Body=b"0123456789")
    with expect_s3_error(416, "InvalidRange"):
        s3.get_object(Bucket=bucket, Key="r", Range="bytes=10-20")


def test_range_on_empty_object(s3, bucket):
    s3.put_object(Bucket=bucket, Key="empty", Body=b"")
    with expect_s3_error(416, "InvalidRange"):
        s3.get_object(Bucket=bucket, Key="empty", Range="bytes=0-0")


def test_range_on_head(s3, bucket):
    s3.put_object(Bucket=bucket, Key="r", Body=b"0123456789")
    head = s3.head_object(Bucket=bucket, Key="r", Range="bytes=2-4")
    assert head["ResponseMetadata"]["HTTPStatusCode"] == 206
    assert head["ContentLength"] == 3


# --- Conditional GET -------------------------------------------------------------------------------------


def test_conditional_get(s3, bucket):
    put = s3.put_object(Bucket=bucket, Key="c", Body=b"conditional")
    etag = put["ETag"]
    last_modified = s3.head_object(Bucket=bucket, Key="c")["LastModified"]
    past = last_modified - datetime.timedelta(days=1)
    future = last_modified + datetime.timedelta(days=1)

    assert get_bytes(s3, bucket, "c", IfMatch=etag) == b"conditional"
    assert get_bytes(s3, bucket, "c", IfNoneMatch='"0123456789abcdef0123456789abcdef"') == b"conditional"
    assert get_bytes(s3, bucket, "c", IfModifiedSince=past) == b"conditional"
    assert get_bytes(s3, bucket, "c", IfUnmodifiedSince=future) == b"conditional"

    with expect_s3_error(412, "PreconditionFailed"):
        s3.get_object(Bucket=bucket, Key="c", IfMatch='"0123456789abcdef0123456789abcdef"')
    with expect_s3_error(304, "304"):
        s3.get_object(Bucket=bucket, Key="c", IfNoneMatch=etag)
    with expect_s3_error(304, "304"):
        s3.get_object(Bucket=bucket, Key="c", IfModifiedSince=future)
    with expect_s3_error(412, "PreconditionFailed"):
        s3.get_object(Bucket=bucket, Key="c", IfUnmodifiedSince=past)
    # If-Match wins over a failing If-Unmodified-Since (RFC 7232 precedence, as S3 does).
    assert get_bytes(s3, bucket, "c", IfMatch=etag, IfUnmodifiedSince=past) == b"conditional"
    # If-None-Match wins over If-Modified-Since.
    with expect_s3_error(304, "304"):
        s3.get_object(Bucket=bucket, Key="c", IfNoneMatch=etag, IfModifiedSince=past)


def test_conditional_head(s3, bucket):
    put = s3.put_object(Bucket=bucket, Key="c", Body=b"x")
    with expect_s3_error(412, "412"):
        s3.head_object(Bucket=bucket, Key="c", IfMatch='"ffffffffffffffffffffffffffffffff"')
    with expect_s3_error(304, "304"):
        s3.head_object(Bucket=bucket, Key="c", IfNoneMatch=put["ETag"])


def test_response_header_overrides(s3, bucket):
    s3.put_object(Bucket=bucket, Key="o", Body=b"override me", ContentType="text/plain")
    got = s3.get_object(Bucket=bucket, Key="o", ResponseContentType="application/x-custom",
                        ResponseContentDisposition="attachment; filename=x.bin",
                        ResponseCacheControl="no-store", ResponseContentLanguage="fr",
                        ResponseContentEncoding="identity", ResponseExpires=datetime.datetime(
                            2030, 1, 1, tzinfo=datetime.timezone.utc))
    assert got["Body"].read() == b"override me"
    assert got["ContentType"] == "application/x-custom"
    assert got["ContentDisposition"] == "attachment; filename=x.bin"
    assert got["CacheControl"] == "no-store"
    assert got["ContentLanguage"] == "fr"
    assert got["ContentEncoding"] == "identity"
    assert got["ResponseMetadata"]["HTTPHeaders"]["expires"] == "Tue, 01 Jan 2030 00:00:00 GMT"
    # The stored object is unchanged.
    assert s3.head_object(Bucket=bucket, Key="o")["ContentType"] == "text/plain"


# --- Delete ------------------------------------------------------------------------------------------------


def test_delete_object(s3, bucket):
    s3.put_object(Bucket=bucket, Key="d", Body=b"x")
    assert s3.delete_object(Bucket=bucket, Key="d")["ResponseMetadata"]["HTTPStatusCode"] == 204
    with expect_s3_error(404, "NoSuchKey"):
        s3.get_object(Bucket=bucket, Key="d")
    # Deleting what is not there is not an error.
    assert s3.delete_object(Bucket=bucket, Key="d")["ResponseMetadata"]["HTTPStatusCode"] == 204
    assert s3.delete_object(Bucket=bucket, Key="never")["ResponseMetadata"]["HTTPStatusCode"] == 204


def put_many(s3, bucket, keys, body=b""):
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda key: s3.put_object(Bucket=bucket, Key=key, Body=body), keys))


def list_all_keys(s3, bucket, prefix=""):
    keys = []
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
        keys += [o["Key"] for o in page.get("Contents", [])]
    return keys


def test_delete_objects_1000_not_quiet(s3, bucket):
    keys = [f"many/{i:04d}" for i in range(1000)]
    put_many(s3, bucket, keys)
    to_delete = keys[:999] + ["many/not-there"]
    response = s3.delete_objects(Bucket=bucket, Delete={"Objects": [{"Key": k} for k in to_delete]})
    assert sorted(d["Key"] for d in response["Deleted"]) == sorted(to_delete)
    assert response.get("Errors", []) == []
    assert list_all_keys(s3, bucket) == [keys[999]]


def test_delete_objects_quiet(s3, bucket):
    keys = [f"q/{i}" for i in range(20)]
    put_many(s3, bucket, keys)
    response = s3.delete_objects(Bucket=bucket, Delete={"Objects": [{"Key": k} for k in keys[:15]], "Quiet": True})
    assert response.get("Deleted", []) == []
    assert response.get("Errors", []) == []
    assert sorted(list_all_keys(s3, bucket)) == sorted(keys[15:])


def test_delete_objects_too_many(s3, bucket):
    with expect_s3_error(400, "MalformedXML"):
        s3.delete_objects(Bucket=bucket, Delete={"Objects": [{"Key": f"k{i}"} for i in range(1001)]})


# --- Copy -----------------------------------------------------------------------------------------------------


def test_copy_object_copy_directive(s3, bucket):
    data = os.urandom(70_000)
    src = "src dir/ünïcødé file+plus 100%.bin"
    put = s3.put_object(Bucket=bucket, Key=src, Body=data, ContentType="application/x-src",
                        Metadata={"origin": "source"})
    copied = s3.copy_object(Bucket=bucket, Key="copy/dest", CopySource={"Bucket": bucket, "Key": src})
    assert copied["CopyObjectResult"]["ETag"] == put["ETag"]
    got = s3.get_object(Bucket=bucket, Key="copy/dest")
    assert got["Body"].read() == data
    assert got["ContentType"] == "application/x-src"
    assert got["Metadata"] == {"origin": "source"}
    # The source is untouched.
    assert get_bytes(s3, bucket, src) == data


def test_copy_object_replace_directive(s3, bucket, client_factory):
    s3.put_object(Bucket=bucket, Key="a", Body=b"abc", ContentType="text/a", Metadata={"old": "1"})
    s3.copy_object(Bucket=bucket, Key="b", CopySource={"Bucket": bucket, "Key": "a"}, MetadataDirective="REPLACE",
                   ContentType="text/b", Metadata={"new": "2"})
    got = s3.get_object(Bucket=bucket, Key="b")
    assert got["Body"].read() == b"abc"
    assert got["ContentType"] == "text/b"
    assert got["Metadata"] == {"new": "2"}


def test_copy_onto_itself_with_replace(s3, bucket):
    s3.put_object(Bucket=bucket, Key="self", Body=b"same", Metadata={"v": "1"})
    s3.copy_object(Bucket=bucket, Key="self", CopySource={"Bucket": bucket, "Key": "self"},
                   MetadataDirective="REPLACE", Metadata={"v": "2"})
    got = s3.get_object(Bucket=bucket, Key="self")
    assert got["Body"].read() == b"same"
    assert got["Metadata"] == {"v": "2"}


def test_copy_across_buckets(s3, bucket, bucket_name):
    s3.create_bucket(Bucket=bucket_name)
    s3.put_object(Bucket=bucket, Key="x", Body=b"cross")
    s3.copy_object(Bucket=bucket_name, Key="y", CopySource=f"{bucket}/x")
    assert get_bytes(s3, bucket_name, "y") == b"cross"


def test_copy_conditions(s3, bucket):
    put = s3.put_object(Bucket=bucket, Key="src", Body=b"cond")
    with expect_s3_error(412, "PreconditionFailed"):
        s3.copy_object(Bucket=bucket, Key="dst", CopySource={"Bucket": bucket, "Key": "src"},
                       CopySourceIfMatch='"00000000000000000000000000000000"')
    with expect_s3_error(404, "NoSuchKey"):
        s3.get_object(Bucket=bucket, Key="dst")
    s3.copy_object(Bucket=bucket, Key="dst", CopySource={"Bucket": bucket, "Key": "src"},
                   CopySourceIfMatch=put["ETag"])
    assert get_bytes(s3, bucket, "dst") == b"cond"
    with expect_s3_error(412, "PreconditionFailed"):
        s3.copy_object(Bucket=bucket, Key="dst2", CopySource={"Bucket": bucket, "Key": "src"},
                       CopySourceIfNoneMatch=put["ETag"])


def test_copy_missing_source(s3, bucket):
    with expect_s3_error(404, "NoSuchKey"):
        s3.copy_object(Bucket=bucket, Key="dst", CopySource={"Bucket": bucket, "Key": "missing"})


# --- Keys ---------------------------------------------------------------------------------------------------------

AWKWARD_KEYS = [
    "日本語/キー/😀.txt",
    "with space/and  two  spaces ",
    "plus+sign+key",
    "percent%20not%2Fdecoded%",
    "dots/../../escape",
    "..",
    "a/./b",
    "double//slash//key",
    "/leading-slash",
    "trailing-slash/",
    "question?mark&amp=1#hash",
    "tilde~star*paren(1)'quote'",
    "semi;colon,comma=equals@at$dollar",
    "tab\tand\u00a0nbsp",
    "k" * 1024,
    "é" * 512,  # 1024 UTF-8 bytes
]


def test_awkward_keys_round_trip(s3, bucket):
    for index, key in enumerate(AWKWARD_KEYS):
        body = f"body {index}".encode()
        s3.put_object(Bucket=bucket, Key=key, Body=body)
        assert get_bytes(s3, bucket, key) == body, key
        assert s3.head_object(Bucket=bucket, Key=key)["ContentLength"] == len(body)
    assert sorted(list_all_keys(s3, bucket), key=lambda k: k.encode()) == sorted(AWKWARD_KEYS, key=lambda k: k.encode())
    for key in AWKWARD_KEYS:
        s3.delete_object(Bucket=bucket, Key=key)
    assert list_all_keys(s3, bucket) == []


def test_key_too_long(s3, bucket):
    with expect_s3_error(400, "KeyTooLongError"):
        s3.put_object(Bucket=bucket, Key="k" * 1025, Body=b"x")
    with expect_s3_error(400, "KeyTooLongError"):
        s3.put_object(Bucket=bucket, Key="é" * 512 + "x", Body=b"x")
    assert list_all_keys(s3, bucket) == []
