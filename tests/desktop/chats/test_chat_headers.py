"""The sidebar's date headers: drawn above each group's first chat, newest group first, never
selected, focused or clicked; the keyboard goes from chat to chat; a search keeps its groups
and shows no empty one; a chat whose reply starts goes to Today."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QAccessible, QColor

from desktop.chats.conversation_list import ConversationList
from desktop.chats.conversation_rows import ID_ROLE
from desktop.look.palette import palette
from desktop.look.theme import is_dark
from server.types import ConversationJSON

NOW = datetime(2026, 11, 20, 9, 30)  # the computer's own zone, as the app's clock gives it


def ago(**delta: float) -> float:
    return (NOW - timedelta(**delta)).timestamp()


def listed(*specs: tuple[str, float] | tuple[str, float, str]) -> list[ConversationJSON]:
    """(id, last activity) or (id, last activity, snippet found) per chat, in the server's
    order; the title is the id."""
    made: list[dict[str, Any]] = []
    for spec in specs:
        chat: dict[str, Any] = {"id": spec[0], "title": spec[0], "updated_at": spec[1]}
        if len(spec) == 3:
            chat["match"] = {"message_id": f"m-{spec[0]}", "snippet": spec[2]}
        made.append(chat)
    return made  # type: ignore[return-value]  # only what the sidebar reads


WHOLE = listed(
    ("now", ago(minutes=5)),
    ("this morning", ago(hours=9)),
    ("last night", ago(hours=10)),
    ("monday", ago(days=4)),
    ("a fortnight", ago(days=14)),
    ("march", ago(days=250)),
    ("long ago", ago(days=800)),
)


def make(qtbot: Any) -> ConversationList:
    sidebar = ConversationList()
    sidebar.clock = lambda: NOW
    qtbot.addWidget(sidebar)
    sidebar.resize(280, 600)
    sidebar.show()
    qtbot.waitExposed(sidebar)
    return sidebar


def groups(sidebar: ConversationList) -> list[tuple[str, list[str]]]:
    """The headers shown, each with the chats under it."""
    view = sidebar.list
    shown: list[tuple[str, list[str]]] = []
    for row in range(view.count()):
        if view.header_at(row):
            shown.append((view.header_at(row), []))
        shown[-1][1].append(str(view.item(row).data(ID_ROLE)))
    return shown


def test_chats_are_drawn_in_date_groups_newest_first(qtbot: Any) -> None:
    sidebar = make(qtbot)
    sidebar.show_conversations(WHOLE, None)
    assert groups(sidebar) == [
        ("Today", ["now", "this morning"]),
        ("Yesterday", ["last night"]),
        ("Previous 7 days", ["monday"]),
        ("Previous 30 days", ["a fortnight"]),
        ("March 2026", ["march"]),
        ("2024", ["long ago"]),
    ]
    view = sidebar.list
    assert view.count() == len(WHOLE)  # a header is no row: every row is a chat
    # The header is drawn above its chat, in the theme's muted colour; the chat below it.
    first, second = view.item(0), view.item(1)
    header_band = view.visualItemRect(first).adjusted(0, 0, 0, -view.chat_rect(first).height())
    assert header_band.height() > 0
    assert view.chat_rect(first).height() == view.chat_rect(second).height()
    muted = QColor(palette(is_dark(view.palette())).muted)
    image = view.viewport().grab().toImage()
    inked = [
        QColor(image.pixelColor(x, y))
        for x in range(header_band.left(), header_band.right())
        for y in range(header_band.top(), header_band.bottom())
    ]
    assert any(_near(colour, muted) for colour in inked)


def _near(colour: QColor, wanted: QColor) -> bool:
    pairs = zip(colour.getRgb()[:3], wanted.getRgb()[:3], strict=True)
    return sum(abs(a - b) for a, b in pairs) < 40


def test_keys_go_from_chat_to_chat_over_the_headers(qtbot: Any) -> None:
    sidebar = make(qtbot)
    sidebar.show_conversations(WHOLE, "this morning")
    chosen: list[str] = []
    sidebar.conversation_selected.connect(chosen.append)
    view = sidebar.list
    view.setFocus()
    qtbot.keyClick(view, Qt.Key.Key_Down)  # over the "Yesterday" header
    assert chosen == ["last night"] and view.currentItem().isSelected()
    qtbot.keyClick(view, Qt.Key.Key_Up)
    qtbot.keyClick(view, Qt.Key.Key_Home)  # under the first header
    qtbot.keyClick(view, Qt.Key.Key_End)
    assert chosen == ["last night", "this morning", "now", "long ago"]
    activated: list[str] = []
    view.itemActivated.connect(lambda item: activated.append(item.data(ID_ROLE)))
    qtbot.keyClick(view, Qt.Key.Key_Return)
    assert activated == ["long ago"]


def test_a_click_on_a_header_chooses_nothing(qtbot: Any) -> None:
    sidebar = make(qtbot)
    sidebar.show_conversations(WHOLE, "now")
    chosen: list[str] = []
    sidebar.conversation_selected.connect(chosen.append)
    view = sidebar.list
    under = view.item(2)  # "last night", under "Yesterday"
    header = QPoint(view.chat_rect(under).center().x(), view.visualItemRect(under).top() + 2)
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=header)
    qtbot.mouseDClick(view.viewport(), Qt.MouseButton.LeftButton, pos=header)
    assert chosen == [] and view.currentItem().data(ID_ROLE) == "now"
    assert view.state() != view.State.EditingState
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=view.chat_rect(under).center())
    assert chosen == ["last night"]


def test_a_search_keeps_its_groups_and_shows_no_empty_one(qtbot: Any) -> None:
    sidebar = make(qtbot)
    sidebar.show_conversations(WHOLE, None)
    found = listed(
        ("march", ago(days=250), "the «word»"),  # the best match first
        ("now", ago(minutes=5), "a «word» too"),
        ("long ago", ago(days=800), "«word»"),
        ("this morning", ago(hours=9), "«word» again"),
    )
    sidebar.show_conversations(found, None)
    assert sidebar.searching()
    assert groups(sidebar) == [
        ("Today", ["now", "this morning"]),
        ("March 2026", ["march"]),
        ("2024", ["long ago"]),
    ]
    sidebar.show_conversations(WHOLE, None)
    assert [label for label, _ in groups(sidebar)][:2] == ["Today", "Yesterday"]


def test_a_chat_whose_reply_starts_goes_to_today(qtbot: Any) -> None:
    sidebar = make(qtbot)
    sidebar.show_conversations(WHOLE, None)
    assert sidebar.put_on_top([("long ago", "long ago")], "long ago")
    assert groups(sidebar)[0] == ("Today", ["long ago", "now", "this morning"])
    assert "2024" not in [label for label, _ in groups(sidebar)]  # empty now
    assert sidebar.list.currentItem().data(ID_ROLE) == "long ago"
    # The list the server gives next says the same.
    moved = [{**WHOLE[6], "updated_at": ago(seconds=1)}, *WHOLE[:6]]
    sidebar.show_conversations(moved, "long ago")  # type: ignore[arg-type]
    assert groups(sidebar)[0] == ("Today", ["long ago", "now", "this morning"])


def test_the_groups_are_drawn_again_for_a_new_day(qtbot: Any) -> None:
    sidebar = make(qtbot)
    sidebar.show_conversations(WHOLE, None)
    sidebar.clock = lambda: NOW + timedelta(days=1)
    sidebar.regroup()
    assert [label for label, _ in groups(sidebar)][:2] == ["Yesterday", "Previous 7 days"]
    assert groups(sidebar)[0] == ("Yesterday", ["now", "this morning"])


def test_a_screen_reader_hears_a_header_as_the_start_of_its_first_chat(qtbot: Any) -> None:
    QAccessible.setActive(True)
    try:
        sidebar = make(qtbot)
        sidebar.show_conversations(WHOLE, None)
        view = sidebar.list
        cells = QAccessible.queryAccessibleInterface(view)
        assert cells is not None
        names = [cells.child(row).text(QAccessible.Text.Name) for row in range(view.count())]
        assert names[:3] == ["Today: now", "this morning", "Yesterday: last night"]
        assert sidebar.put_on_top([("last night", "last night")], None)
        names = [cells.child(row).text(QAccessible.Text.Name) for row in range(view.count())]
        assert names[:4] == ["Today: last night", "now", "this morning", "Previous 7 days: monday"]
    finally:
        QAccessible.setActive(False)
