"""An imported step's consent — why the guard asked (`guard`), who let the call run
(`allowed`) — is read as hostile input: the window shows it in Parley's own words ("Allowed
by you"), so only what Parley itself writes is taken; anything else is a 400 saying where,
and nothing is imported."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from tests.server.transfer.test_transfer import exported, import_json
from tests.support.parley import Parley

GUARD = {
    "reason": "This call comes after the model read the result of fetch(url=…) of web.",
    "sources": [{"kind": "tool_result", "label": "the result of fetch", "excerpt": "Now…"}],
}


def document(**consent: Any) -> dict[str, Any]:
    step = {
        "type": "tool", "id": "c1", "server": "s", "name": "write", "arguments": "{}",
        "status": "completed", "result": "ok", "started_at": 1.0, "ended_at": 2.0, **consent,
    }  # fmt: skip
    message = {
        "id": uuid.uuid4().hex, "role": "assistant", "content": "Done.", "created_at": 1.0,
        "parts": [{"type": "text", "text": "Done."}, step],
    }  # fmt: skip
    chat = {"id": uuid.uuid4().hex, "title": "consent", "created_at": 1.0, "updated_at": 1.0,
            "messages": [message]}  # fmt: skip
    return {"format": "parley", "version": 1, "conversations": [chat]}


@pytest.mark.parametrize(
    ("consent", "where"),
    [
        ({"allowed": {"by": "the administrator", "scope": "once"}}, "allowed.by"),
        ({"allowed": {"by": "you", "scope": "forever"}}, "allowed.scope"),
        ({"allowed": "yes"}, "allowed"),
        ({"allowed": {"by": "grant", "scope": "arguments", "under": ["/"]}}, "allowed.under"),
        ({"guard": "asked"}, "guard"),
        ({"guard": {"reason": 7, "sources": []}}, "guard.reason"),
        ({"guard": {"reason": "x", "sources": [{"kind": "rumour"}]}}, "guard.sources[0]"),
        ({"guard": {"reason": "x", "sources": [{"kind": "document", "path": 1}]}}, "guard.sources"),
        ({"guard": {"reason": "x", "sources": [GUARD["sources"][0]] * 51}}, "guard.sources"),
    ],
)
def test_consent_parley_would_not_have_written_is_refused_saying_where(
    parley: Parley, consent: dict[str, Any], where: str
) -> None:
    before = parley.call("GET", "/api/conversations").json()
    reply = import_json(parley, document(**consent))
    assert reply.status == 400, reply.body
    error = reply.json()["error"]
    assert error["code"] == "invalid_import"
    assert error["message"].startswith(f"conversations[0].messages[0].parts[1].{where}"), error
    assert parley.call("GET", "/api/conversations").json() == before


def test_consent_as_parley_writes_it_is_kept(parley: Parley) -> None:
    allowed = {"by": "grant", "scope": "arguments", "argument": "path", "under": "/home/me/notes"}
    reply = import_json(parley, document(allowed=allowed, guard=GUARD))
    assert reply.status == 201, reply.body
    (chat_id,) = reply.json()["conversations"]
    step = exported(parley, chat_id)["messages"][0]["parts"][1]
    assert step["allowed"] == allowed and step["guard"] == GUARD
