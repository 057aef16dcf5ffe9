"""A reply's sources in the transcript (issue 43 items 5-7): each listed once, in the order of
its numbers; its "[n]" marks links to them (not in code, not a number no source has), while
it streams and once reopened; and the passages "Use my documents" gave the model that it did
not cite, listed under it. A click on a mark does what a click on the source's line does."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, QUrl
from PySide6.QtGui import QTextCursor

from desktop.client import ReplyEnd
from desktop.reply_events import ReplyParts
from desktop.widgets.source_dialog import SourceDialog
from desktop.widgets.transcript import Transcript
from server.types import CitationPartJSON, PartJSON
from tests.desktop.widgets.transcript.replies import add_text, told
from tests.desktop.widgets.transcript.test_question_tint import view_of

TEXT = "Aardvarks dig [2], as [1] says. Not `[1]` nor [9].\n\n```\nx = [1]\n```\n"


def source(n: int, name: str, cited: bool = True) -> CitationPartJSON:
    part: CitationPartJSON = {
        "type": "citation", "n": n, "path": f"/home/u/docs/{name}", "page": None,
        "lines": [n, n + 4], "quote": f"passage {n}",
    }  # fmt: skip
    if not cited:
        part["cited"] = False
    return part


def reopened(qtbot: Any, parts: list[PartJSON], content: str) -> Transcript:
    view = view_of(qtbot)
    base = {"conversation_id": "c", "status": "completed", "ended_by": None, "error": None,
            "created_at": 0.0, "completed_at": 0.0}  # fmt: skip
    view.show_conversation([
        {**base, "id": "u", "role": "user", "content": "aardvarks?", "model": None,
         "usage": None, "parts": []},
        {**base, "id": "a", "role": "assistant", "content": content, "model": "m",
         "usage": {}, "parts": parts},
    ])  # type: ignore[list-item]  # fmt: skip
    return view


def streamed(qtbot: Any, items: list[str | CitationPartJSON], end: bool = True) -> Transcript:
    """A reply grown from `items` (text, and sources as the server sends them), all drawn."""
    view = view_of(qtbot)
    parts = ReplyParts()
    view.begin_reply("aardvarks?", "m", ("u", "a"), parts)
    drawn: list[int] = []
    view.reply_rendered.connect(lambda size, _cost: drawn.append(size))
    for item in items:
        if isinstance(item, str):
            add_text(view, item)
        else:
            parts.add_citation(item)
            view.reply_grew()
    text = "".join(i for i in items if isinstance(i, str))
    qtbot.waitUntil(lambda: told(view) == len(text) and drawn[-1:] == [len(text)])
    if end:
        with qtbot.waitSignal(view.reply_ended, timeout=5_000):
            view.end_reply(ReplyEnd(status="completed", usage={}))
    return view


def source_lines(view: Transcript) -> list[str]:
    return [line for line in view.toPlainText().splitlines() if line.startswith("[")]


def anchors(view: Transcript) -> dict[str, list[str]]:
    """Each link's text in the document -> the links it is drawn with, in order."""
    found: dict[str, list[str]] = {}
    block = view.document().begin()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            fragment = it.fragment()
            href = fragment.charFormat().anchorHref()
            if href:
                found.setdefault(fragment.text(), []).append(href)
            it += 1
        block = block.next()
    return found


def click(qtbot: Any, view: Transcript, text: str) -> list[dict[str, Any]]:
    """Click with the mouse on the first `text` drawn; returns the sources it opened."""
    cursor = view.document().find(text)
    assert not cursor.isNull(), text
    middle = QTextCursor(view.document())
    middle.setPosition(cursor.selectionStart() + 1)
    view.setTextCursor(middle)
    view.ensureCursorVisible()
    where = view.cursorRect(middle).center()
    opened: list[dict[str, Any]] = []
    view.citation_clicked.connect(opened.append)
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=where)
    view.citation_clicked.disconnect(opened.append)
    return opened


# -- item 5: one line per source, in order ----------------------------------------------------


def test_a_streamed_reply_lists_each_source_once_by_number_below_its_text(qtbot: Any) -> None:
    # Cited [2] first, then [1]; and [1] also given in the prompt before (not cited then).
    view = streamed(
        qtbot,
        [source(1, "a.md", cited=False), "Aardvarks dig [2]", source(2, "b.md"), ", as [1]",
         source(1, "a.md"), " says."],
    )  # fmt: skip
    assert source_lines(view) == [
        "[1] /home/u/docs/a.md, lines 1–5",
        "[2] /home/u/docs/b.md, lines 2–6",
    ]
    plain = view.toPlainText()
    assert "Aardvarks dig [2], as [1] says." in plain  # one paragraph: no line inside it
    assert "given to the model" not in plain  # the given one was cited


def test_a_reopened_reply_lists_each_source_once_by_number(qtbot: Any) -> None:
    # As stored before issue 43: in the order first cited.
    parts: list[PartJSON] = [
        {"type": "text", "text": "Dig [2], as [1] says."},
        source(2, "b.md"),
        source(1, "a.md"),
    ]
    view = reopened(qtbot, parts, "Dig [2], as [1] says.")
    assert source_lines(view) == [
        "[1] /home/u/docs/a.md, lines 1–5",
        "[2] /home/u/docs/b.md, lines 2–6",
    ]


# -- item 6: the marks are links ---------------------------------------------------------------


def test_a_mark_of_a_source_opens_it_as_its_line_does_once_reopened(qtbot: Any) -> None:
    parts: list[PartJSON] = [{"type": "text", "text": TEXT}, source(1, "a.md"), source(2, "b.md")]
    view = reopened(qtbot, parts, TEXT)
    links = anchors(view)
    # [1] in the text and the line of source 1 lead to the same source; the code's do not.
    assert len(links["[1]"]) == 1 and len(links["[2]"]) == 1 and "[9]" not in links
    assert links["[1]"][0] == links["/home/u/docs/a.md"][0]
    assert click(qtbot, view, "[2]") == [source(2, "b.md")]
    assert click(qtbot, view, "[1]") == [source(1, "a.md")]
    assert click(qtbot, view, "/home/u/docs/a.md") == [source(1, "a.md")]


def test_a_mark_is_a_link_while_the_reply_streams_and_after(qtbot: Any) -> None:
    view = streamed(qtbot, ["Aardvarks dig [1]", source(1, "a.md"), " and more `[1]`"], end=False)
    assert anchors(view).get("[1]") and "`" not in view.toPlainText()
    assert click(qtbot, view, "[1]") == [source(1, "a.md")]
    add_text(view, " words.\n\nThen [1] again.")
    qtbot.waitUntil(lambda: "again." in view.toPlainText())
    assert len(anchors(view)["[1]"]) == 2  # the inline code's is text
    with qtbot.waitSignal(view.reply_ended, timeout=5_000):
        view.end_reply(ReplyEnd(status="completed", usage={}))
    assert len(anchors(view)["[1]"]) == 2
    assert click(qtbot, view, "[1]") == [source(1, "a.md")]


def test_a_reply_with_no_sources_has_no_mark_links(qtbot: Any) -> None:
    view = reopened(qtbot, [], "As [1] says.")
    assert anchors(view).get("[1]") is None


# -- item 7: the passages given to the model -------------------------------------------------


def test_passages_given_and_not_cited_are_listed_under_the_reply(qtbot: Any) -> None:
    given = [source(n, f"{name}.md", cited=False) for n, name in ((1, "a"), (2, "b"), (3, "c"))]
    view = streamed(qtbot, [*given, "Aardvarks dig burrows."])
    line = (
        "Passages given to the model: "
        "[1] a.md, lines 1–5 · [2] b.md, lines 2–6 · [3] c.md, lines 3–7"
    )
    assert line in view.toPlainText()
    assert click(qtbot, view, "b.md") == [given[1]]
    dialog = SourceDialog(given[1])
    qtbot.addWidget(dialog)
    assert dialog.windowTitle() == "Passage given to the model [2] — b.md"
    # Reopened: as stored (server/agent/buffer.py), the same.
    view = reopened(qtbot, [{"type": "text", "text": "Aardvarks dig burrows."}, *given], "")
    assert line in view.toPlainText()
    assert click(qtbot, view, "c.md") == [given[2]]


def test_a_reply_that_cites_some_lists_the_rest_as_other_passages_given(qtbot: Any) -> None:
    parts: list[PartJSON] = [
        {"type": "text", "text": "See [2]."},
        source(1, "a.md", cited=False), source(2, "b.md"), source(3, "c.md", cited=False),
    ]  # fmt: skip
    view = reopened(qtbot, parts, "See [2].")
    plain = view.toPlainText()
    assert source_lines(view) == ["[2] /home/u/docs/b.md, lines 2–6"]
    assert "Other passages given to the model: [1] a.md, lines 1–5 · [3] c.md, lines 3–7" in plain
    assert plain.index("[2] /home") < plain.index("Other passages")


def test_a_source_link_is_the_same_each_time_it_is_drawn(qtbot: Any) -> None:
    view = Transcript()
    qtbot.addWidget(view)
    links = view._links
    first = links.cite(source(1, "a.md"))
    assert links.cite(source(1, "a.md")) == first != links.cite(source(1, "a.md", cited=False))
    view.open_link(QUrl(first))
