"""A long chat opens a page at a time (issue 38): the window loads its newest `PAGE`
messages from the real server, and "Show the N earlier messages" loads and draws the pages
before them until the first message is on screen; a chat opened meanwhile is not drawn over."""

from __future__ import annotations

import json
from typing import Any

from PySide6.QtCore import QUrl

from desktop.earlier_messages import PAGE
from desktop.widgets.transcript.links import EARLIER_LINK
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
    assert len(view._history.messages) == PAGE  # only the newest page was loaded
    assert f"Show the {COUNT - 100:,} earlier messages" in gui.transcript_text()
    clicks = 0
    while not view.drawn_whole:
        before = len(view._history.messages), view._history.first_drawn
        view.open_link(QUrl(EARLIER_LINK))
        clicks += 1
        qtbot.waitUntil(
            lambda b=before: (len(view._history.messages), view._history.first_drawn) != b
        )
        assert clicks < 40
    text = gui.transcript_text()
    assert "message number 0 plain" in text and "earlier messages" not in text
    assert len(view._history.messages) == COUNT
    assert [m["id"] for m in view._history.messages] == [f"m{m}" for m in range(COUNT)]
    assert text.count("message number") == COUNT


def test_an_earlier_page_for_a_chat_no_longer_shown_is_not_drawn(gui: GuiApp) -> None:
    cid = import_long_chat(gui)
    window, qtbot = gui.window, gui.qtbot
    window.tasks.spawn(window._open(cid))
    qtbot.waitUntil(lambda: f"message number {COUNT - 1} plain" in gui.transcript_text())
    view = window.transcript
    first = view._history.messages[0]["id"]
    assert not view.add_earlier("elsewhere", [], 0, False)  # another chat's page
    view.show_conversation([])  # New chat meanwhile
    assert not view.add_earlier(first, view._history.messages, 0, False)
    assert "message number" not in gui.transcript_text()
