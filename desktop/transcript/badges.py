"""What a reply's footer says: its ending in plain words (a stopped reply: what the stop
ended, and the calls that may have acted), and its figures."""

from __future__ import annotations

from desktop.client import ReplyEnd
from desktop.transcript.step_lines import short_arguments
from server.types import EndedJSON, Usage
from server.types.chunks import CONTEXT_FULL

BADGES: dict[tuple[str, str | None], str] = {
    ("interrupted", "client_hangup"): "Stopped",
    ("interrupted", "shutdown"): "Interrupted: Parley was closed",
    ("interrupted", "crash"): "Interrupted: Parley quit unexpectedly",
}
# A reply cut because the model's context was full: going on needs room, which a summary of
# the earlier messages makes.
CONTEXT_FULL_BADGE = "Stopped: the model's context is full · Compact now makes room to go on"

ENDED_WORDS = (
    ("model_calls", "model call"),
    ("tool_calls", "tool call"),
    ("sub_agents", "sub-agent"),
    ("approvals", "approval"),
    ("questions", "question"),  # servers' questions waiting for the user's answer
)


def badge_for(end: ReplyEnd) -> str:
    if end.status == "error":
        return f"Error: {end.error or 'the model failed'}"
    if end.status == "completed" and end.finish_reason == "length":
        if (end.usage or {}).get(CONTEXT_FULL):  # the server's verdict, not a guess here
            return CONTEXT_FULL_BADGE
        return "Cut at the length limit"  # the chat's "Longest reply": Continue goes on
    badge = BADGES.get((end.status, end.ended_by), "")
    ended = ended_text(end.ended) if end.status == "interrupted" else ""
    return f"{badge} · {ended}" if badge and ended else badge


def ended_text(ended: EndedJSON | None) -> str:
    """What a stop ended: "ended 1 model call, 2 tool calls" ("" when nothing was under
    way, or it is not known)."""
    if ended is None:
        return ""
    counts = [(ended.get(key, 0), word) for key, word in ENDED_WORDS]
    said = [f"{n} {word}{'' if n == 1 else 's'}" for n, word in counts if n]
    return "ended " + ", ".join(said) if said else ""


def acted_text(ended: EndedJSON | None) -> str:
    """The calls a stop cut while they ran, which may have acted already, with their
    arguments: "May have acted: slow(seconds=30) on t" ("" when none)."""
    calls = ended.get("may_have_acted", []) if ended is not None else []
    if not calls:
        return ""
    named = [f"{c['name']}({short_arguments(c['arguments'])}) on {c['server']}" for c in calls]
    return "May have acted: " + "; ".join(named)


def stats_for(usage: Usage | None) -> str:
    usage = usage or {}
    parts = []
    if "ttft_ms" in usage:
        parts.append(f"first token {usage['ttft_ms']:.0f} ms")
    if "tokens_per_s" in usage:
        parts.append(f"{usage['tokens_per_s']:.1f} tok/s")
    count = usage.get("completion_tokens")
    if isinstance(count, int):
        parts.append(f"{count} token" if count == 1 else f"{count} tokens")
    return " · ".join(parts)
