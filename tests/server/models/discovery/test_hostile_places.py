"""Every byte found on disk is hostile: manifests that are huge, not JSON, nested past any
parser's depth or naming a blob outside the store; links out to /etc/passwd or a GGUF
elsewhere; a FIFO named like a model; folder loops; trees past the scan's bounds. Each is
skipped (with the reason, where there is a file to name) and the scan ends."""

from __future__ import annotations

import json
import os
from pathlib import Path

from server.limits import ScanLimits
from server.models.discovery.found import ScanResult
from server.models.discovery.roots import default_roots
from server.models.discovery.scan import scan
from tests.server.models.discovery.layouts import Home, ollama_manifest, place, tiny_gguf


def names(result: ScanResult) -> set[str]:
    return {found.name for found in result.found}


def reasons(result: ScanResult) -> dict[str, str]:
    return {os.path.basename(s.path): s.reason for s in result.skipped}


def test_bad_manifests_are_skipped_and_the_good_one_listed(home: Home) -> None:
    home.ollama_model("good", "latest")
    huge = home.manifest("registry.ollama.ai", "library", "huge", "latest", b"{")
    os.truncate(huge, 50_000_000)  # sparse: 50 MB claimed, nothing written
    home.manifest("registry.ollama.ai", "library", "text", "latest", b"not json at all")
    deep = b"[" * 200_000 + b"]" * 200_000
    home.manifest("registry.ollama.ai", "library", "deep", "latest", deep)
    home.manifest("registry.ollama.ai", "library", "list", "latest", b"[1, 2, 3]")
    climbing = ollama_manifest("0" * 64)
    climbing["layers"][0]["digest"] = "sha256:../../../../etc/passwd"  # type: ignore[index]
    home.manifest("registry.ollama.ai", "library", "climb", "latest",
                  json.dumps(climbing).encode())  # fmt: skip
    os.mkfifo(home.ollama / "manifests" / "registry.ollama.ai" / "library" / "text" / "pipe")

    result = scan(default_roots())
    assert names(result) == {"good:latest"}
    skipped = {Path(s.path).parent.name: s.reason for s in result.skipped}
    assert "over 1,000,000 bytes" in skipped["huge"]
    assert skipped["text"] == skipped["deep"] == "its manifest is not JSON"
    assert skipped["list"] == "its manifest lists no layers"
    assert "malformed digest" in skipped["climb"]
    assert result.complete


def test_a_blob_that_links_out_of_the_store_is_skipped(home: Home, tmp_path: Path) -> None:
    outside = tiny_gguf(tmp_path / "outside.gguf")
    blob = home.ollama_model("escape", "latest", source=outside, how="link")
    missing = home.ollama_model("gone", "latest")
    missing.unlink()
    result = scan(default_roots())
    assert names(result) == set()
    assert "outside the places looked in" in reasons(result)[blob.name]
    assert "cannot open it" in reasons(result)[missing.name]


def test_links_out_of_the_places_looked_in_are_not_followed(home: Home, tmp_path: Path) -> None:
    folder = home.lmstudio / "evil" / "repo"
    place(Path("/etc/passwd"), folder / "passwd.gguf")
    place(tiny_gguf(tmp_path / "elsewhere.gguf"), folder / "elsewhere.gguf")
    place(Path("/dev/zero"), folder / "zero.gguf")
    place(tmp_path, home.lmstudio / "evil" / "tmp-folder")  # a folder link: never entered
    os.symlink("self.gguf", folder / "self.gguf")  # a link to itself
    inside = tiny_gguf(home.hub / "models--a--b" / "blobs" / "0123")
    place(inside, folder / "from-the-cache.gguf")  # into another place looked in: followed
    result = scan(default_roots())
    assert names(result) == {"from-the-cache"}
    skipped = reasons(result)
    for name in ("passwd.gguf", "elsewhere.gguf", "zero.gguf"):
        assert "outside the places looked in" in skipped[name], name
    assert "self.gguf" in skipped


def test_a_fifo_a_folder_loop_and_a_non_gguf_are_skipped(home: Home) -> None:
    folder = home.lmstudio / "odd" / "things"
    folder.mkdir(parents=True)
    os.mkfifo(folder / "x.gguf")  # opening it for reading would wait for a writer for ever
    os.symlink("..", folder / "up")  # a loop, through a link
    os.symlink(".", folder / "here.gguf")  # a folder link named like a model
    (folder / "notes.gguf").write_bytes(b"hello, I am text\n" * 10)
    (folder / "README.md").write_text("not looked at")
    tiny_gguf(folder / "mmproj-model-f16.gguf", architecture="clip")
    tiny_gguf(folder / "real.gguf")
    result = scan(default_roots())
    assert names(result) == {"real"}
    skipped = reasons(result)
    assert "not a regular file" in skipped["x.gguf"]
    assert "not a GGUF model file" in skipped["notes.gguf"]
    assert "vision projector" in skipped["mmproj-model-f16.gguf"]
    assert "here.gguf" in skipped and "README.md" not in skipped
    assert result.complete


def test_the_cache_s_links_are_followed_only_into_their_own_repository(
    home: Home, tmp_path: Path
) -> None:
    snapshot = home.hub / "models--a--b" / "snapshots" / ("c" * 40)
    place(tiny_gguf(tmp_path / "out.gguf"), snapshot / "out.gguf")
    other = tiny_gguf(home.hub / "models--x--y" / "blobs" / "beef")
    place(other, snapshot / "other-repo.gguf")
    result = scan(default_roots())
    assert names(result) == set()
    assert "outside" in reasons(result)["out.gguf"]
    assert "outside" in reasons(result)["other-repo.gguf"]


def test_a_tree_past_the_bounds_stops_the_scan_and_says_why(home: Home) -> None:
    deep = home.lmstudio
    for level in range(12):
        deep = deep / f"d{level}"
    tiny_gguf(deep / "too-deep.gguf")  # below max_depth: never reached
    wide = home.lmstudio / "wide" / "repo"
    for index in range(60):
        tiny_gguf(wide / f"m{index:03d}.gguf")
    assert "too-deep" not in names(scan(default_roots()))

    few = scan(default_roots(), ScanLimits(max_entries=30))
    assert not few.complete and "30 entries" in (few.stopped or "")
    files = scan(default_roots(), ScanLimits(max_files=10))
    assert len(files.found) == 10 and not files.complete
    assert "10 files" in (files.stopped or "")


def test_a_scan_out_of_time_stops_and_says_so(home: Home) -> None:
    tiny_gguf(home.lmstudio / "a" / "b" / "m.gguf")
    result = scan(default_roots(), ScanLimits(seconds=1e-9))
    assert not result.complete and "stopped after" in (result.stopped or "")


def test_a_place_that_is_itself_a_link_is_looked_in(home: Home, tmp_path: Path) -> None:
    # LM Studio's folder moved to a bigger disk and linked back: its files are inside it.
    disk = tmp_path / "big-disk" / "models"
    tiny_gguf(disk / "pub" / "repo" / "moved-Q4_K_M.gguf")
    home.lmstudio.parent.mkdir(parents=True)
    home.lmstudio.symlink_to(disk)
    result = scan(default_roots())
    assert names(result) == {"moved-Q4_K_M"}
    assert result.found[0].path == str(home.lmstudio / "pub" / "repo" / "moved-Q4_K_M.gguf")
