"""Compaction that loses nothing: when a turn's prompt would not fit the model's
context, the oldest part of the conversation is summarised by the chat's own model, and the
summary is given to the model in place of those messages from then on.

Nothing is deleted or hidden: the messages stay in the chat, shown, searched and exported; the
summary is stored beside them (server/storage/summaries.py) and drawn as a marker the user can
read, edit or undo. The summarising is a model call of the turn itself (a loop of its own in
the turn's tree, server/agent/tree.py), so the turn's one Stop ends it, and a stopped one
saves nothing: the chat stays as it was. A part too long for one summarising call is read in
rounds, each a call of the same kind that fits the model's context (server/agent/
transcript.py). The system prompt stays first; the summary is added to it (a single system
message, which every chat template takes).
"""

from __future__ import annotations

import dataclasses
import logging
import time
from dataclasses import dataclass
from typing import Protocol

from server.agent import cost, prompt
from server.agent.buffer import ReplyBuffer
from server.agent.feed import Compaction
from server.agent.provenance import Provenance
from server.agent.transcript import lines_of, next_round, plan, unread_note
from server.agent.tree import Node, Spawn
from server.errors import ParleyError
from server.models.base import ChatRequest
from server.models.context import MESSAGE_OVERHEAD, estimate_tokens, prompt_budget
from server.models.registry import ModelEntry
from server.types import ChatMessage, SummaryJSON

log = logging.getLogger(__name__)

INSTRUCTIONS = (
    "You write the memory of a conversation for an assistant that will go on with it and no "
    "longer sees its start. Summarise the conversation below. Keep, word for word, every fact "
    "the user gave (names, numbers, codes, dates, places, preferences), every decision, every "
    "question still open, and what each tool call found. Write plain sentences, no preamble."
)
OPENING_HEADING = "How the conversation began, word for word:"
LATER_HEADING = "What followed, summarised:"
KEEP = 0.5  # after compacting, the prompt takes at most this share of its room
UNKNOWN_CONTEXT = 8_192  # what "Compact now" assumes of a model whose context is not known


class History(Protocol):
    """What a stored turn's prompt is made of (server/turns/sinks.py)."""

    @property
    def prompt_ids(self) -> list[str]:
        """Each prompt message's stored row ("": the system prompt, passages)."""
        ...

    @property
    def system(self) -> str | None: ...

    @property
    def summary(self) -> SummaryJSON | None: ...

    async def save_summary(self, through_id: str, content: str) -> SummaryJSON | None: ...


@dataclass(frozen=True)
class Cut:
    first: int  # the first message of the history
    last: int  # the last message summarised (a reply)


class Compactor:
    def __init__(self, node: Node, model: ModelEntry, spawn: Spawn) -> None:
        """`node`: the loop whose prompt is compacted; `model`: its, which summarises;
        `spawn` makes each summarising loop."""
        self._node = node
        self._model = model
        self._spawn = spawn

    async def fit(
        self,
        request: ChatRequest,
        history: History,
        tools: list[dict[str, object]],
        *,
        context: int | None,
        force: bool = False,
        instructions: str = "",
    ) -> ChatRequest:
        """The request, compacted if it would not fit the model's context. A compaction that
        gives nothing (an empty summary, nothing old enough to summarise) leaves it as it was
        (the backend then fits what it can: server/models/context.py)."""
        backend = self._model.backend
        known = context  # the model's context, read once for the turn (None: not known)
        messages = request.messages
        ids = history.prompt_ids
        if (known is None and not force) or len(ids) != len(messages):
            return request
        context = known or UNKNOWN_CONTEXT
        budget = prompt_budget(context, request.max_tokens)
        # Counted as the model is given it (server/agent/prompt.py), with the context meter's
        # counter (server/agent/cost.py).
        groups = prompt.given_by_message(messages, tools, instructions, context=known)
        counted, _ = await cost.count(backend, [m for group in groups for m in group], tools)
        costs: list[int] = []
        at = 0
        for group in groups:  # each stored message's cost: of all it is given as
            costs.append(sum(counted.messages[at : at + len(group)]))
            at += len(group)
        if counted.used <= budget and not force:
            return request
        summary_tokens = self._node.limits.compaction.summary_tokens
        target = -1 if force else int(budget * KEEP) - summary_tokens - counted.tools
        cut = _cut(messages, ids, costs, target)
        if cut is None:
            return request
        summarised = messages[cut.first : cut.last + 1]  # as stored: each result cut short
        opening, later = _split(history.summary["content"] if history.summary else None)
        if opening is None:  # the first compaction: the opening is kept word for word
            opening, taken = _opening(summarised, self._node.limits.compaction.opening_chars)
            summarised = summarised[taken:]
        try:
            said = await self._summarise(summarised, later, context) if summarised else ""
        except ParleyError as exc:  # the turn goes on: the backend fits what it can
            log.warning("run %s: could not summarise earlier messages: %s", self._node.id, exc)
            said = ""
        summary = _joined(opening, said) if said or not summarised else ""
        if not summary:
            self._node.buffer.publish(Compaction("failed", None))
            return request
        if self._node.tree.stopping:
            # Stopped as the last round gave its model back: the write below would be queued
            # before the stop's cancellation reaches an await, and a stopped compaction saves
            # nothing.
            return request
        saved = await history.save_summary(ids[cut.last], summary)
        if saved is None:
            return request
        self._node.buffer.publish(Compaction("done", saved))
        # The system message is made again, with the new summary.
        base = [*messages[: cut.first], *messages[cut.last + 1 :]]
        # (the first message is it when the chat has a system prompt, a memory or a summary)
        had_system = bool(history.system or history.summary)
        text = prompt.system_text(history.system, None, summary)
        given, _ = prompt.with_system(base, [""] * len(base), had_system, text)
        return dataclasses.replace(request, messages=given)

    async def _summarise(
        self, messages: list[ChatMessage], previous: str | None, context: int
    ) -> str:
        """The summary of `messages` (after `previous`, the summary in force, if any) by the
        chat's model: in rounds, each a loop of the turn's tree (the turn's stop ends it)
        going on from the summary the one before wrote. "" when stopped or when a round
        gave no summary. Raises PromptTooLongError when the context leaves no room."""
        node = self._node
        node.buffer.publish(Compaction("running", None))
        backend = self._model.backend
        limits = node.limits.compaction

        async def count(texts: list[str]) -> list[int]:
            counts, _ = await backend.count_tokens(texts)
            return counts

        # What a summarising call's transcript may take: the context less the room kept
        # for the answer, the instructions, and each message's wrapping.
        (instructions,) = await count([INSTRUCTIONS])
        room = prompt_budget(context, limits.summary_tokens) - instructions - 2 * MESSAGE_OVERHEAD
        planned = await plan(lines_of(messages, limits), previous, count, room, limits)
        summary, start, number = previous, 0, 0
        while start < len(planned.lines):
            if node.tree.stopping:
                return ""
            transcript, start = await next_round(summary, planned, start, count, room)
            number += 1
            rounds = max(planned.rounds, number)  # (the plan's most: never fewer than read)
            node.buffer.publish(Compaction("running", None, number, rounds))
            said = await self._round(transcript, f"{node.id}/compaction/{number}", number, rounds)
            if not said:
                return ""
            summary = said
        if summary and planned.left_out:
            summary = f"{summary}\n\n{unread_note(planned.left_out)}"
        return summary or ""

    async def _round(self, transcript: str, loop_id: str, number: int, rounds: int) -> str:
        """One summarising call (round `number` of `rounds`): its summary, "" when stopped
        or empty. While it is written, how long it is so far is told at most once every
        `progress_interval`: a round on a slow engine takes tens of seconds."""
        node = self._node
        interval = node.limits.compaction.progress_interval
        told = time.monotonic()

        def grew() -> None:
            nonlocal told
            now = time.monotonic()
            if now - told >= interval:
                told = now
                tokens = estimate_tokens(buffer.text)
                node.buffer.publish(Compaction("running", None, number, rounds, tokens))

        buffer = ReplyBuffer(node.limits.max_reply_chars, on_change=grew, forward=_ignore)
        # One model call, on the chat's model; it reads only the transcript it is given.
        limits = dataclasses.replace(node.limits, max_steps=1)
        child = self._spawn(node.below(loop_id, buffer, limits, Provenance()), self._model, None)
        prompt: list[ChatMessage] = [
            {"role": "system", "content": INSTRUCTIONS},
            {"role": "user", "content": transcript},
        ]
        max_tokens = node.limits.compaction.summary_tokens
        request = ChatRequest(prompt, max_tokens=max_tokens, temperature=0.0)
        finished = await child.run(request, None)
        return buffer.text.strip() if finished is not None else ""


def _opening(messages: list[ChatMessage], most: int) -> tuple[str, int]:
    """The conversation's first question and reply, word for word (each up to
    `most` characters): what a chat sets up at its start (who, what, the task)
    is kept as it was said, as an engine keeps a context's first tokens. Returns it, and how
    many messages it took."""
    lines: list[str] = []
    taken = 0
    for message in messages[:2]:
        who = {"user": "User", "assistant": "Assistant"}.get(message["role"])
        if who is None or (taken == 1 and message["role"] != "assistant"):
            break
        said = message["content"]
        if len(said) > most:
            said = said[:most] + " …"
        lines.append(f"{who}: {said}")
        taken += 1
    return "\n".join(lines), taken


def _split(content: str | None) -> tuple[str | None, str | None]:
    """A summary in force as (its opening, the rest); (None, all of it) when it has no
    opening (edited by the user into their own words)."""
    if not content:
        return None, None
    if not content.startswith(OPENING_HEADING + "\n"):
        return None, content
    body = content[len(OPENING_HEADING) + 1 :]
    opening, _, later = body.partition(f"\n\n{LATER_HEADING}\n")
    return opening, later or None


def _joined(opening: str, later: str) -> str:
    parts = [f"{OPENING_HEADING}\n{opening}"] if opening else []
    if later:
        parts.append(f"{LATER_HEADING}\n{later}")
    return "\n\n".join(parts)


def _cut(messages: list[ChatMessage], ids: list[str], costs: list[int], target: int) -> Cut | None:
    """The fewest oldest messages to summarise so that the rest costs at most `target`: up to
    a reply that a question follows, never the turn's own question (the last message)."""
    stored = [index for index, mid in enumerate(ids) if mid]
    if not stored:
        return None
    first = stored[0]
    last_ok: int | None = None
    remaining = sum(costs)
    for index in range(first, len(messages) - 1):
        remaining -= costs[index]
        ends_reply = messages[index]["role"] == "assistant" and ids[index]
        if ends_reply and messages[index + 1]["role"] == "user":
            last_ok = index
            if remaining <= target:
                break
    return Cut(first, last_ok) if last_ok is not None else None


def _ignore(_item: object) -> None:
    return None
