"""Indexing the library in the background: one folder at a time, one file at a time.

A folder is scanned when it is added and at every start (a file changed or deleted while
Parley was not running is caught then), and its changes are followed while Parley runs
(`watching`). A file is read, parsed and cut into passages in a worker thread, then
written in one transaction: a kill -9 leaves whole files in the index, and the next scan
skips every file already there unchanged (same size and time, or same content hash), so it
goes on where it was. Removing a folder or shutting down stops the work at once: the file
being read is abandoned (its thread ends on its own; nothing of it is written).
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import anyio.abc
import anyio.to_thread

from server.library.chunking import Chunk, chunk
from server.library.parsing import SkipFile, kind_of, parse, read
from server.library.store import KnownFile, LibraryStore
from server.library.watching import WatchFailed, watching
from server.types import LibraryProgressJSON

log = logging.getLogger(__name__)

IGNORED_DIRS = {".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", "venv", ".tox"}


class Indexer:
    def __init__(self, store: LibraryStore) -> None:
        self.store = store
        self.progress: LibraryProgressJSON = _idle()
        self._wanted: list[str] = []  # folder ids to scan, in order
        self._wake = anyio.Event()
        self._scopes: dict[str, anyio.CancelScope] = {}  # the folder being scanned
        self._tg: anyio.abc.TaskGroup | None = None
        self._folders: dict[str, str] = {}  # id -> path, as watched
        self._rewatch = anyio.Event()  # the folders changed: watch the new set

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
                tg.cancel_scope.cancel()

    @property
    def folder_count(self) -> int:
        return len(self._folders)

    def add(self, folder_id: str, path: str) -> None:
        """A folder of the library: watched, then scanned."""
        self._folders[folder_id] = path
        self._rewatch.set()

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
        found = await anyio.to_thread.run_sync(_walk, Path(root), abandon_on_cancel=True)
        known = await self.store.known_files(folder_id)
        gone = [path for path in known if path not in found]
        if gone:
            await self.store.drop_files(gone)
        self.progress = {
            "state": "indexing",
            "folder": root,
            "done": 0,
            "total": len(found),
            "current": None,
        }
        for path, (size, mtime) in sorted(found.items()):
            before = known.get(path)
            if before is None or (before.size, before.mtime) != (size, mtime):
                self.progress["current"] = path
                await self._index_file(folder_id, path, size, mtime, before)
            self.progress["done"] += 1
        log.info("indexed %s: %d files", root, len(found))

    async def _index_file(
        self, folder_id: str, path: str, size: int, mtime: float, before: KnownFile | None
    ) -> None:
        outcome = await anyio.to_thread.run_sync(
            _read_and_cut, Path(path), size, abandon_on_cancel=True
        )
        kind, digest, chunks, skipped = outcome
        if before is not None and digest is not None and before.hash == digest:
            await self.store.touch_file(path, mtime)  # touched, not changed
            return
        known = KnownFile(size, mtime, digest)
        await self.store.write_file(folder_id, path, known, kind, chunks, skipped)


def _idle() -> LibraryProgressJSON:
    return {"state": "idle", "folder": None, "done": 0, "total": 0, "current": None}


def _existing(paths: list[str]) -> list[str]:
    return [path for path in paths if os.path.isdir(path)]


def _walk(root: Path) -> dict[str, tuple[int, float]]:
    """Every file under `root` Parley could read, with its size and time (links not followed)."""
    found: dict[str, tuple[int, float]] = {}
    for directory, subdirs, files in os.walk(root, followlinks=False):
        subdirs[:] = [d for d in subdirs if d not in IGNORED_DIRS and not d.startswith(".")]
        for name in files:
            path = Path(directory) / name
            if name.startswith(".") or kind_of(path) is None:
                continue
            try:
                stat = path.stat()
            except OSError:
                continue
            if path.is_symlink() or not path.is_file():
                continue
            found[str(path)] = (stat.st_size, stat.st_mtime)
    return found


def _read_and_cut(
    path: Path, size: int
) -> tuple[str | None, str | None, list[Chunk] | None, str | None]:
    """(kind, content hash, passages, why skipped) of one file; never raises for a bad file."""
    try:
        kind, data = read(path, size)
    except SkipFile as exc:
        return kind_of(path), None, None, str(exc)
    digest = hashlib.blake2b(data, digest_size=16).hexdigest()
    try:
        chunks = chunk(parse(kind, data))
    except SkipFile as exc:
        return kind, digest, None, str(exc)
    except Exception as exc:  # a parser's own bug must not stop the indexer
        log.warning("could not parse %s: %r", path, exc)
        return kind, digest, None, f"could not be parsed ({type(exc).__name__})"
    if not chunks:
        return kind, digest, None, "no text"
    return kind, digest, chunks, None
