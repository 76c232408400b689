"""The Iceberg REST Compatibility Kit (iceberg-open-api 1.11.0, the newest published, catalog and view
halves, driving the Iceberg 1.12.0 REST client) against a fresh serac: SigV4 (s3tables) for the
catalog, S3FileIO on serac for the data files the kit writes. Needs the Java tools from
scripts/install-java-tools.sh."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from catalog_util import CATALOG_BASE, CatalogApi
from s3util import ACCESS_KEY, REGION, REPO_ROOT, SECRET_KEY, SeracServer

RUN_RCK = REPO_ROOT / "tests" / "catalog_tools" / "run_rck.sh"
JAVA_TOOLS = Path(os.environ.get("SERAC_JAVA_TOOLS_DIR", REPO_ROOT / "build" / "java"))
SUMMARY_RE = re.compile(r"^rck: (\d+) passed, (\d+) failed, (\d+) skipped$", re.M)
RCK_TIMEOUT_S = 900

pytestmark = pytest.mark.skipif(not (JAVA_TOOLS / "rck.classpath").is_file() or not shutil.which("java"),
                                reason="Java tools not installed (scripts/install-java-tools.sh)")


@pytest.fixture
def rck_server():
    root = Path(tempfile.mkdtemp(prefix="serac-rck-"))
    serac = SeracServer(root, name="serac-rck")
    serac.start()
    yield serac
    serac.stop()
    shutil.rmtree(root, ignore_errors=True)


@pytest.mark.timeout(RCK_TIMEOUT_S + 60)
def test_rest_compatibility_kit(rck_server, tmp_path):
    warehouse = "rck-warehouse"
    CatalogApi(rck_server.endpoint).create_warehouse(warehouse)
    # serac keeps table data in its warehouse bucket and overrides the file:/tmp/... locations the kit
    # asks for (rck.overrides-requested-location). Replace transactions still write their new
    # manifests to the requested location on the client side before the commit, so the kit gets
    # ResolvingFileIO: s3:// paths go to serac through S3FileIO, file: paths to the local disk.
    env = dict(os.environ,
               CATALOG_URI=rck_server.endpoint + CATALOG_BASE, CATALOG_WAREHOUSE=warehouse,
               RCK_SIGV4="1", RCK_S3_ENDPOINT=rck_server.endpoint, RCK_ACCESS_KEY_ID=ACCESS_KEY,
               RCK_SECRET_ACCESS_KEY=SECRET_KEY, RCK_REGION=REGION, RCK_SUITE=os.environ.get("RCK_SUITE", "all"),
               CATALOG_IO__IMPL="org.apache.iceberg.io.ResolvingFileIO",
               RCK_JAVA_OPTS="-Drck.requires-namespace-create=true -Drck.supports-serverside-retry=true "
                             "-Drck.overrides-requested-location=true",
               RCK_REPORTS_DIR=str(tmp_path / "reports"), RCK_TIMEOUT=str(RCK_TIMEOUT_S))
    completed = subprocess.run(["bash", str(RUN_RCK)], env=env, capture_output=True, text=True,
                               timeout=RCK_TIMEOUT_S + 30)
    output = completed.stdout + completed.stderr
    summary = SUMMARY_RE.search(output)
    assert summary, f"no RCK summary (exit {completed.returncode}):\n{output[-6000:]}"
    passed, failed, skipped = map(int, summary.groups())
    print(f"RCK: {passed} passed, {failed} failed, {skipped} skipped")
    console_log = tmp_path / "reports" / "rck-console.log"
    tree = console_log.read_text(errors="replace") if console_log.is_file() else output
    # A failed case's line is "├─ name() ✘ <first line of the error>".
    failing = [line.split("✘")[0].strip(" │├└─") for line in tree.splitlines() if "✘" in line]
    # The kit cases serac does not pass by design, both written for a catalog whose warehouse is the
    # test's own local file system:
    # - createViewWithCustomMetadataLocation sets write.metadata.path on a view to a local file:
    #   directory and expects the server to write the metadata file there; serac writes catalog
    #   metadata only into its own warehouse buckets, never to a client-chosen local path;
    # - testLoadTableWithMissingMetadataFile (1.11) moves the table's metadata file away with
    #   java.nio.file.Files, which cannot reach an s3:// location.
    by_design = ("createViewWithCustomMetadataLocation", "testLoadTableWithMissingMetadataFile")
    unexpected = [name for name in failing if not name.startswith(by_design)]
    assert len(failing) == failed, f"{failed} failures counted but {len(failing)} named:\n{output[-3000:]}"
    assert not unexpected and failed <= len(by_design), (
        f"RCK: {passed} passed, {failed} failed, {skipped} skipped; failing tests:\n"
        + "\n".join(failing)[:8000] + f"\n(details: the rck-console.log named in the output)\n{output[-1500:]}")
    # The catalog half alone has 94 passing tests against the reference server.
    assert passed >= 90, output[-6000:]
