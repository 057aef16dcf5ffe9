"""What a reply's footer says: its ending in plain words, and its figures."""

from __future__ import annotations

from desktop.client import ReplyEnd
from server.types import Usage

BADGES: dict[tuple[str, str | None], str] = {
    ("interrupted", "client_hangup"): "Stopped",
    ("interrupted", "shutdown"): "Interrupted: Parley was closed",
    ("interrupted", "crash"): "Interrupted: Parley quit unexpectedly",
}


def badge_for(end: ReplyEnd) -> str:
    if end.status == "error":
        return f"Error: {end.error or 'the model failed'}"
    if end.status == "completed" and end.finish_reason == "length":
        return "Cut at the length limit"  # the chat's "Longest reply": Continue goes on
    return BADGES.get((end.status, end.ended_by), "")


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
