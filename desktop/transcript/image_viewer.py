"""An image attached to a message, shown whole (fitted to the screen, and decoded at that size:
attachment_links.py asks for `screen_room`): its name, the picture, Save… and Close.
An image too large to decode says so in the picture's place, and can still be saved.
Opened with `open()`, never `exec()` (the window's loop is asyncio's)."""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtGui import QGuiApplication, QImage, QPixmap
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QVBoxLayout, QWidget

SCREEN_SHARE = 0.8  # the most of the screen the picture takes


def screen_room(widget: QWidget | None = None) -> QSize:
    """The most room a picture takes on the screen `widget` is on (or the main screen)."""
    screen = widget.screen() if widget is not None else QGuiApplication.primaryScreen()
    if screen is None:
        return QSize(800, 600)
    return screen.availableSize() * SCREEN_SHARE


class ImageViewer(QDialog):
    save_requested = Signal()

    def __init__(
        self, name: str, image: QImage | None, parent: QWidget | None = None, said: str = ""
    ) -> None:
        """`image` shown, fitted to the screen; or, when None, `said` in its place."""
        super().__init__(parent)
        self.setObjectName("image-viewer")
        self.setWindowTitle(name)
        self.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.picture = QLabel(self)
        self.picture.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.picture.setAccessibleName(name)
        if image is not None:
            room = screen_room(parent)
            if image.width() > room.width() or image.height() > room.height():
                image = image.scaled(
                    room,
                    Qt.AspectRatioMode.KeepAspectRatio,
                    Qt.TransformationMode.SmoothTransformation,
                )
            self.picture.setPixmap(QPixmap.fromImage(image))
        else:
            self.picture.setText(f"{said}\nSave… keeps the file to open it elsewhere.")
            self.picture.setWordWrap(True)
            self.picture.setMargin(24)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        self.save_button = buttons.addButton("Save…", QDialogButtonBox.ButtonRole.ActionRole)
        self.save_button.clicked.connect(self.save_requested)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.picture, 1)
        layout.addWidget(buttons)
