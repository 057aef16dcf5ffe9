"""The projects' API on a real server: made, renamed, given instructions and folders, deleted
(saying what becomes of their chats); chats moved in and out, made in one, listed and searched
within one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from server.limits import ProjectLimits
from tests.support.parley import Parley
from tests.support.upstream import Script, ScriptedUpstream


def create(parley: Parley, **fields: Any) -> dict[str, Any]:
    reply = parley.call("POST", "/api/projects", json_body=fields)
    assert reply.status == 201, reply.body
    project: dict[str, Any] = reply.json()
    return project


def listed(parley: Parley, query: str = "") -> list[str]:
    reply = parley.call("GET", f"/api/conversations{query}")
    assert reply.status == 200, reply.body
    return [c["title"] for c in reply.json()["conversations"]]


def test_a_project_is_made_renamed_and_given_instructions(parley: Parley) -> None:
    project = create(parley, name="  Garden \n plans ", instructions="  Answer in French.  ")
    assert (project["name"], project["instructions"]) == ("Garden plans", "Answer in French.")
    assert (project["folders"], project["chats"]) == ([], 0)
    path = f"/api/projects/{project['id']}"
    reply = parley.call("PATCH", path, json_body={"name": "Allotment"})
    assert reply.status == 200, reply.body
    assert reply.json()["instructions"] == "Answer in French."  # left as it was
    reply = parley.call("PATCH", path, json_body={"instructions": None})
    assert (reply.json()["name"], reply.json()["instructions"]) == ("Allotment", "")
    assert parley.call("GET", path).json()["name"] == "Allotment"
    names = [p["name"] for p in parley.call("GET", "/api/projects").json()["projects"]]
    assert names == ["Allotment"]


@pytest.mark.parametrize(
    ("fields", "problem"),
    [
        ({}, "'name' is required"),
        ({"name": " \t "}, "'name' must not be empty"),
        ({"name": "x" * (ProjectLimits.max_name_chars + 1)}, "'name' is longer than"),
        ({"name": "a\x00b"}, "NUL"),
        (
            {"name": "p", "instructions": "x" * (ProjectLimits.max_instructions_chars + 1)},
            "'instructions' is longer than",
        ),
        ({"name": "p", "folders": ["relative/path"]}, "'folders' must be"),
        ({"name": "p", "folders": "/tmp"}, "'folders' must be"),
    ],
)
def test_a_bad_field_is_refused_and_nothing_is_made(
    parley: Parley, fields: dict[str, Any], problem: str
) -> None:
    reply = parley.call("POST", "/api/projects", json_body=fields)
    assert reply.status == 400, reply.body
    assert problem in reply.json()["error"]["message"]
    assert parley.call("GET", "/api/projects").json()["projects"] == []


def test_a_chat_made_in_a_project_moves_out_and_back(parley: Parley) -> None:
    project = create(parley, name="Work")
    inside = parley.new_conversation(title="inside", project_id=project["id"])
    outside = parley.new_conversation(title="outside")
    assert parley.conversation(inside)["project_id"] == project["id"]
    assert listed(parley, f"?project={project['id']}") == ["inside"]
    assert listed(parley, "?project=none") == ["outside"]
    assert sorted(listed(parley)) == ["inside", "outside"]

    moved = parley.call(
        "PUT", f"/api/conversations/{outside}/project", json_body={"project_id": project["id"]}
    )
    assert moved.status == 200 and moved.json()["project_id"] == project["id"]
    out = parley.call("PUT", f"/api/conversations/{inside}/project", json_body={"project_id": None})
    assert out.status == 200 and out.json()["project_id"] is None
    assert listed(parley, f"?project={project['id']}") == ["outside"]
    assert parley.call("GET", f"/api/projects/{project['id']}").json()["chats"] == 1


def test_a_chat_cannot_go_to_a_project_that_is_not_there(parley: Parley) -> None:
    reply = parley.call("POST", "/api/conversations", json_body={"project_id": "nope"})
    assert reply.status == 404 and "no project" in reply.json()["error"]["message"]
    assert listed(parley) == []
    cid = parley.new_conversation(title="t")
    path = f"/api/conversations/{cid}/project"
    assert parley.call("PUT", path, json_body={"project_id": "nope"}).status == 404
    assert parley.call("PUT", path, json_body={}).status == 400
    assert (
        parley.call("PUT", "/api/conversations/nope/project", json_body={"project_id": None}).status
        == 404
    )
    assert parley.conversation(cid)["project_id"] is None


def test_search_can_be_limited_to_a_project(parley: Parley, upstream: ScriptedUpstream) -> None:
    project = create(parley, name="Birds")
    inside = parley.new_conversation(title="a", project_id=project["id"])
    outside = parley.new_conversation(title="b")
    for cid in (inside, outside):
        upstream.queue = [Script(texts=["Noted."])]
        parley.send(cid, "herons wade in shallow water").read_all()
    assert sorted(listed(parley, "?q=herons")) == ["a", "b"]
    assert listed(parley, f"?q=herons&project={project['id']}") == ["a"]
    assert listed(parley, "?q=herons&project=none") == ["b"]
    assert listed(parley, "?q=herons&project=unknown") == []


def test_deleting_a_project_with_chats_asks_what_becomes_of_them(
    parley: Parley, upstream: ScriptedUpstream
) -> None:
    project = create(parley, name="Old")
    kept = parley.new_conversation(title="kept", project_id=project["id"])
    path = f"/api/projects/{project['id']}"
    refused = parley.call("DELETE", path)
    assert refused.status == 409 and refused.json()["error"]["code"] == "project_not_empty"
    assert parley.call("DELETE", f"{path}?chats=maybe").status == 400
    assert parley.call("DELETE", f"{path}?chats=move").status == 204
    assert parley.conversation(kept)["project_id"] is None
    assert parley.call("GET", path).status == 404

    doomed_project = create(parley, name="Doomed")
    doomed = parley.new_conversation(title="doomed", project_id=doomed_project["id"])
    upstream.queue = [Script(texts=["bye"])]
    parley.send(doomed, "hello").read_all()
    reply = parley.call("DELETE", f"/api/projects/{doomed_project['id']}?chats=delete")
    assert reply.status == 204, reply.body
    assert parley.call("GET", f"/api/conversations/{doomed}").status == 404
    assert listed(parley) == ["kept"]
    assert parley.call("DELETE", f"/api/projects/{doomed_project['id']}").status == 404


def test_folders_must_be_folders_and_join_the_library(parley: Parley, tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    (notes / "inner").mkdir(parents=True)
    project = create(parley, name="Docs", folders=[str(notes)])
    assert project["folders"] == [str(notes.resolve())]
    library = parley.call("GET", "/api/library").json()
    assert [f["path"] for f in library["folders"]] == [str(notes.resolve())]
    # A folder below a library folder is in the index already: not added again.
    path = f"/api/projects/{project['id']}"
    reply = parley.call("PATCH", path, json_body={"folders": [str(notes / "inner")]})
    assert reply.status == 200 and reply.json()["folders"] == [str((notes / "inner").resolve())]
    assert len(parley.call("GET", "/api/library").json()["folders"]) == 1
    missing = parley.call("PATCH", path, json_body={"folders": [str(tmp_path / "missing")]})
    assert missing.status == 400 and "is not a folder" in missing.json()["error"]["message"]
    assert parley.call("GET", path).json()["folders"] == [str((notes / "inner").resolve())]


def test_a_secret_place_is_never_added_for_a_project(parley: Parley) -> None:
    reply = parley.call("POST", "/api/projects", json_body={"name": "p", "folders": ["/proc"]})
    assert reply.status == 400, reply.body
    assert parley.call("GET", "/api/projects").json()["projects"] == []
    assert parley.call("GET", "/api/library").json()["folders"] == []


def test_a_hidden_folder_needs_the_user_s_confirmation(parley: Parley, tmp_path: Path) -> None:
    hidden = tmp_path / ".private"
    hidden.mkdir()
    body: dict[str, Any] = {"name": "p", "folders": [str(hidden)]}
    reply = parley.call("POST", "/api/projects", json_body=body)
    assert reply.status == 409 and reply.json()["error"]["code"] == "sensitive_folder"
    assert parley.call("GET", "/api/library").json()["folders"] == []
    reply = parley.call("POST", "/api/projects", json_body={**body, "confirm": True})
    assert reply.status == 201, reply.body
    assert [f["path"] for f in parley.call("GET", "/api/library").json()["folders"]] == [
        str(hidden.resolve())
    ]
