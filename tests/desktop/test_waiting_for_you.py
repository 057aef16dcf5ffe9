"""A chat whose reply waits for the user (issue 43 item 4): a tool call to approve, or a long
call to keep waiting for or stop, gives its row its own badge (not the "replying" dot) and
puts "waiting for you" in the window's title, also while another chat is on screen; both go
once the user answers, or the reply is stopped."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QAccessible, QColor
from PySide6.QtWidgets import QApplication, QStyle, QStyleOptionViewItem

from desktop.chats.conversation_list import ConversationList
from desktop.chats.rows import BUSY_TIP, WAITING_FILL, WAITING_TIP
from tests.desktop.conftest import GuiApp, danger, run
from tests.support.tools import ToolLog, tool_server, write_config
from tests.support.upstream import Script, ScriptedUpstream

AMBER = WAITING_FILL.name()


def colour_at(sidebar: ConversationList, point: QPoint) -> str:
    return QColor(sidebar.list.viewport().grab().toImage().pixelColor(point)).name()


def badge_shown(sidebar: ConversationList, conversation_id: str) -> bool:
    """The row's dot and its words' pill are amber."""
    view = sidebar.list
    item = view.rows.item(conversation_id)
    assert item is not None
    pill, words = view.badge(item)
    if not words:
        return False
    dot = view.dot_rect(item).center()
    inside_pill = QPoint(pill.left() + pill.height() // 3, pill.center().y())  # before the words
    return colour_at(sidebar, dot) == AMBER and colour_at(sidebar, inside_pill) == AMBER


def open_chat(gui: GuiApp, qtbot: Any, conversation_id: str) -> None:
    view = gui.window.sidebar.list
    view.setCurrentItem(view.rows.item(conversation_id))
    qtbot.waitUntil(lambda: gui.window.current_id == conversation_id, timeout=5_000)


@pytest.mark.slow
def test_a_chat_awaiting_approval_says_waiting_for_you_in_its_row_and_the_title(
    asking_gui: GuiApp, upstream: ScriptedUpstream, qtbot: Any
) -> None:
    gui = asking_gui
    window, sidebar, card = gui.window, gui.window.sidebar, gui.window.approval_card
    upstream.queue = [Script(texts=["Hello."])]
    with qtbot.waitSignal(window.reply_finished, timeout=15_000):
        gui.send("A quiet chat")
    quiet = window.current_id
    assert quiet is not None

    qtbot.keyClick(window, Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier)
    upstream.queue = [Script(tool_calls=[danger("the shed")]), Script(texts=["Tidied."])]
    gui.send("Tidy the shed")
    qtbot.waitUntil(card.isVisible, timeout=15_000)
    shed = window.current_id
    assert shed is not None
    qtbot.waitUntil(lambda: sidebar.waiting_shown() == {shed}, timeout=5_000)
    qtbot.waitUntil(lambda: window.windowTitle() == "Tidy the shed — waiting for you — Parley")
    qtbot.waitUntil(lambda: badge_shown(sidebar, shed), timeout=5_000)
    assert sidebar.list.tip(shed) == WAITING_TIP  # its tooltip and description, not "Replying…"

    # Another chat on screen: the waiting one's row still says so, and the title tells of it.
    open_chat(gui, qtbot, quiet)
    assert not card.isVisible()
    assert sidebar.waiting_shown() == {shed}
    assert window.windowTitle() == "A quiet chat — Parley (another chat is waiting for you)"
    qtbot.waitUntil(lambda: badge_shown(sidebar, shed), timeout=5_000)
    assert not badge_shown(sidebar, quiet)

    # Answered: the badge and the words go; the reply goes on.
    open_chat(gui, qtbot, shed)
    qtbot.waitUntil(card.isVisible, timeout=5_000)
    with qtbot.waitSignal(window.reply_finished, timeout=15_000):
        qtbot.mouseClick(card.allow_once, Qt.MouseButton.LeftButton)
    assert sidebar.waiting_shown() == set()
    assert window.windowTitle() == "Tidy the shed — Parley"
    qtbot.waitUntil(lambda: colour_at(sidebar, sidebar.list.dot_rect(
        sidebar.list.rows.item(shed)).center()) != AMBER)  # fmt: skip
    assert "Tidied." in gui.transcript_text()


@pytest.mark.slow
def test_stopping_a_reply_that_waits_for_approval_clears_its_badge(
    asking_gui: GuiApp, upstream: ScriptedUpstream, qtbot: Any
) -> None:
    gui = asking_gui
    window, sidebar = gui.window, gui.window.sidebar
    upstream.queue = [Script(texts=["Let me. "], tool_calls=[danger("everything")])]
    gui.send("Do everything")
    qtbot.waitUntil(window.approval_card.isVisible, timeout=15_000)
    chat = window.current_id
    qtbot.waitUntil(lambda: sidebar.waiting_shown() == {chat}, timeout=5_000)
    qtbot.waitUntil(lambda: window.windowTitle() == "Do everything — waiting for you — Parley")
    with qtbot.waitSignal(window.reply_finished, timeout=10_000):
        qtbot.keyClick(window, Qt.Key.Key_Escape)
    assert sidebar.waiting_shown() == set()
    assert window.windowTitle() == "Do everything — Parley"


@pytest.fixture
def impatient_gui(gui_factory: Any, data_dir: Path, tool_log: ToolLog, qtbot: Any) -> GuiApp:
    """The tests' MCP server, with `slow` asked about after 1 s."""
    entry = {**tool_server(tool_log.path), "toolTimeout": {"slow": 1}}
    write_config(data_dir / "mcp.json", {"t": entry})
    gui: GuiApp = gui_factory()
    client = gui.window.client
    assert client is not None
    qtbot.waitUntil(lambda: run(qtbot, client.status())["tools"]["ready"] == 1, timeout=30_000)
    return gui


@pytest.mark.slow
def test_a_long_call_asked_about_makes_its_chat_wait_for_you_until_answered(
    impatient_gui: GuiApp, upstream: ScriptedUpstream, qtbot: Any
) -> None:
    gui = impatient_gui
    window, sidebar, card = gui.window, gui.window.sidebar, gui.window.overdue_card
    upstream.queue = [
        Script(tokens=0, tool_calls=[{"name": "t__slow", "arguments": '{"seconds": 60}'}]),
        Script(texts=["I stopped waiting."]),
    ]
    gui.send("Take your time")
    qtbot.waitUntil(card.isVisible, timeout=15_000)
    chat = window.current_id
    qtbot.waitUntil(lambda: sidebar.waiting_shown() == {chat}, timeout=5_000)
    qtbot.waitUntil(lambda: window.windowTitle() == "Take your time — waiting for you — Parley")

    qtbot.mouseClick(card.keep_waiting, Qt.MouseButton.LeftButton)  # runs on: replying again
    qtbot.waitUntil(lambda: sidebar.waiting_shown() == set(), timeout=5_000)
    assert window.windowTitle() == "Take your time — Parley"
    assert sidebar.busy_shown() == {chat}

    qtbot.waitUntil(card.isVisible, timeout=10_000)  # asked again a timeout later
    qtbot.waitUntil(lambda: sidebar.waiting_shown() == {chat}, timeout=5_000)
    with qtbot.waitSignal(window.reply_finished, timeout=10_000):
        qtbot.mouseClick(card.stop_call, Qt.MouseButton.LeftButton)
    assert sidebar.waiting_shown() == set()
    assert window.windowTitle() == "Take your time — Parley"


def test_a_waiting_row_says_so_to_a_screen_reader_and_when_hovered(qtbot: Any) -> None:
    QAccessible.setActive(True)
    try:
        sidebar = ConversationList()
        qtbot.addWidget(sidebar)
        sidebar.show_conversations(
            [{"id": "a", "title": "First"}, {"id": "b", "title": "Second"}],  # type: ignore[list-item]
            None,
        )
        sidebar.set_busy({"a", "b"})
        sidebar.set_waiting({"b"})
        role = Qt.ItemDataRole.AccessibleDescriptionRole
        assert [sidebar.list.item(r).data(role) for r in (0, 1)] == [BUSY_TIP, WAITING_TIP]
        sidebar.set_waiting(set())
        assert sidebar.list.item(1).data(role) == BUSY_TIP
        sidebar.set_busy(set())
        assert not sidebar.list.item(1).data(role)
    finally:
        QAccessible.setActive(False)


def test_a_narrow_list_keeps_the_waiting_badge_to_its_dot(qtbot: Any) -> None:
    sidebar = ConversationList()
    qtbot.addWidget(sidebar)
    sidebar.show_conversations([{"id": "a", "title": "A long title of a chat"}], None)  # type: ignore[list-item]
    sidebar.set_waiting({"a"})
    sidebar.resize(400, 300)
    sidebar.show()
    qtbot.waitExposed(sidebar)
    item = sidebar.list.item(0)
    assert sidebar.list.badge(item)[1] == WAITING_TIP
    sidebar.resize(130, 300)
    qtbot.waitUntil(lambda: sidebar.list.badge(item)[1] != WAITING_TIP)
    rect, words = sidebar.list.badge(item)
    # The title keeps most of the row: the words shrink, then go, and the amber dot stays.
    assert rect.width() <= sidebar.list.visualItemRect(item).width() * 0.6
    QApplication.processEvents()
    dot = sidebar.list.dot_rect(item).center()
    qtbot.waitUntil(lambda: colour_at(sidebar, dot) == AMBER)
    assert words in ("Waiting", "")


def test_a_waiting_row_s_title_ends_before_its_badge(qtbot: Any) -> None:
    sidebar = ConversationList()
    qtbot.addWidget(sidebar)
    title = "Push the fix to the release branch and tell me when it is done"
    sidebar.show_conversations([{"id": "a", "title": title}], None)  # type: ignore[list-item]
    sidebar.resize(280, 300)
    sidebar.show()
    qtbot.waitExposed(sidebar)
    view = sidebar.list
    item = view.item(0)
    delegate = view.itemDelegate()

    def drawn_title() -> tuple[str, int]:
        option = QStyleOptionViewItem()
        option.initFrom(view)
        option.rect = view.chat_rect(item)
        option.widget = view
        delegate.initStyleOption(option, view.indexFromItem(item))
        text = view.style().subElementRect(QStyle.SubElement.SE_ItemViewItemText, option, view)
        return option.text, text.left() + option.fontMetrics.horizontalAdvance(option.text)

    assert drawn_title()[0] == title  # (the row is too narrow for it either way)
    sidebar.set_waiting({"a"})
    pill, words = view.badge(item)
    assert words == WAITING_TIP
    shown, ends_at = drawn_title()
    assert shown.endswith("…") and len(shown) < len(title)
    assert ends_at < pill.left()  # the title's "…" before the badge, not under it
