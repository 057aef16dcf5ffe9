"""How much of a streaming reply one update of the transcript draws, and how often.

Updates come once a frame, each small: a budget of new text is laid out per update and a
larger burst is spread over the next frames. Fewer, larger updates (40 ms, 3,000
characters) made 2-6 ms updates that, with a busy machine, stalled frames past 16 ms (issue
16, docs/benchmarks.md). The budget follows the time updates take: halved when one takes
longer than FLUSH_TARGET_S (a slow machine, a busy one, costly Markdown), grown again a
little at a time while they are quick, up to 1,000 (a ceiling of 4,000 measured worse with
a competing process: 7/9 max-rate replies over 16 ms, against 4/9; 2,000 again after the
fifth pass, p99 frame gap 9.6-9.9 ms against 8.2-8.8). A burst bigger than the budget goes
on CATCH_UP_MS later, not at once: two updates in one frame made half of the frame gaps
over 8 ms.
"""

from __future__ import annotations

COALESCE_MS = 16
CATCH_UP_MS = 6
FLUSH_BUDGET_CHARS = 1000  # to begin with
FLUSH_MIN_CHARS, FLUSH_MAX_CHARS = 250, 1000
FLUSH_TARGET_S = 0.004


def next_budget(budget: int, took: float, full: bool) -> int:
    """The next update's budget of characters: half after an update slower than the target,
    a quarter more after a quick one that had more text waiting than it could take."""
    if took > FLUSH_TARGET_S:
        return max(FLUSH_MIN_CHARS, budget // 2)
    if full and took < FLUSH_TARGET_S / 2:
        return min(FLUSH_MAX_CHARS, budget + budget // 4)
    return budget
