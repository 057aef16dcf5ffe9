"""What a model call is given, built in one place: the turn (server/agent/loop.py), compaction
(server/agent/compaction.py) and the context meter (server/routes/context.py) all take their
messages and tools from here, and count them with one counter (server/agent/cost.py), so what
the meter says, what compaction measures and what the model reads cannot drift apart.

A prompt is made of, in this order: one system message (the chat's system prompt with its
project's instructions, the saved memory, the summary in force, and, when tools are offered,
the agent's note on untrusted data with the tools' servers' instructions), the passages of the
user's documents, the history (a stored chat's branch as server/agent/branch.py builds it
from its rows; earlier replies' tool calls and results within their budget:
server/agent/history.py), the question with its images; beside the messages, the tools'
definitions (`delegate` among them when a sub-agent would have tools to use). Reading each of
them (the memory file, the documents' search, the images' bytes) is the caller's: those live
in the packages above this one.
"""

from __future__ import annotations

from server.agent import delegate
from server.agent.history import as_sent_by_message
from server.agent.untrusted import AGENT_NOTE
from server.types import ChatMessage

SUMMARY_HEADING = (
    "Summary of the earlier part of this conversation (those messages are not shown to you; "
    "the user still sees them):"
)

Tools = list[dict[str, object]]


def system_text(system: str | None, memory: str | None, summary: str | None = None) -> str | None:
    """The system message's text: the chat's system prompt (its project's instructions in
    it), then the memory, then the summary in force (the memory comes before the summary:
    compacting a chat changes nothing of what the user chose to keep)."""
    said = f"{SUMMARY_HEADING}\n{summary}" if summary else None
    return "\n\n".join(p for p in (system, memory, said) if p) or None


def with_system(
    messages: list[ChatMessage], ids: list[str], had_system: bool, text: str | None
) -> tuple[list[ChatMessage], list[str]]:
    """`messages` (and their rows, `ids`) with `text` as their one system message: in place
    of the first message when `had_system`, else before them (its row: "")."""
    rest, rest_ids = (messages[1:], ids[1:]) if had_system else (messages, ids)
    if not text:
        return list(rest), list(rest_ids)
    return [{"role": "system", "content": text}, *rest], ["", *rest_ids]


def with_documents(
    messages: list[ChatMessage], ids: list[str], passages: str | None
) -> tuple[list[ChatMessage], list[str]]:
    """The passages of the user's documents, a system message of their own after the first
    one (their row: "")."""
    if passages is None:
        return messages, ids
    at = 1 if messages and messages[0]["role"] == "system" else 0
    given: ChatMessage = {"role": "system", "content": passages}
    return [*messages[:at], given, *messages[at:]], [*ids[:at], "", *ids[at:]]


def offered(specs: Tools, delegation: bool) -> Tools:
    """The tools' definitions a model call is given: `specs`, and `delegate` when the loop
    may hand sub-tasks (`delegation`) and a sub-agent would have one of them to use."""
    names = [str(spec["function"]["name"]) for spec in specs]  # type: ignore[index]
    usable = delegate.for_sub_agents(names)
    if not delegation or not usable:
        return list(specs)
    return [*specs, delegate.spec(usable)]


def agent_note(instructions: str) -> str:
    """What the system message gains when tools are offered: the note on untrusted data and
    the tools' servers' `instructions` (fixed when the turn opened)."""
    return f"{AGENT_NOTE}\n\n{instructions}" if instructions else AGENT_NOTE


def given_by_message(
    messages: list[ChatMessage], tools: Tools, instructions: str, *, context: int | None
) -> list[list[ChatMessage]]:
    """What the model is given of each of `messages`, one list per message (a stored reply
    may become several messages, or none): compaction counts and cuts by stored message.
    With tools, the agent's note goes into the first system message, or before the first
    message (in its list) when there is none. `context`: the model's context (None: not
    known), which sets the budget of earlier tool results."""
    groups = as_sent_by_message(messages, bool(tools), context=context)
    if not tools:
        return groups
    note = agent_note(instructions)
    if not groups:  # (a chat with nothing in it yet, as the meter sees it)
        return [[{"role": "system", "content": note}]]
    first = groups[0]
    if first and first[0]["role"] == "system":
        groups[0] = [{**first[0], "content": f"{first[0]['content']}\n\n{note}"}, *first[1:]]
    else:
        groups[0] = [{"role": "system", "content": note}, *first]
    return groups


def given(
    messages: list[ChatMessage], tools: Tools, instructions: str, *, context: int | None
) -> list[ChatMessage]:
    """The messages a model call is given (`given_by_message`, one list)."""
    groups = given_by_message(messages, tools, instructions, context=context)
    return [message for group in groups for message in group]
