"""The scans one server runs: at most one at a time (callers meanwhile share it), in a worker
thread, waited on no longer than its own time bound plus a grace (a scan stuck in a system
call on a dead network share is left to finish alone; it is never started twice)."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from server.errors import UnavailableError
from server.limits import ModelLimits, ScanLimits
from server.models.discovery.folders import FILE_NAME, ModelFolders
from server.models.discovery.found import Root, ScanResult
from server.models.discovery.roots import default_roots
from server.models.discovery.scan import scan
from server.models.local import LocalBackend
from server.models.registry import ModelRegistry

GRACE_S = ModelLimits.discovery_grace


class Discovery:
    def __init__(self, data_dir: Path, limits: ScanLimits | None = None) -> None:
        self.folders = ModelFolders(data_dir / FILE_NAME)
        self.limits = limits or ScanLimits()
        self.last: ScanResult | None = None
        self._running: asyncio.Future[ScanResult] | None = None
        self._running_of = -1  # the `changes` it started with
        self.changes = 0  # bumped when the user's folders change: a scan then starts anew

    def roots(self) -> list[Root]:
        """Blocking (LM Studio's settings are read): the other apps' places, then the
        user's folders."""
        return default_roots() + [Root("folder", folder) for folder in self.folders.folders]

    def _scan(self) -> ScanResult:
        return scan(self.roots(), self.limits)

    async def scan(self) -> ScanResult:
        """A fresh scan (or the one running, if the folders have not changed since it
        started). Raises UnavailableError if it overruns."""
        stale = self._running_of != self.changes
        if self._running is None or self._running.done() or stale:
            self._running = asyncio.ensure_future(asyncio.to_thread(self._scan))
            self._running_of = self.changes
        try:
            # Shielded: a client that hangs up does not cancel the scan the others wait on.
            result = await asyncio.wait_for(
                asyncio.shield(self._running), self.limits.seconds + GRACE_S
            )
        except TimeoutError:
            raise UnavailableError(
                "looking for GGUF files on disk takes too long (a stalled disk or network "
                "share?); try again later",
                code="scan_timeout",
            ) from None
        self.last = result
        return result


def models_by_file(models: ModelRegistry) -> dict[tuple[int, int], str]:
    """(device, inode) -> the local model that is that file (blocking: stats)."""
    found: dict[tuple[int, int], str] = {}
    for entry in models.entries():
        backend = entry.backend
        if isinstance(backend, LocalBackend) and backend.path is not None:
            try:
                status = os.stat(backend.path)
            except OSError:
                continue
            found.setdefault((status.st_dev, status.st_ino), entry.name)
    return found
