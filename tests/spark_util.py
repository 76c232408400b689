"""Spark (PySpark in local mode with the Iceberg Spark runtime) against serac's REST catalog.

One SparkSession per test module (`spark` fixture, or `make_spark_session()` for a suite that wants
its own), with the Iceberg SQL extensions on. Catalogs are added at run time, one per warehouse,
with `add_sigv4_catalog` (SigV4-signed catalog calls, S3FileIO with static keys) or
`add_oauth2_catalog` (OAuth2 client credentials and vended S3 credentials, no S3 keys in Spark).
The jars come from scripts/install-spark.sh (build/java/spark/, or SERAC_SPARK_JARS_DIR) and are
handed to Spark as local files: nothing is resolved or downloaded at run time.

The Spark line is the one of the PySpark this interpreter has: 3.5 (Scala 2.12) in .venv, from
tests/requirements.txt, or 4.1 (Scala 2.13) in .venv-spark41, from tests/requirements-spark41.txt
(tests/test_spark41.py runs tests/test_spark.py there). The matching iceberg-spark-runtime is picked
by name; a PySpark of any other line makes the Spark tests skip."""

from __future__ import annotations

import atexit
import importlib.metadata
import itertools
import os
import shutil
import tempfile
from pathlib import Path

import pytest

from catalog_util import CATALOG_BASE, SIGNING_NAME
from s3util import ACCESS_KEY, REGION, REPO_ROOT, SECRET_KEY

ICEBERG_VERSION = "1.12.0"
# Spark line -> Scala line of its Iceberg runtime (scripts/install-spark.sh fetches these).
SCALA_LINES = {"3.5": "2.12", "4.1": "2.13"}


def installed_spark_line() -> str | None:
    """The installed PySpark's major.minor ("3.5", "4.1"), None without PySpark."""
    try:
        version = importlib.metadata.version("pyspark")
    except importlib.metadata.PackageNotFoundError:
        return None
    return ".".join(version.split(".")[:2])


SPARK_LINE = installed_spark_line()
SCALA_LINE = SCALA_LINES.get(SPARK_LINE or "")
SPARK_JARS_DIR = Path(os.environ.get("SERAC_SPARK_JARS_DIR", REPO_ROOT / "build" / "java" / "spark"))
SPARK_JARS = [SPARK_JARS_DIR / f"iceberg-spark-runtime-{SPARK_LINE}_{SCALA_LINE}-{ICEBERG_VERSION}.jar",
              SPARK_JARS_DIR / f"iceberg-aws-bundle-{ICEBERG_VERSION}.jar"]
SHUFFLE_PARTITIONS = 2
DRIVER_MEMORY = "1g"

_catalog_numbers = itertools.count(1)


def spark_available() -> bool:
    if SCALA_LINE is None or not all(jar.is_file() for jar in SPARK_JARS) or not shutil.which("java"):
        return False
    try:
        import pyspark  # noqa: F401
    except ImportError:
        return False
    return True


requires_spark = pytest.mark.skipif(not spark_available(),
                                    reason="Spark not installed (tests/requirements.txt, scripts/install-spark.sh)")


def make_spark_session(app_name: str = "serac-tests"):
    """A local[2] SparkSession with the Iceberg runtime and SQL extensions, UI off, quiet logs,
    UTC session time zone, its warehouse and scratch space under a temporary directory."""
    from pyspark.sql import SparkSession

    scratch = Path(tempfile.mkdtemp(prefix="serac-spark-"))
    # Also at exit: the JVM may still write below spark.local.dir while it shuts down after stop().
    atexit.register(shutil.rmtree, scratch, ignore_errors=True)
    builder = (SparkSession.builder.master("local[2]").appName(app_name)
               .config("spark.jars", ",".join(str(jar) for jar in SPARK_JARS))
               .config("spark.sql.extensions", "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions")
               .config("spark.sql.shuffle.partitions", str(SHUFFLE_PARTITIONS))
               .config("spark.default.parallelism", str(SHUFFLE_PARTITIONS))
               .config("spark.sql.adaptive.enabled", "false")
               .config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", "false")
               .config("spark.driver.memory", DRIVER_MEMORY)
               .config("spark.driver.host", "127.0.0.1")
               .config("spark.driver.bindAddress", "127.0.0.1")
               .config("spark.sql.session.timeZone", "UTC")
               .config("spark.sql.warehouse.dir", str(scratch / "spark-warehouse"))
               .config("spark.local.dir", str(scratch / "local"))
               # Tiny data: compiling generated code and C2-optimising costs more than it saves.
               .config("spark.sql.codegen.wholeStage", "false")
               .config("spark.driver.extraJavaOptions",
                       f"-Dderby.system.home={scratch / 'derby'} -XX:TieredStopAtLevel=1 -XX:+UseSerialGC"))
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")  # the driver binds to loopback only
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    session._serac_scratch = scratch  # removed by stop_spark_session
    return session


def stop_spark_session(session) -> None:
    scratch = getattr(session, "_serac_scratch", None)
    session.stop()
    if scratch is not None:
        shutil.rmtree(scratch, ignore_errors=True)


def _set_catalog(session, name: str, properties: dict) -> None:
    prefix = f"spark.sql.catalog.{name}"
    session.conf.set(prefix, "org.apache.iceberg.spark.SparkCatalog")
    for key, value in properties.items():
        session.conf.set(f"{prefix}.{key}", value)


def _common_properties(endpoint: str, warehouse: str) -> dict:
    return {
        "type": "rest",
        "uri": endpoint + CATALOG_BASE,
        "warehouse": warehouse,
        "io-impl": "org.apache.iceberg.aws.s3.S3FileIO",
        # Cached tables would hide another catalog's commits to the same table within one test.
        "cache-enabled": "false",
    }


def add_sigv4_catalog(session, endpoint: str, warehouse: str, name: str | None = None,
                      access_key: str = ACCESS_KEY, secret_key: str = SECRET_KEY) -> str:
    """Registers a catalog for `warehouse` whose catalog calls are SigV4-signed (signing name
    s3tables) and whose data goes through S3FileIO with the same static keys. Returns its name."""
    name = name or f"serac{next(_catalog_numbers)}"
    properties = _common_properties(endpoint, warehouse)
    properties.update({
        "rest.auth.type": "sigv4",
        "rest.signing-name": SIGNING_NAME,
        "rest.signing-region": REGION,
        "rest.access-key-id": access_key,
        "rest.secret-access-key": secret_key,
        "s3.endpoint": endpoint,
        "s3.path-style-access": "true",
        "client.region": REGION,
        "s3.access-key-id": access_key,
        "s3.secret-access-key": secret_key,
    })
    _set_catalog(session, name, properties)
    return name


def add_oauth2_catalog(session, endpoint: str, warehouse: str, name: str | None = None,
                       access_key: str = ACCESS_KEY, secret_key: str = SECRET_KEY) -> str:
    """Registers a catalog for `warehouse` that authenticates with OAuth2 client credentials (the
    key pair) and reads and writes data only with the credentials the catalog vends: no S3 keys,
    endpoint or region in Spark, everything S3FileIO needs comes with the loaded table."""
    name = name or f"seracoauth{next(_catalog_numbers)}"
    properties = _common_properties(endpoint, warehouse)
    properties.update({
        "rest.auth.type": "oauth2",
        "credential": f"{access_key}:{secret_key}",
        "oauth2-server-uri": endpoint + CATALOG_BASE + "/v1/oauth/tokens",
        "scope": "catalog",
        "header.X-Iceberg-Access-Delegation": "vended-credentials",
    })
    _set_catalog(session, name, properties)
    return name


def rows(session, sql: str) -> list[tuple]:
    """The result of `sql` as a sorted list of plain tuples (None sorts first)."""
    result = [tuple(row) for row in session.sql(sql).collect()]
    return sorted(result, key=lambda row: tuple((value is not None, value) for value in row))


@pytest.fixture(scope="module")
def spark():
    """One SparkSession for the whole test module."""
    if not spark_available():
        pytest.skip("Spark not installed (tests/requirements.txt, scripts/install-spark.sh)")
    session = make_spark_session()
    yield session
    stop_spark_session(session)
