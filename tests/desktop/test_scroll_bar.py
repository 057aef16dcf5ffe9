"""The transcript's scroll bar is always there, with no handle while there is nothing to
scroll: a reply outgrowing the view leaves the width of its lines alone, so Qt lays nothing
out again in that frame (issue 16: it was the costliest frame of a reply, 6-10 ms)."""

from __future__ import annotations

from typing import Any

from PySide6.QtGui import QImage, QPalette

from desktop.widgets.transcript import Transcript
from tests.desktop.test_growing_paragraph import lines, streaming
from tests.desktop.widgets.transcript.replies import add_text
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
