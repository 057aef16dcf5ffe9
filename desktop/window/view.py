"""The window's view of itself: its layout (the sidebar beside the chat's column), its title
(the chat on screen, and whether a reply waits for the user), the focus ring of its fields,
and the View menu's choices: the sidebar shown or hidden, and the text's
zoom, in steps of 10 % from the system font's size; and moving to the next or previous
chat, or to the search, from the keyboard."""

from __future__ import annotations

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QApplication, QMainWindow, QSplitter, QVBoxLayout, QWidget

from desktop.chats.conversation_list import ConversationList
from desktop.composer.composer import Composer

ZOOM_STEP = 1.1  # each zoom step, as a factor of the text's size
ZOOM_MIN, ZOOM_MAX = -4, 8
SIDEBAR_MIN_PX = 120


def lay_out(
    window: QMainWindow, sidebar: QWidget, column: list[QWidget], stretched: QWidget
) -> QSplitter:
    """The window's central widget: the sidebar beside the widgets of `column`, top to
    bottom (`stretched` takes the height the others leave)."""
    right = QWidget(window)
    layout = QVBoxLayout(right)
    for widget in column:
        layout.addWidget(widget, 1 if widget is stretched else 0)
    # Titles stay readable in a narrow window (at 645 px they all read "What …", the list
    # squeezed to 80 px): the chat's column gives up width first (its bar goes to two
    # lines), then the list, down to this (also the least a restored width is given).
    sidebar.setMinimumWidth(SIDEBAR_MIN_PX)
    splitter = QSplitter(Qt.Orientation.Horizontal, window)
    splitter.addWidget(sidebar)
    splitter.addWidget(right)
    splitter.setSizes([280, 820])
    splitter.setCollapsible(1, False)
    # A bigger window widens the chat, not the list.
    splitter.setStretchFactor(0, 0)
    splitter.setStretchFactor(1, 1)
    window.setCentralWidget(splitter)
    return splitter


def window_title(title: str | None, waiting_here: bool, waiting_elsewhere: int) -> str:
    """The window's title: the chat on screen, "waiting for you" when its reply waits for
    the user's answer (a call to approve, a long call to keep or stop), and
    how many other chats wait, so a taskbar says it while the window is in the background."""
    parts = [title] if title else []
    if waiting_here:
        parts.append("waiting for you" if title else "Waiting for you")
    parts.append("Parley")
    said = " — ".join(parts)
    if waiting_elsewhere:
        others = "another chat is" if waiting_elsewhere == 1 else f"{waiting_elsewhere} chats are"
        said += f" ({others} waiting for you)"
    return said


class WindowView(QObject):
    zoom_chosen = Signal(int)  # the zoom level the user chose
    zoom_shown = Signal(int)  # the zoom level the text has now (chosen or restored)
    sidebar_shown = Signal(bool)

    def __init__(self, splitter: QSplitter, sidebar: ConversationList, composer: Composer) -> None:
        super().__init__(splitter)
        self._splitter = splitter  # its font is every text's in the window
        self._sidebar = sidebar
        self._composer = composer
        self.zoom_level = 0

    def set_sidebar_shown(self, shown: bool) -> None:
        self._sidebar.setVisible(shown)
        self.sidebar_shown.emit(shown)
        focus = QApplication.focusWidget()
        if not shown and focus is not None and self._sidebar.isAncestorOf(focus):
            self._composer.focus()

    def go_to_chat(self, step: int) -> None:
        """The next chat in the list (+1) or the previous (-1), the list shown for it."""
        self._show_sidebar()
        self._sidebar.select_neighbour(step)

    def focus_search(self) -> None:
        self._show_sidebar()
        self._sidebar.focus_search()

    def _show_sidebar(self) -> None:
        if self._sidebar.isHidden():
            self.set_sidebar_shown(True)

    def zoom(self, step: int) -> None:
        """Text a step larger (+1) or smaller (-1), or back to the system's size (0)."""
        level = 0 if step == 0 else self.zoom_level + step
        self.set_zoom(level)
        self.zoom_chosen.emit(self.zoom_level)

    def set_zoom(self, level: int) -> None:
        """The size of all text in the window, `level` steps from the system font's."""
        self.zoom_level = max(ZOOM_MIN, min(ZOOM_MAX, level))
        base = QApplication.font().pointSizeF()
        font = QFont(self._splitter.font())
        font.setPointSizeF(round(base * ZOOM_STEP**self.zoom_level, 1))
        self._splitter.setFont(font)
        self.zoom_shown.emit(self.zoom_level)

    @staticmethod
    def can_zoom(level: int) -> tuple[bool, bool]:
        """Whether text at `level` can be made larger, and smaller."""
        return level < ZOOM_MAX, level > ZOOM_MIN
