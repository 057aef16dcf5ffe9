"""A paragraph longer than a block may grow to (JOIN_MAX_CHARS) while it streams: kept in
pieces of about that length, each cut at a line's start with no margin between, so it reads as
one paragraph, line for line where the paragraph drawn whole puts it; one block again when the
lines wrap anew (another width, another font); and copied whole."""

from __future__ import annotations

import itertools
from typing import Any

from PySide6.QtGui import QFont, QTextCursor

from desktop.client import ReplyEnd
from desktop.widgets.find_bar import FindBar
from desktop.widgets.transcript import Transcript
from desktop.widgets.transcript.growing_paragraph import JOIN_MAX_CHARS
from desktop.widgets.transcript.long_paragraph import CONTINUED_STATE
from server.types import ToolPartJSON
from tests.desktop.test_markdown_render import reopened
from tests.desktop.widgets.transcript.replies import add_step, add_text
from tests.desktop.widgets.transcript.test_growing_paragraph import (
    blocks,
    drawn_whole,
    lines,
    stream,
    streaming,
)
from tests.support.drawn import laid_out, undrawn_blocks

ENDLESS = " ".join(f"w{n}" for n in range(1_200))  # one paragraph, ~6,000 characters


def streamed(qtbot: Any, text: str = ENDLESS) -> Transcript:
    """A reply of `text` streamed in 60-character pieces and ended."""
    view = streaming(qtbot)
    stream(qtbot, view, text, step=60)
    end(qtbot, view)
    return view


def end(qtbot: Any, view: Transcript) -> None:
    with qtbot.waitSignal(view.reply_ended, timeout=5_000):
        view.end_reply(ReplyEnd(status="completed", usage={}))


def across_the_first_cut(view: Transcript) -> str:
    """The words on either side of the first cut of ENDLESS."""
    first = pieces(view)[0]
    return f"{first.split()[-1]} {ENDLESS[len(first) :].split()[0]}"


def pieces(view: Transcript) -> list[str]:
    return [b for b in blocks(view) if b.startswith("w")]


def test_a_paragraph_longer_than_a_block_may_grow_stays_in_pieces_that_read_as_one(
    qtbot: Any,
) -> None:
    """Past JOIN_MAX_CHARS its pieces stay blocks of their own (put back together at its
    end, the paragraph would be laid out whole, at a cost in proportion to its length), yet
    every line lies where the paragraph drawn whole puts it: no gap, no short line."""
    view = streaming(qtbot)
    stream(qtbot, view, ENDLESS[:4_000], step=60)
    live = lines(view)
    assert live == drawn_whole(qtbot, ENDLESS[:4_000])[: len(live)]
    stream(qtbot, view, ENDLESS[4_000:], step=60)
    end(qtbot, view)
    kept = pieces(view)
    assert "".join(kept) == ENDLESS
    # A piece per JOIN_MAX_CHARS or so, not a piece per line sealed while it grew.
    assert 3 <= len(kept) <= len(ENDLESS) // JOIN_MAX_CHARS + 1, [len(p) for p in kept]
    assert all(len(piece) <= JOIN_MAX_CHARS + 100 for piece in kept)
    assert lines(view) == drawn_whole(qtbot, ENDLESS)


def test_a_paragraph_is_kept_in_pieces_in_an_update_of_its_own(qtbot: Any) -> None:
    """Keeping the pieces lays the paragraph so far out again (unseen): done in the update
    that cut it, the two made the costliest updates of a long paragraph (issue 16). The update
    that keeps them draws no text; the next one goes on."""
    view = streaming(qtbot)
    updates: list[tuple[int, int]] = []  # (characters shown, pieces kept so far)
    view.reply_rendered.connect(lambda size, _cost: updates.append((size, len(kept(view)))))
    stream(qtbot, view, ENDLESS, step=60)
    qtbot.waitUntil(lambda: len(kept(view)) == len(ENDLESS) // JOIN_MAX_CHARS)
    keeping = [
        (before, after) for before, after in itertools.pairwise(updates) if after[1] > before[1]
    ]
    assert len(keeping) == len(ENDLESS) // JOIN_MAX_CHARS, updates
    assert all(after[0] == before[0] for before, after in keeping), keeping
    live = lines(view)
    assert live == drawn_whole(qtbot, ENDLESS)[: len(live)]


def kept(view: Transcript) -> list[str]:
    """The pieces of a paragraph kept so far (each marked as going on in the next block)."""
    found = []
    block = view.document().begin()
    while block.isValid():
        if block.userState() == CONTINUED_STATE:
            found.append(block.text())
        block = block.next()
    return found


def test_a_paragraph_kept_in_pieces_is_copied_whole(qtbot: Any) -> None:
    view = streamed(qtbot, "Before it.\n\n" + ENDLESS + "\n\nAfter it.")
    assert len(pieces(view)) >= 3
    document = view.document()
    selection = QTextCursor(document)
    selection.setPosition(document.find("it.").selectionStart())
    selection.setPosition(document.find("After").selectionEnd(), QTextCursor.MoveMode.KeepAnchor)
    view.setTextCursor(selection)
    copied = view.createMimeDataFromSelection()
    assert copied.text() == "it.\n" + ENDLESS + "\nAfter"
    assert "w1199" in copied.html()


def test_a_paragraph_kept_in_pieces_is_one_again_at_another_width(qtbot: Any) -> None:
    view = streamed(qtbot)
    view.resize(560, 600)
    qtbot.waitUntil(lambda: pieces(view) == [ENDLESS])
    assert lines(view) == drawn_whole(qtbot, ENDLESS, width=560)


def test_a_paragraph_kept_in_pieces_is_one_again_in_another_font(qtbot: Any) -> None:
    """View › Zoom changes the font, not the width: the lines wrap anew all the same."""
    view = streamed(qtbot)
    whole = reopened(qtbot, ENDLESS)
    whole.resize(800, 600)
    whole.show()
    font = QFont(view.font())
    font.setPointSizeF(font.pointSizeF() * 1.1)
    for shown in (view, whole):
        shown.setFont(font)  # as the zoom does (the window's font, inherited)
    qtbot.waitUntil(lambda: pieces(view) == [ENDLESS])
    assert lines(view) == lines(whole)


def test_a_narrower_window_mid_paragraph_joins_its_kept_pieces_and_goes_on(qtbot: Any) -> None:
    view = streaming(qtbot)
    stream(qtbot, view, ENDLESS[:3_000], step=60)
    view.resize(560, 600)
    qtbot.waitUntil(lambda: len(pieces(view)) == 1)
    stream(qtbot, view, ENDLESS[3_000:5_000], step=60)
    live = lines(view)
    assert live == drawn_whole(qtbot, ENDLESS[:5_000], width=560)[: len(live)]
    stream(qtbot, view, ENDLESS[5_000:] + "\n\nThe end.", step=60)
    end(qtbot, view)
    assert lines(view) == drawn_whole(qtbot, ENDLESS + "\n\nThe end.", width=560)


def test_joining_the_pieces_at_another_width_leaves_nothing_below_them_undrawn(
    qtbot: Any,
) -> None:
    """Qt lays a long document out a part at a time after a change of width: the pieces
    are joined only once it is laid out to its end (an edit above the part still to lay out
    left the blocks below it with no lines, never painted)."""
    view = streamed(qtbot)
    question = "\n".join(f"line {n} " + "x" * 80 for n in range(40))  # drawn in pieces
    view.begin_reply(question, "m", ("u1", "a1"))
    stream(qtbot, view, "Short answer.")
    end(qtbot, view)
    view.resize(560, 600)
    # Laid out again to the end; with the bug the blocks below stayed without lines for good.
    qtbot.waitUntil(lambda: laid_out(view), timeout=10_000)
    assert undrawn_blocks(view) == []
    assert "Short answer." in blocks(view)


def test_find_sees_a_paragraph_kept_in_pieces_whole(qtbot: Any) -> None:
    """Find matches within a block: opening it joins the pieces, so words on either side of
    a cut are found together."""
    view = streamed(qtbot)
    across = across_the_first_cut(view)
    assert view.document().find(across).isNull()  # in two blocks
    bar = FindBar(view, None, view.show_all_to_find)
    qtbot.addWidget(bar)
    bar.open()
    bar.field.setText(across)
    assert bar.matches == 1
    assert pieces(view) == [ENDLESS]


def test_find_joins_the_pieces_kept_while_it_is_open(qtbot: Any) -> None:
    view = streaming(qtbot)
    bar = FindBar(view, None, view.show_all_to_find)
    qtbot.addWidget(bar)
    bar.open()
    stream(qtbot, view, ENDLESS, step=60)  # kept in pieces while Find is open
    across = across_the_first_cut(view)
    assert view.document().find(across).isNull()
    bar.field.setText(across)
    assert bar.matches == 1


def test_a_tool_step_right_after_a_cut_is_not_moved_by_keeping_the_pieces(qtbot: Any) -> None:
    """A step may come between the update that cut a long paragraph and the one that would
    keep its pieces: keeping them then would move the step's line from where the transcript
    keeps drawing it. The paragraph is over: its pieces are put back together at the end."""
    view = streaming(qtbot)
    sizes: list[int] = []
    view.reply_rendered.connect(lambda size, _cost: sizes.append(size))
    for start in range(0, len(ENDLESS), 60):
        add_text(view, ENDLESS[start : start + 60])
        qtbot.waitUntil(lambda start=start: bool(sizes) and sizes[-1] == start + 60)
        if view._growing.reply.keep_due:
            break
    assert view._growing.reply.keep_due, "no cut past JOIN_MAX_CHARS"
    shown, pieces_kept = sizes[-1], len(kept(view))
    step: ToolPartJSON = {"type": "tool", "id": "c1", "server": "t", "name": "echo",
                          "arguments": "{}", "status": "running", "result": None,
                          "started_at": 0.0, "ended_at": None}  # fmt: skip
    add_step(view, step)
    add_step(view, {**step, "status": "completed", "result": "ok", "ended_at": 1.0})
    add_text(view, "After the step.")
    qtbot.waitUntil(lambda: "After the step." in view.toPlainText())
    assert len(kept(view)) == pieces_kept
    for ended in (False, True):  # live, and drawn whole from its parts at the ending
        if ended:
            end(qtbot, view)
        text = view.toPlainText()
        step_lines = [line for line in text.splitlines() if "echo(" in line]
        assert len(step_lines) == 1 and step_lines[0].startswith("⚙ t · echo("), step_lines
        assert text.index(ENDLESS[shown - 20 : shown]) < text.index("echo")
        assert text.index("echo") < text.index("After the step.")
