"""Chats of every kind Parley can produce, each built through the real HTTP API: a scripted
OpenAI-compatible upstream, an MCP server over stdio whose tools ask before they act, the
library's search tool (citations), the bundled local model and a ChatGPT import.

Each builder returns the conversation's id once every reply of it has settled.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from server.models.bundled import BUNDLED_MODEL_NAME
from tests.support.client import SSEStream, request
from tests.support.parley import Parley
from tests.support.upstream import Script, ScriptedUpstream

ECHO = {"name": "t__echo", "arguments": json.dumps({"text": "hé 👋"})}
SEARCH = {"name": "search_documents", "arguments": '{"query": "aardvark burrows", "k": 2}'}
STORY = "Write a very long story about a dragon and a knight, at least 1000 words."


@dataclass
class Chats:
    parley: Parley
    upstream: ScriptedUpstream

    # -- driving the API -------------------------------------------------------------------

    def turn(self, cid: str, action: str = "", message_id: str = "", **body: Any) -> SSEStream:
        """Open a turn: a new message (`action` empty), or `edit`, `regenerate`, `continue`
        of a message."""
        path = f"/api/conversations/{cid}/messages"
        if action:
            path += f"/{message_id}/{action}"
        stream = SSEStream(self.parley.port, path, body, self.parley.token, timeout=60)
        if stream.status != 200:
            stream.close()
            raise AssertionError(f"{path}: {stream.status}")
        return stream

    def settled(self, cid: str, stream: SSEStream) -> dict[str, Any]:
        """The reply of a stream read to its end (or hung up), once the server settled it."""
        found: dict[str, Any] = self.parley.wait_settled(cid, stream.first["message_id"], 60)
        return found

    def reply(
        self, cid: str, *scripts: Script, content: str = "Tell me", **body: Any
    ) -> dict[str, Any]:
        """A new message, answered by the upstream's `scripts` (one per model call)."""
        self.upstream.queue = list(scripts)
        stream = self.turn(cid, content=content, **body)
        stream.read_all()
        return self.settled(cid, stream)

    def stopped(self, cid: str, stream: SSEStream, at: str = "") -> dict[str, Any]:
        """Stop a reply as the window's Stop does: hang up (a real socket closed), once the
        delivered text holds `at`."""
        stream.read_until(lambda text: at in text and len(text) > 0)
        stream.hang_up()
        return self.settled(cid, stream)

    def approval(self, stream: SSEStream) -> dict[str, Any]:
        """Read the stream until a tool call awaits approval; its `parley.approval` event."""
        while True:
            event = stream.next_event()
            assert isinstance(event, dict), f"the stream ended first: {stream.events}"
            found: dict[str, Any] | None = event.get("parley", {}).get("approval")
            if found is not None:
                return found

    def decide(self, cid: str, call_id: str, decision: str) -> None:
        path = f"/api/conversations/{cid}/tool-calls/{call_id}"
        reply = self.parley.call("POST", path, json_body={"decision": decision})
        assert reply.status == 200, reply.body

    # -- the chats -------------------------------------------------------------------------

    def empty(self) -> str:
        """A new chat, nothing sent yet."""
        return self.parley.new_conversation(title="Nothing yet")

    def settings(self) -> str:
        """A chat's own settings: title, model, system prompt, sampling, switches."""
        cid = self.parley.new_conversation(system="Answer in French. 🇫🇷", model="scripted")
        fields = {
            "title": "Réglages — “quoted” ✓",
            "params": {"temperature": 0.25, "top_p": 0.5, "max_tokens": 300, "seed": -7},
            "tools": False,
            "documents": True,
        }
        patched = self.parley.call("PATCH", f"/api/conversations/{cid}", json_body=fields)
        assert patched.status == 200, patched.body
        self.reply(cid, Script(texts=["Bonjour ", "👋"]), content="Salut\n\ttab")
        return cid

    def branches(self) -> str:
        """Counted and estimated usage, a regenerated reply, an edited question, a reply cut
        at its length limit and continued, and the first branch selected again."""
        cid = self.parley.new_conversation()
        first = self.reply(cid, Script(texts=["Basalt ", "is volcanic."]), content="Basalt?")
        self.upstream.queue = [Script(texts=["Uncounted ", "reply."], usage=False)]
        self.turn(cid, "regenerate", first["id"]).read_all()
        self.upstream.queue = [Script(tokens=6, finish_reason="length")]
        edit = self.turn(cid, "edit", first["parent_id"], content="Granite?")
        edit.read_all()
        cut = self.settled(cid, edit)
        assert cut["finish_reason"] == "length", cut
        self.upstream.queue = [Script(texts=[" and the rest."])]
        self.turn(cid, "continue", cut["id"]).read_all()
        self.parley.call(
            "POST", f"/api/conversations/{cid}/select", json_body={"message_id": first["id"]}
        )
        return cid

    def endings(self) -> str:
        """Stopped (then continued), stopped again, three errors (a refusal, a dropped
        connection mid-reply and an error event), and a reply cut at its length limit."""
        cid = self.parley.new_conversation()
        self.upstream.queue = [Script(tokens=400, stall_after=3)]
        stopped = self.stopped(cid, self.turn(cid, content="Go on and on"), at="t2 ")
        assert stopped["status"] == "interrupted", stopped
        self.upstream.queue = [Script(texts=[" carried on."])]
        self.turn(cid, "continue", stopped["id"]).read_all()
        self.upstream.queue = [Script(tokens=400, stall_after=3)]
        again = self.stopped(cid, self.turn(cid, content="Again"), at="t1 ")
        assert again["ended_by"] == "client_hangup", again
        self.reply(cid, Script(status=500, error_message="upstream says no"), content="One")
        self.reply(cid, Script(tokens=5, fail_after=2), content="Two")
        failed = self.reply(
            cid, Script(tokens=5, fail_after=1, fail_mode="error_event"), content="Three"
        )
        assert failed["status"] == "error", failed
        # Cut at the length limit and left so (the local model's reply below may or may not
        # reach its limit: its sampling is not fixed).
        cut = self.reply(cid, Script(tokens=6, finish_reason="length"), content="Four")
        assert cut["finish_reason"] == "length", cut
        return cid

    def tools(self) -> str:
        """Tool steps: allowed (run), denied, and stopped while awaiting approval."""
        cid = self.parley.new_conversation()
        self.upstream.queue = [
            Script(texts=["Let me. "], tool_calls=[ECHO]),
            Script(texts=["Done."]),
        ]
        stream = self.turn(cid, content="Echo this")
        self.decide(cid, self.approval(stream)["call_id"], "allow")
        stream.read_all()
        self.upstream.queue = [Script(tool_calls=[ECHO]), Script(texts=["As you wish."])]
        stream = self.turn(cid, content="Try again")
        self.decide(cid, self.approval(stream)["call_id"], "deny")
        stream.read_all()
        self.upstream.queue = [Script(texts=["Once more. "], tool_calls=[ECHO])]
        stream = self.turn(cid, content="And again")
        self.approval(stream)
        stream.hang_up()
        self.settled(cid, stream)
        messages = self.parley.conversation(cid)["messages"]
        steps = [p["status"] for m in messages for p in m["parts"] if p["type"] == "tool"]
        assert steps == ["completed", "denied", "interrupted"], steps
        return cid

    def citations(self) -> str:
        """A reply that searched the user's documents and cites a passage, and one stopped
        after citing two."""
        cid = self.parley.new_conversation(documents=True)
        search = Script(tokens=0, tool_calls=[SEARCH])
        cited = self.reply(cid, search, Script(texts=["Aardvarks dig ", "[1]", "."]))
        assert any(p["type"] == "citation" for p in cited["parts"]), cited
        self.upstream.queue = [
            search,
            Script(texts=["As [2] says, ", "and [1] too, ", "more"], stall_after=2),
        ]
        stream = self.turn(cid, content="Tell me more")
        self.stopped(cid, stream, at="[1] too")
        return cid

    def local(self) -> str:
        """Replies of the bundled local model: one to its end, one stopped."""
        cid = self.parley.new_conversation(model=BUNDLED_MODEL_NAME)
        stream = self.turn(cid, content="Say hi.", max_tokens=8)
        stream.read_all()
        assert self.settled(cid, stream)["status"] == "completed"
        self.stopped(cid, self.turn(cid, content=STORY), at=" ")
        return cid

    def chatgpt(self, export: list[dict[str, Any]]) -> str:
        """A chat imported from ChatGPT's export."""
        raw = json.dumps(export).encode()
        reply = request(
            self.parley.port,
            "POST",
            "/api/import",
            token=self.parley.token,
            body=raw,
            headers={"Content-Type": "application/json"},
        )
        assert reply.status == 201, reply.body
        (cid,) = reply.json()["conversations"]
        conversation_id: str = cid
        return conversation_id
