"""What the links in the transcript do: a cited source, a tool step's details, a code
block's or a message's Copy, a message's actions, the earlier messages, a new chat's
examples and pointers, and web links (which the window confirms); nothing else is
followed. Holds what they point at (the steps, citations and messages' texts drawn), filled
by whoever draws them and emptied when the document is drawn anew."""

from __future__ import annotations

import json

from PySide6.QtCore import QObject, QUrl, Signal
from PySide6.QtGui import QGuiApplication

from desktop.markdown_render import MarkdownRenderer
from desktop.widgets.transcript.actions import parse_link
from desktop.widgets.transcript.summaries import SCHEME as SUMMARY_SCHEME
from desktop.widgets.transcript.summaries import parse_link as parse_summary_link
from desktop.widgets.welcome import PANELS, example
from server.types import CitationPartJSON, SummaryJSON, ToolPartJSON

EARLIER_LINK = "more:earlier"


class Links(QObject):
    """Each signal is re-emitted by the transcript as its own (see Transcript)."""

    link_clicked = Signal(QUrl)
    link_hovered = Signal(str)
    code_copied = Signal()
    step_clicked = Signal(dict)
    message_action = Signal(str, str)
    citation_clicked = Signal(dict)
    prompt_chosen = Signal(str)
    panel_requested = Signal(str)
    earlier_clicked = Signal()  # "Show the N earlier messages"
    summary_action = Signal(str, dict)  # view | edit | undo, the summary (SummaryJSON)

    def __init__(self, renderer: MarkdownRenderer, parent: QObject) -> None:
        super().__init__(parent)
        self._renderer = renderer  # its code blocks, for their Copy links
        self.steps: dict[str, ToolPartJSON] = {}  # by id, for their details links
        self.texts: dict[str, str] = {}  # message id -> its text (Copy)
        self._citations: dict[str, CitationPartJSON] = {}  # link number -> citation
        self._cited: dict[str, str] = {}  # a citation's JSON -> its link (drawn again)
        self.summaries: dict[str, SummaryJSON] = {}  # by id, for their markers' links

    def cite(self, citation: CitationPartJSON) -> str:
        """The link to a source drawn (in its reply's list, or its "[n]" in the text): the
        same one each time it is drawn again (a streaming reply's text is)."""
        known = json.dumps(citation, sort_keys=True)
        number = self._cited.get(known)
        if number is None:
            number = self._cited[known] = f"{len(self._citations)}"
            self._citations[number] = citation
        return f"cite:{number}"

    def clear(self) -> None:
        """Nothing is drawn any more."""
        self._renderer.code_blocks.clear()
        self.steps.clear()
        self._citations.clear()
        self._cited.clear()
        self.texts.clear()
        self.summaries.clear()

    def open(self, url: QUrl) -> None:
        """Do what a click on this link does."""
        if url.scheme() == "cite":
            citation = self._citations.get(url.path())
            if citation is not None:
                self.citation_clicked.emit(dict(citation))
        elif url.scheme() == "step":
            step = self.steps.get(url.path())
            if step is not None:
                self.step_clicked.emit(dict(step))
        elif url.scheme() == "copy":
            code = self._renderer.code_blocks.get(url.path())
            if code is not None:
                QGuiApplication.clipboard().setText(code)
                self.code_copied.emit()
        elif url.toString() == EARLIER_LINK:
            self.earlier_clicked.emit()
        elif url.scheme() == "msg":
            found = parse_link(url.path())
            if found is not None and found[0] == "copy":
                QGuiApplication.clipboard().setText(self.texts.get(found[1], ""))
                self.code_copied.emit()
            elif found is not None:
                self.message_action.emit(*found)
        elif url.scheme() == SUMMARY_SCHEME:
            action = parse_summary_link(url.path())
            summary = self.summaries.get(action[1]) if action is not None else None
            if action is not None and summary is not None:
                self.summary_action.emit(action[0], dict(summary))
        elif url.scheme() == "prompt" and example(url.path()) is not None:
            self.prompt_chosen.emit(example(url.path()))
        elif url.scheme() == "open" and url.path() in PANELS:
            self.panel_requested.emit(url.path())
        elif url.scheme() in ("http", "https") and url.host():
            self.link_clicked.emit(url)
        # Any other scheme (file:, javascript:, a relative path...) is not followed.

    def hovered(self, url: QUrl) -> None:
        self.link_hovered.emit(url.toString() if url.scheme() in ("http", "https") else "")
