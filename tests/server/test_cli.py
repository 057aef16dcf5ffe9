"""`parley-server`'s command line."""

from __future__ import annotations

import argparse
import os
import signal
import socket
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from server.arguments import add_backend_arguments, settings_from_args
from server.cli import main
from server.errors import ParleyError, UsageError
from tests.support.client import request
from tests.support.parley import Parley
from tests.support.process import ServerProcess
from tests.support.upstream import Script, ScriptedUpstream
from tests.support.waiting import wait_for


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "server", *args],
        capture_output=True,
        text=True,
        timeout=30,
        env={k: v for k, v in os.environ.items() if k != "PARLEY_TOKEN"},
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--upstream", "http://127.0.0.1:1/v1"], "go together"),
        (["--upstream", "ftp://x", "--upstream-model", "m"], "http(s) URL"),
        (
            [
                "--upstream",
                "http://x/v1",
                "--upstream-model",
                "m",
                "--upstream-key-env",
                "NO_SUCH_VAR_X",
            ],
            "NO_SUCH_VAR_X is not set",
        ),
        (["--port", "99999"], "not a port"),
        (["--gguf", "/no/such/model.gguf"], "--gguf: no file at /no/such/model.gguf"),
    ],
)
def test_bad_flags_exit_2_with_a_message(tmp_path: Path, args: list[str], message: str) -> None:
    result = run_cli("--data-dir", str(tmp_path), *args)
    assert result.returncode == 2
    assert message in result.stderr
    assert "Traceback" not in result.stderr


def test_unusable_data_dir_exits_2(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    result = run_cli("--data-dir", str(blocker / "data"))
    assert result.returncode == 2
    assert "Traceback" not in result.stderr and "a-file" in result.stderr


def test_data_dir_in_use_exits_2(tmp_path: Path) -> None:
    from server.storage.db import DataDirLock

    lock = DataDirLock(tmp_path / "parley.sqlite3")
    lock.acquire()
    try:
        result = run_cli("--data-dir", str(tmp_path))
    finally:
        lock.release()
    assert result.returncode == 2
    assert "another Parley is already using" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_damaged_database_exits_2_with_one_line_and_is_left_as_it_is(tmp_path: Path) -> None:
    damaged = tmp_path / "parley.sqlite3"
    damaged.write_bytes(b"this is not what SQLite wrote\x00" * 2000)
    before = damaged.read_bytes()
    result = run_cli("--data-dir", str(tmp_path))
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "cannot open the database at" in lines[0], result.stderr
    assert "move it aside" in lines[0]
    assert damaged.read_bytes() == before


def test_the_window_is_told_why_a_damaged_database_cannot_be_opened(tmp_path: Path) -> None:
    tmp_path.mkdir(exist_ok=True)
    (tmp_path / "parley.sqlite3").write_bytes(b"garbage" * 1000)
    server = Parley(tmp_path)
    with pytest.raises(RuntimeError, match=r"cannot open the database at .*move it aside"):
        server.start()


def refuses_connections(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=5).close()
    except ConnectionRefusedError:
        return True
    return False


@pytest.mark.slow
def test_a_second_ctrl_c_while_replies_are_saved_waits_for_them(
    tmp_path: Path, upstream: ScriptedUpstream, processes: list[ServerProcess]
) -> None:
    upstream.script = Script(tokens=100_000, rate=100)
    process = ServerProcess(tmp_path, upstream.base_url).start()
    processes.append(process)
    conversation_id = process.new_conversation()
    stream = process.send(conversation_id, "hello")
    stream.read_until(lambda text: len(text) > 20)
    # Another program holds the database's write lock: the settle's writes must wait.
    holder = sqlite3.connect(tmp_path / "parley.sqlite3", timeout=10)
    holder.execute("BEGIN IMMEDIATE")
    try:
        assert process.proc is not None
        process.proc.send_signal(signal.SIGINT)
        # Two signals sent before the first is handled would arrive as one: the second is
        # sent once the server has stopped listening (the first one's doing).
        wait_for(lambda: refuses_connections(process.port), timeout=30)
        process.proc.send_signal(signal.SIGINT)  # impatient: Ctrl+C again
        wait_for(lambda: "still saving 1 reply" in "".join(process.output), timeout=30)
        assert process.proc.poll() is None  # it waits for the lock, however long
    finally:
        holder.rollback()
        holder.close()
    assert process.proc.wait(20) == 0
    stream.close()
    with sqlite3.connect(tmp_path / "parley.sqlite3") as db:
        status, ended_by = db.execute(
            "SELECT status, ended_by FROM messages WHERE id = ?", (stream.first["message_id"],)
        ).fetchone()
    assert (status, ended_by) == ("interrupted", "shutdown")
    output = "".join(process.output)
    assert "still saving 1 reply" in output and "Traceback" not in output


def test_port_in_use_exits_2(tmp_path: Path) -> None:
    from server.serve import bind

    taken = bind("127.0.0.1", 0)
    try:
        result = run_cli("--data-dir", str(tmp_path), "--port", str(taken.getsockname()[1]))
    finally:
        taken.close()
    assert result.returncode == 2
    assert "cannot listen" in result.stderr


@pytest.mark.slow
def test_generated_token_is_printed_once_and_works(
    tmp_path: Path, upstream: ScriptedUpstream
) -> None:
    process = ServerProcess(tmp_path, upstream.base_url)
    process.token = ""  # let the server generate one
    env_token = os.environ.pop("PARLEY_TOKEN", None)
    try:
        process.start()
        token_line = process.lines.get(timeout=10)
        assert token_line.startswith("API token (this launch only): ")
        token = token_line.split(": ", 1)[1].strip()
        assert len(token) >= 32
        assert request(process.port, "GET", "/api/status", token=token).status == 200
        assert request(process.port, "GET", "/api/status", token="x").status == 401
        process.terminate()
        assert "".join(process.output).count(token) == 1
    finally:
        process.ensure_stopped()
        if env_token is not None:
            os.environ["PARLEY_TOKEN"] = env_token


def test_settings_from_args_is_the_one_path_for_both_commands(tmp_path: Path) -> None:
    parser = argparse.ArgumentParser()
    add_backend_arguments(parser)
    gguf = tmp_path / "model.gguf"
    gguf.write_bytes(b"GGUF")
    args = parser.parse_args(
        ["--data-dir", str(tmp_path), "--gguf", str(gguf), "--upstream", "http://x/v1",
         "--upstream-model", "m"]
    )  # fmt: skip
    token = "a-token-of-16-chars"
    settings = settings_from_args(args, token=token)
    assert [u.model for u in settings.upstreams] == ["m"]
    assert (settings.host, settings.port, settings.token) == ("127.0.0.1", 0, token)
    assert settings.local.gguf == gguf and settings.data_dir == tmp_path

    with pytest.raises(UsageError, match="go together"):
        settings_from_args(parser.parse_args(["--upstream-model", "m"]), token=token)
    assert issubclass(UsageError, ParleyError)

    # Downloaded models: DATA_DIR/models, or --models-dir (an absolute folder).
    assert settings.models_path == tmp_path / "models"
    chosen = tmp_path / "elsewhere"
    moved = settings_from_args(parser.parse_args(["--models-dir", str(chosen)]), token=token)
    assert moved.models_path == chosen
    with pytest.raises(UsageError, match="absolute"):
        settings_from_args(parser.parse_args(["--models-dir", "models"]), token=token)
    with pytest.raises(UsageError, match="not a folder"):
        settings_from_args(parser.parse_args(["--models-dir", str(gguf)]), token=token)

    # Sub-agents: how many at once; 0 offers no `delegate` at all.
    agents = settings_from_args(parser.parse_args(["--sub-agents", "2"]), token=token)
    assert (agents.limits.agents.children_at_once, agents.limits.agents.max_depth) == (2, 1)
    off = settings_from_args(parser.parse_args(["--sub-agents", "0"]), token=token)
    assert off.limits.agents.max_depth == 0
    with pytest.raises(UsageError, match="--sub-agents"):
        settings_from_args(parser.parse_args(["--sub-agents", "-1"]), token=token)

    # A tool call is asked about after --tool-timeout, unless its server or tool sets one.
    waits = settings_from_args(parser.parse_args(["--tool-timeout", "5"]), token=token)
    assert waits.limits.tool_call_timeout == 5
    for bad in ("0", "-1", "100000"):
        with pytest.raises(UsageError, match="--tool-timeout"):
            settings_from_args(parser.parse_args(["--tool-timeout", bad]), token=token)


@pytest.mark.parametrize("token", ["a", " " * 20, "short-token", " padded-token-here "])
def test_a_short_or_blank_token_is_refused(
    token: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--data-dir", str(tmp_path), "--token", token]) == 2
    assert "at least 16 characters" in capsys.readouterr().err
