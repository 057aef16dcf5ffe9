"""What the summariser reads (server/agent/compaction.py): the messages to summarise as the
lines of a transcript, in rounds that each fit the model's context.

A chat far longer than the context (an import, a model with a smaller context than the
chat's last one) cannot be read in one call. Its lines are read in rounds, oldest first,
each round given the summary the one before wrote; a line too long for its share keeps its
start and its end. Every count is made with the backend's own counter (the one the turn
fits its prompt with), and each round's text is counted again before its call: nothing is
sent that the model would refuse. When even the shortest cuts would need more rounds than
allowed, the oldest lines are left out, and the transcript says how many.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from server.errors import PromptTooLongError
from server.limits import CompactionLimits
from server.models.context import estimate_tokens
from server.types import ChatMessage

Count = Callable[[list[str]], Awaitable[list[int]]]  # each text's tokens, by the backend

SEPARATOR = "\n\n"
SEPARATOR_TOKENS = 1  # between two lines (a count on the high side: "\n\n" is one token)
PREVIOUS_HEADING = "Summary of what came before:"
LESS = 0.95  # each further try at a fit asks this much less than the last
ATTEMPTS = 8  # of a round's text, counted again after each further cut


@dataclass(frozen=True)
class Plan:
    lines: list[str]  # oldest first, cut to their share; a note first when some are left out
    tokens: list[int]  # what each line takes of a round, its separator included
    carry: int  # the most the summary a round goes on from may take
    rounds: int  # the most rounds that read them all (fewer when the summaries are short)
    left_out: int  # the oldest lines no round reads


def lines_of(messages: list[ChatMessage], limits: CompactionLimits) -> list[str]:
    """The messages as the transcript's lines: who said what, and what each tool call found
    (its result's start). Passages of documents given for one question are not lines."""
    lines: list[str] = []
    for message in messages:
        who = {"user": "User", "assistant": "Assistant"}.get(message["role"])
        if who is None:
            continue
        said = message["content"]
        for part in message.get("parts", []):
            if part["type"] == "tool":
                result = (part.get("result") or "")[: limits.result_chars]
                said += f"\n[used the tool {part['name']}: {result}]"
        lines.append(f"{who}: {said}")
    return lines


def header(summary: str | None) -> str | None:
    """The summary a round goes on from, as the first line of its text."""
    return f"{PREVIOUS_HEADING}\n{summary}" if summary else None


def left_out_note(count: int) -> str:
    return (
        f"[{count:,} older messages are left out here, too many to read; the summary above "
        "covers what came before them, if any.]"
    )


def unread_note(count: int) -> str:
    """Said in the summary itself: the user reads it, and so does the model."""
    return (
        f"({count:,} older messages were too many to read for this summary; they are still "
        "in the chat.)"
    )


async def plan(
    lines: list[str], previous: str | None, count: Count, room: int, limits: CompactionLimits
) -> Plan:
    """The lines to read in at most `limits.max_rounds` rounds, for calls whose text may take
    `room` tokens, each beside the summary it goes on from (`previous` for the first).

    One round when it keeps `limits.line_share` tokens of each line (or each whole); else as
    few rounds as keep that share, each line then keeping as much as they hold (the same most
    for every line, the short ones whole). When even the most rounds cannot keep that share,
    each line keeps no less than `limits.line_floor` tokens, and the oldest lines that still
    do not fit are left out. Raises PromptTooLongError when `room` holds no round at all."""
    if not lines:
        return Plan([], [], 0, 0, 0)
    first = header(previous)
    tokens = await count([*lines, first or ""])
    carried = min(tokens.pop(), room // 2)
    seps = SEPARATOR_TOKENS * len(tokens)
    most = level(tokens, room - carried - seps)
    if most >= min(limits.line_share, max(tokens)):  # one round is enough
        return _made(lines, tokens, most, carried, 1, 0)
    # A later round goes on from the summary the one before wrote: counted by this counter,
    # it may take more than the `summary_tokens` the model kept to; never more than half.
    carry = min(room // 2, max(carried, limits.summary_tokens + limits.summary_tokens // 2))
    # And the first may say how many lines are left out.
    room -= carry + estimate_tokens(left_out_note(len(lines))) + SEPARATOR_TOKENS
    if room <= limits.line_floor + SEPARATOR_TOKENS:
        raise PromptTooLongError("the model's context leaves no room to summarise in")
    wanted = [min(t, limits.line_share) + SEPARATOR_TOKENS for t in tokens]
    rounds, start = _packed(wanted, room, limits.max_rounds)
    least = limits.line_share if start == 0 else limits.line_floor
    total = room * rounds
    while True:
        most = level(tokens, total - seps)
        cap = min(max(most, least), room - SEPARATOR_TOKENS)
        costs = [min(t, cap) + SEPARATOR_TOKENS for t in tokens]
        made, start = _packed(costs, room, rounds)
        if start == 0 or cap <= least:
            break
        total = int(total * LESS)  # next-fit left room unused at a round's end: ask less
    return _made(lines[start:], tokens[start:], cap, carry, made, start)


async def next_round(
    summary: str | None, plan: Plan, start: int, count: Count, room: int
) -> tuple[str, int]:
    """The text of the round that reads `plan.lines` from `start`, going on from `summary`,
    and where the next round starts. It reads as many lines as its room holds beside the
    summary (cut to `plan.carry` if longer), so the rounds are never more than planned: each
    has at least the room the plan gave it."""
    head = header(summary)
    fixed = 0
    if head is not None:
        for _ in range(ATTEMPTS):
            (fixed,) = await count([head])
            if fixed <= plan.carry:
                break
            head = cut(head, int(len(head) * plan.carry / fixed * LESS))
    end, used = start, fixed
    while end < len(plan.lines) and used + plan.tokens[end] <= room:
        used += plan.tokens[end]
        end += 1
    end = max(end, start + 1)
    return await fitted(head, plan.lines[start:end], count, room), end


async def fitted(head: str | None, lines: list[str], count: Count, room: int) -> str:
    """A round's text: `head` (the summary it goes on from, as its first line), then its
    lines, counted at most `room` tokens; the lines are cut further (the longest first)
    while it does not fit. Raises PromptTooLongError if nothing fits."""
    fixed = 0  # the head's tokens
    if head is not None:
        (fixed,) = await count([head])
    sizes = [len(line) for line in lines]
    chars = sum(sizes)
    text = ""
    tokens = 0
    for _ in range(ATTEMPTS):
        kept = [cut(line, level(sizes, chars)) for line in lines]
        text = SEPARATOR.join([head, *kept] if head is not None else kept)
        (tokens,) = await count([text])
        if tokens <= room:
            return text
        # The lines' share of what is over, taken from the longest ones.
        ratio = max(room - fixed, 0) / max(tokens - fixed, 1)
        chars = int(min(chars, sum(len(line) for line in kept)) * ratio * LESS)
    raise PromptTooLongError(
        f"the text to summarise does not fit the model's context: {tokens} tokens, at most "
        f"{room} fit with room for the summary"
    )


def level(sizes: list[int], total: int) -> int:
    """The most each size may keep so that together they keep at most `total` (the sizes
    under it kept whole): the largest cap with sum(min(size, cap)) <= total."""
    if sum(sizes) <= total:
        return max(sizes, default=0)
    left = max(total, 0)
    ordered = sorted(sizes)
    for index, size in enumerate(ordered):
        share = left // (len(ordered) - index)
        if size > share:
            return share
        left -= size
    return ordered[-1]  # not reached: the sum is over `total`


def cut(line: str, most: int) -> str:
    """The line's start and end within `most` characters, the middle marked as left out."""
    if len(line) <= most:
        return line
    half = max(most - 3, 2) // 2
    return f"{line[:half]} … {line[len(line) - half :]}"


def _made(
    lines: list[str], tokens: list[int], cap: int, carry: int, rounds: int, left_out: int
) -> Plan:
    kept = [
        cut(line, len(line) * cap // t) if t > cap else line
        for line, t in zip(lines, tokens, strict=True)
    ]
    costs = [min(t, cap) + SEPARATOR_TOKENS for t in tokens]
    if left_out:
        note = left_out_note(left_out)
        kept.insert(0, note)
        costs.insert(0, estimate_tokens(note) + SEPARATOR_TOKENS)
    return Plan(kept, costs, carry, rounds, left_out)


def _packed(costs: list[int], room: int, rounds: int) -> tuple[int, int]:
    """How many runs of at most `room` the lines (by cost) take, filled from the newest back,
    at most `rounds`; and the first line in any run (the ones before it do not fit)."""
    made, used = 1, 0
    for index in range(len(costs) - 1, -1, -1):
        if used + costs[index] > room:
            if made == rounds:
                return made, index + 1
            made, used = made + 1, 0
        used += costs[index]
    return made, 0
