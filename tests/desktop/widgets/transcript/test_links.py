"""What the transcript's links do: a web link is handed to the window (which confirms it), any
other scheme is not followed; a message's Copy puts its text on the clipboard."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QUrl
from PySide6.QtGui import QGuiApplication

from desktop.widgets.transcript import Transcript
from tests.desktop.widgets.transcript.test_question_tint import question


def test_only_a_web_link_with_a_host_is_followed(qtbot: Any) -> None:
    view = Transcript()
    qtbot.addWidget(view)
    clicked: list[QUrl] = []
    view.link_clicked.connect(clicked.append)
    for url in ("file:///etc/passwd", "javascript:alert(1)", "relative/path", "https://"):
        view.open_link(QUrl(url))
    assert clicked == []
    view.open_link(QUrl("https://example.org/a"))
    assert [url.toString() for url in clicked] == ["https://example.org/a"]


def test_a_message_s_copy_link_copies_its_text(qtbot: Any) -> None:
    view = Transcript()
    qtbot.addWidget(view)
    view.show_conversation([question("u1", "What is a <b>hash</b> table?")])
    with qtbot.waitSignal(view.code_copied, timeout=2_000):
        view.open_link(QUrl("msg:copy/u1"))
    assert QGuiApplication.clipboard().text() == "What is a <b>hash</b> table?"
    assert view.message_text("u1") == "What is a <b>hash</b> table?"
