"""The transcript's context menu: the text field's own entries (Copy, Select All) and the
actions of the message under the pointer, which do what its links do."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from PySide6.QtCore import QPoint, QUrl
from PySide6.QtGui import QTextCursor
from PySide6.QtWidgets import QMenu

LABELS = (
    ("copy", "Copy message"),
    ("edit", "Edit message"),
    ("regenerate", "Regenerate reply"),
    ("continue", "Continue reply"),
)


class MessageView(Protocol):
    """What the menu needs of the view it is for (the transcript)."""

    def createStandardContextMenu(self, position: QPoint) -> QMenu: ...

    def cursorForPosition(self, pos: QPoint) -> QTextCursor: ...

    def actions_at(self, position: int) -> dict[str, str]: ...

    def open_link(self, url: QUrl) -> None: ...


def message_menu(view: MessageView, at: QPoint) -> QMenu:
    """The menu for a right-click at `at` (viewport coordinates)."""
    menu = view.createStandardContextMenu(at)
    menu.setObjectName("message-menu")
    found = view.actions_at(view.cursorForPosition(at).position())
    if found:
        menu.addSeparator()
        for action, label in LABELS:
            if action in found:
                menu.addAction(label, _opener(view, QUrl(f"msg:{action}/{found[action]}")))
    menu.aboutToHide.connect(menu.deleteLater)
    return menu


def _opener(view: MessageView, url: QUrl) -> Callable[[], None]:
    return lambda: view.open_link(url)
