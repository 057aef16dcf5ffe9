"""The memory routes (server/routes/memory.py) on a real server: read with each line's chat
and the file's path, the editor's save checked against the version it read, "Forget" one
line, delete the file; a file Parley will not read is shown with its error and left as is."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

from tests.server.memory.scopes import chat_in, new_project
from tests.support.parley import Parley

CHAT = "a" * 32


def memory(parley: Parley, path: str = "/api/memory") -> dict[str, Any]:
    reply = parley.call("GET", path)
    assert reply.status == 200, reply.body
    found: dict[str, Any] = reply.json()
    return found


def test_no_file_reads_as_empty_with_the_path_to_make_it(parley: Parley, data_dir: Path) -> None:
    found = memory(parley)
    assert found == {
        "project_id": None,
        "path": str(data_dir / "memory" / "global.md"),
        "exists": False,
        "version": None,
        "text": "",
        "lines": [],
        "error": None,
        "max_bytes": 65536,
    }


def test_lines_come_with_the_chat_they_were_remembered_in(parley: Parley, data_dir: Path) -> None:
    path = data_dir / "memory" / "global.md"
    path.parent.mkdir(parents=True)
    path.write_text(f"# Mine\n\n- by hand\n- Metric units. <!-- chat:{CHAT} -->\n")
    found = memory(parley)
    assert found["exists"] is True and found["error"] is None
    assert [(x["line"], x["text"], x["chat_id"]) for x in found["lines"]] == [
        (1, "# Mine", None),
        (3, "by hand", None),
        (4, "Metric units.", CHAT),
    ]


def test_the_editor_saves_over_the_version_it_read_else_409_and_nothing_lost(
    parley: Parley, data_dir: Path
) -> None:
    saved = parley.call("PUT", "/api/memory", json_body={"text": "one\n", "version": None})
    assert saved.status == 200, saved.body
    version = saved.json()["version"]
    path = data_dir / "memory" / "global.md"
    assert path.read_text() == "one\n"
    path.write_text("one\nby hand\n")
    stale = parley.call("PUT", "/api/memory", json_body={"text": "two\n", "version": version})
    assert stale.status == 409 and stale.json()["error"]["code"] == "memory_changed"
    assert path.read_text() == "one\nby hand\n"
    unsaid = parley.call("PUT", "/api/memory", json_body={"text": "two\n"})
    assert unsaid.status == 400
    binary = parley.call("PUT", "/api/memory", json_body={"text": "a\x01b", "version": version})
    assert binary.status == 400 and "binary bytes" in binary.json()["error"]["message"]
    assert path.read_text() == "one\nby hand\n"
    now = memory(parley)["version"]
    again = parley.call("PUT", "/api/memory", json_body={"text": "two\n", "version": now})
    assert again.status == 200 and path.read_text() == "two\n"


def test_forget_removes_one_line_and_keeps_a_hand_edit(parley: Parley, data_dir: Path) -> None:
    path = data_dir / "memory" / "global.md"
    path.parent.mkdir(parents=True)
    path.write_text(f"- keep\n- Metric units. <!-- chat:{CHAT} -->\n- also kept\n")
    line = next(x for x in memory(parley)["lines"] if x["chat_id"] == CHAT)
    path.write_text(f"- new by hand\n- keep\n- Metric units. <!-- chat:{CHAT} -->\n- also kept\n")
    reply = parley.call("DELETE", f"/api/memory/lines/{line['id']}")
    assert reply.status == 200, reply.body
    assert path.read_text() == "- new by hand\n- keep\n- also kept\n"
    assert [x["text"] for x in reply.json()["lines"]] == ["new by hand", "keep", "also kept"]
    gone = parley.call("DELETE", f"/api/memory/lines/{line['id']}")
    assert gone.status == 404


def test_a_project_has_its_own_file_and_an_unknown_project_none(
    parley: Parley, data_dir: Path
) -> None:
    pid = new_project(parley, "Garden")
    base = f"/api/memory/projects/{pid}"
    saved = parley.call("PUT", base, json_body={"text": "- roses\n", "version": None})
    assert saved.status == 200, saved.body
    assert (data_dir / "memory" / "projects" / f"{pid}.md").read_text() == "- roses\n"
    assert memory(parley, base)["project_id"] == pid
    assert memory(parley)["exists"] is False  # the chats outside projects have their own
    assert parley.call("GET", "/api/memory/projects/nope").status == 404
    assert parley.call("GET", "/api/memory/projects/..%2F..%2Fx").status == 404
    # A chat's own memory is its project's.
    cid = chat_in(parley, pid)
    assert memory(parley, f"/api/conversations/{cid}/memory")["text"] == "- roses\n"
    outside = chat_in(parley, None)
    assert memory(parley, f"/api/conversations/{outside}/memory")["project_id"] is None


def test_a_50_mb_file_is_shown_with_its_error_and_left_as_it_is(
    parley: Parley, data_dir: Path
) -> None:
    path = data_dir / "memory" / "global.md"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"x" * (50 * 1024 * 1024))
    before = os.stat(path)
    found = memory(parley)
    assert found["exists"] is True and found["lines"] == [] and found["text"] == ""
    assert "larger than 65,536 bytes" in found["error"] and found["path"] == str(path)
    put = parley.call("PUT", "/api/memory", json_body={"text": "x", "version": None})
    assert put.status == 409 and put.json()["error"]["code"] == "memory_unreadable"
    forget = parley.call("DELETE", "/api/memory/lines/0123456789abcdef")
    assert forget.status == 409 and forget.json()["error"]["code"] == "memory_unreadable"
    after = os.stat(path)
    assert (after.st_size, after.st_mtime_ns, after.st_ino) == (
        before.st_size,
        before.st_mtime_ns,
        before.st_ino,
    )
    # The user may still delete it from the app.
    assert parley.call("DELETE", "/api/memory").status == 204
    assert not path.exists()
    assert parley.call("DELETE", "/api/memory").status == 404


def test_delete_with_a_version_keeps_a_file_saved_since(parley: Parley, data_dir: Path) -> None:
    saved = parley.call("PUT", "/api/memory", json_body={"text": "one\n", "version": None})
    version = saved.json()["version"]
    path = data_dir / "memory" / "global.md"
    path.write_text("one\nby hand\n")
    refused = parley.call("DELETE", f"/api/memory?version={version}")
    assert refused.status == 409 and path.read_text() == "one\nby hand\n"
    now = memory(parley)["version"]
    assert parley.call("DELETE", f"/api/memory?version={now}").status == 204
    assert not path.exists()


def test_a_deleted_project_s_memory_file_is_kept_and_can_still_be_deleted(
    parley: Parley, data_dir: Path
) -> None:
    pid = new_project(parley, "Old")
    base = f"/api/memory/projects/{pid}"
    assert parley.call("PUT", base, json_body={"text": "- mine\n", "version": None}).status == 200
    assert asyncio.run(parley.services.store.projects.delete(pid)) == []
    path = data_dir / "memory" / "projects" / f"{pid}.md"
    assert path.read_text() == "- mine\n"  # the user's data: not deleted with the project
    assert parley.call("GET", base).status == 404
    assert parley.call("DELETE", base).status == 204
    assert not path.exists()
