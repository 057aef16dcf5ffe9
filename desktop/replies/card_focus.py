"""The keyboard and the cards that ask the user (an approval, a long call): a card takes the
focus when it asks, unless the user is typing; once it is done with it (answered, or gone
while it held the focus) it says so, and the window gives the focus to the message field.
Left alone, Qt hands the focus of a disabled or hidden button to the next widget in the
window's chain ("New chat"), where the next Space would open a new chat."""

from __future__ import annotations

from PySide6.QtCore import QEvent
from PySide6.QtGui import QShortcutEvent
from PySide6.QtWidgets import (
    QApplication,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QTextEdit,
    QWidget,
)


class AnswerButton(QPushButton):
    """A card's answer, whose Alt+letter answers at once. (Qt's own takes the focus to the
    button and clicks it 100 ms later: the keys typed meanwhile went to the button, a Space
    among them pressing it again, and none to the message field.)"""

    def event(self, event: QEvent) -> bool:
        if (
            event.type() == QEvent.Type.Shortcut
            and isinstance(event, QShortcutEvent)
            and not event.isAmbiguous()
        ):
            if self.isEnabled():
                self.click()
            return True
        return super().event(event)


def typing() -> bool:
    """The focus is in a text field holding the user's words (their words stay theirs)."""
    field = QApplication.focusWidget()
    if isinstance(field, QPlainTextEdit | QTextEdit):
        return not field.isReadOnly() and bool(field.toPlainText())
    return isinstance(field, QLineEdit) and bool(field.text())


def take_focus(button: QWidget) -> None:
    """Give `button` the focus, unless the user is typing."""
    if not typing():
        button.setFocus()


def holds_focus(card: QWidget) -> bool:
    focused = QApplication.focusWidget()
    return focused is not None and (focused is card or card.isAncestorOf(focused))
