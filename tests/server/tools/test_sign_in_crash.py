"""kill -9 during a sign-in: Parley in a process of its own, killed while the browser is on
the authorization page. Nothing of the flow was kept: the next start asks for a sign-in
again, no code was exchanged, and a new sign-in works (its tokens kept out of the data
dir)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.server.tools.test_oauth import browse
from tests.support.client import request
from tests.support.oauth_parts import oauth_parts
from tests.support.process import ServerProcess
from tests.support.tools import write_config
from tests.support.upstream import ScriptedUpstream
from tests.support.waiting import wait_for

pytestmark = pytest.mark.slow


def row(process: ServerProcess) -> dict[str, Any]:
    reply = request(process.port, "GET", "/api/tools", token=process.token)
    (found,) = reply.json()["servers"]
    return dict(found)


def started(
    data_dir: Path, upstream: ScriptedUpstream, config: Path, processes: list[ServerProcess]
) -> ServerProcess:
    process = ServerProcess(data_dir, upstream.base_url, "--mcp-config", str(config)).start()
    processes.append(process)
    wait_for(lambda: row(process)["state"] == "needs_sign_in", 30)
    return process


def begin(process: ServerProcess) -> str:
    reply = request(process.port, "POST", "/api/tools/servers/r/sign-in", token=process.token)
    assert reply.status == 202, reply.body
    url: str = reply.json()["sign_in"]["authorization_url"]
    return url


def test_after_kill_9_during_a_sign_in_the_next_start_asks_again(
    data_dir: Path,
    upstream: ScriptedUpstream,
    tmp_path: Path,
    processes: list[ServerProcess],
) -> None:
    with oauth_parts(tmp_path / "parts") as parts:
        config = write_config(tmp_path / "mcp.json", {"r": {"url": parts.remote.url}})
        process = started(data_dir, upstream, config, processes)
        begin(process)  # the browser is on the authorization page
        process.kill()

        restarted = started(data_dir, upstream, config, processes)
        assert parts.auth.provider.grants == []  # no code was ever exchanged

        page, _ = browse(begin(restarted))  # a new sign-in works
        assert page.status_code == 200 and "Signed in to r" in page.text
        wait_for(lambda: row(restarted)["state"] == "ready", 30)
        restarted.terminate()
        assert parts.auth.provider.issued  # and none of its tokens is in the data dir
        for path in (p for p in data_dir.rglob("*") if p.is_file()):
            content = path.read_bytes()
            assert not any(token.encode() in content for token in parts.auth.provider.issued)
