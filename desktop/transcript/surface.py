"""The Qt Quick transcript as the window drives it: one chat shown, its pages from a long
history, a new chat's page, the reply that streams into it, its summaries' dividers, and what
a click on any of it asks of the window.

It keeps the calls and signals the window's controllers use (replies/controller.py,
window/main_window.py, chats/earlier_messages.py, context/summaries.py, replies/actions.py).
A streaming reply's parts are held by its owner (ReplyParts);
`reply_grew` asks for them to be drawn, at most once a frame."""

from __future__ import annotations

import time
from functools import partial

from PySide6.QtCore import QEvent, QTimer, QUrl, Signal
from PySide6.QtGui import QCursor, QGuiApplication
from PySide6.QtWidgets import QApplication, QMenu, QWidget

from desktop.client.events import ReplyEnd, ReplyParts, with_inner_steps
from desktop.look.palette import palette
from desktop.look.theme import is_dark
from desktop.transcript.rows import Row
from desktop.transcript.view import QuickTranscript
from desktop.transcript.welcome import PANELS, WelcomePage, example, welcome_text
from server.types import AttachmentJSON, CitationPartJSON, MessageJSON, SummaryJSON

COALESCE_MS = 16  # a streaming reply is drawn at most this often: once a frame
MENU_LABELS = (
    ("copy", "Copy message"),
    ("edit", "Edit message"),
    ("regenerate", "Regenerate reply"),
    ("continue", "Continue reply"),
)
TICK_MS = 1000  # a running step's time, said again
LIVE_QUESTION = "live-question"  # the ids of a turn's rows until the server gives theirs
LIVE_REPLY = "live-reply"


class TranscriptSurface(QuickTranscript):
    """Shows one conversation. Its parent calls its methods; it emits what happened."""

    # Characters of the growing reply on screen, and the seconds that update took (benches).
    reply_rendered = Signal(int, float)
    reply_ended = Signal()  # the ending is shown
    theme_changed = Signal()  # light <-> dark
    link_clicked = Signal(QUrl)  # an http(s) link in a message (nothing else is followed)
    link_hovered = Signal(str)
    code_copied = Signal()  # a code block's or a message's Copy put it on the clipboard
    step_clicked = Signal(object)
    message_action = Signal(str, str)  # (edit | regenerate | continue | version, message id)
    # Messages before the ones loaded are wanted (the first loaded's id; True: all of them)
    earlier_wanted = Signal(str, bool)
    citation_clicked = Signal(object)  # a source's chip: its part (CitationPartJSON)
    attachment_clicked = Signal(object)  # a question's file: its AttachmentJSON
    prompt_chosen = Signal(str)  # an example prompt of the welcome page: send it
    panel_requested = Signal(str)  # the welcome page's settings | models | library | shortcuts
    summary_action = Signal(str, object)  # a divider's view | edit | undo, its SummaryJSON
    textChanged = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(is_dark(QGuiApplication.palette()), parent)
        self.setAccessibleName("Conversation")
        self._summaries: dict[str, SummaryJSON] = {}
        self._unloaded = 0  # messages of the chat before the first one loaded
        self._asked_earlier = False
        self._reveal_after: tuple[str, str] | None = None  # a hit waiting for its page
        self._live: list[str] = []  # the rows begin_reply added (its question, its reply)
        self.found_words = ""  # the words Find or a search hit is on, as the message has them
        self._parts: ReplyParts | None = None
        self._steps_drawn: tuple[int, ...] = ()  # the steps as last drawn (each change is new)
        self._showing_reply = False
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(COALESCE_MS)
        self._timer.timeout.connect(self._draw_reply)
        # While a step of the reply runs, its time is said again each second.
        self._tick = QTimer(self)
        self._tick.setInterval(TICK_MS)
        self._tick.timeout.connect(self._draw_reply)
        self.link_activated.connect(self._on_link)
        self.action_triggered.connect(self._on_action)
        self.source_activated.connect(self._on_source)
        self.file_activated.connect(self._on_file)
        self.list.reachedTop.connect(self._on_reached_top)  # type: ignore[attr-defined]
        self.list.stepDetailsWanted.connect(self._on_step_details)  # type: ignore[attr-defined]
        self.list.linkHovered.connect(self._on_link_hovered)  # type: ignore[attr-defined]
        self.list.menuWanted.connect(self._on_menu_wanted)  # type: ignore[attr-defined]

    # -- colours ----------------------------------------------------------------------------

    @property
    def muted(self) -> str:
        """The colour of secondary text in the current theme."""
        return palette(self.renderer.dark).muted

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:
            self.follow_theme()

    def follow_theme(self) -> None:
        """Light or dark as the application's colours are (not its own: the window's style
        sheet sets those, and the window calls this when the theme changes)."""
        dark = is_dark(QApplication.palette())
        if dark != self.renderer.dark:
            self.set_dark(dark)
            self.rows.render_again()  # code colours are baked into the rendered text
            self.theme_changed.emit()

    # -- whole conversations ----------------------------------------------------------------

    def show_conversation(
        self,
        messages: list[MessageJSON],
        *,
        everything: bool = False,
        unloaded: int = 0,
        summaries: list[SummaryJSON] | None = None,
    ) -> None:
        """Show these messages, the newest in view; `unloaded`: how many of the chat come
        before them, asked for when the list is scrolled to its top; `summaries`: their
        dividers. (`everything` is kept for the window's calls: every loaded message is in
        the list, drawn as it scrolls into view.)"""
        del everything
        self._abandon_reply()
        self._summaries = {s["id"]: s for s in summaries or []}
        self._unloaded, self._asked_earlier, self._reveal_after = unloaded, False, None
        self.list.setProperty("welcome", "")
        self.rows.show(messages, self._summaries.values())
        self.follow()
        self.textChanged.emit()

    def clear_conversation(self) -> None:
        self.show_conversation([])

    def show_welcome(self, page: WelcomePage) -> None:
        """A new chat's page (desktop/transcript/welcome.py), until its first message."""
        if self.rows.rowCount() == 0 and not self._showing_reply:
            self.list.setProperty("welcome", page)

    @property
    def welcome_shown(self) -> bool:
        return bool(self.list.property("welcome")) and self.rows.rowCount() == 0

    @property
    def drawn_whole(self) -> bool:
        """Every message of the chat is in the list (none wait to be loaded)."""
        return self._unloaded == 0

    def show_everything(self) -> None:
        """Ask for all the messages not loaded yet (they are added when they come)."""
        first = self._first_message_id()
        if self._unloaded and first is not None:
            self._asked_earlier = True
            self.earlier_wanted.emit(first, True)

    def show_earlier(self) -> None:
        """Ask for the page of messages before the first one loaded."""
        first = self._first_message_id()
        if self._unloaded and first is not None and not self._asked_earlier:
            self._asked_earlier = True
            self.earlier_wanted.emit(first, False)

    def add_earlier(
        self, first_id: str, messages: list[MessageJSON], unloaded: int, everything: bool
    ) -> bool:
        """The messages before `first_id` have come: added above it, the view staying where
        it was. False if the chat shown has changed since."""
        if self._first_message_id() != first_id:
            return False
        self.rows.prepend(messages)
        for summary in self._summaries.values():
            self.rows.place_summary(summary)
        self._unloaded, self._asked_earlier = unloaded, False
        if not everything:
            self.list.positionViewAtIndex(len(messages), 1)  # type: ignore[attr-defined]
        if self._reveal_after is not None:
            query, message_id = self._reveal_after
            self._reveal_after = None
            self.reveal(query, message_id)
        return True

    def show_all_to_find(self) -> None:
        """Find reads every loaded message already; the rest are asked for."""
        self.show_everything()

    def reveal(self, query: str, message_id: str | None = None) -> bool:
        """Bring a message holding `query` into view, marked (the message `message_id`, a
        search hit, asked for first if it is among those not loaded)."""
        ids = self.rows.ids()
        if message_id is not None and message_id not in ids:
            if self._unloaded:
                self._reveal_after = (query, message_id)
                self.show_everything()
            return False
        words = [word for word in query.split() if word]
        at: int | None = None
        if message_id is not None:
            at = ids.index(message_id)
        else:
            for word in words:
                at = self.rows.find(word)
                if at is not None:
                    break
        if at is None:
            return False
        self.show_words(at, words)
        return True

    def show_words(self, at: int, words: list[str]) -> None:
        """Bring the message at `at` into view, marked, with the first of `words` it holds
        as the words found."""
        text = self.rows.text_at(at)
        folded = text.casefold()
        self.found_words = ""
        for word in words:
            start = folded.find(word.casefold())
            if start >= 0:
                self.found_words = text[start : start + len(word)]
                break
        self.show_found(at)

    def clear_found(self) -> None:
        self.found_words = ""
        self.rows.mark_found(None)

    def toHtml(self) -> str:
        """The markup of every message's blocks, in order (rendered now if not drawn)."""
        return "".join(
            block.html for row_id in self.rows.ids() for block in self.rows.blocks_of(row_id)
        )

    def toPlainText(self) -> str:
        """What the chat shows, as text: each message's words and how a reply ended."""
        lines = []
        for at, row_id in enumerate(self.rows.ids()):
            row = self.rows.row(row_id)
            if row is None:
                continue
            if row.role == "summary":
                lines.append(f"Earlier messages summarised · {row.header}")
                continue
            lines.extend(f"{f['name']} · {f['size']}" for f in row.files)
            lines.append(self.rows.text_at(at))
            lines.extend(f"[{s['n']}] {s['path']}{s['place']}" for s in row.sources)
            pieces = (row.note, row.badge, row.stats, row.acted, row.version)
            lines.extend(piece for piece in pieces if piece)
        if self.welcome_shown:
            lines.append(welcome_text(self.list.property("welcome")))
        return "\n".join(lines)

    # -- what may be done with the messages shown ------------------------------------------

    def last_actions(self) -> dict[str, str]:
        """The actions of the last message shown (action -> its id)."""
        ids = self.rows.ids()
        row = self.rows.row(ids[-1]) if ids else None
        if row is None:
            return {}
        return {action: row.id for action in row.actions(last=True)}

    def actions_of(self, row_id: str) -> list[str]:
        """What may be done with the message `row_id` now."""
        ids = self.rows.ids()
        row = self.rows.row(row_id)
        return row.actions(last=ids[-1] == row_id) if row is not None else []

    def menu_of(self, row_id: str) -> QMenu:
        """The context menu of the message `row_id` (a right-click on it): its actions, which
        do what its buttons do."""
        menu = QMenu(self)
        menu.setObjectName("message-menu")
        found = self.actions_of(row_id)
        for action, label in MENU_LABELS:
            if action in found:
                menu.addAction(label, partial(self._on_action, row_id, action))
        menu.aboutToHide.connect(menu.deleteLater)
        return menu

    def _on_menu_wanted(self, row_id: str) -> None:
        menu = self.menu_of(row_id)
        if not menu.isEmpty():
            menu.popup(QCursor.pos())  # never exec() under qasync

    def message_text(self, message_id: str) -> str | None:
        """The text of a message on screen (None: not shown here)."""
        ids = self.rows.ids()
        return self.rows.text_at(ids.index(message_id)) if message_id in ids else None

    def open_link(self, url: QUrl) -> None:
        """Do what a click on this link does."""
        self._on_link(url.toString())

    # -- summaries --------------------------------------------------------------------------

    def add_summary(self, summary: SummaryJSON) -> None:
        """A summary was made or edited: its divider under the message it ends at."""
        self._summaries = {k: s for k, s in self._summaries.items() if k != summary["id"]}
        self._summaries[summary["id"]] = summary
        self.rows.place_summary(summary)

    @property
    def summaries(self) -> list[SummaryJSON]:
        return list(self._summaries.values())

    def drop_summary(self, summary_id: str) -> None:
        """A summary was undone: its divider goes."""
        self._summaries.pop(summary_id, None)
        self.rows.remove([summary_id])

    def show_compaction(self, note: str) -> None:
        """Where the reply's text will come, while none has: what it waits on ("" takes the
        note away)."""
        came = self._parts is not None and bool(self._parts.items)
        if self._showing_reply and self._live and not (note and came):
            self.rows.set_note(self._live[-1], note)  # once something came, it says itself
            self.textChanged.emit()

    # -- one streaming reply ---------------------------------------------------------------

    def begin_reply(
        self,
        user_text: str | None,
        model: str | None,
        ids: tuple[str, str] | None = None,
        parts: ReplyParts | None = None,
        files: list[AttachmentJSON] | None = None,
    ) -> None:
        """Show the user's message (None: it is on screen already, a new version of its
        reply is coming) and the reply `parts` below it, growing (`reply_grew` as they do).
        `ids`: the question's and the reply's (None until its turn began)."""
        self._abandon_reply()
        self.list.setProperty("welcome", "")
        question_id, reply_id = ids if ids is not None else (LIVE_QUESTION, LIVE_REPLY)
        self.rows.remove([reply_id])  # a reply drawn again in place (a continuation)
        if user_text is not None:
            self.rows.remove([question_id])
            question = Row(id=question_id, role="user", text=user_text, attached=files or [])
            self.rows.append(question)
            self._live.append(question_id)
        self.rows.append(Row(id=reply_id, role="assistant", text="", header=model or "",
                             streaming=True))  # fmt: skip
        self._live.append(reply_id)
        self._parts, self._showing_reply = parts or ReplyParts(), True
        self.follow_soon()
        self._draw_reply()

    def name_turn(self, ids: tuple[str, str], model: str | None) -> bool:
        """The turn drawn by `begin_reply` before its ids were known takes them, in place
        (drawing it again would lay out a long question a second time). False when it is
        not on screen as begun."""
        if not self._showing_reply or not self._live or self._live[-1] != LIVE_REPLY:
            return False
        if LIVE_QUESTION in self._live:  # (a new version of a reply keeps its question)
            self.rows.rename(LIVE_QUESTION, ids[0])
        self.rows.rename(LIVE_REPLY, ids[1], header=model)
        live = {LIVE_QUESTION: ids[0], LIVE_REPLY: ids[1]}
        self._live = [live.get(row_id, row_id) for row_id in self._live]
        return True

    @property
    def showing_reply(self) -> bool:
        """A reply begun here is still on screen, waiting for its saved ending."""
        return self._showing_reply

    def reply_grew(self) -> None:
        """The reply's parts grew, or a step of it changed: text drawn within a frame, a step
        that began or changed at once (a call waiting for the user is said where it is)."""
        if not self._showing_reply or self._parts is None:
            return
        steps = tuple(id(step) for _, step in self._parts.steps())
        if steps != self._steps_drawn:
            self._timer.stop()
            self._draw_reply()
        elif not self._timer.isActive():
            self._timer.start()

    def end_reply(self, end: ReplyEnd | None, note: str = "") -> None:
        """The reply is over: the rest of it, then how it ended. `end` is how the server saved
        it (its content may hold a few characters the view never received); `note` is shown
        while that is not known yet."""
        if not self._showing_reply or not self._live:
            self.reply_ended.emit()
            return
        reply_id = self._live[-1]
        if end is None:
            self._draw_reply()
            self.rows.set_note(reply_id, note)
            return
        self._timer.stop()
        self._tick.stop()
        saved = end.parts if end.parts is not None else None
        if saved is not None:
            self.rows.grow(reply_id, saved)
        elif end.content is not None and self._parts is not None:
            shown = self._parts.text
            rest = end.content[len(shown) :] if end.content.startswith(shown) else ""
            self.rows.grow(reply_id, [*self._parts.items, rest] if rest else self._parts.items)
        else:
            self._draw_reply()
        self.rows.end(reply_id, end)
        self._showing_reply = False
        self.textChanged.emit()
        QTimer.singleShot(0, self.reply_ended.emit)  # once the view has the ending

    def _draw_reply(self) -> None:
        if not self._showing_reply or self._parts is None or not self._live:
            return
        began = time.perf_counter()
        self._steps_drawn = tuple(id(step) for _, step in self._parts.steps())
        self.rows.grow(self._live[-1], self._parts.items)
        self.reply_rendered.emit(self._parts.length, time.perf_counter() - began)
        self.textChanged.emit()
        running = self._parts.running_step() is not None
        if running and not self._tick.isActive():
            self._tick.start()
        elif not running:
            self._tick.stop()

    def _abandon_reply(self) -> None:
        """The view is about to show something else: a reply drawn here is dropped."""
        self._timer.stop()
        self._tick.stop()
        self.rows.remove(self._live)
        self._live, self._parts, self._showing_reply = [], None, False

    def _first_message_id(self) -> str | None:
        for row_id in self.rows.ids():
            row = self.rows.row(row_id)
            if row is not None and row.role != "summary":
                return row_id
        return None

    # -- what a click asks for --------------------------------------------------------------

    def _on_link(self, link: str) -> None:
        url = QUrl(link)
        scheme = url.scheme()
        if scheme in ("msg", "summary"):  # an action, as the window's own links name it
            action, _, row_id = url.path().partition("/")
            if row_id:
                self._on_action(row_id, action)
        elif scheme == "step":
            for row_id in reversed(self.rows.ids()):
                if self._emit_step(row_id, url.path()):
                    break
        elif scheme == "copy":
            code = self.renderer.code_blocks.get(url.path())
            if code is not None:
                QGuiApplication.clipboard().setText(code)
                self.code_copied.emit()
        elif scheme == "prompt" and example(url.path()) is not None:
            self.prompt_chosen.emit(example(url.path()))
        elif scheme == "open" and url.path() in PANELS:
            self.panel_requested.emit(url.path())
        elif scheme in ("http", "https") and url.host():
            self.link_clicked.emit(url)
        # Any other scheme (file:, javascript:, a relative path...) is not followed.

    def _on_action(self, row_id: str, action: str) -> None:
        if row_id in self._summaries:
            self.summary_action.emit(action, dict(self._summaries[row_id]))
        elif action == "copy":
            QGuiApplication.clipboard().setText(self.message_text(row_id) or "")
            self.code_copied.emit()
        else:
            self.message_action.emit(action, row_id)

    def _on_source(self, row_id: str, n: int) -> None:
        row = self.rows.row(row_id)
        found: CitationPartJSON | None = None
        for part in row.parts if row is not None else []:
            if not isinstance(part, str) and part["type"] == "citation" and part["n"] == n:
                found = part if found is None or part.get("cited", True) else found
        if found is not None:
            self.citation_clicked.emit(dict(found))

    def _on_file(self, row_id: str, file_id: str) -> None:
        row = self.rows.row(row_id)
        for attached in row.attached if row is not None else []:
            if attached["id"] == file_id:
                self.attachment_clicked.emit(dict(attached))

    def _on_step_details(self, row_id: str, step_id: str) -> None:
        self._emit_step(row_id, step_id)

    def _emit_step(self, row_id: str, step_id: str) -> bool:
        """step_clicked for that step of that reply (a sub-agent's too); False if none."""
        row = self.rows.row(row_id)
        for top in row.parts if row is not None else []:
            if isinstance(top, str) or top["type"] != "tool":
                continue
            for part in with_inner_steps(top):
                if part["id"] == step_id:
                    self.step_clicked.emit(dict(part))
                    return True
        return False

    def _on_link_hovered(self, link: str) -> None:
        url = QUrl(link)
        self.link_hovered.emit(link if url.scheme() in ("http", "https") else "")

    def _on_reached_top(self) -> None:
        self.show_earlier()
