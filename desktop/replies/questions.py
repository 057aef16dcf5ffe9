"""Questions tools' MCP servers ask the user (MCP elicitation), per chat: the card shows the
first one of the chat on screen; the answer goes to the server (ParleyClient.questions). A
question is over when its step says it was answered (here or by another client) or the step
ended, and every question of a chat when its reply ends (Stop, close, an error: the server
has answered them "cancel", and a late answer would get 409). An answer the server refuses
(a field that does not fit the form) is said on the card, which stays. Which chats have a
question waiting is told as it changes (`waiting_changed`): their rows and the window's
title say so."""

from __future__ import annotations

from typing import cast

from PySide6.QtCore import Signal

from desktop.client.events import with_inner_steps
from desktop.controller import Context, Controller
from desktop.errors import ClientError
from desktop.replies.question_card import QuestionCard
from server.types import OPEN_STATUSES, QuestionAction, ToolPartJSON
from server.types.chunks import QuestionEventJSON


class QuestionController(Controller):
    failed = Signal(str)
    waiting_changed = Signal()  # a chat began or ceased to have a question waiting

    def __init__(self, context: Context, card: QuestionCard) -> None:
        super().__init__(context, card)
        self._card = card
        self._asked: dict[str, list[QuestionEventJSON]] = {}
        self._told: set[str] = set()  # the chats asked, as last told
        card.answered.connect(self._on_card_answered)

    def asked(self, conversation_id: str | None) -> list[QuestionEventJSON]:
        return list(self._asked.get(conversation_id or "", []))

    def waiting_chats(self) -> set[str]:
        """The chats with a question waiting for the user's answer."""
        return {conversation_id for conversation_id, asked in self._asked.items() if asked}

    def requested(self, conversation_id: str, question: QuestionEventJSON) -> None:
        self._asked.setdefault(conversation_id, []).append(question)
        self.show_current()

    def step_changed(self, conversation_id: str, step: ToolPartJSON) -> None:
        """A step changed (a sub-agent's steps are inside its own): the questions it no
        longer asks are over."""
        over: set[str] = set()
        for inner in with_inner_steps(step):
            ended = inner["status"] not in OPEN_STATUSES
            for question in inner.get("questions", []):
                if ended or question["state"] != "asked":
                    over.add(question["id"])
            if ended:
                over |= {q["question_id"] for q in self.asked(conversation_id)
                         if q["call_id"] == inner["id"]}  # fmt: skip
        if over:
            self._drop(conversation_id, over)

    def reply_ended(self, conversation_id: str) -> None:
        self._asked.pop(conversation_id, None)
        self.show_current()

    def show_current(self) -> None:
        """The card for the chat on screen (hidden when none of its questions waits)."""
        self._tell()
        asked = self._asked.get(self._context.current_id or "", [])
        shown = self._card.question
        if asked and shown is not None and shown["question_id"] == asked[0]["question_id"]:
            self._card.set_waiting(len(asked))
            return  # asking already (an answer may be on its way; what was typed stays)
        self._card.show_question(asked[0] if asked else None, len(asked))

    def _tell(self) -> None:
        waiting = self.waiting_chats()
        if waiting != self._told:
            self._told = waiting
            self.waiting_changed.emit()

    def _drop(self, conversation_id: str, question_ids: set[str]) -> None:
        asked = self._asked.get(conversation_id, [])
        kept = [q for q in asked if q["question_id"] not in question_ids]
        if len(kept) != len(asked):
            self._asked[conversation_id] = kept
            self.show_current()

    def _on_card_answered(self, question_id: str, action: str, content: dict[str, object]) -> None:
        conversation_id = self._context.current_id
        question = next((q for q in self.asked(conversation_id) if q["question_id"] == question_id),
                        None)  # fmt: skip
        if conversation_id is None or question is None:
            return
        form = question["mode"] == "form" and action == "accept"
        answer = self._answer(
            conversation_id, question_id, cast(QuestionAction, action), content if form else None
        )
        self._context.tasks.spawn(answer)

    async def _answer(
        self,
        conversation_id: str,
        question_id: str,
        action: QuestionAction,
        content: dict[str, object] | None,
    ) -> None:
        client = self._context.require_client()
        try:
            answer = await client.questions.answer(conversation_id, question_id, action, content)
        except ClientError as exc:
            if exc.status in (404, 409):  # no longer asked (the turn ended, or another
                self._drop(conversation_id, {question_id})  # client answered): nothing to say
                return
            shown = self._card.question
            if shown is not None and shown["question_id"] == question_id:
                self._card.show_refused(exc.message)  # the form stays, to be answered again
                return
            raise
        self.step_changed(conversation_id, answer["step"])
