"""What a branch holds that the user did not write in this chat: attached files' text (an
upload, or an MCP resource attached), messages imported from another chat, and tool results
a summary stands for. The injection guard (server/agent/guard.py) counts them among a turn's
untrusted sources; the agent adds the tool results its history gives back itself
(server/agent/provenance.py)."""

from __future__ import annotations

import json
import sqlite3

from server.storage import attachments
from server.types import SourceJSON, SummaryJSON

EXCERPT_CHARS = 400


def _excerpt(text: str) -> str:
    text = text.strip()
    return text if len(text) <= EXCERPT_CHARS else text[: EXCERPT_CHARS - 1].rstrip() + "…"


def of_branch(rows: list[sqlite3.Row], summary: SummaryJSON | None = None) -> list[SourceJSON]:
    """The sources of a branch's rows, oldest first (those a summary stands for included:
    a summary may carry what they said, tool results too)."""
    found: list[SourceJSON] = []
    covering = summary  # the summary, while its rows are read (and none of them counted yet)
    for row in rows:
        if covering is not None and row["role"] == "assistant" and _has_steps(row["parts"]):
            found.append(
                {
                    "kind": "tool_result",
                    "label": "the results of earlier tool calls, now in the summary",
                    "excerpt": _excerpt(covering["content"]),
                    "message_id": row["id"],
                }
            )
            covering = None  # one source for the summary
        if covering is not None and row["id"] == covering["through_id"]:
            covering = None
        if row["imported"]:
            found.append(
                {
                    "kind": "imported",
                    "label": f"a message imported from another chat ({row['role']})",
                    "excerpt": _excerpt(row["content"]),
                    "message_id": row["id"],
                }
            )
        if row["role"] != "user" or not row["attachments"]:
            continue
        for item in attachments.of_message(row["attachments"]):
            name = str(item.get("name", ""))
            image = item.get("kind") == "image"
            resource = item.get("resource")
            label = f"the attached {'image' if image else 'file'} {name}"
            if isinstance(resource, dict):
                label = f"the MCP resource {resource.get('uri')} of {resource.get('server')}"
            found.append(
                {
                    "kind": "resource" if isinstance(resource, dict) else "attachment",
                    "label": label,
                    "excerpt": "(an image)" if image else _excerpt(str(item.get("text", ""))),
                    "path": name,
                    "message_id": row["id"],
                }
            )
    return found


def _has_steps(parts: str | None) -> bool:
    found = json.loads(parts) if parts else []
    return isinstance(found, list) and any(
        isinstance(p, dict) and p.get("type") == "tool" for p in found
    )
