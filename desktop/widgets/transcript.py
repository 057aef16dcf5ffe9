"""The conversation: one QTextBrowser document, rendered once and then grown incrementally.

A reply that streams is only ever appended to: deltas are coalesced (16 ms), the part that
can no longer change (up to the last blank line outside a code fence) is rendered once and
frozen, and only the short live tail is re-rendered. So the cost of an update stays flat as
the reply grows, where re-rendering the whole reply costs ~90 ms at 10,000+ tokens.
"""

from __future__ import annotations

import time

from PySide6.QtCore import QEvent, QMimeData, QTimer, QUrl, Signal
from PySide6.QtGui import QColor, QPaintEvent, QResizeEvent, QTextCursor
from PySide6.QtWidgets import QTextBrowser, QWidget

from desktop.client import ReplyEnd
from desktop.markdown_render import (
    MarkdownRenderer,
    cut_inside_paragraph,
    opens_with_a_list_table_or_quote,
    split_stable,
    split_within,
)
from desktop.widgets.message_actions import actions_line
from desktop.widgets.question_tint import paint_tints
from desktop.widgets.transcript_anchors import TranscriptAnchors
from desktop.widgets.transcript_colours import TranscriptColours
from desktop.widgets.transcript_document import TranscriptDocument
from desktop.widgets.transcript_ending import ReplyEnding
from desktop.widgets.transcript_history import StoredMessagesView
from desktop.widgets.transcript_long_paragraph import LongParagraphs
from desktop.widgets.transcript_parts import TEXT_GAP, ReplyPartsView
from desktop.widgets.transcript_question import LiveQuestion
from desktop.widgets.transcript_reply_state import GrowingReply
from desktop.widgets.transcript_viewport import TranscriptViewport
from desktop.widgets.update_pacing import (
    CATCH_UP_MS,
    COALESCE_MS,
    FLUSH_BUDGET_CHARS,
    next_budget,
)
from server.types import CitationPartJSON, MessageJSON, ToolPartJSON

HEADER_GAP = 18.0
PARAGRAPH_GAP = 12.0  # Qt's own margin between HTML paragraphs


class Transcript(
    ReplyEnding,
    StoredMessagesView,
    ReplyPartsView,
    TranscriptAnchors,
    TranscriptColours,
    TranscriptViewport,
    TranscriptDocument,
    LongParagraphs,
    LiveQuestion,
    GrowingReply,
    QTextBrowser,
):
    """Shows one conversation. Parent calls its methods; it emits what happened."""

    # Characters of the growing reply on screen, and the seconds that update took (benches).
    reply_rendered = Signal(int, float)
    reply_ended = Signal()  # the badge and figures are shown
    theme_changed = Signal()  # light <-> dark: what is shown needs rendering again
    link_clicked = Signal(QUrl)  # an http(s) link in a message (nothing else is followed)
    link_hovered = Signal(str)  # its target under the pointer ("" when it leaves)
    code_copied = Signal()  # a code block's Copy link put it on the clipboard
    step_clicked = Signal(dict)  # a tool step's "details" link: the step (ToolPartJSON)
    message_action = Signal(str, str)  # (edit | regenerate | continue | version, message id)
    # Messages before the ones loaded are wanted (the first loaded's id; True: all of them)
    earlier_wanted = Signal(str, bool)
    citation_clicked = Signal(dict)  # a cited source's link: its part (CitationPartJSON)
    prompt_chosen = Signal(str)  # an example prompt of the welcome page: send it
    panel_requested = Signal(str)  # the welcome page's settings | models | library | shortcuts

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setOpenLinks(False)
        self.setAccessibleName("Conversation")
        self.setReadOnly(True)
        self._keep_scroll_bar()
        self.anchorClicked.connect(self._on_anchor_clicked)
        self.highlighted.connect(self._on_highlighted)
        self._renderer = MarkdownRenderer(dark=self._palette_is_dark())
        self._steps_shown: dict[str, ToolPartJSON] = {}  # by id, for their details links
        self._citations_shown: dict[str, CitationPartJSON] = {}  # link number -> citation
        self._texts_shown: dict[str, str] = {}  # message id -> its text (Copy)
        self._messages: list[MessageJSON] = []  # the conversation shown (StoredMessagesView)
        self._first_drawn = 0
        self._unloaded = 0  # messages of the branch before `_messages`, not fetched yet
        self._welcome = ""  # the welcome page shown (a new chat with nothing yet)
        self._live_ids: tuple[str, str] | None = None  # the live turn's question and reply
        self._set_colours()
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(COALESCE_MS)
        self._timer.timeout.connect(self._flush)
        self._at_end = True
        self._scrolled_up = False
        self._budget = FLUSH_BUDGET_CHARS  # new text laid out per update (next_budget)
        self._init_live_question(QTimer(self))
        self.verticalScrollBar().actionTriggered.connect(self._on_scroll_action)
        self.verticalScrollBar().valueChanged.connect(self._on_scrolled)
        self.verticalScrollBar().rangeChanged.connect(self._on_scroll_range_changed)
        self._reset_reply()

    # -- theme ------------------------------------------------------------------------------

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:
            self._on_palette_changed()
        elif event.type() == QEvent.Type.FontChange:
            self._fit_pieces(rewrapped=True)  # zoom: the lines wrap anew

    # -- the reading column -------------------------------------------------------------------

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._fit_column()
        self._fit_pieces()

    def createMimeDataFromSelection(self) -> QMimeData:
        """A copy: a paragraph kept in pieces comes out whole (_copied_text)."""
        data = super().createMimeDataFromSelection()
        text = self._copied_text(self.textCursor())
        if text is None:
            return data
        copied = QMimeData()
        copied.setHtml(data.html())
        copied.setText(text)
        return copied

    def setHtml(self, text: str) -> None:
        self._drop_question()
        self._kept_width = None  # no paragraph in pieces any more
        super().setHtml(text)
        self._fit_column()

    def paintEvent(self, event: QPaintEvent) -> None:
        paint_tints(self, QColor(self._tint), self._line_width(), event.rect())
        super().paintEvent(event)

    def viewportEvent(self, event: QEvent) -> bool:
        return self._show_tooltip(event) or super().viewportEvent(event)

    # -- whole conversations ---------------------------------------------------------------

    def clear_conversation(self) -> None:
        self.show_conversation([])

    def show_all_to_find(self) -> None:
        """All of the chat where Find sees it: the earlier messages drawn too, and each
        paragraph kept in pieces one block again (Find does not match across blocks)."""
        self.show_everything()
        self._fit_pieces(rewrapped=True)

    # -- one streaming reply ---------------------------------------------------------------

    def begin_reply(
        self, user_text: str | None, model: str | None, ids: tuple[str, str] | None = None
    ) -> None:
        """Show the user's message (None: it is on screen already, a new version of its
        reply is coming) and an empty reply that will grow. `ids`: the question's and the
        reply's, for their actions (the question's at once, the reply's at its end)."""
        self._finish_question()  # the last turn's, if it is still being drawn
        if self._welcome:
            self.show_conversation([])  # a new chat's first message: its page goes
        self._unseal_reply()  # a reply still streaming here stays, its paragraphs whole
        self._abandon_reply()
        self._live_ids = ids
        self._follow_from_now()
        with self._one_edit():  # the question and the reply's header, laid out once
            if user_text is not None:
                # Inserted with its actions line, as when drawn whole; of a long question,
                # the first piece only: the rest follows a piece a frame (LiveQuestion).
                question = self._header("user", None) + self._question_start_html(user_text)
                if ids is not None:
                    self._texts_shown[ids[0]] = user_text
                    question += actions_line(ids[0], "user", muted=self._muted)
                self._append_html(question, top_margin=HEADER_GAP)
                self._question_started()
            self._append_html(self._header("assistant", model), top_margin=HEADER_GAP)
            self._live_start = self._open_block(TEXT_GAP)
        self._reply_start = self._live_start
        self._streaming = True
        self._live = True

    @property
    def showing_reply(self) -> bool:
        """A reply begun here is still on screen, waiting for its saved ending (it is not,
        once the whole conversation was shown again meanwhile)."""
        return self._live

    def add_text(self, text: str) -> None:
        if not self._streaming:
            return
        self._reply.append(text)
        last = self._parts[-1] if self._parts else None
        if isinstance(last, list):
            last.append(text)
        else:
            self._parts.append([text])
        if not self._timer.isActive():
            self._timer.start(COALESCE_MS)

    def end_reply(self, end: ReplyEnd | None, note: str = "") -> None:
        """The reply is over: show the rest, then its badge and figures.

        `end` is how the server saved it (read from the store, its content may hold a few
        characters the view never received); `note` is shown while that is not known yet.
        If a burst is still being laid out, the ending waits for it (update by update, never
        all at once).
        """
        if not self._live:
            self.reply_ended.emit()  # redrawn meanwhile: this view holds no reply to end
            return
        self._ending = (end, note)
        if self._streaming and self._shown_len < sum(map(len, self._reply)):
            if not self._timer.isActive():
                self._timer.start(0)
            return
        self._finish_reply()

    # -- rendering -------------------------------------------------------------------------

    def _flush(self) -> None:
        started = time.perf_counter()
        if self._keep_due:
            self._keep_due = False
            # Not once the reply ended, nor after a tool step drawn since (its line's place
            # would move): the paragraph is over, put back together with the reply's ending.
            if self._ending is None and self._group_start is None:
                self._keep_paragraph(started)
                return
        text = "".join(self._reply)
        if self._group_start is not None and len(text) <= self._frozen_len:
            # Nothing after the tool steps yet.
            if self._ending is not None:
                self._finish_reply()
            return
        budget = self._budget
        end = min(len(text), self._frozen_len + budget)
        with self._one_edit() as edit:  # laid out once per update, however many blocks
            self._draw_up_to(text, end, edit)
        took = time.perf_counter() - started
        self._budget = next_budget(budget, took, full=end < len(text))
        self._shown_len = end
        self.reply_rendered.emit(end, took)
        if end < len(text):
            # A burst bigger than one update's work: the rest after a short pause, so that
            # input and painting get in between, and two updates never share a frame.
            self._timer.start(CATCH_UP_MS)
        elif self._ending is not None:
            self._finish_reply()
        elif self._keep_due:
            self._timer.start(CATCH_UP_MS)
        self._keep_at_bottom()

    def _keep_paragraph(self, started: float) -> None:
        """A paragraph past JOIN_MAX_CHARS: its pieces so far kept as they are
        (LongParagraphs._keep_pieces), in an update of its own, the one after its cut: in the
        same one, the two cost 3.5-4.5 ms, the costliest updates of a long paragraph."""
        length = self._end()
        with self._one_edit() as edit:
            self._keep_pieces(edit)
        self._live_start -= length - self._end()  # the separators taken out, all before it
        self.reply_rendered.emit(self._shown_len, time.perf_counter() - started)
        if self._shown_len < sum(map(len, self._reply)):
            self._timer.start(CATCH_UP_MS)

    def _draw_up_to(self, text: str, end: int, edit: QTextCursor) -> None:
        """Draw the reply's text up to `end`: freeze what can no longer change, redraw the
        live tail. `edit`: the update's edit, open."""
        if self._group_start is not None:
            # Text after the steps: a new paragraph below them.
            self._group_start = None
            self._live_start = self._open_block(PARAGRAPH_GAP)
        if self._joiner is not None:
            self._live_start += self._seal_lines(self._live_start)
        pending = self._carry + text[self._frozen_len : end]
        stable, tail, carry = split_stable(pending)
        if len(stable) <= len(self._carry):
            # Nothing new can be frozen (at most the code block's fence line carried over).
            stable, tail, carry = "", pending, ""
            if end < len(text):
                # More waits than one update takes: cut all the same, where a code block
                # can go on (the reply's next text is the rest of `pending`).
                stable, tail, carry = split_within(pending, beyond=len(self._carry))
        # Text that begins with a carried fence line goes on with a code block cut above it:
        # drawn as its continuation (no header of its own), and the reply drawn whole at
        # its end, the block in one piece.
        continued = bool(self._carry)
        if stable:
            frozen = self._renderer.render(stable, continued=continued, cut=bool(carry))
            self._draw_live(frozen)
            self._frozen_len += len(stable) - len(self._carry)
            self._carry = carry
            continued = bool(carry)
            self._code_in_pieces = self._code_in_pieces or continued
            if not carry and cut_inside_paragraph(stable, frozen):
                # Cut inside a paragraph (a long one, or a burst bigger than the budget):
                # the rest goes on in the same block, so its lines wrap as in the paragraph
                # drawn whole. Past JOIN_MAX_CHARS, its pieces so far stay as they are.
                if not self._block_fits_more():
                    self._keep_due = True  # in the next update (_keep_paragraph)
                # A space where the cut took one (a line break reads as one in a paragraph),
                # unless the frozen part's HTML kept it.
                kept = frozen[: -len("</p>")][-1:].isspace()
                self._joiner = " " if stable[-1].isspace() and not kept else ""
                self._joined = True
                self._live_start = self._end()
            else:
                # A frozen part ends at a blank line: the next paragraph keeps the gap a
                # reopened conversation shows there (not inside a code block cut in two).
                # Its sealed lines one block again, once the next is open (all the reply's
                # at its end: ~40 ms).
                self._joiner = None
                if frozen.rstrip().endswith("</table>"):
                    # Qt knows a table's frame only once the edit that made it is over,
                    # and where the next block opens depends on it (_open_block).
                    edit.endEditBlock()
                    edit.beginEditBlock()
                self._live_start = self._open_block(0 if carry else PARAGRAPH_GAP)
                self._live_start -= self._unseal_unseen(edit)
            tail = carry + tail
        rendered = self._renderer.render(tail, continued=continued) if tail.strip() else ""
        self._draw_live(rendered)

    def _draw_live(self, html_text: str) -> None:
        """Draw `html_text` from the live start on, in place of what was there."""
        if self._joiner is not None:
            if not html_text or html_text.startswith("<p>"):
                self._replace_from(self._live_start, html_text, joiner=self._joiner)
                return
            # What follows the cut is no longer the paragraph (a list began): a block of
            # its own after all.
            self._replace_from(self._live_start, "")
            self._joiner = None
            self._live_start = self._open_block(PARAGRAPH_GAP)
        if opens_with_a_list_table_or_quote(html_text):
            # Kept whole: costs a layout of the block before, only while such a block is
            # the first of the live part.
            self._insert_whole(self._live_start - 1, html_text)
        else:
            self._replace_from(self._live_start, html_text)
