"""How much one scan may cost: entries looked at, depth, files examined, bytes and time.

A scan that reaches a bound stops there and says so (`ScanResult.complete` is false); what it
found until then is listed.
"""

from __future__ import annotations

import time

from server.limits import ScanLimits


class Budget:
    """What is left of one scan's ScanLimits. Not thread-safe: one scan, one thread."""

    def __init__(self, limits: ScanLimits) -> None:
        self.limits = limits
        self.started = time.monotonic()
        self.deadline = self.started + limits.seconds
        self.entries = 0
        self.files = 0
        self.manifests = 0
        self.stopped: str | None = None  # why the scan stopped early

    def _stop(self, why: str) -> bool:
        if self.stopped is None:
            self.stopped = why
        return False

    def ok(self) -> bool:
        """Whether the scan may go on (checks the time)."""
        if self.stopped is not None:
            return False
        if time.monotonic() >= self.deadline:
            return self._stop(f"the scan stopped after {self.limits.seconds:g} s")
        return True

    def entry(self) -> bool:
        self.entries += 1
        if self.entries > self.limits.max_entries:
            return self._stop(f"the scan stopped after {self.limits.max_entries:,} entries")
        return self.ok()

    def file(self) -> bool:
        self.files += 1
        if self.files > self.limits.max_files:
            return self._stop(f"the scan stopped after {self.limits.max_files:,} files")
        return self.ok()

    def manifest(self) -> bool:
        self.manifests += 1
        if self.manifests > self.limits.max_manifests:
            return self._stop(f"the scan stopped after {self.limits.max_manifests:,} manifests")
        return self.ok()

    def header_seconds(self) -> float:
        return max(0.01, min(self.limits.header_seconds, self.deadline - time.monotonic()))

    def elapsed(self) -> float:
        return time.monotonic() - self.started
