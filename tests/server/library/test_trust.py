"""The library keeps its trust boundary (issue 37): nothing outside its folders is indexed or
sent to the model, whatever changes under a scan; nested folders keep their files; a folder
that holds secrets is added only when the user confirms it."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from server.library import indexer
from server.library.reading import Identity
from tests.server.library.test_library import add, library, search
from tests.support.parley import Parley
from tests.support.tools import untrusted_text
from tests.support.upstream import Script, ScriptedUpstream
from tests.support.waiting import wait_for

pytestmark = pytest.mark.slow

KEY = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA quokkakey\n"


@pytest.fixture
def secret(tmp_path: Path) -> Path:
    key = tmp_path / "home" / ".ssh" / "id_rsa"
    key.parent.mkdir(parents=True)
    key.write_text(KEY)
    return key


@pytest.fixture
def swap_after_walk(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Callable[[], None]]]:
    """Changes made between the walk of the next scan and its reads: the race of an attack."""
    swaps: list[Callable[[], None]] = []
    real_walk = indexer.walk

    def walk_then_swap(root: str) -> dict[str, Identity]:
        found = real_walk(root)
        while swaps:
            swaps.pop(0)()
        return found

    monkeypatch.setattr(indexer, "walk", walk_then_swap)
    yield swaps


def folder_state(parley: Parley, path: Path) -> dict[str, Any]:
    found: dict[str, Any] = next(f for f in library(parley)["folders"] if f["path"] == str(path))
    return found


def settled(parley: Parley, path: Path, files: int, skipped: int) -> dict[str, Any]:
    def done() -> dict[str, Any] | None:
        state = library(parley)
        folder = next((f for f in state["folders"] if f["path"] == str(path)), None)
        ready = state["progress"]["state"] == "idle" and folder is not None
        return (
            folder if ready and (folder["files"], folder["skipped"]) == (files, skipped) else None
        )

    found: dict[str, Any] = wait_for(done, timeout=30)
    return found


def docs(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a-notes.md").write_text("# Notes\n\nThe quokka smiles at the ferry.\n")
    (folder / "b-plans.md").write_text("# Plans\n\nA wombat digs a burrow.\n")
    return folder.resolve()


def test_a_file_swapped_for_a_link_during_a_scan_never_reaches_the_model(
    parley: Parley,
    upstream: ScriptedUpstream,
    tmp_path: Path,
    secret: Path,
    swap_after_walk: list[Callable[[], None]],
) -> None:
    folder = docs(tmp_path)
    notes = folder / "a-notes.md"
    kept = tmp_path / "kept.md"

    def swap() -> None:
        os.replace(notes, kept)
        notes.symlink_to(secret)

    swap_after_walk.append(swap)
    add(parley, folder)
    state = settled(parley, folder, files=1, skipped=1)
    assert state["skipped_files"][0]["path"] == str(notes)
    assert "link" in state["skipped_files"][0]["reason"]
    assert search(parley, "OPENSSH quokkakey") == []

    # The model searches the documents (never asked): the key is not in what it is told.
    search_call = {"name": "search_documents", "arguments": '{"query": "OPENSSH quokkakey"}'}
    upstream.queue = [Script(tokens=0, tool_calls=[search_call]), Script(texts=["done"])]
    cid = parley.new_conversation(documents=True)
    parley.send(cid, "what keys do I have?").read_all()
    told = untrusted_text(upstream.records[1].body["messages"][-1]["content"])
    assert "PRIVATE KEY" not in told and "quokkakey" not in told

    # The original put back (same inode, size and time): read at the next scan.
    notes.unlink()
    os.replace(kept, notes)
    wait_for(lambda: search(parley, "quokka ferry"), timeout=30)
    assert folder_state(parley, folder)["skipped"] == 0


def test_a_folder_swapped_for_a_link_during_a_scan_is_not_followed(
    parley: Parley, tmp_path: Path, secret: Path, swap_after_walk: list[Callable[[], None]]
) -> None:
    folder = docs(tmp_path)
    (folder / "sub").mkdir()
    (folder / "sub" / "id.md").write_text("# Sub\n\nplain words\n")
    (secret.parent / "id.md").write_text(KEY)

    def swap() -> None:
        os.replace(folder / "sub", tmp_path / "sub-kept")
        (folder / "sub").symlink_to(secret.parent)

    swap_after_walk.append(swap)
    add(parley, folder)
    # The scan's read of sub/id.md (after the swap) is refused as a link; the watcher may
    # then see the swap and rescan, whose walk no longer lists sub/ at all: either way the
    # two plain files are indexed and the key never is.
    state = wait_for(lambda: _settled_either(parley, folder), timeout=30)
    if state["skipped"]:
        assert "link" in state["skipped_files"][0]["reason"]
    assert search(parley, "OPENSSH quokkakey") == []
    assert search(parley, "plain words") == []


def _settled_either(parley: Parley, path: Path) -> dict[str, Any] | None:
    state = library(parley)
    folder = next((f for f in state["folders"] if f["path"] == str(path)), None)
    if state["progress"]["state"] != "idle" or folder is None:
        return None
    return folder if folder["files"] == 2 and folder["skipped"] in (0, 1) else None


def test_a_fifo_or_a_growing_file_swapped_in_is_skipped_and_the_indexer_goes_on(
    parley: Parley, tmp_path: Path, swap_after_walk: list[Callable[[], None]]
) -> None:
    folder = docs(tmp_path)
    notes, plans = folder / "a-notes.md", folder / "b-plans.md"

    def swap() -> None:
        notes.unlink()
        os.mkfifo(notes)  # nobody writes to it: a blocking read would stop the indexer
        with plans.open("ab") as grown:
            grown.truncate(1_500_000_000)  # grew after the walk: sparse, 1.5 GB

    swap_after_walk.append(swap)
    add(parley, folder)
    state = settled(parley, folder, files=0, skipped=2)
    reasons = {Path(s["path"]).name: s["reason"] for s in state["skipped_files"]}
    assert reasons["a-notes.md"].startswith("not a regular file")
    assert reasons["b-plans.md"].startswith("larger than 20 MB")
    # The one indexer is free: another folder is indexed.
    other = tmp_path / "other"
    other.mkdir()
    (other / "kelp.md").write_text("# Kelp\n\nforests of kelp\n")
    add(parley, other)
    settled(parley, other.resolve(), files=1, skipped=0)


def test_nested_folders_keep_a_file_while_either_holds_it(parley: Parley, tmp_path: Path) -> None:
    lib = docs(tmp_path)
    (lib / "sub").mkdir()
    (lib / "sub" / "deep.md").write_text("# Deep\n\nthe narwhal's tusk\n")
    outer = add(parley, lib)
    settled(parley, lib, files=3, skipped=0)
    inner = add(parley, lib / "sub")
    settled(parley, lib / "sub", files=1, skipped=0)
    assert parley.call("DELETE", f"/api/library/folders/{inner['id']}").status == 204
    wait_for(lambda: library(parley)["progress"]["state"] == "idle", timeout=10)
    assert [Path(p["path"]).name for p in search(parley, "narwhal tusk")] == ["deep.md"]
    assert folder_state(parley, lib)["files"] == 3

    # The other way round: the inner folder keeps its files when the outer one goes.
    inner = add(parley, lib / "sub")
    settled(parley, lib / "sub", files=1, skipped=0)
    assert parley.call("DELETE", f"/api/library/folders/{outer['id']}").status == 204
    wait_for(lambda: library(parley)["progress"]["state"] == "idle", timeout=10)
    assert [Path(p["path"]).name for p in search(parley, "narwhal tusk")] == ["deep.md"]
    assert search(parley, "quokka ferry") == []
    assert parley.call("DELETE", f"/api/library/folders/{inner['id']}").status == 204
    assert search(parley, "narwhal tusk") == []


def test_a_folder_that_holds_secrets_is_added_only_when_confirmed(
    parley: Parley, tmp_path: Path, secret: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = secret.parent.parent
    monkeypatch.setenv("HOME", str(home))
    (secret.parent / "config.yaml").write_text("token: quokkakey\n")
    refused = parley.call("POST", "/api/library/folders", json_body={"path": str(secret.parent)})
    assert refused.status == 409, refused.body
    error = refused.json()["error"]
    assert error["code"] == "sensitive_folder"
    assert "keys, passwords" in error["message"] and "without asking" in error["message"]
    assert library(parley)["folders"] == []

    hidden = home / ".notes"
    hidden.mkdir()
    refused = parley.call("POST", "/api/library/folders", json_body={"path": str(hidden)})
    assert (refused.status, refused.json()["error"]["code"]) == (409, "sensitive_folder")
    assert "hidden folder" in refused.json()["error"]["message"]

    confirmed = {"path": str(secret.parent), "confirm": True}
    assert parley.call("POST", "/api/library/folders", json_body=confirmed).status == 201
    settled(parley, secret.parent.resolve(), files=1, skipped=0)


def test_a_home_folder_is_indexed_without_its_secret_places(
    parley: Parley, tmp_path: Path, secret: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = secret.parent.parent
    monkeypatch.setenv("HOME", str(home))
    (secret.parent / "config.yaml").write_text("token: quokkakey\n")
    profile = home / "snap" / "firefox" / "profile"
    profile.mkdir(parents=True)
    (profile / "logins.json").write_text('{"password": "quokkakey"}')
    (home / "letter.md").write_text("# Letter\n\nDear quokka\n")
    add(parley, home)
    settled(parley, home.resolve(), files=1, skipped=0)
    assert [Path(p["path"]).name for p in search(parley, "quokkakey quokka")] == ["letter.md"]


@pytest.mark.parametrize("path", ["/proc", "/proc/self", "/dev"])
def test_a_system_folder_is_refused(parley: Parley, path: str) -> None:
    refused = parley.call("POST", "/api/library/folders", json_body={"path": path})
    assert refused.status == 400, refused.body
    assert "part of the system" in refused.json()["error"]["message"]
