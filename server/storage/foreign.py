"""What a branch holds that the user did not write in this chat: attached files' text (an
upload, or an MCP resource attached) and messages imported from another chat. The injection
guard (server/agent/guard.py) counts them among a turn's untrusted sources; the agent adds
the tool results its history gives back (server/agent/provenance.py)."""

from __future__ import annotations

import sqlite3

from server.storage import attachments
from server.types import SourceJSON

EXCERPT_CHARS = 400


def _excerpt(text: str) -> str:
    text = text.strip()
    return text if len(text) <= EXCERPT_CHARS else text[: EXCERPT_CHARS - 1].rstrip() + "…"


def of_branch(rows: list[sqlite3.Row]) -> list[SourceJSON]:
    """The sources of a branch's rows, oldest first (those a summary stands for included:
    a summary may carry what they said)."""
    found: list[SourceJSON] = []
    for row in rows:
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
