"""What the cards that ask about a tool call say: the tool and its server, and who calls it —
the model, or a sub-agent named by its task cut short; nothing of the call read as markup."""

from __future__ import annotations

from desktop.replies.call_questions import TASK_CHARS, approval_question, overdue_question
from server.types.chunks import ApprovalJSON, OverdueJSON

TASK = "Read the <b>logs</b>\nand   summarise " + "every error " * 20


def approval(**extra: object) -> ApprovalJSON:
    call: ApprovalJSON = {"call_id": "c1", "server": "fs", "tool": "write", "function": "fs__write",
                          "arguments": "{}"}  # fmt: skip
    return {**call, **extra}  # type: ignore[typeddict-item]


def overdue(**extra: object) -> OverdueJSON:
    call: OverdueJSON = {"call_id": "c1", "server": "fs", "tool": "slow", "function": "fs__slow",
                         "waited_s": 61.0}  # fmt: skip
    return {**call, **extra}  # type: ignore[typeddict-item]


def test_the_models_own_call_is_the_models() -> None:
    assert approval_question(approval()) == (
        "The model wants to run <b>write</b> from the MCP server <b>fs</b>. Run it?"
    )
    assert overdue_question(overdue(), "1 min 1 s") == (
        "<b>slow</b> (MCP server <b>fs</b>) has been running for 1 min 1 s — keep waiting, "
        "or stop this call?"
    )


def test_a_sub_agents_call_names_it_by_its_task_cut_short_on_one_line() -> None:
    asking = {"call_id": "d1", "task": TASK}
    named = "sub-agent working on “Read the &lt;b&gt;logs&lt;/b&gt; and summarise every error"
    question = approval_question(approval(sub_agent=asking))
    assert question.startswith(f"The {named}")
    assert question.endswith("…” wants to run <b>write</b> from the MCP server <b>fs</b>. Run it?")
    task_shown = question[question.index("“") + 1 : question.index("”")]
    assert TASK_CHARS - 2 <= len(task_shown.replace("&lt;", "<").replace("&gt;", ">")) <= TASK_CHARS
    question = overdue_question(overdue(sub_agent=asking), "2 s")
    assert question.startswith(f"<b>slow</b> (MCP server <b>fs</b>), called by the {named}")
    assert question.endswith("…”, has been running for 2 s — keep waiting, or stop this call?")
