"""What the links in the transcript do: a cited source, a tool step's details, a code
block's or a message's Copy, a message's actions, the earlier messages, a new chat's
examples and pointers, and web links (which the window confirms); nothing else is
followed. The context menu offers a message's actions too.

A mixin of `Transcript` (desktop/widgets/transcript.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from PySide6.QtCore import QUrl, SignalInstance
from PySide6.QtGui import QContextMenuEvent, QGuiApplication

from desktop.markdown_render import MarkdownRenderer
from desktop.widgets.message_actions import parse_link
from desktop.widgets.message_menu import message_menu
from desktop.widgets.transcript_history import EARLIER_LINK
from desktop.widgets.welcome import PANELS, example
from server.types import CitationPartJSON, ToolPartJSON

if TYPE_CHECKING:
    from desktop.widgets.transcript import Transcript


class TranscriptAnchors:
    _renderer: MarkdownRenderer
    _steps_shown: dict[str, ToolPartJSON]
    _citations_shown: dict[str, CitationPartJSON]
    _texts_shown: dict[str, str]
    citation_clicked: SignalInstance
    step_clicked: SignalInstance
    code_copied: SignalInstance
    message_action: SignalInstance
    prompt_chosen: SignalInstance
    panel_requested: SignalInstance
    link_clicked: SignalInstance
    link_hovered: SignalInstance

    if TYPE_CHECKING:  # StoredMessagesView's (a stub here would hide it)

        def show_earlier(self) -> None: ...

    def contextMenuEvent(self, event: QContextMenuEvent) -> None:
        view = cast("Transcript", self)
        message_menu(view, event.pos()).popup(event.globalPos())  # never exec() under qasync

    def open_link(self, url: QUrl) -> None:
        """Do what a click on this link does."""
        self._on_anchor_clicked(url)

    def _on_anchor_clicked(self, url: QUrl) -> None:
        if url.scheme() == "cite":
            citation = self._citations_shown.get(url.path())
            if citation is not None:
                self.citation_clicked.emit(dict(citation))
        elif url.scheme() == "step":
            step = self._steps_shown.get(url.path())
            if step is not None:
                self.step_clicked.emit(dict(step))
        elif url.scheme() == "copy":
            code = self._renderer.code_blocks.get(url.path())
            if code is not None:
                QGuiApplication.clipboard().setText(code)
                self.code_copied.emit()
        elif url.toString() == EARLIER_LINK:
            self.show_earlier()
        elif url.scheme() == "msg":
            found = parse_link(url.path())
            if found is not None and found[0] == "copy":
                QGuiApplication.clipboard().setText(self._texts_shown.get(found[1], ""))
                self.code_copied.emit()
            elif found is not None:
                self.message_action.emit(*found)
        elif url.scheme() == "prompt" and example(url.path()) is not None:
            self.prompt_chosen.emit(example(url.path()))
        elif url.scheme() == "open" and url.path() in PANELS:
            self.panel_requested.emit(url.path())
        elif url.scheme() in ("http", "https") and url.host():
            self.link_clicked.emit(url)
        # Any other scheme (file:, javascript:, a relative path...) is not followed.

    def _on_highlighted(self, url: QUrl) -> None:
        self.link_hovered.emit(url.toString() if url.scheme() in ("http", "https") else "")
