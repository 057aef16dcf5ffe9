"""An upstream that sends what JSON allows but storage and clients refuse."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.parley import Parley
from tests.support.upstream import Script, ScriptedUpstream


def test_surrogate_pair_split_across_chunks_is_joined_and_lone_ones_replaced(
    parley: Parley, upstream: ScriptedUpstream
) -> None:
    upstream.script = Script(texts=["a\ud83d", "\ude00b ", "\udc00 lone ", "end\ud83d"])
    conversation_id = parley.new_conversation()
    stream = parley.send(conversation_id)
    stream.read_all()
    expected = "a\U0001f600b \ufffd lone end\ufffd"
    assert stream.delivered == expected
    assert stream.final["parley"]["status"] == "completed"
    message = parley.wait_settled(conversation_id, stream.first["message_id"])
    assert message["content"] == expected
    assert parley.call("GET", f"/api/conversations/{conversation_id}").status == 200


@pytest.mark.parametrize(
    "usage_json",
    [
        '{"prompt_tokens": NaN, "completion_tokens": 3}',
        '{"prompt_tokens": 1e400, "completion_tokens": Infinity}',
        '{"prompt_tokens": "7", "completion_tokens": -2}',
        '"not an object"',
    ],
)
def test_junk_usage_numbers_are_dropped(
    parley: Parley, upstream: ScriptedUpstream, usage_json: str
) -> None:
    upstream.script = Script(tokens=3, usage_json=usage_json)
    conversation_id = parley.new_conversation()
    stream = parley.send(conversation_id)
    stream.read_all()  # json.loads of every chunk: strict enough to notice a bare NaN
    assert stream.final["parley"]["status"] == "completed"
    reply = parley.call("GET", f"/api/conversations/{conversation_id}")
    assert reply.status == 200
    usage = reply.json()["messages"][1]["usage"]
    assert all(not isinstance(v, float) or v == v for v in usage.values())
    assert isinstance(usage["completion_tokens"], int) and usage["completion_tokens"] >= 0


def test_a_second_server_on_the_same_data_dir_is_refused(
    parley: Parley, data_dir: Path, upstream: ScriptedUpstream
) -> None:
    second = Parley(data_dir, upstream.base_url)
    with pytest.raises(RuntimeError, match="exited during start-up"):
        second.start()
    assert parley.status()["active_turns"] == 0
