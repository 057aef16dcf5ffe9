"""The transcript's colours, read from the palette (light or dark): muted text for figures and
hints, the accent of the user's name, the tint behind a question, and the error and warning
badges. One object, read again when the palette changes; whoever draws holds it."""

from __future__ import annotations

from PySide6.QtGui import QColor, QPalette

from desktop.look import style


def is_dark(palette: QPalette) -> bool:
    return palette.color(QPalette.ColorRole.Base).lightness() < 128


class Colours:
    def __init__(self, palette: QPalette) -> None:
        self.muted = ""  # secondary text (figures, hints)
        self.accent = ""  # the user's name
        self.tint = ""  # behind the user's words (question_tint)
        self.text = ""
        self.error = ""
        self.warning = ""
        self.dark = False
        self.read(palette)

    def read(self, palette: QPalette) -> None:
        """Muted text halfway between the text and its background (the palette's
        placeholder colour is near black in some styles); badges readable on either."""
        text = palette.color(QPalette.ColorRole.Text)
        base = palette.color(QPalette.ColorRole.Base)
        highlight = palette.color(QPalette.ColorRole.Highlight)
        self.dark = is_dark(palette)
        self.muted = QColor(
            (text.red() + base.red()) // 2,
            (text.green() + base.green()) // 2,
            (text.blue() + base.blue()) // 2,
        ).name()
        self.text = text.name()
        self.accent = style.mix(highlight, text, 0.25 if self.dark else 0.1)
        # The user's messages: the background, a little towards the accent.
        self.tint = style.mix(base, highlight, 0.16 if self.dark else 0.08)
        self.error = "#ff8a7a" if self.dark else "#b03a2e"
        self.warning = "#f0b45a" if self.dark else "#9a6108"
