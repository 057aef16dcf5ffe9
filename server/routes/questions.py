"""The user's answer to a question a tool's MCP server asks during a call (MCP elicitation).

    POST /api/conversations/{id}/questions/{question_id}
         {"action": "accept" | "decline" | "cancel", "content": {...}}   → 200 {action, step};
         400 a bad field, or `content` the server's form does not take (`invalid_answer`,
         naming the field: the question stays asked); 404 an unknown conversation or
         question; 409 `not_asking`: answered already, its call ended, or its turn ended

`content` goes with "accept" of a form question; a URL question's "accept" says only that the
user agrees to go there (Parley never opens it). The answer is taken synchronously by the run
that waits (server/agent/questions.py), on the server's loop: it either reaches a waiting
question or is a 409.
"""

from __future__ import annotations

import re

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from server.errors import BadRequestError, ConflictError, NotFoundError
from server.http.jsonbody import read_object
from server.routes.services import services
from server.types import QuestionAction
from server.types.chunks import QuestionAnswerJSON

ACTIONS: tuple[QuestionAction, ...] = ("accept", "decline", "cancel")
# A question's id is its call's id and its number in the call (server/agent/questions.py).
QUESTION_ID = re.compile(r"(?P<call_id>.+)-q[0-9]+")


async def answer_question(request: Request) -> JSONResponse:
    svc = services(request)
    conversation_id: str = request.path_params["conversation_id"]
    question_id: str = request.path_params["question_id"]
    body = await read_object(request, svc.settings.limits)
    action = body.get("action")
    if action not in ACTIONS:
        raise BadRequestError(
            '\'action\' must be "accept", "decline" or "cancel"', code="invalid_field"
        )
    content = body.get("content")
    if content is not None and action != "accept":
        raise BadRequestError("'content' goes only with \"accept\"", code="invalid_field")
    for run in svc.runs.runs_of(conversation_id):
        step = run.tree.answer_question(question_id, action, content)  # raises
        if step is not None:
            answered: QuestionAnswerJSON = {"action": action, "step": step.json()}
            return JSONResponse(answered)
    # No run of the conversation asks it: a question of an ended turn, or no such question.
    if await svc.store.find_conversation(conversation_id) is None:
        raise NotFoundError(f"no conversation with id {conversation_id!r}")
    asked = QUESTION_ID.fullmatch(question_id)
    if asked and await svc.store.has_tool_step(conversation_id, asked["call_id"]):
        raise ConflictError(
            "this question is no longer waiting for an answer: its turn has ended",
            code="not_asking",
        )
    raise NotFoundError(f"no question with id {question_id!r} in conversation {conversation_id!r}")


routes = [
    Route(
        "/api/conversations/{conversation_id}/questions/{question_id}",
        answer_question,
        methods=["POST"],
    ),
]
