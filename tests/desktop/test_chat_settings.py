"""Chat settings' longest reply: unticked, it is Settings' (what each message is sent with),
not a number of its own (issue 43)."""

from __future__ import annotations

from typing import Any

from desktop.chats.settings_dialog import SETTINGS_NO_LIMIT, ChatSettingsDialog
from desktop.settings.config import DEFAULT_MAX_TOKENS
from tests.desktop.conftest import GuiApp
from tests.support.upstream import Script, ScriptedUpstream


def open_chat_settings(gui: GuiApp, qtbot: Any) -> ChatSettingsDialog:
    button = gui.window.chat_bar.chat_settings_button
    qtbot.waitUntil(button.isEnabled, timeout=5_000)
    for old in gui.window.findChildren(ChatSettingsDialog):
        old.setObjectName("closed")
    button.click()
    qtbot.waitUntil(lambda: gui.window.findChild(ChatSettingsDialog, "chat-settings") is not None)
    dialog = gui.window.findChild(ChatSettingsDialog, "chat-settings")
    assert dialog is not None
    return dialog


def test_the_longest_reply_shown_unticked_is_the_one_sent(
    gui: GuiApp, upstream: ScriptedUpstream, qtbot: Any
) -> None:
    upstream.script = Script(texts=["Hi."])
    with qtbot.waitSignal(gui.window.reply_finished, timeout=10_000):
        gui.send("Hello")
    sent = upstream.records[-1].body["max_tokens"]
    assert sent == DEFAULT_MAX_TOKENS
    dialog = open_chat_settings(gui, qtbot)
    check, box = dialog.rows["max_tokens"]
    assert not check.isChecked() and not box.isEnabled()
    assert box.value() == sent  # 1024 before: a default of its own
    dialog.reject()

    gui.window.max_tokens = 3000  # Settings changed
    dialog = open_chat_settings(gui, qtbot)
    assert dialog.rows["max_tokens"][1].value() == 3000
    dialog.reject()

    gui.window.max_tokens = None  # Settings: no limit
    dialog = open_chat_settings(gui, qtbot)
    check, box = dialog.rows["max_tokens"]
    assert box.text() == SETTINGS_NO_LIMIT
    check.setChecked(True)  # the chat's own: a number to start from
    assert box.value() == DEFAULT_MAX_TOKENS and box.text() != SETTINGS_NO_LIMIT
    check.setChecked(False)
    assert box.text() == SETTINGS_NO_LIMIT
    assert dialog.body()["params"] == {  # type: ignore[comparison-overlap]
        "temperature": None, "top_p": None, "max_tokens": None, "seed": None
    }  # fmt: skip
    dialog.reject()
