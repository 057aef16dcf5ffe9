"""A long chat opens a page at a time: the window loads its newest `PAGE` messages from the
real server, and scrolling to the top of the list loads the pages before them until the first
message is there; a chat opened meanwhile is not drawn over."""

from __future__ import annotations

import json
from typing import Any

from desktop.chats.earlier_messages import PAGE
from tests.desktop.conftest import GuiApp, run

COUNT = PAGE * 2 + 300


def import_long_chat(gui: GuiApp) -> str:
    items: list[dict[str, Any]] = []
    parent = None
    for m in range(COUNT):
        role = "user" if m % 2 == 0 else "assistant"
        text = f"message number {m} plain"
        items.append({"id": f"m{m}", "parent_id": parent, "role": role, "content": text,
                      "created_at": 1.7e9 + m})  # fmt: skip
        parent = f"m{m}"
    document = {"format": "parley", "version": 1, "conversations": [
        {"id": "long", "title": "the long chat", "created_at": 1.7e9, "updated_at": 1.7e9,
         "messages": items}]}  # fmt: skip
    client = gui.window.client
    assert client is not None
    run(gui.qtbot, client.import_history(json.dumps(document).encode()))
    listed = run(gui.qtbot, client.conversations())
    found: str = next(c["id"] for c in listed if c["title"] == "the long chat")
    return found


def test_a_long_chat_is_loaded_a_page_at_a_time(gui: GuiApp) -> None:
    cid = import_long_chat(gui)
    window, qtbot = gui.window, gui.qtbot
    window.tasks.spawn(window._open(cid))
    qtbot.waitUntil(lambda: f"message number {COUNT - 1} plain" in gui.transcript_text())
    view = window.transcript
    assert view.rows.rowCount() == PAGE  # only the newest page was loaded
    pages = 0
    while not view.drawn_whole:
        before = view.rows.rowCount()
        view.list.positionViewAtBeginning()  # type: ignore[attr-defined]  # scrolled up
        qtbot.waitUntil(lambda b=before: view.rows.rowCount() != b)
        pages += 1
        assert pages < 40
    assert view.rows.ids() == [f"m{m}" for m in range(COUNT)]
    assert gui.transcript_text().count("message number") == COUNT


def test_an_earlier_page_for_a_chat_no_longer_shown_is_not_drawn(gui: GuiApp) -> None:
    cid = import_long_chat(gui)
    window, qtbot = gui.window, gui.qtbot
    window.tasks.spawn(window._open(cid))
    qtbot.waitUntil(lambda: f"message number {COUNT - 1} plain" in gui.transcript_text())
    view = window.transcript
    first = view.rows.ids()[0]
    assert not view.add_earlier("elsewhere", [], 0, False)  # another chat's page
    view.show_conversation([])  # New chat meanwhile
    assert not view.add_earlier(first, [], 0, False)
    assert "message number" not in gui.transcript_text()
