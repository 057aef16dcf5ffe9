"""`pace_ms`: a reply's stream carries text at most that often (the window asks for a
frame's worth), with all of it, and a bad value is refused naming the field."""

from __future__ import annotations

import time

from tests.support.parley import Parley
from tests.support.upstream import Script, ScriptedUpstream


def content_chunks(stream: object) -> int:
    return sum(
        1
        for e in stream.events  # type: ignore[attr-defined]
        if isinstance(e, dict) and any(c["delta"].get("content") for c in e.get("choices", []))
    )


def test_a_paced_stream_sends_all_the_text_in_fewer_chunks(
    parley: Parley, upstream: ScriptedUpstream
) -> None:
    upstream.script = Script(tokens=300, rate=1000)  # ~0.3 s of tokens
    plain = parley.send(parley.new_conversation(), "go")
    plain.read_all()
    paced_conversation = parley.new_conversation()
    began = time.monotonic()
    paced = parley.send(paced_conversation, "go", pace_ms=100)
    paced.read_all()
    took = time.monotonic() - began
    assert paced.delivered == plain.delivered == upstream.script.text()
    assert paced.final["parley"]["status"] == "completed"
    # At most one content chunk per 100 ms (and one at the end); far fewer than unpaced.
    assert content_chunks(paced) <= took / 0.1 + 2
    assert content_chunks(paced) * 5 < content_chunks(plain)
    saved = parley.wait_settled(paced_conversation, paced.first["message_id"])
    assert saved["content"] == paced.delivered


def test_a_bad_pace_is_refused_naming_the_field(parley: Parley) -> None:
    for bad in (-1, 1001, "fast", 1.5):
        stream = parley.send(parley.new_conversation(), "go", pace_ms=bad)
        assert stream.status == 400
        body = stream._response.read().decode()
        assert "pace_ms" in body
        stream.close()
