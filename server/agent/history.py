"""Earlier replies' tool calls and results, given back to the model in later turns.

A stored reply keeps its steps as parts (server/agent/branch.py hands them on with the reply's
message, under `parts`); before any backend sees the history, each such reply becomes what the
model first saw: its text, its calls (`tool_calls`), each call's result (`tool` messages), its
text after them. So "summarise section 2 of the file you read" works a turn later. Results are kept
newest first within a budget of characters (a call's arguments and result), a share of the
model's context; an older one is left out with a note naming the call, and the call's long
values are cut, so the model can make it again without paying for it every turn.
A turn that offers no tools gets each call and its result as plain text inside the reply's
message instead: upstreams refuse `tool` messages in a request that offers no tools.
"""

from __future__ import annotations

import json

from server.agent.names import function_name
from server.agent.untrusted import untrusted
from server.limits import Limits
from server.types import ChatMessage, PartJSON, ToolCallJSON, ToolPartJSON

# Earlier tool calls given back whole take at most `Limits.history_results_chars` and at most
# this share of the model's context (3 characters a token, as server/models/context.py
# estimates). What a model call is given is built from this by server/agent/prompt.py.
RESULTS_SHARE = 4  # of the model's context
CHARS_PER_TOKEN = 3
BUILT_IN = ("parley", "library")  # their functions are named as their tools
ARGUMENT_CHARS = 60  # of each argument's value in a note
ARGUMENTS_CHARS = 200  # of all of them


def results_budget(context: int | None) -> int:
    """Characters of earlier results given back to a model of `context` tokens (None: not
    known)."""
    most = Limits.history_results_chars
    if context is None:
        return most
    return max(0, min(most, context // RESULTS_SHARE * CHARS_PER_TOKEN))


def as_sent_by_message(
    messages: list[ChatMessage], tools_ok: bool, *, context: int | None
) -> list[list[ChatMessage]]:
    """The history as a backend may see it, one list per message (a stored reply may become
    several, or none: compaction counts and cuts the history by stored message): stored
    replies' parts turned into tool calls and results (`tools_ok`), or into plain text in
    the reply's message. `context`: the model's context in tokens (None: not known), which
    sets the results' budget.
    Whether a result is given whole depends on the newer ones only, so leaving the oldest
    messages out changes nothing of the rest."""
    budget = results_budget(context)
    shown: dict[int, bool] = {}  # id of a step's JSON: its result is given whole
    for message in reversed(messages):
        for part in reversed(message.get("parts", [])):
            if part["type"] == "tool":  # its arguments and result: what it costs whole
                size = len(part.get("result") or "") + len(part["arguments"])
                shown[id(part)] = size <= budget
                budget -= size if size <= budget else 0
    groups: list[list[ChatMessage]] = []
    for message in messages:
        if "parts" not in message:
            groups.append([message])
        elif tools_ok:
            groups.append(_expanded(message["parts"], shown))
        else:
            groups.append([_as_text(message, shown)])
    return groups


def _as_text(message: ChatMessage, shown: dict[int, bool]) -> ChatMessage:
    """A stored reply as one message without tool calls: its text, each call and its result
    written where it was made ("[called files.read_file(path="a.md") → …]")."""
    plain: ChatMessage = {k: v for k, v in message.items() if k != "parts"}  # type: ignore[assignment]
    parts = message.get("parts", [])
    if not any(part["type"] == "tool" for part in parts):
        return plain
    said = ""
    for part in parts:
        if part["type"] == "text":
            said += part["text"]
        elif part["type"] == "tool":
            label = f"{_label(part)}({_short_arguments(part['arguments'])})"
            if _left_out(part, shown):
                size = len(part.get("result") or "")
                called = f"[called {label}: its result ({size:,} characters) left out to save room]"
            else:
                called = f"[called {label} → {_result(part)}]"
            said += ("" if not said or said.endswith("\n") else "\n") + called + "\n"
    return {**plain, "content": said}


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
            call = _call(part, shortened=not shown.get(id(part), True))  # any call beyond
            calls.append(call)
            content = _result(part)
            if _left_out(part, shown):  # the call stays, its long values cut: it can be made again
                said = f"{call['function']['name']}({_short_arguments(part['arguments'])})"
                size = len(part.get("result") or "")
                content = (
                    f"[An earlier result of {size:,} characters from {said}, left out to save "
                    "room. Call the tool again if you need it.]"
                )
            results.append({"role": "tool", "tool_call_id": part["id"], "content": content})
    flush()
    return found


def _function(part: ToolPartJSON) -> str:
    server, name = part["server"], part["name"]
    return name if server in BUILT_IN else function_name(server, name)


def _label(part: ToolPartJSON) -> str:
    """The tool as a person names it: `files.read_file` (a built-in one by its own name)."""
    server, name = part["server"], part["name"]
    return name if server in BUILT_IN else f"{server}.{name}"


def _call(part: ToolPartJSON, *, shortened: bool = False) -> ToolCallJSON:
    """The call as the model made it; `shortened`: its long values cut (an older call whose
    result is left out costs a few lines, not its whole content again every turn)."""
    try:
        parsed = json.loads(part["arguments"])
    except ValueError:
        parsed = None
    if not isinstance(parsed, dict):
        arguments = "{}"
    elif shortened:
        arguments = json.dumps({key: _short_value(value) for key, value in parsed.items()})
    else:
        arguments = part["arguments"]
    return {
        "id": part["id"],
        "type": "function",
        "function": {"name": _function(part), "arguments": arguments or "{}"},
    }


def _short_arguments(arguments: str) -> str:
    """A call's arguments as `path="a.md", k=3`, each value and the whole cut short."""
    try:
        parsed = json.loads(arguments)
    except ValueError:
        parsed = None
    if not isinstance(parsed, dict):
        return _cut(arguments, ARGUMENT_CHARS)
    said = ", ".join(
        f"{key}={_cut(json.dumps(value, ensure_ascii=False), ARGUMENT_CHARS)}"
        for key, value in parsed.items()
    )
    return _cut(said, ARGUMENTS_CHARS)


def _short_value(value: object) -> object:
    """A value of an older call's arguments: as it was if short, else its start and how much
    was left out (a string either way)."""
    said = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    if len(said) <= ARGUMENT_CHARS:
        return value
    return f"{said[:ARGUMENT_CHARS]}… [{len(said) - ARGUMENT_CHARS:,} characters left out]"


def _cut(text: str, most: int) -> str:
    return text if len(text) <= most else text[: most - 1] + "…"


def _left_out(part: ToolPartJSON, shown: dict[int, bool]) -> bool:
    """The step ran and its result is beyond the budget."""
    return not shown.get(id(part), True) and part["status"] in ("completed", "error")


def _result(part: ToolPartJSON) -> str:
    result = part.get("result") or ""
    status = part["status"]
    if status not in ("completed", "error"):
        return f"({status}) {result}".strip()  # Parley's own words: it did not run, or stopped
    said = untrusted(result, f"the tool {part['name']} of {part['server']}")
    return said if status == "completed" else f"Error: {said}"
