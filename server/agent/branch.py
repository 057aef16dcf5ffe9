"""A stored chat's branch as a model call is given it: what storage holds
(server/storage/branches.py, `StoredBranch`) becomes messages here, and nowhere else.

The system message comes first: the chat's system prompt, the memory and the summary in force
(server/agent/prompt.py, `system_text`), in place of the messages the summary stands for. Then
each stored message becomes one message, or none: a reply with tool steps keeps its parts
(server/agent/history.py turns them into calls and results), a question carries its files'
text in `<file>` elements and its images, and a reply that ended with nothing (an error before
the first token) is left out. Each message keeps its stored row's id: compaction cuts and
saves by row.

What the user did not write here is named as the messages are built, from the same rules
(an attached file, an MCP resource, a message imported from another chat, an earlier tool
result, a summary that stands for some): the injection guard (server/agent/provenance.py)
is told what the model is given, not what it would find again in the messages.
"""

from __future__ import annotations

from dataclasses import dataclass

from server.agent import provenance
from server.agent.prompt import system_text
from server.storage.branches import StoredBranch, StoredMessage
from server.storage.turn_rows import OpenedTurn
from server.types import ChatMessage, ImageJSON, PartJSON, SourceJSON


@dataclass(frozen=True)
class Given:
    """A stored branch as the model is given it."""

    kept: str | None  # what stays first through any compaction: the system prompt, the memory
    messages: list[ChatMessage]
    ids: list[str]  # each message's stored row ("": none, as the system message's)
    sources: list[SourceJSON]  # what the messages hold that the user did not write here


def of_branch(branch: StoredBranch, memory: str | None) -> Given:
    """The branch as the next turn would give it, before its question is written (the
    context meter's view, and what "Compact now" summarises). `memory`: the saved memory's
    part of the system message (None: none)."""
    summary = branch.summary["content"] if branch.summary else None
    text = system_text(branch.system, memory, summary)
    messages: list[ChatMessage] = [{"role": "system", "content": text}] if text else []
    ids = [""] if text else []
    sources: list[SourceJSON] = []
    pending = branch.summary  # until a reply it stands for is found with tool steps
    for index, stored in enumerate(branch.messages):
        covered = index < branch.summarised
        if covered and pending is not None and _has_steps(stored.parts):
            sources.append(provenance.summarised_results(pending["content"], stored.id))
            pending = None  # one source for the summary
        if stored.imported:
            sources.append(provenance.imported(stored.role, stored.content, stored.id))
        sources.extend(provenance.attached(item, stored.id) for item in stored.files or [])
        message = None if covered else given_message(stored)
        if message is None:
            continue
        messages.append(message)
        ids.append(stored.id)
        sources.extend(provenance.earlier_results(message.get("parts", [])))
    return Given(system_text(branch.system, memory), messages, ids, sources)


def of_turn(opened: OpenedTurn, memory: str | None) -> Given:
    """A turn's prompt, from what opening it wrote: its branch down to its question, which is
    given even when it is empty; a continuation's reply after it, as the text to go on from
    (its earlier steps' results among the sources: the reply goes on from them)."""
    given = of_branch(opened.branch, memory)
    messages, ids, sources = given.messages, given.ids, given.sources
    if opened.earlier is not None:
        messages.append({"role": "assistant", "content": opened.earlier.content})
        ids.append(opened.assistant_message["id"])
        sources.extend(provenance.earlier_results(opened.earlier.parts))
    elif not ids or ids[-1] != opened.user_message["id"]:
        messages.append({"role": "user", "content": ""})
        ids.append(opened.user_message["id"])
    return given


def given_message(stored: StoredMessage) -> ChatMessage | None:
    """What the model is given of one stored message (None: nothing, a reply that ended
    empty)."""
    if stored.parts is not None and _has_steps(stored.parts):
        return {"role": "assistant", "content": stored.content, "parts": stored.parts}
    if stored.files is not None:
        return with_files(stored.content, stored.files)
    if stored.content:
        return {"role": stored.role, "content": stored.content}
    return None


def with_files(content: str, files: list[dict[str, object]]) -> ChatMessage:
    """A user message as the model sees it: its words, then each attached file's text in a
    `<file>` element (the model is told when only the start of it is given), and its images."""
    text = [content] if content else []
    images: list[ImageJSON] = []
    for item in files:
        name = str(item.get("name", ""))
        if item.get("kind") == "image":
            images.append({"id": str(item["id"]), "name": name, "mime": str(item["mime"])})
            continue
        body = str(item.get("text", ""))
        note = f' note="{_attribute(str(item["note"]))}"' if item.get("note") else ""
        text.append(f'<file name="{_attribute(name)}"{note}>\n{body}\n</file>')
    message: ChatMessage = {"role": "user", "content": "\n\n".join(text)}
    if images:
        message["images"] = images
    return message


def _has_steps(parts: list[PartJSON] | None) -> bool:
    """A reply's parts hold a tool step: it is given as its calls and their results."""
    return any(part.get("type") == "tool" for part in parts or [])


def _attribute(value: str) -> str:
    return value.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;")
