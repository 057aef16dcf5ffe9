"""A reply's ending in the transcript: the rest of its text, the reply drawn whole again where
drawn in pieces it would not come out as when reopened, then its footer (badge, figures,
actions); or, while how it was saved is not known yet, a note."""

from __future__ import annotations

from PySide6.QtGui import QTextCursor

from desktop.markdown_render import MarkdownRenderer, has_inline_markup, is_structured
from desktop.reply_events import ReplyEnd
from desktop.widgets.transcript.actions import actions_line
from desktop.widgets.transcript.colours import Colours
from desktop.widgets.transcript.document import Editor
from desktop.widgets.transcript.links import Links
from desktop.widgets.transcript.live_reply import LiveReply
from desktop.widgets.transcript.live_text import LiveText
from desktop.widgets.transcript.message_html import FOOTER_LINE_GAP, TEXT_GAP, footer
from desktop.widgets.transcript.message_html import note as note_html
from desktop.widgets.transcript.parts import PartsHtml


class ReplyEnding:
    def __init__(
        self,
        editor: Editor,
        renderer: MarkdownRenderer,
        colours: Colours,
        links: Links,
        parts: PartsHtml,
        text: LiveText,
    ) -> None:
        self._editor = editor
        self._renderer = renderer
        self._colours = colours
        self._links = links
        self._parts = parts
        self._text = text

    def draw(self, reply: LiveReply, end: ReplyEnd | None, note: str, edit: QTextCursor) -> None:
        """`end`: how it was saved (None: not known yet, `note` says why). `edit`: the
        ending's edit, open."""
        editor = self._editor
        if reply.footer_start is not None:  # a provisional note ("stopping…") goes
            editor.replace_from(reply.footer_start, "")
        self._text.unseal(reply)
        if end is not None:
            below, line_gap = self._draw_rest(reply, end, edit)
        else:
            below, line_gap = note_html(self._colours, note), 0.0
        reply.footer_start = editor.end()
        after_table = editor.block_after_last_table()
        if below and after_table is not None:
            # Below a table as when drawn whole: after the empty block Qt leaves there (any
            # opened after it dropped), with the footer's own margins.
            reply.footer_start = after_table.position() + after_table.length() - 1
            editor.insert_whole(reply.footer_start, below)
        elif below:
            editor.append_html(below, top_margin=TEXT_GAP, bottom_margin=line_gap)

    def _draw_rest(self, reply: LiveReply, end: ReplyEnd, edit: QTextCursor) -> tuple[str, float]:
        """The rest of the reply, drawn again whole if need be; returns its footer and the
        gap below the footer's line."""
        reply.live = False
        shown = reply.text()
        content = end.content or ""
        unseen = content[len(shown) :] if content.startswith(shown) else ""
        if unseen:
            # Text the server generated but the view never received (Stop).
            shown = content
        redrawn = True
        if end.parts is not None or reply.parts.has_steps:
            # With tool steps: drawn whole from its parts, each step as it ended (as
            # saved, when the ending was read from the store).
            # (Its parts hold all it received, also what came after Stop, undrawn.)
            received = reply.parts.text
            beyond = content[len(received) :] if content.startswith(received) else ""
            parts = end.parts or reply.parts.as_parts(beyond)
            reply.group_start = None
            html_text = self._parts.render(parts, reply.model)
            self._editor.insert_whole(reply.reply_start - 1, html_text)
        elif (
            is_structured(shown)
            or (reply.joined and has_inline_markup(shown))
            or (reply.code_in_pieces)
        ):
            # Drawn in pieces, a list, a quote or a table comes out unlike the same text
            # drawn whole, as a reopened chat is, and so does emphasis or a link across
            # the cut of a paragraph drawn in pieces, and a code block cut in boxes:
            # draw the reply whole, once.
            self._editor.insert_whole(reply.reply_start - 1, self._renderer.render(shown))
        elif unseen:
            # Rendered with the live tail it continues, so it joins the same paragraph.
            tail = reply.carry + shown[reply.frozen_len :]
            self._text.draw_live(reply, self._renderer.render(tail))
        else:
            redrawn = False
        if redrawn:
            # Qt knows the frame of a table (a code block too) it drew only once the edit
            # that made it is over, and where the footer goes depends on it.
            edit.endEditBlock()
            edit.beginEditBlock()
        reply.shown_len = len(shown)
        line = footer(self._colours, end)
        line_gap = FOOTER_LINE_GAP if line else 0.0
        if reply.ids is None:
            return line, line_gap
        reply_id = reply.ids[1]
        self._links.texts[reply_id] = shown
        return line + actions_line(
            reply_id,
            "assistant",
            muted=self._colours.muted,
            status=end.status,
            finish_reason=end.finish_reason,
            has_text=bool(shown),
            last=True,
        ), line_gap
