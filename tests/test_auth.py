"""Authentication: SigV4 headers, presigned URLs, clock skew, aws-chunked signed streams and
trailers, Content-MD5 and payload-hash verification."""

import base64
import datetime
import hashlib
import os
import time
import urllib.parse

import requests

from s3util import (EMPTY_SHA256, Signer, chunk_signature, check_raw_error, crc32_b64, expect_s3_error,
                    make_client, send_raw, split_chunks, trailer_signature)

KiB = 1024


def test_wrong_secret(server, bucket):
    client = make_client(server.endpoint, secret_key="definitely-not-the-secret")
    with expect_s3_error(403, "SignatureDoesNotMatch"):
        client.list_buckets()
    with expect_s3_error(403, "SignatureDoesNotMatch"):
        client.put_object(Bucket=bucket, Key="k", Body=b"x")


def test_unknown_access_key(server):
    client = make_client(server.endpoint, access_key="NOSUCHACCESSKEY0000")
    with expect_s3_error(403, "InvalidAccessKeyId"):
        client.list_buckets()


def test_anonymous_requests_denied(s3, server, bucket):
    s3.put_object(Bucket=bucket, Key="secret", Body=b"private")
    check_raw_error(requests.get(f"{server.endpoint}/{bucket}/secret", timeout=10), 403, "AccessDenied")
    check_raw_error(requests.get(f"{server.endpoint}/", timeout=10), 403, "AccessDenied")
    check_raw_error(requests.get(f"{server.endpoint}/{bucket}", timeout=10), 403, "AccessDenied")
    check_raw_error(requests.put(f"{server.endpoint}/{bucket}/anon", data=b"x", timeout=10), 403, "AccessDenied")
    with expect_s3_error(404, "NoSuchKey"):
        s3.get_object(Bucket=bucket, Key="anon")


def test_malformed_authorization_header(server, bucket):
    response = requests.get(f"{server.endpoint}/{bucket}", timeout=10, headers={
        "Authorization": "AWS4-HMAC-SHA256 this-is-not-a-credential",
        "x-amz-date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ"),
        "x-amz-content-sha256": EMPTY_SHA256})
    check_raw_error(response, 400, "AuthorizationHeaderMalformed")


def test_hand_signed_request_works(server, bucket):
    signer = Signer(server.endpoint)
    put = signer.request("PUT", f"/{bucket}/hand signed/é", body=b"hand made")
    assert put.status_code == 200, put.text
    get = signer.request("GET", f"/{bucket}/hand signed/é")
    assert get.status_code == 200
    assert get.content == b"hand made"
    unsigned = signer.request("PUT", f"/{bucket}/unsigned", body=b"unsigned payload", payload_hash="UNSIGNED-PAYLOAD")
    assert unsigned.status_code == 200, unsigned.text


def test_clock_skew(server, bucket):
    signer = Signer(server.endpoint)
    now = datetime.datetime.now(datetime.timezone.utc)
    for offset in (datetime.timedelta(minutes=-20), datetime.timedelta(minutes=20)):
        response = signer.request("PUT", f"/{bucket}/skewed", body=b"x", now=now + offset)
        check_raw_error(response, 403, "RequestTimeTooSkewed")
    # Within the 15-minute window it is fine.
    assert signer.request("GET", f"/{bucket}", now=now - datetime.timedelta(minutes=10)).status_code == 200


def test_payload_hash_mismatch(s3, server, bucket):
    signer = Signer(server.endpoint)
    response = signer.request("PUT", f"/{bucket}/mismatch", body=b"actual body",
                              payload_hash=hashlib.sha256(b"claimed body").hexdigest())
    check_raw_error(response, 400, "XAmzContentSHA256Mismatch")
    with expect_s3_error(404, "NoSuchKey"):
        s3.get_object(Bucket=bucket, Key="mismatch")


def test_content_md5(s3, bucket):
    good = base64.b64encode(hashlib.md5(b"data").digest()).decode()
    s3.put_object(Bucket=bucket, Key="md5-ok", Body=b"data", ContentMD5=good)
    wrong = base64.b64encode(hashlib.md5(b"other").digest()).decode()
    with expect_s3_error(400, "BadDigest"):
        s3.put_object(Bucket=bucket, Key="md5-bad", Body=b"data", ContentMD5=wrong)
    with expect_s3_error(400, "InvalidDigest"):
        s3.put_object(Bucket=bucket, Key="md5-bad", Body=b"data", ContentMD5="not base64 at all!")
    with expect_s3_error(404, "NoSuchKey"):
        s3.get_object(Bucket=bucket, Key="md5-bad")


# --- Presigned URLs -------------------------------------------------------------------------------------


def test_presigned_get_and_put(s3, bucket):
    s3.put_object(Bucket=bucket, Key="shared file.txt", Body=b"presigned content")
    get_url = s3.generate_presigned_url("get_object", Params={"Bucket": bucket, "Key": "shared file.txt"},
                                        ExpiresIn=300)
    assert "X-Amz-Signature=" in get_url
    response = requests.get(get_url, timeout=10)
    assert response.status_code == 200, response.text
    assert response.content == b"presigned content"

    put_url = s3.generate_presigned_url("put_object", Params={"Bucket": bucket, "Key": "uploaded/ü.bin"},
                                        ExpiresIn=300)
    response = requests.put(put_url, data=b"uploaded via presigned url", timeout=10)
    assert response.status_code == 200, response.text
    assert s3.get_object(Bucket=bucket, Key="uploaded/ü.bin")["Body"].read() == b"uploaded via presigned url"


def test_presigned_tampered(s3, bucket):
    s3.put_object(Bucket=bucket, Key="a", Body=b"a")
    s3.put_object(Bucket=bucket, Key="b", Body=b"b")
    url = s3.generate_presigned_url("get_object", Params={"Bucket": bucket, "Key": "a"}, ExpiresIn=300)
    check_raw_error(requests.get(url.replace(f"/{bucket}/a?", f"/{bucket}/b?"), timeout=10), 403,
                    "SignatureDoesNotMatch")
    # A presigned GET does not allow a PUT to the same URL.
    check_raw_error(requests.put(url, data=b"overwrite", timeout=10), 403, "SignatureDoesNotMatch")
    assert s3.get_object(Bucket=bucket, Key="a")["Body"].read() == b"a"


def test_presigned_expired(s3, bucket):
    s3.put_object(Bucket=bucket, Key="soon", Body=b"x")
    url = s3.generate_presigned_url("get_object", Params={"Bucket": bucket, "Key": "soon"}, ExpiresIn=1)
    time.sleep(2.1)
    check_raw_error(requests.get(url, timeout=10), 403, "AccessDenied")


def test_presigned_expiry_too_long(s3, bucket):
    s3.put_object(Bucket=bucket, Key="long", Body=b"x")
    url = s3.generate_presigned_url("get_object", Params={"Bucket": bucket, "Key": "long"}, ExpiresIn=604801)
    assert "X-Amz-Expires=604801" in url
    check_raw_error(requests.get(url, timeout=10), 400, "AuthorizationQueryParametersError")
    ok = s3.generate_presigned_url("get_object", Params={"Bucket": bucket, "Key": "long"}, ExpiresIn=604800)
    assert requests.get(ok, timeout=10).status_code == 200


def test_presigned_unknown_key(server, bucket):
    other = make_client(server.endpoint, access_key="NOSUCHACCESSKEY0000")
    url = other.generate_presigned_url("get_object", Params={"Bucket": bucket, "Key": "k"}, ExpiresIn=60)
    check_raw_error(requests.get(url, timeout=10), 403, "InvalidAccessKeyId")


# --- aws-chunked --------------------------------------------------------------------------------------------


def signed_chunked_body(signer, bucket, key, data, chunk_bytes=64 * KiB, with_trailer=False):
    """Builds a STREAMING-AWS4-HMAC-SHA256-PAYLOAD[-TRAILER] request as the Java SDK sends it.
    Returns (headers, body_parts) where body_parts is a list of (chunk_data, header_line) so a test
    can tamper with one piece after signing."""
    chunks = split_chunks(data, chunk_bytes) + [b""]
    trailer_line = f"x-amz-checksum-crc32:{crc32_b64(data)}\n"
    # Every chunk signature is 64 hex digits, so the encoded length is known before signing.
    encoded_length = sum(len(f"{len(c):x};chunk-signature=") + 64 + 2 + len(c) + 2 for c in chunks[:-1])
    encoded_length += len("0;chunk-signature=") + 64 + 2
    if with_trailer:
        encoded_length += len(trailer_line) + 1 + len("x-amz-trailer-signature:") + 64 + 2 + 2
    else:
        encoded_length += 2
    headers = {"content-encoding": "aws-chunked", "x-amz-decoded-content-length": str(len(data)),
               "content-length": str(encoded_length)}
    if with_trailer:
        headers["x-amz-trailer"] = "x-amz-checksum-crc32"
    payload_mode = "STREAMING-AWS4-HMAC-SHA256-PAYLOAD" + ("-TRAILER" if with_trailer else "")
    path = f"/{bucket}/{key}"
    signed_headers, context = signer.sign("PUT", path, [], headers, payload_mode)
    previous = context["seed_signature"]
    pieces = []
    for chunk in chunks:
        previous = chunk_signature(context, previous, chunk)
        pieces.append([f"{len(chunk):x};chunk-signature={previous}\r\n".encode(), chunk,
                       b"\r\n" if chunk else b""])
    if with_trailer:
        trailer_sig = trailer_signature(context, previous, trailer_line)
        tail = (trailer_line.replace("\n", "\r\n") + f"x-amz-trailer-signature:{trailer_sig}\r\n\r\n").encode()
    else:
        tail = b"\r\n"
    pieces.append([b"", b"", tail])
    return signed_headers, pieces, path


def join_pieces(pieces):
    return b"".join(b"".join(piece) for piece in pieces)


def test_signed_chunked_upload(s3, server, bucket):
    signer = Signer(server.endpoint)
    data = os.urandom(150 * KiB + 17)
    headers, pieces, path = signed_chunked_body(signer, bucket, "chunked", data)
    body = join_pieces(pieces)
    assert len(body) == int(headers["content-length"])
    response = send_raw(signer.host, signer.port, "PUT", urllib.parse.quote(path), headers, body)
    assert response.status == 200, response.body
    got = s3.get_object(Bucket=bucket, Key="chunked")
    assert got["Body"].read() == data
    assert got["ContentLength"] == len(data)
    assert got.get("ContentEncoding") in (None, "")


def test_signed_chunked_upload_with_trailer(s3, server, bucket):
    signer = Signer(server.endpoint)
    data = os.urandom(100 * KiB + 3)
    headers, pieces, path = signed_chunked_body(signer, bucket, "trailer", data, with_trailer=True)
    response = send_raw(signer.host, signer.port, "PUT", urllib.parse.quote(path), headers, join_pieces(pieces))
    assert response.status == 200, response.body
    assert response.getheader("x-amz-checksum-crc32") == crc32_b64(data)
    assert s3.get_object(Bucket=bucket, Key="trailer")["Body"].read() == data


def test_tampered_chunk_data(s3, server, bucket):
    signer = Signer(server.endpoint)
    data = os.urandom(150 * KiB)
    headers, pieces, path = signed_chunked_body(signer, bucket, "tampered", data)
    flipped = bytearray(pieces[1][1])
    flipped[100] ^= 0x01
    pieces[1][1] = bytes(flipped)
    response = send_raw(signer.host, signer.port, "PUT", urllib.parse.quote(path), headers, join_pieces(pieces))
    assert response.status == 403, response.body
    check_raw_error_from_raw(response, 403, "SignatureDoesNotMatch")
    with expect_s3_error(404, "NoSuchKey"):
        s3.get_object(Bucket=bucket, Key="tampered")


def test_tampered_final_chunk_signature(s3, server, bucket):
    signer = Signer(server.endpoint)
    data = os.urandom(20 * KiB)
    headers, pieces, path = signed_chunked_body(signer, bucket, "tampered-final", data)
    final_header = pieces[-2][0].decode()
    bad_digit = "0" if final_header[-3] != "0" else "1"
    pieces[-2][0] = (final_header[:-3] + bad_digit + "\r\n").encode()
    response = send_raw(signer.host, signer.port, "PUT", urllib.parse.quote(path), headers, join_pieces(pieces))
    check_raw_error_from_raw(response, 403, "SignatureDoesNotMatch")
    with expect_s3_error(404, "NoSuchKey"):
        s3.get_object(Bucket=bucket, Key="tampered-final")


def test_tampered_trailer(s3, server, bucket):
    signer = Signer(server.endpoint)
    data = os.urandom(10 * KiB)
    headers, pieces, path = signed_chunked_body(signer, bucket, "tampered-trailer", data, with_trailer=True)
    tail = pieces[-1][2].decode()
    name, _, rest = tail.partition(":")
    wrong_crc = crc32_b64(b"something else")
    pieces[-1][2] = (name + ":" + wrong_crc + rest[rest.index("\r\n"):]).encode()
    response = send_raw(signer.host, signer.port, "PUT", urllib.parse.quote(path), headers, join_pieces(pieces))
    assert response.status in (400, 403), response.body
    with expect_s3_error(404, "NoSuchKey"):
        s3.get_object(Bucket=bucket, Key="tampered-trailer")


def unsigned_trailer_body(data, checksum_b64, chunk_bytes=64 * KiB):
    body = b""
    for chunk in split_chunks(data, chunk_bytes):
        body += f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n"
    body += b"0\r\n" + f"x-amz-checksum-crc32:{checksum_b64}\r\n\r\n".encode()
    return body


def test_unsigned_trailer_over_http(s3, server, bucket):
    # What the AWS C++ SDK (PyArrow) sends even over plain HTTP.
    signer = Signer(server.endpoint)
    data = os.urandom(130 * KiB)
    body = unsigned_trailer_body(data, crc32_b64(data))
    headers = {"content-encoding": "aws-chunked", "x-amz-decoded-content-length": str(len(data)),
               "x-amz-trailer": "x-amz-checksum-crc32", "content-length": str(len(body))}
    path = f"/{bucket}/unsigned-trailer"
    signed, _ = signer.sign("PUT", path, [], headers, "STREAMING-UNSIGNED-PAYLOAD-TRAILER")
    response = send_raw(signer.host, signer.port, "PUT", urllib.parse.quote(path), signed, body)
    assert response.status == 200, response.body
    assert s3.get_object(Bucket=bucket, Key="unsigned-trailer")["Body"].read() == data

    bad_body = unsigned_trailer_body(data, crc32_b64(b"nope"))
    headers["content-length"] = str(len(bad_body))
    bad_path = f"/{bucket}/unsigned-trailer-bad"
    signed, _ = signer.sign("PUT", bad_path, [], headers, "STREAMING-UNSIGNED-PAYLOAD-TRAILER")
    response = send_raw(signer.host, signer.port, "PUT", urllib.parse.quote(bad_path), signed, bad_body)
    check_raw_error_from_raw(response, 400, "BadDigest")
    with expect_s3_error(404, "NoSuchKey"):
        s3.get_object(Bucket=bucket, Key="unsigned-trailer-bad")


def check_raw_error_from_raw(response, status, code):
    class Adapter:
        status_code = response.status
        content = response.body
        headers = dict(response.getheaders())

    check_raw_error(Adapter, status, code)

