"""Where the user writes. Enter sends, Shift+Enter adds a line, Tab moves on; Send becomes
Stop while the chat's reply is in flight (Esc, handled by the window, stops it too). Each chat
keeps what was typed in it and not sent (a draft), shown again when the chat is.

Files go with a message: the Attach button's menu (Files…, or a resource of a tool
server; Chat → Attach files… goes straight to the files), files dropped on it or pasted into
it, and an image pasted, each a chip above the message box
(attachment_chips.py) that its controller uploads at once (attachments.py). A message may
be files alone; it waits for their uploads. The chips are part of the draft."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QMimeData, QPoint, QSize, Qt, Signal
from PySide6.QtGui import QFocusEvent, QImage, QKeyEvent, QTextCursor
from PySide6.QtWidgets import (
    QApplication,
    QFrame,
    QHBoxLayout,
    QLabel,
    QMenu,
    QPlainTextEdit,
    QPushButton,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from desktop.composer.attachment_chips import AttachmentChips, Chip
from desktop.composer.file_drops import FileDrops, local_files
from desktop.look.icons import icon, icon_in
from desktop.look.palette import palette as look_palette
from desktop.look.theme import is_dark
from server.types import AttachmentJSON

MIN_LINES = 2
MAX_LINES = 10
ATTACH_KEYS = "Ctrl+Shift+A"  # Chat → Attach files… (desktop/window/menus.py)
SEND_SIZE = 32  # the round Send/Stop button's side, px
POPUP_KEYS = (Qt.Key.Key_Return, Qt.Key.Key_Enter, Qt.Key.Key_Escape, Qt.Key.Key_Tab,
              Qt.Key.Key_Backtab)  # fmt: skip


class _Editor(QPlainTextEdit):
    submitted = Signal()
    files_given = Signal(list)  # local files pasted or dropped here: their paths
    image_given = Signal(QImage)  # an image pasted (a screenshot, a browser's "Copy image")
    focus_changed = Signal(bool)  # its box draws the focus ring around all of it
    popup: QWidget | None = None  # a completer's list shown over it (slash_prompts.py)

    def focusInEvent(self, event: QFocusEvent) -> None:
        super().focusInEvent(event)
        self.focus_changed.emit(True)

    def focusOutEvent(self, event: QFocusEvent) -> None:
        super().focusOutEvent(event)
        self.focus_changed.emit(False)

    def canInsertFromMimeData(self, source: QMimeData) -> bool:
        return (
            bool(local_files(source)) or source.hasImage() or super().canInsertFromMimeData(source)
        )

    def insertFromMimeData(self, source: QMimeData) -> None:
        """Files pasted or dropped are attached, as is an image; text is text."""
        files = local_files(source)
        if files:
            self.files_given.emit(files)
        elif source.hasImage() and isinstance(image := source.imageData(), QImage):
            self.image_given.emit(image)
        else:
            super().insertFromMimeData(source)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        key = event.key()
        if self.popup is not None and self.popup.isVisible() and key in POPUP_KEYS:
            event.ignore()  # the completer's: choose, or close it
            return
        if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            if event.modifiers() & Qt.KeyboardModifier.ShiftModifier:
                self.insertPlainText("\n")
            else:
                self.submitted.emit()
            return
        super().keyPressEvent(event)


class Composer(QWidget):
    message_submitted = Signal(str)  # the text (maybe empty, with files): `attachments()` go
    stop_requested = Signal()
    editing_cancelled = Signal()  # Cancel on the "Editing a message" line
    attach_requested = Signal()  # Attach → Files… (or Chat → Attach files…): choose files
    resource_requested = Signal()  # Attach → From a tool server…: choose a server's resource
    files_given = Signal(list)  # files dropped or pasted here: their paths
    image_given = Signal(QImage)  # an image pasted

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.editor = _Editor(self)
        self.editor.setAccessibleName("Message")
        self.editor.setAccessibleDescription("Enter sends; Shift+Enter starts a new line")
        self.editor.setPlaceholderText("Message (Enter to send, Shift+Enter for a new line)")
        self.editor.textChanged.connect(self._fit_height)
        self.editor.setTabChangesFocus(True)  # a tab character is rarely wanted in a chat
        self.editor.setObjectName("composer-editor")
        self.editor.setFrameShape(QFrame.Shape.NoFrame)
        # One round button, Send or Stop (its text names it for tests, tooltips and screen
        # readers; the face shows an arrow or a square).
        self.button = QToolButton(self)
        self.button.setObjectName("send-stop")
        self.button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonIconOnly)
        self.button.setFixedSize(SEND_SIZE, SEND_SIZE)
        self.button.setIconSize(QSize(18, 18))
        self.attach_button = QToolButton(self)
        self.attach_button.setObjectName("attach")
        self.attach_button.setText("Attach")  # shown only if the icon is missing
        self.attach_button.setToolTip("Attach files, images or a tool server's resources")
        self.attach_button.setAccessibleName("Attach")
        self.attach_button.setAccessibleDescription(
            "Files (text, Markdown, code, PDF, images) or a tool server's resources"
        )
        self.attach_button.setAutoRaise(True)
        self.attach_button.setIconSize(QSize(20, 20))
        self.attach_button.setIcon(icon("attach", self.palette()))
        # A menu as other chat apps' "+" has: files, or what a tool server offers. Shown with
        # popup(), never exec(): a nested loop would run the window's asyncio tasks inside it.
        self.attach_menu = QMenu(self)
        self.attach_menu.setObjectName("attach-menu")
        self.attach_files = self.attach_menu.addAction(f"Files…\t{ATTACH_KEYS}")
        self.attach_files.triggered.connect(self.attach_requested)
        self.attach_resource = self.attach_menu.addAction("From a tool server…")
        self.attach_resource.triggered.connect(self.resource_requested)
        self.attach_button.clicked.connect(self._on_attach_button_clicked)
        self.chips = AttachmentChips(self)
        self.chips.chip_removed.connect(self._on_chips_chip_removed)
        self._drops = FileDrops(self)  # on the chips or the buttons; the editor takes its own
        self._drops.watch(self)
        self._drops.files_dropped.connect(self.files_given)
        self.editor.files_given.connect(self.files_given)
        self.editor.image_given.connect(self.image_given)
        self.edit_note = QLabel("Editing a message: sending it makes a new version.", self)
        self.cancel_edit = QPushButton("Cancel edit", self)
        self.cancel_edit.clicked.connect(self.editing_cancelled)
        note = QHBoxLayout()
        note.addWidget(self.edit_note, 1)
        note.addWidget(self.cancel_edit)
        # What a prompt (a slash command) left out, or why it could not be used: said until
        # the message goes.
        self.notice = QLabel(self)
        self.notice.setObjectName("composer-notice")
        self.notice.setWordWrap(True)
        self.notice.setVisible(False)
        note.addWidget(self.notice, 1)
        # The box: the files, the words, and a row of what goes with them, in one rounded
        # frame that shows the focus ring while the words have the focus.
        self.box = QFrame(self)
        self.box.setObjectName("composer-box")
        self.controls = QHBoxLayout()
        self.controls.setContentsMargins(0, 0, 0, 0)
        self.controls.setSpacing(6)
        self.controls.addWidget(self.attach_button)
        self._controls_end = self.controls.count()  # where the window's switches go
        self.controls.addStretch(1)
        self.controls.addWidget(self.button)
        inside = QVBoxLayout(self.box)
        inside.setContentsMargins(10, 8, 8, 8)
        inside.setSpacing(4)
        inside.addWidget(self.chips)
        inside.addWidget(self.editor)
        inside.addLayout(self.controls)
        self.editor.focus_changed.connect(self._on_editor_focus_changed)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(note)
        layout.addWidget(self.box)
        self._editing = False
        self._streaming = False
        self._drafts: dict[str, str] = {}  # by chat ("": a new chat), other than the one shown
        self._aside = ""  # what was typed when an edit began (show_to_edit)
        self._attached: list[Chip] = []  # the files attached to the message shown
        self._attached_drafts: dict[str, list[Chip]] = {}  # as `_drafts`
        self._attached_aside: list[Chip] = []  # as `_aside`
        self.set_editing(False)
        self._fit_height()
        self.editor.submitted.connect(self._on_editor_submitted)
        self.button.clicked.connect(self._on_button_clicked)

    @property
    def text(self) -> str:
        return self.editor.toPlainText()

    def _on_attach_button_clicked(self) -> None:
        above = QPoint(0, -self.attach_menu.sizeHint().height())
        self.attach_menu.popup(self.attach_button.mapToGlobal(above))

    def add_controls(self, controls: list[QWidget]) -> None:
        """Put these (the chat's switches) in the box's row, after Attach."""
        for offset, control in enumerate(controls):
            self.controls.insertWidget(self._controls_end + offset, control)
        self._controls_end += len(controls)

    def _on_editor_focus_changed(self, focused: bool) -> None:
        self.box.setProperty("focused", focused)
        box_style = self.box.style()
        if box_style is not None:
            box_style.unpolish(self.box)  # a style sheet reads a property when polished
            box_style.polish(self.box)

    # -- the files attached --------------------------------------------------------------------

    def attach(self, chip: Chip) -> None:
        """A file attached to the message shown (its controller uploads it)."""
        self._attached.append(chip)
        self.show_chips()

    def show_chips(self) -> None:
        """Draw the chips again (one of them changed: uploaded, refused)."""
        self.chips.show_chips(self._attached)
        self._label_button()

    def chips_shown(self) -> list[Chip]:
        return list(self._attached)

    def attachments(self) -> list[AttachmentJSON]:
        """The files uploaded for the message shown, in the order attached (a refused one
        is not sent)."""
        return [c.attachment for c in self._attached if c.attachment is not None]

    @property
    def uploading(self) -> bool:
        return any(c.state == "uploading" for c in self._attached)

    def holds(self, text: str, attachments: list[AttachmentJSON]) -> bool:
        """Whether the message shown is this one (text and files) and not empty."""
        ids = [a["id"] for a in attachments]
        return (
            bool(text or ids) and self.text == text and [a["id"] for a in self.attachments()] == ids
        )

    def _on_chips_chip_removed(self, chip: Chip) -> None:
        if chip in self._attached:
            self._attached.remove(chip)
            self.show_chips()
        if not self._attached:
            self.editor.setFocus()  # its × is gone: back to the words

    # -- drafts ------------------------------------------------------------------------------

    def switch_chat(self, leaving: str | None, opening: str | None) -> None:
        """Keep what was typed (and attached) for the chat left (None: a new chat), and show
        what was typed in the one opened, the cursor at its end."""
        self.show_notice("")  # (a prompt's note was of the message left)
        # An edit sent whose reply has not begun: what it set aside is that chat's draft.
        editing = bool(self._aside or self._attached_aside)
        kept = self._aside if editing else self.text
        attached = self._attached_aside if editing else self._attached
        self._aside, self._attached_aside = "", []
        if kept.strip():
            self._drafts[leaving or ""] = kept
        else:
            self._drafts.pop(leaving or "", None)
        if attached:
            self._attached_drafts[leaving or ""] = attached
        else:
            self._attached_drafts.pop(leaving or "", None)
        self.set_text(self._drafts.pop(opening or "", ""))
        self._attached = self._attached_drafts.pop(opening or "", [])
        self.show_chips()
        self.editor.moveCursor(QTextCursor.MoveOperation.End)

    def drop_draft(
        self, conversation_id: str, sent: str, attachments: list[AttachmentJSON] | None = None
    ) -> None:
        """`sent` (with `attachments`) went as a message of that chat (sent there, then the
        chat was left before its reply began): it is no draft of that chat, nor of the new
        chat it was typed in."""
        ids = [a["id"] for a in attachments or []]
        for key in (conversation_id, ""):
            attached = self._attached_drafts.get(key, [])
            if (
                self._drafts.get(key, "") == sent
                and [c.attachment["id"] for c in attached if c.attachment is not None] == ids
            ):
                self._drafts.pop(key, None)
                self._attached_drafts.pop(key, None)

    def set_text(self, text: str) -> None:
        self.editor.setPlainText(text)

    def show_notice(self, text: str, colour: str = "") -> None:
        self.notice.setText(text)
        self.notice.setStyleSheet(f"color: {colour};" if colour else "")
        self.notice.setVisible(bool(text))

    def clear(self) -> None:
        """Empty, once what it held was sent or its edit cancelled: what was typed (and
        attached) before an edit began comes back."""
        self.show_notice("")
        self.set_text(self._aside)
        self._attached = self._attached_aside
        self._aside, self._attached_aside = "", []
        self.show_chips()
        self.editor.moveCursor(QTextCursor.MoveOperation.End)

    def show_to_edit(self, text: str) -> None:
        """Show `text`, a question to edit; what was typed and attached is set aside until
        the edit is sent or cancelled (a second edit keeps what the first set aside). Files
        attached while editing go with the new version, beside the question's own."""
        if not self._editing:
            self._aside, self._attached_aside = self.text, self._attached
            self._attached = []
            self.show_chips()
        self.set_text(text)
        self.editor.moveCursor(QTextCursor.MoveOperation.End)  # to go on typing, as after a draft

    def set_streaming(self, streaming: bool) -> None:
        self._streaming = streaming
        self._label_button()

    def set_editing(self, editing: bool) -> None:
        """Whether the text is a new version of a message (the window knows which)."""
        self._editing = editing
        self.edit_note.setVisible(editing)
        self.cancel_edit.setVisible(editing)
        self._label_button()

    def _label_button(self) -> None:
        waiting = self.uploading and not self._streaming
        self.button.setEnabled(not waiting)  # (Stop never waits)
        if self._streaming:
            text, tip = "Stop", "Stop the reply (Esc)"
        else:
            text = "Send edit" if self._editing else "Send"
            tip = f"{text} (Enter)"
        self.button.setText(text)
        self.button.setAccessibleName(text)
        self.button.setToolTip("Waiting for the files to upload" if waiting else tip)
        self.button.setProperty("stop", self._streaming)
        self._paint_button()

    def _paint_button(self) -> None:
        """The button's face in the look's colours: an arrow on the accent, or a square."""
        look = look_palette(is_dark(QApplication.palette()))
        faded = look.muted
        face = look.background
        self.button.setIcon(icon_in("stop" if self._streaming else "send", face, faded))
        button_style = self.button.style()
        if button_style is not None:
            button_style.unpolish(self.button)
            button_style.polish(self.button)

    def focus(self) -> None:
        self.editor.setFocus()

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() in (QEvent.Type.StyleChange, QEvent.Type.FontChange):
            self._fit_height()  # the frame (a style sheet's border) or the lines changed
        elif event.type() == QEvent.Type.PaletteChange:
            self.follow_theme()

    def follow_theme(self) -> None:
        """Its icons in the colours of the theme shown."""
        self.attach_button.setIcon(icon("attach", self.palette()))
        self._paint_button()

    def _fit_height(self) -> None:
        """As tall as its text, from MIN_LINES up to MAX_LINES (then it scrolls): a long
        message stays visible, and a small window keeps room for the conversation."""
        # QPlainTextEdit's layout measures its document in lines, wrapped ones included.
        lines = int(self.editor.document().documentLayout().documentSize().height())
        shown = max(MIN_LINES, min(MAX_LINES, lines))
        margins = self.editor.contentsMargins()
        frame = 2 * self.editor.frameWidth() + 2 * int(self.editor.document().documentMargin())
        height = shown * self.editor.fontMetrics().lineSpacing() + frame
        self.editor.setFixedHeight(height + margins.top() + margins.bottom())
        self.updateGeometry()

    def _on_editor_submitted(self) -> None:
        if self._streaming or self.uploading:
            return
        if self.text.strip() or self.attachments():
            self.message_submitted.emit(self.text)

    def _on_button_clicked(self) -> None:
        if self._streaming:
            self.stop_requested.emit()
        else:
            self._on_editor_submitted()
