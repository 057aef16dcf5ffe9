"""The reply a transcript draws as it streams, grown incrementally.

A reply that streams is only ever appended to: what it brings is coalesced (16 ms) and drawn a
budget at a time (pacing.py); the part that can no longer change is rendered once and frozen,
and only the short live tail is re-rendered (live_text.py). So the cost of an update stays
flat as the reply grows, where re-rendering the whole reply costs ~90 ms at 10,000+ tokens.
Its tool steps are drawn as lines as they run: a step's first line at once (in its place
among the text), its changes (progress, a sub-agent's growing parts, sent every 100 ms) at
most every STEP_REDRAW_MS, and while one runs its time ticks each second; each of these redraws
only the lines of the steps at the reply's end, never the reply or the transcript. At its end
it is drawn whole where need be, with its footer (ending.py).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from PySide6.QtCore import QObject, QTimer, Signal

from desktop.markdown_render import MarkdownRenderer
from desktop.reply_events import ReplyEnd, ReplyParts
from desktop.widgets.transcript.colours import Colours
from desktop.widgets.transcript.document import Editor
from desktop.widgets.transcript.ending import ReplyEnding
from desktop.widgets.transcript.growing_paragraph import SealedLines
from desktop.widgets.transcript.links import Links
from desktop.widgets.transcript.live_reply import LiveReply
from desktop.widgets.transcript.live_text import LiveText
from desktop.widgets.transcript.long_paragraph import LongParagraphs
from desktop.widgets.transcript.message_html import TEXT_GAP
from desktop.widgets.transcript.pacing import (
    CATCH_UP_MS,
    COALESCE_MS,
    FLUSH_BUDGET_CHARS,
    next_budget,
)
from desktop.widgets.transcript.parts import PartsHtml
from desktop.widgets.transcript.viewport import Following
from server.types import ToolPartJSON

STEP_REDRAW_MS = 100  # the most often the steps' lines are drawn again as they change
TICK_MS = 1000  # a running step's time, drawn again


class GrowingReply(QObject):
    # Characters of the reply on screen, and the seconds that update took (benches).
    rendered = Signal(int, float)
    ended = Signal()  # its ending is drawn (or it was dropped before it)

    def __init__(
        self,
        editor: Editor,
        renderer: MarkdownRenderer,
        colours: Colours,
        links: Links,
        parts: PartsHtml,
        long: LongParagraphs,
        following: Following,
        parent: QObject,
    ) -> None:
        super().__init__(parent)
        self._editor = editor
        self._links = links
        self._following = following
        self._parts = parts
        self.sealed = SealedLines(editor)
        self._long = long
        self._text = LiveText(editor, renderer, self.sealed, long)
        self._ending = ReplyEnding(editor, renderer, colours, links, self._parts, self._text)
        self.reply = LiveReply()  # none yet
        self.budget = FLUSH_BUDGET_CHARS  # new text laid out per update (next_budget)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(COALESCE_MS)
        self._timer.timeout.connect(self._flush)
        self._steps_timer = QTimer(self)  # the steps' changes, coalesced
        self._steps_timer.setSingleShot(True)
        self._steps_timer.setInterval(STEP_REDRAW_MS)
        self._steps_timer.timeout.connect(self._redraw_steps)
        self._tick = QTimer(self)  # while a step runs
        self._tick.setInterval(TICK_MS)
        self._tick.timeout.connect(self._redraw_steps)

    def begin(
        self,
        ids: tuple[str, str] | None,
        parts: ReplyParts,
        live_start: int,
        model: str | None = None,
    ) -> None:
        """Draw the reply `parts` from `live_start` on (what it holds already at once);
        `model`: the one answering."""
        self.reply = LiveReply(
            parts=parts,
            ids=ids,
            model=model,
            reply_start=live_start,
            live_start=live_start,
            streaming=True,
            live=True,
        )
        self.grew()

    def grew(self) -> None:
        """Its parts grew, or a step of it changed: draw what is new."""
        reply = self.reply
        if not reply.streaming:
            return
        for at, step in reply.parts.steps():
            if at < reply.taken and step is not self._links.steps.get(step["id"]):
                # A step drawn before changed: its line drawn again soon, with any other
                # change by then (or, when text came after it, at once below that text).
                if reply.group_start is not None and step["id"] in reply.group:
                    self._links.steps[step["id"]] = step
                    if not self._steps_timer.isActive():
                        self._steps_timer.start()
                else:
                    self._draw_step(step)
        items = reply.parts.items
        text_came = False
        while reply.taken < len(items):
            item = items[reply.taken]
            reply.taken += 1
            if isinstance(item, str):
                reply.told += len(item)
                text_came = True
            elif item["type"] == "tool":
                self._draw_step(item)
            else:
                # Listed under the reply at its end; its "[n]" a link from now on.
                reply.sources[item["n"]] = self._links.cite(item)
        if text_came and not self._timer.isActive():
            self._timer.start(COALESCE_MS)

    def show_note(self, html_text: str) -> None:
        """A note where the reply's text will come, while none has (the first text, step or
        ending takes its place; "" takes it away)."""
        reply = self.reply
        if reply.streaming and reply.told == 0 and reply.group_start is None:
            self._editor.replace_from(reply.live_start, html_text)
            reply.noted = bool(html_text)

    def end(self, end: ReplyEnd | None, note: str) -> None:
        """The reply is over (see Transcript.end_reply)."""
        reply = self.reply
        if not reply.live:
            self.ended.emit()  # redrawn meanwhile: no reply here to end
            return
        reply.ending = (end, note)
        if reply.streaming and reply.shown_len < reply.told:
            if not self._timer.isActive():
                self._timer.start(0)
            return
        self._finish()

    def abandon(self) -> None:
        """The view is about to show something else: drop any reply in progress here."""
        self._timer.stop()
        self._stop_steps()
        abandoned = self.reply.ending is not None
        self.reply = LiveReply()
        self.sealed.forget()
        if abandoned:
            self.ended.emit()  # whoever waits for that ending must not wait forever

    def unseal(self) -> None:
        """Its paragraphs each one block again (a reply still streaming stays, whole)."""
        self._text.unseal(self.reply)

    def move(self, move: Callable[[int], int]) -> None:
        """What it keeps positions of in the document moved (by `move`)."""
        self.reply.move(move)
        self.sealed.move(move)

    def _draw_step(self, step: ToolPartJSON) -> None:
        """A tool step began or changed: its line, after all the text taken in so far."""
        reply = self.reply
        self._links.steps[step["id"]] = step
        if reply.group_start is None:
            self._timer.stop()
            self._text.draw_all(reply)
            reply.group_start = self._editor.open_block(TEXT_GAP)
            reply.group = []
        if step["id"] not in reply.group:
            reply.group.append(step["id"])
        self._redraw_steps()

    def _redraw_steps(self) -> None:
        """The lines of the steps at the reply's end, drawn again as they are now (a
        running one's time too); the clock ticks while one of them runs."""
        self._steps_timer.stop()
        reply = self.reply
        if reply.group_start is None or not reply.streaming:
            self._tick.stop()
            return
        steps = [self._links.steps[i] for i in reply.group]
        lines = "".join(self._parts.step(step, reply.model) for step in steps)
        self._editor.replace_from(reply.group_start, lines)
        self._following.keep_at_bottom()
        if not any(step["status"] == "running" for step in steps):
            self._tick.stop()
        elif not self._tick.isActive():
            self._tick.start()

    def _stop_steps(self) -> None:
        self._steps_timer.stop()
        self._tick.stop()

    def _flush(self) -> None:
        if self._steps_timer.isActive():
            self._redraw_steps()  # their last change, before text goes below them
        started = time.perf_counter()
        reply = self.reply
        if reply.keep_due:
            reply.keep_due = False
            # Not once the reply ended, nor after a tool step drawn since (its line's place
            # would move): the paragraph is over, put back together with the reply's ending.
            if reply.ending is None and reply.group_start is None:
                self._text.keep_paragraph(reply)
                self.rendered.emit(reply.shown_len, time.perf_counter() - started)
                if reply.shown_len < reply.told:
                    self._timer.start(CATCH_UP_MS)
                return
        text = reply.text()
        if reply.group_start is not None and len(text) <= reply.frozen_len:
            # Nothing after the tool steps yet.
            if reply.ending is not None:
                self._finish()
            return
        budget = self.budget
        end = min(len(text), reply.frozen_len + budget)
        with self._editor.one_edit() as edit:  # laid out once per update, however many blocks
            self._text.draw_up_to(reply, text, end, edit)
        took = time.perf_counter() - started
        self.budget = next_budget(budget, took, full=end < len(text))
        reply.shown_len = end
        self.rendered.emit(end, took)
        if end < len(text):
            # A burst bigger than one update's work: the rest after a short pause, so that
            # input and painting get in between, and two updates never share a frame.
            self._timer.start(CATCH_UP_MS)
        elif reply.ending is not None:
            self._finish()
        elif reply.keep_due:
            self._timer.start(CATCH_UP_MS)
        self._following.keep_at_bottom()

    def _finish(self) -> None:
        reply = self.reply
        if reply.ending is None:
            return
        end, note = reply.ending
        reply.ending = None
        reply.keep_due = False
        self._timer.stop()
        self._stop_steps()
        reply.streaming = False
        if reply.noted and reply.told == 0 and reply.group_start is None:
            self._editor.replace_from(reply.live_start, "")  # a compaction's note, no text
        # One edit: the document laid out once, not after each step (the last paragraph put
        # back together, the footer's block, its HTML): p50 2.6-4.8 ms -> 1.9-2.6 (issue 16).
        with self._editor.one_edit() as edit:
            self._ending.draw(reply, end, note, edit)
        self.ended.emit()
        self._following.keep_at_bottom()
