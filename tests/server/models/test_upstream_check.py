"""An upstream's state is checked, not assumed: reachable ones are ready, dead ones say why."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from server.models import upstream_check
from server.routes import backends as backend_routes
from tests.support.parley import MODEL, Parley
from tests.support.upstream import ScriptedUpstream
from tests.support.upstream_answers import Answer
from tests.support.waiting import wait_for


def upstream_status(parley: Parley) -> dict[str, Any]:
    found: dict[str, Any] = next(m for m in parley.status()["models"] if m["name"] == MODEL)
    return found


@pytest.fixture
def dead_url() -> str:
    """A loopback port nothing listens on."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


@pytest.fixture
def dead_parley(data_dir: Path, dead_url: str) -> Iterator[Parley]:
    server = Parley(data_dir, dead_url).start()
    yield server
    server.stop()


def test_a_reachable_upstream_is_ready_once_checked(parley: Parley) -> None:
    assert wait_for(lambda: upstream_status(parley)["state"] == "ready", 10)
    assert upstream_status(parley)["error"] is None


def test_an_unreachable_upstream_is_an_error_with_the_reason(dead_parley: Parley) -> None:
    wait_for(lambda: upstream_status(dead_parley)["state"] == "error", 10)
    assert "cannot reach" in upstream_status(dead_parley)["error"]


def test_a_reply_that_cannot_reach_the_upstream_marks_it_as_an_error(
    parley: Parley, upstream: ScriptedUpstream
) -> None:
    wait_for(lambda: upstream_status(parley)["state"] == "ready", 10)
    upstream.stop()
    parley.send(parley.new_conversation()).read_all()  # connection refused
    assert upstream_status(parley)["state"] == "error"
    assert "cannot reach" in upstream_status(parley)["error"]


def test_checking_a_backend_before_saving_it_lists_its_models(
    parley: Parley, upstream: ScriptedUpstream, dead_url: str
) -> None:
    there = parley.call(
        "POST", "/api/backends/check", json_body={"base_url": upstream.base_url, "api_key": "k"}
    )
    assert there.status == 200 and there.json() == {"reachable": True, "models": ["scripted"]}
    gone = parley.call("POST", "/api/backends/check", json_body={"base_url": dead_url})
    assert gone.status == 200 and gone.json()["reachable"] is False
    assert "cannot reach" in gone.json()["error"]
    for body in ({"base_url": "file:///etc/passwd"}, {}, {"base_url": 5}):
        assert parley.call("POST", "/api/backends/check", json_body=body).status == 400


def test_local_servers_that_answer_are_found_and_none_is_added(
    parley: Parley, upstream: ScriptedUpstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    # An "Ollama" that answers (the scripted upstream) and an "LM Studio" where nothing listens.
    monkeypatch.setattr(
        backend_routes,
        "LOCAL_SERVERS",
        [("Ollama", upstream.base_url), ("LM Studio", "http://127.0.0.1:9/v1")],
    )
    before = [m["name"] for m in parley.call("GET", "/api/models").json()["models"]]
    reply = parley.call("GET", "/api/backends/detect")
    assert reply.status == 200, reply.body
    assert reply.json() == {
        "found": [{"name": "Ollama", "base_url": upstream.base_url, "models": ["scripted"]}]
    }
    after = [m["name"] for m in parley.call("GET", "/api/models").json()["models"]]
    assert after == before  # offered, not added


def test_a_models_list_sent_a_byte_at_a_time_or_too_big_does_not_hold_the_check(
    parley: Parley, upstream: ScriptedUpstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Each read is quick, the answer never ends: the check's bound is on the whole answer.
    monkeypatch.setattr(upstream_check, "LIST_TIME_S", 0.5)
    upstream.answers["/v1/models"] = Answer(b'{"data": [', drip=0.01)
    began = time.monotonic()
    dripping = parley.call("POST", "/api/backends/check", json_body={"base_url": upstream.base_url})
    assert time.monotonic() - began < 5  # was: never, while the upstream kept sending
    assert dripping.status == 200 and dripping.json()["reachable"] is False
    assert "did not list its models within 0.5 s" in dripping.json()["error"]

    # Bigger than any list of models: it is there, and its list is not read.
    huge = {"data": [{"id": f"model-{n}", "pad": "x" * 100} for n in range(50_000)]}
    upstream.answers["/v1/models"] = Answer.of(huge)
    there = parley.call("POST", "/api/backends/check", json_body={"base_url": upstream.base_url})
    assert there.status == 200 and there.json() == {"reachable": True, "models": []}


def test_the_models_list_is_asked_uncompressed(parley: Parley, upstream: ScriptedUpstream) -> None:
    # Read whole within a bound, a compressed answer is not inflated: so none is asked for
    # (httpx's own default asks for gzip, which a CDN in front of an upstream would send).
    upstream.answers["/v1/models"] = Answer.of({"data": [{"id": "m1"}]})
    there = parley.call("POST", "/api/backends/check", json_body={"base_url": upstream.base_url})
    assert there.json() == {"reachable": True, "models": ["m1"]}
    asked = [a for a in upstream.asked if a.path == "/v1/models"]
    assert asked and all(a.headers.get("accept-encoding") == "identity" for a in asked)
