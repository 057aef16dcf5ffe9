"""GGUF files laid out as LM Studio, Ollama and the Hugging Face cache lay them out are listed
with their names and places, a file found twice is one entry, and one added by its found
path chats where it lies: nothing is copied."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from server.models.bundled import BUNDLED_MODEL_NAME, bundled_gguf
from server.settings import LocalSettings
from tests.server.models.discovery.layouts import Home, place, tiny_gguf
from tests.support.parley import Parley


@pytest.fixture
def bare(data_dir: Path, home: Home) -> Iterator[Parley]:
    """A server with no model of its own (nothing to load): for listings."""
    server = Parley(data_dir, local=LocalSettings(enabled=False)).start()
    yield server
    server.stop()


def found(server: Parley) -> dict[str, dict[str, Any]]:
    reply = server.call("GET", "/api/models/found")
    assert reply.status == 200, reply.body
    return {f["name"]: f for f in reply.json()["found"]}


def places(entry: dict[str, Any]) -> set[tuple[str, str]]:
    return {(p["source"], p["place"]) for p in entry["found_in"]}


def test_each_layout_is_listed_with_its_name_and_place(home: Home, bare: Parley) -> None:
    lms = tiny_gguf(
        home.lmstudio_file("lmstudio-community", "Qwen3-4B-GGUF", "Qwen3-4B-Q4_K_M.gguf")
    )
    library = home.ollama_model("llama3.2", "3b")
    namespaced = home.ollama_model("coder", "latest", namespace="someone")
    elsewhere = home.ollama_model("Phi-GGUF", "Q8_0", host="hf.co", namespace="bartowski")
    source = tiny_gguf(home.root / "downloads" / "gemma.gguf", "gemma3", file_type=7, context=32768)
    cached = home.hf_file("unsloth", "gemma-3-GGUF", "gemma-3-Q8_0.gguf", source)

    listed = found(bare)
    assert set(listed) == {"Qwen3-4B-Q4_K_M", "llama3.2:3b", "someone/coder:latest",
                           "hf.co/bartowski/Phi-GGUF:Q8_0", "gemma-3-Q8_0"}  # fmt: skip
    qwen = listed["Qwen3-4B-Q4_K_M"]
    assert places(qwen) == {("lmstudio", "lmstudio-community/Qwen3-4B-GGUF")}
    assert qwen["path"] == str(lms) and qwen["model"] is None
    assert (qwen["architecture"], qwen["quantization"], qwen["context_length"]) == (
        "llama", "Q4_K_M", 4096)  # fmt: skip
    assert qwen["size_bytes"] == lms.stat().st_size and qwen["parts"] == 1
    assert listed["llama3.2:3b"]["path"] == str(library)
    assert places(listed["llama3.2:3b"]) == {("ollama", "llama3.2:3b")}
    assert listed["someone/coder:latest"]["path"] == str(namespaced)
    assert listed["hf.co/bartowski/Phi-GGUF:Q8_0"]["path"] == str(elsewhere)
    gemma = listed["gemma-3-Q8_0"]
    assert gemma["path"] == str(cached)  # the snapshot's link (a split's parts lie beside it)
    assert places(gemma) == {("hf_cache", "unsloth/gemma-3-GGUF")}
    assert (gemma["architecture"], gemma["quantization"], gemma["context_length"]) == (
        "gemma3", "Q8_0", 32768)  # fmt: skip
    looked_in = bare.call("GET", "/api/models/found").json()["looked_in"]
    assert {"source": "ollama", "path": str(home.ollama), "exists": True} in looked_in
    assert {"source": "hf_cache", "path": str(home.hub), "exists": True} in looked_in


def test_a_file_found_in_two_places_is_one_entry(home: Home, bare: Parley) -> None:
    source = tiny_gguf(home.root / "downloads" / "mistral.gguf")
    cached = home.hf_file("TheBloke", "Mistral-GGUF", "mistral-Q4_K_M.gguf", source)
    home.hf_file("TheBloke", "Mistral-GGUF", "mistral-Q4_K_M.gguf", source, revision="b" * 40)
    place(cached, home.lmstudio_file("TheBloke", "Mistral-GGUF", "mistral-Q4_K_M.gguf"))
    blob = home.ollama_model("mistral", "7b", source=Path(os.path.realpath(cached)))
    hard = place(blob, home.lmstudio_file("me", "mine", "mistral-copy.gguf"), "hard")

    listed = found(bare)
    assert list(listed) == ["mistral:7b"]  # Ollama's name, when Ollama has it
    entry = listed["mistral:7b"]
    assert places(entry) == {
        ("lmstudio", "TheBloke/Mistral-GGUF"),
        ("lmstudio", "me/mine"),
        ("hf_cache", "TheBloke/Mistral-GGUF"),
        ("ollama", "mistral:7b"),
    }
    assert len(entry["found_in"]) == 5  # the cache's two revisions, each a place
    assert entry["path"] in {
        str(home.lmstudio_file("TheBloke", "Mistral-GGUF", "mistral-Q4_K_M.gguf")),
        str(hard),
    }


def test_a_split_model_is_listed_once_with_its_parts(home: Home, bare: Parley) -> None:
    folder = home.lmstudio / "unsloth" / "Big-GGUF"
    parts = [tiny_gguf(folder / f"Big-Q4_K_M-0000{n}-of-00003.gguf") for n in (1, 2, 3)]
    tiny_gguf(folder / "Cut-Q4_K_M-00001-of-00002.gguf")  # its second part is missing
    listed = found(bare)
    assert list(listed) == ["Big-Q4_K_M"]
    assert listed["Big-Q4_K_M"]["path"] == str(parts[0])
    assert listed["Big-Q4_K_M"]["parts"] == 3
    assert listed["Big-Q4_K_M"]["size_bytes"] == sum(p.stat().st_size for p in parts)
    skipped = bare.call("GET", "/api/models/found").json()["skipped"]
    assert any("part 2 of its 2 is missing" in s["reason"] for s in skipped)


def test_the_bundled_models_own_file_names_that_model(home: Home, data_dir: Path) -> None:
    if bundled_gguf().stat().st_dev != home.root.stat().st_dev:
        pytest.skip("the bundled model lies on another file system (no hard link)")
    place(bundled_gguf(), home.lmstudio_file("HuggingFaceTB", "SmolLM2", "smol.gguf"), "hard")
    server = Parley(data_dir).start()
    try:
        entry = found(server)["smol"]
        assert entry["model"] == BUNDLED_MODEL_NAME
        reply = server.call("POST", "/api/models/found/add", json_body={"path": entry["path"]})
        assert reply.status == 409 and reply.json()["error"]["code"] == "model_exists"
        assert BUNDLED_MODEL_NAME in reply.json()["error"]["message"]
    finally:
        server.stop()


def test_an_ollama_blob_added_by_its_found_path_chats_and_is_not_copied(
    home: Home, data_dir: Path, tmp_path: Path
) -> None:
    # One real copy, in the test's own folder (a link to the bundled file IS that model);
    # Ollama's blob is a hard link to it, so the store holds no second copy either.
    real = tmp_path / "model.gguf"
    shutil.copyfile(bundled_gguf(), real)
    blob = home.ollama_model("smollm2", "135m", source=real, how="hard")
    server = Parley(data_dir).start()
    try:
        entry = found(server)["smollm2:135m"]
        assert entry["model"] is None and entry["path"] == str(blob)
        reply = server.call("POST", "/api/models/found/add", json_body={"path": str(blob)})
        assert reply.status == 201, reply.body
        assert reply.json()["model"] == "smollm2:135m"
        registered = {m.name: m.path for m in server.services.local_models.models}
        assert registered["smollm2:135m"] == blob
        assert os.stat(registered["smollm2:135m"]).st_ino == blob.stat().st_ino
        assert found(server)["smollm2:135m"]["model"] == "smollm2:135m"

        conversation_id = server.new_conversation(model="smollm2:135m")
        stream = server.send(conversation_id, "Say hi.", max_tokens=5)
        stream.read_all()
        assert stream.final["parley"]["status"] == "completed"
        assert not list(data_dir.rglob("*.gguf"))  # nothing copied into Parley's data

        again = server.call("POST", "/api/models/found/add", json_body={"path": str(blob)})
        assert again.status == 409 and again.json()["error"]["code"] == "model_exists"
    finally:
        server.stop()


def test_a_path_not_found_on_disk_is_refused(home: Home, bare: Parley, tmp_path: Path) -> None:
    elsewhere = tiny_gguf(tmp_path / "elsewhere.gguf")
    reply = bare.call("POST", "/api/models/found/add", json_body={"path": str(elsewhere)})
    assert reply.status == 404 and reply.json()["error"]["code"] == "not_found_on_disk"
    assert bare.call("POST", "/api/models/found/add", json_body={"path": "x.gguf"}).status == 400


def test_the_users_folders_are_scanned_and_remembered(
    home: Home, data_dir: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "My Models"
    mine = tiny_gguf(folder / "deep" / "er" / "mine-Q4_K_M.gguf")
    server = Parley(data_dir, local=LocalSettings(enabled=False)).start()
    try:
        assert "mine-Q4_K_M" not in found(server)
        reply = server.call("POST", "/api/models/folders", json_body={"path": str(folder)})
        assert reply.status == 201, reply.body
        again = server.call("POST", "/api/models/folders", json_body={"path": str(folder)})
        assert again.status == 409 and again.json()["error"]["code"] == "folder_exists"
        for refused in ("/proc", "/sys/kernel", "/dev", str(mine), str(tmp_path / "none")):
            reply = server.call("POST", "/api/models/folders", json_body={"path": refused})
            assert reply.status == 400, (refused, reply.body)
        entry = found(server)["mine-Q4_K_M"]
        assert places(entry) == {("folder", str(folder))} and entry["path"] == str(mine)
    finally:
        server.stop()
    server = Parley(data_dir, local=LocalSettings(enabled=False)).start()  # remembered
    try:
        listed = server.call("GET", "/api/models/folders").json()["folders"]
        assert listed == [{"path": str(folder), "exists": True}]
        path = f"/api/models/folders?path={quote(str(folder))}"
        assert server.call("DELETE", path).status == 204
        assert server.call("DELETE", path).status == 404
        assert "mine-Q4_K_M" not in found(server)
        assert server.call("GET", "/api/models/folders").json()["folders"] == []
    finally:
        server.stop()
