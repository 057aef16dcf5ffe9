"""A conversation as stored, drawn in the transcript, and finding a place in it (a search hit).

A long chat is drawn from its newest messages: up to `NEWEST_MESSAGES` of them and about
`NEWEST_CHARS` of text, under a link that draws the page before them ("Show the N earlier
messages"), above the ones on screen, which stay where they are. The window loads a long chat
a page at a time too (issue 38: a 100,000-message chat): when the messages loaded are all
drawn and the server has earlier ones (`unloaded`), the link asks for them
(`Transcript.earlier_wanted`), and `add_earlier` draws them once they come. Opening it or
drawing a page does not hold the window (measured: 311 ms to draw 2,000 messages at once,
~19 ms a page). A search hit or Find in an earlier message draws the rest first.
"""

from __future__ import annotations

import re

from PySide6.QtGui import QTextCursor
from PySide6.QtWidgets import QTextEdit

from desktop.markdown_render import MarkdownRenderer
from desktop.reply_events import ReplyEnd, has_steps
from desktop.widgets.transcript.actions import actions_line, anchor_position
from desktop.widgets.transcript.colours import Colours
from desktop.widgets.transcript.links import EARLIER_LINK, Links
from desktop.widgets.transcript.message_html import footer, header, user_body
from desktop.widgets.transcript.parts import PartsHtml
from desktop.widgets.transcript.summaries import marker_html
from server.types import MessageJSON, SummaryJSON

NEWEST_MESSAGES = 100
NEWEST_CHARS = 100_000


class StoredMessages:
    """The messages of the conversation shown, and which of them are drawn."""

    def __init__(
        self,
        view: QTextEdit,
        renderer: MarkdownRenderer,
        colours: Colours,
        links: Links,
        parts: PartsHtml,
    ) -> None:
        self._view = view
        self._renderer = renderer
        self._colours = colours
        self._links = links
        self._parts = parts
        self.messages: list[MessageJSON] = []  # the conversation shown, all of it loaded
        self.first_drawn = 0  # the index of the first message drawn (0: all of them)
        self.unloaded = 0  # messages of the branch before `messages`, still on the server
        # The summaries in force, by the message each ends at (a marker drawn after it).
        self.summaries: dict[str, SummaryJSON] = {}

    def html(
        self,
        messages: list[MessageJSON],
        unloaded: int,
        everything: bool,
        summaries: list[SummaryJSON] | None = None,
    ) -> str:
        """These messages to draw anew (the newest of a long chat, unless `everything`),
        with the markers of `summaries`."""
        self.messages = messages
        self.summaries = {s["through_id"]: s for s in summaries or []}
        self.unloaded = unloaded
        self.first_drawn = 0 if everything else _page_start(messages, len(messages))
        return self._earlier_link() + self._messages_html(self.first_drawn, len(messages))

    @property
    def drawn_whole(self) -> bool:
        """Every message of the chat is drawn (none wait behind "Show earlier")."""
        return self.first_drawn == 0 and self.unloaded == 0

    def earlier_wanted(self) -> str | None:
        """The first loaded message's id, when all loaded are drawn and the server has
        earlier ones (None: nothing to ask for)."""
        if self.first_drawn == 0 and self.unloaded and self.messages:
            return self.messages[0]["id"]
        return None

    def earlier_page(self) -> int:
        """Where the page before the first message drawn begins."""
        return _page_start(self.messages, self.first_drawn)

    def add_earlier(self, first_id: str, messages: list[MessageJSON], unloaded: int) -> bool:
        """The messages before `first_id` came: False if the chat shown has changed since."""
        if not self.messages or self.messages[0]["id"] != first_id:
            return False
        self.messages = messages + self.messages
        self.first_drawn += len(messages)
        self.unloaded = unloaded
        return True

    def draw_from(self, start: int) -> int:
        """Draw messages `start`… up to the first one drawn, at the top of the document,
        keeping what is on screen where it was. Returns the characters inserted."""
        if start >= self.first_drawn:
            return 0
        document = self._view.document()
        bar = self._view.verticalScrollBar()
        from_bottom = bar.maximum() - bar.value()
        earlier, self.first_drawn = self.first_drawn, start
        drawing = self._earlier_link() + self._messages_html(start, earlier)
        length = document.characterCount()
        cursor = QTextCursor(document)
        # One edit: the document is laid out again once (each change costs a layout pass
        # over the whole document, ~14 ms at 2,000 messages).
        cursor.beginEditBlock()
        cursor.movePosition(QTextCursor.MoveOperation.NextBlock, QTextCursor.MoveMode.KeepAnchor)
        cursor.removeSelectedText()  # the link
        # An empty block for the new messages, so their last one does not merge into the
        # first message drawn before.
        cursor.insertBlock()
        cursor.movePosition(QTextCursor.MoveOperation.PreviousBlock)
        cursor.insertHtml(drawing)
        cursor.endEditBlock()
        moved = document.characterCount() - length
        bar.setValue(bar.maximum() - from_bottom)
        return moved

    def is_drawn(self, message_id: str) -> bool:
        return any(m["id"] == message_id for m in self.messages[self.first_drawn :])

    def find(self, query: str, message_id: str | None) -> QTextCursor | None:
        """The first place holding a word of `query` (a search hit): in the message
        `message_id` (searching back from its actions line) if it is drawn, else anywhere."""
        document = self._view.document()
        end = anchor_position(document, f"msg:copy/{message_id}") if message_id else None
        start = self._start_of(message_id) if end is not None else 0
        for word in re.findall(r"\w+", query):
            if end is not None:
                cursor = document.find(word, start)  # case-insensitive
                if not cursor.isNull() and cursor.selectionEnd() <= end:
                    return cursor
        for word in re.findall(r"\w+", query):
            cursor = document.find(word)  # case-insensitive
            if not cursor.isNull():
                return cursor
        return None

    def _start_of(self, message_id: str | None) -> int:
        """Where the message `message_id` begins: after the actions line of the one drawn
        before it (0 for the first)."""
        ids = [m["id"] for m in self.messages]
        at = ids.index(message_id) if message_id in ids else 0
        if at <= self.first_drawn:
            return 0
        before = anchor_position(self._view.document(), f"msg:copy/{ids[at - 1]}")
        return before if before is not None else 0

    def _earlier_link(self) -> str:
        earlier = self.first_drawn + self.unloaded
        if not earlier:
            return ""
        return (
            f'<p style="color:{self._colours.muted};"><a href="{EARLIER_LINK}">Show the '
            f"{earlier:,} earlier message{'s' if earlier != 1 else ''}</a></p>"
        )

    def _messages_html(self, start: int, end: int) -> str:
        last = len(self.messages) - 1
        return "".join(self._message_html(self.messages[n], n == last) for n in range(start, end))

    def _message_html(self, message: MessageJSON, last: bool) -> str:
        colours = self._colours
        parts = [header(colours, message["role"], message["model"], message.get("created_at"))]
        if message["role"] == "assistant":
            stored = message.get("parts", [])
            if has_steps(stored):
                parts.append(self._parts.render(stored, message["model"]))
            else:
                parts.append(self._renderer.render(message["content"]))
            if message["status"] != "streaming":
                parts.append(footer(colours, ReplyEnd.from_message(message)))
        else:
            attached = message.get("attachments")
            parts.append(user_body(message["content"], attached, colours.muted))
        self._links.texts[message["id"]] = message["content"]
        parts.append(
            actions_line(
                message["id"],
                message["role"],
                muted=colours.muted,
                status=message["status"],
                finish_reason=message.get("finish_reason"),
                has_text=bool(message["content"]),
                last=last,
                siblings=message.get("siblings"),
                index=message.get("sibling_index", 0),
            )
        )
        summary = self.summaries.get(message["id"])
        if summary is not None:
            self._links.summaries[summary["id"]] = summary
            parts.append(marker_html(summary, colours.muted))
        return "".join(parts)


def _page_start(messages: list[MessageJSON], end: int) -> int:
    """Where the page of messages before `end` begins: up to `NEWEST_MESSAGES` of them and
    about `NEWEST_CHARS` of text (at least one)."""
    chars = 0
    start = end
    while start > 0 and end - start < NEWEST_MESSAGES:
        chars += len(messages[start - 1]["content"])
        if chars > NEWEST_CHARS and start < end:
            break
        start -= 1
    return start
