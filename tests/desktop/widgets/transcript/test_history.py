"""A long chat is drawn from its newest messages (opening it does not hold the window), with
a link that draws the earlier ones a page at a time; a search hit or Find in an earlier
message draws them."""

from __future__ import annotations

import time
from typing import Any

from PySide6.QtCore import QUrl

from desktop.widgets.find_bar import FindBar
from desktop.widgets.transcript import Transcript
from desktop.widgets.transcript.history import NEWEST_MESSAGES
from desktop.widgets.transcript.links import EARLIER_LINK
from tests.desktop.widgets.transcript.replies import add_text


def chat(count: int) -> list[dict[str, Any]]:
    base = {"conversation_id": "c", "status": "completed", "ended_by": None, "error": None,
            "created_at": 0.0, "completed_at": 0.0, "usage": None, "parent_id": None,
            "continued": None}  # fmt: skip
    return [
        {**base, "id": f"m{i}", "role": "user" if i % 2 == 0 else "assistant",
         "content": f"message number {i} " + ("zebra" if i == 3 else "plain"),
         "model": None, "parts": [{"type": "text", "text": f"message number {i}"}]}
        for i in range(count)
    ]  # fmt: skip


def test_a_long_chat_shows_its_newest_messages_then_the_rest_on_request(qtbot: Any) -> None:
    view = Transcript()
    qtbot.addWidget(view)
    view.resize(800, 600)
    view.show()
    messages = chat(1_000)
    began = time.perf_counter()
    view.show_conversation(messages)  # type: ignore[arg-type]
    first_draw = time.perf_counter() - began
    text = view.toPlainText()
    assert "message number 999" in text and "message number 899 " not in text
    assert f"Show the {1_000 - NEWEST_MESSAGES:,} earlier messages" in text
    assert not view.drawn_whole
    # Each click draws the page before, above what is on screen, which stays in view.
    bar = view.verticalScrollBar()
    qtbot.waitUntil(lambda: bar.maximum() > 0)
    bar.setValue(bar.maximum() // 2)
    in_view = view.cursorForPosition(view.viewport().rect().center()).position()
    shown = view.document().findBlock(in_view).text()
    view.open_link(QUrl(EARLIER_LINK))
    text = view.toPlainText()
    assert "message number 800 " in text and "message number 799 " not in text
    assert "Show the 800 earlier messages" in text
    centre = view.cursorForPosition(view.viewport().rect().center()).position()
    assert view.document().findBlock(centre).text() == shown
    clicks = 1
    while not view.drawn_whole:
        view.open_link(QUrl(EARLIER_LINK))
        clicks += 1
    assert clicks == 9 and "earlier messages" not in view.toPlainText()
    # Drawn in pages, it is the very same as drawn at once.
    paged = view.toPlainText()
    # The newest are drawn in a fraction of the time of all of them.
    began = time.perf_counter()
    view.show_conversation(messages, everything=True)  # type: ignore[arg-type]
    assert first_draw < time.perf_counter() - began
    assert view.toPlainText() == paged


def test_a_hit_or_find_in_an_earlier_message_draws_the_rest(qtbot: Any) -> None:
    view = Transcript()
    qtbot.addWidget(view)
    messages = chat(300)
    view.show_conversation(messages)  # type: ignore[arg-type]
    assert view.reveal("zebra", "m3")
    assert view.drawn_whole and view.textCursor().selectedText() == "zebra"

    view.show_conversation(messages)  # type: ignore[arg-type]
    bar = FindBar(view, None, view.show_everything)
    qtbot.addWidget(bar)
    bar.open()
    bar.field.setText("zebra")
    assert bar.matches == 1 and view.drawn_whole


def test_a_search_hit_selects_the_first_match_in_its_message(qtbot: Any) -> None:
    view = Transcript()
    qtbot.addWidget(view)
    messages = chat(6)
    messages[2]["content"] = "zebra first, then more zebra, and zebra last"
    messages[4]["content"] = "a zebra in a later message"
    view.show_conversation(messages)  # type: ignore[arg-type]
    assert view.reveal("zebra", "m2")
    cursor = view.textCursor()
    assert cursor.selectedText() == "zebra"
    block = cursor.block().text()
    assert block.startswith("zebra first") and cursor.positionInBlock() == len("zebra")
    assert view.reveal("zebra", "m4")  # not a match of the message before
    assert view.textCursor().block().text() == "a zebra in a later message"


def test_earlier_messages_drawn_while_a_reply_streams_leave_the_reply_whole(
    qtbot: Any,
) -> None:
    """The reply's place in the document moves down by what is drawn above it: the updates
    after go on where it is, not where it was."""
    from desktop.client import ReplyEnd

    view = Transcript()
    qtbot.addWidget(view)
    view.resize(800, 600)
    view.show()
    view.show_conversation(chat(300))  # type: ignore[arg-type]
    view.begin_reply("go on", "m")
    sizes: list[int] = []
    view.reply_rendered.connect(lambda size, _cost: sizes.append(size))
    words = " ".join(f"word{n}" for n in range(400))  # sealed lines too, before and after
    half = len(words) // 2
    add_text(view, words[:half])
    qtbot.waitUntil(lambda: bool(sizes) and sizes[-1] == half)
    add_text(view, " ")
    qtbot.waitUntil(lambda: sizes[-1] == half + 1)
    view.open_link(QUrl(EARLIER_LINK))  # a page drawn above the reply
    view.show_everything()
    for start in range(half, len(words), 50):
        add_text(view, words[start : start + 50])
        qtbot.waitUntil(lambda start=start: sizes[-1] == min(start + 50, len(words)) + 1)
    with qtbot.waitSignal(view.reply_ended, timeout=5_000):
        view.end_reply(ReplyEnd(status="completed", usage={}))
    text = view.toPlainText()
    assert "message number 0 " in text and "message number 299 " in text
    assert words.replace(" ", "") in text.replace(" ", "").replace("\n", "")
    assert text.count("word0 ") == 1 and text.count("word399") == 1
