"""The memory end to end, with the scripted upstream on a real socket: in a chat the model
calls `remember`, the user allows it, and the line is kept with that chat's link; a new chat
of the same scope is given it in its system message, a chat of another scope is not; a stop
while the call waits for approval writes nothing; the context meter counts what is sent."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from server.memory.prompt import CLOSE, OPEN
from server.models.context import MESSAGE_OVERHEAD, estimate_tokens
from tests.server.agent.test_approvals import approval_of, decide
from tests.server.memory.scopes import chat_in, new_project
from tests.support.parley import Parley
from tests.support.upstream import Script, ScriptedUpstream

pytestmark = pytest.mark.slow

FACT = "The user grows tomatoes on a balcony."
REMEMBER = {"name": "remember", "arguments": json.dumps({"line": FACT})}


def system_sent(upstream: ScriptedUpstream, index: int = -1) -> str:
    """The system message of a request the upstream was sent ("" when it had none)."""
    messages: list[dict[str, Any]] = upstream.records[index].body["messages"]
    return str(messages[0]["content"]) if messages[0]["role"] == "system" else ""


def counted(system: str) -> int:
    """A system message as the meter counts it (server/agent/cost.py: its text, no tool
    calls here, and its wrapping)."""
    return estimate_tokens(system) + MESSAGE_OVERHEAD


def turn_on(parley: Parley, project_id: str | None = None) -> None:
    """Memory on for a scope, as the app turns it on: its file made, empty."""
    path = "/api/memory" + (f"/projects/{project_id}" if project_id else "")
    reply = parley.call("PUT", path, json_body={"text": "", "version": None})
    assert reply.status == 200, reply.body


def remember_in(parley: Parley, upstream: ScriptedUpstream, cid: str) -> dict[str, Any]:
    """The model calls `remember` in chat `cid`; the user allows it; the reply ends."""
    upstream.queue = [Script(tokens=0, tool_calls=[REMEMBER]), Script(texts=["Noted."])]
    stream = parley.send(cid, "I grow tomatoes on my balcony; remember that.")
    approval = approval_of(stream)
    # The card shows what would be kept, word for word.
    assert (approval["server"], approval["tool"]) == ("parley", "remember")
    assert json.loads(approval["arguments"]) == {"line": FACT}
    assert stream.steps[-1]["status"] == "awaiting_approval"
    reply = decide(parley, cid, approval["call_id"], decision="allow")
    assert reply.status == 200, reply.body
    stream.read_all()
    assert stream.final["parley"]["status"] == "completed"
    return stream.steps[-1]


def test_a_fact_remembered_in_one_chat_is_given_to_new_chats_of_its_project_only(
    parley: Parley, upstream: ScriptedUpstream, data_dir: Path
) -> None:
    garden, kitchen = new_project(parley, "Garden"), new_project(parley, "Kitchen")
    for scope in (garden, kitchen, None):
        turn_on(parley, scope)
    first = chat_in(parley, garden)
    step = remember_in(parley, upstream, first)
    assert (step["status"], step["result"]) == ("completed", f"Remembered: {FACT}")
    path = data_dir / "memory" / "projects" / f"{garden}.md"
    assert path.read_text() == f"- {FACT} <!-- chat:{first} -->\n"

    upstream.queue = [Script(texts=["Sure."])]
    same = chat_in(parley, garden)
    parley.send(same, "How tall is a sunflower?").read_all()
    system = system_sent(upstream)
    assert f"{OPEN}\n- {FACT}\n{CLOSE}" in system
    assert first not in system  # the link is for the user, not the model

    for other in (chat_in(parley, kitchen), chat_in(parley, None)):
        upstream.queue = [Script(texts=["Sure."])]
        parley.send(other, "How tall is a sunflower?").read_all()
        assert FACT not in json.dumps(upstream.records[-1].body)
        assert OPEN not in system_sent(upstream)

    # "Forget": the next turn of the project is given nothing of it.
    line = parley.call("GET", f"/api/memory/projects/{garden}").json()["lines"][0]
    assert parley.call("DELETE", f"/api/memory/projects/{garden}/lines/{line['id']}").status == 200
    upstream.queue = [Script(texts=["Sure."])]
    parley.send(same, "And a rose?").read_all()
    assert FACT not in json.dumps(upstream.records[-1].body)


def test_a_fact_remembered_outside_projects_stays_outside_them(
    parley: Parley, upstream: ScriptedUpstream, data_dir: Path
) -> None:
    turn_on(parley)
    first = chat_in(parley, None)
    remember_in(parley, upstream, first)
    assert (data_dir / "memory" / "global.md").read_text() == f"- {FACT} <!-- chat:{first} -->\n"
    upstream.queue = [Script(texts=["Sure."])]
    parley.send(chat_in(parley, None), "Weather?").read_all()
    assert f"- {FACT}" in system_sent(upstream)
    upstream.queue = [Script(texts=["Sure."])]
    parley.send(chat_in(parley, new_project(parley, "Work")), "Weather?").read_all()
    assert FACT not in json.dumps(upstream.records[-1].body)


def test_denied_the_line_is_not_kept(
    parley: Parley, upstream: ScriptedUpstream, data_dir: Path
) -> None:
    turn_on(parley)
    cid = chat_in(parley, None)
    upstream.queue = [Script(tokens=0, tool_calls=[REMEMBER]), Script(texts=["Fine."])]
    stream = parley.send(cid, "remember it")
    approval = approval_of(stream)
    assert decide(parley, cid, approval["call_id"], decision="deny").status == 200
    stream.read_all()
    assert (data_dir / "memory" / "global.md").read_text() == ""


def test_with_memory_off_nothing_is_offered_or_given(
    parley: Parley, upstream: ScriptedUpstream, data_dir: Path
) -> None:
    """No file for the scope: memory is off there; the turn is as it was without memory."""
    cid = chat_in(parley, None)
    assert parley.call("GET", f"/api/conversations/{cid}/context").json()["tools"] == 0
    upstream.queue = [Script(texts=["Hi."])]
    parley.send(cid, "hello").read_all()
    assert "tools" not in upstream.records[-1].body
    assert OPEN not in system_sent(upstream)
    turn_on(parley)
    upstream.queue = [Script(texts=["Hi."])]
    parley.send(cid, "hello again").read_all()
    offered = [t["function"]["name"] for t in upstream.records[-1].body["tools"]]
    # `remember` alone: no `delegate`, since a sub-agent would have no tool to use.
    assert offered == ["remember"]
    assert OPEN not in system_sent(upstream)  # an empty memory says nothing


def test_a_hang_up_while_remember_awaits_approval_writes_nothing(
    parley: Parley, upstream: ScriptedUpstream, data_dir: Path
) -> None:
    path = data_dir / "memory" / "global.md"
    path.parent.mkdir(parents=True)
    path.write_text("- by hand\n")
    before = path.stat()
    cid = chat_in(parley, None)
    upstream.queue = [Script(tokens=0, tool_calls=[REMEMBER])]
    upstream.script = Script(texts=["never said"])
    stream = parley.send(cid, "remember it")
    approval = approval_of(stream)
    stream.hang_up()  # the socket closed: Stop, a window closed, a dropped client
    message = parley.wait_settled(cid, stream.first["message_id"])
    assert (message["status"], message["ended_by"]) == ("interrupted", "client_hangup")
    (step,) = [p for p in message["parts"] if p["type"] == "tool"]
    assert step["status"] == "interrupted"
    late = decide(parley, cid, approval["call_id"], decision="allow")
    assert late.status == 409
    parley.wait_idle()
    after = path.stat()
    assert path.read_text() == "- by hand\n"
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    assert len(upstream.records) == 1


def test_the_meter_counts_the_memory_as_it_is_sent(
    parley: Parley, upstream: ScriptedUpstream, data_dir: Path
) -> None:
    cid = chat_in(parley, None, tools=False)  # no tools: the system message is the memory's
    path = data_dir / "memory" / "global.md"
    path.parent.mkdir(parents=True)
    path.write_text(f"# Notes\n- {FACT} <!-- chat:{'b' * 32} -->\n- Lives in Lyon.\n")
    meter = parley.call("GET", f"/api/conversations/{cid}/context").json()
    upstream.queue = [Script(texts=["Sure."])]
    parley.send(cid, "hello").read_all()
    sent = system_sent(upstream)
    assert "Lives in Lyon." in sent and "chat:" not in sent
    # The turn's whole system message is the memory's part: the meter's two figures are it.
    assert meter["memory"] == estimate_tokens(sent) > 0
    assert meter["system"] == counted(sent)
    assert meter["used"] == meter["system"] + meter["history"] + meter["tools"]

    # With a system prompt of the chat's own, the memory comes after it, in the same message.
    assert parley.call("PATCH", f"/api/conversations/{cid}", json_body={"system": "Be brief."})
    meter = parley.call("GET", f"/api/conversations/{cid}/context").json()
    upstream.queue = [Script(texts=["Sure."])]
    parley.send(cid, "again").read_all()
    own = system_sent(upstream)
    assert own.startswith("Be brief.\n\n") and own.endswith(sent)
    assert meter["system"] == counted(own)
    assert meter["memory"] == estimate_tokens(sent)

    path.unlink()
    assert parley.call("GET", f"/api/conversations/{cid}/context").json()["memory"] == 0


def test_the_memory_comes_after_the_chat_s_prompt_and_its_project_s_instructions(
    parley: Parley, upstream: ScriptedUpstream
) -> None:
    project = asyncio.run(parley.services.store.projects.create("Garden", "Answer in French."))
    turn_on(parley, project["id"])
    path = f"/api/memory/projects/{project['id']}"
    version = parley.call("GET", path).json()["version"]
    saved = parley.call("PUT", path, json_body={"text": f"- {FACT}\n", "version": version})
    assert saved.status == 200, saved.body
    cid = chat_in(parley, project["id"], tools=False)
    assert parley.call("PATCH", f"/api/conversations/{cid}", json_body={"system": "Be brief."})
    upstream.queue = [Script(texts=["Oui."])]
    parley.send(cid, "hello").read_all()
    system = system_sent(upstream)
    own, instructions, memory = (
        system.index("Be brief."),
        system.index("Answer in French."),
        system.index(OPEN),
    )
    assert own < instructions < memory
    assert system.endswith(f"{OPEN}\n- {FACT}\n{CLOSE}")
