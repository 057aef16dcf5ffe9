"""Where the document sits in the view: the reading column, a message's time on hover, the
view following a reply's end unless scrolled up, and the scroll bar, always there, with no
handle while there is nothing to scroll: a reply outgrowing the view leaves the width of its
lines alone, so Qt lays nothing out again in that frame (issue 16: it was the costliest frame
of a reply, 6-10 ms)."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QImage, QPalette, QWheelEvent
from PySide6.QtWidgets import QAbstractSlider, QApplication

from desktop.widgets.transcript import Transcript
from desktop.widgets.transcript.viewport import FOLLOW_SLACK_PX
from tests.desktop.widgets.transcript.replies import add_text
from tests.desktop.widgets.transcript.test_growing_paragraph import lines, streaming
from tests.support.drawn import laid_out

WORDS = " ".join(f"word{n}" for n in range(900))  # several screens at 600 x 300


def bar_strip(view: Transcript) -> QImage:
    """The pixels of the scroll bar's column, as shown."""
    bar = view.verticalScrollBar()
    return bar.grab().toImage()


def colours(image: QImage) -> set[str]:
    return {
        image.pixelColor(x, y).name()
        for x in range(0, image.width(), 2)
        for y in range(0, image.height(), 3)
    }


def test_a_reply_outgrowing_the_view_keeps_the_width_of_its_lines(qtbot: Any) -> None:
    view = streaming(qtbot, 600, 300)
    bar = view.verticalScrollBar()
    sizes: list[int] = []
    view.reply_rendered.connect(lambda size, _cost: sizes.append(size))
    add_text(view, WORDS[:300])
    qtbot.waitUntil(lambda: bool(sizes) and sizes[-1] == 300)
    qtbot.waitUntil(lambda: laid_out(view))
    assert bar.maximum() == 0
    assert bar.isVisible()  # there before it is needed
    assert not bar.isEnabled()
    width = view.document().textWidth()
    before = lines(view)
    viewport_width = view.viewport().width()

    add_text(view, WORDS[300:])
    qtbot.waitUntil(lambda: sizes[-1] == len(WORDS), timeout=10_000)
    qtbot.waitUntil(lambda: laid_out(view))
    assert bar.maximum() > 0 and bar.isEnabled()
    assert bar.value() == bar.maximum()  # following the end
    # Nothing moved aside for the bar: the same width, and the first lines where they were.
    assert view.viewport().width() == viewport_width
    assert view.document().textWidth() == width
    assert lines(view)[: len(before) - 1] == before[:-1]


def test_the_bar_shows_no_handle_until_there_is_something_to_scroll(qtbot: Any) -> None:
    view = streaming(qtbot, 600, 300)
    base = view.palette().color(QPalette.ColorRole.Base).name()
    add_text(view, "A short reply.")
    qtbot.waitUntil(lambda: "A short reply." in view.toPlainText())
    qtbot.waitUntil(lambda: laid_out(view))
    assert colours(bar_strip(view)) == {base}  # an empty column, the transcript's own colour

    add_text(view, " " + WORDS)
    qtbot.waitUntil(lambda: view.verticalScrollBar().isEnabled(), timeout=10_000)
    qtbot.waitUntil(lambda: laid_out(view))
    assert colours(bar_strip(view)) - {base}  # the handle is drawn

    # A new conversation with nothing to scroll: no handle again.
    view.clear_conversation()
    qtbot.waitUntil(lambda: not view.verticalScrollBar().isEnabled())
    qtbot.waitUntil(lambda: laid_out(view))
    assert colours(bar_strip(view)) == {base}


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
