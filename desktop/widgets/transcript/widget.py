"""The conversation: one QTextBrowser document, drawn once and then grown incrementally.

The widget owns the pieces that each hold their own part of it: the colours (colours.py), the
edits of its document (document.py), its links (links.py), the messages as stored
(history.py), the live question (live_question.py) and the reply growing below it
(growing_reply.py), the paragraphs kept in pieces (long_paragraph.py), and where the view
sits (viewport.py). It draws what its parent asks for, and emits what happened.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable

from PySide6.QtCore import QEvent, QMimeData, QUrl, Signal
from PySide6.QtGui import QColor, QContextMenuEvent, QPaintEvent, QResizeEvent, QTextCursor
from PySide6.QtWidgets import QTextBrowser, QWidget

from desktop import style
from desktop.markdown_render import MarkdownRenderer
from desktop.reply_events import ReplyEnd, ReplyParts
from desktop.widgets.message_menu import message_menu
from desktop.widgets.transcript.actions import actions_at, actions_line, last_actions
from desktop.widgets.transcript.attachments import AttachmentImages, attachments_html
from desktop.widgets.transcript.colours import Colours
from desktop.widgets.transcript.document import Editor
from desktop.widgets.transcript.growing_reply import GrowingReply
from desktop.widgets.transcript.history import StoredMessages
from desktop.widgets.transcript.links import Links
from desktop.widgets.transcript.live_question import LiveQuestion
from desktop.widgets.transcript.long_paragraph import LongParagraphs
from desktop.widgets.transcript.message_html import HEADER_GAP, TEXT_GAP, header
from desktop.widgets.transcript.message_html import note as note_html
from desktop.widgets.transcript.parts import PartsHtml
from desktop.widgets.transcript.question_tint import paint_tints
from desktop.widgets.transcript.summaries import insert_marker, remove_marker
from desktop.widgets.transcript.viewport import Following, fit_column, show_tooltip
from server.types import AttachmentJSON, MessageJSON, SummaryJSON


class Transcript(QTextBrowser):
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
    summary_action = Signal(str, dict)  # a marker's view | edit | undo, its SummaryJSON

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setOpenLinks(False)
        self.setAccessibleName("Conversation")
        self.setReadOnly(True)
        self._following = Following(self)  # (first: the scroll bar is always there)
        self._colours = Colours(self.palette())
        self._renderer = MarkdownRenderer(dark=self._colours.dark)
        self._editor = Editor(self.document())
        self._links = Links(self._renderer, self)
        self._long = LongParagraphs(self._editor)
        parts = PartsHtml(self._renderer, self._colours, self._links)
        self._history = StoredMessages(self, self._renderer, self._colours, self._links, parts)
        self._question = LiveQuestion(self.document(), self)
        self.attachment_images = AttachmentImages(self)  # its messages' files' thumbnails
        self._growing = GrowingReply(
            self._editor,
            self._renderer,
            self._colours,
            self._links,
            parts,
            self._long,
            self._following,
            self,
        )
        self._welcome = ""  # the welcome page shown (a new chat with nothing yet)
        self.verticalScrollBar().setStyleSheet(style.scroll_bar_in(self.palette()))
        self.anchorClicked.connect(self._on_anchor_clicked)
        self.highlighted.connect(self._links.hovered)
        for mine, its in (
            (self.link_clicked, self._links.link_clicked),
            (self.link_hovered, self._links.link_hovered),
            (self.code_copied, self._links.code_copied),
            (self.step_clicked, self._links.step_clicked),
            (self.message_action, self._links.message_action),
            (self.citation_clicked, self._links.citation_clicked),
            (self.prompt_chosen, self._links.prompt_chosen),
            (self.panel_requested, self._links.panel_requested),
            (self.summary_action, self._links.summary_action),
            (self.reply_rendered, self._growing.rendered),
            (self.reply_ended, self._growing.ended),
        ):
            its.connect(mine)
        self._links.earlier_clicked.connect(self.show_earlier)
        self._question.piece_drawn.connect(self._on_question_piece_drawn)

    # -- Qt's events ------------------------------------------------------------------------

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:
            self._on_palette_changed()
        elif event.type() == QEvent.Type.FontChange:
            self._fit_pieces(rewrapped=True)  # zoom: the lines wrap anew

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        fit_column(self)
        self._fit_pieces()

    def createMimeDataFromSelection(self) -> QMimeData:
        """A copy: a paragraph kept in pieces comes out whole (LongParagraphs.copied_text)."""
        data = super().createMimeDataFromSelection()
        text = self._long.copied_text(self.textCursor())
        if text is None:
            return data
        copied = QMimeData()
        copied.setHtml(data.html())
        copied.setText(text)
        return copied

    def setHtml(self, text: str) -> None:
        self._question.drop()
        self._long.forget()
        super().setHtml(text)
        fit_column(self)

    def paintEvent(self, event: QPaintEvent) -> None:
        paint_tints(self, QColor(self._colours.tint), self._editor.line_width(), event.rect())
        super().paintEvent(event)

    def loadResource(self, kind: int, url: QUrl | str) -> object:  # a file's thumbnail (issue 43)
        images, url = self.attachment_images, QUrl(url)
        return images.load(url) if images.handles(url) else super().loadResource(kind, url)

    def viewportEvent(self, event: QEvent) -> bool:
        return show_tooltip(self, event) or super().viewportEvent(event)

    def contextMenuEvent(self, event: QContextMenuEvent) -> None:
        message_menu(self, event.pos()).popup(event.globalPos())  # never exec() under qasync

    # -- the colours ----------------------------------------------------------------------------

    @property
    def muted(self) -> str:
        """The colour of secondary text (figures, hints) in the current palette."""
        return self._colours.muted

    def _on_palette_changed(self) -> None:
        self._colours.read(self.palette())
        self.verticalScrollBar().setStyleSheet(style.scroll_bar_in(self.palette()))
        if self._colours.dark != self._renderer.dark:
            # Code colours and badges are baked into the document as inline styles.
            self._renderer.set_dark(self._colours.dark)
            self.theme_changed.emit()

    # -- links ------------------------------------------------------------------------------

    def open_link(self, url: QUrl) -> None:
        """Do what a click on this link does."""
        self._links.open(url)

    def _on_anchor_clicked(self, url: QUrl) -> None:
        self._links.open(url)

    def actions_at(self, position: int) -> dict[str, str]:
        """The actions of the message drawn at `position` (action -> message id)."""
        return actions_at(self.document(), position)

    def last_actions(self) -> dict[str, str]:
        """The actions of the last message drawn (action -> message id), e.g. whether its
        reply may be regenerated or continued."""
        return last_actions(self.document())

    def message_text(self, message_id: str) -> str | None:
        """The text of a message on screen (None: not shown here)."""
        return self._links.texts.get(message_id)

    # -- whole conversations ---------------------------------------------------------------

    def show_conversation(
        self,
        messages: list[MessageJSON],
        *,
        everything: bool = False,
        unloaded: int = 0,
        summaries: list[SummaryJSON] | None = None,
    ) -> None:
        """Draw these messages (the newest of a long chat, unless `everything`); `unloaded`:
        how many of the branch come before them, not loaded; `summaries`: their markers."""
        self._growing.abandon()
        self._welcome = ""
        self._links.clear()
        self.setHtml(self._history.html(messages, unloaded, everything, summaries))
        end = QTextCursor(self.document())
        end.movePosition(QTextCursor.MoveOperation.End)
        self.setTextCursor(end)
        self.ensureCursorVisible()
        self._following.follow_from_now()

    def clear_conversation(self) -> None:
        self.show_conversation([])

    def show_welcome(self, page: str) -> None:
        """A new chat's page (desktop/widgets/welcome.py), until its first message."""
        blank = self._welcome or self.document().isEmpty()
        if self._welcome != page and blank and not self._growing.reply.live:
            self.show_conversation([])
            self.setHtml(page)
            self._welcome = page

    @property
    def welcome_shown(self) -> bool:
        return bool(self._welcome)

    @property
    def drawn_whole(self) -> bool:
        """Every message of the chat is drawn (none wait behind "Show earlier")."""
        return self._history.drawn_whole

    def show_everything(self) -> None:
        """Draw the earlier messages too, above the ones drawn, which stay in view (those
        not loaded yet are asked for, and drawn when they come)."""
        self._draw_from(0)
        if self._history.unloaded and self._history.messages:
            self.earlier_wanted.emit(self._history.messages[0]["id"], True)

    def show_earlier(self) -> None:
        """Draw the page of messages before the first one drawn (the "Show earlier" link);
        when all those loaded are drawn, ask for the page before them."""
        wanted = self._history.earlier_wanted()
        if wanted is not None:
            self.earlier_wanted.emit(wanted, False)
            return
        self._draw_from(self._history.earlier_page())

    def add_earlier(
        self, first_id: str, messages: list[MessageJSON], unloaded: int, everything: bool
    ) -> bool:
        """The messages before `first_id` have come (`earlier_wanted`): draw their last page
        (all of them if `everything`). False if the chat shown has changed since."""
        if not self._history.add_earlier(first_id, messages, unloaded):
            return False
        self._draw_from(0 if everything else self._history.earlier_page())
        return True

    def show_all_to_find(self) -> None:
        """All of the chat where Find sees it: the earlier messages drawn too, and each
        paragraph kept in pieces one block again (Find does not match across blocks)."""
        self.show_everything()
        self._fit_pieces(rewrapped=True)

    def reveal(self, query: str, message_id: str | None = None) -> bool:
        """Select and scroll to the first place holding a word of `query` (a search hit): in
        the message `message_id` (searching back from its actions line), drawn if it was
        among the earlier messages."""
        if message_id is not None and not self._history.is_drawn(message_id):
            self.show_everything()
        found = self._history.find(query, message_id)
        if found is None:
            return False
        self.setTextCursor(found)
        self.ensureCursorVisible()
        return True

    def _draw_from(self, start: int) -> None:
        self._moved_down(self._history.draw_from(start))  # a reply streaming below

    # -- summaries (issue 42) -------------------------------------------------------------------

    def add_summary(self, summary: SummaryJSON) -> None:
        """A summary was made (or edited): its marker drawn after the message it ends at (when
        that is drawn; else with it, later), in place of the one it replaces."""
        self._history.summaries = {
            through: s for through, s in self._history.summaries.items() if s["id"] != summary["id"]
        }
        self._history.summaries[summary["through_id"]] = summary
        self._links.summaries[summary["id"]] = summary
        self._shift(*remove_marker(self.document(), summary["id"]), removed=True)
        self._shift(*insert_marker(self.document(), summary, self._colours.muted))

    @property
    def summaries(self) -> list[SummaryJSON]:
        """The summaries whose markers the chat shown has."""
        return list(self._history.summaries.values())

    def drop_summary(self, summary_id: str) -> None:
        """A summary was undone: its marker goes."""
        self._history.summaries = {
            through: s for through, s in self._history.summaries.items() if s["id"] != summary_id
        }
        self._links.summaries.pop(summary_id, None)
        self._shift(*remove_marker(self.document(), summary_id), removed=True)

    def show_compaction(self, note: str) -> None:
        """Where the reply's text will come, while none has: what compaction is doing
        ("" takes the note away)."""
        self._growing.show_note(note_html(self._colours, note) if note else "")

    def _shift(self, where: int, length: int, removed: bool = False) -> None:
        """`length` characters were inserted (`removed`: taken out) at `where`: what is kept
        of the positions below moves with them."""
        by = -length if removed else length
        if length:
            self._move(lambda position: position + by if position > where else position)

    # -- one streaming reply ---------------------------------------------------------------

    def begin_reply(
        self,
        user_text: str | None,
        model: str | None,
        ids: tuple[str, str] | None = None,
        parts: ReplyParts | None = None,
        files: list[AttachmentJSON] | None = None,  # the message's attachments (issue 43)
    ) -> None:
        """Show the user's message (None: it is on screen already, a new version of its
        reply is coming) and the reply `parts` below it, growing (its owner calls
        `reply_grew` as it does; None: an empty one). `ids`: the question's and the reply's,
        for their actions (the question's at once, the reply's at its end)."""
        self._question.finish()  # the last turn's, if it is still being drawn
        if self._welcome:
            self.show_conversation([])  # a new chat's first message: its page goes
        self._growing.unseal()  # a reply still streaming here stays, its paragraphs whole
        self._growing.abandon()
        self._following.follow_from_now()
        colours = self._colours
        with self._editor.one_edit():  # the question and the reply's header, laid out once
            if user_text is not None:
                # Inserted with its actions line, as when drawn whole; of a long question,
                # the first piece only: the rest follows a piece a frame (LiveQuestion).
                question = header(colours, "user", None) + attachments_html(files, colours.muted)
                question += self._question.start_html(user_text) if user_text or not files else ""
                if ids is not None:
                    self._links.texts[ids[0]] = user_text
                    question += actions_line(ids[0], "user", muted=colours.muted)
                self._editor.append_html(question, top_margin=HEADER_GAP)
                self._question.started()
            assistant = header(colours, "assistant", model)
            self._editor.append_html(assistant, top_margin=HEADER_GAP)
            live_start = self._editor.open_block(TEXT_GAP)
        self._growing.begin(ids, parts or ReplyParts(), live_start, model)

    @property
    def showing_reply(self) -> bool:
        """A reply begun here is still on screen, waiting for its saved ending (it is not,
        once the whole conversation was shown again meanwhile)."""
        return self._growing.reply.live

    def reply_grew(self) -> None:
        """The reply's parts (given to `begin_reply`) grew, or a step of it changed: draw
        what is new (text coalesced, a frame at a time)."""
        self._growing.grew()

    def end_reply(self, end: ReplyEnd | None, note: str = "") -> None:
        """The reply is over: show the rest, then its badge and figures.

        `end` is how the server saved it (read from the store, its content may hold a few
        characters the view never received); `note` is shown while that is not known yet.
        If a burst is still being laid out, the ending waits for it (update by update, never
        all at once).
        """
        self._growing.end(end, note)

    # -- positions in the document ------------------------------------------------------------

    def _fit_pieces(self, rewrapped: bool = False) -> None:
        """Paragraphs drawn in pieces one block again where the width of the lines changed,
        or wherever the lines wrap anew (`rewrapped`: another font): the pieces wrap as one
        paragraph only at the width and in the font they were cut in."""
        sealed = self._growing.sealed
        if sealed.seals and (rewrapped or sealed.outdated()):
            self._growing.unseal()
        if rewrapped or self._long.outdated():
            removed = self._long.join()  # where separators were taken out, ascending
            if removed:
                self._move(lambda position: position - bisect_left(removed, position))

    def _on_question_piece_drawn(self, length: int) -> None:
        self._growing.move(lambda position: position + length)  # the reply below it
        self._following.keep_at_bottom()

    def _moved_down(self, by: int) -> None:
        """What the positions kept point at moved `by` characters down (earlier messages
        were drawn above)."""
        if by:
            self._move(lambda position: position + by)

    def _move(self, move: Callable[[int], int]) -> None:
        self._question.move(move)
        self._growing.move(move)
