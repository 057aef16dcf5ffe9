"""The memory of one scope (a project's chats, or those outside every project): its lines with
the chat each came from and a Forget button; Edit (the whole file as text); Open in editor;
Delete all. A file Parley will not read (too large, binary, a link) is said as the server
says it, and can still be opened or deleted. A save over a file changed on disk meanwhile is
refused by the server: the dialog says so, shows the file's new version below the editor's
text, and keeps the user's text in the editor (Save again puts it over the new version)."""

from __future__ import annotations

from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QScrollArea,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from desktop.look.scale import TYPE
from desktop.memory.lines import LineList, Titles, muted_colour
from desktop.widgets.server_dialog import MessageLine, ServerDialog
from server.types.memory import MemoryJSON

NOTHING = "Nothing remembered yet. In a chat with tools on, the assistant asks before it "
NOTHING += "remembers a line."
OUTSIDE_SCOPE = "Chats outside projects"
OFF = "Memory is off for these chats: nothing is kept, and the model is given none."
CHANGED = (
    "The file changed on disk since you opened it. It is read again; your text is still in "
    "the editor: Save puts it over the new version, Cancel keeps the file as it is now."
)


class MemoryDialog(ServerDialog):
    forget_requested = Signal(str)  # a line's id
    chat_chosen = Signal(str)
    save_requested = Signal(str, object)  # the whole text, the version it was made over
    delete_requested = Signal()
    turn_on_requested = Signal()
    editor_requested = Signal(str)  # the file's path
    reload_wanted = Signal()  # the dialog came back to the front (a hand edit may be saved)

    def __init__(self, scope: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("memory-dialog")
        self.setWindowTitle(f"Memory — {scope}")
        scope = "the chats outside projects" if scope == OUTSIDE_SCOPE else f"“{scope}”"
        self.resize(600, 520)
        self.memory: MemoryJSON | None = None
        self._scope = scope
        self.about = QLabel(self)
        self.about.setObjectName("memory-about")
        self.about.setWordWrap(True)
        self.path = QLabel(self)
        self.path.setObjectName("memory-path")
        self.path.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.path.setStyleSheet(f"color: {muted_colour(self)}; font-size: {TYPE['small']}px;")
        self.lines = LineList(self)
        self.empty = QLabel(self)
        self.empty.setObjectName("memory-empty")
        self.empty.setWordWrap(True)
        scroll = QScrollArea(self)
        scroll.setWidgetResizable(True)
        scroll.setWidget(self.lines)
        viewing = QWidget(self)
        view_layout = QVBoxLayout(viewing)
        view_layout.setContentsMargins(0, 0, 0, 0)
        view_layout.addWidget(self.empty)
        view_layout.addWidget(scroll, 1)
        self.editor = QPlainTextEdit(self)
        self.editor.setObjectName("memory-editor")
        self.editor.setAccessibleName("The memory file")
        self.pages = QStackedWidget(self)
        self.pages.addWidget(viewing)
        self.pages.addWidget(self.editor)
        self.message = MessageLine("memory-message", self)
        self.edit_button = self._button("Edit", "memory-edit")
        self.turn_on_button = self._button("Turn on memory", "memory-turn-on")
        self.open_button = self._button("Open in editor", "memory-open")
        self.delete_button = self._button("Delete all…", "memory-delete")
        self.save_button = self._button("Save", "memory-save")
        self.cancel_button = self._button("Cancel", "memory-cancel")
        self.close_button = self._button("Close", "memory-close")
        buttons = QHBoxLayout()
        for button in (self.edit_button, self.turn_on_button, self.open_button,
                       self.delete_button):  # fmt: skip
            buttons.addWidget(button)
        buttons.addStretch(1)
        for button in (self.save_button, self.cancel_button, self.close_button):
            buttons.addWidget(button)
        layout = QVBoxLayout(self)
        layout.addWidget(self.about)
        layout.addWidget(self.path)
        layout.addWidget(self.pages, 1)
        layout.addWidget(self.message)
        layout.addLayout(buttons)
        self.lines.forget_requested.connect(self.forget_requested)
        self.lines.chat_chosen.connect(self.chat_chosen)
        self.edit_button.clicked.connect(self.start_edit)
        self.turn_on_button.clicked.connect(self.turn_on_requested)
        self.open_button.clicked.connect(self._on_open_clicked)
        self.delete_button.clicked.connect(self.delete_requested)
        self.save_button.clicked.connect(self._on_save_clicked)
        self.cancel_button.clicked.connect(self.stop_edit)
        self.close_button.clicked.connect(self.reject)
        self._enable()

    def _button(self, text: str, name: str) -> QPushButton:
        button = QPushButton(text, self)
        button.setObjectName(name)
        return button

    def editing(self) -> bool:
        return self.pages.currentWidget() is self.editor

    def show_memory(self, memory: MemoryJSON, titles: Titles) -> None:
        """The file as the server read it now, its lines' chats by `titles` (the editor's
        text kept while editing)."""
        self.memory = memory
        if not memory["exists"]:
            self.about.setText(OFF)
        else:
            self.about.setText(
                f"What the assistant remembers for {self._scope}: the model is given it "
                "at the start of each of these chats. You may edit it here or in any editor."
            )
        self.path.setText(memory["path"])
        self.path.setToolTip(memory["path"])
        if memory["error"]:
            self.show_error(f"Parley does not read this file: {memory['error']}")
        self.lines.show_lines(memory["lines"], titles)
        self.empty.setText("" if memory["lines"] or not memory["exists"] else NOTHING)
        self.empty.setVisible(bool(self.empty.text()))
        self._enable()

    def start_edit(self) -> None:
        if self.memory is None or self.memory["error"]:
            return
        self.editor.setPlainText(self.memory["text"])
        self.pages.setCurrentWidget(self.editor)
        self.editor.setFocus()
        self._enable()

    def stop_edit(self) -> None:
        self.pages.setCurrentIndex(0)
        self.show_note("")
        self._enable()

    def _enable(self) -> None:
        memory, editing = self.memory, self.editing()
        exists = memory is not None and memory["exists"]
        readable = memory is not None and not memory["error"]
        self.edit_button.setVisible(not editing)
        self.edit_button.setEnabled(exists and readable)
        self.turn_on_button.setVisible(memory is not None and not exists and not editing)
        self.open_button.setEnabled(exists)
        self.delete_button.setVisible(not editing)
        self.delete_button.setEnabled(exists)
        self.save_button.setVisible(editing)
        self.cancel_button.setVisible(editing)

    def _on_open_clicked(self) -> None:
        if self.memory is not None:
            self.editor_requested.emit(self.memory["path"])

    def _on_save_clicked(self) -> None:
        if self.memory is not None:
            self.show_note("Saving…")
            self.save_requested.emit(self.editor.toPlainText(), self.memory["version"])

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        # Not while editing: the editor's text is the user's, never reloaded over.
        came_back = event.type() == QEvent.Type.ActivationChange and self.isActiveWindow()
        if came_back and not self.editing():
            self.reload_wanted.emit()
