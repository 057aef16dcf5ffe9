"""A cited file is read again only when a folder of the library holds it now (issue 37): a
citation's path from an imported chat (`/etc/passwd`, a key, `/dev/zero`, a FIFO) is never
read, and a file inside the library is read as any file of it (no link, no FIFO)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest

from tests.server.library.test_library import add, indexed
from tests.support.parley import Parley
from tests.support.upstream import Script, ScriptedUpstream

pytestmark = pytest.mark.slow


def source(parley: Parley, path: str, lines: tuple[int, int] | None = (1, 2)) -> dict[str, Any]:
    query: dict[str, Any] = {"path": path}
    if lines is not None:
        query.update(first=lines[0], last=lines[1])
    reply = parley.call("GET", "/api/library/source?" + urlencode(query))
    assert reply.status == 200, reply.body
    found: dict[str, Any] = reply.json()
    return found


@pytest.fixture
def library_folder(parley: Parley, tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    folder.mkdir()
    lines = [f"line {n} about quokkas" for n in range(1, 21)]
    (folder / "notes.md").write_text("\n".join(lines) + "\n")
    add(parley, folder)
    indexed(parley, files=1)
    return folder.resolve()


def test_a_cited_file_in_the_library_is_read_at_its_lines(
    parley: Parley, library_folder: Path
) -> None:
    found = source(parley, str(library_folder / "notes.md"), (10, 11))
    assert found["in_library"] is True and found["reason"] is None
    assert [line["n"] for line in found["lines"]] == list(range(7, 15))
    assert found["lines"][3] == {"n": 10, "text": "line 10 about quokkas"}


@pytest.mark.parametrize(
    "path",
    [
        "/etc/passwd",
        "/proc/self/environ",
        "/dev/zero",
        "{folder}/../secret.md",
        "{folder}/./notes.md",
        "{folder}",
        "relative/notes.md",
    ],
)
def test_a_path_outside_the_library_is_never_read(
    parley: Parley, library_folder: Path, path: str
) -> None:
    (library_folder.parent / "secret.md").write_text("the secret")
    found = source(parley, path.format(folder=library_folder))
    assert (found["in_library"], found["lines"]) == (False, None)
    assert "not in a folder of your library" in found["reason"]


def refused(parley: Parley, path: Path) -> tuple[int, str, str]:
    reply = parley.call("GET", "/api/library/source?" + urlencode({"path": str(path)}))
    error = reply.json()["error"]
    return reply.status, error["code"], error["message"]


def test_a_fifo_or_a_link_inside_the_library_is_not_read(
    parley: Parley, library_folder: Path, tmp_path: Path
) -> None:
    # Neither was ever indexed (the walk lists no FIFO and no link): no citation points at
    # them. (A file of the index swapped for either is refused by its read: test_reading.py.)
    os.mkfifo(library_folder / "pipe.md")  # nobody writes: a blocking read would hang here
    (tmp_path / "key").write_text("-----BEGIN OPENSSH PRIVATE KEY-----\n")
    (library_folder / "key.md").symlink_to(tmp_path / "key")
    for name in ("pipe.md", "key.md"):
        status, code, _ = refused(parley, library_folder / name)
        assert (status, code) == (404, "not_indexed")


SECRETS = {
    ".env": "OPENAI_API_KEY=sk-secret\n",
    ".git/config": '[remote "origin"]\n\turl = https://token@example.com/x.git\n',
    ".ssh/id_rsa": "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk\n",
    ".hidden/notes.md": "hidden notes\n",
    "node_modules/pkg/README.md": "a package's readme\n",
}


def test_the_walks_hidden_and_secret_places_are_refused_and_a_document_is_served(
    parley: Parley, tmp_path: Path
) -> None:
    folder = tmp_path / "docs"
    for name, text in SECRETS.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    (folder / "notes.md").write_text("line 1 about quokkas\nline 2\n")
    add(parley, folder)
    indexed(parley, files=1)  # notes.md alone: the walk passes over the rest
    folder = folder.resolve()
    for name in SECRETS:
        status, code, message = refused(parley, folder / name)
        assert (status, code) == (403, "not_a_document"), name
        assert "never read by Parley" in message
        assert "secret" not in message and "token" not in message and "hidden notes" not in message
    found = source(parley, str(folder / "notes.md"), (1, 1))
    assert found["lines"][0] == {"n": 1, "text": "line 1 about quokkas"}


def test_a_citation_from_an_imported_chat_is_not_in_the_library(
    parley: Parley, upstream: ScriptedUpstream, library_folder: Path
) -> None:
    upstream.script = Script(texts=["See ", "[1]."])
    cid = parley.new_conversation()
    parley.send(cid, "where?").read_all()
    document = parley.call("GET", f"/api/conversations/{cid}/export?format=json").json()
    reply = document["conversations"][0]["messages"][-1]
    reply["parts"] = [
        {"type": "text", "text": reply["content"]},
        {
            "type": "citation", "n": 1, "path": "/etc/passwd", "page": None, "lines": [1, 3],
            "quote": "root:x:0:0",
        },
    ]  # fmt: skip
    assert parley.call("DELETE", f"/api/conversations/{cid}").status == 204
    imported = parley.call("POST", "/api/import", json_body=document)
    assert imported.status == 201, imported.body
    (new_id,) = imported.json()["conversations"]
    messages = parley.conversation(new_id)["messages"]
    (cited,) = [p for p in messages[-1]["parts"] if p["type"] == "citation"]
    assert cited["path"] == "/etc/passwd"
    found = source(parley, cited["path"], tuple(cited["lines"]))
    assert (found["in_library"], found["lines"]) == (False, None)


@pytest.mark.parametrize(
    "query",
    ["path=", "path=/a&first=2", "path=/a&first=3&last=2", "path=/a&first=0&last=1"],
)
def test_a_bad_source_request_is_a_400(parley: Parley, query: str) -> None:
    assert parley.call("GET", f"/api/library/source?{query}").status == 400
