"""Approvals scoped as people need them (server/agent/grants.py): an allow for this call,
this tool in this chat, every tool of its server in this chat, or the tool's calls whose path
lies under a folder. Granted calls run unasked, others ask, a revoked grant asks again, the
folder cannot be left with `..` or a symlink, and the injection guard still asks after text
the user did not write whatever the grant. Each call records who allowed it and how far.

The guard's MCP server (tests/support/mcp_guard.py, over stdio) with its tools trusted "ask";
its own log says what ran. The grants are tried with the guard off for the server: with it on,
an earlier call's result in the chat is text the user did not write, and every later call
that can act is asked by the guard whatever the grant (the last tests).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.server.agent.test_approvals import approval_of, decide
from tests.server.guard.suite import READ_PLANTED, Guarded, call, start
from tests.support.tools import ToolLog
from tests.support.upstream import Script, ScriptedUpstream

pytestmark = pytest.mark.slow

NOTES = "/home/me/notes"


@pytest.fixture
def asking(data_dir: Path, upstream: ScriptedUpstream, tmp_path: Path) -> Iterator[Guarded]:
    found = start(data_dir, upstream, ToolLog(tmp_path / "guard.log"), trust="ask", guard=False)
    yield found
    found.parley.stop()


@pytest.fixture
def guarded(data_dir: Path, upstream: ScriptedUpstream, tmp_path: Path) -> Iterator[Guarded]:
    found = start(data_dir, upstream, ToolLog(tmp_path / "guard.log"), trust="ask")
    yield found
    found.parley.stop()


def write(path: str) -> dict[str, str]:
    return call("g__write_file", path=path, text="hello")


def turn(g: Guarded, cid: str, *calls: dict[str, str]) -> Any:
    """A turn whose model makes `calls` one after another, then says it is done."""
    g.upstream.queue = [*(Script(tokens=0, tool_calls=[c]) for c in calls), Script(texts=["Ok."])]
    return g.parley.send(cid, "Go on.")


def runs_unasked(g: Guarded, cid: str, made: dict[str, str]) -> dict[str, Any]:
    """The call runs without an approval asked; its step as saved."""
    stream = turn(g, cid, made)
    for event in stream.iter_events():  # an approval asked fails at once, not at a timeout
        assert "approval" not in (event.get("parley", {}) if isinstance(event, dict) else {})
    assert stream.final["parley"]["status"] == "completed"
    (step,) = [
        p for p in g.parley.message(cid, stream.first["message_id"])["parts"] if p["type"] == "tool"
    ]
    assert step["status"] == "completed", step
    return step


def asks(g: Guarded, cid: str, made: dict[str, str], then: str = "deny", **scope: Any) -> Any:
    """The call asks; the user answers `then` (with `scope`); the turn's saved message."""
    before = len(g.ran(made["name"].split("__")[1]))
    stream = turn(g, cid, made)
    approval = approval_of(stream)
    assert approval["arguments"] == made["arguments"]
    assert len(g.ran(made["name"].split("__")[1])) == before  # nothing ran while it asks
    reply = decide(g.parley, cid, approval["call_id"], decision=then, **scope)
    assert reply.status == 200, reply.body
    stream.read_all()
    return g.parley.message(cid, stream.first["message_id"])


def step_of(message: dict[str, Any], n: int = 0) -> dict[str, Any]:
    return [p for p in message["parts"] if p["type"] == "tool"][n]


def grants(g: Guarded) -> list[dict[str, Any]]:
    reply = g.parley.call("GET", "/api/tools/grants")
    assert reply.status == 200, reply.body
    found: list[dict[str, Any]] = reply.json()["grants"]
    return found


def test_allow_once_allows_that_call_only(asking: Guarded) -> None:
    cid = asking.conversation()
    saved = asks(asking, cid, write(f"{NOTES}/a.md"), "allow", remember="once")
    assert step_of(saved)["allowed"] == {"by": "you", "scope": "once"}
    assert len(asking.ran("write_file")) == 1
    asks(asking, cid, write(f"{NOTES}/b.md"))
    assert grants(asking) == []


def test_a_tool_allowed_for_the_chat_runs_unasked_there_and_nowhere_else(
    asking: Guarded,
) -> None:
    cid = asking.conversation()
    saved = asks(asking, cid, write("/tmp/a"), "allow", remember="chat")
    assert step_of(saved)["allowed"] == {"by": "you", "scope": "chat"}
    step = runs_unasked(asking, cid, write("/etc/b"))
    assert step["allowed"] == {"by": "grant", "scope": "chat"}
    asks(asking, cid, call("g__delete_file", path="/tmp/a"))  # another tool of the server
    asks(asking, asking.conversation(), write("/tmp/c"))  # another chat
    assert [e["path"] for e in asking.ran("write_file")] == ["/tmp/a", "/etc/b"]


def test_a_server_allowed_for_the_chat_runs_each_of_its_tools_unasked_there(
    asking: Guarded,
) -> None:
    cid = asking.conversation()
    asks(asking, cid, write("/tmp/a"), "allow", remember="server")
    step = runs_unasked(asking, cid, call("g__delete_file", path="/tmp/old"))
    assert step["allowed"] == {"by": "grant", "scope": "server"}
    runs_unasked(asking, cid, call("g__send", url="https://example.org/"))
    asks(asking, asking.conversation(), call("g__delete_file", path="/tmp/x"))  # another chat
    (grant,) = grants(asking)
    assert (grant["scope"], grant["server"], grant["tool"]) == ("server", "g", None)
    assert grant["conversation_id"] == cid


def test_a_folder_allowed_for_the_chat_runs_paths_under_it_and_asks_the_rest(
    asking: Guarded, tmp_path: Path
) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    (tmp_path / "outside").mkdir()
    (notes / "link").symlink_to(tmp_path / "outside", target_is_directory=True)
    cid = asking.conversation()
    scope = {"remember": "arguments", "argument": "path", "under": f"{notes}/"}
    saved = asks(asking, cid, write(f"{notes}/first.md"), "allow", **scope)
    allowed = {"by": "you", "scope": "arguments", "argument": "path", "under": str(notes)}
    assert step_of(saved)["allowed"] == allowed
    step = runs_unasked(asking, cid, write(f"{notes}/sub/second.md"))
    assert step["allowed"] == {**allowed, "by": "grant"}
    for escape in (
        f"{notes}/../.bashrc",
        f"{notes}/sub/../../outside/x",
        f"{notes}/link/escaped",  # a symlink inside that points outside
        f"{notes}-old/x",
        "/etc/passwd",
    ):
        asks(asking, cid, write(escape))
    asks(asking, cid, call("g__delete_file", path=f"{notes}/first.md"))  # another tool
    ran = [e["path"] for e in asking.ran("write_file")]
    assert ran == [f"{notes}/first.md", f"{notes}/sub/second.md"]
    assert asking.ran("delete_file") == []


def test_an_argument_scope_must_cover_the_call_it_answers(asking: Guarded) -> None:
    cid = asking.conversation()
    stream = turn(asking, cid, write(f"{NOTES}/a.md"))
    approval = approval_of(stream)
    for scope, field in (
        ({"under": NOTES}, "argument"),
        ({"argument": "path", "under": "/home/other"}, "does not lie under"),
        ({"argument": "text", "under": "/"}, "prefix"),
        ({"argument": "nothing", "under": NOTES}, "no string argument"),
        ({"argument": "path", "under": "/home/me/notes/../.."}, "prefix"),
    ):
        body = {"decision": "allow", "remember": "arguments", **scope}
        reply = decide(asking.parley, cid, approval["call_id"], **body)
        assert reply.status == 400, reply.body
        assert field in reply.json()["error"]["message"], reply.body
    assert asking.ran("write_file") == []  # a refused scope decided nothing: still asked
    reply = decide(asking.parley, cid, approval["call_id"], decision="deny")
    assert reply.status == 200, reply.body
    stream.read_all()
    assert grants(asking) == [] and asking.ran("write_file") == []


def test_a_revoked_grant_asks_again(asking: Guarded) -> None:
    cid = asking.conversation(title="Notes")
    asks(asking, cid, write("/tmp/a"), "allow", remember="chat")
    (grant,) = grants(asking)
    assert (grant["scope"], grant["tool"], grant["conversation_title"]) == (
        "chat",
        "write_file",
        "Notes",
    )
    runs_unasked(asking, cid, write("/tmp/b"))
    assert asking.parley.call("DELETE", f"/api/tools/grants/{grant['id']}").status == 204
    assert grants(asking) == []
    asks(asking, cid, write("/tmp/c"))
    assert [e["path"] for e in asking.ran("write_file")] == ["/tmp/a", "/tmp/b"]
    assert asking.parley.call("DELETE", f"/api/tools/grants/{grant['id']}").status == 404


def test_a_deleted_chat_takes_its_grants_with_it(asking: Guarded) -> None:
    cid = asking.conversation()
    asks(asking, cid, write("/tmp/a"), "allow", remember="server")
    assert len(grants(asking)) == 1
    assert asking.parley.call("DELETE", f"/api/conversations/{cid}").status == 204
    assert grants(asking) == []


@pytest.mark.parametrize(
    "scope",
    [
        {"remember": "chat"},
        {"remember": "server"},
        {"remember": "arguments", "argument": "path", "under": NOTES},
    ],
)
def test_the_guard_still_asks_after_untrusted_text_whatever_the_grant(
    guarded: Guarded, scope: dict[str, Any]
) -> None:
    cid = guarded.conversation()
    asks(guarded, cid, write(f"{NOTES}/a.md"), "allow", **scope)  # nothing untrusted read yet
    assert len(grants(guarded)) == 1
    # The model reads the planted note (allowed once), then calls what the grant covers.
    guarded.upstream.queue = [
        Script(tokens=0, tool_calls=[READ_PLANTED]),
        Script(tokens=0, tool_calls=[write(f"{NOTES}/b.md")]),
        Script(texts=["Not done."]),
    ]
    stream = guarded.parley.send(cid, "Read the planted note.")
    if scope["remember"] != "server":  # a grant of the whole server lets the read run
        read = approval_of(stream)
        assert read["tool"] == "read_note" and "reason" not in read  # asked by its trust
        assert decide(guarded.parley, cid, read["call_id"], decision="allow").status == 200
    approval = approval_of(stream)
    assert approval["tool"] == "write_file" and "which you did not write" in approval["reason"]
    assert len(guarded.ran("write_file")) == 1  # held, although the grant covers it
    reply = decide(guarded.parley, cid, approval["call_id"], decision="allow")
    assert reply.status == 200, reply.body
    stream.read_all()
    step = step_of(guarded.parley.message(cid, stream.first["message_id"]), 1)
    assert step["guard"]["reason"] == approval["reason"]
    assert step["allowed"] == {"by": "you", "scope": "once"}  # the user's, not the grant's
    assert [e["path"] for e in guarded.ran("write_file")] == [f"{NOTES}/a.md", f"{NOTES}/b.md"]


def test_a_tool_trusted_allow_records_its_trust(
    data_dir: Path, upstream: ScriptedUpstream, tmp_path: Path
) -> None:
    g = start(data_dir, upstream, ToolLog(tmp_path / "guard.log"))  # every tool "allow"
    try:
        step = runs_unasked(g, g.conversation(), write("/tmp/a"))
        assert step["allowed"] == {"by": "trust", "scope": "always"}
    finally:
        g.parley.stop()


def test_the_guard_switch_is_written_to_the_entry_and_read_at_the_next_call(
    asking: Guarded, data_dir: Path
) -> None:
    def entry() -> dict[str, Any]:
        config = json.loads((data_dir / "mcp.json").read_text(encoding="utf-8"))
        found: dict[str, Any] = config["mcpServers"]["g"]
        return found

    reply = asking.parley.call("PUT", "/api/tools/servers/g/guard", json_body={"guard": False})
    assert reply.status == 200, reply.body
    assert reply.json()["guard"] is False and entry()["guard"] is False
    assert reply.json()["state"] == "ready"  # not restarted for it
    reply = asking.parley.call("PUT", "/api/tools/servers/g/guard", json_body={"guard": True})
    assert reply.json()["guard"] is True and "guard" not in entry()
    bad = asking.parley.call("PUT", "/api/tools/servers/g/guard", json_body={"guard": "no"})
    assert bad.status == 400
    missing = asking.parley.call("PUT", "/api/tools/servers/nope/guard", json_body={"guard": True})
    assert missing.status == 404


def test_an_allow_frees_the_waiting_calls_it_covers_and_no_other(asking: Guarded) -> None:
    cid = asking.conversation()
    made = [write(f"{NOTES}/a.md"), write(f"{NOTES}/b.md"), write("/etc/hosts")]
    asking.upstream.queue = [Script(tokens=0, tool_calls=made), Script(texts=["Ok."])]
    stream = asking.parley.send(cid, "Write three.")
    first = approval_of(stream)
    scope = {"remember": "arguments", "argument": "path", "under": NOTES}
    reply = decide(asking.parley, cid, first["call_id"], decision="allow", **scope)
    assert reply.status == 200, reply.body
    waiting = [approval_of(stream), approval_of(stream)]
    by_path = {json.loads(a["arguments"])["path"]: a for a in waiting}
    freed = by_path[f"{NOTES}/b.md"]
    again = decide(asking.parley, cid, freed["call_id"], decision="allow")
    assert again.status == 409, again.body  # it was freed by the grant: not waiting now
    outside = by_path["/etc/hosts"]
    assert decide(asking.parley, cid, outside["call_id"], decision="deny").status == 200
    stream.read_all()
    steps = [p for p in asking.parley.message(cid, stream.first["message_id"])["parts"]
             if p["type"] == "tool"]  # fmt: skip
    assert [s["status"] for s in steps] == ["completed", "completed", "denied"]
    assert steps[1]["allowed"]["by"] == "grant" and "allowed" not in steps[2]
    assert sorted(e["path"] for e in asking.ran("write_file")) == [f"{NOTES}/a.md", f"{NOTES}/b.md"]
