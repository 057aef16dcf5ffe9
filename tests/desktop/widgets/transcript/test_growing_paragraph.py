"""A paragraph that grows while a reply streams: its finished lines are sealed off in blocks
of their own, so each update lays out and repaints only the lines still growing (issue 16);
the lines lie exactly where the paragraph drawn whole puts them, and the pieces are one
paragraph again when the reply ends or the width of the lines changes."""

from __future__ import annotations

import re
from typing import Any, cast

import pytest
from PySide6.QtCore import QEvent, QObject, QRect
from PySide6.QtGui import QPaintEvent, QTextBlock, QTextCursor
from PySide6.QtWidgets import QWidget

import desktop.widgets.transcript.growing_reply as growing_reply_module
from desktop.client import ReplyEnd
from desktop.widgets.transcript import Transcript
from tests.desktop.test_markdown_render import reopened
from tests.desktop.widgets.transcript.replies import add_text, told
from tests.support.drawn import laid_out

WORDS = " ".join(f"word{n}" for n in range(260))  # one paragraph, ~1,900 characters


def lines(view: Transcript) -> list[tuple[float, str]]:
    """Every line of text in the laid-out document: its height and its text."""
    document = view.document()
    layout = document.documentLayout()
    found = []
    block = document.begin()
    while block.isValid():
        top = layout.blockBoundingRect(block).top()
        text = block.text()
        block_layout = block.layout()
        for index in range(block_layout.lineCount()):
            line = block_layout.lineAt(index)
            start = line.textStart()
            found.append((top + line.y(), text[start : start + line.textLength()].rstrip()))
        block = block.next()
    return found


def drawn_whole(qtbot: Any, text: str, width: int = 800) -> list[tuple[float, str]]:
    view = reopened(qtbot, text)
    view.resize(width, 600)
    view.show()
    return lines(view)


def streaming(qtbot: Any, width: int = 800, height: int = 600) -> Transcript:
    view = Transcript()
    qtbot.addWidget(view)
    view.resize(width, height)
    view.show()
    view.begin_reply("q", "m", ("u", "a"))
    return view


def stream(qtbot: Any, view: Transcript, text: str, step: int = 24) -> None:
    """Add `text` in pieces of `step` characters, each drawn before the next comes."""
    sizes: list[int] = []
    view.reply_rendered.connect(lambda size, _cost: sizes.append(size))
    total = told(view)
    for start in range(0, len(text), step):
        add_text(view, text[start : start + step])
        total += len(text[start : start + step])
        qtbot.waitUntil(lambda total=total: bool(sizes) and sizes[-1] == total)


def test_finished_lines_are_sealed_off_and_lie_where_the_whole_paragraph_puts_them(
    qtbot: Any,
) -> None:
    view = streaming(qtbot)
    sizes: list[int] = []
    view.reply_rendered.connect(lambda size, _cost: sizes.append(size))
    longest_live_block = 0
    for end in range(24, len(WORDS), 24):
        add_text(view, WORDS[end - 24 : end])
        qtbot.waitUntil(lambda end=end: bool(sizes) and sizes[-1] == end)
        longest_live_block = max(longest_live_block, view.document().lastBlock().length())
        if end % 480 == 0:
            # Mid-stream, line for line where the paragraph drawn whole puts them (the
            # whole one has its footer below, the growing one not yet).
            live = lines(view)
            assert live == drawn_whole(qtbot, WORDS[:end])[: len(live)]
    assert view._growing.sealed.seals, "nothing was sealed off"
    # The block laid out at each update stays a few lines long (without the seals it is
    # the whole paragraph, ~1,900 characters by the end).
    assert longest_live_block < 500, longest_live_block
    with qtbot.waitSignal(view.reply_ended, timeout=5_000):
        view.end_reply(ReplyEnd(status="completed", usage={}))
    # One paragraph again: one block, as in the chat reopened.
    assert not view._growing.sealed.seals
    paragraphs = [b for b in blocks(view) if b.startswith("word0 ")]
    assert paragraphs == [WORDS[: len(paragraphs[0])]] and len(paragraphs[0]) >= len(WORDS) - 24
    assert lines(view) == drawn_whole(qtbot, WORDS[: len(paragraphs[0])])


def blocks(view: Transcript) -> list[str]:
    found = []
    block = view.document().begin()
    while block.isValid():
        found.append(block.text())
        block = block.next()
    return found


def test_a_narrower_window_puts_the_pieces_together_and_seals_at_its_width(qtbot: Any) -> None:
    view = streaming(qtbot)
    stream(qtbot, view, WORDS[:900])
    assert view._growing.sealed.seals
    view.resize(560, 600)
    qtbot.waitUntil(lambda: not view._growing.sealed.seals)
    half = lines(view)
    assert half == drawn_whole(qtbot, WORDS[:900], width=560)[: len(half)]
    stream(qtbot, view, WORDS[900:1500])
    assert view._growing.sealed.seals  # sealed again, at the new width
    live = lines(view)
    assert live == drawn_whole(qtbot, WORDS[:1500], width=560)[: len(live)]


def test_a_new_question_while_a_reply_streams_leaves_its_paragraph_whole(qtbot: Any) -> None:
    view = streaming(qtbot)
    stream(qtbot, view, WORDS[:900])
    assert view._growing.sealed.seals
    view.begin_reply("next", "m")
    assert [b for b in blocks(view) if b.startswith("word0 ")] == [WORDS[:900].rstrip()]


class Paints(QObject):
    """The regions a widget paints."""

    def __init__(self, widget: QWidget) -> None:
        super().__init__()
        self.regions: list[QRect] = []
        widget.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Paint:
            self.regions.append(cast(QPaintEvent, event).region().boundingRect())
        return False


def test_the_end_of_a_paragraph_puts_its_pieces_together_unseen(qtbot: Any) -> None:
    """Put together, the pieces wrap as they are shown: the paragraph is not repainted
    (on a slow machine that repaint was most of what a paragraph's end cost)."""
    view = streaming(qtbot)
    stream(qtbot, view, WORDS[:900])
    assert view._growing.sealed.seals
    qtbot.waitUntil(lambda: laid_out(view))
    view.viewport().repaint()  # what is pending is painted now: Paints sees only what follows
    document = view.document()
    top = document.documentLayout().blockBoundingRect(
        document.findBlock(view._growing.reply.reply_start)
    )
    first_lines = round(top.top()) - view.verticalScrollBar().value() + 3 * 20
    paints = Paints(view.viewport())
    stream(qtbot, view, "\n\nThe next paragraph.")
    qtbot.waitUntil(lambda: bool(paints.regions))
    assert not view._growing.sealed.seals
    assert all(region.top() > first_lines for region in paints.regions), (
        first_lines,
        paints.regions,
    )
    text = WORDS[:900] + "\n\nThe next paragraph."
    live = lines(view)
    assert live == drawn_whole(qtbot, text)[: len(live)]


CODE_LINE = re.compile(r" {4}value_(\d+) = compute_something\(\1, factor=\d+\) {2}# step \1")


@pytest.mark.parametrize("long_line", [False, True])
def test_a_code_block_cut_by_an_update_s_budget_stays_one_code_block(
    qtbot: Any, monkeypatch: pytest.MonkeyPatch, long_line: bool
) -> None:
    # More text waits than an update takes (a burst, or updates slowed down): each update
    # cuts where the budget ends. Inside a code block, the cut must let the block go on.
    monkeypatch.setattr(growing_reply_module, "next_budget", lambda *_args, **_kw: 250)
    view = streaming(qtbot)
    view._growing.budget = 250
    code = [f"    value_{n} = compute_something({n}, factor={n})  # step {n}" for n in range(40)]
    if long_line:  # one line longer than any update's budget, with no space in it
        code[20] = "    value_20 = compute_something(20, factor=" + "9" * 700 + ")  # step 20"
    text = "Here is the code:\n\n```python\n" + "\n".join(code) + "\n```\n\nAfter."
    checked: list[int] = []

    def check(size: int, _cost: float) -> None:
        for block in blocks_of(view):
            if "value_" in block.text() and size < len(text):
                whole = CODE_LINE.fullmatch(block.text().rstrip()) or "9" * 100 in block.text()
                assert whole or len(block.text()) < 70, block.text()  # the live line at most
                assert QTextCursor(block).currentTable() is not None, block.text()  # boxed
        if size < len(text):  # one header (its language, Copy), however many pieces
            assert view.toHtml().count('href="copy:') == 1
        checked.append(size)

    view.reply_rendered.connect(check)
    add_text(view, text)  # all at once: cut by the budget, update after update
    qtbot.waitUntil(lambda: bool(checked) and checked[-1] == len(text))
    assert len(checked) > 8
    with qtbot.waitSignal(view.reply_ended, timeout=5_000):
        view.end_reply(ReplyEnd(status="completed", usage={}))
    shown = [b for b in blocks_of(view) if "value_" in b.text()]
    assert [b.text().rstrip() for b in shown] == code
    tables = {QTextCursor(b).currentTable().firstPosition() for b in shown}  # type: ignore[union-attr]
    assert len(tables) == 1  # drawn whole at the end: one block


def blocks_of(view: Transcript) -> list[QTextBlock]:
    found = []
    block = view.document().begin()
    while block.isValid():
        found.append(block)
        block = block.next()
    return found
