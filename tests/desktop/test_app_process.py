"""The app as its user runs it: a real X window (Xvfb), typed input, then SIGTERM mid-reply."""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.client import request
from tests.support.parley import MODEL
from tests.support.upstream import Script, ScriptedUpstream
from tests.support.waiting import wait_for

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not (shutil.which("Xvfb") and shutil.which("xdotool")),
        reason="needs Xvfb and xdotool (Debian: xvfb, xdotool; .ci/run installs them)",
    ),
]
EXIT_BOUND_S = 10


@pytest.fixture
def display() -> Iterator[str]:
    read, write = os.pipe()
    xvfb = subprocess.Popen(
        ["Xvfb", "-displayfd", str(write), "-screen", "0", "1280x800x24", "-nolisten", "tcp"],
        pass_fds=(write,),
        stderr=subprocess.DEVNULL,
    )
    os.close(write)
    with os.fdopen(read) as pipe:
        number = pipe.readline().strip()
    yield f":{number}"
    xvfb.terminate()
    xvfb.wait(10)


def xdotool(display: str, *args: str) -> str:
    result = subprocess.run(
        ["xdotool", *args],
        env={**os.environ, "DISPLAY": display},
        capture_output=True,
        text=True,
        timeout=20,
        check=True,
    )
    return result.stdout.strip()


def test_sigterm_mid_reply_in_a_real_window_saves_it_and_exits_in_bound(
    display: str, tmp_path: Path, upstream: ScriptedUpstream
) -> None:
    upstream.script = Script(tokens=100, stall_after=3)
    runtime = tmp_path / "runtime"
    env = {
        **os.environ,
        "DISPLAY": display,
        "QT_QPA_PLATFORM": "xcb",
        "PARLEY_RUNTIME_DIR": str(runtime),
        "PARLEY_CONFIG_DIR": str(tmp_path / "config"),
    }
    data_dir = tmp_path / "data"
    app = subprocess.Popen(
        [sys.executable, "-m", "desktop", "--data-dir", str(data_dir),
         "--upstream", upstream.base_url, "--upstream-model", MODEL],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    try:
        runtime_file = wait_for(lambda: next(iter(runtime.glob("server-*.json")), None), 30)
        info = json.loads(runtime_file.read_text())
        port = int(info["url"].rsplit(":", 1)[1])
        window = xdotool(display, "search", "--sync", "--name", "^Parley$").splitlines()[0]
        xdotool(display, "windowfocus", "--sync", window)
        xdotool(display, "type", "--delay", "20", "Tell me a story")
        xdotool(display, "key", "Return")
        wait_for(lambda: upstream.records and len(upstream.records[0].sent) == 3, 20)

        def status() -> dict[str, object]:
            reply = request(port, "GET", "/api/status", token=info["token"])
            result: dict[str, object] = reply.json()
            return result

        assert status()["active_turns"] == 1
        started = time.monotonic()
        app.send_signal(signal.SIGTERM)
        code = app.wait(EXIT_BOUND_S)
        elapsed = time.monotonic() - started
    finally:
        if app.poll() is None:
            app.kill()
        output = ""
        if app.stdout is not None:
            output = app.stdout.read()
            app.stdout.close()
    assert code == 0, output
    assert elapsed < EXIT_BOUND_S
    assert "Traceback" not in output, output
    assert not runtime_file.exists()
    upstream.wait_hung_up()

    conn = sqlite3.connect(data_dir / "parley.sqlite3")
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        rows = conn.execute(
            "SELECT role, content, status, ended_by FROM messages ORDER BY seq"
        ).fetchall()
    finally:
        conn.close()
    assert rows[0] == ("user", "Tell me a story", "completed", None)
    assert rows[1] == ("assistant", "t0 t1 t2 ", "interrupted", "client_hangup")
