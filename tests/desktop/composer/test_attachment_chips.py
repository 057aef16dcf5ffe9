"""The composer's chips on their own (no server): a message waits for its uploads and may be
files alone; the chips are part of a chat's draft and are set aside while a question is
edited; a refused file's chip says why; the transcript draws a message's files above its words,
an image's thumbnail once it came."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QMimeData, Qt, QUrl
from PySide6.QtWidgets import QApplication, QLabel

from desktop.composer.attachment_chips import Chip
from desktop.composer.composer import Composer
from server.types import AttachmentJSON

NOTES: AttachmentJSON = {
    "id": "a1", "name": "notes.md", "kind": "text", "mime": "text/markdown", "bytes": 2048,
    "chars": 2000, "note": None,
}  # fmt: skip
PHOTO: AttachmentJSON = {
    "id": "a2", "name": "quokka.png", "kind": "image", "mime": "image/png", "bytes": 5_000_000,
    "chars": None, "note": None,
}  # fmt: skip


def composer(qtbot: Any) -> Composer:
    widget = Composer()
    qtbot.addWidget(widget)
    widget.show()
    return widget


def test_a_message_waits_for_its_uploads_and_may_be_files_alone(qtbot: Any) -> None:
    box = composer(qtbot)
    chip = Chip("notes.md", size=2048)
    box.attach(chip)
    assert box.chips.isVisible() and not box.button.isEnabled()
    assert box.button.toolTip() == "Waiting for the files to upload"
    with qtbot.assertNotEmitted(box.message_submitted):
        qtbot.keyClick(box.editor, Qt.Key.Key_Return)
    chip.state, chip.attachment = "ready", NOTES
    box.show_chips()
    assert box.button.isEnabled()
    with qtbot.waitSignal(box.message_submitted) as sent:
        qtbot.keyClick(box.editor, Qt.Key.Key_Return)
    assert sent.args == [""] and box.attachments() == [NOTES]


def test_chips_are_part_of_a_chat_s_draft_and_set_aside_by_an_edit(qtbot: Any) -> None:
    box = composer(qtbot)
    box.attach(Chip("notes.md", state="ready", attachment=NOTES))
    box.set_text("about these")
    box.switch_chat("first", "second")
    assert box.chips_shown() == [] and not box.chips.isVisible()
    box.switch_chat("second", "first")
    assert box.attachments() == [NOTES] and box.text == "about these"

    box.show_to_edit("an earlier question")
    box.set_editing(True)
    assert box.attachments() == []  # the draft's files do not go with the edit
    box.clear()  # the edit was sent (or cancelled): the draft comes back
    assert box.attachments() == [NOTES] and box.text == "about these"
    assert box.holds("about these", [NOTES]) and not box.holds("about these", [])


def test_a_refused_file_s_chip_says_why(qtbot: Any) -> None:
    box = composer(qtbot)
    reason = "program.bin is not text, a PDF or an image Parley can attach"
    box.attach(Chip("program.bin", state="refused", reason=reason))
    [frame] = box.chips.chip_frames()
    assert frame.findChild(QLabel, "attachment-detail").text() == reason
    assert box.attachments() == [] and box.button.isEnabled()


def test_pasted_words_and_web_links_stay_words(qtbot: Any) -> None:
    box = composer(qtbot)
    attached: list[Any] = []
    box.files_given.connect(attached.append)
    box.image_given.connect(attached.append)
    link = QMimeData()
    link.setUrls([QUrl("https://example.org/a.png")])
    link.setText("https://example.org/a.png")
    QApplication.clipboard().setMimeData(link)
    box.editor.setFocus()
    qtbot.keyClick(box.editor, Qt.Key.Key_V, Qt.KeyboardModifier.ControlModifier)
    assert box.text == "https://example.org/a.png" and attached == []
