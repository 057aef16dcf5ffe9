"""Library files are parsed in a worker process with a budget (issue 38): a PDF bomb is skipped
with its reason while the rest of its folder is indexed; removing its folder or shutting down
kills the work at once; a worker that dies skips its file and a new one serves the next."""

from __future__ import annotations

import os
import signal
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import anyio
import pytest

from server.library import pool, worker
from server.library.chunking import Chunk
from server.library.worker import Parser, Skipped
from server.limits import LibraryLimits
from tests.server.library.test_library import add, indexed, library, search
from tests.support.client import request
from tests.support.documents import make_pdf, make_pdf_bomb, make_pdf_memory_bomb
from tests.support.parley import Parley
from tests.support.process import ServerProcess, child_pids, command_line
from tests.support.upstream import ScriptedUpstream
from tests.support.waiting import wait_for

pytestmark = pytest.mark.slow

T = TypeVar("T")


def workers() -> list[int]:
    """This process's parse workers (a killed one is gone: reaped, or a zombie with no
    command line)."""
    return [pid for pid in child_pids(os.getpid()) if b"server.library.worker" in command_line(pid)]


def cpu_seconds(pid: int) -> float:
    """A process's CPU time so far (Linux /proc), 0 once it has ended."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError):
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def busy(pid: int) -> bool:
    """The process has used CPU (it is parsing)."""
    return cpu_seconds(pid) > 0.3


def run(body: Callable[[], Awaitable[T]]) -> T:
    return anyio.run(body)


RETIRE_TEST_BYTES = 150 << 20


def test_a_pdf_bomb_is_stopped_at_its_budget_and_the_worker_serves_the_next_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(worker, "PARSE_CPU_S", 1.0)
    # The parent's wall-clock bound (14 s here) is for a worker that never answers; on a
    # starved CI machine it could fire first and replace the worker, which is not what this
    # test is about: the CPU timer alone stops the parse.
    monkeypatch.setattr(worker, "WALL_GRACE_S", 120.0)
    bomb = make_pdf_bomb(tmp_path / "bomb.pdf", stream_mb=1).read_bytes()  # ~1.8 s a page
    assert len(bomb) < 30_000
    fine = make_pdf(tmp_path / "fine.pdf", ["Chapter on quokkas"]).read_bytes()

    async def body() -> tuple[Any, Any, Parser]:
        parser = Parser()
        try:
            return await parser.cut("pdf", bomb), await parser.cut("pdf", fine), parser
        finally:
            await parser.aclose()

    skipped, parsed, parser = run(body)
    assert skipped == Skipped("took longer than 1 s to parse")
    assert parsed == [Chunk("Chapter on quokkas", 1, None, None)]
    # Stopped in Python by its CPU timer (~70 MB), the worker lives on. (It was replaced in
    # full runs: its peak memory was read from ru_maxrss, which keeps the forking process's
    # size, here the test suite's, past LibraryLimits.worker_retire_bytes. Now read from VmHWM
    # on Linux.)
    assert parser.ends == [] and parser.started == 1


def test_a_worker_forked_from_a_big_process_counts_only_its_own_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ballast = bytearray(RETIRE_TEST_BYTES)  # this process is bigger than the bound...
    for at in range(0, len(ballast), 4096):
        ballast[at] = 1  # ...resident, not just reserved
    monkeypatch.setattr(LibraryLimits, "worker_retire_bytes", RETIRE_TEST_BYTES)

    async def body() -> tuple[Any, Any, Parser]:
        parser = Parser()
        try:
            return await parser.cut("text", b"one"), await parser.cut("text", b"two"), parser
        finally:
            await parser.aclose()

    one, two, parser = run(body)
    assert one[0].text == "one" and two[0].text == "two"
    assert parser.ends == [] and parser.started == 1  # ...but the worker is small
    del ballast
    assert workers() == []


def test_a_worker_that_grew_big_is_replaced_after_its_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(LibraryLimits, "worker_retire_bytes", 60 << 20)
    bomb = make_pdf_memory_bomb(tmp_path / "bomb.pdf", image_mb=30, pages=1).read_bytes()  # ~100 MB

    async def body() -> tuple[Any, Any, int]:
        parser = Parser()
        try:
            return await parser.cut("pdf", bomb), await parser.cut("text", b"after"), parser.started
        finally:
            await parser.aclose()

    read, parsed, started = run(body)
    assert isinstance(read, list) and "bomb" in read[0].text
    assert isinstance(parsed, list) and parsed[0].text == "after"
    assert started == 2  # its memory went back with it


def test_a_file_with_too_much_text_is_skipped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(LibraryLimits, "max_text_chars", 1000)
    pages = make_pdf(tmp_path / "long.pdf", ["word " * 150] * 5).read_bytes()

    async def body() -> tuple[Any, Any, Any]:
        parser = Parser()
        try:
            return (
                await parser.cut("pdf", pages),
                await parser.cut("text", b"x" * 1001),
                await parser.cut("text", b"x" * 1000),
            )
        finally:
            await parser.aclose()

    pdf, text, fits = run(body)
    assert pdf == text == Skipped("more than 1,000 characters of text")
    assert isinstance(fits, list) and fits[0].text == "x" * 1000


def test_a_file_over_the_memory_cap_is_skipped_and_the_worker_replaced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(worker, "MEMORY_BYTES", 200 << 20)
    bomb = make_pdf_memory_bomb(tmp_path / "bomb.pdf").read_bytes()  # needs ~340 MB in ~1 s

    async def body() -> tuple[Any, Any, int]:
        parser = Parser()
        try:
            return await parser.cut("pdf", bomb), await parser.cut("text", b"after"), parser.started
        finally:
            await parser.aclose()

    skipped, parsed, started = run(body)
    assert skipped == Skipped("needed more than 200 MB of memory to parse")
    assert isinstance(parsed, list) and parsed[0].text == "after"
    assert started == 2


@pytest.mark.parametrize(
    ("how", "reason"),
    [
        (signal.SIGSEGV, "the parser crashed on it (SIGSEGV)"),
        (signal.SIGKILL, "the parser crashed on it (SIGKILL)"),
    ],
)
def test_a_worker_that_dies_skips_its_file_and_a_new_one_serves_the_next(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: signal.Signals, reason: str
) -> None:
    monkeypatch.setattr(worker, "PARSE_CPU_S", 60.0)
    bomb = make_pdf_bomb(tmp_path / "bomb.pdf").read_bytes()

    async def body() -> tuple[Any, Any, int]:
        parser = Parser()
        try:
            async with anyio.create_task_group() as tg:

                async def crash() -> None:
                    while parser.pid is None or not busy(parser.pid):
                        await anyio.sleep(0.01)  # polling a fact: the worker is parsing
                    os.kill(parser.pid, how)

                tg.start_soon(crash)
                skipped = await parser.cut("pdf", bomb)
            return skipped, await parser.cut("markdown", b"# Next\n\nfile"), parser.started
        finally:
            await parser.aclose()

    skipped, parsed, started = run(body)
    # Seen once in a run of the whole file: asyncio's child watcher reported "unknown child
    # process, returncode 255" for the killed worker (its exit status lost), so the reason
    # said "exit 255". What matters: it is skipped as a crash, and the next file is served.
    assert isinstance(skipped, Skipped)
    assert skipped.reason in (reason, "the parser crashed on it (exit 255)")
    assert isinstance(parsed, list) and parsed[0].text == "# Next\n\nfile"
    assert started == 2


def test_a_bomb_in_a_folder_is_skipped_with_its_reason_and_the_rest_indexed(
    parley: Parley, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(worker, "PARSE_CPU_S", 1.0)
    monkeypatch.setattr(pool, "WORKER_IDLE_S", 0.5)
    folder = tmp_path / "docs"
    folder.mkdir()
    make_pdf_bomb(folder / "a-bomb.pdf")
    (folder / "b-notes.md").write_text("# Notes\n\nThe quokka smiles.\n")
    add(parley, folder)
    done = indexed(parley, files=1, timeout=60)
    assert done["skipped_files"] == [
        {"path": str(folder / "a-bomb.pdf"), "reason": "took longer than 1 s to parse"}
    ]
    assert [Path(p["path"]).name for p in search(parley, "quokka")] == ["b-notes.md"]
    wait_for(lambda: not workers(), timeout=10)  # idle for WORKER_IDLE_S: the worker is closed


def test_a_worker_killed_mid_file_skips_it_and_the_next_file_is_indexed(
    parley: Parley, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(worker, "PARSE_CPU_S", 120.0)
    folder = tmp_path / "docs"
    folder.mkdir()
    make_pdf_bomb(folder / "a-bomb.pdf")
    (folder / "b-notes.md").write_text("# Notes\n\nThe quokka smiles.\n")
    add(parley, folder)
    first = wait_for(lambda: [pid for pid in workers() if busy(pid)], timeout=30)
    os.kill(first[0], signal.SIGKILL)  # as the kernel's OOM killer would
    done = indexed(parley, files=1, timeout=30)
    [skipped] = done["skipped_files"]
    assert Path(skipped["path"]).name == "a-bomb.pdf"
    assert skipped["reason"].startswith("the parser crashed on it")
    assert [Path(p["path"]).name for p in search(parley, "quokka")] == ["b-notes.md"]


def test_removing_a_folder_mid_parse_kills_the_work_and_re_adding_starts_one(
    parley: Parley, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(worker, "PARSE_CPU_S", 120.0)
    folder = tmp_path / "docs"
    folder.mkdir()
    make_pdf_bomb(folder / "bomb.pdf")
    added = add(parley, folder)
    first = wait_for(lambda: [pid for pid in workers() if busy(pid)], timeout=30)
    assert library(parley)["progress"]["current"] == str(folder / "bomb.pdf")

    assert parley.call("DELETE", f"/api/library/folders/{added['id']}").status == 204
    wait_for(lambda: not command_line(first[0]), timeout=10)  # killed: gone, not burning CPU
    wait_for(lambda: library(parley)["progress"]["state"] == "idle", timeout=10)
    assert not any(busy(pid) for pid in workers())  # a new one may be warm: it does nothing

    add(parley, folder)
    second = wait_for(lambda: [pid for pid in workers() if busy(pid)], timeout=30)
    assert len(second) == 1 and second != first


def test_shutting_down_mid_parse_kills_the_worker(
    data_dir: Path, upstream: ScriptedUpstream, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(worker, "PARSE_CPU_S", 120.0)
    folder = tmp_path / "docs"
    folder.mkdir()
    make_pdf_bomb(folder / "bomb.pdf")
    parley = Parley(data_dir, upstream.base_url).start()
    try:
        add(parley, folder)
        busy_workers = wait_for(lambda: [pid for pid in workers() if busy(pid)], timeout=30)
    finally:
        assert parley.stop()
    assert not command_line(busy_workers[0])
    assert workers() == []


def test_the_worker_never_outlives_parley_even_after_kill_9_mid_file(
    data_dir: Path, upstream: ScriptedUpstream, tmp_path: Path, processes: list[ServerProcess]
) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    make_pdf_bomb(folder / "bomb.pdf")  # ~10 s of CPU a page: busy well past this test
    process = ServerProcess(data_dir, upstream.base_url).start()
    processes.append(process)
    reply = request(
        process.port, "POST", "/api/library/folders", token=process.token,
        json_body={"path": str(folder)},
    )  # fmt: skip
    assert reply.status == 201, reply.body

    def parsing() -> list[int]:
        assert process.proc is not None
        return [
            pid
            for pid in child_pids(process.proc.pid)
            if b"server.library.worker" in command_line(pid) and busy(pid)
        ]

    worker_pid = wait_for(parsing, timeout=30)[0]
    process.kill()
    wait_for(lambda: not command_line(worker_pid), timeout=10)  # killed with Parley
