"""A reply's parts are held once, as they came: text pieces, each tool step where it first
came and as it is now, citations (desktop/client/events.py `ReplyParts`)."""

from __future__ import annotations

from desktop.client.events import ReplyParts
from server.types import CitationPartJSON, ToolPartJSON, ToolStatus


def step(status: ToolStatus = "running", step_id: str = "s1") -> ToolPartJSON:
    return {
        "type": "tool", "id": step_id, "name": "read_file", "server": "files",
        "arguments": '{"path": "a.txt"}', "status": status, "result": None,
        "started_at": 0.0, "ended_at": None,
    }  # fmt: skip


CITATION: CitationPartJSON = {
    "type": "citation", "n": 1, "path": "notes.md", "page": None, "lines": [1, 2],
    "quote": "a passage",
}  # fmt: skip


def test_a_step_that_changes_stays_where_it_first_came() -> None:
    parts = ReplyParts()
    parts.add_text("Let me look. ")
    parts.add_step(step("running"))
    parts.add_text("It says hello.")
    parts.add_step(step("completed"))
    assert [item if isinstance(item, str) else item["status"] for item in parts.items] == [
        "Let me look. ",
        "completed",
        "It says hello.",
    ]
    assert parts.text == "Let me look. It says hello." and parts.length == len(parts.text)


def test_the_running_step_is_the_last_one_not_ended() -> None:
    parts = ReplyParts()
    assert parts.running_step() is None
    parts.add_step(step("completed", "s1"))
    parts.add_step(step("awaiting_approval", "s2"))
    found = parts.running_step()
    assert found is not None and found["id"] == "s2"
    parts.add_step(step("denied", "s2"))
    assert parts.running_step() is None


def test_as_parts_joins_the_text_between_steps_and_adds_what_was_never_received() -> None:
    parts = ReplyParts()
    parts.add_text("One, ")
    parts.add_text("two.")
    parts.add_step(step("completed"))
    parts.add_citation(CITATION)
    assert parts.has_steps
    assert parts.as_parts(unseen="Three.") == [
        {"type": "text", "text": "One, two."},
        step("completed"),
        CITATION,
        {"type": "text", "text": "Three."},
    ]


def test_text_alone_has_no_steps() -> None:
    parts = ReplyParts()
    parts.add_text("Just words.")
    assert not parts.has_steps and parts.as_parts() == [{"type": "text", "text": "Just words."}]


def test_a_saved_reply_continued_starts_from_its_parts() -> None:
    parts = ReplyParts()
    parts.add_saved([{"type": "text", "text": "Before. "}, step("completed"), CITATION])
    assert parts.text == "Before. " and [i for i, _ in parts.steps()] == [1]
    assert parts.as_parts()[1:] == [step("completed"), CITATION]
