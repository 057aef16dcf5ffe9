"""A message's actions under it (Copy, Edit, Regenerate, Continue, ‹ 2/3 ›): hidden on every
message but the newest until the pointer is on it or the keyboard is in it, then shown
without moving its text; Tab reaches them, and Enter or Space does what they say."""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtQuick import QQuickItem

from desktop.transcript.surface import TranscriptSurface
from tests.desktop.transcript.test_rows import message
from tests.desktop.transcript.test_view import items


@pytest.fixture
def surface(surface: TranscriptSurface, qtbot: Any) -> TranscriptSurface:
    surface.resize(900, 700)
    qtbot.mouseMove(surface, QPoint(2, 690))  # the pointer on no message
    surface.show_conversation(
        [message(1, content="What is a hash table?"),
         message(2, "assistant", content="It maps keys to values.", model="m",
                 siblings=["m2", "m8"], sibling_index=0),
         message(3, content="And a collision?"),
         message(4, "assistant", content="Two keys in one bucket.", model="m")]
    )  # fmt: skip
    qtbot.waitUntil(lambda: len(items(surface, "actions")) == 4)
    return surface


def bar_of(surface: TranscriptSurface, row_id: str) -> QQuickItem:
    (row,) = items(surface, f"message-{row_id}")
    (bar,) = [item for item in items(surface, "actions") if row.isAncestorOf(item)]
    return bar


def action(surface: TranscriptSurface, row_id: str, name: str) -> QQuickItem:
    (found,) = [
        b for b in items(surface, f"action-{name}") if bar_of(surface, row_id).isAncestorOf(b)
    ]
    return found


def shown(item: QQuickItem) -> bool:
    return bool(item.property("opacity") == 1)


def top(item: QQuickItem) -> float:
    return float(item.mapToScene(QPointF(0, 0)).y())


def point_on(item: QQuickItem) -> QPoint:
    at = item.mapToScene(QPointF(item.width() / 2, item.height() / 2))
    return QPoint(int(at.x()), int(at.y()))


def test_an_earlier_reply_s_actions_show_while_the_pointer_is_on_it_and_its_text_stays(
    surface: TranscriptSurface, qtbot: Any
) -> None:
    earlier = bar_of(surface, "m2")
    assert not shown(earlier) and not shown(bar_of(surface, "m1"))
    assert shown(bar_of(surface, "m4"))  # the newest message's stay shown
    (text,) = [b for b in items(surface, "block") if "maps keys" in b.getText(0, 99)]  # type: ignore[attr-defined]
    below = items(surface, "message-m3")[0]
    text_at, below_at = top(text), top(below)
    qtbot.mouseMove(surface, point_on(text))
    qtbot.waitUntil(lambda: shown(earlier))
    assert not shown(bar_of(surface, "m1"))  # only the message under the pointer
    assert [str(b.property("tip")) for b in (action(surface, "m2", "copy"),
            action(surface, "m2", "regenerate"))] == ["Copy", "Regenerate"]  # fmt: skip
    assert (top(text), top(below)) == (text_at, below_at)  # their line was kept for them
    regenerate = action(surface, "m2", "regenerate")
    qtbot.mouseMove(surface, point_on(regenerate))
    (tip,) = [t for t in items(surface, "tooltip") if regenerate.isAncestorOf(t)]

    def tip_shown() -> QQuickItem | None:
        popup = tip.property("item")
        return popup.property("contentItem") if popup and popup.property("opened") else None

    qtbot.waitUntil(lambda: tip_shown() is not None)  # after its delay
    label = tip_shown()
    assert label is not None and label.property("text") == "Regenerate"
    assert top(label) > top(regenerate) + regenerate.height()  # under it, not over the text
    (question,) = items(surface, "message-m1")
    (bubble,) = [b for b in items(surface, "bubble") if question.isAncestorOf(b)]
    qtbot.mouseMove(surface, point_on(bubble))  # onto the question
    qtbot.waitUntil(lambda: shown(bar_of(surface, "m1")) and not shown(earlier))


def test_tab_reaches_an_earlier_message_s_actions_which_show_while_the_keyboard_is_there(
    surface: TranscriptSurface, qtbot: Any
) -> None:
    copy = action(surface, "m2", "copy")
    surface.setFocus()
    for _ in range(12):
        if copy.hasActiveFocus():
            break
        qtbot.keyClick(surface, Qt.Key.Key_Tab)
    assert copy.hasActiveFocus() and shown(bar_of(surface, "m2"))
    assert copy.property("visualFocus")  # its focus ring
    with qtbot.waitSignal(surface.code_copied):
        qtbot.keyClick(surface, Qt.Key.Key_Return)
    assert QGuiApplication.clipboard().text() == "It maps keys to values."
    qtbot.keyClick(surface, Qt.Key.Key_Tab)
    assert action(surface, "m2", "regenerate").hasActiveFocus()
    with qtbot.waitSignal(surface.message_action) as acted:
        qtbot.keyClick(surface, Qt.Key.Key_Space)
    assert acted.args == ["regenerate", "m2"]
    qtbot.keyClick(surface, Qt.Key.Key_Tab)  # the version switcher: ‹ is disabled here
    assert items(surface, "nextVersion")[0].hasActiveFocus()
    with qtbot.waitSignal(surface.message_action) as acted:
        qtbot.keyClick(surface, Qt.Key.Key_Return)
    assert acted.args == ["version", "m8"]
    # On to the next message: this one's actions hide, that one's show.
    edit = action(surface, "m3", "edit")
    for _ in range(4):
        if edit.hasActiveFocus():
            break
        qtbot.keyClick(surface, Qt.Key.Key_Tab)
    assert edit.hasActiveFocus()
    qtbot.waitUntil(lambda: shown(bar_of(surface, "m3")) and not shown(bar_of(surface, "m2")))
    with qtbot.waitSignal(surface.message_action) as acted:
        qtbot.keyClick(surface, Qt.Key.Key_Return)
    assert acted.args == ["edit", "m3"]


def test_the_keyboard_on_a_message_s_source_shows_that_message_s_actions(
    qtbot: Any,
) -> None:
    surface = TranscriptSurface()
    qtbot.addWidget(surface)
    surface.resize(900, 700)
    surface.show()
    qtbot.mouseMove(surface, QPoint(2, 690))  # the pointer on no message
    cited = {"type": "citation", "n": 1, "path": "/docs/notes.md", "page": None,
             "lines": [3, 9], "quote": "The answer"}  # fmt: skip
    surface.show_conversation(
        [message(1, "assistant", content="It is 42 [1].",
                 parts=[{"type": "text", "text": "It is 42 [1]."}, cited]),
         message(2, content="Thanks")]
    )  # fmt: skip
    qtbot.waitUntil(lambda: len(items(surface, "source")) == 1)
    assert not shown(bar_of(surface, "m1"))
    items(surface, "source")[0].forceActiveFocus()
    qtbot.waitUntil(lambda: shown(bar_of(surface, "m1")))


def test_shift_tab_back_through_a_long_chat_keeps_what_it_is_on_in_view(qtbot: Any) -> None:
    surface = TranscriptSurface()
    qtbot.addWidget(surface)
    surface.resize(900, 500)
    surface.show()
    qtbot.mouseMove(surface, QPoint(2, 490))
    surface.show_conversation(
        [message(i, "user" if i % 2 else "assistant", content=f"Message {i}") for i in range(40)]
    )
    qtbot.waitUntil(lambda: bool(items(surface, "message-m39")))
    qtbot.waitUntil(lambda: any(top(b) + b.height() < 0 for b in items(surface, "action-copy")))
    action(surface, "m39", "copy").forceActiveFocus()
    window = surface.quickWindow()

    def on_screen() -> bool:
        item = window.activeFocusItem()
        return item is not None and top(item) >= 0 and top(item) + item.height() <= 500

    rows: set[str] = set()
    for _ in range(20):  # back up through the messages, as a user would
        qtbot.keyClick(surface, Qt.Key.Key_Backtab, Qt.KeyboardModifier.ShiftModifier)
        qtbot.waitUntil(on_screen)  # the list scrolled to it, drawn just above or not
        item = window.activeFocusItem()
        while item is not None and not item.objectName().startswith("message-"):
            item = item.parentItem()
        assert item is not None
        rows.add(item.objectName())
    assert len(rows) >= 8  # it went up through several messages, beyond the first screen
