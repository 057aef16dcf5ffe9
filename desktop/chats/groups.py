"""Chats grouped by when they were last active, as the sidebar shows them: Today, Yesterday,
Previous 7 days, Previous 30 days, then each month of this year ("November 2026"), then each
earlier year ("2025"), newest group first.

No Qt: the sidebar of today (a list widget) and a later one draw the same groups. Days are
calendar days where "now" is: a chat at 23:50 was yesterday at 00:10. "now" carries the time
zone; a naive "now" means the computer's own zone, with its daylight-saving rules (what
`local_now` gives), so a chat from before a clock change still falls on its own day.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Sequence
from datetime import date, datetime, time, timedelta
from typing import NamedTuple, TypeVar

T = TypeVar("T")

TODAY = "Today"
YESTERDAY = "Yesterday"
WEEK = "Previous 7 days"
MONTH = "Previous 30 days"
MONTHS = (
    "January", "February", "March", "April", "May", "June", "July", "August", "September",
    "October", "November", "December",
)  # fmt: skip  # English, as every word of the app (not the system's locale)
WEEK_DAYS = 7  # a chat at most this many days ago (and before yesterday): Previous 7 days
MONTH_DAYS = 30


class Group(NamedTuple):
    """One group's header and the place it sorts at (smaller first)."""

    label: str
    rank: tuple[int, int]


def local_now() -> datetime:
    """Now on the computer's clock, in its own zone (naive: see the module's docstring)."""
    return datetime.now()


def start_of(day: date, now: datetime) -> float:
    """The moment `day` begins where `now` is, in seconds since the epoch."""
    return datetime.combine(day, time(), now.tzinfo).timestamp()


class Calendar:
    """The groups as they are at `now`: where each begins, found for a chat by bisection
    (a list of 1,000 chats is grouped at every change to it, on the window's thread)."""

    def __init__(self, now: datetime) -> None:
        self._now = now
        today = now.date()
        named = [(0, Group(TODAY, (0, 0))), (1, Group(YESTERDAY, (1, 0)))]
        named += [(WEEK_DAYS, Group(WEEK, (2, 0))), (MONTH_DAYS, Group(MONTH, (3, 0)))]
        starts = [(start_of(today - timedelta(days=days), now), group) for days, group in named]
        # This year's months before those 30 days; before this year, each year on its own.
        for month in range(today.month, 0, -1):
            begins = start_of(date(today.year, month, 1), now)
            if begins < starts[-1][0]:
                starts.append((begins, Group(f"{MONTHS[month - 1]} {today.year}", (4, -month))))
        self._starts = [-begins for begins, _ in starts]  # ascending, for bisect
        self._groups = [group for _, group in starts]

    def group(self, at: float) -> Group:
        """The group of a chat last active at `at` (seconds since the epoch). A moment after
        now (a clock set back since) is today."""
        place = bisect.bisect_left(self._starts, -at)
        if place < len(self._groups):
            return self._groups[place]
        year = datetime.fromtimestamp(at, self._now.tzinfo).year
        return Group(str(year), (5, -year))


def group_of(at: float, now: datetime) -> Group:
    """The group, at `now`, of a chat last active at `at` (seconds since the epoch)."""
    return Calendar(now).group(at)


def grouped(
    chats: Sequence[T], at: Callable[[T], float], now: datetime
) -> list[tuple[str, list[T]]]:
    """The chats in their groups, newest group first, each group's chats in the order given
    (newest first for the whole list, best match first for a search's). Only groups with a
    chat are returned."""
    calendar = Calendar(now)
    groups: dict[Group, list[T]] = {}
    for chat in chats:
        groups.setdefault(calendar.group(at(chat)), []).append(chat)
    return [(group.label, groups[group]) for group in sorted(groups, key=lambda g: g.rank)]


def seconds_to_next_day(now: datetime) -> float:
    """How long until the next midnight where `now` is, when the groups change."""
    midnight = datetime.combine(now.date() + timedelta(days=1), time(), now.tzinfo)
    return max(0.0, midnight.timestamp() - now.timestamp())
