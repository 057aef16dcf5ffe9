"""A file as it was read, and a write that replaces only that version of it.

For a file people edit by hand while Parley writes it (mcp.json): a change is made to the
file as read, so the write must land only over that same file. An editor saves by renaming
a new file over the old one, or by rewriting the old one in place (truncate, then write);
either can come between Parley's read and its rename, and a plain rename would then throw
the save away.

So the file is looked at again just before the write (identity and bytes, then identity once
more); and where the system can swap two names atomically (Linux `renameat2` with
RENAME_EXCHANGE) the new file is swapped in rather than renamed over, which leaves the file
it displaced under the new one's temporary name, to be checked once more and swapped back if
it is not the one read. Where no swap exists the look alone is made (a save within the few
microseconds between it and the rename is then lost).

What no rename can see: a save in place whose `open` found the file before the swap but
truncates it only after the check (the editor stalled inside `open`) goes to the file
displaced. So the displaced file is looked at once more after `ToolLimits.late_save_grace` (a
scheduling delay on a busy machine), and a save found in it is given its place back; one that lands
later still is kept beside the file (logged), not deleted. An editor that reads the new file
in the microseconds before it is swapped back, then saves from it, displaces that save,
which is kept beside the file too. Both need the two writers to meet within a scheduling
delay (seen here only with every core busy, and an editor saving every few milliseconds).

The link a symlinked file is stays: its target is what is written (`follow=False`: no link is
followed, the file must be one of its own, as for a file in Parley's data dir whose bytes the
model reads). The file keeps its mode; a new one is the user's alone (0600: it may hold an API
key or a header). `remove_version` deletes a file the same way: only the version read.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import functools
import logging
import os
import secrets
import stat
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from server.limits import ToolLimits

log = logging.getLogger(__name__)

# (st_dev, st_ino, st_size, st_mtime_ns): what tells one version of a file from another.
Identity = tuple[int, int, int, int]


@dataclass(frozen=True)
class Version:
    """A file's bytes and its identity, both through the one descriptor that read them;
    `data` None: there was no file."""

    data: bytes | None
    identity: Identity | None = None
    mode: int | None = None


def identity_of(found: os.stat_result) -> Identity:
    return (found.st_dev, found.st_ino, found.st_size, found.st_mtime_ns)


def read_version(path: Path, max_bytes: int, follow: bool = True) -> Version | None:
    """The file as it is now, read through one descriptor that never blocks on a FIFO, at
    most `max_bytes`; None if it changed while it was read (read it again). Raises OSError
    (never FileNotFoundError: no file is a Version with no data; ELOOP for a link when not
    `follow`)."""
    found = _read(path, max_bytes, follow)
    if found is None:
        return Version(None)
    data, before, after = found
    if len(data) > max_bytes:
        raise OSError(f"{path} is larger than {max_bytes:,} bytes")
    if identity_of(after) != identity_of(before) or len(data) != after.st_size:
        return None
    return Version(data, identity_of(after), stat.S_IMODE(after.st_mode))


def _read(
    path: Path, max_bytes: int, follow: bool = True
) -> tuple[bytes, os.stat_result, os.stat_result] | None:
    """At most `max_bytes` + 1 bytes of the file, with its stat before and after; None if
    there is no file. Raises OSError."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    if not follow:
        flags |= os.O_NOFOLLOW
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        return None
    try:
        before = os.fstat(fd)
        if not stat.S_ISREG(before.st_mode):
            raise OSError(f"{path} is not a regular file")
        pieces: list[bytes] = []
        size = 0
        while size <= max_bytes:
            piece = os.read(fd, max_bytes + 1 - size)
            if not piece:
                break
            pieces.append(piece)
            size += len(piece)
        return b"".join(pieces), before, os.fstat(fd)
    finally:
        os.close(fd)


def read_steady(path: Path, max_bytes: int, attempts: int, follow: bool = True) -> Version:
    """The file as read whole while no one wrote it, trying `attempts` times. Raises OSError."""
    for _ in range(attempts):
        version = read_version(path, max_bytes, follow)
        if version is not None:
            return version
    raise OSError(f"{path} kept changing while it was read")


# What tells one version of a path from another: the link's own stat and its target's.
Signature = tuple[Identity, Identity | None]


def signature(path: Path) -> Signature | None:
    try:
        link = os.lstat(path)
    except OSError:
        return None
    try:
        target = os.stat(path)
    except OSError:
        return (identity_of(link), None)
    return (identity_of(link), identity_of(target))


def signature_written(path: Path, written: Identity) -> Signature | None:
    """The signature of the file just written, without looking at it again (a save by hand
    right after the write must still be seen as a change)."""
    try:
        link = os.lstat(path)
    except OSError:
        return None
    return (identity_of(link), written) if stat.S_ISLNK(link.st_mode) else (written, written)


def replace_version(
    path: Path, version: Version, data: bytes, follow: bool = True
) -> Identity | None:
    """Write `data` as the file, if the file is still `version`: the identity of the file
    written, or None when it is not (then nothing was written and nothing lost: make the
    change again to the file as it is now). Raises OSError; the file is then untouched.
    Not `follow`: a link put at `path` is not the version read, and is never written through."""
    target = Path(os.path.realpath(path)) if follow else Path(os.path.abspath(path))
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.stem}-")
    temporary = Path(name)
    ours: Version | None = None
    try:
        with os.fdopen(handle, "wb") as file:
            if version.mode is not None and hasattr(os, "fchmod"):
                os.fchmod(file.fileno(), version.mode)
            file.write(data)
            file.flush()
            found = os.fstat(file.fileno())
        ours = Version(data, identity_of(found), stat.S_IMODE(found.st_mode))
        placed = _put_in_place(temporary, target, version, ours, follow)
        return ours.identity if placed else None
    finally:
        # Under the temporary name is now the new file, the version read (displaced by the
        # swap) or nothing. Anything else is a save made meanwhile: it stays, never deleted.
        with contextlib.suppress(OSError):
            if (ours is not None and _is(temporary, ours, follow)) or _is(
                temporary, version, follow
            ):
                os.unlink(temporary)
            elif os.path.lexists(temporary):
                log.warning("%s was saved twice while Parley wrote it; kept as %s", path, temporary)


def _put_in_place(
    temporary: Path, target: Path, version: Version, ours: Version, follow: bool
) -> bool:
    if not _is(target, version, follow):
        return False
    if version.data is None:
        try:
            os.link(temporary, target)  # made only if there is still no file
        except FileExistsError:
            return False
        return True
    # From the last look to the swap-back below, little but system calls: the fewer
    # microseconds, the less an editor can see of a file that is not yet known to be right.
    names = os.fsencode(temporary), os.fsencode(target)
    swap = _swapper()
    if _identity(target, follow) != version.identity:
        return False  # a save by rename, or in place with a new size, since the read
    swapped = swap(*names) if swap is not None else None
    if swap is None or swapped is None:  # no swap here: the last look is all there is
        os.replace(temporary, target)
        return True
    if not swapped:
        return False  # the file was removed since the last look
    if _still(temporary, version, follow):
        wait_for_late_saves()
        if _still(temporary, version, follow):
            return True  # the file displaced is the one read, and no save came into it: done
    # A save landed between the last look and the swap: give it its place back (unless a
    # save came over the new file meanwhile: that one stays, and the displaced file too).
    if _identity(target, follow) == ours.identity:
        swap(*names)
    return False


def _still(path: Path, version: Version, follow: bool) -> bool:
    return _identity(path, follow) == version.identity and _is(path, version, follow)


def wait_for_late_saves() -> None:
    """A moment for a save in place that found the file before the swap to land in it."""
    time.sleep(ToolLimits.late_save_grace)


def remove_version(path: Path, version: Version, follow: bool = True) -> bool:
    """Delete the file if it is still `version`: True when it is gone, False when it is not
    that version (then it is left as it is). The name is first moved aside, so what is
    deleted is what was looked at; a file saved at the name meanwhile stays, and what was
    moved aside is put back unless that name is taken again (then it is kept beside it,
    logged). Raises OSError; the file is then untouched. A link is deleted, never its target."""
    if version.data is None:
        return not os.path.lexists(path)
    target = Path(os.path.abspath(path))
    aside = target.with_name(f".{target.name}-removed-{secrets.token_hex(6)}")
    try:
        os.rename(target, aside)
    except FileNotFoundError:
        return False
    if _is(aside, version, follow):
        os.unlink(aside)
        return True
    try:
        os.link(aside, target, follow_symlinks=False)  # back, unless a new file is there
    except FileExistsError:
        log.warning("%s was saved while Parley deleted it; the one read is kept as %s", path, aside)
        return False
    os.unlink(aside)
    return False


def _identity(path: Path, follow: bool = True) -> Identity | None:
    try:
        return identity_of(os.stat(path) if follow else os.lstat(path))
    except FileNotFoundError:
        return None


def _is(path: Path, version: Version, follow: bool = True) -> bool:
    """Whether the file at `path` is `version`: identity, mode and bytes."""
    if version.data is None:
        return not os.path.lexists(path)
    try:
        found = _read(path, len(version.data), follow)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return False  # a link, where none is followed: not the file read
        raise
    if found is None:
        return False
    data, before, after = found
    return (
        data == version.data
        and identity_of(before) == identity_of(after) == version.identity
        and stat.S_IMODE(after.st_mode) == version.mode
    )


RENAME_EXCHANGE = 2  # linux/fs.h
AT_FDCWD = -100
Swap = Callable[[bytes, bytes], bool | None]


@functools.cache
def _swapper() -> Swap | None:
    """A call that swaps two names atomically: True, False when either is gone, None when
    the file system cannot. None where the system has no such call. Linux's `renameat2`
    with RENAME_EXCHANGE (glibc 2.28 and later)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        call = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):
        return None
    call.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    call.restype = ctypes.c_int

    def swap(first: bytes, second: bytes) -> bool | None:
        if call(AT_FDCWD, first, AT_FDCWD, second, RENAME_EXCHANGE) == 0:
            return True
        code = ctypes.get_errno()
        if code == errno.ENOENT:
            return False
        if code in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP):
            return None  # an old kernel, or a file system that cannot swap
        raise OSError(code, os.strerror(code), os.fsdecode(second))

    return swap
