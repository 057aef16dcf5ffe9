"""The sidebar's date groups, from a chat's last activity and a fixed "now" in a time zone."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

from desktop.chats.groups import group_of, grouped, seconds_to_next_day

PARIS = ZoneInfo("Europe/Paris")
NOW = datetime(2026, 11, 20, 9, 30, tzinfo=PARIS)


def at(*when: int, zone: ZoneInfo = PARIS) -> float:
    return datetime(*when, tzinfo=zone).timestamp()  # type: ignore[misc]


@pytest.mark.parametrize(
    ("moment", "label"),
    [
        ((2026, 11, 20, 9, 29), "Today"),
        ((2026, 11, 20, 0, 0), "Today"),  # the first moment of the day
        ((2026, 11, 19, 23, 59, 59), "Yesterday"),  # its last
        ((2026, 11, 19, 0, 0), "Yesterday"),
        ((2026, 11, 18, 23, 59), "Previous 7 days"),
        ((2026, 11, 13, 0, 0), "Previous 7 days"),  # 7 days ago
        ((2026, 11, 12, 23, 59), "Previous 30 days"),  # 8 days ago
        ((2026, 10, 21, 0, 0), "Previous 30 days"),  # 30 days ago
        ((2026, 10, 20, 23, 59), "October 2026"),  # 31 days ago
        ((2026, 10, 1, 0, 0), "October 2026"),
        ((2026, 9, 30, 23, 59), "September 2026"),
        ((2026, 1, 1, 0, 0), "January 2026"),
        ((2025, 12, 31, 23, 59), "2025"),  # the year before: by year
        ((2019, 6, 1, 12, 0), "2019"),
    ],
)
def test_a_chat_falls_in_the_group_of_its_local_day(moment: tuple[int, ...], label: str) -> None:
    assert group_of(at(*moment), NOW).label == label


def test_a_moment_after_now_is_today() -> None:
    assert group_of(NOW.timestamp() + 86_400 * 3, NOW).label == "Today"


def test_in_january_last_december_is_its_year_and_the_30_days_cross_the_new_year() -> None:
    now = datetime(2027, 1, 10, 12, 0, tzinfo=PARIS)
    assert group_of(at(2026, 12, 20, 12, 0), now).label == "Previous 30 days"
    assert group_of(at(2026, 12, 11, 0, 0), now).label == "Previous 30 days"  # 30 days ago
    assert group_of(at(2026, 12, 10, 23, 59), now).label == "2026"  # 31: not "December 2026"
    assert group_of(at(2027, 1, 9, 23, 0), now).label == "Yesterday"


def test_the_day_is_the_one_where_now_is() -> None:
    moment = at(2026, 11, 20, 1, 0, zone=ZoneInfo("Asia/Tokyo"))  # 2026-11-19 17:00 in Paris
    tokyo = datetime(2026, 11, 20, 9, 0, tzinfo=ZoneInfo("Asia/Tokyo"))
    assert group_of(moment, tokyo).label == "Today"
    assert group_of(moment, tokyo.astimezone(PARIS)).label == "Yesterday"  # the same instant
    new_york = tokyo.astimezone(ZoneInfo("America/New_York"))  # 2026-11-19 19:00 there
    assert group_of(moment, new_york).label == "Today"  # 11:00 that day in New York


def test_days_keep_their_bounds_across_a_clock_change() -> None:
    # Paris goes back from summer time on 2026-10-25: that day has 25 hours.
    now = datetime(2026, 10, 26, 0, 30, tzinfo=PARIS)
    assert group_of(at(2026, 10, 25, 23, 59), now).label == "Yesterday"
    assert group_of(at(2026, 10, 25, 0, 1), now).label == "Yesterday"
    assert group_of(at(2026, 10, 24, 23, 59), now).label == "Previous 7 days"
    assert group_of(at(2026, 10, 26, 0, 0), now).label == "Today"


def test_groups_come_newest_first_only_when_a_chat_is_in_them_keeping_the_order_given() -> None:
    chats = [
        ("best match, last year", at(2025, 3, 1, 12, 0)),
        ("today", at(2026, 11, 20, 8, 0)),
        ("march", at(2026, 3, 3, 12, 0)),
        ("today, earlier but second", at(2026, 11, 20, 9, 0)),
        ("yesterday", at(2026, 11, 19, 8, 0)),
        ("february", at(2026, 2, 3, 12, 0)),
    ]
    groups = grouped(chats, lambda chat: chat[1], NOW)
    assert [(label, [name for name, _ in members]) for label, members in groups] == [
        ("Today", ["today", "today, earlier but second"]),  # a search's rank kept
        ("Yesterday", ["yesterday"]),
        ("March 2026", ["march"]),
        ("February 2026", ["february"]),
        ("2025", ["best match, last year"]),
    ]
    assert grouped([], lambda chat: 0.0, NOW) == []


def test_the_groups_change_next_at_midnight_where_now_is() -> None:
    assert seconds_to_next_day(datetime(2026, 11, 20, 23, 59, 30, tzinfo=PARIS)) == 30
    # Spring forward in New York on 2026-03-08: that day has 23 hours.
    new_york = ZoneInfo("America/New_York")
    assert seconds_to_next_day(datetime(2026, 3, 8, 0, 0, tzinfo=new_york)) == 23 * 3600
    naive = datetime(2026, 11, 20, 12, 0)  # the computer's own zone
    assert 0 < seconds_to_next_day(naive) <= 13 * 3600
