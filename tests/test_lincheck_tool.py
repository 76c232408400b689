"""The linearizability checker the system tests use (tests/linearizability/, built by
`scripts/install-deps.sh --test`): it accepts a linearizable history, and it can fail: a stale read
and two winners of one exclusive create are rejected, naming the key; malformed input is refused."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent


def lincheck_binary() -> Path:
    """$SERAC_LINCHECK (relative paths from the repository root), else build/tools/serac-lincheck."""
    path = Path(os.environ.get("SERAC_LINCHECK", "build/tools/serac-lincheck"))
    if not path.is_absolute():
        path = REPO_ROOT / path
    if not os.access(path, os.X_OK):
        pytest.fail(f"the linearizability checker is missing: no executable {path}; build it with "
                    "`scripts/install-deps.sh --test` (tests/linearizability/README.md) or set SERAC_LINCHECK")
    return path


def run_lincheck(tmp_path: Path, history) -> subprocess.CompletedProcess:
    path = tmp_path / "history.json"
    path.write_text(history if isinstance(history, str) else json.dumps(history, indent=1))
    return subprocess.run([str(lincheck_binary()), "--timeout", "30s", str(path)], capture_output=True,
                          text=True, timeout=60)


def op(client, key, kind, call, ret, value=None, expect=None, ok=True, read=None):
    return {"client": client, "key": key, "op": kind, "value": value, "expect": expect,
            "output": {"ok": ok, "value": read}, "call": call, "return": ret}


def test_linearizable_history_is_accepted(tmp_path):
    history = [
        op(0, "k", "put", 0, 100, value="a"),
        op(1, "k", "put", 50, 150, value="b"),          # overlaps the first put
        op(2, "k", "get", 60, 70, read="a"),
        op(2, "k", "get", 160, 170, read="b"),
        op(0, "k", "cas", 200, 300, value="c", expect="b"),
        op(1, "k", "cas", 210, 310, value="d", expect="b", ok=False),  # lost the race: 412
        op(1, "k", "put", 320, None, value="e"),        # timed out: may or may not have landed
        op(2, "k", "get", 400, 410, read="c"),
        op(2, "lock", "put_if_absent", 0, 10, value="x"),
        op(0, "lock", "put_if_absent", 5, 20, value="y", ok=False),
        op(0, "db.t", "append", 0, 50, value="1"),
        op(1, "db.t", "append", 10, 40, value="2"),
        op(2, "db.t", "load", 60, 70, read="2,1"),
    ]
    result = run_lincheck(tmp_path, history)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "linearizable: 13 operations (1 of unknown outcome) on 3 keys" in result.stdout


def test_non_linearizable_history_is_rejected(tmp_path):
    history = [
        op(0, "k", "put", 0, 10, value="a"),
        op(1, "k", "put", 20, 30, value="b"),
        op(2, "k", "get", 40, 50, read="a"),            # "a" was overwritten before the get began
        op(0, "lock", "put_if_absent", 0, 100, value="x"),
        op(1, "lock", "put_if_absent", 5, 90, value="y"),  # two winners of one exclusive create
        op(2, "fine", "put", 0, 10, value="z"),
    ]
    result = run_lincheck(tmp_path, history)
    assert result.returncode == 1, result.stdout + result.stderr
    assert 'NOT LINEARIZABLE: key "k"' in result.stdout
    assert 'get("k") -> "a"' in result.stdout
    assert 'NOT LINEARIZABLE: key "lock"' in result.stdout
    assert 'key "fine"' not in result.stdout
    assert "2 of 3 keys failed" in result.stdout


def test_malformed_history_is_refused(tmp_path):
    result = run_lincheck(tmp_path, [{"client": 0, "key": "k", "op": "put", "value": "a", "call": 0}])
    assert result.returncode == 2, result.stdout + result.stderr
    assert 'history[0]: field "return" is missing' in result.stderr
