"""A long paragraph that streams is cut where its lines wrap, so an update lays out only its
last lines, and the pieces read as the paragraph drawn whole: line for line, with no gap."""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from typing import Any

import pytest
from PySide6.QtCore import QPointF
from PySide6.QtQuick import QQuickItem

from desktop.transcript.blocks import ReplyBlocks
from desktop.transcript.markdown import MarkdownRenderer
from desktop.transcript.rows import Row
from desktop.transcript.sealing import RETRY_CHARS, SEAL_CHARS, Sealer, collapsed
from desktop.transcript.view import QuickTranscript
from tests.desktop.transcript.test_view import items, plain

WORDS = [
    "the",
    "quick",
    "brown",
    "fox",
    "jumps",
    "over",
    "a",
    "lazy",
    "dog",
    "while",
    "it",
    "streams",
    "on",
    "and",
    "on",
]
PARAGRAPH = " ".join(WORDS[i % len(WORDS)] + ("," if i % 9 == 4 else "") for i in range(1100))
TAG = re.compile(r"<[^>]*>")


def visible(html_text: str) -> str:
    return re.sub(r"\s+", " ", TAG.sub(" ", html_text)).strip()


def streamed(blocks: ReplyBlocks, text: str, step: int = 7) -> list[list[str]]:
    seen = []
    for end in range(step, len(text) + step, step):
        seen.append(blocks.set_text(text[:end]))
    return seen


def test_runs_of_spaces_map_back_to_the_source() -> None:
    shown, source_of = collapsed("a  b   c d")
    assert shown == "a b c d"
    assert [source_of[shown.index(c)] for c in "abcd"] == [0, 3, 7, 9]


def test_a_long_plain_paragraph_is_frozen_a_few_lines_at_a_time(qapp: Any) -> None:
    blocks = ReplyBlocks(MarkdownRenderer(), Sealer(width=600, pixel_size=15))
    seen = streamed(blocks, PARAGRAPH)
    for before, after in itertools.pairwise(seen):
        assert after[: len(before) - 1] == before[:-1]  # what was frozen never changes
    pieces = blocks.pieces
    assert len(pieces) > len(PARAGRAPH) // (2 * SEAL_CHARS)
    assert not pieces[0].joined and all(piece.joined for piece in pieces[1:])
    assert all("margin-bottom:0" in piece.html for piece in pieces[:-1])
    assert all("margin-top:0" in piece.html for piece in pieces[1:])
    # What is laid out again at each update stays short however long the paragraph grows.
    assert max(len(visible(html[-1])) for html in seen) < SEAL_CHARS + 200
    assert visible(" ".join(blocks.blocks)) == visible(MarkdownRenderer().render(PARAGRAPH))


def test_a_paragraph_that_grows_a_word_and_its_space_at_a_time_is_cut_too(qapp: Any) -> None:
    blocks = ReplyBlocks(MarkdownRenderer(), Sealer(width=600, pixel_size=15))
    text = ""
    for i in range(1500):  # as a model streams: each token a word and the space after it
        text += f"word{i} "
        live = blocks.set_text(text)[-1]
        assert len(visible(live)) < SEAL_CHARS + 200
    assert len(blocks.pieces) > 5


def test_without_a_measure_or_with_markup_a_paragraph_stays_whole(qapp: Any) -> None:
    blocks = ReplyBlocks(MarkdownRenderer(), Sealer())  # no width known yet
    streamed(blocks, PARAGRAPH, step=50)
    assert len(blocks.pieces) == 1
    marked = PARAGRAPH.replace("fox", "*fox*")  # emphasis a cut could split
    blocks = ReplyBlocks(MarkdownRenderer(), Sealer(width=600, pixel_size=15))
    streamed(blocks, marked, step=50)
    assert len(blocks.pieces) == 1


@pytest.fixture
def view(qtbot: Any) -> Iterator[QuickTranscript]:
    transcript = QuickTranscript()
    qtbot.addWidget(transcript)
    transcript.resize(900, 4000)  # tall: both replies' rows are made
    transcript.show()
    yield transcript


def row_blocks(view: QuickTranscript, row_id: str) -> list[QQuickItem]:
    found: list[QQuickItem] = []
    stack = items(view, f"message-{row_id}")  # none until the row is made
    while stack:
        item = stack.pop()
        if item.objectName() == "block" and item.isVisible():
            found.append(item)
        stack.extend(item.childItems())
    return sorted(found, key=lambda block: block.mapToScene(QPointF(0, 0)).y())


def lines(view: QuickTranscript, row_id: str) -> int:
    return sum(int(block.property("lineCount")) for block in row_blocks(view, row_id))


def body_height(view: QuickTranscript, row_id: str) -> float:
    (row,) = items(view, f"message-{row_id}")
    stack, found = [row], []
    while stack:
        item = stack.pop()
        if item.objectName() == "replyBody":
            found.append(item)
        stack.extend(item.childItems())
    return float(found[0].height())


def stream_into(view: QuickTranscript, qtbot: Any, text: str, step: int = 40) -> None:
    # As the window does, the reply's row is there before its text comes; then where its
    # paragraph is cut depends on the measure alone, not on what QML drew meanwhile.
    qtbot.waitUntil(lambda: len(items(view, "message-live")) == 1)
    for end in range(step, len(text) + step, step):
        view.rows.grow("live", [text[:end]])
    letters = re.sub(r"\s+", "", text)
    qtbot.waitUntil(lambda: "".join(plain(b) for b in row_blocks(view, "live")) != "")
    qtbot.waitUntil(
        lambda: re.sub(r"\s+", "", "".join(plain(b) for b in row_blocks(view, "live"))) == letters
    )


def test_the_pieces_read_line_for_line_as_the_paragraph_drawn_whole(
    view: QuickTranscript, qtbot: Any
) -> None:
    view.rows.append(Row(id="live", role="assistant", text="", header="m", streaming=True))
    text = PARAGRAPH[:5000]
    view.rows.append(Row(id="ref", role="assistant", text="", parts=[text], header="m"))
    stream_into(view, qtbot, text)
    assert len(row_blocks(view, "live")) > 3  # it was cut
    qtbot.waitUntil(lambda: lines(view, "live") == lines(view, "ref") > 20)
    qtbot.waitUntil(lambda: abs(body_height(view, "live") - body_height(view, "ref")) < 1)


def test_a_new_width_or_size_puts_the_paragraph_back_together(
    view: QuickTranscript, qtbot: Any
) -> None:
    text = PARAGRAPH[:4000]
    view.rows.append(Row(id="live", role="assistant", text="", header="m", streaming=True))
    view.rows.append(Row(id="ref", role="assistant", text="", parts=[text], header="m"))
    stream_into(view, qtbot, text[:3000])
    cut = len(row_blocks(view, "live"))
    assert cut > 2
    view.resize(600, 4000)  # narrower than the column: the lines wrap elsewhere
    qtbot.waitUntil(lambda: len(row_blocks(view, "live")) < cut)
    view.set_text_scale(1.21)  # View → Zoom in, twice
    qtbot.waitUntil(lambda: row_blocks(view, "live")[0].property("font").pixelSize() == 18)
    for end in range(3040, len(text) + 40, 40):  # and it goes on, cut at the new measure
        view.rows.grow("live", [text[:end]])
    qtbot.waitUntil(lambda: len(row_blocks(view, "live")) > 1)
    qtbot.waitUntil(lambda: lines(view, "live") == lines(view, "ref") > 20)


class CountedSealer(Sealer):
    def __init__(self, width: float, pixel_size: int) -> None:
        super().__init__(width, pixel_size)
        self.tries = 0

    def cut(self, text: str, wrap: str) -> int:
        self.tries += 1
        return super().cut(text, wrap)


def test_a_paragraph_that_cannot_be_cut_is_not_laid_out_again_at_every_update(qapp: Any) -> None:
    # A line separator: rich text breaks the line there, so the layout is not the source's.
    text = "words " * 30 + "\u2028" + PARAGRAPH[:3000]
    sealer = CountedSealer(width=600, pixel_size=15)
    blocks = ReplyBlocks(MarkdownRenderer(), sealer)
    updates = streamed(blocks, text)
    assert len(blocks.pieces) == 1  # never cut
    assert sealer.tries <= len(text) // RETRY_CHARS + 2 < len(updates) // 10
