"""The window's view of itself: the sidebar shown or hidden, the text's zoom (View menu),
and a new chat's welcome page (desktop/widgets/welcome.py) with what its links open.

A mixin of `MainWindow` (desktop/main_window.py): these are the window's own methods; what
they use of it is declared here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import SignalInstance
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QApplication, QSplitter

from desktop.client import ParleyClient
from desktop.widgets.welcome import welcome_html

if TYPE_CHECKING:
    from desktop.help_windows import HelpWindows
    from desktop.menus import Menus
    from desktop.widgets.composer import Composer
    from desktop.widgets.conversation_list import ConversationList
    from desktop.widgets.model_picker import ModelPicker
    from desktop.widgets.transcript import Transcript

ZOOM_STEP = 1.1  # each zoom step, as a factor of the text's size
ZOOM_MIN, ZOOM_MAX = -4, 8


class WindowView:
    client: ParleyClient | None
    current_id: str | None
    sidebar: ConversationList
    splitter: QSplitter
    composer: Composer
    transcript: Transcript
    model_picker: ModelPicker
    menus: Menus
    help: HelpWindows
    zoom_level: int
    zoom_changed: SignalInstance
    settings_requested: SignalInstance
    models_requested: SignalInstance
    library_requested: SignalInstance

    if TYPE_CHECKING:  # the window's (a stub here would hide them)

        def _on_composer_message_submitted(self, text: str) -> None: ...

    def set_sidebar_shown(self, shown: bool) -> None:
        self.sidebar.setVisible(shown)
        self.menus.sidebar.setChecked(shown)
        focus = QApplication.focusWidget()
        if not shown and focus is not None and self.sidebar.isAncestorOf(focus):
            self.composer.focus()

    def zoom(self, step: int) -> None:
        """Text a step larger (+1) or smaller (-1), or back to the system's size (0)."""
        level = 0 if step == 0 else self.zoom_level + step
        self.set_zoom(level)
        self.zoom_changed.emit(self.zoom_level)

    def set_zoom(self, level: int) -> None:
        """The size of all text in the window, in steps of 10 % from the system font's."""
        self.zoom_level = max(ZOOM_MIN, min(ZOOM_MAX, level))
        base = QApplication.font().pointSizeF()
        font = QFont(self.splitter.font())
        font.setPointSizeF(round(base * ZOOM_STEP**self.zoom_level, 1))
        self.splitter.setFont(font)
        self.menus.zoom_in.setEnabled(self.zoom_level < ZOOM_MAX)
        self.menus.zoom_out.setEnabled(self.zoom_level > ZOOM_MIN)

    def _on_transcript_prompt_chosen(self, prompt: str) -> None:
        self.composer.set_text(prompt)
        self._on_composer_message_submitted(prompt)

    def _on_transcript_panel_requested(self, panel: str) -> None:
        {
            "settings": self.settings_requested.emit,
            "models": self.models_requested.emit,
            "library": self.library_requested.emit,
            "shortcuts": self.help.show_shortcuts,
        }[panel]()

    def show_welcome(self) -> None:
        """On a new chat with nothing in it yet: which model answers, examples, pointers."""
        if self.current_id is None:
            model = self.model_picker.current()
            state = self.model_picker.state.text() if self.client else ""
            self.transcript.show_welcome(welcome_html(model, state, self.transcript.muted))
