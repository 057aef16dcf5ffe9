"""The sidebar's date groups in the running app: from the server's last activity of each chat,
a search's groups, a chat brought back to Today by its reply, and a list left open past
midnight."""

from __future__ import annotations

import sqlite3
import time
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from desktop.chats.conversation_list import ConversationList
from desktop.chats.conversation_rows import ID_ROLE
from desktop.chats.groups import local_now
from tests.desktop.conftest import GuiApp, run
from tests.desktop.test_sidebar import chat, titles
from tests.support.upstream import Script, ScriptedUpstream


def headers(sidebar: ConversationList) -> list[tuple[str, list[str]]]:
    view = sidebar.list
    shown: list[tuple[str, list[str]]] = []
    for row in range(view.count()):
        if view.header_at(row):
            shown.append((view.header_at(row), []))
        shown[-1][1].append(view.item(row).text())
    return shown


def test_old_chats_are_grouped_searched_and_brought_back_to_today(
    gui: GuiApp, upstream: ScriptedUpstream, qtbot: Any, data_dir: Path
) -> None:
    upstream.script = Script(tokens=2)
    chat(gui, qtbot, "About apples")
    gui.window.new_chat()
    chat(gui, qtbot, "About pears")
    apples = gui.window.sidebar.list.item(1).data(ID_ROLE)
    long_ago = datetime(local_now().year - 2, 6, 1, 12, 0)
    with sqlite3.connect(data_dir / "parley.sqlite3") as db:  # a chat of two years ago
        db.execute(
            "UPDATE conversations SET updated_at = ? WHERE id = ?", (long_ago.timestamp(), apples)
        )
    run(qtbot, gui.window.chat_list.refresh())
    sidebar = gui.window.sidebar
    assert headers(sidebar) == [("Today", ["About pears"]), (str(long_ago.year), ["About apples"])]

    sidebar.search.setText("apples")
    qtbot.waitUntil(lambda: sidebar.searching() and titles(gui) == ["About apples"], timeout=5_000)
    assert headers(sidebar) == [(str(long_ago.year), ["About apples"])]  # Today: none found
    sidebar.search.clear()
    qtbot.waitUntil(lambda: len(titles(gui)) == 2, timeout=5_000)

    sidebar.list.setCurrentRow(1)
    qtbot.waitUntil(lambda: gui.window.current_id == apples, timeout=5_000)
    with qtbot.waitSignal(gui.window.reply_finished, timeout=10_000):
        gui.send("More about apples")
    qtbot.waitUntil(lambda: headers(sidebar) == [("Today", ["About apples", "About pears"])])
    run(qtbot, gui.window.chat_list.refresh())  # as the server has it too
    assert headers(sidebar) == [("Today", ["About apples", "About pears"])]
    assert sidebar.list.currentItem().data(ID_ROLE) == apples


def test_a_list_left_open_past_midnight_says_yesterday(
    gui: GuiApp, upstream: ScriptedUpstream, qtbot: Any
) -> None:
    upstream.script = Script(tokens=2)
    chat(gui, qtbot, "Late work")
    sidebar = gui.window.sidebar
    assert headers(sidebar) == [("Today", ["Late work"])]
    # The sidebar's clock runs as the computer's, 0.3 s before the end of today.
    real = datetime.now()
    midnight = datetime.combine(real.date() + timedelta(days=1), datetime.min.time())
    offset = midnight - timedelta(seconds=0.3) - real
    sidebar.clock = lambda: datetime.now() + offset
    armed = time.monotonic()
    gui.window.chat_list.follow_days()
    assert headers(sidebar) == [("Today", ["Late work"])]
    qtbot.waitUntil(lambda: headers(sidebar) == [("Yesterday", ["Late work"])], timeout=5_000)
    assert time.monotonic() - armed >= 0.25  # at midnight, not at once
