"""An import running: read and checked on its own thread, written in short hidden batches.

The worker thread reads the spooled file a conversation at a time (server/transfer/reading.py)
and hands batches to the database thread (server/transfer/staging.py), each sized so that
writing it takes about `BATCH_SECONDS`: a reply's checkpoint queued behind a batch waits that
long at most, never the whole import. While the database writes one batch the worker reads
the next. When the file is read to its end, every conversation is shown in one transaction;
on a problem or a cancel the staged rows are deleted (in batches too) and nothing was
imported. A crash or a shutdown leaves them hidden, and the next start deletes them in the
background (`Imports.open`): hidden rows are nobody's to wait for.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import shutil
import sqlite3
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

from server.errors import (
    AlreadyHereError,
    BadImport,
    ConflictError,
    ImportCancelledError,
    NotFoundError,
)
from server.limits import TransferLimits
from server.storage.db import Database
from server.transfer import attachments, indexing, reading, sameness, staging
from server.transfer import projects as file_projects
from server.transfer.chatgpt import Skipped
from server.transfer.indexing import Indexer
from server.transfer.parley import Conversation
from server.types import ImportProgressJSON

log = logging.getLogger(__name__)

BATCH_SECONDS = TransferLimits.import_batch_time  # server/limits.py
FIRST_BATCH_ROWS = 200
MIN_BATCH_ROWS, MAX_BATCH_ROWS = 20, 20_000
WAL_CHECKPOINT_BATCHES = 20  # ~0.5 s of batches, a few MB of WAL
CLEANUP_ROWS = 500  # rows deleted per batch by the cleanup at start (~25 ms)
STOP_WAIT_SECONDS = TransferLimits.import_stop_wait  # server/limits.py
# An import of up to this many messages is in the search index when it answers (~1 s of the
# index's work); a bigger one answers once shown, and is indexed in the background.
INDEX_INLINE_MESSAGES = 20_000


@dataclass
class Outcome:
    source: str
    conversations: list[str]
    messages: int
    skipped: list[Skipped]
    already_here: int  # chats of the file found here: skipped, or imported again as copies


@dataclass
class ImportJob:
    id: str
    path: Path
    max_chars: int
    max_reply_tokens: int
    bytes_total: int
    duplicates: sameness.Duplicates = sameness.DEFAULT_DUPLICATES
    already_here: int = 0
    state: str = "reading"  # then "showing"; "cancelling" once cancelled
    source: str | None = None
    bytes_read: int = 0
    conversations: int = 0
    messages: int = 0
    cancelled: threading.Event = field(default_factory=threading.Event)
    shutting_down: bool = False  # cancelled by shutdown: its rows are left for the next start
    future: concurrent.futures.Future[Outcome] = field(default_factory=concurrent.futures.Future)

    def progress(self) -> ImportProgressJSON:
        return {
            "id": self.id,
            "state": self.state,
            "source": self.source,
            "bytes_read": self.bytes_read,
            "bytes_total": self.bytes_total,
            "conversations": self.conversations,
            "messages": self.messages,
        }

    def cancel(self, *, shutdown: bool = False) -> None:
        """Stop at the next conversation or batch; what was staged is deleted (at shutdown:
        left hidden, and deleted at the next start, so that shutdown does not wait for it)."""
        self.shutting_down = self.shutting_down or shutdown
        self.cancelled.set()
        self.state = "cancelling"

    async def outcome(self) -> Outcome:
        return await asyncio.wrap_future(self.future)


class Imports:
    """The imports running now, one at a time (a second is a 409 while one runs)."""

    def __init__(self, db: Database, spool_dir: Path) -> None:
        self.db = db
        self.spool_dir = spool_dir
        self._jobs: dict[str, ImportJob] = {}
        self._threads: list[threading.Thread] = []
        # The search index's pass over imported messages (server/transfer/indexing.py): one
        # at a time, after each import and at start; a new import or shutdown stops it.
        self._indexer: Indexer | None = None
        self._upkeep: threading.Thread | None = None  # the last thread to pause the upkeep
        self._closing = threading.Event()

    async def open(self) -> list[str]:
        """Delete what imports cut by a crash or a shutdown left: their spooled files now,
        their staged rows (hidden, so nobody waits for it) in short batches on a thread.
        Returns the ids of those imports."""
        await asyncio.to_thread(shutil.rmtree, self.spool_dir, True)
        await self.db.run(staging.resume_upkeep)
        stale: list[str] = await self.db.run(staging.stale_imports)
        if stale:
            self._spawn(_Cleanup(self.db, stale).run, "parley-import-cleanup")
        self._spawn_upkeep(lambda: None, "parley-import-index")
        return stale

    def _spawn_upkeep(self, work: Callable[[], None], name: str) -> None:
        """`work` (an import), then a pass of the search index, on a thread that first waits
        for the last one that did these (whose pass stops at its next batch): two never
        pause the database's upkeep together."""
        if self._indexer is not None:
            self._indexer.stop.set()
        indexer = self._indexer = Indexer(self.db, threading.Event())
        before = self._upkeep

        def run() -> None:
            if before is not None:
                before.join()
            work()
            if not self._closing.is_set():
                indexer.run()

        self._spawn(run, name)
        self._upkeep = self._threads[-1]

    @property
    def search_backlog(self) -> int:
        """Imported messages shown but not in the search index yet."""
        return self._indexer.left if self._indexer is not None else 0

    def _spawn(self, target: Callable[[], None], name: str) -> None:
        thread = threading.Thread(target=target, name=name, daemon=True)
        self._threads = [t for t in self._threads if t.is_alive()] + [thread]
        thread.start()

    def spool_path(self) -> Path:
        self.spool_dir.mkdir(parents=True, exist_ok=True)
        return self.spool_dir / f"{uuid.uuid4().hex}.json"

    def start(
        self, path: Path, size: int, max_chars: int, max_reply_tokens: int,
        duplicates: sameness.Duplicates = sameness.DEFAULT_DUPLICATES,
    ) -> ImportJob:  # fmt: skip
        if self._jobs:
            raise ConflictError("another import is running; wait for it or cancel it")
        job = ImportJob(uuid.uuid4().hex, path, max_chars, max_reply_tokens, size, duplicates)
        self._jobs[job.id] = job
        job.future.add_done_callback(lambda _: self._jobs.pop(job.id, None))
        self._spawn_upkeep(_Worker(self.db, job).run, f"parley-import-{job.id[:8]}")
        indexer = self._indexer
        assert indexer is not None

        def shown(future: concurrent.futures.Future[Outcome]) -> None:
            # Before its request answers: the status says at once what is left to index.
            if future.exception() is None and job.messages > INDEX_INLINE_MESSAGES:
                indexer.left = max(indexer.left, job.messages)

        job.future.add_done_callback(shown)
        return job

    def progress(self) -> list[ImportProgressJSON]:
        return [job.progress() for job in list(self._jobs.values())]

    def cancel(self, import_id: str) -> None:
        job = self._jobs.get(import_id)
        if job is None:
            raise NotFoundError(f"no import running with id {import_id!r}")
        job.cancel()

    def shutdown(self) -> None:
        """The server is stopping: every import stops at its next batch and leaves what it
        staged hidden for the next start (its request then answers at once, so uvicorn's
        graceful shutdown does not wait for it); the search index's pass stops too."""
        self._closing.set()
        if self._indexer is not None:
            self._indexer.stop.set()
        for job in list(self._jobs.values()):
            job.cancel(shutdown=True)

    async def close(self) -> None:
        """Cancel every import and wait (bounded) for its thread to stop."""
        self.shutdown()
        deadline = time.monotonic() + STOP_WAIT_SECONDS
        for thread in self._threads:
            await asyncio.to_thread(thread.join, max(0.0, deadline - time.monotonic()))


class _Worker:
    def __init__(self, db: Database, job: ImportJob) -> None:
        self.db = db
        self.job = job
        self.budget = FIRST_BATCH_ROWS
        self.skipped: list[Skipped] = []
        self.pending: concurrent.futures.Future[object] | None = None
        self.merging: concurrent.futures.Future[object] | None = None
        self.batches = 0
        self.cache_size: int | None = None  # the database's page cache before the import
        self.attachments = db.path.parent / "attachments"  # the data dir's (server/attachments/)
        self.files: list[str] = []  # the attachments' files this import wrote
        self.here = sameness.Here(db.path)
        self.empty = 0  # conversations of the file with nothing to import (ChatGPT's)
        self.found = 0  # conversations of the file to import, staged or not
        self.asking = False  # a chat is already here and the caller asks: nothing is staged
        self.projects: dict[str, file_projects.Project] = {}  # the file's, by its ids

    def run(self) -> None:
        job = self.job
        try:
            self.cache_size = cast(int, self._call(staging.pause_upkeep))
            outcome = self._import()
        except BaseException as exc:
            self._drop()
            job.future.set_exception(exc)
        else:
            job.future.set_result(outcome)
        finally:
            self.here.close()
            job.path.unlink(missing_ok=True)
            try:
                # Copy the WAL from this thread first: the automatic checkpoint, back on,
                # would copy all of it inside the next commit (a reply's checkpoint).
                staging.checkpoint_wal(self.db.path)
                self._call(staging.resume_upkeep, self.cache_size)
            except Exception:  # the next start resumes it
                log.exception("could not resume the database's upkeep")

    def _import(self) -> Outcome:
        job = self.job
        batch: list[staging.Piece] = []
        rows = 0
        for piece in self._pieces():
            batch.append(piece)
            rows += piece.rows
            if rows >= self.budget:
                self._write(batch, rows)
                batch, rows = [], 0
        if batch:
            self._write(batch, rows)
        self._settle_pending()
        self._check_cancelled()
        if self.asking:
            raise AlreadyHereError(job.already_here, self.found)
        if self.empty and not self.found:
            raise BadImport(
                "",
                f"nothing to import: {_count(self.empty, 'conversation')} of the file, "
                "none with a message Parley keeps (text of the user's or the assistant's)",
            )
        self._call(file_projects.insert_empty, job.id, list(self.projects.values()))
        job.state = "showing"
        shown = self._call(staging.reveal, job.id)
        assert isinstance(shown, list)
        if job.messages <= INDEX_INLINE_MESSAGES:  # searchable when it answers
            while self._call(indexing.index_pending, indexing.INDEX_ROWS):
                self._call(staging.merge_index)
        return Outcome(job.source or "parley", shown, job.messages, self.skipped, job.already_here)

    def _pieces(self) -> Iterator[staging.Piece]:
        """The file's conversations cut into pieces of at most the batch budget."""
        job = self.job
        job.source = "parley" if reading.first_byte(job.path) == b"{" else "chatgpt"
        if job.source == "parley":
            self.projects = file_projects.read(job.path)
        read = reading.items(job.path, job.max_chars, job.max_reply_tokens, self._read)
        for index, item in enumerate(read):
            self._check_cancelled()
            if item.conversation is None:
                assert item.skipped is not None
                self.skipped.append(item.skipped)
                self.empty += 1
                continue
            conversation: Conversation = item.conversation
            where = f"conversations[{index}].project_id"
            project = file_projects.named(conversation.project_ref, self.projects, where)
            self.found += 1
            if not self._to_stage(index, conversation):
                continue
            attachments.write_files(self.attachments, conversation.files)  # before its rows
            self.files.extend(conversation.files.written)
            count = len(conversation.messages)
            start = 0
            while True:
                stop = min(count, start + max(1, self.budget - (1 if start == 0 else 0)))
                yield staging.Piece(conversation, start, stop, project if start == 0 else None)
                start = stop
                if start >= count:
                    break
            job.conversations += 1
            job.messages += count

    def _to_stage(self, index: int, conversation: Conversation) -> bool:
        """Whether to stage the conversation, as the caller said for a chat already here.
        Once a caller that asks meets one, nothing more is staged: the rest of the file is
        only read, checked and counted (the answer says how many are here of how many)."""
        job = self.job
        if self.here.has(conversation.origin):
            job.already_here += 1
            if job.duplicates == "skip":
                self.skipped.append(Skipped(index, conversation.title, sameness.ALREADY_HERE))
                return False
            if job.duplicates == "ask":
                self.asking = True
        return not self.asking

    def _read(self, offset: int) -> None:
        self.job.bytes_read = offset

    def _write(self, batch: list[staging.Piece], rows: int) -> None:
        """Hand a batch to the database thread once the one before it is written, and a
        bounded step of merging the search index after it (its own call: a checkpoint
        queued meanwhile goes between them)."""
        self._settle_pending()
        self._check_cancelled()
        self.pending = self.db.submit(_timed_stage, self.job.id, batch, rows)
        self.merging = self.db.submit(staging.merge_index)
        self.batches += 1
        if self.batches % WAL_CHECKPOINT_BATCHES == 0:
            try:
                staging.checkpoint_wal(self.db.path)
            except sqlite3.Error:  # busy: the next one will do
                log.debug("WAL checkpoint skipped", exc_info=True)

    def _settle_pending(self) -> None:
        if self.merging is not None:
            merging, self.merging = self.merging, None
            merging.result()
        if self.pending is None:
            return
        pending, self.pending = self.pending, None
        rows, seconds = cast(tuple[int, float], pending.result())
        # Size the next batch to take about BATCH_SECONDS, growing at most twofold at a time.
        wanted = rows * BATCH_SECONDS / max(seconds, 1e-4)
        self.budget = int(max(MIN_BATCH_ROWS, min(MAX_BATCH_ROWS, self.budget * 2, wanted)))

    def _check_cancelled(self) -> None:
        if self.job.cancelled.is_set():
            raise ImportCancelledError("the import was cancelled; nothing was imported")

    def _drop(self) -> None:
        """Delete every staged row of the import, a batch at a time."""
        concurrent.futures.wait([f for f in (self.pending, self.merging) if f is not None])
        if self.job.shutting_down:
            return  # hidden; the next start deletes them
        try:
            while self._call(staging.discard, self.job.id, max(self.budget, MIN_BATCH_ROWS)):
                self._check_closing()
            # Its files no row names now (a file whose row is there stays: it is shown).
            gone = cast(list[str], self._call(attachments.without_rows, self.files))
            attachments.remove(self.attachments, gone)
        except Exception:  # the next start deletes what is left
            log.exception("could not delete the rows of a failed import")

    def _check_closing(self) -> None:
        if self.job.shutting_down:
            raise ImportCancelledError("shutting down; the next start deletes the rest")

    def _call(self, fn: object, *args: object) -> object:
        return self.db.submit(fn, *args).result()  # type: ignore[arg-type]


class _Cleanup:
    """Deletes the hidden rows of imports a crash or a shutdown cut, a short batch at a time."""

    def __init__(self, db: Database, import_ids: list[str]) -> None:
        self.db = db
        self.import_ids = import_ids

    def run(self) -> None:
        try:
            for import_id in self.import_ids:
                while self.db.submit(staging.discard, import_id, CLEANUP_ROWS).result():
                    pass
        except Exception:  # closed meanwhile: the next start goes on with it
            log.info("the rows of a cut import are not all deleted yet", exc_info=True)


def _timed_stage(
    conn: sqlite3.Connection, import_id: str, batch: list[staging.Piece], rows: int
) -> tuple[int, float]:
    started = time.perf_counter()
    staging.stage(conn, import_id, batch)
    return rows, time.perf_counter() - started


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}" if n == 1 else f"{n:,} {noun}s"
