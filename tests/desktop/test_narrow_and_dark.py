"""The window at 645-700 px wide and in the dark theme (issue 43): the model's status stays
readable (the chat bar takes two lines), the chats' titles keep room, and in the dark an
unticked box and the bar's separator are drawn plain to see, not invisible or white."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtGui import QColor, QImage
from PySide6.QtWidgets import QApplication, QFrame, QLabel

from desktop.look.palette import palette as look_palette
from desktop.models.model_picker import READABLE_STATUS
from desktop.window.view import SIDEBAR_MIN_PX
from tests.desktop.conftest import GuiApp
from tests.support.upstream import Script, ScriptedUpstream

LONG_MODEL = "qwen2.5-coder-32b-instruct-q4_k_m-with-a-very-long-name"


@pytest.fixture
def long_named(
    qt_loop: Any, qtbot: Any, data_dir: Path, upstream: ScriptedUpstream
) -> Iterator[GuiApp]:
    args = ["--data-dir", str(data_dir), "--upstream", upstream.base_url,
            "--upstream-model", LONG_MODEL]  # fmt: skip
    gui = GuiApp(qtbot, args)
    yield gui
    gui.close()
    gui.window.deleteLater()


def shown_text(label: QLabel) -> str:
    return QLabel.text(label)  # what is drawn (an ElidedLabel's text() is the whole)


@pytest.mark.parametrize("width", [645, 660, 700])
def test_a_narrow_window_keeps_the_status_and_the_titles_readable(
    long_named: GuiApp, upstream: ScriptedUpstream, qtbot: Any, width: int
) -> None:
    gui = long_named
    upstream.script = Script(texts=["Paris."])
    for question in ("What is the capital of France?", "What makes basalt dark?"):
        with qtbot.waitSignal(gui.window.reply_finished, timeout=10_000):
            gui.send(question)
        gui.window.new_chat()
    qtbot.waitUntil(lambda: gui.window.sidebar.list.count() == 2, timeout=5_000)
    upstream.script = Script(tokens=100, stall_after=3)
    gui.send("What is a monad?")
    state = gui.window.model_picker.state
    qtbot.waitUntil(lambda: "replying" in state.text(), timeout=10_000)
    gui.window.resize(width, 560)
    bar = gui.window.chat_bar
    qtbot.waitUntil(lambda: bar.width() < 500)
    assert bar.two_lines  # the model and its status on a line of their own
    assert shown_text(state) == state.text()  # whole, not "ready · replying (1 …"
    assert state.width() >= state.fontMetrics().horizontalAdvance(READABLE_STATUS)
    combo = gui.window.model_picker.combo
    assert combo.width() < bar.width() // 2 and combo.toolTip() == LONG_MODEL
    rows = gui.window.sidebar.list
    assert rows.width() >= SIDEBAR_MIN_PX  # was 80 px: the chat bar's width took the rest
    titles = [rows.item(i).text() for i in range(rows.count())]
    assert "What makes basalt dark?" in titles
    item = rows.item(titles.index("What makes basalt dark?"))
    needed = rows.fontMetrics().horizontalAdvance("What makes")
    assert rows.visualItemRect(item).width() > needed  # not "What …"
    gui.window.stop_reply()
    gui.window.resize(1100, 720)
    qtbot.waitUntil(lambda: not bar.two_lines)


def lightness(image: QImage, x: int, y: int) -> int:
    return QColor(image.pixel(x, y)).lightness()


def test_in_the_dark_an_unticked_switch_and_the_separator_are_plain_to_see(
    gui: GuiApp, qtbot: Any
) -> None:
    window = gui.window
    window.resize(1100, 720)
    window.menus.themes["dark"].trigger()
    try:
        switch = window.documents_switch
        assert not switch.isChecked()
        qtbot.waitUntil(lambda: switch.palette().color(switch.backgroundRole()).lightness() < 80)
        # A chip: its outline and its words plain to see on the dark box, and ticked it
        # looks otherwise (the accent's colours).
        image = switch.grab().toImage()
        middle = image.height() // 2
        behind = QColor(look_palette(dark=True).surface).lightness()  # the composer's box
        outline = max(lightness(image, x, middle) for x in range(3))
        words = max(lightness(image, x, middle) for x in range(image.width()))
        assert outline - behind >= 30 and words - behind >= 80, (behind, outline, words)
        switch.setChecked(True)
        ticked = switch.grab().toImage()
        assert QColor(ticked.pixel(1, middle)) != QColor(image.pixel(1, middle))
        switch.setChecked(False)

        line = next(f for f in window.chat_bar.findChildren(QFrame)
                    if f.frameShape() == QFrame.Shape.VLine)  # fmt: skip
        drawn = line.grab().toImage()
        brightest = max(lightness(drawn, x, drawn.height() // 2) for x in range(drawn.width()))
        assert brightest < 140, brightest  # was 255: a white line in the dark
    finally:
        window.menus.themes["system"].trigger()
        QApplication.processEvents()
