"""Earlier replies' tool calls and results, given back to the model in later turns (issue 42).

A stored reply keeps its steps as parts (storage hands them on with the reply's message, under
`parts`); before any backend sees the history, each such reply becomes what the model first
saw: its text, its calls (`tool_calls`), each call's result (`tool` messages), its text after
them. So "summarise section 2 of the file you read" works a turn later. Results are kept
newest first within a budget of characters; older ones are elided with a note that says how
much was left out (the call itself stays, so the model knows it can ask again). A model that
cannot call tools gets the replies' text alone.
"""

from __future__ import annotations

import json

from server.agent.names import function_name
from server.agent.untrusted import untrusted
from server.types import ChatMessage, PartJSON, ToolCallJSON, ToolPartJSON

# Characters of earlier tool results given back in a turn (about 4,000 tokens); the newest
# first. The context meter and compaction see what is sent.
RESULTS_BUDGET_CHARS = 16_000
BUILT_IN = ("parley", "library")  # their functions are named as their tools


def with_tool_history(messages: list[ChatMessage], tools_ok: bool) -> list[ChatMessage]:
    """The history as a backend may see it: stored replies' parts turned into tool calls and
    results (`tools_ok`), or dropped (their text stays)."""
    if not any("parts" in message for message in messages):
        return messages
    if not tools_ok:
        return [_text_only(message) for message in messages]
    budget = RESULTS_BUDGET_CHARS
    shown: dict[int, bool] = {}  # id of a step's JSON: its result is given whole
    for message in reversed(messages):
        for part in reversed(message.get("parts", [])):
            if part["type"] == "tool":
                size = len(part.get("result") or "")
                shown[id(part)] = size <= budget
                budget -= size if size <= budget else 0
    expanded: list[ChatMessage] = []
    for message in messages:
        if "parts" not in message:
            expanded.append(message)
        else:
            expanded.extend(_expanded(message["parts"], shown))
    return expanded


def _text_only(message: ChatMessage) -> ChatMessage:
    return {k: v for k, v in message.items() if k != "parts"}  # type: ignore[return-value]


def _expanded(parts: list[PartJSON], shown: dict[int, bool]) -> list[ChatMessage]:
    """A stored reply as the model first saw it: text, calls, results, text."""
    found: list[ChatMessage] = []
    text: list[str] = []
    calls: list[ToolCallJSON] = []
    results: list[ChatMessage] = []

    def flush() -> None:
        if calls:
            found.append({"role": "assistant", "content": "".join(text), "tool_calls": list(calls)})
            found.extend(results)
        elif text and "".join(text):
            found.append({"role": "assistant", "content": "".join(text)})
        text.clear()
        calls.clear()
        results.clear()

    for part in parts:
        if part["type"] == "text":
            if calls:
                flush()
            text.append(part["text"])
        elif part["type"] == "tool":
            calls.append(_call(part))
            results.append(
                {"role": "tool", "tool_call_id": part["id"], "content": _result(part, shown)}
            )
    flush()
    return found


def _call(part: ToolPartJSON) -> ToolCallJSON:
    server, name = part["server"], part["name"]
    function = name if server in BUILT_IN else function_name(server, name)
    try:
        arguments = part["arguments"] if isinstance(json.loads(part["arguments"]), dict) else "{}"
    except ValueError:
        arguments = "{}"
    return {
        "id": part["id"],
        "type": "function",
        "function": {"name": function, "arguments": arguments or "{}"},
    }


def _result(part: ToolPartJSON, shown: dict[int, bool]) -> str:
    result = part.get("result") or ""
    status = part["status"]
    if status not in ("completed", "error"):
        return f"({status}) {result}".strip()  # Parley's own words: it did not run, or stopped
    if not shown.get(id(part), True):
        return (
            f"[An earlier result of {len(result):,} characters, left out to save room. Call "
            "the tool again if you need it.]"
        )
    said = untrusted(result, f"the tool {part['name']} of {part['server']}")
    return said if status == "completed" else f"Error: {said}"
