"""What the actions under a message do (desktop/transcript/ draws them):
Edit puts a question back in the composer, and sending it makes a new version; Regenerate
asks for a new version of a reply; Continue lets a stopped reply go on; ‹ › shows another
version. Each turn goes through the reply controller like a message sent, so Stop and
closing the window end it the same way."""

from __future__ import annotations

from PySide6.QtWidgets import QWidget

from desktop.chats.earlier_messages import PAGE
from desktop.client import TurnKind
from desktop.composer.composer import Composer
from desktop.controller import Context, Controller
from desktop.errors import ClientError
from desktop.replies.controller import ReplyController
from desktop.replies.request import TurnAsked, TurnRequest
from desktop.transcript.surface import TranscriptSurface
from server.types import AttachmentJSON


class TurnActions(Controller):
    def __init__(
        self,
        context: Context,
        reply: ReplyController,
        composer: Composer,
        transcript: TranscriptSurface,
        parent: QWidget,
    ) -> None:
        super().__init__(context, parent)
        self._reply = reply
        self._composer = composer
        self._transcript = transcript
        self.editing: str | None = None  # the question being edited, in the composer
        composer.editing_cancelled.connect(self.cancel_edit)

    def handle(self, action: str, message_id: str, asked: TurnAsked) -> None:
        """A click on a message's action (Copy is the transcript's own)."""
        if action == "edit":
            self._start_edit(message_id)
        elif action in ("regenerate", "continue"):
            kind: TurnKind = "regenerate" if action == "regenerate" else "continue"
            self._context.tasks.spawn(self._turn(kind, message_id, "", asked))
        elif action == "version":
            self._context.tasks.spawn(self._select(message_id))

    def act_on_last(self, action: str, asked: TurnAsked) -> None:
        """Regenerate or Continue the last reply shown, as its own link does."""
        if self._reply.busy_in(self._context.current_id):
            return
        message_id = self._transcript.last_actions().get(action)
        if message_id is not None:
            self.handle(action, message_id, asked)

    def send(self, text: str, asked: TurnAsked) -> bool:
        """Send the composer's text and files to the chat on screen (a new one if none), or
        as the new version of the question being edited. False if that chat's reply is
        still in flight (its button says Stop)."""
        attached = self._composer.attachments()
        if self.editing is not None:
            self._context.tasks.spawn(self._turn("edit", self.editing, text, asked, attached))
            return True
        # The conversation it was typed in, even if another is opened while it is sent.
        # The project a new chat starts in, as it is now (not when the turn begins).
        request = TurnRequest(asked, self._context.current_id, text, attached=attached,
                              project_id=self._context.project_id)  # fmt: skip
        sending = self._reply.submit(request)
        if sending is None:
            return False
        self._context.tasks.spawn(sending)
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

    async def _turn(
        self, kind: TurnKind, target: str, text: str, asked: TurnAsked,
        attached: list[AttachmentJSON] | None = None,
    ) -> None:  # fmt: skip
        client, conversation_id = self._context.client, self._context.current_id
        if client is None or conversation_id is None or self._reply.busy_in(conversation_id):
            return
        # The branch as stored now (the window may show a reply it streamed itself).
        messages = (await client.conversation(conversation_id, limit=PAGE))["messages"]
        at = next((i for i, m in enumerate(messages) if m["id"] == target), None)
        if at is None:  # a message of a long chat, before its newest page
            messages = (await client.conversation(conversation_id))["messages"]
            at = next((i for i, m in enumerate(messages) if m["id"] == target), None)
        if at is None or self._context.current_id != conversation_id:
            return
        # Above the new reply: the branch before the edited question or the regenerated
        # reply; a continued reply is drawn again from its saved text as it grows.
        before = messages[: at + 1] if kind == "continue" else messages[:at]
        # An edited question keeps its files; those attached while editing join them.
        files = [*messages[at].get("attachments", []), *(attached or [])]
        request = TurnRequest(asked, conversation_id, text, kind, target, before,
                              attached=attached or [], files=files)  # fmt: skip
        sending = self._reply.submit(request)
        if sending is None:
            return  # this chat's reply is still in flight
        if kind == "edit":
            self.cancel_edit(keep_text=True)  # the reply clears the composer once it began
        await sending

    async def _select(self, message_id: str) -> None:
        client, conversation_id = self._context.client, self._context.current_id
        if client is None or conversation_id is None or self._reply.busy_in(conversation_id):
            return
        try:
            conversation = await client.select(conversation_id, message_id, limit=PAGE)
        except ClientError as exc:
            self._reply.error_reported.emit(f"Could not show that version: {exc}")
            return
        if self._context.current_id == conversation_id:
            self._reply.show(conversation)
