"""The chat bar drawn as one header in the look: a rounded card in the theme's surface
colour, the model as a pill, icon buttons of one size with their names, reachable by Tab."""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QVBoxLayout, QWidget

from desktop.composer.chat_bar import BUTTON_SIDE, ChatBar
from desktop.look.palette import palette
from desktop.look.window_style import window_style

PAGES: list[QWidget] = []  # (kept alive for the test: qtbot only closes them)


def header(qtbot: Any, dark: bool) -> ChatBar:
    """The bar in a page of the theme's background, styled as the window styles it."""
    page = QWidget()
    page.setObjectName("page")
    qtbot.addWidget(page)
    PAGES[:] = [page]
    layout = QVBoxLayout(page)
    bar = ChatBar(page)
    layout.addWidget(bar)
    layout.addStretch(1)
    look = palette(dark)
    page.setStyleSheet(window_style(look) + f"QWidget#page {{ background: {look.background}; }}")
    bar.model_picker.combo.addItem("smollm2-135m-instruct")
    page.resize(980, 200)
    page.show()
    qtbot.waitExposed(page)
    return bar


@pytest.mark.parametrize("dark", [False, True])
def test_the_bar_is_one_rounded_header_in_the_theme_s_colours(qtbot: Any, dark: bool) -> None:
    bar = header(qtbot, dark)
    look = palette(dark)
    qtbot.waitUntil(lambda: bar.height() <= 48)  # one line: it was 60-72 px of blank
    image = bar.window().grab().toImage()  # (the page behind it, as the window shows it)
    x, y = bar.x(), bar.y()
    inside = QColor(image.pixel(x + bar.width() // 2, y + 3))
    assert inside.name() == look.surface  # its card, not the page behind it
    corner = QColor(image.pixel(x, y))
    assert corner.name() == look.background  # rounded: the page shows at its corner
    edge = QColor(image.pixel(x + bar.width() // 2, y))
    assert edge.name() == look.border  # its hairline
    combo = bar.model_picker.combo
    at = combo.mapTo(bar.window(), QPoint(combo.width() // 2, 3))  # (above its text)
    assert QColor(image.pixel(at)).name() == look.background  # the model: a pill on the card
    # Its chevron says it drops down: ink at its right end.
    right = combo.mapTo(bar.window(), QPoint(combo.width() - 24, 0))
    inked = {
        QColor(image.pixel(right.x() + dx, right.y() + dy)).name()
        for dx in range(4, 20)
        for dy in range(6, combo.height() - 6)
    }
    assert inked - {look.background}


def test_its_buttons_are_one_size_named_and_reached_by_tab(qtbot: Any) -> None:
    bar = header(qtbot, dark=False)
    buttons = [bar.chat_settings_button, bar.models_button, bar.tools_button,
               bar.library_button, bar.settings_button]  # fmt: skip
    assert {(b.width(), b.height()) for b in buttons} == {(BUTTON_SIDE, BUTTON_SIDE)}
    names = [b.accessibleName() for b in buttons]
    assert names == ["Chat settings", "Models", "MCP servers", "Library", "Settings"]
    assert all(b.toolTip().startswith(f"{b.accessibleName()}: ") for b in buttons)
    assert all(not b.icon().isNull() for b in buttons)
    bar.chat_settings_button.setEnabled(True)
    bar.model_picker.combo.setFocus()
    qtbot.waitUntil(bar.model_picker.combo.hasFocus)
    reached = []
    for _ in range(8):
        qtbot.keyClick(bar.window().focusWidget(), Qt.Key.Key_Tab)
        reached.append(bar.window().focusWidget())
    assert [b for b in buttons if b in reached] == buttons  # each, in the order shown
    with qtbot.waitSignal(bar.models_button.clicked):
        bar.models_button.setFocus()
        qtbot.keyClick(bar.models_button, Qt.Key.Key_Space)
