"""The catalog through the API: a search finds GGUF repositories; a repository's files are
its root GGUFs with size, sha256 and quantization; hostile names never pass."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.hub import HubFile, LocalHub, tiny_gguf
from tests.support.parley import Parley
from tests.support.upstream import ScriptedUpstream


@pytest.fixture
def server(hub: LocalHub, data_dir: Path, upstream: ScriptedUpstream) -> Iterator[Parley]:
    parley = Parley(data_dir, upstream.base_url).start()
    yield parley
    parley.stop()


def test_search_finds_gguf_repositories_most_downloaded_first(
    hub: LocalHub, server: Parley, gguf_dir: Path
) -> None:
    file = HubFile(tiny_gguf(gguf_dir / "a.gguf", 4096))
    hub.add("bob/Tiny-GGUF", {"tiny.Q8_0.gguf": file}, downloads=5)
    hub.add("alice/Tiny-Chat-GGUF", {"tiny.Q8_0.gguf": file}, downloads=50)
    hub.add("alice/Other", {"o.gguf": file})
    reply = server.call("GET", "/api/hub/search?q=tiny")
    assert reply.status == 200, reply.body
    assert [r["id"] for r in reply.json()["repos"]] == ["alice/Tiny-Chat-GGUF", "bob/Tiny-GGUF"]
    assert server.call("GET", "/api/hub/search?q=" + "x" * 201).status == 400


def test_a_repositorys_files_are_its_root_ggufs_with_size_sha256_and_quantization(
    hub: LocalHub, server: Parley, gguf_dir: Path
) -> None:
    small = HubFile(tiny_gguf(gguf_dir / "s.gguf", 4096, "s"))
    hub.add(
        "me/Model-GGUF",
        {
            "Model-Q4_K_M.gguf": small,
            "model.IQ2_XXS.gguf": small,
            "Model-F16-00001-of-00002.gguf": small,
            "sub/inner.gguf": small,  # in a folder: never a path here
            "..gguf": small,
            "notes.txt": small,
        },
    )
    reply = server.call("GET", "/api/hub/repos/me/Model-GGUF/files")
    assert reply.status == 200, reply.body
    listing = reply.json()
    assert listing["repo"] == "me/Model-GGUF" and len(listing["revision"]) == 40
    files = {f["file"]: f for f in listing["files"]}
    assert set(files) == {
        "Model-Q4_K_M.gguf",
        "model.IQ2_XXS.gguf",
        "Model-F16-00001-of-00002.gguf",
    }
    assert files["Model-Q4_K_M.gguf"]["quantization"] == "Q4_K_M"
    assert files["model.IQ2_XXS.gguf"]["quantization"] == "IQ2_XXS"
    assert files["Model-F16-00001-of-00002.gguf"]["split"] is True
    assert files["Model-Q4_K_M.gguf"]["size_bytes"] == 4096
    assert files["Model-Q4_K_M.gguf"]["sha256"] == small.sha256
    # What fits, before downloading: from the size alone, said so.
    fit = files["Model-Q4_K_M.gguf"]["fit"]
    assert fit["verdict"] == "fits" and "from its size" in fit["why"]
    assert fit["needed_bytes"] > 4096 and fit["available_bytes"] > 0


def test_unknown_repositories_and_hostile_names_are_refused(hub: LocalHub, server: Parley) -> None:
    missing = server.call("GET", "/api/hub/repos/me/nothing/files")
    assert missing.status == 404 and missing.json()["error"]["code"] == "hub_not_found"
    assert server.call("GET", "/api/hub/repos/me/..%2F..%2Fetc/files").status in (400, 404)
    for body in (
        {"repo": "me/x", "file": "../x.gguf"},
        {"repo": "me/x", "file": "a/b.gguf"},
        {"repo": "../x", "file": "x.gguf"},
        {"repo": "me/x", "file": "x.bin"},
    ):
        reply = server.call("POST", "/api/downloads", json_body=body)
        assert reply.status == 400, (body, reply.body)
    assert server.call("GET", "/api/downloads").json()["downloads"] == []
