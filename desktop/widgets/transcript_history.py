"""The Transcript's drawing of messages: the pieces of one (who, the text, how a reply ended,
its actions: desktop/widgets/message_actions.py), a conversation as stored, and finding a
place in it (a search hit).

A long chat is drawn from its newest messages: up to `NEWEST_MESSAGES` of them and about
`NEWEST_CHARS` of text, under a link that draws the page before them ("Show the N earlier
messages"), above the ones on screen, which stay where they are. The window loads a long chat
a page at a time too (issue 38: a 100,000-message chat): when the messages loaded are all
drawn and the server has earlier ones (`_unloaded`), the link asks for them
(`earlier_wanted`), and `add_earlier` draws them once they come. Opening it or drawing a page
does not hold the window (measured: 311 ms to draw 2,000 messages at once, ~19 ms a page). A
search hit or Find in an earlier message draws the rest first.

A mixin of `Transcript` (desktop/widgets/transcript.py): these are the transcript's own
methods, on its one document; what they use of it is declared here.
"""

from __future__ import annotations

import html
import re
import time
from typing import TYPE_CHECKING

from PySide6.QtCore import SignalInstance
from PySide6.QtGui import QTextBlock, QTextCursor, QTextDocument
from PySide6.QtWidgets import QScrollBar

from desktop.markdown_render import MarkdownRenderer
from desktop.reply_events import ReplyEnd, has_steps
from desktop.widgets.badges import badge_for, stats_for
from desktop.widgets.message_actions import actions_line, parse_link
from desktop.widgets.question_tint import question_html
from server.types import CitationPartJSON, MessageJSON, PartJSON, ToolPartJSON

NEWEST_MESSAGES = 100
NEWEST_CHARS = 100_000
EARLIER_LINK = "more:earlier"
# Below the line of a reply's badge and figures, above its actions.
FOOTER_LINE_GAP = 6.0


class StoredMessagesView:
    _renderer: MarkdownRenderer
    _steps_shown: dict[str, ToolPartJSON]
    _citations_shown: dict[str, CitationPartJSON]
    _texts_shown: dict[str, str]
    _muted: str
    _accent: str
    _text_colour: str
    _error_colour: str
    _warning_colour: str
    _messages: list[MessageJSON]  # the conversation shown, all of it
    _first_drawn: int  # the index of the first message drawn (0: all of them)
    _unloaded: int  # messages of the branch before `_messages`, still on the server
    _welcome: str
    _live: bool  # a reply is on screen (the Transcript's)

    if TYPE_CHECKING:  # the Transcript's, ReplyPartsView's and QTextBrowser's (a stub here
        # would hide them)

        def _abandon_reply(self) -> None: ...

        def _follow_from_now(self) -> None: ...

        def _moved_down(self, by: int) -> None: ...

        def _render_parts(self, parts: list[PartJSON]) -> str: ...

        def document(self) -> QTextDocument: ...

        def setHtml(self, text: str) -> None: ...

        def setTextCursor(self, cursor: QTextCursor) -> None: ...

        def ensureCursorVisible(self) -> None: ...

        def verticalScrollBar(self) -> QScrollBar: ...

        @property
        def earlier_wanted(self) -> SignalInstance: ...

    # -- the pieces of a message (also of the reply drawn live) ------------------------------

    def _header(self, role: str, model: str | None, when: float | None = None) -> str:
        """Who wrote it (the user in the accent colour), the model, and when (on hover)."""
        colour = self._accent if role == "user" else self._text_colour
        who = "You" if role == "user" else "Assistant"
        extra = (
            f' <span style="color:{self._muted};">· {html.escape(model)}</span>' if model else ""
        )
        stamp = time.strftime("%A %d %B %Y, %H:%M", time.localtime(when or time.time()))
        return (
            f'<p style="margin-top:18px;"><span title="{stamp}" style="color:{colour};">'
            f"<b>{who}</b></span>{extra}</p>"
        )

    def _user_body(self, text: str) -> str:
        """The user's words on a tinted ground (painted by the transcript: question_tint),
        so a question stands apart from its reply."""
        return question_html(text)

    def _footer(self, end: ReplyEnd) -> str:
        badge = badge_for(end)
        stats = stats_for(end.usage)
        pieces = []
        if badge:
            color = self._error_colour if end.status == "error" else self._warning_colour
            pieces.append(f'<span style="color:{color};"><b>{html.escape(badge)}</b></span>')
        if stats:
            pieces.append(f'<span style="color:{self._muted};">{html.escape(stats)}</span>')
        line = " &nbsp; ".join(pieces)
        return f'<p style="margin-bottom:{FOOTER_LINE_GAP:g}px;">{line}</p>' if pieces else ""

    def _note(self, note: str) -> str:
        colour = self._warning_colour
        return f'<p><span style="color:{colour};"><b>{html.escape(note)}</b></span></p>'

    # -- a conversation as stored --------------------------------------------------------------

    def show_conversation(
        self, messages: list[MessageJSON], *, everything: bool = False, unloaded: int = 0
    ) -> None:
        """Draw these messages (the newest of a long chat, unless `everything`); `unloaded`:
        how many of the branch come before them, not loaded."""
        self._abandon_reply()
        self._welcome = ""
        self._messages = messages
        self._unloaded = unloaded
        self._first_drawn = 0 if everything else _newest_start(messages)
        self._renderer.code_blocks.clear()
        self._steps_shown.clear()
        self._citations_shown.clear()
        self._texts_shown.clear()
        self.setHtml(self._earlier_link() + self._messages_html(self._first_drawn, len(messages)))
        end = QTextCursor(self.document())
        end.movePosition(QTextCursor.MoveOperation.End)
        self.setTextCursor(end)
        self.ensureCursorVisible()
        self._follow_from_now()

    def show_welcome(self, page: str) -> None:
        """A new chat's page (desktop/widgets/welcome.py), until its first message."""
        blank = self._welcome or self.document().isEmpty()
        if self._welcome != page and blank and not self._live:
            self.show_conversation([])
            self.setHtml(page)
            self._welcome = page

    @property
    def welcome_shown(self) -> bool:
        return bool(self._welcome)

    @property
    def drawn_whole(self) -> bool:
        """Every message of the chat is drawn (none wait behind "Show earlier")."""
        return self._first_drawn == 0 and self._unloaded == 0

    def show_everything(self) -> None:
        """Draw the earlier messages too, above the ones drawn, which stay in view (those
        not loaded yet are asked for, and drawn when they come)."""
        self._draw_from(0)
        if self._unloaded and self._messages:
            self.earlier_wanted.emit(self._messages[0]["id"], True)

    def show_earlier(self) -> None:
        """Draw the page of messages before the first one drawn (the "Show earlier" link);
        when all those loaded are drawn, ask for the page before them."""
        if self._first_drawn == 0 and self._unloaded and self._messages:
            self.earlier_wanted.emit(self._messages[0]["id"], False)
            return
        self._draw_from(_page_start(self._messages, self._first_drawn))

    def add_earlier(
        self, first_id: str, messages: list[MessageJSON], unloaded: int, everything: bool
    ) -> bool:
        """The messages before `first_id` have come (`earlier_wanted`): draw their last page
        (all of them if `everything`). False if the chat shown has changed since."""
        if not self._messages or self._messages[0]["id"] != first_id:
            return False
        self._messages = messages + self._messages
        self._first_drawn += len(messages)
        self._unloaded = unloaded
        self._draw_from(0 if everything else _page_start(self._messages, self._first_drawn))
        return True

    def _draw_from(self, start: int) -> None:
        """Draw messages `start`… up to the first one drawn, at the top of the document,
        keeping what is on screen where it was."""
        if start >= self._first_drawn:
            return
        bar = self.verticalScrollBar()
        from_bottom = bar.maximum() - bar.value()
        earlier, self._first_drawn = self._first_drawn, start
        drawing = self._earlier_link() + self._messages_html(start, earlier)
        length = self.document().characterCount()
        cursor = QTextCursor(self.document())
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
        self._moved_down(self.document().characterCount() - length)  # a reply streaming below
        bar.setValue(bar.maximum() - from_bottom)

    def _earlier_link(self) -> str:
        earlier = self._first_drawn + self._unloaded
        if not earlier:
            return ""
        return (
            f'<p style="color:{self._muted};"><a href="{EARLIER_LINK}">Show the {earlier:,} '
            f"earlier message{'s' if earlier != 1 else ''}</a></p>"
        )

    def _messages_html(self, start: int, end: int) -> str:
        last = len(self._messages) - 1
        return "".join(self._message_html(self._messages[n], n == last) for n in range(start, end))

    def _message_html(self, message: MessageJSON, last: bool) -> str:
        parts = [self._header(message["role"], message["model"], message.get("created_at"))]
        if message["role"] == "assistant":
            stored = message.get("parts", [])
            if has_steps(stored):
                parts.append(self._render_parts(stored))
            else:
                parts.append(self._renderer.render(message["content"]))
            if message["status"] != "streaming":
                parts.append(self._footer(ReplyEnd.from_message(message)))
        else:
            parts.append(self._user_body(message["content"]))
        self._texts_shown[message["id"]] = message["content"]
        parts.append(
            actions_line(
                message["id"],
                message["role"],
                muted=self._muted,
                status=message["status"],
                finish_reason=message.get("finish_reason"),
                has_text=bool(message["content"]),
                last=last,
                siblings=message.get("siblings"),
                index=message.get("sibling_index", 0),
            )
        )
        return "".join(parts)

    def reveal(self, query: str, message_id: str | None = None) -> bool:
        """Select and scroll to the first place holding a word of `query` (a search hit): in
        the message `message_id` (searching back from its actions line), drawn if it was
        among the earlier messages."""
        drawn = {m["id"] for m in self._messages[self._first_drawn :]}
        if message_id is not None and message_id not in drawn:
            self.show_everything()
        end = self._anchor_position(f"msg:copy/{message_id}") if message_id else None
        start = self._start_of(message_id) if end is not None else 0
        for word in re.findall(r"\w+", query):
            if end is not None:
                cursor = self.document().find(word, start)  # case-insensitive
                if not cursor.isNull() and cursor.selectionEnd() <= end:
                    self.setTextCursor(cursor)
                    self.ensureCursorVisible()
                    return True
        for word in re.findall(r"\w+", query):
            cursor = self.document().find(word)  # case-insensitive
            if not cursor.isNull():
                self.setTextCursor(cursor)
                self.ensureCursorVisible()
                return True
        return False

    def _start_of(self, message_id: str | None) -> int:
        """Where the message `message_id` begins: after the actions line of the one drawn
        before it (0 for the first)."""
        ids = [m["id"] for m in self._messages]
        at = ids.index(message_id) if message_id in ids else 0
        if at <= self._first_drawn:
            return 0
        before = self._anchor_position(f"msg:copy/{ids[at - 1]}")
        return before if before is not None else 0

    def _anchor_position(self, href: str) -> int | None:
        """Where the link to `href` is in the document (None: not there)."""
        block = self.document().begin()
        while block.isValid():
            fragments = block.begin()
            while not fragments.atEnd():
                fragment = fragments.fragment()
                if fragment.isValid() and fragment.charFormat().anchorHref() == href:
                    return int(fragment.position())
                fragments += 1
            block = block.next()
        return None

    def last_actions(self) -> dict[str, str]:
        """The actions of the last message drawn (action -> message id), e.g. whether its
        reply may be regenerated or continued."""
        block = self.document().lastBlock()
        while block.isValid():
            found = _block_actions(block)
            if found:
                return found
            block = block.previous()
        return {}

    def actions_at(self, position: int) -> dict[str, str]:
        """The actions of the message drawn at `position` (its actions line follows it)."""
        block = self.document().findBlock(position)
        while block.isValid():
            found = _block_actions(block)
            if found:
                return found
            block = block.next()
        return {}

    def message_text(self, message_id: str) -> str | None:
        """The text of a message on screen (None: not shown here)."""
        return self._texts_shown.get(message_id)


def _block_actions(block: QTextBlock) -> dict[str, str]:
    """The `msg:` links of a block (an actions line): action -> message id."""
    found: dict[str, str] = {}
    fragments = block.begin()
    while not fragments.atEnd():
        fragment = fragments.fragment()
        href = fragment.charFormat().anchorHref() if fragment.isValid() else ""
        if href.startswith("msg:"):
            link = parse_link(href[len("msg:") :])
            if link is not None and link[0] != "version":
                found.setdefault(link[0], link[1])
        fragments += 1
    return found


def _newest_start(messages: list[MessageJSON]) -> int:
    """Where the newest messages a first drawing shows begin (at least the last one)."""
    return _page_start(messages, len(messages))


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
