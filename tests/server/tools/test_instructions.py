"""A tool server's `instructions` are given to the model with its tools (in the system
message, after the note on untrusted data), cut at a bound with a note, and counted by the
context meter as part of the tools.

A real MCP server written with the official SDK over stdio (tests/support/mcp_resources.py),
the scripted upstream playing the model.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from server.limits import ToolLimits
from server.models.context import estimate_tokens
from tests.support.parley import Parley
from tests.support.resources import INSTRUCTIONS_MARK, resources_server, start
from tests.support.upstream import Script, ScriptedUpstream

pytestmark = pytest.mark.slow


def system_sent(parley: Parley, upstream: ScriptedUpstream, **conversation: object) -> str:
    upstream.queue = [Script(texts=["ok"])]
    cid = parley.new_conversation(**conversation)
    parley.send(cid, "hello").read_all()
    first = upstream.records[-1].body["messages"][0]
    assert first["role"] == "system", first
    return str(first["content"])


def test_a_servers_instructions_are_given_to_the_model_with_its_tools(
    data_dir: Path, upstream: ScriptedUpstream, tmp_path: Path
) -> None:
    parley = start(data_dir, upstream, {"r": resources_server(tmp_path / "log")})
    try:
        system = system_sent(parley, upstream, tools=True)
        assert "Instructions from the tool server r (its tools are named r__…):" in system
        assert INSTRUCTIONS_MARK in system
        # Without its tools, nothing of it.
        assert INSTRUCTIONS_MARK not in json.dumps(upstream_sent_without_tools(parley, upstream))
    finally:
        parley.stop()


def upstream_sent_without_tools(parley: Parley, upstream: ScriptedUpstream) -> object:
    upstream.queue = [Script(texts=["ok"])]
    cid = parley.new_conversation(tools=False)
    parley.send(cid, "hello").read_all()
    return upstream.records[-1].body["messages"]


def test_long_instructions_are_cut_with_a_note(
    data_dir: Path, upstream: ScriptedUpstream, tmp_path: Path
) -> None:
    entry = resources_server(tmp_path / "log", "--instructions-chars", "10000")
    parley = start(data_dir, upstream, {"r": entry})
    try:
        system = system_sent(parley, upstream, tools=True)
        most = ToolLimits().instructions_chars
        given = system[system.index(INSTRUCTIONS_MARK) :]
        kept, note = given.split("\n… ", 1)
        assert len(kept) == most
        assert note == f"[Parley cut these instructions here: {10_000 - most:,} more characters]"
    finally:
        parley.stop()


def test_the_context_meter_counts_the_instructions_with_the_tools(
    data_dir: Path, upstream: ScriptedUpstream, tmp_path: Path
) -> None:
    entry = resources_server(tmp_path / "log", "--instructions-chars", "3000")
    parley = start(data_dir, upstream, {"r": entry})
    try:
        cid = parley.new_conversation(tools=True)
        meter = parley.call("GET", f"/api/conversations/{cid}/context").json()
        (server,) = parley.call("GET", "/api/tools").json()["servers"]
        definitions = server["definition_tokens"]
        instructions = estimate_tokens("x" * 3000)
        assert meter["tools"] >= definitions + instructions, (meter, definitions)
        assert meter["used"] >= meter["tools"]
    finally:
        parley.stop()
