"""A reply cut at `finish_reason: "length"` says why: its own `max_tokens`, or the model's
context full (its prompt and the reply took all of it), as `usage.context_full`, in the
final chunk and stored with the reply. The scripted upstream says each call's usage, as a
real one does."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from server.models.base import StreamEnd
from server.turns.length_cut import context_full
from server.types.chunks import CONTEXT_FULL
from tests.support.parley import Parley
from tests.support.upstream import Script, ScriptedUpstream

CONTEXT = 2_000


@pytest.fixture
def server(data_dir: Path, upstream: ScriptedUpstream) -> Iterator[Parley]:
    parley = Parley(data_dir, upstream.base_url, context=CONTEXT).start()
    yield parley
    parley.stop()


def usage(prompt: int, completion: int) -> str:
    return json.dumps(
        {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        }
    )


def cut(server: Parley, upstream: ScriptedUpstream, script: Script, **fields: object) -> dict:
    """The final chunk's usage and the stored reply's, of one turn ending as `script` says."""
    cid = server.new_conversation()
    upstream.queue = [script]
    stream = server.send(cid, "Tell me everything.", **fields)
    stream.read_all()
    final = stream.final
    assert final["choices"][0]["finish_reason"] == "length", final
    (reply,) = [m for m in server.conversation(cid)["messages"] if m["role"] == "assistant"]
    assert reply["usage"] == final["usage"]  # the same verdict once reopened
    found: dict = final["usage"]
    return found


def test_a_reply_that_filled_the_models_context_says_so(
    server: Parley, upstream: ScriptedUpstream
) -> None:
    full = Script(tokens=5, finish_reason="length", usage_json=usage(1_960, 40))
    assert cut(server, upstream, full)[CONTEXT_FULL] == 1


def test_a_reply_cut_at_its_own_max_tokens_is_not_said_to_have_filled_the_context(
    server: Parley, upstream: ScriptedUpstream
) -> None:
    at_max = Script(tokens=5, finish_reason="length", usage_json=usage(40, 5))
    assert CONTEXT_FULL not in cut(server, upstream, at_max, max_tokens=5)
    # An upstream that says no usage: not known, so not said.
    silent = Script(tokens=5, finish_reason="length", usage=False)
    assert CONTEXT_FULL not in cut(server, upstream, silent)


def test_a_model_whose_context_is_not_known_is_never_said_to_be_full(
    data_dir: Path, upstream: ScriptedUpstream
) -> None:
    server = Parley(data_dir, upstream.base_url).start()
    try:
        full = Script(tokens=5, finish_reason="length", usage_json=usage(1_960, 40))
        assert CONTEXT_FULL not in cut(server, upstream, full)
    finally:
        server.stop()


def test_the_local_engines_figures_are_read_with_the_count_its_room_was_taken_from() -> None:
    # As the bundled model reported a reply that filled a 600-token context (measured here):
    # Parley counted the prompt 22 tokens and gave the reply the rest, 578; the engine's own
    # count (46) has its template's default system prompt too.
    end = StreamEnd("length", {"prompt_tokens": 46, "completion_tokens": 578})
    assert context_full(end, {"prompt_tokens": 22}, 600)
    assert not context_full(end, {"prompt_tokens": 22}, None)  # a context not known
    assert not context_full(StreamEnd("stop", end.usage), {"prompt_tokens": 22}, 600)
    at_max = StreamEnd("length", {"prompt_tokens": 46, "completion_tokens": 100})
    assert not context_full(at_max, {"prompt_tokens": 22}, 600)
