"""Indexing the library in the background: one folder at a time, one file at a time.

A folder is scanned when it is added and at every start (a file changed or deleted while
Parley was not running is caught then), and its changes are followed while Parley runs
(`watching`). A file is read (as hostile input: `reading`) in a thread, parsed and cut into
passages in a worker process with a budget (`worker`: a PDF bomb is skipped, saying why; the
workers are the server's parse pool, shared with attached PDFs: `pool`), then written in one
transaction: a kill -9 leaves whole files in the index,
and the next scan skips every file already there unchanged (the same file, by device and
inode, with the same size and time; or the same content hash), so it goes on where it was.
Folders may nest: a file below two folders of the library is indexed once, and stays while
either holds it. Removing a folder or shutting down stops the work at once: the worker
parsing a file is killed, a file being read is abandoned (the read is bounded in bytes and
time, and its thread ends on its own); nothing of either is written.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
from collections.abc import AsyncIterator, Awaitable, Callable
from functools import partial
from pathlib import Path
from typing import NamedTuple

import anyio
import anyio.abc
import anyio.to_thread
from anyio.streams.memory import MemoryObjectReceiveStream

from server.errors import SkipFile, WatchFailed
from server.library.chunking import Chunk
from server.library.parsing import kind_of
from server.library.pool import ParsePool
from server.library.reading import Identity, read_inside, under
from server.library.sensitive import passed_over, passed_over_name
from server.library.store import KnownFile, LibraryStore
from server.library.watching import watching
from server.library.worker import Skipped
from server.types.library import LibraryProgressJSON

log = logging.getLogger(__name__)


class Indexer:
    def __init__(self, store: LibraryStore, parsers: ParsePool) -> None:
        self.store = store
        self.progress: LibraryProgressJSON = _idle()
        self._wanted: list[str] = []  # folder ids to scan, in order
        self._wake = anyio.Event()
        self._scopes: dict[str, anyio.CancelScope] = {}  # the folder being scanned
        self._tg: anyio.abc.TaskGroup | None = None
        self._folders: dict[str, str] = {}  # id -> path, as watched
        self._rewatch = anyio.Event()  # the folders changed: watch the new set
        self.parsers = parsers  # the worker processes that parse files, shared (pool.py)

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        async with anyio.create_task_group() as tg:
            self._tg = tg
            tg.start_soon(self._work)
            for folder in await self.store.folders():
                self.add(folder["id"], folder["path"])
            tg.start_soon(self._watch)
            try:
                yield
            finally:
                self._tg = None
                tg.cancel_scope.cancel()  # mid-file: its worker is killed (worker.Parser)

    @property
    def folder_count(self) -> int:
        return len(self._folders)

    @property
    def roots(self) -> list[str]:
        """The library's folders now."""
        return list(self._folders.values())

    def add(self, folder_id: str, path: str) -> None:
        """A folder of the library: watched, then scanned."""
        self._folders[folder_id] = path
        self._rewatch.set()
        if self._tg is not None:  # warm (~70 ms of start-up) while the watch is set up
            self._tg.start_soon(self.parsers.warm)

    def scan(self, folder_id: str) -> None:
        """Scan this folder soon (after those asked before)."""
        if folder_id not in self._wanted:
            self._wanted.append(folder_id)
        self._wake.set()

    def forget(self, folder_id: str) -> None:
        """The folder was removed: stop scanning and watching it now."""
        if self._folders.pop(folder_id, None) is not None:
            self._rewatch.set()
        if folder_id in self._wanted:
            self._wanted.remove(folder_id)
        scope = self._scopes.get(folder_id)
        if scope is not None:
            scope.cancel()

    async def _work(self) -> None:
        while True:
            if not self._wanted:
                self._wake = anyio.Event()
                await self._wake.wait()
                continue
            folder_id = self._wanted.pop(0)
            with anyio.CancelScope() as scope:
                self._scopes[folder_id] = scope
                try:
                    await self._scan(folder_id)
                except Exception:
                    log.exception("indexing folder %s failed", folder_id)
                finally:
                    self._scopes.pop(folder_id, None)
                    self.progress = _idle()

    async def _watch(self) -> None:
        """Follow changes in the folders while Parley runs: a folder with a change is scanned
        again (which reads only the files that changed, and drops the deleted ones).

        The watcher is a process of its own (see `watching`). When the folders change, the new
        watcher is in place before the old one stops, so no change falls between them; and a
        folder is first scanned once it is watched, so no change falls between the scan and
        the watch."""
        watched: dict[str, str] = {}
        previous = anyio.CancelScope()
        async with anyio.create_task_group() as tg:
            while True:
                self._rewatch = anyio.Event()
                folders = dict(self._folders)
                roots = await anyio.to_thread.run_sync(_existing, list(folders.values()))
                scope = anyio.CancelScope()
                if roots:
                    ready = anyio.Event()
                    tg.start_soon(self._follow, folders, roots, scope, ready)
                    await ready.wait()
                previous.cancel()
                previous = scope
                for folder_id, path in folders.items():
                    if watched.get(folder_id) != path:
                        self.scan(folder_id)
                watched = folders
                await self._rewatch.wait()

    async def _follow(
        self,
        folders: dict[str, str],
        roots: list[str],
        scope: anyio.CancelScope,
        ready: anyio.Event,
    ) -> None:
        """Scan each folder that changes, until `scope` is cancelled; `ready` is set once the
        watch is in place (or has failed: the folders are scanned all the same)."""
        with scope:
            try:
                async with watching(roots) as batches:
                    ready.set()
                    async for changed in batches:
                        for folder_id, root in folders.items():
                            if root in changed:
                                self.scan(folder_id)
            except (OSError, WatchFailed) as exc:
                log.warning("cannot watch the library's folders: %s", exc)
            finally:
                ready.set()

    async def _scan(self, folder_id: str) -> None:
        root = await self.store.folder_path(folder_id)
        if root is None:
            return
        found = await anyio.to_thread.run_sync(walk, root, abandon_on_cancel=True)
        known, nested = await self.store.known_files(folder_id)
        gone = [
            path
            for path in known
            if path not in found and not any(under(path, inner) for inner in nested)
        ]
        if gone:
            await self.store.drop_files(gone)
        self.progress = {
            "state": "indexing",
            "folder": root,
            "done": 0,
            "total": len(found),
            "current": None,
        }
        # A file is written while the next is read and parsed (in order, one at a time), so
        # the worker's time overlaps the database's instead of adding to it.
        send, receive = anyio.create_memory_object_stream[Write](1)
        async with anyio.create_task_group() as tg:
            tg.start_soon(_writer, receive)
            async with send:
                for path, identity in sorted(found.items()):
                    before = known.get(path)
                    if before is None or not before.same(identity):
                        self.progress["current"] = path
                        await send.send(await self._index_file(folder_id, root, path, before))
                    self.progress["done"] += 1
        log.info("indexed %s: %d files", root, len(found))

    async def _index_file(
        self, folder_id: str, root: str, path: str, before: KnownFile | None
    ) -> Write:
        """The file read and parsed: how to write what the index keeps of it."""
        read = await anyio.to_thread.run_sync(read_file, root, path, abandon_on_cancel=True)
        if isinstance(read, Outcome):
            outcome = read
        else:
            digest = read.known.hash
            if before is not None and digest is not None and before.hash == digest:
                return partial(self.store.touch_file, path, read.known)  # touched, not changed
            outcome = _outcome(read.known, read.kind, await self.parsers.cut(read.kind, read.data))
        known, kind, chunks, skipped = outcome
        return partial(self.store.write_file, folder_id, path, known, kind, chunks, skipped)


Write = Callable[[], Awaitable[object]]


async def _writer(writes: MemoryObjectReceiveStream[Write]) -> None:
    async with writes:
        async for write in writes:
            await write()


def _idle() -> LibraryProgressJSON:
    return {"state": "idle", "folder": None, "done": 0, "total": 0, "current": None}


def _existing(paths: list[str]) -> list[str]:
    return [path for path in paths if os.path.isdir(path)]


def walk(root: str) -> dict[str, Identity]:
    """Every file below `root` Parley could read, as `lstat` saw it: links are not followed
    (nor listed); hidden files and folders below the root, folders of tools' data and the
    places that hold secrets are passed over (`sensitive.passed_over_name`)."""
    found: dict[str, Identity] = {}
    secret = passed_over(Path(root), Path.home())
    folders = [root]
    while folders:
        try:
            entries = list(os.scandir(folders.pop()))
        except OSError:
            continue
        for entry in entries:
            try:
                folder = entry.is_dir(follow_symlinks=False)
                if passed_over_name(entry.name, entry.path, folder, secret) is not None:
                    continue
                if folder:
                    folders.append(entry.path)
                elif entry.is_file(follow_symlinks=False) and kind_of(Path(entry.name)):
                    found[entry.path] = Identity.of(entry.stat(follow_symlinks=False))
            except OSError:
                continue
    return found


class Outcome(NamedTuple):
    """What reading one file gave: what the index keeps of it, and its passages or why not."""

    known: KnownFile
    kind: str | None
    chunks: list[Chunk] | None
    skipped: str | None


class Read(NamedTuple):
    """One file's bytes, to be parsed."""

    known: KnownFile
    kind: str
    data: bytes


def read_file(root: str, path: str) -> Read | Outcome:
    """One file of the folder `root`, read as hostile input, or why not; never raises for a
    bad file. A file that could not be opened is known without an identity, so the next scan
    tries it again (the original put back over a link swapped in is read then)."""
    kind = kind_of(Path(path))
    unopened = KnownFile(0, 0.0, None)
    if kind is None:
        return Outcome(unopened, None, None, "not a kind Parley reads")
    try:
        data, identity = read_inside(root, path)
    except SkipFile as exc:
        return Outcome(unopened, kind, None, str(exc))
    known = KnownFile.read(identity, hashlib.blake2b(data, digest_size=16).hexdigest())
    return Read(known, kind, data)


def _outcome(known: KnownFile, kind: str, cut: list[Chunk] | Skipped) -> Outcome:
    if isinstance(cut, Skipped):
        return Outcome(known, kind, None, cut.reason)
    if not cut:
        return Outcome(known, kind, None, "no text")
    return Outcome(known, kind, cut, None)
