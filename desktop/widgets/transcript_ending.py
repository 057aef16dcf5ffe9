"""A reply's ending in the transcript: the rest of its text, the reply drawn whole again where
drawn in pieces it would not come out as when reopened, then its footer (badge, figures,
actions), all in one edit.

A mixin of `Transcript` (desktop/widgets/transcript.py): these are the transcript's own
methods, on its one document; what they use of it is declared here.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import TYPE_CHECKING

from PySide6.QtCore import QTimer, SignalInstance
from PySide6.QtGui import QTextCursor

from desktop.client import ReplyEnd
from desktop.markdown_render import MarkdownRenderer, has_inline_markup, is_structured
from desktop.widgets.message_actions import actions_line
from desktop.widgets.transcript_history import FOOTER_LINE_GAP
from desktop.widgets.transcript_parts import TEXT_GAP
from server.types import PartJSON

if TYPE_CHECKING:
    from PySide6.QtGui import QTextBlock


class ReplyEnding:
    _ending: tuple[ReplyEnd | None, str] | None
    _keep_due: bool
    _timer: QTimer
    _streaming: bool
    _live: bool
    _reply: list[str]
    _carry: str
    _frozen_len: int
    _shown_len: int
    _joined: bool
    _code_in_pieces: bool
    _reply_start: int
    _footer_start: int | None
    _group_start: int | None
    _live_ids: tuple[str, str] | None
    _texts_shown: dict[str, str]
    _muted: str
    _renderer: MarkdownRenderer
    reply_ended: SignalInstance

    if TYPE_CHECKING:  # the Transcript's and its other mixins' (a stub here would hide them)

        @contextlib.contextmanager
        def _one_edit(self) -> Iterator[QTextCursor]: ...

        def _replace_from(self, position: int, html_text: str, joiner: str = "") -> None: ...

        def _insert_whole(self, position: int, html_text: str) -> None: ...

        def _append_html(
            self, html_text: str, top_margin: float = 0, bottom_margin: float = 0
        ) -> None: ...

        def _block_after_last_table(self) -> QTextBlock | None: ...

        def _end(self) -> int: ...

        def _unseal_reply(self) -> None: ...

        def _steps_in_reply(self) -> bool: ...

        def _live_parts(self, unseen: str) -> list[PartJSON]: ...

        def _render_parts(self, parts: list[PartJSON]) -> str: ...

        def _draw_live(self, html_text: str) -> None: ...

        def _footer(self, end: ReplyEnd) -> str: ...

        def _note(self, note: str) -> str: ...

        def _keep_at_bottom(self) -> None: ...

    def _finish_reply(self) -> None:
        if self._ending is None:
            return
        end, note = self._ending
        self._ending = None
        self._keep_due = False
        self._timer.stop()
        self._streaming = False
        # One edit: the document laid out once, not after each step (the last paragraph put
        # back together, the footer's block, its HTML): p50 2.6-4.8 ms -> 1.9-2.6 (issue 16).
        with self._one_edit() as edit:
            self._draw_ending(end, note, edit)
        self.reply_ended.emit()
        self._keep_at_bottom()

    def _draw_ending(self, end: ReplyEnd | None, note: str, edit: QTextCursor) -> None:
        """`edit`: the ending's edit, open."""
        if self._footer_start is not None:  # a provisional note ("stopping…") goes
            self._replace_from(self._footer_start, "")
        self._unseal_reply()
        if end is not None:
            self._live = False
            shown = "".join(self._reply)
            content = end.content or ""
            unseen = len(content) > len(shown) and content.startswith(shown)
            if unseen:
                # Text the server generated but the view never received (Stop).
                self._reply.append(content[len(shown) :])
                shown = content
            redrawn = True
            if end.parts is not None or self._steps_in_reply():
                # With tool steps: drawn whole from its parts, each step as it ended (as
                # saved, when the ending was read from the store).
                parts = end.parts or self._live_parts(
                    content[len("".join(self._reply)) :] if unseen else ""
                )
                self._group_start = None
                self._insert_whole(self._reply_start - 1, self._render_parts(parts))
            elif (
                is_structured(shown)
                or (self._joined and has_inline_markup(shown))
                or self._code_in_pieces
            ):
                # Drawn in pieces, a list, a quote or a table comes out unlike the same text
                # drawn whole, as a reopened chat is, and so does emphasis or a link across
                # the cut of a paragraph drawn in pieces, and a code block cut in boxes:
                # draw the reply whole, once.
                self._insert_whole(self._reply_start - 1, self._renderer.render(shown))
            elif unseen:
                # Rendered with the live tail it continues, so it joins the same paragraph.
                tail = self._carry + shown[self._frozen_len :]
                self._draw_live(self._renderer.render(tail))
            else:
                redrawn = False
            if redrawn:
                # Qt knows the frame of a table (a code block too) it drew only once the edit
                # that made it is over, and where the footer goes depends on it.
                edit.endEditBlock()
                edit.beginEditBlock()
            self._shown_len = len(shown)
            footer = self._footer(end)
            line_gap = FOOTER_LINE_GAP if footer else 0.0
            if self._live_ids is not None:
                reply_id = self._live_ids[1]
                self._texts_shown[reply_id] = shown
                footer += actions_line(
                    reply_id,
                    "assistant",
                    muted=self._muted,
                    status=end.status,
                    finish_reason=end.finish_reason,
                    has_text=bool(shown),
                    last=True,
                )
        else:
            footer, line_gap = self._note(note), 0.0
        self._footer_start = self._end()
        after_table = self._block_after_last_table()
        if footer and after_table is not None:
            # Below a table as when drawn whole: after the empty block Qt leaves there (any
            # opened after it dropped), with the footer's own margins.
            self._footer_start = after_table.position() + after_table.length() - 1
            self._insert_whole(self._footer_start, footer)
        elif footer:
            self._append_html(footer, top_margin=TEXT_GAP, bottom_margin=line_gap)
