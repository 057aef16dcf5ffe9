"""A reply's ending: the text the server saved beyond what was shown joins the reply (once), and
its figures are shown under it."""

from __future__ import annotations

from typing import Any

from desktop.client import ReplyEnd
from desktop.reply_events import ReplyParts
from desktop.widgets.transcript import Transcript
from tests.desktop.test_reply_events import step
from tests.desktop.widgets.transcript.test_growing_reply import grow


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


def test_text_received_after_stop_in_a_reply_with_steps_is_shown_once(qtbot: Any) -> None:
    view = Transcript()
    qtbot.addWidget(view)
    parts = ReplyParts()
    view.begin_reply("question", "model", ("u", "a"), parts)
    parts.add_text("Looking.")
    parts.add_step(step("completed"))
    view.reply_grew()
    with qtbot.waitSignal(view.reply_ended, timeout=5_000):
        view.end_reply(None, note="Stopped — saving…")
    parts.add_text(" Found it.")  # after Stop: held by the reply, not drawn yet
    view.reply_grew()
    with qtbot.waitSignal(view.reply_ended, timeout=5_000):
        view.end_reply(ReplyEnd(status="completed", usage={}, content=parts.text))
    text = view.toPlainText()
    assert text.count("Found it.") == 1 and "saving" not in text
    assert text.index("Looking.") < text.index("read_file") < text.index("Found it.")
