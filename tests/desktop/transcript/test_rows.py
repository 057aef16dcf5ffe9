"""The transcript's rows: a chat opens as light rows, each rendered only when drawn."""

from __future__ import annotations

from typing import Any

from desktop.client.events import ReplyEnd
from desktop.transcript.markdown import MarkdownRenderer
from desktop.transcript.rows import Row, TranscriptRows
from server.types import MessageJSON


def message(i: int, role: str = "user", **fields: Any) -> MessageJSON:
    base: dict[str, Any] = {
        "id": f"m{i}", "conversation_id": "c", "role": role, "content": f"Message {i}",
        "parts": [], "status": "completed", "ended_by": None, "error": None, "model": None,
        "created_at": 0.0, "completed_at": 0.0, "usage": None, "parent_id": None,
        "continued": None, "finish_reason": None,
    }  # fmt: skip
    return base | fields  # type: ignore[return-value]


class CountingRenderer(MarkdownRenderer):
    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    def render(self, text: str, *args: Any, **kwargs: Any) -> str:
        self.calls += 1
        return super().render(text, *args, **kwargs)


def role(rows: TranscriptRows, name: str) -> int:
    return next(k for k, v in rows.roleNames().items() if bytes(v.data()) == name.encode())


def test_a_chat_opens_without_rendering_a_message(qapp: Any) -> None:
    renderer = CountingRenderer()
    rows = TranscriptRows(renderer)
    rows.show(message(i, "user" if i % 2 else "assistant") for i in range(100_000))
    assert rows.rowCount() == 100_000
    assert renderer.calls == 0
    blocks = rows.data(rows.index(4), role(rows, "blocks"))
    assert renderer.calls == 1 and "Message 4" in blocks.blocks[0].html


def test_a_question_is_shown_as_text_never_as_markup(qapp: Any) -> None:
    rows = TranscriptRows(MarkdownRenderer())
    rows.show([message(1, content="<b>bold?</b>\n**no**")])
    question = rows.data(rows.index(0), role(rows, "question"))
    assert question == "&lt;b&gt;bold?&lt;/b&gt;<br>**no**"


def test_a_stored_reply_says_how_it_ended(qapp: Any) -> None:
    rows = TranscriptRows(MarkdownRenderer())
    stopped = message(2, "assistant", status="interrupted", ended_by="client_hangup", model="m")
    failed = message(3, "assistant", status="error", error="upstream refused")
    stopped["ended"] = {
        "tool_calls": 1,
        "may_have_acted": [
            {"server": "files", "name": "write_file", "arguments": '{"path": "a.md"}'}
        ],
    }
    stopped["usage"] = {"completion_tokens": 12, "tokens_per_s": 40.0}
    rows.show([stopped, failed])
    badge, tone = role(rows, "badge"), role(rows, "tone")
    assert rows.data(rows.index(0), badge) == "Stopped · ended 1 tool call"
    assert rows.data(rows.index(0), tone) == "warning"
    assert rows.data(rows.index(0), role(rows, "stats")) == "40.0 tok/s · 12 tokens"
    assert rows.data(rows.index(0), role(rows, "acted")).startswith("May have acted: write_file(")
    assert rows.data(rows.index(1), badge) == "Error: upstream refused"
    assert rows.data(rows.index(1), tone) == "danger"
    assert rows.data(rows.index(0), role(rows, "header")) == "m"


def test_a_streaming_reply_grows_and_ends(qapp: Any) -> None:
    rows = TranscriptRows(MarkdownRenderer())
    rows.append(Row(id="r", role="assistant", text="", header="m", streaming=True))
    blocks = rows.data(rows.index(0), role(rows, "blocks"))  # drawn
    rows.grow("r", ["First paragraph.\n\nSecond, still"])
    assert len(blocks.blocks) == 2 and "still" in blocks.blocks[1].html
    ended: list[Any] = []
    rows.dataChanged.connect(lambda *args: ended.append(args))
    rows.end("r", ReplyEnd(status="interrupted", ended_by="client_hangup", error=None,
                           usage=None, content=""))  # fmt: skip
    assert rows.data(rows.index(0), role(rows, "badge")) == "Stopped"
    assert rows.data(rows.index(0), role(rows, "streaming")) is False
    assert len(ended) == 1


def test_find_searches_every_message_drawn_or_not_and_wraps_around(qapp: Any) -> None:
    rows = TranscriptRows(MarkdownRenderer())
    rows.show(message(i, content=f"Message {i}" + (" needle" if i in (3, 700) else ""))
              for i in range(1_000))  # fmt: skip
    assert rows.find("NEEDLE") == 3
    assert rows.find("needle", after=3) == 700
    assert rows.find("needle", after=700) == 3  # wraps around
    assert rows.find("needle", after=3, backwards=True) == 700
    assert rows.find("absent") is None
    assert "Message 999" in rows.plain_text()


def test_only_the_last_reply_that_can_go_on_offers_continue(qapp: Any) -> None:
    rows = TranscriptRows(MarkdownRenderer())
    stopped = {"status": "interrupted", "ended_by": "client_hangup"}
    rows.show([message(1, "assistant", **stopped), message(2, "assistant", **stopped),
               message(3, "assistant", status="completed", finish_reason="length"),
               message(4, "assistant", content="", parts=[], **stopped)])  # fmt: skip
    actions = role(rows, "actions")
    assert [rows.data(rows.index(i), actions) for i in range(4)] == [
        ["copy", "regenerate"], ["copy", "regenerate"], ["copy", "regenerate"],
        ["copy", "regenerate"],  # the last, but with no text to go on from
    ]  # fmt: skip
    rows.show([message(1, "assistant", status="completed", finish_reason="length")])
    assert rows.data(rows.index(0), actions) == ["copy", "regenerate", "continue"]
    changed: list[int] = []
    rows.dataChanged.connect(lambda first, *_: changed.append(first.row()))
    rows.append(Row(id="q", role="user", text="More"))
    assert changed == [0] and rows.data(rows.index(0), actions) == ["copy", "regenerate"]
