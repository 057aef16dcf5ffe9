"""The Markdown export shows where compaction's summary ends (issue 42): every message is
there, and after the last one a summary covers, what the model was given in their place."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.server.agent.test_compaction import CONTEXT, LONG, fill
from tests.support.parley import Parley
from tests.support.upstream import Script, ScriptedUpstream


@pytest.fixture
def chat(data_dir: Path, upstream: ScriptedUpstream) -> Iterator[Parley]:
    server = Parley(data_dir, upstream.base_url, context=CONTEXT).start()
    yield server
    server.stop()


def test_the_markdown_export_marks_where_a_summary_ends_and_says_what_it_is(
    chat: Parley, upstream: ScriptedUpstream
) -> None:
    cid = chat.new_conversation()
    fill(chat, upstream, cid, 2)
    upstream.queue = [Script(texts=["The user asked\nabout lorem ipsum."]), Script(texts=["ok"])]
    chat.send(cid, f"more {LONG}").read_all()
    conversation = chat.conversation(cid)
    (summary,) = conversation["summaries"]
    through = [m["id"] for m in conversation["messages"]].index(summary["through_id"])

    reply = chat.call("GET", f"/api/conversations/{cid}/export?format=md")
    assert reply.status == 200, reply.body
    text = reply.body.decode()
    assert text.count("\n## You") == text.count("\n## Assistant") == 3  # every message
    sections = text.split("\n## ")
    marked = [i for i, section in enumerate(sections) if "Earlier messages summarised" in section]
    assert marked == [through + 1]  # in the section of the message it ends at
    _, marker = sections[through + 1].split("\n> **Earlier messages summarised here**")
    assert marker.startswith(f" (by {conversation['model'] or 'scripted'}; the model was given")
    assert "\n> The user asked\n> about lorem ipsum.\n" in marker
