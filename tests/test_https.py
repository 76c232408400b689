"""TLS: boto3 over HTTPS sends aws-chunked bodies with an unsigned CRC32 trailer by default."""

import hashlib
import os

import pytest
import requests
from boto3.s3.transfer import TransferConfig

from s3util import crc32_b64, make_client, md5_hex, unique_bucket_name

MiB = 1024 * 1024


@pytest.fixture(scope="module")
def tls_client(tls_server, tls_cert):
    return make_client(tls_server.endpoint, verify=tls_cert)


@pytest.fixture
def tls_bucket(tls_client, request):
    name = unique_bucket_name(request.node.name)
    tls_client.create_bucket(Bucket=name)
    return name


def capture_put_headers(client):
    captured = []

    def remember(request, **_):
        captured.append({k.lower(): v.decode() if isinstance(v, bytes) else v for k, v in request.headers.items()})

    client.meta.events.register("before-send.s3.PutObject", remember)
    client.meta.events.register("before-send.s3.UploadPart", remember)
    return captured


def test_health_over_tls(tls_server, tls_cert):
    assert requests.get(tls_server.endpoint + "/_serac/health/ready", verify=tls_cert, timeout=10).status_code == 200


def test_default_put_uses_unsigned_trailer(tls_server, tls_cert, tls_bucket):
    client = make_client(tls_server.endpoint, verify=tls_cert)
    captured = capture_put_headers(client)
    data = os.urandom(300_000)
    put = client.put_object(Bucket=tls_bucket, Key="chunked", Body=data)
    # The test is only meaningful if boto3 really sent the streaming form.
    assert captured[-1]["x-amz-content-sha256"] == "STREAMING-UNSIGNED-PAYLOAD-TRAILER"
    assert "aws-chunked" in captured[-1]["content-encoding"]
    assert put["ETag"] == f'"{md5_hex(data)}"'
    assert put["ChecksumCRC32"] == crc32_b64(data)
    got = client.get_object(Bucket=tls_bucket, Key="chunked", ChecksumMode="ENABLED")
    assert got["Body"].read() == data
    assert got.get("ContentEncoding") in (None, "")
    assert got["ChecksumCRC32"] == crc32_b64(data)


def test_small_and_empty_put_over_tls(tls_client, tls_bucket):
    for size in (0, 1, 8191, 8192, 65537):
        data = os.urandom(size)
        tls_client.put_object(Bucket=tls_bucket, Key=f"s{size}", Body=data)
        assert tls_client.get_object(Bucket=tls_bucket, Key=f"s{size}")["Body"].read() == data


def test_put_when_required(tls_server, tls_cert, tls_bucket):
    client = make_client(tls_server.endpoint, verify=tls_cert, request_checksum_calculation="when_required",
                         response_checksum_validation="when_required")
    captured = capture_put_headers(client)
    data = os.urandom(200_000)
    client.put_object(Bucket=tls_bucket, Key="plain", Body=data)
    assert "aws-chunked" not in captured[-1].get("content-encoding", "")
    assert client.get_object(Bucket=tls_bucket, Key="plain")["Body"].read() == data


def test_multipart_over_tls(tls_client, tls_bucket, tmp_path):
    size = 23 * MiB + 5
    path = tmp_path / "mp.bin"
    digest = hashlib.sha256()
    with open(path, "wb") as file:
        for _ in range(size // MiB):
            block = os.urandom(MiB)
            digest.update(block)
            file.write(block)
        tail = os.urandom(size % MiB)
        digest.update(tail)
        file.write(tail)
    config = TransferConfig(multipart_threshold=5 * MiB, multipart_chunksize=5 * MiB, max_concurrency=4)
    tls_client.upload_file(str(path), tls_bucket, "mp.bin", Config=config)
    head = tls_client.head_object(Bucket=tls_bucket, Key="mp.bin")
    assert head["ContentLength"] == size
    assert head["ETag"].endswith('-5"')
    out = tmp_path / "out.bin"
    tls_client.download_file(tls_bucket, "mp.bin", str(out), Config=config)
    with open(out, "rb") as file:
        assert hashlib.sha256(file.read()).hexdigest() == digest.hexdigest()
