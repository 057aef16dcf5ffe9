"""Each candidate file checked once and gathered by identity (device and inode).

A candidate's path may be a link: it is resolved and followed only when its target lies in a
place allowed for it (LM Studio's and the user's folders: any place looked in; a HF cache
link: its own repository's folder; an Ollama blob: that store's blobs). The target is opened
without following a last link and without blocking (a FIFO is refused by its `fstat`, never
waited on), and on Linux read through that same descriptor, so a link swapped in between the
check and the read is not followed. Its header is read bounded (`read_gguf`) once per file
version, remembered across scans.
"""

from __future__ import annotations

import os
import re
import stat
import threading
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path

from server.errors import GGUFError
from server.models.discovery.budget import Budget
from server.models.discovery.found import FoundFile, Place, ScanResult, Skipped
from server.models.discovery.walking import SPLIT
from server.models.gguf import GGUFInfo, read_gguf

_FLAGS = (os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
          | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0))  # fmt: skip
_FD_DIR = "/proc/self/fd"
_BY_DESCRIPTOR = os.path.isdir(_FD_DIR)
NOT_CHAT_MODELS = {"clip": "a vision projector (mmproj), not a chat model"}
HEADER_CACHE_SIZE = 4096

# (device, inode, size, mtime_ns) -> the header's facts.
_headers: OrderedDict[tuple[int, int, int, int], GGUFInfo] = OrderedDict()
_headers_lock = threading.Lock()


def within(path: str, places: Sequence[str]) -> bool:
    return any(path == p or path.startswith(os.path.join(p, "")) for p in places)


class Collector:
    def __init__(self, budget: Budget, result: ScanResult) -> None:
        self.budget = budget
        self.result = result
        self.files: dict[tuple[int, int], FoundFile] = {}

    def skip(self, path: str, reason: str) -> None:
        self.result.skipped_count += 1
        if len(self.result.skipped) < self.budget.limits.max_skipped:
            self.result.skipped.append(Skipped(path, reason))

    def examine(self, path: str, place: Place, allowed: Sequence[str]) -> None:
        """Check the file at `path` (found at `place`), whose target must lie in `allowed`
        (resolved folders); add it, or the place to the file already found, or skip it."""
        split = SPLIT.match(os.path.basename(path))
        if split is not None and int(split["part"]) != 1:
            return  # listed with its first part
        if not self.budget.file():
            return
        real = os.path.realpath(path)
        if not within(real, allowed):
            return self.skip(path, f"a link to {real}, outside the places looked in")
        try:
            fd = os.open(real, _FLAGS)
        except OSError as exc:
            return self.skip(path, f"cannot open it ({exc.strerror or exc})")
        try:
            self._examine_open(fd, path, place, allowed, split)
        finally:
            os.close(fd)

    def _examine_open(
        self, fd: int, path: str, place: Place, allowed: Sequence[str], split: re.Match[str] | None
    ) -> None:
        found = os.fstat(fd)
        if not stat.S_ISREG(found.st_mode):
            return self.skip(path, "not a regular file (a pipe, a device or a folder)")
        key = (found.st_dev, found.st_ino)
        known = self.files.get(key)
        if known is not None:
            if len(known.places) < self.budget.limits.max_places:
                known.places.append(place)
            return None
        if _BY_DESCRIPTOR:
            opened = os.readlink(f"{_FD_DIR}/{fd}")
            if not within(opened, allowed):  # a folder on the way swapped for a link
                return self.skip(path, f"it moved to {opened}, outside the places looked in")
        info = self._header(fd, path, found)
        if isinstance(info, str):
            return self.skip(path, info)
        size, parts = info.size_bytes, 1
        if split is not None:
            counted = _other_parts(path, split, allowed)
            if isinstance(counted, str):
                return self.skip(path, counted)
            size, parts = size + counted[0], counted[1]
        self.files[key] = FoundFile(
            device=found.st_dev,
            inode=found.st_ino,
            places=[place],
            size_bytes=size,
            parts=parts,
            architecture=info.architecture,
            quantization=info.quantization,
            context_length=info.context_length,
        )
        return None

    def _header(self, fd: int, shown: str, found: os.stat_result) -> GGUFInfo | str:
        """The header's facts, or why the file is not a usable GGUF (not remembered: a
        header cut short by the scan's time is read again by the next scan)."""
        key = (found.st_dev, found.st_ino, found.st_size, found.st_mtime_ns)
        with _headers_lock:
            info = _headers.get(key)
        if info is None:
            where = Path(f"{_FD_DIR}/{fd}" if _BY_DESCRIPTOR else shown)
            try:
                info = read_gguf(where, seconds=self.budget.header_seconds())
            except GGUFError as exc:
                return str(exc).replace(str(where), os.path.basename(shown))
            with _headers_lock:
                _headers[key] = info
                while len(_headers) > HEADER_CACHE_SIZE:
                    _headers.popitem(last=False)
        if info.architecture in NOT_CHAT_MODELS:
            return NOT_CHAT_MODELS[info.architecture or ""]
        return info


def _other_parts(first: str, split: re.Match[str], allowed: Sequence[str]) -> tuple[int, int] | str:
    """The size of a split file's other parts and the number of parts, or why it is not
    whole. Each part is looked at by `stat` only (its size), never opened."""
    parts = int(split["parts"])
    folder, size = os.path.dirname(first), 0
    width = len(split["part"])
    for number in range(2, parts + 1):
        name = f"{split['stem']}-{number:0{width}d}-of-{split['parts']}.gguf"
        path = os.path.join(folder, name)
        real = os.path.realpath(path)
        try:
            found = os.stat(real) if within(real, allowed) else None
        except OSError:
            found = None
        if found is None or not stat.S_ISREG(found.st_mode):
            return f"part {number} of its {parts} is missing"
        size += found.st_size
    return size, parts
