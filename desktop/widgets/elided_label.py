"""A one-line label that never asks for more width than it gets: text that does not fit ends
in "…", and the whole text is its tooltip. A long error (a backend's URL in it) would
otherwise widen the window past the screen."""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QLabel, QSizePolicy, QWidget


class ElidedLabel(QLabel):
    def __init__(self, text: str = "", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self._whole = ""
        self.setText(text)

    def setText(self, text: str) -> None:
        self._whole = text
        self.setAccessibleName(text)  # a screen reader hears all of it
        self._fit()

    def text(self) -> str:
        """The whole text, as set (what is shown may end in "…")."""
        return self._whole

    def minimumSizeHint(self) -> QSize:
        return QSize(0, super().minimumSizeHint().height())

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._fit()

    def _fit(self) -> None:
        shown = self.fontMetrics().elidedText(
            self._whole, Qt.TextElideMode.ElideRight, self.width()
        )
        super().setText(shown)
        self.setToolTip(self._whole if shown != self._whole else "")
