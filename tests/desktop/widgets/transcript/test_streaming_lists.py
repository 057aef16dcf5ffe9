"""A numbered list streaming in (issue 43 item 16): its half-written item ("3." or "3. Par") is
drawn in the same list, with its number, never as a paragraph below it nor as words of the
item above; on the real transcript, as it streams."""

from __future__ import annotations

from typing import Any

import pytest

from desktop.markdown_render import begun_item
from desktop.widgets.transcript import Transcript
from tests.desktop.widgets.transcript.replies import add_text
from tests.desktop.widgets.transcript.test_question_tint import view_of

LONG_ITEM = "word " * 60  # seven of them: the tail is cut between items (MAX_TAIL_CHARS)


def streaming(qtbot: Any, text: str) -> Transcript:
    """A reply streaming `text` so far, all of it drawn (not ended)."""
    view = view_of(qtbot)
    view.begin_reply("a question", "m")
    drawn: list[int] = []
    view.reply_rendered.connect(lambda size, _cost: drawn.append(size))
    add_text(view, text)
    qtbot.waitUntil(lambda: drawn[-1:] == [len(text)], timeout=5_000)
    return view


def last_items(view: Transcript) -> list[tuple[str, str | None]]:
    """The reply's last blocks: their text and their list's number for them (None: not in a
    list), the last three blocks' lists one and the same when they are (else "other")."""
    block = view.document().lastBlock()
    while block.isValid() and not block.text().strip("\u200b ") and not block.textList():
        block = block.previous()
    found = []
    lists = set()
    for _ in range(3):
        listed = block.textList()
        number = listed.itemText(block) if listed is not None else None
        if listed is not None:
            lists.add(id(listed))
        found.append((block.text().replace("\u200b", ""), number))
        block = block.previous()
    assert len(lists) <= 1, "the items are in different lists"
    return found[::-1]


@pytest.mark.parametrize(
    ("text", "last"),
    [
        ("Steps:\n\n1. One\n2. Two\n3.", ""),
        ("Steps:\n\n1. One\n2. Two\n3. Par", "Par"),
        ("Steps:\n\n1. One\n\n2. Two\n\n3.", ""),
        ("Steps:\n\n1. One\n\n2. Two\n\n3. Par", "Par"),
    ],
)
def test_a_half_written_item_is_drawn_in_its_list_with_its_number(
    qtbot: Any, text: str, last: str
) -> None:
    view = streaming(qtbot, text)
    assert last_items(view) == [("One", "1."), ("Two", "2."), (last, "3.")]


def test_a_long_list_cut_between_items_stays_one_list(qtbot: Any) -> None:
    items = "".join(f"{n}. {LONG_ITEM}\n" for n in range(1, 8))
    view = streaming(qtbot, f"Steps:\n\n{items}8.")
    assert [number for _, number in last_items(view)] == ["6.", "7.", "8."]
    view = streaming(qtbot, f"Steps:\n\n{items}8. Par")
    assert [number for _, number in last_items(view)] == ["6.", "7.", "8."]


def test_a_number_that_is_no_item_is_left_as_written() -> None:
    assert begun_item("The answer is\n3.") == "The answer is\n3."
    assert begun_item("3.") == "3."  # a reply's first line: "3.5 is..." may follow
    assert begun_item("```\n1. a\n2.") == "```\n1. a\n2."  # code
    assert begun_item("3.", before="1. a\n\n2. b\n\n") == "3. \u200b"
    assert begun_item("    3.", before="1. a\n    1. b\n    2. c\n") == "    3. \u200b"
