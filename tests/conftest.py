"""Fixtures for the system tests: one plain-HTTP and one HTTPS `serac server` per session, boto3
clients bound to them, and a fresh bucket per test."""

from __future__ import annotations

import shutil
import tempfile
import warnings
from pathlib import Path

import pytest
import urllib3

from s3util import (ALL_SERVERS, SeracServer, make_client, make_tls_certs, unique_bucket_name)

urllib3.disable_warnings(urllib3.exceptions.InsecureRequestWarning)
warnings.filterwarnings("ignore", category=DeprecationWarning, module="botocore")


@pytest.fixture(scope="session")
def session_tmp():
    path = Path(tempfile.mkdtemp(prefix="serac-systest-"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="session")
def server(session_tmp):
    # Automatic maintenance off: tests that count a table's files and snapshots must see only their
    # own commits (test_maintenance.py runs servers with it on).
    serac = SeracServer(session_tmp / "http", name="serac-http", extra_args=["--maintenance-interval", "0"])
    serac.start()
    yield serac
    serac.stop()


@pytest.fixture(scope="session")
def tls_server(session_tmp):
    certs_dir = session_tmp / "certs"
    make_tls_certs(certs_dir)
    serac = SeracServer(session_tmp / "https", certs_dir=certs_dir, name="serac-https")
    serac.start()
    yield serac
    serac.stop()


@pytest.fixture(scope="session")
def tls_cert(tls_server):
    return str(tls_server.certs_dir / "cert.pem")


@pytest.fixture(scope="session")
def client_factory(server):
    """client_factory(**config_overrides) -> a boto3 S3 client for the HTTP server."""

    def factory(**overrides):
        return make_client(server.endpoint, **overrides)

    return factory


@pytest.fixture(scope="session")
def s3(client_factory):
    return client_factory()


@pytest.fixture
def bucket(s3, request):
    name = unique_bucket_name(request.node.name)
    s3.create_bucket(Bucket=name)
    return name


@pytest.fixture
def bucket_name(request):
    """A unique name for a bucket the test creates itself."""
    return unique_bucket_name(request.node.name)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.failed:
        for serac in ALL_SERVERS:
            if serac.process is None:
                continue
            state = "running" if serac.alive() else f"exited with {serac.process.returncode}"
            report.sections.append((f"{serac.name} ({state}) stderr tail", serac.stderr_tail(40)))
