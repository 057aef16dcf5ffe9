"""The context meter's words (issue 42): used of the limit, "~" when estimated, and the
tooltip's parts; a model whose context is not known says where to give it."""

from __future__ import annotations

from desktop.context.meter import meter_text, meter_tooltip
from server.types import ContextJSON


def meter(**fields: object) -> ContextJSON:
    found: ContextJSON = {
        "model": "llama3.1:8b", "limit": 4096, "budget": 3552, "estimated": True,
        "used": 3100, "system": 100, "history": 2000, "tools": 300, "documents": 700,
        "messages": 12, "summarised": 0, "summary_id": None,
    }  # fmt: skip
    found.update(fields)  # type: ignore[typeddict-item]
    return found


def test_the_meter_says_what_is_used_of_the_context() -> None:
    assert meter_text(meter()) == "~3.1k / 4.1k tokens"
    assert meter_text(meter(estimated=False, limit=None)) == "3.1k tokens"
    tip = meter_tooltip(meter(summarised=6))
    assert "Your documents' passages: ~700 tokens (estimated: what your last question's" in tip
    assert "6 earlier messages are summarised (still shown)." in tip
    assert "Above 3,552 (the rest kept for the reply)" in tip


def test_a_context_not_known_says_where_to_give_it() -> None:
    tip = meter_tooltip(meter(limit=None, budget=None, documents=0))
    assert "nothing is summarised by itself" in tip and "the backend's Context column" in tip
    assert "documents" not in tip
