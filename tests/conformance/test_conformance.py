"""The official MCP conformance suite's client scenarios against Parley's client
(tests/conformance/client.py), for each protocol version Parley speaks: every scenario the
version requires passes, except those tests/conformance/expected-failures.yml lists.

The suite and the Node it needs are installed by `.ci/run` (`npm ci --prefix
tests/conformance`); without them the test is skipped locally and fails in CI.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
NODE = HERE / "node_modules" / ".bin" / "node"
SUITE = HERE / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
EXPECTED_FAILURES = HERE / "expected-failures.yml"
# A scenario's client has 30 s by default; all of a version's scenarios start at once, which on
# a busy 2-core machine can take longer than that.
SCENARIO_TIMEOUT_MS = 90_000

pytestmark = pytest.mark.slow


@pytest.mark.timeout(600)
@pytest.mark.parametrize("version", ["2025-11-25", "2026-07-28"])
def test_client_scenarios(version: str, tmp_path: Path) -> None:
    if not (NODE.exists() and SUITE.exists()):
        if os.environ.get("CI"):
            pytest.fail("the conformance suite is not installed: npm ci --prefix tests/conformance")
        pytest.skip("the conformance suite is not installed: npm ci --prefix tests/conformance")
    command = f"{sys.executable} -m tests.conformance.client"
    env = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1", "FORCE_COLOR": "0"}
    run = subprocess.run(
        [
            str(NODE),
            str(SUITE),
            "client",
            "--command",
            command,
            "--requirements",
            version,
            "--expected-failures",
            str(EXPECTED_FAILURES),
            "--timeout",
            str(SCENARIO_TIMEOUT_MS),
            "--output-dir",
            str(tmp_path / "results"),
        ],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=540,
        check=False,
    )
    output = _plain(run.stdout + run.stderr)
    summary = output[output.find("=== SUITE SUMMARY ===") :]
    assert run.returncode == 0, f"the suite failed at {version}:\n{summary or output[-5000:]}"
    assert "=== SUITE SUMMARY ===" in output, output[-5000:]


def _plain(text: str) -> str:
    return re.sub(r"\x1b\[[0-9;]*m", "", text)
