"""tests/test_spark.py on the Spark 4.1 line: PySpark 4.1 (Scala 2.13) with
iceberg-spark-runtime-4.1_2.13 and the same Iceberg release, on Java 17.

The rest of the suite runs PySpark 3.5 from .venv, and PySpark 4.1 cannot share that venv, so
scripts/install-spark.sh makes .venv-spark41 (tests/requirements-spark41.txt) and this module runs
tests/test_spark.py there, with pytest in a child process against a serac of its own (the child's
session fixtures). The child picks the 4.1 runtime jar itself (tests/spark_util.py goes by the
installed PySpark). Its per-test outcomes are printed and, on failure, named in the message; its
JUnit XML and output stay in this test's tmp_path.

Only this line, with every child test shown:
    SERAC_BIN=build/serac .venv-spark41/bin/python -m pytest -q tests/test_spark.py"""

from __future__ import annotations

import os
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from s3util import REPO_ROOT
from spark_util import ICEBERG_VERSION, SPARK_JARS_DIR, installed_spark_line

SPARK_LINE = "4.1"
VENV = Path(os.environ.get("SERAC_SPARK41_VENV", REPO_ROOT / ".venv-spark41"))
PYTHON = VENV / "bin" / "python"
RUNTIME_JAR = SPARK_JARS_DIR / f"iceberg-spark-runtime-4.1_2.13-{ICEBERG_VERSION}.jar"
MODULE = REPO_ROOT / "tests" / "test_spark.py"
RUN_TIMEOUT_S = 1500  # the module takes a few minutes; the JVM's start and warm-up dominate

pytestmark = [
    pytest.mark.skipif(not PYTHON.is_file() or not RUNTIME_JAR.is_file() or not shutil.which("java"),
                       reason="Spark 4.1 not installed (scripts/install-spark.sh)"),
    # Inside .venv-spark41 tests/test_spark.py already is the 4.1 line: do not run it twice.
    pytest.mark.skipif(installed_spark_line() == SPARK_LINE, reason="this interpreter is the Spark 4.1 line"),
]


def outcomes(junit_xml: Path) -> dict[str, str]:
    """test id -> "passed", "failed: <first line>", "error: <first line>" or "skipped: <reason>"."""
    result = {}
    for case in ET.parse(junit_xml).getroot().iter("testcase"):
        outcome = "passed"
        for kind in ("failure", "error", "skipped"):
            element = case.find(kind)
            if element is not None:
                message = (element.get("message") or element.text or "").strip().splitlines()
                outcome = f"{kind if kind != 'failure' else 'failed'}: {message[0][:300] if message else ''}"
                break
        result[case.get("name")] = outcome
    return result


@pytest.mark.timeout(RUN_TIMEOUT_S + 60)
def test_spark_sql_on_spark41(tmp_path):
    junit_xml = tmp_path / "junit.xml"
    env = {name: value for name, value in os.environ.items() if name != "PYTEST_CURRENT_TEST"}
    completed = subprocess.run(
        [str(PYTHON), "-m", "pytest", "-q", "-rfEs", str(MODULE), f"--junitxml={junit_xml}"],
        cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=RUN_TIMEOUT_S)
    output = completed.stdout + completed.stderr
    (tmp_path / "output.txt").write_text(output)
    assert junit_xml.is_file(), f"the Spark 4.1 run wrote no report (exit {completed.returncode}):\n{output[-6000:]}"
    results = outcomes(junit_xml)
    for name, outcome in results.items():
        print(f"spark 4.1: {name}: {outcome}")
    not_passed = {name: outcome for name, outcome in results.items() if outcome != "passed"}
    assert results and not not_passed and completed.returncode == 0, (
        f"Spark 4.1: {len(results) - len(not_passed)} of {len(results)} passed (exit {completed.returncode}):\n"
        + "\n".join(f"  {name}: {outcome}" for name, outcome in not_passed.items())
        + f"\n--- child output (full: {tmp_path / 'output.txt'}) ---\n{output[-6000:]}")
