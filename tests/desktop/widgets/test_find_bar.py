"""Find in the open chat (Ctrl+F): what stays marked once a search finds nothing."""

from __future__ import annotations

from typing import Any

from desktop.widgets.find_bar import FindBar
from desktop.widgets.transcript import Transcript
from tests.desktop.widgets.transcript.test_history import chat


def test_no_match_leaves_nothing_marked_from_the_search_before(qtbot: Any) -> None:
    view = Transcript()
    qtbot.addWidget(view)
    view.resize(700, 500)
    view.show_conversation(chat(6))  # type: ignore[arg-type]
    bar = FindBar(view, None, view.show_all_to_find)
    qtbot.addWidget(bar)
    bar.open()
    bar.field.setText("zebra")
    assert bar.matches == 1
    assert view.textCursor().selectedText() == "zebra"
    assert len(view.extraSelections()) == 1

    bar.field.setText("zebrafish")
    assert bar.count.text() == "No matches"
    assert view.extraSelections() == []
    assert not view.textCursor().hasSelection()  # the old match is no longer marked


def test_a_search_hit_selected_before_find_is_cleared_when_nothing_matches(qtbot: Any) -> None:
    view = Transcript()
    qtbot.addWidget(view)
    view.show_conversation(chat(6))  # type: ignore[arg-type]
    assert view.reveal("zebra", "m3")
    assert view.textCursor().hasSelection()
    bar = FindBar(view, None, view.show_all_to_find)
    qtbot.addWidget(bar)
    bar.open()
    bar.field.setText("no such words")
    assert not view.textCursor().hasSelection()
