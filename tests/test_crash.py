"""Durability: kill -9 the server under concurrent load, restart it on the same data directory,
and check that every acknowledged write survived, every acknowledged delete stayed deleted, and no
partial object is visible."""

import hashlib
import os
import random
import subprocess
import threading
import time

import pytest
from botocore.exceptions import ClientError

from s3util import SeracServer, make_client, serac_binary, unique_bucket_name

KiB = 1024
MiB = 1024 * KiB
ABSENT = "absent"
ROUNDS = 4
WORKERS = 4
KEYS_PER_WORKER = 6
SIZES = [0, 1, 17, 1000, 64 * KiB - 1, 64 * KiB + 1, 200 * KiB, 1 * MiB + 3]


class KeyState:
    """What a key may hold: the last acknowledged state plus whatever an unacknowledged operation
    (in flight when the server died) may have left."""

    def __init__(self):
        self.acked = ABSENT
        self.maybe: set[str] = set()


class Ledger:
    def __init__(self, keys):
        self.states = {key: KeyState() for key in keys}
        self.written_hashes: set[str] = set()
        self.lock = threading.Lock()
        self.acked_ops = 0
        self.unexpected_errors: list[str] = []


def content_hash(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def run_worker(client, bucket, keys, ledger: Ledger, stop: threading.Event, killed_at: list, rng: random.Random):
    while not stop.is_set():
        key = rng.choice(keys)
        state = ledger.states[key]
        roll = rng.random()
        try:
            if roll < 0.65:
                data = rng.randbytes(rng.choice(SIZES))
                new_state = content_hash(data)
                with ledger.lock:
                    ledger.written_hashes.add(new_state)
                state.maybe.add(new_state)
                client.put_object(Bucket=bucket, Key=key, Body=data)
            elif roll < 0.9:
                new_state = ABSENT
                state.maybe.add(ABSENT)
                client.delete_object(Bucket=bucket, Key=key)
            else:
                parts = [rng.randbytes(5 * MiB), rng.randbytes(rng.choice([1, 3000, 70 * KiB]))]
                new_state = content_hash(b"".join(parts))
                with ledger.lock:
                    ledger.written_hashes.add(new_state)
                state.maybe.add(new_state)
                upload_id = client.create_multipart_upload(Bucket=bucket, Key=key)["UploadId"]
                etags = []
                for number, part in enumerate(parts, start=1):
                    etag = client.upload_part(Bucket=bucket, Key=key, UploadId=upload_id, PartNumber=number,
                                              Body=part)["ETag"]
                    etags.append({"PartNumber": number, "ETag": etag})
                client.complete_multipart_upload(Bucket=bucket, Key=key, UploadId=upload_id,
                                                 MultipartUpload={"Parts": etags})
        except Exception as error:  # noqa: BLE001 - after the kill every request fails somehow
            if not killed_at:
                ledger.unexpected_errors.append(f"{key}: {error!r}")
            return  # this key keeps its in-flight possibility; the worker is done for this round
        # Acknowledged: from now on only this state (or a later one) is acceptable.
        state.acked = new_state
        state.maybe = set()
        with ledger.lock:
            ledger.acked_ops += 1


def read_state(client, bucket, key) -> str:
    try:
        body = client.get_object(Bucket=bucket, Key=key)["Body"].read()
    except ClientError as error:
        if error.response["Error"]["Code"] == "NoSuchKey":
            return ABSENT
        raise
    return content_hash(body)


def verify(client, bucket, ledger: Ledger, round_number: int) -> None:
    problems = []
    for key, state in ledger.states.items():
        observed = read_state(client, bucket, key)
        allowed = {state.acked} | state.maybe
        if observed not in allowed:
            kind = "partial or unknown content" if observed not in ledger.written_hashes | {ABSENT} else "stale"
            problems.append(f"{key}: {kind}; observed {observed[:12]}, acked {state.acked[:12]}, "
                            f"in flight {[s[:12] for s in state.maybe]}")
        state.acked = observed
        state.maybe = set()
    listed = []
    for page in client.get_paginator("list_objects_v2").paginate(Bucket=bucket):
        listed += page.get("Contents", [])
    for entry in listed:
        if entry["Key"] not in ledger.states:
            problems.append(f"unexpected key {entry['Key']!r} in listing")
    listed_keys = {entry["Key"] for entry in listed}
    present = {key for key, state in ledger.states.items() if state.acked != ABSENT}
    if listed_keys != present:
        problems.append(f"listing disagrees with GET: listed-only {sorted(listed_keys - present)}, "
                        f"get-only {sorted(present - listed_keys)}")
    assert not problems, f"round {round_number}:\n" + "\n".join(problems)


def test_kill_9_under_load(tmp_path):
    seed = int(os.environ.get("SERAC_CRASH_SEED", time.time_ns() % 1_000_000))
    print(f"crash test seed {seed}")
    rng = random.Random(seed)
    serac = SeracServer(tmp_path / "crash", name="serac-crash")
    serac.start()
    try:
        bucket = unique_bucket_name("crash")
        make_client(serac.endpoint).create_bucket(Bucket=bucket)
        key_sets = [[f"w{w}/key-{k}" for k in range(KEYS_PER_WORKER)] for w in range(WORKERS)]
        ledger = Ledger([key for keys in key_sets for key in keys])
        started = time.monotonic()
        for round_number in range(ROUNDS):
            stop = threading.Event()
            killed_at: list[float] = []
            clients = [make_client(serac.endpoint, connect_timeout=5, read_timeout=20) for _ in range(WORKERS)]
            threads = [threading.Thread(target=run_worker, args=(clients[w], bucket, key_sets[w], ledger, stop,
                                                                 killed_at, random.Random(rng.random())))
                       for w in range(WORKERS)]
            for thread in threads:
                thread.start()
            time.sleep(rng.uniform(0.8, 2.5))
            killed_at.append(time.monotonic())
            serac.kill()  # SIGKILL
            stop.set()
            for thread in threads:
                thread.join(30)
            assert not any(thread.is_alive() for thread in threads), "a worker hung after the kill"
            assert not ledger.unexpected_errors, f"errors before the kill: {ledger.unexpected_errors}"

            serac.start()
            verify(make_client(serac.endpoint), bucket, ledger, round_number)
        assert ledger.acked_ops >= ROUNDS * 5, f"too little load to mean anything: {ledger.acked_ops} ops"
        assert time.monotonic() - started < 90
    finally:
        serac.kill()


def test_graceful_shutdown_keeps_data(tmp_path):
    serac = SeracServer(tmp_path / "graceful", name="serac-graceful")
    serac.start()
    try:
        client = make_client(serac.endpoint)
        bucket = unique_bucket_name("graceful")
        client.create_bucket(Bucket=bucket)
        data = os.urandom(300 * KiB)
        client.put_object(Bucket=bucket, Key="survivor", Body=data, Metadata={"kept": "yes"})
        client.put_object(Bucket=bucket, Key="small", Body=b"tiny")
        client.put_object(Bucket=bucket, Key="deleted", Body=b"x")
        client.delete_object(Bucket=bucket, Key="deleted")
        upload_id = client.create_multipart_upload(Bucket=bucket, Key="pending")["UploadId"]
        client.upload_part(Bucket=bucket, Key="pending", UploadId=upload_id, PartNumber=1, Body=b"part one")

        assert serac.stop() == 0, f"unclean exit; stderr:\n{serac.stderr_tail()}"
        serac.start()
        client = make_client(serac.endpoint)
        got = client.get_object(Bucket=bucket, Key="survivor")
        assert got["Body"].read() == data
        assert got["Metadata"] == {"kept": "yes"}
        assert client.get_object(Bucket=bucket, Key="small")["Body"].read() == b"tiny"
        with pytest.raises(ClientError):
            client.get_object(Bucket=bucket, Key="deleted")
        parts = client.list_parts(Bucket=bucket, Key="pending", UploadId=upload_id)["Parts"]
        assert [(p["PartNumber"], p["Size"]) for p in parts] == [(1, 8)]
        assert serac.stop() == 0
    finally:
        serac.kill()


def test_second_server_on_the_same_data_directory_refuses_to_start(server, s3, bucket):
    """One server per data directory: a second one would sweep away blobs the first is writing."""
    result = subprocess.run([serac_binary(), "server", "--data", str(server.data_dir), "--address", "127.0.0.1:0"],
                            capture_output=True, text=True, timeout=30)
    assert result.returncode != 0
    assert "in use by another serac server" in result.stderr
    # The first server is untouched.
    s3.put_object(Bucket=bucket, Key="still-served", Body=b"yes")
    assert s3.get_object(Bucket=bucket, Key="still-served")["Body"].read() == b"yes"
