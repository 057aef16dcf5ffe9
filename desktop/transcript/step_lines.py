"""A reply's tool steps as compact lines: the tool, its arguments in short, how it went (a
running call: what its tool last said of its progress, and for how long it has run).

Each line links to `step:<id>`; the transcript turns a click into `step_clicked`, and the
window shows that step's full arguments and result. A sub-agent's step is drawn by
sub_agent_lines.py, with its own steps as these lines, indented.
"""

from __future__ import annotations

import html
import json
import time
from urllib.parse import quote

from desktop.composer.attachment_files import size_text
from server.types import CitationPartJSON, QuestionJSON, ResourceLinkJSON, ToolPartJSON

SHORT_ARGUMENTS_CHARS = 60
INDENT_PX = 22  # a sub-agent's lines, under its own
# A call the user stopped after its timeout ends as an error the model reads, its result
# beginning with these words (server/agent/tool_runs.py): the user's choice, not a failure.
STOPPED_BY_USER = "Stopped by the user after "


# A server's question (MCP elicitation), by its state.
QUESTION_WORDS = {
    "asked": "waiting for your answer",
    "accept": "answered",
    "decline": "declined",
    "cancel": "cancelled",
}
QUESTION_CHARS = 80  # of its message, on its line


def asking(part: ToolPartJSON) -> bool:
    """The step's server waits for the user's answer to a question."""
    return any(q["state"] == "asked" for q in part.get("questions", []))


def question_line(question: QuestionJSON) -> str:
    """A question the step's server asked, and how it went: `Asked “Whose table?” —
    answered` (a URL question: where it asked the user to go)."""
    said = " ".join(question["message"].split())
    if len(said) > QUESTION_CHARS:
        said = said[: QUESTION_CHARS - 1] + "…"
    where = f" (open {question['url']})" if question["mode"] == "url" and "url" in question else ""
    words = QUESTION_WORDS.get(question["state"], question["state"])
    return f"Asked “{said}”{where} — {words}"


def question_lines(part: ToolPartJSON) -> list[str]:
    return [question_line(q) for q in part.get("questions", [])]


def link_line(link: ResourceLinkJSON) -> str:
    """A resource a result linked to, as its card lists it: `Read me · docs://readme ·
    text/markdown · 2 KB` (its title, else its name; what its server declared of it)."""
    named = link["title"] or link["name"] or link["uri"]
    said = [named] if named == link["uri"] else [named, link["uri"]]
    if link["mime"]:
        said.append(link["mime"])
    if link["size"] is not None:
        said.append(size_text(link["size"]))
    return " · ".join(" ".join(s.split()) for s in said)


SCOPE_WORDS = {
    "once": "this call only",
    "chat": "this tool, for this chat",
    "server": "all of {server}'s tools, for this chat",
    "always": "its trust in the settings is Always allow",
}


def allowed_words(part: ToolPartJSON) -> str:
    """Who let the call run, and how far that allow reached (saved with the step): "Allowed
    by you: this call only"; "" for a call nobody allowed (asked and not answered, denied)."""
    # An imported chat's parts keep keys the import does not check: read them with care.
    allowed: object = part.get("allowed")
    if not isinstance(allowed, dict) or allowed.get("scope") not in (*SCOPE_WORDS, "arguments"):
        return ""
    if allowed["scope"] == "arguments":
        reach = f"{part['name']}'s calls with {allowed.get('argument', '?')} under "
        reach += f"{allowed.get('under', '?')}, for this chat"
    else:
        reach = SCOPE_WORDS[allowed["scope"]].format(server=part["server"])
    who = {"you": "Allowed by you", "grant": "Allowed by your earlier allow"}
    return f"{who.get(str(allowed.get('by')), 'Ran without asking')}: {reach}"


def guard_words(part: ToolPartJSON) -> str:
    """Why the injection guard asked before the call (saved with the step), or ""."""
    guard: object = part.get("guard")
    reason = guard.get("reason") if isinstance(guard, dict) else None
    return f"Parley asked because: {reason}" if isinstance(reason, str) and reason else ""


def stopped_by_user(part: ToolPartJSON) -> bool:
    return part["status"] == "error" and (part["result"] or "").startswith(STOPPED_BY_USER)


def duration(seconds: float) -> str:
    """`2 min 5 s`, `12 s`: how long something has run."""
    minutes, rest = divmod(max(0, round(seconds)), 60)
    return f"{minutes} min {rest} s" if minutes else f"{rest} s"


def progress_text(part: ToolPartJSON) -> str:
    """What a long call's tool last said of its progress: its message, and how far in
    percent when it knows its total (`step 2 of 3 · 67%`); "" when it said nothing."""
    progress = part.get("progress")
    if progress is None:
        return ""
    pieces = [progress["message"]] if progress["message"] else []
    if progress["total"]:
        pieces.append(f"{min(100, 100 * progress['progress'] / progress['total']):.0f}%")
    return " · ".join(pieces)


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


def step_state(part: ToolPartJSON, now: float | None = None) -> str:
    """How the step went, in a few words; a running step, with for how long it has run at
    `now` (time.time(); None: not said)."""
    status = part["status"]
    if status == "running":
        ran = "" if now is None else duration(now - part["started_at"])
        if part.get("overdue") is not None:
            return f"waiting for you · running {ran}".rstrip()  # keep waiting, or stop it?
        if asking(part):
            return f"waiting for your answer · running {ran}".rstrip()  # its server asks
        said = progress_text(part)
        return f"running… {ran}".rstrip() + (f" · {said}" if said else "")
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
    if stopped_by_user(part):
        waited = (part["result"] or "")[len(STOPPED_BY_USER) :].split(":")[0]
        return f"stopped by you after {waited}"
    first_line = (part["result"] or "").strip().splitlines()[:1]
    reason = first_line[0] if first_line else "failed"
    return f"error: {reason[:80]}"


def state_colour(part: ToolPartJSON, muted: str, error: str, warning: str) -> str:
    if part.get("overdue") is not None or asking(part) or stopped_by_user(part):
        return warning  # the user is asked, or chose to stop it
    return {"error": error, "interrupted": warning, "denied": warning}.get(part["status"], muted)


def line_start(depth: int) -> str:
    """A step's paragraph, indented `depth` levels (a sub-agent's steps: 1)."""
    indent = f"margin-left:{depth * INDENT_PX}px;" if depth else ""
    return f'<p style="margin-top:2px;margin-bottom:2px;{indent}">'


def details_link(part: ToolPartJSON) -> str:
    return f'<a href="step:{quote(part["id"], safe="")}">details</a>'


def step_line(
    part: ToolPartJSON,
    muted: str,
    error: str,
    warning: str,
    *,
    depth: int = 0,
    now: float | None = None,
) -> str:
    """The step's line; `now`: the time a running step's line says how long it ran at."""
    colour = state_colour(part, muted, error, warning)
    server = f"{html.escape(part['server'])} · " if part["server"] else ""
    arguments = html.escape(short_arguments(part["arguments"]))
    state = step_state(part, time.time() if now is None else now)
    return (
        f"{line_start(depth)}"
        f'<span style="color:{muted};">⚙ {server}</span><b>{html.escape(part["name"])}</b>'
        f'<span style="color:{muted};">({arguments})</span> '
        f'<span style="color:{colour};">— {html.escape(state)}</span> '
        f"{details_link(part)}</p>"
    )


def readable_arguments(arguments: str) -> str:
    """The arguments as the model wrote them, indented when they are JSON."""
    try:
        return json.dumps(json.loads(arguments), indent=2, ensure_ascii=False)
    except ValueError:
        return arguments


def step_details(part: ToolPartJSON) -> str:
    """The full step as plain text (the details window)."""
    arguments = readable_arguments(part["arguments"])
    where = f"{part['server']} · {part['name']}" if part["server"] else part["name"]
    result = part["result"] if part["result"] is not None else "(no result)"
    state = step_state(part, time.time())
    asked = "".join(f"\n{words}" for words in (guard_words(part), allowed_words(part)) if words)
    linked = "".join(f"\n  {link_line(link)}" for link in part.get("links", []))
    linked = f"\nLinked resources (open them from the step's card):{linked}\n" if linked else ""
    return f"{where} — {state}{asked}\n\nArguments:\n{arguments}\n\nResult:\n{result}\n{linked}"


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
