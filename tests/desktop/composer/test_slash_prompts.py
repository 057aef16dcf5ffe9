"""A tool server's prompts as slash commands: "/" at the start of the message offers them
("/server:prompt — description"), narrowed as the user types; Enter takes the first; one
with arguments asks them in a small form; the server fills it in and the composer gets its
text (an assistant turn quoted) and its files as chips; a "/" that matches no prompt is
only text.

The real window and embedded server, with tests/support/mcp_resources.py (an MCP server
written with the official SDK, over stdio, whose prompts are `review` (a required `code`, an
optional `language`) and `picture` (a text and an image)) configured as the server `r`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QPoint, Qt

from desktop.composer.prompt_form import PromptForm
from desktop.composer.slash_prompts import composed
from tests.desktop.conftest import GuiApp, run
from tests.support.resources import resources_server
from tests.support.tools import write_config
from tests.support.upstream import Script, ScriptedUpstream


@pytest.fixture
def resources_gui(gui_factory: Any, data_dir: Path, tmp_path: Path, qtbot: Any) -> GuiApp:
    """The window with the resources server `r` running."""
    write_config(data_dir / "mcp.json", {"r": resources_server(tmp_path / "resources.log")})
    gui: GuiApp = gui_factory()
    client = gui.window.client
    assert client is not None
    qtbot.waitUntil(lambda: run(qtbot, client.status())["tools"]["ready"] == 1, timeout=30_000)
    return gui


def offered(gui: GuiApp) -> list[str]:
    """The prompts the popup shows, in order (none while it is hidden)."""
    prompts = gui.window.prompts
    if not prompts.popup.isVisible():
        return []
    found = prompts.completer.completionModel()
    return [str(found.index(row, 0).data()) for row in range(found.rowCount())]


def type_in(gui: GuiApp, qtbot: Any, text: str) -> None:
    editor = gui.window.composer.editor
    editor.setFocus()
    qtbot.keyClicks(editor, text)


# The offscreen platform says these when a popup list shows (QCompleter's); not our warnings.
pytestmark = pytest.mark.qt_log_ignore(
    "This plugin does not support raise", "This plugin does not support grabbing the keyboard"
)

REVIEW = "/r:review — Asks for a review of some code."
PICTURE = "/r:picture — A text and an image."


def test_an_assistant_turn_of_a_prompt_is_quoted_in_the_message() -> None:
    messages = [
        {"role": "user", "text": "Translate: hello"},
        {"role": "assistant", "text": "Bonjour\n\nor Salut"},
        {"role": "user", "text": "Translate: cat\n"},
    ]
    assert composed(messages) == (  # type: ignore[arg-type]
        "Translate: hello\n\n> Assistant: Bonjour\n>\n> or Salut\n\nTranslate: cat"
    )


@pytest.mark.slow
def test_a_slash_offers_the_prompts_and_one_without_arguments_fills_the_composer(
    resources_gui: GuiApp, qtbot: Any
) -> None:
    gui = resources_gui
    type_in(gui, qtbot, "/")
    qtbot.waitUntil(lambda: sorted(offered(gui)) == [PICTURE, REVIEW], timeout=10_000)
    # Above the line typed on, over the conversation (not over the box's buttons).
    editor = gui.window.composer.editor
    line_top = editor.viewport().mapToGlobal(editor.cursorRect().topLeft()).y()
    popup = gui.window.prompts.popup
    assert popup.mapToGlobal(QPoint(0, popup.height())).y() <= line_top
    type_in(gui, qtbot, "pic")
    qtbot.waitUntil(lambda: offered(gui) == [PICTURE], timeout=5_000)
    # Keys go to the list while it is shown (it has the keyboard); the first is chosen.
    qtbot.keyClick(gui.window.prompts.popup, Qt.Key.Key_Return)
    composer = gui.window.composer
    qtbot.waitUntil(lambda: composer.text == "What is in this picture?", timeout=10_000)
    qtbot.waitUntil(lambda: len(composer.chips_shown()) == 1, timeout=5_000)
    (chip,) = composer.chips_shown()
    assert chip.state == "ready" and chip.attachment is not None
    assert chip.attachment["kind"] == "image"
    qtbot.waitUntil(lambda: chip.thumbnail is not None, timeout=5_000)
    assert not composer.notice.isVisible()  # nothing was left out
    assert gui.window.current_id is None  # nothing was sent


@pytest.mark.slow
def test_a_prompt_with_arguments_asks_them_first_and_its_text_goes_as_the_message(
    resources_gui: GuiApp, upstream: ScriptedUpstream, qtbot: Any
) -> None:
    gui = resources_gui
    type_in(gui, qtbot, "/r:rev")
    qtbot.waitUntil(lambda: offered(gui) == [REVIEW], timeout=10_000)
    qtbot.keyClick(gui.window.prompts.popup, Qt.Key.Key_Tab)
    qtbot.waitUntil(lambda: gui.window.findChild(PromptForm) is not None, timeout=5_000)
    form = gui.window.findChild(PromptForm)
    assert form is not None and form.isVisible()
    assert list(form.fields) == ["code", "language"]
    assert not form.use_button.isEnabled()  # `code` is required
    qtbot.keyClicks(form.fields["code"], "print(1)")
    qtbot.keyClicks(form.fields["language"], "Python 3")
    assert form.use_button.isEnabled()
    qtbot.keyClick(form.fields["language"], Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    composer = gui.window.composer
    qtbot.waitUntil(lambda: composer.text.startswith("Please review"), timeout=10_000)
    assert composer.text == "Please review this Python 3 code:\n\nprint(1)"
    assert not form.isVisible()
    upstream.queue = [Script(texts=["Looks fine."])]
    with qtbot.waitSignal(gui.window.reply_finished, timeout=15_000):
        qtbot.keyClick(composer.editor, Qt.Key.Key_Return)
    users = [m for m in upstream.records[-1].body["messages"] if m["role"] == "user"]
    assert "Please review this Python 3 code:\n\nprint(1)" in str(users[-1]["content"])


@pytest.mark.slow
def test_a_slash_that_is_no_prompt_is_only_text(
    resources_gui: GuiApp, upstream: ScriptedUpstream, qtbot: Any
) -> None:
    gui = resources_gui
    type_in(gui, qtbot, "/")
    qtbot.waitUntil(lambda: len(offered(gui)) == 2, timeout=10_000)
    qtbot.keyClick(gui.window.prompts.popup, Qt.Key.Key_Escape)  # closes the list only
    assert offered(gui) == [] and gui.window.composer.text == "/"
    type_in(gui, qtbot, "etc/hosts")
    assert offered(gui) == []
    upstream.queue = [Script(texts=["A path."])]
    with qtbot.waitSignal(gui.window.reply_finished, timeout=15_000):
        qtbot.keyClick(gui.window.composer.editor, Qt.Key.Key_Return)
    assert "/etc/hosts" in gui.transcript_text()


@pytest.mark.slow
def test_a_draft_that_begins_with_a_slash_offers_nothing_when_its_chat_is_shown_again(
    resources_gui: GuiApp, upstream: ScriptedUpstream, qtbot: Any
) -> None:
    gui = resources_gui
    upstream.queue = [Script(texts=["Hi."])]
    with qtbot.waitSignal(gui.window.reply_finished, timeout=15_000):
        gui.send("Hello")
    chat = gui.window.current_id
    type_in(gui, qtbot, "/r:")
    qtbot.waitUntil(lambda: len(offered(gui)) == 2, timeout=10_000)
    qtbot.keyClick(gui.window.prompts.popup, Qt.Key.Key_Escape)
    qtbot.keyClick(gui.window, Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier)  # a new chat
    assert gui.window.composer.text == ""
    qtbot.waitUntil(lambda: gui.window.sidebar.list.count() == 1, timeout=5_000)
    gui.window.sidebar.list.setCurrentRow(0)
    qtbot.waitUntil(lambda: gui.window.current_id == chat, timeout=5_000)
    assert gui.window.composer.text == "/r:"  # its draft, the cursor at its end
    assert offered(gui) == []
