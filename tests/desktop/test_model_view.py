"""The context meter follows the chat on screen: opened, another chat shows no figure of the
one left ("…" until its own comes), and an answer about the chat left is dropped."""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtCore import Qt

from desktop.context.meter import PENDING_TEXT
from tests.desktop.conftest import GuiApp
from tests.support.upstream import Script, ScriptedUpstream

pytestmark = pytest.mark.slow


def say(gui: GuiApp, qtbot: Any, text: str) -> None:
    with qtbot.waitSignal(gui.window.reply_finished, timeout=20_000):
        gui.send(text)


def test_a_chat_opened_shows_no_figure_of_the_chat_left_until_its_own_comes(
    gui: GuiApp, upstream: ScriptedUpstream, qtbot: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    window = gui.window
    meter = window.model_view.meter
    upstream.queue = [Script(texts=["Short."])]
    say(gui, qtbot, "Hello")
    qtbot.waitUntil(lambda: "(2 messages)" in meter.toolTip(), timeout=5_000)
    first = window.current_id
    assert first is not None

    qtbot.keyClick(window, Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier)
    for index in range(2):
        upstream.queue = [Script(texts=[f"Reply {index}."])]
        say(gui, qtbot, f"Question {index}.")
    qtbot.waitUntil(lambda: "(4 messages)" in meter.toolTip(), timeout=5_000)
    assert meter.label.text().endswith(" tokens")

    # What the meter says as the first chat comes on screen, and every figure from then on.
    at_switch: list[str] = []
    shown_after: list[int] = []
    show_meter = meter.show_meter

    def spy(figure: Any) -> None:
        if at_switch:
            shown_after.append(figure["messages"])
        show_meter(figure)

    monkeypatch.setattr(meter, "show_meter", spy)
    window.conversation_opened.connect(lambda _id: at_switch.append(meter.label.text()))
    window.model_view.refresh()  # a measure of the second chat on its way, moot once it goes
    window.sidebar.conversation_selected.emit(first)
    qtbot.waitUntil(lambda: "(2 messages)" in meter.toolTip(), timeout=5_000)
    assert at_switch == [PENDING_TEXT]  # not the second chat's figure
    assert meter.label.text().endswith(" tokens")
    assert shown_after and set(shown_after) == {2}  # no answer about the second chat
