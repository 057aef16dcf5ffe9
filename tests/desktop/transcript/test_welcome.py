"""A new chat's page: its examples and its places to set Parley up are cards (not links),
which Tab reaches in order and Enter or Space presses."""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtQuick import QQuickItem

from desktop.transcript.surface import TranscriptSurface
from desktop.transcript.welcome import EXAMPLES, welcome_page
from tests.desktop.transcript.test_view import items, text_of


@pytest.fixture
def surface(surface: TranscriptSurface, qtbot: Any) -> TranscriptSurface:
    surface.resize(900, 700)
    surface.show_welcome(welcome_page("smollm2", "ready"))
    qtbot.waitUntil(lambda: len(items(surface, "welcomeCard")) == 7)
    return surface


def card(surface: TranscriptSurface, title: str) -> QQuickItem:
    (found,) = [c for c in items(surface, "welcomeCard") if c.property("entry")["title"] == title]
    return found


def tab_to(surface: TranscriptSurface, qtbot: Any, item: QQuickItem) -> None:
    for _ in range(10):
        if item.hasActiveFocus():
            return
        qtbot.keyClick(surface, Qt.Key.Key_Tab)
    raise AssertionError(f"Tab did not reach {item.property('entry')}")


def test_the_welcome_page_is_cards_not_links(surface: TranscriptSurface) -> None:
    titles = [c.property("entry")["title"] for c in items(surface, "welcomeCard")]
    assert sorted(titles) == sorted([*EXAMPLES, "Settings", "Models", "Library",
                                     "Keyboard shortcuts"])  # fmt: skip
    assert "<a " not in str(surface.list.property("welcome"))  # no link in it anywhere
    (status,) = items(surface, "welcomeStatus")
    assert "smollm2" in surface.toPlainText() and status.isVisible()
    assert text_of(items(surface, "welcomeTitle")[0]) == "Parley"


def test_tab_reaches_an_example_and_enter_sends_it(surface: TranscriptSurface, qtbot: Any) -> None:
    surface.setFocus()
    first = card(surface, EXAMPLES[0])
    tab_to(surface, qtbot, first)
    assert first.property("visualFocus")  # its focus ring is drawn
    with qtbot.waitSignal(surface.prompt_chosen) as chosen:
        qtbot.keyClick(surface, Qt.Key.Key_Return)
    assert chosen.args == [EXAMPLES[0]]
    qtbot.keyClick(surface, Qt.Key.Key_Tab)
    assert card(surface, EXAMPLES[1]).hasActiveFocus()  # the next card, in reading order


def test_the_keyboard_opens_models_settings_library_and_the_shortcuts(
    surface: TranscriptSurface, qtbot: Any
) -> None:
    surface.setFocus()
    for title, panel in (("Settings", "settings"), ("Models", "models"),
                         ("Library", "library"), ("Keyboard shortcuts", "shortcuts")):  # fmt: skip
        tab_to(surface, qtbot, card(surface, title))
        with qtbot.waitSignal(surface.panel_requested) as asked:
            qtbot.keyClick(surface, Qt.Key.Key_Space)
        assert asked.args == [panel]


def test_the_page_goes_with_the_first_message(surface: TranscriptSurface, qtbot: Any) -> None:
    surface.begin_reply("Hello", "m")
    qtbot.waitUntil(lambda: items(surface, "welcomeCard") == [])
    assert not surface.welcome_shown
