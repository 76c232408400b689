"""Conditional writes: If-None-Match: * and If-Match on PutObject and CompleteMultipartUpload, and
exclusive creates racing each other."""

import os
import threading

from botocore.exceptions import ClientError

from s3util import expect_s3_error, md5_hex

MiB = 1024 * 1024


def test_put_if_none_match_star(s3, bucket):
    first = s3.put_object(Bucket=bucket, Key="once", Body=b"first", IfNoneMatch="*")
    assert first["ETag"] == f'"{md5_hex(b"first")}"'
    with expect_s3_error(412, "PreconditionFailed"):
        s3.put_object(Bucket=bucket, Key="once", Body=b"second", IfNoneMatch="*")
    assert s3.get_object(Bucket=bucket, Key="once")["Body"].read() == b"first"
    # After a delete the key can be created again.
    s3.delete_object(Bucket=bucket, Key="once")
    s3.put_object(Bucket=bucket, Key="once", Body=b"third", IfNoneMatch="*")
    assert s3.get_object(Bucket=bucket, Key="once")["Body"].read() == b"third"


def test_put_if_match(s3, bucket):
    v1 = s3.put_object(Bucket=bucket, Key="cas", Body=b"v1")
    v2 = s3.put_object(Bucket=bucket, Key="cas", Body=b"v2", IfMatch=v1["ETag"])
    with expect_s3_error(412, "PreconditionFailed"):
        s3.put_object(Bucket=bucket, Key="cas", Body=b"v3", IfMatch=v1["ETag"])
    assert s3.get_object(Bucket=bucket, Key="cas")["Body"].read() == b"v2"
    s3.put_object(Bucket=bucket, Key="cas", Body=b"v3", IfMatch=v2["ETag"])
    assert s3.get_object(Bucket=bucket, Key="cas")["Body"].read() == b"v3"


def test_put_if_match_on_missing_key(s3, bucket):
    # The S3 user guide says 404 NoSuchKey when there is no object to compare against; other
    # stores answer 412. Either way nothing may be written.
    with expect_s3_error(404, "NoSuchKey", alternatives=[(412, "PreconditionFailed")]):
        s3.put_object(Bucket=bucket, Key="absent", Body=b"x", IfMatch='"00000000000000000000000000000000"')
    with expect_s3_error(404, "NoSuchKey"):
        s3.get_object(Bucket=bucket, Key="absent")


def multipart(s3, bucket, key, parts):
    upload_id = s3.create_multipart_upload(Bucket=bucket, Key=key)["UploadId"]
    etags = []
    for number, data in enumerate(parts, start=1):
        etag = s3.upload_part(Bucket=bucket, Key=key, UploadId=upload_id, PartNumber=number, Body=data)["ETag"]
        etags.append({"PartNumber": number, "ETag": etag})
    return upload_id, {"Parts": etags}


def test_complete_multipart_if_none_match(s3, bucket):
    upload_id, parts = multipart(s3, bucket, "mp", [b"multipart body"])
    s3.put_object(Bucket=bucket, Key="mp", Body=b"already here")
    with expect_s3_error(412, "PreconditionFailed"):
        s3.complete_multipart_upload(Bucket=bucket, Key="mp", UploadId=upload_id, MultipartUpload=parts,
                                     IfNoneMatch="*")
    assert s3.get_object(Bucket=bucket, Key="mp")["Body"].read() == b"already here"

    upload_id, parts = multipart(s3, bucket, "fresh", [b"multipart body"])
    s3.complete_multipart_upload(Bucket=bucket, Key="fresh", UploadId=upload_id, MultipartUpload=parts,
                                 IfNoneMatch="*")
    assert s3.get_object(Bucket=bucket, Key="fresh")["Body"].read() == b"multipart body"


def test_complete_multipart_if_match(s3, bucket):
    old = s3.put_object(Bucket=bucket, Key="mp", Body=b"old")
    upload_id, parts = multipart(s3, bucket, "mp", [b"new body"])
    with expect_s3_error(412, "PreconditionFailed"):
        s3.complete_multipart_upload(Bucket=bucket, Key="mp", UploadId=upload_id, MultipartUpload=parts,
                                     IfMatch='"00000000000000000000000000000000"')
    assert s3.get_object(Bucket=bucket, Key="mp")["Body"].read() == b"old"
    s3.complete_multipart_upload(Bucket=bucket, Key="mp", UploadId=upload_id, MultipartUpload=parts,
                                 IfMatch=old["ETag"])
    assert s3.get_object(Bucket=bucket, Key="mp")["Body"].read() == b"new body"


def test_racing_exclusive_creates(client_factory, bucket):
    contenders = 4
    rounds = 25
    clients = [client_factory() for _ in range(contenders)]
    for round_number in range(rounds):
        key = f"race/{round_number}"
        barrier = threading.Barrier(contenders)
        outcomes = [None] * contenders
        bodies = [os.urandom(100 if n % 2 else 70_000) for n in range(contenders)]

        def contend(index):
            barrier.wait()
            try:
                clients[index].put_object(Bucket=bucket, Key=key, Body=bodies[index], IfNoneMatch="*")
                outcomes[index] = "won"
            except ClientError as error:
                status = error.response["ResponseMetadata"]["HTTPStatusCode"]
                outcomes[index] = (status, error.response["Error"]["Code"])

        threads = [threading.Thread(target=contend, args=(i,)) for i in range(contenders)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        winners = [i for i, outcome in enumerate(outcomes) if outcome == "won"]
        assert len(winners) == 1, f"round {round_number}: {outcomes}"
        losers = [outcome for outcome in outcomes if outcome != "won"]
        assert all(outcome in [(412, "PreconditionFailed"), (409, "ConditionalRequestConflict")]
                   for outcome in losers), outcomes
        stored = clients[0].get_object(Bucket=bucket, Key=key)["Body"].read()
        assert stored == bodies[winners[0]]
