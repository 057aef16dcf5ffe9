"""How much of a streaming reply one update draws follows the time updates take."""

from __future__ import annotations

from desktop.widgets.transcript.pacing import (
    FLUSH_BUDGET_CHARS,
    FLUSH_MAX_CHARS,
    FLUSH_MIN_CHARS,
    FLUSH_TARGET_S,
    next_budget,
)


def test_the_text_laid_out_per_update_follows_the_time_updates_take() -> None:
    slow, quick = FLUSH_TARGET_S * 2, FLUSH_TARGET_S / 4
    assert next_budget(1000, slow, full=True) == 500
    assert next_budget(FLUSH_MIN_CHARS, slow, full=True) == FLUSH_MIN_CHARS
    assert next_budget(500, quick, full=True) == 625
    assert next_budget(FLUSH_MAX_CHARS, quick, full=True) == FLUSH_MAX_CHARS
    assert next_budget(500, quick, full=False) == 500  # nothing more was waiting
    assert FLUSH_MIN_CHARS <= FLUSH_BUDGET_CHARS <= FLUSH_MAX_CHARS
