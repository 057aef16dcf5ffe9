"""Projects out and in with their chats: exported before the chats that name them, imported
as new projects (never merged into one here by id); a hostile project in a file is cut to
size or refused with where and why, and a refused import leaves nothing behind."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from server.limits import ProjectLimits
from server.storage.db import connect
from server.transfer import projects as file_projects
from server.transfer import staging
from tests.server.transfer.test_transfer import import_json
from tests.support.parley import Parley
from tests.support.upstream import Script, ScriptedUpstream


def export_all(parley: Parley) -> dict[str, Any]:
    reply = parley.call("GET", "/api/export")
    assert reply.status == 200, reply.body
    document: dict[str, Any] = reply.json()
    return document


def projects(parley: Parley) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = parley.call("GET", "/api/projects").json()["projects"]
    return found


def chats(parley: Parley) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = parley.call("GET", "/api/conversations").json()["conversations"]
    return found


@pytest.fixture
def source(parley: Parley, upstream: ScriptedUpstream, tmp_path: Path) -> dict[str, Any]:
    """An export of two projects (one with a chat, one empty) and a chat of no project."""
    folder = tmp_path / "notes"
    folder.mkdir()
    made = parley.call(
        "POST",
        "/api/projects",
        json_body={
            "name": "Ship",
            "instructions": "Talk like a captain.",
            "folders": [str(folder)],
        },
    ).json()
    assert parley.call("POST", "/api/projects", json_body={"name": "Empty"}).status == 201
    for title, project_id in (("in the ship", made["id"]), ("loose", None)):
        fields = {"title": title} | ({"project_id": project_id} if project_id else {})
        cid = parley.new_conversation(**fields)
        upstream.queue = [Script(texts=["Aye."])]
        parley.send(cid, "hello").read_all()
    return export_all(parley)


def test_an_export_lists_the_projects_before_the_chats_that_name_them(
    parley: Parley, source: dict[str, Any]
) -> None:
    assert list(source)[:4] == ["format", "version", "exported_at", "projects"]
    names = {p["name"]: p for p in source["projects"]}
    assert set(names) == {"Ship", "Empty"}
    assert names["Ship"]["instructions"] == "Talk like a captain."
    by_title = {c["title"]: c for c in source["conversations"]}
    assert by_title["in the ship"]["project_id"] == names["Ship"]["id"]
    assert "project_id" not in by_title["loose"]
    # One chat's export carries its project alone.
    cid = by_title["in the ship"]["id"]
    one = parley.call("GET", f"/api/conversations/{cid}/export?format=json").json()
    assert [p["name"] for p in one["projects"]] == ["Ship"]
    loose = by_title["loose"]["id"]
    assert (
        parley.call("GET", f"/api/conversations/{loose}/export?format=json").json()["projects"]
        == []
    )


def test_an_import_makes_new_projects_with_their_chats(
    source: dict[str, Any], tmp_path: Path, upstream: ScriptedUpstream
) -> None:
    other = Parley(tmp_path / "other", upstream.base_url).start()
    try:
        for _ in range(2):  # twice: the second makes projects of its own, never merges
            reply = import_json(other, source, duplicates="copy")
            assert reply.status == 201, reply.body
        found = projects(other)
        assert sorted(p["name"] for p in found) == ["Empty", "Empty", "Ship", "Ship"]
        exported_ids = {p["id"] for p in source["projects"]}
        assert not exported_ids & {p["id"] for p in found}
        ships = [p for p in found if p["name"] == "Ship"]
        assert [p["chats"] for p in ships] == [1, 1]
        assert ships[0]["instructions"] == "Talk like a captain."
        assert ships[0]["folders"] == source["projects"][0]["folders"]
        placed = {c["project_id"] for c in chats(other) if c["title"] == "in the ship"}
        assert placed == {p["id"] for p in ships}
        assert {c["project_id"] for c in chats(other) if c["title"] == "loose"} == {None}
    finally:
        other.stop()


def test_an_imported_chat_of_a_project_skipped_as_already_here_makes_no_empty_copy(
    parley: Parley, source: dict[str, Any]
) -> None:
    before = projects(parley)
    reply = import_json(parley, source)  # every chat is here: skipped
    assert reply.status == 201, reply.body
    after = projects(parley)
    # The project whose chats were all skipped is not made again; the empty one is.
    assert sorted(p["name"] for p in after) == sorted([p["name"] for p in before] + ["Empty"])


def test_a_name_too_long_is_cut_and_nothing_else_is_lost(
    parley: Parley, source: dict[str, Any]
) -> None:
    document = copy.deepcopy(source)
    document["projects"][0]["name"] = "N" * 100_000 + "\n\t"
    reply = import_json(parley, document, duplicates="copy")
    assert reply.status == 201, reply.body
    long = [p for p in projects(parley) if p["name"].startswith("NNN")]
    assert len(long) == 1 and len(long[0]["name"]) == ProjectLimits.max_name_chars
    assert long[0]["name"].endswith("…") and long[0]["chats"] == 1


@pytest.mark.parametrize(
    ("change", "where", "problem"),
    [
        (
            lambda d: d["projects"][0].update(
                instructions="x" * (ProjectLimits.max_instructions_chars + 1)
            ),
            "projects[0].instructions",
            "is longer than",
        ),
        (lambda d: d["projects"][0].update(instructions=7), "projects[0].instructions", "string"),
        (lambda d: d.update(projects={"a": 1}), "projects", "must be a list"),
        (lambda d: d["projects"].append("oops"), "projects[2]", "must be an object"),
        (lambda d: d["projects"][1].update(id=d["projects"][0]["id"]), "projects[1].id", "twice"),
        (lambda d: d["projects"][0].update(folders=["relative"]), "folders[0]", "absolute"),
        (lambda d: d["projects"][0].update(name="a\x00b"), "projects[0].name", "NUL"),
        (
            lambda d: d["conversations"][0].update(project_id="not-in-the-file"),
            "conversations[0].project_id",
            "names no project",
        ),
    ],
)
def test_a_hostile_project_is_refused_and_nothing_is_imported(
    parley: Parley, source: dict[str, Any], change: Any, where: str, problem: str
) -> None:
    document = copy.deepcopy(source)
    change(document)
    before = (projects(parley), chats(parley))
    reply = import_json(parley, document, duplicates="copy")
    assert reply.status == 400, reply.body
    message = reply.json()["error"]["message"]
    assert where in message and problem in message
    assert (projects(parley), chats(parley)) == before


def test_too_many_projects_are_refused(parley: Parley) -> None:
    many = [
        {"id": f"p{i}", "name": f"p{i}", "created_at": 1.0}
        for i in range(ProjectLimits.max_imported + 1)
    ]
    document = {
        "format": "parley",
        "version": 1,
        "exported_at": 1.0,
        "projects": many,
        "conversations": [],
    }
    reply = import_json(parley, document)
    assert reply.status == 400 and "projects: holds more than" in reply.json()["error"]["message"]
    assert projects(parley) == []


def test_projects_a_cut_import_staged_are_found_and_deleted(tmp_path: Path) -> None:
    conn = connect(tmp_path / "db.sqlite3")
    try:
        project = file_projects.Project("f", "Staged", "", [], 1.0, 1.0)
        file_projects.insert_empty(conn, "import-1", [project])
        assert staging.stale_imports(conn) == ["import-1"]
        hidden = conn.execute("SELECT import_id FROM projects").fetchall()
        assert [row[0] for row in hidden] == ["import-1"]
        while staging.discard(conn, "import-1", 100):
            pass
        assert conn.execute("SELECT count(*) FROM projects").fetchone()[0] == 0
        assert staging.stale_imports(conn) == []
    finally:
        conn.close()


def test_a_file_s_projects_are_read_only_up_to_its_conversations(tmp_path: Path) -> None:
    path = tmp_path / "export.json"
    # A second "projects" after the chats is never read: Parley writes its projects first.
    path.write_text(
        '{"format": "parley", "version": 1, "projects": [{"id": "a", "name": "A", '
        '"created_at": 1}], "conversations": [], "projects": [{"id": "b", "name": "B", '
        '"created_at": 1}]}',
        encoding="utf-8",
    )
    assert list(file_projects.read(path)) == ["a"]
