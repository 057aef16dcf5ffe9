"""The Transcript's drawing of a reply's parts besides its text: tool steps as they run,
citations, and a reply drawn whole from its parts (server/types PartJSON).

A mixin of `Transcript` (desktop/widgets/transcript.py): these are the transcript's own
methods, on its one document; what they use of it is declared here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QTimer

from desktop.markdown_render import MarkdownRenderer
from desktop.widgets.step_lines import citation_line, step_line
from server.types import CitationPartJSON, PartJSON, ToolPartJSON

TEXT_GAP = 12.0


class ReplyPartsView:
    _reply: list[str]
    _carry: str
    _frozen_len: int
    _shown_len: int
    _streaming: bool
    _parts: list[list[str] | ToolPartJSON | CitationPartJSON]
    _group_start: int | None  # where the tool steps being run now are drawn (at the end)
    _group: list[str]  # their ids
    _steps_shown: dict[str, ToolPartJSON]
    _citations_shown: dict[str, CitationPartJSON]
    _renderer: MarkdownRenderer
    _timer: QTimer
    _muted: str
    _error_colour: str
    _warning_colour: str

    if TYPE_CHECKING:  # the Transcript's and its other mixins' (a stub here would hide them)

        def _open_block(self, top_margin: float = 0) -> int: ...

        def _replace_from(self, position: int, html_text: str, joiner: str = "") -> None: ...

        def _draw_live(self, html_text: str) -> None: ...

        def _keep_at_bottom(self) -> None: ...

    def add_step(self, step: ToolPartJSON) -> None:
        """A tool step began or changed: its line, after all the text received so far."""
        if not self._streaming:
            return
        self._steps_shown[step["id"]] = step
        known = [
            i
            for i, p in enumerate(self._parts)
            if isinstance(p, dict) and p["type"] == "tool" and p["id"] == step["id"]
        ]
        if known:
            self._parts[known[0]] = step
        else:
            self._parts.append(step)
        if self._group_start is None:
            self._draw_all_text()
            self._group_start = self._open_block(TEXT_GAP)
            self._group = []
        if step["id"] not in self._group:
            self._group.append(step["id"])
        lines = "".join(self._step_line(self._steps_shown[i]) for i in self._group)
        self._replace_from(self._group_start, lines)
        self._keep_at_bottom()

    def running_step(self) -> ToolPartJSON | None:
        """The last tool step of the reply on screen still running or waiting for approval."""
        for part in reversed(self._parts):
            if (
                isinstance(part, dict)
                and part["type"] == "tool"
                and part["status"] in ("running", "awaiting_approval")
            ):
                return part
        return None

    def add_citation(self, citation: CitationPartJSON) -> None:
        """The reply cited a source: listed under it when it ends (drawn from its parts)."""
        if self._streaming:
            self._parts.append(citation)

    def _draw_all_text(self) -> None:
        """Draw every bit of text received (a tool step follows it): frozen, whole."""
        self._timer.stop()
        text = "".join(self._reply)
        pending = self._carry + text[self._frozen_len :]
        if pending.strip():
            self._draw_live(self._renderer.render(pending))
        self._frozen_len = self._shown_len = len(text)
        self._carry = ""

    def _step_line(self, step: ToolPartJSON) -> str:
        return step_line(step, self._muted, self._error_colour, self._warning_colour)

    def _render_parts(self, parts: list[PartJSON]) -> str:
        """A reply drawn whole from its parts: text, and its tool steps as lines."""
        pieces = []
        for part in parts:
            if part["type"] == "text":
                if part["text"].strip():
                    pieces.append(self._renderer.render(part["text"]))
            elif part["type"] == "tool":
                self._steps_shown[part["id"]] = part
                pieces.append(self._step_line(part))
            else:
                self._citations_shown[f"{len(self._citations_shown)}"] = part
                link = f"cite:{len(self._citations_shown) - 1}"
                pieces.append(citation_line(part, self._muted, link))
        return "".join(pieces)

    def _live_parts(self, unseen: str) -> list[PartJSON]:
        parts: list[PartJSON] = []
        for part in self._parts:
            if isinstance(part, list):
                parts.append({"type": "text", "text": "".join(part)})
            else:
                parts.append(part)
        if unseen:
            parts.append({"type": "text", "text": unseen})
        return parts

    def _steps_in_reply(self) -> bool:
        return any(isinstance(part, dict) for part in self._parts)
