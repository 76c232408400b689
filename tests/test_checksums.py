"""Flexible checksums: stored on PUT, returned only with checksum mode, never on ranged GETs,
verified against the body; composite multipart checksums."""

import base64
import hashlib
import os
import zlib

import pytest
from awscrt import checksums as crt_checksums

from s3util import expect_s3_error, make_client

MiB = 1024 * 1024


def expected_checksum(algorithm: str, data: bytes) -> str:
    if algorithm == "CRC32":
        raw = zlib.crc32(data).to_bytes(4, "big")
    elif algorithm == "CRC32C":
        raw = crt_checksums.crc32c(data).to_bytes(4, "big")
    elif algorithm == "CRC64NVME":
        raw = crt_checksums.crc64nvme(data).to_bytes(8, "big")
    elif algorithm == "SHA1":
        raw = hashlib.sha1(data).digest()
    else:
        raw = hashlib.sha256(data).digest()
    return base64.b64encode(raw).decode()


def test_crc64nvme_reference_value():
    # Guards the test's own reference implementation (check value from the NVMe spec).
    assert crt_checksums.crc64nvme(b"123456789") == 0xAE8B14860A799888


ALGORITHMS = ["CRC32", "CRC32C", "SHA1", "SHA256", "CRC64NVME"]


@pytest.fixture(scope="module")
def plain_client(server):
    """A client that neither adds checksums nor asks for them unless told to."""
    return make_client(server.endpoint, request_checksum_calculation="when_required",
                       response_checksum_validation="when_required")


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_put_then_get_with_checksum_mode(s3, plain_client, bucket, algorithm):
    data = os.urandom(100_000)
    field = f"Checksum{algorithm}"
    header = f"x-amz-checksum-{algorithm.lower()}"
    expected = expected_checksum(algorithm, data)

    put = s3.put_object(Bucket=bucket, Key="obj", Body=data, ChecksumAlgorithm=algorithm)
    assert put[field] == expected

    got = s3.get_object(Bucket=bucket, Key="obj", ChecksumMode="ENABLED")
    assert got["Body"].read() == data
    assert got[field] == expected
    head = s3.head_object(Bucket=bucket, Key="obj", ChecksumMode="ENABLED")
    assert head[field] == expected

    # Without checksum mode the stored checksum is not sent.
    plain = plain_client.get_object(Bucket=bucket, Key="obj")
    assert plain["Body"].read() == data
    assert header not in plain["ResponseMetadata"]["HTTPHeaders"]
    plain_head = plain_client.head_object(Bucket=bucket, Key="obj")
    assert header not in plain_head["ResponseMetadata"]["HTTPHeaders"]

    # Never on a ranged GET, even when asked.
    ranged = s3.get_object(Bucket=bucket, Key="obj", Range="bytes=0-99", ChecksumMode="ENABLED")
    assert ranged["Body"].read() == data[:100]
    assert not any(h.startswith("x-amz-checksum-") and h != "x-amz-checksum-type"
                   for h in ranged["ResponseMetadata"]["HTTPHeaders"])


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_wrong_checksum_header(plain_client, bucket, algorithm):
    data = b"the real body"
    wrong = expected_checksum(algorithm, b"a different body")
    with expect_s3_error(400, "BadDigest"):
        plain_client.put_object(Bucket=bucket, Key="bad", Body=data, **{f"Checksum{algorithm}": wrong})
    with expect_s3_error(404, "NoSuchKey"):
        plain_client.get_object(Bucket=bucket, Key="bad")


def test_malformed_checksum_header(plain_client, bucket):
    # AWS answers InvalidRequest "Value for x-amz-checksum-crc32 header is invalid."; some
    # compatible stores say InvalidArgument. Both are a clean 400.
    with expect_s3_error(400, "InvalidRequest", alternatives=[(400, "InvalidArgument")]):
        plain_client.put_object(Bucket=bucket, Key="bad", Body=b"x", ChecksumCRC32="!!!not-base64!!!")
    with expect_s3_error(404, "NoSuchKey"):
        plain_client.get_object(Bucket=bucket, Key="bad")


def test_default_crc32_from_sdk(s3, bucket):
    # botocore >= 1.36 adds a CRC32 to every PutObject on its own.
    data = b"default checksum"
    put = s3.put_object(Bucket=bucket, Key="default", Body=data)
    assert put["ChecksumCRC32"] == expected_checksum("CRC32", data)
    got = s3.get_object(Bucket=bucket, Key="default", ChecksumMode="ENABLED")
    assert got["ChecksumCRC32"] == expected_checksum("CRC32", data)


def test_composite_multipart_checksum(s3, bucket):
    parts = [os.urandom(5 * MiB), os.urandom(1000)]
    upload_id = s3.create_multipart_upload(Bucket=bucket, Key="mp", ChecksumAlgorithm="CRC32")["UploadId"]
    completed = []
    for number, data in enumerate(parts, start=1):
        response = s3.upload_part(Bucket=bucket, Key="mp", UploadId=upload_id, PartNumber=number, Body=data,
                                  ChecksumAlgorithm="CRC32")
        assert response["ChecksumCRC32"] == expected_checksum("CRC32", data)
        completed.append({"PartNumber": number, "ETag": response["ETag"], "ChecksumCRC32": response["ChecksumCRC32"]})
    s3.complete_multipart_upload(Bucket=bucket, Key="mp", UploadId=upload_id, MultipartUpload={"Parts": completed})
    part_digests = b"".join(base64.b64decode(p["ChecksumCRC32"]) for p in completed)
    composite = expected_checksum("CRC32", part_digests) + f"-{len(parts)}"
    head = s3.head_object(Bucket=bucket, Key="mp", ChecksumMode="ENABLED")
    assert head["ChecksumCRC32"] == composite
    assert s3.get_object(Bucket=bucket, Key="mp")["Body"].read() == b"".join(parts)


def test_wrong_part_checksum(plain_client, bucket):
    upload_id = plain_client.create_multipart_upload(Bucket=bucket, Key="mp", ChecksumAlgorithm="SHA256")["UploadId"]
    with expect_s3_error(400, "BadDigest"):
        plain_client.upload_part(Bucket=bucket, Key="mp", UploadId=upload_id, PartNumber=1, Body=b"part",
                                 ChecksumSHA256=expected_checksum("SHA256", b"other"))
