"""A growing reply as HTML blocks: what can no longer change is rendered once and never
touched again; only the live tail is rendered as text comes."""

from __future__ import annotations

import itertools
import re
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from desktop.transcript.blocks import Block, BlockList, ReplyBlocks
from desktop.transcript.markdown import MarkdownRenderer

REPLY = (
    "# A title\n\nSome *text* with `code`.\n\n```python\nwith open('a') as f:\n"
    + "    print(f.read())\n" * 30
    + "```\n\n- one\n- two\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\nThe end, [1]."
)
TAG = re.compile(r"<[^>]*>")


def visible(html_text: str) -> str:
    return re.sub(r"\s+", " ", TAG.sub(" ", html_text)).strip()


def grown(pieces: list[str]) -> tuple[ReplyBlocks, list[list[str]]]:
    blocks = ReplyBlocks(MarkdownRenderer())
    seen = []
    text = ""
    for piece in pieces:
        text += piece
        seen.append(list(blocks.set_text(text)))
    return blocks, seen


def test_frozen_blocks_never_change_as_the_reply_grows() -> None:
    _, seen = grown(list(REPLY))
    for before, after in itertools.pairwise(seen):
        frozen = before[:-1]
        assert after[: len(frozen)] == frozen
    assert len(seen[-1]) > 3  # the reply was cut into blocks, not rendered whole each time


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(min_value=1, max_value=40), min_size=1, max_size=200))
def test_the_blocks_show_the_same_text_as_the_whole_reply(sizes: list[int]) -> None:
    """However the text arrives, the blocks hold what one rendering of it shows."""
    pieces, at = [], 0
    for size in sizes:
        pieces.append(REPLY[at : at + size])
        at += size
    pieces.append(REPLY[at:])
    blocks, _ = grown(pieces)
    whole = MarkdownRenderer().render(REPLY)
    assert visible(" ".join(blocks.blocks)) == visible(whole)


def test_a_changed_text_is_rendered_afresh() -> None:
    blocks = ReplyBlocks(MarkdownRenderer())
    blocks.set_text("First paragraph.\n\nSecond")
    assert visible(" ".join(blocks.set_text("Other words."))) == "Other words."


class Counted:
    """The signals a BlockList sends its views."""

    def __init__(self, model: BlockList) -> None:
        self.changed: list[tuple[int, int]] = []
        self.inserted: list[tuple[int, int]] = []
        model.dataChanged.connect(lambda a, b, *_: self.changed.append((a.row(), b.row())))
        model.rowsInserted.connect(lambda _p, a, b: self.inserted.append((a, b)))


def test_a_block_list_tells_views_only_what_changed(qapp: Any) -> None:
    model = BlockList()
    counted = Counted(model)
    model.set_blocks([Block("text", "a"), Block("text", "b")])
    model.set_blocks([Block("text", "a"), Block("text", "b2")])
    model.set_blocks([Block("text", "a"), Block("text", "b2"), Block("text", "c")])
    assert counted.inserted == [(0, 1), (2, 2)]
    assert counted.changed == [(1, 1)]
    assert [block.html for block in model.blocks] == ["a", "b2", "c"]


def test_a_long_paragraph_stays_one_block_while_a_long_code_block_is_cut_at_line_ends() -> None:
    paragraph = " ".join(f"word{i}" for i in range(600))  # far past a live tail's size
    blocks, _ = grown(list(paragraph))
    assert len(blocks.blocks) == 1  # drawn in pieces, it would read as several paragraphs
    code = "Intro.\n\n```python\n" + "".join(f"x{i} = {i}\n" for i in range(400)) + "```\n"
    blocks, _ = grown([code[i : i + 7] for i in range(0, len(code), 7)])
    assert len(blocks.blocks) > 3
    assert visible(" ".join(blocks.blocks)) == visible(MarkdownRenderer().render(code))
