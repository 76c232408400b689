"""No sequence of requests grows the server without limit: what it keeps between requests is bounded
in bytes (limits::kCatalogCachesBytesMax for the catalog's caches of parsed metadata, documents,
history cuts and scan plans). Tables with about a megabyte of metadata each are created, committed,
loaded and planned with large filters, round after round: the resident set levels off well inside
the caches' budget instead of growing with every table."""

from __future__ import annotations

import pytest

from catalog_util import CatalogApi
from s3util import SeracServer

MiB = 1024 * 1024
CACHES_BYTES_MAX = (128 + 16 + 64 + 48 + 32 + 32) * MiB  # limits::kCatalogCachesBytesMax
ROUNDS = 4
TABLES_PER_ROUND = 30
SCHEMA = {"type": "struct", "schema-id": 0, "fields": [{"id": 1, "name": "id", "type": "long", "required": False}]}


def vm_rss_bytes(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise AssertionError(f"no VmRSS in /proc/{pid}/status")


@pytest.mark.timeout(300)
def test_memory_levels_off_within_the_cache_budget(tmp_path, monkeypatch):
    # Freed memory goes back to the system at once, so that the resident set is what is held.
    monkeypatch.setenv("MALLOC_CONF", "dirty_decay_ms:0,muzzy_decay_ms:0")
    server = SeracServer(tmp_path / "memory", name="serac-memory", extra_args=["--maintenance-interval", "0"])
    server.start()
    try:
        api = CatalogApi(server.endpoint)
        api.create_warehouse("mem")
        api.ok("POST", "/v1/mem/namespaces", {"namespace": ["ns"]})
        baseline = vm_rss_bytes(server.process.pid)
        properties = {f"p{j}": "v" * 1000 for j in range(900)}  # ~0.9 MB of metadata per table
        big_filter = {"type": "in", "term": "id", "values": list(range(20000))}
        after = []
        for round_ in range(ROUNDS):
            for i in range(TABLES_PER_ROUND):
                name = f"t{round_}_{i}"
                api.ok("POST", "/v1/mem/namespaces/ns/tables", {"name": name, "schema": SCHEMA})
                api.ok("POST", f"/v1/mem/namespaces/ns/tables/{name}",
                       {"requirements": [], "updates": [{"action": "set-properties", "updates": properties}]})
                api.ok("GET", f"/v1/mem/namespaces/ns/tables/{name}")
                api.ok("POST", f"/v1/mem/namespaces/ns/tables/{name}/plan", {"filter": big_filter})
            after.append(vm_rss_bytes(server.process.pid))
        grown = [(rss - baseline) // MiB for rss in after]
        print(f"VmRSS {baseline // MiB} MiB at start, then {', '.join(map(str, grown))} MiB more after each round "
              f"of {TABLES_PER_ROUND} tables")
        assert after[-1] - baseline < CACHES_BYTES_MAX + 64 * MiB, grown
        # Level: the last round added little, though it touched as many new tables as the first.
        assert after[-1] - after[-2] < 16 * MiB, grown
    finally:
        server.stop()
