"""Downloads: one file at a time (the rest queued), each fetched by a child process
(fetch.py) that pause, cancel and shutdown kill, so the transfer really stops. Progress is
the bytes on disk, read every HubLimits.poll_interval. A finished file is verified against
the hub's sha256 (on a thread) before it is renamed into place and added as a model
(server/models/adding.py); a file that fails is never offered."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import os
import secrets
import shutil
from collections.abc import AsyncIterator
from pathlib import Path

import anyio

from server.errors import ApiError, BadRequestError, ConflictError, NotFoundError
from server.limits import HubLimits
from server.models.adding import ModelAdder
from server.models.hub import names, records
from server.models.hub.catalog import Catalog
from server.models.hub.child import FetchChild
from server.models.hub.records import Download
from server.types.getting_models import DownloadJSON

log = logging.getLogger(__name__)

# Errors after which the bytes on disk are kept, and a resume continues from them.
RESUMABLE = {"connection_lost", "disk_full", "disk_error", "hub_error", "interrupted", "failed"}


class Downloads:
    def __init__(
        self,
        adder: ModelAdder,
        folder: Path,
        state_file: Path,
        endpoint: str | None,
        limits: HubLimits | None = None,
    ):
        self.adder = adder
        self.limits = limits or HubLimits()
        self.catalog = Catalog(endpoint, self.limits)
        self.endpoint = endpoint
        self.folder = folder
        self._file = state_file
        self._items: dict[str, Download] = {}
        self._wake = asyncio.Event()
        self._child: FetchChild | None = None
        self._stop_as: dict[str, str] = {}  # id -> "paused" / "cancelled": a kill of ours
        self._idle: dict[str, asyncio.Event] = {}  # set when the item's run has ended
        self._leaving: set[str] = set()  # paths of cancelled downloads, their `.part` going
        self._save_lock = asyncio.Lock()

    # -- reading --------------------------------------------------------------------------

    def progress(self) -> list[DownloadJSON]:
        return [item.progress() for item in self._items.values()]

    def get(self, download_id: str) -> Download:
        item = self._items.get(download_id)
        if item is None:
            raise NotFoundError(f"no download {download_id!r}", code="download_not_found")
        return item

    # -- what a client asks ---------------------------------------------------------------

    async def start(self, repo: str, file: str, revision: str | None = None) -> Download:
        """Queue `file` of `repo` (at `revision`, a commit, or the newest): its size and
        sha256 are the hub's listing's, never the client's."""
        owner, name = names.split_repo_id(repo)
        file = names.gguf_name(file)
        if revision is not None and names.commit_of(revision) is None:
            raise BadRequestError("a revision is a commit (40 hex digits)", code="invalid_revision")
        path = self.folder / owner / name / file
        self._refuse_a_second(path)  # early, so a duplicate costs the hub nothing
        listed = await self.catalog.files(repo, revision)
        entry = next((f for f in listed["files"] if f["file"] == file), None)
        if entry is None:
            raise NotFoundError(f"{repo} has no file {file}", code="hub_not_found")
        if entry["split"]:
            raise BadRequestError(f"{file} is one part of a split GGUF", code="split_gguf")
        if entry["sha256"] is None or entry["size_bytes"] is None:
            raise BadRequestError(
                f"the hub gives no size or sha256 for {file}", code="unverifiable"
            )
        if await asyncio.to_thread(path.exists):
            raise ConflictError(f"{path} exists already", code="model_exists")
        # Checked again and claimed with no await in between: requests that all passed the
        # first check while this one waited on the hub are refused here, so one file is
        # one download and never two children writing one `.part`.
        self._refuse_a_second(path)
        item = Download(
            id=secrets.token_hex(6),
            repo=repo,
            file=file,
            revision=listed["revision"],
            size=entry["size_bytes"],
            sha256=entry["sha256"],
            path=str(path),
        )
        self._items[item.id] = item
        await self._save()
        self._wake.set()
        return item

    def _refuse_a_second(self, path: Path) -> None:
        """ConflictError (`download_exists`, naming it) if a download already has `path`."""
        if str(path) in self._leaving:
            raise ConflictError(
                f"{path.name} was just cancelled and its partial file is being deleted: ask again",
                code="download_exists",
            )
        for item in self._items.values():
            if item.path == str(path):
                raise ConflictError(
                    f"{item.file} of {item.repo} is already the download {item.id} ({item.state})",
                    code="download_exists",
                )

    async def pause(self, download_id: str) -> Download:
        item = self.get(download_id)
        if item.state == "queued":
            item.state = "paused"
        elif item.state in records.ACTIVE:
            await self._stop(item, "paused")
        elif item.state != "paused":
            raise ConflictError(
                f"a download that is {item.state} cannot be paused", code="download_state"
            )
        await self._save()
        return item

    async def resume(self, download_id: str) -> Download:
        item = self.get(download_id)
        if item.state in ("paused", "failed"):
            item.state, item.error, item.error_code = "queued", None, None
            await self._save()
            self._wake.set()
        elif item.state not in ("queued", "downloading"):
            raise ConflictError(
                f"a download that is {item.state} cannot be resumed", code="download_state"
            )
        return item

    async def cancel(self, download_id: str) -> None:
        """Stop it, delete its partial file, forget it (a finished model stays a model)."""
        item = self.get(download_id)
        if item.state in records.ACTIVE:
            await self._stop(item, "cancelled")
        # Forgotten at once (nothing runs or resumes it now), but its path stays claimed until
        # its partial file is gone: a new download of the same file cannot start writing the
        # `.part` before the unlink.
        self._items.pop(item.id, None)
        if item.state != "completed":
            self._leaving.add(item.path)
            try:
                await asyncio.to_thread(item.part.unlink, missing_ok=True)
            finally:
                self._leaving.discard(item.path)
        await self._save()

    async def _stop(self, item: Download, reason: str) -> None:
        self._stop_as[item.id] = reason
        if self._child is not None:
            self._child.kill()
        idle = self._idle.get(item.id)
        if idle is not None:
            await idle.wait()

    # -- the life of the server -----------------------------------------------------------

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        loaded = await asyncio.to_thread(records.load, self._file, self.folder)
        for item in loaded:
            if any(kept.path == item.path for kept in self._items.values()):
                continue  # one download per file, even in a file written before that held
            if item.state in records.RUNNING:
                item.state = "paused"  # stopped by a shutdown or a crash: resumed when asked
            item.done = await asyncio.to_thread(_size, item.part)
            self._items[item.id] = item
        async with anyio.create_task_group() as group:
            group.start_soon(self._serve)
            try:
                yield
            finally:
                # Shielded: a shutdown cancels this scope, and the child must still be killed
                # and its download remembered as paused.
                with anyio.CancelScope(shield=True), anyio.move_on_after(self.limits.shutdown_wait):
                    for item in list(self._items.values()):
                        if item.state in records.ACTIVE:
                            await self._stop(item, "paused")
                    await self._save()
                group.cancel_scope.cancel()

    async def _serve(self) -> None:
        while True:
            queued = [i for i in self._items.values() if i.state == "queued"]
            if not queued:
                self._wake.clear()
                await self._wake.wait()
                continue
            item = min(queued, key=lambda i: i.created)
            self._idle[item.id] = asyncio.Event()
            try:
                await self._run(item)
            except Exception as exc:  # never leaves the queue stuck
                log.exception("download %s failed", item.id)
                self._fail(item, "failed", f"the download failed: {exc}", resumable=True)
            finally:
                if self._stop_as.pop(item.id, None) and item.state in records.ACTIVE:
                    item.state = "paused"  # a cancelled one is forgotten by cancel()
                self._idle.pop(item.id).set()
            await self._save()

    async def _run(self, item: Download) -> None:
        item.state, item.samples = "downloading", []
        await self._save()
        await asyncio.to_thread(item.part.parent.mkdir, parents=True, exist_ok=True)
        item.done = await asyncio.to_thread(_size, item.part)
        free = await asyncio.to_thread(_free, item.part.parent)
        need = item.size - item.done + self.limits.disk_reserve
        if need > free:
            self._fail(
                item,
                "disk_full",
                f"not enough disk space: {item.file} needs "
                f"{_mb(item.size - item.done)} more, {_mb(free)} is free",
                True,
            )
            return
        self._child = FetchChild(self.endpoint, self.limits)
        try:
            answer = await self._child.run(item)
        finally:
            self._child = None
        if self._stop_as.get(item.id) is not None:
            return
        if answer.get("ok") is not True:
            code = str(answer.get("code", "interrupted"))
            message = str(answer.get("message", "the download process ended; resume it"))
            if code not in RESUMABLE:
                await asyncio.to_thread(item.part.unlink, missing_ok=True)
            self._fail(item, code, message, code in RESUMABLE)
            return
        await self._finish(item)

    async def _finish(self, item: Download) -> None:
        item.state = "verifying"
        await self._save()
        digest = await asyncio.to_thread(_sha256, item.part)
        if self._stop_as.get(item.id) is not None:
            return
        if digest != item.sha256:
            await asyncio.to_thread(item.part.unlink, missing_ok=True)
            self._fail(
                item,
                "bad_checksum",
                f"{item.file} does not match the hub's sha256 "
                f"({digest[:12]}… instead of {item.sha256[:12]}…): it was deleted",
                False,
            )
            return
        final = Path(item.path)
        try:
            await asyncio.to_thread(_place, item.part, final)
        except FileExistsError:
            await asyncio.to_thread(item.part.unlink, missing_ok=True)
            self._fail(
                item,
                "model_exists",
                f"{final} appeared while {item.file} was downloading; it was left as it is",
                False,
            )
            return
        try:
            entry = await self._add(final, item)
        except ApiError as exc:
            # The file at `final` is the one just placed there (never another's): _place
            # does not replace a file.
            await asyncio.to_thread(final.unlink, missing_ok=True)
            self._fail(item, exc.code, exc.message, False)
            return
        item.state, item.model, item.done = "completed", entry, item.size

    async def _add(self, path: Path, item: Download) -> str:
        """Added under the first free name of names.model_names: the file's stem, then
        `<stem>-<owner>`, then numbered."""
        owner = item.repo.split("/")[0]
        taken, candidates = self._model_names(), names.model_names(path.stem, owner)
        while True:  # ends: each name tried is free, or taken and then skipped
            name = next(candidates)
            if name in taken:
                continue
            try:
                return (await self.adder.add(path, name)).name
            except ConflictError:
                taken = self._model_names()
                if name not in taken:
                    raise  # not the name: the file itself is a model already

    def _model_names(self) -> set[str]:
        return {entry.name for entry in self.adder.models.entries()}

    def _fail(self, item: Download, code: str, message: str, resumable: bool) -> None:
        item.state, item.error_code, item.error = "failed", code, message
        item.resumable = resumable
        log.warning("download of %s/%s failed: %s", item.repo, item.file, message)

    async def _save(self) -> None:
        async with self._save_lock:
            items = list(self._items.values())
            try:
                await asyncio.to_thread(records.save, self._file, items)
            except OSError as exc:
                log.error("cannot remember the downloads in %s: %s", self._file, exc)


def _place(part: Path, final: Path) -> None:
    """Move a verified `part` to `final`, never over a file there (blocking):
    FileExistsError if `final` exists. A hard link is the check and the move in one step."""
    try:
        os.link(part, final)
    except FileExistsError:
        raise
    except OSError:
        # A file system without hard links (FAT, exFAT, some shares): checked, then renamed.
        if final.exists():
            raise FileExistsError(final) from None
        os.rename(part, final)
        return
    part.unlink()


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _free(folder: Path) -> int:
    return shutil.disk_usage(folder).free


def _mb(count: int) -> str:
    return f"{count / 1e6:,.1f} MB"


def _sha256(path: Path) -> str:
    with path.open("rb") as file:
        return hashlib.file_digest(file, "sha256").hexdigest()
