"""A resource a tool's result linked to, shown in Parley (never handed to the system to open:
its URI is the tool server's word, which may name anything): what it is (its URI and type),
then its text in a read-only view, with what was left out of a long one; or why it cannot be
shown. Opened at once, "Reading…" until its controller (resource_links.py) has it; an image
goes to the image viewer instead. "Attach to message" gives it to the model with the next
message (read again by its server, as a resource chosen in the composer is)."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QPlainTextEdit,
    QVBoxLayout,
    QWidget,
)

from desktop.composer.attachment_files import size_text
from desktop.look.colours import Colours
from server.types.tools import ResourceContentJSON

READING = "Reading it through its tool server…"


class ResourceViewer(QDialog):
    attach_requested = Signal()

    def __init__(self, name: str, uri: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("resource-viewer")
        self.setWindowTitle(f"Linked resource — {name}")
        self.resize(680, 480)
        self.uri = uri
        colours = Colours(self.palette())
        self.about = QLabel(uri, self)
        self.about.setObjectName("resource-about")
        self.about.setWordWrap(True)
        self.about.setStyleSheet(f"color: {colours.muted};")
        self.text = QPlainTextEdit(self)
        self.text.setObjectName("resource-text")
        self.text.setReadOnly(True)
        self.text.setAccessibleName(f"The text of {name}")
        self.text.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.text.setPlaceholderText(READING)
        self.note = QLabel(self)  # what the server's text left out, or why none is shown
        self.note.setObjectName("resource-note")
        self.note.setWordWrap(True)
        self.note.setVisible(False)
        self._colours = colours
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        buttons.rejected.connect(self.reject)
        self.attach_button = buttons.addButton(
            "Attach to message", QDialogButtonBox.ButtonRole.ActionRole
        )
        self.attach_button.setToolTip("Give it to the model with your next message")
        self.attach_button.setEnabled(False)  # until it is read: it exists, it is text
        self.attach_button.clicked.connect(self._on_attach_button_clicked)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(16, 16, 16, 16)
        layout.setSpacing(8)
        layout.addWidget(self.about)
        layout.addWidget(self.text, 1)
        layout.addWidget(self.note)
        layout.addWidget(buttons)
        self.text.setFocus()

    def show_contents(self, contents: list[ResourceContentJSON]) -> None:
        """Its texts, one after the other (a resource of several parts names each); an image
        among them is said, not drawn (one image alone goes to the image viewer)."""
        texts: list[str] = []
        notes: list[str] = []
        for content in contents:
            head = f"── {content['uri']} ({content['mime']}) ──\n" if len(contents) > 1 else ""
            if content["kind"] == "text":
                texts.append(head + (content["text"] or ""))
            else:
                texts.append(head + f"(an image, {size_text(content['bytes'])})")
            if content["note"]:  # (the bound an attachment has: the server says it so)
                note = content["note"]
                notes.append(note[:1].upper() + note[1:] + ("" if note.endswith(".") else "."))
        first = contents[0] if contents else None
        if first is not None:
            self.about.setText(f"{self.uri} · {first['mime']} · {size_text(first['bytes'])}")
        self.text.setPlaceholderText("" if texts else "(empty)")
        self.text.setPlainText("\n\n".join(texts))
        if notes:
            self._say(" ".join(notes), self._colours.muted)
        self.attach_button.setEnabled(bool(contents))

    def _on_attach_button_clicked(self) -> None:
        self.attach_requested.emit()
        self.accept()

    def show_failure(self, why: str) -> None:
        self.text.setPlaceholderText("")
        self._say(f"It cannot be shown: {why}", self._colours.error)

    def _say(self, text: str, colour: str) -> None:
        self.note.setText(text)
        self.note.setStyleSheet(f"color: {colour};")
        self.note.setVisible(True)
