"""What is remembered of each download, in `<data_dir>/downloads.json`, so that a download
stopped by a shutdown or a crash can be resumed at the next start. Written whole (a temporary
file, then a rename) at every change of state, never for progress."""

from __future__ import annotations

import json
import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from server.models.hub import names
from server.types.getting_models import DownloadJSON, DownloadState

# States a download is in while Parley runs it; at the next start they become "paused".
RUNNING: tuple[DownloadState, ...] = ("queued", "downloading", "verifying")
ACTIVE: tuple[DownloadState, ...] = ("downloading", "verifying")  # a child or a hash at work
STATES: tuple[DownloadState, ...] = (*RUNNING, "paused", "completed", "failed")


@dataclass
class Download:
    id: str
    repo: str
    file: str
    revision: str
    size: int
    sha256: str
    path: str  # the finished file; its bytes grow in `path + ".part"`
    state: DownloadState = "queued"
    error_code: str | None = None
    error: str | None = None
    resumable: bool = False
    model: str | None = None
    created: float = field(default_factory=time.time)
    # Live, not remembered: bytes on disk and the (time, bytes) seen within the rate window.
    done: int = field(default=0, compare=False)
    samples: list[tuple[float, int]] = field(default_factory=list, compare=False)

    @property
    def part(self) -> Path:
        return Path(self.path + ".part")

    def saved(self) -> dict[str, Any]:
        found = asdict(self)
        del found["done"], found["samples"]
        return found

    def progress(self) -> DownloadJSON:
        rate = self.rate() if self.state == "downloading" else None
        left = (self.size - self.done) / rate if rate else None
        return {
            "id": self.id,
            "repo": self.repo,
            "file": self.file,
            "revision": self.revision,
            "state": self.state,
            "size_bytes": self.size,
            "bytes_done": self.done,
            "rate_bytes_per_s": rate,
            "seconds_left": left,
            "error_code": self.error_code,
            "error": self.error,
            "resumable": self.resumable,
            "model": self.model,
            "path": self.path,
        }

    def sample(self, done: int, window: float) -> None:
        now = time.monotonic()
        self.done = done
        self.samples.append((now, done))
        while len(self.samples) > 2 and now - self.samples[0][0] > window:
            self.samples.pop(0)

    def rate(self) -> float | None:
        if len(self.samples) < 2:
            return None
        (t0, b0), (t1, b1) = self.samples[0], self.samples[-1]
        return (b1 - b0) / (t1 - t0) if t1 > t0 and b1 >= b0 else None


def _parse(raw: object, folder: Path) -> Download | None:
    """One remembered download, or None if the file was edited into something else (a path
    outside the models folder, a hostile name)."""
    if not isinstance(raw, dict):
        return None
    try:
        item = Download(**{k: raw[k] for k in Download.__dataclass_fields__ if k in raw})
    except TypeError:
        return None
    owner, _, name = item.repo.partition("/")
    expected = folder / owner / name / item.file
    if (
        not (names.is_repo_part(owner) and names.is_repo_part(name))
        or not names.is_gguf_name(item.file)
        or item.path != str(expected)
        or item.state not in STATES
        or names.sha256_of(item.sha256) != item.sha256
        or not isinstance(item.size, int)
    ):
        return None
    return item


def load(path: Path, folder: Path) -> list[Download]:
    """The remembered downloads (blocking). A missing or unreadable file is no downloads."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    items = [_parse(entry, folder) for entry in raw if isinstance(raw, list)]
    return [item for item in items if item is not None]


def save(path: Path, items: list[Download]) -> None:
    """Remember `items` (blocking): a temporary file, fsynced, renamed over the old one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(path.name + ".tmp")
    with temporary.open("w", encoding="utf-8") as file:
        json.dump([item.saved() for item in items], file, indent=1)
        file.flush()
        os.fsync(file.fileno())
    os.replace(temporary, path)
