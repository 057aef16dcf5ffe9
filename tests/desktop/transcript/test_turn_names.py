"""A turn is drawn before the server names its messages; when the names come, the rows take
them in place: the same items, not a long question laid out a second time."""

from __future__ import annotations

from typing import Any

from PySide6.QtQuick import QQuickItem
from shiboken6 import Shiboken

from desktop.client.events import ReplyParts
from desktop.transcript.surface import TranscriptSurface
from tests.desktop.transcript.test_rows import message
from tests.desktop.transcript.test_view import items


def address(item: QQuickItem) -> int:
    return int(Shiboken.getCppPointer(item)[0])


def test_a_turn_takes_its_ids_in_the_items_already_drawn(
    surface: TranscriptSurface, qtbot: Any
) -> None:
    surface.show_conversation([message(0, content="Earlier")])
    question = "Summarise this:\n\n" + " ".join(["paragraph"] * 600)
    surface.begin_reply(question, "picked", None, ReplyParts())

    def drawn(*names: str) -> list[int]:  # made by the list, whether scrolled to or not
        found = [items(surface, f"message-{name}", visible=False) for name in names]
        return [address(each[0]) for each in found if len(each) == 1]

    qtbot.waitUntil(lambda: len(drawn("live-question", "live-reply")) == 2, timeout=5_000)
    before = drawn("live-question", "live-reply")

    assert surface.name_turn(("q1", "r1"), "served")
    assert surface.rows.ids() == ["m0", "q1", "r1"]
    qtbot.waitUntil(lambda: len(drawn("q1", "r1")) == 2, timeout=5_000)
    assert drawn("q1", "r1") == before
    row = surface.rows.row("r1")
    assert row is not None and row.header == "served"  # the model the server chose
    surface.reply_grew()  # the reply's text still reaches the renamed row


def test_a_new_version_of_a_reply_takes_its_id_and_keeps_its_question(
    surface: TranscriptSurface,
) -> None:
    surface.show_conversation([message(0, content="Question"), message(1, "assistant")])
    surface.begin_reply(None, "m", None, ReplyParts())
    assert surface.name_turn(("m0", "r2"), "m")
    assert surface.rows.ids()[-1] == "r2" and "m0" in surface.rows.ids()


def test_a_turn_not_drawn_as_begun_is_left_to_be_drawn_again(surface: TranscriptSurface) -> None:
    surface.show_conversation([message(0, content="Earlier")])
    assert not surface.name_turn(("q1", "r1"), "m")  # nothing begun: nothing named
    surface.begin_reply("Tell me", "m", ("q0", "r0"), ReplyParts())
    assert not surface.name_turn(("q1", "r1"), "m")  # named already
