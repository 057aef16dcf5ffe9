"""What the window says while earlier messages are summarised: how far it is, as the server
tells it (the round of those planned, the round's summary so far)."""

from __future__ import annotations

from desktop.replies.notes import SUMMARISING_NOTE, summarising_note


def test_the_summarising_note_says_the_round_of_those_planned_and_the_summary_so_far() -> None:
    assert summarising_note({"state": "running"}) == SUMMARISING_NOTE
    assert summarising_note({"state": "running", "round": 2, "rounds": 5}) == (
        "Summarising earlier messages… (2 of 5)"
    )
    told = summarising_note({"state": "running", "round": 2, "rounds": 5, "tokens": 1_180})
    assert told == "Summarising earlier messages… (2 of 5, ~1,180 tokens written)"
    # One round: its number says nothing.
    one = summarising_note({"state": "running", "round": 1, "rounds": 1, "tokens": 40})
    assert one == "Summarising earlier messages… (~40 tokens written)"
    assert summarising_note({"state": "done"}) == summarising_note({"state": "failed"}) == ""
