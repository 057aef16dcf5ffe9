"""The user's decision on a tool call that awaits approval (issue 17).

    POST /api/conversations/{id}/tool-calls/{call_id}
         {"decision": "allow" | "deny", "remember": "once" | "chat"}   → 200 {decision,
         remember, step}; 400 a bad field (named); 404 an unknown conversation or call;
         409 a call that is not waiting (decided already, its turn ended, or it never asked)

    POST /api/conversations/{id}/tool-calls/{call_id}/overdue
         {"action": "wait" | "stop"}   → 200 {action, step}: a call that ran for its timeout
         (`parley.overdue`) is waited for again, or stopped (the model is told the user
         stopped it); 409 a call that is not asked about now (issue 41)

The decision is taken synchronously by the run that waits (server/agent/approvals.py), on
the server's loop, so it either reaches a waiting call or is a 409: a late decision never
runs anything.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from server.errors import BadRequestError, ConflictError, NotFoundError
from server.http.jsonbody import JSONObject, read_object
from server.routes.services import services
from server.types import Decision, Remember
from server.types.chunks import DecisionJSON, OverdueAction, OverdueAnswerJSON

DECISIONS: tuple[Decision, ...] = ("allow", "deny")
REMEMBERS: tuple[Remember, ...] = ("once", "chat")


def _decision(body: JSONObject) -> tuple[Decision, Remember]:
    decision = body.get("decision")
    if decision not in DECISIONS:
        raise BadRequestError('\'decision\' must be "allow" or "deny"', code="invalid_field")
    remember = body.get("remember", "once")
    if remember is None:
        remember = "once"
    if remember not in REMEMBERS:
        raise BadRequestError('\'remember\' must be "once" or "chat"', code="invalid_field")
    return decision, remember


async def decide_tool_call(request: Request) -> JSONResponse:
    svc = services(request)
    conversation_id: str = request.path_params["conversation_id"]
    call_id: str = request.path_params["call_id"]
    decision, remember = _decision(await read_object(request, svc.settings.limits))
    for run in svc.runs.runs_of(conversation_id):
        step = run.agent.decide(call_id, decision, remember)  # raises ConflictError
        if step is not None:
            answer: DecisionJSON = {"decision": decision, "remember": remember, "step": step.json()}
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
        step = run.agent.answer_overdue(call_id, action)  # raises ConflictError
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
