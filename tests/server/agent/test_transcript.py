"""The summariser's transcript (server/agent/transcript.py): the lines to summarise in one
round when it keeps each its share, else in as few rounds as do, never more than allowed,
every round's text within the room it is counted against."""

from __future__ import annotations

import anyio
import pytest

from server.agent.transcript import (
    PREVIOUS_HEADING,
    SEPARATOR,
    Count,
    Plan,
    level,
    next_round,
    plan,
)
from server.errors import PromptTooLongError
from server.limits import CompactionLimits
from server.models.context import estimate_tokens

LIMITS = CompactionLimits()
ROOM = 3_000  # tokens a round's text may take
SAID = "A summary so far."  # what each round's model call answers


async def estimated(texts: list[str]) -> list[int]:
    return [estimate_tokens(text) for text in texts]


def uneven_count(text: str) -> int:
    """A tokenizer that finds more in the joined text than in its lines counted apart (a
    separator takes more tokens than planned)."""
    return estimate_tokens(text) + 4 * text.count(SEPARATOR)


async def uneven(texts: list[str]) -> list[int]:
    return [uneven_count(text) for text in texts]


def lines(count: int, chars: int) -> list[str]:
    return [f"User: message {index} " + "x" * chars + f" end {index}" for index in range(count)]


def rounds_of(
    given: list[str], previous: str | None = None, count: Count = estimated
) -> tuple[list[str], Plan]:
    """Each round's text, as compaction makes them, and the plan."""

    async def main() -> tuple[list[str], Plan]:
        made = await plan(given, previous, count, ROOM, LIMITS)
        texts: list[str] = []
        start, summary = 0, previous
        while start < len(made.lines):
            text, start = await next_round(summary, made, start, count, ROOM)
            texts.append(text)
            summary = SAID
        return texts, made

    return anyio.run(main)


def read_in_order(texts: list[str], indexes: range) -> bool:
    read = SEPARATOR.join(texts)
    places = [read.find(f" end {index}\n") for index in indexes[:-1]]
    return -1 not in places and places == sorted(places) and read.endswith(f" end {indexes[-1]}")


def test_lines_that_fit_one_round_are_read_whole_in_one() -> None:
    given = lines(10, 600)
    texts, made = rounds_of(given)
    assert texts == [SEPARATOR.join(given)] and made.rounds == 1


def test_one_round_while_it_keeps_each_line_its_share() -> None:
    texts, made = rounds_of(lines(100, 600))  # ~210 tokens each: cut to ~29 in one round
    assert len(texts) == 1 and made.left_out == 0
    kept = texts[0].split(SEPARATOR)
    assert len(kept) == 100 and min(estimate_tokens(k) for k in kept) >= LIMITS.line_share
    assert read_in_order(texts, range(100))


def test_a_long_chat_takes_as_few_rounds_as_keep_each_line_its_share() -> None:
    texts, made = rounds_of(lines(300, 600))  # one round would keep ~9 tokens of each
    assert made.left_out == 0 and 1 < len(texts) <= made.rounds < LIMITS.max_rounds
    assert all(estimate_tokens(text) <= ROOM for text in texts)
    assert all(text.startswith(f"{PREVIOUS_HEADING}\n{SAID}") for text in texts[1:])
    kept = [line for text in texts for line in text.split(SEPARATOR) if line.startswith("User")]
    assert len(kept) == 300 and min(estimate_tokens(k) for k in kept) >= LIMITS.line_share - 1
    assert read_in_order(texts, range(300))


def test_too_many_lines_for_the_rounds_leave_out_the_oldest_and_say_so() -> None:
    texts, made = rounds_of(lines(3_000, 300))
    assert len(texts) <= LIMITS.max_rounds and 0 < made.left_out < 3_000
    assert texts[0].startswith(f"[{made.left_out:,} older messages are left out")
    assert all(estimate_tokens(text) <= ROOM for text in texts)
    assert read_in_order(texts, range(made.left_out, 3_000))
    assert f" end {made.left_out - 1}\n" not in SEPARATOR.join(texts)


def test_a_round_counted_over_its_room_is_cut_until_it_fits() -> None:
    # Planned with per-line counts; a tokenizer finding more in the joined text is met by
    # cutting the round's lines further, not by sending more than the room.
    texts, _ = rounds_of(lines(300, 600), count=uneven)
    assert all(uneven_count(text) <= ROOM for text in texts)
    assert read_in_order(texts, range(300))


def test_a_long_summary_in_force_takes_at_most_half_a_round() -> None:
    texts, _ = rounds_of(lines(5, 100), previous="y" * 30_000)
    (text,) = texts
    assert estimate_tokens(text) <= ROOM and text.count("User: message") == 5
    assert text.startswith(f"{PREVIOUS_HEADING}\nyyy")


def test_a_room_that_holds_nothing_is_refused() -> None:
    with pytest.raises(PromptTooLongError):
        anyio.run(plan, lines(300, 600), None, estimated, 40, LIMITS)


def test_level_keeps_short_sizes_whole_and_shares_the_rest() -> None:
    assert level([10, 20, 30], 100) == 30
    assert level([10, 50, 50], 70) == 30
    assert level([5, 5, 5], 0) == 0
