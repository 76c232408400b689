"""Multipart uploads: large transfers, ETags, error cases, listing, abort and UploadPartCopy."""

import hashlib
import os

import pytest
from boto3.s3.transfer import TransferConfig
from botocore.exceptions import ClientError

from s3util import expect_s3_error, md5_hex, sha256_of_file

MiB = 1024 * 1024


def multipart_etag(parts: list[bytes]) -> str:
    digests = b"".join(hashlib.md5(p).digest() for p in parts)
    return f'"{hashlib.md5(digests).hexdigest()}-{len(parts)}"'


def write_random_file(path, size_bytes: int) -> str:
    digest = hashlib.sha256()
    with open(path, "wb") as file:
        remaining = size_bytes
        while remaining:
            block = os.urandom(min(remaining, 4 * MiB))
            digest.update(block)
            file.write(block)
            remaining -= len(block)
    return digest.hexdigest()


def test_large_upload_and_download(s3, bucket, tmp_path):
    size = 101 * MiB + 12345
    source = tmp_path / "big.bin"
    source_sha = write_random_file(source, size)
    config = TransferConfig(multipart_threshold=8 * MiB, multipart_chunksize=16 * MiB, max_concurrency=4)
    s3.upload_file(str(source), bucket, "big/object.bin", Config=config)
    source.unlink()

    head = s3.head_object(Bucket=bucket, Key="big/object.bin")
    assert head["ContentLength"] == size
    assert head["ETag"].endswith('-7"'), head["ETag"]

    target = tmp_path / "download.bin"
    s3.download_file(bucket, "big/object.bin", str(target), Config=config)
    assert target.stat().st_size == size
    assert sha256_of_file(target) == source_sha


def upload_parts(s3, bucket, key, upload_id, parts):
    etags = []
    for number, data in enumerate(parts, start=1):
        response = s3.upload_part(Bucket=bucket, Key=key, UploadId=upload_id, PartNumber=number, Body=data)
        assert response["ETag"] == f'"{md5_hex(data)}"'
        etags.append({"PartNumber": number, "ETag": response["ETag"]})
    return etags


def test_manual_multipart_etag(s3, bucket):
    parts = [os.urandom(5 * MiB), os.urandom(5 * MiB + 1), b"tail"]
    upload = s3.create_multipart_upload(Bucket=bucket, Key="mp", ContentType="application/x-mp",
                                        Metadata={"kind": "multipart"})
    upload_id = upload["UploadId"]
    etags = upload_parts(s3, bucket, "mp", upload_id, parts)
    # Not visible before completion.
    with expect_s3_error(404, "NoSuchKey"):
        s3.get_object(Bucket=bucket, Key="mp")
    done = s3.complete_multipart_upload(Bucket=bucket, Key="mp", UploadId=upload_id,
                                        MultipartUpload={"Parts": etags})
    assert done["ETag"] == multipart_etag(parts)
    got = s3.get_object(Bucket=bucket, Key="mp")
    assert got["ETag"] == multipart_etag(parts)
    assert got["ContentType"] == "application/x-mp"
    assert got["Metadata"] == {"kind": "multipart"}
    body = got["Body"].read()
    assert hashlib.sha256(body).digest() == hashlib.sha256(b"".join(parts)).digest()
    # A range across the part boundary.
    ranged = s3.get_object(Bucket=bucket, Key="mp", Range=f"bytes={5 * MiB - 3}-{5 * MiB + 2}")["Body"].read()
    assert ranged == (parts[0] + parts[1])[5 * MiB - 3:5 * MiB + 3]
    # The upload is gone once completed.
    with expect_s3_error(404, "NoSuchUpload"):
        s3.list_parts(Bucket=bucket, Key="mp", UploadId=upload_id)


def test_overwritten_part_uses_last_upload(s3, bucket):
    upload_id = s3.create_multipart_upload(Bucket=bucket, Key="k")["UploadId"]
    s3.upload_part(Bucket=bucket, Key="k", UploadId=upload_id, PartNumber=1, Body=b"first")
    second = s3.upload_part(Bucket=bucket, Key="k", UploadId=upload_id, PartNumber=1, Body=b"second")
    s3.complete_multipart_upload(Bucket=bucket, Key="k", UploadId=upload_id,
                                 MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": second["ETag"]}]})
    assert s3.get_object(Bucket=bucket, Key="k")["Body"].read() == b"second"


def test_part_too_small(s3, bucket):
    upload_id = s3.create_multipart_upload(Bucket=bucket, Key="small")["UploadId"]
    etags = upload_parts(s3, bucket, "small", upload_id, [b"a" * 1024, b"b" * 1024])
    with expect_s3_error(400, "EntityTooSmall"):
        s3.complete_multipart_upload(Bucket=bucket, Key="small", UploadId=upload_id,
                                     MultipartUpload={"Parts": etags})
    with expect_s3_error(404, "NoSuchKey"):
        s3.get_object(Bucket=bucket, Key="small")


def test_wrong_etag(s3, bucket):
    upload_id = s3.create_multipart_upload(Bucket=bucket, Key="w")["UploadId"]
    upload_parts(s3, bucket, "w", upload_id, [b"only part"])
    with expect_s3_error(400, "InvalidPart"):
        s3.complete_multipart_upload(Bucket=bucket, Key="w", UploadId=upload_id, MultipartUpload={
            "Parts": [{"PartNumber": 1, "ETag": '"00000000000000000000000000000000"'}]})
    with expect_s3_error(400, "InvalidPart"):
        s3.complete_multipart_upload(Bucket=bucket, Key="w", UploadId=upload_id, MultipartUpload={
            "Parts": [{"PartNumber": 2, "ETag": f'"{md5_hex(b"only part")}"'}]})


def test_wrong_order(s3, bucket):
    upload_id = s3.create_multipart_upload(Bucket=bucket, Key="o")["UploadId"]
    etags = upload_parts(s3, bucket, "o", upload_id, [os.urandom(5 * MiB), b"second"])
    with expect_s3_error(400, "InvalidPartOrder"):
        s3.complete_multipart_upload(Bucket=bucket, Key="o", UploadId=upload_id,
                                     MultipartUpload={"Parts": list(reversed(etags))})


def test_abort(s3, bucket):
    upload_id = s3.create_multipart_upload(Bucket=bucket, Key="ab")["UploadId"]
    etags = upload_parts(s3, bucket, "ab", upload_id, [b"data"])
    assert s3.abort_multipart_upload(Bucket=bucket, Key="ab", UploadId=upload_id)[
        "ResponseMetadata"]["HTTPStatusCode"] == 204
    with expect_s3_error(404, "NoSuchUpload"):
        s3.list_parts(Bucket=bucket, Key="ab", UploadId=upload_id)
    with expect_s3_error(404, "NoSuchUpload"):
        s3.upload_part(Bucket=bucket, Key="ab", UploadId=upload_id, PartNumber=2, Body=b"x")
    with expect_s3_error(404, "NoSuchUpload"):
        s3.complete_multipart_upload(Bucket=bucket, Key="ab", UploadId=upload_id, MultipartUpload={"Parts": etags})
    with expect_s3_error(404, "NoSuchUpload"):
        s3.abort_multipart_upload(Bucket=bucket, Key="ab", UploadId=upload_id)
    uploads = s3.list_multipart_uploads(Bucket=bucket).get("Uploads", [])
    assert upload_id not in [u["UploadId"] for u in uploads]


def test_unknown_upload_id(s3, bucket):
    with expect_s3_error(404, "NoSuchUpload"):
        s3.upload_part(Bucket=bucket, Key="x", UploadId="not-an-upload", PartNumber=1, Body=b"x")


def test_invalid_part_number(s3, bucket):
    upload_id = s3.create_multipart_upload(Bucket=bucket, Key="pn")["UploadId"]
    with expect_s3_error(400, "InvalidArgument"):
        s3.upload_part(Bucket=bucket, Key="pn", UploadId=upload_id, PartNumber=10001, Body=b"x")
    with expect_s3_error(400, "InvalidArgument"):
        s3.upload_part(Bucket=bucket, Key="pn", UploadId=upload_id, PartNumber=0, Body=b"x")


def test_list_parts_paging(s3, bucket):
    upload_id = s3.create_multipart_upload(Bucket=bucket, Key="lp")["UploadId"]
    parts = [f"part-{n}".encode() * n for n in range(1, 6)]
    upload_parts(s3, bucket, "lp", upload_id, parts)
    seen = []
    marker = 0
    pages = 0
    while True:
        page = s3.list_parts(Bucket=bucket, Key="lp", UploadId=upload_id, MaxParts=2, PartNumberMarker=marker)
        pages += 1
        seen += [(p["PartNumber"], p["Size"], p["ETag"]) for p in page.get("Parts", [])]
        if not page["IsTruncated"]:
            break
        marker = page["NextPartNumberMarker"]
    assert pages == 3
    assert seen == [(n, len(p), f'"{md5_hex(p)}"') for n, p in enumerate(parts, start=1)]


def test_list_multipart_uploads(s3, bucket):
    ids = {}
    for key in ["u/a", "u/b", "v/c"]:
        ids[key] = s3.create_multipart_upload(Bucket=bucket, Key=key)["UploadId"]
    second_a = s3.create_multipart_upload(Bucket=bucket, Key="u/a")["UploadId"]
    listing = s3.list_multipart_uploads(Bucket=bucket)
    listed = [(u["Key"], u["UploadId"]) for u in listing["Uploads"]]
    assert sorted(listed) == sorted(list(ids.items()) + [("u/a", second_a)])
    assert [k for k, _ in listed] == sorted(k for k, _ in listed)

    prefixed = s3.list_multipart_uploads(Bucket=bucket, Prefix="v/")
    assert [(u["Key"], u["UploadId"]) for u in prefixed["Uploads"]] == [("v/c", ids["v/c"])]

    delimited = s3.list_multipart_uploads(Bucket=bucket, Delimiter="/")
    assert [p["Prefix"] for p in delimited["CommonPrefixes"]] == ["u/", "v/"]

    paged = []
    kwargs = {}
    while True:
        page = s3.list_multipart_uploads(Bucket=bucket, MaxUploads=1, **kwargs)
        paged += [(u["Key"], u["UploadId"]) for u in page.get("Uploads", [])]
        if not page["IsTruncated"]:
            break
        kwargs = {"KeyMarker": page["NextKeyMarker"], "UploadIdMarker": page["NextUploadIdMarker"]}
    assert sorted(paged) == sorted(listed)
    assert len(paged) == 4


def test_upload_part_copy_with_ranges(s3, bucket):
    source = os.urandom(6 * MiB + 1000)
    s3.put_object(Bucket=bucket, Key="copy-src", Body=source)
    upload_id = s3.create_multipart_upload(Bucket=bucket, Key="copy-dst")["UploadId"]
    first = s3.upload_part_copy(Bucket=bucket, Key="copy-dst", UploadId=upload_id, PartNumber=1,
                                CopySource={"Bucket": bucket, "Key": "copy-src"},
                                CopySourceRange=f"bytes=0-{5 * MiB - 1}")
    second = s3.upload_part_copy(Bucket=bucket, Key="copy-dst", UploadId=upload_id, PartNumber=2,
                                 CopySource={"Bucket": bucket, "Key": "copy-src"},
                                 CopySourceRange=f"bytes={5 * MiB}-{len(source) - 1}")
    assert first["CopyPartResult"]["ETag"] == f'"{md5_hex(source[:5 * MiB])}"'
    assert second["CopyPartResult"]["ETag"] == f'"{md5_hex(source[5 * MiB:])}"'
    s3.complete_multipart_upload(Bucket=bucket, Key="copy-dst", UploadId=upload_id, MultipartUpload={"Parts": [
        {"PartNumber": 1, "ETag": first["CopyPartResult"]["ETag"]},
        {"PartNumber": 2, "ETag": second["CopyPartResult"]["ETag"]}]})
    assert s3.get_object(Bucket=bucket, Key="copy-dst")["Body"].read() == source


def test_upload_part_copy_bad_range(s3, bucket):
    s3.put_object(Bucket=bucket, Key="src", Body=b"0123456789")
    upload_id = s3.create_multipart_upload(Bucket=bucket, Key="dst")["UploadId"]
    # AWS has answered both ways over time (ceph/s3-tests accepts either).
    with pytest.raises(ClientError) as caught:
        s3.upload_part_copy(Bucket=bucket, Key="dst", UploadId=upload_id, PartNumber=1,
                            CopySource={"Bucket": bucket, "Key": "src"}, CopySourceRange="bytes=5-100")
    error = caught.value.response
    assert (error["ResponseMetadata"]["HTTPStatusCode"], error["Error"]["Code"]) in [
        (416, "InvalidRange"), (400, "InvalidArgument"), (400, "InvalidRange")]
