"""What a tool step's card shows: its title, its status as a chip, its arguments and result
on demand, a long call's progress, the sub-agent it ran. Read from the step's part once, as
plain values QML binds to."""

from __future__ import annotations

import json
from dataclasses import dataclass

from server.types import ToolPartJSON

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
    title: str  # "files · read_file", or the sub-agent's task
    status: str  # the part's status
    status_text: str  # in words, for the chip
    arguments: str  # pretty JSON when it is JSON
    result: str
    progress: float  # 0..1, or -1 when the tool reports none (or no total)
    progress_text: str
    agent: str  # the sub-agent's model, when the step ran one


def step_view(part: ToolPartJSON) -> StepView:
    agent = part.get("agent")
    where = f"{part['server']} · {part['name']}" if part["server"] else part["name"]
    progress = part.get("progress")
    fraction = -1.0
    if progress is not None and progress["total"]:
        fraction = max(0.0, min(1.0, progress["progress"] / progress["total"]))
    return StepView(
        id=part["id"],
        title=f"Sub-agent: {agent['task']}" if agent is not None else where,
        status=part["status"],
        status_text=STATUS_WORDS.get(part["status"], part["status"]),
        arguments=_pretty(part["arguments"]),
        result=(part["result"] or "")[:RESULT_CHARS],
        progress=fraction,
        progress_text=(progress["message"] or "") if progress is not None else "",
        agent=agent["model"] if agent is not None else "",
    )


def _pretty(arguments: str) -> str:
    try:
        return json.dumps(json.loads(arguments), indent=2, ensure_ascii=False)
    except ValueError:
        return arguments
