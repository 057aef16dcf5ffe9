"""A reply's badge says why it ended in plain words: a reply cut at "length" because the
model's context was full (the server's `usage.context_full`) is not "Cut at the length
limit", which means the reply's own max tokens."""

from __future__ import annotations

from desktop.client import ReplyEnd
from desktop.transcript.badges import CONTEXT_FULL_BADGE, badge_for
from server.types.chunks import CONTEXT_FULL


def test_a_reply_cut_by_a_full_context_says_so_and_suggests_compact_now() -> None:
    full = ReplyEnd("completed", finish_reason="length", usage={CONTEXT_FULL: 1, "x": 2})
    assert badge_for(full) == CONTEXT_FULL_BADGE
    assert CONTEXT_FULL_BADGE.startswith("Stopped: the model's context is full")
    assert "Compact now" in CONTEXT_FULL_BADGE


def test_a_reply_cut_at_its_max_tokens_says_the_length_limit() -> None:
    at_max = ReplyEnd("completed", finish_reason="length", usage={"completion_tokens": 5})
    assert badge_for(at_max) == "Cut at the length limit"
    assert badge_for(ReplyEnd("completed", finish_reason="length")) == "Cut at the length limit"
    assert badge_for(ReplyEnd("completed", finish_reason="stop", usage={CONTEXT_FULL: 1})) == ""
