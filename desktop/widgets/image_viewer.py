"""An image attached to a message, shown whole (fitted to the screen): its name, the picture,
Save… and Close. Opened with `open()`, never `exec()` (the window's loop is asyncio's)."""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtGui import QGuiApplication, QImage, QPixmap
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QVBoxLayout, QWidget

SCREEN_SHARE = 0.8  # the most of the screen the picture takes


class ImageViewer(QDialog):
    save_requested = Signal()

    def __init__(self, name: str, image: QImage, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("image-viewer")
        self.setWindowTitle(name)
        self.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.picture = QLabel(self)
        self.picture.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.picture.setAccessibleName(name)
        screen = QGuiApplication.primaryScreen()
        room = screen.availableSize() * SCREEN_SHARE if screen is not None else QSize(800, 600)
        pixmap = QPixmap.fromImage(image)
        if pixmap.width() > room.width() or pixmap.height() > room.height():
            pixmap = pixmap.scaled(
                room, Qt.AspectRatioMode.KeepAspectRatio, Qt.TransformationMode.SmoothTransformation
            )
        self.picture.setPixmap(pixmap)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        self.save_button = buttons.addButton("Save…", QDialogButtonBox.ButtonRole.ActionRole)
        self.save_button.clicked.connect(self.save_requested)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.picture, 1)
        layout.addWidget(buttons)
