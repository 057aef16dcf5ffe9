"""Where the text in a turn's context came from, when the user did not write it.

A model reads more than the user's words: a tool's result, a passage of their documents, an
attached file, an MCP resource attached, a sub-agent's answer, a message imported from
another chat. Any of them can carry instructions. A loop's `Provenance` lists each such
piece the model has been given so far in this turn, with a short description in words and
the start of its text; the injection guard (server/agent/guard.py) reads it before each call.

The sources at the turn's start come with its request (`ChatRequest.sources`): a stored
chat's are named by the builder of its prompt as it builds each message (server/agent/
branch.py: attachments, resources, imported messages, earlier tool results and a summary
that stands for some), with this module's words, so the guard is told what the model is
given; the passages put in the prompt are added beside them. The rest are added as the turn
reads them. A sub-agent starts with its parent's sources (its task may carry what the
parent read) and gives its parent what it read with its answer.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from server.limits import Limits
from server.types import (
    MAX_AGENT_DEPTH,
    CitationPartJSON,
    PartJSON,
    SourceJSON,
)

EXCERPT_CHARS = 400  # of a source's text, shown on the approval card
ARGUMENT_CHARS = 40  # of each argument value in a call's description
ARGUMENTS_SHOWN = 3


def excerpt(text: str, most: int = EXCERPT_CHARS) -> str:
    text = text.strip()
    return text if len(text) <= most else text[: most - 1].rstrip() + "…"


def call_words(tool: str, arguments: str) -> str:
    """A call as a person reads it: `fetch(url="https://…")`, its values cut short."""
    try:
        value = json.loads(arguments) if arguments.strip() else {}
    except ValueError:
        value = None
    if not isinstance(value, dict):
        return f"{tool}(…)"
    shown = [
        f"{key}={excerpt(json.dumps(item, ensure_ascii=False), ARGUMENT_CHARS)}"
        for key, item in list(value.items())[:ARGUMENTS_SHOWN]
    ]
    more = ", …" if len(value) > ARGUMENTS_SHOWN else ""
    return f"{tool}({', '.join(shown)}{more})"


def tool_result(server: str, tool: str, call_id: str, arguments: str, text: str) -> SourceJSON:
    where = f" of {server}" if server else ""
    return {
        "kind": "tool_result",
        "label": f"the result of {call_words(tool, arguments)}{where}",
        "excerpt": excerpt(text),
        "server": server,
        "tool": tool,
        "call_id": call_id,
    }


def document(citation: CitationPartJSON) -> SourceJSON:
    return {
        "kind": "document",
        "label": f"a passage of your document {citation['path']}",
        "excerpt": excerpt(citation["quote"]),
        "path": citation["path"],
    }


def sub_agent(call_id: str, task: str, answer: str, read: list[SourceJSON]) -> SourceJSON:
    """A sub-agent's answer: untrusted when it read anything the user did not write (its
    own task was written by a model that may have)."""
    after = f", after it read {read[-1]['label']}" if read else ""
    return {
        "kind": "sub_agent",
        "label": f"the answer of a sub-agent given the task “{excerpt(task, 60)}”{after}",
        "excerpt": excerpt(answer),
        "call_id": call_id,
    }


def attached(item: dict[str, object], message_id: str) -> SourceJSON:
    """A file or an image attached to a stored question (`item` as stored, its text in it),
    or an MCP resource attached."""
    name = str(item.get("name", ""))
    image = item.get("kind") == "image"
    resource = item.get("resource")
    label = f"the attached {'image' if image else 'file'} {name}"
    if isinstance(resource, dict):
        label = f"the MCP resource {resource.get('uri')} of {resource.get('server')}"
    return {
        "kind": "resource" if isinstance(resource, dict) else "attachment",
        "label": label,
        "excerpt": "(an image)" if image else excerpt(str(item.get("text", ""))),
        "path": name,
        "message_id": message_id,
    }


def imported(role: str, content: str, message_id: str) -> SourceJSON:
    """A stored message an import wrote, from another chat."""
    return {
        "kind": "imported",
        "label": f"a message imported from another chat ({role})",
        "excerpt": excerpt(content),
        "message_id": message_id,
    }


def summarised_results(summary: str, message_id: str) -> SourceJSON:
    """A summary that stands for replies with tool steps (the first: `message_id`): it may
    carry what their results said."""
    return {
        "kind": "tool_result",
        "label": "the results of earlier tool calls, now in the summary",
        "excerpt": excerpt(summary),
        "message_id": message_id,
    }


def earlier_results(parts: Iterable[PartJSON], depth: int = 0) -> list[SourceJSON]:
    """The tool results of a stored reply's steps (its sub-agents' too): the history gives
    them back to the model (server/agent/history.py)."""
    found: list[SourceJSON] = []
    for part in parts:
        if part["type"] != "tool" or part["status"] not in ("completed", "error"):
            continue
        agent = part.get("agent")
        if agent is not None and depth < MAX_AGENT_DEPTH:
            found.extend(earlier_results(agent["parts"], depth + 1))
        if part["result"]:
            found.append(
                tool_result(
                    part["server"], part["name"], part["id"], part["arguments"], part["result"]
                )
            )
    return found


class Provenance:
    """What a loop's model has read in this turn that the user did not write, in the order
    read."""

    def __init__(self, inherited: Iterable[SourceJSON] = ()) -> None:
        self._sources: list[SourceJSON] = list(inherited)[-Limits.max_turn_sources :]
        self._own: list[SourceJSON] = []  # read by this loop itself

    @property
    def untrusted(self) -> bool:
        """Text the user did not write is in the context."""
        return bool(self._sources)

    def add(self, source: SourceJSON) -> None:
        for kept in (self._sources, self._own):
            most = Limits.max_turn_sources
            if len(kept) >= most:
                # Keep the first (the turn's start) and make room at the end for the latest.
                del kept[most // 2]
            kept.append(source)

    def extend(self, sources: Iterable[SourceJSON]) -> None:
        for source in sources:
            self.add(source)

    def own(self) -> list[SourceJSON]:
        """What this loop read itself (not what it started with): a sub-agent's, for its
        parent."""
        return list(self._own)

    def latest(self, most: int = 3) -> list[SourceJSON]:
        """The latest sources, the latest first (what the guard shows)."""
        return [source.copy() for source in reversed(self._sources[-most:])]

    def all(self) -> list[SourceJSON]:
        return list(self._sources)
