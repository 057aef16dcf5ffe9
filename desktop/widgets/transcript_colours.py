"""The transcript's colours: muted text for figures and hints, and the error and warning
badges, read from the palette (light or dark); a switch between light and dark renders
code anew (its colours are baked into the document) and asks for a redraw.

A mixin of `Transcript` (desktop/widgets/transcript.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import SignalInstance
from PySide6.QtGui import QColor, QPalette

from desktop import style
from desktop.markdown_render import MarkdownRenderer

if TYPE_CHECKING:
    from PySide6.QtWidgets import QScrollBar


class TranscriptColours:
    _renderer: MarkdownRenderer
    _muted: str
    _accent: str
    _tint: str
    _text_colour: str
    _error_colour: str
    _warning_colour: str
    theme_changed: SignalInstance

    if TYPE_CHECKING:  # QTextBrowser's (a stub here would hide it)

        def palette(self) -> QPalette: ...

        def verticalScrollBar(self) -> QScrollBar: ...

    def _on_palette_changed(self) -> None:
        self._set_colours()
        dark = self._palette_is_dark()
        if dark != self._renderer.dark:
            # Code colours and badges are baked into the document as inline styles.
            self._renderer.set_dark(dark)
            self.theme_changed.emit()

    def _set_colours(self) -> None:
        """Muted text halfway between the text and its background (the palette's
        placeholder colour is near black in some styles); badges readable on either."""
        text = self.palette().color(QPalette.ColorRole.Text)
        base = self.palette().color(QPalette.ColorRole.Base)
        self._muted = QColor(
            (text.red() + base.red()) // 2,
            (text.green() + base.green()) // 2,
            (text.blue() + base.blue()) // 2,
        ).name()
        highlight = self.palette().color(QPalette.ColorRole.Highlight)
        self._text_colour = text.name()
        self._accent = style.mix(highlight, text, 0.25 if self._palette_is_dark() else 0.1)
        # The user's messages: the background, a little towards the accent.
        self._tint = style.mix(base, highlight, 0.16 if self._palette_is_dark() else 0.08)
        dark = self._palette_is_dark()
        self._error_colour = "#ff8a7a" if dark else "#b03a2e"
        self._warning_colour = "#f0b45a" if dark else "#9a6108"
        self.verticalScrollBar().setStyleSheet(style.scroll_bar_in(self.palette()))

    @property
    def muted(self) -> str:
        """The colour of secondary text (figures, hints) in the current palette."""
        return self._muted

    def _palette_is_dark(self) -> bool:
        return self.palette().color(QPalette.ColorRole.Base).lightness() < 128
