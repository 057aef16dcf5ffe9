"""The context meter counts the passages "Use my documents" will put in the next prompt
(issue 42): estimated as those the chat's last question is given, never the ceiling a
passage could reach; 0 when the switch is off, the library has no folder, its folders hold
nothing, or nothing matches."""

from __future__ import annotations

from pathlib import Path

from server.library.tool import PROMPT_INTRO
from server.models.context import estimate_tokens
from tests.server.library.test_library import add, indexed
from tests.support.parley import Parley
from tests.support.upstream import Script, ScriptedUpstream

HERONS = "# Herons\n\nHerons wade in shallow water and wait for fish.\n"


def meter(parley: Parley, cid: str) -> dict[str, object]:
    reply = parley.call("GET", f"/api/conversations/{cid}/context")
    assert reply.status == 200, reply.body
    found: dict[str, object] = reply.json()
    return found


def test_the_meter_counts_the_passages_the_last_question_was_given_not_their_ceiling(
    parley: Parley, upstream: ScriptedUpstream, tmp_path: Path
) -> None:
    cid = parley.new_conversation(documents=True)
    upstream.queue = [Script(texts=["They wade."])]
    parley.send(cid, "Where do herons wait for fish?").read_all()
    assert meter(parley, cid)["documents"] == 0  # no folder: no passage is put in the prompt

    (tmp_path / "empty").mkdir()
    add(parley, tmp_path / "empty")
    indexed(parley, files=0)
    assert meter(parley, cid)["documents"] == 0  # a folder that holds nothing

    (tmp_path / "empty" / "herons.md").write_text(HERONS, encoding="utf-8")
    indexed(parley, files=1)
    on = meter(parley, cid)
    # One short passage, as the turn's prompt gets it (the intro, the passage wrapped as
    # data): not the ceiling of three passages as long as a passage can be.
    documents = on["documents"]
    assert isinstance(documents, int)
    assert estimate_tokens(PROMPT_INTRO + HERONS) < documents < 300
    assert on["estimated"] is True
    assert on["used"] == on["system"] + on["history"] + on["tools"] + on["documents"]

    upstream.queue = [Script(texts=["No idea."])]
    parley.send(cid, "What is the capital of Peru?").read_all()
    assert meter(parley, cid)["documents"] == 0  # the last question matches no passage

    off = parley.new_conversation(documents=False)
    upstream.queue = [Script(texts=["They wade."])]
    parley.send(off, "Where do herons wait for fish?").read_all()
    assert meter(parley, off)["documents"] == 0
