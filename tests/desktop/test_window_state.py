"""The window comes back as it was left: size, place, maximized, sidebar width and zoom,
and onto a screen when the place it was left at is on none."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from PySide6.QtCore import QRect
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QApplication, QWidget

from desktop.window.placement import on_screen
from desktop.window.state import WindowState, state_path


def test_size_place_sidebar_and_zoom_survive_a_restart(gui_factory: Any, qtbot: Any) -> None:
    first = gui_factory()
    window = first.window
    window.setGeometry(10, 10, 760, 540)  # within the offscreen screen (800 x 600)
    qtbot.waitUntil(lambda: window.splitter.width() >= 760, timeout=5_000)
    window.splitter.setSizes([125, window.splitter.width() - 125])
    first.close()
    assert json.loads(state_path().read_text())["sidebar_width"] == 125

    second = gui_factory()
    again = second.window
    assert (again.width(), again.height()) == (760, 540)
    # The place, give or take the frame (the offscreen platform's frame is not a real one).
    assert abs(again.x() - 10) <= 20 and abs(again.y() - 10) <= 20
    assert again.splitter.sizes()[0] == 125 and not again.sidebar.isHidden()
    # The zoom, and a hidden sidebar, too.
    again.view.zoom(+1)
    again.view.zoom(+1)
    again.view.set_sidebar_shown(False)
    second.close()
    third = gui_factory().window
    assert third.view.zoom_level == 2 and third.sidebar.isHidden()
    assert third.transcript.font().pointSizeF() > QApplication.font().pointSizeF() * 1.15


def test_a_window_left_on_a_screen_that_is_gone_comes_back_onto_one(
    gui_factory: Any, qtbot: Any
) -> None:
    elsewhere = QWidget()
    elsewhere.setGeometry(5000, 4000, 1100, 700)  # on a monitor since unplugged
    geometry = bytes(elsewhere.saveGeometry().toBase64().data()).decode()
    WindowState(geometry=geometry).save()
    window = gui_factory().window
    screen = QGuiApplication.primaryScreen().availableGeometry()
    assert screen.intersects(window.geometry())
    assert screen.contains(window.geometry().topLeft())


def test_a_maximized_window_is_maximized_again(gui_factory: Any, qtbot: Any) -> None:
    first = gui_factory()
    first.window.showMaximized()
    qtbot.waitUntil(first.window.isMaximized, timeout=5_000)
    first.close()
    assert json.loads(state_path().read_text())["maximized"] is True
    window = gui_factory().window
    qtbot.waitUntil(window.isMaximized, timeout=5_000)


def test_placing_on_screen() -> None:
    screens = [QRect(0, 0, 1920, 1080), QRect(1920, 0, 1280, 1024)]
    kept = QRect(2000, 100, 800, 600)  # on the second screen
    assert on_screen(kept, screens) == kept
    partly = QRect(-300, 10, 800, 600)  # its top still reachable
    assert on_screen(partly, screens) == partly
    gone = QRect(4000, 2000, 2500, 1400)  # a monitor unplugged; bigger than the first
    placed = on_screen(gone, screens)
    assert placed.size().width() == 1920 and placed.size().height() == 1080
    assert screens[0].contains(placed)
    above = QRect(100, -500, 800, 400)  # its title bar above every screen
    assert screens[0].contains(on_screen(above, screens).topLeft())


def test_an_unreadable_or_odd_state_restores_what_it_can(tmp_path: Path) -> None:
    path = tmp_path / "window.json"
    path.write_text('{"geometry": 5, "zoom": true, "sidebar_width": 300, "maximized": 1}')
    state = WindowState.load(path)
    assert (state.geometry, state.zoom, state.sidebar_width) == ("", 0, 300)
    assert state.maximized is False
    path.write_text("[1, 2")
    assert WindowState.load(path) == WindowState()
    assert os.environ["PARLEY_CONFIG_DIR"] in str(state_path())
