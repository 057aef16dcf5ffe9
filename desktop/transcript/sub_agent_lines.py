"""A sub-agent's step in the transcript: a "Sub-agent: <task>" line (its model when
it is not the reply's), its own steps as step lines indented beneath, and a short excerpt of
what it said; in the details window, all of it (its task, instructions, steps and whole
text). Any other tool step is a step line (step_lines.py): `tool_step_html` and
`tool_step_details` draw either."""

from __future__ import annotations

import html
import json
import time

from desktop.transcript.step_lines import (
    details_link,
    line_start,
    readable_arguments,
    state_colour,
    step_details,
    step_line,
    step_state,
)
from server.types import MAX_AGENT_DEPTH, ToolPartJSON

DELEGATE = ("parley", "delegate")  # the built-in tool that runs a sub-agent
TASK_CHARS = 80  # of its task, on its line
EXCERPT_CHARS = 160  # of what it said, under its steps


def is_sub_agent(step: ToolPartJSON) -> bool:
    """The step ran a sub-agent (or is about to: its `agent` may not have come yet)."""
    return "agent" in step or (step["server"], step["name"]) == DELEGATE


def task_of(step: ToolPartJSON) -> str:
    """What the sub-agent was asked to do (from the call's arguments, before it began)."""
    agent = step.get("agent")
    if agent is not None:
        return agent["task"]
    try:
        arguments = json.loads(step["arguments"])
    except ValueError:
        return ""
    task = arguments.get("task") if isinstance(arguments, dict) else None
    return task if isinstance(task, str) else ""


def said(step: ToolPartJSON) -> str:
    """All the sub-agent's text, in order."""
    agent = step.get("agent")
    parts = agent["parts"] if agent is not None else []
    return "".join(part["text"] for part in parts if part["type"] == "text")


def excerpt(step: ToolPartJSON) -> str:
    """The start of the last thing it said, on one line, cut short ("" if nothing yet)."""
    agent = step.get("agent")
    texts = [p["text"] for p in agent["parts"] if p["type"] == "text"] if agent else []
    last = " ".join(" ".join(texts[-1:]).split())
    return last if len(last) <= EXCERPT_CHARS else last[: EXCERPT_CHARS - 1] + "…"


def one_line(text: str, chars: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= chars else text[: chars - 1] + "…"


def tool_step_html(
    step: ToolPartJSON,
    muted: str,
    error: str,
    warning: str,
    *,
    model: str | None = None,
    depth: int = 0,
    now: float | None = None,
) -> str:
    """A step's lines: a step line, or a sub-agent's (`model`: the reply's, to say when the
    sub-agent's differs; `now`: when a running step's time is counted to)."""
    now = time.time() if now is None else now
    if not is_sub_agent(step) or depth >= MAX_AGENT_DEPTH:
        return step_line(step, muted, error, warning, depth=depth, now=now)
    agent = step.get("agent")
    other_model = ""
    if agent is not None and model is not None and agent["model"] != model:
        other_model = f' <span style="color:{muted};">· {html.escape(agent["model"])}</span>'
    colour = state_colour(step, muted, error, warning)
    lines = [
        f'{line_start(depth)}<span style="color:{muted};">↳ Sub-agent:</span> '
        f"<b>{html.escape(one_line(task_of(step), TASK_CHARS))}</b>{other_model} "
        f'<span style="color:{colour};">— {html.escape(step_state(step, now))}</span> '
        f"{details_link(step)}</p>"
    ]
    for part in agent["parts"] if agent is not None else []:
        if part["type"] == "tool":
            lines.append(
                tool_step_html(part, muted, error, warning, model=model, depth=depth + 1, now=now)
            )
    words = excerpt(step)
    if words:
        lines.append(
            f'{line_start(depth + 1)}<span style="color:{muted};"><i>'
            f"“{html.escape(words)}”</i></span></p>"
        )
    return "".join(lines)


def tool_step_details(step: ToolPartJSON, depth: int = 0) -> str:
    """A step in full as plain text (the details window): a sub-agent's with its task,
    instructions, model, each of its steps in full, and all it said."""
    agent = step.get("agent")
    if agent is None or depth >= MAX_AGENT_DEPTH:
        return step_details(step)
    now = time.time()
    pieces = [f"Sub-agent — {step_state(step, now)}", "", "Task:", agent["task"], ""]
    if agent["instructions"]:
        pieces += ["Instructions:", agent["instructions"], ""]
    pieces += [f"Model: {agent['model']}", ""]
    steps = [p for p in agent["parts"] if p["type"] == "tool"]
    if steps:
        pieces.append(f"Its steps ({len(steps)}):")
        for inner in steps:
            body = tool_step_details(inner, depth + 1).rstrip("\n")
            pieces += ["", "  " + body.replace("\n", "\n  ")]
        pieces.append("")
    pieces += ["What it said:", said(step) or "(nothing yet)"]
    if step["status"] not in ("running", "completed") and step["result"] != said(step):
        pieces += ["", "Result:", step["result"] or "(no result)"]
    if step["arguments"]:
        pieces += ["", "The call's arguments:", readable_arguments(step["arguments"])]
    return "\n".join(pieces) + "\n"
