"""Attachments in the window (issue 43 item 1), through the real server to the scripted
upstream: files attached by the Attach button, dropped on the conversation or pasted (files,
or an image) become chips that upload at once; a file refused shows why; a message with an
image reaches an upstream as an OpenAI `image_url` part, and the chips clear; the local model
refuses an image before anything is sent, and the composer keeps the words and the chips;
reopening the chat shows the files, and a click saves one or shows an image; ten images of
8000×8000 pixels, attached or in a chat, add at most 100 MB to the window and say they are
too large to preview."""

from __future__ import annotations

import base64
import html
import os
import re
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QMimeData, QPoint, QPointF, Qt, QUrl
from PySide6.QtGui import QColor, QDragEnterEvent, QDropEvent, QImage
from PySide6.QtWidgets import QApplication, QFileDialog, QToolButton, QWidget

from desktop.composer.attachment_chips import Chip
from desktop.composer.attachment_files import read_file
from desktop.errors import AttachmentError
from desktop.transcript.image_viewer import ImageViewer
from desktop.window.menus import shortcut_rows
from server.models.bundled import BUNDLED_MODEL_NAME
from tests.desktop.conftest import GuiApp, run
from tests.desktop.transcript.test_view import items
from tests.support.parley import MODEL
from tests.support.pixels import big_png, memory_mb, reset_peak_memory
from tests.support.upstream import Script, ScriptedUpstream


def png(path: Path, colour: str = "teal", size: int = 64) -> Path:
    image = QImage(size, size // 2, QImage.Format.Format_RGB32)
    image.fill(QColor(colour))
    assert image.save(str(path), "PNG")
    return path


def chips(gui: GuiApp) -> list[Chip]:
    return gui.window.composer.chips_shown()


def settled(gui: GuiApp, qtbot: Any, count: int, timeout_ms: int = 10_000) -> list[Chip]:
    """Until `count` chips are attached and none is still uploading."""
    qtbot.waitUntil(
        lambda: len(chips(gui)) == count and not gui.window.composer.uploading, timeout=timeout_ms
    )
    return chips(gui)


def chip_texts(gui: GuiApp) -> list[str]:
    return [frame.accessibleName() for frame in gui.window.composer.chips.chip_frames()]


def drop_files(widget: QWidget, *paths: Path) -> bool:
    """Drag files from a file manager onto `widget` and drop them: whether it took them."""
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(p)) for p in paths])
    action, button = Qt.DropAction.CopyAction, Qt.MouseButton.LeftButton
    enter = QDragEnterEvent(QPoint(20, 10), action, mime, button, Qt.KeyboardModifier.NoModifier)
    QApplication.sendEvent(widget, enter)  # (a drop goes only where the drag entered)
    drop = QDropEvent(QPointF(20, 10), action, mime, button, Qt.KeyboardModifier.NoModifier)
    QApplication.sendEvent(widget, drop)
    return enter.isAccepted() and drop.isAccepted()


def attach_by_dialog(gui: GuiApp, monkeypatch: Any, *paths: Path) -> None:
    monkeypatch.setattr(QFileDialog, "getOpenFileNames", lambda *a: ([str(p) for p in paths], ""))
    gui.window.composer.attach_files.trigger()  # (the Attach button's menu: Files…)


def test_the_attach_button_uploads_the_files_chosen_as_chips(
    gui: GuiApp, qtbot: Any, monkeypatch: Any, tmp_path: Path
) -> None:
    notes = tmp_path / "notes.md"
    notes.write_text("# Quokkas\n\nThey smile.\n")
    picture = png(tmp_path / "quokka.png")
    attach_by_dialog(gui, monkeypatch, notes, picture)
    first, second = settled(gui, qtbot, 2)
    assert (first.state, second.state) == ("ready", "ready")
    assert first.attachment is not None and first.attachment["kind"] == "text"
    assert second.attachment is not None and second.attachment["kind"] == "image"
    assert first.thumbnail is None and second.thumbnail is not None  # an image has one
    assert gui.window.composer.chips.isVisible()
    assert chip_texts(gui) == ["notes.md, 23 bytes", f"quokka.png, {second.size} bytes"]
    assert gui.window.composer.button.isEnabled()


def test_files_dropped_on_the_conversation_or_pasted_become_chips(
    gui: GuiApp, qtbot: Any, tmp_path: Path
) -> None:
    dropped = tmp_path / "dropped.txt"
    dropped.write_text("from the file manager")
    assert drop_files(gui.window.transcript, dropped)
    settled(gui, qtbot, 1)
    on_composer = tmp_path / "on the composer.csv"
    on_composer.write_text("a,b\n1,2\n")
    assert drop_files(gui.window.composer.editor.viewport(), on_composer)
    settled(gui, qtbot, 2)

    # Ctrl+V of files copied in a file manager, then of an image (a screenshot).
    pasted = tmp_path / "pasted.py"
    pasted.write_text("print('hi')\n")
    copied = QMimeData()
    copied.setUrls([QUrl.fromLocalFile(str(pasted))])
    copied.setText(str(pasted))  # file managers put the path as text too: not typed in
    QApplication.clipboard().setMimeData(copied)
    editor = gui.window.composer.editor
    editor.setFocus()
    qtbot.keyClick(editor, Qt.Key.Key_V, Qt.KeyboardModifier.ControlModifier)
    settled(gui, qtbot, 3)
    screenshot = QImage(40, 30, QImage.Format.Format_RGB32)
    screenshot.fill(QColor("orange"))
    QApplication.clipboard().setImage(screenshot)
    qtbot.keyClick(editor, Qt.Key.Key_V, Qt.KeyboardModifier.ControlModifier)
    found = settled(gui, qtbot, 4)
    names = ["dropped.txt", "on the composer.csv", "pasted.py", "Pasted image.png"]
    assert [c.name for c in found] == names
    assert [c.state for c in found] == ["ready"] * 4
    assert found[3].attachment is not None and found[3].attachment["mime"] == "image/png"
    assert found[3].thumbnail is not None
    assert gui.window.composer.text == ""  # nothing typed by the pastes


def test_a_refused_file_shows_why_and_its_chip_goes_from_the_keyboard(
    gui: GuiApp, qtbot: Any, monkeypatch: Any, tmp_path: Path
) -> None:
    binary = tmp_path / "program.bin"
    binary.write_bytes(bytes(range(256)) * 8)
    huge = tmp_path / "huge.txt"
    with huge.open("wb") as file:
        file.truncate(25 * 1024 * 1024)  # sparse: refused from its size, never read
    attach_by_dialog(gui, monkeypatch, binary, huge)
    refused = settled(gui, qtbot, 2)
    assert [c.state for c in refused] == ["refused", "refused"]
    assert refused[0].reason  # the server's reason, as it said it
    assert refused[1].reason == "huge.txt is 25.0 MB: files up to 20.0 MB can be attached"
    assert refused[1].reason in chip_texts(gui)[1]
    # Nothing to send: Enter does nothing; then × (reached by Tab, pressed by Space).
    composer = gui.window.composer
    with qtbot.assertNotEmitted(composer.message_submitted):
        qtbot.keyClick(composer.editor, Qt.Key.Key_Return)
    removes = composer.chips.findChildren(QToolButton, "attachment-remove")
    assert removes[0].focusPolicy() & Qt.FocusPolicy.TabFocus
    removes[0].setFocus()
    qtbot.keyClick(removes[0], Qt.Key.Key_Space)
    qtbot.waitUntil(lambda: [c.name for c in chips(gui)] == ["huge.txt"])
    composer.chips.findChildren(QToolButton, "attachment-remove")[0].click()
    qtbot.waitUntil(lambda: not chips(gui) and not composer.chips.isVisible())


def test_an_image_reaches_the_upstream_as_an_image_url_part_and_shows_in_the_chat(
    gui: GuiApp, upstream: ScriptedUpstream, qtbot: Any, monkeypatch: Any, tmp_path: Path
) -> None:
    upstream.script = Script(tokens=2)
    picture = png(tmp_path / "quokka.png")
    notes = tmp_path / "notes.txt"
    notes.write_text("They smile.")
    attach_by_dialog(gui, monkeypatch, picture, notes)
    settled(gui, qtbot, 2)
    with qtbot.waitSignal(gui.window.reply_finished, timeout=10_000):
        gui.send("What is this?")
    url = "data:image/png;base64," + base64.b64encode(picture.read_bytes()).decode()
    user = [m for m in upstream.records[-1].body["messages"] if m["role"] == "user"][-1]
    assert {"type": "image_url", "image_url": {"url": url}} in user["content"]
    assert any("They smile." in p.get("text", "") for p in user["content"])
    # Sent: the composer is empty again; the question shows its files, the image's thumbnail.
    assert chips(gui) == [] and gui.window.composer.text == ""
    text = gui.transcript_text()
    assert "quokka.png" in text and "notes.txt" in text
    image_id = next(a["id"] for a in _attached(gui) if a["name"] == "quokka.png")
    assert "quokka.png" in gui.transcript_text()  # its chip above the question
    qtbot.waitUntil(lambda: thumbnail_colour(gui) == QColor("teal"), timeout=5_000)

    # Reopened, the chat shows them again.
    chat = gui.window.current_id
    assert chat is not None
    qtbot.keyClick(gui.window, Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier)
    assert "quokka.png" not in gui.transcript_text()
    sidebar = gui.window.sidebar
    qtbot.waitUntil(lambda: sidebar.list.count() >= 1, timeout=5_000)
    sidebar.list.setCurrentRow(0)
    qtbot.waitUntil(lambda: gui.window.current_id == chat, timeout=5_000)
    qtbot.waitUntil(lambda: "quokka.png" in gui.transcript_text(), timeout=5_000)
    assert "quokka.png" in gui.transcript_text() and "notes.txt" in gui.transcript_text()
    assert image_id in [a["id"] for a in _attached(gui)]


def thumbnail_colour(gui: GuiApp) -> QColor | None:
    """The colour in the middle of the one image thumbnail drawn in the transcript."""
    shown = items(gui.window.transcript, "thumbnail")
    if len(shown) != 1 or shown[0].width() == 0:
        return None
    middle = shown[0].mapToScene(QPointF(shown[0].width() / 2, shown[0].height() / 2))
    image = gui.window.transcript.grabFramebuffer()
    ratio = image.devicePixelRatio()
    return image.pixelColor(int(middle.x() * ratio), int(middle.y() * ratio))


def _attached(gui: GuiApp) -> list[dict[str, Any]]:
    """The files of the chat shown's messages, as stored."""
    client = gui.window.client
    assert client is not None and gui.window.current_id is not None
    conversation = run(gui.qtbot, client.conversation(gui.window.current_id))
    return [a for m in conversation["messages"] for a in m.get("attachments", [])]


def test_a_message_of_files_alone_is_sent(
    gui: GuiApp, upstream: ScriptedUpstream, qtbot: Any, monkeypatch: Any, tmp_path: Path
) -> None:
    upstream.script = Script(tokens=1)
    notes = tmp_path / "minutes.md"
    notes.write_text("Decided: more quokkas.")
    attach_by_dialog(gui, monkeypatch, notes)
    settled(gui, qtbot, 1)
    with qtbot.waitSignal(gui.window.reply_finished, timeout=10_000):
        qtbot.keyClick(gui.window.composer.editor, Qt.Key.Key_Return)
    user = [m for m in upstream.records[-1].body["messages"] if m["role"] == "user"][-1]
    assert "Decided: more quokkas." in str(user["content"])
    assert chips(gui) == []


def test_the_local_model_refuses_an_image_and_the_composer_keeps_words_and_chips(
    gui: GuiApp, qtbot: Any, monkeypatch: Any, tmp_path: Path
) -> None:
    picker = gui.window.model_picker
    qtbot.waitUntil(lambda: picker.combo.findText(BUNDLED_MODEL_NAME) >= 0, timeout=10_000)
    picker.combo.setCurrentIndex(picker.combo.findText(BUNDLED_MODEL_NAME))
    attach_by_dialog(gui, monkeypatch, png(tmp_path / "cat.png"))
    settled(gui, qtbot, 1)
    with qtbot.waitSignal(gui.window.error_shown, timeout=10_000) as shown:
        gui.send("What is this?")
    assert "cannot see images" in shown.args[0] and "cat.png" in shown.args[0]
    assert gui.window.composer.text == "What is this?"
    assert [c.name for c in chips(gui)] == ["cat.png"] and chips(gui)[0].state == "ready"
    assert gui.window.composer.button.text() == "Send"


def pick(gui: GuiApp, name: str) -> None:
    """Show `name` in the model picker (the chat's next turns go to it)."""
    picker = gui.window.model_picker
    gui.qtbot.waitUntil(lambda: picker.combo.findText(name) >= 0, timeout=10_000)
    picker.combo.setCurrentIndex(picker.combo.findText(name))


def refused_send(gui: GuiApp, monkeypatch: Any, tmp_path: Path, text: str) -> str:
    """Attach an image and send it with `text` to the local model: what the banner says."""
    pick(gui, BUNDLED_MODEL_NAME)
    attach_by_dialog(gui, monkeypatch, png(tmp_path / "cat.png"))
    settled(gui, gui.qtbot, 1)
    with gui.qtbot.waitSignal(gui.window.error_shown, timeout=10_000) as shown:
        gui.send(text)
    said: str = shown.args[0]
    assert "cannot see images" in said
    return said


def test_a_refused_first_message_leaves_no_chat_behind(
    gui: GuiApp, qtbot: Any, monkeypatch: Any, tmp_path: Path
) -> None:
    refused_send(gui, monkeypatch, tmp_path, "What is this?")
    client = gui.window.client
    assert client is not None
    assert run(qtbot, client.conversations()) == []  # no empty "New chat" on the server
    # Still the new chat, its page again; the words and the image wait in the composer.
    assert gui.window.current_id is None and gui.window.sidebar.list.count() == 0
    qtbot.waitUntil(lambda: gui.window.transcript.welcome_shown, timeout=5_000)
    assert "What is this?" not in gui.transcript_text()
    assert gui.window.composer.text == "What is this?"
    assert [c.name for c in chips(gui)] == ["cat.png"]
    assert gui.window.composer.button.text() == "Send"


def test_a_refusal_is_said_only_while_its_chat_is_on_screen(
    gui: GuiApp, upstream: ScriptedUpstream, qtbot: Any, monkeypatch: Any, tmp_path: Path
) -> None:
    upstream.script = Script(tokens=2)
    with qtbot.waitSignal(gui.window.reply_finished, timeout=10_000):
        gui.send("Hello")
    chat = gui.window.current_id
    assert chat is not None
    banner = gui.window.banner
    # Refused in a chat: the chat shows what it stored, the banner says why...
    said = refused_send(gui, monkeypatch, tmp_path, "And this?")
    assert banner.isVisible() and banner.text() == said
    qtbot.waitUntil(lambda: "And this?" not in gui.transcript_text(), timeout=5_000)
    assert "Hello" in gui.transcript_text() and gui.window.composer.text == "And this?"
    # ...until another chat (here a new one) is shown.
    qtbot.keyClick(gui.window, Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier)
    assert not banner.isVisible()
    # Refused in a new chat: said until the chat of before is opened.
    (tmp_path / "new").mkdir()
    said = refused_send(gui, monkeypatch, tmp_path / "new", "What is this?")
    assert banner.isVisible() and banner.text() == said
    qtbot.waitUntil(lambda: gui.window.sidebar.list.count() == 1, timeout=5_000)
    gui.window.sidebar.list.setCurrentRow(0)
    qtbot.waitUntil(lambda: gui.window.current_id == chat, timeout=5_000)
    assert not banner.isVisible()


def test_an_image_chip_warns_at_once_when_the_chosen_model_cannot_see_images(
    gui: GuiApp, qtbot: Any, monkeypatch: Any, tmp_path: Path
) -> None:
    picker = gui.window.model_picker
    qtbot.waitUntil(lambda: picker.combo.findText(BUNDLED_MODEL_NAME) >= 0, timeout=10_000)
    picker.combo.setCurrentIndex(picker.combo.findText(BUNDLED_MODEL_NAME))
    notes = tmp_path / "notes.txt"
    notes.write_text("Quokkas smile.")
    attach_by_dialog(gui, monkeypatch, png(tmp_path / "cat.png"), notes)
    settled(gui, qtbot, 2)
    frames = gui.window.composer.chips.chip_frames
    # Before Send: the image's chip says why, the text file's says nothing.
    qtbot.waitUntil(lambda: frames()[0].toolTip() == "The chosen model cannot see images")
    assert "⚠" in frames()[0].accessibleName()
    assert frames()[1].toolTip() == "" and "⚠" not in frames()[1].accessibleName()
    # A model that takes images: the warning goes; back to the local one, it comes back.
    picker.combo.setCurrentIndex(picker.combo.findText(MODEL))
    qtbot.waitUntil(lambda: frames()[0].toolTip() == "", timeout=5_000)
    assert "⚠" not in frames()[0].accessibleName()
    picker.combo.setCurrentIndex(picker.combo.findText(BUNDLED_MODEL_NAME))
    qtbot.waitUntil(lambda: frames()[0].toolTip() == "The chosen model cannot see images")
    # Send still goes to the server, which refuses it and says why.
    with qtbot.waitSignal(gui.window.error_shown, timeout=10_000) as shown:
        gui.send("What is this?")
    assert "cannot see images" in shown.args[0]


def test_a_click_on_a_file_saves_it_and_on_an_image_shows_it(
    gui: GuiApp, upstream: ScriptedUpstream, qtbot: Any, monkeypatch: Any, tmp_path: Path
) -> None:
    upstream.script = Script(tokens=1)
    notes = tmp_path / "notes.txt"
    notes.write_text("They smile.")
    picture = png(tmp_path / "quokka.png")
    attach_by_dialog(gui, monkeypatch, notes, picture)
    settled(gui, qtbot, 2)
    with qtbot.waitSignal(gui.window.reply_finished, timeout=10_000):
        gui.send("Look")
    files = {a["name"]: a for a in _attached(gui)}

    target = tmp_path / "saved" / "copy.txt"
    target.parent.mkdir()
    offered: list[str] = []

    def save_as(_parent: Any, _title: str, start: str, *rest: Any) -> tuple[str, str]:
        offered.append(start)
        return str(target), ""

    monkeypatch.setattr(QFileDialog, "getSaveFileName", save_as)
    gui.window.transcript.attachment_clicked.emit(files["notes.txt"])
    qtbot.waitUntil(lambda: target.exists() and target.read_text() == "They smile.")
    assert [Path(start).name for start in offered] == ["notes.txt"]  # at home (file_folders)

    gui.window.transcript.attachment_clicked.emit(files["quokka.png"])
    qtbot.waitUntil(lambda: gui.window.attachment_links.viewer is not None, timeout=10_000)
    viewer = gui.window.attachment_links.viewer
    assert isinstance(viewer, ImageViewer) and viewer.windowTitle() == "quokka.png"
    assert viewer.picture.pixmap().width() == 64
    viewer.close()


def _hrefs(page: str) -> list[str]:
    return [html.unescape(h) for h in re.findall(r'href="(parley-attachment:[^"]+)"', page)]


def test_reading_a_file_never_follows_a_link(tmp_path: Path) -> None:
    real = tmp_path / "real.txt"
    real.write_text("secret")
    link = tmp_path / "link.txt"
    os.symlink(real, link)
    try:
        read_file(str(link))
    except AttachmentError as exc:
        assert "link" in exc.message
    else:
        raise AssertionError("a link was followed")
    assert read_file(str(real)).data == b"secret"


def test_ctrl_shift_a_opens_the_attach_dialog_and_f1_lists_it(
    gui: GuiApp, qtbot: Any, monkeypatch: Any, tmp_path: Path
) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("keys")
    asked: list[str] = []

    def choose(_parent: Any, title: str, *rest: Any) -> tuple[list[str], str]:
        asked.append(title)
        return [str(notes)], ""

    monkeypatch.setattr(QFileDialog, "getOpenFileNames", choose)
    gui.window.activateWindow()
    gui.window.composer.editor.setFocus()
    qtbot.keyClick(
        gui.window.composer.editor, Qt.Key.Key_A,
        Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier,
    )  # fmt: skip
    assert asked == ["Attach files"]
    settled(gui, qtbot, 1)
    assert ("Chat", "Attach files", "Ctrl+Shift+A") in shortcut_rows(gui.window.menus)


def test_an_edit_keeps_the_question_s_files_and_adds_those_attached_meanwhile(
    gui: GuiApp, upstream: ScriptedUpstream, qtbot: Any, monkeypatch: Any, tmp_path: Path
) -> None:
    upstream.script = Script(tokens=1)
    first, second = tmp_path / "first.txt", tmp_path / "second.txt"
    first.write_text("alpha file")
    second.write_text("beta file")
    attach_by_dialog(gui, monkeypatch, first)
    settled(gui, qtbot, 1)
    with qtbot.waitSignal(gui.window.reply_finished, timeout=10_000):
        gui.send("Question one")
    question = next(m for m in _messages(gui) if m["role"] == "user")
    gui.window.transcript.message_action.emit("edit", question["id"])
    qtbot.waitUntil(lambda: gui.window.composer.text == "Question one")
    assert chips(gui) == []  # the question's own files stay with it, not in the composer
    with qtbot.waitSignal(gui.window.reply_finished, timeout=10_000):
        gui.send("Question one, again")  # no file added: the question's are kept
    assert "alpha file" in str(upstream.records[-1].body["messages"])
    question = next(m for m in _messages(gui) if m["role"] == "user")
    gui.window.transcript.message_action.emit("edit", question["id"])
    qtbot.waitUntil(lambda: gui.window.composer.text == "Question one, again")
    attach_by_dialog(gui, monkeypatch, second)
    settled(gui, qtbot, 1)
    with qtbot.waitSignal(gui.window.reply_finished, timeout=10_000):
        gui.send("Question one, with more")
    sent = str(upstream.records[-1].body["messages"])
    assert "alpha file" in sent and "beta file" in sent
    names = [a["name"] for m in _messages(gui) for a in m.get("attachments", [])]
    assert names == ["first.txt", "second.txt"]
    assert "first.txt" in gui.transcript_text() and "second.txt" in gui.transcript_text()


def _messages(gui: GuiApp) -> list[dict[str, Any]]:
    client = gui.window.client
    assert client is not None and gui.window.current_id is not None
    found: list[dict[str, Any]] = run(gui.qtbot, client.conversation(gui.window.current_id))[
        "messages"
    ]
    return found


@pytest.mark.slow
@pytest.mark.qt_log_ignore("exceeds the current allocation limit")
def test_ten_huge_images_add_at_most_100_mb_to_the_window_attached_or_shown(
    gui_factory: Any, upstream: ScriptedUpstream, qtbot: Any, monkeypatch: Any, tmp_path: Path
) -> None:
    upstream.script = Script(tokens=1)
    first = big_png(tmp_path / "huge 0.png")  # 265 KB, 8000×8000 (256 MB decoded)
    pictures = [first] + [tmp_path / f"huge {i}.png" for i in range(1, 10)]
    for picture in pictures[1:]:
        picture.write_bytes(first.read_bytes())
    gui = gui_factory()
    before = reset_peak_memory()
    attach_by_dialog(gui, monkeypatch, *pictures)
    attached = settled(gui, qtbot, 10, timeout_ms=30_000)
    added = memory_mb()["VmHWM"] - before
    print(f"ten 8000x8000 images attached: +{added:.0f} MB at the peak")  # measured: +14
    assert added <= 100
    assert all(c.state == "ready" and c.thumbnail is None for c in attached)
    assert all("too large to preview" in text for text in chip_texts(gui))
    with qtbot.waitSignal(gui.window.reply_finished, timeout=20_000):
        gui.send("Ten big ones")
    gui.close()

    # The next launch opens the chat: its ten thumbnails are fetched and decoded there.
    gui = gui_factory()
    view = gui.window.transcript
    sidebar = gui.window.sidebar
    qtbot.waitUntil(lambda: sidebar.list.count() >= 1, timeout=5_000)
    before = reset_peak_memory()
    sidebar.list.setCurrentRow(0)
    qtbot.waitUntil(lambda: "huge 9.png" in gui.transcript_text(), timeout=10_000)
    ids = [a["id"] for a in _attached(gui)]
    assert len(ids) == 10
    view.grab()  # drawn: its files are chips (a name and a size), no picture decoded
    # A click on one: the viewer says it is too large, and offers to save it.
    view.attachment_clicked.emit(next(a for a in _attached(gui) if a["name"] == "huge 0.png"))
    links = gui.window.attachment_links
    qtbot.waitUntil(lambda: links.viewer is not None, timeout=10_000)
    added = memory_mb()["VmHWM"] - before
    print(f"a chat of ten 8000x8000 images shown: +{added:.0f} MB at the peak")  # measured: +2
    assert added <= 100
    assert links.viewer is not None
    assert "too large to show here (8000 × 8000 pixels)" in links.viewer.picture.text()
    assert links.viewer.save_button.isVisible()
    links.viewer.close()


def _has_words(square: QImage) -> bool:
    """Something is drawn in the middle of `square`, beside its plain ground."""
    ground, middle = square.pixelColor(0, 0), square.height() // 2
    return any(square.pixelColor(x, middle + dy) != ground for x in range(square.width())
               for dy in range(-8, 9))  # fmt: skip
