"""The transcript grows a reply incrementally and never takes a whole burst in one update."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QWheelEvent
from PySide6.QtWidgets import QAbstractSlider, QApplication

from desktop.client import ReplyEnd
from desktop.widgets.transcript import Transcript
from desktop.widgets.transcript.pacing import (
    FLUSH_BUDGET_CHARS,
    FLUSH_MAX_CHARS,
    FLUSH_MIN_CHARS,
    FLUSH_TARGET_S,
    next_budget,
)
from desktop.widgets.transcript.viewport import FOLLOW_SLACK_PX
from tests.desktop.test_growing_paragraph import streaming
from tests.desktop.widgets.transcript.replies import add_text
from tests.support.drawn import laid_out


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


def test_text_the_server_saved_beyond_what_was_shown_joins_the_same_paragraph(
    qtbot: Any,
) -> None:
    # Stop: the view got "... flavor and"; the server had generated " aroma." too.
    shown = "Intro paragraph.\n\nEach loaf had its own unique flavor and"
    view, _ = grow(qtbot, shown)
    saved = ReplyEnd(status="interrupted", ended_by="client_hangup", content=shown + " aroma.")
    with qtbot.waitSignal(view.reply_ended, timeout=5_000):
        view.end_reply(saved)
    plain = view.toPlainText()
    assert "its own unique flavor and aroma." in plain  # one paragraph, as when reopened
    assert "Stopped" in plain


def test_the_figures_under_a_reply_count_its_tokens_in_words() -> None:
    from desktop.widgets.badges import stats_for

    assert stats_for({"completion_tokens": 1}).endswith("1 token")
    assert stats_for({"completion_tokens": 2}).endswith("2 tokens")


def test_the_view_follows_the_end_through_big_updates_unless_scrolled_up(qtbot: Any) -> None:
    view = Transcript()
    qtbot.addWidget(view)
    view.resize(600, 300)
    view.show()
    bar = view.verticalScrollBar()
    view.begin_reply("question", "model")
    # Updates far taller than the window at once (a continued reply drawn again from its
    # saved text, a big burst): the view stays at the end.
    for round_ in range(3):
        add_text(view, "".join(f"\n\nParagraph {round_}-{i}." for i in range(40)))
        qtbot.waitUntil(lambda r=round_: f"Paragraph {r}-39." in view.toPlainText())
        qtbot.waitUntil(lambda: laid_out(view))
        assert bar.maximum() > 0 and bar.value() == bar.maximum()
    # Scrolled up to read: later text does not pull the view down.
    bar.setValue(bar.maximum() // 3)
    reading = bar.value()
    add_text(view, "\n\nOne more paragraph.")
    qtbot.waitUntil(lambda: "One more paragraph." in view.toPlainText())
    qtbot.waitUntil(lambda: laid_out(view))
    assert bar.value() == reading
    # Back at the end: followed again.
    bar.setValue(bar.maximum())
    add_text(view, "".join(f"\n\nLast {i}." for i in range(40)))
    qtbot.waitUntil(lambda: "Last 39." in view.toPlainText())
    qtbot.waitUntil(lambda: laid_out(view))
    assert bar.value() == bar.maximum()


def roll_wheel(view: Transcript, notches: int) -> None:
    """The mouse wheel over the view, as a user rolls it: up for notches > 0."""
    centre = QPointF(view.viewport().rect().center())
    wheel = QWheelEvent(
        centre,
        QPointF(view.viewport().mapToGlobal(centre.toPoint())),
        QPoint(0, 0),
        QPoint(0, 120 * notches),
        Qt.MouseButton.NoButton,
        Qt.KeyboardModifier.NoModifier,
        Qt.ScrollPhase.NoScrollPhase,
        False,
    )
    QApplication.sendEvent(view.viewport(), wheel)


def grown(qtbot: Any, view: Transcript, label: str, count: int) -> None:
    """`count` paragraphs more in the growing reply, drawn."""
    add_text(view, "".join(f"\n\n{label} {i}." for i in range(count)))
    qtbot.waitUntil(lambda: f"{label} {count - 1}." in view.toPlainText())
    qtbot.waitUntil(lambda: laid_out(view))


def test_a_wheel_notch_up_while_a_reply_streams_stops_the_view_following(qtbot: Any) -> None:
    view = streaming(qtbot, 600, 300)
    bar = view.verticalScrollBar()
    grown(qtbot, view, "Paragraph", 60)
    assert bar.value() == bar.maximum() > 0
    roll_wheel(view, 1)  # one notch: less than the slack that counts as the end
    reading = bar.value()
    assert 0 < bar.maximum() - reading <= FOLLOW_SLACK_PX
    for n in range(3):  # later text, update after update, leaves the view where it is
        add_text(view, f"\n\nLater {n}.")
        qtbot.waitUntil(lambda n=n: f"Later {n}." in view.toPlainText())
        qtbot.waitUntil(lambda: laid_out(view))
        assert bar.value() == reading
    roll_wheel(view, -3)  # back down to the end: followed again
    assert bar.value() > reading
    grown(qtbot, view, "Last", 20)
    assert bar.value() == bar.maximum()


def test_a_new_chat_follows_its_reply_though_the_last_was_left_scrolled_up(qtbot: Any) -> None:
    view = streaming(qtbot, 600, 300)
    bar = view.verticalScrollBar()
    grown(qtbot, view, "Paragraph", 60)
    view.end_reply(None)
    bar.triggerAction(QAbstractSlider.SliderAction.SliderToMinimum)  # the user, to the top
    assert bar.value() == 0
    view.show_conversation([])  # a new chat: its bar at 0 too, so it did not move
    view.begin_reply("another question", "model")
    grown(qtbot, view, "New", 60)
    assert bar.value() == bar.maximum() > 0


def test_lines_keep_a_readable_length_and_a_message_tells_its_time(qtbot: Any) -> None:
    from desktop.widgets.transcript.viewport import COLUMN_PX

    view = Transcript()
    qtbot.addWidget(view)
    view.resize(1600, 500)
    view.show()
    message = {"id": "m1", "conversation_id": "c", "role": "user", "content": "Hello there",
               "status": "completed", "ended_by": None, "error": None, "model": None,
               "created_at": 1764543600.0, "completed_at": 1764543600.0, "usage": None,
               "parts": [], "parent_id": None, "continued": None}  # fmt: skip
    view.show_conversation([message])  # type: ignore[list-item]
    frame = view.document().rootFrame().frameFormat()
    width = view.viewport().width() - frame.leftMargin() - frame.rightMargin()
    assert width <= COLUMN_PX and frame.leftMargin() == frame.rightMargin()
    at = view.document().find("You")
    assert "2025" in at.charFormat().toolTip()  # the day it was sent, on hover
    view.resize(500, 500)
    qtbot.waitUntil(lambda: view.document().rootFrame().frameFormat().leftMargin() < 20)


def test_the_text_laid_out_per_update_follows_the_time_updates_take() -> None:
    slow, quick = FLUSH_TARGET_S * 2, FLUSH_TARGET_S / 4
    assert next_budget(1000, slow, full=True) == 500
    assert next_budget(FLUSH_MIN_CHARS, slow, full=True) == FLUSH_MIN_CHARS
    assert next_budget(500, quick, full=True) == 625
    assert next_budget(FLUSH_MAX_CHARS, quick, full=True) == FLUSH_MAX_CHARS
    assert next_budget(500, quick, full=False) == 500  # nothing more was waiting
    assert FLUSH_MIN_CHARS <= FLUSH_BUDGET_CHARS <= FLUSH_MAX_CHARS


def test_the_scroll_bar_is_drawn_in_the_palettes_colours_and_follows_a_switch(
    qtbot: Any,
) -> None:
    from PySide6.QtGui import QColor, QPalette

    view = Transcript()
    qtbot.addWidget(view)
    view.resize(400, 200)
    view.show()
    view.begin_reply("question", "model")
    add_text(view, "".join(f"\n\nParagraph {i}." for i in range(60)))
    qtbot.waitUntil(lambda: "Paragraph 59." in view.toPlainText())
    bar = view.verticalScrollBar()
    bar.setValue(0)  # the handle at the top: the groove's bottom pixel is background

    def groove_and_handle() -> tuple[str, str]:
        image = bar.grab().toImage()
        middle = image.width() // 2
        return image.pixelColor(middle, image.height() - 2).name(), image.pixelColor(
            middle, 6
        ).name()

    base = view.palette().color(QPalette.ColorRole.Base).name()
    groove, handle = groove_and_handle()
    assert groove == base and handle != base
    dark = QPalette(view.palette())
    dark.setColor(QPalette.ColorRole.Base, QColor("#1b1b1d"))
    dark.setColor(QPalette.ColorRole.Text, QColor("#e8e8e8"))
    view.setPalette(dark)
    qtbot.waitUntil(lambda: groove_and_handle()[0] == "#1b1b1d")
    assert groove_and_handle()[1] not in ("#1b1b1d", handle)  # lighter than the background
