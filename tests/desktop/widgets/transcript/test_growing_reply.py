"""The transcript grows a reply incrementally and never takes a whole burst in one update."""

from __future__ import annotations

from typing import Any

from desktop.client import ReplyEnd
from desktop.reply_events import ReplyParts
from desktop.widgets.transcript import Transcript
from desktop.widgets.transcript.pacing import (
    FLUSH_BUDGET_CHARS,
    FLUSH_MAX_CHARS,
)
from tests.desktop.test_reply_events import step
from tests.desktop.widgets.transcript.replies import add_step, add_text


def grow(qtbot: Any, text: str, pieces: int = 1) -> tuple[Transcript, list[int]]:
    """A reply grown from `text` in `pieces`; returns the view and the sizes it showed."""
    view = Transcript()
    qtbot.addWidget(view)
    view.begin_reply("question", "model")
    step = max(1, len(text) // pieces)
    for start in range(0, len(text), step):
        add_text(view, text[start : start + step])
    sizes: list[int] = []
    view.reply_rendered.connect(lambda size, _cost: sizes.append(size))
    qtbot.waitUntil(lambda: bool(sizes) and sizes[-1] == len(text), timeout=10_000)
    return view, sizes


def test_a_burst_is_spread_over_several_updates_and_nothing_is_lost(qtbot: Any) -> None:
    text = "".join(f"word{i} " for i in range(6000))  # ~45,000 characters at once
    view, sizes = grow(qtbot, text)
    assert len(sizes) >= len(text) // FLUSH_MAX_CHARS
    shown = view.toPlainText().split()
    assert shown[-1] == "word5999" and "word3000" in shown


def test_an_unbreakable_run_still_completes(qtbot: Any) -> None:
    text = "x" * (FLUSH_BUDGET_CHARS * 3 + 17)
    view, _ = grow(qtbot, text)
    assert view.toPlainText().replace("\n", "").count("x") == len(text)


def test_a_long_code_block_stays_code_across_updates(qtbot: Any) -> None:
    text = "```python\n" + "".join(f"value_{i} = {i}\n" for i in range(800)) + "```\n"
    view, _ = grow(qtbot, text, pieces=40)
    with qtbot.waitSignal(view.reply_ended, timeout=5_000):
        view.end_reply(ReplyEnd(status="completed", usage={}))
    plain = view.toPlainText()
    assert "value_799 = 799" in plain
    assert "```" not in plain  # every piece was rendered as code, none as prose


def test_a_reply_shown_again_draws_what_it_holds_in_the_order_it_came(qtbot: Any) -> None:
    # Its chat opened again while it streams: the transcript is given the reply's parts,
    # held by the reply (desktop/reply.py), and draws them at once, then what follows.
    parts = ReplyParts()
    parts.add_text("Let me look.")
    parts.add_step(step("running"))
    parts.add_step(step("completed"))  # changed in its place: one line
    parts.add_text("It says hello.")
    view = Transcript()
    qtbot.addWidget(view)
    view.begin_reply("question", "model", ("u", "a"), parts)
    qtbot.waitUntil(lambda: "It says hello." in view.toPlainText())
    text = view.toPlainText()
    assert text.index("Let me look.") < text.index("read_file") < text.index("It says hello.")
    assert text.count("read_file") == 1 and "done" in text
    parts.add_text(" And more.")
    view.reply_grew()
    qtbot.waitUntil(lambda: "And more." in view.toPlainText())


def test_a_step_that_changes_is_drawn_again_in_its_place(qtbot: Any) -> None:
    view = Transcript()
    qtbot.addWidget(view)
    view.begin_reply("question", "model")
    add_text(view, "Looking.")
    add_step(view, step("running"))
    assert "running…" in view.toPlainText()
    add_step(view, step("completed"))  # drawn again soon (changes are coalesced)
    qtbot.waitUntil(lambda: "running…" not in view.toPlainText(), timeout=2_000)
    text = view.toPlainText()
    assert text.count("read_file") == 1 and "done" in text
    with qtbot.waitSignal(view.reply_ended, timeout=5_000):
        view.end_reply(ReplyEnd(status="completed", usage={}))
    assert view.toPlainText().count("read_file") == 1
