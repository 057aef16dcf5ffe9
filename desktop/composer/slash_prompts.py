"""The tool servers' prompts as slash commands: "/" at the start of the message offers the
prompts of the running servers in a list under the words ("/server:prompt — what it does"),
narrowed as the user types (any part of "server:prompt" matches); Enter, Tab or a click
chooses one (the first is chosen to begin with, as chat apps' slash menus do), Esc closes it.
A prompt that takes arguments asks them first (prompt_form.py). Its server fills it in and
the composer gets it: the command is replaced by the prompt's text, its files become chips,
and what was left out is said above the box until the message goes.

A prompt's messages become one message, since a chat turn is one user message: the user
turns' text as written, an assistant turn quoted ("> Assistant: …") so the model reads it
as context the prompt gave, not as words of its own, each in the order given, with a blank
line between. The user reads it all before sending, and may change it.

The prompts are asked for each time a "/" begins the message (their servers keep their
lists, so this is quick); the last ones are offered meanwhile."""

from __future__ import annotations

import asyncio

from PySide6.QtCore import QEvent, QModelIndex, QObject, QPersistentModelIndex, QPoint, Qt
from PySide6.QtGui import QKeyEvent, QStandardItem, QStandardItemModel, QTextCursor
from PySide6.QtWidgets import QCompleter, QListView, QWidget

from desktop.composer.attachments import Attachments
from desktop.composer.composer import Composer
from desktop.composer.prompt_form import PromptForm
from desktop.controller import Context, Controller
from desktop.errors import ClientError
from desktop.look.colours import Colours
from server.types.tools import PromptJSON, PromptMessageJSON, PromptResultJSON

KEY_ROLE = Qt.ItemDataRole.UserRole  # "server:prompt", what the typed words match
PROMPT_ROLE = Qt.ItemDataRole.UserRole + 1  # (server, PromptJSON)
DESCRIPTION_CHARS = 80
POPUP_ROWS = 8


def composed(messages: list[PromptMessageJSON]) -> str:
    """The prompt's messages as one message (see the module's note)."""
    pieces: list[str] = []
    for message in messages:
        text = message["text"].strip("\n")
        if not text.strip():
            continue
        if message["role"] == "assistant":
            lines = f"Assistant: {text}".splitlines()
            text = "\n".join(f"> {line}".rstrip() for line in lines)
        pieces.append(text)
    return "\n\n".join(pieces)


def typed_command(text: str, at: int) -> str | None:
    """The slash command being typed: what follows a "/" at the start, up to the cursor
    `at`, while it holds no space; None when the words are no command."""
    head = text[:at]
    if not head.startswith("/") or any(c.isspace() for c in head):
        return None
    return head[1:]


def shown(server: str, prompt: PromptJSON) -> str:
    said = " ".join((prompt["description"] or prompt["title"] or "").split())
    if len(said) > DESCRIPTION_CHARS:
        said = said[: DESCRIPTION_CHARS - 1] + "…"
    return f"/{server}:{prompt['name']}" + (f" — {said}" if said else "")


class SlashPrompts(Controller):
    def __init__(
        self, context: Context, composer: Composer, attachments: Attachments, parent: QWidget
    ) -> None:
        super().__init__(context, parent)
        self._composer = composer
        self._attachments = attachments
        self.model = QStandardItemModel(self)
        self.completer = QCompleter(self.model, self)
        self.completer.setWidget(composer.editor)
        self.completer.setCompletionRole(KEY_ROLE)
        self.completer.setFilterMode(Qt.MatchFlag.MatchContains)
        self.completer.setCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.completer.setCompletionMode(QCompleter.CompletionMode.PopupCompletion)
        self.completer.setMaxVisibleItems(POPUP_ROWS)
        self.popup = QListView()
        self.popup.setObjectName("slash-prompts")
        self.popup.setAccessibleName("Prompts of the tool servers")
        self.popup.setStyleSheet("QListView::item { padding: 4px 8px; }")  # rows to aim at
        self.completer.setPopup(self.popup)  # (the completer owns it from here)
        self.popup.installEventFilter(self)  # Tab chooses too (the completer's does not)
        composer.editor.popup = self.popup
        chosen = self.completer.activated[QModelIndex]  # type: ignore[index]  # (overloaded)
        chosen.connect(self._on_completer_activated)
        composer.editor.textChanged.connect(self._on_editor_text_changed)
        composer.editor.cursorPositionChanged.connect(self._on_editor_cursor_position_changed)
        self.form: PromptForm | None = None  # a prompt's arguments, asked
        self._typing = False  # a command is being typed (its prompts were asked for)
        self._listing: asyncio.Task[None] | None = None

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if (
            watched is self.popup
            and isinstance(event, QKeyEvent)
            and event.type() == QEvent.Type.KeyPress
            and event.key() == Qt.Key.Key_Tab
            and self.popup.currentIndex().isValid()
        ):
            self._on_completer_activated(self.popup.currentIndex())
            return True
        return super().eventFilter(watched, event)

    # -- offered while "/" begins the message ------------------------------------------------

    def _on_editor_text_changed(self) -> None:
        editor = self._composer.editor
        typed = typed_command(editor.toPlainText(), editor.textCursor().position())
        if typed is None:
            self._typing = False
            self.popup.hide()
            return
        if not self._typing:
            self._typing = True
            self._listing = self._context.tasks.spawn(self._list())
        self._offer(typed)

    def _on_editor_cursor_position_changed(self) -> None:
        """Out of the command: the list goes; within it, it follows. It never opens on a
        move alone (a draft shown again, the cursor put at its end, is not being typed)."""
        editor = self._composer.editor
        typed = typed_command(editor.toPlainText(), editor.textCursor().position())
        if typed is None:
            self._typing = False
            self.popup.hide()
        elif self.popup.isVisible():
            self._offer(typed)

    def _offer(self, typed: str) -> None:
        if self.completer.completionPrefix() != typed:
            self.completer.setCompletionPrefix(typed)
        found = self.completer.completionModel()
        popup = self.popup
        if found.rowCount() == 0:
            popup.hide()
            return
        rect = self._composer.editor.cursorRect()
        wide = max(popup.sizeHintForColumn(0) + 32, self._composer.editor.width() // 2)
        rect.setWidth(min(wide, self._composer.editor.width()))
        self.completer.complete(rect)
        popup.setCurrentIndex(found.index(0, 0))  # Enter takes the first, as chat apps do
        # Above the line typed on, over the conversation, as chat apps' slash menus open (the
        # completer puts it below, where the box's buttons and the window's edge are).
        editor = self._composer.editor
        above = editor.viewport().mapToGlobal(QPoint(rect.left(), rect.top() - popup.height()))
        popup.move(above)

    async def _list(self) -> None:
        """The running servers' prompts, offered once they come (a server that fails to
        list them offers none)."""
        try:
            client = self._context.require_client()
            tools = await client.tools()
        except ClientError:
            return  # nothing offered: "/" is then only a character
        names = [s["name"] for s in tools["servers"] if s["state"] == "ready"]
        found = await asyncio.gather(
            *(client.prompts.listing(name) for name in names), return_exceptions=True
        )
        self.model.clear()
        for name, prompts in zip(names, found, strict=True):
            if isinstance(prompts, BaseException):
                continue
            for prompt in prompts:
                item = QStandardItem(shown(name, prompt))
                item.setData(f"{name}:{prompt['name']}", KEY_ROLE)
                item.setData((name, prompt), PROMPT_ROLE)
                item.setToolTip(prompt["title"] or prompt["description"] or "")
                item.setEditable(False)
                self.model.appendRow(item)
        editor = self._composer.editor
        typed = typed_command(editor.toPlainText(), editor.textCursor().position())
        if typed is not None and self._typing:
            self._offer(typed)

    # -- one chosen ------------------------------------------------------------------------------

    def _on_completer_activated(self, index: QModelIndex | QPersistentModelIndex) -> None:
        chosen = index.data(PROMPT_ROLE)
        if not chosen:
            return
        server, prompt = chosen
        self.choose(server, prompt)

    def choose(self, server: str, prompt: PromptJSON) -> None:
        """Use the prompt: its arguments asked first, if it takes any."""
        self._typing = False
        self.popup.hide()
        command = f"{server}:{prompt['name']}"
        if not prompt["arguments"]:
            self._context.tasks.spawn(self._fill(server, prompt, {}, None))
            return
        if self.form is not None:
            self.form.close()
            self.form.deleteLater()
        form = PromptForm(f"/{command}", prompt, self._parent)
        form.submitted.connect(
            lambda values: self._context.tasks.spawn(self._fill(server, prompt, values, form))
        )
        form.finished.connect(lambda _result: self._composer.focus())
        self.form = form
        form.open()  # never exec() under qasync

    async def _fill(
        self, server: str, prompt: PromptJSON, values: dict[str, str], form: PromptForm | None
    ) -> None:
        command = f"/{server}:{prompt['name']}"
        try:
            filled = await self._context.require_client().prompts.fill(
                server, prompt["name"], values
            )
        except ClientError as exc:
            if form is not None:
                form.show_error(exc.message)
            else:
                error = Colours(self._composer.palette()).error
                self._composer.show_notice(f"{command} could not be used: {exc.message}", error)
            return
        if form is not None:
            if not form.isVisible():
                return  # cancelled while its server filled it in: the user wants it no more
            form.accept()
        self._put(command, filled)

    def _put(self, command: str, filled: PromptResultJSON) -> None:
        """The command replaced by the prompt's text (what was typed after it kept, below
        it), its files attached, its note said."""
        text = self._composer.text
        if text.startswith("/"):  # the command as typed (in full or in part)
            text = text[next((i for i, c in enumerate(text) if c.isspace()), len(text)) :]
        rest = text.strip()
        prompt_text = composed(filled["messages"])
        self._composer.set_text("\n\n".join(t for t in (prompt_text, rest) if t))
        self._composer.editor.moveCursor(QTextCursor.MoveOperation.End)
        self._attachments.add_uploaded(filled["attachments"])
        if filled["note"]:
            muted = Colours(self._composer.palette()).muted
            self._composer.show_notice(f"{command}: {filled['note']}", muted)
        else:
            self._composer.show_notice("")
        self._composer.focus()
