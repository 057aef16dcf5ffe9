"""The user's decision on a tool call that awaits approval.

    POST /api/conversations/{id}/tool-calls/{call_id}
         {"decision": "allow" | "deny",
          "remember": "once" | "chat" | "server" | "arguments",
          "argument": NAME, "under": PREFIX}   → 200 {decision, remember, step}: an allow
         for this call, this tool in this chat, every tool of its server in this chat, or
         (with `argument` and `under`) this tool's calls in this chat whose string argument
         NAME lies under PREFIX (server/agent/grants.py); 400 a bad field (named; also an
         argument scope that does not cover the call itself); 404 an unknown conversation or
         call; 409 a call that is not waiting (decided already, its turn ended, or it never
         asked)

    POST /api/conversations/{id}/tool-calls/{call_id}/overdue
         {"action": "wait" | "stop"}   → 200 {action, step}: a call that ran for its timeout
         (`parley.overdue`) is waited for again, or stopped (the model is told the user
         stopped it); 409 a call that is not asked about now

The decision is taken synchronously by the run that waits (server/agent/approvals.py), on
the server's loop, so it either reaches a waiting call or is a 409: a late decision never
runs anything.
"""

from __future__ import annotations

from typing import cast

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from server.agent.approvals import Scope
from server.errors import BadRequestError, ConflictError, NotFoundError
from server.http.jsonbody import JSONObject, read_object
from server.routes.services import services
from server.types import Decision, Remember
from server.types.chunks import DecisionJSON, OverdueAction, OverdueAnswerJSON

DECISIONS: tuple[Decision, ...] = ("allow", "deny")
REMEMBERS: tuple[Remember, ...] = ("once", "chat", "server", "arguments")


def _decision(body: JSONObject) -> tuple[Decision, Scope]:
    decision = body.get("decision")
    if decision not in DECISIONS:
        raise BadRequestError('\'decision\' must be "allow" or "deny"', code="invalid_field")
    remember = body.get("remember", "once")
    if remember is None:
        remember = "once"
    if remember not in REMEMBERS:
        allowed = ", ".join(f'"{r}"' for r in REMEMBERS)
        raise BadRequestError(f"'remember' must be one of {allowed}", code="invalid_field")
    argument, under = body.get("argument"), body.get("under")
    for key, value in (("argument", argument), ("under", under)):
        if value is not None and not isinstance(value, str):
            raise BadRequestError(f"'{key}' must be a string", code="invalid_field")
    if remember != "arguments":
        return decision, Scope(remember)
    return decision, Scope(remember, cast(str | None, argument), cast(str | None, under))


async def decide_tool_call(request: Request) -> JSONResponse:
    svc = services(request)
    conversation_id: str = request.path_params["conversation_id"]
    call_id: str = request.path_params["call_id"]
    decision, scope = _decision(await read_object(request, svc.settings.limits))
    for run in svc.runs.runs_of(conversation_id):
        step = run.tree.decide(call_id, decision, scope)  # raises ConflictError
        if step is not None:
            answer: DecisionJSON = {
                "decision": decision,
                "remember": scope.remember,
                "step": step.json(),
            }
            return JSONResponse(answer)
    # No run of the conversation waits for it: a step of an ended turn, or no such call.
    if await svc.store.find_conversation(conversation_id) is None:
        raise NotFoundError(f"no conversation with id {conversation_id!r}")
    if await svc.store.has_tool_step(conversation_id, call_id):
        raise ConflictError(
            "this call is no longer waiting for a decision: its turn has ended",
            code="not_awaiting_approval",
        )
    raise NotFoundError(f"no tool call with id {call_id!r} in conversation {conversation_id!r}")


ACTIONS: tuple[OverdueAction, ...] = ("wait", "stop")


async def answer_overdue(request: Request) -> JSONResponse:
    svc = services(request)
    conversation_id: str = request.path_params["conversation_id"]
    call_id: str = request.path_params["call_id"]
    action = (await read_object(request, svc.settings.limits)).get("action")
    if action not in ACTIONS:
        raise BadRequestError('\'action\' must be "wait" or "stop"', code="invalid_field")
    for run in svc.runs.runs_of(conversation_id):
        step = run.tree.answer_overdue(call_id, action)  # raises ConflictError
        if step is not None:
            answered: OverdueAnswerJSON = {"action": action, "step": step.json()}
            return JSONResponse(answered)
    if await svc.store.find_conversation(conversation_id) is None:
        raise NotFoundError(f"no conversation with id {conversation_id!r}")
    raise ConflictError("this call is not waiting for an answer", code="not_overdue")


routes = [
    Route(
        "/api/conversations/{conversation_id}/tool-calls/{call_id}",
        decide_tool_call,
        methods=["POST"],
    ),
    Route(
        "/api/conversations/{conversation_id}/tool-calls/{call_id}/overdue",
        answer_overdue,
        methods=["POST"],
    ),
]
