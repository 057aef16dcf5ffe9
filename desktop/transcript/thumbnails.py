"""The thumbnails of the images a question carries, for Qt Quick: `image://thumbs/ID` is the
image attachment ID at thumbnail size once it has been fetched, and nothing until then.

Fetching is not done here: the first time QML asks for an image it does not have, `wanted`
says so (once an image), and the window's attachment controller fetches the file and decodes
it off the window's thread (desktop/transcript/attachment_links.py) and hands it to `add`. QML asks
again when `revision` moves (a thumbnail arrived); they come from this cache, so asking again
costs a dictionary lookup."""

from __future__ import annotations

from PySide6.QtCore import Property, QObject, QSize, Qt, Signal
from PySide6.QtGui import QColor, QImage, QPainter
from PySide6.QtQuick import QQuickImageProvider

from desktop.look.scale import THUMBNAIL as THUMBNAIL_PX

PROVIDER = "thumbs"
MAX_KEPT = 400  # thumbnails kept (64×64×4 bytes each, ×4 on a dense screen: ~26 MB at most)


class ThumbnailState(QObject):
    """What QML binds to: `revision` moves each time a thumbnail arrives."""

    revision_changed = Signal()
    wanted = Signal(str)  # an attachment's id: fetch its image

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._revision = 0
        self._images: dict[str, QImage] = {}
        self._asked: set[str] = set()

    def _get_revision(self) -> int:
        return self._revision

    revision = Property(int, _get_revision, notify=revision_changed)

    def image(self, attachment_id: str) -> QImage | None:
        found = self._images.get(attachment_id)
        if found is None and attachment_id not in self._asked:
            self._asked.add(attachment_id)
            self.wanted.emit(attachment_id)
        return found

    def add(self, attachment_id: str, image: QImage | None) -> None:
        """The image fetched (None: gone, unreadable or too large: a plain square)."""
        if len(self._images) >= MAX_KEPT:
            oldest = next(iter(self._images))
            del self._images[oldest]
            self._asked.discard(oldest)  # asked for again if it is shown again
        self._images[attachment_id] = _fitted(image)
        self._revision += 1
        self.revision_changed.emit()


class ThumbnailImages(QQuickImageProvider):
    """`image://thumbs/ID`: the state's image, or an empty one while it is fetched."""

    def __init__(self, state: ThumbnailState) -> None:
        super().__init__(QQuickImageProvider.ImageType.Image)
        self._state = state

    def requestImage(self, id: str, size: QSize, requested: QSize) -> QImage:
        attachment_id = id.split("?", 1)[0]  # "?r=N": asked again after an arrival
        found = self._state.image(attachment_id)
        if found is None:
            empty = QImage(1, 1, QImage.Format.Format_ARGB32_Premultiplied)
            empty.fill(Qt.GlobalColor.transparent)
            return empty
        return found


def _fitted(image: QImage | None) -> QImage:
    """`image` cut to a square from its middle (a thumbnail fills its tile), or a grey tile."""
    side = THUMBNAIL_PX * 2  # for a high-density screen
    if image is None or image.isNull():
        tile = QImage(side, side, QImage.Format.Format_ARGB32_Premultiplied)
        tile.fill(QColor("#9c9c98"))
        return tile
    scaled = image.scaled(
        side,
        side,
        Qt.AspectRatioMode.KeepAspectRatioByExpanding,
        Qt.TransformationMode.SmoothTransformation,
    )
    x, y = (scaled.width() - side) // 2, (scaled.height() - side) // 2
    tile = QImage(side, side, QImage.Format.Format_ARGB32_Premultiplied)
    tile.fill(Qt.GlobalColor.transparent)
    painter = QPainter(tile)
    painter.drawImage(0, 0, scaled, x, y, side, side)
    painter.end()
    return tile
