"""The chat bar's "Use tools" beside a model that cannot call tools: unticked and disabled,
saying why, while the chat keeps its own setting and shows it again beside a model that
calls tools."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt

from server.models.bundled import BUNDLED_MODEL_NAME
from tests.desktop.conftest import GuiApp, run
from tests.support.parley import MODEL
from tests.support.upstream import Script, ScriptedUpstream


def pick(gui: GuiApp, qtbot: Any, name: str) -> None:
    """Choose a model in the picker as the user does, once the status lists it."""
    combo = gui.window.model_picker.combo
    qtbot.waitUntil(lambda: combo.findText(name) >= 0, timeout=10_000)  # refreshed every 1 s
    combo.setCurrentIndex(combo.findText(name))
    combo.activated.emit(combo.currentIndex())


def shows(gui: GuiApp, checked: bool, enabled: bool) -> bool:
    switch = gui.window.tools_switch
    return switch.isChecked() is checked and switch.isEnabled() is enabled


def test_use_tools_is_off_beside_a_model_that_cannot_call_tools_and_the_chat_keeps_it(
    gui: GuiApp, upstream: ScriptedUpstream, qtbot: Any
) -> None:
    client = gui.window.client
    assert client is not None
    switch = gui.window.tools_switch
    upstream.script = Script(texts=["hi"])
    with qtbot.waitSignal(gui.window.reply_finished, timeout=10_000):
        gui.send("hello")  # a chat on the upstream model, with tools
    cid = gui.window.current_id
    assert cid is not None and shows(gui, checked=True, enabled=True)

    pick(gui, qtbot, BUNDLED_MODEL_NAME)  # 'ready · cannot call tools' in the picker
    qtbot.waitUntil(lambda: shows(gui, checked=False, enabled=False), timeout=5_000)
    assert "cannot call tools" in switch.toolTip()
    assert BUNDLED_MODEL_NAME in switch.toolTip()
    qtbot.waitUntil(lambda: run(qtbot, client.conversation(cid))["model"] == BUNDLED_MODEL_NAME)
    assert run(qtbot, client.conversation(cid))["tools"] is True  # the chat's setting stays

    pick(gui, qtbot, MODEL)  # a model that calls tools: the chat's setting again
    qtbot.waitUntil(lambda: shows(gui, checked=True, enabled=True), timeout=5_000)
    assert "cannot" not in switch.toolTip()

    # A chat with tools off shows them off beside either model, usable beside the one that
    # calls them.
    switch.setChecked(False)
    qtbot.waitUntil(lambda: run(qtbot, client.conversation(cid))["tools"] is False)
    pick(gui, qtbot, BUNDLED_MODEL_NAME)
    qtbot.waitUntil(lambda: shows(gui, checked=False, enabled=False), timeout=5_000)
    pick(gui, qtbot, MODEL)
    qtbot.waitUntil(lambda: shows(gui, checked=False, enabled=True), timeout=5_000)


def test_a_new_chat_beside_a_model_that_cannot_call_tools_keeps_its_setting(
    gui: GuiApp, upstream: ScriptedUpstream, qtbot: Any
) -> None:
    qtbot.keyClick(gui.window, Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier)
    pick(gui, qtbot, BUNDLED_MODEL_NAME)  # on a new chat: for that chat only
    qtbot.waitUntil(lambda: shows(gui, checked=False, enabled=False), timeout=5_000)
    assert gui.window.bar.tools_wanted  # what a chat created now would take
    pick(gui, qtbot, MODEL)
    qtbot.waitUntil(lambda: shows(gui, checked=True, enabled=True), timeout=5_000)
    upstream.script = Script(texts=["hi"])
    with qtbot.waitSignal(gui.window.reply_finished, timeout=10_000):
        gui.send("hello")
    client = gui.window.client
    assert client is not None and gui.window.current_id is not None
    assert run(qtbot, client.conversation(gui.window.current_id))["tools"] is True
