"""The card that asks the user to sign in to a remote MCP server a reply wanted to use (the
model called a tool of a server that needs a sign-in: the step says "Sign in to <server> to
use its tools"). Shown above the message field for the chat whose reply asked; it follows
the sign-in: Sign in (the browser opens the server's page) → "Waiting for the browser…" with
Cancel → signed in (its tools come with the next message) or why it failed, with Try again.

The sign-in is the server's, not the reply's: the reply has gone on (the model was told
why it could not use the tools) and usually ended before the user answers, so Stop has
nothing of it to end; Cancel does, and closing the window (the server's shutdown ends every
sign-in waiting for the browser)."""

from __future__ import annotations

import html
from typing import Literal

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from desktop.replies.card_focus import AnswerButton, holds_focus, take_focus

# The card's keys, for the shortcuts window (F1).
CARD_KEYS = [("A server needs a sign-in", "Sign in", "Alt+I")]

CardState = Literal["ask", "waiting", "signed_in", "failed"]


class SignInCard(QFrame):
    # The server's name, and what the user chose: "sign_in" | "cancel" | "dismiss".
    chosen = Signal(str, str)
    # Done with the keyboard (answered, or hidden while it had the focus): card_focus.py.
    focus_released = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("sign-in-card")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setAccessibleName("A tool server needs you to sign in")
        self.title = QLabel(self)
        self.title.setWordWrap(True)
        self.sign_in = AnswerButton("Sign &in", self)  # Alt+I (F1: CARD_KEYS)
        self.sign_in.setProperty("primary", True)
        self.sign_in.setToolTip("Open the server's sign-in page in your browser")
        self.cancel = QPushButton("Cancel", self)
        self.cancel.setToolTip("Stop waiting for the browser; its page no longer signs you in")
        self.dismiss = QPushButton("Not now", self)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        for button in (self.sign_in, self.cancel, self.dismiss):
            buttons.addWidget(button)
        column = QVBoxLayout(self)
        column.addWidget(self.title)
        column.addLayout(buttons)
        self.server: str | None = None
        self.state: CardState | None = None
        self._answered = False  # the user pressed one of its buttons: the focus stays here
        self.sign_in.clicked.connect(lambda: self._choose("sign_in"))
        self.cancel.clicked.connect(lambda: self._choose("cancel"))
        self.dismiss.clicked.connect(lambda: self._choose("dismiss"))
        self.hide()

    def show_sign_in(self, server: str | None, state: CardState = "ask", why: str = "") -> None:
        """Ask about `server` in `state` (None: nothing to ask, the card hides); `why`: a
        failure in the server's words."""
        if server is None:
            held = holds_focus(self) or self._answered  # a pressed button lost it already
            self.server, self.state, self._answered = None, None, False
            self.hide()
            if held:
                self.focus_released.emit()
            return
        again = self.server == server and self.state == state and self.isVisible()
        self.server, self.state = server, state
        name = f"<b>{html.escape(server)}</b>"
        self.title.setText(
            {
                "ask": f"The model wanted a tool of {name}, which needs you to sign in. "
                "Sign in opens its page in your browser.",
                "waiting": f"Waiting for the browser… Sign in to {name} there; this card "
                "changes when the browser comes back to Parley.",
                "signed_in": f"Signed in to {name}: its tools are offered from your next message.",
                "failed": f"Signing in to {name} failed: {html.escape(why)}",
            }[state]
        )
        self.sign_in.setVisible(state in ("ask", "failed"))
        self.cancel.setVisible(state == "waiting")
        self.dismiss.setText("Close" if state == "signed_in" else "Not now")
        self.dismiss.setVisible(state != "waiting")
        for button in (self.sign_in, self.cancel, self.dismiss):
            button.setEnabled(True)
        self.show()
        # Unlike an approval, nothing waits for this card: it does not take the focus from
        # the user's next message when it appears (Alt+I and Tab reach it); once they use it,
        # the focus follows its states.
        if self._answered and not again:
            self._answered = False
            first = {"ask": self.sign_in, "failed": self.sign_in, "waiting": self.cancel}
            take_focus(first.get(state, self.dismiss))

    def _choose(self, choice: str) -> None:
        if self.server is None:
            return
        self._answered = True
        for button in (self.sign_in, self.cancel, self.dismiss):
            button.setEnabled(False)  # one request at a time; its answer enables them
        self.chosen.emit(self.server, choice)
