"""One number per passage, in the order the model was first given it (issue 43 item 5), and the
passages "Use my documents" put in the prompt kept with the reply, cited or not (item 7):
through a real Parley with a library folder and the scripted upstream."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from server.agent.buffer import ReplyBuffer
from server.library.tool import SourceNumbers, key
from server.types import CitationPartJSON
from server.types.library import PassageJSON
from tests.server.library.test_documents_tool import SEARCH, citations
from tests.server.library.test_library import add, indexed
from tests.support.documents import topic_folder
from tests.support.parley import Parley
from tests.support.upstream import Script, ScriptedUpstream

pytestmark = pytest.mark.slow

NUMBERED = r"\[(\d+)\] (/\S+), (lines \d+-\d+|page \d+)"


@pytest.fixture
def with_documents(parley: Parley, tmp_path: Path) -> dict[str, Path]:
    files = topic_folder(tmp_path / "docs")
    add(parley, tmp_path / "docs")
    indexed(parley, files=len(files))
    return files


def given(text: str) -> dict[str, int]:
    """Each passage of a text given to the model ("path, lines a-b") -> its number."""
    found: dict[str, int] = {}
    for number, path, place in re.findall(NUMBERED, text):
        assert found.setdefault(f"{path}, {place}", int(number)) == int(number)
    return found


def streamed_sources(stream: Any) -> list[dict[str, Any]]:
    chunks = [e for e in stream.events if isinstance(e, dict)]
    return [e["parley"]["citation"] for e in chunks if "citation" in e.get("parley", {})]


def test_a_passage_given_twice_keeps_its_number_and_is_listed_once_in_order(
    parley: Parley, upstream: ScriptedUpstream, with_documents: dict[str, Path]
) -> None:
    # "Use my documents" puts the best passages in the prompt; the model then searches for
    # the same thing and is given them again, with more.
    cid = parley.new_conversation(documents=True)
    upstream.queue = [
        Script(tokens=0, tool_calls=[SEARCH | {"arguments": '{"query": "aardvark burrows"}'}]),
        Script(texts=["They dig [2], as [1] says", " (and [2] again)."]),
    ]
    stream = parley.send(cid, "aardvark burrows")
    stream.read_all()
    assert stream.final["parley"]["status"] == "completed"
    messages = upstream.records[-1].body["messages"]
    in_prompt = given(next(m["content"] for m in messages if "own documents" in m["content"]))
    by_tool = given(messages[-1]["content"])
    assert in_prompt and set(in_prompt) <= set(by_tool)  # the search found them again
    # The same passage, the same number; the new ones after every number given before.
    assert all(by_tool[where] == n for where, n in in_prompt.items())
    new = sorted(n for where, n in by_tool.items() if where not in in_prompt)
    assert new == list(range(len(in_prompt) + 1, len(in_prompt) + 1 + len(new)))

    listed = citations(parley.message(cid, stream.first["message_id"]))
    numbers = [c["n"] for c in listed]
    assert numbers == sorted(set(numbers))  # each once, in order
    assert len({(c["path"], c["page"], str(c["lines"])) for c in listed}) == len(listed)
    assert [c["n"] for c in listed if c.get("cited", True)] == [1, 2]
    # The prompt's passage it did not cite is kept as given to the model.
    assert [c["n"] for c in listed if c.get("cited") is False] == sorted(
        n for n in in_prompt.values() if n not in (1, 2)
    )


def test_use_my_documents_keeps_the_passages_given_when_none_is_cited(
    parley: Parley, upstream: ScriptedUpstream, with_documents: dict[str, Path]
) -> None:
    cid = parley.new_conversation(documents=True, tools=False)
    upstream.script = Script(texts=["Aardvarks dig burrows."])
    stream = parley.send(cid, "aardvark burrows?")
    stream.read_all()
    in_prompt = given(upstream.records[-1].body["messages"][0]["content"])
    message = parley.message(cid, stream.first["message_id"])
    assert message["content"] == "Aardvarks dig burrows."
    listed = citations(message)
    assert [(c["n"], c["cited"]) for c in listed] == [
        (n, False) for n in sorted(in_prompt.values())
    ]
    assert all(Path(c["path"]).name == "aardvark.md" for c in listed[:1])
    # Followers are told at once, so the window lists them as the stored reply does.
    assert streamed_sources(stream) == listed
    # Exported as Markdown, they are listed apart from the sources it cited.
    exported = parley.call("GET", f"/api/conversations/{cid}/export?format=md").body.decode()
    assert "Sources:" not in exported
    assert f"Passages given to the model:\n- [1] {listed[0]['path']}, lines " in exported
    # A later turn that cites one: that one listed as cited, the rest still as given.
    upstream.script = Script(texts=["See [2]."])
    stream = parley.send(cid, "aardvark burrows?")
    stream.read_all()
    listed = citations(parley.message(cid, stream.first["message_id"]))
    assert [(c["n"], c.get("cited", True)) for c in listed] == [
        (n, n == 2) for n in sorted(in_prompt.values())
    ]


def passage(path: str, first: int) -> PassageJSON:
    return {"path": path, "page": None, "lines": [first, first + 2], "text": f"text {first}"}


def test_a_continued_reply_s_sources_keep_their_numbers() -> None:
    earlier: list[CitationPartJSON] = [
        {"type": "citation", "n": 2, "path": "/d/a.md", "page": None, "lines": [5, 7],
         "quote": "q"},
        {"type": "citation", "n": 3, "path": "/d/a.md", "page": None, "lines": [1, 3],
         "quote": "q", "cited": False},
    ]  # fmt: skip
    numbers = SourceNumbers()
    numbers.known(earlier)
    assert numbers.number(passage("/d/a.md", 1)) == 3
    assert numbers.number(passage("/d/a.md", 5)) == 2
    assert numbers.number(passage("/d/b.md", 1)) == 4
    assert key(earlier[0]) == key(passage("/d/a.md", 5))


def test_a_given_passage_once_cited_takes_its_place_in_the_list() -> None:
    buffer = ReplyBuffer(10_000, lambda: None)
    sources: list[CitationPartJSON] = [
        {"type": "citation", "n": n, "path": f"/d/{n}.md", "page": None, "lines": [1, 2],
         "quote": "q"}
        for n in (1, 2, 3)
    ]  # fmt: skip
    buffer.given(tuple(sources))
    buffer.append("As [3] and [1] say")
    parts = buffer.json()
    assert parts is not None
    listed = [(p["n"], p.get("cited", True)) for p in parts if p["type"] == "citation"]
    assert listed == [(1, True), (2, False), (3, True)]
    assert json.dumps(parts)  # stored as JSON
