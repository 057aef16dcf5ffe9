"""The library as the rest of the server sees it: its index (opened with the server, a file of
its own) and the indexer that keeps it current."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator
from pathlib import Path

import anyio.to_thread

from server.errors import NotFoundError, StorageError
from server.library import sources
from server.library.indexer import Indexer
from server.library.pool import ParsePool
from server.library.store import LibraryStore
from server.settings import Limits
from server.types.library import (
    FolderJSON,
    LibraryJSON,
    LibraryProgressJSON,
    PassageJSON,
    SourceJSON,
)

log = logging.getLogger(__name__)


class Library:
    def __init__(self, path: Path, limits: Limits) -> None:
        self.store = LibraryStore(path, busy_timeout=limits.db_busy_timeout)
        # The server's parse workers: the indexer's files and attached PDFs share them.
        self.parsers = ParsePool(limits.library.parse_workers)
        self.indexer = Indexer(self.store, self.parsers)
        self.error: str | None = None  # the index could not be opened: the app runs without

    @property
    def has_folders(self) -> bool:
        return self.error is None and self.indexer.folder_count > 0

    @property
    def progress(self) -> LibraryProgressJSON:
        return self.indexer.progress

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        # The pool outlives the indexer, which stops first (and attached PDFs use it too).
        async with self.parsers.running(), self._indexing():
            yield

    @contextlib.asynccontextmanager
    async def _indexing(self) -> AsyncIterator[None]:
        try:
            await self.store.open()
        except StorageError as exc:
            # The library is derived data: a damaged index must not stop the app.
            self.error = str(exc)
            log.error("the library's index is unusable: %s", exc)
            yield
            return
        try:
            async with self.indexer.running():
                yield
        finally:
            await self.store.close()

    def _check(self) -> None:
        if self.error is not None:
            raise StorageError(f"the library's index cannot be used: {self.error}")

    async def describe(self) -> LibraryJSON:
        self._check()
        return {"folders": await self.store.folders(), "progress": self.progress}

    async def add_folder(self, path: str) -> FolderJSON | None:
        """None if it is in the library already."""
        self._check()
        folder = await self.store.add_folder(path)
        if folder is not None:
            self.indexer.add(folder["id"], path)
        return folder

    async def remove_folder(self, folder_id: str) -> bool:
        self._check()
        self.indexer.forget(folder_id)
        holders = await self.store.remove_folder(folder_id)
        for holder in holders or []:
            self.indexer.scan(holder)  # it keeps what it holds, drops what it skips
        return holders is not None

    async def source(self, path: str, first: int | None, last: int | None) -> SourceJSON:
        """A cited file's lines, read now only if a folder of the library holds it, its walk
        would reach it (else ForbiddenError) and the index has it (else NotFoundError)."""
        self._check()
        roots = self.indexer.roots
        if sources.readable_holder(path, roots) is not None and not await self.store.has(path):
            raise NotFoundError(f"{path} is not in your library's index", code="not_indexed")
        return await anyio.to_thread.run_sync(sources.source, path, roots, first, last)

    async def search(self, query: str, k: int, folders: tuple[str, ...] = ()) -> list[PassageJSON]:
        """The best passages; with `folders`, only those of files below one of them."""
        self._check()
        return await self.store.search(query, k, folders)
