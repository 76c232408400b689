"""Several `serac server` nodes sharing one PostgreSQL metadata store (a schema of its own per
test) and one blob directory, as tests/test_multi_node*.py start them."""
from __future__ import annotations

import shutil

from s3util import SeracServer

NODES = 3  # what a cluster has unless told


def schema_url(pg, schema: str, **params) -> str:
    """A URL of the test server whose tables live in `schema` (created here)."""
    pg.sql(f"CREATE SCHEMA IF NOT EXISTS {schema}")
    query = "&".join([f"options=-csearch_path%3D{schema}"] + [f"{key}={value}" for key, value in params.items()])
    return f"postgresql://{pg.user}@{pg.host}:{pg.port}/postgres?{query}"


class Cluster:
    """NODES servers sharing one metadata schema, one blob directory and one server key."""

    def __init__(self, root, url: str, nodes: int = NODES, blob_store: str | None = None):
        self.blobs = root / "shared-blobs"
        self.blobs.mkdir(parents=True)
        blob_url = blob_store or f"file:{self.blobs}"
        self.nodes = [SeracServer(root / f"node{i}", name=f"serac-node{i}",
                                  extra_args=["--meta-store", url, "--blob-store", blob_url,
                                              "--node-name", f"node{i}", "--maintenance-interval", "0"])
                      for i in range(nodes)]

    def start(self) -> None:
        # Sealed secrets and tokens must open on every node: one server key for all.
        self.nodes[0].start()
        for node in self.nodes[1:]:
            shutil.copy(self.nodes[0].server_key_file, node.server_key_file)
            node.start()

    def stop(self) -> None:
        for node in self.nodes:
            node.stop()


