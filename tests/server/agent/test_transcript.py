"""The summariser's transcript (server/agent/transcript.py): the lines to summarise in as few
rounds as keep each its share, every round's text within the room it is counted against."""

from __future__ import annotations

import anyio
import pytest

from server.agent.transcript import PREVIOUS_HEADING, cut, fitted, level, plan
from server.errors import PromptTooLongError
from server.limits import CompactionLimits
from server.models.context import estimate_tokens

LIMITS = CompactionLimits()
ROOM = 3_000  # tokens a round's text may take


async def estimated(texts: list[str]) -> list[int]:
    return [estimate_tokens(text) for text in texts]


async def dense(texts: list[str]) -> list[int]:
    """A tokenizer that finds more tokens than the estimate (2 characters a token)."""
    return [-(-len(text) // 2) for text in texts]


def lines(count: int, chars: int) -> list[str]:
    return [f"User: message {index} " + "x" * chars + f" end {index}" for index in range(count)]


def run_plan(given: list[str], previous: str | None = None) -> tuple[list[list[str]], int]:
    async def main() -> tuple[list[list[str]], int]:
        made = await plan(given, previous, estimated, ROOM, LIMITS)
        return made.rounds, made.left_out

    return anyio.run(main)


def test_lines_that_fit_one_round_are_read_whole_in_one() -> None:
    given = lines(10, 600)
    rounds, left_out = run_plan(given)
    assert rounds == [given] and left_out == 0


def test_a_long_chat_takes_as_few_rounds_as_keep_each_line_its_share() -> None:
    given = lines(100, 600)  # ~200 tokens each, 20,000 in all
    rounds, left_out = run_plan(given)
    assert left_out == 0 and 1 < len(rounds) <= LIMITS.max_rounds
    read = [line for round_lines in rounds for line in round_lines]
    assert len(read) == len(given)  # every line, in order
    assert all(line.endswith(f" end {index}") for index, line in enumerate(read))
    assert min(estimate_tokens(line) for line in read) >= LIMITS.line_share - 2
    for round_lines in rounds:
        text = anyio.run(fitted, "A summary so far.", round_lines, estimated, ROOM)
        assert estimate_tokens(text) <= ROOM


def test_too_many_lines_for_the_rounds_leave_out_the_oldest_and_say_so() -> None:
    given = lines(3_000, 300)
    rounds, left_out = run_plan(given)
    assert len(rounds) == LIMITS.max_rounds and 0 < left_out < len(given)
    assert rounds[0][0].startswith(f"[{left_out:,} older messages are left out")
    read = [line for round_lines in rounds for line in round_lines][1:]
    assert len(read) == len(given) - left_out
    assert read[-1] == cut(given[-1], len(read[-1])) and read[-1].endswith(" end 2999")
    for round_lines in rounds:
        text = anyio.run(fitted, "A summary so far.", round_lines, estimated, ROOM)
        assert estimate_tokens(text) <= ROOM


def test_a_round_counted_over_its_room_is_cut_until_it_fits() -> None:
    given = lines(300, 600)
    rounds, _ = run_plan(given)  # planned with the estimate; a denser tokenizer counts more
    text = anyio.run(fitted, "A summary so far.", rounds[0], dense, ROOM)
    assert -(-len(text) // 2) <= ROOM
    assert text.startswith(f"{PREVIOUS_HEADING}\nA summary so far.")


def test_a_long_summary_in_force_takes_at_most_half_a_round() -> None:
    previous = "y" * 30_000
    text = anyio.run(fitted, previous, lines(5, 100), estimated, ROOM)
    assert estimate_tokens(text) <= ROOM and text.count("User: message") == 5


def test_a_room_that_holds_nothing_is_refused() -> None:
    with pytest.raises(PromptTooLongError):
        anyio.run(plan, lines(300, 600), None, estimated, 40, LIMITS)


def test_level_keeps_short_sizes_whole_and_shares_the_rest() -> None:
    assert level([10, 20, 30], 100) == 30
    assert level([10, 50, 50], 70) == 30
    assert level([5, 5, 5], 0) == 0
