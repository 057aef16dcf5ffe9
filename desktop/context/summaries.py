"""A summary's marker in the transcript, acted on: view it, edit it (the server
keeps the user's words), undo it (the messages are in the model's view again; nothing was
ever deleted). The transcript's markers follow what the server says."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QWidget

from desktop.context.summary_dialog import SummaryDialog
from desktop.controller import Context, Controller
from desktop.errors import ClientError
from desktop.transcript.surface import TranscriptSurface
from server.types import SummaryJSON


class SummaryActions(Controller):
    changed = Signal(str)  # conversation id: its model's view changed (edited, undone)
    failed = Signal(str)  # for the user

    def __init__(self, context: Context, transcript: TranscriptSurface, parent: QWidget) -> None:
        super().__init__(context, parent)
        self._transcript = transcript
        self.dialog: SummaryDialog | None = None

    def act(self, action: str, summary: SummaryJSON) -> None:
        """A marker's link: "view", "edit" or "undo" on the chat on screen."""
        conversation_id = self._context.current_id
        if conversation_id is None:
            return
        if action == "undo":
            self._context.tasks.spawn(self._undo(conversation_id, summary))
            return
        if self.dialog is not None:
            self.dialog.close()
        dialog = SummaryDialog(summary, action == "edit", self._parent)
        dialog.save_requested.connect(
            lambda text: self._context.tasks.spawn(self._save(dialog, conversation_id, text))
        )
        self.dialog = dialog
        dialog.open()

    async def _save(self, dialog: SummaryDialog, conversation_id: str, text: str) -> None:
        try:
            client = self._context.require_client()
            edited = await client.context.edit_summary(conversation_id, dialog.summary["id"], text)
        except ClientError as exc:
            dialog.show_error(str(exc))
            return
        dialog.accept()
        if conversation_id == self._context.current_id:
            self._transcript.add_summary(edited)
        self.changed.emit(conversation_id)

    async def _undo(self, conversation_id: str, summary: SummaryJSON) -> None:
        try:
            await self._context.require_client().context.undo_summary(
                conversation_id, summary["id"]
            )
        except ClientError as exc:
            if exc.status != 404:  # (already undone: its marker goes all the same)
                self.failed.emit(f"The summary could not be undone: {exc}")
                return
        if conversation_id == self._context.current_id:
            self._transcript.drop_summary(summary["id"])
        self.changed.emit(conversation_id)
