"""The card that asks about a long call: "<tool> has been running for 2 min 5 s —
Keep waiting / Stop this call" (naming the sub-agent that called it, if one did). Shown above
the message field while a call of the chat on screen has run for its timeout; one call at a
time ("1 of 2" when more are asked about). The time it has run goes on counting while it
asks."""

from __future__ import annotations

import time

from PySide6.QtCore import QTimer, Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from desktop.replies.call_questions import overdue_question
from desktop.replies.card_focus import AnswerButton, holds_focus, take_focus
from desktop.transcript.step_lines import duration
from server.types.chunks import OverdueJSON

TICK_MS = 1000


# The card's keys, for the shortcuts window (F1).
CARD_KEYS = [
    ("A tool call runs long", "Keep waiting", "Alt+K"),
    ("A tool call runs long", "Stop this call", "Alt+S"),
]


class OverdueCard(QFrame):
    answered = Signal(str, str)  # call id, "wait" | "stop"
    # Done with the keyboard (answered, or hidden while it had the focus): card_focus.py.
    focus_released = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("overdue-card")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setAccessibleName("A tool call is taking long: keep waiting, or stop it?")
        self.title = QLabel(self)
        self.title.setWordWrap(True)
        self.hint = QLabel(
            "Stopping ends this call only: the model is told you stopped it, and the reply "
            "goes on.",
            self,
        )
        self.hint.setWordWrap(True)
        self.count = QLabel(self)
        self.keep_waiting = AnswerButton("&Keep waiting", self)  # Alt+K (F1: CARD_KEYS)
        self.stop_call = AnswerButton("&Stop this call", self)  # Alt+S
        self.keep_waiting.setToolTip("Let it run; you are asked again if it runs as long again")
        self.stop_call.setToolTip("Cancel the call at its server; the reply goes on without it")
        buttons = QHBoxLayout()
        buttons.addWidget(self.count, 1)
        buttons.addWidget(self.stop_call)
        buttons.addWidget(self.keep_waiting)
        column = QVBoxLayout(self)
        column.addWidget(self.title)
        column.addWidget(self.hint)
        column.addLayout(buttons)
        self._call: OverdueJSON | None = None
        self._asked_at = 0.0  # time.monotonic() when the question came
        self._tick = QTimer(self)
        self._tick.setInterval(TICK_MS)
        self._tick.timeout.connect(self._show_time)
        self.keep_waiting.clicked.connect(lambda: self._answer("wait"))
        self.stop_call.clicked.connect(lambda: self._answer("stop"))
        self.hide()

    @property
    def call(self) -> OverdueJSON | None:
        return self._call

    def show_call(self, call: OverdueJSON | None, waiting: int = 1, asked_at: float = 0.0) -> None:
        """Ask about `call` (None: nothing is asked, the card hides), which had run for its
        `waited_s` at `asked_at` (time.monotonic()); `waiting`: how many calls are asked."""
        self._call = call
        if call is None:
            self._tick.stop()
            held = holds_focus(self)
            self.hide()
            if held:
                self.focus_released.emit()
            return
        self._asked_at = asked_at or time.monotonic()
        self._show_time()
        self._tick.start()
        self.set_waiting(waiting)
        for button in (self.keep_waiting, self.stop_call):
            button.setEnabled(True)
        self.show()
        take_focus(self.keep_waiting)  # Enter or Space: the gentler answer (unless typing)

    def set_waiting(self, waiting: int) -> None:
        self.count.setText(f"1 of {waiting} asked" if waiting > 1 else "")

    def _show_time(self) -> None:
        call = self._call
        if call is None:
            return
        ran = duration(call["waited_s"] + time.monotonic() - self._asked_at)
        self.title.setText(overdue_question(call, ran))

    def _answer(self, action: str) -> None:
        if self._call is None:
            return
        for button in (self.keep_waiting, self.stop_call):
            button.setEnabled(False)  # one answer per question, while it is sent
        self.focus_released.emit()
        self.answered.emit(self._call["call_id"], action)
