"""The model's view of a chat in the window (issue 42): when a turn outgrows the model's
context, the reply says earlier messages are being summarised, and a marker is drawn where the
summary ends ("Earlier messages summarised — view summary · edit · undo"), live and when the
chat is reopened; every message stays on screen; Edit and Undo go to the server."""

from __future__ import annotations

import json
from typing import Any

import pytest
from PySide6.QtCore import Qt, QUrl

from desktop.replies.notes import SUMMARISING_NOTE
from desktop.transcript.badges import CONTEXT_FULL_BADGE
from tests.desktop.conftest import GuiApp, run
from tests.support.upstream import Script, ScriptedUpstream

MARKER_TEXT = "Earlier messages summarised"

pytestmark = pytest.mark.slow

CONTEXT = "2000"  # tokens: three long turns outgrow it (3 characters a token, estimated)
LONG = "lorem ipsum dolor sit amet " * 40  # ~360 tokens


@pytest.fixture
def small_gui(gui_factory: Any) -> GuiApp:
    gui: GuiApp = gui_factory("--upstream-context", CONTEXT)
    return gui


def say(gui: GuiApp, qtbot: Any, text: str) -> None:
    with qtbot.waitSignal(gui.window.reply_finished, timeout=20_000):
        gui.send(text)


def fill(gui: GuiApp, upstream: ScriptedUpstream, qtbot: Any, turns: int) -> None:
    for index in range(turns):
        upstream.queue = [Script(texts=[f"Reply {index}. {LONG}"])]
        say(gui, qtbot, f"Question {index}. {LONG}")


def compacted_chat(gui: GuiApp, upstream: ScriptedUpstream, qtbot: Any) -> list[str]:
    """A chat whose third turn summarised the earlier ones; the transcript's texts as the
    turn drew them."""
    fill(gui, upstream, qtbot, 2)
    upstream.queue = [Script(texts=["The user asked about lorem ipsum."]), Script(texts=["ok"])]
    seen: list[str] = []
    gui.window.transcript.textChanged.connect(lambda: seen.append(gui.transcript_text()))
    say(gui, qtbot, f"One more. {LONG}")
    return seen


def stored(gui: GuiApp, qtbot: Any) -> dict[str, Any]:
    client = gui.window.client
    assert client is not None and gui.window.current_id is not None
    found: dict[str, Any] = run(qtbot, client.conversation(gui.window.current_id))
    return found


def reopen(gui: GuiApp, qtbot: Any) -> None:
    conversation_id = gui.window.current_id
    qtbot.keyClick(gui.window, Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier)
    assert MARKER_TEXT not in gui.transcript_text()
    sidebar = gui.window.sidebar
    qtbot.waitUntil(lambda: sidebar.list.count() >= 1, timeout=5_000)
    sidebar.list.setCurrentRow(0)
    qtbot.waitUntil(lambda: gui.window.current_id == conversation_id, timeout=5_000)
    qtbot.waitUntil(lambda: "Question 0." in gui.transcript_text(), timeout=5_000)


def test_a_turn_that_outgrows_the_context_says_so_and_marks_where_the_summary_ends(
    small_gui: GuiApp, upstream: ScriptedUpstream, qtbot: Any
) -> None:
    gui = small_gui
    seen = compacted_chat(gui, upstream, qtbot)
    assert any(SUMMARISING_NOTE in text for text in seen)  # while it ran
    text = gui.transcript_text()
    assert SUMMARISING_NOTE not in text and "ok" in text
    assert MARKER_TEXT in text
    (marker,) = stored(gui, qtbot)["summaries"]
    assert gui.window.transcript.actions_of(marker["id"]) == ["view", "edit", "undo"]
    # Nothing is hidden: every question is still on screen, the marker after a reply.
    assert all(f"Question {n}." in text for n in range(2))
    (summary,) = stored(gui, qtbot)["summaries"]
    messages = stored(gui, qtbot)["messages"]
    through = next(m for m in messages if m["id"] == summary["through_id"])
    assert through["role"] == "assistant"
    assert text.index(through["content"][:20]) < text.index(MARKER_TEXT)

    reopen(gui, qtbot)
    again = gui.transcript_text()
    assert again.count(MARKER_TEXT) == 1 and again.index(MARKER_TEXT) == text.index(MARKER_TEXT)


def test_undo_takes_the_marker_away_and_edit_saves_the_users_words(
    small_gui: GuiApp, upstream: ScriptedUpstream, qtbot: Any, monkeypatch: Any
) -> None:
    gui = small_gui
    compacted_chat(gui, upstream, qtbot)
    (summary,) = stored(gui, qtbot)["summaries"]
    transcript = gui.window.transcript

    dialogs = gui.window.model_view.summaries
    transcript.open_link(QUrl(f"summary:edit/{summary['id']}"))
    qtbot.waitUntil(lambda: dialogs.dialog is not None and dialogs.dialog.isVisible())
    assert dialogs.dialog is not None
    assert "lorem ipsum" in dialogs.dialog.editor.toPlainText()
    dialogs.dialog.editor.setPlainText("The user likes herons.")
    dialogs.dialog.save_button.click()
    qtbot.waitUntil(lambda: stored(gui, qtbot)["summaries"][0]["model"] is None)
    assert stored(gui, qtbot)["summaries"][0]["content"] == "The user likes herons."
    qtbot.waitUntil(lambda: f"{MARKER_TEXT} · edited by you" in gui.transcript_text())

    transcript.open_link(QUrl(f"summary:undo/{summary['id']}"))
    qtbot.waitUntil(lambda: MARKER_TEXT not in gui.transcript_text())
    assert stored(gui, qtbot)["summaries"] == []
    assert all(f"Question {n}." in gui.transcript_text() for n in range(2))


def meter_label(gui: GuiApp) -> str:
    return str(gui.window.model_view.meter.label.text())


def test_the_meter_shows_the_chats_tokens_of_the_models_context_and_follows_its_replies(
    small_gui: GuiApp, upstream: ScriptedUpstream, qtbot: Any
) -> None:
    gui = small_gui
    meter = gui.window.model_view.meter
    assert not meter.isVisible()  # a new chat: nothing to measure
    upstream.queue = [Script(texts=["Short."])]
    say(gui, qtbot, "Hello")
    qtbot.waitUntil(lambda: "(2 messages)" in meter.toolTip(), timeout=5_000)
    assert meter.isVisible() and meter_label(gui).endswith(" / 2k tokens")
    assert meter_label(gui).startswith("~")  # estimated: an upstream
    first = meter.bar.value()

    upstream.queue = [Script(texts=[f"Long. {LONG}"])]
    say(gui, qtbot, f"More. {LONG}")
    qtbot.waitUntil(lambda: "(4 messages)" in meter.toolTip(), timeout=5_000)
    assert meter.bar.value() > first + 400


def test_compact_now_summarises_and_stop_leaves_the_chat_as_it_was(
    gui: GuiApp, upstream: ScriptedUpstream, qtbot: Any
) -> None:
    view = gui.window.model_view
    for index in range(3):
        upstream.queue = [Script(texts=[f"Reply {index}."])]
        say(gui, qtbot, f"Question {index}.")
    qtbot.waitUntil(lambda: meter_label(gui).endswith(" tokens"), timeout=5_000)
    assert "/" not in meter_label(gui)  # the model's context is not known

    # Stopped while the summary is made: nothing changes.
    upstream.queue = [Script(tokens=1000, stall_after=2)]
    assert view.meter.compact_button.isEnabled()
    view.meter.compact_button.click()
    qtbot.waitUntil(lambda: view.meter.stop_button.isVisible(), timeout=5_000)
    assert "Summarising earlier messages" in view.meter.status.text()
    upstream.wait_for(lambda: any(r.sent for r in upstream.records[-1:]))
    view.meter.stop_button.click()
    qtbot.waitUntil(lambda: not view.compaction.running, timeout=5_000)
    upstream.wait_hung_up()
    assert stored(gui, qtbot)["summaries"] == [] and MARKER_TEXT not in gui.transcript_text()

    # From the Chat menu, done: the marker, and the meter counts what is summarised.
    upstream.queue = [Script(texts=["Three questions were asked."])]
    gui.window.menus.compact.trigger()
    qtbot.waitUntil(lambda: MARKER_TEXT in gui.transcript_text(), timeout=5_000)
    qtbot.waitUntil(lambda: "earlier messages are summarised" in view.meter.toolTip())
    assert len(stored(gui, qtbot)["summaries"]) == 1
    assert len(stored(gui, qtbot)["messages"]) == 6  # no message written


def test_compact_now_is_not_offered_while_a_reply_streams(
    gui: GuiApp, upstream: ScriptedUpstream, qtbot: Any
) -> None:
    upstream.queue = [Script(texts=["Reply."])]
    say(gui, qtbot, "Question.")
    menus, meter = gui.window.menus, gui.window.model_view.meter
    gui.window.menus.chat.aboutToShow.emit()
    assert menus.compact.isEnabled() and meter.compact_button.isEnabled()
    upstream.queue = [Script(tokens=1000, stall_after=2)]
    gui.send("Another.")
    qtbot.waitUntil(lambda: gui.window.reply.busy, timeout=5_000)
    gui.window.menus.chat.aboutToShow.emit()
    assert not menus.compact.isEnabled() and not meter.compact_button.isEnabled()
    with qtbot.waitSignal(gui.window.reply_finished, timeout=10_000):
        gui.window.stop_reply()
    gui.window.menus.chat.aboutToShow.emit()
    assert menus.compact.isEnabled() and meter.compact_button.isEnabled()


def test_esc_and_the_chat_menus_stop_end_compact_now_too(
    gui: GuiApp, upstream: ScriptedUpstream, qtbot: Any
) -> None:
    view = gui.window.model_view
    for index in range(3):  # (two are kept as they are: the third makes one to summarise)
        upstream.queue = [Script(texts=[f"Reply {index}."])]
        say(gui, qtbot, f"Question {index}.")
    for stop in (
        lambda: qtbot.keyClick(gui.window.composer.editor, Qt.Key.Key_Escape),  # Esc
        lambda: gui.window.menus.stop.trigger(),  # Chat → Stop
    ):
        upstream.queue = [Script(tokens=1000, stall_after=2)]
        asked = len(upstream.records)
        gui.window.menus.chat.aboutToShow.emit()  # (its entries are enabled as it opens)
        gui.window.menus.compact.trigger()
        qtbot.waitUntil(lambda n=asked: len(upstream.records) > n, timeout=5_000)
        upstream.wait_for(lambda: bool(upstream.records[-1].sent))
        gui.window.menus.chat.aboutToShow.emit()
        assert gui.window.menus.stop.isEnabled()
        stop()
        qtbot.waitUntil(lambda: not view.compaction.running, timeout=5_000)
        upstream.wait_hung_up()
        assert stored(gui, qtbot)["summaries"] == []


def test_a_reply_that_filled_the_models_context_says_so_not_the_length_limit(
    small_gui: GuiApp, upstream: ScriptedUpstream, qtbot: Any
) -> None:
    gui = small_gui
    # The upstream stops at "length" with its prompt and the reply at the model's context.
    full = json.dumps({"prompt_tokens": 1_960, "completion_tokens": 40, "total_tokens": 2_000})
    upstream.queue = [
        Script(texts=["Once upon", " a time"], finish_reason="length", usage_json=full)
    ]
    say(gui, qtbot, "A long story, please.")
    qtbot.waitUntil(lambda: CONTEXT_FULL_BADGE in gui.transcript_text(), timeout=5_000)
    assert "Cut at the length limit" not in gui.transcript_text()
    cid = gui.window.current_id
    qtbot.keyClick(gui.window, Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier)
    assert CONTEXT_FULL_BADGE not in gui.transcript_text()
    gui.window.sidebar.conversation_selected.emit(cid)  # drawn from the store: the same
    qtbot.waitUntil(lambda: CONTEXT_FULL_BADGE in gui.transcript_text(), timeout=5_000)


def test_the_summary_being_made_before_a_reply_says_how_far_it_is(
    small_gui: GuiApp, upstream: ScriptedUpstream, qtbot: Any
) -> None:
    gui = small_gui
    fill(gui, upstream, qtbot, 2)
    # The summary written as an engine writes it (60 tokens in ~3 s): the server says how
    # long it is so far once a second.
    upstream.queue = [Script(tokens=60, rate=20), Script(texts=["ok"])]
    seen: list[str] = []
    gui.window.transcript.textChanged.connect(lambda: seen.append(gui.transcript_text()))
    say(gui, qtbot, f"One more. {LONG}")
    assert any("Summarising earlier messages… (~" in text for text in seen)
    assert "tokens written)" not in gui.transcript_text()


def test_compact_now_says_how_far_it_is_beside_the_meter(
    gui: GuiApp, upstream: ScriptedUpstream, qtbot: Any
) -> None:
    view = gui.window.model_view
    for index in range(3):
        upstream.queue = [Script(texts=[f"Reply {index}."])]
        say(gui, qtbot, f"Question {index}.")
    upstream.queue = [Script(tokens=60, rate=20)]  # ~3 s: told once a second
    view.meter.compact_button.click()
    qtbot.waitUntil(lambda: "tokens written)" in view.meter.status.text(), timeout=10_000)
    assert view.meter.status.text().startswith("Summarising earlier messages… (")
    qtbot.waitUntil(lambda: not view.compaction.running, timeout=10_000)
    assert view.meter.status.text() == ""
