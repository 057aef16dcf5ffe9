"""A GGUF file's facts (server/models/gguf.py), read once per version of the file: the
models list and the status poll ask often, and a 5 GB model's header is read only again when
its size or time changes."""

from __future__ import annotations

import functools
from pathlib import Path

from server.errors import GGUFError
from server.models.gguf import GGUFInfo, read_gguf


@functools.lru_cache(maxsize=256)
def _read_cached(path: Path, _mtime_ns: int, _size: int) -> GGUFInfo:
    return read_gguf(path)


def read_facts(path: Path) -> GGUFInfo | None:
    """The file's facts; None when it cannot be read (blocking: call it on a thread)."""
    try:
        stat = path.stat()
        return _read_cached(path, stat.st_mtime_ns, stat.st_size)
    except (GGUFError, OSError):
        return None  # the model's own state says what is wrong once it loads
