"""The question card: a tool's MCP server that asks the user (elicitation) gets a card with
its name, its message and its form drawn from the schema (or its URL, opened only when the
user says so); Accept / Decline / Cancel reach the server from the keyboard; a refused answer
is said on the card, which keeps what was typed; Stop ends the reply with the card gone and
the question cancelled; the step says how its question went.

The real window, server and MCP server (tests/support/mcp_questions.py, written with the
official SDK), the scripted upstream playing the model."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt, QUrl
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import QApplication, QCheckBox, QComboBox, QLineEdit, QSpinBox

from desktop.replies.question_card import question_title
from desktop.replies.question_fields import QuestionFields
from desktop.window.menus import shortcut_rows
from tests.desktop.conftest import GuiApp, run
from tests.support.questions import questions_server
from tests.support.tools import ToolLog, write_config
from tests.support.upstream import Script, ScriptedUpstream

URL = "https://example.com/sign?form=42&who=you"


@pytest.fixture
def log(tmp_path: Path) -> ToolLog:
    return ToolLog(tmp_path / "questions.log")


@pytest.fixture
def asking_gui(gui_factory: Any, data_dir: Path, log: ToolLog, qtbot: Any) -> GuiApp:
    """The app with the MCP server `q`, whose tools ask the user, running."""
    write_config(data_dir / "mcp.json", {"q": questions_server(log.path, only_2025=False)})
    gui: GuiApp = gui_factory()
    client = gui.window.client
    assert client is not None
    qtbot.waitUntil(lambda: run(qtbot, client.status())["tools"]["ready"] == 1, timeout=30_000)
    return gui


def asks(gui: GuiApp, upstream: ScriptedUpstream, qtbot: Any, tool: str) -> None:
    """A turn whose model calls `tool` of `q`; back once the card asks."""
    called = {"name": f"q__{tool}", "arguments": "{}"}
    upstream.queue = [Script(texts=["Let me ask. "], tool_calls=[called]), Script(texts=["Done."])]
    gui.send("go")
    qtbot.waitUntil(gui.window.question_card.isVisible, timeout=20_000)


def stored_step(gui: GuiApp, qtbot: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """The last reply as saved, and its tool step."""
    client = gui.window.client
    assert client is not None and gui.window.current_id is not None
    reply: dict[str, Any] = run(qtbot, client.conversation(gui.window.current_id))["messages"][-1]
    (step,) = [part for part in reply["parts"] if part["type"] == "tool"]
    return reply, step


def field(gui: GuiApp, name: str) -> Any:
    fields = gui.window.question_card.fields
    assert fields is not None
    return next(f.widget for f in fields.fields if f.name == name)


def alt(qtbot: Any, gui: GuiApp, key: Qt.Key) -> None:
    qtbot.keyClick(gui.window, key, Qt.KeyboardModifier.AltModifier)


@pytest.mark.slow
def test_an_accepted_form_reaches_the_tool_and_the_keys_go_back_to_the_composer(
    asking_gui: GuiApp, upstream: ScriptedUpstream, log: ToolLog, qtbot: Any
) -> None:
    gui = asking_gui
    card = gui.window.question_card
    asks(gui, upstream, qtbot, "book")
    assert "<b>q</b> asks you" in card.title.text() and "book" in card.title.text()
    assert card.message.text() == "Whose table, and for how many?"
    assert not card.url.isVisible() and not card.open_link.isVisible()
    name, guests = field(gui, "name"), field(gui, "guests")
    assert isinstance(name, QLineEdit) and isinstance(guests, QSpinBox)
    assert (guests.minimum(), guests.maximum()) == (1, 10)
    assert name.accessibleName() == "name, required"
    assert card.fields is not None
    first = card.fields.first()
    assert first is name  # the fields in the server's order (name, then guests)
    qtbot.waitUntil(first.hasFocus, timeout=5_000)  # the form takes the keys: type at once
    assert "waiting for your answer" in gui.transcript_text()
    qtbot.keyClicks(name, "Ada")
    guests.setValue(4)
    with qtbot.waitSignal(gui.window.reply_finished, timeout=20_000):
        alt(qtbot, gui, Qt.Key.Key_P)  # Accept
        focused = QApplication.focusWidget()
        assert focused is not None
        qtbot.keyClicks(focused, "thanks")  # typing goes on in the message field
    assert log.find("answered", tool="book", action="accept", content={"name": "Ada", "guests": 4})
    assert not card.isVisible()
    assert gui.window.composer.editor.toPlainText() == "thanks"
    assert gui.window.composer.editor.hasFocus()
    assert "Asked “Whose table, and for how many?” — answered" in gui.transcript_text()
    _, step = stored_step(gui, qtbot)
    assert step["status"] == "completed" and step["questions"][0]["state"] == "accept"
    keys = {(command, key) for _, command, key in shortcut_rows(gui.window.menus)}
    assert {("Accept", "Alt+P"), ("Decline", "Alt+L"), ("Cancel", "Alt+N")} <= keys


@pytest.mark.slow
def test_decline_tells_the_server_and_the_step_says_declined(
    asking_gui: GuiApp, upstream: ScriptedUpstream, log: ToolLog, qtbot: Any
) -> None:
    gui = asking_gui
    asks(gui, upstream, qtbot, "book")
    with qtbot.waitSignal(gui.window.reply_finished, timeout=20_000):
        alt(qtbot, gui, Qt.Key.Key_L)
    assert log.find("answered", tool="book", action="decline")
    assert not gui.window.question_card.isVisible()
    assert "Asked “Whose table, and for how many?” — declined" in gui.transcript_text()


@pytest.mark.slow
def test_a_url_is_shown_whole_and_opened_only_when_the_user_asks(
    asking_gui: GuiApp,
    upstream: ScriptedUpstream,
    log: ToolLog,
    qtbot: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    opened: list[str] = []
    monkeypatch.setattr(QDesktopServices, "openUrl", lambda url: opened.append(url.toString()))
    gui = asking_gui
    card = gui.window.question_card
    asks(gui, upstream, qtbot, "visit")
    assert card.message.text() == "Please sign the form on this page."
    assert card.url.isVisible() and card.url.toPlainText() == URL and card.url.isReadOnly()
    assert card.fields is None
    assert opened == []  # shown, not opened
    alt(qtbot, gui, Qt.Key.Key_O)
    assert opened == [QUrl(URL).toString()]
    assert card.isVisible()  # opening it answers nothing
    with qtbot.waitSignal(gui.window.reply_finished, timeout=20_000):
        qtbot.mouseClick(card.accept, Qt.MouseButton.LeftButton)
    assert log.find("answered", tool="visit", action="accept")
    assert opened == [QUrl(URL).toString()]


@pytest.mark.slow
def test_a_refused_answer_is_said_on_the_card_which_keeps_what_was_typed(
    asking_gui: GuiApp, upstream: ScriptedUpstream, log: ToolLog, qtbot: Any
) -> None:
    gui = asking_gui
    card = gui.window.question_card
    asks(gui, upstream, qtbot, "book")
    field(gui, "guests").setValue(3)
    qtbot.mouseClick(card.accept, Qt.MouseButton.LeftButton)  # no name: the server refuses
    qtbot.waitUntil(card.error.isVisible, timeout=10_000)
    assert "'name' is required" in card.error.text()
    assert card.isVisible() and card.accept.isEnabled()
    assert field(gui, "guests").value() == 3
    assert log.find("answered", tool="book") is None  # the server never saw it
    qtbot.keyClicks(field(gui, "name"), "Grace")
    with qtbot.waitSignal(gui.window.reply_finished, timeout=20_000):
        qtbot.keyClick(field(gui, "name"), Qt.Key.Key_Return)  # Enter accepts the form
    assert log.find(
        "answered", tool="book", action="accept", content={"name": "Grace", "guests": 3}
    )
    assert not card.isVisible()


@pytest.mark.slow
def test_stop_while_the_card_asks_ends_the_reply_and_the_question_is_cancelled(
    asking_gui: GuiApp, upstream: ScriptedUpstream, log: ToolLog, qtbot: Any
) -> None:
    gui = asking_gui
    card = gui.window.question_card
    asks(gui, upstream, qtbot, "book")
    with qtbot.waitSignal(gui.window.reply_finished, timeout=20_000):
        gui.window.menus.stop.trigger()
    assert not card.isVisible()
    reply, step = stored_step(gui, qtbot)
    assert (reply["status"], reply["ended_by"]) == ("interrupted", "client_hangup")
    assert step["status"] == "interrupted" and step["questions"][0]["state"] == "cancel"
    qtbot.waitUntil(lambda: "— cancelled" in gui.transcript_text(), timeout=5_000)
    assert "1 question" in gui.transcript_text()  # the receipt counts it
    assert gui.window.composer.editor.hasFocus()
    assert log.find("answered", tool="book") is None


@pytest.mark.slow
def test_another_chat_on_screen_hides_the_card_and_coming_back_shows_it(
    asking_gui: GuiApp, upstream: ScriptedUpstream, log: ToolLog, qtbot: Any
) -> None:
    gui = asking_gui
    card = gui.window.question_card
    asks(gui, upstream, qtbot, "book")
    asked = gui.window.current_id
    assert asked is not None and asked in gui.window.waiting.chats
    gui.window.new_chat()
    assert not card.isVisible()
    gui.window.sidebar.conversation_selected.emit(asked)
    qtbot.waitUntil(card.isVisible, timeout=10_000)
    with qtbot.waitSignal(gui.window.reply_finished, timeout=20_000):
        alt(qtbot, gui, Qt.Key.Key_N)  # Cancel
    assert log.find("answered", tool="book", action="cancel")


def test_a_question_names_the_sub_agent_whose_call_asks() -> None:
    question: Any = {
        "question_id": "c1-q1", "call_id": "c1", "server": "files", "tool": "read <it>",
        "mode": "form", "message": "Which?",
        "sub_agent": {"call_id": "d1", "task": "Sort   the\nphotos"},
    }  # fmt: skip
    title = question_title(question)
    assert title.startswith("<b>files</b> asks you (its tool <b>read &lt;it&gt;</b>")
    assert "sub-agent “Sort the photos”" in title


def test_a_form_is_drawn_from_its_schema_with_its_defaults(qtbot: Any) -> None:
    schema: dict[str, object] = {
        "type": "object",
        "properties": {
            "email": {"type": "string", "format": "email", "maxLength": 40, "title": "Email"},
            "ratio": {"type": "number", "minimum": 0, "maximum": 1, "default": 0.5},
            "age": {"type": "integer", "minimum": 18},
            "ok": {"type": "boolean", "default": True},
            "size": {"type": "string", "enum": ["s", "m"], "default": "m"},
            "colour": {"type": "string", "oneOf": [{"const": "r", "title": "Red"},
                                                   {"const": "g", "title": "Green"}]},
            "tags": {"type": "array", "items": {"anyOf": [{"const": "a", "title": "A"},
                                                          {"const": "b", "title": "B"}]},
                     "default": ["b"]},
        },
        "required": ["email", "size"],
    }  # fmt: skip
    form = QuestionFields(schema)
    qtbot.addWidget(form)
    widgets = {f.name: f.widget for f in form.fields}
    email = widgets["email"]
    assert isinstance(email, QLineEdit) and email.maxLength() == 40
    assert email.placeholderText() == "name@example.com"
    assert email.accessibleName() == "Email, required"
    colour = widgets["colour"]
    assert isinstance(colour, QComboBox)
    assert [colour.itemText(i) for i in range(colour.count())] == ["—", "Red", "Green"]
    assert isinstance(widgets["size"], QComboBox)
    boxes = widgets["tags"].findChildren(QCheckBox)
    assert [(b.text(), b.isChecked()) for b in boxes] == [("A", False), ("B", True)]
    # Left as drawn: the defaults, and nothing for an optional field without one.
    assert form.content() == {"ratio": 0.5, "ok": True, "size": "m", "tags": ["b"]}
    email.setText("a@b.c")
    age = widgets["age"]
    assert isinstance(age, QSpinBox) and age.specialValueText() == "—"
    age.setValue(30)
    colour.setCurrentIndex(2)
    boxes[0].setChecked(True)
    assert form.content() == {
        "email": "a@b.c", "ratio": 0.5, "age": 30, "ok": True, "size": "m", "colour": "g",
        "tags": ["a", "b"],
    }  # fmt: skip
