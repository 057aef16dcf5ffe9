"""A file attached in the composer, read for its upload off the window's thread: bounded in
bytes (a file over the server's limit is refused from its size, before any of it is read),
opened without following a link (its thumbnail is decoded after, in the window's queue of
images: desktop/image_decoding.py). Also an image pasted from the clipboard, as the PNG file
it is sent as, and sizes as people read them. Nothing here touches a widget: every function
may run on a worker thread."""

from __future__ import annotations

import mimetypes
import os
import stat
from dataclasses import dataclass

from PySide6.QtCore import QBuffer, QIODevice
from PySide6.QtGui import QImage, QImageWriter

from desktop.client.attachments import MAX_BYTES
from desktop.errors import AttachmentError

_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
READ_CHUNK = 1024 * 1024
PASTED_NAME = "Pasted image.png"


@dataclass(frozen=True)
class FileRead:
    """A file's bytes as read and what it is (`mime`, a guess from its name)."""

    name: str
    data: bytes
    mime: str | None


def size_text(size: int) -> str:
    """A size as a person reads it: 812 bytes, 14 KB, 3.4 MB."""
    if size < 1024:
        return f"{size} byte{'s' if size != 1 else ''}"
    if size < 1024 * 1024:
        return f"{size / 1024:.0f} KB"
    return f"{size / (1024 * 1024):.1f} MB"


def too_large(name: str, size: int) -> str:
    return f"{name} is {size_text(size)}: files up to {size_text(MAX_BYTES)} can be attached"


def read_file(path: str, limit: int = MAX_BYTES) -> FileRead:
    """The file at `path` (a link is not followed), at most `limit` bytes: AttachmentError
    at once, from its size, for a bigger one (and for one that grows past it as it is read)."""
    name = os.path.basename(path) or path
    try:
        fd = os.open(path, _FLAGS)
    except OSError as exc:
        if os.path.islink(path):
            raise AttachmentError(f"{name} is a link: attach the file it points to") from exc
        raise AttachmentError(f"{name} cannot be read: {exc.strerror or exc}") from exc
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise AttachmentError(f"{name} is not a file (a folder, a device…)")
        if info.st_size > limit:
            raise AttachmentError(too_large(name, info.st_size))
        chunks: list[bytes] = []
        read = 0
        while read <= limit:
            chunk = os.read(fd, min(READ_CHUNK, limit + 1 - read))
            if not chunk:
                break
            chunks.append(chunk)
            read += len(chunk)
        if read > limit:
            raise AttachmentError(too_large(name, read))
    except OSError as exc:
        raise AttachmentError(f"{name} cannot be read: {exc.strerror or exc}") from exc
    finally:
        os.close(fd)
    data = b"".join(chunks)
    return FileRead(name, data, mimetypes.guess_type(name)[0])


def pasted_image(image: QImage) -> FileRead:
    """An image from the clipboard as the PNG file it is sent as ("Pasted image.png")."""
    buffer = QBuffer()
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    if not QImageWriter(buffer, b"png").write(image):
        raise AttachmentError("The pasted image could not be made into a PNG file")
    data = bytes(buffer.data().data())
    if len(data) > MAX_BYTES:
        raise AttachmentError(too_large(PASTED_NAME, len(data)))
    return FileRead(PASTED_NAME, data, "image/png")
