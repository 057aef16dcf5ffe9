"""The library's watcher process: in place before it says so, reporting which watched roots
changed, for as long as it is used; a watcher that dies is reported with its exit; stopped
with its block."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import anyio
import pytest

from server.errors import WatchFailed
from server.library import watching
from tests.support.process import child_pids, command_line


def watcher_pid() -> int:
    (pid,) = [
        pid for pid in child_pids(os.getpid()) if b"server.library.watching" in command_line(pid)
    ]
    return pid


def test_changes_are_reported_by_root_for_as_long_as_the_watch_runs(tmp_path: Path) -> None:
    first, second = tmp_path / "docs", tmp_path / "docs2"  # one root's name starts the other's
    (second / "deep").mkdir(parents=True)
    first.mkdir()
    pids: list[int] = []

    async def main() -> list[list[str]]:
        seen: list[list[str]] = []
        async with watching.watching([str(first), str(second)]) as batches:
            pids.append(watcher_pid())  # in place: `watching` yields once it said "ready"
            (second / "deep" / "a.md").write_text("wombat")
            with anyio.fail_after(10):
                seen.append(await anext(batches))
            (first / "b.md").write_text("platypus")
            with anyio.fail_after(10):
                seen.append(await anext(batches))
        return seen

    began = time.monotonic()
    assert anyio.run(main) == [[str(second)], [str(first)]]
    assert time.monotonic() - began < 5
    assert not command_line(pids[0])  # stopped (and reaped) when the block ended


def test_a_watcher_that_dies_is_reported_with_its_exit(tmp_path: Path) -> None:
    async def main() -> None:
        async with watching.watching([str(tmp_path)]) as batches:
            os.kill(watcher_pid(), signal.SIGKILL)
            with anyio.fail_after(10):
                await anext(batches)

    with pytest.raises(WatchFailed, match="exit -9"):
        anyio.run(main)
