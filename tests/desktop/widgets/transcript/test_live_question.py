"""A long question is drawn a piece a frame (live_question.py), the reply streaming below it,
and lies where it lies when the chat is reopened."""

from __future__ import annotations

from typing import Any

from PySide6.QtGui import QColor

from desktop.client import ReplyEnd
from desktop.widgets.transcript import Transcript
from desktop.widgets.transcript.question_tint import PADDING_PX, QUESTION_STATE
from tests.desktop.widgets.transcript.replies import add_text
from tests.desktop.widgets.transcript.test_growing_paragraph import lines
from tests.desktop.widgets.transcript.test_question_tint import (
    colour_at,
    question,
    question_blocks,
    tint_edges,
    view_of,
    viewport_image,
)
from tests.support.drawn import laid_out

LONG = "Summarise this:\n\n" + "\n\n".join(
    " ".join(f"w{p}x{n}" for n in range(150)) for p in range(8)
)  # ~8,000 characters: 8 pieces


def reopened_turn(qtbot: Any, question_text: str, reply: str) -> Transcript:
    view = view_of(qtbot)
    base = {"conversation_id": "c", "status": "completed", "ended_by": None, "error": None,
            "created_at": 0.0, "completed_at": 0.0, "parts": []}  # fmt: skip
    view.show_conversation([
        {**base, "id": "u", "role": "user", "content": question_text, "model": None,
         "usage": None},
        {**base, "id": "a", "role": "assistant", "content": reply, "model": "m", "usage": {}},
    ])  # type: ignore[list-item]  # fmt: skip
    return view


def question_text(view: Transcript) -> str:
    return "\n".join(b.text() for b in question_blocks(view)).replace("\u2028", "\n")


def test_a_long_question_is_drawn_a_piece_a_frame_with_the_reply_streaming_below(
    qtbot: Any,
) -> None:
    view = view_of(qtbot)
    view.begin_reply(LONG, "m", ("u", "a"))
    first = question_text(view)
    assert LONG.startswith(first) and 0 < len(first) < len(LONG) // 4  # the first piece only
    reply = "A reply that streams while the question is drawn.\n\nIts second paragraph."
    with qtbot.waitSignal(view.reply_rendered):
        add_text(view, reply[:30])  # the reply goes on below meanwhile
    add_text(view, reply[30:])
    qtbot.waitUntil(lambda: question_text(view) == LONG, timeout=5_000)
    with qtbot.waitSignal(view.reply_ended, timeout=5_000):
        view.end_reply(ReplyEnd(status="completed", usage={}))
    # Line for line where the chat reopened puts it: the question and the reply below it.
    assert lines(view) == lines(reopened_turn(qtbot, LONG, reply))
    top, bottom, left = question_box(view)
    image = viewport_image(view)
    tint = QColor(view._colours.tint).name()
    for y in range(int(max(top, 0)), int(min(bottom, view.viewport().height())), 7):
        assert colour_at(image, left + 2, y) == tint, y  # one box: no gap between pieces


def question_box(view: Transcript) -> tuple[float, float, float]:
    """The tint's top and bottom (viewport pixels) around all of the question's pieces."""
    blocks = question_blocks(view)
    first_top, _b, left = tint_edges(view, blocks[0])
    _t, last_bottom, _l = tint_edges(view, blocks[-1])
    return first_top - PADDING_PX, last_bottom + PADDING_PX, left


def test_a_next_question_first_finishes_the_one_still_being_drawn(qtbot: Any) -> None:
    view = view_of(qtbot)
    view.begin_reply(LONG, "m", ("u1", "a1"))
    view.begin_reply("next", "m", ("u2", "a2"))  # (Regenerate at once, say)
    texts = [b.text().replace("\u2028", "\n") for b in question_blocks(view)]
    assert "\n".join(texts[:-1]) == LONG and texts[-1] == "next"


def test_a_chat_drawn_anew_meanwhile_gets_no_piece_of_the_old_question(qtbot: Any) -> None:
    view = view_of(qtbot)
    view.begin_reply(LONG, "m", ("u", "a"))
    view.show_conversation([question("u0", "another chat")])
    # Until nothing is left to draw of a question (with the bug, the old one's pieces went on
    # being drawn into the new chat until the last).
    qtbot.waitUntil(lambda: not view._question.timer.isActive() and laid_out(view))
    assert question_text(view) == "another chat"


def last_question(view: Transcript) -> str:
    """The text of the last question in the document (its pieces are adjacent blocks)."""
    groups: list[list[str]] = []
    block, previous = view.document().begin(), False
    while block.isValid():
        is_question = block.userState() == QUESTION_STATE
        if is_question and not previous:
            groups.append([])
        if is_question:
            groups[-1].append(block.text())
        previous = is_question
        block = block.next()
    return "\n".join(groups[-1]).replace("\u2028", "\n")


def test_earlier_messages_drawn_above_meanwhile_move_where_the_pieces_go(qtbot: Any) -> None:
    view = view_of(qtbot)
    view.show_conversation([question(f"u{n}", f"question {n}") for n in range(130)])
    assert not view.drawn_whole  # a "Show earlier" link above the newest
    view.begin_reply(LONG, "m", ("u", "a"))
    add_text(view, "The reply.")
    view.show_everything()  # drawn above the question while its pieces are still coming
    qtbot.waitUntil(lambda: last_question(view) == LONG, timeout=5_000)
    with qtbot.waitSignal(view.reply_ended, timeout=5_000):
        view.end_reply(ReplyEnd(status="completed", usage={}))
    assert view.toPlainText().endswith("The reply.\nCopy  ·  Regenerate")
    assert last_question(view) == LONG
