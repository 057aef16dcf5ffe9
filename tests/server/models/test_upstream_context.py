"""An upstream's context is asked of the upstream where it says it (issue 42): the context
meter's limit comes from its models list, llama-server's /props or Ollama's /api/show; a
value set for the backend wins; a hostile or silent answer leaves it not known, within the
bound, and never holds up a reply; a context learned this way drives compaction."""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from server.limits import Limits, ModelLimits
from tests.server.agent.test_compaction import LONG, fill, summarising
from tests.support.parley import MODEL, Parley
from tests.support.upstream import Script, ScriptedUpstream
from tests.support.upstream_answers import Answer
from tests.support.waiting import stays_true

NOT_FOUND = Answer.of({"error": "not found"}, status=404)
MODELS = "/v1/models"


def models_list(**entry: Any) -> Answer:
    return Answer.of({"object": "list", "data": [{"id": "other"}, {"id": MODEL, **entry}]})


def ollama_show(parameters: str = "", trained: int | None = 131_072) -> Answer:
    info: dict[str, Any] = {"general.architecture": "llama"}
    if trained is not None:
        info["llama.context_length"] = trained
    return Answer.of({"parameters": parameters, "model_info": info, "details": {}})


def context_asks(upstream: ScriptedUpstream, path: str) -> list[Any]:
    """Requests for `path` from the backend's context question (JSON; the reachability
    check asks for the models list too, as an event stream's client)."""
    return [
        a
        for a in upstream.asked
        if a.path == path and a.headers.get("accept") == "application/json"
    ]


def meter(server: Parley, cid: str) -> dict[str, Any]:
    reply = server.call("GET", f"/api/conversations/{cid}/context")
    assert reply.status == 200, reply.body
    found: dict[str, Any] = reply.json()
    return found


def limit_once_known(server: Parley, cid: str) -> int:
    found: int = server.wait_for(lambda: meter(server, cid)["limit"], 10)
    return found


def asked_to_the_end(upstream: ScriptedUpstream) -> None:
    """Until the last source (Ollama's /api/show, answered 404) was asked and answered."""
    upstream.wait_for(lambda: any(a.finished for a in context_asks(upstream, "/api/show")), 10)


def reply_completes(server: Parley, upstream: ScriptedUpstream, cid: str) -> None:
    upstream.queue = [Script(texts=["fine"])]
    stream = server.send(cid, "hello")
    stream.read_all()
    assert stream.final["parley"]["status"] == "completed"


@pytest.fixture
def start(data_dir: Path, upstream: ScriptedUpstream) -> Iterator[Callable[..., Parley]]:
    """A Parley on the scripted upstream, once its answers are set (it asks at start)."""
    started: list[Parley] = []

    def start_with(
        answers: dict[str, Answer], *, context: int | None = None, **limits: Any
    ) -> Parley:
        upstream.answers.update(answers)
        models = ModelLimits(**limits)
        server = Parley(data_dir, upstream.base_url, context=context, limits=Limits(models=models))
        started.append(server.start())
        return server

    yield start_with
    for server in started:
        server.stop()


@pytest.mark.parametrize(
    "field", ["max_model_len", "context_length", "context_window", "max_context_length"]
)
def test_the_limit_is_what_the_models_list_says_of_the_model(
    start: Callable[..., Parley], field: str
) -> None:
    server = start({MODELS: models_list(**{field: 32_768})})
    assert limit_once_known(server, server.new_conversation()) == 32_768


def test_llama_servers_slot_context_counts_not_what_the_model_was_trained_for(
    start: Callable[..., Parley], upstream: ScriptedUpstream
) -> None:
    trained = models_list(meta={"n_ctx_train": 131_072, "n_vocab": 49_152})
    props = Answer.of({"default_generation_settings": {"n_ctx": 8_192}, "total_slots": 2})
    server = start({MODELS: trained, "/props": props})
    assert limit_once_known(server, server.new_conversation()) == 8_192
    assert context_asks(upstream, "/api/show") == []  # told: no need to ask further


@pytest.mark.parametrize(
    ("answers", "expected"),
    [
        ({"/api/show": ollama_show("stop <|eot|>\nnum_ctx                 16384\n")}, 16_384),
        (
            {
                "/api/show": ollama_show(),
                "/api/ps": Answer.of({"models": [{"name": f"{MODEL}:latest", "model": MODEL,
                                                  "context_length": 32_768}]}),
            },
            32_768,
        ),  # loaded: what Ollama gave it
        ({"/api/show": ollama_show(), "/api/ps": Answer.of({"models": []})}, 4_096),
        ({"/api/show": ollama_show(trained=2_048)}, 2_048),  # trained for less than the default
    ],
    ids=["num_ctx", "loaded", "default", "trained-for-less"],
)  # fmt: skip
def test_ollamas_served_context_is_its_num_ctx_else_what_it_allocated_else_its_default(
    start: Callable[..., Parley],
    upstream: ScriptedUpstream,
    answers: dict[str, Answer],
    expected: int,
) -> None:
    server = start({MODELS: models_list(), **answers})
    assert limit_once_known(server, server.new_conversation()) == expected
    (show,) = context_asks(upstream, "/api/show")
    assert show.method == "POST" and json.loads(show.body) == {"model": MODEL}


def test_the_value_set_for_the_backend_wins_and_nothing_is_asked(
    start: Callable[..., Parley], upstream: ScriptedUpstream
) -> None:
    server = start({MODELS: models_list(max_model_len=32_768)}, context=3_000)
    cid = server.new_conversation()
    reply_completes(server, upstream, cid)
    assert meter(server, cid)["limit"] == 3_000
    stays_true(lambda: context_asks(upstream, MODELS) == [], 0.3)
    assert meter(server, cid)["limit"] == 3_000


def test_the_answer_is_asked_once_and_kept(
    start: Callable[..., Parley], upstream: ScriptedUpstream
) -> None:
    server = start({MODELS: models_list(max_model_len=32_768)})
    cid = server.new_conversation()
    assert limit_once_known(server, cid) == 32_768
    for _ in range(3):
        assert meter(server, cid)["limit"] == 32_768
    reply_completes(server, upstream, cid)
    assert len(context_asks(upstream, MODELS)) == 1


def nested(depth: int) -> bytes:
    return b"[" * depth + b"]" * depth


HUGE = json.dumps(
    {"data": [{"id": f"m{i}", "pad": "x" * 600} for i in range(2_000)]
    + [{"id": MODEL, "max_model_len": 32_768}]}
).encode()  # fmt: skip


@pytest.mark.parametrize(
    "answer",
    [
        Answer(HUGE),  # over the byte bound, said in its Content-Length
        Answer(HUGE, sized=False),  # not said: read until the bound
        models_list(max_model_len="32768"),
        models_list(max_model_len=True),
        models_list(max_model_len=32_768.0),
        models_list(max_model_len=-4_096),
        models_list(max_model_len=100),
        models_list(max_model_len=10**12),
        models_list(max_model_len=[32_768]),
        Answer.of({"data": {"id": MODEL, "max_model_len": 32_768}}),
        Answer.of([{"id": MODEL, "max_model_len": 32_768}]),
        Answer(b'{"data": [{"id": "scripted", "max_model_len": ' + b"9" * 5_000 + b"}]}"),
        Answer(nested(100_000)),
        Answer(b"\xff\xfe not json"),
        Answer(
            gzip.compress(json.dumps({"data": [{"id": MODEL, "max_model_len": 32_768}]}).encode()),
            headers=[(b"content-encoding", b"gzip")],
        ),
    ],
    ids=[
        "huge", "huge-unsaid", "string", "bool", "float", "negative", "tiny", "absurd", "list",
        "data-not-a-list", "not-an-object", "long-number", "deep", "not-json", "compressed",
    ],
)  # fmt: skip
def test_a_hostile_answer_leaves_the_limit_unknown_and_the_reply_unaffected(
    start: Callable[..., Parley], upstream: ScriptedUpstream, answer: Answer
) -> None:
    server = start({MODELS: answer, "/api/show": NOT_FOUND}, upstream_context_bytes=1_000_000)
    cid = server.new_conversation()
    asked_to_the_end(upstream)
    assert meter(server, cid)["limit"] is None
    reply_completes(server, upstream, cid)
    assert meter(server, cid)["limit"] is None


def test_a_silent_upstream_is_given_up_at_the_bound_and_the_limit_stays_unknown(
    start: Callable[..., Parley], upstream: ScriptedUpstream
) -> None:
    # Each read is quick (a byte every 50 ms): only the bound on the whole answer ends it.
    drip = Answer(b'{"default_generation_settings": {"n_ctx": 8192}}', drip=0.05)
    server = start(
        {MODELS: models_list(), "/props": drip, "/api/show": NOT_FOUND},
        upstream_context_time=0.5,
    )
    cid = server.new_conversation()
    upstream.wait_for(lambda: context_asks(upstream, "/props")[0].hung_up_at, 10)
    asked_to_the_end(upstream)  # the next source was asked after it
    assert meter(server, cid)["limit"] is None
    reply_completes(server, upstream, cid)


def test_a_reply_never_waits_for_the_question(
    start: Callable[..., Parley], upstream: ScriptedUpstream
) -> None:
    drip = Answer(b'{"default_generation_settings": {"n_ctx": 8192}}', drip=0.05)
    server = start({MODELS: models_list(), "/props": drip}, upstream_context_time=600)
    cid = server.new_conversation()
    upstream.wait_for(lambda: context_asks(upstream, "/props"), 10)
    assert meter(server, cid)["limit"] is None  # not known yet
    reply_completes(server, upstream, cid)
    (props,) = context_asks(upstream, "/props")
    assert props.hung_up_at is None and not props.finished  # still asking


def test_after_a_failure_it_is_not_asked_again_before_the_retry_interval(
    start: Callable[..., Parley], upstream: ScriptedUpstream
) -> None:
    server = start({MODELS: models_list(), "/api/show": NOT_FOUND})
    cid = server.new_conversation()
    asked_to_the_end(upstream)
    upstream.answers[MODELS] = models_list(max_model_len=32_768)
    reply_completes(server, upstream, cid)
    stays_true(lambda: meter(server, cid)["limit"] is None, 0.3)
    assert len(context_asks(upstream, MODELS)) == 1


def test_after_a_failure_it_is_asked_again_once_the_interval_passed(
    start: Callable[..., Parley], upstream: ScriptedUpstream
) -> None:
    server = start({MODELS: models_list(), "/api/show": NOT_FOUND}, upstream_context_retry=0.05)
    cid = server.new_conversation()
    asked_to_the_end(upstream)
    upstream.answers[MODELS] = models_list(max_model_len=32_768)
    assert limit_once_known(server, cid) == 32_768


def test_ollamas_default_is_a_guess_asked_again_until_a_loaded_model_says(
    start: Callable[..., Parley], upstream: ScriptedUpstream
) -> None:
    # At start no model is loaded, so Ollama does not say what it allocates: 4,096 is used,
    # and asked again (the retry interval) until /api/ps says the real figure.
    answers = {MODELS: models_list(), "/api/show": ollama_show(), "/api/ps": Answer.of(
        {"models": []})}  # fmt: skip
    server = start(answers, upstream_context_retry=0.05)
    cid = server.new_conversation()
    assert limit_once_known(server, cid) == 4_096
    upstream.answers["/api/ps"] = Answer.of(
        {"models": [{"name": f"{MODEL}:latest", "model": MODEL, "context_length": 32_768}]}
    )
    server.wait_for(lambda: meter(server, cid)["limit"] == 32_768)
    asks = len(context_asks(upstream, "/api/ps"))
    stays_true(lambda: len(context_asks(upstream, "/api/ps")) == asks, 0.3)  # then kept


def test_a_context_learned_from_the_upstream_drives_compaction(
    start: Callable[..., Parley], upstream: ScriptedUpstream
) -> None:
    server = start({MODELS: models_list(max_model_len=2_000)})
    cid = server.new_conversation()
    assert limit_once_known(server, cid) == 2_000
    fill(server, upstream, cid, 2)
    assert not any(summarising(r) for r in upstream.records)  # it still fits
    upstream.queue = [Script(texts=["A short summary."]), Script(texts=["ok"])]
    stream = server.send(cid, f"more {LONG}")
    stream.read_all()
    assert stream.final["parley"]["status"] == "completed"
    assert any(summarising(r) for r in upstream.records)
    (summary,) = server.conversation(cid)["summaries"]
    assert meter(server, cid)["summary_id"] == summary["id"]
