"""Images from outside decoded within bounds: a file attached in the composer, a chat's
thumbnails, the picture in the viewer. A few hundred KB of PNG can hold 8000×8000 pixels
(256 MB decoded), so each image is decoded

- at the size it is shown (QImageReader's scaled size: a JPEG is decoded at that size; a
  format that cannot is decoded whole, then scaled),
- under a small allocation limit (`ALLOCATION_LIMIT_MB`): an image whose pixels would take
  more is refused from its header, before any is allocated, and shown as too large,
- one at a time, on a thread of its own (never the window's): a chat of many big images
  holds one decode's memory at once, not one per image.

`decode` may run on any thread; `decoded` is the queue the window awaits."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QSize, Qt
from PySide6.QtGui import QImage, QImageReader

ALLOCATION_LIMIT_MB = 64  # the most one decoded image may take (Qt's own default is 256)
BYTES_PER_PIXEL = 4  # a decoded pixel, as Qt's limit counts it for most formats

# One worker: decodes wait their turn, so their memory is never added up.
_DECODER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="image-decoder")


@dataclass(frozen=True)
class Decoded:
    """What decoding gave: `image` (fitted in the box asked for), or None; `size` is the
    image's own, as its header says (invalid when it is no image Qt reads)."""

    image: QImage | None
    size: QSize

    @property
    def too_large(self) -> bool:
        """Qt reads this format, but its pixels would not fit in the allocation limit."""
        if self.image is not None or not self.size.isValid():
            return False
        pixels = self.size.width() * self.size.height()
        return pixels * BYTES_PER_PIXEL > ALLOCATION_LIMIT_MB * 1024 * 1024

    def size_text(self) -> str:
        """The image's size in pixels, as a person reads it: "8000 × 8000 pixels"."""
        return f"{self.size.width()} × {self.size.height()} pixels"


def decode(data: bytes, box: QSize) -> Decoded:
    """`data` decoded to fit in `box` (never larger than the image itself), within the
    allocation limit."""
    # The limit is the process's in Qt 6 (a static), not this reader's: every image the
    # window reads from outside is read under it, whichever reads first.
    QImageReader.setAllocationLimit(ALLOCATION_LIMIT_MB)
    buffer = QBuffer()
    buffer.setData(QByteArray(data))
    buffer.open(QIODevice.OpenModeFlag.ReadOnly)
    reader = QImageReader(buffer)
    reader.setAutoTransform(True)  # a photo's EXIF turn
    if not reader.canRead():
        return Decoded(None, QSize())
    size = reader.size()
    if size.isValid() and (size.width() > box.width() or size.height() > box.height()):
        reader.setScaledSize(size.scaled(box, Qt.AspectRatioMode.KeepAspectRatio))
    image = reader.read()
    if image.isNull():
        return Decoded(None, size)
    if image.width() > box.width() or image.height() > box.height():  # scaled size ignored
        image = image.scaled(
            box, Qt.AspectRatioMode.KeepAspectRatio, Qt.TransformationMode.SmoothTransformation
        )
    return Decoded(image, size)


async def decoded(data: bytes, box: QSize) -> Decoded:
    """`decode`, in the queue: after the decodes asked for before it, off the window's thread."""
    return await asyncio.get_running_loop().run_in_executor(_DECODER, decode, data, box)
