"""Parley's icons: line drawings in `resources/icons/` (24 px, drawn in black), coloured
with the palette's text colour when they are made, so they read on light and dark alike.

An icon that cannot be found or drawn is an empty icon: its button keeps its text (every
icon-only button also has a tooltip and an accessible name)."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from PySide6.QtCore import QByteArray, QRectF, Qt, QTemporaryDir
from PySide6.QtGui import QIcon, QImage, QPainter, QPalette, QPixmap
from PySide6.QtSvg import QSvgRenderer

ICONS = Path(__file__).resolve().parents[2] / "resources" / "icons"
DRAWN_IN = "#000000"
SIZES = (16, 20, 24, 32, 48)


def icon(name: str, palette: QPalette) -> QIcon:
    """The icon `name` in the palette's colours (disabled: its disabled text colour)."""
    normal = palette.color(QPalette.ColorGroup.Active, QPalette.ColorRole.ButtonText).name()
    faded = palette.color(QPalette.ColorGroup.Disabled, QPalette.ColorRole.ButtonText).name()
    return _icon(name, normal, faded)


def icon_in(name: str, colour: str, faded: str) -> QIcon:
    """The icon `name` in `colour` (disabled: `faded`), for a button with a coloured face."""
    return _icon(name, colour, faded)


@lru_cache(maxsize=128)
def _icon(name: str, colour: str, disabled: str) -> QIcon:
    made = QIcon()
    for mode, shade in ((QIcon.Mode.Normal, colour), (QIcon.Mode.Disabled, disabled)):
        for size in SIZES:
            image = drawn(name, shade, size)
            if image.isNull():
                return QIcon()
            made.addPixmap(QPixmap.fromImage(image), mode)
    return made


@lru_cache(maxsize=256)
def drawn(name: str, colour: str, size: int) -> QImage:
    """The icon `name` drawn in `colour`, `size` pixels square; a null image if there is no
    such icon or it cannot be drawn."""
    try:
        drawing = (ICONS / f"{name}.svg").read_text(encoding="utf-8")
    except OSError:
        return QImage()
    renderer = QSvgRenderer(QByteArray(drawing.replace(DRAWN_IN, colour).encode()))
    if not renderer.isValid():
        return QImage()
    image = QImage(size, size, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    renderer.render(painter, QRectF(0, 0, size, size))
    painter.end()
    return image


_FILES: list[QTemporaryDir] = []  # the drawings as files, removed when the app ends


def icon_file(name: str, colour: str) -> str:
    """A file of the icon `name` drawn in `colour`, for a style sheet's `image: url(…)` (a
    sheet names an image by its path); "" if it cannot be written."""
    if not _FILES:
        _FILES.append(QTemporaryDir())
    folder = _FILES[0]
    path = Path(folder.path()) / f"{name}-{colour.lstrip('#')}.svg"
    if not path.exists():
        try:
            drawing = (ICONS / f"{name}.svg").read_text(encoding="utf-8")
            path.write_text(drawing.replace(DRAWN_IN, colour), encoding="utf-8")
        except OSError:
            return ""
    return path.as_posix()
