"""What the actions under a message do (desktop/widgets/message_actions.py draws them):
Edit puts a question back in the composer, and sending it makes a new version; Regenerate
asks for a new version of a reply; Continue lets a stopped reply go on; ‹ › shows another
version. Each turn goes through the reply controller like a message sent, so Stop and
closing the window end it the same way."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject

from desktop.client import ParleyClient, TurnKind
from desktop.earlier_messages import PAGE
from desktop.errors import ClientError
from desktop.reply import ReplyController
from desktop.tasks import Tasks
from desktop.widgets.composer import Composer
from desktop.widgets.transcript import Transcript


class TurnActions(QObject):
    def __init__(
        self,
        reply: ReplyController,
        composer: Composer,
        transcript: Transcript,
        tasks: Tasks,
        current_id: Callable[[], str | None],
        model: Callable[[], str | None],
        max_tokens: Callable[[], int | None],
        client: Callable[[], ParleyClient | None],
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._reply = reply
        self._composer = composer
        self._transcript = transcript
        self._tasks = tasks
        self._current_id = current_id
        self._model = model
        self._max_tokens = max_tokens
        self._client = client
        self.editing: str | None = None  # the question being edited, in the composer
        composer.editing_cancelled.connect(self.cancel_edit)

    def handle(self, action: str, message_id: str) -> None:
        """A click on a message's action (Copy is the transcript's own)."""
        if action == "edit":
            self._start_edit(message_id)
        elif action in ("regenerate", "continue"):
            kind: TurnKind = "regenerate" if action == "regenerate" else "continue"
            self._tasks.spawn(self._turn(kind, message_id, ""))
        elif action == "version":
            self._tasks.spawn(self._select(message_id))

    def submit_edit(self, text: str) -> bool:
        """Send the composer's text as the new version of the question being edited; False
        when no edit is under way (the text is a new message)."""
        if self.editing is None:
            return False
        self._tasks.spawn(self._turn("edit", self.editing, text))
        return True

    def cancel_edit(self, keep_text: bool = False) -> None:
        if self.editing is not None and not keep_text:
            self._composer.clear()
        self.editing = None
        self._composer.set_editing(False)

    def _start_edit(self, message_id: str) -> None:
        text = self._transcript.message_text(message_id)
        if text is None:
            return
        self.editing = message_id
        self._composer.show_to_edit(text)
        self._composer.set_editing(True)
        self._composer.focus()

    async def _turn(self, kind: TurnKind, target: str, text: str) -> None:
        client, conversation_id = self._client(), self._current_id()
        if client is None or conversation_id is None or self._reply.busy_in(conversation_id):
            return
        # The branch as stored now (the window may show a reply it streamed itself).
        messages = (await client.conversation(conversation_id, limit=PAGE))["messages"]
        at = next((i for i, m in enumerate(messages) if m["id"] == target), None)
        if at is None:  # a message of a long chat, before its newest page
            messages = (await client.conversation(conversation_id))["messages"]
            at = next((i for i, m in enumerate(messages) if m["id"] == target), None)
        if at is None or self._current_id() != conversation_id:
            return
        # Above the new reply: the branch before the edited question or the regenerated
        # reply; a continued reply is drawn again from its saved text as it grows.
        before = messages[: at + 1] if kind == "continue" else messages[:at]
        sending = self._reply.submit(
            conversation_id, text, self._model(), None, self._max_tokens(),
            kind=kind, target=target, before=before,
        )  # fmt: skip
        if sending is None:
            return  # this chat's reply is still in flight
        if kind == "edit":
            self.cancel_edit(keep_text=True)  # the reply clears the composer once it began
        await sending

    async def _select(self, message_id: str) -> None:
        client, conversation_id = self._client(), self._current_id()
        if client is None or conversation_id is None or self._reply.busy_in(conversation_id):
            return
        try:
            conversation = await client.select(conversation_id, message_id, limit=PAGE)
        except ClientError as exc:
            self._reply.error_reported.emit(f"Could not show that version: {exc}")
            return
        if self._current_id() == conversation_id:
            self._reply.show(conversation)
