"""A reply's tool steps as compact lines: the tool, its arguments in short, how it went.

Each line links to `step:<id>`; the transcript turns a click into `step_clicked`, and the
window shows that step's full arguments and result.
"""

from __future__ import annotations

import html
import json
from urllib.parse import quote

from server.types import CitationPartJSON, ToolPartJSON

SHORT_ARGUMENTS_CHARS = 60


def short_arguments(arguments: str) -> str:
    """`key=value, …` of a call's JSON arguments, cut short; the raw text if not JSON."""
    try:
        value = json.loads(arguments) if arguments.strip() else {}
    except ValueError:
        value = None
    if isinstance(value, dict):
        text = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in value.items())
    else:
        text = arguments
    if len(text) > SHORT_ARGUMENTS_CHARS:
        text = text[: SHORT_ARGUMENTS_CHARS - 1] + "…"
    return text


def step_state(part: ToolPartJSON) -> str:
    """How the step went, in a few words."""
    status = part["status"]
    if status == "running":
        return "running…"
    if status == "awaiting_approval":
        return "awaiting approval…"
    took = ""
    if part["ended_at"] is not None:
        took = f" in {max(0.0, part['ended_at'] - part['started_at']):.1f} s"
    if status == "completed":
        return f"done{took}"
    if status == "interrupted":
        return "stopped"
    if status == "denied":
        return "denied"
    first_line = (part["result"] or "").strip().splitlines()[:1]
    reason = first_line[0] if first_line else "failed"
    return f"error: {reason[:80]}"


def step_line(part: ToolPartJSON, muted: str, error: str, warning: str) -> str:
    status = part["status"]
    colour = {"error": error, "interrupted": warning, "denied": warning}.get(status, muted)
    server = f"{html.escape(part['server'])} · " if part["server"] else ""
    arguments = html.escape(short_arguments(part["arguments"]))
    link = f"step:{quote(part['id'], safe='')}"
    return (
        f'<p style="margin:2px 0;">'
        f'<span style="color:{muted};">⚙ {server}</span><b>{html.escape(part["name"])}</b>'
        f'<span style="color:{muted};">({arguments})</span> '
        f'<span style="color:{colour};">— {html.escape(step_state(part))}</span> '
        f'<a href="{link}">details</a></p>'
    )


def step_details(part: ToolPartJSON) -> str:
    """The full step as plain text (the details window)."""
    try:
        arguments = json.dumps(json.loads(part["arguments"]), indent=2, ensure_ascii=False)
    except ValueError:
        arguments = part["arguments"]
    where = f"{part['server']} · {part['name']}" if part["server"] else part["name"]
    result = part["result"] if part["result"] is not None else "(no result)"
    return f"{where} — {step_state(part)}\n\nArguments:\n{arguments}\n\nResult:\n{result}\n"


def citation_line(citation: CitationPartJSON, muted: str, link: str) -> str:
    """A source the reply cited: its number, its file (a link that opens it) and where."""
    place = ""
    if citation["page"] is not None:
        place = f", page {citation['page']}"
    elif citation["lines"] is not None:
        place = f", lines {citation['lines'][0]}–{citation['lines'][1]}"
    return (
        f'<p style="margin:2px 0;"><span style="color:{muted};">[{citation["n"]}]</span> '
        f'<a href="{link}">{html.escape(citation["path"])}</a>{html.escape(place)}</p>'
    )
