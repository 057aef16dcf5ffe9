"""What the cards that ask the user about a tool call say (an approval; a call past its
timeout), as rich text any surface can draw: which tool of which server, and who calls it —
the model of the reply, or one of its sub-agents, named by its task cut short (the user did
not write that task: they must see that a sub-agent asks)."""

from __future__ import annotations

import html

from server.types.chunks import ApprovalJSON, OverdueJSON

TASK_CHARS = 60  # of a sub-agent's task, on a card


def approval_question(call: ApprovalJSON) -> str:
    agent = call.get("sub_agent")
    caller = "The model" if agent is None else f"The {_sub_agent(agent['task'])}"
    return (
        f"{caller} wants to run <b>{html.escape(call['tool'])}</b> from the MCP server "
        f"<b>{html.escape(call['server'])}</b>. Run it?"
    )


def overdue_question(call: OverdueJSON, ran: str) -> str:
    """`ran`: how long the call has run, in words."""
    where = f" (MCP server <b>{html.escape(call['server'])}</b>)" if call["server"] else ""
    agent = call.get("sub_agent")
    by = f", called by the {_sub_agent(agent['task'])}," if agent is not None else ""
    return (
        f"<b>{html.escape(call['tool'])}</b>{where}{by} has been running for {ran} — keep "
        "waiting, or stop this call?"
    )


def _sub_agent(task: str) -> str:
    return f"sub-agent working on “{html.escape(cut(task, TASK_CHARS))}”"


def cut(text: str, chars: int) -> str:
    """`text` on one line, at most `chars` characters (an ellipsis says it was cut)."""
    text = " ".join(text.split())
    return text if len(text) <= chars else text[: chars - 1].rstrip() + "…"
