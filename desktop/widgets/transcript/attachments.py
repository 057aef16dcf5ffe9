"""The files a user message carries (issue 43), drawn above its words: each a chip with its
name and size, an image's thumbnail, a file's icon; a click on one is the window's to answer
(desktop/attachment_links.py: an image opens in a viewer, another file is saved).

A thumbnail is an image resource of the transcript's document, loaded when Qt first draws it
(`AttachmentImages.load`, from the transcript's `loadResource`): until the window has fetched
the file (`wanted`) it is an empty square of its size, so nothing moves when it comes. An
image too large to decode within the window's bounds is a square that says so."""

from __future__ import annotations

import html
from urllib.parse import quote, urlencode

from PySide6.QtCore import QObject, QRect, Qt, QUrl, QUrlQuery, Signal
from PySide6.QtGui import QColor, QImage, QPainter, QTextDocument
from PySide6.QtWidgets import QTextEdit

from desktop.attachment_files import size_text
from desktop.icons import icon
from server.types import AttachmentJSON

SCHEME = "parley-attachment"
THUMBNAIL_PX = 72  # drawn; the image itself is twice that, for a high-density screen
ICON_PX = 20
MIDDLE = 'style="vertical-align: middle;"'  # the name beside the picture's middle
TOO_LARGE = "Too large to preview"


def attachments_html(attachments: list[AttachmentJSON] | None, muted: str) -> str:
    """The chips of a message's files, one paragraph that wraps ("" when it has none)."""
    chips = [_chip_html(a, muted) for a in attachments or []]
    if not chips:
        return ""
    return f'<p style="margin-top:8px; margin-bottom:0px;">{" &nbsp;&nbsp; ".join(chips)}</p>'


def _chip_html(attachment: AttachmentJSON, muted: str) -> str:
    ident = quote(attachment["id"], safe="")
    query = urlencode({"name": attachment["name"], "kind": attachment["kind"]})
    href = f"{SCHEME}:file/{ident}?{query}"
    action = "Open" if attachment["kind"] == "image" else "Save"
    name = html.escape(attachment["name"])
    title = f"{action} {name}"
    if attachment["kind"] == "image":
        size = THUMBNAIL_PX
        picture = f'<img src="{SCHEME}:thumb/{ident}" width="{size}" height="{size}" {MIDDLE}>'
    else:
        picture = f'<img src="{SCHEME}:icon/file" width="{ICON_PX}" height="{ICON_PX}" {MIDDLE}>'
    return (
        f'<a href="{href}" title="{title}">{picture}</a>&nbsp;'
        f'<a href="{href}" title="{title}">{name}</a>'
        f'<span style="color:{muted};">&nbsp;·&nbsp;{size_text(attachment["bytes"])}</span>'
    )


def parse_link(url: QUrl) -> tuple[str, str, str] | None:
    """A chip's link as (attachment id, file name, kind); None for any other link."""
    if url.scheme() != SCHEME or not url.path().startswith("file/"):
        return None
    query = QUrlQuery(url)
    decoded = QUrl.ComponentFormattingOption.FullyDecoded
    ident = url.path(decoded).removeprefix("file/")
    name, kind = query.queryItemValue("name", decoded), query.queryItemValue("kind", decoded)
    return (ident, name, kind) if ident else None


class AttachmentImages(QObject):
    """The images the chips draw: the file icon, and each thumbnail once the window has it."""

    wanted = Signal(str)  # an attachment drawn whose thumbnail is not here: its id

    def __init__(self, view: QTextEdit) -> None:
        super().__init__(view)
        self._view = view
        self._thumbnails: dict[str, QImage] = {}
        self._asked: set[str] = set()

    @staticmethod
    def handles(url: QUrl) -> bool:
        return url.scheme() == SCHEME

    def load(self, url: QUrl) -> QImage:
        """The image `url` names (drawn by the transcript's document)."""
        kind, _, ident = url.path(QUrl.ComponentFormattingOption.FullyDecoded).partition("/")
        if kind == "icon":
            return icon("file", self._view.palette()).pixmap(ICON_PX * 2, ICON_PX * 2).toImage()
        found = self._thumbnails.get(ident)
        if found is not None:
            return found
        if ident not in self._asked:
            self._asked.add(ident)
            self.wanted.emit(ident)
        return _square(None)

    def add(self, ident: str, image: QImage | None, too_large: bool = False) -> None:
        """The thumbnail of `ident` came (None: the file is no image Qt reads: a grey square;
        `too_large`: one the window does not decode, a square that says so)."""
        square = _square(image)
        if image is None and too_large:
            _say(square, TOO_LARGE, self._view.palette().text().color())
        self._thumbnails[ident] = square
        url = QUrl(f"{SCHEME}:thumb/{quote(ident, safe='')}")
        self._view.document().addResource(QTextDocument.ResourceType.ImageResource, url, square)
        self._view.viewport().update()

    def has(self, ident: str) -> bool:
        return ident in self._thumbnails


def _square(image: QImage | None) -> QImage:
    """`image` fitted in the square a thumbnail is drawn in, centred, the rest transparent
    (the HTML gives the square's size: the image's own shape is not known when it is drawn)."""
    side = THUMBNAIL_PX * 2
    square = QImage(side, side, QImage.Format.Format_ARGB32_Premultiplied)
    square.fill(QColor(0, 0, 0, 0) if image is not None else QColor(128, 128, 128, 40))
    if image is not None and not image.isNull():
        fitted = image.scaled(
            side,
            side,
            Qt.AspectRatioMode.KeepAspectRatio,
            Qt.TransformationMode.SmoothTransformation,
        )
        painter = QPainter(square)
        painter.drawImage((side - fitted.width()) // 2, (side - fitted.height()) // 2, fitted)
        painter.end()
    return square


def _say(square: QImage, words: str, colour: QColor) -> None:
    """`words` written across the middle of `square`, wrapped, small."""
    painter = QPainter(square)
    font = painter.font()
    font.setPixelSize(square.height() // 7)
    painter.setFont(font)
    painter.setPen(colour)
    margin = square.width() // 10
    box = QRect(margin, 0, square.width() - 2 * margin, square.height())
    painter.drawText(box, int(Qt.AlignmentFlag.AlignCenter | Qt.TextFlag.TextWordWrap), words)
    painter.end()
