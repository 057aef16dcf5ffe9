"""One run of a download's child process (fetch.py), watched from the server's loop: the
bytes on disk are read every poll (the progress, the bound on what the hub may send, and
whether it stalled), and `kill()` ends the transfer at once, whatever the child is doing."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
import time
from pathlib import Path

import anyio

from server.limits import HubLimits
from server.models.hub.records import Download


class FetchChild:
    def __init__(self, endpoint: str | None, limits: HubLimits) -> None:
        self.endpoint = endpoint
        self.limits = limits
        self.process: asyncio.subprocess.Process | None = None
        self._killed = False

    def kill(self) -> None:
        self._killed = True
        if self.process is not None and self.process.returncode is None:
            self.process.kill()

    async def run(self, item: Download) -> dict[str, object]:
        """The child's last words: {"ok": true} or {"code", "message"}."""
        job = {
            "endpoint": self.endpoint,
            "repo": item.repo,
            "revision": item.revision,
            "file": item.file,
            "part": str(item.part),
            "size": item.size,
            "parent": os.getpid(),
        }
        env = {**os.environ, "HF_HUB_DISABLE_PROGRESS_BARS": "1", "HF_HUB_DISABLE_TELEMETRY": "1"}
        child = self.process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "server.models.hub.fetch",
            json.dumps(job),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            env=env,
        )
        if self._killed:  # stopped while it was starting
            child.kill()
        seen, moved_at = item.done, time.monotonic()
        try:
            while child.returncode is None:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(child.wait(), self.limits.poll_interval)
                item.sample(await asyncio.to_thread(size_of, item.part), self.limits.rate_window)
                if item.done > item.size:
                    self.kill()
                    await child.wait()
                    return {
                        "code": "too_big",
                        "message": f"the hub sent more bytes than {item.file} holds "
                        f"({item.size:,}); the partial file was deleted",
                    }
                # Judged by the bytes on disk, not by the connection: a hub that sends a
                # byte now and then keeps every read timeout happy and the queue waiting.
                if item.done != seen:
                    seen, moved_at = item.done, time.monotonic()
                elif time.monotonic() - moved_at > self.limits.stall_timeout:
                    self.kill()
                    await child.wait()
                    return {
                        "code": "connection_lost",
                        "message": f"the download made no progress for "
                        f"{self.limits.stall_timeout:.0f} s (the hub stalled); resume to "
                        "continue from the bytes on disk",
                    }
            last = b""
            if child.stdout is not None:
                last = await child.stdout.read(self.limits.child_output_bytes)
        finally:
            if child.returncode is None:  # cancelled: the child never outlives its run
                child.kill()
                with anyio.CancelScope(shield=True):
                    await child.wait()
        try:
            found = json.loads(last.decode("utf-8", "replace").strip().splitlines()[-1])
        except (ValueError, IndexError):
            return {
                "code": "interrupted",
                "message": f"the download process was stopped (exit status "
                f"{child.returncode}); resume to continue",
            }
        return found if isinstance(found, dict) else {}


def size_of(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0
