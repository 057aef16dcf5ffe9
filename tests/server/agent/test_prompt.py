"""What a model call is given, built in one place (server/agent/prompt.py)."""

from __future__ import annotations

from server.agent import branch, delegate, prompt
from server.agent.untrusted import AGENT_NOTE
from server.memory import tool as memory_tool
from server.storage.branches import StoredBranch, StoredMessage
from server.types import ChatMessage, SummaryJSON

QUESTION: ChatMessage = {"role": "user", "content": "hi"}


def spec(name: str) -> dict[str, object]:
    return {"type": "function", "function": {"name": name, "parameters": {}}}


def test_memory_joins_the_system_message_or_makes_one() -> None:
    asked = [StoredMessage("m1", "user", "hi")]
    given = branch.of_branch(StoredBranch("Be brief.", asked), "MEM")
    assert given.kept == "Be brief.\n\nMEM"
    assert given.messages == [{"role": "system", "content": "Be brief.\n\nMEM"}, QUESTION]
    assert given.ids == ["", "m1"]
    given = branch.of_branch(StoredBranch(None, asked), "MEM")
    assert (given.kept, given.messages, given.ids) == (
        "MEM",
        [{"role": "system", "content": "MEM"}, QUESTION],
        ["", "m1"],
    )
    given = branch.of_branch(StoredBranch(None, asked), None)
    assert (given.kept, given.messages, given.ids) == (None, [QUESTION], ["m1"])


def test_the_summary_comes_after_the_memory_and_is_not_kept_first() -> None:
    summary: SummaryJSON = {
        "id": "s1", "through_id": "m0", "content": "They met.", "model": None,
        "created_at": 0.0, "updated_at": 0.0,
    }  # fmt: skip
    said = [StoredMessage("m0", "assistant", "Hello."), StoredMessage("m1", "user", "hi")]
    given = branch.of_branch(StoredBranch(None, said, summary, 1), "MEM")
    assert given.kept == "MEM"
    assert given.messages[0]["content"] == f"MEM\n\n{prompt.SUMMARY_HEADING}\nThey met."
    assert given.messages[1:] == [QUESTION] and given.ids == ["", "m1"]


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
