"""What the window says of a reply while it ends or waits on something that is not the model:
a Stop being saved (naming the tool or sub-agent it stopped), earlier messages being
summarised, a summary that could not be made, a reply the server cannot save now, or a local
model still to be loaded before its turn begins."""

from __future__ import annotations

from server.types import ModelStatusJSON, ToolPartJSON
from server.types.chunks import CompactionJSON

STOPPING_NOTE = "Stopped — saving…"
SUMMARISING_NOTE = "Summarising earlier messages…"
SUMMARY_FAILED = (
    "Earlier messages could not be summarised; the reply goes on without a summary, and the "
    "model may not see the start of this chat."
)


def summarising_note(event: CompactionJSON) -> str:
    """What the window says while earlier messages are summarised, with how far it is when
    the server says: "Summarising earlier messages… (2 of 5, ~180 tokens written)"; "" once
    it is no longer running."""
    if event["state"] != "running":
        return ""
    told: list[str] = []
    rounds = event.get("rounds", 0)
    if rounds > 1:  # one round: its number says nothing
        told.append(f"{event.get('round', 1)} of {rounds}")
    tokens = event.get("tokens", 0)
    if tokens > 0:
        told.append(f"~{tokens:,} tokens written")
    return f"{SUMMARISING_NOTE} ({', '.join(told)})" if told else SUMMARISING_NOTE


def save_problem_note(problem: str) -> str:
    """While the server cannot save a reply (a full disk): it keeps it in memory meanwhile,
    so quitting Parley then is what would lose it."""
    return (
        f"This reply cannot be saved now ({problem}). Parley keeps it and saves it as soon "
        "as there is room: free some disk space, and keep Parley open until then."
    )


def stopping_note(step: ToolPartJSON | None) -> str:
    """What the view says while a stopped reply is being saved: which tool, if one ran."""
    if step is None:
        return STOPPING_NOTE
    agent = step.get("agent")
    if agent is not None:
        return f"Stopped during the sub-agent {agent['task'][:60]!r} — saving…"
    where = f"{step['server']} · {step['name']}" if step["server"] else step["name"]
    if step["status"] == "awaiting_approval":
        return f"Stopped before {where} was allowed to run — saving…"
    return f"Stopped during the tool {where} — saving…"


def loading_note(model: ModelStatusJSON | None) -> str:
    """Said under a question sent to `model` (as the server last reported it) until the
    reply's first text or step, when a turn waits for it: a local model not loaded yet (its
    engine starts before the turn begins); nothing for one ready, or an upstream."""
    if model is None or model["kind"] != "local" or model["state"] not in ("loading", "unloaded"):
        return ""
    return f"Loading {model['name']}…"
