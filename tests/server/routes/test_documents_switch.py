"""What a chat's turn is offered of the user's documents: its "Use my documents" switch governs
both the passages put in the prompt and the `search_documents` tool (off: neither), the
context meter counts what the turn would be offered, and the OpenAI-compatible API offers
no built-in tool whatever the library holds."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import openai
import pytest

from tests.server.library.test_library import add, indexed
from tests.support.documents import topic_folder
from tests.support.parley import MODEL, Parley
from tests.support.upstream import Script, ScriptedUpstream

pytestmark = pytest.mark.slow

PASSAGES = "user's own documents"  # the start of the prompt's passages (server/library/tool.py)


@pytest.fixture
def library(parley: Parley, tmp_path: Path) -> None:
    files = topic_folder(tmp_path / "docs")
    add(parley, tmp_path / "docs")
    indexed(parley, files=len(files))


def offered(body: dict[str, Any]) -> set[str]:
    return {tool["function"]["name"] for tool in body.get("tools", [])}


def has_passages(body: dict[str, Any]) -> bool:
    return any(PASSAGES in m["content"] for m in body["messages"] if m["role"] == "system")


def switch(parley: Parley, cid: str, documents: bool) -> None:
    reply = parley.call("PATCH", f"/api/conversations/{cid}", json_body={"documents": documents})
    assert reply.status == 200, reply.body


def test_documents_off_offers_neither_the_search_nor_the_passages(
    parley: Parley, upstream: ScriptedUpstream, library: None
) -> None:
    cid = parley.new_conversation(tools=True, documents=False)
    parley.send(cid, "aardvark burrows?").read_all()
    sent = upstream.records[-1].body
    assert "search_documents" not in offered(sent)
    assert not has_passages(sent)


def test_documents_on_offers_the_search_and_the_passages(
    parley: Parley, upstream: ScriptedUpstream, library: None
) -> None:
    cid = parley.new_conversation(tools=True, documents=True)
    parley.send(cid, "aardvark burrows?").read_all()
    sent = upstream.records[-1].body
    assert "search_documents" in offered(sent)
    assert has_passages(sent)
    # Turned off in the chat, the next turn is offered neither.
    switch(parley, cid, documents=False)
    parley.send(cid, "glaciers and fjords?").read_all()
    later = upstream.records[-1].body
    assert "search_documents" not in offered(later)
    assert not has_passages(later)


def test_tools_off_keeps_the_passages_and_offers_no_tool(
    parley: Parley, upstream: ScriptedUpstream, library: None
) -> None:
    cid = parley.new_conversation(tools=False, documents=True)
    parley.send(cid, "aardvark burrows?").read_all()
    sent = upstream.records[-1].body
    assert "tools" not in sent
    assert has_passages(sent)


def test_the_context_meter_counts_the_search_only_with_documents_on(
    parley: Parley, library: None
) -> None:
    cid = parley.new_conversation(tools=True, documents=False)

    def meter() -> dict[str, Any]:
        reply = parley.call("GET", f"/api/conversations/{cid}/context")
        assert reply.status == 200, reply.body
        found: dict[str, Any] = reply.json()
        return found

    assert meter()["tools"] == 0  # no MCP server here: nothing else is offered
    switch(parley, cid, documents=True)
    assert meter()["tools"] > 0


def test_the_openai_api_offers_no_built_in_tool(
    parley: Parley, upstream: ScriptedUpstream, library: None
) -> None:
    api = openai.OpenAI(
        base_url=f"http://127.0.0.1:{parley.port}/v1", api_key=parley.token, max_retries=0
    )
    upstream.script = Script(texts=["ok"])
    asked = [{"role": "user", "content": "aardvark burrows?"}]
    api.chat.completions.create(model=MODEL, messages=asked)  # type: ignore[arg-type]
    sent = upstream.records[-1].body
    assert "tools" not in sent
    assert not has_passages(sent)
