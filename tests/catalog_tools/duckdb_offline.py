"""DuckDB with the iceberg and httpfs extensions, loaded from pip packages and never fetched.

DuckDB normally downloads extensions from its own server on first use. Here they come from the
PyPI packages duckdb-extension-{avro,httpfs,iceberg}, whose version must equal the duckdb
package's version exactly (an extension binary only loads into the DuckDB it was built for),
and auto-install/auto-load are switched off so a missing piece fails loudly instead of reaching
for the network.

    from duckdb_offline import connect, attach_iceberg_catalog
    con = connect()
    attach_iceberg_catalog(con, "cat", endpoint="http://127.0.0.1:9000/_iceberg",
                           warehouse="wh", access_key_id="...", secret_access_key="...")

Run as a script to print the versions and loaded extensions (exit status 1 on failure).
"""

from __future__ import annotations

import atexit
import importlib
import pathlib
import shutil
import sys
import tempfile

import duckdb

# iceberg reads manifests with avro and data with parquet (built into the duckdb wheel), so
# avro must be loaded before iceberg once auto-loading is off.
EXTENSIONS = ("avro", "httpfs", "iceberg")

OFFLINE_CONFIG = {
    "autoinstall_known_extensions": "false",
    "autoload_known_extensions": "false",
}


class ExtensionUnavailable(RuntimeError):
    """An extension package is missing or was built for another DuckDB version."""


def extension_path(name: str) -> pathlib.Path:
    """Returns the extension binary shipped by the duckdb-extension-<name> package."""
    module_name = f"duckdb_extension_{name}"
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise ExtensionUnavailable(
            f"{module_name} is not installed: pip install duckdb-extension-{name}=={duckdb.__version__}"
        ) from error
    wanted = pathlib.Path(module.__path__[0]) / "extensions" / f"v{duckdb.__version__}" / f"{name}.duckdb_extension"
    if not wanted.is_file():
        shipped = sorted(p.parent.name for p in pathlib.Path(module.__path__[0]).glob(f"extensions/*/{name}.duckdb_extension"))
        raise ExtensionUnavailable(
            f"{module_name} ships {shipped or 'nothing'} but duckdb is v{duckdb.__version__}: "
            "pin both to the same version"
        )
    return wanted


def connect(database: str = ":memory:", **config: str) -> duckdb.DuckDBPyConnection:
    """Opens a connection with avro, httpfs and iceberg loaded from local files only."""
    settings = dict(OFFLINE_CONFIG)
    # A private, empty extension directory: nothing installed earlier under ~/.duckdb can be
    # picked up by accident, so what loads is exactly what the pip packages ship.
    extension_directory = tempfile.mkdtemp(prefix="duckdb-ext-")
    atexit.register(shutil.rmtree, extension_directory, ignore_errors=True)
    settings["extension_directory"] = extension_directory
    settings.update(config)
    con = duckdb.connect(database, config=settings)
    for name in EXTENSIONS:
        path = extension_path(name)
        con.execute(f"LOAD '{_sql_string(str(path))}'")
    return con


def attach_iceberg_catalog(
    con: duckdb.DuckDBPyConnection,
    alias: str,
    *,
    endpoint: str,
    warehouse: str,
    access_key_id: str,
    secret_access_key: str,
    region: str = "us-east-1",
    signing_name: str = "s3tables",
    s3_endpoint: str | None = None,
) -> None:
    """Attaches a SigV4-authenticated Iceberg REST catalog whose data sits on a path-style S3.

    endpoint is the catalog base URI (e.g. http://127.0.0.1:9000/_iceberg). This iceberg
    extension build takes the catalog URI as ENDPOINT (it has no URI option) and, for a host
    that is not an AWS name, must be told the SigV4 service and region explicitly.
    s3_endpoint defaults to endpoint's host:port (serac serves S3 on the same port).
    """
    host_port = s3_endpoint or endpoint.split("://", 1)[-1].split("/", 1)[0]
    use_ssl = "true" if endpoint.startswith("https://") else "false"
    secret = f"{alias}_s3"
    con.execute(
        f"CREATE OR REPLACE SECRET {secret} (TYPE s3, KEY_ID '{_sql_string(access_key_id)}', "
        f"SECRET '{_sql_string(secret_access_key)}', REGION '{_sql_string(region)}', "
        f"ENDPOINT '{_sql_string(host_port)}', URL_STYLE 'path', USE_SSL {use_ssl})"
    )
    con.execute(
        f"ATTACH '{_sql_string(warehouse)}' AS {alias} (TYPE iceberg, "
        f"ENDPOINT '{_sql_string(endpoint)}', AUTHORIZATION_TYPE 'sigv4', SECRET {secret}, "
        f"SIGV4_SERVICE '{_sql_string(signing_name)}', SIGV4_REGION '{_sql_string(region)}')"
    )


def _sql_string(value: str) -> str:
    return value.replace("'", "''")


def main() -> int:
    try:
        con = connect()
    except (ExtensionUnavailable, duckdb.Error) as error:
        print(f"duckdb offline setup failed: {error}", file=sys.stderr)
        return 1
    rows = con.execute(
        "SELECT extension_name, extension_version FROM duckdb_extensions() "
        "WHERE loaded AND extension_name IN ('avro', 'httpfs', 'iceberg') ORDER BY 1"
    ).fetchall()
    print(f"duckdb {duckdb.__version__}: " + ", ".join(f"{n} {v}" for n, v in rows))
    return 0 if len(rows) == len(EXTENSIONS) else 1


if __name__ == "__main__":
    sys.exit(main())
