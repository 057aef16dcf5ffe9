"""The memory is part of the system prompt: a turn that compacts its chat first, and the turns
after it, still give it to the model, with the summary after it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from server.agent.prompt import SUMMARY_HEADING
from server.memory.prompt import CLOSE, OPEN
from tests.server.agent.test_compaction import CONTEXT, LONG, fill, summarising
from tests.support.parley import Parley
from tests.support.upstream import Script, ScriptedUpstream

FACT = "The user keeps bees."


@pytest.fixture
def chat(data_dir: Path, upstream: ScriptedUpstream) -> Iterator[Parley]:
    server = Parley(data_dir, upstream.base_url, context=CONTEXT).start()
    yield server
    server.stop()


def test_a_compacted_chat_still_gives_the_memory_first(
    chat: Parley, upstream: ScriptedUpstream, data_dir: Path
) -> None:
    path = data_dir / "memory" / "global.md"
    path.parent.mkdir(parents=True)
    path.write_text(f"- {FACT}\n")
    cid = chat.new_conversation(system="Be brief.", tools=False)
    fill(chat, upstream, cid, 3)
    upstream.queue = [Script(texts=["They asked long questions."]), Script(texts=["ok"])]
    chat.send(cid, f"One more. {LONG}").read_all()
    asked, answered = upstream.records[-2], upstream.records[-1]
    assert summarising(asked)  # the chat was compacted in this turn
    system = answered.body["messages"][0]["content"]
    assert system.startswith("Be brief.\n\n")
    assert system.index(f"{OPEN}\n- {FACT}\n{CLOSE}") < system.index(SUMMARY_HEADING)
    assert chat.conversation(cid)["summaries"]

    upstream.queue = [Script(texts=["ok"])]
    chat.send(cid, "thanks").read_all()
    system = upstream.records[-1].body["messages"][0]["content"]
    assert not summarising(upstream.records[-1])
    assert system.index(f"{OPEN}\n- {FACT}\n{CLOSE}") < system.index(SUMMARY_HEADING)
