"""The Qt Quick transcript as the window drives it (TranscriptSurface): the calls and
signals of the window's controllers, on the real view offscreen."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QUrl
from PySide6.QtGui import QGuiApplication

from desktop.client.events import ReplyEnd, ReplyParts
from desktop.transcript.surface import TranscriptSurface
from desktop.transcript.welcome import welcome_page
from tests.desktop.transcript.test_rows import message
from tests.desktop.transcript.test_view import items, plain, text_of


def chat(count: int) -> list[Any]:
    return [message(i, "user" if i % 2 == 0 else "assistant") for i in range(count)]


def test_a_chat_shown_reads_as_text_and_offers_its_last_actions(
    surface: TranscriptSurface,
) -> None:
    stopped = message(1, "assistant", content="Half a", status="interrupted",
                      ended_by="client_hangup")  # fmt: skip
    surface.show_conversation([message(0, content="Tell me"), stopped])
    text = surface.toPlainText()
    assert "Tell me" in text and "Half a" in text and "Stopped" in text
    assert surface.last_actions() == {"copy": "m1", "regenerate": "m1", "continue": "m1"}
    assert surface.message_text("m0") == "Tell me"
    assert surface.message_text("nowhere") is None


def test_the_welcome_page_until_the_first_message_and_its_links(
    surface: TranscriptSurface, qtbot: Any
) -> None:
    surface.show_welcome(welcome_page("smollm2", "ready"))
    qtbot.waitUntil(lambda: len(items(surface, "welcome")) == 1)
    assert surface.welcome_shown and "smollm2" in surface.toPlainText()
    with qtbot.waitSignal(surface.prompt_chosen) as chosen:
        surface.open_link(QUrl("prompt:1"))
    assert chosen.args[0]
    with qtbot.waitSignal(surface.panel_requested) as panel:
        surface.open_link(QUrl("open:models"))
    assert panel.args == ["models"]
    with qtbot.assertNotEmitted(surface.link_clicked):
        surface.open_link(QUrl("file:///etc/passwd"))
    surface.begin_reply("Hello", "m")
    qtbot.waitUntil(lambda: items(surface, "welcome") == [])
    assert not surface.welcome_shown


def test_a_reply_grows_a_frame_at_a_time_and_ends_with_what_was_saved(
    surface: TranscriptSurface, qtbot: Any
) -> None:
    parts = ReplyParts()
    surface.begin_reply("Tell me", "m", None, parts)
    surface.show_compaction("Loading m…")
    qtbot.waitUntil(lambda: [text_of(n) for n in items(surface, "note")] == ["Loading m…"])
    drawn: list[int] = []
    surface.reply_rendered.connect(lambda chars, _seconds: drawn.append(chars))
    for i in range(200):  # a burst: drawn in a few updates, not 200
        parts.add_text(f"w{i} ")
        surface.reply_grew()
    qtbot.waitUntil(lambda: bool(drawn) and drawn[-1] == parts.length)
    assert len(drawn) < 20
    assert items(surface, "note") == []  # the text took the note's place
    # The server saved a little more than the view had received.
    saved = ReplyEnd(status="completed", content=parts.text + "end.")
    with qtbot.waitSignal(surface.reply_ended):
        surface.end_reply(saved)
    assert not surface.showing_reply
    qtbot.waitUntil(
        lambda: "".join(plain(b) for b in items(surface, "block")).endswith("w199 end.")
    )


def test_a_turn_drawn_again_with_its_ids_replaces_what_was_drawn_before_them(
    surface: TranscriptSurface,
) -> None:
    surface.show_conversation([message(0, content="Earlier")])
    parts = ReplyParts()
    surface.begin_reply("Tell me", "m", None, parts)
    surface.begin_reply("Tell me", "m", ("q1", "r1"), parts)
    assert surface.rows.ids() == ["m0", "q1", "r1"]
    surface.end_reply(None, "Stopped — saving…")
    assert "Stopped — saving…" in surface.toPlainText()
    stopped = ReplyEnd(status="interrupted", ended_by="client_hangup", content="")
    surface.end_reply(stopped)
    assert surface.last_actions() == {"copy": "r1", "regenerate": "r1"}  # no text to go on


def test_a_long_chat_asks_for_its_earlier_pages_at_its_top(
    surface: TranscriptSurface, qtbot: Any
) -> None:
    surface.show_conversation(chat(40)[20:], unloaded=20)
    assert not surface.drawn_whole
    with qtbot.waitSignal(surface.earlier_wanted) as wanted:
        surface.list.positionViewAtBeginning()  # type: ignore[attr-defined]
    assert wanted.args == ["m20", False]
    assert not surface.add_earlier("m99", chat(20), 0, False)  # another chat's page
    assert surface.add_earlier("m20", chat(20), 0, False)
    assert surface.rows.ids()[:2] == ["m0", "m1"] and surface.drawn_whole


def test_a_search_hit_among_the_earlier_messages_is_asked_for_then_shown(
    surface: TranscriptSurface, qtbot: Any
) -> None:
    surface.show_conversation(chat(40)[20:], unloaded=20)
    with qtbot.waitSignal(surface.earlier_wanted) as wanted:
        assert not surface.reveal("Message 3", "m3")
    assert wanted.args == ["m20", True]
    surface.add_earlier("m20", chat(20), 0, True)
    qtbot.waitUntil(lambda: len(items(surface, "foundMark")) == 1)


def test_summaries_come_and_go_and_their_buttons_reach_the_window(
    surface: TranscriptSurface, qtbot: Any
) -> None:
    surface.show_conversation(chat(4))
    summary: Any = {"id": "s1", "through_id": "m1", "content": "Hi.", "model": "m",
                    "created_at": 0.0, "updated_at": 0.0}  # fmt: skip
    surface.add_summary(summary)
    assert surface.rows.ids() == ["m0", "m1", "s1", "m2", "m3"]
    assert surface.summaries == [summary]
    qtbot.waitUntil(lambda: len(items(surface, "action-undo")) == 1)
    with qtbot.waitSignal(surface.summary_action) as acted:
        items(surface, "action-undo")[0].clicked.emit()  # type: ignore[attr-defined]
    assert acted.args == ["undo", summary]
    surface.drop_summary("s1")
    assert "s1" not in surface.rows.ids() and surface.summaries == []


def test_copy_sources_and_files_reach_the_window(surface: TranscriptSurface, qtbot: Any) -> None:
    cited = {"type": "citation", "n": 1, "path": "/d/a.md", "page": None, "lines": [1, 2],
             "quote": "q"}  # fmt: skip
    file = {"id": "f1", "name": "a.png", "kind": "image", "mime": "image/png", "bytes": 9,
            "chars": None, "note": None}  # fmt: skip
    reply = message(1, "assistant", content="Yes [1].",
                    parts=[{"type": "text", "text": "Yes [1]."}, cited])  # fmt: skip
    surface.show_conversation([message(0, content="Q", attachments=[file]), reply])
    qtbot.waitUntil(lambda: len(items(surface, "source")) == 1 and len(items(surface, "file")))
    with qtbot.waitSignal(surface.citation_clicked) as source:
        items(surface, "source")[0].clicked.emit()  # type: ignore[attr-defined]
    assert source.args == [cited]
    with qtbot.waitSignal(surface.attachment_clicked) as opened:
        items(surface, "file")[0].clicked.emit()  # type: ignore[attr-defined]
    assert opened.args == [file]
    with qtbot.waitSignal(surface.code_copied):
        surface.action_triggered.emit("m1", "copy")  # its Copy button's signal
    assert QGuiApplication.clipboard().text() == "Yes [1]."
    with qtbot.waitSignal(surface.message_action) as acted:
        items(surface, "action-regenerate")[0].clicked.emit()  # type: ignore[attr-defined]
    assert acted.args == ["regenerate", "m1"]


def test_a_step_reads_as_its_line_and_a_right_click_offers_its_actions(
    surface: TranscriptSurface, qtbot: Any
) -> None:
    step = {"type": "tool", "id": "c1", "server": "t", "name": "echo",
            "arguments": '{"text": "needle"}', "status": "completed", "result": "needle",
            "started_at": 0.0, "ended_at": 0.5}  # fmt: skip
    reply = message(1, "assistant", content="Found it.",
                    parts=[step, {"type": "text", "text": "Found it."}])  # fmt: skip
    surface.show_conversation([message(0, content="find the needle"), reply])
    assert 't · echo(text="needle") — done in 0.5 s' in surface.toPlainText()
    assert surface.reveal("needle")
    assert surface.found_words == "needle"
    with qtbot.waitSignal(surface.step_clicked) as clicked:
        surface.open_link(QUrl("step:c1"))
    assert clicked.args[0]["id"] == "c1"
    menu = surface.menu_of("m0")
    assert [a.text() for a in menu.actions()] == ["Copy message", "Edit message"]
    with qtbot.waitSignal(surface.message_action) as acted:
        next(a for a in menu.actions() if a.text() == "Edit message").trigger()
    assert acted.args == ["edit", "m0"]
    menu.close()
