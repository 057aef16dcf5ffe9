"""Tool calls waiting for the user's approval, per chat: the card shows the first one of the
chat on screen; a decision goes to the server (ParleyClient.decide_tool_call). A call stops
waiting when its step changes (decided here, by another client, or freed by an "allow for
this chat"), and every call of a chat when its reply ends (Stop, close, an error: the server
has marked them never run, and a late decision would get 409). Which chats have a call waiting
is told as it changes (`waiting_changed`): their rows and the window's title say so."""

from __future__ import annotations

from typing import cast

from PySide6.QtCore import Signal

from desktop.client.events import with_inner_steps
from desktop.controller import Context, Controller
from desktop.errors import ClientError
from desktop.replies.approval_card import ApprovalCard
from server.types import Decision, Remember, ToolPartJSON
from server.types.chunks import ApprovalJSON


class ApprovalController(Controller):
    failed = Signal(str)
    waiting_changed = Signal()  # a chat began or ceased to have a call waiting

    def __init__(self, context: Context, card: ApprovalCard) -> None:
        super().__init__(context, card)
        self._card = card
        self._waiting: dict[str, list[ApprovalJSON]] = {}
        self._told: set[str] = set()  # the chats waiting, as last told
        card.decided.connect(self._on_card_decided)
        card.allowed_under.connect(self._on_card_allowed_under)

    def waiting(self, conversation_id: str | None) -> list[ApprovalJSON]:
        return list(self._waiting.get(conversation_id or "", []))

    def waiting_chats(self) -> set[str]:
        """The chats with a call waiting for the user's decision."""
        return {conversation_id for conversation_id, calls in self._waiting.items() if calls}

    def requested(self, conversation_id: str, call: ApprovalJSON) -> None:
        self._waiting.setdefault(conversation_id, []).append(call)
        self.show_current()

    def step_changed(self, conversation_id: str, step: ToolPartJSON) -> None:
        """A step changed (a sub-agent's steps are inside its own)."""
        for inner in with_inner_steps(step):
            if inner["status"] != "awaiting_approval":
                self._drop(conversation_id, inner["id"])

    def reply_ended(self, conversation_id: str) -> None:
        self._waiting.pop(conversation_id, None)
        self.show_current()

    def show_current(self) -> None:
        """The card for the chat on screen (hidden when none of its calls waits)."""
        self._tell()
        calls = self._waiting.get(self._context.current_id or "", [])
        shown = self._card.call
        if calls and shown is not None and shown["call_id"] == calls[0]["call_id"]:
            self._card.set_waiting(len(calls))
            return  # asking already (a decision may be on its way)
        self._card.show_call(calls[0] if calls else None, len(calls))

    def _tell(self) -> None:
        waiting = self.waiting_chats()
        if waiting != self._told:
            self._told = waiting
            self.waiting_changed.emit()

    def _drop(self, conversation_id: str, call_id: str) -> None:
        calls = self._waiting.get(conversation_id, [])
        self._waiting[conversation_id] = [c for c in calls if c["call_id"] != call_id]
        self.show_current()

    def _on_card_decided(self, call_id: str, decision: str, remember: str) -> None:
        conversation_id = self._context.current_id
        if conversation_id is not None:
            self._context.tasks.spawn(self._decide(conversation_id, call_id, decision, remember))

    def _on_card_allowed_under(self, call_id: str, argument: str, folder: str) -> None:
        conversation_id = self._context.current_id
        if conversation_id is not None:
            under = (argument, folder)
            self._context.tasks.spawn(
                self._decide(conversation_id, call_id, "allow", "arguments", under)
            )

    async def _decide(
        self,
        conversation_id: str,
        call_id: str,
        decision: str,
        remember: str,
        under: tuple[str, str] | None = None,
    ) -> None:
        client = self._context.require_client()
        try:
            answer = await client.decide_tool_call(
                conversation_id, call_id, cast(Decision, decision), cast(Remember, remember), under
            )
        except ClientError as exc:
            shown = self._card.call
            if exc.status == 400 and shown is not None and shown["call_id"] == call_id:
                self._card.enable()  # the folder does not fit the call: still asked
                self.failed.emit(exc.message)
                return
            self._drop(conversation_id, call_id)
            if exc.status == 409:
                self.failed.emit("That tool call no longer waits: its reply has ended.")
                return
            raise
        self.step_changed(conversation_id, answer["step"])
