"""Reading a file of the library as hostile input.

A library folder is the user's, but what is in it may change under Parley at any moment: a
file swapped for a link to `~/.ssh/id_rsa` between the walk and the read, a folder swapped
for a link, a file that grows to gigabytes, a FIFO or a device put in its place. So a file is
read through one descriptor, opened from the folder down one name at a time without
following any link (`O_NOFOLLOW` at every step, relative to the folder above: a link swapped
in anywhere below the root is refused, not followed), checked on that descriptor (`fstat`:
a regular file, not over the limit), and read for at most the limit + 1 bytes within a time
bound. Opening never blocks (`O_NONBLOCK`: a FIFO is refused by its `fstat`, not waited on).

What was read is described by its own `fstat` (`Identity`): the index keeps that, so a file
whose inode changed is read again even when its size and time match.
"""

from __future__ import annotations

import errno
import os
import stat
import time
from dataclasses import dataclass
from pathlib import Path

from server.errors import SkipFile
from server.limits import LibraryLimits

READ_BLOCK = 1 << 20
READ_TIME_S = LibraryLimits.read_time  # server/limits.py

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NOCTTY = getattr(os, "O_NOCTTY", 0)
_BINARY = getattr(os, "O_BINARY", 0)
_RELATIVE_OPEN = os.open in os.supports_dir_fd and _NOFOLLOW != 0


@dataclass(frozen=True)
class Identity:
    """A file as one `stat` saw it: which file (device, inode) and its size and time."""

    size: int
    mtime: float
    device: int
    inode: int

    @classmethod
    def of(cls, found: os.stat_result) -> Identity:
        return cls(found.st_size, found.st_mtime, found.st_dev, found.st_ino)


def too_large(size: int) -> str:
    return f"larger than {LibraryLimits.max_file_bytes // 1_000_000} MB"


def under(path: str, root: str) -> bool:
    """Whether `path` is `root` or lies below it (both absolute and normalised)."""
    return path == root or path.startswith(os.path.join(root, ""))


def read_inside(
    root: str,
    path: str,
    *,
    limit: int = LibraryLimits.max_file_bytes,
    time_limit: float = READ_TIME_S,
) -> tuple[bytes, Identity]:
    """The bytes of `path`, a regular file below the folder `root`, and its identity as read.
    Raises SkipFile saying why it is not read (a link, not a regular file, too large, too
    slow, gone, not readable); never follows a link below `root`, never blocks on a FIFO."""
    fd = _open_below(root, path)
    try:
        found = os.fstat(fd)
        if not stat.S_ISREG(found.st_mode):
            raise SkipFile("not a regular file (a pipe, a device or a folder)")
        if found.st_size > limit:
            raise SkipFile(too_large(found.st_size))
        return _read_bounded(fd, limit, time_limit), Identity.of(found)
    finally:
        os.close(fd)


def _open_below(root: str, path: str) -> int:
    relative = os.path.relpath(path, root)
    parts = Path(relative).parts
    if not parts or relative == os.curdir or os.pardir in parts or os.path.isabs(relative):
        raise SkipFile("not inside its library folder")
    try:
        if _RELATIVE_OPEN:
            return _open_relative(root, parts)
        return _open_checked(root, path)
    except SkipFile:
        raise
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.EMLINK, errno.ENOTDIR):
            raise SkipFile("a link, or inside a linked folder (links are not followed)") from exc
        if exc.errno == errno.ENOENT:
            raise SkipFile("gone before it could be read") from exc
        raise SkipFile(f"cannot be read ({exc.strerror or exc})") from exc


def _open_relative(root: str, parts: tuple[str, ...]) -> int:
    """Each name opened relative to the folder above it, none of them followed if a link."""
    folder_flags = os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC
    folder = os.open(root, folder_flags)
    try:
        for name in parts[:-1]:
            below = os.open(name, folder_flags, dir_fd=folder)
            os.close(folder)
            folder = below
        flags = os.O_RDONLY | _NOFOLLOW | _NONBLOCK | _CLOEXEC | _NOCTTY
        return os.open(parts[-1], flags, dir_fd=folder)
    finally:
        os.close(folder)


def _open_checked(root: str, path: str) -> int:
    """Where names cannot be opened relative to a folder (Windows): no link on the way down
    (each checked with lstat), and the file opened is the one checked."""
    for step in [*reversed(Path(path).parents), Path(path)]:
        if under(str(step), root) and step.is_symlink():
            raise SkipFile("a link, or inside a linked folder (links are not followed)")
    before = os.lstat(path)
    fd = os.open(path, os.O_RDONLY | _NOFOLLOW | _NONBLOCK | _BINARY | _NOCTTY)
    opened = os.fstat(fd)
    if (opened.st_dev, opened.st_ino) != (before.st_dev, before.st_ino):
        os.close(fd)
        raise SkipFile("changed while being opened")
    return fd


def _read_bounded(fd: int, limit: int, time_limit: float) -> bytes:
    """At most `limit` bytes: a file that grew past it since its `fstat`, or that reads too
    slowly, is skipped rather than read whole."""
    if _NONBLOCK:
        os.set_blocking(fd, True)  # a regular file: reads are ordinary from here
    deadline = time.monotonic() + time_limit
    pieces: list[bytes] = []
    total = 0
    while True:
        piece = os.read(fd, min(READ_BLOCK, limit + 1 - total))
        if not piece:
            return b"".join(pieces)
        pieces.append(piece)
        total += len(piece)
        if total > limit:
            raise SkipFile(too_large(total) + " (it grew while being read)")
        if time.monotonic() > deadline:
            raise SkipFile(f"took longer than {time_limit:.0f} s to read")
