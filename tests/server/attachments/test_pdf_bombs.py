"""PDFs attached at once wait their turn in the library's parse workers (issue 48): eight PDF
bombs uploaded together are parsed at most `LibraryLimits.parse_workers` at a time, each
within the worker's budget, and the memory they take stays within the budget's (that many
workers times `parse_memory_bytes`), instead of one worker each."""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from server.limits import AttachmentLimits, Limits
from tests.server.attachments.test_attachments import upload
from tests.support.client import Reply
from tests.support.documents import make_pdf_bomb
from tests.support.parley import Parley
from tests.support.process import child_pids, command_line
from tests.support.upstream import ScriptedUpstream

pytestmark = pytest.mark.slow

BOMBS = 8


def resident_bytes(pid: int) -> int:
    """A process's resident memory now (Linux /proc), 0 once it has ended."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except (FileNotFoundError, ProcessLookupError):
        pass
    return 0


class WorkerWatch:
    """This process's parse workers, looked at every few milliseconds on a thread of its own
    until stopped: the most alive at once, and the most memory they held together. (It only
    observes: the test waits on the uploads' answers, not on it.)"""

    def __init__(self) -> None:
        self.most_workers = 0
        self.most_bytes = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def __enter__(self) -> WorkerWatch:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()

    def _watch(self) -> None:
        while not self._stop.wait(0.005):
            workers = [
                pid
                for pid in child_pids(os.getpid())
                if b"server.library.worker_process" in command_line(pid)
            ]
            self.most_workers = max(self.most_workers, len(workers))
            self.most_bytes = max(self.most_bytes, sum(resident_bytes(pid) for pid in workers))


def test_eight_pdf_bombs_at_once_share_the_library_s_parse_workers(
    data_dir: Path, upstream: ScriptedUpstream, tmp_path: Path
) -> None:
    limits = Limits(attachments=AttachmentLimits(parse_cpu=1.0))
    budget = limits.library
    bomb = make_pdf_bomb(tmp_path / "bomb.pdf").read_bytes()  # ~10 s of CPU a page
    parley = Parley(data_dir, upstream.base_url, limits=limits).start()
    try:
        with WorkerWatch() as watch, ThreadPoolExecutor(BOMBS) as uploads:
            replies: list[Reply] = list(
                uploads.map(lambda i: upload(parley, f"bomb {i}.pdf", bomb), range(BOMBS))
            )
        pool = parley.services.library.parsers
        most_busy, started = pool.most_busy, pool.started
    finally:
        parley.stop()

    for reply in replies:  # each stopped at its own CPU budget, none at the wall clock
        assert reply.status == 400, reply.body
        error = reply.json()["error"]
        assert error["code"] == "attachment_unreadable"
        assert error["message"].endswith("took longer than 1 s to parse"), error
    print(
        f"{BOMBS} PDF bombs: at most {watch.most_workers} workers alive at once, "
        f"{watch.most_bytes / 2**20:.0f} MB resident together at most; {started} started"
    )
    assert watch.most_workers <= budget.parse_workers
    assert most_busy == budget.parse_workers  # the pool was full: the others waited
    assert watch.most_bytes <= budget.parse_workers * budget.parse_memory_bytes
