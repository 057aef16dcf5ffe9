"""Every control of the window has a name a screen reader can say, and is reachable with
Tab; text follows the zoom."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QAccessible
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractItemView,
    QAbstractSpinBox,
    QApplication,
    QComboBox,
    QDialog,
    QHeaderView,
    QLineEdit,
    QPlainTextEdit,
    QTextEdit,
    QWidget,
)

from tests.desktop.conftest import GuiApp
from tests.support.upstream import Script, ScriptedUpstream

INTERACTIVE = (
    QAbstractButton, QAbstractItemView, QAbstractSpinBox, QComboBox, QLineEdit,
    QPlainTextEdit, QTextEdit,
)  # fmt: skip


def controls(root: QWidget) -> list[QWidget]:
    return [
        w
        for w in root.findChildren(QWidget)
        if isinstance(w, INTERACTIVE)
        and w.isVisibleTo(root)
        and w.window() is root
        # A combo box's or a spin box's own field, a table's headers: parts of a control
        # that has the name.
        and not isinstance(w.parent(), QComboBox | QAbstractSpinBox)
        and not isinstance(w, QHeaderView)
    ]


def spoken_name(widget: QWidget) -> str:
    interface = QAccessible.queryAccessibleInterface(widget)
    assert interface is not None
    return str(interface.text(QAccessible.Text.Name)).strip()


def test_every_control_has_an_accessible_name(gui: GuiApp) -> None:
    found = controls(gui.window)
    assert len(found) >= 12
    unnamed = [f"{type(w).__name__} {w.objectName()!r}" for w in found if not spoken_name(w)]
    assert not unnamed, "\n".join(unnamed)


def test_every_control_is_reached_with_tab(gui: GuiApp, qtbot: Any) -> None:
    window = gui.window
    window.activateWindow()
    window.composer.editor.setFocus()
    reached = []
    for _ in range(80):
        widget = window.focusWidget()
        assert widget is not None
        if widget not in reached:
            reached.append(widget)
        qtbot.keyClick(widget, Qt.Key.Key_Tab)  # as the user presses it
    missing = [
        f"{type(w).__name__} {spoken_name(w)!r}"
        for w in controls(window)
        if w.isEnabled() and (not w.focusPolicy() & Qt.FocusPolicy.TabFocus or w not in reached)
    ]
    assert not missing
    # From the message field, Tab goes to its Send button first.
    window.composer.editor.setFocus()
    qtbot.keyClick(window.composer.editor, Qt.Key.Key_Tab)
    assert window.focusWidget() is window.composer.button


def test_the_dialogs_controls_have_names_too(
    gui: GuiApp, upstream: ScriptedUpstream, qtbot: Any
) -> None:
    upstream.script = Script(tokens=2)
    with qtbot.waitSignal(gui.window.reply_finished, timeout=10_000):
        gui.send("Hello")  # a chat open: Chat settings can open
    menus = gui.window.menus
    gui.window.find_bar.open()
    unnamed = [f"find bar: {type(w).__name__}" for w in controls(gui.window) if not spoken_name(w)]
    for action in (menus.settings, menus.models, menus.tools, menus.library,
                   menus.chat_settings, menus.shortcuts, menus.about):  # fmt: skip
        before = set(visible_dialogs())
        action.trigger()
        qtbot.waitUntil(lambda b=before: bool(set(visible_dialogs()) - b), timeout=10_000)
        for dialog in set(visible_dialogs()) - before:
            qtbot.waitUntil(lambda: not gui.window.tasks, timeout=10_000)  # filled from
            QApplication.processEvents()  # the server's answer, and laid out
            unnamed += [
                f"{dialog.windowTitle()}: {type(w).__name__} {w.objectName()!r}"
                for w in controls(dialog)
                if not spoken_name(w)
            ]
            dialog.close()
    assert not unnamed, "\n".join(unnamed)


def visible_dialogs() -> list[QDialog]:
    return [w for w in QApplication.topLevelWidgets() if isinstance(w, QDialog) and w.isVisible()]
