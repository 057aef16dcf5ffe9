"""The Qt Quick transcript drawn (offscreen, software renderer): the items QML makes for the
rows, found by objectName, as a user would see them."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

import pytest
from PySide6.QtCore import QObject, QPointF, Qt
from PySide6.QtQuick import QQuickItem

from desktop.client.events import ReplyEnd
from desktop.look.palette import palette
from desktop.transcript.rows import Row
from desktop.transcript.view import QuickTranscript
from tests.desktop.transcript.test_rows import message


@pytest.fixture
def view(qtbot: Any) -> Iterator[QuickTranscript]:
    transcript = QuickTranscript()
    qtbot.addWidget(transcript)
    transcript.resize(900, 600)
    transcript.show()
    yield transcript


def ended(status: str, **fields: Any) -> ReplyEnd:
    return ReplyEnd(status=status, ended_by=fields.pop("ended_by", None), error=None,
                    usage=None, content="", **fields)  # fmt: skip


def items(view: QuickTranscript, name: str, visible: bool = True) -> list[QQuickItem]:
    """The items of that objectName in the view (delegates are visual children, not QObject
    children, of the list), those shown unless `visible` is False."""
    found: list[QQuickItem] = []
    stack: list[QQuickItem] = [view.list]  # type: ignore[list-item]
    while stack:
        item = stack.pop()
        if item.objectName() == name and (item.isVisible() or not visible):
            found.append(item)
        stack.extend(item.childItems())
    return found


def text_of(item: QObject) -> str:
    return str(item.property("text"))


def plain(item: QQuickItem) -> str:
    length = int(item.property("length"))
    return str(item.getText(0, length))  # type: ignore[attr-defined]


def test_a_question_is_a_bubble_on_the_right_and_a_reply_text_on_the_page(
    view: QuickTranscript, qtbot: Any
) -> None:
    view.rows.show(
        [message(1, content="Hello there"),
         message(2, "assistant", content="**Hi**, how can I help?", model="SmolLM2")]
    )  # fmt: skip
    qtbot.waitUntil(lambda: len(items(view, "block")) == 1)
    (bubble,) = items(view, "bubble")
    (question,) = items(view, "question")
    assert plain(question) == "Hello there"
    column_right = bubble.mapToScene(QPointF(bubble.width(), 0)).x()
    assert column_right > view.width() / 2 + bubble.width() / 2  # right-aligned
    (block,) = items(view, "block")
    assert plain(block) == "Hi, how can I help?" and "font-weight:700" in text_of(block)
    (header,) = items(view, "header")
    assert text_of(header) == "SmolLM2"
    assert items(view, "badge") == []


def test_a_streaming_reply_lays_out_only_its_tail_again(view: QuickTranscript, qtbot: Any) -> None:
    view.rows.append(Row(id="q", role="user", text="Tell me"))
    view.rows.append(Row(id="r", role="assistant", text="", header="m", streaming=True))
    view.rows.grow("r", ["First paragraph.\n\nSecond"])
    qtbot.waitUntil(lambda: len(items(view, "block")) == 2)
    first, _ = sorted(items(view, "block"), key=lambda item: item.y())
    view.rows.grow("r", ["First paragraph.\n\nSecond", " paragraph, longer now."])
    qtbot.waitUntil(lambda: any("longer now" in plain(b) for b in items(view, "block")))
    assert first in items(view, "block")  # the frozen block's item was kept as it was
    view.rows.end("r", ended("interrupted", ended_by="client_hangup"))
    qtbot.waitUntil(lambda: [text_of(f) for f in items(view, "badge")] == ["Stopped"])


def test_a_long_chat_opens_with_only_the_rows_on_screen_made(
    view: QuickTranscript, qtbot: Any
) -> None:
    view.rows.show(message(i, "user" if i % 2 else "assistant") for i in range(10_000))
    view.follow()
    qtbot.waitUntil(lambda: "Message 9998" in " ".join(plain(b) for b in items(view, "block")))
    made = len(items(view, "block", visible=False))
    assert 0 < made < 200  # drawn: those on screen and a cache around them, not 5,000


def test_a_link_in_a_reply_reaches_the_window(view: QuickTranscript, qtbot: Any) -> None:
    view.rows.show([message(1, "assistant", content="```python\nx = 1\n```")])
    qtbot.waitUntil(lambda: len(items(view, "block")) == 1)
    (block,) = items(view, "block")
    assert f"color:{palette(False).accent}" in text_of(block)  # not Qt Quick's own blue
    with qtbot.waitSignal(view.link_activated) as activated:
        block.linkActivated.emit("copy:1")  # type: ignore[attr-defined]
    assert activated.args == ["copy:1"]


def test_a_message_s_actions_are_icon_buttons_that_reach_the_window(
    view: QuickTranscript, qtbot: Any
) -> None:
    view.rows.show(
        [message(1, content="Hi"),
         message(2, "assistant", content="Hello", status="interrupted", ended_by="client_hangup",
                 siblings=["m2", "m9"], sibling_index=1, id="m9")]
    )  # fmt: skip
    qtbot.waitUntil(lambda: len(items(view, "action-continue")) == 1)
    # The newest message's are shown; the question's wait for the pointer or the keyboard.
    (bar,) = [b for b in items(view, "actions") if b.property("opacity") == 1]
    names = [str(b.property("tip")) for b in items(view, "action-copy")]
    assert names == ["Copy", "Copy"]
    assert [str(v.property("text")) for v in items(view, "version")] == ["2/2"]
    (earlier,) = items(view, "previousVersion")
    assert earlier.property("enabled") and not items(view, "nextVersion")[0].property("enabled")
    with qtbot.waitSignal(view.action_triggered) as chosen:
        earlier.clicked.emit()  # type: ignore[attr-defined]
    assert chosen.args == ["m2", "version"]  # the version before it
    # The keyboard reaches the question's actions, which then show.
    view.setFocus()
    (edit,) = items(view, "action-edit")
    for _ in range(6):
        if edit.hasActiveFocus():
            break
        qtbot.keyClick(view, Qt.Key.Key_Tab)
    assert edit.hasActiveFocus()
    assert edit.parentItem().parentItem().property("opacity") == 1
    with qtbot.waitSignal(view.action_triggered) as triggered:
        items(view, "action-continue")[0].clicked.emit()  # type: ignore[attr-defined]
    assert triggered.args == ["m9", "continue"]
    assert bar.isVisible()


def test_a_streaming_reply_has_no_actions_until_it_ends(view: QuickTranscript, qtbot: Any) -> None:
    view.rows.append(
        Row(id="r", role="assistant", text="", parts=["Some"], header="m", streaming=True)
    )
    qtbot.waitUntil(lambda: len(items(view, "block")) == 1)
    assert items(view, "action-copy") == []
    view.rows.end("r", ended("completed"))
    qtbot.waitUntil(lambda: len(items(view, "action-regenerate")) == 1)
    assert items(view, "action-continue") == []


def step(status: str, **fields: Any) -> dict[str, Any]:
    return {
        "type": "tool", "id": "call-1", "server": "files", "name": "read_file",
        "arguments": '{"path": "a.md"}', "status": status, "result": None,
        "started_at": 0.0, "ended_at": None,
    } | fields  # fmt: skip


def test_a_tool_step_is_a_card_between_the_texts_that_opens_on_enter(
    view: QuickTranscript, qtbot: Any
) -> None:
    view.rows.append(Row(id="r", role="assistant", text="", header="m", streaming=True))
    running = step("running", progress={"progress": 1, "total": 4, "message": "page 1"})
    view.rows.grow("r", ["Let me read it.", running])
    qtbot.waitUntil(lambda: len(items(view, "step")) == 1)
    (card,) = items(view, "step")
    (chip,) = items(view, "stepStatus")
    assert text_of(chip) == "running"
    assert text_of(items(view, "stepTitle")[0]) == 'files · read_file(path="a.md")'
    (bar,) = items(view, "stepProgress")
    assert bar.property("value") == 0.25
    done = step("completed", result="# A\nThe file's text.")
    view.rows.grow("r", ["Let me read it.", done, "It says A."])
    qtbot.waitUntil(lambda: text_of(items(view, "stepStatus")[0]) == "done")

    def in_order() -> list[str]:
        texts = sorted(items(view, "block"), key=lambda item: item.mapToScene(QPointF(0, 0)).y())
        return [plain(t) for t in texts]

    qtbot.waitUntil(lambda: in_order() == ["Let me read it.", "It says A."])

    def card_between() -> bool:  # the step where it ran, between the two texts
        card_y = items(view, "step")[0].mapToScene(QPointF(0, 0)).y()
        first, last = sorted(b.mapToScene(QPointF(0, 0)).y() for b in items(view, "block"))
        return first < card_y < last

    qtbot.waitUntil(card_between)  # (laid out a frame after the texts were placed)
    assert items(view, "stepDetails") == []  # closed until asked
    card = items(view, "step")[0]
    card.forceActiveFocus()
    qtbot.keyClick(view, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: len(items(view, "stepDetails")) == 1)
    details = plain(items(view, "stepDetails")[0])
    assert '"path": "a.md"' in details and "The file's text." in details


def test_a_stored_reply_shows_its_steps_where_they_ran(view: QuickTranscript, qtbot: Any) -> None:
    parts = [{"type": "text", "text": "Before."}, step("interrupted"),
             {"type": "text", "text": "After."}]  # fmt: skip
    view.rows.show([message(1, "assistant", content="Before.After.", parts=parts)])
    qtbot.waitUntil(lambda: len(items(view, "step")) == 1)
    assert text_of(items(view, "stepStatus")[0]) == "stopped"
    assert sorted(plain(b) for b in items(view, "block")) == ["After.", "Before."]


def test_a_reply_waiting_for_its_model_says_so_until_its_text_comes(
    view: QuickTranscript, qtbot: Any
) -> None:
    view.rows.append(Row(id="q", role="user", text="Hello"))
    view.rows.append(Row(id="r", role="assistant", text="", header="m", streaming=True,
                         note="Loading SmolLM2…"))  # fmt: skip
    qtbot.waitUntil(lambda: [text_of(n) for n in items(view, "note")] == ["Loading SmolLM2…"])
    # A still line reads as a hang: after two seconds it says how long it has waited.
    assert items(view, "waited") == []
    qtbot.waitUntil(lambda: [text_of(n) for n in items(view, "waited")] == ["2 s"], timeout=10_000)
    view.rows.set_note("r", "Loading SmolLM2… 40%")
    qtbot.waitUntil(lambda: [text_of(n) for n in items(view, "note")] == ["Loading SmolLM2… 40%"])
    view.rows.grow("r", ["Hi"])
    qtbot.waitUntil(lambda: items(view, "note") == [])
    assert [plain(b) for b in items(view, "block")] == ["Hi"]


def test_a_summary_is_a_divider_under_the_last_message_it_covers(
    view: QuickTranscript, qtbot: Any
) -> None:
    summary = {"id": "s1", "through_id": "m2", "content": "They said hello.", "model": "m",
               "created_at": 0.0, "updated_at": 0.0}  # fmt: skip
    view.rows.show(
        [message(1, content="Hi"), message(2, "assistant", content="Hello"),
         message(3, content="Next")],
        [summary],  # type: ignore[list-item]
    )  # fmt: skip
    assert view.rows.ids() == ["m1", "m2", "s1", "m3"]
    qtbot.waitUntil(lambda: len(items(view, "summary")) == 1)
    (divider,) = items(view, "summary")
    below = divider.mapToScene(QPointF(0, 0)).y()
    (reply,) = items(view, "block")
    assert reply.mapToScene(QPointF(0, 0)).y() < below
    tips = [str(b.property("tip")) for b in items(view, "action-undo")]
    assert tips == ["Undo the summary"]
    with qtbot.waitSignal(view.action_triggered) as triggered:
        items(view, "action-view")[0].clicked.emit()  # type: ignore[attr-defined]
    assert triggered.args == ["s1", "view"]


def test_a_reply_s_sources_are_chips_that_open_their_passage(
    view: QuickTranscript, qtbot: Any
) -> None:
    cited = {"type": "citation", "n": 1, "path": "/docs/notes.md", "page": None,
             "lines": [3, 9], "quote": "The answer"}  # fmt: skip
    given = {**cited, "n": 2, "path": "/docs/manual.pdf", "lines": None, "page": 4,
             "cited": False}  # fmt: skip
    view.rows.append(Row(id="r", role="assistant", text="", header="m", streaming=True))
    view.rows.grow("r", ["It is 42 [1].", cited, given])
    qtbot.waitUntil(lambda: len(items(view, "source")) == 2)
    labels = sorted(str(chip.property("label")) for chip in items(view, "source"))
    assert labels == ["[1] notes.md, lines 3–9", "[2] manual.pdf, page 4"]
    assert [plain(b) for b in items(view, "block")] == ["It is 42 [1]."]
    first = next(c for c in items(view, "source") if "[1]" in str(c.property("label")))
    with qtbot.waitSignal(view.source_activated) as activated:
        first.clicked.emit()  # type: ignore[attr-defined]
    assert activated.args == ["r", 1]


def test_reveal_brings_a_message_far_above_into_view_and_marks_it(
    view: QuickTranscript, qtbot: Any
) -> None:
    view.rows.show(message(i, "assistant") for i in range(2_000))
    view.follow()
    qtbot.waitUntil(lambda: "Message 1999" in " ".join(plain(b) for b in items(view, "block")))
    at = view.rows.find("Message 25")
    assert at == 25
    view.show_found(at)
    qtbot.waitUntil(lambda: len(items(view, "foundMark")) == 1)

    def on_screen(text: str) -> bool:
        for block in items(view, "block"):
            y = block.mapToScene(QPointF(0, 0)).y()
            if plain(block) == text and 0 <= y <= view.height():
                return True
        return False

    qtbot.waitUntil(lambda: on_screen("Message 25"))
    assert not on_screen("Message 1999")


def test_a_question_s_files_are_chips_above_its_words(view: QuickTranscript, qtbot: Any) -> None:
    files = [
        {"id": "a1", "name": "photo.png", "kind": "image", "mime": "image/png",
         "bytes": 2_400_000, "chars": None, "note": None},
        {"id": "a2", "name": "notes.md", "kind": "text", "mime": "text/markdown",
         "bytes": 812, "chars": 800, "note": None},
    ]  # fmt: skip
    view.rows.show([message(1, content="What is in these?", attachments=files)])
    qtbot.waitUntil(lambda: len(items(view, "file")) == 2)
    labels = sorted(str(chip.property("label")) for chip in items(view, "file"))
    assert labels == ["notes.md · 812 bytes", "photo.png · 2.3 MB"]
    (bubble,) = items(view, "bubble")
    for chip in items(view, "file"):
        assert chip.mapToScene(QPointF(0, 0)).y() < bubble.mapToScene(QPointF(0, 0)).y()
    photo = next(c for c in items(view, "file") if "photo" in str(c.property("label")))
    with qtbot.waitSignal(view.file_activated) as activated:
        photo.clicked.emit()  # type: ignore[attr-defined]
    assert activated.args == ["m1", "a1"]


def test_a_list_s_items_are_drawn_evenly_spaced(view: QuickTranscript, qtbot: Any) -> None:
    items_text = "\n".join(f"- item number {n}" for n in range(1, 5))
    view.rows.show([message(1, "assistant", content=items_text)])
    qtbot.waitUntil(lambda: len(items(view, "block")) == 1)
    (block,) = items(view, "block")
    top_left = block.mapToScene(QPointF(0, 0))
    image = view.grabFramebuffer()
    background = image.pixelColor(int(top_left.x()) - 4, int(top_left.y()))
    inked = [
        any(
            image.pixelColor(x, y) != background
            for x in range(int(top_left.x()), int(top_left.x() + block.width()), 2)
        )
        for y in range(int(top_left.y()), int(top_left.y() + block.height()))
    ]
    starts = [y for y in range(1, len(inked)) if inked[y] and not inked[y - 1]]
    starts = ([0] if inked[0] else []) + starts
    assert len(starts) == 4, starts  # a line of ink an item
    gaps = [b - a for a, b in itertools.pairwise(starts)]
    assert max(gaps) - min(gaps) <= 2, gaps  # the first item stood apart: 28 px, then 18
