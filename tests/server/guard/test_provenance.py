"""A turn's provenance: what its model read that the user did not write, described in words
for the approval card, and what the guard makes of it."""

from __future__ import annotations

import json

from server.agent import provenance
from server.agent.effects import READS_HERE, UNKNOWN, Effect
from server.agent.guard import concern
from server.agent.provenance import Provenance, call_words, earlier_results, tool_result
from server.limits import Limits
from server.types import ChatMessage, ToolPartJSON


def step(call_id: str, result: str, status: str = "completed") -> ToolPartJSON:
    return {
        "type": "tool", "id": call_id, "server": "web", "name": "fetch",
        "arguments": json.dumps({"url": "https://example.com/" + "x" * 80}),
        "status": status, "result": result, "started_at": 0.0, "ended_at": 1.0,
    }  # type: ignore[typeddict-item]  # fmt: skip


def test_a_call_is_described_with_its_arguments_cut_short() -> None:
    words = call_words("fetch", json.dumps({"url": "https://example.com/" + "x" * 80}))
    assert words.startswith('fetch(url="https://example.com/') and words.endswith("…)")
    assert len(words) < 60
    assert call_words("f", "not json") == "f(…)"
    assert call_words("f", json.dumps(dict.fromkeys("abcd", 1))) == "f(a=1, b=1, c=1, …)"


def test_earlier_turns_results_in_the_history_count_and_denied_calls_do_not() -> None:
    message: ChatMessage = {
        "role": "assistant",
        "content": "",
        "parts": [step("c1", "page text"), step("c2", "Denied by the user", "denied")],
    }
    found = earlier_results(message["parts"])
    assert [s["call_id"] for s in found] == ["c1"]
    assert found[0]["label"].startswith("the result of fetch(url=")


def test_nothing_untrusted_read_and_harmless_tools_are_never_held() -> None:
    clean = Provenance()
    assert concern(UNKNOWN, True, clean, "rm", allowed=True) is None
    read = Provenance([tool_result("web", "fetch", "c1", "{}", "do it")])
    assert concern(READS_HERE, True, read, "look", allowed=True) is None
    assert concern(UNKNOWN, False, read, "rm", allowed=True) is None  # its server's switch off
    held = concern(Effect(True, False, True), True, read, "send", allowed=True)
    assert held is not None
    assert "the result of fetch() of web" in held["reason"]
    assert "reach beyond this computer" in held["reason"]
    assert held["sources"][0]["excerpt"] == "do it"


def test_a_sub_agent_starts_with_what_its_parent_read_and_gives_back_only_its_own() -> None:
    parent = Provenance([tool_result("web", "fetch", "c1", "{}", "a")])
    child = Provenance(parent.all())
    assert child.untrusted and child.own() == []
    child.add(tool_result("notes", "read", "c2", "{}", "b"))
    assert [s["call_id"] for s in child.own()] == ["c2"]
    answer = provenance.sub_agent("c3", "Read it", "It says b", child.own())
    assert answer["kind"] == "sub_agent" and "after it read the result of read()" in answer["label"]


def test_a_turn_that_reads_a_great_deal_keeps_its_first_sources_and_its_latest() -> None:
    found = Provenance()
    for n in range(Limits.max_turn_sources * 2):
        found.add(tool_result("s", "t", f"c{n}", "{}", str(n)))
    kept = [s["call_id"] for s in found.all()]
    assert len(kept) == Limits.max_turn_sources
    assert kept[0] == "c0" and kept[-1] == f"c{Limits.max_turn_sources * 2 - 1}"
    assert found.latest(1)[0]["call_id"] == kept[-1]
