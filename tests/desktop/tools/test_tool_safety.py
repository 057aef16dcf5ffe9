"""The tools dialog's safety controls: the allows given on approval cards, listed per chat
with Revoke (a revoked one asks again); what a tool can do, as the user says, beside its
trust; the server's injection guard switch, whose turning off asks first and says what it
means. Each written through the server and read back from it.

The real window and embedded server, the tests' MCP server `t` over stdio trusted "ask"."""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox

from desktop.tools.tool_effect import EFFECTS
from tests.desktop.conftest import GuiApp, calls, danger, run
from tests.desktop.test_accessibility import controls, spoken_name
from tests.desktop.test_tool_trust import close, danger_info, open_dialog
from tests.support.tools import ToolLog
from tests.support.upstream import Script, ScriptedUpstream

pytestmark = pytest.mark.slow


def server_t(gui: GuiApp, qtbot: Any) -> dict[str, Any]:
    client = gui.window.client
    assert client is not None
    found: dict[str, Any] = run(qtbot, client.tools())["servers"][0]
    return found


def test_a_chats_grant_is_listed_and_once_revoked_its_tool_asks_again(
    asking_gui: GuiApp, upstream: ScriptedUpstream, tool_log: ToolLog, qtbot: Any
) -> None:
    gui, card = asking_gui, asking_gui.window.approval_card
    upstream.queue = [Script(tool_calls=[danger("one")]), Script(texts=["Done."])]
    gui.send("do it")
    qtbot.waitUntil(card.isVisible, timeout=15_000)
    with qtbot.waitSignal(gui.window.reply_finished, timeout=15_000):
        qtbot.mouseClick(card.allow_chat, Qt.MouseButton.LeftButton)

    dialog = open_dialog(gui, qtbot)
    grants = dialog.safety.grants
    qtbot.waitUntil(lambda: grants.rowCount() == 1, timeout=5_000)
    assert grants.item(0, 1).text() == "t · danger"
    revoke = dialog.safety.revoke_button(0)
    assert "Revoke: t · danger" in revoke.accessibleName()
    revoke.setFocus()
    qtbot.keyClick(revoke, Qt.Key.Key_Space)  # from the keyboard
    qtbot.waitUntil(lambda: grants.rowCount() == 0, timeout=5_000)
    assert "Revoked" in dialog.message.text()
    close(dialog)

    upstream.queue = [Script(tool_calls=[danger("two")]), Script(texts=["Ok."])]
    gui.send("again")
    qtbot.waitUntil(card.isVisible, timeout=15_000)  # asked again
    assert calls(tool_log) == ["one"]
    with qtbot.waitSignal(gui.window.reply_finished, timeout=15_000):
        card.deny.click()
    assert calls(tool_log) == ["one"]


def test_what_a_tool_can_do_is_chosen_beside_its_trust_and_saved(
    asking_gui: GuiApp, qtbot: Any
) -> None:
    gui = asking_gui
    dialog = open_dialog(gui, qtbot)
    box = dialog.tools_table.effect_box(0)
    tool = box.tool
    assert box.currentIndex() == 0 and box.currentText().startswith("As the server says")
    assert not [type(w).__name__ for w in controls(dialog) if not spoken_name(w)]

    def override() -> Any:
        server = server_t(gui, qtbot)
        return next(t for t in server["tools"] if t["name"] == tool)["effect_override"]

    box.setCurrentIndex(box.findText("Only reads, here"))  # as a pick from its list does
    qtbot.waitUntil(lambda: override() == EFFECTS[0][1], timeout=5_000)
    qtbot.waitUntil(lambda: "only reads, here" in dialog.message.text(), timeout=5_000)
    effect = next(t for t in server_t(gui, qtbot)["tools"] if t["name"] == tool)["effect"]
    assert effect == {"readOnly": True, "destructive": False, "openWorld": False}
    box.setCurrentIndex(box.findText("Reaches outside"))
    qtbot.waitUntil(lambda: override() == dict(EFFECTS)["Reaches outside"], timeout=5_000)
    box.setCurrentIndex(0)
    qtbot.waitUntil(lambda: override() is None, timeout=5_000)
    assert danger_info(gui, qtbot)["trust_override"] is None  # the trust is left as it was
    close(dialog)


def test_turning_the_guard_off_asks_first_and_says_what_it_means(
    asking_gui: GuiApp, qtbot: Any
) -> None:
    gui = asking_gui
    dialog = open_dialog(gui, qtbot)
    switch = dialog.safety.guard
    qtbot.waitUntil(switch.isEnabled, timeout=5_000)
    run(qtbot, gui.window.client.tool_settings.set_guard("t", True))  # type: ignore[union-attr]
    qtbot.waitUntil(switch.isChecked, timeout=5_000)

    switch.click()  # off: asked first
    confirm = dialog.safety.confirm
    assert confirm is not None and confirm.isVisible()
    assert "instructions" in confirm.text() and "no longer ask" in confirm.text()
    assert switch.isChecked()  # still on while it asks
    confirm.button(QMessageBox.StandardButton.Cancel).click()
    qtbot.waitUntil(lambda: dialog.safety.confirm is None, timeout=5_000)
    assert switch.isChecked() and server_t(gui, qtbot)["guard"] is True

    switch.click()
    confirm = dialog.safety.confirm
    assert confirm is not None
    turn_off = next(b for b in confirm.buttons() if b.text() == "Turn it off")
    turn_off.click()
    qtbot.waitUntil(lambda: server_t(gui, qtbot)["guard"] is False, timeout=5_000)
    assert not switch.isChecked()
    assert "guard is off for t" in dialog.message.text()

    switch.click()  # on again: at once
    qtbot.waitUntil(lambda: server_t(gui, qtbot)["guard"] is True, timeout=5_000)
    close(dialog)
