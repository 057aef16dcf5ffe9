"""Long calls the user is asked about, per chat: the card shows the first one of
the chat on screen; the answer goes to the server (ParleyClient.answer_overdue). A question
is over when its step changes without `overdue` (answered here or by another client, or the
call ended meanwhile), and every question of a chat when its reply ends. Which chats have a
question open is told as it changes (`waiting_changed`): their rows and the window's title say
so."""

from __future__ import annotations

import time
from typing import cast

from PySide6.QtCore import Signal

from desktop.client.events import OverdueAction, with_inner_steps
from desktop.controller import Context, Controller
from desktop.errors import ClientError
from desktop.replies.overdue_card import OverdueCard
from server.types import ToolPartJSON
from server.types.chunks import OverdueJSON


class OverdueController(Controller):
    failed = Signal(str)
    waiting_changed = Signal()  # a chat began or ceased to have a question open

    def __init__(self, context: Context, card: OverdueCard) -> None:
        super().__init__(context, card)
        self._card = card
        # Per chat: each call asked about, and when the question came (time.monotonic()).
        self._asked: dict[str, list[tuple[OverdueJSON, float]]] = {}
        self._told: set[str] = set()  # the chats asking, as last told
        card.answered.connect(self._on_card_answered)

    def asked(self, conversation_id: str | None) -> list[OverdueJSON]:
        return [call for call, _ in self._asked.get(conversation_id or "", [])]

    def waiting_chats(self) -> set[str]:
        """The chats with a question waiting for the user's answer."""
        return {conversation_id for conversation_id, calls in self._asked.items() if calls}

    def requested(self, conversation_id: str, call: OverdueJSON) -> None:
        calls = [
            c for c in self._asked.get(conversation_id, []) if c[0]["call_id"] != call["call_id"]
        ]
        self._asked[conversation_id] = [*calls, (call, time.monotonic())]
        self.show_current(again=call["call_id"])

    def step_changed(self, conversation_id: str, step: ToolPartJSON) -> None:
        """A step changed (a sub-agent's steps are inside its own)."""
        for inner in with_inner_steps(step):
            if inner.get("overdue") is None:
                self._drop(conversation_id, inner["id"])

    def reply_ended(self, conversation_id: str) -> None:
        self._asked.pop(conversation_id, None)
        self.show_current()

    def show_current(self, again: str | None = None) -> None:
        """The card for the chat on screen (hidden when none of its calls is asked about);
        `again`: a call asked about anew (a timeout later), shown afresh."""
        self._tell()
        calls = self._asked.get(self._context.current_id or "", [])
        if not calls:
            self._card.show_call(None)
            return
        call, asked_at = calls[0]
        shown = self._card.call
        if shown is not None and shown["call_id"] == call["call_id"] != again:
            self._card.set_waiting(len(calls))
            return  # asking already (an answer may be on its way)
        self._card.show_call(call, len(calls), asked_at)

    def _tell(self) -> None:
        waiting = self.waiting_chats()
        if waiting != self._told:
            self._told = waiting
            self.waiting_changed.emit()

    def _drop(self, conversation_id: str, call_id: str) -> None:
        calls = self._asked.get(conversation_id, [])
        kept = [c for c in calls if c[0]["call_id"] != call_id]
        if len(kept) != len(calls):
            self._asked[conversation_id] = kept
            self.show_current()

    def _on_card_answered(self, call_id: str, action: str) -> None:
        conversation_id = self._context.current_id
        if conversation_id is not None:
            answer = cast(OverdueAction, action)
            self._context.tasks.spawn(self._answer(conversation_id, call_id, answer))

    async def _answer(self, conversation_id: str, call_id: str, action: OverdueAction) -> None:
        client = self._context.require_client()
        try:
            step = await client.answer_overdue(conversation_id, call_id, action)
        except ClientError as exc:
            self._drop(conversation_id, call_id)
            if exc.status == 409:
                self.failed.emit("That call is no longer waiting for an answer: it has ended.")
                return
            raise
        self._drop(conversation_id, step["id"])
