"""Parley's icons for Qt Quick: `image://icons/NAME/RRGGBB` is the icon NAME (desktop/look/icons.py,
resources/icons/) drawn in that colour at the size the item asks for, so QML colours them
from the palette as widgets do."""

from __future__ import annotations

import re

from PySide6.QtCore import QSize
from PySide6.QtGui import QImage
from PySide6.QtQuick import QQuickImageProvider

from desktop.look.icons import drawn

PROVIDER = "icons"
DEFAULT_SIZE = 20
ID = re.compile(r"([a-z-]{1,40})/([0-9a-fA-F]{6})")


class IconImages(QQuickImageProvider):
    def __init__(self) -> None:
        super().__init__(QQuickImageProvider.ImageType.Image)

    def requestImage(self, id: str, size: QSize, requested: QSize) -> QImage:
        match = ID.fullmatch(id)
        if match is None:
            return QImage()
        side = max(requested.width(), requested.height())
        return drawn(match.group(1), f"#{match.group(2)}", side if side > 0 else DEFAULT_SIZE)
