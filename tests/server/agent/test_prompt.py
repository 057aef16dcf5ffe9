"""What a model call is given, built in one place (server/agent/prompt.py)."""

from __future__ import annotations

from server.agent import delegate, prompt
from server.agent.untrusted import AGENT_NOTE
from server.memory import tool as memory_tool
from server.types import ChatMessage

QUESTION: ChatMessage = {"role": "user", "content": "hi"}


def spec(name: str) -> dict[str, object]:
    return {"type": "function", "function": {"name": name, "parameters": {}}}


def test_memory_joins_the_system_message_or_makes_one() -> None:
    system: ChatMessage = {"role": "system", "content": "Be brief."}
    kept, sent, ids = prompt.stored("Be brief.", [system, QUESTION], ["", "m1"], "MEM", None)
    assert kept == "Be brief.\n\nMEM"
    assert sent == [{"role": "system", "content": "Be brief.\n\nMEM"}, QUESTION]
    assert ids == ["", "m1"]
    assert prompt.stored(None, [QUESTION], ["m1"], "MEM", None) == (
        "MEM",
        [{"role": "system", "content": "MEM"}, QUESTION],
        ["", "m1"],
    )
    assert prompt.stored(None, [QUESTION], ["m1"], None, None) == (None, [QUESTION], ["m1"])


def test_the_summary_comes_after_the_memory_and_is_not_kept_first() -> None:
    kept, sent, ids = prompt.stored(None, [QUESTION], ["m1"], "MEM", "They met.")
    assert kept == "MEM"
    assert sent[0]["content"] == f"MEM\n\n{prompt.SUMMARY_HEADING}\nThey met."
    assert ids == ["", "m1"]


def test_passages_follow_the_system_message() -> None:
    sent, ids = prompt.with_documents(
        [{"role": "system", "content": "S"}, QUESTION], ["", "m1"], "P"
    )
    assert [m["content"] for m in sent] == ["S", "P", "hi"] and ids == ["", "", "m1"]
    sent, ids = prompt.with_documents([QUESTION], ["m1"], "P")
    assert [m["content"] for m in sent] == ["P", "hi"] and ids == ["", "m1"]


def test_the_agent_note_and_the_servers_instructions_go_into_the_system_message() -> None:
    tools = [spec("read")]
    sent = prompt.given(
        [{"role": "system", "content": "S"}, QUESTION], tools, "Use X.", context=None
    )
    assert sent[0]["content"] == f"S\n\n{AGENT_NOTE}\n\nUse X."
    assert prompt.given([QUESTION], tools, "", context=None)[0]["content"] == AGENT_NOTE
    assert prompt.given([QUESTION], [], "Use X.", context=None) == [QUESTION]
    # A chat with nothing in it yet (as the meter reads it): the note alone.
    assert prompt.given([], tools, "", context=None) == [{"role": "system", "content": AGENT_NOTE}]


def test_delegate_is_offered_only_beside_tools_a_sub_agent_could_use() -> None:
    remember = spec(memory_tool.FUNCTION)
    assert memory_tool.FUNCTION in delegate.OWN_TOOLS
    assert prompt.offered([remember], delegation=True) == [remember]
    offered = prompt.offered([remember, spec("read")], delegation=True)
    names = [t["function"]["name"] for t in offered]  # type: ignore[index]
    assert names == ["remember", "read", "delegate"]
    enum = offered[-1]["function"]["parameters"]["properties"]["tools"]["items"]["enum"]  # type: ignore[index]
    assert enum == ["read"]  # a sub-agent is not given `remember`
    assert prompt.offered([spec("read")], delegation=False) == [spec("read")]
