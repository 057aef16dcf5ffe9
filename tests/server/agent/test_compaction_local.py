"""Compaction with the real engine (issue 42): a 40-turn chat with the bundled model, in a
2,048-token context, outgrows it; the oldest part is summarised, the fact the user gave in
turn 1 is carried into turn 40's prompt by the summary, nothing is deleted, and the marker is
in the conversation."""

from __future__ import annotations

from pathlib import Path

import pytest

from server.agent.compaction import OPENING_HEADING
from server.agent.prompt import SUMMARY_HEADING
from server.settings import LocalSettings
from tests.server.models.test_local import backend, engine_idle_after, engine_slots_busy
from tests.support.client import SSEStream
from tests.support.parley import Parley, wait_model_ready

pytestmark = pytest.mark.slow

FACT = "My cat is called Zorblax."
TOPICS = ["the weather in spring", "how bread is baked", "why the sky is blue", "trains", "bees"]


@pytest.mark.timeout(900)  # ~45 s alone; several minutes beside two busy processes
def test_a_forty_turn_chat_keeps_a_fact_from_turn_one_in_the_models_view(data_dir: Path) -> None:
    server = Parley(data_dir, local=LocalSettings(n_ctx=2048)).start()
    try:
        wait_model_ready(server)
        cid = server.new_conversation()
        server.send(cid, f"{FACT} Please remember that.", max_tokens=30).read_all()
        for turn in range(2, 40):
            topic = TOPICS[turn % len(TOPICS)]
            question = (
                f"Turn {turn}. I am reading about {topic} today, and I would like to learn "
                "more about it, slowly and carefully, one small step at a time. Tell me one "
                f"short fact about {topic}, in one sentence please, thank you very much."
            )
            # A turn that compacts first says little while the engine summarises: on two
            # cores shared with busy processes, a minute can pass between its events.
            stream = server.send(cid, question, max_tokens=40, timeout=300)
            stream.read_all()
            assert stream.final["parley"]["status"] == "completed", stream.final
        meter = server.call("GET", f"/api/conversations/{cid}/context").json()
        assert meter["summarised"] > 0  # earlier messages summarised (maybe more than once)

        stream = server.send(cid, "What is my cat called?", max_tokens=30)
        stream.read_all()
        assert stream.final["parley"]["status"] == "completed"
        # What the engine itself was given at turn 40: the summary, carrying turn 1's fact.
        given = backend(server).generations[-1]
        assert given.asked.startswith("What is my cat called?")
        assert SUMMARY_HEADING in given.opening and f"User: {FACT}" in given.opening
        conversation = server.conversation(cid)
        assert len(conversation["messages"]) == 80  # nothing deleted
        assert conversation["messages"][0]["content"].startswith(FACT)
        summary = conversation["summaries"][-1]
        assert summary["content"].startswith(f"{OPENING_HEADING}\nUser: {FACT}")
        # The summary in force is the one the next turns are given (in the system prompt:
        # tests/server/agent/test_compaction.py sees it there), and it carries turn 1's fact.
        assert meter["summary_id"] == summary["id"]
    finally:
        server.stop()


@pytest.mark.timeout(300)
def test_a_stop_during_compact_now_on_the_engine_keeps_the_chat_and_frees_it(
    data_dir: Path,
) -> None:
    # The summary is the engine's generation: a hang-up once it streams ends it on the
    # engine (not only in Parley), saves no summary, and the chat is as it was.
    server = Parley(data_dir).start()
    try:
        wait_model_ready(server)
        cid = server.new_conversation()
        server.send(cid, f"{FACT} Please remember that.", max_tokens=20).read_all()
        for topic in TOPICS[:3]:  # long questions: the summary's prefill takes a while
            asked = f"Tell me about {topic}. " + "I read slowly and carefully every day. " * 40
            server.send(cid, asked, max_tokens=20).read_all()
        before = server.conversation(cid)
        stream = SSEStream(server.port, f"/api/conversations/{cid}/compact", {}, server.token)
        stream.first  # noqa: B018
        while True:  # until the summary is being made
            event = stream.next_event()
            assert isinstance(event, dict), f"the stream ended first: {stream.events}"
            if event.get("parley", {}).get("compaction", {}).get("state") == "running":
                break
        server.wait_for(lambda: engine_slots_busy(server))  # the engine works on it
        hung_up_at = stream.hang_up()
        assert engine_idle_after(server, hung_up_at) < 3.0  # the engine stopped generating
        server.wait_idle()
        after = server.conversation(cid)
        assert after["summaries"] == []
        assert after["messages"] == before["messages"]
    finally:
        server.stop()
