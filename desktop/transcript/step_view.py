"""What a tool step's card shows: the call in short (`server · tool(arguments)`, or the
sub-agent's task), how it went in words, a long call's progress, the questions its server
asked the user, a sub-agent's own steps and the start of its last words; its arguments and
result on demand. Read from the step's part once, as plain values QML binds to. The words are
the step lines' (desktop/transcript/step_lines.py, sub_agent_lines.py): one way of saying a
step, wherever it is said."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field

from desktop.client.events import with_inner_steps
from desktop.tools.sign_in import needs_sign_in
from desktop.transcript.step_lines import (
    allowed_words,
    asking,
    guard_words,
    link_line,
    question_lines,
    short_arguments,
    step_state,
)
from desktop.transcript.sub_agent_lines import TASK_CHARS, excerpt, is_sub_agent, one_line, task_of
from server.types import MAX_AGENT_DEPTH, ToolPartJSON

RESULT_CHARS = 4_000  # shown in the card; the whole result stays in the chat's data
STATUS_WORDS = {
    "running": "running",
    "awaiting_approval": "waiting for you",
    "completed": "done",
    "error": "error",
    "interrupted": "stopped",
    "denied": "denied",
}


@dataclass(frozen=True)
class StepView:
    id: str
    title: str  # "files · read_file(path="a.md")", or "Sub-agent: <its task>"
    status: str  # the part's status, or "needs_sign_in" for one its server's sign-in ended
    status_text: str  # in a word or two, for the chip
    state: str  # how it went: "done in 0.4 s", "running… 3 s · page 2 of 5"
    arguments: str  # pretty JSON when it is JSON
    result: str
    progress: float  # 0..1, or -1 when the tool reports none (or no total)
    progress_text: str
    agent: str  # the sub-agent's model, when the step ran one
    # Lines under its title, one each: its server's questions to the user and how they went,
    # a sub-agent's steps (their questions under them).
    inner: list[str] = field(default_factory=list)
    said: str = ""  # the start of a sub-agent's last words
    # The resources its result linked to (a sub-agent's steps' too), each opened through the
    # step that gave it: {step, uri, label (its words on the card)}.
    links: list[dict[str, str]] = field(default_factory=list)
    # Why the injection guard asked before the call, and who let it run under which scope:
    # saved with the step, so a chat opened later says them too ("" for none).
    reason: str = ""
    allowed: str = ""

    @property
    def text(self) -> str:
        """The step as text (what Find and the chat's text read): its line, a sub-agent's
        steps, the resources it linked to and the start of its last words."""
        lines = [f"{self.title} — {self.state}", *self.inner]
        lines += [words for words in (self.reason, self.allowed) if words]
        lines += [f"Linked: {link['label']}" for link in self.links]
        return "\n".join([*lines, f"“{self.said}”"] if self.said else lines)


def step_view(part: ToolPartJSON, now: float | None = None) -> StepView:
    now = time.time() if now is None else now
    agent = part.get("agent")
    progress = part.get("progress")
    fraction = -1.0
    if progress is not None and progress["total"]:
        fraction = max(0.0, min(1.0, progress["progress"] / progress["total"]))
    sub_agent = is_sub_agent(part)
    return StepView(
        id=part["id"],
        title=f"Sub-agent: {one_line(task_of(part), TASK_CHARS)}" if sub_agent else call(part),
        # A step ended by its server's sign-in waits on the user, not an error of the tool.
        status="needs_sign_in" if needs_sign_in(part) else part["status"],
        status_text=status_text(part),
        state=step_state(part, now),
        arguments=_pretty(part["arguments"]),
        result=(part["result"] or "")[:RESULT_CHARS],
        progress=fraction,
        progress_text=(progress["message"] or "") if progress is not None else "",
        agent=agent["model"] if agent is not None else "",
        inner=question_lines(part) + (inner_lines(part, now) if sub_agent else []),
        said=excerpt(part) if sub_agent else "",
        links=[
            {"step": step["id"], "uri": link["uri"], "label": link_line(link)}
            for step in with_inner_steps(part)
            for link in step.get("links", [])
        ],
        reason=guard_words(part),
        allowed=allowed_words(part),
    )


def status_text(part: ToolPartJSON) -> str:
    """The chip's words: a step whose server asks the user waits for them."""
    if needs_sign_in(part):
        return "needs sign-in"
    return "waiting for you" if asking(part) else STATUS_WORDS.get(part["status"], part["status"])


def call(part: ToolPartJSON) -> str:
    server = f"{part['server']} · " if part["server"] else ""
    return f"{server}{part['name']}({short_arguments(part['arguments'])})"


def inner_lines(part: ToolPartJSON, now: float, depth: int = 1) -> list[str]:
    """A sub-agent's own steps, each on a line (theirs indented below it)."""
    agent = part.get("agent")
    lines: list[str] = []
    for inner in agent["parts"] if agent is not None and depth < MAX_AGENT_DEPTH else []:
        if inner["type"] != "tool":
            continue
        title = f"Sub-agent: {one_line(task_of(inner), TASK_CHARS)}"
        lines.append(f"{title if is_sub_agent(inner) else call(inner)} — {step_state(inner, now)}")
        lines.extend("  " + line for line in question_lines(inner))
        if is_sub_agent(inner):
            lines.extend("  " + line for line in inner_lines(inner, now, depth + 1))
    return lines


def _pretty(arguments: str) -> str:
    try:
        return json.dumps(json.loads(arguments), indent=2, ensure_ascii=False)
    except ValueError:
        return arguments
