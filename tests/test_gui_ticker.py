"""bench/gui_ticker.py takes the VM's pauses out of the frame gaps it measured: what is left
is what the app may have caused, for the longest stall and for the p99 gap alike."""

from __future__ import annotations

import pytest

from bench.gui_ticker import Gap, Ticker, p99
from bench.vm_pauses import Pause


def ticked(gaps_ms: list[float]) -> Ticker:
    """A ticker that measured these gaps, one after the other from t = 100 s (its timer and
    clocks left out: what it measured is all that is read)."""
    ticker = Ticker.__new__(Ticker)
    ticker.details = []
    end = 100.0
    for ms in gaps_ms:
        end += ms / 1000
        ticker.details.append(Gap(end, ms, ran_ms=0.0, stolen_ms=0.0))
    return ticker


def test_p99_is_the_gap_below_which_99_in_100_fall() -> None:
    assert p99([5.0] * 99 + [30.0]) == 5.0
    assert p99([5.0] * 98 + [30.0, 40.0]) == 30.0
    assert p99([7.0]) == 7.0


def test_the_p99_gap_less_pauses_takes_each_gaps_longest_paused_core_out() -> None:
    gaps = [5.0] * 90 + [15.0] * 10  # the p99 is a 15 ms gap
    ticker = ticked(gaps)
    assert p99(ticker.gaps) == 15.0
    long_gaps = [gap for gap in ticker.details if gap.ms == 15.0]
    pauses = []
    for gap in long_gaps:
        start = gap.end - gap.ms / 1000
        # 9 ms of cpu 0 and 4 ms of cpu 1 paused: the longer one is taken out.
        pauses.append(Pause(0, start + 0.001, start + 0.010))
        pauses.append(Pause(1, start + 0.002, start + 0.006))
    pauses.append(Pause(0, 50.0, 50.5))  # long before: counts for nothing
    assert ticker.p99_less_pauses(pauses) == pytest.approx(6.0)
    # One 15 ms gap in 100 with no pause in it leaves the p99 at 6 ms; two, at 15 ms.
    assert ticker.p99_less_pauses(pauses[2:]) == pytest.approx(6.0)
    assert ticker.p99_less_pauses(pauses[4:]) == 15.0
    assert ticker.p99_less_pauses([]) == 15.0


def test_a_stall_less_pauses_is_what_is_left_of_it_and_never_below_none() -> None:
    ticker = ticked([5.0] * 10 + [20.0, 15.0, 12.0])
    twenty, fifteen, _ = ticker.details[-3:]
    pauses = [
        Pause(1, twenty.end - 0.010, twenty.end - 0.006),  # 4 ms of the 20 ms gap
        Pause(0, fifteen.end - 0.016, fifteen.end + 0.001),  # all of the 15 ms gap, and more
    ]
    found = ticker.less_pauses(pauses)
    # Longest first; only stalls over half the goal (8 ms) are looked at: not the 12 ms gap's.
    assert [(round(left, 6), gap.ms) for left, gap, _ in found] == [(11.0, 20.0), (0.0, 15.0)]
