"""Three `serac server` nodes on one PostgreSQL and one blob directory, behind nginx as a load
balancer would put them (round-robin, keep-alive upstream connections, request bodies streamed, the
client's Host passed through so SigV4 signatures verify), driven by real clients:

- S3 objects are linearizable registers, even while nodes are killed with SIGKILL and restarted and
  PostgreSQL crashes and comes back: boto3 clients, most spread over the nodes by nginx and some
  pinned to one node, PUT, GET, PUT If-None-Match: *, PUT If-Match and DELETE a handful of keys at
  once while a nemesis injects those faults; the recorded history (a request that got no definite
  answer may or may not have taken effect) is checked by serac-lincheck, Porcupine's search against
  a register with compare-and-set (tests/linearizability/).
- An Iceberg table's snapshot history is linearizable under the same faults: PyIceberg clients,
  through nginx and pinned to nodes, append (each append's snapshot id the value) and load the
  table (its snapshot log), checked by serac-lincheck as a list that appends grow.
- A listing through any node includes every acknowledged PUT and leaves out every acknowledged DELETE.
- PyIceberg appends committed at once by several clients through nginx all land: rows and snapshots
  are those of the acknowledged appends, the snapshot log's sequence numbers strictly increase and no
  two snapshots share a parent (no commit forked the table).
- An access key created on one node works through nginx, on every node, within a second; one
  disabled stops working within about 1.5 s.

Everything is on loopback; nginx runs from a configuration in a temporary directory, PostgreSQL is
this module's own (the faults stop it)."""
from __future__ import annotations

import dataclasses
import hashlib
import itertools
import json
import os
import random
import socket
import subprocess
import threading
import time
import uuid
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pytest
import requests
import urllib3
from botocore.exceptions import BotoCoreError, ClientError
from pyiceberg.exceptions import CommitFailedException

from catalog_util import CatalogApi, load_pyiceberg_catalog
from cluster_util import Cluster, Nginx, free_port, schema_url
from pg_util import Postgres, start_postgres, stop_postgres
from s3util import SeracAdmin, make_client, unique_bucket_name

REPO_ROOT = Path(__file__).resolve().parent.parent
NODE_NAMES = {"node0", "node1", "node2"}

# One attempt per request: a retried PUT could take effect twice, which the register model would
# (rightly) refuse. (botocore's `max_attempts` counts retries; `total_max_attempts` counts attempts.)
# Short timeouts, so that a request to a node that stopped answering ends as an operation of unknown
# outcome rather than hanging the run.
NO_RETRIES = dict(retries={"mode": "standard", "total_max_attempts": 1}, connect_timeout=2, read_timeout=5)


# --- The nodes, nginx in front of them (cluster_util.Nginx) ----------------------------------------


@pytest.fixture(scope="module")
def pg():
    """This module's own PostgreSQL: the faults below crash it and start it again."""
    server = start_postgres()
    try:
        yield server
    finally:
        stop_postgres(server)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory, pg):
    nodes = Cluster(tmp_path_factory.mktemp("cluster"), schema_url(pg, "linearizable"))
    for node in nodes.nodes:
        # A fixed port: a killed node comes back at the address nginx's upstream names.
        node.extra_args += ["--address", f"127.0.0.1:{free_port()}"]
    try:
        nodes.start()
        yield nodes
    finally:
        nodes.stop()


@pytest.fixture(scope="module")
def proxy(cluster):
    nginx = Nginx([f"127.0.0.1:{node.port}" for node in cluster.nodes])
    try:
        nginx.start()
        yield nginx
    finally:
        nginx.stop()


def answering_node(response_or_error) -> str | None:
    """Which node answered (serac's x-serac-node header), from a boto3 response or ClientError."""
    response = getattr(response_or_error, "response", response_or_error)
    return response.get("ResponseMetadata", {}).get("HTTPHeaders", {}).get("x-serac-node")


# --- Faults ------------------------------------------------------------------------------------------


def postgres_accepts(pg: Postgres) -> bool:
    try:
        with socket.create_connection((pg.host, pg.port), timeout=1):
            return True
    except OSError:
        return False


class Nemesis(threading.Thread):
    """Injects faults at set moments of a run, as Jepsen's nemesis does, and logs when each began
    and ended: a node killed with SIGKILL (its in-flight requests die with it; nothing is flushed)
    and started again a moment later at the same address, and PostgreSQL stopped in immediate mode
    (a crash: connections cut, recovery from the WAL on start) and started again. `heal` puts
    everything back, whatever happened to the run."""

    def __init__(self, cluster: Cluster, pg: Postgres, origin_ns: int):
        super().__init__(daemon=True)
        self.cluster, self.pg, self.origin_ns = cluster, pg, origin_ns
        first, second = random.sample(cluster.nodes, 2)
        # Down long enough for clients to hit the dead node or the missing database many times over.
        self.plan = [(1.5, "kill", first), (2.3, "restart", first),
                     (3.6, "stop postgres", None), (4.4, "start postgres", None),
                     (5.6, "kill", second), (6.4, "restart", second)]
        self.log: list[str] = []
        self.problems: list[str] = []

    def seconds(self) -> float:
        return (time.monotonic_ns() - self.origin_ns) / 1e9

    def run(self) -> None:
        for at, action, node in self.plan:
            time.sleep(max(0.0, at - self.seconds()))
            began = self.seconds()
            try:
                if action == "kill":
                    node.kill()
                elif action == "restart":
                    node.start()
                elif action == "stop postgres":
                    self.pg.stop("immediate")
                else:
                    self.pg.start()
            except BaseException as error:  # noqa: BLE001  (a fault that did not happen fails the test)
                self.problems.append(f"{action} {node.name if node else ''}: {type(error).__name__}: {error}")
                return
            self.log.append(f"{began:6.2f}-{self.seconds():6.2f} s  {action} {node.name if node else ''}")

    def heal(self) -> None:
        self.join(30)
        if not postgres_accepts(self.pg):
            self.pg.start()
        for node in self.cluster.nodes:
            if not node.alive():
                node.start()


def wait_until_serving(cluster: Cluster, proxy: Nginx, timeout_s: float = 30) -> None:
    """Every node ready, and nginx passing requests to each of them again (it leaves out a node that
    failed for its fail_timeout)."""
    deadline = time.monotonic() + timeout_s
    for node in cluster.nodes:
        node.wait_ready(timeout_s)
    seen: set[str] = set()
    while seen != NODE_NAMES:
        assert time.monotonic() < deadline, f"nginx reaches only {seen}"
        response = requests.get(proxy.endpoint + "/_serac/health/ready", timeout=5)
        if response.status_code == 200:
            seen.add(response.headers.get("x-serac-node"))
        time.sleep(0.02)


# --- The linearizability checker ---------------------------------------------------------------------


def lincheck_binary() -> Path:
    """$SERAC_LINCHECK (relative paths from the repository root), else build/tools/serac-lincheck."""
    path = Path(os.environ.get("SERAC_LINCHECK", "build/tools/serac-lincheck"))
    if not path.is_absolute():
        path = REPO_ROOT / path
    if not os.access(path, os.X_OK):
        pytest.fail(f"the linearizability checker is missing: no executable {path}; build it with "
                    "`scripts/install-deps.sh --test` (tests/linearizability/README.md) or set SERAC_LINCHECK")
    return path


def lincheck(history: list[dict], path: Path, context: str) -> None:
    """Checks a history (serac-lincheck's JSON format) written to `path`; fails the test with the
    checker's report and an HTML visualization beside the history unless it is linearizable."""
    path.write_text(json.dumps(history, indent=0))
    binary = str(lincheck_binary())
    result = subprocess.run([binary, "--timeout", "20s", str(path)], capture_output=True, text=True, timeout=60)
    if result.returncode != 0:
        # Drawing checks the failing keys again, so it is done only when there is something to see.
        html = path.with_suffix(".html")
        subprocess.run([binary, "--timeout", "20s", "--visualize", str(html), str(path)], capture_output=True,
                       timeout=60)
        verdict = {1: "NOT LINEARIZABLE", 3: "undecided (checker timed out)"}.get(result.returncode, "checker failed")
        report = result.stdout + result.stderr
        if len(report) > 12000:  # a table's loads are long lines: the verdict is at both ends
            report = report[:8000] + "\n[...]\n" + report[-4000:]
        pytest.fail(f"{verdict} (exit {result.returncode}); history {path}, visualization {html}\n{context}\n"
                    f"{report}", pytrace=False)


class ClientIds:
    """Checker client ids. A client whose request went unanswered continues under a new id, as a
    Jepsen process does: the old request may still be in flight, so the two are not one sequence."""

    def __init__(self):
        self.counter = itertools.count()
        self.lock = threading.Lock()

    def next(self) -> int:
        with self.lock:
            return next(self.counter)


def now_ns(origin_ns: int) -> int:
    return time.monotonic_ns() - origin_ns


# Failures that leave a request's outcome unknown: no answer (refused or cut connection, timeout).
NO_ANSWER = (BotoCoreError, urllib3.exceptions.HTTPError, requests.RequestException, OSError)


# --- S3 objects as registers -------------------------------------------------------------------------

KEYS = [f"reg/{n}" for n in range(5)]
OPS_PER_KEY = 1000  # a bound on the checker's work; the run normally ends on time first
RUN_SECONDS = 8.0  # the nemesis' plan ends by about 7 s
THINK_S = 0.02  # at most, between a client's requests: spreads a bounded history over the whole run
BACKOFF_S = 0.1  # after no answer, as a real client would: without it a client spins through an outage


def etag_of(value: str) -> str:
    return f'"{hashlib.md5(value.encode()).hexdigest()}"'


@dataclasses.dataclass
class RegisterOp:
    """One request on one key as a client saw it, in the checker's terms. `kind`: put | get |
    put_if_absent | cas | delete; `value` what a write wrote, `expect` the value whose ETag a cas
    sent in If-Match, `read` what a get read (None: not found); times in ns from the run's start;
    `ret` None when the outcome is unknown; `ok` false when a precondition failed (412, or 404 for an
    If-Match on a missing object). `answer` says how it ended, for the summary."""
    client: int
    name: str
    key: str
    kind: str
    value: str | None = None
    expect: str | None = None
    call: int = 0
    ret: int | None = None
    ok: bool = True
    read: str | None = None
    node: str | None = None
    answer: str = "no answer"

    @property
    def in_history(self) -> bool:
        # A read that got no answer says nothing. A conditional write refused with 409 (a concurrent
        # conditional write on the key won) certainly did not take effect and observed nothing: as
        # if never sent.
        return not (self.ret is None and self.kind == "get") and self.answer != "409"

    def record(self) -> dict:
        return {"client": self.client, "key": self.key, "op": self.kind, "value": self.value,
                "expect": self.expect, "output": {"ok": self.ok, "value": self.read}, "call": self.call,
                "return": self.ret}

    @property
    def result(self) -> str:
        if self.ret is None:
            return "unknown"
        if self.kind == "get":
            return "value" if self.read is not None else "absent"
        return "ok" if self.ok else "failed"


class RegisterWorkload:
    """Clients issuing random operations on KEYS until time is up (or a key's budget is spent)."""

    def __init__(self, bucket: str, origin_ns: int):
        self.bucket = bucket
        self.origin_ns = origin_ns
        self.lock = threading.Lock()
        self.budget = {key: OPS_PER_KEY for key in KEYS}
        self.ops: list[RegisterOp] = []
        self.problems: list[str] = []
        self.ids = ClientIds()

    def next_op(self, rng: random.Random, client: int, name: str, wanted: str | None) -> RegisterOp | None:
        """A new operation on `wanted` if it has budget left, else on a random key; None at the end."""
        with self.lock:
            open_keys = [key for key, left in self.budget.items() if left > 0]
            if not open_keys or now_ns(self.origin_ns) > RUN_SECONDS * 1e9:
                return None
            key = wanted if wanted in open_keys else rng.choice(open_keys)
            self.budget[key] -= 1
            op = RegisterOp(client, name, key, "get")
            self.ops.append(op)
            return op

    def run(self, name: str, s3) -> None:
        try:
            self.issue(name, s3)
        except BaseException as error:  # noqa: BLE001  (a broken client thread fails the test)
            self.problems.append(f"{name}: {type(error).__name__}: {error}")

    def issue(self, name: str, s3) -> None:
        rng = random.Random()
        client = self.ids.next()
        last_seen: dict[str, str] = {}  # what this client last read or wrote on a key
        read_to_modify: str | None = None  # a key just read, to compare-and-set next
        count = 0
        while (op := self.next_op(rng, client, name, read_to_modify)) is not None:
            count += 1
            value = f"{name}-{count}-{uuid.uuid4().hex[:6]}"  # never written twice
            expected = last_seen.get(op.key)
            roll = rng.random()
            if read_to_modify == op.key and expected is not None:
                roll = 0.8  # read-modify-write: a cas on what was just read, which often wins
            if roll < 0.35 or (0.70 <= roll < 0.90 and expected is None):
                pass  # a get
            elif roll < 0.55:
                op.kind, op.value = "put", value
            elif roll < 0.70:
                op.kind, op.value = "put_if_absent", value
            elif roll < 0.90:
                op.kind, op.value, op.expect = "cas", value, expected
            else:
                op.kind = "delete"
            self.perform(s3, op)
            read_to_modify = None
            time.sleep(rng.uniform(0, THINK_S))
            if op.ret is None:
                if op.kind != "get":
                    client = self.ids.next()
                time.sleep(BACKOFF_S)
                continue
            if op.kind == "get" and rng.random() < 0.5:
                read_to_modify = op.key
            seen = op.read if op.kind == "get" else op.value if op.ok and op.kind != "delete" else None
            if seen is not None:
                last_seen[op.key] = seen
            elif op.kind == "get":
                last_seen.pop(op.key, None)

    def perform(self, s3, op: RegisterOp) -> None:
        args = dict(Bucket=self.bucket, Key=op.key)
        op.call = now_ns(self.origin_ns)
        try:
            if op.kind == "get":
                response = s3.get_object(**args)
                body = response["Body"].read().decode()
                if response["ETag"] != etag_of(body):
                    self.problems.append(f"GET {op.key} gave ETag {response['ETag']} for {body!r}")
                op.read = body
            elif op.kind == "delete":
                response = s3.delete_object(**args)
            else:
                conditions = ({"IfNoneMatch": "*"} if op.kind == "put_if_absent" else
                              {"IfMatch": etag_of(op.expect)} if op.kind == "cas" else {})
                response = s3.put_object(**args, Body=op.value.encode(), **conditions)
                if response["ETag"] != etag_of(op.value):
                    self.problems.append(f"PUT {op.key} {op.value!r} answered ETag {response['ETag']}")
            op.ret = now_ns(self.origin_ns)
            op.node, op.answer = answering_node(response), "200"
        except ClientError as error:
            returned = now_ns(self.origin_ns)
            op.node = answering_node(error)
            status = error.response["ResponseMetadata"]["HTTPStatusCode"]
            code = error.response["Error"].get("Code")
            op.answer = str(status)
            if (op.kind, status) == ("get", 404):
                op.ret = returned  # not found: read as absent
            elif (op.kind, status) in {("put_if_absent", 412), ("cas", 412), ("cas", 404)}:
                op.ret, op.ok = returned, False  # the precondition did not hold: nothing written
            elif op.kind in ("put_if_absent", "cas") and (status, code) == (409, "ConditionalRequestConflict"):
                pass  # left out of the history (see in_history)
            elif status < 500:
                self.problems.append(f"{op.name}: {op.kind} {op.key}: unexpected {status} {code}")
            # A 5xx (or nginx's 502 for a node that went away) does not say whether it happened.
        except NO_ANSWER as error:
            op.answer = type(error).__name__  # no answer: it may or may not have happened


def test_s3_objects_stay_linearizable_while_nodes_and_postgres_crash(cluster, proxy, pg, tmp_path):
    bucket = unique_bucket_name("lin")
    make_client(proxy.endpoint).create_bucket(Bucket=bucket)
    # Six clients through nginx (round-robin spreads each one's requests over the nodes) and one
    # pinned to each node.
    clients = [(f"lb{n}", make_client(proxy.endpoint, **NO_RETRIES)) for n in range(6)]
    clients += [(f"pin{n}", make_client(node.endpoint, **NO_RETRIES)) for n, node in enumerate(cluster.nodes)]
    origin_ns = time.monotonic_ns()
    workload = RegisterWorkload(bucket, origin_ns)
    nemesis = Nemesis(cluster, pg, origin_ns)
    threads = [threading.Thread(target=workload.run, args=(name, s3)) for name, s3 in clients]
    try:
        nemesis.start()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        nemesis.heal()
        wait_until_serving(cluster, proxy)
    assert not nemesis.problems, nemesis.problems
    ops = workload.ops

    history = [op.record() for op in ops if op.in_history]
    outcomes = Counter((op.kind, op.result) for op in ops if op.in_history)
    answers = Counter(op.answer for op in ops)
    per_key = Counter(op.key for op in ops if op.in_history and op.ret is not None)
    summary = (f"{len(ops)} requests, {len(history)} in the history; answered per key {dict(per_key)}; "
               f"outcomes {dict(outcomes)}; answers {dict(answers)}\nfaults:\n  " + "\n  ".join(nemesis.log))
    lincheck(history, tmp_path / "s3-history.json", summary)
    assert not workload.problems, "\n".join(workload.problems[:20])
    # The run was a real test: every key busy, conditional writes both won and lost, every node
    # answered requests that came through nginx, and every fault happened and was felt by clients.
    assert min(per_key[key] for key in KEYS) >= 60, summary
    for needed in [("put_if_absent", "ok"), ("put_if_absent", "failed"), ("cas", "ok"), ("cas", "failed"),
                   ("put", "ok"), ("delete", "ok"), ("get", "value"), ("get", "absent")]:
        assert outcomes[needed] > 0, f"no {needed}: {summary}"
    assert {op.node for op in ops if op.name.startswith("lb")} >= NODE_NAMES, summary
    assert len(nemesis.log) == len(nemesis.plan), summary
    assert any(op.ret is None and op.kind != "get" for op in ops), summary
    assert answers["503"] > 0, summary  # PostgreSQL's absence was answered, not hung on


# --- Listings ----------------------------------------------------------------------------------------


def listed_keys(s3, bucket: str, version: int) -> tuple[set[str], str | None]:
    if version == 2:
        response = s3.list_objects_v2(Bucket=bucket)
    else:
        response = s3.list_objects(Bucket=bucket)
    assert not response.get("IsTruncated"), response
    return {item["Key"] for item in response.get("Contents", [])}, answering_node(response)


def test_listings_follow_acknowledged_writes_on_every_node(cluster, proxy):
    bucket = unique_bucket_name("lst")
    make_client(proxy.endpoint).create_bucket(Bucket=bucket)
    failures: list[str] = []
    errors: list[BaseException] = []
    balanced_listers: set[str] = set()  # the nodes that answered listings through nginx

    def writer(index: int) -> None:
        # Each writer has its own clients: one per node, and one through nginx that lists three
        # times in a row, which round-robin spreads over the nodes.
        try:
            direct = [make_client(node.endpoint) for node in cluster.nodes]
            balanced = make_client(proxy.endpoint)
            listers = direct + [balanced] * 3
            rng = random.Random(index)
            for round_number in range(8):
                key = f"w{index}/r{round_number}"
                put_via, delete_via = rng.choice(direct + [balanced]), rng.choice(direct + [balanced])
                written = answering_node(put_via.put_object(Bucket=bucket, Key=key, Body=b"x"))
                for n, lister in enumerate(listers):
                    keys, node = listed_keys(lister, bucket, 2 if n % 2 else 1)
                    if lister is balanced:
                        balanced_listers.add(node)
                    if key not in keys:
                        failures.append(f"{key} put via {written}, missing from a listing by {node}")
                deleted = answering_node(delete_via.delete_object(Bucket=bucket, Key=key))
                for n, lister in enumerate(listers):
                    keys, node = listed_keys(lister, bucket, 1 if n % 2 else 2)
                    if key in keys:
                        failures.append(f"{key} deleted via {deleted}, still in a listing by {node}")
        except BaseException as error:  # noqa: BLE001  (reported below)
            errors.append(error)

    threads = [threading.Thread(target=writer, args=(i,)) for i in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors
    assert not failures, "\n".join(failures)
    assert balanced_listers == NODE_NAMES, balanced_listers
    assert listed_keys(make_client(proxy.endpoint), bucket, 2)[0] == set()


# --- Catalog commits ---------------------------------------------------------------------------------
# --- Catalog commits ---------------------------------------------------------------------------------

WRITERS = 4
APPENDS_PER_WRITER = 5
ROWS_PER_APPEND = 3


def test_concurrent_catalog_commits_through_nginx_all_land_in_one_line(proxy, cluster):
    warehouse = unique_bucket_name("linwh")
    CatalogApi(proxy.endpoint).create_warehouse(warehouse)
    catalogs = [load_pyiceberg_catalog(proxy.endpoint, warehouse, name=f"writer{i}") for i in range(WRITERS)]
    catalogs[0].create_namespace("lin")
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("writer", pa.string())])
    # PyIceberg retries a commit that lost the race (CommitFailedException) by the table's
    # commit.retry.* properties; its default of 4 retries is too few when every writer but one loses
    # each round.
    catalogs[0].create_table("lin.t", schema=schema, properties={
        "commit.retry.num-retries": "50", "commit.retry.min-wait-ms": "10",
        "commit.retry.max-wait-ms": "500", "commit.retry.total-timeout-ms": "60000"})
    acknowledged: list[tuple[int, int]] = []
    errors: list[str] = []
    start = threading.Barrier(WRITERS)

    def ids(writer: int, append: int) -> list[int]:
        return [writer * 1000 + append * 10 + row for row in range(ROWS_PER_APPEND)]

    def append_from(writer: int) -> None:
        try:
            table = catalogs[writer].load_table("lin.t")
            start.wait()
            for append in range(APPENDS_PER_WRITER):
                rows = ids(writer, append)
                try:
                    table.append(pa.table({"id": rows, "writer": [f"w{writer}"] * len(rows)}, schema=schema))
                    acknowledged.append((writer, append))
                except CommitFailedException as error:  # certainly not landed: retries ran out
                    errors.append(f"writer {writer} append {append}: {error}")
        except BaseException as error:  # noqa: BLE001  (reported below)
            errors.append(f"writer {writer}: {type(error).__name__}: {error}")

    threads = [threading.Thread(target=append_from, args=(i,)) for i in range(WRITERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    table = load_pyiceberg_catalog(proxy.endpoint, warehouse, name="reader").load_table("lin.t")
    snapshots = table.snapshots()
    by_id = {snapshot.snapshot_id: snapshot for snapshot in snapshots}
    # Every acknowledged append is in the table, and nothing refused is.
    rows = sorted(table.scan().to_arrow()["id"].to_pylist())
    assert rows == sorted(i for writer, append in acknowledged for i in ids(writer, append)), errors
    assert len(snapshots) == len(acknowledged), errors
    # The snapshot log is one line: sequence numbers strictly increase along it, and each snapshot has
    # a parent of its own (two snapshots on one parent: two commits both won from the same base).
    log = table.history()
    assert [entry.snapshot_id for entry in log] == [snapshot.snapshot_id for snapshot in snapshots]
    sequence = [by_id[entry.snapshot_id].sequence_number for entry in log]
    assert all(a < b for a, b in zip(sequence, sequence[1:])), sequence
    parents = [snapshot.parent_snapshot_id for snapshot in snapshots]
    assert len(set(parents)) == len(parents), f"snapshots share a parent: {parents}"
    assert parents[0] is None and all(parent in by_id for parent in parents[1:]), parents
    assert table.current_snapshot().snapshot_id == log[-1].snapshot_id
    # Each node, asked directly, has the same table.
    for i, node in enumerate(cluster.nodes):
        seen = load_pyiceberg_catalog(node.endpoint, warehouse, name=f"direct{i}").load_table("lin.t")
        assert seen.metadata_location == table.metadata_location, node.name
    assert not errors, errors
    assert len(acknowledged) == WRITERS * APPENDS_PER_WRITER
    # The commits raced for real: nginx's log shows commits won on more than one node, and lost.
    commits = proxy.logged_requests(f"POST /_iceberg/v1/{warehouse}/namespaces/lin/tables/t ")
    assert len({upstream for status, upstream in commits if status == 200}) >= 2, commits
    assert sum(status == 200 for status, _ in commits) == len(acknowledged), commits
    assert any(status == 409 for status, _ in commits), commits


# --- Table histories ---------------------------------------------------------------------------------

TABLE = "lin.history"
MARKER = "lin-op"  # a snapshot summary property naming the append that made the snapshot
# PyIceberg retries a commit that lost the race (CommitFailedException) by the table's
# commit.retry.* properties; its default of 4 retries is too few when every writer but one loses
# each round.
COMMIT_RETRIES = {"commit.retry.num-retries": "50", "commit.retry.min-wait-ms": "10",
                  "commit.retry.max-wait-ms": "500", "commit.retry.total-timeout-ms": "60000"}


def table_catalog(endpoint: str, warehouse: str, name: str):
    """A PyIceberg catalog whose requests time out (its REST client sets no timeout of its own, and
    one request to a node that stopped answering would hang the client) and are sent once (its
    SigV4 adapter would resend a request whose connection failed, up to 10 times)."""
    catalog = load_pyiceberg_catalog(endpoint, warehouse, name=name,
                                     **{"s3.connect-timeout": "2", "s3.request-timeout": "10",
                                        "rest.sigv4.max-retries": "0"})
    session = catalog._session
    request = session.request
    session.request = lambda method, url, **kwargs: request(method, url, **{"timeout": (2, 10), **kwargs})
    return catalog


def snapshot_made_by(metadata, marker: str) -> int | None:
    for snapshot in metadata.snapshots:
        if snapshot.summary is not None and snapshot.summary[MARKER] == marker:
            return snapshot.snapshot_id
    return None


@dataclasses.dataclass
class TableOp:
    """An append or a load of the table as a client saw it. An append is named by `marker` (in its
    snapshot's summary); `snapshot` is its snapshot id once known. A load reads the snapshot log.
    Times in ns from the run's start; `ret` None when the outcome is unknown."""
    client: int
    name: str
    kind: str
    marker: str | None = None
    snapshot: int | None = None
    loaded: list[int] | None = None
    call: int = 0
    ret: int | None = None
    error: str | None = None

    @property
    def in_history(self) -> bool:
        # A load that failed says nothing. An append of unknown outcome whose snapshot no load shows
        # (not even the final one) can only be placed after every load, where nothing observes it:
        # the history is linearizable with it exactly when it is without it. (Given a placeholder id
        # instead, it would change nothing but the checker's work: Porcupine tries it at every point
        # among the concurrent appends before each load, and a few such appends make a history of a
        # hundred operations time out.)
        return self.ret is not None or (self.kind == "append" and self.snapshot is not None)

    def record(self) -> dict:
        if self.kind == "load":
            output = {"value": ",".join(str(snapshot) for snapshot in self.loaded)}
            return {"client": self.client, "key": TABLE, "op": "load", "output": output, "call": self.call,
                    "return": self.ret}
        return {"client": self.client, "key": TABLE, "op": "append", "value": str(self.snapshot),
                "output": {"ok": True}, "call": self.call, "return": self.ret}


class TableWorkload:
    """Clients appending to the table and loading it, at random, until time is up."""

    def __init__(self, schema: pa.Schema, origin_ns: int):
        self.schema, self.origin_ns = schema, origin_ns
        self.ops: list[TableOp] = []
        self.problems: list[str] = []
        self.ids = ClientIds()

    def run(self, name: str, catalog) -> None:
        try:
            self.issue(name, catalog)
        except BaseException as error:  # noqa: BLE001  (a broken client thread fails the test)
            self.problems.append(f"{name}: {type(error).__name__}: {error}")

    def issue(self, name: str, catalog) -> None:
        rng = random.Random()
        client = self.ids.next()
        table = catalog.load_table(TABLE)
        for count in itertools.count():
            if now_ns(self.origin_ns) > RUN_SECONDS * 1e9:
                return
            if rng.random() < 0.5:
                op = TableOp(client, name, "append", marker=f"{name}-{count}")
                self.ops.append(op)
                rows = pa.table({"id": [count], "client": [name]}, schema=self.schema)
                op.call = now_ns(self.origin_ns)
                try:
                    table.append(rows, snapshot_properties={MARKER: op.marker})
                    op.ret = now_ns(self.origin_ns)
                    # The table as committed (the commit's answer, or the reload that found a lost
                    # answer's snapshot landed), the new snapshot in it.
                    op.snapshot = snapshot_made_by(table.metadata, op.marker)
                    if op.snapshot is None:
                        self.problems.append(f"{name}: append {op.marker} acknowledged without its snapshot")
                except Exception as error:  # noqa: BLE001  (any failure: it may or may not have committed)
                    op.error = type(error).__name__
            else:
                op = TableOp(client, name, "load")
                self.ops.append(op)
                op.call = now_ns(self.origin_ns)
                try:
                    loaded = catalog.load_table(TABLE)
                    op.ret = now_ns(self.origin_ns)
                    op.loaded = [entry.snapshot_id for entry in loaded.history()]
                    table = loaded  # a fresher base for this client's next append
                except Exception as error:  # noqa: BLE001  (a failed load is left out)
                    op.error = type(error).__name__
            if op.ret is None:
                if op.kind == "append":
                    client = self.ids.next()
                time.sleep(BACKOFF_S)


def test_a_table_history_stays_linearizable_while_nodes_and_postgres_crash(cluster, proxy, pg, tmp_path):
    warehouse = unique_bucket_name("linhist")
    CatalogApi(proxy.endpoint).create_warehouse(warehouse)
    setup = load_pyiceberg_catalog(proxy.endpoint, warehouse, name="setup")
    setup.create_namespace("lin")
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("client", pa.string())])
    setup.create_table(TABLE, schema=schema, properties=COMMIT_RETRIES)
    # Two clients through nginx and one pinned to each node.
    clients = [(f"lb{n}", table_catalog(proxy.endpoint, warehouse, f"lb{n}")) for n in range(2)]
    clients += [(f"pin{n}", table_catalog(node.endpoint, warehouse, f"pin{n}")) for n, node in enumerate(cluster.nodes)]
    origin_ns = time.monotonic_ns()
    workload = TableWorkload(schema, origin_ns)
    nemesis = Nemesis(cluster, pg, origin_ns)
    threads = [threading.Thread(target=workload.run, args=(name, catalog)) for name, catalog in clients]
    try:
        nemesis.start()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        nemesis.heal()
        wait_until_serving(cluster, proxy)
    assert not nemesis.problems, nemesis.problems
    assert not workload.problems, "\n".join(workload.problems[:20])

    # A last load, with every fault over, is part of the history too; it also names the snapshot of
    # each append whose answer was lost but which committed.
    final = TableOp(workload.ids.next(), "final", "load", call=now_ns(origin_ns))
    table = table_catalog(proxy.endpoint, warehouse, "final").load_table(TABLE)
    final.ret = now_ns(origin_ns)
    final.loaded = [entry.snapshot_id for entry in table.history()]
    ops = workload.ops + [final]
    for op in ops:
        if op.kind == "append" and op.ret is None:
            op.snapshot = snapshot_made_by(table.metadata, op.marker)

    history = [op.record() for op in ops if op.in_history]
    outcomes = Counter((op.kind, "ok" if op.ret is not None else "unknown") for op in ops)
    errors = Counter(op.error for op in ops if op.error)
    landed_unknown = sum(1 for op in ops if op.kind == "append" and op.ret is None and op.snapshot is not None)
    summary = (f"{len(ops)} operations, {dict(outcomes)} ({landed_unknown} unknown appends landed), "
               f"errors {dict(errors)}, {len(final.loaded)} snapshots in the end\nfaults:\n  "
               + "\n  ".join(nemesis.log))
    lincheck(history, tmp_path / "table-history.json", summary)
    # The run was a real test: many appends and loads, answered operations for every client
    # (so every node served some, the nodes that were killed included), and every fault happened and
    # was felt.
    for name, _ in clients:
        assert any(op.name == name and op.ret is not None for op in ops), f"{name}: {summary}"
    assert outcomes[("append", "ok")] >= 10 and outcomes[("load", "ok")] >= 10, summary
    assert len(nemesis.log) == len(nemesis.plan), summary
    assert errors, summary


# --- IAM ---------------------------------------------------------------------------------------------


def poll(s3, until: float) -> list[tuple]:
    """Requests until `until`: (sent at, status, node answering)."""
    seen = []
    while (sent := time.monotonic()) < until:
        try:
            response = s3.list_buckets()
            seen.append((sent, 200, answering_node(response)))
        except ClientError as error:
            seen.append((sent, error.response["ResponseMetadata"]["HTTPStatusCode"], answering_node(error)))
        time.sleep(0.02)
    return seen


def test_iam_changes_reach_every_node_behind_nginx(cluster, proxy):
    user = f"lin-{uuid.uuid4().hex[:8]}"
    access_key, secret_key = f"AKLIN{uuid.uuid4().hex[:12].upper()}", f"secret-{uuid.uuid4().hex}"
    SeracAdmin(cluster.nodes[0].endpoint).create_user(user, policies=["readwrite"])
    s3 = make_client(proxy.endpoint, access_key, secret_key, **NO_RETRIES)
    # A node looks for other nodes' IAM changes when its view is a second old (kIamRefreshInterval),
    # so a request sent a second after the key was created works whichever node nginx gives it to.
    SeracAdmin(cluster.nodes[1].endpoint).create_key(user, access_key, secret_key)
    created = time.monotonic()
    seen = poll(s3, created + 1.6)
    late = [(round(sent - created, 3), status, node) for sent, status, node in seen if sent >= created + 1.0]
    assert all(status == 200 for _, status, _ in late), f"refused a second after creation: {late}"
    assert {node for _, _, node in late} == NODE_NAMES, late

    SeracAdmin(cluster.nodes[2].endpoint).set_key_enabled(access_key, False)
    disabled = time.monotonic()
    seen = poll(s3, disabled + 2.1)
    late = [(round(sent - disabled, 3), status, node) for sent, status, node in seen if sent >= disabled + 1.5]
    assert all(status == 403 for _, status, _ in late), f"still accepted 1.5 s after disabling: {late}"
    assert {node for _, _, node in late} == NODE_NAMES, late
