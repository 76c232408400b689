"""Hostile and broken input: malformed XML, oversize headers, truncated bodies, garbage request
lines. Each must get a clean error and leave the server serving."""

import base64
import hashlib
import socket
import time
import urllib.parse

from s3util import (Signer, assert_healthy, check_raw_error, expect_s3_error, raw_exchange, status_of)

KiB = 1024
MiB = 1024 * KiB


def xml_post(signer, path, query, body: bytes):
    headers = {"content-md5": base64.b64encode(hashlib.md5(body).digest()).decode(),
               "content-type": "application/xml"}
    return signer.request("POST", path, query=query, headers=headers, body=body)


def test_delete_objects_malformed_xml(s3, server, bucket):
    s3.put_object(Bucket=bucket, Key="keep", Body=b"x")
    signer = Signer(server.endpoint)
    for body in [b"<Delete><Object><Key>keep</Key>", b"not xml at all",
                 b"<Delete><Object><Key>keep</Key></Object></Delete><trailing/>"]:
        response = xml_post(signer, f"/{bucket}", [("delete", "")], body)
        check_raw_error(response, 400, "MalformedXML")
    assert s3.get_object(Bucket=bucket, Key="keep")["Body"].read() == b"x"


def test_delete_objects_well_formed_raw(s3, server, bucket):
    # The same path with a valid body works, so the errors above are about the XML.
    s3.put_object(Bucket=bucket, Key="gone", Body=b"x")
    body = b'<?xml version="1.0" encoding="UTF-8"?><Delete><Object><Key>gone</Key></Object></Delete>'
    response = xml_post(Signer(server.endpoint), f"/{bucket}", [("delete", "")], body)
    assert response.status_code == 200, response.text
    with expect_s3_error(404, "NoSuchKey"):
        s3.get_object(Bucket=bucket, Key="gone")


def test_complete_multipart_malformed_xml(s3, server, bucket):
    upload_id = s3.create_multipart_upload(Bucket=bucket, Key="mp")["UploadId"]
    etag = s3.upload_part(Bucket=bucket, Key="mp", UploadId=upload_id, PartNumber=1, Body=b"part")["ETag"]
    signer = Signer(server.endpoint)
    bad_bodies = [
        b"<CompleteMultipartUpload><Part><PartNumber>1</PartNumber>",
        b"{json: true}",
        b"<CompleteMultipartUpload><Part><PartNumber>one</PartNumber><ETag>" + etag.encode()
        + b"</ETag></Part></CompleteMultipartUpload>",
    ]
    for body in bad_bodies:
        response = xml_post(signer, f"/{bucket}/mp", [("uploadId", upload_id)], body)
        check_raw_error(response, 400, "MalformedXML")
    # The upload survives bad attempts.
    s3.complete_multipart_upload(Bucket=bucket, Key="mp", UploadId=upload_id,
                                 MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": etag}]})
    assert s3.get_object(Bucket=bucket, Key="mp")["Body"].read() == b"part"


def test_oversize_header(server):
    request = (b"GET /_serac/health/ready HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + b"a" * (20 * KiB)
               + b"\r\n\r\n")
    response = raw_exchange("127.0.0.1", server.port, request)
    assert status_of(response) in (400, 431), response[:300]
    assert_healthy(server)


def test_too_many_headers(server):
    headers = b"".join(f"X-H{i}: v\r\n".encode() for i in range(300))
    response = raw_exchange("127.0.0.1", server.port,
                            b"GET /_serac/health/ready HTTP/1.1\r\nHost: 127.0.0.1\r\n" + headers + b"\r\n")
    assert status_of(response) in (400, 431), response[:300]
    assert_healthy(server)


def test_oversize_request_target(server):
    response = raw_exchange("127.0.0.1", server.port,
                            b"GET /" + b"a" * (20 * KiB) + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    assert status_of(response) in (400, 414, 431), response[:300]
    assert_healthy(server)


def test_garbage_request_lines(server):
    for garbage in [b"HELLO\r\n\r\n", b"GET\r\n\r\n", b"\x00\x01\x02\x03\r\n\r\n",
                    b"GET / HTTP/9.9\r\nHost: x\r\n\r\n", b"GET / HTTP/1.1\r\nNo colon header\r\n\r\n",
                    b"PUT /b/k HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n",
                    b"PUT /b/k HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab"]:
        response = raw_exchange("127.0.0.1", server.port, garbage)
        if response:  # closing the connection without a word is also acceptable for binary junk
            assert status_of(response) in (400, 505), (garbage, response[:300])
        else:
            assert garbage.startswith(b"\x00"), f"no response at all to {garbage!r}"
    assert_healthy(server)


def test_truncated_body_leaves_nothing(s3, server, bucket):
    signer = Signer(server.endpoint)
    path = f"/{bucket}/truncated"
    headers, _ = signer.sign("PUT", path, [], {"content-length": str(MiB)}, "UNSIGNED-PAYLOAD")
    head = f"PUT {urllib.parse.quote(path)} HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers.items())
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
        sock.sendall(head.encode() + b"\r\n")
        sock.sendall(b"z" * (100 * KiB))
        time.sleep(0.2)
    time.sleep(0.5)
    with expect_s3_error(404, "NoSuchKey"):
        s3.get_object(Bucket=bucket, Key="truncated")
    assert s3.list_objects_v2(Bucket=bucket)["KeyCount"] == 0
    assert_healthy(server)
    # And a complete upload to the same key right after works.
    s3.put_object(Bucket=bucket, Key="truncated", Body=b"whole")
    assert s3.get_object(Bucket=bucket, Key="truncated")["Body"].read() == b"whole"


def test_truncated_multipart_part_leaves_upload_usable(s3, server, bucket):
    upload_id = s3.create_multipart_upload(Bucket=bucket, Key="mp")["UploadId"]
    signer = Signer(server.endpoint)
    path = f"/{bucket}/mp"
    query = [("partNumber", "1"), ("uploadId", upload_id)]
    headers, _ = signer.sign("PUT", path, query, {"content-length": str(MiB)}, "UNSIGNED-PAYLOAD")
    target = signer.url(path, query)[len(server.endpoint):]
    head = f"PUT {target} HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers.items())
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
        sock.sendall(head.encode() + b"\r\n" + b"p" * (100 * KiB))
    time.sleep(0.5)
    parts = s3.list_parts(Bucket=bucket, Key="mp", UploadId=upload_id).get("Parts", [])
    assert parts == []
    etag = s3.upload_part(Bucket=bucket, Key="mp", UploadId=upload_id, PartNumber=1, Body=b"ok")["ETag"]
    s3.complete_multipart_upload(Bucket=bucket, Key="mp", UploadId=upload_id,
                                 MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": etag}]})
    assert s3.get_object(Bucket=bucket, Key="mp")["Body"].read() == b"ok"


def test_slow_garbage_does_not_block_others(s3, server, bucket):
    # A connection that sends half a request and stalls must not hold up anyone else.
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as stalled:
        stalled.sendall(b"GET /_serac/health/ready HTTP/1.1\r\nHost: 1")
        start = time.monotonic()
        s3.put_object(Bucket=bucket, Key="meanwhile", Body=b"ok")
        assert s3.get_object(Bucket=bucket, Key="meanwhile")["Body"].read() == b"ok"
        assert time.monotonic() - start < 5
    assert_healthy(server)


def test_unknown_method_and_bad_query(server, bucket):
    signer = Signer(server.endpoint)
    response = signer.request("GET", f"/{bucket}", query=[("list-type", "2"), ("max-keys", "minus-one")])
    check_raw_error(response, 400, "InvalidArgument")
    assert_healthy(server)
