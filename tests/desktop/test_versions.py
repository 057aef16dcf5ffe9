"""The actions under each message (issue 13): Copy; Continue a stopped reply (it grows in
place); Regenerate (a new version, ‹ 2/2 ›, and back with ‹); Edit a question (a new
branch); each through the same reply path as sending, so Stop ends it the same way."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QUrl
from PySide6.QtGui import QGuiApplication

from tests.desktop.conftest import GuiApp
from tests.desktop.test_replies import start_reply, stored
from tests.support.upstream import Script, ScriptedUpstream


def click(gui: GuiApp, action: str, message_id: str) -> None:
    gui.window.transcript.open_link(QUrl(f"msg:{action}/{message_id}"))


def links(gui: GuiApp) -> str:
    """The actions the transcript offers, as `msg:ACTION/ID` (what its buttons do)."""
    view = gui.window.transcript
    return " ".join(
        f"msg:{action}/{row_id}" for row_id in view.rows.ids() for action in view.actions_of(row_id)
    )


def test_stop_then_continue_then_regenerate_then_switch_versions(
    gui: GuiApp, upstream: ScriptedUpstream, qtbot: Any
) -> None:
    cid = start_reply(gui, qtbot, upstream, "alpha")
    with qtbot.waitSignal(gui.window.reply_finished, timeout=10_000):
        gui.window.composer.button.click()  # Stop
    question, reply = (m["id"] for m in stored(gui, qtbot, cid))
    assert f"msg:continue/{reply}" in links(gui) and f"msg:edit/{question}" in links(gui)

    # Copy puts the reply's text on the clipboard.
    click(gui, "copy", reply)
    assert QGuiApplication.clipboard().text().startswith("alpha-0 alpha-1 alpha-2")

    # Continue: the same message grows; the window shows old and new text.
    upstream.script = Script(texts=[" and", " the end."])
    with qtbot.waitSignal(gui.window.reply_finished, timeout=10_000):
        click(gui, "continue", reply)
    qtbot.waitUntil(lambda: "the end." in gui.transcript_text(), timeout=5_000)
    messages = stored(gui, qtbot, cid)
    assert [m["id"] for m in messages] == [question, reply]
    assert messages[1]["content"].startswith("alpha-0 alpha-1 alpha-2")
    assert messages[1]["content"].endswith(" and the end.")
    assert messages[1]["status"] == "completed" and messages[1]["continued"] == "prefix"
    qtbot.waitUntil(lambda: f"msg:continue/{reply}" not in links(gui), timeout=5_000)

    # Regenerate: a second version, shown with ‹ 2/2 ›; ‹ goes back to the first.
    upstream.script = Script(texts=["Second", " version."])
    with qtbot.waitSignal(gui.window.reply_finished, timeout=10_000):
        click(gui, "regenerate", reply)
    qtbot.waitUntil(lambda: "2/2" in gui.transcript_text(), timeout=5_000)
    assert "Second version." in gui.transcript_text() and "the end." not in gui.transcript_text()
    assert "alpha" in gui.transcript_text()  # the question is still there, once
    assert gui.transcript_text().count("alpha") == 1
    click(gui, "version", reply)
    qtbot.waitUntil(lambda: "1/2" in gui.transcript_text(), timeout=5_000)
    assert "the end." in gui.transcript_text() and "Second version." not in gui.transcript_text()


def test_edit_sends_a_new_version_of_the_question_and_cancel_leaves_it(
    gui: GuiApp, upstream: ScriptedUpstream, qtbot: Any
) -> None:
    upstream.script = Script(texts=["First answer."])
    gui.send("What is basalt?")
    qtbot.waitUntil(lambda: "First answer." in gui.transcript_text(), timeout=10_000)
    qtbot.waitUntil(lambda: gui.window.composer.button.text() == "Send", timeout=5_000)
    cid = gui.window.current_id or ""
    question = stored(gui, qtbot, cid)[0]["id"]

    click(gui, "edit", question)
    composer = gui.window.composer
    assert composer.text == "What is basalt?" and composer.button.text() == "Send edit"
    assert composer.edit_note.isVisibleTo(gui.window)
    composer.cancel_edit.click()
    assert composer.text == "" and composer.button.text() == "Send"

    click(gui, "edit", question)
    upstream.script = Script(texts=["Pumice floats."])
    gui.send("What is pumice?")
    qtbot.waitUntil(lambda: "Pumice floats." in gui.transcript_text(), timeout=10_000)
    qtbot.waitUntil(lambda: "2/2" in gui.transcript_text(), timeout=5_000)
    text = gui.transcript_text()
    assert "What is basalt?" not in text and "First answer." not in text
    assert upstream.records[-1].body["messages"][-1]["content"] == "What is pumice?"
    assert [m["role"] for m in upstream.records[-1].body["messages"]] == ["user"]
    assert composer.button.text() == "Send" and not composer.edit_note.isVisibleTo(gui.window)
    messages = stored(gui, qtbot, cid)
    assert messages[0]["siblings"][0] == question and messages[0]["sibling_index"] == 1


def test_ctrl_f_finds_in_the_open_chat_next_previous_and_escape(
    gui: GuiApp, upstream: ScriptedUpstream, qtbot: Any
) -> None:
    from PySide6.QtCore import Qt

    upstream.script = Script(texts=["Basalt is dark. ", "BASALT cools fast. ", "Granite is not."])
    gui.send("Tell me about basalt")
    qtbot.waitUntil(lambda: "Granite is not." in gui.transcript_text(), timeout=10_000)
    bar = gui.window.find_bar
    qtbot.keyClick(gui.window.transcript, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier)
    assert bar.isVisible() and bar.field.hasFocus()
    qtbot.keyClicks(bar.field, "basalt")
    assert bar.matches == 3 and bar.current == 0  # the question's, the reply's two
    assert bar.count.text() == "1 of 3"
    qtbot.keyClick(bar.field, Qt.Key.Key_Return)
    assert bar.current == 1
    assert gui.window.transcript.found_words == "Basalt"
    qtbot.keyClick(bar.field, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
    qtbot.keyClick(bar.field, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
    assert bar.current == 2  # wraps around
    bar.field.setText("obsidian")
    assert bar.matches == 0 and bar.count.text() == "No matches"
    qtbot.keyClick(bar.field, Qt.Key.Key_Escape)
    assert not bar.isVisible() and gui.window.transcript.found_words == ""


def test_chat_settings_set_the_system_prompt_and_parameters_of_the_next_replies(
    gui: GuiApp, upstream: ScriptedUpstream, qtbot: Any, monkeypatch: Any
) -> None:
    from desktop.chats.settings_dialog import ChatSettingsDialog
    from desktop.errors import ClientError

    assert not gui.window.chat_bar.chat_settings_button.isEnabled()  # no chat yet
    upstream.script = Script(texts=["Hi."])
    with qtbot.waitSignal(gui.window.reply_finished, timeout=10_000):
        gui.send("Hello")
    button = gui.window.chat_bar.chat_settings_button
    qtbot.waitUntil(button.isEnabled, timeout=5_000)
    button.click()
    qtbot.waitUntil(lambda: gui.window.findChild(ChatSettingsDialog) is not None, timeout=5_000)
    dialog = gui.window.findChild(ChatSettingsDialog)
    assert dialog is not None and dialog.system.toPlainText() == ""
    dialog.system.setPlainText("Answer in French.")
    check, box = dialog.rows["temperature"]
    assert not box.isEnabled()
    check.setChecked(True)
    box.setValue(0.3)
    seed_check, seed = dialog.rows["seed"]
    seed_check.setChecked(True)
    seed.setValue(42)

    client = gui.window.client
    assert client is not None
    real_update = client.update

    async def refused(*_args: Any) -> Any:
        raise ClientError("'params.temperature' must be between 0 and 2", status=400)

    monkeypatch.setattr(client, "update", refused)
    dialog._on_save()
    qtbot.waitUntil(lambda: "params.temperature" in dialog.message.text(), timeout=5_000)
    assert dialog.isVisible()  # stays open, nothing lost
    monkeypatch.setattr(client, "update", real_update)
    with qtbot.waitSignal(dialog.finished, timeout=5_000):
        dialog._on_save()

    upstream.script = Script(texts=["Bonjour."])
    with qtbot.waitSignal(gui.window.reply_finished, timeout=10_000):
        gui.send("Again")
    body = upstream.records[-1].body
    assert body["messages"][0] == {"role": "system", "content": "Answer in French."}
    assert body["temperature"] == 0.3 and body["seed"] == 42 and "top_p" not in body


def test_file_menu_exports_atomically_and_imports_all_or_nothing(
    gui: GuiApp, upstream: ScriptedUpstream, qtbot: Any, monkeypatch: Any, tmp_path: Any
) -> None:
    import json

    from PySide6.QtWidgets import QFileDialog

    from desktop.chats.history_notices import COPY

    files = gui.window.history_files
    assert not gui.window.menus.export_chat.isEnabled()
    upstream.script = Script(texts=["Basalt is volcanic."])
    with qtbot.waitSignal(gui.window.reply_finished, timeout=10_000):
        gui.send("What is basalt?")
    qtbot.waitUntil(gui.window.menus.export_chat.isEnabled, timeout=5_000)

    out = tmp_path / "out"
    out.mkdir()
    markdown = out / "basalt.md"
    monkeypatch.setattr(
        QFileDialog, "getSaveFileName", lambda *a: (str(markdown), "Markdown (*.md)")
    )
    with qtbot.waitSignal(files.done, timeout=5_000):
        gui.window.menus.export_chat.trigger()
    assert "Basalt is volcanic." in markdown.read_text() and "## You" in markdown.read_text()
    everything = out / "all.json"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a: (str(everything), ""))
    with qtbot.waitSignal(files.done, timeout=5_000):
        files.export_all()
    exported = json.loads(everything.read_text())
    assert len(exported["conversations"]) == 1
    assert sorted(p.name for p in out.iterdir()) == ["all.json", "basalt.md"]  # no .part

    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a: (str(everything), ""))
    files.import_file()  # the chat is here already: imported again as a copy when asked

    def asked() -> bool:
        return files.notice is not None and files.notice.objectName() == "import-duplicates"

    qtbot.waitUntil(asked, timeout=10_000)
    assert files.notice is not None
    with qtbot.waitSignal(files.done, timeout=10_000) as done:
        [copies] = [b for b in files.notice.buttons() if b.text() == COPY]
        copies.click()
    assert done.args == [
        "Imported 1 chat from all.json (1 already here, imported again as copies)."
    ]
    qtbot.waitUntil(lambda: gui.window.sidebar.list.count() == 2, timeout=5_000)

    broken = tmp_path / "broken.json"
    broken.write_text('{"format": "parley", "version": 1, "conversations": [{"id": 1}]}')
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a: (str(broken), ""))
    files.import_file()
    qtbot.waitUntil(lambda: "Nothing was imported" in gui.window.banner.text(), timeout=5_000)
    assert "conversations[0]" in gui.window.banner.text()
    assert gui.window.sidebar.list.count() == 2


def test_a_search_hit_in_another_version_opens_that_version_at_the_word(
    gui: GuiApp, upstream: ScriptedUpstream, qtbot: Any
) -> None:
    from PySide6.QtCore import Qt

    upstream.script = Script(texts=["Wombats ", "dig ", "burrows."])
    with qtbot.waitSignal(gui.window.reply_finished, timeout=10_000):
        gui.send("Which animal digs?")
    cid = gui.window.current_id or ""
    reply = stored(gui, qtbot, cid)[1]["id"]
    upstream.script = Script(texts=["Moles do."])
    with qtbot.waitSignal(gui.window.reply_finished, timeout=10_000):
        click(gui, "regenerate", reply)
    qtbot.waitUntil(lambda: "2/2" in gui.transcript_text(), timeout=5_000)
    qtbot.keyClick(gui.window, Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier)  # away

    sidebar = gui.window.sidebar
    sidebar.search.setText("burrows")
    qtbot.waitUntil(lambda: sidebar.list.count() == 1 and sidebar.hit(cid) == reply)
    sidebar.list.setCurrentRow(0)
    qtbot.waitUntil(lambda: "1/2" in gui.transcript_text(), timeout=5_000)
    assert "Moles do." not in gui.transcript_text()
    qtbot.waitUntil(lambda: gui.window.transcript.found_words == "burrows")


def test_a_reply_cut_at_its_length_limit_says_so_and_can_be_continued(
    gui: GuiApp, upstream: ScriptedUpstream, qtbot: Any
) -> None:
    upstream.script = Script(texts=["Once upon", " a time"], finish_reason="length")
    with qtbot.waitSignal(gui.window.reply_finished, timeout=10_000):
        gui.send("a story")
    cid = gui.window.current_id
    assert cid is not None
    question, reply = (m["id"] for m in stored(gui, qtbot, cid))
    qtbot.waitUntil(lambda: "Cut at the length limit" in gui.transcript_text(), timeout=5_000)
    assert f"msg:continue/{reply}" in links(gui)
    # Drawn again from the store (the chat reopened): the same.
    gui.window.transcript.show_conversation(stored(gui, qtbot, cid))  # type: ignore[arg-type]
    assert "Cut at the length limit" in gui.transcript_text()
    assert f"msg:continue/{reply}" in links(gui)

    upstream.script = Script(texts=[" there was", " a king."])
    with qtbot.waitSignal(gui.window.reply_finished, timeout=10_000):
        click(gui, "continue", reply)
    qtbot.waitUntil(lambda: "a king." in gui.transcript_text(), timeout=5_000)
    messages = stored(gui, qtbot, cid)
    assert [m["id"] for m in messages] == [question, reply]
    assert messages[1]["content"] == "Once upon a time there was a king."
    assert (messages[1]["status"], messages[1]["finish_reason"]) == ("completed", "stop")
    qtbot.waitUntil(lambda: f"msg:continue/{reply}" not in links(gui), timeout=5_000)
    assert "Cut at the length limit" not in gui.transcript_text()


def test_what_was_typed_before_an_edit_comes_back_after_it(
    gui: GuiApp, upstream: ScriptedUpstream, qtbot: Any
) -> None:
    upstream.script = Script(texts=["First answer."])
    with qtbot.waitSignal(gui.window.reply_finished, timeout=10_000):
        gui.send("What is basalt?")
    question = stored(gui, qtbot, gui.window.current_id or "")[0]["id"]
    composer = gui.window.composer
    qtbot.keyClicks(composer.editor, "a draft, half written")

    click(gui, "edit", question)
    assert composer.text == "What is basalt?"
    composer.cancel_edit.click()
    assert composer.text == "a draft, half written"  # not lost to the edit

    click(gui, "edit", question)
    upstream.script = Script(texts=["Pumice floats."])
    with qtbot.waitSignal(gui.window.reply_finished, timeout=10_000):
        gui.send("What is pumice?")
    assert "Pumice floats." in gui.transcript_text()
    assert composer.text == "a draft, half written"  # the edit went; the draft is back
