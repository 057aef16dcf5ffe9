"""A tool's MCP server asking the user (elicitation), for the window: the stream's
`parley.question` event checked once, and the user's answer sent back. Composed into
ParleyClient as `client.questions`; calls go through its one HTTP client."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from desktop.client.answers import STEP_KEYS, shaped
from desktop.client.paths import segment
from desktop.errors import ClientError
from server.types import QuestionAction, ToolPartJSON
from server.types.chunks import QuestionAnswerJSON, QuestionEventJSON
from server.types.keys import required_keys

Call = Callable[[str, str, object], Awaitable[object]]

QUESTION_KEYS = required_keys(QuestionEventJSON)


def question_event(value: object) -> QuestionEventJSON:
    """A `parley.question` event, checked: a form carries its schema as an object, a URL
    question its URL as text (a question the window cannot show is an error, not a guess)."""
    event = shaped(QuestionEventJSON, QUESTION_KEYS, value)
    mode = event["mode"]
    if mode == "form" and not isinstance(event.get("schema", {}), dict):
        raise ClientError("the server's question has a malformed form")
    if mode == "url" and not isinstance(event.get("url"), str):
        raise ClientError("the server's question has no URL")
    if mode not in ("form", "url"):
        raise ClientError(f"the server's question is of an unknown kind ({mode!r})")
    return event


class QuestionsApi:
    def __init__(self, call: Call) -> None:
        self._call = call

    async def answer(
        self,
        conversation_id: str,
        question_id: str,
        action: QuestionAction,
        content: dict[str, object] | None = None,
    ) -> QuestionAnswerJSON:
        """The user's answer to a server's question (a ReplyQuestion): "accept" (a form with
        its `content`), "decline" or "cancel". Returns the step as it is now. ClientError
        with status 400 (code `invalid_answer`, its message naming the field) when the form's
        content does not fit its schema: the question stays asked; 409 when it no longer
        waits (answered, its call or its turn ended); 404 for an unknown question."""
        conversation, question = segment(conversation_id), segment(question_id)
        path = f"/api/conversations/{conversation}/questions/{question}"
        body: dict[str, object] = {"action": action}
        if content is not None:
            body["content"] = content
        answer = shaped(
            QuestionAnswerJSON, ("action", "step"), await self._call("POST", path, body)
        )
        shaped(ToolPartJSON, STEP_KEYS, answer["step"])
        return answer
