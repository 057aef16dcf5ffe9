"""Putting the window back where it was: its size and place (or maximized) from the window
state, moved onto a screen when the one it was on is gone (a monitor unplugged, a resolution
changed), and its sidebar and zoom; and reading them back at quit."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QByteArray, QRect
from PySide6.QtGui import QGuiApplication

from desktop.window.state import WindowState
from desktop.window.view import SIDEBAR_MIN_PX

if TYPE_CHECKING:
    from desktop.window.main_window import MainWindow

# How much of the window's title bar must be on a screen for the user to grab it.
GRIP_WIDTH, GRIP_HEIGHT = 120, 40
MIN_SIDEBAR = SIDEBAR_MIN_PX


def on_screen(frame: QRect, screens: list[QRect]) -> QRect:
    """`frame`, or, when no screen shows enough of its title bar to grab it, the same size
    (shrunk to fit) centred on the first screen."""
    title_bar = QRect(frame.x(), frame.y(), frame.width(), GRIP_HEIGHT)
    for screen in screens:
        shown = screen.intersected(title_bar)
        if shown.width() >= min(GRIP_WIDTH, frame.width()) and shown.height() >= GRIP_HEIGHT // 2:
            return frame
    if not screens:
        return frame
    screen = screens[0]
    placed = QRect(0, 0, min(frame.width(), screen.width()), min(frame.height(), screen.height()))
    placed.moveCenter(screen.center())
    return placed


def restore(window: MainWindow, state: WindowState) -> None:
    """Apply the saved state before the window is shown (the sidebar's width once it is
    shown: by the caller). Qt keeps a restored frame on a screen; a frame whose top is on
    none is moved onto the first."""
    if state.geometry:
        saved = QByteArray.fromBase64(state.geometry.encode("ascii"))
        if window.restoreGeometry(saved):
            screens = [s.availableGeometry() for s in QGuiApplication.screens()]
            frame = window.frameGeometry()
            placed = on_screen(frame, screens)
            if placed != frame:
                window.move(placed.topLeft())
    window.view.set_sidebar_shown(state.sidebar_shown)
    window.view.set_zoom(state.zoom)


def restore_sidebar_width(window: MainWindow, state: WindowState) -> None:
    """Once the window is shown (a splitter not laid out yet rescales the sizes it is given)."""
    total = window.splitter.width()
    sidebar = max(state.sidebar_width, MIN_SIDEBAR)
    window.splitter.setSizes([sidebar, max(total - sidebar, 1)])


def capture(window: MainWindow, state: WindowState) -> None:
    """Read the window's size, place and view choices into `state`."""
    state.geometry = bytes(window.saveGeometry().toBase64().data()).decode("ascii")
    state.maximized = window.isMaximized()
    state.sidebar_shown = not window.sidebar.isHidden()
    if state.sidebar_shown and window.splitter.sizes()[0] > 0:
        state.sidebar_width = window.splitter.sizes()[0]
    state.zoom = window.view.zoom_level
