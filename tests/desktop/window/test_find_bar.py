"""Find in the open chat (Ctrl+F): what is marked as the search changes."""

from __future__ import annotations

from typing import Any

from desktop.transcript.surface import TranscriptSurface
from desktop.window.find_bar import FindBar
from tests.desktop.transcript.test_rows import message


def chat() -> list[Any]:
    words = ["a zebra", "no match here", "zebra and Zebra", "nothing", "the end", "ZEBRA"]
    return [message(i, content=text) for i, text in enumerate(words)]


def test_matches_are_counted_across_messages_and_stepped_through(qtbot: Any) -> None:
    view = TranscriptSurface()
    qtbot.addWidget(view)
    view.resize(700, 500)
    view.show_conversation(chat())
    bar = FindBar(view, None, view.show_all_to_find)
    qtbot.addWidget(bar)
    bar.open()
    bar.field.setText("zebra")
    assert bar.matches == 4 and bar.count.text() == "1 of 4"
    assert bar.current_match == (0, 2)
    bar.next()
    bar.next()
    assert bar.current_match == (2, 10) and bar.count.text() == "3 of 4"
    bar.previous()
    bar.previous()
    bar.previous()
    assert bar.current_match == (5, 0)  # wraps around


def test_no_match_leaves_nothing_marked_from_the_search_before(qtbot: Any) -> None:
    view = TranscriptSurface()
    qtbot.addWidget(view)
    view.show_conversation(chat())
    bar = FindBar(view, None, view.show_all_to_find)
    qtbot.addWidget(bar)
    bar.open()
    bar.field.setText("the end")
    assert bar.matches == 1
    assert view.rows.row("m4") is not None and view.rows.row("m4").found  # type: ignore[union-attr]
    bar.field.setText("the ending")
    assert bar.count.text() == "No matches"
    assert not any(view.rows.row(i).found for i in view.rows.ids())  # type: ignore[union-attr]
