"""Tool steps in the window: drawn as compact lines inside the reply as they run, kept when the
chat is reopened, their details a click away; Stop during a tool says which one; the per-chat
Tools switch; the MCP servers dialog."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt, QUrl
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import QApplication

from desktop.tools.tool_trust import DESCRIPTION
from desktop.tools.tools_dialog import ToolsDialog
from desktop.transcript.step_details import StepDetailsDialog
from server.limits import LibraryLimits
from server.types import CitationPartJSON
from tests.desktop.conftest import GuiApp, run, with_tools
from tests.desktop.transcript.drawn import block_tops
from tests.support.tools import TOOL_COUNT, ToolLog
from tests.support.upstream import Script, ScriptedUpstream

pytestmark = pytest.mark.slow


@pytest.fixture
def tools_gui(gui_factory: Any, data_dir: Path, tool_log: ToolLog, qtbot: Any) -> GuiApp:
    return with_tools(gui_factory, data_dir, tool_log, qtbot, trust="allow")


def call(name: str, **arguments: Any) -> dict[str, str]:
    return {"name": f"t__{name}", "arguments": json.dumps(arguments)}


def stored_reply(gui: GuiApp, qtbot: Any) -> dict[str, Any]:
    client = gui.window.client
    assert client is not None and gui.window.current_id is not None
    conversation = run(qtbot, client.conversation(gui.window.current_id))
    reply: dict[str, Any] = conversation["messages"][-1]
    return reply


def test_steps_are_drawn_as_they_run_and_again_when_the_chat_is_reopened(
    tools_gui: GuiApp, upstream: ScriptedUpstream, qtbot: Any
) -> None:
    gui = tools_gui
    upstream.queue = [
        Script(texts=["Looking it up. "], tool_calls=[call("echo", text="needle")]),
        # Ending with a code block: Qt's table, the footer below it as when reopened.
        Script(texts=["Found ", "it.\n\n```\nneedle = 1\n```\n"]),
    ]
    with qtbot.waitSignal(gui.window.reply_finished, timeout=15_000):
        gui.send("find the needle")
    text = gui.transcript_text()
    assert "Looking it up." in text
    assert 't · echo(text="needle") — done in' in text
    assert text.index("Looking it up.") < text.index("echo(") < text.index("Found it.")
    reply = stored_reply(gui, qtbot)
    assert [p["type"] for p in reply["parts"]] == ["text", "tool", "text"]
    drawn_live = block_tops(gui.window.transcript)

    # Reopened: the same lines, from the stored parts, where they were.
    conversation_id = gui.window.current_id
    qtbot.keyClick(gui.window, Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier)
    assert "echo(" not in gui.transcript_text()
    sidebar = gui.window.sidebar
    qtbot.waitUntil(lambda: sidebar.list.count() == 1, timeout=5_000)
    sidebar.list.setCurrentRow(0)
    qtbot.waitUntil(lambda: gui.window.current_id == conversation_id, timeout=5_000)
    qtbot.waitUntil(lambda: "echo(" in gui.transcript_text(), timeout=5_000)
    assert "done in" in gui.transcript_text() and "Found it." in gui.transcript_text()
    assert block_tops(gui.window.transcript) == drawn_live

    # Its details: the full arguments and result.
    step_id = reply["parts"][1]["id"]
    gui.window.transcript.open_link(QUrl(f"step:{step_id}"))
    dialog = gui.window.findChild(StepDetailsDialog)
    assert dialog is not None and dialog.isVisible()
    details = dialog.text.toPlainText()
    assert '"text": "needle"' in details and "echo: needle" in details
    dialog.close()


def test_stop_during_a_tool_says_which_tool_and_the_step_is_saved_stopped(
    tools_gui: GuiApp, upstream: ScriptedUpstream, tool_log: ToolLog, qtbot: Any
) -> None:
    gui = tools_gui
    upstream.queue = [Script(tokens=0, tool_calls=[call("slow", seconds=30, tag="gui")])]
    gui.send("wait")
    qtbot.waitUntil(lambda: "slow(" in gui.transcript_text(), timeout=10_000)
    assert "running…" in gui.transcript_text()
    notes = gui.ending_notes()
    with qtbot.waitSignal(gui.window.reply_finished, timeout=10_000):
        gui.window.composer.button.click()
    # While it was being saved, the view said which tool was stopped.
    assert notes[0] == "Stopped during the tool t · slow — saving…"
    tool_log.wait("cancelled", tag="gui", timeout=5)
    text = gui.transcript_text()
    assert "slow(seconds=30" in text and "— stopped" in text
    assert "running…" not in text
    reply = stored_reply(gui, qtbot)
    assert (reply["status"], reply["ended_by"]) == ("interrupted", "client_hangup")
    assert reply["parts"][0]["status"] == "interrupted"
    assert gui.window.composer.button.text() == "Send"


def test_the_tools_switch_is_kept_per_chat(
    tools_gui: GuiApp, upstream: ScriptedUpstream, qtbot: Any
) -> None:
    gui = tools_gui
    switch = gui.window.tools_switch
    assert switch.isChecked()
    switch.setChecked(False)  # on the new chat: taken when it is created
    upstream.script = Script(texts=["no tools here"])
    with qtbot.waitSignal(gui.window.reply_finished, timeout=10_000):
        gui.send("plain")
    assert "tools" not in upstream.records[-1].body
    client = gui.window.client
    assert client is not None and gui.window.current_id is not None
    assert run(qtbot, client.conversation(gui.window.current_id))["tools"] is False

    switch.setChecked(True)  # on this chat: saved at once
    qtbot.waitUntil(
        lambda: run(qtbot, client.conversation(gui.window.current_id or ""))["tools"] is True,
        timeout=5_000,
    )
    qtbot.keyClick(gui.window, Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier)
    assert switch.isChecked()  # a new chat starts with tools


def test_the_mcp_servers_dialog_shows_adds_and_removes_servers(
    tools_gui: GuiApp, qtbot: Any, tmp_path: Path
) -> None:
    gui = tools_gui
    gui.window.chat_bar.settings_button.click()  # Settings → MCP servers…
    settings = gui.app._dialog
    assert settings is not None
    settings.tools_button.click()
    qtbot.waitUntil(lambda: gui.window.findChild(ToolsDialog) is not None, timeout=5_000)
    dialog = gui.window.findChild(ToolsDialog)
    assert dialog is not None
    qtbot.waitUntil(lambda: dialog.table.rowCount() == 1, timeout=5_000)
    assert dialog.table.item(0, 1).text() == f"ready with {TOOL_COUNT} tools"
    dialog.table.selectRow(0)
    tools = dialog.tools_table
    assert [tools.item(row, 0).text() for row in range(tools.rowCount())][:1] == ["echo"]
    assert tools.item(0, DESCRIPTION).text() == "Say the text back."
    assert f"t: ready with {TOOL_COUNT} tools" in dialog.details.toPlainText()

    dialog.new_button.click()
    dialog.name_edit.setText("second")
    dialog.entry_edit.setPlainText("{not json")
    dialog.save_button.click()
    assert "not valid JSON" in dialog.message.text()
    dialog.entry_edit.setPlainText('{"command": "/nonexistent/server"}')
    dialog.save_button.click()
    qtbot.waitUntil(lambda: dialog.table.rowCount() == 2, timeout=5_000)
    qtbot.waitUntil(
        lambda: "command not found" in (dialog.table.item(1, 1).text() or ""), timeout=10_000
    )
    dialog.table.selectRow(1)
    dialog.remove_button.click()
    qtbot.waitUntil(lambda: dialog.table.rowCount() == 1, timeout=5_000)
    assert "Removed second." in dialog.message.text()
    dialog.reject()
    settings.reject()
    QApplication.processEvents()


def test_a_reply_lists_the_documents_it_cited(
    gui: GuiApp,
    upstream: ScriptedUpstream,
    qtbot: Any,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from tests.support.documents import topic_folder

    files = topic_folder(tmp_path / "docs")
    client = gui.window.client
    assert client is not None
    run(qtbot, client.add_library_folder(str(tmp_path / "docs")))

    def indexed() -> bool:
        state = run(qtbot, client.library())
        return bool(state["progress"]["state"] == "idle" and state["folders"][0]["files"] == 20)

    qtbot.waitUntil(indexed, timeout=30_000)
    search = {"name": "search_documents", "arguments": '{"query": "aardvark burrows"}'}
    upstream.queue = [Script(tokens=0, tool_calls=[search]), Script(texts=["They dig [1]."])]
    gui.window.documents_switch.setChecked(True)  # the search is offered with the documents
    with qtbot.waitSignal(gui.window.reply_finished, timeout=15_000):
        gui.send("aardvarks?")
    text = gui.transcript_text()
    assert "library · search_documents" in text
    assert f"[1] {files['aardvark'].resolve()}, lines" in text

    # A click on the citation shows the cited lines; from there the file or its folder opens.
    from desktop.transcript.source_dialog import SourceDialog

    view = gui.window.transcript
    view.source_activated.emit(view.rows.ids()[-1], 1)  # its chip [1]
    dialog = gui.window.findChild(SourceDialog)
    assert dialog is not None and dialog.isVisible()
    # The server reads the file (it is in the library): then it may be opened.
    qtbot.waitUntil(dialog.open_button.isEnabled, timeout=10_000)
    first, last = dialog.citation["lines"] or [0, 0]
    cited = files["aardvark"].read_text().splitlines()[first - 1 : last]
    shown = dialog.text.toPlainText()
    # A line longer than LibraryLimits.source_line_chars is shown cut.
    assert all(line[: LibraryLimits.source_line_chars] in shown for line in cited if line.strip())
    assert "aardvark" in shown.lower()
    assert f"lines {first}–{last}" in dialog.place.text()
    opened: list[str] = []
    monkeypatch.setattr(QDesktopServices, "openUrl", lambda url: opened.append(url) or True)
    dialog.open_button.click()
    dialog.folder_button.click()
    path = files["aardvark"].resolve()
    assert [url.toLocalFile() for url in opened] == [str(path), str(path.parent)]
    dialog.reject()


def test_the_library_dialog_adds_shows_and_removes_a_folder(
    gui: GuiApp, qtbot: Any, tmp_path: Path
) -> None:
    from desktop.tools.library_dialog import LibraryDialog
    from tests.support.documents import topic_folder

    topic_folder(tmp_path / "docs")
    (tmp_path / "docs" / "blob.txt").write_bytes(b"\x00\x01" * 10)
    gui.window.chat_bar.library_button.click()
    qtbot.waitUntil(lambda: gui.window.findChild(LibraryDialog) is not None, timeout=5_000)
    dialog = gui.window.findChild(LibraryDialog)
    assert dialog is not None
    dialog.path_edit.setText("relative/path")
    dialog.add_button.click()
    qtbot.waitUntil(lambda: "absolute" in dialog.message.text(), timeout=5_000)
    dialog.path_edit.setText(str(tmp_path / "docs"))
    dialog.add_button.click()
    qtbot.waitUntil(lambda: dialog.table.rowCount() == 1, timeout=5_000)
    qtbot.waitUntil(lambda: dialog.table.item(0, 1).text() == "20", timeout=30_000)
    qtbot.waitUntil(lambda: dialog.progress_label.text() == "Up to date.", timeout=10_000)
    assert dialog.table.item(0, 3).text() == "1"
    dialog.table.selectRow(0)
    assert "blob.txt — binary, not text" in dialog.skipped.toPlainText()
    dialog.remove_button.click()
    qtbot.waitUntil(lambda: dialog.table.rowCount() == 0, timeout=5_000)
    dialog.reject()


def test_use_my_documents_is_kept_per_chat(
    gui: GuiApp, upstream: ScriptedUpstream, qtbot: Any
) -> None:
    switch = gui.window.documents_switch
    assert not switch.isChecked()
    switch.setChecked(True)
    upstream.script = Script(texts=["ok"])
    with qtbot.waitSignal(gui.window.reply_finished, timeout=10_000):
        gui.send("hello")
    client = gui.window.client
    assert client is not None and gui.window.current_id is not None
    assert run(qtbot, client.conversation(gui.window.current_id))["documents"] is True
    qtbot.keyClick(gui.window, Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier)
    assert not switch.isChecked()


def test_a_cited_source_that_cannot_be_read_shows_the_saved_quote(
    qtbot: Any, tmp_path: Path
) -> None:
    from desktop.transcript.source_dialog import SourceDialog

    gone: CitationPartJSON = {
        "type": "citation", "n": 2, "path": str(tmp_path / "gone.md"), "page": None,
        "lines": [3, 9], "quote": "Wombats <b>dig</b>",
    }  # fmt: skip
    dialog = SourceDialog(gone)
    qtbot.addWidget(dialog)
    assert "Reading the file" in dialog.text.toPlainText()
    assert not dialog.open_button.isEnabled()  # until the server says it is in the library
    reason = "gone before it could be read"
    dialog.show_source({"path": gone["path"], "in_library": True, "lines": None, "reason": reason})
    assert f"cannot be shown now ({reason})" in dialog.text.toPlainText()
    assert "Wombats <b>dig</b>…" in dialog.text.toPlainText()  # shown as text, not markup
    pdf: CitationPartJSON = {
        "type": "citation", "n": 1, "path": str(tmp_path / "a.pdf"), "page": 4, "lines": None,
        "quote": "Basalt cools",
    }  # fmt: skip
    dialog = SourceDialog(pdf)
    qtbot.addWidget(dialog)
    assert "page 4" in dialog.place.text() and "Basalt cools" in dialog.text.toPlainText()


def test_an_imported_citation_outside_the_library_is_never_read_or_opened(
    gui: GuiApp, qtbot: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 37: a citation's path is data; the window reads nothing itself, and the server
    reads only what a folder of the library holds now."""
    from desktop.transcript.source_dialog import SourceDialog

    secret = tmp_path / "id_rsa"
    secret.write_text("-----BEGIN OPENSSH PRIVATE KEY-----\n" * 5)
    imported: CitationPartJSON = {
        "type": "citation", "n": 1, "path": str(secret), "page": None, "lines": [1, 2],
        "quote": "what the file said",
    }  # fmt: skip
    opened: list[QUrl] = []
    monkeypatch.setattr(QDesktopServices, "openUrl", lambda url: opened.append(url) or True)
    gui.window.transcript.citation_clicked.emit(imported)
    dialog = gui.window.findChild(SourceDialog)
    assert dialog is not None
    qtbot.waitUntil(lambda: "not in your library" in dialog.text.toPlainText(), timeout=10_000)
    assert "PRIVATE KEY" not in dialog.text.toPlainText()
    assert "what the file said" in dialog.text.toPlainText()
    assert not dialog.open_button.isEnabled() and not dialog.folder_button.isEnabled()
    dialog.open_button.click()
    assert opened == []
    dialog.reject()


def test_a_folder_that_holds_secrets_is_added_only_after_the_user_confirms(
    gui: GuiApp, qtbot: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from PySide6.QtWidgets import QMessageBox

    from desktop.tools.library_dialog import LibraryDialog

    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "config.yaml").write_text("host: quokka\n")
    monkeypatch.setenv("HOME", str(home))
    gui.window.chat_bar.library_button.click()
    qtbot.waitUntil(lambda: gui.window.findChild(LibraryDialog) is not None, timeout=5_000)
    dialog = gui.window.findChild(LibraryDialog)
    assert dialog is not None

    def asked() -> QMessageBox | None:
        found = dialog.findChild(QMessageBox, "confirm-sensitive-folder")
        return found if found is not None and found.isVisible() else None

    for answer in ("Cancel", "Add anyway"):
        dialog.path_edit.setText(str(home / ".ssh"))
        dialog.add_button.click()
        qtbot.waitUntil(lambda: asked() is not None, timeout=5_000)
        ask = asked()
        assert ask is not None and "keys, passwords" in ask.informativeText()
        assert dialog.table.rowCount() == 0
        (button,) = [b for b in ask.buttons() if b.text() == answer]
        button.click()
        qtbot.waitUntil(lambda: asked() is None, timeout=5_000)
    qtbot.waitUntil(lambda: dialog.table.rowCount() == 1, timeout=5_000)
    dialog.reject()
