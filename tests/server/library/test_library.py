"""The library: folders indexed in the background, every kind of file read or skipped with a
reason, searched; kept current while the app runs; consistent after kill -9."""

from __future__ import annotations

import os
import sqlite3
import time
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from tests.support.client import request
from tests.support.documents import TOPICS, make_pdf, topic_folder
from tests.support.parley import Parley
from tests.support.process import ServerProcess, child_pids, command_line
from tests.support.upstream import ScriptedUpstream
from tests.support.waiting import wait_for

pytestmark = pytest.mark.slow


def library(parley: Parley) -> dict[str, Any]:
    reply = parley.call("GET", "/api/library")
    assert reply.status == 200, reply.body
    found: dict[str, Any] = reply.json()
    return found


def add(parley: Parley, folder: Path) -> dict[str, Any]:
    reply = parley.call("POST", "/api/library/folders", json_body={"path": str(folder)})
    assert reply.status == 201, reply.body
    added: dict[str, Any] = reply.json()
    return added


def indexed(parley: Parley, files: int, timeout: float = 30) -> dict[str, Any]:
    """The first folder, once `files` files are in the index and the indexer is idle."""

    def done() -> dict[str, Any] | None:
        state = library(parley)
        folder = state["folders"][0]
        settled = state["progress"]["state"] == "idle" and folder["files"] == files
        return folder if settled else None

    found: dict[str, Any] = wait_for(done, timeout)
    return found


def search(parley: Parley, query: str, k: int = 3) -> list[dict[str, Any]]:
    reply = parley.call("GET", f"/api/library/search?q={quote(query)}&k={k}")
    assert reply.status == 200, reply.body
    passages: list[dict[str, Any]] = reply.json()["passages"]
    return passages


def test_a_folder_of_every_kind_is_indexed_and_searched(parley: Parley, tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    files = topic_folder(folder)
    (folder / "page.html").write_text(
        "<html><head><style>p{}</style><script>var hidden = 1;</script></head>"
        "<body><h1>Harbour</h1><p>The lighthouse keeper&amp;crew.</p></body></html>"
    )
    make_pdf(folder / "report.pdf", ["Introduction to zeppelins", "Chapter two on quokkas"])
    make_pdf(folder / "locked.pdf", ["secret"], encrypted=True)
    (folder / "blob.txt").write_bytes(b"abc\x00\x01\x02" * 100)
    (folder / "latin1.txt").write_bytes("caf\xe9".encode("latin-1"))
    (folder / "huge.txt").write_bytes(b"x" * 21_000_000)
    (folder / "photo.jpg").write_bytes(b"\xff\xd8\xff")  # not a kind Parley reads: not listed
    (folder / ".hidden.md").write_text("# hidden")

    added = add(parley, folder)
    assert added["path"] == str(folder.resolve())
    done = indexed(parley, files=len(files) + 2)
    reasons = {Path(s["path"]).name: s["reason"] for s in done["skipped_files"]}
    assert reasons == {
        "blob.txt": "binary, not text",
        "huge.txt": "larger than 20 MB",
        "latin1.txt": "not UTF-8 text",
        "locked.pdf": "an encrypted PDF",
    }
    assert done["skipped"] == 4 and done["chunks"] >= done["files"]

    # Each topic's own file comes first for a question about it (20 questions).
    for word, theme in TOPICS:
        found = search(parley, f"what about {word} {theme}?")
        assert found and found[0]["path"] == str(files[word].resolve()), (word, found[:1])
    (pdf,) = search(parley, "quokkas", k=1)
    assert (Path(pdf["path"]).name, pdf["page"], pdf["lines"]) == ("report.pdf", 2, None)
    (html,) = search(parley, "lighthouse", k=1)
    assert "lighthouse keeper&crew" in html["text"] and "hidden" not in html["text"]
    (markdown,) = search(parley, "aardvark burrows", k=1)
    first, last = markdown["lines"]
    text = files["aardvark"].read_text().splitlines()
    assert "aardvark" in "\n".join(text[first - 1 : last])


def test_changes_while_running_are_followed(parley: Parley, tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    files = topic_folder(folder)
    add(parley, folder)
    indexed(parley, files=len(files))
    files["basalt"].write_text("# Basalt\n\nNow about a wombat instead.\n")
    files["kelp"].unlink()
    (folder / "new.md").write_text("# New\n\nA platypus appears.\n")

    def followed() -> bool:
        found = [p["path"] for p in search(parley, "wombat platypus", k=5)]
        state = library(parley)["folders"][0]
        return bool(len(found) == 2 and state["files"] == len(files))

    wait_for(followed, timeout=15)
    assert search(parley, "kelp forests") == [] or all(
        "kelp" not in p["path"] for p in search(parley, "kelp forests")
    )
    assert all("volcanoes" not in p["text"] for p in search(parley, "basalt", k=5))


def test_removing_a_folder_stops_its_indexing_and_drops_its_entries(
    parley: Parley, tmp_path: Path
) -> None:
    folder = tmp_path / "many"
    folder.mkdir()
    for index in range(2000):
        (folder / f"f{index}.md").write_text(f"# File {index}\n\nnumber{index} " * 40)
    added = add(parley, folder)
    wait_for(lambda: library(parley)["progress"]["done"] > 20, timeout=30)
    began = time.monotonic()
    assert parley.call("DELETE", f"/api/library/folders/{added['id']}").status == 204
    wait_for(lambda: library(parley)["progress"]["state"] == "idle", timeout=5)
    assert time.monotonic() - began < 2
    assert library(parley)["folders"] == []
    assert search(parley, "number5") == []
    assert parley.call("DELETE", f"/api/library/folders/{added['id']}").status == 404


@pytest.mark.parametrize("path", ["relative/dir", "/nonexistent/parley-folder"])
def test_a_bad_folder_is_a_400(parley: Parley, path: str) -> None:
    reply = parley.call("POST", "/api/library/folders", json_body={"path": path})
    assert reply.status == 400, reply.body


def test_a_folder_added_twice_is_a_409(parley: Parley, tmp_path: Path) -> None:
    add(parley, tmp_path)
    reply = parley.call("POST", "/api/library/folders", json_body={"path": str(tmp_path)})
    assert reply.status == 409


def test_kill_9_mid_index_then_restart_is_consistent_and_completes(
    data_dir: Path, upstream: ScriptedUpstream, tmp_path: Path, processes: list[ServerProcess]
) -> None:
    folder = tmp_path / "many"
    folder.mkdir()
    count = 3000
    for index in range(count):
        (folder / f"f{index:04d}.md").write_text(f"# File {index}\n\nmarker{index} " * 60)
    process = ServerProcess(data_dir, upstream.base_url).start()
    processes.append(process)

    def call(method: str, path: str, body: Any = None) -> Any:
        reply = request(process.port, method, path, token=process.token, json_body=body)
        assert reply.status < 300, reply.body
        return reply.json()

    call("POST", "/api/library/folders", {"path": str(folder)})
    wait_for(lambda: call("GET", "/api/library")["progress"]["done"] > 200, timeout=60)
    process.kill()

    index_db = data_dir / "library.sqlite3"
    conn = sqlite3.connect(index_db)
    try:
        conn.execute("INSERT INTO chunks_fts(chunks_fts) VALUES ('integrity-check')")
        files_then = conn.execute("SELECT COUNT(*) FROM files").fetchone()[0]
        orphans = conn.execute(
            "SELECT COUNT(*) FROM files f WHERE skipped IS NULL AND NOT EXISTS "
            "(SELECT 1 FROM chunks c WHERE c.file_id = f.id)"
        ).fetchone()[0]
    finally:
        conn.close()
    assert 0 < files_then < count and orphans == 0  # whole files only

    restarted = ServerProcess(data_dir, upstream.base_url).start()
    processes.append(restarted)
    process = restarted

    def complete() -> bool:
        state = call("GET", "/api/library")
        return bool(state["progress"]["state"] == "idle" and state["folders"][0]["files"] == count)

    wait_for(complete, timeout=120)
    found = call("GET", "/api/library/search?q=marker2999&k=1")["passages"]
    assert Path(found[0]["path"]).name == "f2999.md"
    restarted.terminate()
    conn = sqlite3.connect(index_db)
    try:
        conn.execute("INSERT INTO chunks_fts(chunks_fts) VALUES ('integrity-check')")
        assert conn.execute("SELECT COUNT(DISTINCT path) FROM files").fetchone()[0] == count
    finally:
        conn.close()
    assert os.path.exists(data_dir / "parley.sqlite3")  # the conversations' file is its own


def test_the_watcher_is_a_process_of_its_own_that_never_outlives_parley(
    data_dir: Path, upstream: ScriptedUpstream, tmp_path: Path, processes: list[ServerProcess]
) -> None:
    folder = tmp_path / "docs"
    files = topic_folder(folder)
    process = ServerProcess(data_dir, upstream.base_url).start()
    processes.append(process)

    def call(method: str, path: str, body: Any = None) -> Any:
        reply = request(process.port, method, path, token=process.token, json_body=body)
        assert reply.status < 300, reply.body
        return reply.json() if reply.body else None

    def watchers() -> list[int]:
        return [
            pid
            for pid in child_pids(process.proc.pid)
            if b"server.library.watching" in command_line(pid)
        ]

    added = call("POST", "/api/library/folders", {"path": str(folder)})
    first = wait_for(lambda: watchers() or None, timeout=10)
    assert len(first) == 1
    call("DELETE", f"/api/library/folders/{added['id']}")
    wait_for(lambda: not watchers() and not command_line(first[0]), timeout=5)

    call("POST", "/api/library/folders", {"path": str(folder)})
    wait_for(lambda: call("GET", "/api/library")["folders"][0]["files"] == len(files), 30)
    second = wait_for(lambda: watchers() or None, timeout=10)
    files["basalt"].write_text("# Basalt\n\nNow about a wombat instead.\n")
    found = wait_for(lambda: call("GET", "/api/library/search?q=wombat&k=1")["passages"], 15)
    assert Path(found[0]["path"]).name == files["basalt"].name

    process.kill()
    wait_for(lambda: not command_line(second[0]), timeout=5)  # stdin closed: it ends
