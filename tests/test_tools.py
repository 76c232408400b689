"""Real client tools against the server: AWS CLI, rclone, s3cmd, s3fs (fsspec) and PyArrow."""

import filecmp
import os
import random
import shutil
import subprocess
from pathlib import Path

import pytest

from s3util import ACCESS_KEY, REGION, SECRET_KEY

MiB = 1024 * 1024
UNICODE_PARTS = ["données", "日本", "emoji 😀", "space dir", "ключ", "plus+sign", "naïve café"]
# The mixed sizes of the small trees, and the tiny files of the trees with thousands of files (which
# measure per-request handling, not bandwidth, and so stay quick).
MIXED_SIZES = (0, 1, 100, 4096, 70_000, 200_000)
TINY_SIZES = (0, 1, 17, 100, 1000, 4096)


def tool(name: str) -> str:
    path = shutil.which(name)
    assert path, f"{name} is not installed (see scripts/install-deps.sh)"
    return path


def run(args, env=None, timeout=120, cwd=None) -> subprocess.CompletedProcess:
    result = subprocess.run(args, env=env, capture_output=True, timeout=timeout, cwd=cwd)
    assert result.returncode == 0, (f"{args[0]} failed ({result.returncode}):\nstdout: "
                                    f"{result.stdout.decode(errors='replace')[-3000:]}\n"
                                    f"stderr: {result.stderr.decode(errors='replace')[-3000:]}")
    return result


def make_tree(root: Path, file_count: int, seed: int, big_file_bytes: int = 0, sizes=MIXED_SIZES) -> list[str]:
    rng = random.Random(seed)
    names = []
    for index in range(file_count):
        depth = rng.randint(0, 3)
        parts = [rng.choice(UNICODE_PARTS) for _ in range(depth)]
        relative = Path(*parts, f"file-{index} {rng.choice(UNICODE_PARTS)}.bin") if parts else Path(
            f"file-{index}.bin")
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(rng.randbytes(rng.choice(sizes)))
        names.append(str(relative))
    if big_file_bytes:
        (root / "big").mkdir(exist_ok=True)
        (root / "big" / "large file.bin").write_bytes(os.urandom(big_file_bytes))
        names.append("big/large file.bin")
    return sorted(names)


def assert_trees_equal(left: Path, right: Path) -> None:
    left_files = sorted(str(p.relative_to(left)) for p in left.rglob("*") if p.is_file())
    right_files = sorted(str(p.relative_to(right)) for p in right.rglob("*") if p.is_file())
    assert left_files == right_files
    mismatched = [name for name in left_files if not filecmp.cmp(left / name, right / name, shallow=False)]
    assert mismatched == []


# --- AWS CLI -----------------------------------------------------------------------------------------------


@pytest.fixture
def aws_env(tmp_path):
    env = dict(os.environ)
    env.update(AWS_ACCESS_KEY_ID=ACCESS_KEY, AWS_SECRET_ACCESS_KEY=SECRET_KEY, AWS_DEFAULT_REGION=REGION,
               AWS_CONFIG_FILE=str(tmp_path / "no-config"), AWS_SHARED_CREDENTIALS_FILE=str(tmp_path / "no-creds"),
               AWS_EC2_METADATA_DISABLED="true", AWS_PAGER="", AWS_MAX_ATTEMPTS="1", AWS_RETRY_MODE="standard")
    return env


def aws(server, env, *args, timeout=180):
    # A short read timeout turns a stalled exchange into a clear failure instead of a slow pass.
    return run([tool("aws"), "--endpoint-url", server.endpoint, "--cli-read-timeout", "20", *args], env=env,
               timeout=timeout)


AWS_CLI_TREE_FILES = 2000


def list_keys(s3, bucket, prefix):
    keys = []
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
        keys += [o["Key"][len(prefix):] for o in page.get("Contents", [])]
    return sorted(keys)


def change_some_files(root: Path, names: list[str], seed: int) -> tuple[list[str], list[str]]:
    """Rewrites a few files with a new size and removes a few others; returns (changed, removed)."""
    rng = random.Random(seed)
    picked = rng.sample([n for n in names if not n.startswith("big/")], 6)
    changed, removed = picked[:3], picked[3:]
    for name in changed:
        path = root / name
        path.write_bytes(path.read_bytes() + b"changed " + name.encode())
    for name in removed:
        (root / name).unlink()
    return changed, removed


@pytest.mark.timeout(420)
def test_aws_cli_sync_both_ways(server, s3, bucket, aws_env, tmp_path):
    source = tmp_path / "source"
    names = make_tree(source, AWS_CLI_TREE_FILES, seed=1, big_file_bytes=9 * MiB + 3,
                      sizes=TINY_SIZES + (70_000,))
    assert len(names) > AWS_CLI_TREE_FILES
    aws(server, aws_env, "s3", "sync", str(source), f"s3://{bucket}/tree/", timeout=300)
    assert list_keys(s3, bucket, "tree/") == names

    # A second sync finds nothing to do: sizes and modification times came back right.
    again = aws(server, aws_env, "s3", "sync", str(source), f"s3://{bucket}/tree/", timeout=300)
    assert again.stdout.strip() == b""

    target = tmp_path / "target"
    aws(server, aws_env, "s3", "sync", f"s3://{bucket}/tree/", str(target), timeout=300)
    assert_trees_equal(source, target)

    # Incremental, both ways: local changes go up (with --delete), then come down into the copy.
    changed, removed = change_some_files(source, names, seed=11)
    up = aws(server, aws_env, "s3", "sync", "--delete", "--no-progress", str(source), f"s3://{bucket}/tree/",
             timeout=300)
    assert sorted(line.split(":")[0] for line in up.stdout.decode().splitlines()) == (
        ["delete"] * len(removed) + ["upload"] * len(changed))
    assert list_keys(s3, bucket, "tree/") == sorted(set(names) - set(removed))
    down = aws(server, aws_env, "s3", "sync", "--delete", "--no-progress", f"s3://{bucket}/tree/", str(target),
               timeout=300)
    assert sorted(line.split(":")[0] for line in down.stdout.decode().splitlines()) == (
        ["delete"] * len(removed) + ["download"] * len(changed))
    assert_trees_equal(source, target)

    ls = aws(server, aws_env, "s3", "ls", "--recursive", f"s3://{bucket}/tree/")
    assert len(ls.stdout.decode().strip().splitlines()) == len(names) - len(removed)

    aws(server, aws_env, "s3", "rm", "--recursive", f"s3://{bucket}/tree/", timeout=300)
    assert s3.list_objects_v2(Bucket=bucket, Prefix="tree/")["KeyCount"] == 0


def test_aws_cli_cp_and_api(server, bucket, aws_env, tmp_path):
    source = tmp_path / "in é.txt"
    source.write_bytes(b"hello from the aws cli\n" * 1000)
    aws(server, aws_env, "s3", "cp", str(source), f"s3://{bucket}/cli/in é.txt")
    out = tmp_path / "out.txt"
    aws(server, aws_env, "s3", "cp", f"s3://{bucket}/cli/in é.txt", str(out))
    assert out.read_bytes() == source.read_bytes()

    aws(server, aws_env, "s3api", "put-object", "--bucket", bucket, "--key", "api/obj", "--body", str(source),
        "--content-type", "text/plain", "--metadata", "origin=cli")
    out2 = tmp_path / "out2.txt"
    result = aws(server, aws_env, "s3api", "get-object", "--bucket", bucket, "--key", "api/obj", str(out2))
    assert b'"origin": "cli"' in result.stdout
    assert out2.read_bytes() == source.read_bytes()
    listing = aws(server, aws_env, "s3api", "list-objects-v2", "--bucket", bucket, "--prefix", "api/",
                  "--query", "Contents[].Key", "--output", "text")
    assert listing.stdout.decode().split() == ["api/obj"]

    missing = subprocess.run([tool("aws"), "--endpoint-url", server.endpoint, "s3api", "get-object", "--bucket",
                              bucket, "--key", "nope", str(tmp_path / "x")], env=aws_env, capture_output=True,
                             timeout=60)
    assert missing.returncode != 0
    assert b"NoSuchKey" in missing.stderr


def test_aws_cli_presign(server, bucket, aws_env, tmp_path):
    import requests

    source = tmp_path / "p.txt"
    source.write_bytes(b"presigned by the cli")
    aws(server, aws_env, "s3", "cp", str(source), f"s3://{bucket}/p.txt")
    url = aws(server, aws_env, "s3", "presign", f"s3://{bucket}/p.txt", "--expires-in", "60").stdout.decode().strip()
    response = requests.get(url, timeout=10)
    assert response.status_code == 200, response.text
    assert response.content == b"presigned by the cli"


# --- rclone --------------------------------------------------------------------------------------------------


@pytest.fixture
def rclone_env(server, tmp_path):
    # rclone's AWS SDK refuses a custom CA bundle with its own transport; plain HTTP needs none.
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update(RCLONE_CONFIG=str(tmp_path / "rclone.conf"), RCLONE_CONFIG_SERAC_TYPE="s3",
               RCLONE_CONFIG_SERAC_PROVIDER="Other", RCLONE_CONFIG_SERAC_ENDPOINT=server.endpoint,
               RCLONE_CONFIG_SERAC_ACCESS_KEY_ID=ACCESS_KEY, RCLONE_CONFIG_SERAC_SECRET_ACCESS_KEY=SECRET_KEY,
               RCLONE_CONFIG_SERAC_REGION=REGION, RCLONE_CONFIG_SERAC_FORCE_PATH_STYLE="true")
    return env


RCLONE_TREE_FILES = 1000


@pytest.mark.timeout(300)
def test_rclone_sync_and_check(s3, bucket, rclone_env, tmp_path):
    source = tmp_path / "source"
    names = make_tree(source, RCLONE_TREE_FILES, seed=2, big_file_bytes=6 * MiB + 11,
                      sizes=TINY_SIZES + (200_000,))
    remote = f"serac:{bucket}/rclone"
    common = ["--s3-upload-cutoff", "5M", "--s3-chunk-size", "5M", "--retries", "1", "--low-level-retries", "1"]
    run([tool("rclone"), "sync", str(source), remote, *common], env=rclone_env, timeout=240)
    run([tool("rclone"), "check", str(source), remote, *common], env=rclone_env, timeout=240)
    assert list_keys(s3, bucket, "rclone/") == names
    target = tmp_path / "target"
    run([tool("rclone"), "sync", remote, str(target), *common], env=rclone_env, timeout=240)
    run([tool("rclone"), "check", remote, str(target), *common], env=rclone_env, timeout=240)
    assert_trees_equal(source, target)

    # Delete one file locally; sync removes it remotely.
    victim = next(p for p in source.rglob("*.bin") if p.is_file())
    victim.unlink()
    run([tool("rclone"), "sync", str(source), remote, *common], env=rclone_env)
    run([tool("rclone"), "check", str(source), remote, *common], env=rclone_env)
    listing = run([tool("rclone"), "lsf", "-R", "--files-only", remote], env=rclone_env).stdout.decode()
    assert str(victim.relative_to(source)) not in listing.splitlines()


# --- s3cmd -------------------------------------------------------------------------------------------------------


@pytest.fixture
def s3cmd(server, tmp_path):
    """The s3cmd command line (path style, SigV4, plain HTTP), as a list to extend."""
    config = tmp_path / "s3cfg"
    config.write_text(f"""[default]
access_key = {ACCESS_KEY}
secret_key = {SECRET_KEY}
host_base = 127.0.0.1:{server.port}
host_bucket = 127.0.0.1:{server.port}
bucket_location = {REGION}
use_https = False
signature_v2 = False
check_ssl_certificate = False
""")
    return [tool("s3cmd"), "-c", str(config)]


def test_s3cmd_put_get_ls(s3cmd, bucket, tmp_path):
    base = s3cmd
    source = tmp_path / "s3cmd input.bin"
    source.write_bytes(os.urandom(300_000))
    run(base + ["put", str(source), f"s3://{bucket}/s3cmd/input.bin"])
    out = tmp_path / "out.bin"
    run(base + ["get", f"s3://{bucket}/s3cmd/input.bin", str(out)])
    assert out.read_bytes() == source.read_bytes()
    listing = run(base + ["ls", f"s3://{bucket}/s3cmd/"]).stdout.decode()
    assert f"s3://{bucket}/s3cmd/input.bin" in listing
    buckets = run(base + ["ls"]).stdout.decode()
    assert f"s3://{bucket}" in buckets
    run(base + ["del", f"s3://{bucket}/s3cmd/input.bin"])
    assert f"s3://{bucket}/s3cmd/input.bin" not in run(base + ["ls", f"s3://{bucket}/s3cmd/"]).stdout.decode()


S3CMD_TREE_FILES = 300


@pytest.mark.timeout(300)
def test_s3cmd_sync_unicode_tree_both_ways(s3cmd, s3, bucket, tmp_path):
    env = dict(os.environ, LC_ALL="C.UTF-8", LANG="C.UTF-8", PYTHONIOENCODING="utf-8")
    source = tmp_path / "source"
    names = make_tree(source, S3CMD_TREE_FILES, seed=4, big_file_bytes=16 * MiB + 5,
                      sizes=TINY_SIZES + (70_000,))
    assert any(not name.isascii() for name in names)
    remote = f"s3://{bucket}/s3cmd-tree/"
    # s3cmd uploads the 16 MiB file in 15 MiB parts (its default multipart chunk).
    run(s3cmd + ["sync", "--no-progress", f"{source}/", remote], env=env, timeout=240)
    assert list_keys(s3, bucket, "s3cmd-tree/") == names
    # Nothing left to do: s3cmd compares sizes and MD5s (the multipart one by its stored md5).
    again = run(s3cmd + ["sync", "--no-progress", f"{source}/", remote], env=env, timeout=240)
    assert "upload:" not in again.stdout.decode()

    target = tmp_path / "target"
    target.mkdir()
    run(s3cmd + ["sync", "--no-progress", remote, f"{target}/"], env=env, timeout=240)
    assert_trees_equal(source, target)

    # Incremental, both ways: local changes and removals go up, then come down into the copy.
    changed, removed = change_some_files(source, names, seed=12)
    up = run(s3cmd + ["sync", "--no-progress", "--delete-removed", f"{source}/", remote], env=env,
             timeout=240).stdout.decode()
    assert sum(line.startswith("upload:") for line in up.splitlines()) == len(changed), up
    assert sum(line.startswith("delete:") for line in up.splitlines()) == len(removed), up
    assert list_keys(s3, bucket, "s3cmd-tree/") == sorted(set(names) - set(removed))
    run(s3cmd + ["sync", "--no-progress", "--delete-removed", remote, f"{target}/"], env=env, timeout=240)
    assert_trees_equal(source, target)


# --- s3fs ---------------------------------------------------------------------------------------------------------------


def test_s3fs_write_read_ls_rm(server, bucket):
    import s3fs

    fs = s3fs.S3FileSystem(key=ACCESS_KEY, secret=SECRET_KEY, endpoint_url=server.endpoint,
                           client_kwargs={"region_name": REGION},
                           config_kwargs={"s3": {"addressing_style": "path"}}, use_listings_cache=False)
    small = b"small s3fs object"
    with fs.open(f"{bucket}/fs/small.txt", "wb") as file:
        file.write(small)
    large = os.urandom(12 * MiB + 7)
    with fs.open(f"{bucket}/fs/dir/large.bin", "wb", block_size=5 * MiB) as file:
        for offset in range(0, len(large), MiB):
            file.write(large[offset:offset + MiB])

    assert fs.cat(f"{bucket}/fs/small.txt") == small
    with fs.open(f"{bucket}/fs/dir/large.bin", "rb") as file:
        file.seek(6 * MiB)
        assert file.read(1000) == large[6 * MiB:6 * MiB + 1000]
    assert fs.cat(f"{bucket}/fs/dir/large.bin") == large
    assert sorted(fs.ls(f"{bucket}/fs", detail=False)) == [f"{bucket}/fs/dir", f"{bucket}/fs/small.txt"]
    assert fs.info(f"{bucket}/fs/dir/large.bin")["size"] == len(large)
    assert fs.isdir(f"{bucket}/fs/dir")

    # Exclusive create, as s3fs implements mode="xb" with If-None-Match.
    with pytest.raises(FileExistsError):
        with fs.open(f"{bucket}/fs/small.txt", "xb") as file:
            file.write(b"must not replace")
    assert fs.cat(f"{bucket}/fs/small.txt") == small

    fs.rm(f"{bucket}/fs", recursive=True)
    assert not fs.exists(f"{bucket}/fs/small.txt")
    assert fs.ls(bucket, detail=False) == []


# --- PyArrow ------------------------------------------------------------------------------------------------------------------


def test_pyarrow_parquet_round_trip(server, s3, bucket):
    import pyarrow as pa
    import pyarrow.parquet as pq
    from pyarrow import fs as pafs

    filesystem = pafs.S3FileSystem(access_key=ACCESS_KEY, secret_key=SECRET_KEY,
                                   endpoint_override=f"127.0.0.1:{server.port}", scheme="http", region=REGION)
    rng = random.Random(3)
    rows = 1_500_000
    table = pa.table({
        "id": pa.array(range(rows), pa.int64()),
        "value": pa.array([rng.random() for _ in range(rows)], pa.float64()),
        "label": pa.array([UNICODE_PARTS[i % len(UNICODE_PARTS)] for i in range(rows)]),
    })
    path = f"{bucket}/warehouse/table/data.parquet"
    pq.write_table(table, path, filesystem=filesystem, compression="snappy")
    info = filesystem.get_file_info(path)
    assert info.type == pafs.FileType.File
    assert info.size == s3.head_object(Bucket=bucket, Key="warehouse/table/data.parquet")["ContentLength"]
    assert info.size > 10 * MiB  # large enough for a multipart upload

    back = pq.read_table(path, filesystem=filesystem)
    assert back.equals(table)

    # Column projection reads byte ranges from the middle of the file.
    ids = pq.read_table(path, filesystem=filesystem, columns=["id"])
    assert ids.column("id").to_pylist()[-3:] == [rows - 3, rows - 2, rows - 1]

    selector = pafs.FileSelector(f"{bucket}/warehouse", recursive=True)
    listed = sorted(i.path for i in filesystem.get_file_info(selector) if i.type == pafs.FileType.File)
    assert listed == [path]
    filesystem.delete_file(path)
    assert filesystem.get_file_info(path).type == pafs.FileType.NotFound
