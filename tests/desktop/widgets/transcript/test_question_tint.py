"""The user's messages: paragraphs on a tint the transcript paints behind their lines and
padding (question_tint.py), the same live and reopened, in either theme."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QPoint
from PySide6.QtGui import QColor, QImage, QPalette
from PySide6.QtWidgets import QApplication

from desktop.widgets.transcript import Transcript
from desktop.widgets.transcript.question_tint import PADDING_PX, QUESTION_STATE
from server.types import MessageJSON
from tests.support.drawn import laid_out

QUESTION = "Line one\nline two\n\nA paragraph after a blank line <b>not bold</b> & so on."


def question(message_id: str, text: str) -> MessageJSON:
    return {"id": message_id, "role": "user", "content": text, "model": None,
            "status": "complete", "parts": []}  # type: ignore[typeddict-item]  # fmt: skip


def view_of(qtbot: Any) -> Transcript:
    view = Transcript()
    qtbot.addWidget(view)
    view.resize(640, 400)
    view.show()
    qtbot.waitExposed(view)
    return view


def question_blocks(view: Transcript) -> list[Any]:
    found = []
    block = view.document().begin()
    while block.isValid():
        if block.userState() == QUESTION_STATE:
            found.append(block)
        block = block.next()
    return found


def viewport_image(view: Transcript) -> QImage:
    return view.viewport().grab().toImage()


def colour_at(image: QImage, x: float, y: float) -> str:
    return QColor(image.pixel(QPoint(int(x), int(y)))).name()


def tint_edges(view: Transcript, block: Any = None) -> tuple[float, float, float]:
    """A question's lines' top and bottom and its left edge, in viewport pixels (`block`: the
    view's only question if None)."""
    if block is None:
        (block,) = question_blocks(view)
    rect = view.document().documentLayout().blockBoundingRect(block)
    scrolled = view.verticalScrollBar().value()
    return rect.top() - scrolled, rect.bottom() - scrolled, rect.left()


def test_the_tint_covers_the_padding_and_stops_there(qtbot: Any) -> None:
    view = view_of(qtbot)
    view.begin_reply(QUESTION, "m", ("u", "a"))
    qtbot.waitUntil(lambda: laid_out(view))
    tint, base = (
        QColor(view._colours.tint).name(),
        view.palette().color(QPalette.ColorRole.Base).name(),
    )
    assert tint != base
    top, bottom, left = tint_edges(view)
    image = viewport_image(view)
    right = left + view._editor.line_width()
    # Inside the padding, above, below, left and right of the lines: tint (no text there).
    assert colour_at(image, left + 2, top - PADDING_PX + 2) == tint
    assert colour_at(image, left + 2, bottom + PADDING_PX - 2) == tint
    assert colour_at(image, right - 2, (top + bottom) / 2) == tint
    # Just outside it: the view's own background.
    assert colour_at(image, left + 2, top - PADDING_PX - 2) == base
    assert colour_at(image, left - 2, (top + bottom) / 2) == base
    assert colour_at(image, right + 2, (top + bottom) / 2) == base


def test_the_words_are_shown_as_typed_in_one_paragraph(qtbot: Any) -> None:
    view = view_of(qtbot)
    view.begin_reply(QUESTION, "m", ("u", "a"))
    (block,) = question_blocks(view)
    assert block.text().replace("\u2028", "\n") == QUESTION  # no markup read in it


def test_a_question_lies_where_it_lies_when_the_chat_is_reopened(qtbot: Any) -> None:
    live = view_of(qtbot)
    live.show_conversation([question("u0", "An earlier question")])
    live.begin_reply(QUESTION, "m", ("u1", "a1"))
    reopened = view_of(qtbot)
    reopened.show_conversation([question("u0", "An earlier question"), question("u1", QUESTION)])
    geometry = [
        [(b.text(), b.document().documentLayout().blockBoundingRect(b)) for b in blocks]
        for blocks in (question_blocks(live), question_blocks(reopened))
    ]
    assert geometry[0] == geometry[1]
    assert len(geometry[0]) == 2


def test_a_question_scrolled_half_out_of_view_keeps_its_tint(qtbot: Any) -> None:
    view = view_of(qtbot)
    long_question = "\n".join(f"line {n}" for n in range(60))
    view.show_conversation([question("u0", long_question), question("u1", "below")])
    first = question_blocks(view)[0]
    rect = view.document().documentLayout().blockBoundingRect(first)
    view.verticalScrollBar().setValue(int(rect.bottom()) - 5)  # its last line at the top
    qtbot.waitUntil(lambda: laid_out(view))
    top, _bottom, left = tint_edges(view, first)
    image = viewport_image(view)
    tint = QColor(view._colours.tint).name()
    assert top < 0  # it starts above the viewport
    assert colour_at(image, left + 2, 1) == tint
    assert colour_at(image, left + view._editor.line_width() - 2, 8) == tint  # its bottom padding


def test_the_tint_follows_a_change_of_theme_without_drawing_again(qtbot: Any) -> None:
    view = view_of(qtbot)
    view.begin_reply(QUESTION, "m", ("u", "a"))
    light = QColor(view._colours.tint).name()
    palette = QApplication.palette()
    palette.setColor(QPalette.ColorRole.Base, QColor("#1e1e1e"))
    palette.setColor(QPalette.ColorRole.Text, QColor("#e0e0e0"))
    view.setPalette(palette)
    qtbot.waitUntil(lambda: QColor(view._colours.tint).name() != light and laid_out(view))
    dark = QColor(view._colours.tint).name()
    assert dark != light
    top, _bottom, left = tint_edges(view)
    assert colour_at(viewport_image(view), left + 2, top - PADDING_PX + 2) == dark
