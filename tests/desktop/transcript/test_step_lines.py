"""The words of a tool step's lines and of a stopped reply's receipt (issue 41): a running
call's progress and time, a sub-agent's line (its model when not the reply's), what a stop
ended and which calls may have acted."""

from __future__ import annotations

from desktop.client.events import ReplyEnd
from desktop.transcript.badges import acted_text, badge_for, ended_text
from desktop.transcript.step_lines import step_state
from desktop.transcript.sub_agent_lines import EXCERPT_CHARS, excerpt, tool_step_html
from server.types import EndedJSON, ToolPartJSON


def step(**changes: object) -> ToolPartJSON:
    part: ToolPartJSON = {
        "type": "tool", "id": "s1", "server": "t", "name": "slow", "arguments": '{"n": 1}',
        "status": "running", "result": None, "started_at": 100.0, "ended_at": None,
    }  # fmt: skip
    part.update(changes)  # type: ignore[typeddict-item]
    return part


def test_a_running_step_says_its_progress_and_for_how_long_it_has_run() -> None:
    assert step_state(step(), now=112.4) == "running… 12 s"
    assert step_state(step(), now=225.0) == "running… 2 min 5 s"
    known = step(progress={"progress": 2, "total": 3, "message": "step 2 of 3"})
    assert step_state(known, now=101) == "running… 1 s · step 2 of 3 · 67%"
    unknown = step(progress={"progress": 7, "total": None, "message": None})
    assert step_state(unknown, now=101) == "running… 1 s"
    assert step_state(step(overdue=125.0), now=230) == "waiting for you · running 2 min 10 s"
    stopped = step(status="error", result="Stopped by the user after 2 min 5 s: took long.")
    assert step_state(stopped) == "stopped by you after 2 min 5 s"


def sub_agent(model: str, parts: list[object]) -> ToolPartJSON:
    return step(
        server="parley", name="delegate", arguments='{"task": "look"}',
        agent={"task": "look it up", "instructions": None, "model": model, "parts": parts},
    )  # fmt: skip


def test_a_sub_agents_line_names_its_model_only_when_it_is_not_the_replys() -> None:
    html = tool_step_html(sub_agent("big", []), "grey", "red", "orange", model="small", now=101)
    assert "Sub-agent:</span> <b>look it up</b>" in html and "· big" in html
    same = tool_step_html(sub_agent("small", []), "grey", "red", "orange", model="small")
    assert "· small" not in same


def test_a_sub_agents_steps_are_indented_beneath_it_with_an_excerpt_of_its_words() -> None:
    words = "word " * 100
    agent = sub_agent("m", [{"type": "text", "text": "first. "}, step(id="s2"),
                            {"type": "text", "text": words}])  # fmt: skip
    html = tool_step_html(agent, "grey", "red", "orange", model="m", now=101)
    assert html.count("margin-left:22px;") == 2  # its step, and its words
    said = excerpt(agent)
    assert len(said) == EXCERPT_CHARS and said.startswith("word word") and said.endswith("…")
    # Before the sub-agent began, its task is read from the call's arguments.
    waiting = step(server="parley", name="delegate", arguments='{"task": "plan it"}')
    assert "<b>plan it</b>" in tool_step_html(waiting, "grey", "red", "orange")


ENDED: EndedJSON = {
    "model_calls": 1, "tool_calls": 2, "sub_agents": 2, "approvals": 0,
    "may_have_acted": [{"server": "t", "name": "slow", "arguments": '{"seconds": 30}'}],
}  # fmt: skip


def test_a_stopped_replys_receipt_says_what_the_stop_ended() -> None:
    assert ended_text(ENDED) == "ended 1 model call, 2 tool calls, 2 sub-agents"
    assert acted_text(ENDED) == "May have acted: slow(seconds=30) on t"
    stopped = ReplyEnd(status="interrupted", ended_by="client_hangup", ended=ENDED)
    assert badge_for(stopped) == "Stopped · ended 1 model call, 2 tool calls, 2 sub-agents"
    nothing: EndedJSON = {**ENDED, "model_calls": 0, "tool_calls": 0, "sub_agents": 0,
                          "may_have_acted": []}  # fmt: skip
    quiet = ReplyEnd(status="interrupted", ended_by="client_hangup", ended=nothing)
    assert badge_for(quiet) == "Stopped" and acted_text(nothing) == ""
