"""Runs schemathesis against a serac server with the Iceberg REST catalog's OpenAPI specification
(open-api/rest-catalog-open-api.yaml of an apache/iceberg checkout, given with --spec): every
operation's examples, coverage and fuzzing phases, checked for server errors and for answers that
do not match the specification's response schemas.

    .venv/bin/python tests/catalog_tools/spec_fuzz.py --spec ~/iceberg/open-api/rest-catalog-open-api.yaml

The specification is not distributed through any package registry, so the README's test command
cannot fetch it and the project carries no copy: this runs where a checkout is at hand.

Deliberate differences, applied to a temporary copy of the specification before the run:
- Several view and namespace operations declare their 404 answer as a bare ErrorModel while their
  own examples, every other operation and the reference implementation use the wrapped
  IcebergErrorResponse ({"error": {...}}). serac answers every error wrapped, as Java does and
  every client parses, so those 404 schemas are read as IcebergErrorResponse.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import requests

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from s3util import ACCESS_KEY, SECRET_KEY, SeracServer  # noqa: E402

WAREHOUSE = "spec-fuzz"

# A response-level schema that is the bare ErrorModel: the line after "schema:".
BARE_ERROR_SCHEMA = re.compile(r"(\n(\s+)schema:\n\s+\$ref: '#/components/schemas/)ErrorModel'")


def wrapped_error_schemas(spec_text: str) -> tuple[str, int]:
    return BARE_ERROR_SCHEMA.subn(r"\1IcebergErrorResponse'", spec_text)


def create_examples(catalog: str, headers: dict) -> None:
    """The warehouse, and the entities the specification's examples name (namespaces "accounting"
    and "accounting.tax", table and view "sales"), so that generated requests reach real tables and
    views: commits, loads, renames and drops act on them, and a later load shows what was stored."""
    def post(path: str, body: dict) -> None:
        requests.post(catalog + path, json=body, headers=headers, timeout=30).raise_for_status()

    schema = {"type": "struct", "schema-id": 0, "fields": [
        {"id": 1, "name": "id", "required": False, "type": "long"},
        {"id": 2, "name": "data", "required": False, "type": "string"}]}
    post("/v1/warehouses", {"name": WAREHOUSE})
    base = f"/v1/{WAREHOUSE}/namespaces"
    post(base, {"namespace": ["accounting"]})
    post(base, {"namespace": ["accounting", "tax"]})
    for namespace in ("accounting", "accounting%1Ftax"):
        post(f"{base}/{namespace}/tables", {"name": "sales", "schema": schema})
    view_version = {"version-id": 1, "timestamp-ms": 1_700_000_000_000, "schema-id": 0,
                    "summary": {"engine-name": "spark"}, "default-namespace": ["accounting"],
                    "representations": [{"type": "sql", "sql": "select id, data from sales", "dialect": "spark"}]}
    for namespace in ("accounting", "accounting%1Ftax"):
        post(f"{base}/{namespace}/views", {"name": "sales_view", "schema": schema, "view-version": view_version})


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--spec", required=True, type=Path, help="rest-catalog-open-api.yaml")
    parser.add_argument("--max-examples", type=int, default=30, help="examples per operation and phase")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="serac-spec-fuzz-") as work:
        work_dir = Path(work)
        spec_text, patched = wrapped_error_schemas(args.spec.read_text())
        (work_dir / "spec.yaml").write_text(spec_text)
        print(f"spec-fuzz: {patched} bare ErrorModel answers read as IcebergErrorResponse")
        # Requests go to the warehouse and the entities create_examples makes, so that they reach
        # real tables and views; the drops are left out, or the first would leave the rest nothing.
        (work_dir / "schemathesis.toml").write_text(
            f'[parameters]\n"path.prefix" = "{WAREHOUSE}"\n"path.namespace" = "accounting"\n'
            '"path.table" = "sales"\n"path.view" = "sales_view"\n')
        server = SeracServer(work_dir / "server")
        server.start()
        try:
            catalog = server.endpoint + "/_iceberg"
            token = requests.post(catalog + "/v1/oauth/tokens", timeout=30, data={
                "grant_type": "client_credentials", "client_id": ACCESS_KEY, "client_secret": SECRET_KEY,
            }).json()["access_token"]
            create_examples(catalog, {"Authorization": f"Bearer {token}"})
            schemathesis = Path(sys.executable).with_name("schemathesis")
            command = [str(schemathesis), "run", "spec.yaml", "--url", catalog,
                       "-H", f"Authorization: Bearer {token}",
                       "--checks", "not_a_server_error,response_schema_conformance",
                       "--max-examples", str(args.max_examples), "--seed", str(args.seed),
                       "--phases", "examples,coverage,fuzzing", "--exclude-deprecated",
                       "--exclude-operation-id", "getToken", "--exclude-operation-id", "dropTable",
                       "--exclude-operation-id", "dropView", "--exclude-operation-id", "dropNamespace",
                       "--exclude-operation-id", "renameTable", "--exclude-operation-id", "renameView"]
            return subprocess.run(command, cwd=work_dir, env=dict(os.environ, NO_COLOR="1")).returncode
        finally:
            server.stop()


if __name__ == "__main__":
    sys.exit(main())
